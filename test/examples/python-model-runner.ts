// Runs an example's Triton python model.py outside Triton, through test/examples/python/run_python_model.py and its
// test double of triton_python_backend_utils, and finds a python3 that has the packages the model imports.

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { ModelConfig } from '../../lib/config/model-config-schema';
import { toolInventory } from '../tools';

export interface TensorJson {
  readonly datatype: string;
  readonly shape: number[];
  readonly data: (number | string)[];
}
export type RequestJson = Record<string, TensorJson>;
export type ResponseJson = Record<string, TensorJson>;

const RUNNER = join(__dirname, 'python', 'run_python_model.py');

/** Interpreters tried in order: MME_DEPLOY_TEST_PYTHON (to point at a venv), then each python3 on PATH (test/tools.ts). */
function candidates(): string[] {
  return toolInventory().pythons.map((p) => p.path);
}

const probed = new Map<string, { ok: boolean; printed: string }>();

/**
 * The first python3 that imports every module, or the reason there is none (which the skipped test's name shows). For
 * the modules CI installs, prefer test/tools.ts (`itWithTools`), which fails under CI instead of skipping; this is for
 * the optional extras CI does not install (torch, tokenizers). `print`, a python expression, is printed by the same
 * probe (a version, say): what it prints comes back as `printed`, without importing the modules a second time.
 */
export function findPython(modules: readonly string[], print?: string): { python: string; printed: string } | { reason: string } {
  const script = [...modules.map((m) => `import ${m}`), ...(print === undefined ? [] : [`print(${print})`])].join('; ');
  for (const python of candidates()) {
    const key = `${python}\0${script}`;
    if (!probed.has(key)) {
      const run = spawnSync(python, ['-c', script], { encoding: 'utf8', timeout: 60_000 });
      probed.set(key, { ok: run.status === 0, printed: run.status === 0 ? run.stdout.trim() : '' });
    }
    const found = probed.get(key)!;
    if (found.ok) return { python, printed: found.printed };
  }
  return {
    reason:
      `no python3 here imports ${modules.join(', ')} ` +
      `(tried ${candidates().join(', ') || 'none on PATH'}; set MME_DEPLOY_TEST_PYTHON)`,
  };
}

/** Triton hands model.py its config as JSON with the protobuf field names; 64-bit integers come as numbers. */
export function tritonConfigJson(config: ModelConfig): unknown {
  return JSON.parse(JSON.stringify(config, (_key, value) => (typeof value === 'bigint' ? Number(value) : value)));
}

/** Loads model.py, calls initialize() with `config`, execute() with `requests`; returns one response per request. */
export function runPythonModel(
  python: string,
  modelPy: string,
  config: ModelConfig,
  requests: RequestJson[],
): ResponseJson[] {
  const run = runRunner(python, JSON.stringify({ model_py: modelPy, model_config: tritonConfigJson(config), requests }));
  if (run.status !== 0) {
    throw new Error(`${modelPy} failed (exit ${run.status ?? run.signal}):\n${run.stderr}`);
  }
  return responsesOf(modelPy, JSON.parse(run.stdout) as { responses: (ResponseJson | { error: string })[] });
}

/** The runner fed `input` (one job, or `{"jobs": [...]}`) on stdin. */
function runRunner(python: string, input: string) {
  return spawnSync(python, [RUNNER], {
    input,
    encoding: 'utf8',
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
  });
}

function responsesOf(modelPy: string, out: { responses: (ResponseJson | { error: string })[] }): ResponseJson[] {
  return out.responses.map((r, i) => {
    if ('error' in r && typeof r.error === 'string') throw new Error(`response ${i} of ${modelPy}: ${r.error}`);
    return r as ResponseJson;
  });
}

export interface ModelJob {
  readonly modelPy: string;
  readonly config: ModelConfig;
  readonly requests: RequestJson[];
}

/**
 * Runs several jobs as runPythonModel runs one, in one python: numpy, the runner and the test double are loaded once,
 * each model afresh from its own file. Per job, its responses, or the Error runPythonModel would have thrown for it.
 */
export function runPythonModels(python: string, jobs: readonly ModelJob[]): (ResponseJson[] | Error)[] {
  const batch = JSON.stringify({
    jobs: jobs.map((j) => ({ model_py: j.modelPy, model_config: tritonConfigJson(j.config), requests: j.requests })),
  });
  const run = runRunner(python, batch);
  if (run.status !== 0) throw new Error(`${RUNNER} failed (exit ${run.status ?? run.signal}):\n${run.stderr}`);
  const out = JSON.parse(run.stdout) as { results: ({ responses: (ResponseJson | { error: string })[] } | { failed: string })[] };
  return out.results.map((result, i) => {
    const { modelPy } = jobs[i]!;
    if ('failed' in result) return new Error(`${modelPy} failed:\n${result.failed}`);
    try {
      return responsesOf(modelPy, result);
    } catch (err) {
      return err as Error;
    }
  });
}
