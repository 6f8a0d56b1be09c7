// Paths inside the mme-deploy package, the same whether the constructs run from source (tsx, ts-jest) or from dist/.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

let root: string | undefined;

/** The absolute path of `relative` under the mme-deploy package root (the directory of its package.json). */
export function projectPath(...relative: string[]): string {
  root ??= findRoot(__dirname);
  return join(root, ...relative);
}

function findRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string };
      if (pkg.name === 'mme-deploy') return dir;
    }
    if (dirname(dir) === dir) return dirname(start);
  }
}
