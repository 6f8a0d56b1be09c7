// Slow: ~11 s on a quiet 2-core machine (test/sequencer.js starts it early on a clean clone).
// --run-python with two models or more: one python forks each model's process (lib/python-auto-complete/fork-server.ts).
// Each model must get what a python of its own gives it, whatever another model does: exit, crash, hang, print, kill
// the server or stop it.

import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ForkServer } from '../../lib/python-auto-complete/fork-server';
import {
  AutoCompleteSession, runAutoComplete, type AutoCompleteJob, type AutoCompleteResult, type RunOptions,
} from '../../lib/python-auto-complete/run';
import { FORK_SERVER, STAND_IN_UTILS } from '../../lib/python-auto-complete/stand-in';
import { isMmeError } from '../../lib/errors';
import { validateRepository } from '../../lib/repository/validate';
import { loadScaled } from '../load-scale';
import { makeRepo, removeRepos } from '../repository/repo-builder';
import { pythonWith, suiteFor } from '../tools';
import { untilIn } from '../cli/cli-process';

afterAll(removeRepos);

// The run's inventory already knows which python3 imports numpy (test/tools.ts): no python is started to ask again.
const python = pythonWith(['numpy']) ?? 'python3';

const COMPLETES = `import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    @staticmethod
    def auto_complete_config(config):
        config.add_input({"name": "X", "data_type": "TYPE_FP32", "dims": [4]})
        return config
`;

/**
 * COMPLETES without numpy, for the models where numpy is not the point: a python of its own that imports numpy costs
 * twice what one without it does (the fork server has it imported already, whatever the model).
 */
const PLAIN = COMPLETES.replace('import numpy as np\n', '');

/** A model that marks modules a sibling may have marked, and fails if one was. */
const MARKS = `import json, os
import triton_python_backend_utils as utils
assert not hasattr(json, "MARK") and not hasattr(utils, "MARK") and os.path.samefile(utils.get_model_dir(), os.getcwd())
json.MARK = utils.MARK = 1
${PLAIN}`;

/** A model that reports whether it was forked by the server (its parent runs auto_complete_server.py). */
const REPORTS_PARENT = `import os


def _parent_is_server():
    try:
        with open("/proc/%d/cmdline" % os.getppid(), "rb") as f:
            return b"auto_complete_server.py" in f.read()
    except OSError:
        return False


class TritonPythonModel:
    @staticmethod
    def auto_complete_config(config):
        config.add_input({"name": "forked" if _parent_is_server() else "own_process", "data_type": "TYPE_FP32", "dims": [1]})
        return config
`;

/**
 * A model that hangs: it never returns, and costs no CPU while the test waits for its timeout (a loop that spins would
 * burn a core for the whole timeout; what is proven, the server killing it at its deadline, is the same).
 */
const HANGS = `import time\nwhile True:\n    time.sleep(60)\n`;

/** What each model does, as model.py text. */
const MODELS: Record<string, string> = {
  completes: COMPLETES,
  prints: `print("to stdout, which the runner sends to stderr")\n${PLAIN}`,
  writes_fd1: `import os\nos.write(1, b"not json")\n${PLAIN}`,
  exits: `import sys\nsys.exit(3)\n${COMPLETES}`,
  os_exit: `import os, sys\nsys.stderr.write("leaving\\n")\nos._exit(7)\n${COMPLETES}`,
  kills_itself: `import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n${COMPLETES}`,
  // Ends with numpy imported: its exit handlers run with the model's, forked as in a python of its own.
  at_exit: `import atexit, os\natexit.register(lambda: os.write(1, b" and more"))\n${COMPLETES}`,
  reads_stdin: `import sys\nassert sys.stdin.read() == ""\n${PLAIN}`,
  cwd: `import os\nassert os.path.basename(os.getcwd()) == "1" and os.path.isfile("model.py")\n${PLAIN}`,
  // A sibling's changes to shared modules must not show: each model's process is its own. The stand-in module too
  // (the server has it imported before it forks), and its get_model_dir is this model's.
  marks_json: MARKS,
  marks_json_too: MARKS,
  raises: PLAIN.replace('        return config', '        raise ValueError("no")'),
};

function jobsFor(models: Record<string, string>): AutoCompleteJob[] {
  const files: Record<string, string> = {};
  for (const [name, text] of Object.entries(models)) {
    files[`${name}/config.pbtxt`] = 'backend: "python"';
    files[`${name}/1/model.py`] = text;
  }
  const root = makeRepo(files);
  return Object.keys(models).map((name) => ({
    name,
    modelDir: join(root, name),
    versionDir: '1',
    fileName: 'model.py',
    configJson: JSON.stringify({ name, max_batch_size: 0, input: [], output: [] }),
  }));
}

/** Each job run alone: one job takes a python of its own, the way every model ran before the server. */
async function eachAlone(jobs: AutoCompleteJob[], options: RunOptions) {
  const results = [];
  for (const job of jobs) results.push((await runAutoComplete([job], options))[0]!);
  return results;
}

/** A python3 at `dir`/bin/`name` that records each start in `log`, then runs the real one. */
function countingPython(dir: string, name: string, log: string): string {
  const path = join(dir, 'bin', name);
  writeFileSync(path, `#!/bin/sh\necho started >> '${log}'\nexec '${python}' "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

const inputNames = (r: { ok: boolean; config?: Record<string, unknown> }) =>
  r.ok ? (r.config!.input as { name: string }[]).map((i) => i.name) : undefined;

/** A model that hangs beside one that completes, run with a timeout: the results and that timeout. */
async function hangBesideOne() {
  const jobs = jobsFor({ hangs: `${HANGS}${COMPLETES}`, completes: COMPLETES });
  const timeoutMs = loadScaled(3000);
  return { timeoutMs, results: await runAutoComplete(jobs, { python, timeoutMs }) };
}

/** A server that a model it forked stopped (SIGSTOP), asked twice to run that model: what each run gave. */
async function stoppedServer() {
  const stopper = REPORTS_PARENT.replace(
    'class TritonPythonModel:',
    'if _parent_is_server():\n    import signal\n    os.kill(os.getppid(), signal.SIGSTOP)\n\n\nclass TritonPythonModel:',
  );
  const jobs = jobsFor({ stops_server: stopper, b: REPORTS_PARENT });
  const stub = makeRepo({ 'auto_complete_server.py': FORK_SERVER, 'triton_python_backend_utils.py': STAND_IN_UTILS });
  const server = ForkServer.start(python, join(stub, 'auto_complete_server.py'), process.env, 500);
  try {
    const [modelDir, name] = [jobs[0]!.modelDir, jobs[0]!.name];
    const input = JSON.stringify({
      stub_dir: stub, version_dir: join(modelDir, '1'), model_dir: modelDir, module: '1.model',
      model_file: join(modelDir, '1', 'model.py'), name, config: jobs[0]!.configJson,
    });
    const job = { cwd: join(modelDir, '1'), input, timeoutMs: 1000, stderrLimit: 1024 };
    return [await server.run(job), await server.run(job)];
  } finally {
    await server.close();
  }
}

suiteFor({ python: ['numpy'] })('--run-python with a fork server', () => {
  const options: RunOptions = { python, timeoutMs: loadScaled(30_000) };

  // The two scenarios that spend their time waiting out a timeout start together when the suite does, and their tests
  // read what they got: the waits (3 s, and twice 1.5 s) overlap the other tests' work instead of holding this jest
  // worker idle one after the other. They name their python, so no start of theirs shows in a test's count of
  // MME_DEPLOY_PYTHON's starts; a rejection is reported by the test that awaits it.
  let waits: { hang: ReturnType<typeof hangBesideOne>; stopped: ReturnType<typeof stoppedServer> } | undefined;
  beforeAll(() => {
    const handled = <T>(promise: Promise<T>) => {
      promise.catch(() => undefined);
      return promise;
    };
    waits = { hang: handled(hangBesideOne()), stopped: handled(stoppedServer()) };
  });
  afterAll(async () => {
    await Promise.allSettled([waits?.hang, waits?.stopped]);
  });

  /**
   * One run of MODELS and two models that report their parent (`a`, `b`), and each of MODELS and `a` alone: what the two
   * tests below read, each its own part (one fork server, 0.5 s of CPU, less than a run for each).
   */
  let shared: Promise<{ forked: AutoCompleteResult[]; alone: AutoCompleteResult[] }> | undefined;
  const sharedRun = () =>
    (shared ??= (async () => {
      const jobs = jobsFor({ ...MODELS, a: REPORTS_PARENT, b: REPORTS_PARENT });
      const forked = await runAutoComplete(jobs, { ...options, concurrency: 3 });
      return { forked, alone: await eachAlone(jobs.slice(0, Object.keys(MODELS).length + 1), options) };
    })());

  it('gives each model what a python of its own gives it, whatever the others do', async () => {
    const run = await sharedRun();
    const count = Object.keys(MODELS).length;
    const forked = run.forked.slice(0, count);
    expect(forked).toEqual(run.alone.slice(0, count));
    const byName = Object.fromEntries(Object.keys(MODELS).map((name, i) => [name, forked[i]!]));
    for (const name of ['completes', 'prints', 'reads_stdin', 'cwd', 'marks_json', 'marks_json_too']) {
      expect([name, inputNames(byName[name]!)]).toEqual([name, ['X']]);
    }
    expect(byName.exits).toMatchObject({ ok: false, stage: 'import', type: 'SystemExit', message: '3' });
    expect(byName.os_exit).toEqual({ ok: false, stage: 'crash', type: 'Crash', message: 'python exited 7: leaving' });
    expect(byName.kills_itself).toEqual({ ok: false, stage: 'crash', type: 'Crash', message: 'python exited SIGKILL' });
    expect(byName.writes_fd1).toMatchObject({ ok: false, stage: 'crash', message: 'python exited 0' });
    expect(byName.at_exit).toMatchObject({ ok: false, stage: 'crash', message: 'python exited 0' });
    expect(byName.raises).toMatchObject({ ok: false, stage: 'auto_complete', type: 'ValueError', message: 'no', line: 8 });
  });

  it('runs the models of one run in processes the server forks, and one model alone in a python of its own', async () => {
    const { forked, alone } = await sharedRun();
    expect(forked.slice(-2).map(inputNames)).toEqual([['forked'], ['forked']]);
    expect(alone.slice(-1).map(inputNames)).toEqual([['own_process']]);
  });

  it('times out a model that hangs, and only that one', async () => {
    const { timeoutMs, results } = await waits!.hang;
    const message = `did not finish within ${Math.round(timeoutMs / 1000)} s`;
    expect(results[0]).toEqual({ ok: false, stage: 'timeout', type: 'Timeout', message });
    expect(inputNames(results[1]!)).toEqual(['X']);
  });

  it('runs the models the server had not answered in pythons of their own when a model kills the server', async () => {
    // Only when forked: as a process of its own, its parent is this test.
    const killer = REPORTS_PARENT.replace(
      'class TritonPythonModel:',
      'if _parent_is_server():\n    os.kill(os.getppid(), 9)\n\n\nclass TritonPythonModel:',
    );
    const jobs = jobsFor({ kills_server: killer, b: PLAIN, c: PLAIN, d: REPORTS_PARENT });
    // Named as a shim would be: the pythons of their own are the interpreter the server said it is, not this again.
    const dir = makeRepo({ 'bin/': null });
    const log = join(dir, 'starts');
    const results = await runAutoComplete(jobs, { ...options, python: countingPython(dir, 'python3', log), concurrency: 1 });
    expect(results.map(inputNames)).toEqual([['own_process'], ['X'], ['X'], ['own_process']]);
    expect(readFileSync(log, 'utf8')).toBe('started\n');
  });

  it('gives up on a server a model stopped, and runs its models in pythons of their own', async () => {
    // The server stopped answers nothing: after the job's timeout and the grace, it is given up (undefined), twice.
    expect(await waits!.stopped).toEqual([undefined, undefined]);
  });

  it('is cancelled by the signal, and leaves no model running', async () => {
    const keep = join(makeRepo({ 'keep/': null }), 'keep');
    const pidFile = join(keep, 'pid');
    // The model writes its pid under another name and renames it: the file appears whole, in one event.
    const jobs = jobsFor({
      hangs: `import os\nopen(${JSON.stringify(`${pidFile}.tmp`)}, "w").write(str(os.getpid()))\n` +
        `os.replace(${JSON.stringify(`${pidFile}.tmp`)}, ${JSON.stringify(pidFile)})\n${HANGS}`,
      completes: COMPLETES,
    });
    const written = untilIn(keep, () => existsSync(pidFile), 'the hanging model to write its pid');
    const controller = new AbortController();
    const running = runAutoComplete(jobs, { ...options, signal: controller.signal });
    await written; // the model is running: cancel it now
    controller.abort();
    const failure = await running.catch((err: unknown) => err);
    expect(isMmeError(failure, 'ABORTED')).toBe(true);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }) as Error);
  });

  it('is a usage error naming the interpreter when it cannot be found, with two models as with one', async () => {
    const jobs = jobsFor({ a: COMPLETES, b: COMPLETES });
    const failure = await runAutoComplete(jobs, { python: '/nonexistent/python3' }).catch((err: unknown) => err);
    expect(isMmeError(failure, 'USAGE')).toBe(true);
    expect((failure as Error).message).toContain("--run-python needs a python3 interpreter, and '/nonexistent/python3' was not found");
  });

  /** A repository of two python models, one of them not compiling (`def f(:`), for the syntax check. */
  const syntaxRepo = (okTail = '') =>
    makeRepo({
      'ok/config.pbtxt': 'backend: "python"',
      'ok/1/model.py': PLAIN + okTail,
      'bad/config.pbtxt': 'backend: "python"',
      'bad/1/model.py': `def f(:\n    pass\n${COMPLETES}`,
    });
  const syntaxOf = (report: { diagnostics: { code: string }[] }) => report.diagnostics.filter((d) => d.code === 'python-syntax');

  it('checks model.py syntax in the session\'s python, with --run-python or without, as a python of its own does', async () => {
    const dir = makeRepo({ 'bin/': null });
    const log = join(dir, 'starts');
    const counting = countingPython(dir, 'python3', log);
    const repo = syntaxRepo();
    const own = await validateRepository(repo, { pythonSyntax: { python } });
    expect(syntaxOf(own)).toEqual([expect.objectContaining({ model: 'bad', file: 'bad/1/model.py', line: 1 })]);
    // A check that started a python of its own would start this one too (MME_DEPLOY_PYTHON): counted.
    const named = process.env.MME_DEPLOY_PYTHON;
    process.env.MME_DEPLOY_PYTHON = counting;
    const session = AutoCompleteSession.open({ python: counting });
    try {
      expect((await validateRepository(repo, { pythonSyntax: { session } })).diagnostics).toEqual(own.diagnostics);
      // Other bytes in `ok` (a comment): checked anew, not answered from the check above.
      const withRun = await validateRepository(syntaxRepo('# again\n'), { runPython: { session } });
      expect(syntaxOf(withRun)).toEqual(syntaxOf(own));
      // Only `ok` ran (a model that does not compile is not imported), in a process the session's python forked.
      expect(withRun.models.map((m) => m.name).sort()).toEqual(['bad', 'ok']);
      expect(readFileSync(log, 'utf8')).toBe('started\n');

      // Files it checked once are not checked again: with its python gone (a model killed it), a copy of `repo` gets
      // the verdicts it gave, where a check of its own would start the python MME_DEPLOY_PYTHON now names.
      const killer = REPORTS_PARENT.replace(
        'class TritonPythonModel:',
        'if _parent_is_server():\n    os.kill(os.getppid(), 9)\n\n\nclass TritonPythonModel:',
      );
      await validateRepository(makeRepo({ 'k/config.pbtxt': 'backend: "python"', 'k/1/model.py': killer }), { runPython: { session } });
      const later = join(dir, 'later-starts');
      process.env.MME_DEPLOY_PYTHON = countingPython(dir, 'python3-later', later);
      expect((await validateRepository(syntaxRepo(), { pythonSyntax: { session } })).diagnostics).toEqual(own.diagnostics);
      expect(existsSync(later)).toBe(false);
      // A file it did not check is checked in a python of its own (the session's is gone), as MME_DEPLOY_PYTHON says.
      expect(syntaxOf(await validateRepository(syntaxRepo('# new\n'), { pythonSyntax: { session } }))).toEqual(syntaxOf(own));
      expect(readFileSync(later, 'utf8')).toBe('started\n');
    } finally {
      await session.close();
      if (named === undefined) delete process.env.MME_DEPLOY_PYTHON;
      else process.env.MME_DEPLOY_PYTHON = named;
    }
  });

  it.each([
    ['kills', 'os.kill(os.getppid(), 9)'],
    ['stops', 'import signal\n    os.kill(os.getppid(), signal.SIGSTOP)'],
  ])('keeps the syntax verdicts of later validations when a model %s the session\'s python', async (_what, act) => {
    const harm = REPORTS_PARENT.replace('class TritonPythonModel:', `if _parent_is_server():\n    ${act}\n\n\nclass TritonPythonModel:`);
    const harmful = makeRepo({ 'harm/config.pbtxt': 'backend: "python"', 'harm/1/model.py': harm });
    const repo = syntaxRepo();
    const own = await validateRepository(repo, { pythonSyntax: { python } });
    const session = AutoCompleteSession.open({ python, graceMs: 500 });
    try {
      await validateRepository(harmful, { runPython: { session, timeoutMs: loadScaled(2000) } });
      // The session's python is gone (or given up on): a model now runs in a python of its own...
      expect((await runAutoComplete(jobsFor({ a: REPORTS_PARENT }), { session })).map(inputNames)).toEqual([['own_process']]);
      // ...and so does the syntax check, with the same verdicts.
      expect((await validateRepository(repo, { pythonSyntax: { session } })).diagnostics).toEqual(own.diagnostics);
      expect(syntaxOf(await validateRepository(repo, { runPython: { session } }))).toEqual(syntaxOf(own));
    } finally {
      await session.close();
    }
  });

  it('keeps one python for the runs of a session, and refuses a closed session', async () => {
    const session = AutoCompleteSession.open({ python });
    const jobs = jobsFor({ a: REPORTS_PARENT });
    expect((await runAutoComplete(jobs, { session })).map(inputNames)).toEqual([['forked']]);
    expect((await runAutoComplete(jobsFor({ b: COMPLETES, c: MODELS.exits! }), { session }))[0]).toMatchObject({ ok: true });
    await session.close();
    const failure = await runAutoComplete(jobs, { session }).catch((err: unknown) => err);
    expect(isMmeError(failure, 'USAGE')).toBe(true);
  });
});
