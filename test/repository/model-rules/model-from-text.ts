// Builds a LoadedModel from config text and a list of files, with no disk: the rules see it exactly as they see a
// model discovery read (the same builder, a file view backed by the list instead of the disk).

import { basename, dirname, join } from 'node:path';
import type { Diagnostic } from '../../../lib/diagnostics';
import { buildModel, CONFIG_FILE } from '../../../lib/repository/build-model';
import type { LoadedModel } from '../../../lib/repository/model';
import type { FileInfo, ModelFiles } from '../../../lib/repository/model-files';
import { checkModel, type ModelRuleOptions } from '../../../lib/repository/model-rules';

/** Paths relative to the model directory (`1/model.onnx`, `../x` outside it); a null value or a trailing `/` is a directory. */
export type ModelFileList = Record<string, string | Buffer | null>;

export interface FromTextOptions {
  /** The model's directory name. @default 'm' */
  readonly name?: string;
  /** The model directory relative to the path the user gave. @default the name */
  readonly relDir?: string;
}

const ROOT = '/models';

/** The model `name` with `config` as its config.pbtxt (none when undefined) and `files` around it. */
export function modelFromText(
  config: string | undefined,
  files: ModelFileList = {},
  options: FromTextOptions = {},
): { model: LoadedModel; diagnostics: Diagnostic[] } {
  const name = options.name ?? 'm';
  const dir = join(ROOT, name);
  const view = memoryFiles(dir, config === undefined ? files : { ...files, [CONFIG_FILE]: config });
  const top = [...view.list(dir)].sort();
  const diagnostics: Diagnostic[] = [];
  const model = buildModel(
    {
      dir,
      name,
      relDir: options.relDir ?? name,
      entryNames: top,
      subdirs: top.filter((entry) => view.stat(join(dir, entry))?.kind === 'directory'),
      hasConfig: config !== undefined,
      configText: config,
      files: view,
    },
    diagnostics,
  );
  return { model, diagnostics };
}

/** `severity:code` of everything discovery and the model rules report for the model. */
export function ruleCodes(
  config: string | undefined,
  files: ModelFileList = {},
  options: ModelRuleOptions & FromTextOptions = {},
): string[] {
  const { model, diagnostics } = modelFromText(config, files, options);
  return [...diagnostics, ...checkModel(model, options)].map((d) => `${d.severity}:${d.code}`);
}

/** A file view over an in-memory list; directories are implied by the files below them. */
function memoryFiles(dir: string, files: ModelFileList): ModelFiles {
  const entries = new Map<string, FileInfo & { text?: string; bytes?: Buffer }>();
  const children = new Map<string, Set<string>>();
  const addDirectory = (path: string) => {
    if (entries.has(path)) return;
    entries.set(path, { kind: 'directory', size: 4096 });
    const parent = dirname(path);
    if (parent !== path) {
      addDirectory(parent);
      children.get(parent)!.add(basename(path));
    }
    children.set(path, children.get(path) ?? new Set());
  };
  addDirectory(dir);
  for (const [rel, content] of Object.entries(files)) {
    const path = join(dir, rel);
    if (content === null || rel.endsWith('/')) {
      addDirectory(path);
      continue;
    }
    const parent = dirname(path);
    addDirectory(parent);
    children.get(parent)!.add(basename(path));
    const bytes = typeof content === 'string' ? Buffer.from(content) : content;
    entries.set(path, { kind: 'file', size: bytes.length, text: bytes.toString('utf8'), bytes });
  }
  return {
    stat: (path) => {
      const entry = entries.get(join(path));
      return entry && { kind: entry.kind, size: entry.size };
    },
    readText: (path) => entries.get(join(path))?.text,
    readBytes: (path) => entries.get(join(path))?.bytes,
    list: (path) => children.get(join(path)) ?? new Set(),
    open: (path) => {
      const bytes = entries.get(join(path))?.bytes;
      if (!bytes) return 'ENOENT';
      return {
        size: bytes.length,
        read: (buffer, length, position) => bytes.copy(buffer, 0, position, position + length),
        close: () => undefined,
      };
    },
  };
}

/** A model as text: its config.pbtxt (none when undefined) and the files around it. */
export interface ModelText {
  readonly config: string | undefined;
  readonly files: ModelFileList;
}

/** Inputs and outputs of the valid ONNX model the rule tests start from. */
export const ONNX_IO = `
input [ { name: "INPUT" data_type: TYPE_FP32 dims: [ 3, 4 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_FP32 dims: [ 12 ] } ]`;

/** A valid ONNX model `m`; `config` is appended to its config.pbtxt, `files` added beside it. */
export function onnx(config = '', files: ModelFileList = {}, header = 'name: "m"\nbackend: "onnxruntime"\nmax_batch_size: 8'): ModelText {
  return { config: `${header}\n${ONNX_IO}\n${config}\n`, files: { '1/model.onnx': 'onnx', ...files } };
}

export function expectFault(model: ModelText, code: string, severity: 'error' | 'warning' = 'error'): void {
  expect(ruleCodes(model.config, model.files)).toContain(`${severity}:${code}`);
}

export function expectClean(model: ModelText): void {
  expect(ruleCodes(model.config, model.files)).toEqual([]);
}
