// What a command needs from the outside world, so commands can be run in-process by tests.

import { isatty } from 'node:tty';

export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Whether stdout is a terminal (progress bars, colours). */
  readonly isTTY: boolean;
  /**
   * Rewrites the one status line at the bottom of the terminal (progress), '' clears it; undefined when stderr is
   * not a terminal, so nothing of the kind reaches a pipe or a log file.
   */
  readonly status?: (line: string) => void;
  /** Reads one line of user input, for confirmations; undefined when stdin is not interactive. */
  readonly prompt?: (question: string) => Promise<string>;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** `--quiet`: no progress and no notes on stderr (`note`); errors and warnings still print. */
  readonly quiet?: boolean;
}

/** A note on stderr (what was done, what to know, how long it took) that `--quiet` leaves out; never an error. */
export function note(io: CliIo, text: string): void {
  if (!io.quiet) io.stderr(text);
}

// The CLI's own errors and the exit codes, for the commands that import everything they need from here.
export { CliError, UsageError } from './cli-errors';
export { ExitCode } from './exit-codes';

export function processIo(): CliIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    isTTY: Boolean(process.stdout.isTTY),
    // Carriage return, the line, then erase to the end of the line (ECMA-48 EL).
    status: process.stderr.isTTY ? (line) => process.stderr.write(`\r${line}\x1b[K`) : undefined,
    env: process.env,
    cwd: process.cwd(),
    // isatty(0), not process.stdin.isTTY: reading that property makes node build the stdin stream, about 5 ms of
    // every start (bench/startup.js), for the few commands that ever ask. Both say whether fd 0 is a terminal
    // (nodejs/node:lib/internal/bootstrap/switches/is_main_thread.js:140-147, getStdin: a tty.ReadStream when it is).
    prompt: isatty(0)
      ? async (question) => {
          const readline = await import('node:readline/promises');
          const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
          try {
            return await rl.question(question);
          } finally {
            rl.close();
          }
        }
      : undefined,
  };
}
