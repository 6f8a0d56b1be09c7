// @ts-check
// Lambda handler of ScalingGuard (constructs/scaling-guard.ts), run by aws-cdk-lib's CustomResourceProvider, which
// sends the CloudFormation response. SageMaker refuses an UpdateEndpoint that changes the instance type of a variant
// registered as a scalable target ("Before you update the endpoint, ... deregister the variant as a scalable target",
// https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-scaling-update.html). CloudFormation updates this resource
// before the endpoint: when the instance type or variant changes, it deregisters the old variant, which also deletes
// its scaling policies; the stack then registers the new target and policies after the endpoint update.
// Plain JavaScript so that the same file deploys from source and from the npm package; it needs only the AWS SDK the
// Lambda Node.js runtime provides.

const { CloudFormationClient, DescribeStackResourceCommand } = require('@aws-sdk/client-cloudformation');
const {
  ApplicationAutoScalingClient,
  DeregisterScalableTargetCommand,
  paginateDescribeScalableTargets,
} = require('@aws-sdk/client-application-auto-scaling');

const NAMESPACE = 'sagemaker';
const DIMENSION = 'sagemaker:variant:DesiredInstanceCount';

/**
 * @typedef {{ EndpointLogicalId: string, VariantName: string, InstanceType: string }} GuardProperties
 * @typedef {{
 *   RequestType: 'Create' | 'Update' | 'Delete',
 *   StackId: string,
 *   ResourceProperties: GuardProperties,
 *   OldResourceProperties?: GuardProperties,
 * }} GuardEvent
 * @typedef {{ cloudformation: CloudFormationClient, autoscaling: ApplicationAutoScalingClient, log?: (line: string) => void }} Clients
 */

/** @param {GuardEvent} event */
exports.handler = async (event) =>
  onEvent(event, { cloudformation: new CloudFormationClient({}), autoscaling: new ApplicationAutoScalingClient({}), log: console.log });

/**
 * Create: nothing is registered yet. Update: deregisters the old variant when the instance type or the variant name
 * changes. Delete (autoscaling removed, or the stack deleted): deregisters the variant, since the scalable target
 * itself is retained by CloudFormation (see ScalingGuard); a deleted endpoint needs nothing.
 * @param {GuardEvent} event
 * @param {Clients} clients
 * @returns {Promise<{ deregistered: string | undefined }>} the ResourceId deregistered, for the log and the tests
 */
async function onEvent(event, clients) {
  const props = event.ResourceProperties;
  if (event.RequestType === 'Create') return { deregistered: undefined };
  let variantName = props.VariantName;
  if (event.RequestType === 'Update') {
    const old = event.OldResourceProperties;
    if (!old || (old.InstanceType === props.InstanceType && old.VariantName === props.VariantName)) return { deregistered: undefined };
    variantName = old.VariantName;
  }
  const endpointName = await endpointNameOf(event.StackId, props.EndpointLogicalId, clients);
  if (!endpointName) return { deregistered: undefined };
  const resourceId = await registeredResourceId(`endpoint/${endpointName}/variant/${variantName}`, clients);
  if (!resourceId) {
    clients.log?.(`No scalable target for endpoint/${endpointName}/variant/${variantName}: nothing to deregister.`);
    return { deregistered: undefined };
  }
  try {
    await clients.autoscaling.send(
      new DeregisterScalableTargetCommand({ ServiceNamespace: NAMESPACE, ResourceId: resourceId, ScalableDimension: DIMENSION }),
    );
  } catch (err) {
    if (errorName(err) !== 'ObjectNotFoundException') throw err;
  }
  clients.log?.(`Deregistered ${resourceId} (its scaling policies go with it).`);
  return { deregistered: resourceId };
}

/**
 * The endpoint's name from its stack resource: the guard may not reference the endpoint (the endpoint depends on the
 * guard), so it asks CloudFormation. The physical ID of AWS::SageMaker::Endpoint is its ARN, which holds the name in
 * lower case; undefined when the endpoint does not exist (yet or any more).
 * @param {string} stackId
 * @param {string} logicalId
 * @param {Clients} clients
 */
async function endpointNameOf(stackId, logicalId, clients) {
  let physicalId;
  try {
    const out = await clients.cloudformation.send(new DescribeStackResourceCommand({ StackName: stackId, LogicalResourceId: logicalId }));
    physicalId = out.StackResourceDetail?.ResourceStatus === 'DELETE_COMPLETE' ? undefined : out.StackResourceDetail?.PhysicalResourceId;
  } catch (err) {
    if (errorName(err) !== 'ValidationError') throw err; // "Resource ... does not exist for stack"
  }
  if (!physicalId) return undefined;
  const marker = ':endpoint/';
  return physicalId.includes(marker) ? physicalId.slice(physicalId.indexOf(marker) + marker.length) : physicalId;
}

/**
 * The ResourceId Application Auto Scaling holds for `wanted`, compared without case: the ARN gave the endpoint name
 * in lower case, while the registration carries it as created.
 * @param {string} wanted
 * @param {Clients} clients
 */
async function registeredResourceId(wanted, clients) {
  const lower = wanted.toLowerCase();
  // A ScalableDimension filter needs ResourceIds too, and those match case-sensitively: filter here instead.
  const pages = paginateDescribeScalableTargets({ client: clients.autoscaling }, { ServiceNamespace: NAMESPACE });
  for await (const page of pages) {
    const target = (page.ScalableTargets ?? []).find((t) => t.ScalableDimension === DIMENSION && t.ResourceId?.toLowerCase() === lower);
    if (target) return target.ResourceId;
  }
  return undefined;
}

/** @param {unknown} err */
function errorName(err) {
  return err && typeof err === 'object' && 'name' in err ? String(err.name) : '';
}

exports.onEvent = onEvent;
