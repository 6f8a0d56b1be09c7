// A CloudWatch dashboard and alarms for a GPU multi-model endpoint: GPU, memory and disk, loaded models and cache
// hits, model load/download/wait times, latency percentiles, errors.

import { Duration, Names } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import type { IMultiModelEndpoint } from './multi-model-endpoint-base';

/** Properties of a MultiModelEndpointDashboard. */
export interface MultiModelEndpointDashboardProps {
  /** The endpoint to watch. */
  readonly endpoint: IMultiModelEndpoint;
  /** @default - a name CloudFormation generates */
  readonly dashboardName?: string;
  /**
   * Where alarms send their ALARM and OK notifications.
   * @default - alarms without actions
   */
  readonly alarmTopic?: sns.ITopic;
  /**
   * Alarm when the p90 of ModelLoadingWaitTime (how long invocations waited for their model to load) exceeds this.
   * @default Duration.seconds(10)
   */
  readonly modelLoadingWaitTimeThreshold?: Duration;
  /**
   * Alarm when average GPU memory utilization exceeds this percentage: loads are about to fail with 507.
   * @default 90
   */
  readonly gpuMemoryUtilizationThreshold?: number;
  /**
   * Alarm when average disk utilization (the model cache) exceeds this percentage.
   * @default 90
   */
  readonly diskUtilizationThreshold?: number;
  /**
   * Alarm when the endpoint returns at least this many 5XX errors in one period.
   * @default 1
   */
  readonly invocation5XXErrorsThreshold?: number;
  /**
   * Alarm when 4XX and 5XX errors together exceed this percentage of invocations for three minutes in a row.
   * @default 5
   */
  readonly invocationErrorRateThreshold?: number;
  /**
   * The period of alarms and graphs.
   * @default Duration.minutes(5)
   */
  readonly period?: Duration;
}

/**
 * A dashboard of a multi-model endpoint's metrics and five alarms (5XX, error rate, GPU memory, disk, model-load wait).
 * The alarms have names derived from the construct path, so an endpoint can name them as deployment rollback alarms
 * without depending on them.
 */
export class MultiModelEndpointDashboard extends Construct {
  public readonly dashboard: cloudwatch.Dashboard;
  /** 5XX errors in a period. */
  public readonly invocation5XXErrorsAlarm: cloudwatch.Alarm;
  /** GPU memory nearly full. */
  public readonly gpuMemoryUtilizationAlarm: cloudwatch.Alarm;
  /** Disk (the model cache) nearly full. */
  public readonly diskUtilizationAlarm: cloudwatch.Alarm;
  /** Invocations waiting long for their models to load. */
  public readonly modelLoadingWaitTimeAlarm: cloudwatch.Alarm;
  /** 4XX and 5XX errors as a share of invocations, minute by minute: a deployment rollback alarm. */
  public readonly invocationErrorRateAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: MultiModelEndpointDashboardProps) {
    super(scope, id);
    const ep = props.endpoint;
    const period = props.period ?? Duration.minutes(5);
    const gpuMemory = props.gpuMemoryUtilizationThreshold ?? 90;
    const disk = props.diskUtilizationThreshold ?? 90;
    const errors5xx = props.invocation5XXErrorsThreshold ?? 1;
    const wait = props.modelLoadingWaitTimeThreshold ?? Duration.seconds(10);
    const errorRate = props.invocationErrorRateThreshold ?? 5;

    const problems: string[] = [];
    for (const [name, value] of [
      ['gpuMemoryUtilizationThreshold', gpuMemory],
      ['diskUtilizationThreshold', disk],
      ['invocationErrorRateThreshold', errorRate],
    ] as const) {
      if (!(value > 0 && value <= 100)) problems.push(`${name} must be a percentage in (0, 100], got ${value}.`);
    }
    if (!(errors5xx >= 1)) problems.push(`invocation5XXErrorsThreshold must be at least 1, got ${errors5xx}.`);
    if (problems.length > 0) {
      throw new Error(`Invalid MultiModelEndpointDashboard props (${this.node.path}):\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    }

    const o = { period };
    this.invocation5XXErrorsAlarm = new cloudwatch.Alarm(this, 'Invocation5XXErrors', {
      alarmName: this.alarmName('Invocation5XXErrors'),
      alarmDescription: `${errors5xx} or more 5XX errors in ${period.toHumanString()}: the container failed requests.`,
      metric: ep.metricInvocation5XXErrors(o),
      threshold: errors5xx,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.gpuMemoryUtilizationAlarm = new cloudwatch.Alarm(this, 'GpuMemoryUtilization', {
      alarmName: this.alarmName('GpuMemoryUtilization'),
      alarmDescription: `GPU memory above ${gpuMemory} %: new model loads will fail (HTTP 507) and evict others.`,
      metric: ep.metricGpuMemoryUtilization(o),
      threshold: gpuMemory,
      evaluationPeriods: 3,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.diskUtilizationAlarm = new cloudwatch.Alarm(this, 'DiskUtilization', {
      alarmName: this.alarmName('DiskUtilization'),
      alarmDescription: `Disk above ${disk} %: the model cache is full and archives are evicted and downloaded again.`,
      metric: ep.metricDiskUtilization(o),
      threshold: disk,
      evaluationPeriods: 3,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    // ModelLoadingWaitTime is reported in microseconds.
    this.modelLoadingWaitTimeAlarm = new cloudwatch.Alarm(this, 'ModelLoadingWaitTime', {
      alarmName: this.alarmName('ModelLoadingWaitTime'),
      alarmDescription: `p90 of the wait for model loads above ${wait.toHumanString()}: cold starts hurt latency.`,
      metric: ep.metricModelLoadingWaitTime({ ...o, statistic: 'p90' }),
      threshold: wait.toMilliseconds() * 1000,
      evaluationPeriods: 3,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    // SageMaker's invocation metrics have 1-minute granularity; three breaching minutes fit in the default 10-minute bake
    // (DEFAULT_BAKE) and a single bad minute does not roll an update back. A cold cache after the fleet is replaced
    // makes invocations wait (ModelLoadingWaitTime), it does not make them fail, so this alarm ignores it.
    const minute = { period: Duration.minutes(1) };
    this.invocationErrorRateAlarm = new cloudwatch.Alarm(this, 'InvocationErrorRate', {
      alarmName: this.alarmName('InvocationErrorRate'),
      alarmDescription: `4XX and 5XX errors above ${errorRate} % of invocations for 3 minutes: a deployment rolls back on it.`,
      metric: new cloudwatch.MathExpression({
        expression: '100 * (e4 + e5) / MAX([e4 + e5, invocations])',
        usingMetrics: {
          e4: ep.metricInvocation4XXErrors(minute),
          e5: ep.metricInvocation5XXErrors(minute),
          invocations: ep.metricInvocations(minute),
        },
        label: 'Error rate (%)',
        period: minute.period,
      }),
      threshold: errorRate,
      evaluationPeriods: 3,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    if (props.alarmTopic) {
      const action = new actions.SnsAction(props.alarmTopic);
      for (const alarm of this.alarms) {
        alarm.addAlarmAction(action);
        alarm.addOkAction(action);
      }
    }

    const percentile = (stat: string) => ep.metricModelLatency({ ...o, statistic: stat, label: `ModelLatency ${stat}` });
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { dashboardName: props.dashboardName });
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'GPU, memory and disk (%), CPU (% of one vCPU)',
        left: [ep.metricGpuUtilization(o), ep.metricGpuMemoryUtilization(o), ep.metricMemoryUtilization(o), ep.metricDiskUtilization(o)],
        leftYAxis: { min: 0, max: 100, label: '%', showUnits: false },
        leftAnnotations: [{ value: gpuMemory, label: 'GPU memory alarm' }],
        // CPUUtilization is a percentage of one vCPU, so it reaches 100 × vCPUs: its own axis keeps the others readable.
        right: [ep.metricCpuUtilization(o)],
        rightYAxis: { min: 0, max: cpuMax(ep), label: 'CPU % (100 per vCPU)', showUnits: false },
        width: 12,
      }),
      new cloudwatch.GraphWidget({
        title: 'Loaded models and cache-hit ratio',
        left: [ep.metricLoadedModelCount(o)],
        right: [ep.metricModelCacheHit({ ...o, label: 'ModelCacheHit (ratio)' })],
        width: 12,
      }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Model load, download and wait times (µs)',
        left: [
          ep.metricModelLoadingWaitTime({ ...o, statistic: 'p90', label: 'ModelLoadingWaitTime p90' }),
          ep.metricModelLoadingTime(o),
          ep.metricModelDownloadingTime(o),
          ep.metricModelUnloadingTime(o),
        ],
        width: 12,
      }),
      new cloudwatch.GraphWidget({
        title: 'Latency (µs)',
        left: [percentile('p50'), percentile('p90'), percentile('p99'), ep.metricOverheadLatency(o)],
        width: 12,
      }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Invocations and errors',
        left: [ep.metricInvocations(o), ep.metricInvocationsPerInstance(o)],
        right: [ep.metricInvocation4XXErrors(o), ep.metricInvocation5XXErrors(o)],
        width: 12,
      }),
      new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 12 }),
    );
  }

  /**
   * The alarms that roll a deployment back: 5XX errors and the error rate, failures a bad update causes at once. Left
   * out on purpose: ModelLoadingWaitTime, which rises after every fleet replacement (the new instances start with an
   * empty model cache) and whose 15-minute breach outlasts the bake; GPU memory and disk, which an MME fills by design
   * as it caches models. SageMaker watches these alarms only during the bakes of a deployment
   * (https://docs.aws.amazon.com/sagemaker/latest/dg/deployment-guardrails-configuration.html).
   */
  public get deploymentAlarms(): cloudwatch.Alarm[] {
    return [this.invocation5XXErrorsAlarm, this.invocationErrorRateAlarm];
  }

  /**
   * The names of `deploymentAlarms` as plain strings. An alarm's `alarmName` is a reference to the alarm; an endpoint
   * naming its own rollback alarms through it would depend on alarms that depend on the endpoint's name (a cycle).
   */
  public get deploymentAlarmNames(): string[] {
    return [this.alarmName('Invocation5XXErrors'), this.alarmName('InvocationErrorRate')];
  }

  /** The five alarms. */
  public get alarms(): cloudwatch.Alarm[] {
    return [
      this.invocation5XXErrorsAlarm,
      this.invocationErrorRateAlarm,
      this.gpuMemoryUtilizationAlarm,
      this.diskUtilizationAlarm,
      this.modelLoadingWaitTimeAlarm,
    ];
  }

  private alarmName(suffix: string): string {
    return `${Names.uniqueResourceName(this, { maxLength: 200, separator: '-' })}-${suffix}`;
  }
}

/** The top of the CPU axis: 100 % per vCPU of the instance type, when the endpoint knows it. */
function cpuMax(endpoint: IMultiModelEndpoint): number | undefined {
  const vCpus = endpoint.instanceType?.hardware?.vCpus;
  return vCpus ? 100 * vCpus : undefined;
}
