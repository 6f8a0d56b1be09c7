// What a command needs from the outside world, so commands can be run in-process by tests.

export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Whether stdout is a terminal (progress bars, colours). */
  readonly isTTY: boolean;
  /** Reads one line of user input, for confirmations; undefined when stdin is not interactive. */
  readonly prompt?: (question: string) => Promise<string>;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
}

/** Exit codes shared by every command. */
export const ExitCode = {
  Ok: 0,
  /** The input was understood and found invalid, or the remote operation failed. */
  Failure: 1,
  /** Usage or I/O error: a missing path, a bad flag, an unreadable file. */
  Usage: 2,
} as const;

/** A problem the user can fix, reported as one message without a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = ExitCode.Failure,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** A usage or I/O problem: exit code 2. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, ExitCode.Usage);
    this.name = 'UsageError';
  }
}

export function processIo(): CliIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    isTTY: Boolean(process.stdout.isTTY),
    env: process.env,
    cwd: process.cwd(),
    prompt: process.stdin.isTTY
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
