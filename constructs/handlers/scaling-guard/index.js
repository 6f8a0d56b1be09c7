// @ts-check
// Lambda handler of ScalingGuard (constructs/scaling-guard.ts), run by aws-cdk-lib's CustomResourceProvider, which
// sends the CloudFormation response. SageMaker refuses an UpdateEndpoint that changes the instance type of (or
// removes) a variant registered as a scalable target ("If the update would change the instance type for any model
// that is a target for auto scaling, the update fails", and deregistering is also needed to remove an autoscaled
// variant: https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-scaling-update.html).
//
// The stack holds two of these resources with the same properties: one the endpoint depends on (it runs before the
// endpoint is updated) and one that depends on the endpoint (after it). Both run the same rule, which looks at the
// endpoint as it is rather than at the direction of the change, so it holds going forward and rolling back alike:
// - the endpoint's variant already runs the instance type these properties describe: it will not change type, so the
//   registration may exist; if this generation's scalable target is a resource of the stack (a rollback to it, or a
//   guard retried), register the variant as the properties describe it (target, scheduled actions, policies, and the
//   alarms of step policies pointed at the policies again);
// - otherwise the endpoint is about to change type (or was, and is being rolled back): deregister the variant, which
//   deletes its policies and scheduled actions too.
// Delete (autoscaling removed, a failed first deploy cleaned up, the stack deleted) deregisters the variant, so that
// a later DeleteEndpoint finds nothing registered and CloudFormation's role needs no Application Auto Scaling rights.
// Plain JavaScript so that the same file deploys from source and from the npm package; it needs only the AWS SDK the
// Lambda Node.js runtime provides.

const { CloudFormationClient, DescribeStackResourceCommand } = require('@aws-sdk/client-cloudformation');
const {
  ApplicationAutoScalingClient,
  DeregisterScalableTargetCommand,
  PutScalingPolicyCommand,
  PutScheduledActionCommand,
  RegisterScalableTargetCommand,
  paginateDescribeScalableTargets,
} = require('@aws-sdk/client-application-auto-scaling');
const { SageMakerClient, DescribeEndpointCommand, DescribeEndpointConfigCommand } = require('@aws-sdk/client-sagemaker');
const { CloudWatchClient, DescribeAlarmsCommand, PutMetricAlarmCommand } = require('@aws-sdk/client-cloudwatch');

/** @type {'sagemaker'} */
const NAMESPACE = 'sagemaker';
/** @type {'sagemaker:variant:DesiredInstanceCount'} */
const DIMENSION = 'sagemaker:variant:DesiredInstanceCount';
/** Where the endpoint's name goes in the policies of `Scaling` (the guard may not refer to the endpoint itself). */
const ENDPOINT_NAME = '{{EndpointName}}';

/**
 * @typedef {{
 *   PolicyName: string,
 *   LogicalId: string,
 *   PolicyType: string,
 *   TargetTrackingScalingPolicyConfiguration?: any,
 *   StepScalingPolicyConfiguration?: any,
 *   AlarmLogicalIds?: string[],
 * }} PolicySpec
 * @typedef {{
 *   TargetLogicalId: string,
 *   MinCapacity: number | string,
 *   MaxCapacity: number | string,
 *   RoleARN?: string,
 *   SuspendedState?: any,
 *   ScheduledActions?: any[],
 *   Policies?: PolicySpec[],
 * }} ScalingSpec
 * @typedef {{
 *   EndpointLogicalId: string,
 *   VariantName: string,
 *   InstanceType: string,
 *   DeploymentConfig?: string,
 *   Scaling?: ScalingSpec,
 * }} GuardProperties
 * @typedef {{
 *   RequestType: 'Create' | 'Update' | 'Delete',
 *   StackId: string,
 *   ResourceProperties: GuardProperties,
 *   OldResourceProperties?: GuardProperties,
 * }} GuardEvent
 * @typedef {{
 *   cloudformation: CloudFormationClient,
 *   autoscaling: ApplicationAutoScalingClient,
 *   sagemaker: SageMakerClient,
 *   cloudwatch: CloudWatchClient,
 *   log?: (line: string) => void,
 * }} Clients
 * @typedef {{ action: 'none' | 'deregistered' | 'registered', resourceId?: string }} Outcome
 */

/** @param {GuardEvent} event */
exports.handler = async (event) => {
  const outcome = await onEvent(event, {
    cloudformation: new CloudFormationClient({}),
    autoscaling: new ApplicationAutoScalingClient({}),
    sagemaker: new SageMakerClient({}),
    cloudwatch: new CloudWatchClient({}),
    log: console.log,
  });
  return { Data: { Action: outcome.action } };
};

/**
 * @param {GuardEvent} event
 * @param {Clients} clients
 * @returns {Promise<Outcome>} what was done, for the log and the tests
 */
async function onEvent(event, clients) {
  const props = event.ResourceProperties;
  if (event.RequestType === 'Create') return { action: 'none' };
  const old = event.OldResourceProperties;
  if (event.RequestType === 'Update' && old && generationOf(old) === generationOf(props)) return { action: 'none' };

  const endpointName = await endpointNameOf(event.StackId, props.EndpointLogicalId, clients);
  if (!endpointName) return { action: 'none' };
  // The variant names the registration may carry: before a rename it is the old one.
  const variants = [...new Set([props.VariantName, ...(old ? [old.VariantName] : [])])];
  if (event.RequestType === 'Update' && props.Scaling) {
    const current = await instanceTypeOf(endpointName, props.VariantName, clients);
    if (current === props.InstanceType && (await stackHas(event.StackId, props.Scaling.TargetLogicalId, clients))) {
      for (const variant of variants.filter((v) => v !== props.VariantName)) await deregister(endpointName, variant, clients);
      const resourceId = await register(event.StackId, endpointName, props, clients);
      return { action: 'registered', resourceId };
    }
  }
  if (old && old.VariantName !== props.VariantName && props.DeploymentConfig === 'true') {
    // Refused before anything is deregistered: the rollback then finds the endpoint as it was and registers nothing new.
    throw new Error(
      `The variant ${old.VariantName} of endpoint ${endpointName} cannot be renamed to ${props.VariantName} while the endpoint ` +
        'has a deployment configuration: SageMaker requires the same variant name for blue/green and rolling deployments. ' +
        'Deploy the rename without `deployment` first, then add it back (see docs/cdk.md, "Renaming the variant").',
    );
  }
  let resourceId;
  for (const variant of variants) resourceId = (await deregister(endpointName, variant, clients)) ?? resourceId;
  return resourceId ? { action: 'deregistered', resourceId } : { action: 'none' };
}

/**
 * What decides the logical IDs of the scaling resources: a change of any of these is a new generation (see
 * ScalingGuard). A change of the scaling spec alone is CloudFormation's to apply in place.
 * @param {GuardProperties} p
 */
function generationOf(p) {
  return JSON.stringify([p.InstanceType, p.VariantName, p.Scaling?.TargetLogicalId ?? null]);
}

/**
 * The endpoint's name from its stack resource: the guard before the endpoint may not reference it (the endpoint
 * depends on that guard), so it asks CloudFormation. The physical ID of AWS::SageMaker::Endpoint is its ARN, which
 * holds the name in lower case; undefined when the endpoint does not exist (yet or any more).
 * @param {string} stackId
 * @param {string} logicalId
 * @param {Clients} clients
 */
async function endpointNameOf(stackId, logicalId, clients) {
  const physicalId = await physicalIdOf(stackId, logicalId, clients);
  if (!physicalId) return undefined;
  const marker = ':endpoint/';
  return physicalId.includes(marker) ? physicalId.slice(physicalId.indexOf(marker) + marker.length) : physicalId;
}

/**
 * A resource's physical ID, undefined when the stack has no such resource or it is deleted.
 * @param {string} stackId
 * @param {string} logicalId
 * @param {Clients} clients
 */
async function physicalIdOf(stackId, logicalId, clients) {
  try {
    const out = await clients.cloudformation.send(new DescribeStackResourceCommand({ StackName: stackId, LogicalResourceId: logicalId }));
    const detail = out.StackResourceDetail;
    if (!detail || detail.ResourceStatus === 'DELETE_COMPLETE' || detail.ResourceStatus === 'CREATE_FAILED') return undefined;
    return detail.PhysicalResourceId || undefined;
  } catch (err) {
    if (errorName(err) === 'ValidationError') return undefined; // "Resource ... does not exist for stack"
    throw err;
  }
}

/**
 * @param {string} stackId
 * @param {string} logicalId
 * @param {Clients} clients
 */
async function stackHas(stackId, logicalId, clients) {
  return (await physicalIdOf(stackId, logicalId, clients)) !== undefined;
}

/**
 * The instance type the endpoint's variant runs now (from its current endpoint configuration), or undefined when the
 * endpoint has no such variant. The ARN gave the name in lower case; SageMaker endpoint names are case-insensitive.
 * @param {string} endpointName
 * @param {string} variantName
 * @param {Clients} clients
 */
async function instanceTypeOf(endpointName, variantName, clients) {
  let configName;
  try {
    configName = (await clients.sagemaker.send(new DescribeEndpointCommand({ EndpointName: endpointName }))).EndpointConfigName;
  } catch (err) {
    if (errorName(err) === 'ValidationException') return undefined; // "Could not find endpoint"
    throw err;
  }
  if (!configName) return undefined;
  const config = await clients.sagemaker.send(new DescribeEndpointConfigCommand({ EndpointConfigName: configName }));
  return config.ProductionVariants?.find((v) => v.VariantName === variantName)?.InstanceType;
}

/**
 * The ResourceId Application Auto Scaling holds for `wanted`, compared without case (the ARN gave the endpoint name in
 * lower case, the registration carries it as created), searched on every page.
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

/**
 * Deregisters the variant if it is registered (DeregisterScalableTarget deletes its policies and scheduled actions).
 * @param {string} endpointName
 * @param {string} variantName
 * @param {Clients} clients
 * @returns {Promise<string | undefined>} the ResourceId deregistered
 */
async function deregister(endpointName, variantName, clients) {
  const resourceId = await registeredResourceId(`endpoint/${endpointName}/variant/${variantName}`, clients);
  if (!resourceId) {
    clients.log?.(`No scalable target for endpoint/${endpointName}/variant/${variantName}: nothing to deregister.`);
    return undefined;
  }
  try {
    await clients.autoscaling.send(
      new DeregisterScalableTargetCommand({ ServiceNamespace: NAMESPACE, ResourceId: resourceId, ScalableDimension: DIMENSION }),
    );
  } catch (err) {
    if (errorName(err) !== 'ObjectNotFoundException') throw err;
  }
  clients.log?.(`Deregistered ${resourceId} (its scaling policies and scheduled actions go with it).`);
  return resourceId;
}

/**
 * Registers the variant as `props.Scaling` describes it: the target, its scheduled actions and policies (upserts), and
 * points the alarms of step policies at the policies' new ARNs (a policy created again gets a new ARN).
 * @param {string} stackId
 * @param {string} endpointName
 * @param {GuardProperties} props
 * @param {Clients} clients
 */
async function register(stackId, endpointName, props, clients) {
  const spec = /** @type {ScalingSpec} */ (props.Scaling);
  // The registration keeps the case the name was created with; the ARN gave it in lower case.
  const created = await registeredResourceId(`endpoint/${endpointName}/variant/${props.VariantName}`, clients);
  const resourceId = created ?? `endpoint/${await createdEndpointName(endpointName, clients)}/variant/${props.VariantName}`;
  const id = { ServiceNamespace: NAMESPACE, ResourceId: resourceId, ScalableDimension: DIMENSION };
  await clients.autoscaling.send(
    new RegisterScalableTargetCommand({
      ...id,
      MinCapacity: Number(spec.MinCapacity),
      MaxCapacity: Number(spec.MaxCapacity),
      RoleARN: spec.RoleARN,
      SuspendedState: numbers(spec.SuspendedState),
    }),
  );
  for (const action of spec.ScheduledActions ?? []) {
    await clients.autoscaling.send(new PutScheduledActionCommand({ ...id, ...numbers(action) }));
  }
  const endpointForMetrics = resourceId.split('/')[1];
  for (const policy of spec.Policies ?? []) {
    const { LogicalId, AlarmLogicalIds, ...request } = policy;
    const filled = JSON.parse(JSON.stringify(numbers(request)).split(ENDPOINT_NAME).join(endpointForMetrics));
    const out = await clients.autoscaling.send(new PutScalingPolicyCommand({ ...id, ...filled }));
    if (out.PolicyARN) await repointAlarms(stackId, AlarmLogicalIds ?? [], policy.PolicyName, out.PolicyARN, clients);
  }
  clients.log?.(`Registered ${resourceId} with ${spec.Policies?.length ?? 0} policies as the stack's template describes.`);
  return resourceId;
}

/**
 * The endpoint's name as created (DescribeEndpoint answers with it), for a registration made anew.
 * @param {string} endpointName
 * @param {Clients} clients
 */
async function createdEndpointName(endpointName, clients) {
  const out = await clients.sagemaker.send(new DescribeEndpointCommand({ EndpointName: endpointName }));
  return out.EndpointName ?? endpointName;
}

/**
 * A step policy's alarms (stack resources) act on the policy's ARN: after the policy is created again, put each alarm
 * again with the new ARN in place of any action naming the policy.
 * @param {string} stackId
 * @param {string[]} alarmLogicalIds
 * @param {string} policyName
 * @param {string} policyArn
 * @param {Clients} clients
 */
async function repointAlarms(stackId, alarmLogicalIds, policyName, policyArn, clients) {
  for (const logicalId of alarmLogicalIds) {
    const alarmName = await physicalIdOf(stackId, logicalId, clients);
    if (!alarmName) continue;
    const out = await clients.cloudwatch.send(new DescribeAlarmsCommand({ AlarmNames: [alarmName] }));
    const alarm = out.MetricAlarms?.[0];
    if (!alarm) continue;
    const isPolicy = (/** @type {string} */ arn) => arn.includes(':scalingPolicy:') && arn.endsWith(`:policyName/${policyName}`);
    const actions = (alarm.AlarmActions ?? []).map((a) => (isPolicy(a) ? policyArn : a));
    await clients.cloudwatch.send(
      new PutMetricAlarmCommand({
        AlarmName: alarm.AlarmName,
        AlarmDescription: alarm.AlarmDescription,
        ActionsEnabled: alarm.ActionsEnabled,
        OKActions: alarm.OKActions,
        AlarmActions: actions,
        InsufficientDataActions: alarm.InsufficientDataActions,
        MetricName: alarm.MetricName,
        Namespace: alarm.Namespace,
        Statistic: alarm.Statistic,
        ExtendedStatistic: alarm.ExtendedStatistic,
        Dimensions: alarm.Dimensions,
        Period: alarm.Period,
        Unit: alarm.Unit,
        EvaluationPeriods: alarm.EvaluationPeriods,
        DatapointsToAlarm: alarm.DatapointsToAlarm,
        Threshold: alarm.Threshold,
        ComparisonOperator: alarm.ComparisonOperator,
        TreatMissingData: alarm.TreatMissingData,
        EvaluateLowSampleCountPercentile: alarm.EvaluateLowSampleCountPercentile,
        Metrics: alarm.Metrics,
        ThresholdMetricId: alarm.ThresholdMetricId,
      }),
    );
    clients.log?.(`Alarm ${alarm.AlarmName} now acts on ${policyArn}.`);
  }
}

/**
 * CloudFormation passes a custom resource's numbers and booleans as strings; the Application Auto Scaling API wants
 * numbers, booleans and dates.
 * @param {any} node
 * @returns {any}
 */
function numbers(node) {
  if (Array.isArray(node)) return node.map(numbers);
  if (node && typeof node === 'object') return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, typed(k, v)]));
  return node;
}

/**
 * @param {string} key
 * @param {any} value
 */
function typed(key, value) {
  if (typeof value !== 'string') return numbers(value);
  if (NUMERIC.has(key)) return Number(value);
  if (BOOLEAN.has(key)) return value === 'true';
  if (key === 'StartTime' || key === 'EndTime') return new Date(value);
  return value;
}

/** The members of the scaling API shapes (PutScalingPolicy, PutScheduledAction) that are numbers. */
const NUMERIC = new Set([
  'MinCapacity',
  'MaxCapacity',
  'TargetValue',
  'ScaleInCooldown',
  'ScaleOutCooldown',
  'Cooldown',
  'MinAdjustmentMagnitude',
  'ScalingAdjustment',
  'MetricIntervalLowerBound',
  'MetricIntervalUpperBound',
]);

/**
 * The members of those shapes that are booleans. `ReturnData` is a member of a target tracking policy's metric math
 * (CustomizedMetricSpecification.Metrics, TargetTrackingMetricDataQuery in the Application Auto Scaling API: a
 * boolean), which a policy gets through a property override; the SDK sends a string as it is given, "true" in quotes.
 */
const BOOLEAN = new Set([
  'DisableScaleIn',
  'DynamicScalingInSuspended',
  'DynamicScalingOutSuspended',
  'ScheduledScalingSuspended',
  'ReturnData',
]);

/** @param {unknown} err */
function errorName(err) {
  return err && typeof err === 'object' && 'name' in err ? String(err.name) : '';
}

exports.onEvent = onEvent;
exports.ENDPOINT_NAME = ENDPOINT_NAME;
