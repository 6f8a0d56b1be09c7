// Which python3 runs: the one MME_DEPLOY_PYTHON names, else `python3` on PATH. Shared by the model.py syntax check
// and `--run-python`, so that both use the same interpreter and a run asks for its path at most once.

import { spawnSync } from 'node:child_process';
import { isAbsolute } from 'node:path';

/** The interpreter as named: `python` when given, else MME_DEPLOY_PYTHON, else `python3`. */
export function pythonName(python?: string, env: NodeJS.ProcessEnv = process.env): string {
  return python ?? env.MME_DEPLOY_PYTHON ?? 'python3';
}

/**
 * The interpreter's own path, asked once for a run that starts it several times: `python3` on PATH is often a shell
 * shim (pyenv, asdf) that takes about a second to pick the interpreter, every time it starts. When it cannot be
 * asked, the name as given: starting it then reports the problem.
 */
export function resolveInterpreter(python: string): string {
  const asked = spawnSync(python, ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8', timeout: 30_000 });
  const executable = asked.status === 0 ? asked.stdout.trim() : '';
  return isAbsolute(executable) ? executable : python;
}

/** Interpreters already asked in this process, by name and PATH: a shim's second of start-up is paid once. */
const known = new Map<string, string>();

const keyOf = (python: string, env: NodeJS.ProcessEnv) => `${python}\0${env.PATH ?? ''}`;

/** The interpreter's own path when an earlier run learnt it (`remember`), else undefined. */
export function knownInterpreter(python: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return known.get(keyOf(python, env));
}

/** Records `executable` (sys.executable) as what `python` names on env's PATH; `undefined` forgets it. */
export function rememberInterpreter(python: string, env: NodeJS.ProcessEnv, executable: string | undefined): void {
  if (executable !== undefined && isAbsolute(executable)) known.set(keyOf(python, env), executable);
  else known.delete(keyOf(python, env));
}
