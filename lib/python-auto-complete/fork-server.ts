// One python3 that starts each model's process for `--run-python` by forking itself (FORK_SERVER in stand-in.ts):
// the interpreter starts and imports numpy once instead of once per model (measured: 0.34 s of CPU per model as a
// process of its own, 0.08 s forked). Each model still runs in a process of its own, with its own stdin, stdout,
// stderr, working directory and timeout, so a model that exits, crashes, hangs or prints cannot touch another model's
// answer. What the server does not answer (no fork on this platform, the server gone or stuck) the caller runs the
// old way, one python per model (spawn-python.ts).

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { constants } from 'node:os';
import { isAbsolute } from 'node:path';
import type { PythonRun } from './spawn-python';

export interface ForkedJob {
  /** The model's working directory. */
  readonly cwd: string;
  /** The runner's job (what RUNNER reads on its stdin). */
  readonly input: string;
  readonly timeoutMs: number;
  /** stderr kept, in bytes (a crash's last lines are what a message quotes). */
  readonly stderrLimit: number;
}

/**
 * How long past a job's own timeout the server may take to answer before it counts as stuck. The server kills the
 * model at its timeout and answers at once; this only catches a server that cannot (stopped by a model, starved).
 */
export const SERVER_GRACE_MS = 15_000;

/** What a forked process did, as spawn-python reports a process of its own; undefined: run it the old way. */
export type ForkedOutcome = PythonRun | undefined;

interface Answer {
  /** The server's first line: its interpreter's own path (sys.executable), and no id. */
  readonly executable?: string;
  readonly id: number;
  readonly unavailable?: boolean;
  readonly timeout?: boolean;
  readonly exit?: number;
  readonly signal?: number;
  readonly stdout?: string;
  readonly stderr?: string;
}

/** The name node gives a signal (`SIGKILL`) when it reports how a process of its own ended. */
export function signalName(signal: number): string {
  for (const [name, value] of Object.entries(constants.signals)) if (value === signal) return name;
  return String(signal);
}

export class ForkServer {
  /**
   * Starts `python -B server` now: its start-up and numpy's import overlap the caller's own work.
   * @param graceMs how long past a job's timeout an answer may take before the server counts as stuck
   */
  static start(python: string, server: string, env: NodeJS.ProcessEnv, graceMs = SERVER_GRACE_MS): ForkServer {
    return new ForkServer(python, server, env, graceMs);
  }

  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting = new Map<number, { resolve: (run: ForkedOutcome) => void; timer: NodeJS.Timeout }>();
  private readonly closed: Promise<void>;
  private nextId = 0;
  private broken = false;
  private ownPath: string | undefined;
  private ending = false;

  private constructor(python: string, server: string, env: NodeJS.ProcessEnv, private readonly graceMs: number) {
    // Its own process group (detached), so that giving up on it stops it with every model it started.
    this.child = spawn(python, ['-B', server], { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let pending = '';
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (text: string) => {
      pending += text;
      for (let newline = pending.indexOf('\n'); newline >= 0; newline = pending.indexOf('\n')) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        this.answer(line);
      }
    });
    this.child.stderr.resume(); // the server's own warnings, if any: read so that it never blocks writing them
    this.child.stdin.on('error', () => undefined); // the server is gone: its close handler says so
    this.closed = new Promise((resolve) => {
      this.child.on('error', () => {
        this.giveUp();
        resolve();
      });
      this.child.on('close', () => {
        // Ended by close() with every job answered: what the models left running is theirs, as without a server.
        if (this.ending && this.waiting.size === 0) this.broken = true;
        else this.giveUp();
        resolve();
      });
    });
  }

  /**
   * Runs one job in a forked process. Undefined when the server cannot (the caller then starts a python itself);
   * when `signal` aborts, the process is killed and the outcome is node's AbortError, as for a process of its own.
   */
  run(job: ForkedJob, signal?: AbortSignal): Promise<ForkedOutcome> {
    if (signal?.aborted) return Promise.resolve(abortRun(signal));
    if (this.broken) return Promise.resolve(undefined);
    const id = this.nextId++;
    return new Promise((resolve) => {
      const onAbort = () => {
        this.settle(id, abortRun(signal));
        this.send({ cancel: id });
      };
      // A server that does not answer in time is stuck: its jobs are run the old way.
      const timer = setTimeout(() => this.giveUp(), job.timeoutMs + this.graceMs);
      this.waiting.set(id, {
        resolve: (run) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(run);
        },
        timer,
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      this.send({ id, cwd: job.cwd, timeout_ms: job.timeoutMs, stderr_limit: job.stderrLimit, input: job.input });
    });
  }

  /**
   * The interpreter's own path (sys.executable) as the server reported it when it started, else undefined: what runs
   * a model the server cannot, without asking a version manager's shim again (resolveInterpreter).
   */
  get executable(): string | undefined {
    return this.ownPath;
  }

  /** Ends the server (it kills any model still running) and waits for it to exit. */
  async close(): Promise<void> {
    this.ending = true;
    this.child.stdin.end();
    const stuck = setTimeout(() => this.kill(), this.graceMs);
    await this.closed;
    clearTimeout(stuck);
  }

  private send(request: object): void {
    if (!this.broken && !this.child.stdin.destroyed && this.child.stdin.writable) this.child.stdin.write(`${JSON.stringify(request)}\n`);
  }

  private answer(line: string): void {
    let answer: Answer;
    try {
      answer = JSON.parse(line) as Answer;
    } catch {
      this.giveUp();
      return;
    }
    if (typeof answer.id !== 'number') {
      if (typeof answer.executable === 'string' && isAbsolute(answer.executable)) this.ownPath = answer.executable;
    } else if (answer.unavailable) this.settle(answer.id, undefined);
    else if (answer.timeout) this.settle(answer.id, { kind: 'timeout' });
    else {
      this.settle(answer.id, {
        kind: 'closed',
        stdout: Buffer.from(answer.stdout ?? '', 'base64'),
        stderr: Buffer.from(answer.stderr ?? '', 'base64').toString(),
        exit: answer.signal !== undefined ? signalName(answer.signal) : String(answer.exit),
      });
    }
  }

  private settle(id: number, run: ForkedOutcome): void {
    const waiter = this.waiting.get(id);
    if (!waiter) return; // cancelled, or given up on
    this.waiting.delete(id);
    clearTimeout(waiter.timer);
    waiter.resolve(run);
  }

  /** The server failed (gone, stuck, unreadable): every job it has not answered is run the old way. */
  private giveUp(): void {
    if (!this.broken) {
      this.broken = true;
      this.kill();
    }
    for (const id of [...this.waiting.keys()]) this.settle(id, undefined);
  }

  /**
   * Stops the server and every process of its group: the models it started and what they started. Also when the
   * server itself is gone (a model killed it): the models it had started must not run on unwatched.
   */
  private kill(): void {
    if (this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      // ESRCH: nothing of the group is left
    }
  }
}

/** What a process of its own reports when `signal` stops it: node's AbortError. */
function abortRun(signal: AbortSignal | undefined): PythonRun {
  const error = Object.assign(new Error('The operation was aborted'), {
    name: 'AbortError',
    code: 'ABORT_ERR',
    cause: signal?.reason,
  }) as NodeJS.ErrnoException;
  return { kind: 'spawn-error', error };
}
