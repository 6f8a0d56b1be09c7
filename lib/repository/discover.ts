// Finds the models under a path the way Triton polls a repository (§1, §1.A): a path holding config.pbtxt is one
// model directory, otherwise each subdirectory is a model. Reads and parses each config and names the version
// directories Triton would load. Synchronous on purpose: ten thousand small directories are read fastest that way.

import { closeSync, Dirent, existsSync, fstatSync, openSync, readdirSync, readSync, realpathSync, statSync } from 'node:fs';
import { basename, join, relative, resolve, sep } from 'node:path';
import { MAX_CONFIG_BYTES } from '../config/parse';
import { diagnostic, type Diagnostic } from '../diagnostics';
import { MmeError, errnoReason } from '../errors';
import { buildModel, CONFIG_FILE } from './build-model';
import { LoadedModel, relPath } from './model';
import { diskFiles, LINK_LEAVES_REPOSITORY, linkOutside, linkOutsideError, OnUnreadable } from './model-files';

/**
 * A path the library cannot read as a repository at all: `NOT_FOUND`, `USAGE` (not a directory) or `UNREADABLE`.
 * The CLI reports it as a usage/I-O error (exit 2).
 */
export class RepositoryAccessError extends MmeError {
  constructor(code: 'NOT_FOUND' | 'USAGE' | 'UNREADABLE', message: string) {
    super(code, message);
  }
}

export interface DiscoverOptions {
  /** Entry names to leave out as if absent (what the packer excludes: `.git`, `__pycache__`, ...). */
  readonly ignore?: (name: string) => boolean;
}

export interface Discovery {
  /** 'model' when the path itself holds config.pbtxt. */
  readonly layout: 'repository' | 'model';
  readonly root: string;
  readonly models: LoadedModel[];
  readonly diagnostics: Diagnostic[];
  /**
   * Files and directories that exist but could not be read, as the path was given (`repo/m/config.pbtxt`) with the
   * reason. It grows while rules read the models' files; `unreadableError` turns it into the error to throw.
   */
  readonly unreadable: ReadFailure[];
}

/** A path that exists but cannot be read, and why (`permission denied`). */
export interface ReadFailure {
  readonly path: string;
  readonly reason: string;
  readonly errno?: string;
}

/** How many unreadable paths the error names. */
const UNREADABLE_SHOWN = 5;

/**
 * The error for a discovery whose files could not all be read (UNREADABLE: the CLI exits 2), or undefined. Read errors
 * are the user's environment, not faults of the models: reporting them as rule violations would send people to fix
 * configs that are fine.
 */
export function unreadableError(discovery: Pick<Discovery, 'unreadable'>): RepositoryAccessError | undefined {
  const failures = [...new Map(discovery.unreadable.map((f) => [f.path, f])).values()];
  if (failures.length === 0) return undefined;
  // The first few, and how many more: a repository copied without read permission fails on every file, and a
  // message naming ten thousand of them is one line of half a megabyte.
  const list = failures.slice(0, UNREADABLE_SHOWN).map((f) => `cannot read ${f.path}: ${f.reason}`);
  if (failures.length > UNREADABLE_SHOWN) {
    list.push(`and ${failures.length - UNREADABLE_SHOWN} more paths that cannot be read (${failures.length} in all)`);
  }
  let fix = failures.some((f) => f.errno === 'EACCES' || f.errno === 'EPERM')
    ? ' Make the files readable by this user (chmod -R a+rX, or run as their owner), then run again.'
    : '';
  if (failures.some((f) => f.errno === LINK_LEAVES_REPOSITORY)) {
    fix += ' A repository is checked and packed as it stands: copy the file into it in place of the link.';
  }
  return new RepositoryAccessError('UNREADABLE', `${list.join('; ')}.${fix}`);
}

export function discoverModels(path: string, options: DiscoverOptions = {}): Discovery {
  const steps = discoverStepwise(path, options);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * discoverModels one model at a time: yields each model as soon as it is loaded, and returns the discovery. The caller
 * may start work on a model (the python syntax check's child parses its model.py) while the next ones load.
 */
export function* discoverStepwise(path: string, options: DiscoverOptions = {}): Generator<LoadedModel, Discovery, void> {
  const root = resolve(path);
  let stats;
  try {
    stats = statSync(root);
  } catch {
    throw new RepositoryAccessError('NOT_FOUND', `${path}: no such file or directory. Give the path of a model ` +
      'repository or of one model directory.');
  }
  if (!stats.isDirectory()) {
    throw new RepositoryAccessError('USAGE', `${path}: not a directory. Give the path of a model repository (its ` +
      'subdirectories are models) or of one model directory (it holds config.pbtxt).');
  }
  const diagnostics: Diagnostic[] = [];
  const unreadable: ReadFailure[] = [];
  // Paths as the user gave them: `repo/m/1/model.onnx` for an absolute /home/u/repo/m/1/model.onnx.
  const shown = (absolute: string) => relPath(path.replace(/[\\/]+$/, '') || path, relative(root, absolute).split(sep).join('/'));
  const onUnreadable: OnUnreadable = (absolute, err) =>
    unreadable.push({ path: shown(absolute), reason: errnoReason(err), ...(err.code ? { errno: err.code } : {}) });
  const ignore = options.ignore ?? (() => false);
  const entries = readEntries(root, path);
  // Where the repository really is: a file whose link leads out of it is never read (a hostile config.pbtxt linked to
  // /proc/self/environ or ~/.aws/credentials would otherwise be quoted in a caret excerpt, into a CI log).
  const rootReal = realPath(root);
  const load = (dir: string, name: string, relDir: string, dirEntries: Dirent[], linked: boolean) =>
    loadModel({ dir, name, relDir, entries: dirEntries, diagnostics, ignore, onUnreadable, rootReal, linked });

  if (entries.some((e) => e.name === CONFIG_FILE && !e.isDirectory()) || isModelWithoutConfig(root, entries, ignore)) {
    const model = load(root, basename(root), '', entries, false);
    yield model;
    return { layout: 'model', root, models: [model], diagnostics, unreadable };
  }

  const models: LoadedModel[] = [];
  for (const entry of entries) {
    // readdir decodes names as UTF-8, replacing bytes that are not with U+FFFD: such a name leads nowhere.
    if (entry.name.includes('\uFFFD') && !existsSync(join(root, entry.name))) {
      diagnostics.push(
        diagnostic(
          'error',
          'name-not-utf8',
          `'${entry.name}' has a name that is not valid UTF-8 (shown with \uFFFD); model and archive names are UTF-8. ` +
            'Rename it.',
          { file: entry.name },
        ),
      );
      continue;
    }
    if (ignore(entry.name) || !isDirectory(root, entry)) continue;
    if (isStrayDirectory(entry.name)) {
      const inside = entry.name.startsWith('.') ? safeList(join(root, entry.name)) : [];
      if (inside.includes(CONFIG_FILE)) {
        // Triton lists hidden directories like any other (core GetDirectorySubdirs; model_repository_manager.cc:
        // 1349-1364 makes each subdirectory a model), so it would load this one as a model named after it.
        const message =
          `'${entry.name}' holds a model (${entry.name}/${CONFIG_FILE}), but it is hidden: this tool skips hidden ` +
          `directories, so it is not checked. Triton does not skip it: it loads it as a model named '${entry.name}'. ` +
          'Rename the directory without the leading dot to serve it, or move it out of the repository.';
        diagnostics.push(diagnostic('warning', 'hidden-model-directory', message, { file: entry.name, model: entry.name }));
        continue;
      }
      const message =
        `'${entry.name}' is not a model, but Triton treats every subdirectory of a repository as one and fails to ` +
        "load it (SageMaker's MME loader counts it as a model directory too). Delete it or move it out of the repository.";
      diagnostics.push(diagnostic('error', 'stray-directory', message, { file: entry.name, model: entry.name }));
      continue;
    }
    const dir = join(root, entry.name);
    const model = load(dir, entry.name, entry.name, readEntries(dir, relPath(path, entry.name)), entry.isSymbolicLink());
    models.push(model);
    yield model;
  }
  if (models.length === 0) {
    const message =
      `No model directory found in ${path}: a repository holds one directory per model (with config.pbtxt and a ` +
      'version directory such as 1/), or give one model directory.';
    diagnostics.push(diagnostic('error', 'empty-repository', message, { file: '.' }));
  }
  return { layout: 'repository', root, models, diagnostics, unreadable };
}

/**
 * A model directory given without its config.pbtxt (issue 10.9): its subdirectories are version directories (named by
 * number, none holding a config.pbtxt) and one holds a file (the model file), so it is not a repository of models
 * named `1`, `2`. A repository's model directory holds version directories, never files, at that depth.
 */
function isModelWithoutConfig(root: string, entries: Dirent[], ignore: (name: string) => boolean): boolean {
  const subdirs = entries.filter((e) => !ignore(e.name) && !e.name.startsWith('.') && isDirectory(root, e));
  if (subdirs.length === 0 || !subdirs.every((e) => /^\d+$/.test(e.name))) return false;
  let holdsFile = false;
  for (const dir of subdirs) {
    const inside = readdirSafe(join(root, dir.name));
    if (inside.some((e) => e.name === CONFIG_FILE)) return false;
    if (inside.some((e) => !e.name.startsWith('.') && !isDirectory(join(root, dir.name), e))) holdsFile = true;
  }
  return holdsFile;
}

function readdirSafe(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

function safeList(dir: string): string[] {
  return readdirSafe(dir).map((e) => e.name);
}

/** Directories that tools leave behind and that are never meant as models: hidden ones and macOS zip debris. */
export function isStrayDirectory(name: string): boolean {
  return name.startsWith('.') || name === '__MACOSX';
}

function readEntries(dir: string, shown: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).sort((a, b) => compareBytes(a.name, b.name));
  } catch (err) {
    throw new RepositoryAccessError('UNREADABLE', `cannot read ${shown}: ${errnoReason(err)}. Make the directory ` +
      'readable by this user (chmod a+rx, or run as its owner), then run again.');
  }
}

/** Directory entries, following symlinks (Triton's local filesystem follows them too). */
export function isDirectory(parent: string, entry: Dirent): boolean {
  if (entry.isDirectory()) return true;
  if (!entry.isSymbolicLink()) return false;
  try {
    return statSync(join(parent, entry.name)).isDirectory();
  } catch {
    return false;
  }
}

function isFile(parent: string, entry: Dirent): boolean {
  if (entry.isFile()) return true;
  if (!entry.isSymbolicLink()) return false;
  try {
    return statSync(join(parent, entry.name)).isFile();
  } catch {
    return false;
  }
}

/** Sorts like `strcmp`/readdir order in Triton's std::set<std::string>: by UTF-16 code units, fine for ASCII names. */
export function compareBytes(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function realPath(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

interface ModelDirectory {
  readonly dir: string;
  readonly name: string;
  readonly relDir: string;
  readonly entries: Dirent[];
  readonly diagnostics: Diagnostic[];
  readonly ignore: (name: string) => boolean;
  readonly onUnreadable: OnUnreadable;
  /** The repository's real path. */
  readonly rootReal: string;
  /** Whether the model directory is a symbolic link (its files may then be outside the repository). */
  readonly linked: boolean;
}

function loadModel(model: ModelDirectory): LoadedModel {
  const { dir, name, relDir, entries, diagnostics, ignore, onUnreadable, rootReal, linked } = model;
  const configFile = relPath(relDir, CONFIG_FILE);
  const configEntry = entries.find((e) => e.name === CONFIG_FILE);
  const hasConfig = configEntry !== undefined && isFile(dir, configEntry);
  const source = { file: configFile, model: name };
  let configText: string | undefined;

  if (configEntry && !hasConfig) {
    const message = `${configFile} is not a regular file. Triton reads the model configuration from this path: ` +
      'make it the config.pbtxt text file.';
    diagnostics.push(diagnostic('error', 'config-not-a-file', message, source));
  } else if (hasConfig) {
    const path = join(dir, CONFIG_FILE);
    // Only links can lead out of the repository, and readdir's entry types say which names are links: the check
    // costs nothing for the usual repository without any.
    const outside = linked || configEntry.isSymbolicLink() ? linkOutside(rootReal, path) : undefined;
    let read: ConfigRead | undefined;
    try {
      if (outside !== undefined) throw linkOutsideError(path, outside);
      read = readConfig(path);
    } catch (err) {
      onUnreadable(path, err as NodeJS.ErrnoException);
    }
    if (read === undefined) {
      // Reported as a read error by the caller; the model is judged as if it had no config meanwhile.
    } else if (read.size > MAX_CONFIG_BYTES) {
      const message = `${configFile} is ${read.size} bytes; a model configuration is at most ` +
        `${MAX_CONFIG_BYTES} bytes here. Check that this is really a config.pbtxt.`;
      diagnostics.push(diagnostic('error', 'config-too-large', message, source));
    } else {
      configText = read.text;
    }
  }

  return buildModel(
    {
      dir,
      name,
      relDir,
      // The constant, not readdir's copy of the name: one string fewer kept per model.
      entryNames: entries.map((e) => (e.name === CONFIG_FILE ? CONFIG_FILE : e.name)),
      subdirs: entries.filter((e) => !ignore(e.name) && isDirectory(dir, e)).map((e) => e.name),
      hasConfig,
      configText,
      files: diskFiles(onUnreadable, { rootReal, plainDirs: linked ? [] : plainDirs(dir, entries) }),
    },
    diagnostics,
  );
}

/**
 * The model directory and its subdirectories that readdir's entry types show are directories, not links: with the
 * model directory itself not a link, their real paths are inside the repository without asking realpath.
 */
function plainDirs(dir: string, entries: Dirent[]): string[] {
  const dirs = [dir];
  for (const e of entries) if (e.isDirectory()) dirs.push(join(dir, e.name));
  return dirs;
}

interface ConfigRead {
  /** The file's size in bytes, from fstat. */
  readonly size: number;
  /** The UTF-8 text, when the size is within MAX_CONFIG_BYTES. */
  readonly text?: string;
}

/**
 * A config.pbtxt's size, and its text when it is within the limit: the size is taken from the open file before a byte
 * is read, and no more than the limit is ever read (a sparse 700 MB file, or one growing while read, costs nothing).
 */
function readConfig(path: string): ConfigRead {
  const fd = openSync(path, 'r');
  try {
    const { size } = fstatSync(fd);
    if (size > MAX_CONFIG_BYTES) return { size };
    // One byte past the limit shows a file that grew past it since fstat; a file of the size fstat gave is read with
    // one read (a second one, to see the end, cost a system call per model).
    const buffer = Buffer.allocUnsafe(Math.min(size, MAX_CONFIG_BYTES) + 1);
    let length = 0;
    for (let n; length < buffer.length && (n = readSync(fd, buffer, length, buffer.length - length, null)) > 0;) {
      length += n;
      if (length === size) break;
    }
    if (length > MAX_CONFIG_BYTES) return { size: length };
    return { size: length, text: buffer.toString('utf8', 0, length) };
  } finally {
    closeSync(fd);
  }
}
