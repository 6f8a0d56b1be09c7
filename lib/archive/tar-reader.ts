// Reads tar and tar.gz archives as a stream of entries (for tools that look inside a TargetModel archive), and
// extracts one the strict way: no absolute paths, no `..`, no links or devices, nothing outside the destination.

import { constants, createReadStream } from 'node:fs';
import { link, mkdir, open, symlink } from 'node:fs/promises';
import { hardLinkTargetReason, linkEscapeReason } from './archive-links';
import { dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { TAR_BLOCK, decodeHeader, paddingAfter, parsePaxRecords } from './tar-header';

export type TarEntryType = 'file' | 'directory' | 'symlink' | 'other';

export interface TarEntry {
  /**
   * The entry's path as stored (PAX and GNU long names applied), with leading `./` and any trailing `/` removed;
   * the archive root itself (`./`) is `.`. Never resolved: `..` and absolute paths are kept for callers to judge.
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
}

/**
 * Called once per entry, in archive order. `content` streams the entry's bytes; whatever the callback does not read
 * is skipped once its promise settles, so a callback that only wants names can ignore it.
 */
export type TarEntryHandler = (entry: TarEntry, content: Readable) => Promise<void> | void;

/**
 * Reads a tar archive, gzip-compressed or not (detected from the first bytes), from a file path or a stream.
 * Memory stays small whatever the archive size: content is pulled from the source only as the callback reads it.
 * Rejects with an Error on a corrupt or truncated archive, or when the callback throws.
 */
export async function readTarGz(source: Readable | string, onEntry: TarEntryHandler): Promise<void> {
  const input = typeof source === 'string' ? createReadStream(source) : source;
  const bytes = new ByteSource(decodedChunks(input));
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
}

/**
 * Extracts a tar(.gz) into `destDir` (created when missing) and returns the extracted paths in archive order.
 * Like SageMaker's own extraction must be safe, it refuses, with an Error naming the entry, any absolute path,
 * any `..` segment, symbolic and hard links (unless `links: 'inside'`), devices and FIFOs. Meant for a fresh
 * directory: on error, files extracted before the offending entry stay and the caller removes the directory.
 */
export async function extractTarGz(archive: string, destDir: string, options: ExtractOptions = {}): Promise<string[]> {
  const root = resolve(destDir);
  await mkdir(root, { recursive: true });
  const extracted: string[] = [];
  const symlinks = new Map<string, string>();
  const files = new Set<string>();
  await readTarGz(archive, async (entry, content) => {
    const isLink = entry.type === 'symlink' || entry.typeflag === '1';
    if (options.links === 'inside' && isLink) {
      const refusal = unsafeEntryReason({ ...entry, type: 'file' }) ?? (entry.type === 'symlink' ? undefined : hardLinkTargetReason(entry.linkName ?? '', files));
      if (refusal) throw new Error(`Refusing to extract ${archive}: entry "${entry.path}" ${refusal}.`);
      if (entry.type === 'symlink') symlinks.set(entry.path, entry.linkName ?? '');
      else {
        await link(join(root, (entry.linkName ?? '').replace(/^(\.\/)+/, '')), join(root, entry.path));
        files.add(entry.path);
      }
      extracted.push(entry.path);
      return;
    }
    const refusal = unsafeEntryReason(entry);
    if (refusal) {
      throw new Error(
        `Refusing to extract ${archive}: entry "${entry.path}" ${refusal}. Rebuild the archive without it ` +
          '(mme-deploy package writes only regular files and directories).',
      );
    }
    const target = entry.path === '.' ? root : join(root, entry.path);
    if (entry.type === 'directory') {
      await mkdir(target, { recursive: true });
    } else {
      await mkdir(dirname(target), { recursive: true });
      // O_NOFOLLOW: never write through a link that was already in the destination.
      const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;
      const file = await open(target, flags, entry.mode & 0o777 || 0o644);
      await pipeline(content, file.createWriteStream());
      files.add(entry.path);
    }
    extracted.push(entry.path);
  });
  for (const [path, target] of symlinks) {
    const escape = linkEscapeReason(path, target, symlinks);
    if (escape) throw new Error(`Refusing to extract ${archive}: entry "${path}" is a symbolic link that ${escape}.`);
  }
  for (const [path, target] of symlinks) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await symlink(target, join(root, path));
  }
  return extracted;
}

/** Why an entry must not be extracted, or undefined when it is a plain file or directory inside the root. */
export function unsafeEntryReason(entry: TarEntry): string | undefined {
  if (entry.path.includes('\u0000')) return 'contains a NUL byte';
  if (entry.path.startsWith('/') || entry.path.startsWith('\\') || /^[A-Za-z]:/.test(entry.path)) {
    return 'is an absolute path';
  }
  if (entry.path.split(/[\\/]/).includes('..')) return 'has a ".." segment that would escape the destination';
  switch (entry.type) {
    case 'file':
    case 'directory':
      return undefined;
    case 'symlink':
      return `is a symbolic link (to "${entry.linkName ?? ''}"); replace it with the file or directory it points to`;
    case 'other':
      return `is ${OTHER_TYPE_NAMES[entry.typeflag] ?? `an entry of tar type "${entry.typeflag}"`}; only regular files and directories are allowed`;
  }
}

const OTHER_TYPE_NAMES: Record<string, string> = {
  '1': 'a hard link',
  '3': 'a character device',
  '4': 'a block device',
  '6': 'a FIFO (named pipe)',
};

async function readEntries(bytes: ByteSource, onEntry: TarEntryHandler): Promise<void> {
  // Overrides from PAX ('x') and GNU long-name ('L'/'K') entries apply to the next real entry only.
  let pending: { path?: string; linkName?: string; size?: number } = {};
  for (;;) {
    const offset = bytes.position;
    const block = await bytes.readExact(TAR_BLOCK, true);
    if (!block) return; // end of data without the end-of-archive blocks: accepted, as GNU tar does
    const header = decodeHeader(block, offset);
    if (!header) return;
    const size = pending.size ?? header.size;
    switch (header.typeflag) {
      case 'x': {
        const records = parsePaxRecords(await bytes.readData(size));
        const path = records.get('path');
        const linkName = records.get('linkpath');
        const paxSize = records.get('size');
        if (path !== undefined) pending.path = path;
        if (linkName !== undefined) pending.linkName = linkName;
        if (paxSize !== undefined) pending.size = Number.parseInt(paxSize, 10);
        continue;
      }
      case 'g':
        await bytes.readData(size);
        continue;
      case 'L':
        pending.path = stripNuls(await bytes.readData(size));
        continue;
      case 'K':
        pending.linkName = stripNuls(await bytes.readData(size));
        continue;
    }
    const rawPath = pending.path ?? header.name;
    const type = entryType(header.typeflag, rawPath);
    const dataSize = type === 'file' || header.typeflag === '7' ? size : 0;
    const linkName = pending.linkName ?? header.linkName;
    const entry: TarEntry = {
      path: normalizeEntryPath(rawPath),
      type,
      size: dataSize,
      mode: header.mode,
      typeflag: header.typeflag,
      ...(type === 'symlink' || header.typeflag === '1' ? { linkName } : {}),
    };
    pending = {};
    const content = new EntryContent(bytes, dataSize);
    try {
      await onEntry(entry, content.stream);
    } finally {
      content.stream.destroy();
    }
    await bytes.skip(await content.unread());
    await bytes.skip(paddingAfter(dataSize));
  }
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

/** One entry's bytes as a Readable that pulls from the archive only when read. */
class EntryContent {
  readonly stream: Readable;
  private remaining: number;
  private inFlight: Promise<unknown> = Promise.resolve();

  constructor(bytes: ByteSource, size: number) {
    this.remaining = size;
    const self = this;
    this.stream = new Readable({
      read() {
        if (self.remaining === 0) {
          this.push(null);
          return;
        }
        self.inFlight = bytes.readSome(Math.min(self.remaining, 256 * 1024)).then(
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

  /** Exactly `length` bytes; `undefined` at a clean end of data when `allowEnd` is set. */
  async readExact(length: number, allowEnd = false): Promise<Buffer | undefined> {
    const parts: Buffer[] = [];
    let have = 0;
    while (have < length) {
      if (this.buffered.length === 0 && !(await this.fill())) {
        if (allowEnd && have === 0) return undefined;
        throw new Error(`Truncated archive: expected ${length - have} more bytes at byte ${this.position}.`);
      }
      const part = this.take(length - have);
      parts.push(part);
      have += part.length;
    }
    return parts.length === 1 ? parts[0] : Buffer.concat(parts);
  }

  /** An entry's data of `size` bytes plus its padding, as one buffer (for PAX and long-name entries only). */
  async readData(size: number): Promise<Buffer> {
    if (size > 16 * 1024 * 1024) throw new Error(`Not a valid tar archive: ${size}-byte metadata entry.`);
    const data = (await this.readExact(size)) ?? Buffer.alloc(0);
    await this.skip(paddingAfter(size));
    return data;
  }

  /** Between 1 and `max` bytes. */
  async readSome(max: number): Promise<Buffer> {
    if (this.buffered.length === 0 && !(await this.fill())) {
      throw new Error(`Truncated archive: entry content ends early at byte ${this.position}.`);
    }
    return this.take(max);
  }

  async skip(length: number): Promise<void> {
    let left = length;
    while (left > 0) left -= (await this.readSome(left)).length;
  }

  /** Stops the underlying iteration (and any gunzip behind it). */
  async close(): Promise<void> {
    await this.chunks.return?.();
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

/** The archive's bytes, gunzipped when they start with the gzip magic number. */
async function* decodedChunks(input: Readable): AsyncGenerator<Buffer> {
  const iterator = input[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let head = Buffer.alloc(0);
  while (head.length < 2) {
    const next = await iterator.next();
    if (next.done) break;
    head = Buffer.concat([head, next.value]);
  }
  async function* raw(): AsyncGenerator<Buffer> {
    if (head.length > 0) yield head;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  }
  if (head[0] !== 0x1f || head[1] !== 0x8b) {
    yield* raw();
    return;
  }
  const gunzip = createGunzip();
  // Errors on either side destroy `gunzip`, which rejects the iteration below; the promise itself is not needed.
  pipeline(Readable.from(raw(), { objectMode: false }), gunzip).catch(() => undefined);
  try {
    for await (const chunk of gunzip) yield chunk as Buffer;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && code.startsWith('Z_')) {
      throw new Error(`Not a valid gzip stream: ${(err as Error).message}.`);
    }
    throw err;
  }
}
