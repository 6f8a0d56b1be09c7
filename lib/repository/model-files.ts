// What the rules may know of a model's files: what a path is, its size, a text file's content, a directory's names.
// Discovery gives each model a view of the disk; a test gives one built from a list. Rules never call the file system
// themselves, so a rule that reads only the config is tested from a string.

import { closeSync, fstatSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';

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

/**
 * The model's files as they are on disk, read on demand and remembered: a model is asked about a handful of paths,
 * so reading its whole tree up front (a SavedModel, a conda environment) would cost far more than it saves.
 */
export function diskFiles(): ModelFiles {
  let texts: Map<string, string | undefined> | undefined;
  return {
    stat(path) {
      let stats;
      try {
        stats = statSync(path, { throwIfNoEntry: false });
      } catch {
        return undefined; // ENOTDIR, EACCES, ELOOP: nothing Triton could read either
      }
      if (!stats) return undefined;
      return { kind: stats.isFile() ? 'file' : stats.isDirectory() ? 'directory' : 'other', size: stats.size };
    },
    readText(path) {
      texts ??= new Map();
      if (!texts.has(path)) {
        let text: string | undefined;
        try {
          // Only a regular file: reading a FIFO would wait forever for a writer.
          text = statSync(path, { throwIfNoEntry: false })?.isFile() ? readFileSync(path, 'utf8') : undefined;
        } catch {
          text = undefined;
        }
        texts.set(path, text);
      }
      return texts.get(path);
    },
    list(path) {
      try {
        return new Set(readdirSync(path));
      } catch {
        return new Set(); // unreadable: nothing to infer from
      }
    },
    open(path) {
      let fd: number;
      try {
        fd = openSync(path, 'r');
      } catch (err) {
        return (err as NodeJS.ErrnoException).code ?? String(err);
      }
      return {
        size: fstatSync(fd).size,
        read: (buffer, length, position) => readSync(fd, buffer, 0, length, position),
        close: () => closeSync(fd),
      };
    },
  };
}

/** The size of the regular file at `path`, or undefined when there is none (nothing, a directory, a device). */
export function fileSize(files: ModelFiles, path: string): number | undefined {
  const info = files.stat(path);
  return info?.kind === 'file' ? info.size : undefined;
}
