import { App, Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { MultiModelEndpointDashboard, TritonMultiModelEndpoint } from '../../constructs';

describe('multi-model endpoint dashboard with default thresholds', () => {
  const stack = new Stack(new App(), 'S');
  const endpoint = new TritonMultiModelEndpoint(stack, 'Mme', { initialInstanceCount: 2 });
  const dashboard = endpoint.addDashboard('Dash');
  const template = Template.fromStack(stack);
  const alarm = (metricName: string) => {
    const found = Object.values(template.findResources('AWS::CloudWatch::Alarm', { Properties: { MetricName: metricName } }));
    expect(found).toHaveLength(1);
    return (found[0] as { Properties: Record<string, unknown> }).Properties;
  };

  it('alarms on one 5XX error in 5 minutes', () => {
    expect(alarm('Invocation5XXErrors')).toMatchObject({
      Namespace: 'AWS/SageMaker',
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      EvaluationPeriods: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
  });

  it('alarms on GPU memory and disk above 90 % for 15 minutes', () => {
    for (const name of ['GPUMemoryUtilization', 'DiskUtilization']) {
      expect(alarm(name)).toMatchObject({
        Namespace: '/aws/sagemaker/Endpoints',
        Statistic: 'Average',
        Threshold: 90,
        EvaluationPeriods: 3,
        ComparisonOperator: 'GreaterThanThreshold',
      });
    }
  });

  it('alarms on a p90 ModelLoadingWaitTime above 10 s, in microseconds', () => {
    expect(alarm('ModelLoadingWaitTime')).toMatchObject({ ExtendedStatistic: 'p90', Threshold: 10_000_000, Namespace: 'AWS/SageMaker' });
  });

  it('alarms on 4XX and 5XX errors above 5 % of invocations for 3 minutes in a row (a deployment rollback alarm)', () => {
    const [rate] = Object.values(template.findResources('AWS::CloudWatch::Alarm')).filter(
      (r) => (r as { Properties: { Metrics?: unknown } }).Properties.Metrics,
    ) as Array<{ Properties: { Metrics: Array<{ Id: string; Expression?: string; MetricStat?: { Period: number } }> } }>;
    expect(rate!.Properties).toMatchObject({ Threshold: 5, EvaluationPeriods: 3, ComparisonOperator: 'GreaterThanThreshold' });
    const metrics = rate!.Properties.Metrics;
    expect(metrics.find((m) => m.Expression)?.Expression).toBe('100 * (e4 + e5) / MAX([e4 + e5, invocations])');
    expect(metrics.filter((m) => m.MetricStat).map((m) => m.MetricStat!.Period)).toEqual([60, 60, 60]);
    expect(dashboard.deploymentAlarms).toEqual([dashboard.invocation5XXErrorsAlarm, dashboard.invocationErrorRateAlarm]);
  });

  it('has no alarm actions without a topic', () => {
    expect(dashboard.alarms).toHaveLength(5);
    template.allResourcesProperties('AWS::CloudWatch::Alarm', { AlarmActions: Match.absent() });
  });

  it('graphs GPU/memory/disk, loaded models, cache hits, load times, latency percentiles and errors', () => {
    const [resource] = Object.values(template.findResources('AWS::CloudWatch::Dashboard')) as Array<{
      Properties: { DashboardBody: unknown };
    }>;
    const body = JSON.stringify(resource.Properties.DashboardBody);
    for (const name of [
      'GPUUtilization',
      'GPUMemoryUtilization',
      'CPUUtilization',
      'MemoryUtilization',
      'DiskUtilization',
      'LoadedModelCount',
      'ModelCacheHit',
      'ModelLoadingWaitTime',
      'ModelLoadingTime',
      'ModelDownloadingTime',
      'ModelUnloadingTime',
      'OverheadLatency',
      'Invocations',
      'InvocationsPerInstance',
      'Invocation4XXErrors',
      'Invocation5XXErrors',
    ]) {
      expect(body).toContain(`\\"${name}\\"`);
    }
    for (const stat of ['p50', 'p90', 'p99']) expect(body).toContain(`ModelLatency ${stat}`);
  });

  it('plots CPU (up to 100 × vCPUs %) on its own right axis, the percentages on a 0–100 left axis', () => {
    const [resource] = Object.values(template.findResources('AWS::CloudWatch::Dashboard')) as Array<{
      Properties: { DashboardBody: unknown };
    }>;
    const parts = (resource.Properties.DashboardBody as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
    const body = JSON.parse(parts.map((p) => (typeof p === 'string' ? p : 'TOKEN')).join('')) as {
      widgets: Array<{
        properties: { title: string; metrics: unknown[][]; yAxis: Record<string, { min: number; max?: number; label: string }> };
      }>;
    };
    const utilization = body.widgets[0]!.properties;
    expect(utilization.yAxis).toEqual({
      left: { min: 0, max: 100, label: '%', showUnits: false },
      right: { min: 0, max: 400, label: 'CPU % (100 per vCPU)', showUnits: false }, // ml.g4dn.xlarge: 4 vCPUs
    });
    const onRight = utilization.metrics.filter((m) => JSON.stringify(m.at(-1)).includes('"yAxis":"right"'));
    expect(onRight.map((m) => m[1])).toEqual(['CPUUtilization']);
  });
});

describe('multi-model endpoint dashboard options', () => {
  it('notifies a topic on ALARM and OK and uses the given thresholds and name', () => {
    const stack = new Stack(new App(), 'S');
    const endpoint = TritonMultiModelEndpoint.fromEndpointName(stack, 'Existing', 'prod-mme');
    const topic = new sns.Topic(stack, 'Topic');
    new MultiModelEndpointDashboard(stack, 'Dash', {
      endpoint,
      alarmTopic: topic,
      dashboardName: 'prod-mme',
      gpuMemoryUtilizationThreshold: 80,
      diskUtilizationThreshold: 70,
      invocation5XXErrorsThreshold: 5,
      modelLoadingWaitTimeThreshold: Duration.seconds(2),
      period: Duration.minutes(1),
    });
    const template = Template.fromStack(stack);
    template.allResourcesProperties('AWS::CloudWatch::Alarm', {
      AlarmActions: [{ Ref: Match.stringLikeRegexp('^Topic') }],
      OKActions: [{ Ref: Match.stringLikeRegexp('^Topic') }],
    });
    // Every single-metric alarm uses the given period (the error-rate alarm is minute by minute by design).
    for (const alarm of Object.values(template.findResources('AWS::CloudWatch::Alarm', { Properties: { MetricName: Match.anyValue() } }))) {
      expect((alarm as { Properties: unknown }).Properties).toMatchObject({
        Period: 60,
        Dimensions: expect.arrayContaining([{ Name: 'EndpointName', Value: 'prod-mme' }]),
      });
    }
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { Metrics: Match.anyValue(), Threshold: 5 });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'GPUMemoryUtilization', Threshold: 80 });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'DiskUtilization', Threshold: 70 });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'Invocation5XXErrors', Threshold: 5 });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'ModelLoadingWaitTime', Threshold: 2_000_000 });
    template.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: 'prod-mme' });
  });

  it('rejects thresholds that are not percentages or counts', () => {
    const stack = new Stack(new App(), 'S');
    const endpoint = TritonMultiModelEndpoint.fromEndpointName(stack, 'Existing', 'prod-mme');
    expect(
      () =>
        new MultiModelEndpointDashboard(stack, 'Dash', {
          endpoint,
          gpuMemoryUtilizationThreshold: 120,
          diskUtilizationThreshold: 0,
          invocation5XXErrorsThreshold: 0,
        }),
    ).toThrow(
      new RegExp(
        /gpuMemoryUtilizationThreshold must be a percentage in \(0, 100\], got 120[\s\S]*/.source +
          /diskUtilizationThreshold .* got 0[\s\S]*invocation5XXErrorsThreshold must be at least 1/.source,
      ),
    );
  });
});
