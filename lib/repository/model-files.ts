// What the rules may know of a model's files: what a path is, its size, a text file's content, a directory's names.
// Discovery gives each model a view of the disk; a test gives one built from a list. Rules never call the file system
// themselves, so a rule that reads only the config is tested from a string.

import {
  accessSync, closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readlinkSync, readSync, realpathSync,
  statSync, type Stats,
} from 'node:fs';
import { dirname } from 'node:path';
import { isInside } from '../paths';

export interface FileInfo {
  readonly kind: 'file' | 'directory' | 'other';
  /** Size in bytes (of a file; whatever the file system says for the other kinds). */
  readonly size: number;
}

/** The files around one model, by absolute path. Symbolic links are followed, as Triton's local file system does. */
export interface ModelFiles {
  /** What is at `path`, or undefined when nothing readable is. */
  stat(path: string): FileInfo | undefined;
  /** The UTF-8 text of the file at `path`, or undefined when it cannot be read. */
  readText(path: string): string | undefined;
  /** The bytes of the regular file at `path` (read once: readText decodes the same), or undefined when it cannot be read. */
  readBytes(path: string): Buffer | undefined;
  /** The entry names of the directory at `path` (none when it cannot be read). */
  list(path: string): ReadonlySet<string>;
  /**
   * The file at `path` opened for reads at any position (a model file read without reading it whole), or the error
   * code (`ENOENT`, `EACCES`, ...) when it cannot be opened. The caller closes it.
   */
  open(path: string): ByteReader | string;
}

/** A file open for positioned reads. */
export interface ByteReader {
  readonly size: number;
  /** Reads up to `length` bytes at `position` into the start of `buffer`; returns how many were read. */
  read(buffer: Buffer, length: number, position: number): number;
  close(): void;
}

/** Called with a path that exists but cannot be read (permissions, a link loop), and the error. */
export type OnUnreadable = (path: string, err: NodeJS.ErrnoException) => void;

/** Errors that mean "there is nothing there", which rules report in their own words; any other is a read failure. */
const ABSENT = new Set(['ENOENT', 'ENOTDIR']);

/**
 * The errno-like code of a read refused because the path leads, through a symbolic link, out of the repository
 * (`~/.aws/credentials`, `/proc/self/environ`): such a file is never read, so nothing of it can be quoted.
 */
export const LINK_LEAVES_REPOSITORY = 'ELINKOUT';

/**
 * Where `path` really is when a symbolic link on its way leads out of `rootReal` (a real path), else undefined.
 * Paths that cannot be resolved are left to the read itself, which reports them.
 */
export function linkOutside(rootReal: string, path: string): string | undefined {
  let real: string;
  try {
    real = realpathSync.native(path);
  } catch {
    return undefined;
  }
  return isInside(rootReal, real) ? undefined : real;
}

/** The read failure of a path whose link leaves the repository: where the link points (its text), at most. */
export function linkOutsideError(path: string, real: string): NodeJS.ErrnoException {
  let shown = real;
  try {
    shown = readlinkSync(path);
  } catch {
    // Not itself a link (a directory above it is): name the real place.
  }
  const err: NodeJS.ErrnoException = new Error(`a symbolic link that leaves the repository (to ${shown}); it is not read`);
  err.code = LINK_LEAVES_REPOSITORY;
  return err;
}

export interface DiskFilesOptions {
  /**
   * The repository's real path: a file whose real path is outside it is never read (reported to `onUnreadable` with
   * LINK_LEAVES_REPOSITORY). @default - files are read wherever links lead
   */
  readonly rootReal?: string;
  /**
   * Directories known to lie inside the repository with no symbolic link on their way (readdir's entry types told:
   * the model directory and its plain subdirectories). A file in one of them that is not itself a link is inside
   * without asking realpath. @default - none: every directory is resolved once
   */
  readonly plainDirs?: Iterable<string>;
}

/** What is at a path, links followed, and whether the path itself is a link (kept small: one per file asked about). */
interface Entry {
  readonly kind: FileInfo['kind'];
  readonly size: number;
  readonly link: boolean;
}

/**
 * Opens a regular file that lstat showed is not a link without following one: a link put there since lstat is refused
 * (ELOOP), never followed out of the repository. Not on Windows, which has no such flag (and no such race to lose).
 */
const NO_FOLLOW = constants.O_NOFOLLOW === undefined ? 'r' : constants.O_RDONLY | constants.O_NOFOLLOW;

/**
 * The model's files as they are on disk, read on demand and remembered: a model is asked about a handful of paths,
 * so reading its whole tree up front (a SavedModel, a conda environment) would cost far more than it saves.
 * A path that exists but cannot be read (EACCES, ELOOP, EIO, a regular file this user may not read) is reported to
 * `onUnreadable` and looks absent to the rules: the caller reports it as a read error, not as a fault of the model.
 *
 * Where a file lives is decided from one lstat and the directory it is in (resolved once per directory, or known plain
 * from `plainDirs`), not by a realpath per file: on a 10,000-model python repository realpath per model.py cost about
 * a third of the whole validation (bench/validate.js, issue 23 item 8).
 */
export function diskFiles(onUnreadable: OnUnreadable = () => undefined, options: DiskFilesOptions = {}): ModelFiles {
  return new DiskFiles(onUnreadable, options.rootReal, options.plainDirs === undefined ? [] : [...options.plainDirs]);
}

/** One path asked about: what is there, and its bytes and text once read (undefined: not read, or unreadable). */
interface Known {
  readonly entry: Entry | undefined;
  bytes?: Buffer | undefined;
  read?: boolean;
  text?: string | undefined;
}

/**
 * diskFiles' view, a class rather than closures: ten thousand models make ten thousand views, and methods on one
 * prototype with a single map per model are fewer objects for the collector to copy (bench/validate.js).
 */
class DiskFiles implements ModelFiles {
  /** Paths asked about, with what is known of them. */
  private known: Map<string, Known> | undefined;
  /** Directories resolved so far -> whether their real path is inside the repository. */
  private resolved: Map<string, boolean> | undefined;

  constructor(
    private readonly onUnreadable: OnUnreadable,
    private readonly rootReal: string | undefined,
    private readonly plainDirs: readonly string[],
  ) {}

  stat(path: string): FileInfo | undefined {
    let known;
    try {
      known = this.lookUp(path);
      const found = known.entry;
      if (!found) return undefined;
      // Triton reads the files the rules ask about: one this user may not read fails package and the load alike.
      // A file that was read is readable (python models: model.py is read before it is looked at).
      if (found.kind === 'file' && known.bytes === undefined) accessSync(path, constants.R_OK);
      return { kind: found.kind, size: found.size };
    } catch (err) {
      return this.failed(path, err);
    }
  }

  readText(path: string): string | undefined {
    // Decoded once: python models' rules ask for model.py's text twice.
    const bytes = this.readBytes(path);
    if (bytes === undefined) return undefined;
    const known = this.known!.get(path)!;
    return (known.text ??= bytes.toString('utf8'));
  }

  readBytes(path: string): Buffer | undefined {
    let known: Known | undefined;
    try {
      known = this.lookUp(path);
      if (known.read) return known.bytes;
      known.read = true;
      // Only a regular file: reading a FIFO would wait forever for a writer.
      const found = known.entry;
      if (found?.kind !== 'file') return undefined;
      this.checkInside(path, found);
      known.bytes = readWhole(openSync(path, found.link ? 'r' : NO_FOLLOW), found.size);
      return known.bytes;
    } catch (err) {
      if (known) known.read = true;
      return this.failed(path, err);
    }
  }

  list(path: string): ReadonlySet<string> {
    try {
      return new Set(readdirSync(path));
    } catch (err) {
      this.failed(path, err);
      return new Set();
    }
  }

  open(path: string): ByteReader | string {
    let fd: number;
    try {
      const found = this.lookUp(path).entry;
      if (found) this.checkInside(path, found);
      fd = openSync(path, found && !found.link && found.kind === 'file' ? NO_FOLLOW : 'r');
    } catch (err) {
      this.failed(path, err);
      return (err as NodeJS.ErrnoException).code ?? String(err);
    }
    return {
      size: fstatSync(fd).size,
      read: (buffer, length, position) => readSync(fd, buffer, 0, length, position),
      close: () => closeSync(fd),
    };
  }

  private failed(path: string, err: unknown): undefined {
    const e = err as NodeJS.ErrnoException;
    if (!ABSENT.has(e.code ?? '')) this.onUnreadable(e.code === 'EACCES' ? blockingDirectory(path) ?? path : path, e);
    return undefined;
  }

  /** lstat, then stat through a link (entry undefined when nothing is there, a dangling link included). Throws otherwise. */
  private lookUp(path: string): Known {
    this.known ??= new Map();
    let known = this.known.get(path);
    if (known) return known;
    let stats: Stats | undefined = lstatSync(path, { throwIfNoEntry: false });
    const link = stats?.isSymbolicLink() === true;
    if (link) stats = statSync(path, { throwIfNoEntry: false });
    const entry: Entry | undefined = stats && {
      kind: stats.isFile() ? 'file' : stats.isDirectory() ? 'directory' : 'other',
      size: stats.size,
      link,
    };
    this.known.set(path, (known = { entry }));
    return known;
  }

  private dirInside(dir: string): boolean {
    if (this.plainDirs.includes(dir)) return true;
    this.resolved ??= new Map();
    let inside = this.resolved.get(dir);
    if (inside === undefined) this.resolved.set(dir, (inside = linkOutside(this.rootReal!, dir) === undefined));
    return inside;
  }

  /** Decided before a byte is read: throws the LINK_LEAVES_REPOSITORY error for a path that leads out of the root. */
  private checkInside(path: string, found: Entry): void {
    const { rootReal } = this;
    if (rootReal === undefined || (!found.link && this.dirInside(dirname(path)))) return;
    const outside = linkOutside(rootReal, path);
    if (outside !== undefined) throw linkOutsideError(path, outside);
  }
}

/**
 * The whole file open at `fd`, then closed: `size` (from lstat) sizes the buffer, so no fstat is needed, and a file of
 * that size is read with one read. One that reports no size (a /proc file) is read to its end.
 */
function readWhole(fd: number, size: number): Buffer {
  try {
    let buffer = Buffer.allocUnsafe(size > 0 ? size : 4096);
    let length = 0;
    for (;;) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
      if (length === size) break;
      if (length === buffer.length) {
        const larger = Buffer.allocUnsafe(buffer.length * 2);
        buffer.copy(larger);
        buffer = larger;
      }
    }
    return buffer.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}

/** The highest directory above `path` this user may not search, which is what denies access to it, if any. */
function blockingDirectory(path: string): string | undefined {
  let blocking: string | undefined;
  for (let dir = dirname(path); dir !== dirname(dir); dir = dirname(dir)) {
    try {
      accessSync(dir, constants.X_OK);
    } catch {
      blocking = dir;
    }
  }
  return blocking;
}

/** The size of the regular file at `path`, or undefined when there is none (nothing, a directory, a device). */
export function fileSize(files: ModelFiles, path: string): number | undefined {
  const info = files.stat(path);
  return info?.kind === 'file' ? info.size : undefined;
}
