// Runs the CLI in-process with captured output, as a user would call it.
import { main } from '../../lib/cli/program';
import type { CliIo } from '../../lib/cli/io';

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export async function runCli(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: (s) => {
      stdout += s;
    },
    stderr: (s) => {
      stderr += s;
    },
    isTTY: false,
    env: options.env ?? {},
    cwd: options.cwd ?? process.cwd(),
  };
  const code = await main(args, io);
  return { code, stdout, stderr };
}

/** A CliIo that records what a command prints, for tests that call a command's module directly. */
export interface CapturedIo extends CliIo {
  readonly out: () => string;
  readonly err: () => string;
}

export function captureIo(options: { cwd?: string; env?: NodeJS.ProcessEnv; answer?: string } = {}): CapturedIo {
  let out = '';
  let err = '';
  return {
    stdout: (t) => (out += t),
    stderr: (t) => (err += t),
    isTTY: false,
    env: options.env ?? process.env,
    cwd: options.cwd ?? process.cwd(),
    ...(options.answer !== undefined ? { prompt: async () => options.answer! } : {}),
    out: () => out,
    err: () => err,
  };
}
