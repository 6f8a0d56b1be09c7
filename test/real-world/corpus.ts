// The real-world corpus (test/real-world/corpus.json): public Triton model repositories as their authors arrange them,
// with empty stand-ins for weights, Triton's verdict on each, and single mistakes seeded into them. This module
// materializes a case into a temporary directory (ONNX models generated, mistakes applied) for the tests.

import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

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
  /** Also validated as a SageMaker MME archive (the authors deploy it on a multi-model endpoint). */
  readonly mme?: boolean;
  readonly triton: TritonVerdict;
  readonly expect?: Expectation;
  /** With --run-python, when that changes the verdict. */
  readonly expectRunPython?: Expectation;
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

export interface Corpus {
  readonly sources: Record<string, { repo: string; commit: string; licence: string; note?: string }>;
  readonly onnxModels: Record<string, OnnxSpec>;
  readonly cases: CorpusCase[];
  readonly mistakes: SeededMistake[];
}

export function loadCorpus(): Corpus {
  const corpus = JSON.parse(readFileSync(join(CORPUS_DIR, 'corpus.json'), 'utf8')) as Corpus;
  return { ...corpus, mistakes: corpus.mistakes ?? [] };
}

export function caseDir(c: { id: string }): string {
  return join(CORPUS_DIR, 'cases', c.id);
}

/** The python3 that has the onnx package, or undefined. */
export function onnxPython(): string | undefined {
  for (const python of [process.env.MME_DEPLOY_TEST_PYTHON, '/usr/bin/python3', 'python3']) {
    if (!python) continue;
    if (spawnSync(python, ['-c', 'import onnx, numpy'], { timeout: 60_000 }).status === 0) return python;
  }
  return undefined;
}

/**
 * Writes every ONNX model the corpus names into `dir` (one file per spec, `<key>.onnx`) in one python process.
 * Returns the directory.
 */
export function generateOnnxModels(corpus: Corpus, dir: string, python: string): string {
  const jobs: Record<string, OnnxSpec> = {};
  for (const [key, spec] of Object.entries(corpus.onnxModels)) jobs[join(dir, `${key}.onnx`)] = spec;
  const run = spawnSync(python, [join(CORPUS_DIR, 'make_onnx.py')], { input: JSON.stringify(jobs), encoding: 'utf8', timeout: 120_000 });
  if (run.status !== 0) throw new Error(`make_onnx.py failed: ${run.stderr}`);
  return dir;
}

const created: string[] = [];

/** Copies a case into a temporary directory, puts the generated ONNX models in place and applies `edits`. */
export function materialize(c: CorpusCase, onnxDir: string | undefined, edits: readonly Edit[] = []): string {
  const root = mkdtempSync(join(tmpdir(), 'mme-corpus-'));
  created.push(root);
  cpSync(caseDir(c), root, { recursive: true });
  if (onnxDir) {
    for (const [path, key] of Object.entries(c.onnx ?? {})) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      cpSync(join(onnxDir, `${key}.onnx`), join(root, path));
    }
  }
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
