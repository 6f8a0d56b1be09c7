// The CLI's one handler of process signals. Ctrl-C (SIGINT), SIGTERM (systemd, docker stop, kill) and SIGHUP (a
// closed terminal or SSH session) all cancel a long command the same way: the first aborts its AbortSignal, so the
// library stops, removes what it was writing and aborts what it was uploading, and the command exits 130; a second
// one quits at once, after printing whatever is left to clean up by hand. The library never sees the signals.

import { type CliIo, note } from './io';
import { ExitCode } from './exit-codes';

export const CANCEL_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export interface Cancellation {
  /** Aborted by the first signal. */
  readonly signal: AbortSignal;
  /**
   * Registers what to print if a second signal quits before the cleanup finished: the exact command that removes
   * what may be left (an open multipart upload), or undefined when nothing is.
   */
  onQuit(describe: () => string | undefined): void;
}

export interface CancellationOptions {
  /** Printed on stderr when the first signal arrives (what is being cleaned up). @default - nothing */
  readonly notice?: string;
  /** How to quit on the second signal (tests replace it). @default process.exit */
  readonly exit?: (code: number) => void;
}

/** The signal handlers of the withCancellation calls running: while one is, it alone answers the signals. */
const running = new Set<(name: NodeJS.Signals) => void>();

/**
 * Makes a signal that arrives while no command listens (the first moments, while the command's modules load; a
 * command that is not cancellable) end the process with 130, as every interruption does, rather than with the
 * signal's default status (143 for SIGTERM, 129 for SIGHUP). The CLI entry calls it first thing; once per process.
 */
export function exitOnSignalsOutsideCommands(exit: (code: number) => void = (code) => process.exit(code)): void {
  const onSignal = () => {
    if (running.size === 0) exit(ExitCode.Interrupted);
  };
  for (const name of CANCEL_SIGNALS) process.on(name, onSignal);
  // A reader that stops early (`mme-deploy --help | head -1`) closes the pipe: node reports EPIPE as an 'error' event,
  // which, unhandled, crashes with a stack trace. Nobody reads any more: a finished command exits 0 at once (what
  // it printed was read as far as wanted), a running one is cancelled as by SIGPIPE and cleans up.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    ignoreWriteErrors();
    if (running.size === 0) exit(ExitCode.Ok);
    for (const onSignal of running) onSignal('SIGPIPE');
  });
}

/** Runs `action` with a Cancellation that the first of SIGINT, SIGTERM and SIGHUP aborts. */
export async function withCancellation<T>(
  io: CliIo,
  options: CancellationOptions,
  action: (cancellation: Cancellation) => Promise<T>,
): Promise<T> {
  const abort = new AbortController();
  let describeLeftover: (() => string | undefined) | undefined;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const onSignal = (name: NodeJS.Signals) => {
    // After SIGHUP the terminal may be gone (after SIGPIPE stdout is): a failed write must not turn the cleanup into a crash.
    if (name === 'SIGHUP' || name === 'SIGPIPE') ignoreWriteErrors();
    if (!abort.signal.aborted) {
      if (options.notice) note(io, options.notice);
      abort.abort(new Error(`received ${name}`));
      return;
    }
    const leftover = describeLeftover?.();
    io.stderr(`\nmme-deploy: quit before cleaning up.${leftover ? ` ${leftover}` : ''}\n`);
    exit(ExitCode.Interrupted);
  };
  for (const name of CANCEL_SIGNALS) process.on(name, onSignal);
  running.add(onSignal);
  try {
    return await action({ signal: abort.signal, onQuit: (describe) => (describeLeftover = describe) });
  } finally {
    running.delete(onSignal);
    for (const name of CANCEL_SIGNALS) process.removeListener(name, onSignal);
  }
}

let writeErrorsIgnored = false;

function ignoreWriteErrors(): void {
  if (writeErrorsIgnored) return;
  writeErrorsIgnored = true;
  process.stdout.on('error', () => undefined);
  process.stderr.on('error', () => undefined);
}
