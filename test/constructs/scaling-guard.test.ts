import { readdirSync } from 'node:fs';
import {
  ApplicationAutoScalingClient,
  DeregisterScalableTargetCommand,
  DescribeScalableTargetsCommand,
  PutScalingPolicyCommand,
  PutScheduledActionCommand,
  RegisterScalableTargetCommand,
  ScalableTarget,
} from '@aws-sdk/client-application-auto-scaling';
import { CloudFormationClient, DescribeStackResourceCommand } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient, DescribeAlarmsCommand, PutMetricAlarmCommand } from '@aws-sdk/client-cloudwatch';
import { DescribeEndpointCommand, DescribeEndpointConfigCommand, SageMakerClient } from '@aws-sdk/client-sagemaker';
import { App, CfnParameter, Stack } from 'aws-cdk-lib';
import * as appscaling from 'aws-cdk-lib/aws-applicationautoscaling';
import { Template } from 'aws-cdk-lib/assertions';
import { mockClient } from 'aws-sdk-client-mock';
import { InstanceType, TritonMultiModelEndpoint } from '../../constructs';
import { projectPath } from '../../constructs/project-path';
import { handler, onEvent } from '../../constructs/handlers/scaling-guard/index.js';

type Resource = {
  Type: string;
  Properties?: Record<string, unknown>;
  DependsOn?: string[];
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
};
type Resources = Record<string, Resource>;

/** The app's endpoint with GPU autoscaling, a step policy and a schedule, on `instanceType` and `variantName`. */
function autoscaledTemplate(instanceType: InstanceType, variantName = 'AllTraffic'): Resources {
  const stack = new Stack(new App(), 'S');
  const endpoint = new TritonMultiModelEndpoint(stack, 'Mme', { instanceType, variantName, initialInstanceCount: 2 });
  const scaling = endpoint.autoScaleInstanceCount({ minCapacity: 2, maxCapacity: 4 });
  scaling.scaleOnGpuUtilization('Gpu');
  return Template.fromStack(stack).toJSON().Resources as Resources;
}

function idsOfType(resources: Resources, type: string): string[] {
  return Object.keys(resources).filter((id) => resources[id]!.Type === type);
}

/** Logical IDs `resource` refers to (Ref, Fn::GetAtt). */
function referencesOf(resource: Resource): Set<string> {
  const found = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      const o = node as Record<string, unknown>;
      if (typeof o.Ref === 'string') found.add(o.Ref);
      if (Array.isArray(o['Fn::GetAtt'])) found.add(o['Fn::GetAtt'][0] as string);
      Object.values(o).forEach(walk);
    }
  };
  walk(resource.Properties);
  return found;
}

/** Logical IDs `resource` refers to or depends on. */
function dependenciesOf(resource: Resource): Set<string> {
  return new Set([...(resource.DependsOn ?? []), ...referencesOf(resource)]);
}

/** Types whose every property requires replacement (CloudFormation resource reference: "Update requires: Replacement"). */
const REPLACED_ON_ANY_CHANGE = new Set(['AWS::SageMaker::Model', 'AWS::SageMaker::EndpointConfig']);

/**
 * The order in which CloudFormation applies `after` over `before`: new and changed resources (and those referring to a
 * replaced one) are created or updated in dependency order (a resource after everything it refers to or depends on),
 * then, in the cleanup phase, removed
 * resources are deleted in reverse dependency order unless their DeletionPolicy is Retain
 * (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/using-cfn-updating-stacks.html).
 */
function updatePlan(before: Resources, after: Resources): string[] {
  const touched = Object.keys(after).filter(
    (id) => !before[id] || JSON.stringify(before[id]!.Properties) !== JSON.stringify(after[id]!.Properties),
  );
  // A replaced resource gets a new physical ID, so whatever refers to it is updated too.
  for (let grew = true; grew;) {
    const replaced = touched.filter((id) => before[id] && REPLACED_ON_ANY_CHANGE.has(after[id]!.Type));
    const referring = Object.keys(after).filter((id) => !touched.includes(id) && replaced.some((r) => referencesOf(after[id]!).has(r)));
    touched.push(...referring);
    grew = referring.length > 0;
  }
  const plan: string[] = [];
  const done = new Set<string>();
  const visit = (id: string): void => {
    if (done.has(id)) return;
    done.add(id);
    for (const dep of dependenciesOf(after[id]!)) if (after[dep]) visit(dep);
    if (touched.includes(id)) plan.push(`${before[id] ? 'update' : 'create'} ${id}`);
  };
  Object.keys(after).forEach(visit);
  const removed = Object.keys(before).filter((id) => !after[id]);
  const deleted = removed.filter((id) => before[id]!.DeletionPolicy !== 'Retain').reverse();
  return [...plan, ...deleted.map((id) => `delete ${id}`), ...removed.filter((id) => !deleted.includes(id)).map((id) => `retain ${id}`)];
}

describe('an instance type change on an autoscaled endpoint (generated template)', () => {
  const before = autoscaledTemplate(InstanceType.G4DN_XLARGE);
  const after = autoscaledTemplate(InstanceType.G5_XLARGE);
  const [endpoint] = idsOfType(after, 'AWS::SageMaker::Endpoint');
  const [guard] = idsOfType(after, 'Custom::MmeDeployScalingGuard').filter((id) => !after[id]!.DependsOn?.includes(endpoint!));
  const [oldTarget] = idsOfType(before, 'AWS::ApplicationAutoScaling::ScalableTarget');
  const [newTarget] = idsOfType(after, 'AWS::ApplicationAutoScaling::ScalableTarget');
  const [oldPolicy] = idsOfType(before, 'AWS::ApplicationAutoScaling::ScalingPolicy');
  const [newPolicy] = idsOfType(after, 'AWS::ApplicationAutoScaling::ScalingPolicy');

  it('runs the guard before the endpoint, without the guard referring to the endpoint', () => {
    expect(after[endpoint!]!.DependsOn).toContain(guard);
    expect(dependenciesOf(after[guard!]!).has(endpoint!)).toBe(false);
    expect(after[guard!]!.Properties).toMatchObject({
      EndpointLogicalId: endpoint,
      VariantName: 'AllTraffic',
      InstanceType: 'ml.g5.xlarge',
    });
    expect(before[guard!]!.Properties).toMatchObject({ InstanceType: 'ml.g4dn.xlarge' });
  });

  it('gives the scalable target and its policies new logical IDs and policy names, and retains the target', () => {
    expect(newTarget).not.toBe(oldTarget);
    expect(newPolicy).not.toBe(oldPolicy);
    expect(after[newPolicy!]!.Properties!.PolicyName).not.toEqual(before[oldPolicy!]!.Properties!.PolicyName);
    const [afterEndpoint] = idsOfType(after, 'Custom::MmeDeployScalingGuard').filter((id) => after[id]!.DependsOn?.includes(endpoint!));
    expect(after[newTarget!]).toMatchObject({
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      DependsOn: [endpoint, afterEndpoint],
    });
  });

  it('deregisters (guard), updates the endpoint, registers the new target and policy, then drops the old policy', () => {
    const plan = updatePlan(before, after);
    const at = (step: string) => {
      expect(plan).toContain(step);
      return plan.indexOf(step);
    };
    expect(at(`update ${guard}`)).toBeLessThan(at(`update ${endpoint}`));
    expect(at(`update ${endpoint}`)).toBeLessThan(at(`create ${newTarget}`));
    expect(at(`create ${newTarget}`)).toBeLessThan(at(`create ${newPolicy}`));
    expect(at(`create ${newPolicy}`)).toBeLessThan(at(`delete ${oldPolicy}`));
    // Deleting the old target would deregister the new one (same ResourceId): it is retained instead.
    expect(plan).toContain(`retain ${oldTarget}`);
    expect(plan).not.toContain(`delete ${oldTarget}`);
  });

  it('leaves the scaling resources alone when the instance type stays (only the guard and endpoint are untouched too)', () => {
    expect(updatePlan(before, autoscaledTemplate(InstanceType.G4DN_XLARGE))).toEqual([]);
  });

  it('treats a variant rename like an instance type change', () => {
    const renamed = autoscaledTemplate(InstanceType.G4DN_XLARGE, 'Blue');
    expect(idsOfType(renamed, 'AWS::ApplicationAutoScaling::ScalableTarget')).not.toEqual([oldTarget]);
    expect(renamed[guard!]!.Properties).toMatchObject({ VariantName: 'Blue' });
  });

  it('deploys only index.js as the handler', () => {
    expect(readdirSync(projectPath('constructs', 'handlers', 'scaling-guard'))).toEqual(['index.js']);
  });
});

describe('the ScalingGuard handler (exact AWS requests)', () => {
  const cfn = mockClient(CloudFormationClient);
  const aas = mockClient(ApplicationAutoScalingClient);
  const sm = mockClient(SageMakerClient);
  const cw = mockClient(CloudWatchClient);
  afterAll(() => [cfn, aas, sm, cw].forEach((m) => m.restore()));
  const clients = () => ({
    cloudformation: new CloudFormationClient({}),
    autoscaling: new ApplicationAutoScalingClient({}),
    sagemaker: new SageMakerClient({}),
    cloudwatch: new CloudWatchClient({}),
  });
  const stackId = 'arn:aws:cloudformation:eu-west-1:111122223333:stack/S/0a1b';
  const ours = 'endpoint/MmeEndpoint-AbC123/variant/AllTraffic';
  const props = { EndpointLogicalId: 'MmeEndpoint8024A810', VariantName: 'AllTraffic', InstanceType: 'ml.g5.xlarge' };
  const update = (old: Partial<typeof props>) =>
    ({ RequestType: 'Update', StackId: stackId, ResourceProperties: props, OldResourceProperties: { ...props, ...old } }) as const;
  const target = (ResourceId: string, dimension = 'sagemaker:variant:DesiredInstanceCount'): ScalableTarget => ({
    ServiceNamespace: 'sagemaker',
    ResourceId,
    ScalableDimension: dimension as ScalableTarget['ScalableDimension'],
    MinCapacity: 1,
    MaxCapacity: 2,
    RoleARN: 'r',
    CreationTime: new Date(0),
  });
  const endpointResource = (ResourceStatus: string) => ({
    StackResourceDetail: {
      LogicalResourceId: props.EndpointLogicalId,
      ResourceType: 'AWS::SageMaker::Endpoint',
      ResourceStatus,
      LastUpdatedTimestamp: new Date(0),
      PhysicalResourceId: 'arn:aws:sagemaker:eu-west-1:111122223333:endpoint/mmeendpoint-abc123',
    },
  });

  const awsError = (name: string, message: string) => Object.assign(new Error(message), { name });
  const del = { RequestType: 'Delete', StackId: stackId, ResourceProperties: props } as const;
  const renameRefusal =
    'The variant Blue of endpoint mmeendpoint-abc123 cannot be renamed to AllTraffic while the endpoint has a deployment ' +
    'configuration: SageMaker requires the same variant name for blue/green and rolling deployments. Deploy the rename ' +
    'without `deployment` first, then add it back (see docs/cdk.md, "Renaming the variant").';

  beforeEach(() => {
    [cfn, aas, sm, cw].forEach((m) => m.reset());
    cfn.on(DescribeStackResourceCommand).resolves(endpointResource('UPDATE_COMPLETE') as never);
    aas.on(DescribeScalableTargetsCommand).resolves({ ScalableTargets: [target(ours)] });
    aas.on(DeregisterScalableTargetCommand).resolves({});
  });

  it('deregisters the variant, with the case it was registered with, when the instance type changes', async () => {
    const result = await onEvent(update({ InstanceType: 'ml.g4dn.xlarge' }), clients());
    expect(result).toEqual({ action: 'deregistered', resourceId: ours });
    expect(cfn.commandCalls(DescribeStackResourceCommand).map((c) => c.args[0].input)).toEqual([
      { StackName: stackId, LogicalResourceId: 'MmeEndpoint8024A810' },
    ]);
    expect(aas.commandCalls(DescribeScalableTargetsCommand).map((c) => c.args[0].input)).toEqual([{ ServiceNamespace: 'sagemaker' }]);
    expect(aas.commandCalls(DeregisterScalableTargetCommand).map((c) => c.args[0].input)).toEqual([
      { ServiceNamespace: 'sagemaker', ResourceId: ours, ScalableDimension: 'sagemaker:variant:DesiredInstanceCount' },
    ]);
  });

  it('searches every page of DescribeScalableTargets (an account with more than 50 SageMaker targets)', async () => {
    const others = Array.from({ length: 50 }, (_, i) => target(`endpoint/other-${i}/variant/AllTraffic`));
    aas
      .on(DescribeScalableTargetsCommand)
      .resolvesOnce({ ScalableTargets: others, NextToken: 'page-2' })
      .resolvesOnce({ ScalableTargets: [target(ours)] });
    expect(await onEvent(update({ InstanceType: 'ml.g4dn.xlarge' }), clients())).toEqual({ action: 'deregistered', resourceId: ours });
    const calls = aas.commandCalls(DescribeScalableTargetsCommand);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.args[0].input).toMatchObject({ ServiceNamespace: 'sagemaker', NextToken: 'page-2' });
  });

  it('ignores a target of the same variant in another dimension', async () => {
    aas.on(DescribeScalableTargetsCommand).resolves({ ScalableTargets: [target(ours, 'sagemaker:variant:DesiredProvisionedConcurrency')] });
    expect(await onEvent(update({ InstanceType: 'ml.g4dn.xlarge' }), clients())).toEqual({ action: 'none' });
    expect(aas.commandCalls(DeregisterScalableTargetCommand)).toHaveLength(0);
  });

  it('treats an endpoint in DELETE_COMPLETE as gone (stack deletion deletes the endpoint before the first guard)', async () => {
    cfn.on(DescribeStackResourceCommand).resolves(endpointResource('DELETE_COMPLETE') as never);
    expect(await onEvent({ RequestType: 'Delete', StackId: stackId, ResourceProperties: props }, clients())).toEqual({ action: 'none' });
    expect(aas.calls()).toHaveLength(0);
  });

  it('deregisters the old variant when the variant is renamed', async () => {
    aas.on(DescribeScalableTargetsCommand).resolves({ ScalableTargets: [target('endpoint/MmeEndpoint-AbC123/variant/Blue')] });
    await onEvent(update({ VariantName: 'Blue' }), clients());
    expect(aas.commandCalls(DeregisterScalableTargetCommand).map((c) => c.args[0].input.ResourceId)).toEqual([
      'endpoint/MmeEndpoint-AbC123/variant/Blue',
    ]);
  });

  it('refuses a rename under a deployment configuration before deregistering anything', async () => {
    const event = { ...update({ VariantName: 'Blue' }), ResourceProperties: { ...props, DeploymentConfig: 'true' } };
    await expect(onEvent(event, clients())).rejects.toThrow(new Error(renameRefusal));
    expect(aas.commandCalls(DeregisterScalableTargetCommand)).toHaveLength(0);
  });

  it('deregisters under a deployment configuration when the variant keeps its name (type change, delete)', async () => {
    const withDeployment = { ...props, DeploymentConfig: 'true' };
    const typeChange = { ...update({ InstanceType: 'ml.g4dn.xlarge' }), ResourceProperties: withDeployment };
    expect(await onEvent(typeChange, clients())).toEqual({ action: 'deregistered', resourceId: ours });
    expect(await onEvent({ ...del, ResourceProperties: withDeployment }, clients())).toEqual({ action: 'deregistered', resourceId: ours });
    expect(aas.commandCalls(DeregisterScalableTargetCommand)).toHaveLength(2);
  });

  it('calls nothing on create, and on an update that keeps the instance type, variant and generation', async () => {
    expect(await onEvent({ RequestType: 'Create', StackId: stackId, ResourceProperties: props }, clients())).toEqual({ action: 'none' });
    expect(await onEvent(update({}), clients())).toEqual({ action: 'none' });
    expect(cfn.calls()).toHaveLength(0);
    expect(aas.calls()).toHaveLength(0);
  });

  it('deregisters on delete (autoscaling removed from the app, or the stack deleted before the endpoint)', async () => {
    await onEvent({ RequestType: 'Delete', StackId: stackId, ResourceProperties: props }, clients());
    expect(aas.commandCalls(DeregisterScalableTargetCommand)).toHaveLength(1);
  });

  it('does nothing when the endpoint does not exist or the variant is not registered', async () => {
    cfn
      .on(DescribeStackResourceCommand)
      .rejects(Object.assign(new Error('Resource MmeEndpoint8024A810 does not exist for stack S'), { name: 'ValidationError' }));
    expect(await onEvent({ RequestType: 'Delete', StackId: stackId, ResourceProperties: props }, clients())).toEqual({ action: 'none' });
    cfn.on(DescribeStackResourceCommand).resolves(endpointResource('UPDATE_COMPLETE') as never);
    aas.on(DescribeScalableTargetsCommand).resolves({ ScalableTargets: [target('endpoint/other/variant/AllTraffic')] });
    expect(await onEvent(update({ InstanceType: 'ml.g4dn.xlarge' }), clients())).toEqual({ action: 'none' });
    expect(aas.commandCalls(DeregisterScalableTargetCommand)).toHaveLength(0);
  });

  it('tolerates a target deregistered meanwhile, and fails on other errors', async () => {
    aas.on(DeregisterScalableTargetCommand).rejects(Object.assign(new Error('gone'), { name: 'ObjectNotFoundException' }));
    await expect(onEvent(update({ InstanceType: 'ml.g4dn.xlarge' }), clients())).resolves.toBeDefined();
    aas.on(DeregisterScalableTargetCommand).rejects(Object.assign(new Error('denied'), { name: 'AccessDeniedException' }));
    await expect(onEvent(update({ InstanceType: 'ml.g4dn.xlarge' }), clients())).rejects.toThrow('denied');
  });

  it('fails on any other error of DescribeStackResource (a throttled call is not a missing endpoint)', async () => {
    cfn.on(DescribeStackResourceCommand).rejects(awsError('Throttling', 'Rate exceeded'));
    await expect(onEvent(del, clients())).rejects.toThrow('Rate exceeded');
    expect(aas.calls()).toHaveLength(0);
  });

  it('looks for the one variant on delete, and logs what it did and did not do', async () => {
    const lines: string[] = [];
    const log = (line: string) => lines.push(line);
    expect(await onEvent(del, { ...clients(), log })).toEqual({ action: 'deregistered', resourceId: ours });
    expect(aas.commandCalls(DescribeScalableTargetsCommand)).toHaveLength(1);
    aas.on(DescribeScalableTargetsCommand).resolves({ ScalableTargets: [] });
    expect(await onEvent(del, { ...clients(), log })).toEqual({ action: 'none' });
    expect(lines).toEqual([
      `Deregistered ${ours} (its scaling policies and scheduled actions go with it).`,
      'No scalable target for endpoint/mmeendpoint-abc123/variant/AllTraffic: nothing to deregister.',
    ]);
  });

  it('answers CloudFormation with the action taken (the Lambda entry point, logging to the function\'s log)', async () => {
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      expect(await handler(del)).toEqual({ Data: { Action: 'deregistered' } });
      expect(await handler({ RequestType: 'Create', StackId: stackId, ResourceProperties: props })).toEqual({ Data: { Action: 'none' } });
      expect(log.mock.calls).toEqual([[`Deregistered ${ours} (its scaling policies and scheduled actions go with it).`]]);
    } finally {
      log.mockRestore();
    }
  });

  describe('on a rollback to a generation whose scalable target is in the stack', () => {
    const scaling = {
      TargetLogicalId: 'MmeInstanceCountTarget',
      MinCapacity: '2',
      MaxCapacity: '4',
      RoleARN: 'arn:aws:iam::111122223333:role/aws-service-role/x',
      ScheduledActions: [{ ScheduledActionName: 'Night', Schedule: 'cron(0 20 * * ? *)', ScalableTargetAction: { MaxCapacity: '2' } }],
      Policies: [
        {
          PolicyName: 'Gpu',
          LogicalId: 'GpuPolicy',
          PolicyType: 'TargetTrackingScaling',
          TargetTrackingScalingPolicyConfiguration: {
            TargetValue: '60',
            DisableScaleIn: 'false',
            CustomizedMetricSpecification: {
              MetricName: 'GPUUtilization',
              Dimensions: [{ Name: 'EndpointName', Value: '{{EndpointName}}' }],
            },
          },
        },
        {
          PolicyName: 'Step',
          LogicalId: 'StepPolicy',
          PolicyType: 'StepScaling',
          StepScalingPolicyConfiguration: { StepAdjustments: [{ MetricIntervalLowerBound: '0', ScalingAdjustment: '1' }] },
          AlarmLogicalIds: ['StepAlarm'],
        },
      ],
    };
    const rollback = {
      RequestType: 'Update',
      StackId: stackId,
      ResourceProperties: { ...props, InstanceType: 'ml.g4dn.xlarge', Scaling: scaling },
      OldResourceProperties: { ...props, Scaling: { ...scaling, TargetLogicalId: 'MmeInstanceCountG5Target' } },
    } as const;
    const runs = (InstanceType: string) =>
      sm.on(DescribeEndpointConfigCommand).resolves({ ProductionVariants: [{ VariantName: 'AllTraffic', InstanceType }] } as never);
    const newArn = 'arn:aws:autoscaling:eu-west-1:111122223333:scalingPolicy:new:resource/sagemaker/x:policyName/Step';
    const id = { ServiceNamespace: 'sagemaker', ResourceId: ours, ScalableDimension: 'sagemaker:variant:DesiredInstanceCount' };
    const physical: Record<string, string> = {
      [props.EndpointLogicalId]: endpointResource('UPDATE_COMPLETE').StackResourceDetail.PhysicalResourceId,
      MmeInstanceCountTarget: 'target',
      StepAlarm: 'S-StepAlarm-1',
    };
    /** The stack's resources: a status by logical ID; any other is absent (DescribeStackResource's ValidationError). */
    const inStack = (statuses: Record<string, string>) => {
      cfn.reset();
      cfn.on(DescribeStackResourceCommand).callsFake(async (input: { LogicalResourceId: string }) => {
        const status = statuses[input.LogicalResourceId];
        if (!status) throw awsError('ValidationError', `Resource ${input.LogicalResourceId} does not exist for stack S`);
        const detail = endpointResource(status).StackResourceDetail;
        const PhysicalResourceId = physical[input.LogicalResourceId];
        return { StackResourceDetail: { ...detail, LogicalResourceId: input.LogicalResourceId, PhysicalResourceId } };
      });
    };
    const withScaling = (spec: Record<string, unknown>) => {
      const Scaling = { TargetLogicalId: 'MmeInstanceCountTarget', ...spec };
      return { ...rollback, ResourceProperties: { ...rollback.ResourceProperties, Scaling } } as never;
    };

    beforeEach(() => {
      cfn.on(DescribeStackResourceCommand, { LogicalResourceId: 'MmeInstanceCountTarget' }).resolves({
        StackResourceDetail: { ...endpointResource('UPDATE_COMPLETE').StackResourceDetail, PhysicalResourceId: 'target' },
      } as never);
      cfn.on(DescribeStackResourceCommand, { LogicalResourceId: 'StepAlarm' }).resolves({
        StackResourceDetail: { ...endpointResource('UPDATE_COMPLETE').StackResourceDetail, PhysicalResourceId: 'S-StepAlarm-1' },
      } as never);
      sm.on(DescribeEndpointCommand).resolves({ EndpointName: 'MmeEndpoint-AbC123', EndpointConfigName: 'config-1' } as never);
      aas.on(DescribeScalableTargetsCommand).resolves({ ScalableTargets: [] });
      aas.on(PutScalingPolicyCommand).resolves({ PolicyARN: newArn });
      cw.on(DescribeAlarmsCommand).resolves({
        MetricAlarms: [
          { AlarmName: 'S-StepAlarm-1', AlarmActions: ['arn:aws:autoscaling:x:scalingPolicy:old:resource/y:policyName/Step'] },
        ],
      });
    });

    it('deregisters while the endpoint still runs the other type (its rollback comes next)', async () => {
      runs('ml.g5.xlarge');
      aas.on(DescribeScalableTargetsCommand).resolves({ ScalableTargets: [target(ours)] });
      expect(await onEvent(rollback, clients())).toEqual({ action: 'deregistered', resourceId: ours });
      expect(aas.commandCalls(RegisterScalableTargetCommand)).toHaveLength(0);
    });

    it('registers target, schedule and policies as typed values, and points the step alarm at the new policy', async () => {
      runs('ml.g4dn.xlarge');
      const lines: string[] = [];
      const log = (line: string) => lines.push(line);
      expect(await onEvent(rollback, { ...clients(), log })).toEqual({ action: 'registered', resourceId: ours });
      // The endpoint by the name its ARN gives, then its configuration; no registration to take the name's case from
      // (ScalableTargets is empty), so the name as created, from DescribeEndpoint.
      expect(sm.commandCalls(DescribeEndpointCommand).map((c) => c.args[0].input)).toEqual([
        { EndpointName: 'mmeendpoint-abc123' },
        { EndpointName: 'mmeendpoint-abc123' },
      ]);
      expect(sm.commandCalls(DescribeEndpointConfigCommand).map((c) => c.args[0].input)).toEqual([{ EndpointConfigName: 'config-1' }]);
      expect(aas.commandCalls(DeregisterScalableTargetCommand)).toHaveLength(0);
      expect(aas.commandCalls(RegisterScalableTargetCommand).map((c) => c.args[0].input)).toEqual([
        { ...id, MinCapacity: 2, MaxCapacity: 4, RoleARN: scaling.RoleARN, SuspendedState: undefined },
      ]);
      expect(aas.commandCalls(PutScheduledActionCommand).map((c) => c.args[0].input)).toEqual([
        { ...id, ScheduledActionName: 'Night', Schedule: 'cron(0 20 * * ? *)', ScalableTargetAction: { MaxCapacity: 2 } },
      ]);
      expect(aas.commandCalls(PutScalingPolicyCommand).map((c) => c.args[0].input)).toEqual([
        {
          ...id,
          PolicyName: 'Gpu',
          PolicyType: 'TargetTrackingScaling',
          TargetTrackingScalingPolicyConfiguration: {
            TargetValue: 60,
            DisableScaleIn: false,
            CustomizedMetricSpecification: {
              MetricName: 'GPUUtilization',
              Dimensions: [{ Name: 'EndpointName', Value: 'MmeEndpoint-AbC123' }],
            },
          },
        },
        {
          ...id,
          PolicyName: 'Step',
          PolicyType: 'StepScaling',
          StepScalingPolicyConfiguration: { StepAdjustments: [{ MetricIntervalLowerBound: 0, ScalingAdjustment: 1 }] },
        },
      ]);
      expect(cw.commandCalls(PutMetricAlarmCommand).map((c) => [c.args[0].input.AlarmName, c.args[0].input.AlarmActions])).toEqual([
        ['S-StepAlarm-1', [newArn]],
      ]);
      expect(lines).toEqual([
        `Alarm S-StepAlarm-1 now acts on ${newArn}.`,
        `Registered ${ours} with 2 policies as the stack's template describes.`,
      ]);
    });

    it.each([['absent from', undefined], ['CREATE_FAILED in', 'CREATE_FAILED'], ['DELETE_COMPLETE in', 'DELETE_COMPLETE']])(
      'deregisters, and registers nothing, when the scalable target is %s the stack',
      async (_, status) => {
        inStack({ [props.EndpointLogicalId]: 'UPDATE_COMPLETE', ...(status && { MmeInstanceCountTarget: status }) });
        runs('ml.g4dn.xlarge');
        aas.on(DescribeScalableTargetsCommand).resolves({ ScalableTargets: [target(ours)] });
        expect(await onEvent(rollback, clients())).toEqual({ action: 'deregistered', resourceId: ours });
        expect(aas.commandCalls(RegisterScalableTargetCommand)).toHaveLength(0);
      },
    );

    it('deregisters on delete whatever the endpoint runs (the stack deleted, or autoscaling removed)', async () => {
      runs('ml.g4dn.xlarge');
      aas.on(DescribeScalableTargetsCommand).resolves({ ScalableTargets: [target(ours)] });
      const deleted = { RequestType: 'Delete', StackId: stackId, ResourceProperties: rollback.ResourceProperties } as const;
      expect(await onEvent(deleted, clients())).toEqual({ action: 'deregistered', resourceId: ours });
      expect(sm.calls()).toHaveLength(0);
      expect(aas.commandCalls(RegisterScalableTargetCommand)).toHaveLength(0);
    });

    it('takes a new logical ID of the scalable target alone for a new generation', async () => {
      runs('ml.g4dn.xlarge');
      const old = { ...rollback.ResourceProperties, Scaling: { ...scaling, TargetLogicalId: 'MmeOld' } };
      const moved = { ...rollback, OldResourceProperties: old };
      expect(await onEvent(moved, clients())).toEqual({ action: 'registered', resourceId: ours });
    });

    it('registers again under the ResourceId registered, without asking SageMaker for the name (a guard retried)', async () => {
      runs('ml.g4dn.xlarge');
      aas.on(DescribeScalableTargetsCommand).resolves({ ScalableTargets: [target(ours)] });
      expect(await onEvent(rollback, clients())).toEqual({ action: 'registered', resourceId: ours });
      expect(sm.commandCalls(DescribeEndpointCommand)).toHaveLength(1);
      expect(aas.commandCalls(DeregisterScalableTargetCommand)).toHaveLength(0);
      expect(aas.commandCalls(RegisterScalableTargetCommand).map((c) => c.args[0].input.ResourceId)).toEqual([ours]);
    });

    it('deregisters the other variant name only, before registering this one (a rename rolled back)', async () => {
      runs('ml.g4dn.xlarge');
      const blue = 'endpoint/MmeEndpoint-AbC123/variant/Blue';
      aas.on(DescribeScalableTargetsCommand).resolves({ ScalableTargets: [target(blue), target(ours)] });
      const renamed = { ...rollback, OldResourceProperties: { ...rollback.OldResourceProperties, VariantName: 'Blue' } };
      expect(await onEvent(renamed, clients())).toEqual({ action: 'registered', resourceId: ours });
      expect(aas.calls().map((c) => [c.args[0].constructor.name, (c.args[0].input as { ResourceId?: string }).ResourceId])).toEqual([
        ['DescribeScalableTargetsCommand', undefined],
        ['DeregisterScalableTargetCommand', blue],
        ['DescribeScalableTargetsCommand', undefined],
        ['RegisterScalableTargetCommand', ours],
        ['PutScheduledActionCommand', ours],
        ['PutScalingPolicyCommand', ours],
        ['PutScalingPolicyCommand', ours],
      ]);
    });

    it('finds the variant by its name in the endpoint configuration', async () => {
      aas.on(DescribeScalableTargetsCommand).resolves({ ScalableTargets: [target(ours)] });
      const variants = (...list: [string, string][]) => {
        const ProductionVariants = list.map(([VariantName, InstanceType]) => ({ VariantName, InstanceType }));
        sm.on(DescribeEndpointConfigCommand).resolves({ ProductionVariants } as never);
      };
      variants(['Blue', 'ml.g5.xlarge'], ['AllTraffic', 'ml.g4dn.xlarge']);
      expect(await onEvent(rollback, clients())).toEqual({ action: 'registered', resourceId: ours });
      variants(['Blue', 'ml.g4dn.xlarge']);
      expect(await onEvent(rollback, clients())).toEqual({ action: 'deregistered', resourceId: ours });
    });

    it('deregisters when SageMaker has no such endpoint or it names no configuration, and fails on other errors', async () => {
      runs('ml.g4dn.xlarge');
      aas.on(DescribeScalableTargetsCommand).resolves({ ScalableTargets: [target(ours)] });
      sm.on(DescribeEndpointCommand).rejects(awsError('ValidationException', 'Could not find endpoint "mmeendpoint-abc123".'));
      expect(await onEvent(rollback, clients())).toEqual({ action: 'deregistered', resourceId: ours });
      // EndpointConfigName is optional in DescribeEndpoint's output (the SageMaker API model, as @aws-sdk/client-sagemaker
      // types it).
      sm.on(DescribeEndpointCommand).resolves({ EndpointName: 'MmeEndpoint-AbC123' } as never);
      expect(await onEvent(rollback, clients())).toEqual({ action: 'deregistered', resourceId: ours });
      expect(sm.commandCalls(DescribeEndpointConfigCommand)).toHaveLength(0);
      sm.on(DescribeEndpointCommand).rejects(awsError('ThrottlingException', 'Rate exceeded'));
      await expect(onEvent(rollback, clients())).rejects.toThrow('Rate exceeded');
      expect(aas.commandCalls(DeregisterScalableTargetCommand)).toHaveLength(2);
      expect(aas.commandCalls(RegisterScalableTargetCommand)).toHaveLength(0);
    });

    it('registers a target without schedules or policies as just that', async () => {
      runs('ml.g4dn.xlarge');
      const lines: string[] = [];
      const bare = withScaling({ MinCapacity: '1', MaxCapacity: '3' });
      expect(await onEvent(bare, { ...clients(), log: (line) => lines.push(line) })).toEqual({ action: 'registered', resourceId: ours });
      const registered = aas.commandCalls(RegisterScalableTargetCommand).map((c) => c.args[0].input);
      expect(registered).toEqual([{ ...id, MinCapacity: 1, MaxCapacity: 3 }]);
      expect(aas.commandCalls(PutScheduledActionCommand)).toHaveLength(0);
      expect(aas.commandCalls(PutScalingPolicyCommand)).toHaveLength(0);
      expect(lines).toEqual([`Registered ${ours} with 0 policies as the stack's template describes.`]);
    });

    it('sends every number, boolean and date of the scaling API as one (CloudFormation passes them as strings)', async () => {
      runs('ml.g4dn.xlarge');
      const gpu = { Namespace: '/aws/sagemaker/Endpoints', MetricName: 'GPUUtilization' };
      const spec = {
        MinCapacity: '1',
        MaxCapacity: '3',
        SuspendedState: { DynamicScalingInSuspended: 'true', DynamicScalingOutSuspended: 'false', ScheduledScalingSuspended: 'true' },
        ScheduledActions: [
          {
            ScheduledActionName: 'Weekend',
            Schedule: 'cron(0 0 ? * SAT *)',
            Timezone: 'Europe/Paris',
            StartTime: '2026-01-01T00:00:00Z',
            EndTime: '2026-12-31T00:00:00Z',
            ScalableTargetAction: { MinCapacity: '1', MaxCapacity: '1' },
          },
        ],
        Policies: [
          {
            PolicyName: 'Math',
            LogicalId: 'MathPolicy',
            PolicyType: 'TargetTrackingScaling',
            TargetTrackingScalingPolicyConfiguration: {
              TargetValue: '70.5',
              ScaleInCooldown: '300',
              ScaleOutCooldown: '60',
              DisableScaleIn: 'true',
              CustomizedMetricSpecification: {
                Metrics: [
                  {
                    Id: 'gpu',
                    ReturnData: 'false',
                    MetricStat: { Stat: 'Average', Metric: { ...gpu, Dimensions: [{ Name: 'EndpointName', Value: '{{EndpointName}}' }] } },
                  },
                  { Id: 'e', Expression: 'gpu / 4', ReturnData: 'true' },
                ],
              },
            },
          },
          {
            PolicyName: 'Step',
            LogicalId: 'StepPolicy',
            PolicyType: 'StepScaling',
            StepScalingPolicyConfiguration: {
              AdjustmentType: 'ChangeInCapacity',
              Cooldown: '120',
              MinAdjustmentMagnitude: '1',
              MetricAggregationType: 'Maximum',
              StepAdjustments: [
                { MetricIntervalUpperBound: '10', ScalingAdjustment: '-1' },
                { MetricIntervalLowerBound: '10', ScalingAdjustment: '2' },
              ],
            },
          },
        ],
      };
      await onEvent(withScaling(spec), clients());
      expect(aas.commandCalls(RegisterScalableTargetCommand).map((c) => c.args[0].input)).toEqual([
        {
          ...id,
          MinCapacity: 1,
          MaxCapacity: 3,
          SuspendedState: { DynamicScalingInSuspended: true, DynamicScalingOutSuspended: false, ScheduledScalingSuspended: true },
        },
      ]);
      expect(aas.commandCalls(PutScheduledActionCommand).map((c) => c.args[0].input)).toEqual([
        {
          ...id,
          ScheduledActionName: 'Weekend',
          Schedule: 'cron(0 0 ? * SAT *)',
          Timezone: 'Europe/Paris',
          StartTime: new Date('2026-01-01T00:00:00Z'),
          EndTime: new Date('2026-12-31T00:00:00Z'),
          ScalableTargetAction: { MinCapacity: 1, MaxCapacity: 1 },
        },
      ]);
      expect(aas.commandCalls(PutScalingPolicyCommand).map((c) => c.args[0].input)).toEqual([
        {
          ...id,
          PolicyName: 'Math',
          PolicyType: 'TargetTrackingScaling',
          TargetTrackingScalingPolicyConfiguration: {
            TargetValue: 70.5,
            ScaleInCooldown: 300,
            ScaleOutCooldown: 60,
            DisableScaleIn: true,
            CustomizedMetricSpecification: {
              Metrics: [
                {
                  Id: 'gpu',
                  ReturnData: false,
                  MetricStat: { Stat: 'Average', Metric: { ...gpu, Dimensions: [{ Name: 'EndpointName', Value: 'MmeEndpoint-AbC123' }] } },
                },
                { Id: 'e', Expression: 'gpu / 4', ReturnData: true },
              ],
            },
          },
        },
        {
          ...id,
          PolicyName: 'Step',
          PolicyType: 'StepScaling',
          StepScalingPolicyConfiguration: {
            AdjustmentType: 'ChangeInCapacity',
            Cooldown: 120,
            MinAdjustmentMagnitude: 1,
            MetricAggregationType: 'Maximum',
            StepAdjustments: [
              { MetricIntervalUpperBound: 10, ScalingAdjustment: -1 },
              { MetricIntervalLowerBound: 10, ScalingAdjustment: 2 },
            ],
          },
        },
      ]);
    });

    it('keeps values that are numbers and booleans already (the properties as synthesized)', async () => {
      runs('ml.g4dn.xlarge');
      const spec = {
        MinCapacity: 2,
        MaxCapacity: 4,
        ScheduledActions: [{ ScheduledActionName: 'Night', Schedule: 'cron(0 20 * * ? *)', ScalableTargetAction: { MaxCapacity: 2 } }],
        Policies: [
          {
            PolicyName: 'Rps',
            LogicalId: 'RpsPolicy',
            PolicyType: 'TargetTrackingScaling',
            TargetTrackingScalingPolicyConfiguration: { TargetValue: 600, DisableScaleIn: false },
          },
        ],
      };
      await onEvent(withScaling(spec), clients());
      const registered = aas.commandCalls(RegisterScalableTargetCommand).map((c) => c.args[0].input);
      expect(registered).toEqual([{ ...id, MinCapacity: 2, MaxCapacity: 4 }]);
      expect(aas.commandCalls(PutScheduledActionCommand).map((c) => c.args[0].input.ScalableTargetAction)).toEqual([{ MaxCapacity: 2 }]);
      expect(aas.commandCalls(PutScalingPolicyCommand).map((c) => c.args[0].input.TargetTrackingScalingPolicyConfiguration)).toEqual([
        { TargetValue: 600, DisableScaleIn: false },
      ]);
    });

    it('puts the step alarm back whole, with only the actions naming this policy pointed at the new one', async () => {
      runs('ml.g4dn.xlarge');
      const topic = 'arn:aws:sns:eu-west-1:111122223333:oncall';
      const policyArn = (uuid: string, name: string) =>
        `arn:aws:autoscaling:eu-west-1:111122223333:scalingPolicy:${uuid}:resource/sagemaker/endpoint/MmeEndpoint-AbC123` +
        `/variant/AllTraffic:policyName/${name}`;
      const alarm = {
        AlarmName: 'S-StepAlarm-1',
        AlarmDescription: 'GPU memory high',
        ActionsEnabled: true,
        OKActions: [topic],
        AlarmActions: [topic, policyArn('old', 'Step'), policyArn('o', 'Other')],
        InsufficientDataActions: [],
        MetricName: 'GPUMemoryUtilization',
        Namespace: '/aws/sagemaker/Endpoints',
        Statistic: 'Maximum',
        Dimensions: [{ Name: 'EndpointName', Value: 'MmeEndpoint-AbC123' }],
        Period: 60,
        EvaluationPeriods: 3,
        DatapointsToAlarm: 2,
        Threshold: 80,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
      };
      const described = { ...alarm, AlarmArn: 'arn:aws:cloudwatch:eu-west-1:111122223333:alarm:S-StepAlarm-1', StateValue: 'OK' };
      cw.on(DescribeAlarmsCommand).resolves({ MetricAlarms: [described] } as never);
      await onEvent(rollback, clients());
      expect(cw.commandCalls(DescribeAlarmsCommand).map((c) => c.args[0].input)).toEqual([{ AlarmNames: ['S-StepAlarm-1'] }]);
      expect(cw.commandCalls(PutMetricAlarmCommand).map((c) => c.args[0].input)).toEqual([
        { ...alarm, AlarmActions: [topic, newArn, policyArn('o', 'Other')] },
      ]);
    });

    it('leaves alone a step alarm the stack does not have, or CloudWatch does not know', async () => {
      runs('ml.g4dn.xlarge');
      inStack({ [props.EndpointLogicalId]: 'UPDATE_COMPLETE', MmeInstanceCountTarget: 'UPDATE_COMPLETE' });
      expect(await onEvent(rollback, clients())).toEqual({ action: 'registered', resourceId: ours });
      expect(cw.calls()).toHaveLength(0);
      inStack({ [props.EndpointLogicalId]: 'UPDATE_COMPLETE', MmeInstanceCountTarget: 'UPDATE_COMPLETE', StepAlarm: 'UPDATE_COMPLETE' });
      for (const answer of [{}, { MetricAlarms: [] }]) {
        cw.on(DescribeAlarmsCommand).resolves(answer);
        expect(await onEvent(rollback, clients())).toEqual({ action: 'registered', resourceId: ours });
      }
      expect(cw.commandCalls(DescribeAlarmsCommand)).toHaveLength(2);
      expect(cw.commandCalls(PutMetricAlarmCommand)).toHaveLength(0);
    });

    it('puts an alarm without actions back without actions', async () => {
      runs('ml.g4dn.xlarge');
      cw.on(DescribeAlarmsCommand).resolves({ MetricAlarms: [{ AlarmName: 'S-StepAlarm-1', MetricName: 'GPUUtilization' }] });
      await onEvent(rollback, clients());
      expect(cw.commandCalls(PutMetricAlarmCommand).map((c) => c.args[0].input)).toEqual([
        { AlarmName: 'S-StepAlarm-1', MetricName: 'GPUUtilization', AlarmActions: [] },
      ]);
    });
  });
});

describe('what autoscaling refuses at synth', () => {
  it('refuses an instance type or variant name given as a CfnParameter, naming both and the way out', () => {
    const stack = new Stack(new App(), 'S');
    const type = new CfnParameter(stack, 'Type', { default: 'ml.g5.xlarge' });
    const variant = new CfnParameter(stack, 'Variant', { default: 'AllTraffic' });
    const endpoint = new TritonMultiModelEndpoint(stack, 'Mme', {
      instanceType: InstanceType.of(type.valueAsString),
      variantName: variant.valueAsString,
    });
    expect(() => endpoint.autoScaleInstanceCount({ maxCapacity: 2 })).toThrow(
      /instanceType is a token .*Give it at synth, e.g. from context \(-c\)\.[\s\S]*variantName is a token/,
    );
  });

  it('refuses a scaling policy attached to the scalable target from outside autoScaleInstanceCount()', () => {
    const stack = new Stack(new App(), 'S');
    const endpoint = new TritonMultiModelEndpoint(stack, 'Mme');
    const scaling = endpoint.autoScaleInstanceCount({ maxCapacity: 2 });
    new appscaling.TargetTrackingScalingPolicy(stack, 'Mine', {
      scalingTarget: scaling.scalableTarget,
      targetValue: 100,
      predefinedMetric: appscaling.PredefinedMetric.SAGEMAKER_VARIANT_INVOCATIONS_PER_INSTANCE,
    });
    expect(() => Template.fromStack(stack)).toThrow(
      'The scaling policy S/Mine/Resource is attached to the endpoint\'s scalable target from outside autoScaleInstanceCount()',
    );
  });

  it('accepts the policies the ScalableInstanceCount adds itself', () => {
    const stack = new Stack(new App(), 'S');
    const endpoint = new TritonMultiModelEndpoint(stack, 'Mme');
    endpoint.autoScaleInstanceCount({ maxCapacity: 2 }).scaleOnInvocations('Rps', { maxRequestsPerSecond: 10 });
    expect(() => Template.fromStack(stack)).not.toThrow();
  });
});
