// The repository and archives the push tests start from.

import { execFileSync } from 'node:child_process';
import { cpSync } from 'node:fs';
import { join } from 'node:path';

/** The one-model python repository (model add_one, input INPUT0). */
export const ADDER = join(__dirname, '..', 'constructs', 'fixtures', 'repositories', 'add_one_python');

/** A copy of ADDER at `<dir>/adder`. */
export function copyAdder(dir: string): string {
  const root = join(dir, 'adder');
  cpSync(ADDER, root, { recursive: true });
  return root;
}

/** `root` packed by GNU tar into `<dir>/<name>`, as a user would make the archive. */
export function tarArchive(dir: string, root: string, name: string): string {
  const archive = join(dir, name);
  execFileSync('tar', ['-C', root, '-czf', archive, '.']);
  return archive;
}
