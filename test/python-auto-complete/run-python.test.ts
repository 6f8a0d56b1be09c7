// `validate --run-python`: python models' auto_complete_config run in python3 with the stand-in
// triton_python_backend_utils, as Triton does at load; the completed config checked and used by the ensemble rules.

import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { validateRepository } from '../../lib/repository/validate';
import { isMmeError } from '../../lib/errors';
import { runCli } from '../cli/run-cli';
import { pythonWith, suiteFor } from '../tools';
import { makeRepo, removeRepos, RepoFiles } from '../repository/repo-builder';

afterAll(removeRepos);

// The run's inventory already knows which python3 imports numpy (test/tools.ts): no python is started to ask again.
const python = pythonWith(['numpy']) ?? 'python3';

/** A python model whose auto_complete_config declares TEXT (string) → IDS (INT64, [8]) and dynamic batching. */
const TOKENIZER_PY = `import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    @staticmethod
    def auto_complete_config(config):
        config.set_max_batch_size(8)
        config.add_input({"name": "TEXT", "data_type": "TYPE_STRING", "dims": [1]})
        config.add_output({"name": "IDS", "data_type": "TYPE_INT64", "dims": [8]})
        config.set_dynamic_batching()
        return config

    def execute(self, requests):
        return []
`;

// A line ending in \ goes on at the start of the next (a template literal's line continuation): no line break there.
const ENSEMBLE: RepoFiles = {
  'ens/config.pbtxt': `platform: "ensemble" max_batch_size: 8
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "IDS" data_type: TYPE_INT64 dims: [ 8 ] } ]
ensemble_scheduling { step [ { model_name: "tok" model_version: -1 input_map { key: "TEXT" value: "TEXT" } \
output_map { key: "IDS" value: "IDS" } } ] }`,
  'ens/1/': null,
  'tok/config.pbtxt': 'backend: "python"',
  'tok/1/model.py': TOKENIZER_PY,
};

suiteFor({ python: ['numpy'] })('validate --run-python', () => {
  const run = (files: RepoFiles, options = {}) =>
    validateRepository(makeRepo(files), { runPython: { python: python, ...options } });
  const codes = (report: { diagnostics: { severity: string; code: string }[] }) => report.diagnostics.map((d) => `${d.severity}:${d.code}`);

  it('completes the config from auto_complete_config, so the ensemble step is checked against it', async () => {
    const offline = await validateRepository(makeRepo(ENSEMBLE));
    expect(codes(offline)).toContain('warning:ensemble-step-unchecked');
    const report = await run(ENSEMBLE);
    expect(report.diagnostics).toEqual([]);
    // A wrong map key is now certain: the completed config says which inputs the model has.
    const wrong = await run({
      ...ENSEMBLE,
      'ens/config.pbtxt': ENSEMBLE['ens/config.pbtxt']!.toString().replace('key: "TEXT"', 'key: "TXT"'),
    });
    expect(codes(wrong)).toContain('error:ensemble-unknown-input');
    expect(wrong.diagnostics.find((d) => d.code === 'ensemble-unknown-input')!.message).toContain(
      'mapping to non-existing input TXT in model tok',
    );
  });

  it('reports an exception of auto_complete_config in its own words, at the line of model.py that raised it', async () => {
    const report = await run({ 'tok/config.pbtxt': 'backend: "python" max_batch_size: 16', 'tok/1/model.py': TOKENIZER_PY });
    expect(report.ok).toBe(false);
    const d = report.diagnostics.find((x) => x.code === 'python-auto-complete')!;
    expect(d).toMatchObject({ severity: 'error', file: 'tok/1/model.py', line: 7 });
    expect(d.message).toMatch(
      /^configuration specified max_batch_size 16, but in auto-complete-config function for model 'tok' specified max_batch_size 8/,
    );
  });

  it('offers the module attributes of the real triton_python_backend_utils that models read at import', async () => {
    const model = `import numpy as np
import triton_python_backend_utils as pb_utils

FP32 = pb_utils.TRITON_STRING_TO_NUMPY["TYPE_FP32"]
assert pb_utils.triton_string_to_numpy("TYPE_STRING") is np.object_
assert pb_utils.numpy_to_triton_type(np.int64) == 9 and pb_utils.triton_to_numpy_type(11) is np.float32
assert not pb_utils.using_decoupled_model_transaction_policy({})


class TritonPythonModel:
    @staticmethod
    def auto_complete_config(config):
        config.add_input({"name": "X", "data_type": "TYPE_FP32", "dims": [4]})
        config.add_output({"name": "Y", "data_type": "TYPE_FP32", "dims": [4]})
        return config

    def execute(self, requests):
        return []
`;
    expect(codes(await run({ 'm/config.pbtxt': 'backend: "python"', 'm/1/model.py': model }))).toEqual([]);
    const missing = model.replace('pb_utils.TRITON_STRING_TO_NUMPY["TYPE_FP32"]', 'pb_utils.NO_SUCH_NAME');
    const report = await run({ 'm/config.pbtxt': 'backend: "python"', 'm/1/model.py': missing });
    expect(report.diagnostics.find((d) => d.code === 'python-import')?.message).toContain('NO_SUCH_NAME');
  });

  it('runs model.py with one OpenBLAS, OpenMP and MKL thread each unless the user set a number, alone or forked', async () => {
    // auto_complete_config says what it was given, in its exception's words.
    const threads = `import os


class TritonPythonModel:
    @staticmethod
    def auto_complete_config(config):
        names = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
        raise RuntimeError("threads " + " ".join(os.environ.get(name, "unset") for name in names))
`;
    const said = async (models: string[]) => {
      const files: RepoFiles = {};
      for (const name of models) Object.assign(files, { [`${name}/config.pbtxt`]: 'backend: "python"', [`${name}/1/model.py`]: threads });
      const report = await run(files);
      return report.diagnostics.filter((d) => d.code === 'python-auto-complete').map((d) => /threads \w+ \w+ \w+/.exec(d.message)?.[0]);
    };
    const saved = process.env.OMP_NUM_THREADS;
    try {
      delete process.env.OMP_NUM_THREADS;
      // One model runs in a python of its own; two are forked by the fork server.
      expect(await said(['a'])).toEqual(['threads 1 1 1']);
      expect(await said(['a', 'b'])).toEqual(['threads 1 1 1', 'threads 1 1 1']);
      process.env.OMP_NUM_THREADS = '4';
      expect(await said(['a'])).toEqual(['threads 1 4 1']);
      expect(await said(['a', 'b'])).toEqual(['threads 1 4 1', 'threads 1 4 1']);
    } finally {
      if (saved === undefined) delete process.env.OMP_NUM_THREADS;
      else process.env.OMP_NUM_THREADS = saved;
    }
  });

  it('reports a model.py that does not compile, an IndentationError too, as an error at its line', async () => {
    // A try/except whose except is indented one space off, as in a community model.py.
    const misindented = 'class TritonPythonModel:\n    def execute(self, requests):\n        try:\n            x = 1\n' +
      '         except Exception:\n            pass\n';
    const config = 'backend: "python" input [ { name: "A" data_type: TYPE_FP32 dims: [ 1 ] } ] ' +
      'output [ { name: "B" data_type: TYPE_FP32 dims: [ 1 ] } ]';
    const report = await run({ 'm/config.pbtxt': config, 'm/1/model.py': misindented });
    expect(report.ok).toBe(false);
    const d = report.diagnostics.find((x) => x.code === 'python-syntax')!;
    expect(d).toMatchObject({ severity: 'error', file: 'm/1/model.py', line: 5 });
    expect(d.message).toContain('IndentationError: unindent does not match any outer indentation level');
  });

  it('says auto_complete_config must return the config it was given', async () => {
    const report = await run({ 'tok/1/model.py': TOKENIZER_PY.replace('        return config\n', '        return None\n') });
    expect(report.diagnostics.find((x) => x.code === 'python-auto-complete')!.message).toContain(
      "auto_complete_config function in model 'tok' must return a valid pb.ModelConfig object.",
    );
  });

  it('warns, and checks nothing more, when model.py imports what this python does not have', async () => {
    const report = await run({ 'tok/config.pbtxt': 'backend: "python"', 'tok/1/model.py': `import no_such_package_here\n${TOKENIZER_PY}` });
    expect(report.ok).toBe(true);
    expect(report.diagnostics.find((x) => x.code === 'python-import')).toMatchObject({ severity: 'warning', line: 1 });
    expect(report.diagnostics.find((x) => x.code === 'python-import')!.message).toContain("No module named 'no_such_package_here'");
  });

  it('gives up on a model that hangs, with a warning, after the timeout', async () => {
    const report = await run(
      // It sleeps forever rather than spin: the same hang to the timeout, without a core burnt while the test waits.
      { 'tok/config.pbtxt': 'backend: "python"', 'tok/1/model.py': `import time\nwhile True:\n    time.sleep(60)\n${TOKENIZER_PY}` },
      { timeoutMs: 1000 },
    );
    expect(report.ok).toBe(true);
    expect(report.diagnostics.find((x) => x.code === 'python-auto-complete-unchecked')!.message).toContain('did not finish within 1 s');
  });

  it('imports model.py as <version>.model with its helper modules importable, and leaves no __pycache__ behind', async () => {
    const files: RepoFiles = {
      'tok/config.pbtxt': 'backend: "python"',
      'tok/1/model.py': 'from helpers import *\n',
      'tok/1/helpers.py': TOKENIZER_PY,
    };
    const root = makeRepo(files);
    const report = await validateRepository(root, { runPython: { python: python } });
    expect(report.diagnostics).toEqual([]);
    expect(readdirSync(join(root, 'tok', '1')).sort()).toEqual(['helpers.py', 'model.py']);
    expect(existsSync(join(root, 'tok', '__pycache__'))).toBe(false);
  });

  it('is a usage error when the interpreter cannot be found', async () => {
    const failure = await run(ENSEMBLE, { python: '/nonexistent/python3' }).catch((err: unknown) => err);
    expect(isMmeError(failure, 'USAGE')).toBe(true);
    expect((failure as Error).message).toContain("--run-python needs a python3 interpreter, and '/nonexistent/python3' was not found");
  });

  it('is off by default and a flag of mme-deploy validate', async () => {
    const root = makeRepo({ 'tok/config.pbtxt': 'backend: "python" max_batch_size: 16', 'tok/1/model.py': TOKENIZER_PY });
    expect((await runCli(['validate', root])).code).toBe(0);
    const run = await runCli(['validate', '--run-python', root], {
      env: { ...process.env, MME_DEPLOY_PYTHON: python },
    });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(
      "configuration specified max_batch_size 16, but in auto-complete-config function for model 'tok' specified max_batch_size 8",
    );
  });
});
