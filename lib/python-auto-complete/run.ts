// Runs python models' auto_complete_config in python3 subprocesses, one per model as Triton runs one stub process
// per model, with the stand-in triton_python_backend_utils (stand-in.ts). Used by `validate --run-python`.

import { runPython } from './spawn-python';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MmeError } from '../errors';
import { pythonName, resolveInterpreter } from './interpreter';
import { RUNNER, STAND_IN_UTILS } from './stand-in';

export interface AutoCompleteJob {
  /** The model's name (what Triton's messages call it). */
  readonly name: string;
  /** Absolute path of the model directory. */
  readonly modelDir: string;
  /** The version directory's name (`1`). */
  readonly versionDir: string;
  /** The python file's name in the version directory (`model.py`). */
  readonly fileName: string;
  /** The model config as Triton hands it to the stub: JSON with defaults (see pythonConfigJson). */
  readonly configJson: string;
}

export type AutoCompleteResult =
  | { readonly ok: true; readonly ran: boolean; readonly config: Record<string, unknown> }
  | {
      readonly ok: false;
      /** Where it failed: importing model.py, finding TritonPythonModel, auto_complete_config itself, its result. */
      readonly stage: 'import' | 'class' | 'auto_complete' | 'return' | 'timeout' | 'crash';
      readonly type: string;
      readonly message: string;
      /** The line of model.py where it happened, when known. */
      readonly line?: number;
    };

export interface RunOptions {
  /** The interpreter. @default MME_DEPLOY_PYTHON, else `python3` */
  readonly python?: string;
  /** The interpreter's own path (sys.executable), when it is already known: it is then not asked again. */
  readonly executable?: string;
  /** How long one model may take (import and auto_complete_config). @default 30 seconds */
  readonly timeoutMs?: number;
  /** Models run at once. @default 2 */
  readonly concurrency?: number;
  readonly signal?: AbortSignal;
}

/** Runs every job; never throws for what a model does, only when python3 itself cannot be started. */
export async function runAutoComplete(jobs: readonly AutoCompleteJob[], options: RunOptions = {}): Promise<AutoCompleteResult[]> {
  if (jobs.length === 0) return [];
  const named = pythonName(options.python);
  const python = options.executable ?? (jobs.length > 1 ? resolveInterpreter(named) : named);
  const dir = mkdtempSync(join(tmpdir(), 'mme-run-python-'));
  try {
    writeFileSync(join(dir, 'triton_python_backend_utils.py'), STAND_IN_UTILS);
    writeFileSync(join(dir, 'run_auto_complete.py'), RUNNER);
    const results: AutoCompleteResult[] = new Array(jobs.length);
    let next = 0;
    const worker = async () => {
      while (next < jobs.length) {
        const index = next++;
        results[index] = await runOne(python, dir, jobs[index]!, options);
      }
    };
    await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 2, jobs.length) }, worker));
    return results;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function runOne(python: string, stubDir: string, job: AutoCompleteJob, options: RunOptions): Promise<AutoCompleteResult> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const stem = job.fileName.replace(/\.py$/, '');
  const input = JSON.stringify({
    stub_dir: stubDir,
    version_dir: join(job.modelDir, job.versionDir),
    model_dir: job.modelDir,
    module: `${job.versionDir}.${stem}`,
    model_file: join(job.modelDir, job.versionDir, job.fileName),
    name: job.name,
    config: job.configJson,
  });
  // -B and PYTHONDONTWRITEBYTECODE: importing model.py must not leave __pycache__ in the user's repository.
  // Hugging Face libraries are told to stay offline: nothing here may depend on the network.
  const run = await runPython(python, ['-B', join(stubDir, 'run_auto_complete.py')], {
    cwd: join(job.modelDir, job.versionDir),
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1' },
    input,
    timeoutMs,
    stderrLimit: 64 * 1024,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (run.kind === 'spawn-error') {
    const err = run.error;
    if (err.name === 'AbortError') throw new MmeError('ABORTED', 'Running auto_complete_config was cancelled.', { cause: err });
    if (err.code === 'ENOENT') {
      throw new MmeError(
        'USAGE',
        `--run-python needs a python3 interpreter, and '${python}' was not found. ` +
          'Install python3, or name one with MME_DEPLOY_PYTHON.',
        { cause: err },
      );
    }
    throw new MmeError('USAGE', `--run-python could not start '${python}': ${err.message}`, { cause: err });
  }
  if (run.kind === 'timeout') {
    return { ok: false, stage: 'timeout', type: 'Timeout', message: `did not finish within ${Math.round(timeoutMs / 1000)} s` };
  }
  try {
    return JSON.parse(run.stdout.toString()) as AutoCompleteResult;
  } catch {
    const tail = run.stderr.trim().split('\n').slice(-3).join(' ').slice(0, 400);
    return { ok: false, stage: 'crash', type: 'Crash', message: `python exited ${run.exit}${tail ? `: ${tail}` : ''}` };
  }
}
