// The CLI's one handler of process signals. Ctrl-C (SIGINT), SIGTERM (systemd, docker stop, kill) and SIGHUP (a
// closed terminal or SSH session) all cancel a long command the same way: the first aborts its AbortSignal, so the
// library stops, removes what it was writing and aborts what it was uploading, and the command exits 130; a second
// one quits at once, after printing whatever is left to clean up by hand. The library never sees the signals.

import type { CliIo } from './io';
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
    // After SIGHUP the terminal may be gone: a failed write must not turn the cleanup into a crash.
    if (name === 'SIGHUP') ignoreWriteErrors();
    if (!abort.signal.aborted) {
      if (options.notice) io.stderr(options.notice);
      abort.abort(new Error(`received ${name}`));
      return;
    }
    const leftover = describeLeftover?.();
    io.stderr(`\nmme-deploy: quit before cleaning up.${leftover ? ` ${leftover}` : ''}\n`);
    exit(ExitCode.Interrupted);
  };
  for (const name of CANCEL_SIGNALS) process.on(name, onSignal);
  try {
    return await action({ signal: abort.signal, onQuit: (describe) => (describeLeftover = describe) });
  } finally {
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
