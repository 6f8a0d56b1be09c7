// `mme-deploy smoke --endpoint E [target...]` and `mme-deploy local smoke [target...]`: invoke every TargetModel once
// cold and a few times warm with requests made from its config, check each answer, print a table (or --json), and
// exit 1 when any TargetModel failed, so it can end a deploy pipeline.

import { resolve } from 'node:path';
import type { SmokeReport, SmokeResult } from '../measure/smoke';
import { AwsCommandOptions, connectionOf } from './aws-options';
import { CliIo, ExitCode, note, UsageError } from './io';
import { toJson } from './json';

export interface SmokeCommandOptions {
  readonly json?: boolean;
  /** Warm invocations per TargetModel. */
  readonly warm?: string;
  /** `NAME=1,3,224,224` entries (`;` or space separated), or one shape for every input with variable dims. */
  readonly shape?: string;
}

export interface EndpointSmokeOptions extends SmokeCommandOptions, AwsCommandOptions {
  readonly endpoint?: string;
  readonly variant?: string;
}

export interface LocalSmokeOptions extends SmokeCommandOptions {
  readonly url?: string;
  readonly modelsDir?: string;
}

export async function runSmoke(names: string[], options: EndpointSmokeOptions, io: CliIo, signal: AbortSignal): Promise<number> {
  if (!options.endpoint) throw new UsageError('Which endpoint? Give --endpoint NAME.');
  const common = commonOptions(options, signal);
  const connection = connectionOf(options);
  const { endpointTargetModels, readEndpointSources } = await import('../measure/target-models');
  const { endpointInvoker } = await import('../measure/invoker');
  const { smokeTest } = await import('../measure/smoke');
  const { endpoint, names: targets } = await endpointTargetModels(connection, options.endpoint, {
    names,
    ...(options.variant ? { variant: options.variant } : {}),
  });
  const variant = options.variant ? { variant: options.variant } : {};
  const invoker = await endpointInvoker({ ...connection, endpoint: options.endpoint, ...variant });
  try {
    if (!options.json) note(io, `Smoke-testing ${targets.length} TargetModel(s) on endpoint ${endpoint.endpointName}...\n`);
    const report = await smokeTest(readEndpointSources(connection, endpoint, targets, signal), invoker, {
      ...common,
      onResult: (r) => io.status?.(`${r.targetModel}: ${r.ok ? 'ok' : 'FAILED'}`),
    });
    return printReport(report, options, io);
  } finally {
    io.status?.('');
    invoker.close();
  }
}

export async function runLocalSmoke(names: string[], options: LocalSmokeOptions, io: CliIo, signal: AbortSignal): Promise<number> {
  const common = commonOptions(options, signal);
  const { parseContainerUrl, DEFAULT_CONTAINER_URL } = await import('../local/container-client');
  const { localSources } = await import('../measure/target-models');
  const { localInvoker } = await import('../measure/invoker');
  const { smokeTest } = await import('../measure/smoke');
  const url = parseContainerUrl(options.url ?? io.env.MME_DEPLOY_LOCAL_URL ?? DEFAULT_CONTAINER_URL);
  const modelsDir = resolve(io.cwd, options.modelsDir ?? io.env.MME_DEPLOY_LOCAL_MODELS_DIR ?? 'mme-local-models');
  const sources = await localSources(modelsDir, names);
  const report = await smokeTest(sources, localInvoker({ url }), common);
  return printReport(report, options, io);
}

function commonOptions(options: SmokeCommandOptions, signal: AbortSignal) {
  let warm: number | undefined;
  if (options.warm !== undefined) {
    warm = Number(options.warm);
    if (!Number.isInteger(warm) || warm < 0 || warm > 1000) throw new UsageError(`--warm ${options.warm} must be a whole number 0..1000.`);
  }
  return { ...(warm !== undefined ? { warm } : {}), ...(options.shape ? { shapes: parseShapes(options.shape) } : {}), signal };
}

/** `NAME=1,3,224,224` entries separated by `;` or spaces; `x` separates dims too. */
export function parseShapes(text: string): Map<string, number[]> {
  const shapes = new Map<string, number[]>();
  for (const entry of text.split(/[;\s]+/).filter(Boolean)) {
    const at = entry.indexOf('=');
    if (at <= 0) {
      throw new UsageError(`--shape ${JSON.stringify(entry)} must look like INPUT=1,3,224,224 (the input name, then its full shape).`);
    }
    const dims = entry.slice(at + 1).split(/[,x]/).map((d) => Number(d.trim()));
    if (dims.length === 0 || !dims.every((d) => Number.isInteger(d) && d >= 0)) {
      throw new UsageError(`--shape ${JSON.stringify(entry)}: the dims must be whole numbers ≥ 0, e.g. INPUT=1,128.`);
    }
    shapes.set(entry.slice(0, at), dims);
  }
  return shapes;
}

function printReport(report: SmokeReport, options: SmokeCommandOptions, io: CliIo): number {
  if (options.json) {
    io.stdout(toJson(report));
  } else {
    io.stdout(formatSmokeTable(report));
  }
  return report.failed > 0 ? ExitCode.Failure : ExitCode.Ok;
}

const ms = (value: number | undefined) => (value === undefined ? '-' : `${value.toFixed(1)} ms`);

/** The table: one row per TargetModel, then each failure's explanation under its name. */
export function formatSmokeTable(report: SmokeReport): string {
  const header = ['TargetModel', 'inputs', 'cold', 'warm p50', 'warm p99', 'outputs checked', 'result'];
  const rows = report.results.map((r: SmokeResult) => [
    r.targetModel,
    r.inputs ?? '-',
    ms(r.coldMs),
    ms(r.warm?.p50Ms),
    ms(r.warm?.p99Ms),
    String(r.outputsChecked),
    r.ok ? 'ok' : 'FAILED',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `${cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')}\n`;
  let out = line(header) + rows.map(line).join('');
  for (const r of report.results.filter((x) => !x.ok)) {
    out += `\n${r.targetModel}:\n`;
    if (r.failure) out += `  ${r.failure.cause} (${r.failure.code}): ${r.failure.message}\n`;
    for (const m of r.mismatches ?? []) out += `  ${m.problem}: ${m.message}\n`;
  }
  const total = report.results.length;
  out += `\n${report.passed} of ${total} TargetModel${total === 1 ? '' : 's'} passed on ${report.site}` +
    `${report.failed > 0 ? `; ${report.failed} failed` : ''}. The cold call includes the download and the load when the ` +
    'model was not loaded yet.\n';
  return out;
}
