// The one rule for the names of archive members, shared by the packer (so it never writes a name the extractor
// refuses) and the extractor (so it never writes outside its destination, whatever tool made the archive).

/**
 * Path segments an archive member may have. Deep conda environments reach about 20; Linux's PATH_MAX (4096 bytes)
 * allows about 2,000 one-letter segments, and no model needs them.
 */
export const MAX_PATH_DEPTH = 256;

/**
 * Why `path` (relative, `/`-separated, as stored in an archive) cannot be extracted to the place it names by every
 * extractor, or undefined when it can.
 */
export function archivePathProblem(path: string): string | undefined {
  if (path.includes('\u0000')) return 'contains a NUL byte';
  if (path.includes('\uFFFD')) {
    return 'contains "\uFFFD", which stands for bytes that are not valid UTF-8; give it a UTF-8 name';
  }
  if (path.startsWith('/')) return 'is an absolute path';
  if (/^[A-Za-z]:/.test(path)) return 'starts with a drive letter, which Windows tools read as an absolute path';
  if (path.includes('\\')) return 'contains a backslash, which Windows tools read as a directory separator';
  const segments = path.split('/');
  if (segments.includes('..')) return 'has a ".." segment that would escape the destination';
  if (segments.length > MAX_PATH_DEPTH) {
    return `is ${segments.length} directories deep; a model archive needs far fewer (at most ${MAX_PATH_DEPTH} here)`;
  }
  return undefined;
}
