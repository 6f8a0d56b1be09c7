// What an operator asks of a live multi-model endpoint: is it up, on what, how does it scale, and how did its model
// cache and GPU behave over the last hour (there are no per-model metrics:
// https://docs.aws.amazon.com/sagemaker/latest/dg/multi-model-endpoint-cloudwatch-metrics.html).

import type { ApplicationAutoScalingClient } from '@aws-sdk/client-application-auto-scaling';
import type { CloudWatchClient, MetricDataQuery } from '@aws-sdk/client-cloudwatch';
import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import type { SageMakerClient } from '@aws-sdk/client-sagemaker';
import { loadAutoScaling, loadCloudWatch } from './aws-clients';
import { explainAwsError } from './aws-errors';
import { ResolvedEndpoint, resolveEndpoint } from './endpoint';
import { recentModelFailures } from './endpoint-logs';
import type { ModelFailures } from '../logs/failure-summary';

export interface ScalingPolicySummary {
  readonly name: string;
  readonly type: string;
  readonly targetValue?: number;
  /** The tracked metric: a predefined type, or `Namespace/MetricName (Statistic)`. */
  readonly metric?: string;
  readonly scaleInCooldownSeconds?: number;
  readonly scaleOutCooldownSeconds?: number;
}

export interface ScalingSummary {
  readonly resourceId: string;
  readonly minCapacity?: number;
  readonly maxCapacity?: number;
  readonly policies: readonly ScalingPolicySummary[];
}

export interface MetricSummary {
  readonly name: string;
  readonly namespace: string;
  readonly statistic: string;
  readonly unit: 'count' | 'percent' | 'microseconds' | 'ratio';
  /** Oldest first, one point per minute with data. */
  readonly points: readonly { readonly timestamp: Date; readonly value: number }[];
  readonly latest?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly average?: number;
}

export interface EndpointStatusReport {
  readonly endpoint: ResolvedEndpoint;
  /** Undefined when the variant has no scalable target (fixed instance count). */
  readonly scaling?: ScalingSummary;
  readonly metrics: readonly MetricSummary[];
  readonly window: { readonly start: Date; readonly end: Date };
  /** The window's failures per TargetModel, from the container logs; undefined when they could not be read. */
  readonly failures?: readonly ModelFailures[];
  /** Parts that could not be read (e.g. a missing permission), each a sentence; the rest is still reported. */
  readonly notes: readonly string[];
}

interface MetricSpec {
  readonly id: string;
  readonly name: string;
  readonly namespaces: readonly string[];
  readonly statistic: string;
  readonly unit: MetricSummary['unit'];
}

const MODEL_METRICS = 'AWS/SageMaker';
const INSTANCE_METRICS = '/aws/sagemaker/Endpoints';

/**
 * The metrics `status` shows. LoadedModelCount is documented among the MME instance metrics but its namespace is not
 * stated unambiguously for GPU endpoints, so both namespaces are queried and the one with data is shown.
 * ModelCacheHit's Average is the share of invocations whose model was already loaded.
 */
export const STATUS_METRICS: readonly MetricSpec[] = [
  { id: 'loadedModelCount', name: 'LoadedModelCount', namespaces: [INSTANCE_METRICS, MODEL_METRICS], statistic: 'Average', unit: 'count' },
  { id: 'gpuUtilization', name: 'GPUUtilization', namespaces: [INSTANCE_METRICS], statistic: 'Average', unit: 'percent' },
  { id: 'gpuMemoryUtilization', name: 'GPUMemoryUtilization', namespaces: [INSTANCE_METRICS], statistic: 'Average', unit: 'percent' },
  { id: 'modelCacheHit', name: 'ModelCacheHit', namespaces: [MODEL_METRICS], statistic: 'Average', unit: 'ratio' },
  { id: 'modelLoadingWaitTime', name: 'ModelLoadingWaitTime', namespaces: [MODEL_METRICS], statistic: 'Average', unit: 'microseconds' },
];

export interface StatusClients {
  readonly sageMaker: SageMakerClient;
  readonly autoScaling: ApplicationAutoScalingClient;
  readonly cloudWatch: CloudWatchClient;
  /** Reads the failures of the window from the container logs. @default failures are not read */
  readonly logs?: CloudWatchLogsClient;
}

/**
 * The SageMaker client, and the others made only once the endpoint is known to exist: a misspelt or absent endpoint
 * is reported before three more SDK packages are loaded (a third of the command's start-up).
 */
export interface LazyStatusClients {
  readonly sageMaker: SageMakerClient;
  readonly others: () => Promise<Omit<StatusClients, 'sageMaker'>>;
}

export async function endpointStatus(
  given: StatusClients | LazyStatusClients,
  endpointName: string,
  options: { variant?: string; now?: Date; region?: string; profile?: string } = {},
): Promise<EndpointStatusReport> {
  const endpoint = await resolveEndpoint(given.sageMaker, endpointName, options);
  const clients: StatusClients = 'others' in given ? { sageMaker: given.sageMaker, ...(await given.others()) } : given;
  const end = floorToMinute(options.now ?? new Date());
  const start = new Date(end.getTime() - 60 * 60 * 1000);
  const notes: string[] = [];
  const resource = `endpoint ${endpointName}`;
  const [scaling, metrics, failures] = await Promise.all([
    scalingSummary(clients.autoScaling, endpoint, options).catch((err) => {
      const permission = 'application-autoscaling:DescribeScalableTargets';
      notes.push(`Auto scaling not shown: ${explainAwsError(err, { ...options, permission, resource }).message}`);
      return undefined;
    }),
    metricSummaries(clients.cloudWatch, endpoint, start, end).catch((err) => {
      const permission = 'cloudwatch:GetMetricData';
      notes.push(`Metrics not shown: ${explainAwsError(err, { ...options, permission, resource }).message}`);
      return [] as MetricSummary[];
    }),
    clients.logs
      ? recentModelFailures(
          clients.logs,
          { endpointName, start, end, variant: endpoint.variantName },
          { ...options, sageMaker: clients.sageMaker },
        ).catch((err: Error) => {
          notes.push(`Failures not shown: ${err.message}`);
          return undefined;
        })
      : undefined,
  ]);
  return { endpoint, ...(scaling ? { scaling } : {}), metrics, window: { start, end }, ...(failures ? { failures } : {}), notes };
}

export function scalingResourceId(endpointName: string, variantName: string): string {
  return `endpoint/${endpointName}/variant/${variantName}`;
}

async function scalingSummary(
  client: ApplicationAutoScalingClient,
  endpoint: ResolvedEndpoint,
  options: { region?: string; profile?: string },
): Promise<ScalingSummary | undefined> {
  const { DescribeScalableTargetsCommand, DescribeScalingPoliciesCommand } = await loadAutoScaling();
  const resourceId = scalingResourceId(endpoint.endpointName, endpoint.variantName);
  const scope = { ServiceNamespace: 'sagemaker' as const, ScalableDimension: 'sagemaker:variant:DesiredInstanceCount' as const };
  const targets = await client.send(new DescribeScalableTargetsCommand({ ...scope, ResourceIds: [resourceId] }));
  const target = targets.ScalableTargets?.[0];
  if (!target) return undefined;
  let policies;
  try {
    policies = await client.send(new DescribeScalingPoliciesCommand({ ...scope, ResourceId: resourceId }));
  } catch (err) {
    throw explainAwsError(err, { ...options, permission: 'application-autoscaling:DescribeScalingPolicies', resource: resourceId });
  }
  return {
    resourceId,
    ...(target.MinCapacity !== undefined ? { minCapacity: target.MinCapacity } : {}),
    ...(target.MaxCapacity !== undefined ? { maxCapacity: target.MaxCapacity } : {}),
    policies: (policies.ScalingPolicies ?? []).map((policy) => {
      const tracking = policy.TargetTrackingScalingPolicyConfiguration;
      const custom = tracking?.CustomizedMetricSpecification;
      const customName = custom ? `${custom.Namespace}/${custom.MetricName} (${custom.Statistic})` : undefined;
      const metric = tracking?.PredefinedMetricSpecification?.PredefinedMetricType ?? customName;
      return {
        name: policy.PolicyName ?? '',
        type: policy.PolicyType ?? '',
        ...(tracking?.TargetValue !== undefined ? { targetValue: tracking.TargetValue } : {}),
        ...(metric ? { metric } : {}),
        ...(tracking?.ScaleInCooldown !== undefined ? { scaleInCooldownSeconds: tracking.ScaleInCooldown } : {}),
        ...(tracking?.ScaleOutCooldown !== undefined ? { scaleOutCooldownSeconds: tracking.ScaleOutCooldown } : {}),
      };
    }),
  };
}

/** The GetMetricData queries for one endpoint variant over a window, one per metric and namespace. */
export function statusMetricQueries(endpointName: string, variantName: string): MetricDataQuery[] {
  return STATUS_METRICS.flatMap((spec) =>
    spec.namespaces.map((namespace, index) => ({
      Id: `${spec.id}${index}`,
      MetricStat: {
        Metric: {
          Namespace: namespace,
          MetricName: spec.name,
          Dimensions: [
            { Name: 'EndpointName', Value: endpointName },
            { Name: 'VariantName', Value: variantName },
          ],
        },
        Period: 60,
        Stat: spec.statistic,
      },
      ReturnData: true,
    })),
  );
}

async function metricSummaries(client: CloudWatchClient, endpoint: ResolvedEndpoint, start: Date, end: Date): Promise<MetricSummary[]> {
  const { paginateGetMetricData } = await loadCloudWatch();
  const values = new Map<string, { timestamp: Date; value: number }[]>();
  const queries = statusMetricQueries(endpoint.endpointName, endpoint.variantName);
  const request = { MetricDataQueries: queries, StartTime: start, EndTime: end, ScanBy: 'TimestampAscending' as const };
  for await (const page of paginateGetMetricData({ client }, request)) {
    for (const result of page.MetricDataResults ?? []) {
      const points = values.get(result.Id ?? '') ?? [];
      (result.Timestamps ?? []).forEach((timestamp, i) => points.push({ timestamp, value: result.Values?.[i] ?? NaN }));
      values.set(result.Id ?? '', points);
    }
  }
  return STATUS_METRICS.map((spec) => {
    const index = Math.max(0, spec.namespaces.findIndex((_, i) => (values.get(`${spec.id}${i}`) ?? []).length > 0));
    const points = (values.get(`${spec.id}${index}`) ?? []).sort((a, b) => a.timestamp.getTime() - b.timestamp.getTime());
    const numbers = points.map((p) => p.value);
    return {
      name: spec.name,
      namespace: spec.namespaces[index]!,
      statistic: spec.statistic,
      unit: spec.unit,
      points,
      ...(numbers.length > 0
        ? {
            latest: numbers[numbers.length - 1]!,
            minimum: Math.min(...numbers),
            maximum: Math.max(...numbers),
            average: numbers.reduce((a, b) => a + b, 0) / numbers.length,
          }
        : {}),
    };
  });
}

function floorToMinute(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 60_000) * 60_000);
}
