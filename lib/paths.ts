// Path arithmetic the whole library shares. A bottom module: it imports nothing of the library, only node:path.

import { isAbsolute, relative, sep } from 'node:path';

/**
 * Whether `path` is `dir` itself or lies below it, by path arithmetic only (no file system access, links are not
 * followed: pass real paths when links matter). A name that merely starts with `..` (`..data`) is inside.
 */
export function isInside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}
