// Reads a SageMaker endpoint's container output from CloudWatch Logs and turns it into events (lib/logs). Every
// instance writes to the stream `<variant>/<instance-id>` of the log group `/aws/sagemaker/Endpoints/<endpoint>`
// (https://docs.aws.amazon.com/sagemaker/latest/dg/logging-cloudwatch.html). One FilterLogEvents query covers all
// streams, page by page, so memory holds events, not lines.

import { setTimeout as sleep } from 'node:timers/promises';
import type { CloudWatchLogsClient, FilterLogEventsCommandInput, FilterLogEventsCommandOutput } from '@aws-sdk/client-cloudwatch-logs';
import type { SageMakerClient } from '@aws-sdk/client-sagemaker';
import { isMmeError, MmeError } from '../errors';
import { EndpointLogParser } from '../logs/endpoint-log-parser';
import { failuresByModel, ModelFailures } from '../logs/failure-summary';
import { FAILURE_FILTER_PATTERN } from '../logs/log-messages';
import type { LogEvent, LogRecord } from '../logs/log-event';
import { loadCloudWatchLogs, loadSageMaker } from './aws-clients';
import { awsErrorName, explainAwsError, httpStatus } from './aws-errors';

/** The log group SageMaker writes an endpoint's container output to. */
export function endpointLogGroup(endpointName: string): string {
  return `/aws/sagemaker/Endpoints/${endpointName}`;
}

export interface EndpointLogQuery {
  readonly endpointName: string;
  readonly start: Date;
  /** @default now for a read; a follow never ends by itself */
  readonly end?: Date;
  /** Read only this production variant's instances (streams `<variant>/...`). @default every variant */
  readonly variant?: string;
  /**
   * A CloudWatch Logs filter pattern: only matching lines are read, so events that need the other lines (a traceback
   * on its own lines, the hash of a load) come out with less detail. @default every line
   */
  readonly filterPattern?: string;
  /** Keep only the events of this TargetModel. @default every event */
  readonly targetModel?: string;
}

export interface EndpointLogOptions {
  /** Stops the read: a read then fails with `ABORTED`, a follow ends after reporting what it has. */
  readonly signal?: AbortSignal;
  /**
   * Asked, when the log group is missing, whether the endpoint exists (`sagemaker:DescribeEndpoint`); a function is
   * called only then, so the SageMaker SDK is loaded only then. @default not asked
   */
  readonly sageMaker?: SageMakerClient | (() => SageMakerClient | Promise<SageMakerClient>);
  /** For messages. @default the client's region */
  readonly region?: string;
  readonly profile?: string;
  /**
   * Bounds of one read of the window (and of each poll of a follow): FilterLogEvents pages and wall time, past which
   * the read fails (AWS_FAILED) rather than page on while the service hands out next-page tokens.
   * @default 2000 pages, 10 minutes
   */
  readonly limits?: { readonly pages?: number; readonly milliseconds?: number };
}

export interface FollowOptions extends EndpointLogOptions {
  /** Time between two reads of new lines. @default 5000 */
  readonly pollIntervalMs?: number;
  /** Called when CloudWatch Logs throttles a poll, with the longer interval the follow now waits. */
  readonly onThrottled?: (nextPollMs: number) => void;
}

/** Every event of the query's window, oldest first. */
export async function readEndpointLogEvents(
  client: CloudWatchLogsClient,
  query: EndpointLogQuery,
  options: EndpointLogOptions = {},
): Promise<LogEvent[]> {
  const parser = new EndpointLogParser({ year: query.start.getUTCFullYear() });
  for await (const page of logPages(client, { ...query, end: query.end ?? new Date() }, options)) {
    for (const record of page) parser.push(record);
  }
  return onlyTarget(parser.drain({ final: true }), query.targetModel);
}

/**
 * The failures of a window per TargetModel, from the lines that report failures only (FAILURE_FILTER_PATTERN), so a
 * busy endpoint's hour is a few pages, not its every request.
 */
export async function recentModelFailures(
  client: CloudWatchLogsClient,
  query: Omit<EndpointLogQuery, 'filterPattern' | 'targetModel'>,
  options: EndpointLogOptions = {},
): Promise<ModelFailures[]> {
  return failuresByModel(await readEndpointLogEvents(client, { ...query, filterPattern: FAILURE_FILTER_PATTERN }, options));
}

/** Lines arriving later than this are still caught by the next poll (CloudWatch ingestion is not instantaneous). */
const OVERLAP_MS = 30_000;
const MAX_POLL_MS = 60_000;

/**
 * The query's events from `start` on, then new ones as they are written, in batches (oldest first within a batch),
 * until `signal` aborts; then what is still open is reported and the generator returns.
 */
export async function* followEndpointLogEvents(
  client: CloudWatchLogsClient,
  query: EndpointLogQuery,
  options: FollowOptions = {},
): AsyncGenerator<LogEvent[], void, undefined> {
  const parser = new EndpointLogParser({ year: query.start.getUTCFullYear() });
  const pollMs = options.pollIntervalMs ?? 5000;
  // Polling FilterLogEvents, not StartLiveTail: the same permission and protocol as a read, no HTTP/2 event stream
  // to keep open, and every line of the window before the follow began comes first.
  const seen = new Map<string, number>();
  let cursor = query.start.getTime();
  let wait = pollMs;
  while (!options.signal?.aborted) {
    const active = new Set<string>();
    try {
      const from = new Date(Math.max(query.start.getTime(), cursor - OVERLAP_MS));
      for await (const page of logPages(client, { ...query, start: from, end: undefined }, options)) {
        for (const record of page) {
          if (record.eventId !== undefined) {
            if (seen.has(record.eventId)) continue;
            seen.set(record.eventId, record.timestamp ?? cursor);
          }
          cursor = Math.max(cursor, record.timestamp ?? cursor);
          active.add(record.stream);
          parser.push(record);
        }
      }
      wait = pollMs;
    } catch (err) {
      if (isMmeError(err, 'ABORTED')) break;
      if (!isMmeError(err, 'AWS_THROTTLED')) throw err;
      wait = Math.min(wait * 2, MAX_POLL_MS);
      options.onThrottled?.(wait);
    }
    for (const [id, time] of seen) if (time < cursor - OVERLAP_MS) seen.delete(id);
    const events = onlyTarget(parser.drain({ activeStreams: active, now: Date.now() }), query.targetModel);
    if (events.length > 0) yield events;
    try {
      await sleep(wait, undefined, options.signal ? { signal: options.signal } : {});
    } catch {
      break; // aborted
    }
  }
  const rest = onlyTarget(parser.drain({ final: true }), query.targetModel);
  if (rest.length > 0) yield rest;
}

/** The lines of the query, one FilterLogEvents page at a time. */
async function* logPages(client: CloudWatchLogsClient, query: EndpointLogQuery, options: EndpointLogOptions): AsyncGenerator<LogRecord[]> {
  const { FilterLogEventsCommand } = await loadCloudWatchLogs();
  const input: FilterLogEventsCommandInput = {
    logGroupName: endpointLogGroup(query.endpointName),
    startTime: query.start.getTime(),
    ...(query.end ? { endTime: query.end.getTime() } : {}),
    ...(query.variant ? { logStreamNamePrefix: `${query.variant}/` } : {}),
    ...(query.filterPattern ? { filterPattern: query.filterPattern } : {}),
  };
  let nextToken: string | undefined;
  // FilterLogEvents may answer a page with no events and a next token while it searches: a busy hour is some hundred
  // pages; a service that never stops (or repeats a token) must not keep a CI job running for ever.
  const maxPages = options.limits?.pages ?? 2000;
  const maxMs = options.limits?.milliseconds ?? 10 * 60_000;
  const started = Date.now();
  const tokens = new Set<string>();
  let pages = 0;
  do {
    pages += 1;
    const seconds = Math.round((Date.now() - started) / 1000);
    if (pages > maxPages || Date.now() - started > maxMs) {
      throw new MmeError('AWS_FAILED', `CloudWatch Logs was still handing out pages of ${endpointLogGroup(query.endpointName)} ` +
        `after ${pages - 1} pages and ${seconds} s; stopped. Read a shorter window (--since), or one --variant or --target-model.`);
    }
    let page: FilterLogEventsCommandOutput;
    try {
      page = await client.send(
        new FilterLogEventsCommand(nextToken ? { ...input, nextToken } : input),
        options.signal ? { abortSignal: options.signal } : {},
      );
    } catch (err) {
      throw await explainLogsError(err, client, query.endpointName, options);
    }
    yield (page.events ?? []).map((e) => ({
      stream: e.logStreamName ?? '',
      message: e.message ?? '',
      ...(e.timestamp !== undefined ? { timestamp: e.timestamp } : {}),
      ...(e.eventId !== undefined ? { eventId: e.eventId } : {}),
    }));
    nextToken = page.nextToken;
    if (nextToken !== undefined && tokens.has(nextToken)) {
      throw new MmeError('AWS_FAILED', `CloudWatch Logs answered a next-page token it had already given, for ` +
        `${endpointLogGroup(query.endpointName)} (page ${pages}); stopped reading rather than loop. Run the command again.`);
    }
    if (nextToken !== undefined) tokens.add(nextToken);
  } while (nextToken);
}

function onlyTarget(events: LogEvent[], targetModel: string | undefined): LogEvent[] {
  return targetModel === undefined ? events : events.filter((e) => e.targetModel === targetModel);
}

/** A sentence for a failed FilterLogEvents call, with the code the CLI turns into an exit code. */
async function explainLogsError(
  err: unknown,
  client: CloudWatchLogsClient,
  endpointName: string,
  options: EndpointLogOptions,
): Promise<MmeError> {
  const group = endpointLogGroup(endpointName);
  const region = options.region ?? (await client.config.region().catch(() => undefined));
  const inRegion = region ? ` in ${region}` : '';
  const name = awsErrorName(err);
  if (options.signal?.aborted || name === 'AbortError') return new MmeError('ABORTED', 'Stopped reading the endpoint log.');
  if (name === 'ResourceNotFoundException') return missingLogGroup(endpointName, group, inRegion, options);
  if (name === 'AccessDeniedException' || name === 'AccessDenied' || httpStatus(err) === 403) {
    const who = options.profile ? `the credentials of profile '${options.profile}'` : 'the credentials in use';
    return new MmeError(
      'AWS_ACCESS_DENIED',
      `Access denied: ${who} may not logs:FilterLogEvents on log group ${group}${inRegion}. Grant logs:FilterLogEvents on ` +
        `arn:aws:logs:${region ?? '<region>'}:<account>:log-group:${group}:* (docs/live-endpoint.md lists what \`logs\` needs).`,
    );
  }
  if (/Throttl|TooManyRequests|LimitExceeded|RequestLimitExceeded/i.test(name)) {
    return new MmeError(
      'AWS_THROTTLED',
      `CloudWatch Logs kept throttling logs:FilterLogEvents (${name}) after retries with backoff; ` +
        'try again in a minute or read a shorter window (--since).',
    );
  }
  const profile = options.profile ? { profile: options.profile } : {};
  return explainAwsError(err, {
    permission: 'logs:FilterLogEvents',
    resource: `log group ${group}`,
    ...(region ? { region } : {}),
    ...profile,
  });
}

/** Why the log group is missing: the endpoint does not exist here, or it has not written anything (yet). */
async function missingLogGroup(endpointName: string, group: string, inRegion: string, options: EndpointLogOptions): Promise<MmeError> {
  const base = `Log group ${group} does not exist${inRegion}.`;
  if (!options.sageMaker) {
    return new MmeError(
      'LOG_GROUP_NOT_FOUND',
      `${base} Check the endpoint name and --region; an endpoint's log group appears when its first instance starts writing.`,
    );
  }
  const { DescribeEndpointCommand } = await loadSageMaker();
  const sageMaker = typeof options.sageMaker === 'function' ? await options.sageMaker() : options.sageMaker;
  try {
    const endpoint = await sageMaker.send(new DescribeEndpointCommand({ EndpointName: endpointName }));
    return new MmeError(
      'LOG_GROUP_NOT_FOUND',
      `${base} Endpoint '${endpointName}' exists (${endpoint.EndpointStatus ?? 'status unknown'}) ` +
        'but none of its instances has written a line yet, or the log group was deleted' +
        (endpoint.EndpointStatus === 'Creating'
          ? ': wait for its first instance to start.'
          : '. Logs come back when an instance writes again.'),
    );
  } catch (err) {
    if (awsErrorName(err) === 'ValidationException' && /Could not find endpoint/i.test((err as Error).message ?? '')) {
      return new MmeError(
        'AWS_NOT_FOUND',
        `Endpoint '${endpointName}' does not exist${inRegion}, so it has no log group. ` +
          'Check the name and --region (aws sagemaker list-endpoints).',
      );
    }
    return new MmeError(
      'LOG_GROUP_NOT_FOUND',
      `${base} Check the endpoint name and --region ` +
        `(whether the endpoint exists could not be checked: ${awsErrorName(err)}; it needs sagemaker:DescribeEndpoint).`,
    );
  }
}
