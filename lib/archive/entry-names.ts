// The one rule for the names of archive members, shared by the packer (so it never writes a name the extractor
// refuses) and the extractor (so it never writes outside its destination, whatever tool made the archive).

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
  if (path.split('/').includes('..')) return 'has a ".." segment that would escape the destination';
  return undefined;
}
