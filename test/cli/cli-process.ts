// Runs the CLI as a user does: a real process (`node dist/bin/mme-deploy.js`, the bundled CLI the package installs), its
// own signals, exit code and bytes on stdout and stderr; optionally as an unprivileged user (root reads everything, so
// permission errors are tried as `nobody`). The bundle starts in a fraction of the time `node --import tsx
// bin/mme-deploy.ts` takes (which compiles every module it loads, ~2 s on a loaded machine); the jest global setup
// rebuilds it whenever a source is newer, so it runs the code under test; test/bin/bundled-cli.test.ts checks the
// bundle against the sources.
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, truncateSync, watch, writeFileSync } from 'node:fs';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { loadScaled } from '../load-scale';

export const ROOT = join(__dirname, '..', '..');
/** The bundled CLI, built by the jest global setup (test/global-setup.ts) before any test file runs. */
export const BUNDLED_CLI = join(ROOT, 'dist', 'bin', 'mme-deploy.js');

/** The command line that starts the bundled CLI: node, its options and the entry, before the CLI's arguments. */
export function cliCommand(nodeOptions: readonly string[] = []): string[] {
  if (!existsSync(BUNDLED_CLI)) throw new Error(`${BUNDLED_CLI} is missing: run \`npm run build\` (jest's global setup does).`);
  return [process.execPath, ...nodeOptions, BUNDLED_CLI];
}

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
  /**
   * The whole environment (PATH is added, and the python3 the test run resolved as MME_DEPLOY_PYTHON, see
   * test/global-setup.ts: not a version manager's shim that costs a second per start; an unprivileged run looks on PATH).
   */
  readonly env?: NodeJS.ProcessEnv;
  /** Run as uid/gid 65534 when this process is root, so that file permissions apply. */
  readonly unprivileged?: boolean;
  /** Options for node itself, before the CLI's entry (e.g. `--require` of a preload). */
  readonly nodeOptions?: readonly string[];
}

const SIGNAL_NUMBERS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

/** Whether `unprivileged` runs drop privileges (this process is root), or run as this user, whom chmod 000 binds. */
export const DROPS_PRIVILEGES = process.getuid?.() === 0;

const SETPRIV = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'];

let unprivilegedChecked: { reason: string; install: string[] } | undefined | null = null;

/**
 * Why the CLI cannot run as the unprivileged user here, or undefined when it can: that user must be able to start node
 * and read the checkout, which a clone under a directory only its owner may enter (a home directory, a `mktemp -d`
 * folder) does not allow. Checked once, by starting node as that user and reading the CLI's entry.
 */
export function unprivilegedProblem(): { reason: string; install: string[] } | undefined {
  if (unprivilegedChecked !== null) return unprivilegedChecked;
  unprivilegedChecked = undefined;
  if (!DROPS_PRIVILEGES) return undefined;
  const [node, entry] = cliCommand();
  const probe = spawnSync(
    SETPRIV[0]!,
    [...SETPRIV.slice(1), node!, '-e', 'require("node:fs").accessSync(process.argv[1], 4)', entry!],
    { encoding: 'utf8', timeout: loadScaled(60_000) },
  );
  if (probe.error || probe.status !== 0) {
    const error = probe.stderr.split('\n').find((line) => /Error/.test(line)) ?? probe.stderr.trim().split('\n')[0] ?? '';
    const why = probe.error ? `setpriv could not run (${probe.error.message})` : error.trim();
    unprivilegedChecked = {
      reason: `the unprivileged user (uid 65534) cannot run the CLI from ${ROOT}: ${why}`,
      install: ['a checkout every user may read (chmod o+rx on it and o+x on each directory above it), and setpriv (util-linux)'],
    };
  }
  return unprivilegedChecked;
}

export function spawnCli(args: readonly string[], options: SpawnOptions = {}): CliProcess {
  return spawnNode(cliCommand(options.nodeOptions), args, options);
}

/** test/cli/main-runner.cjs: runs the CLI's main from dist/ for several argument vectors in one process. */
const MAIN_RUNNER = join(__dirname, 'main-runner.cjs');

/** What one argument vector of runMainInProcess printed, and the exit code main returned for it. */
export interface MainRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs the CLI's main (dist/lib/cli/program.js, what the bundled CLI's entry calls) for each argument vector, one
 * after the other in ONE real node process, as the unprivileged user if asked: for tables of commands where the
 * process matters only as the user it runs as, not for its exit, its signals or its bytes on stdout (those are
 * spawnCli's). One node start and one module load instead of one per command. Fails with the runner's stderr if it
 * did not print its results or printed anything on its own stderr. A vector given with its `cwd` runs in that
 * directory (the others in `options.cwd`, or in the directory the one before changed into).
 */
export async function runMainInProcess(
  argvs: readonly (readonly string[] | { readonly cwd: string; readonly args: readonly string[] })[],
  options: SpawnOptions = {},
): Promise<MainRun[]> {
  cliCommand(); // dist/ is built
  const run = spawnNode([process.execPath, MAIN_RUNNER], [JSON.stringify(argvs)], options);
  const code = await run.exit;
  // Anything on the runner's own stderr (a stack trace, a warning) is something a command printed past its CliIo.
  if (code !== 0 || run.err() !== '') throw new Error(`test/cli/main-runner.cjs exited ${code}: ${run.err()}`);
  return JSON.parse(run.out()) as MainRun[];
}

function spawnNode(entry: readonly string[], args: readonly string[], options: SpawnOptions): CliProcess {
  const command = [...entry, ...args];
  const unprivileged = options.unprivileged && DROPS_PRIVILEGES;
  const argv = unprivileged ? [...SETPRIV, ...command] : command;
  const python = process.env.MME_DEPLOY_PYTHON;
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: options.cwd ?? ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: options.env?.HOME ?? '/nonexistent',
      ...(python && !unprivileged ? { MME_DEPLOY_PYTHON: python } : {}),
      ...options.env,
    },
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

/**
 * Waits until `condition` holds, polling every 20 ms, failing after `seconds` scaled by the run's load (with the
 * process's stderr, if given).
 */
export async function until(condition: () => boolean, what: string, seconds = 20, run?: CliProcess): Promise<void> {
  const deadline = Date.now() + loadScaled(seconds * 1000);
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${run ? `; stderr: ${run.err()}` : ''}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Resolves as soon as the process has written `text` to stderr (on the output event itself, no polling: a test sends
 * its signal the moment the command says it is under way); rejects if the process ends first or after `seconds`
 * scaled by the run's load, with its stderr.
 */
export function stderrShows(run: CliProcess, text: string, what: string, seconds = 20): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const done = (error?: Error) => {
      clearTimeout(timer);
      run.stderr!.off('data', check);
      run.off('close', ended);
      if (error) reject(error);
      else resolve();
    };
    // Checked after spawnCli's own listener has appended the chunk (listeners run in the order they were added).
    const check = () => {
      if (run.err().includes(text)) done();
    };
    const ended = () => done(new Error(`the process ended before ${what}; stderr: ${run.err()}`));
    const timer = setTimeout(() => done(new Error(`timed out waiting for ${what}; stderr: ${run.err()}`)), loadScaled(seconds * 1000));
    run.stderr!.on('data', check);
    run.on('close', ended);
    check();
  });
}

/**
 * Resolves once `condition` holds, checked on every change inotify reports in `directory` (fs.watch) instead of a poll
 * every 20 ms; fails like `until`.
 */
export function untilIn(directory: string, condition: () => boolean, what: string, seconds = 20, run?: CliProcess): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const done = (error?: Error) => {
      clearTimeout(timer);
      watcher.close();
      if (error) reject(error);
      else resolve();
    };
    const check = () => {
      if (condition()) done();
    };
    const timer = setTimeout(
      () => done(new Error(`timed out waiting for ${what}${run ? `; stderr: ${run.err()}` : ''}`)),
      loadScaled(seconds * 1000),
    );
    // Watched first, then checked: a change between the two is seen either way.
    const watcher = watch(directory, check);
    check();
  });
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

/** A valid python model repository in `dir` whose weights are a sparse file of `size` bytes (zeros: no disk, but real
 * packing work), for commands to be interrupted while they pack it. */
export function sparseRepository(dir: string, name: string, size: number): string {
  const root = join(dir, name);
  mkdirSync(join(root, 'm', '1'), { recursive: true });
  writeFileSync(join(root, 'm', 'config.pbtxt'), 'name: "m"\nbackend: "python"\ninstance_group [ { kind: KIND_CPU } ]\n');
  writeFileSync(join(root, 'm', '1', 'model.py'), 'class TritonPythonModel:\n    def execute(self, requests):\n        return []\n');
  writeFileSync(join(root, 'm', '1', 'weights.bin'), '');
  truncateSync(join(root, 'm', '1', 'weights.bin'), size);
  return root;
}
