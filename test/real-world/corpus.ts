// The real-world corpus (test/real-world/corpus.json): public Triton model repositories as their authors arrange them,
// with empty stand-ins for weights, Triton's verdict on each, and single mistakes seeded into them. This module
// materializes a case into a temporary directory (ONNX models generated, python models' stand-ins written, mistakes
// applied) for the tests.

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pythonWith } from '../tools';
import { daliPipeline, type DaliPipelineSpec } from '../model-files/dali-writer';
import { writeModelFiles, type ModelFileSpec } from '../model-files/model-file-writer';
import { torchScript, type TorchScriptSpec } from '../model-files/torchscript-writer';

export const CORPUS_DIR = __dirname;

/** One dimension: dim_value (number), dim_param (string) or neither (null). */
type OnnxDim = number | string | null;
export interface OnnxSpec {
  readonly from: string;
  readonly inputs: [string, string, OnnxDim[]][];
  readonly outputs: [string, string, OnnxDim[]][];
  readonly initializers?: [string, string, number[]][];
  readonly initializersAreInputs?: boolean;
}

export interface ExpectedDiagnostic {
  /** File relative to the repository root. */
  readonly file: string;
  readonly line?: number;
  readonly code?: string;
  /** Text the message must contain (Triton's wording). */
  readonly wording?: string;
}

export interface Expectation {
  readonly exit: 0 | 1;
  /** Diagnostics that must be reported (errors when exit is 1). */
  readonly diagnostics?: readonly ExpectedDiagnostic[];
  /** Why the expectation differs from what Triton reports, when it does. */
  readonly note?: string;
  /** When Triton rejects the repository but the files cannot show why: the reason, and the expected exit is 0. */
  readonly undecidable?: string;
}

export interface TritonVerdict {
  readonly loads: boolean;
  /** Where the authors (or Triton's CI) serve it, when it loads. */
  readonly evidence?: string;
  /** Triton's message when it does not load. */
  readonly message?: string;
  /** The source line that decides it. */
  readonly source?: string;
}

export interface CorpusCase {
  readonly id: string;
  readonly source: string;
  readonly from: string;
  readonly steps: unknown[];
  readonly arranged?: string;
  /** Generated ONNX models: repository path → onnxModels key. */
  readonly onnx?: Record<string, string>;
  /**
   * Other generated model files (TensorFlow GraphDefs and SavedModels, OpenVINO IRs, DALI pipelines, TorchScript):
   * repository path → modelFiles key.
   */
  readonly modelFiles?: Record<string, string>;
  /** Also validated as a SageMaker MME archive (the authors deploy it on a multi-model endpoint). */
  readonly mme?: boolean;
  readonly triton: TritonVerdict;
  readonly expect?: Expectation;
  /** With --run-python, when that changes the verdict. */
  readonly expectRunPython?: Expectation;
  /** The python models' stand-ins (python-models.json): repository path → the file's text. */
  readonly standIns?: Record<string, string>;
}

export interface SeededMistake {
  readonly id: string;
  /** The case the mistake is seeded into. */
  readonly base: string;
  readonly what: string;
  readonly edits: readonly Edit[];
  readonly triton: TritonVerdict;
  readonly expect: Expectation;
  readonly mme?: boolean;
}

export type Edit =
  | { readonly file: string; readonly replace: string; readonly with: string }
  | { readonly file: string; readonly write: string }
  | { readonly file: string; readonly delete: true };

/**
 * What record_python_model.py recorded of an upstream python model: what the validator can see of it, from which
 * pythonStandIn writes a file of our own (the upstream code is never committed).
 */
export interface PythonModelSpec {
  /** The module-level statements kept: imports (with any try/except around them), an exception raised at import. */
  readonly module: readonly string[];
  readonly bases?: readonly string[];
  /** TritonPythonModel's methods, each `[@decorator ...][async ]name(parameters)`. */
  readonly methods: readonly string[];
  readonly autoComplete?: RecordedAutoComplete;
}

/** What auto_complete_config did when run once with the stand-in triton_python_backend_utils. */
export interface RecordedAutoComplete {
  /** The calls it made on the config it was given, in order: [method, ...arguments]. */
  readonly calls: readonly (readonly [string, ...unknown[]])[];
  readonly then:
    | 'return config'
    | 'return None'
    | { readonly return: unknown }
    | { readonly raise: { readonly type: string; readonly message: string; readonly args: readonly unknown[] } };
  /** It read the config (as_dict): the calls are those it made for a config that declares nothing. */
  readonly readsConfig?: boolean;
  /** Modules it imports that were not installed where it was recorded: empty modules stood for them. */
  readonly withEmptyModules?: readonly string[];
}

/** python-models.json, written by import.js. */
export interface PythonModels {
  /** `owner/repo@commit:path` of the upstream file → what was recorded of it. */
  readonly models: Record<string, PythonModelSpec>;
  /** Case id → path in the case → `models` key. */
  readonly placed: Record<string, Record<string, string>>;
}

/** A model file of the corpus: one make_model_files.py writes, a serialized DALI pipeline or a TorchScript archive. */
export type CorpusModelFileSpec =
  | ModelFileSpec
  | (DaliPipelineSpec & { readonly format: 'dali' })
  | (TorchScriptSpec & { readonly format: 'torchscript' });

export interface Corpus {
  readonly sources: Record<string, { repo: string; commit: string; licence: string; note?: string }>;
  readonly onnxModels: Record<string, OnnxSpec>;
  /**
   * Model files with the interface of the upstream file (`from`): written by test/model-files/make_model_files.py, or
   * (`dali`, `torchscript`) by dali-writer.ts and torchscript-writer.ts.
   */
  readonly modelFiles: Record<string, CorpusModelFileSpec & { readonly from: string }>;
  readonly pythonModels: PythonModels;
  readonly cases: CorpusCase[];
  readonly mistakes: SeededMistake[];
}

export function loadCorpus(): Corpus {
  const corpus = JSON.parse(readFileSync(join(CORPUS_DIR, 'corpus.json'), 'utf8')) as Corpus;
  const pythonModels = JSON.parse(readFileSync(join(CORPUS_DIR, 'python-models.json'), 'utf8')) as PythonModels;
  const standIns = (id: string) => {
    const placed = Object.entries(pythonModels.placed[id] ?? {});
    return placed.length === 0
      ? {}
      : { standIns: Object.fromEntries(placed.map(([path, key]) => [path, pythonStandIn(key, pythonModels.models[key]!)])) };
  };
  return { ...corpus, pythonModels, cases: corpus.cases.map((c) => ({ ...c, ...standIns(c.id) })), mistakes: corpus.mistakes ?? [] };
}

/** A JSON value as a python literal. */
function pyLiteral(value: unknown): string {
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number' || typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(pyLiteral).join(', ')}]`;
  return `{${Object.entries(value as object).map(([k, v]) => `${JSON.stringify(k)}: ${pyLiteral(v)}`).join(', ')}}`;
}

/**
 * The stand-in for the upstream python model `origin` (`owner/repo@commit:path`): its module-level imports, class
 * TritonPythonModel with its methods' names and parameters and empty bodies, and an auto_complete_config that makes the
 * recorded calls with their values and ends as recorded. Its text names the methods only where the class has them:
 * the validator reads the text, too (lib/repository/io-completion.ts).
 */
export function pythonStandIn(origin: string, spec: PythonModelSpec): string {
  const auto = spec.autoComplete;
  const out = [
    '# Stand-in for the python model',
    `#   ${origin}`,
    '# None of its code is here: only what test/real-world/record_python_model.py recorded of it (python-models.json),',
    '# written by corpus.ts: its module-level imports and its model class\'s methods with their parameters (empty bodies)' +
      (auto ? ',' : '.'),
    ...(auto ? ['# and the calls its configuration auto-complete made, with their values, when it was run once.'] : []),
    '',
    ...spec.module,
    '',
    '',
    `class TritonPythonModel${spec.bases?.length ? `(${spec.bases.join(', ')})` : ''}:`,
  ];
  for (const [i, method] of spec.methods.entries()) {
    const [, decorators = '', async = '', name = '', params = ''] = /^((?:@\w+ )*)(async )?(\w+)\((.*)\)$/s.exec(method) ?? [];
    if (!name) throw new Error(`${origin}: unreadable method ${JSON.stringify(method)}`);
    if (i > 0) out.push('');
    out.push(...decorators.trim().split(' ').filter(Boolean).map((d) => `    ${d}`), `    ${async}def ${name}(${params}):`);
    if (name === 'auto_complete_config' && auto) {
      out.push(...autoCompleteBody(auto, params.split(',')[decorators.includes('@classmethod') ? 1 : 0]!));
    } else out.push('        pass');
  }
  if (spec.methods.length === 0) out.push('    pass');
  return `${out.join('\n')}\n`;
}

function autoCompleteBody(auto: RecordedAutoComplete, param: string): string[] {
  const config = param.split('=')[0]!.trim();
  const then = auto.then;
  return [
    ...(auto.readsConfig ? ['        # It reads the config it is given: these are the calls it made for one that declares nothing.'] : []),
    ...(auto.withEmptyModules
      ? [`        # Recorded with empty modules for ${auto.withEmptyModules.join(', ')}, not installed where it ran.`]
      : []),
    ...auto.calls.map(([method, ...args]) => `        ${config}.${method}(${args.map(pyLiteral).join(', ')})`),
    then === 'return config'
      ? `        return ${config}`
      : then === 'return None'
        ? '        return None'
        : 'raise' in then
          ? `        raise ${then.raise.type}(${then.raise.args.map(pyLiteral).join(', ')})`
          : `        return ${pyLiteral(then.return)}`,
  ];
}

/** A directory of a case that the tests validate, and whether as a SageMaker MME archive. */
export interface Target {
  readonly path: string;
  readonly mme: boolean;
}

/** What a case validates: its `validate` list, or its root (and, for an `mme` case, its root as an archive too). */
export function targetsOf(c: CorpusCase): Target[] {
  const listed = (c as { validate?: { path: string; mme?: boolean }[] }).validate;
  if (listed) return listed.map((t) => ({ path: t.path, mme: Boolean(t.mme) }));
  return c.mme ? [{ path: '.', mme: false }, { path: '.', mme: true }] : [{ path: '.', mme: false }];
}

export function caseDir(c: { id: string }): string {
  return join(CORPUS_DIR, 'cases', c.id);
}

/** The python3 that has the onnx and numpy packages (test/tools.ts), or undefined. */
export function onnxPython(): string | undefined {
  return pythonWith(['onnx', 'numpy']);
}

/**
 * Writes every ONNX model the corpus names into `dir` (one file per spec, `<key>.onnx`) in one python process, and
 * every other model file (`<key>.model`) in another.
 * Returns the directory.
 */
export function generateOnnxModels(corpus: Corpus, dir: string, python: string): string {
  const jobs: Record<string, OnnxSpec> = {};
  for (const [key, spec] of Object.entries(corpus.onnxModels)) jobs[join(dir, `${key}.onnx`)] = spec;
  const run = spawnSync(python, [join(CORPUS_DIR, 'make_onnx.py')], { input: JSON.stringify(jobs), encoding: 'utf8', timeout: 120_000 });
  if (run.status !== 0) throw new Error(`make_onnx.py failed: ${run.stderr}`);
  // The other model files (`<key>.model`): DALI pipelines and TorchScript archives written here, the rest by protobuf
  // from the same python.
  const files: Record<string, ModelFileSpec> = {};
  for (const [key, spec] of Object.entries(corpus.modelFiles)) {
    const path = join(dir, `${key}.model`);
    if (spec.format === 'dali') writeFileSync(path, daliPipeline(spec));
    else if (spec.format === 'torchscript') writeFileSync(path, torchScript(spec));
    else files[path] = spec;
  }
  if (Object.keys(files).length > 0) writeModelFiles(files, python);
  return dir;
}

/**
 * generateOnnxModels once per test run: the corpus tests of a run (validation, packaging) share one directory, kept in
 * the run's directory (MME_TEST_RUN_DIR, which the global teardown removes) under the SHA-256 of all that makes its
 * files (the specs, the python, the scripts and writers), so a run generates them once: a CI run too, whose run
 * directory starts empty. Outside a Jest run, a new temporary directory.
 */
export function generatedModels(corpus: Corpus, python: string): string {
  const run = process.env.MME_TEST_RUN_DIR;
  if (!run) return generateOnnxModels(corpus, mkdtempSync(join(tmpdir(), 'mme-corpus-onnx-')), python);
  const hash = createHash('sha256').update(JSON.stringify([corpus.onnxModels, corpus.modelFiles, python]));
  const writers = join(__dirname, '..', 'model-files');
  const sources = [join(CORPUS_DIR, 'make_onnx.py'), __filename, ...readdirSync(writers).filter((f) => !f.includes('.test.')).sort()
    .map((f) => join(writers, f))];
  for (const file of sources) hash.update(file).update(readFileSync(file));
  const dir = join(run, 'corpus-models', hash.digest('hex').slice(0, 16));
  if (existsSync(dir)) return dir;
  mkdirSync(dirname(dir), { recursive: true });
  const fresh = generateOnnxModels(corpus, mkdtempSync(`${dir}.tmp-`), python);
  try {
    renameSync(fresh, dir); // complete, or not there: another test file reads it only once renamed
  } catch (err) {
    // Another file of the run (the other worker) renamed its own first: the same files.
    if (!existsSync(dir)) throw err;
    rmSync(fresh, { recursive: true, force: true });
  }
  return dir;
}

const created: string[] = [];

/**
 * Copies a case into a temporary directory, puts the generated ONNX models and the python models' stand-ins in place
 * and applies `edits`.
 */
export function materialize(c: CorpusCase, onnxDir: string | undefined, edits: readonly Edit[] = []): string {
  const root = mkdtempSync(join(tmpdir(), 'mme-corpus-'));
  created.push(root);
  cpSync(caseDir(c), root, { recursive: true });
  if (onnxDir) {
    for (const [path, key] of Object.entries(c.onnx ?? {})) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      cpSync(join(onnxDir, `${key}.onnx`), join(root, path));
    }
    for (const [path, key] of Object.entries(c.modelFiles ?? {})) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      cpSync(join(onnxDir, `${key}.model`), join(root, path));
    }
  }
  for (const [path, text] of Object.entries(c.standIns ?? {})) writeFileSync(join(root, path), text);
  for (const edit of edits) {
    const path = join(root, edit.file);
    if ('delete' in edit) rmSync(path, { recursive: true, force: true });
    else if ('write' in edit) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, edit.write);
    } else {
      const text = readFileSync(path, 'utf8');
      if (!text.includes(edit.replace)) throw new Error(`${edit.file} does not contain ${JSON.stringify(edit.replace)}`);
      writeFileSync(path, text.replace(edit.replace, edit.with));
    }
  }
  return root;
}

export function removeMaterialized(): void {
  for (const root of created.splice(0)) rmSync(root, { recursive: true, force: true });
}
