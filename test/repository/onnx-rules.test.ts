// Triton's onnxruntime backend, offline: auto-complete and the config-against-graph checks on real ONNX files
// (written by python onnx through test/real-world/make_onnx.py), with the backend's own wording.

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { OnnxSpec } from '../real-world/corpus';
import { pythonWith, suiteFor } from '../tools';
import { loadRepository } from '../../lib/repository/validate';
import { checkOnnxModel } from '../../lib/repository/onnx-rules';
import { makeRepo, removeRepos, RepoFiles } from './repo-builder';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';

const python = pythonWith(['onnx', 'numpy']);
const specs: Record<string, Omit<OnnxSpec, 'from'>> = {
  // The QA models of server qa/L0_model_config/autofill_noplatform/onnx: INT32 in, INT8 out, batch and 16.
  batched: {
    inputs: [
      ['INPUT0', 'INT32', ['var_0', 16]],
      ['INPUT1', 'INT32', ['var_0', 16]],
    ],
    outputs: [
      ['OUTPUT0', 'INT8', ['var_1', 16]],
      ['OUTPUT1', 'INT8', ['var_2', 16]],
    ],
  },
  fixed: {
    inputs: [
      ['INPUT0', 'INT32', [16]],
      ['INPUT1', 'INT32', [16]],
    ],
    outputs: [
      ['OUTPUT0', 'INT8', [16]],
      ['OUTPUT1', 'INT8', [16]],
    ],
  },
  strings: { inputs: [['TEXT', 'STRING', [null, 1]]], outputs: [['TOKENS', 'STRING', [null, 1]]] },
  scalar: { inputs: [['X', 'FLOAT', []]], outputs: [['Y', 'FLOAT', []]] },
  overridable: {
    inputs: [['INPUT', 'FLOAT', [5, 5]]],
    outputs: [['OUTPUT', 'FLOAT', [5, 5]]],
    initializers: [['INITIALIZER', 'FLOAT', [5, 5]]],
    initializersAreInputs: true,
  },
  sequence: {
    inputs: [
      ['INPUT', 'INT32', [null, 1]],
      ['START', 'INT32', [null, 1]],
    ],
    outputs: [['OUTPUT', 'INT32', [null, 1]]],
  },
  image: { inputs: [['data_0', 'FLOAT', [1, 3, 224, 224]]], outputs: [['fc6_1', 'FLOAT', [1, 1000, 1, 1]]] },
};
const onnx: Record<string, Buffer> = {};

afterAll(removeRepos);

suiteFor({ python: ['onnx', 'numpy'] })("Triton's onnxruntime backend, offline", () => {
  beforeAll(() => {
    const dir = mkdtempSync(join(tmpdir(), 'mme-onnx-rules-'));
    try {
      const jobs = Object.fromEntries(Object.entries(specs).map(([k, s]) => [join(dir, `${k}.onnx`), s]));
      const run = spawnSync(python!, [join(__dirname, '..', 'real-world', 'make_onnx.py')], {
        input: JSON.stringify(jobs),
        encoding: 'utf8',
      });
      if (run.status !== 0) throw new Error(run.stderr);
      for (const key of Object.keys(specs)) onnx[key] = readFileSync(join(dir, `${key}.onnx`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  async function check(config: string | undefined, model: keyof typeof specs | Buffer, extra: RepoFiles = {}) {
    const files: RepoFiles = { 'm/1/model.onnx': Buffer.isBuffer(model) ? model : onnx[model]!, ...extra };
    if (config !== undefined) files['m/config.pbtxt'] = config;
    const repo = await loadRepository(makeRepo(files));
    return checkOnnxModel(repo.models[0]!);
  }
  const messages = (r: { diagnostics: { message: string }[] }) => r.diagnostics.map((d) => d.message);

  describe('auto-complete (AutoCompleteConfig)', () => {
    it('fills inputs, outputs, max_batch_size 4 and dynamic batching for a model with a variable first dimension', async () => {
      const { diagnostics, completed } = await check(undefined, 'batched');
      expect(diagnostics).toEqual([]);
      expect(completed).toMatchObject({
        max_batch_size: 4,
        dynamic_batching: {},
        input: [{ name: 'INPUT0', data_type: 'TYPE_INT32', dims: [16n] }, { name: 'INPUT1', data_type: 'TYPE_INT32', dims: [16n] }],
        output: [{ name: 'OUTPUT0', data_type: 'TYPE_INT8', dims: [16n] }, { name: 'OUTPUT1', data_type: 'TYPE_INT8', dims: [16n] }],
      });
    });

    it('keeps the full shape when the model cannot batch, and a rank-0 tensor becomes dims [1]', async () => {
      expect((await check('', 'fixed')).completed).toMatchObject({ max_batch_size: 0, input: [{ dims: [16n] }, { dims: [16n] }] });
      expect((await check('', 'scalar')).completed).toMatchObject({
        input: [{ name: 'X', dims: [1n] }],
        output: [{ name: 'Y', dims: [1n] }],
      });
    });

    it('fills only the list the config leaves empty', async () => {
      const { completed, diagnostics } = await check(
        'max_batch_size: 8\ninput [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] }, ' +
          '{ name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ]',
        'batched',
      );
      expect(diagnostics).toEqual([]);
      expect(completed?.output?.map((o) => o.name)).toEqual(['OUTPUT0', 'OUTPUT1']);
      expect(completed?.max_batch_size).toBe(8);
    });

    it('fails as Triton does when max_batch_size is set and the model cannot batch', async () => {
      const result = await check('max_batch_size: 8', 'fixed');
      expect(messages(result)[0]).toMatch(
        /^autofill failed for model 'm': model does not support batching while non-zero max_batch_size is specified/,
      );
      expect(result.diagnostics[0]).toMatchObject({ file: 'm/config.pbtxt', line: 1 });
      expect(result.completed).toBeUndefined();
    });
  });

  describe('the config against the graph (ValidateInputs / ValidateOutputs)', () => {
    const io = (
      inputs: string,
      outputs = 'output [ { name: "OUTPUT0" data_type: TYPE_INT8 dims: [ 16 ] }, { name: "OUTPUT1" data_type: TYPE_INT8 dims: [ 16 ] } ]',
    ) => `max_batch_size: 8\ninput [ ${inputs} ]\n${outputs}`;
    const in0 = '{ name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] }';
    const in1 = '{ name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] }';

    it('accepts a config that matches', async () => {
      expect((await check(io(`${in0}, ${in1}`), 'batched')).diagnostics).toEqual([]);
    });

    it('counts inputs', async () => {
      expect(messages(await check(io(in0), 'batched'))[0]).toMatch(
        /^unable to load model 'm', configuration expects 1 inputs, model provides 2\./,
      );
    });

    it('names the inputs and outputs the model allows', async () => {
      const r = await check(io(`${in0}, { name: "INPUT_UNKNOWN" data_type: TYPE_INT32 dims: [ 16 ] }`), 'batched');
      expect(messages(r)).toContain("unexpected inference input 'INPUT_UNKNOWN', allowed inputs are: INPUT0, INPUT1");
      expect(r.diagnostics[0]).toMatchObject({ file: 'm/config.pbtxt', line: 2 });
      const o = await check(io(`${in0}, ${in1}`, 'output [ { name: "OUTPUT_UNKNOWN" data_type: TYPE_INT8 dims: [ 16 ] } ]'), 'batched');
      expect(messages(o)).toEqual(["unexpected inference output 'OUTPUT_UNKNOWN', allowed outputs are: OUTPUT0, OUTPUT1"]);
    });

    it('compares data types in Triton words (strings are TYPE_BYTES to the backend)', async () => {
      expect(messages(await check(io(`{ name: "INPUT0" data_type: TYPE_FP32 dims: [ 16 ] }, ${in1}`), 'batched'))).toEqual([
        "unable to load model 'm', configuration expects datatype TYPE_FP32 for input 'INPUT0', model provides TYPE_INT32",
      ]);
      const s = await check(
        'max_batch_size: 4 input [ { name: "TEXT" data_type: TYPE_INT32 dims: [ 1 ] } ] ' +
          'output [ { name: "TOKENS" data_type: TYPE_STRING dims: [ 1 ] } ]',
        'strings',
      );
      expect(messages(s)).toEqual([
        "unable to load model 'm', configuration expects datatype TYPE_INT32 for input 'TEXT', model provides TYPE_BYTES",
      ]);
    });

    it('compares dims with the batch dimension in front (inputs accept a -1 in the model, outputs must match exactly)', async () => {
      expect(messages(await check(io(`{ name: "INPUT0" data_type: TYPE_INT32 dims: [ 16, 1 ] }, ${in1}`), 'batched'))).toEqual([
        "model 'm', tensor 'INPUT0': the model expects 2 dimensions (shape [-1,16]) but the " +
          'model configuration specifies 3 dimensions (an initial batch dimension because ' +
          'max_batch_size > 0 followed by the explicit tensor shape, making complete shape [-1,16,1])',
      ]);
      const noBatch = await check(
        'input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 8 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ] ' +
          'output [ { name: "OUTPUT0" data_type: TYPE_INT8 dims: [ 16 ] }, { name: "OUTPUT1" data_type: TYPE_INT8 dims: [ 16 ] } ]',
        'fixed',
      );
      expect(messages(noBatch)).toEqual([
        "model 'm', tensor 'INPUT0': the model expects 1 dimensions (shape " +
          '[16]) but the model configuration specifies 1 dimensions (shape [8])',
      ]);
    });

    it('asks for a variable first dimension when max_batch_size > 0', async () => {
      const r = await check(
        'max_batch_size: 2 input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 16 ] }, ' +
          '{ name: "INPUT1" data_type: TYPE_INT32 dims: [ 16 ] } ] output [ { name: "OUTPUT0" data_type: TYPE_INT8 dims: [ 16 ] }, ' +
          '{ name: "OUTPUT1" data_type: TYPE_INT8 dims: [ 16 ] } ]',
        'fixed',
      );
      expect(messages(r)[0]).toMatch(
        new RegExp(
          /^model 'm', tensor 'INPUT0': for the model to support batching the shape should have at least /.source +
            /1 dimension and the first dimension must be -1; but shape expected by the model is \[16\]/.source,
        ),
      );
    });

    it('compares the reshape when there is one (the docs example densenet_onnx)', async () => {
      const config =
        'max_batch_size: 0 input [ { name: "data_0" data_type: TYPE_FP32 format: FORMAT_NCHW dims: [ 3, 224, 224 ] ' +
        'reshape { shape: [ 1, 3, 224, 224 ] } } ] output [ { name: "fc6_1" data_type: TYPE_FP32 dims: [ 1000 ] ' +
        'reshape { shape: [ 1, 1000, 1, 1 ] } } ]';
      expect((await check(config, 'image')).diagnostics).toEqual([]);
    });

    it('lets a config name an initializer the graph lists as an input, as an optional input', async () => {
      const ok =
        'input [ { name: "INPUT" data_type: TYPE_FP32 dims: [ 5, 5 ] }, ' +
        '{ name: "INITIALIZER" data_type: TYPE_FP32 dims: [ 5, 5 ] optional: true } ] ' +
        'output [ { name: "OUTPUT" data_type: TYPE_FP32 dims: [ 5, 5 ] } ]';
      expect((await check(ok, 'overridable')).diagnostics).toEqual([]);
      expect(messages(await check(ok.replace(' optional: true', ''), 'overridable'))[0]).toMatch(
        /configuration expects 2 inputs, model provides 1/,
      );
      expect((await check(undefined, 'overridable')).completed?.input?.map((i) => i.name)).toEqual(['INPUT']);
    });

    it('counts sequence controls as inputs and finds them in the model', async () => {
      const control = (name: string) =>
        `sequence_batching { control_input [ { name: "${name}" ` +
        'control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] } ] }';
      const base =
        'max_batch_size: 8 input [ { name: "INPUT" data_type: TYPE_INT32 dims: [ 1 ] } ] ' +
        'output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 1 ] } ]\n';
      expect((await check(base + control('START'), 'sequence')).diagnostics).toEqual([]);
      expect(messages(await check(base + control('BEGIN'), 'sequence'))[0]).toMatch(
        /^configuration specified sequence control 'BEGIN', but model does not provide that input/,
      );
    });
  });

  describe('the model file itself', () => {
    it('takes an empty file for a stand-in: a warning, nothing checked', async () => {
      const r = await check('', Buffer.alloc(0));
      expect(r.diagnostics.map((d) => [d.severity, d.code, d.file])).toEqual([['warning', 'model-file-empty', 'm/1/model.onnx']]);
      expect(r.completed).toBeUndefined();
    });

    it('says a file that is not an ONNX model cannot be loaded', async () => {
      const r = await check('', Buffer.from('PK\u0003\u0004 this is a zip, not an onnx file'));
      expect(r.diagnostics).toMatchObject([{ severity: 'error', code: 'onnx-invalid', file: 'm/1/model.onnx' }]);
      expect(r.diagnostics[0]!.message).toMatch(/^m\/1\/model\.onnx is not an ONNX model: .*ONNX Runtime fails to load it/);
    });

    it('does not open a model.onnx that is not a regular file (a FIFO would wait for a writer forever)', async () => {
      const root = makeRepo({ 'm/config.pbtxt': '', 'm/1/': null });
      spawnSync('mkfifo', [join(root, 'm', '1', 'model.onnx')]);
      const repo = await loadRepository(root);
      expect(checkOnnxModel(repo.models[0]!).diagnostics).toEqual([]);
    });

    it('reads <version>/model.onnx/model.onnx when model.onnx is a directory, as the backend does', async () => {
      const repo = await loadRepository(makeRepo({ 'm/1/model.onnx/model.onnx': onnx.batched!, 'm/config.pbtxt': '' }));
      expect(checkOnnxModel(repo.models[0]!).completed?.input?.length).toBe(2);
    });
  });
});
