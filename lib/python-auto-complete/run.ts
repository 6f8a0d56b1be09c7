// Runs python models' auto_complete_config in python3 subprocesses, one per model as Triton runs one stub process
// per model, with the stand-in triton_python_backend_utils (stand-in.ts). Used by `validate --run-python`. For two
// models or more, one python forks each model's process (fork-server.ts); what it cannot run, a python of its own does.

import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MmeError } from '../errors';
import { ForkServer } from './fork-server';
import { pythonName, resolveInterpreter } from './interpreter';
import { runPython } from './spawn-python';
import { FORK_SERVER, RUNNER, STAND_IN_UTILS } from './stand-in';
import type { SyntaxFault, SyntaxRunner } from './syntax-check';

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
  /**
   * A session that outlives this run (AutoCompleteSession.open): its python, started once, runs the models of every
   * run given it; `python` and `executable` are then the session's.
   * @default - a python of this run's own for two models or more, a process of its own for one
   */
  readonly session?: AutoCompleteSession;
}

const SERVER_FILE = 'auto_complete_server.py';
const RUNNER_FILE = 'run_auto_complete.py';

/** Where and how a run's models run: the stand-in's directory, the environment, the server when there is one. */
interface Runner {
  readonly stubDir: string;
  readonly env: NodeJS.ProcessEnv;
  readonly server: ForkServer | undefined;
  /** The python a model's own process is started with, when the server cannot run it. */
  fallbackPython(): string;
}

/**
 * The environment every model runs in. -B and PYTHONDONTWRITEBYTECODE: importing model.py must not leave __pycache__
 * in the user's repository. Hugging Face libraries are told to stay offline: nothing here may depend on the network.
 * The numerical libraries a model.py imports get one thread each, unless the user set a number: auto_complete_config
 * computes nothing. OpenBLAS (numpy's) otherwise starts a thread per core as numpy is imported: on 2 cores, numpy 2.4
 * from pip under python 3.11 took 0.25 s of CPU per import, against 0.16 s with one thread (more cores, more threads),
 * and the fork server forks each model from a python that imported numpy, where no BLAS thread pool then runs.
 */
function modelEnv(): NodeJS.ProcessEnv {
  const oneThread = Object.fromEntries(THREAD_VARIABLES.map((name) => [name, process.env[name] || '1']));
  return { ...process.env, ...oneThread, PYTHONDONTWRITEBYTECODE: '1', HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1' };
}

/** The thread counts of OpenBLAS, OpenMP (PyTorch, MKL's threading layer) and MKL. */
const THREAD_VARIABLES = ['OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'];

/** The directory with the stand-in triton_python_backend_utils, the runner and the fork server. */
function writeStubDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mme-run-python-'));
  writeFileSync(join(dir, 'triton_python_backend_utils.py'), STAND_IN_UTILS);
  writeFileSync(join(dir, RUNNER_FILE), RUNNER);
  writeFileSync(join(dir, SERVER_FILE), FORK_SERVER);
  return dir;
}

/** A platform where python can fork (not Windows): there the fork server is worth starting. */
const CAN_FORK = process.platform !== 'win32';

/**
 * One python for the models of several runs (`validateRepository(..., { runPython: { session } })` over many
 * repositories): started once, it forks a process for each model, so numpy is imported once for all of them. The
 * environment is the one at `open`. Close it when done: it ends the python and removes its temporary directory.
 */
export class AutoCompleteSession {
  /**
   * Starts the session's python now.
   * @param options.python the interpreter (@default MME_DEPLOY_PYTHON, else python3)
   * @param options.graceMs how long past a job's timeout its python may take to answer before it counts as stuck
   *   (a model stopped it), its jobs then run in pythons of their own (@default SERVER_GRACE_MS)
   */
  static open(options: { readonly python?: string; readonly graceMs?: number } = {}): AutoCompleteSession {
    return new AutoCompleteSession(pythonName(options.python), options.graceMs);
  }

  private constructor(python: string, graceMs: number | undefined) {
    const stubDir = writeStubDir();
    const env = modelEnv();
    const server = CAN_FORK ? ForkServer.start(python, join(stubDir, SERVER_FILE), env, graceMs) : undefined;
    sessionRunners.set(this, {
      python,
      syntaxAnswers: new Map(),
      stubDir,
      env,
      server,
      fallbackPython: once(() => server?.executable ?? resolveInterpreter(python)),
    });
  }

  /** Ends the session's python (killing any model still running) and removes its files. */
  async close(): Promise<void> {
    const runner = sessionRunners.get(this);
    if (!runner) return;
    sessionRunners.delete(this);
    try {
      await runner.server?.close();
    } finally {
      rmSync(runner.stubDir, { recursive: true, force: true });
    }
  }
}

/** Each open session's runner (kept out of the class's public shape). */
const sessionRunners = new WeakMap<AutoCompleteSession, SessionRunner>();

interface SessionRunner extends Runner {
  readonly python: string;
  /**
   * The verdicts its python gave, file by file (syntaxKey): a file that compiles by its bytes and the feature alone, a
   * fault by its name too (python's message may name the file). `null`: it compiles.
   */
  readonly syntaxAnswers: Map<string, SyntaxFault | null>;
  /** What the answers name as their interpreter (sys.executable, `major.minor`), once its python answered. */
  syntaxPython?: { readonly executable: string; readonly version: string };
}

/**
 * The model.py syntax check run by the session's python (SYNTAX_VERDICTS in a process it forks) instead of a python
 * of the check's own, so that validating many repositories with a session starts no python per repository, and files
 * it checked once are not checked again. Undefined when the session is closed or has no server (no fork on this
 * platform): the check then starts its own python.
 */
export function syntaxCheckRunner(session: AutoCompleteSession): SyntaxRunner | undefined {
  const runner = sessionRunners.get(session);
  const server = runner?.server;
  if (!runner || !server) return undefined;
  return {
    python: runner.python,
    async run(request, timeoutMs, signal) {
      // Files checked before (a repository validated as a Triton repository and as an MME archive, or again with
      // --run-python; the same model.py in many repositories made from one template) get the verdicts their python
      // gave: ast.parse of the same bytes for the same Python answers the same. Only the others are sent, in a process
      // forked for them; none when every file is known.
      const { syntax_check: check } = JSON.parse(request) as { syntax_check: { feature: number[]; files: [string, string][] } };
      const keys = check.files.map(([name, source]) => syntaxKeys(check.feature, name, source));
      const known = (k: { valid: string; fault: string }) =>
        runner.syntaxAnswers.get(k.valid) === null ? null : runner.syntaxAnswers.get(k.fault);
      // Each file not known yet goes to python, even the same bytes twice: its answer is found by its place in what
      // was sent, not counted along the files (an answer recorded for the first copy would shift the count).
      const sentAt = new Map<number, number>();
      const unknown: [string, string][] = [];
      check.files.forEach((file, i) => {
        if (known(keys[i]!) !== undefined) return;
        sentAt.set(i, unknown.length);
        unknown.push(file);
      });
      let asked: { executable: string; version: string; faults: Record<string, SyntaxFault> } | undefined;
      if (unknown.length > 0 || !runner.syntaxPython) {
        const input = JSON.stringify({ syntax_check: { feature: check.feature, files: unknown } });
        const run = await server.run({ cwd: runner.stubDir, input, timeoutMs, stderrLimit: 16 * 1024 }, signal);
        if (run?.kind !== 'closed' || run.exit !== '0') return run;
        try {
          asked = JSON.parse(run.stdout.toString('utf8')) as typeof asked;
        } catch {
          return run; // not an answer: the checker says what went wrong
        }
        if (!asked || typeof asked.executable !== 'string' || typeof asked.version !== 'string') return run;
        runner.syntaxPython = { executable: asked.executable, version: asked.version };
      }
      const faults: Record<string, SyntaxFault> = {};
      check.files.forEach((_, i) => {
        const k = keys[i]!;
        const sent = sentAt.get(i);
        let fault = known(k);
        if (sent !== undefined) {
          fault = asked?.faults[String(sent)] ?? null;
          runner.syntaxAnswers.set(fault ? k.fault : k.valid, fault);
        }
        if (fault) faults[String(i)] = fault;
      });
      const answer = { ...runner.syntaxPython!, count: check.files.length, faults };
      return { kind: 'closed', stdout: Buffer.from(JSON.stringify(answer)), stderr: '', exit: '0' };
    },
  };
}

/** A file's keys in a session's syntax answers: its verdict when it compiles (feature, bytes), and when not (and name). */
function syntaxKeys(feature: readonly number[], name: string, source: string): { valid: string; fault: string } {
  const valid = createHash('sha256').update(`${feature.join('.')}\0${source}`).digest('base64');
  return { valid, fault: createHash('sha256').update(`${valid}\0${name}`).digest('base64') };
}

/** Runs every job; never throws for what a model does, only when python3 itself cannot be started. */
export async function runAutoComplete(jobs: readonly AutoCompleteJob[], options: RunOptions = {}): Promise<AutoCompleteResult[]> {
  if (jobs.length === 0) return [];
  if (options.session) {
    const runner = sessionRunners.get(options.session);
    if (!runner) throw new MmeError('USAGE', 'The python session given to --run-python is closed.');
    return runAll(jobs, runner, options);
  }
  const named = pythonName(options.python);
  const stubDir = writeStubDir();
  const env = modelEnv();
  // One model: a process of its own costs less than a server that imports numpy before it forks.
  const server = CAN_FORK && jobs.length > 1 ? ForkServer.start(options.executable ?? named, join(stubDir, SERVER_FILE), env) : undefined;
  try {
    return await runAll(jobs, {
      stubDir,
      env,
      server,
      // Several models: the interpreter's own path (the server's, else asked once), not a shim started per model.
      fallbackPython: once(() => options.executable ?? (jobs.length > 1 ? (server?.executable ?? resolveInterpreter(named)) : named)),
    }, options);
  } finally {
    try {
      await server?.close();
    } finally {
      rmSync(stubDir, { recursive: true, force: true });
    }
  }
}

async function runAll(jobs: readonly AutoCompleteJob[], runner: Runner, options: RunOptions): Promise<AutoCompleteResult[]> {
  const results: AutoCompleteResult[] = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const index = next++;
      results[index] = await runOne(runner, jobs[index]!, options);
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 2, jobs.length) }, worker));
  return results;
}

function once<T>(compute: () => T): () => T {
  let value: { v: T } | undefined;
  return () => (value ??= { v: compute() }).v;
}

async function runOne(runner: Runner, job: AutoCompleteJob, options: RunOptions): Promise<AutoCompleteResult> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const stem = job.fileName.replace(/\.py$/, '');
  const input = JSON.stringify({
    stub_dir: runner.stubDir,
    version_dir: join(job.modelDir, job.versionDir),
    model_dir: job.modelDir,
    module: `${job.versionDir}.${stem}`,
    model_file: join(job.modelDir, job.versionDir, job.fileName),
    name: job.name,
    config: job.configJson,
  });
  const cwd = join(job.modelDir, job.versionDir);
  const stderrLimit = 64 * 1024;
  let python = '';
  const run =
    (await runner.server?.run({ cwd, input, timeoutMs, stderrLimit }, options.signal)) ??
    (await runPython((python = runner.fallbackPython()), ['-B', join(runner.stubDir, RUNNER_FILE)], {
      cwd,
      env: runner.env,
      input,
      timeoutMs,
      stderrLimit,
      ...(options.signal ? { signal: options.signal } : {}),
    }));
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
