// ScalingGuard: lets `cdk deploy` change the instance type (or variant name) of an autoscaled endpoint in one
// deployment, and makes a deployment that fails leave autoscaling exactly as it was. SageMaker refuses an
// UpdateEndpoint that changes the instance type of (or removes) a variant registered as a scalable target; AWS's own
// procedure is deregister → update → register again
// (https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-scaling-update.html).
//
// How the template orders it (replayed, failures and rollbacks included, by test/constructs/lifecycle-harness.ts):
// 1. Two custom resources carry the same properties: the instance type, the variant and the whole scaling spec of the
//    current generation (target, scheduled actions, policies; the endpoint's name as a placeholder). `Resource` is one
//    the endpoint depends on, so CloudFormation updates it before the endpoint; `AfterEndpoint` depends on the endpoint
//    and the scaling resources depend on it. Their function (constructs/handlers/scaling-guard) compares the
//    endpoint's variant as it runs now with the properties: when the endpoint is about to change type it deregisters
//    the variant (which deletes its policies and scheduled actions); when the endpoint already runs the type and the
//    generation's scalable target is a stack resource (a rollback), it registers the spec again.
// 2. The scalable target and its policies live under a construct whose id holds the instance type and variant
//    (ScalableInstanceCount `InstanceCount-<type>[-<variant>]`), so a change gives them new logical IDs and policy
//    names: CloudFormation creates them after the endpoint, registering the variant again.
// 3. Cleanup after success deletes the old policies (other names, already gone); the old scalable target is retained
//    (DeletionPolicy Retain): deleting it would deregister the new registration, which has the same ResourceId.
// 4. A failed update rolls back: the guard that runs before the endpoint's rollback deregisters whatever the new
//    generation registered (so SageMaker accepts the rollback of the instance type), the one that runs after it
//    registers the old generation again. A rollback processes only resources the update touched; when the failure is
//    at or before the endpoint, only the first guard was touched, and the endpoint still runs the old type, so that
//    guard registers again itself. Either order of rollback gives the same end state.
// 5. Delete (autoscaling removed from the app, a failed first deploy cleaned up, the stack deleted) deregisters. On
//    stack deletion `AfterEndpoint` is deleted before the endpoint, so DeleteEndpoint finds nothing registered and a
//    least-privilege CloudFormation role needs no Application Auto Scaling rights.

import { ArnFormat, CustomResource, Lazy, Stack } from 'aws-cdk-lib';
import type * as appscaling from 'aws-cdk-lib/aws-applicationautoscaling';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as sagemaker from 'aws-cdk-lib/aws-sagemaker';
import { Construct, IConstruct } from 'constructs';
import { handlerProvider } from './handler-provider';

/** The placeholder of the endpoint's name in the carried policies (the handler's ENDPOINT_NAME). */
const ENDPOINT_NAME = '{{EndpointName}}';

/** Properties of a ScalingGuard. */
export interface ScalingGuardProps {
  /** The endpoint whose variant autoscaling registers. */
  readonly endpoint: sagemaker.CfnEndpoint;
  /** The variant's name. */
  readonly variantName: string;
  /** The variant's instance type. */
  readonly instanceType: string;
  /**
   * Whether the endpoint has a deployment configuration (guardrails): SageMaker then refuses a variant rename, and
   * the guard refuses it before deregistering anything.
   * @default false
   */
  readonly hasDeploymentConfig?: boolean;
}

/** Keeps an autoscaled endpoint variant's registration right through instance type changes, failures and rollbacks. */
export class ScalingGuard extends Construct {
  /** The custom resource type. */
  public static readonly RESOURCE_TYPE = 'Custom::MmeDeployScalingGuard';

  /** The custom resource the endpoint depends on (runs before the endpoint's update). */
  public readonly resource: CustomResource;
  /** The custom resource that depends on the endpoint (runs after the endpoint's update). */
  public readonly afterEndpoint: CustomResource;
  private readonly endpoint: sagemaker.CfnEndpoint;
  private scaling?: IConstruct;

  constructor(scope: Construct, id: string, props: ScalingGuardProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.endpoint = props.endpoint;
    const scalableTargets = stack.formatArn({ service: 'application-autoscaling', resource: 'scalable-target', resourceName: '*' });
    const provider = handlerProvider(this, {
      resourceType: ScalingGuard.RESOURCE_TYPE,
      handler: 'scaling-guard',
      description: 'mme-deploy: keeps an autoscaled endpoint variant registered right through instance type changes and rollbacks',
      statements: [
        { Effect: 'Allow', Action: ['cloudformation:DescribeStackResource'], Resource: stack.stackId },
        // Scalable-target ARNs end in an id Application Auto Scaling makes up, not in the variant: the pattern is the
        // account's and region's scalable targets; the function itself touches only its own stack's variant.
        {
          Effect: 'Allow',
          Action: [
            'application-autoscaling:DeregisterScalableTarget',
            'application-autoscaling:RegisterScalableTarget',
            'application-autoscaling:PutScalingPolicy',
            'application-autoscaling:PutScheduledAction',
          ],
          Resource: scalableTargets,
        },
        // What RegisterScalableTarget and a target-tracking PutScalingPolicy check the caller for on SageMaker
        // variants, and what the function reads: the endpoint and its configuration.
        {
          Effect: 'Allow',
          Action: ['sagemaker:DescribeEndpoint', 'sagemaker:DescribeEndpointConfig', 'sagemaker:UpdateEndpointWeightsAndCapacities'],
          Resource: [
            stack.formatArn({ service: 'sagemaker', resource: 'endpoint', resourceName: '*' }),
            stack.formatArn({ service: 'sagemaker', resource: 'endpoint-config', resourceName: '*' }),
          ],
        },
        // A step policy created again has a new ARN: its alarms (named by CloudFormation after the stack) are put again.
        {
          Effect: 'Allow',
          Action: ['cloudwatch:PutMetricAlarm'],
          Resource: stack.formatArn({
            service: 'cloudwatch',
            resource: 'alarm',
            resourceName: `${stack.stackName}-*`,
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        },
        { Effect: 'Allow', Action: ['application-autoscaling:DescribeScalableTargets', 'cloudwatch:DescribeAlarms'], Resource: '*' },
      ],
      wildcardReason:
        'DescribeScalableTargets and DescribeAlarms have no resource-level permissions; scalable-target ARNs end in an ' +
        'id the service makes up, and the endpoint name is generated at deploy time, so those grants cover the ' +
        "account's scalable targets and endpoints; the function only touches the SageMaker variant of its own stack.",
    });
    const properties = {
      // The logical ID, not a reference: a reference would make the first guard depend on the endpoint.
      EndpointLogicalId: props.endpoint.logicalId,
      VariantName: props.variantName,
      InstanceType: props.instanceType,
      DeploymentConfig: props.hasDeploymentConfig ? 'true' : 'false',
      Scaling: Lazy.any({ produce: () => this.renderScaling() }),
    };
    this.resource = new CustomResource(this, 'Resource', {
      serviceToken: provider.serviceToken,
      resourceType: ScalingGuard.RESOURCE_TYPE,
      properties,
    });
    props.endpoint.node.addDependency(this.resource);
    this.afterEndpoint = new CustomResource(this, 'AfterEndpoint', {
      serviceToken: provider.serviceToken,
      resourceType: ScalingGuard.RESOURCE_TYPE,
      properties,
    });
    this.afterEndpoint.node.addDependency(props.endpoint);
    this.node.addValidation({ validate: () => this.foreignPolicies() });
  }

  /**
   * The construct holding this generation's scalable target and its policies: the guards carry its spec, and its
   * resources are created after the second guard.
   */
  public carry(scaling: IConstruct): void {
    this.scaling = scaling;
    scaling.node.addDependency(this.afterEndpoint);
  }

  /** The scaling spec the guards register on a rollback, rendered from the generation's own resources. */
  private renderScaling(): unknown {
    if (!this.scaling) return undefined;
    const stack = Stack.of(this);
    const render = (resource: IConstruct): Record<string, unknown> => {
      const out = stack.resolve((resource as unknown as { _toCloudFormation(): unknown })._toCloudFormation()) as {
        Resources: Record<string, { Properties: Record<string, unknown> }>;
      };
      return Object.values(out.Resources)[0]!.Properties;
    };
    const children = this.scaling.node.findAll();
    const target = children.find(isType('AWS::ApplicationAutoScaling::ScalableTarget'))!;
    const alarms = children.filter(isType('AWS::CloudWatch::Alarm'));
    const t = render(target);
    const policies = children.filter(isType('AWS::ApplicationAutoScaling::ScalingPolicy')).map((policy) => {
      const p = render(policy);
      const logicalId = stack.resolve((policy as appscaling.CfnScalingPolicy).logicalId) as string;
      const alarmIds = alarms
        .filter((alarm) => JSON.stringify(render(alarm).AlarmActions ?? []).includes(JSON.stringify({ Ref: logicalId })))
        .map((alarm) => stack.resolve((alarm as cloudwatch.CfnAlarm).logicalId) as string);
      return {
        PolicyName: p.PolicyName,
        LogicalId: logicalId,
        PolicyType: p.PolicyType,
        TargetTrackingScalingPolicyConfiguration: p.TargetTrackingScalingPolicyConfiguration,
        StepScalingPolicyConfiguration: p.StepScalingPolicyConfiguration,
        AlarmLogicalIds: alarmIds.length > 0 ? alarmIds : undefined,
      };
    });
    return this.withoutEndpointReference({
      TargetLogicalId: stack.resolve((target as appscaling.CfnScalableTarget).logicalId),
      MinCapacity: t.MinCapacity,
      MaxCapacity: t.MaxCapacity,
      RoleARN: t.RoleARN,
      SuspendedState: t.SuspendedState,
      ScheduledActions: t.ScheduledActions,
      Policies: policies,
    });
  }

  /** The endpoint's name becomes a placeholder the handler fills in: a reference would make a cycle. */
  private withoutEndpointReference(node: unknown): unknown {
    const endpointId = Stack.of(this).resolve(this.endpoint.logicalId) as string;
    const walk = (n: unknown): unknown => {
      if (Array.isArray(n)) return n.map(walk);
      if (n && typeof n === 'object') {
        const getAtt = (n as Record<string, unknown>)['Fn::GetAtt'];
        if (Array.isArray(getAtt) && getAtt[0] === endpointId && getAtt[1] === 'EndpointName') return ENDPOINT_NAME;
        return Object.fromEntries(Object.entries(n).map(([k, v]) => [k, walk(v)]));
      }
      return n;
    };
    return walk(node);
  }

  /**
   * A scaling policy attached to the scalable target from outside the generation keeps its logical ID when the instance
   * type changes, so nothing would create it again after the guard deregisters the variant: refuse it.
   */
  private foreignPolicies(): string[] {
    if (!this.scaling) return [];
    const stack = Stack.of(this);
    const target = this.scaling.node.findAll().find(isType('AWS::ApplicationAutoScaling::ScalableTarget'));
    if (!target) return [];
    const ref = JSON.stringify({ Ref: stack.resolve((target as appscaling.CfnScalableTarget).logicalId) });
    const own = new Set(this.scaling.node.findAll());
    return stack.node
      .findAll()
      .filter(isType('AWS::ApplicationAutoScaling::ScalingPolicy'))
      .filter((p) => !own.has(p))
      .filter((p) => JSON.stringify(stack.resolve((p as appscaling.CfnScalingPolicy).scalingTargetId ?? null)) === ref)
      .map(
        (p) =>
          `The scaling policy ${p.node.path} is attached to the endpoint's scalable target from outside ` +
          `autoScaleInstanceCount(): an instance type change would deregister it and nothing would create it again. ` +
          `Add it with the ScalableInstanceCount's scaleOnGpuUtilization / scaleToTrackMetric / scaleOnMetric / ` +
          `scaleOnSchedule instead, which follow instance type changes and rollbacks.`,
      );
  }
}

function isType(type: string): (c: IConstruct) => boolean {
  return (c) => (c as { cfnResourceType?: string }).cfnResourceType === type;
}
