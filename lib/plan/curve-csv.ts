// The per-instance-count curve of a plan as CSV, one row per instance count, for plotting hit ratio and cold loads
// against cost.

import { HOURS_PER_MONTH } from './cost';
import type { PlanReport } from './plan';

const COLUMNS = [
  'instances',
  'hit_ratio',
  'loads_per_hour',
  'loads_from_s3_per_hour',
  'mean_cold_wait_s',
  'max_cold_wait_s',
  'mean_added_latency_s',
  'resident_models',
  'requests',
  'hits',
  'waits',
  'loads',
  'evictions',
  'mme_usd_per_month',
] as const;

export function curveCsv(report: PlanReport): string {
  const rows: string[] = [COLUMNS.join(',')];
  const price = report.price.hourlyUsd;
  for (const point of report.simulation?.curve ?? []) {
    const cells = [
      point.instances,
      round(point.hitRatio, 6),
      round(point.loadsPerHour, 3),
      round(point.loadsFromS3PerHour, 3),
      round(point.meanColdLatencySeconds, 3),
      round(point.maxColdLatencySeconds, 3),
      round(point.meanAddedLatencySeconds, 6),
      point.residentModels,
      point.requests,
      point.hits,
      point.waits,
      point.loads,
      point.evictions,
      round(price * point.instances * HOURS_PER_MONTH, 2),
    ];
    rows.push(cells.join(','));
  }
  return `${rows.join('\n')}\n`;
}

function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
