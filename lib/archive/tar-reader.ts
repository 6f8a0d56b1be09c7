// Reads tar and tar.gz archives as a stream of entries (for tools that look inside a TargetModel archive), and
// extracts one the strict way: no absolute paths, no `..`, no links or devices, nothing outside the destination.
// Damaged or hostile input ends with an MmeError naming the problem and its byte offset, and never hangs: every
// size is a finite integer, every step consumes input, and the whole gzip stream is read so its checksums count.

import { constants, createReadStream } from 'node:fs';
import { link, lstat, mkdir, open, symlink, unlink } from 'node:fs/promises';
import { join, posix, resolve } from 'node:path';
import { addAbortSignal, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { isMmeError, MmeError, unreadable } from '../errors';
import { invalidArchive } from './archive-error';
import { hardLinkTargetReason, linkEscapeReason } from './archive-links';
import { archivePathProblem } from './entry-names';
import { TAR_BLOCK, decodeHeader, paddingAfter, parsePaxRecords, paxSize, type PaxRecords } from './tar-header';

export type TarEntryType = 'file' | 'directory' | 'symlink' | 'other';

export interface TarEntry {
  /**
   * The entry's path as stored (PAX and GNU long names applied), with leading `./` and any trailing `/` removed;
   * the archive root itself (`./`) is `.`. Never resolved: `..` and absolute paths are kept for callers to judge.
   * Bytes that are not valid UTF-8 show as U+FFFD.
   */
  readonly path: string;
  readonly type: TarEntryType;
  /** Content bytes (0 for everything but files). */
  readonly size: number;
  /** Permission bits as stored. */
  readonly mode: number;
  /** Target of a symbolic or hard link. */
  readonly linkName?: string;
  /** The raw tar type flag (`0` file, `5` directory, `2` symlink, `1` hard link, `3`/`4` devices, `6` FIFO, ...). */
  readonly typeflag: string;
  /**
   * Set for a GNU sparse file stored as PAX `GNU.sparse.*` records: its data is a map of holes and pieces, not the
   * file's bytes, so it is reported as type `other`.
   */
  readonly sparse?: true;
}

/**
 * Called once per entry, in archive order. `content` streams the entry's bytes; whatever the callback does not read
 * is skipped once its promise settles, so a callback that only wants names can ignore it.
 */
export type TarEntryHandler = (entry: TarEntry, content: Readable) => Promise<void> | void;

/**
 * Reads a tar archive, gzip-compressed or not (detected from the first bytes), from a file path or a stream, to its
 * very end: every gzip member's CRC-32 and length are checked, and only zeros may follow the end-of-archive blocks.
 * Memory stays small whatever the archive size: content is pulled from the source only as the callback reads it,
 * and extended headers are capped at 1 MiB.
 *
 * Rejects with an MmeError — TAR_BAD_ARCHIVE (not a tar or gzip, checksum, malformed PAX record, data after the end,
 * no entries), TAR_BAD_SIZE (a size that is not an integer >= 0), TAR_TRUNCATED (the data ends early), NOT_FOUND or
 * UNREADABLE (the file), ABORTED (`signal`) — whose message says what and at which byte of the tar stream; or with the
 * callback's own error. A caller should treat what the callback saw as void unless the promise resolves.
 */
export async function readTarGz(
  source: Readable | string,
  onEntry: TarEntryHandler,
  options: { readonly signal?: AbortSignal } = {},
): Promise<void> {
  const { signal } = options;
  const input =
    typeof source === 'string'
      ? createReadStream(source, signal ? { signal } : {})
      : signal
        ? addAbortSignal(signal, source)
        : source;
  const bytes = new ByteSource(decodedChunks(input, typeof source === 'string' ? source : undefined));
  try {
    await readEntries(bytes, onEntry);
  } finally {
    await bytes.close();
    input.destroy();
  }
}

export interface ExtractOptions {
  /**
   * `inside`: create symbolic and hard links whose targets stay inside `destDir` once every link exists (conda
   * environments contain them), and refuse the archive on any link that leads out. Symbolic links are created after
   * every file, so nothing is ever written through one.
   * @default - every link is refused
   */
  readonly links?: 'inside';
  /** Stops the extraction (ABORTED); what was extracted stays, as on any error. @default - no way to stop it */
  readonly signal?: AbortSignal;
  /**
   * Refuse (INVALID, naming a few) an archive with more top-level names than this, as soon as one more appears:
   * before extracting, and checking, a hundred thousand directories. @default - no limit
   */
  readonly maxTopLevel?: number;
}

/**
 * Extracts a tar(.gz) into `destDir` (created when missing) and returns the extracted paths in archive order.
 * As SageMaker's own extraction must be safe, it refuses (TAR_UNSAFE_ENTRY, naming the entry) any absolute path, any
 * `..` segment, symbolic and hard links (unless `links: 'inside'`), devices and FIFOs, and never writes through a
 * symbolic link: one already in `destDir` below its root is refused too, and a file of the same name is replaced
 * (unlinked first, so a hard link to it elsewhere is left alone), never written into. Assumes no other process
 * changes `destDir` meanwhile. On error, what was extracted before the problem stays: extract into a fresh directory
 * and remove it on failure. Write failures (disk full, permissions) are UNWRITABLE.
 */
export async function extractTarGz(archive: string, destDir: string, options: ExtractOptions = {}): Promise<string[]> {
  const root = resolve(destDir);
  await mkdir(root, { recursive: true }).catch((err: unknown) => {
    throw new MmeError('UNWRITABLE', `cannot create ${root}: ${(err as Error).message}.`, { cause: err });
  });
  const directories = new Directories(root);
  const extracted: string[] = [];
  const verdict = new ExtractionVerdict(options.links);
  const topLevel = new Set<string>();
  await readTarGz(archive, async (entry, content) => {
    const action = verdict.check(entry);
    if (options.maxTopLevel !== undefined) {
      topLevel.add(entry.path.split('/')[0]!);
      if (topLevel.size > options.maxTopLevel) {
        const few = [...topLevel].slice(0, 5).map((name) => JSON.stringify(name)).join(', ');
        throw new MmeError('INVALID', `the archive holds more than ${options.maxTopLevel} top-level entries (${few}, ...); ` +
          'a TargetModel archive holds an ensemble and the models it composes. Stopped before extracting the rest.');
      }
    }
    if (action === 'symlink') {
      // Made last, once every file is written, so nothing is ever written through one.
    } else if (action === 'hardlink') {
      await directories.make(posix.dirname(entry.path));
      const existing = join(root, entry.linkName ?? '');
      await createReplacing(root, entry.path, (target) => link(existing, target));
    } else if (entry.type === 'directory') {
      await directories.make(entry.path);
    } else {
      await directories.make(posix.dirname(entry.path));
      await writeEntryFile(root, entry, content);
    }
    extracted.push(entry.path);
  }, options.signal ? { signal: options.signal } : {});
  for (const [path, target] of verdict.finish()) {
    await directories.make(posix.dirname(path));
    await createReplacing(root, path, (absolute) => symlink(target, absolute));
  }
  return extracted;
}

/**
 * The one verdict on an archive's entries, as `extractTarGz` applies it and as `plan` and push's checks read an
 * archive without extracting it: `check` each entry in archive order (it throws TAR_UNSAFE_ENTRY, naming the entry,
 * for one that must not be extracted), then `finish` (it throws for a symbolic link that leads out, once all are
 * known). With `links: 'inside'` links that stay inside are allowed, as for `local load`; otherwise every link is
 * refused.
 */
export class ExtractionVerdict {
  private readonly symlinks = new Map<string, string>();
  private readonly files = new Set<string>();

  constructor(private readonly links?: 'inside') {}

  /** What extracting `entry` makes, or a TAR_UNSAFE_ENTRY error when it must not be extracted. */
  check(entry: TarEntry): 'entry' | 'symlink' | 'hardlink' {
    const isLink = entry.type === 'symlink' || entry.typeflag === '1';
    if (this.links === 'inside' && isLink) {
      const refusal =
        unsafeEntryReason({ ...entry, type: 'file' }) ??
        (entry.type === 'symlink' ? undefined : hardLinkTargetReason(entry.linkName ?? '', this.files));
      if (refusal) throw unsafeEntry(entry.path, refusal);
      // Map order is creation order: a link given again moves to the end, after what came in between.
      this.symlinks.delete(entry.path);
      if (entry.type === 'symlink') {
        this.symlinks.set(entry.path, entry.linkName ?? '');
        return 'symlink';
      }
      this.files.add(entry.path);
      return 'hardlink';
    }
    const refusal = unsafeEntryReason(entry);
    if (refusal) throw unsafeEntry(entry.path, refusal);
    // A later entry of the same name replaces a link, as in GNU tar (the last one wins): SageMaker would serve this
    // file, not what the link pointed to. Except a link whose target has a ".." segment: GNU tar makes it last, over
    // whatever came later of that name when that took the placeholder's inode number, as it usually does
    // (praiskup/tar:src/extract.c:2040-2046, create_placeholder_file and apply_delayed_links; checked against GNU tar
    // 1.34 in test/hostile/tar-agreement.test.ts, which says when the file stays instead).
    if (!posix.normalize(this.symlinks.get(entry.path) ?? '').split('/').includes('..')) this.symlinks.delete(entry.path);
    if (entry.type !== 'directory') this.files.add(entry.path);
    return 'entry';
  }

  /** After the last entry: the symbolic links to make, in order; throws for one that leads out. */
  finish(): ReadonlyMap<string, string> {
    for (const [path, target] of this.symlinks) {
      const escape = linkEscapeReason(path, target, this.symlinks);
      if (escape) throw unsafeEntry(path, `is a symbolic link that ${escape}`);
    }
    return this.symlinks;
  }
}

function unsafeEntry(path: string, refusal: string): MmeError {
  return new MmeError(
    'TAR_UNSAFE_ENTRY',
    `entry "${path}" ${refusal}. Rebuild the archive without it (mme-deploy package writes only regular files and directories).`,
  );
}

/** Why an entry must not be extracted, or undefined when it is a plain file or directory inside the root. */
export function unsafeEntryReason(entry: TarEntry): string | undefined {
  const nameProblem = archivePathProblem(entry.path);
  if (nameProblem) return nameProblem;
  if (entry.sparse) {
    return "is a GNU sparse file, whose data is a map of holes, not the file's bytes; archive it without tar --sparse";
  }
  switch (entry.type) {
    case 'file':
      return entry.path === '.' ? 'is a file with an empty name' : undefined;
    case 'directory':
      return undefined;
    case 'symlink':
      return `is a symbolic link (to "${entry.linkName ?? ''}"); replace it with the file or directory it points to`;
    case 'other':
      return (
        `is ${OTHER_TYPE_NAMES[entry.typeflag] ?? `an entry of tar type "${entry.typeflag}"`}; ` +
        'only regular files and directories are allowed'
      );
  }
}

const OTHER_TYPE_NAMES: Record<string, string> = {
  '1': 'a hard link',
  '3': 'a character device',
  '4': 'a block device',
  '6': 'a FIFO (named pipe)',
};

/** Extended headers (PAX records, GNU long names) larger than this are refused: a path is at most a few KiB. */
const MAX_METADATA_BYTES = 1024 * 1024;

/** What PAX ('x') and GNU long-name ('L'/'K') entries set, for the next real entry only. */
interface Overrides {
  path?: string;
  linkName?: string;
  size?: number;
  sparse?: true;
  /** Offset of the first header that set something, for a message when no entry follows. */
  from?: number;
}

async function readEntries(bytes: ByteSource, onEntry: TarEntryHandler): Promise<void> {
  let pending: Overrides = {};
  // What global ('g') headers set: every later entry's, under its own 'x' records, as GNU tar applies them
  // (src/xheader.c xheader_decode: the global records first, then the member's own).
  const global: Overrides = {};
  let entries = 0;
  for (;;) {
    const offset = bytes.position;
    const block = await bytes.readExact(TAR_BLOCK, 'a header', true);
    if (!block) {
      if (offset === 0) throw invalidArchive('not a valid tar archive: the file holds no data');
      throw invalidArchive(
        `not a valid tar archive: it ends at byte ${offset} without the end-of-archive blocks (cut short?)`,
        'TAR_TRUNCATED',
      );
    }
    const header = decodeHeader(block, offset);
    if (!header) {
      if (pending.from !== undefined) {
        throw invalidArchive(`not a valid tar archive: the extended header at byte ${pending.from} describes no entry`);
      }
      await bytes.expectZerosToEnd();
      if (entries === 0) throw invalidArchive('not a valid tar archive: it holds no entries');
      return;
    }
    switch (header.typeflag) {
      case 'x':
      // 'X': the extended header of POSIX.1-2001 drafts (Solaris tar), which GNU tar and bsdtar apply like 'x'.
      case 'X':
        applyPax(pending, parsePaxRecords(await bytes.readMetadata(header.size, offset), offset + TAR_BLOCK), offset);
        pending.from ??= offset;
        continue;
      case 'g':
        // Global records apply to every later entry (path, size, linkpath, GNU.sparse.*): GNU tar decodes them as an
        // 'x' header's (src/xheader.c xheader_decode_global) and fails the archive on a malformed value there too.
        applyPax(global, parsePaxRecords(await bytes.readMetadata(header.size, offset), offset + TAR_BLOCK), offset);
        delete global.from;
        continue;
      case 'L':
        pending.path = stripNuls(await bytes.readMetadata(header.size, offset));
        pending.from ??= offset;
        continue;
      case 'K':
        pending.linkName = stripNuls(await bytes.readMetadata(header.size, offset));
        pending.from ??= offset;
        continue;
    }
    entries++;
    pending = { ...global, ...pending };
    const rawPath = pending.path ?? header.name;
    const type = entryType(header.typeflag, rawPath);
    // What follows the header, as GNU tar reads it (src/list.c): a hard link has size 0 on the medium whatever its
    // field says (read_header(), "links 0 size on tape"), a type-5 directory is followed by nothing (skip_member()
    // skips st_size for every type flag but DIRTYPE), and every other type flag, unknown ones, symbolic links and
    // old-style "name/" directories included, by `size` bytes; POSIX pax likewise: for type flags it does not
    // define "the number of logical records written following the header shall be (size+511)/512". Parsing those
    // bytes as headers would show entries GNU tar does not (checked against GNU tar 1.34 in the tests).
    const stored = header.typeflag === '1' || header.typeflag === '5' ? 0 : (pending.size ?? header.size);
    // Sparse records make a regular file sparse; GNU tar reads any other entry as it is (src/list.c decode_header).
    const sparse = pending.sparse === true && type === 'file';
    const readable = type === 'file' && !sparse ? stored : 0;
    const linkName = pending.linkName ?? header.linkName;
    const entry: TarEntry = {
      path: normalizeEntryPath(rawPath),
      type: sparse ? 'other' : type,
      size: readable,
      mode: header.mode,
      typeflag: header.typeflag,
      ...(type === 'symlink' || header.typeflag === '1' ? { linkName } : {}),
      ...(sparse ? { sparse: true as const } : {}),
    };
    pending = {};
    const content = new EntryContent(bytes, readable, `the data of "${entry.path}"`);
    try {
      await onEntry(entry, content.stream);
    } finally {
      content.stream.destroy();
    }
    await bytes.skip((await content.unread()) + (stored - readable) + paddingAfter(stored), `the data of "${entry.path}"`);
  }
}

/** Applies an 'x' header's records to the next entry; an empty value removes the override (POSIX pax). */
function applyPax(pending: Overrides, records: PaxRecords, offset: number): void {
  for (const [key, value] of records) {
    if (key === 'path') {
      if (value === '') delete pending.path;
      else pending.path = value;
    } else if (key === 'linkpath') {
      if (value === '') delete pending.linkName;
      else pending.linkName = value;
    } else if (key === 'size') {
      if (value === '') {
        delete pending.size;
        continue;
      }
      const size = paxSize(value);
      if (size === undefined) {
        throw invalidArchive(
          `not a valid tar archive: bad size at byte ${offset} (PAX size ${JSON.stringify(value)})`,
          'TAR_BAD_SIZE',
        );
      }
      pending.size = size;
    } else if (key.startsWith('GNU.sparse.')) {
      const problem = sparseRecordProblem(key, value);
      if (problem) {
        // GNU tar: "Malformed extended header: invalid GNU.sparse.major=x", and exit status 2 (src/xheader.c).
        throw invalidArchive(`not a valid tar archive: malformed extended header at byte ${offset}: ${problem}`);
      }
      // The sparse file's real name, which GNU tar lists and extracts it as (src/xheader.c sparse_path_decoder).
      if (key === 'GNU.sparse.name') pending.path = value;
      pending.sparse = true;
    }
  }
}

/** The numeric GNU.sparse.* records GNU tar reads (src/xheader.c sparse_*_decoder), and what is wrong with one. */
const SPARSE_NUMBERS = new Set(['major', 'minor', 'size', 'realsize', 'numblocks', 'offset', 'numbytes']);

function sparseRecordProblem(key: string, value: string): string | undefined {
  const name = key.slice('GNU.sparse.'.length);
  const shown = `${key}=${JSON.stringify(value)}`;
  if (SPARSE_NUMBERS.has(name) && !/^\d{1,15}$/.test(value)) return `invalid ${shown}`;
  if (name === 'map') {
    const parts = value.split(',');
    if (!parts.every((p) => /^\d{1,15}$/.test(p))) return `invalid ${shown}`;
    if (parts.length % 2 !== 0) return `an odd number of values in ${shown} (offset,size pairs)`;
  }
  return undefined;
}

function entryType(typeflag: string, rawPath: string): TarEntryType {
  switch (typeflag) {
    case '0':
    case '\u0000':
    case '7':
      // Pre-POSIX archives mark directories only with a trailing slash.
      return rawPath.endsWith('/') ? 'directory' : 'file';
    case '5':
      return 'directory';
    case '2':
      return 'symlink';
    default:
      return 'other';
  }
}

function normalizeEntryPath(raw: string): string {
  let path = raw;
  while (path.startsWith('./')) path = path.slice(2);
  while (path.endsWith('/') && path.length > 1) path = path.slice(0, -1);
  return path === '' || path === '.' ? '.' : path;
}

function stripNuls(data: Buffer): string {
  const end = data.indexOf(0);
  return data.toString('utf8', 0, end < 0 ? data.length : end);
}

/** Creates the directories entries go into, refusing to pass through anything but a real directory. */
class Directories {
  /** Relative paths known to be real directories below the root (made here, or checked with lstat). */
  private readonly known = new Set<string>(['.']);

  constructor(private readonly root: string) {}

  /** Makes `relative` and every directory above it, top down, without recursion (a path may be very deep). */
  async make(relative: string): Promise<void> {
    const missing: string[] = [];
    for (let dir = relative; !this.known.has(dir); dir = posix.dirname(dir)) missing.push(dir);
    for (let i = missing.length - 1; i >= 0; i--) await this.makeOne(missing[i]!);
  }

  private async makeOne(relative: string): Promise<void> {
    const absolute = join(this.root, relative);
    try {
      await mkdir(absolute);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw extractionError(err, relative, this.root);
      // mkdir never follows a link in its last component, so a link there says EEXIST and is caught here.
      const stats = await lstat(absolute);
      if (stats.isSymbolicLink()) {
        throw new MmeError(
          'TAR_UNSAFE_ENTRY',
          `"${relative}" is a symbolic link already in ${this.root}; extracting through it could write outside. ` +
            'Extract into an empty directory, or remove the link.',
        );
      }
      if (!stats.isDirectory()) {
        throw new MmeError('TAR_UNSAFE_ENTRY', `cannot extract into "${relative}": it is a file, not a directory.`);
      }
    }
    this.known.add(relative);
  }
}

/** Writes a file entry as a new inode: an existing file of that name is unlinked first, a link never followed. */
async function writeEntryFile(root: string, entry: TarEntry, content: Readable): Promise<void> {
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  const file = await createReplacing(root, entry.path, (target) => open(target, flags, entry.mode & 0o777 || 0o644));
  try {
    await pipeline(content, file.createWriteStream());
  } catch (err) {
    if (isMmeError(err)) throw err;
    throw extractionError(err, entry.path, root);
  }
}

/**
 * Creates something new at `relative` with `create`, which must fail with EEXIST rather than reuse what is there
 * (O_EXCL, link, symlink). A file or link already there is unlinked and the creation tried again, as a later tar
 * entry replaces an earlier one; a directory is refused.
 */
async function createReplacing<T>(root: string, relative: string, create: (target: string) => Promise<T>): Promise<T> {
  const target = join(root, relative);
  try {
    return await create(target).catch(async (err: unknown) => {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if ((await lstat(target)).isDirectory()) {
        throw new MmeError('TAR_UNSAFE_ENTRY', `cannot extract "${relative}": a directory of that name exists.`);
      }
      await unlink(target);
      return create(target);
    });
  } catch (err) {
    if (isMmeError(err)) throw err;
    throw extractionError(err, relative, root);
  }
}

/** A file-system error while extracting: the archive's fault (names that clash or do not fit) or the disk's. */
function extractionError(err: unknown, relative: string, root: string): MmeError {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  const reason = (err as Error).message;
  if (['ENOTDIR', 'EISDIR', 'EEXIST', 'ELOOP', 'ENAMETOOLONG'].includes(code)) {
    return new MmeError('TAR_UNSAFE_ENTRY', `cannot extract "${relative}": ${reason}.`, { cause: err });
  }
  return new MmeError('UNWRITABLE', `cannot write "${relative}" into ${root}: ${reason}.`, { cause: err });
}

/** One entry's bytes as a Readable that pulls from the archive only when read. */
class EntryContent {
  readonly stream: Readable;
  private remaining: number;
  private inFlight: Promise<unknown> = Promise.resolve();

  constructor(bytes: ByteSource, size: number, what: string) {
    this.remaining = size;
    const self = this;
    this.stream = new Readable({
      read() {
        if (self.remaining === 0) {
          this.push(null);
          return;
        }
        self.inFlight = bytes.readSome(Math.min(self.remaining, 256 * 1024), what).then(
          (chunk) => {
            self.remaining -= chunk.length;
            if (!this.destroyed) this.push(chunk);
            if (self.remaining === 0 && !this.destroyed) this.push(null);
          },
          (err: unknown) => this.destroy(err as Error),
        );
      },
    });
  }

  /** Bytes of this entry not yet taken from the archive, once any read under way has finished. */
  async unread(): Promise<number> {
    await this.inFlight;
    return this.remaining;
  }
}

/** Exact-size reads over a stream of chunks, counting the position for error messages. */
class ByteSource {
  position = 0;
  private buffered: Buffer = Buffer.alloc(0);

  constructor(private readonly chunks: AsyncIterator<Buffer>) {}

  /**
   * Exactly `length` bytes of `what`; `undefined` when `allowEnd` is set and the data ends cleanly before them.
   * Throws TAR_TRUNCATED when the data ends inside them.
   */
  async readExact(length: number, what: string, allowEnd = false): Promise<Buffer | undefined> {
    const parts: Buffer[] = [];
    let have = 0;
    while (have < length) {
      if (this.buffered.length === 0 && !(await this.fill())) {
        if (allowEnd && have === 0) return undefined;
        throw this.truncated(what);
      }
      const part = this.take(length - have);
      parts.push(part);
      have += part.length;
    }
    return parts.length === 1 ? parts[0] : Buffer.concat(parts);
  }

  /** The data of an extended header (PAX records, a GNU long name) and its padding, capped at 1 MiB. */
  async readMetadata(size: number, headerOffset: number): Promise<Buffer> {
    if (size > MAX_METADATA_BYTES) {
      throw invalidArchive(
        `not a valid tar archive: the extended header at byte ${headerOffset} holds ${size} bytes, ` +
          `more than the ${MAX_METADATA_BYTES} this reader accepts`,
      );
    }
    const data = (await this.readExact(size, 'an extended header')) ?? Buffer.alloc(0);
    await this.skip(paddingAfter(size), 'an extended header');
    return data;
  }

  /** Between 1 and `max` bytes of `what`. */
  async readSome(max: number, what: string): Promise<Buffer> {
    if (this.buffered.length === 0 && !(await this.fill())) throw this.truncated(what);
    return this.take(max);
  }

  async skip(length: number, what: string): Promise<void> {
    let left = length;
    while (left > 0) left -= (await this.readSome(left, what)).length;
  }

  /**
   * Reads to the end of the data, which after the end-of-archive marker may hold only zeros (GNU tar pads to its
   * 10 KiB record); reading it all is also what makes gunzip check the trailers.
   */
  async expectZerosToEnd(): Promise<void> {
    for (;;) {
      if (this.buffered.length === 0 && !(await this.fill())) return;
      const start = this.position;
      const part = this.take(this.buffered.length);
      for (let at = 0; at < part.length; at += ZEROS.length) {
        const piece = part.subarray(at, at + ZEROS.length);
        if (!piece.equals(ZEROS.subarray(0, piece.length))) {
          const nonZero = start + at + piece.findIndex((byte) => byte !== 0);
          throw invalidArchive(`not a valid tar archive: data after the end-of-archive blocks, at byte ${nonZero}`);
        }
      }
    }
  }

  /** Stops the underlying iteration (and any gunzip behind it). */
  async close(): Promise<void> {
    await this.chunks.return?.();
  }

  private truncated(what: string): MmeError {
    return invalidArchive(`not a valid tar archive: it is cut short at byte ${this.position}, in ${what}`, 'TAR_TRUNCATED');
  }

  private take(max: number): Buffer {
    const part = this.buffered.subarray(0, max);
    this.buffered = this.buffered.subarray(part.length);
    this.position += part.length;
    return part;
  }

  private async fill(): Promise<boolean> {
    for (;;) {
      const next = await this.chunks.next();
      if (next.done) return false;
      if (next.value.length > 0) {
        this.buffered = next.value;
        return true;
      }
    }
  }
}

const ZEROS = Buffer.alloc(64 * 1024);

/** Magic numbers of compressions SageMaker does not extract, for a message better than "checksum mismatch". */
const OTHER_COMPRESSIONS: readonly [Buffer, string][] = [
  [Buffer.from('BZh'), 'bzip2'],
  [Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]), 'xz'],
  [Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), 'zstd'],
  [Buffer.from('PK\u0003\u0004', 'latin1'), 'zip'],
];

/**
 * The archive's bytes, gunzipped when they start with the gzip magic number. Node's gunzip reads every member of a
 * multi-member file and checks each one's CRC-32 and length; like gzip(1) it ignores zeros after the last member.
 * Errors become MmeErrors: the gzip stream's (TAR_BAD_ARCHIVE, TAR_TRUNCATED) and the file's (NOT_FOUND, UNREADABLE).
 */
async function* decodedChunks(input: Readable, file: string | undefined): AsyncGenerator<Buffer> {
  try {
    const iterator = input[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    let head = Buffer.alloc(0);
    while (head.length < 6) {
      const next = await iterator.next();
      if (next.done) break;
      head = Buffer.concat([head, next.value]);
    }
    // Where the last byte that is not zero lies, for the check after the last gzip member below; scanned from each
    // chunk's end, so it costs a byte or two per chunk of real data.
    let total = 0;
    let lastNonZero = -1;
    const raw = async function* (): AsyncGenerator<Buffer> {
      let chunk: Buffer = head;
      for (;;) {
        if (chunk.length > 0) {
          for (let i = chunk.length - 1; i >= 0; i--) {
            if (chunk[i] !== 0) {
              lastNonZero = total + i;
              break;
            }
          }
          total += chunk.length;
          yield chunk;
        }
        const next = await iterator.next();
        if (next.done) return;
        chunk = next.value;
      }
    };
    if (head[0] !== 0x1f || head[1] !== 0x8b) {
      const other = OTHER_COMPRESSIONS.find(([magic]) => head.subarray(0, magic.length).equals(magic));
      if (other) {
        throw invalidArchive(
          `not a tar.gz: the file is ${other[1]}-compressed, and SageMaker extracts only gzip-compressed tar archives`,
        );
      }
      yield* raw();
      return;
    }
    // zlib's default 16 KiB output chunks. Measured extracting the bench/local-load.js archive (256 MiB): 32 KiB
    // chunks take 0.7 s CPU instead of 1.1 s, but raise the CLI's peak RSS from 73 to 83 MB (more garbage between
    // collections), and 64 KiB to 90 MB; memory wins here.
    const gunzip = createGunzip();
    // Errors on either side destroy `gunzip`, which rejects the iteration below; once that ends, the pipeline is
    // awaited too, for what came after the last member.
    const piped = pipeline(Readable.from(raw(), { objectMode: false }), gunzip);
    piped.catch(() => undefined);
    for await (const chunk of gunzip) yield chunk as Buffer;
    // Node's gunzip stops at a zero byte after a member and ignores the rest, garbage or a damaged member included;
    // gzip(1) accepts only zeros there ("trailing garbage ignored", status 2), so GNU tar, and SageMaker's
    // extraction, fail (gzip/unzip.c:209-219; tar: "Child returned status 2"). bytesWritten counts what inflate took.
    // The pipeline's own error then (a write after gunzip ended, "incorrect header check") says no more than this.
    await piped.catch(() => undefined);
    if (lastNonZero >= gunzip.bytesWritten) {
      throw invalidArchive(
        `not a valid gzip stream: data that is not zeros follows the last gzip member, at byte ${gunzip.bytesWritten} of ` +
          'the file (gzip -t: "trailing garbage ignored", which makes GNU tar fail)',
      );
    }
  } catch (err) {
    throw sourceError(err, file);
  }
}

/** The error the reader reports for a failure of its input: the gzip stream's or the file's. */
function sourceError(err: unknown, file: string | undefined): unknown {
  if (isMmeError(err)) return err;
  const code = (err as NodeJS.ErrnoException).code;
  const message = (err as Error).message;
  if (code === 'ABORT_ERR') return new MmeError('ABORTED', 'interrupted while reading the archive.', { cause: err });
  if (typeof code === 'string' && code.startsWith('Z_')) {
    if (code === 'Z_BUF_ERROR') return invalidArchive('not a valid gzip stream: it is cut short', 'TAR_TRUNCATED');
    const meaning: Record<string, string> = {
      'incorrect data check': 'its CRC-32 check failed, so the data is corrupt',
      'incorrect length check': 'its length check failed, so the data is corrupt',
      'incorrect header check': 'a gzip header is damaged, or other data follows the gzip stream',
    };
    return invalidArchive(`not a valid gzip stream: ${meaning[message] ?? message}`);
  }
  const what = file ?? 'the archive';
  if (code === 'ENOENT') return new MmeError('NOT_FOUND', `${what}: no such file.`, { cause: err });
  if (code === 'EISDIR') return new MmeError('UNREADABLE', `${what} is a directory, not an archive file.`, { cause: err });
  if (typeof code === 'string') return unreadable(what, err);
  return err;
}
