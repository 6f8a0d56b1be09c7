// Walks a model repository and lists what goes into its archive, in archive order, refusing what cannot be packed
// safely (links that leave the repository, devices, FIFOs, sockets, names an extractor refuses) as diagnostics.

import { constants, type Stats } from 'node:fs';
import { access, lstat, readdir, readlink, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { diagnostic, Diagnostic, sortDiagnostics } from '../diagnostics';
import { errnoReason } from '../errors';
import { isInside } from '../paths';
import { shellCommand } from '../shell-quote';
import { archivePathProblem } from './entry-names';
import { excludedReason } from './exclusions';

/** One archive member. */
export interface ArchiveEntry {
  /** POSIX path relative to the archive root: no `./`, no trailing `/`. */
  readonly path: string;
  readonly type: 'file' | 'directory';
  /** Absolute path of the file whose bytes are packed (files only). */
  readonly source?: string;
  /** Content size in bytes (0 for directories). */
  readonly size: number;
  /** Whether the file has any execute bit; it decides between modes 0755 and 0644. */
  readonly executable: boolean;
  /**
   * Device and inode of the file collected (files only). The packer refuses to pack a file whose opened inode
   * differs, so a file swapped (for a link to something outside, say) after collection is never read.
   */
  readonly identity?: FileIdentity;
}

/** Which file on which device: what stays the same however the file is reached. */
export interface FileIdentity {
  readonly dev: number;
  readonly ino: number;
}

export interface CollectOptions {
  /**
   * Directory every entry is placed under, itself included as an entry (e.g. the model name for a single-model
   * archive laid out as "one model dir inside").
   * @default - entries at the archive root
   */
  readonly prefix?: string;
}

export interface CollectResult {
  /** Sorted bytewise by path, so parents come before children; directories are included so empty ones survive. */
  readonly entries: ArchiveEntry[];
  /** Paths relative to the root that were left out (see exclusions.ts), sorted; a left-out directory is one path. */
  readonly excluded: string[];
  /** Error diagnostics for what cannot be packed; when there is any, nothing should be written. */
  readonly problems: Diagnostic[];
  /**
   * What exists but cannot be read by this user (relative paths, '.' for the root, with the reason): read errors,
   * not faults of the repository. When there is any, nothing should be written.
   */
  readonly unreadable: CollectReadFailure[];
}

export interface CollectReadFailure {
  readonly path: string;
  /** In words: `permission denied`. */
  readonly reason: string;
  readonly errno?: string;
}

/**
 * Lists the archive entries for the directory `root`. Symbolic links that resolve inside the root are followed and
 * packed as the file or directory they point to; links that leave the root or point nowhere, hard links with
 * links outside the root, and special files become problems. Hard links are judged by counting, for each inode
 * with several links, its distinct paths inside the root (left-out directories such as `.git` are not walked, so
 * a link there counts as outside).
 */
export async function collectEntries(root: string, options: CollectOptions = {}): Promise<CollectResult> {
  const walk = new RepositoryWalk();
  let rootReal: string;
  try {
    rootReal = await realpath(root);
    if (!(await stat(rootReal)).isDirectory()) {
      walk.problem('not-a-directory', '.', `${root} is not a directory; give the model repository directory.`);
      return walk.result();
    }
  } catch (err) {
    walk.unreadable('.', err);
    return walk.result();
  }
  walk.rootReal = rootReal;
  await walk.directory(rootReal, '', [rootReal]);
  walk.checkHardLinks();
  const prefix = options.prefix?.replace(/^\/+|\/+$/g, '');
  if (!prefix) return walk.result();
  return walk.result(prefix);
}

interface HardLink {
  readonly nlink: number;
  readonly relPath: string;
  readonly realPaths: Set<string>;
}

class RepositoryWalk {
  rootReal = '';
  private readonly entries: ArchiveEntry[] = [];
  private readonly excluded: string[] = [];
  private readonly problems: Diagnostic[] = [];
  private readonly failures: CollectReadFailure[] = [];
  private readonly hardLinks = new Map<string, HardLink>();

  /** Walks `dirReal` (a real path), whose entries appear under `relDir`; `chain` holds the real paths walked into. */
  async directory(dirReal: string, relDir: string, chain: readonly string[]): Promise<void> {
    let rawNames: Buffer[];
    try {
      // As bytes: a name that is not valid UTF-8 would otherwise come back with U+FFFD and be missing (ENOENT).
      rawNames = await readdir(dirReal, { encoding: 'buffer' });
    } catch (err) {
      this.unreadable(relDir || '.', err);
      return;
    }
    const names: string[] = [];
    for (const raw of rawNames) {
      const name = utf8Name(raw);
      if (name !== undefined) {
        names.push(name);
        continue;
      }
      const shown = `${relDir ? `${relDir}/` : ''}${escapedName(raw)}`;
      this.problem(
        'name-not-utf8',
        shown,
        `${shown} has a name that is not valid UTF-8; archive names are UTF-8, so no extractor would recreate it. ` +
          'Rename it (for example with convmv, or mv in a UTF-8 shell).',
      );
    }
    await Promise.all(names.map((name) => this.member(dirReal, name, relDir ? `${relDir}/${name}` : name, chain)));
  }

  private async member(dirReal: string, name: string, relPath: string, chain: readonly string[]): Promise<void> {
    if (excludedReason(name)) {
      this.excluded.push(relPath);
      return;
    }
    const nameProblem = archivePathProblem(relPath);
    if (nameProblem) {
      this.problem('unsafe-name', relPath, `${relPath} ${nameProblem}: extractors refuse or misplace such a name. Rename it.`);
      return;
    }
    const absolute = join(dirReal, name);
    let stats: Stats;
    try {
      stats = await lstat(absolute);
    } catch (err) {
      this.unreadable(relPath, err);
      return;
    }
    if (stats.isSymbolicLink()) {
      await this.symlink(absolute, relPath, chain);
    } else if (stats.isDirectory()) {
      this.entries.push({ path: relPath, type: 'directory', size: 0, executable: false });
      await this.directory(absolute, relPath, [...chain, absolute]);
    } else if (stats.isFile()) {
      await this.file(absolute, relPath, stats);
    } else {
      this.special(relPath, stats);
    }
  }

  private async symlink(absolute: string, relPath: string, chain: readonly string[]): Promise<void> {
    const linkText = await readlink(absolute).catch(() => '?');
    let target: string;
    try {
      target = await realpath(absolute);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        this.problem(
          'symlink-dangling',
          relPath,
          `${relPath} is a symbolic link to "${linkText}", which does not exist. Remove the link or restore what it points to.`,
        );
      } else if (code === 'ELOOP') {
        this.problem('symlink-loop', relPath, `${relPath} is a symbolic link that loops ("${linkText}"). Remove the link.`);
      } else {
        this.unreadable(relPath, err);
      }
      return;
    }
    if (!isInside(this.rootReal, target)) {
      this.problem(
        'symlink-escape',
        relPath,
        `${relPath} is a symbolic link to "${linkText}", which is outside the repository (${target}); the archive ` +
          `must be self-contained. Copy the target into the repository in place of the link ` +
          `(${shellCommand(['cp', '--remove-destination', target, relPath])} for a file).`,
      );
      return;
    }
    let stats: Stats;
    try {
      stats = await stat(target);
    } catch (err) {
      this.unreadable(relPath, err);
      return;
    }
    if (stats.isDirectory()) {
      if (chain.includes(target)) {
        this.problem(
          'symlink-loop',
          relPath,
          `${relPath} is a symbolic link to "${linkText}", a directory that contains the link, so following it ` +
            'never ends. Remove the link.',
        );
        return;
      }
      this.entries.push({ path: relPath, type: 'directory', size: 0, executable: false });
      await this.directory(target, relPath, [...chain, target]);
    } else if (stats.isFile()) {
      await this.file(target, relPath, stats);
    } else {
      this.special(relPath, stats);
    }
  }

  private async file(source: string, relPath: string, stats: Stats): Promise<void> {
    // The packer opens every file: one this user may not read is a read error now, not a failure halfway through.
    try {
      await access(source, constants.R_OK);
    } catch (err) {
      this.unreadable(relPath, err);
      return;
    }
    this.entries.push({
      path: relPath,
      type: 'file',
      source,
      size: stats.size,
      executable: (stats.mode & 0o111) !== 0,
      identity: { dev: stats.dev, ino: stats.ino },
    });
    if (stats.nlink > 1) {
      const key = `${stats.dev}:${stats.ino}`;
      const known = this.hardLinks.get(key);
      if (known) known.realPaths.add(source);
      else this.hardLinks.set(key, { nlink: stats.nlink, relPath, realPaths: new Set([source]) });
    }
  }

  private special(relPath: string, stats: Stats): void {
    const kind = stats.isFIFO()
      ? 'a FIFO (named pipe)'
      : stats.isSocket()
        ? 'a socket'
        : stats.isCharacterDevice()
          ? 'a character device'
          : stats.isBlockDevice()
            ? 'a block device'
            : 'not a regular file or directory';
    this.problem(
      'special-file',
      relPath,
      `${relPath} is ${kind}; an archive can hold only regular files and directories. Remove it from the repository.`,
    );
  }

  checkHardLinks(): void {
    for (const link of this.hardLinks.values()) {
      const outside = link.nlink - link.realPaths.size;
      if (outside <= 0) continue;
      this.problem(
        'hardlink-outside',
        link.relPath,
        `${link.relPath} is a hard link shared with ${outside} path(s) outside the repository; packing it would ` +
          `ship a file that something else can change. Make it an independent copy ` +
          `(${shellCommand(['cp', link.relPath, `${link.relPath}.copy`])} && ` +
          `${shellCommand(['mv', `${link.relPath}.copy`, link.relPath])}).`,
      );
    }
  }

  problem(code: string, file: string, message: string): void {
    this.problems.push(diagnostic('error', code, message, { file }));
  }

  unreadable(path: string, err: unknown): void {
    const errno = (err as NodeJS.ErrnoException).code;
    this.failures.push({ path, reason: errnoReason(err), ...(errno ? { errno } : {}) });
  }

  result(prefix?: string): CollectResult {
    const entries = prefix
      ? [
          { path: prefix, type: 'directory' as const, size: 0, executable: false },
          ...this.entries.map((entry) => ({ ...entry, path: `${prefix}/${entry.path}` })),
        ]
      : [...this.entries];
    return {
      entries: entries.sort((a, b) => compareBytes(a.path, b.path)),
      excluded: [...this.excluded].sort(compareBytes),
      problems: sortDiagnostics(this.problems),
      unreadable: [...this.failures].sort((a, b) => compareBytes(a.path, b.path)),
    };
  }
}

/** Bytewise (UTF-8) order, the same on every machine and locale. */
export function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The name as a string, or undefined when its bytes are not valid UTF-8. */
function utf8Name(raw: Buffer): string | undefined {
  try {
    return UTF8.decode(raw);
  } catch {
    return undefined;
  }
}

/** A name with every byte outside printable ASCII shown as \xNN (as bash's $'...' quoting does), for messages. */
function escapedName(raw: Buffer): string {
  return [...raw].map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`)).join('');
}
