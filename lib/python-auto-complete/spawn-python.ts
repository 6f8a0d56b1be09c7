// One python3 child for the runners of this folder (the model.py syntax check, `--run-python`): the request on stdin,
// the answer on stdout, a bounded stderr tail, killed after a timeout. What the outcome means is the caller's.

import { spawn } from 'node:child_process';

export interface PythonRunOptions {
  readonly env: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Written to stdin, which is then closed. */
  readonly input: string;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** stderr kept, in characters (a crash's last lines are what a message quotes). */
  readonly stderrLimit: number;
}

export type PythonRun =
  | { readonly kind: 'closed'; readonly stdout: Buffer; readonly stderr: string; readonly exit: string }
  | { readonly kind: 'timeout' }
  /** The child could not be started, or `signal` aborted it (error.name 'AbortError'). */
  | { readonly kind: 'spawn-error'; readonly error: NodeJS.ErrnoException };

/** A python child started before its whole request is known: it reads what is written while the caller goes on. */
export interface StartedPython {
  /** Sends a part of the request (queued while the pipe is full). */
  write(chunk: Buffer | string): void;
  /** Closes stdin and starts the timeout; resolves when the child has exited. */
  end(): Promise<PythonRun>;
  /** Stops the child: its outcome is no longer wanted. */
  kill(): void;
}

export function runPython(command: string, args: readonly string[], options: PythonRunOptions): Promise<PythonRun> {
  const child = startPython(command, args, options);
  child.write(options.input);
  return child.end();
}

/**
 * Starts the child now: its start-up (a second for a pyenv shim) and its work overlap the caller's own. The timeout
 * counts from `end`, when the request is complete.
 */
export function startPython(command: string, args: readonly string[], options: Omit<PythonRunOptions, 'input'>): StartedPython {
  const child = spawn(command, args, {
    env: options.env,
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    stdio: ['pipe', 'pipe', 'pipe'],
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const stdout: Buffer[] = [];
  let stderr = '';
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  let settled = false;
  child.stdout.on('data', (b: Buffer) => stdout.push(b));
  child.stderr.on('data', (b: Buffer) => {
    if (stderr.length < options.stderrLimit) stderr += b.toString();
  });
  child.stdin.on('error', () => undefined); // python may exit before reading: the close handler reports it
  const outcome = new Promise<PythonRun>((resolve) => {
    child.on('error', (error: NodeJS.ErrnoException) => {
      settled = true;
      clearTimeout(timer);
      resolve({ kind: 'spawn-error', error });
    });
    child.on('close', (code, signal) => {
      settled = true;
      clearTimeout(timer);
      if (timedOut) resolve({ kind: 'timeout' });
      else resolve({ kind: 'closed', stdout: Buffer.concat(stdout), stderr, exit: String(signal ?? code) });
    });
  });
  let ended = false;
  return {
    write(chunk) {
      if (!ended && !child.stdin.destroyed) child.stdin.write(chunk);
    },
    end() {
      if (!ended) {
        ended = true;
        child.stdin.end();
        // A child that is gone already (a failed start, an early exit) needs no timer keeping this process alive.
        if (!settled) timer = setTimeout(() => {
          timedOut = true;
          child.kill('SIGKILL');
        }, options.timeoutMs);
      }
      return outcome;
    },
    kill() {
      ended = true;
      child.stdin.destroy();
      if (!settled) child.kill('SIGKILL');
    },
  };
}
