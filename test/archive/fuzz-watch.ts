// Runs fuzz cases in a child process watched case by case, for the fuzz tests of the archive reader: a busy loop
// starves timers in its own process, so only a watcher outside it can see a hang. The child reports each case over
// IPC once it is done (FuzzMessage); a case still running after the deadline is a hang, the child is killed and the
// cases after it run in a new child. The child leads its own process group, and the whole group is killed: what the
// child started (the differential fuzz's shells and their tools) does not outlive it.

import { fork } from 'node:child_process';
import { loadScaled } from '../load-scale';

export type FuzzMessage =
  | { readonly finished: number; readonly outcome: string; readonly failures: string[] }
  | { readonly done: true };

export interface FuzzRun {
  readonly failures: string[];
  /** How many cases ended with each outcome (`accepted`, `rejected`, ...). */
  readonly outcomes: Record<string, number>;
  /** The first case not yet reported. */
  next: number;
}

export interface WatchOptions {
  /** The runner module, run with tsx (its CommonJS hook): `runner <...args> <start>`. */
  readonly runner: string;
  readonly args: readonly string[];
  /** How many cases there are: the run ends before case `cases`. */
  readonly cases: number;
  /**
   * How long one case may run, in ms on a quiet machine: scaled by the run's load factor (MME_TEST_TIMEOUT_SCALE,
   * set by jest.config.js), as every timeout of the suite is, so a busy machine is not taken for a hang.
   */
  readonly deadlineMs: number;
  /** Stops after this many failures. @default 10 */
  readonly maxFailures?: number;
  /** Describes case `index` for a report about a case the runner could not report itself. */
  readonly describe: (index: number) => string;
}

/** The deadline of one case on this machine: `quietMs` times the run's load factor. */
export function scaledDeadline(quietMs: number): number {
  return loadScaled(quietMs);
}

/** Runs every case, a new child after each hang or crash; resolves with what was found. */
export async function runWatched(options: WatchOptions): Promise<FuzzRun> {
  const run: FuzzRun = { failures: [], outcomes: {}, next: 0 };
  while (run.next < options.cases && run.failures.length < (options.maxFailures ?? 10)) await runFrom(options, run);
  return run;
}

/** Runs cases run.next.. in a child; resolves when all are done, or when one hangs or kills it (then the child is gone). */
function runFrom(options: WatchOptions, run: FuzzRun): Promise<void> {
  const deadline = scaledDeadline(options.deadlineMs);
  return new Promise((resolve) => {
    const child = fork(options.runner, [...options.args, String(run.next)], {
      // tsx's require hook alone: the runners are CommonJS and import nothing lazily, and without tsx's ESM loader
      // (a worker thread and its hooks) a runner starts with ~0.35 s of CPU instead of ~0.85 s (measured on 2 cores).
      execArgv: ['--require', 'tsx/cjs'],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      detached: true,
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    // The case under way is always run.next: the runner reports each case, delivered, before it starts the next.
    const watch = () => {
      clearTimeout(timer);
      timer = setTimeout(() => finish(`HANG: ${options.describe(run.next)} still running after ${deadline} ms`, run.next + 1), deadline);
    };
    let exited = false;
    const finish = (failure?: string, next = run.next) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (failure) run.failures.push(failure);
      run.next = next;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // the group is gone already
      }
      // Resolved once the child is reaped: its CPU time (and its waited-for children's) counts for this test file,
      // not for whichever file the worker runs next.
      if (exited) resolve();
    };
    watch();
    child.on('message', (message: FuzzMessage) => {
      if ('finished' in message) {
        run.failures.push(...message.failures);
        run.outcomes[message.outcome] = (run.outcomes[message.outcome] ?? 0) + 1;
        run.next = message.finished + 1;
        watch();
      } else {
        finish();
      }
    });
    child.on('exit', (code, signal) => {
      exited = true;
      if (settled) resolve();
      else if (run.next < options.cases) {
        finish(`STALL: the runner exited (${code ?? signal}) during ${options.describe(run.next)}: ${stderr.trim()}`, run.next + 1);
      } else finish();
    });
  });
}

/** Sends a message to the watching parent and waits until it is delivered. */
export function report(message: FuzzMessage): Promise<void> {
  // The child ends with its watcher (killed, or stopped by Ctrl-C, which a child with a group of its own does not see).
  if (process.listenerCount('disconnect') === 0) process.once('disconnect', () => process.exit());
  return new Promise<void>((resolve) => process.send!(message, () => resolve()));
}
