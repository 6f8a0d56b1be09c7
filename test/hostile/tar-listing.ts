// GNU tar's verbose listing (`LC_ALL=C tar --numeric-owner --quoting-style=escape -tvzf`) read back as entries, and
// our reader's entries compared with it: names, kinds and file sizes, after the differences that are known and meant.

/** One entry as a listing shows it: its path (no `./` before, no `/` after), kind letter and size (files only). */
export interface ListedEntry {
  readonly path: string;
  /** `-` file, `d` directory, `l` symbolic link, `h` hard link, `c`/`b` devices, `p` FIFO, `C` contiguous, `?` other. */
  readonly kind: string;
  readonly size: number;
}

// mode (10 letters), uid/gid, size (or major,minor), date, time, name [-> target | link to target]
const LINE = /^(\S)\S{9} \S+ +(\S+) (\S+) (\S+) (.*)$/;

export function gnuListing(stdout: string): ListedEntry[] {
  const entries: ListedEntry[] = [];
  for (const line of stdout.split('\n')) {
    if (line === '') continue;
    const match = LINE.exec(line);
    if (!match) {
      entries.push({ path: line, kind: '?', size: 0 });
      continue;
    }
    const [, kind, size, , , rest] = match as unknown as [string, string, string, string, string, string];
    let name = rest;
    // A type flag GNU tar does not know: `?` and its name followed by "unknown file type 'Z'" (src/list.c).
    if (kind === '?') name = rest.replace(/ unknown file type '.*'$/, '');
    else if (kind === 'l') name = rest.split(' -> ')[0]!;
    else if (kind === 'h') name = rest.split(' link to ')[0]!;
    entries.push({ path: normalize(name), kind, size: kind === '-' ? Number(size) : 0 });
  }
  return entries;
}

function normalize(raw: string): string {
  let path = raw;
  while (path.startsWith('./')) path = path.slice(2);
  while (path.endsWith('/') && path.length > 1) path = path.slice(0, -1);
  return path === '' || path === '.' ? '.' : path;
}

/**
 * Names compared only when printable ASCII without spaces or backslashes on both sides: GNU tar escapes the others
 * (`\\303`, `\\n`) and its ` -> ` cannot be told from a name holding it.
 */
const PLAIN = /^[!-[\]-~]+$/;

export interface EntryComparison {
  /** Whether the names were plain enough to compare. */
  readonly compared: boolean;
  /** What differs, or undefined. */
  readonly difference?: string;
}

/**
 * Our entries against GNU tar's listing of the same archive. Known differences, each deliberate:
 * - Sparse members (GNU.sparse.* records, or the old GNU type flag 'S'): our reader reports them as 'other' without
 *   decoding their sparse map, and the extractor refuses them (a model archive has no reason to hold one); GNU tar
 *   lists them as files of their real size, and refuses one whose map is malformed. Ours (`s`) match a GNU tar file
 *   of any size, and reading an archive with one that both refuse is not counted against us (extracting it would be).
 *   Sparse records before a member that is no regular file make nothing sparse here (a directory stays one, as in GNU
 *   tar's listing); GNU tar fails on some such members (it looks for a sparse map): reading those is not counted
 *   either.
 * - An 'x' header's empty `path=` deletes the override (POSIX pax: "a zero length <value> shall delete any
 *   ... previously entered extended header value"), as libarchive reads it (bsdtar lists the header's name); GNU tar
 *   sets the name to "" (src/xheader.c path_decoder), lists it without a name and fails its extraction ("Substituting
 *   `.' for empty member name"): an entry GNU tar lists without a name is compared as ours.
 */
export function compareEntries(ours: readonly ListedEntry[], gnu: readonly ListedEntry[]): EntryComparison {
  const all = [...ours, ...gnu];
  if (!all.every((e) => PLAIN.test(e.path))) return { compared: false };
  const show = (e: ListedEntry) => `${e.kind} ${e.path}${e.kind === '-' ? ` ${e.size}` : ''}`;
  const mine = ours.map(show);
  const theirs = gnu.map((e, i) => {
    const our = ours[i];
    if (our && e.path === '.' && our.path !== '.') return show({ ...e, path: our.path });
    if (our?.kind === 's' && e.kind === '-' && e.path === our.path) return show(our);
    return show(e);
  });
  if (mine.length === theirs.length && mine.every((e, i) => e === theirs[i])) return { compared: true };
  const at = mine.findIndex((e, i) => e !== theirs[i]);
  return {
    compared: true,
    difference: `at entry ${at}: ours ${JSON.stringify(mine.slice(at, at + 3))}, GNU tar ${JSON.stringify(theirs.slice(at, at + 3))}`,
  };
}
