// What the rules that read a model file (the onnx, tensorflow, openvino, dali and torchscript rules) need of a model,
// the walk they share (the model file of every version Triton would load, opened through the model's files view) and
// how they report: on config.pbtxt where a position is known, else on the model file.

import { join } from 'node:path';
import type { ConfigPositions } from '../config/parse';
import type { ModelConfig } from '../config/model-config-schema';
import { diagnostic, type Diagnostic, type Severity, type SourcePosition } from '../diagnostics';
import type { ByteSource } from '../model-files/protobuf-wire';
import type { ModelFiles } from './model-files';

/** The parts of a loaded model the model-file rules read (a LoadedModel has them all). */
export interface ModelFileSubject {
  readonly name: string;
  /** Absolute path of the model directory. */
  readonly dir: string;
  /** The model directory as shown in diagnostics ('' for the directory the user gave). */
  readonly relDir: string;
  readonly configFile: string;
  readonly configText?: string;
  readonly config: ModelConfig;
  readonly positions: ConfigPositions;
  readonly versionDirs: readonly { readonly dirName: string; readonly version: number }[];
  /** Versions the version_policy selects, ascending. */
  readonly versions: readonly number[];
  readonly defaultModelFilename?: string;
  /** How the rules read the model's files (never the file system directly). */
  readonly files: ModelFiles;
}

/** One version's model file. */
export interface VersionModelFile {
  readonly version: number;
  /** Absolute path of the file to read. */
  readonly path: string;
  /** The path as diagnostics show it (relative to what the user gave). */
  readonly shown: string;
  /** Whether this is the latest version Triton loads (the one ensembles see). */
  readonly latest: boolean;
}

/**
 * The regular file each selected version holds at `<version>/<filename>`, or at `<version>/<filename>/<inner>` when
 * `inner` is given (a SavedModel directory's saved_model.pb). Versions without it are left out: a missing model file is
 * the file rules' to report. Only regular files are returned: opening a FIFO would wait for a writer.
 */
export function versionModelFiles(model: ModelFileSubject, filename: string, inner?: string): VersionModelFile[] {
  const latest = model.versions[model.versions.length - 1];
  return model.versions.flatMap((version) => {
    const dirName = model.versionDirs.find((v) => v.version === version)?.dirName ?? String(version);
    const shownName = inner ? `${filename}/${inner}` : filename;
    const path = join(model.dir, dirName, shownName);
    if (model.files.stat(path)?.kind !== 'file') return [];
    const shown = [model.relDir, dirName, shownName].filter((p) => p !== '').join('/');
    return [{ version, path, shown, latest: version === latest }];
  });
}

/** Opens `path` and hands it to `read`; 'unreadable' when it cannot be opened (the files view reports that). */
export function readWith<T>(files: ModelFiles, path: string, read: (source: ByteSource) => T): T | 'unreadable' {
  const reader = files.open(path);
  if (typeof reader === 'string') return 'unreadable';
  try {
    return read(reader);
  } finally {
    reader.close();
  }
}

/** The warning for an empty model file: a stand-in, so nothing is checked against it. */
/** Where `field` of `message` (its `index`th value) is in config.pbtxt, else where `message` is. */
export function configPosition(
  model: ModelFileSubject,
  message: object | undefined,
  field?: string,
  index?: number,
): SourcePosition | undefined {
  return model.positions.of(message, field, index) ?? model.positions.of(message);
}

/** A finding on the config at `at`, with its excerpt, or, without a position, on the model file `file`. */
export function modelFileDiagnostic(
  model: ModelFileSubject,
  severity: Severity,
  code: string,
  message: string,
  at: SourcePosition | undefined,
  file: string,
): Diagnostic {
  const source = at
    ? { file: model.configFile, model: model.name, text: model.configText }
    : { file, model: model.name };
  return diagnostic(severity, code, message, source, at);
}

export function emptyModelFile(model: ModelFileSubject, shown: string, runtime: string): Diagnostic {
  return diagnostic(
    'warning',
    'model-file-empty',
    `${shown} is empty, so its inputs and outputs are not checked here (a stand-in?). ` +
      `${runtime} cannot load an empty file: put the exported model there before deploying.`,
    { file: shown, model: model.name },
  );
}

/** Names joined as std::set<std::string> orders them (byte order), as the backends print them. */
export function sortedNames(names: Iterable<string>): string {
  return [...new Set(names)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).join(', ');
}
