// `mme-deploy logs --endpoint E`: what happened on the endpoint's instances, as events (loads, failures with their
// cause and fix, evictions, python tracebacks), read from CloudWatch Logs; `--follow` keeps reading new lines.

import { type CliIo, note } from './io';
import { AwsCommandOptions, connectionOf } from './aws-options';
import { ExitCode } from './exit-codes';
import { MmeError } from '../errors';
import type { LogEvent, LogEventKind } from '../logs/log-event';
import type { ModelFailures } from '../logs/failure-summary';
import { escapeLine } from './terminal-text';

export interface LogsOptions extends AwsCommandOptions {
  readonly endpoint?: string;
  /** A duration back from now (`30m`, `1h`, `2d`) or an ISO 8601 time. @default 1h */
  readonly since?: string;
  readonly targetModel?: string;
  readonly variant?: string;
  readonly follow?: boolean;
  /** Seconds between two reads with --follow. @default 5 */
  readonly pollInterval?: string;
  /** Now, for --since (tests). @default the clock */
  readonly now?: Date;
}

export async function runLogs(options: LogsOptions, io: CliIo, signal?: AbortSignal): Promise<number> {
  if (!options.endpoint) throw new MmeError('USAGE', 'Which endpoint? Give --endpoint NAME.');
  const now = options.now ?? new Date();
  const start = parseSince(options.since ?? '1h', now);
  const pollIntervalMs = parsePollInterval(options.pollInterval);
  const clients = await import('../aws/aws-clients');
  const { followEndpointLogEvents, readEndpointLogEvents, endpointLogGroup } = await import('../aws/endpoint-logs');
  const connection = connectionOf(options);
  const logs = await clients.createCloudWatchLogsClient(connection);
  // Only to explain a missing log group: created (and the SageMaker SDK loaded) only then.
  let sageMaker: Promise<import('@aws-sdk/client-sagemaker').SageMakerClient> | undefined;
  const describer = () => (sageMaker ??= clients.createSageMakerClient(connection));
  const query = {
    endpointName: options.endpoint,
    start,
    ...(options.variant ? { variant: options.variant } : {}),
    ...(options.targetModel ? { targetModel: options.targetModel } : {}),
  };
  const context = {
    sageMaker: describer,
    ...(options.region ? { region: options.region } : {}),
    ...(options.profile ? { profile: options.profile } : {}),
    ...(signal ? { signal } : {}),
  };
  const print = (events: readonly LogEvent[]) =>
    io.stdout(options.json ? events.map((e) => `${JSON.stringify(e)}\n`).join('') : formatEvents(events));
  try {
    if (!options.follow) {
      const events = await readEndpointLogEvents(logs, { ...query, end: now }, context);
      print(events);
      if (events.length === 0) {
        note(
          io,
          `note: no events in ${endpointLogGroup(options.endpoint)} since ${formatTime(start)} UTC` +
            `${options.targetModel ? ` for ${options.targetModel}` : ''}.\n`,
        );
      }
      if (!options.json && !events.some((e) => e.kind === 'invoke-failed')) note(io, VERBOSE_NOTE);
      return ExitCode.Ok;
    }
    if (!options.json) {
      note(io, `Following ${endpointLogGroup(options.endpoint)} from ${formatTime(start)} UTC; Ctrl-C stops.\n${VERBOSE_NOTE}`);
    }
    const onThrottled = (ms: number) => note(io, `note: CloudWatch Logs is throttling; reading new lines every ${ms / 1000} s.\n`);
    for await (const batch of followEndpointLogEvents(logs, query, { ...context, pollIntervalMs, onThrottled })) print(batch);
    // A follow ends only when it is stopped.
    return signal?.aborted ? ExitCode.Interrupted : ExitCode.Ok;
  } finally {
    logs.destroy();
    (await sageMaker)?.destroy();
  }
}

// Triton logs a failed request only at verbose level 1 (server src/sagemaker_server.cc:606, LOG_VERBOSE(1) << "Infer
// failed: "); SageMaker's serve script turns verbose logging on unless SAGEMAKER_TRITON_LOG_VERBOSE says otherwise
// (server docker/sagemaker/serve:98-103). Loads and unloads are logged at INFO, whatever the setting.
const VERBOSE_NOTE =
  'note: failed requests (REQUEST FAILED) are in the log only with verbose logging on, the default; ' +
  "SAGEMAKER_TRITON_LOG_VERBOSE=0 (the construct's environment.logVerbose: 0) leaves them out. " +
  'Invoke always gets its own failure in its answer.\n';

/** `30s`, `15m`, `1h`, `2d`, `1w` back from `now`, or an ISO 8601 time. */
export function parseSince(text: string, now: Date): Date {
  const m = /^(\d+(?:\.\d+)?)\s*(s|m|h|d|w)$/.exec(text.trim());
  if (m) {
    const unit = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3, w: 7 * 86400e3 }[m[2] as 's' | 'm' | 'h' | 'd' | 'w'];
    return new Date(now.getTime() - Number(m[1]) * unit);
  }
  const time = /^\d{4}-\d\d-\d\d([T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?)?$/.test(text.trim()) ? Date.parse(text.trim()) : NaN;
  if (Number.isNaN(time)) {
    throw new MmeError(
      'USAGE',
      `--since '${text}' is neither a duration (30s, 15m, 1h, 2d, 1w) nor an ISO 8601 time (2026-11-30T14:00:00Z).`,
    );
  }
  if (time > now.getTime()) throw new MmeError('USAGE', `--since ${text} is in the future.`);
  return new Date(time);
}

function parsePollInterval(text: string | undefined): number {
  if (text === undefined) return 5000;
  const seconds = Number(text);
  if (!Number.isFinite(seconds) || seconds < 1) {
    throw new MmeError('USAGE', `--poll-interval '${text}' must be a number of seconds, 1 or more.`);
  }
  return seconds * 1000;
}

// ---- human output ----

const LABELS: Record<LogEventKind, string> = {
  'server-started': 'server started',
  'server-stopping': 'server stopping',
  'load-started': 'loading',
  'load-succeeded': 'loaded',
  'load-failed': 'LOAD FAILED',
  eviction: 'evicted (SageMaker unloads it to make room)',
  unloaded: 'unloaded',
  'unload-failed': 'UNLOAD FAILED',
  'invoke-failed': 'REQUEST FAILED',
  'python-error': 'PYTHON ERROR',
  error: 'ERROR',
  warning: 'warning',
};

/**
 * One line per event (a run of identical failures on any instance is one line with its count); failures add
 * Triton's reason, the python frames, the backend's own lines, the fix and the validator rule, indented.
 */
export function formatEvents(events: readonly LogEvent[]): string {
  const out: string[] = [];
  for (let i = 0; i < events.length; ) {
    const e = events[i]!;
    let j = i + 1;
    while (j < events.length && e.failure && sameFailure(e, events[j]!)) j++;
    const run = events.slice(i, j);
    out.push(formatEvent(e, run));
    i = j;
  }
  return out.join('');
}

function formatEvent(e: LogEvent, run: readonly LogEvent[]): string {
  // Names and instance ids come from the log: a newline in one must not start a line of its own.
  const who = escapeLine(modelLabel(e));
  const instances = [...new Set(run.map((r) => r.instance))];
  const head = [formatTime(e.time), instances.length > 1 ? `${instances.length} instances` : escapeLine(e.instance), who, LABELS[e.kind]]
    .filter(Boolean)
    .join('  ');
  const repeat = run.length > 1 ? `  (${run.length} times until ${formatTime(run[run.length - 1]!.time).slice(11)})` : '';
  const lines = [`${head}${repeat}`];
  const detail = (text: string) => lines.push(...text.split('\n').map((l) => `    ${l}`));
  switch (e.kind) {
    case 'load-started':
    case 'load-succeeded':
    case 'unloaded':
    case 'eviction':
      break;
    case 'server-started':
    case 'server-stopping':
    case 'warning':
      detail(escapeLine(e.message));
      break;
    default:
      // The server's words, each kept on its line: a newline in them is shown as \n.
      detail(escapeLine(shortenIds(e.message)));
      // What the backend logged just before (e.g. TensorRT's own diagnosis), marked as its words.
      if (e.context) for (const c of e.context) detail(`| ${escapeLine(c)}`);
      if (e.traceback) {
        e.traceback.forEach((frame, n) => lines.push(`    ${n === 0 ? 'at ' : '   '}${escapeLine(frame)}`));
      }
      if (e.failure) {
        detail(`cause: ${e.failure.title}`);
        detail(`fix: ${e.failure.fix}`);
        if (e.failure.rule) detail(`\`mme-deploy validate --mme\` reports this before a push (rule ${e.failure.rule}).`);
      }
  }
  return `${lines.join('\n')}\n`;
}

/** `sentiment.tar.gz › preprocess`, `sentiment.tar.gz`, `preprocess`, or '' for instance-wide events. */
function modelLabel(e: LogEvent): string {
  if (e.targetModel && e.tritonModel && e.tritonModel !== e.targetModel) return `${e.targetModel} › ${e.tritonModel}`;
  return e.targetModel ?? e.tritonModel ?? '';
}

function sameFailure(a: LogEvent, b: LogEvent): boolean {
  return a.kind === b.kind && a.targetModel === b.targetModel && a.tritonModel === b.tritonModel && a.message === b.message;
}

/** Triton's namespaced model ids (`/opt/ml/models/<hash>/model::preprocess`) as the model name alone. */
function shortenIds(text: string): string {
  return text.replace(/\/opt\/ml\/models\/[^/\s':]+(?:\/model)?::/g, '');
}

/** `2026-11-30 14:05:04` (UTC). */
export function formatTime(time: Date): string {
  return time.toISOString().slice(0, 19).replace('T', ' ');
}

/** The "Failures in the last hour" section of `status`. */
export function formatFailureSummary(failures: readonly ModelFailures[]): string {
  if (failures.length === 0) return 'No failure in the container logs.\n';
  const lines: string[] = [];
  for (const f of failures) {
    const model = f.targetModel !== undefined ? escapeLine(f.targetModel) : '(no TargetModel in the log)';
    const where = f.instances.length === 1 ? f.instances[0] : `${f.instances.length} instances`;
    const what = LABELS[f.last.kind].toLowerCase();
    const inner = f.last.tritonModel && f.last.tritonModel !== f.targetModel ? `${f.last.tritonModel}: ` : '';
    lines.push(
      `${model}  ${f.count} failure${f.count === 1 ? '' : 's'} on ${where}, ` +
        `last ${formatTime(f.last.time).slice(11, 16)} ${what}`,
    );
    lines.push(`    ${escapeLine(`${inner}${f.last.failure?.title ?? shortenIds(f.last.message).split('\n')[0]}`)}`);
    if (f.last.failure) lines.push(`    fix: ${f.last.failure.fix}`);
  }
  return `${lines.join('\n')}\n`;
}
