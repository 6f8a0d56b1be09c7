// Builds small model repositories in a temp directory for rule tests: `{ 'm/config.pbtxt': '...', 'm/1/': null }`.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export type RepoFiles = Record<string, string | Buffer | null>;

const created: string[] = [];

/** Writes the files (a key ending in `/` or a null value is a directory) and returns the repository path. */
export function makeRepo(files: RepoFiles): string {
  const root = mkdtempSync(join(tmpdir(), 'mme-repo-'));
  created.push(root);
  for (const [path, content] of Object.entries(files)) {
    const full = join(root, path);
    if (content === null || path.endsWith('/')) {
      mkdirSync(full, { recursive: true });
    } else {
      mkdirSync(dirname(full), { recursive: true });
      writeFileSync(full, content);
    }
  }
  return root;
}

export function removeRepos(): void {
  for (const root of created.splice(0)) rmSync(root, { recursive: true, force: true });
}
