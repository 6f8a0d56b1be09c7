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

// The CLI's own errors and the exit codes, for the commands that import everything they need from here.
export { CliError, UsageError } from './cli-errors';
export { ExitCode } from './exit-codes';

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
