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

export function runPython(command: string, args: readonly string[], options: PythonRunOptions): Promise<PythonRun> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      env: options.env,
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const stdout: Buffer[] = [];
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, options.timeoutMs);
    child.stdout.on('data', (b: Buffer) => stdout.push(b));
    child.stderr.on('data', (b: Buffer) => {
      if (stderr.length < options.stderrLimit) stderr += b.toString();
    });
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ kind: 'spawn-error', error });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (timedOut) resolve({ kind: 'timeout' });
      else resolve({ kind: 'closed', stdout: Buffer.concat(stdout), stderr, exit: String(signal ?? code) });
    });
    child.stdin.on('error', () => undefined); // python may exit before reading: the close handler reports it
    child.stdin.end(options.input);
  });
}
