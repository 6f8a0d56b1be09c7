// `mme-deploy plan`: capacity, cost and cache behaviour of a GPU multi-model endpoint before it is deployed.
// Parses the options, reads the archives or repositories, calls lib/plan and formats its report.

import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Readable } from 'node:stream';
import { writeStreamAtomically } from '../archive/write-file';
import { regionNameProblem } from '../catalog/aws-regions';
import { diagnostic, type Diagnostic } from '../diagnostics';
import { isMmeError, MmeError, unreadable } from '../errors';
import { formatBytes } from '../format-bytes';
import { HOURS_PER_MONTH } from '../plan/cost';
import { curveCsv } from '../plan/curve-csv';
import { DEFAULT_COLD_START, parseColdStartParameters } from '../plan/load-time';
import { checkPlanTarget, DEFAULT_GPU_RESERVE_MIB, planEndpoint, type PlanReport } from '../plan/plan';
import { readBundle, type BundleFiles } from '../plan/read-bundles';
import { parseTrafficCsv, parseTrafficKeyword, type TrafficSpec } from '../plan/traffic';
import { CliIo, ExitCode, note, UsageError } from './io';
import { refuseZip } from './cli-errors';
import { escapeLine } from './terminal-text';

export interface PlanCommandOptions {
  instanceType?: string;
  instances?: string;
  region?: string;
  rps?: string;
  traffic?: string;
  requests?: string;
  seed?: string;
  price?: string;
  memory?: string[];
  gpuReserve?: string;
  diskGb?: string;
  coldStart?: string;
  json?: boolean;
  csv?: string;
  force?: boolean;
}

export const PLAN_DEFAULTS = {
  instanceType: 'ml.g4dn.xlarge',
  instances: 1,
  region: 'us-east-1',
  rps: 10,
  requests: 200_000,
  seed: 1,
  warmupFraction: 0.1,
} as const;

/** Plan findings that mean the command line asked for something impossible: exit 2, before any report is printed. */
const USAGE_FINDINGS = new Set([
  'plan-unknown-instance-type',
  'plan-instance-type-not-mme',
  'plan-unknown-memory-override',
  'plan-gpu-reserve-too-large',
  'plan-no-price',
]);

export async function runPlan(paths: readonly string[], options: PlanCommandOptions, io: CliIo, signal?: AbortSignal): Promise<number> {
  for (const path of paths) refuseZip(path, io.cwd);
  const interrupted = () => {
    if (signal?.aborted) throw new MmeError('ABORTED', 'interrupted: no plan was printed and no file written.');
  };
  const instances = integerOption('--instances', options.instances, PLAN_DEFAULTS.instances, 1, 1000);
  const requests = integerOption('--requests', options.requests, PLAN_DEFAULTS.requests, 1, 100_000_000);
  const seed = integerOption('--seed', options.seed, PLAN_DEFAULTS.seed, 0, Number.MAX_SAFE_INTEGER);
  const rps = numberOption('--rps', options.rps, PLAN_DEFAULTS.rps);
  const price = options.price === undefined ? undefined : numberOption('--price', options.price, 0);
  const gpuReserveMiB = integerOption('--gpu-reserve', options.gpuReserve, DEFAULT_GPU_RESERVE_MIB, 0, 1 << 20);
  const diskGb = options.diskGb === undefined ? undefined : numberOption('--disk-gb', options.diskGb, 0);
  const memoryOverridesGiB = memoryOverrides(options.memory ?? []);
  const coldStart = options.coldStart === undefined ? DEFAULT_COLD_START : parseColdStartParameters(options.coldStart);
  if ('error' in coldStart) throw new UsageError(coldStart.error);
  const region = options.region ?? io.env.AWS_REGION ?? io.env.AWS_DEFAULT_REGION ?? PLAN_DEFAULTS.region;
  const regionProblem = regionNameProblem(region);
  if (regionProblem) throw new UsageError(`${options.region !== undefined ? '--region' : 'AWS_REGION'}: ${regionProblem}`);
  if (paths.length === 0) {
    throw new UsageError('plan needs at least one TargetModel archive (.tar.gz) or model repository');
  }
  const instanceType = options.instanceType ?? PLAN_DEFAULTS.instanceType;
  // Instance type, price and reserve are refused before any archive is read (reading can take minutes).
  const target = checkPlanTarget({ instanceType, region, gpuReserveMiB, ...(price !== undefined ? { hourlyPriceUsd: price } : {}) });
  if (target.diagnostics.length > 0) throw new UsageError(target.diagnostics.map((d) => d.message).join('; '));

  const diagnostics: Diagnostic[] = [];
  const traffic = await readTraffic(options.traffic ?? 'uniform', io, diagnostics);
  if (traffic?.kind === 'trace' && options.rps !== undefined) {
    const message = `--rps ${options.rps} is ignored: the trace ${traffic.file} gives the arrival times`;
    diagnostics.push(diagnostic('warning', 'plan-rps-ignored', message, { file: traffic.file }));
  }

  const bundles: BundleFiles[] = [];
  const seen = new Map<string, string>();
  for (const path of paths) {
    interrupted();
    const absolute = resolve(io.cwd, path);
    const result = await readBundle(absolute, signal ? { signal } : {});
    interrupted();
    // A path that is missing or cannot be read stops the plan, as in every other command: exit 2, one message.
    const unread = result.diagnostics.find((d) => d.code === 'plan-unreadable-input');
    if (unread) {
      const message = unread.message.split(absolute).join(path.replace(/[\\/]+$/, '') || path);
      throw new MmeError(/no such file/.test(message) ? 'NOT_FOUND' : 'UNREADABLE', message);
    }
    diagnostics.push(...result.diagnostics);
    if (!result.bundle) continue;
    const previous = seen.get(result.bundle.name);
    if (previous !== undefined) {
      diagnostics.push(
        diagnostic(
          'error',
          'plan-duplicate-name',
          `${path} and ${previous} are both named ${result.bundle.name}; TargetModel names on one endpoint must be unique`,
          { file: path },
        ),
      );
      continue;
    }
    seen.set(result.bundle.name, path);
    bundles.push(result.bundle);
  }

  const ioFailed = diagnostics.some((d) => d.code === 'traffic-csv');
  let report: PlanReport | undefined;
  if (traffic && !diagnostics.some((d) => d.severity === 'error')) {
    const planned = planEndpoint(bundles, {
      instanceType,
      region,
      instances,
      ...(price !== undefined ? { hourlyPriceUsd: price } : {}),
      traffic,
      rps,
      requests,
      warmupFraction: PLAN_DEFAULTS.warmupFraction,
      seed,
      coldStart,
      gpuReserveMiB,
      ...(diskGb !== undefined ? { diskGb } : {}),
      memoryOverridesGiB,
    });
    diagnostics.push(...planned.diagnostics);
    report = planned.report;
    const usage = planned.diagnostics.filter((d) => USAGE_FINDINGS.has(d.code));
    if (usage.length > 0) throw new UsageError(usage.map((d) => d.message).join('; '));
  }
  interrupted();
  const ok = !diagnostics.some((d) => d.severity === 'error');

  if (options.csv !== undefined && report?.simulation) {
    await writeNewFile(resolve(io.cwd, options.csv), curveCsv(report), options.force === true, signal);
  }
  if (options.json) {
    io.stdout(`${JSON.stringify({ ok, diagnostics, ...(report ? { report } : {}) }, null, 2)}\n`);
  } else {
    if (report) io.stdout(formatReport(report));
    for (const d of diagnostics) {
      const where = `${d.file ? `${d.file}: ` : ''}${d.line ? `line ${d.line}: ` : ''}`;
      io.stderr(`mme-deploy: ${d.severity}: ${escapeLine(`${where}${d.message}`)}\n`);
    }
    if (options.csv !== undefined && report?.simulation) note(io, `wrote the instance-count curve to ${options.csv}\n`);
  }
  if (options.csv !== undefined && !report?.simulation && ok) {
    note(io, 'no CSV written: there is no simulation to plot\n');
  }
  return ioFailed ? ExitCode.Usage : ok ? ExitCode.Ok : ExitCode.Failure;
}

export async function readTraffic(
  text: string,
  io: CliIo,
  diagnostics: Diagnostic[],
  options: { readonly weightsOnly?: boolean } = {},
): Promise<TrafficSpec | undefined> {
  const keyword = parseTrafficKeyword(text);
  if (keyword && 'error' in keyword) throw new UsageError(keyword.error);
  if (keyword) return keyword;
  let csv: string;
  try {
    csv = await readFile(resolve(io.cwd, text), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw unreadable(`--traffic ${text}`, err);
    throw new UsageError(`--traffic ${text}: not uniform, zipf:S or a CSV file that exists (no such file)`);
  }
  const parsed = parseTrafficCsv(csv, text, options);
  diagnostics.push(...parsed.diagnostics);
  return parsed.spec;
}

function memoryOverrides(values: readonly string[]): Map<string, number> {
  const result = new Map<string, number>();
  for (const value of values) {
    const eq = value.lastIndexOf('=');
    const name = value.slice(0, eq);
    const gib = Number(value.slice(eq + 1));
    if (eq <= 0 || !Number.isFinite(gib) || gib <= 0 || value.slice(eq + 1).trim() === '') {
      throw new UsageError(
        `--memory ${value}: expected <TargetModel name>=<GiB>, e.g. --memory model_trt_python.tar.gz=3.5`,
      );
    }
    result.set(name, gib);
  }
  return result;
}

function integerOption(flag: string, text: string | undefined, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new UsageError(`${flag} ${text}: expected a whole number from ${min} to ${max}`);
  }
  return value;
}

function numberOption(flag: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value <= 0) {
    throw new UsageError(`${flag} ${text}: expected a number above 0`);
  }
  return value;
}

/**
 * Writes `path` all-or-nothing (an interruption leaves no half-written CSV), and only if it does not exist yet unless
 * `force`, so a plan never overwrites the user's file.
 */
export async function writeNewFile(path: string, text: string, force: boolean, signal: AbortSignal | undefined): Promise<void> {
  try {
    await writeStreamAtomically(Readable.from([Buffer.from(text, 'utf8')]), path, {
      hash: false,
      noClobber: !force,
      ...(signal ? { signal } : {}),
    });
  } catch (err) {
    if (isMmeError(err, 'ALREADY_EXISTS')) {
      throw new UsageError(`--csv ${path} exists; choose another file name or add --force to replace it`);
    }
    if (isMmeError(err, 'UNWRITABLE')) throw new UsageError(`--csv ${path}: ${err.message}`);
    throw err;
  }
}

// ---- terminal report ----

const MAX_MODEL_ROWS = 50;

/**
 * The last row of the cost table: what the MME saves, or, when it needs more instances than there are models (the
 * saving is negative), what it costs more, said that way round with positive figures.
 */
export function savingRow(k: NonNullable<PlanReport['cost']>): string[] {
  if (k.savingPercent >= 0) return [`saving ${k.savingPercent} %`, '', usd(k.savingPerMonthUsd), usd(k.savingPerYearUsd)];
  return [`MME costs ${-k.savingPercent} % more`, '', usd(-k.savingPerMonthUsd), usd(-k.savingPerYearUsd)];
}

export function formatReport(report: PlanReport): string {
  const out: string[] = [];
  const t = report.instanceType;
  const storage = t.instanceStorage.kind === 'nvme' ? `NVMe ${t.instanceStorage.sizeGb} GB` : 'EBS';
  out.push(
    `Plan for ${report.models.length} model${report.models.length === 1 ? '' : 's'} on ${t.name} ` +
      `(1 × ${t.gpuModel} ${gib(t.gpuMemoryMiB * MiB)} GiB, ${t.vCpus} vCPU, ${t.memoryGiB} GiB, ${storage}) in ${report.region}`,
    '',
  );

  const showParts = report.models.length <= 20;
  const rows: string[][] = [['model', 'archive', 'extracted', 'GPU memory', 'fits / backend', 'cold (S3)', 'cold (disk)', 'traffic']];
  const sorted = [...report.models].sort((a, b) => b.gpuBytes - a.gpuBytes);
  for (const m of sorted.slice(0, MAX_MODEL_ROWS)) {
    rows.push([
      m.name,
      `${m.archiveBytesEstimated ? '≈' : ''}${formatBytes(m.archiveBytes)}`,
      formatBytes(m.extractedBytes),
      `${gib(m.gpuBytes)} GiB${m.memorySource === 'override' ? ' (set)' : ''}`,
      m.fits ? 'yes' : 'NO',
      seconds(m.coldStart.fromS3Seconds),
      seconds(m.coldStart.fromDiskSeconds),
      percent(m.trafficShare),
    ]);
    if (showParts) {
      for (const p of m.parts) {
        const where = p.gpuInstances > 0 ? `${p.gpuInstances} GPU instance${p.gpuInstances === 1 ? '' : 's'}` : 'CPU';
        const weights = p.weightBytes > 0 ? `${formatBytes(p.weightBytes)} weights` : '';
        rows.push([`  ${p.model}`, '', weights, `${gib(p.gpuBytes)} GiB`, `${p.backend}, ${where}`, '', '', '']);
      }
    }
  }
  out.push(...table(rows, [false, true, true, true, false, true, true, true]).map((line) => `  ${line}`));
  if (sorted.length > MAX_MODEL_ROWS) out.push(`  … and ${sorted.length - MAX_MODEL_ROWS} smaller models (see --json)`);
  out.push('');

  const c = report.capacity;
  out.push(
    `Capacity per instance: ${gib(c.modelGpuMiB * MiB)} GiB of GPU memory for models ` +
      `(${mib(c.gpuUsableMiB)} MiB usable - ${c.gpuReserveMiB} MiB reserved), ${c.diskGb} GB model cache disk` +
      `${c.diskSource === 'ebs-assumed' ? ' (assumed)' : ''}.`,
    `  Usable GPU memory ${mib(c.gpuUsableMiB)} MiB per ${t.gpuModel}, not the nominal ${gib(c.gpuMemoryMiB * MiB)} GiB: ` +
      `${c.gpuUsableSource}.`,
    `  At most ${c.residentAtOnce} of ${report.models.length} models resident at once on one instance; ` +
      (c.instancesToHoldAll > 0
        ? `all of them (${gib(c.totalGpuMiB * MiB)} GiB) stay loaded on ${c.instancesToHoldAll} ` +
          `instance${c.instancesToHoldAll === 1 ? '' : 's'}.`
        : `they (${gib(c.totalGpuMiB * MiB)} GiB) cannot all stay loaded: a model does not fit on one instance.`),
    '',
  );

  const k = report.cost;
  const from = report.price.source === '--price' ? 'from --price' : `on-demand list price in ${report.region}`;
  out.push(`Cost at $${k.hourlyPriceUsd}/h per instance (${from}):`);
  out.push(
    ...table(
      [
        ['', 'instances', 'per month', 'per year'],
        ['multi-model endpoint', String(k.multiModel.instances), usd(k.multiModel.perMonthUsd), usd(k.multiModel.perYearUsd)],
        ['one endpoint per model', String(k.singleModel.instances), usd(k.singleModel.perMonthUsd), usd(k.singleModel.perYearUsd)],
        savingRow(k),
      ],
      [false, true, true, true],
    ).map((line) => `  ${line}`),
  );
  out.push('');

  const s = report.simulation;
  if (s) {
    out.push(
      `Cache simulation: ${s.traffic} traffic, ${round(s.rps, 2)} requests/s, ${s.requests.toLocaleString('en-US')} requests ` +
        `(first ${s.warmupRequests.toLocaleString('en-US')} warm the cache), seed ${s.seed}:`,
    );
    const curve: string[][] = [
      [
        'instances',
        'cache hits',
        'loads/hour',
        'from S3/hour',
        'cold wait (mean)',
        'cold wait (max)',
        'added/request',
        'resident',
        'MME/month',
      ],
    ];
    const hourly = report.price.hourlyUsd;
    for (const p of s.curve) {
      curve.push([
        String(p.instances),
        percent(p.hitRatio),
        round(p.loadsPerHour, 1),
        round(p.loadsFromS3PerHour, 1),
        seconds(p.meanColdLatencySeconds),
        seconds(p.maxColdLatencySeconds),
        milliseconds(p.meanAddedLatencySeconds),
        String(p.residentModels),
        usd(hourly * p.instances * HOURS_PER_MONTH),
      ]);
    }
    out.push(...table(curve, [true, true, true, true, true, true, true, true, true]).map((line) => `  ${line}`), '');
  }

  out.push('Assumptions (override with --memory, --gpu-reserve, --disk-gb, --cold-start, --price):');
  for (const a of report.assumptions) out.push(`  - ${a}`);
  out.push(`  - Price source: ${report.price.source}`);
  return `${out.join('\n')}\n`;
}

function table(rows: readonly string[][], rightAligned: readonly boolean[]): string[] {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => [...(r[col] ?? '')].length)));
  return rows.map((r) =>
    r
      .map((cell, col) => (rightAligned[col] ? cell.padStart(widths[col]!) : cell.padEnd(widths[col]!)))
      .join('  ')
      .trimEnd(),
  );
}

const MiB = 1024 * 1024;

function gib(bytes: number): string {
  return (bytes / (1024 * MiB)).toFixed(1);
}

function mib(value: number): string {
  return value.toLocaleString('en-US');
}

function seconds(s: number): string {
  return `${s.toFixed(1)} s`;
}

function milliseconds(s: number): string {
  return `${(s * 1000).toFixed(1)} ms`;
}

function percent(ratio: number): string {
  return `${(ratio * 100).toFixed(1)} %`;
}

function round(value: number, digits: number): string {
  return value.toFixed(digits);
}

function usd(value: number): string {
  const amount = Math.abs(value).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  return `${value < 0 ? '-' : ''}$${amount}`;
}
