// Runs the CLI as a user does: a real process (`node --import tsx bin/mme-deploy.ts`), its own signals, exit code and
// bytes on stdout and stderr; optionally as an unprivileged user (root reads everything, so permission errors are
// tried as `nobody`).
import { ChildProcess, spawn } from 'node:child_process';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const ROOT = join(__dirname, '..', '..');
const TSX = pathToFileURL(require.resolve('tsx', { paths: [ROOT] })).href;

export interface CliProcess extends ChildProcess {
  /** Everything written to stdout so far, as bytes. */
  outBytes(): Buffer;
  out(): string;
  err(): string;
  /** The exit code, or 128 + the signal number when a signal ended the process (as a shell reports it). */
  readonly exit: Promise<number>;
}

export interface SpawnOptions {
  readonly cwd?: string;
  /** The whole environment (PATH is added). */
  readonly env?: NodeJS.ProcessEnv;
  /** Run as uid/gid 65534 when this process is root, so that file permissions apply. */
  readonly unprivileged?: boolean;
}

const SIGNAL_NUMBERS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

/** Whether `unprivileged` runs drop privileges (this process is root), or run as this user, whom chmod 000 binds. */
export const DROPS_PRIVILEGES = process.getuid?.() === 0;

export function spawnCli(args: readonly string[], options: SpawnOptions = {}): CliProcess {
  // tsx by its file URL: `--import tsx` would be resolved from the working directory, which may be anywhere.
  const command = [process.execPath, '--import', TSX, join(ROOT, 'bin', 'mme-deploy.ts'), ...args];
  const argv = options.unprivileged && DROPS_PRIVILEGES
    ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', ...command]
    : command;
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: options.cwd ?? ROOT,
    env: { PATH: process.env.PATH, HOME: options.env?.HOME ?? '/nonexistent', ...options.env },
  });
  const out: Buffer[] = [];
  let err = '';
  child.stdout!.on('data', (d: Buffer) => out.push(d));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const exit = new Promise<number>((resolve) =>
    child.on('close', (code, signal) => resolve(code ?? 128 + (SIGNAL_NUMBERS[signal ?? ''] ?? 0))),
  );
  return Object.assign(child, {
    outBytes: () => Buffer.concat(out),
    out: () => Buffer.concat(out).toString('utf8'),
    err: () => err,
    exit,
  });
}

/** Waits until `condition` holds, polling every 20 ms, failing after `seconds` (with the process's stderr, if given). */
export async function until(condition: () => boolean, what: string, seconds = 20, run?: CliProcess): Promise<void> {
  for (const started = Date.now(); !condition(); ) {
    if (Date.now() - started > seconds * 1000) throw new Error(`timed out waiting for ${what}${run ? `; stderr: ${run.err()}` : ''}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** An HTTP stand-in whose handler decides per request; requests it holds stay open until the test ends. */
export async function standIn(
  handle: (req: IncomingMessage, body: Buffer, res: ServerResponse) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, Buffer.concat(chunks), res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
