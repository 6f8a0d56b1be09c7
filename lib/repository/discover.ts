// Finds the models under a path the way Triton polls a repository (§1, §1.A): a path holding config.pbtxt is one
// model directory, otherwise each subdirectory is a model. Reads and parses each config and names the version
// directories Triton would load. Synchronous on purpose: ten thousand small directories are read fastest that way.

import { Dirent, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { ConfigPositions, MAX_CONFIG_BYTES, parseModelConfig } from '../config/parse';
import type { ModelConfig } from '../config/model-config-schema';
import { autoCompleteBackendFields } from './backend-inference';
import type { Diagnostic } from '../diagnostics';
import { LoadedModel, relPath, VersionDir } from './model';

/** A path the library cannot read as a repository at all: the CLI reports it as a usage/I-O error (exit 2). */
export class RepositoryAccessError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RepositoryAccessError';
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
}

const SKIPPED_VERSION_DIRS = new Set(['warmup', 'initial_state', 'configs']);
const CONFIG_FILE = 'config.pbtxt';

export function discoverModels(path: string, options: DiscoverOptions = {}): Discovery {
  const root = resolve(path);
  let stats;
  try {
    stats = statSync(root);
  } catch {
    throw new RepositoryAccessError(`${path}: no such file or directory. Give the path of a model repository or of one model directory.`);
  }
  if (!stats.isDirectory()) {
    throw new RepositoryAccessError(`${path}: not a directory. Give the path of a model repository (its subdirectories are models) or of one model directory (it holds config.pbtxt).`);
  }
  const diagnostics: Diagnostic[] = [];
  const ignore = options.ignore ?? (() => false);
  const entries = readEntries(root, path);

  if (entries.some((e) => e.name === CONFIG_FILE && !e.isDirectory())) {
    const model = loadModel(root, basename(root), '', entries, diagnostics, ignore);
    return { layout: 'model', root, models: [model], diagnostics };
  }

  const models: LoadedModel[] = [];
  for (const entry of entries) {
    // readdir decodes names as UTF-8, replacing bytes that are not with U+FFFD: such a name leads nowhere.
    if (entry.name.includes('\uFFFD') && !existsSync(join(root, entry.name))) {
      diagnostics.push({
        severity: 'error',
        code: 'name-not-utf8',
        message: `'${entry.name}' has a name that is not valid UTF-8 (shown with \uFFFD); model and archive names are UTF-8. Rename it.`,
        file: entry.name,
      });
      continue;
    }
    if (ignore(entry.name) || !isDirectory(root, entry)) continue;
    if (isStrayDirectory(entry.name)) {
      diagnostics.push({
        severity: 'error',
        code: 'stray-directory',
        message: `'${entry.name}' is not a model, but Triton treats every subdirectory of a repository as one and fails to load it (SageMaker's MME loader counts it as a model directory too). Delete it before packaging.`,
        file: entry.name,
        model: entry.name,
      });
      continue;
    }
    const dir = join(root, entry.name);
    models.push(loadModel(dir, entry.name, entry.name, readEntries(dir, relPath(path, entry.name)), diagnostics, ignore));
  }
  if (models.length === 0) {
    diagnostics.push({
      severity: 'error',
      code: 'empty-repository',
      message: `No model directory found in ${path}: a repository holds one directory per model (with config.pbtxt and a version directory such as 1/), or give one model directory.`,
      file: '.',
    });
  }
  return { layout: 'repository', root, models, diagnostics };
}

/** Directories that tools leave behind and that are never meant as models: hidden ones and macOS zip debris. */
export function isStrayDirectory(name: string): boolean {
  return name.startsWith('.') || name === '__MACOSX';
}

function readEntries(dir: string, shown: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).sort((a, b) => compareBytes(a.name, b.name));
  } catch (err) {
    throw new RepositoryAccessError(`${shown}: cannot read the directory (${(err as NodeJS.ErrnoException).code ?? String(err)}).`);
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

function loadModel(
  dir: string,
  name: string,
  relDir: string,
  entries: Dirent[],
  diagnostics: Diagnostic[],
  ignore: (name: string) => boolean,
): LoadedModel {
  const configFile = relPath(relDir, CONFIG_FILE);
  const configEntry = entries.find((e) => e.name === CONFIG_FILE);
  let configText: string | undefined;
  let config: ModelConfig = {};
  let positions = new ConfigPositions();
  let parsed = false;
  const hasConfig = configEntry !== undefined && isFile(dir, configEntry);

  if (configEntry && !hasConfig) {
    diagnostics.push({
      severity: 'error',
      code: 'config-not-a-file',
      message: `${configFile} is not a regular file. Triton reads the model configuration from this path: make it the config.pbtxt text file.`,
      file: configFile,
      model: name,
    });
  } else if (hasConfig) {
    // Read first, check the size after: one system call fewer per model, and a config is a few kilobytes.
    // One native call reads and decodes; the size is checked on the text (a config is a few kilobytes).
    const text = readFileSync(join(dir, CONFIG_FILE), 'utf8');
    if (text.length > MAX_CONFIG_BYTES) {
      diagnostics.push({
        severity: 'error',
        code: 'config-too-large',
        message: `${configFile} is ${Buffer.byteLength(text)} bytes; a model configuration is at most ${MAX_CONFIG_BYTES} bytes here. Check that this is really a config.pbtxt.`,
        file: configFile,
        model: name,
      });
    } else {
      configText = text;
      const result = parseModelConfig(configText, { file: configFile, model: name });
      config = result.config;
      positions = result.positions;
      parsed = !result.diagnostics.some((d) => d.severity === 'error');
      diagnostics.push(...result.diagnostics);
    }
  }

  const subdirs = entries.filter((e) => !ignore(e.name) && isDirectory(dir, e)).map((e) => e.name);
  const versionDirs = findVersionDirs(subdirs, relDir, name, diagnostics);
  const firstSubdir = subdirs[0];
  const listFirstSubdir = (): ReadonlySet<string> => {
    if (firstSubdir === undefined) return new Set();
    try {
      return new Set(readdirSync(join(dir, firstSubdir)));
    } catch {
      return new Set(); // unreadable: nothing to infer from
    }
  };
  const fields = autoCompleteBackendFields(config, name, listFirstSubdir);
  const versions = selectVersions(config, versionDirs);

  return {
    name,
    dir,
    relDir,
    configFile,
    hasConfig,
    configText,
    config,
    positions,
    parsed: parsed || !hasConfig,
    versionDirs,
    versions,
    // Plain properties (undefined when unknown): object spreads cost measurably over ten thousand models.
    platform: fields.platform,
    backend: fields.backend,
    defaultModelFilename: fields.defaultModelFilename,
    firstSubdir,
    entryNames: entries.map((e) => e.name),
  };
}

/** Version directories by Triton's rules (§1.A): std::stoll on the name, leading zeros and non-numbers ignored. */
function findVersionDirs(subdirs: string[], relDir: string, model: string, diagnostics: Diagnostic[]): VersionDir[] {
  const versions: VersionDir[] = [];
  for (const dirName of subdirs) {
    if (SKIPPED_VERSION_DIRS.has(dirName)) continue;
    const file = relPath(relDir, dirName);
    if (dirName.length > 1 && dirName.startsWith('0')) {
      diagnostics.push({
        severity: 'warning',
        code: 'version-leading-zeros',
        message: `Triton ignores this directory: "ignore version directory '${dirName}' which contains leading zeros in its directory name". Rename it to ${String(Number.parseInt(dirName, 10))} if it is a version.`,
        file,
        model,
      });
      continue;
    }
    const match = /^[ \t\n]*([+-]?\d+)/.exec(dirName);
    if (!match) {
      diagnostics.push({
        severity: 'warning',
        code: 'version-not-numeric',
        message: `Triton ignores this directory: "ignore version directory '${dirName}' which fails to convert to integral number". Version directories are named by number (1, 2, ...); move other files out of ${model}/ subdirectories or delete them.`,
        file,
        model,
      });
      continue;
    }
    const version = Number(match[1]);
    if (match[0] !== dirName) {
      diagnostics.push({
        severity: 'warning',
        code: 'version-numeric-prefix',
        message: `Triton reads the directory name '${dirName}' as version ${version} (it parses only the leading number). Rename it to ${version} to say what you mean.`,
        file,
        model,
      });
    }
    versions.push({ dirName, version });
  }
  return versions.sort((a, b) => a.version - b.version);
}

/** Applies version_policy (default latest{num_versions: 1}) to the version directories present. */
function selectVersions(config: ModelConfig, versionDirs: readonly VersionDir[]): number[] {
  const available = [...new Set(versionDirs.map((v) => v.version))].sort((a, b) => a - b);
  const policy = config.version_policy;
  if (policy?.all) return available;
  if (policy?.specific) {
    const wanted = new Set((policy.specific.versions ?? []).map((v) => Number(v)));
    return available.filter((v) => wanted.has(v));
  }
  const n = policy?.latest?.num_versions ?? 1;
  return available.slice(Math.max(0, available.length - Math.max(n, 1)));
}
