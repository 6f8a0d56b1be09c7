import { App, Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as appscaling from 'aws-cdk-lib/aws-applicationautoscaling';
import { TritonMultiModelEndpoint, TritonMultiModelEndpointProps } from '../../constructs';

function endpointIn(props: TritonMultiModelEndpointProps = {}) {
  const stack = new Stack(new App(), 'S');
  return { stack, endpoint: new TritonMultiModelEndpoint(stack, 'Mme', props) };
}

function policies(template: Template) {
  return Object.values(template.findResources('AWS::ApplicationAutoScaling::ScalingPolicy')) as Array<{
    Properties: { TargetTrackingScalingPolicyConfiguration: Record<string, unknown> };
    DependsOn?: string[];
  }>;
}

describe('autoscaling on GPU utilization (seed 004)', () => {
  const { stack, endpoint } = endpointIn();
  endpoint.autoScaleInstanceCount({ minCapacity: 1, maxCapacity: 5 }).scaleOnGpuUtilization('Gpu');
  const template = Template.fromStack(stack);
  const endpointId = Object.keys(template.findResources('AWS::SageMaker::Endpoint'))[0];
  const guardAfterEndpoint = Object.entries(template.findResources('Custom::MmeDeployScalingGuard')).find(([, guard]) =>
    (guard.DependsOn as string[] | undefined)?.includes(endpointId!),
  )?.[0];

  it('registers the variant as a 1..5 scalable target through the SageMaker service-linked role', () => {
    template.hasResource('AWS::ApplicationAutoScaling::ScalableTarget', {
      Properties: {
        MinCapacity: 1,
        MaxCapacity: 5,
        ServiceNamespace: 'sagemaker',
        ScalableDimension: 'sagemaker:variant:DesiredInstanceCount',
        ResourceId: { 'Fn::Join': ['', ['endpoint/', { 'Fn::GetAtt': [endpointId, 'EndpointName'] }, '/variant/AllTraffic']] },
        RoleARN: {
          'Fn::Join': [
            '',
            [
              'arn:',
              { Ref: 'AWS::Partition' },
              ':iam::',
              { Ref: 'AWS::AccountId' },
              ':role/aws-service-role/sagemaker.application-autoscaling.amazonaws.com/' +
                'AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint',
            ],
          ],
        },
      },
      // after the endpoint, and after the guard that registers the variant again on a rollback
      DependsOn: [endpointId, guardAfterEndpoint],
    });
  });

  it('tracks average GPUUtilization at 60 % with 600 s scale-in and 200 s scale-out cooldowns', () => {
    const [policy] = policies(template);
    expect(policy.Properties.TargetTrackingScalingPolicyConfiguration).toEqual({
      CustomizedMetricSpecification: {
        MetricName: 'GPUUtilization',
        Namespace: '/aws/sagemaker/Endpoints',
        Dimensions: [
          { Name: 'EndpointName', Value: { 'Fn::GetAtt': [endpointId, 'EndpointName'] } },
          { Name: 'VariantName', Value: 'AllTraffic' },
        ],
        Statistic: 'Average',
        Unit: 'Percent',
      },
      TargetValue: 60,
      ScaleInCooldown: 600,
      ScaleOutCooldown: 200,
    });
    expect(policy.DependsOn).toContain(endpointId);
  });

  it('keeps the scaled instance count across endpoint updates', () => {
    template.hasResourceProperties('AWS::SageMaker::Endpoint', { RetainAllVariantProperties: true });
  });
});

describe('other scaling policies', () => {
  it('tracks GPU memory at 75 % by default and honours a custom target and cooldowns', () => {
    const { stack, endpoint } = endpointIn({ initialInstanceCount: 2 });
    const scaling = endpoint.autoScaleInstanceCount({ minCapacity: 2, maxCapacity: 4 });
    scaling.scaleOnGpuMemoryUtilization('Memory');
    scaling.scaleOnGpuUtilization('Gpu', {
      targetUtilizationPercent: 70,
      scaleInCooldown: Duration.minutes(15),
      scaleOutCooldown: Duration.minutes(1),
      disableScaleIn: true,
    });
    const configs = policies(Template.fromStack(stack)).map((p) => p.Properties.TargetTrackingScalingPolicyConfiguration);
    expect(configs).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          TargetValue: 75,
          CustomizedMetricSpecification: expect.objectContaining({ MetricName: 'GPUMemoryUtilization' }),
          ScaleInCooldown: 600,
          ScaleOutCooldown: 200,
        }),
        expect.objectContaining({ TargetValue: 70, ScaleInCooldown: 900, ScaleOutCooldown: 60, DisableScaleIn: true }),
      ]),
    );
  });

  it('tracks invocations per instance at safetyFactor × max RPS × 60', () => {
    const { stack, endpoint } = endpointIn();
    endpoint.autoScaleInstanceCount({ maxCapacity: 3 }).scaleOnInvocations('Rps', { maxRequestsPerSecond: 10 });
    Template.fromStack(stack).hasResourceProperties('AWS::ApplicationAutoScaling::ScalingPolicy', {
      TargetTrackingScalingPolicyConfiguration: {
        PredefinedMetricSpecification: { PredefinedMetricType: 'SageMakerVariantInvocationsPerInstance' },
        TargetValue: 300,
        CustomizedMetricSpecification: Match.absent(),
      },
    });
  });
});

describe('policies like ecs.ScalableTaskCount', () => {
  const { stack, endpoint } = endpointIn({ initialInstanceCount: 2 });
  const scaling = endpoint.autoScaleInstanceCount({ minCapacity: 2, maxCapacity: 8 });
  const gpu = scaling.scaleOnGpuUtilization('Gpu');
  const latency = scaling.scaleToTrackMetric('Latency', { metric: endpoint.metricModelLatency(), targetValue: 200_000 });
  const backlog = scaling.scaleOnMetric('WaitSteps', {
    metric: endpoint.metricModelLoadingWaitTime({ statistic: 'p90' }),
    scalingSteps: [
      { upper: 1_000_000, change: -1 },
      { lower: 5_000_000, change: +1 },
      { lower: 20_000_000, change: +2 },
    ],
    adjustmentType: appscaling.AdjustmentType.CHANGE_IN_CAPACITY,
  });
  scaling.scaleOnSchedule('NightlyLow', { schedule: appscaling.Schedule.cron({ hour: '22', minute: '0' }), maxCapacity: 2 });
  const template = Template.fromStack(stack);

  it('returns the policy each method creates', () => {
    expect(gpu).toBeInstanceOf(appscaling.TargetTrackingScalingPolicy);
    expect(latency).toBeInstanceOf(appscaling.TargetTrackingScalingPolicy);
    expect(backlog).toBeInstanceOf(appscaling.StepScalingPolicy);
    expect(stack.resolve(gpu.scalingPolicyArn)).toEqual({ Ref: expect.stringMatching(/Gpu/) });
    expect(backlog.lowerAlarm).toBeDefined();
    expect(backlog.upperAlarm).toBeDefined();
  });

  it('adds any number of policies: two target-tracking and two step-scaling policies with their alarms', () => {
    const types = Object.values(template.findResources('AWS::ApplicationAutoScaling::ScalingPolicy')).map(
      (p) => (p as { Properties: { PolicyType: string } }).Properties.PolicyType,
    );
    expect(types.sort()).toEqual(['StepScaling', 'StepScaling', 'TargetTrackingScaling', 'TargetTrackingScaling']);
    template.resourceCountIs('AWS::CloudWatch::Alarm', 2);
    template.hasResourceProperties('AWS::ApplicationAutoScaling::ScalingPolicy', {
      TargetTrackingScalingPolicyConfiguration: {
        TargetValue: 200_000,
        CustomizedMetricSpecification: Match.objectLike({ MetricName: 'ModelLatency', Namespace: 'AWS/SageMaker' }),
      },
    });
  });

  it('puts the schedule on the scalable target', () => {
    template.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', {
      ScheduledActions: [{ ScheduledActionName: 'NightlyLow', Schedule: 'cron(0 22 * * ? *)', ScalableTargetAction: { MaxCapacity: 2 } }],
    });
  });
});

describe('autoscaling synth-time errors', () => {
  it('rejects a range that excludes the initial count and a max below min, in one error', () => {
    const { endpoint } = endpointIn({ initialInstanceCount: 1 });
    expect(() => endpoint.autoScaleInstanceCount({ minCapacity: 3, maxCapacity: 2 })).toThrow(
      new RegExp(
        /maxCapacity must be a whole number of at least minCapacity \(3\), got 2[\s\S]*/.source +
          /initialInstanceCount \(1\) must lie between minCapacity \(3\) and maxCapacity \(2\)/.source,
      ),
    );
  });

  it('rejects a minimum of 0 and a second call', () => {
    const { endpoint } = endpointIn();
    expect(() => endpoint.autoScaleInstanceCount({ minCapacity: 0, maxCapacity: 2 })).toThrow(
      /minCapacity must be a whole number of at least 1, got 0/,
    );
    endpoint.autoScaleInstanceCount({ maxCapacity: 2 });
    expect(() => endpoint.autoScaleInstanceCount({ maxCapacity: 2 })).toThrow(/already been called/);
  });

  it('rejects utilization targets outside (0, 100] and bad invocation settings', () => {
    const { endpoint } = endpointIn();
    const scaling = endpoint.autoScaleInstanceCount({ maxCapacity: 2 });
    expect(() => scaling.scaleOnGpuUtilization('A', { targetUtilizationPercent: 0 })).toThrow(
      /targetUtilizationPercent must be in \(0, 100\], got 0/,
    );
    expect(() => scaling.scaleOnGpuMemoryUtilization('B', { targetUtilizationPercent: 150 })).toThrow(/got 150/);
    expect(() => scaling.scaleOnInvocations('C', { maxRequestsPerSecond: 0, safetyFactor: 2 })).toThrow(
      /maxRequestsPerSecond must be more than 0, got 0[\s\S]*safetyFactor must be in \(0, 1\], got 2/,
    );
  });
});
