// `mme-deploy status --endpoint E`: the endpoint, its instances, its auto scaling and the last hour of the MME
// metrics that explain cold starts (model cache hits, loading wait time, loaded models, GPU use).

import { createAutoScalingClient, createCloudWatchClient, createCloudWatchLogsClient, createSageMakerClient } from '../aws/aws-clients';
import { endpointStatus, type EndpointStatusReport, type MetricSummary } from '../aws/endpoint-status';
import { MmeError } from '../errors';
import { shellCommand } from '../shell-quote';
import { AwsCommandOptions, connectionOf } from './aws-options';
import { CliIo, ExitCode, note as noteOn } from './io';
import { toJson } from './json';
import { formatFailureSummary } from './logs';

export interface StatusOptions extends AwsCommandOptions {
  readonly endpoint?: string;
  readonly variant?: string;
  /** The end of the one-hour window (tests). @default now */
  readonly now?: Date;
}

export async function runStatus(options: StatusOptions, io: CliIo): Promise<number> {
  if (!options.endpoint) throw new MmeError('USAGE', 'Which endpoint? Give --endpoint NAME.');
  const connection = connectionOf(options);
  const sageMaker = await createSageMakerClient(connection);
  // The other three clients (and their SDK packages) only once DescribeEndpoint found the endpoint.
  const others: { destroy(): void }[] = [];
  const makeOthers = async () => {
    const autoScaling = await createAutoScalingClient(connection);
    others.push(autoScaling);
    const cloudWatch = await createCloudWatchClient(connection);
    others.push(cloudWatch);
    const logs = await createCloudWatchLogsClient(connection);
    others.push(logs);
    return { autoScaling, cloudWatch, logs };
  };
  try {
    const report = await endpointStatus({ sageMaker, others: makeOthers }, options.endpoint, {
      ...connection,
      ...(options.variant ? { variant: options.variant } : {}),
      ...(options.now ? { now: options.now } : {}),
    });
    io.stdout(options.json ? toJson(report) : formatStatus(report));
    for (const note of options.json ? [] : report.notes) noteOn(io, `note: ${note}\n`);
    return ExitCode.Ok;
  } finally {
    sageMaker.destroy();
    for (const client of others) client.destroy();
  }
}

export function formatStatus(report: EndpointStatusReport): string {
  const { endpoint, scaling } = report;
  const rows: [string, string][] = [];
  const status = endpoint.failureReason ? `${endpoint.status} (${endpoint.failureReason})` : (endpoint.status ?? 'unknown');
  rows.push(['Endpoint', `${endpoint.endpointName}  ${status}`]);
  rows.push(['Model', `${endpoint.modelName}  MultiModel, cache ${endpoint.modelCacheSetting ?? 'Enabled'}`]);
  rows.push(['Models in', `s3://${endpoint.location.bucket}/${endpoint.location.prefix}`]);
  if (endpoint.image) rows.push(['Image', endpoint.image]);
  for (const v of endpoint.variants) {
    const scalingTo =
      v.desiredInstanceCount !== undefined && v.desiredInstanceCount !== v.currentInstanceCount
        ? ` (scaling to ${v.desiredInstanceCount})`
        : '';
    const count =
      v.currentInstanceCount !== undefined
        ? `${v.currentInstanceCount} instance${v.currentInstanceCount === 1 ? '' : 's'}${scalingTo}`
        : `${v.initialInstanceCount ?? '?'} instance(s) configured`;
    rows.push([`Variant`, `${v.variantName}  ${v.instanceType ?? '?'}  ${count}`]);
  }
  if (scaling) {
    rows.push(['Auto scaling', `${scaling.minCapacity ?? '?'}-${scaling.maxCapacity ?? '?'} instances`]);
    for (const p of scaling.policies) {
      const target = p.targetValue !== undefined ? ` target ${p.targetValue}` : '';
      const cooldowns =
        p.scaleInCooldownSeconds !== undefined || p.scaleOutCooldownSeconds !== undefined
          ? `, cooldown in ${p.scaleInCooldownSeconds ?? '-'} s / out ${p.scaleOutCooldownSeconds ?? '-'} s`
          : '';
      rows.push(['  policy', `${p.name}: ${p.type}${p.metric ? ` on ${p.metric}` : ''}${target}${cooldowns}`]);
    }
  } else if (!report.notes.some((n) => n.startsWith('Auto scaling'))) {
    rows.push(['Auto scaling', 'none (fixed instance count)']);
  }
  const width = Math.max(...rows.map(([k]) => k.length));
  const lines = rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`);

  const window = `${report.window.start.toISOString().slice(11, 16)}-${report.window.end.toISOString().slice(11, 16)} UTC`;
  const header = ['Last hour, per minute', 'latest', 'min', 'max', 'average'];
  const table = report.metrics.map((m) => [
    `${m.name} (${m.statistic})`,
    ...[m.latest, m.minimum, m.maximum, m.average].map((v) => formatMetric(m, v)),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((r) => r[i]!.length)));
  const render = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  lines.push('', `${render(header)}   (${window})`, ...table.map(render));
  if (report.metrics.length > 0 && report.metrics.every((m) => m.points.length === 0)) {
    lines.push('No data points in the last hour: the endpoint had no traffic, or metrics are still arriving.');
  }
  if (report.failures) {
    lines.push('', 'Failures in the last hour, per TargetModel (container logs; details: ' +
      `${shellCommand(['mme-deploy', 'logs', '--endpoint', endpoint.endpointName])})`);
    lines.push(formatFailureSummary(report.failures).trimEnd());
  }
  return `${lines.join('\n')}\n`;
}

function formatMetric(metric: MetricSummary, value: number | undefined): string {
  if (value === undefined || Number.isNaN(value)) return '-';
  switch (metric.unit) {
    case 'percent':
      return `${value.toFixed(1)} %`;
    case 'ratio':
      return `${(value * 100).toFixed(1)} %`;
    case 'microseconds':
      return value >= 1e6 ? `${(value / 1e6).toFixed(2)} s` : `${(value / 1000).toFixed(1)} ms`;
    case 'count':
      return Number.isInteger(value) ? String(value) : value.toFixed(1);
  }
}
