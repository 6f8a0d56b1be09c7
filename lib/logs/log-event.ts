// What `mme-deploy logs` reports: events on a multi-model endpoint, each made of one or more log lines, with the
// instance, the TargetModel and the Triton model it concerns. Plain data, printed as they are by `--json`.

import type { KnownFailure } from '../catalog/triton-failures';

/**
 * The kinds of event, each named for what happened:
 * - `server-started` / `server-stopping`: the container's Triton started serving, or was told to stop.
 * - `load-started` / `load-succeeded` / `load-failed`: SageMaker asked for a TargetModel, or Triton began, finished
 *   or failed loading one model (the TargetModel itself or a composing model of its ensemble).
 * - `eviction`: SageMaker asked the container to unload a TargetModel. On a multi-model endpoint only SageMaker
 *   unloads, and only to make room in memory or on disk (or after each call when ModelCacheSetting is Disabled).
 * - `unloaded` / `unload-failed`: Triton finished unloading a model, or could not.
 * - `invoke-failed`: a request to a loaded model failed.
 * - `python-error`: a python model raised, seen only in the stub's own output (no load or request failure joined it).
 * - `error` / `warning`: any other error or warning line, verbatim.
 */
export type LogEventKind =
  | 'server-started'
  | 'server-stopping'
  | 'load-started'
  | 'load-succeeded'
  | 'load-failed'
  | 'eviction'
  | 'unloaded'
  | 'unload-failed'
  | 'invoke-failed'
  | 'python-error'
  | 'error'
  | 'warning';

/** The kinds that report something going wrong. */
export const FAILURE_KINDS: ReadonlySet<LogEventKind> = new Set<LogEventKind>([
  'load-failed',
  'unload-failed',
  'invoke-failed',
  'python-error',
  'error',
]);

/** A failure whose cause is known, with what to do about it: a row of the one failure table. */
export type { KnownFailure };

export interface LogEvent {
  readonly kind: LogEventKind;
  /** When the first line of the event was written (CloudWatch's timestamp when there is one). */
  readonly time: Date;
  /** The instance that wrote it: the log stream name without its variant, e.g. `i-0a1b2c3d4e5f67890`. */
  readonly instance: string;
  /** The CloudWatch log stream, `<variant>/<instance>`. */
  readonly stream: string;
  /** The TargetModel (the S3 key under the endpoint's prefix), when the log ties the event to one. */
  readonly targetModel?: string;
  /** The Triton model: the TargetModel itself for the model SageMaker loads, or a composing model of its ensemble. */
  readonly tritonModel?: string;
  readonly version?: number;
  /** The key SageMaker loaded the archive under (`/opt/ml/models/<hash>/model`), when the log names it. */
  readonly hash?: string;
  /** What happened, in Triton's words: for failures Triton's reason, verbatim, without the traceback. */
  readonly message: string;
  readonly failure?: KnownFailure;
  /** Python frames, innermost first as pybind11 prints them, or as CPython's traceback prints them. */
  readonly traceback?: readonly string[];
  /** Error lines the backend wrote just before this failure (e.g. TensorRT's own diagnosis), verbatim. */
  readonly context?: readonly string[];
  /** The source file and line in the log prefix, e.g. `model_lifecycle.cc:654`. */
  readonly source?: string;
  /** How many log lines the event is made of. */
  readonly lines: number;
}

/** One line as CloudWatch Logs returns it (or as read from a file: then only `message` and a stream name). */
export interface LogRecord {
  /** The log stream, `<variant>/<instance-id>` on SageMaker. */
  readonly stream: string;
  readonly message: string;
  /** Milliseconds since the epoch; from the Triton prefix when absent. */
  readonly timestamp?: number;
  readonly eventId?: string;
}

/** `AllTraffic/i-0abc` -> `i-0abc`; any other stream name is its own instance. */
export function instanceOfStream(stream: string): string {
  const slash = stream.indexOf('/');
  return slash >= 0 ? stream.slice(slash + 1) : stream;
}
