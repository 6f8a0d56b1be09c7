// Types of bench/endpoint-log-fixture.js, for the tests that use it.
import type { LogEventKind, LogRecord } from '../lib/logs/log-event';

export interface ExpectedEvent {
  readonly kind: LogEventKind;
  /** Milliseconds since the epoch. */
  readonly time: number;
  readonly instance: string;
  readonly targetModel?: string;
  readonly tritonModel?: string;
  /** The KnownFailure code. */
  readonly failure?: string;
  readonly message?: string;
}

export function generateEndpointLog(options?: {
  instances?: number;
  lines?: number;
  escaped?: boolean;
  seed?: number;
  start?: number;
}): { records: Required<Pick<LogRecord, 'stream' | 'message' | 'timestamp' | 'eventId'>>[]; expected: ExpectedEvent[] };
