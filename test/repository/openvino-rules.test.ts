// Triton's OpenVINO backend, offline: auto-complete and the config-against-IR checks on model.xml files written by
// test/model-files/make_model_files.py, with the backend's own wording.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkOpenVinoModel } from '../../lib/repository/openvino-rules';
import { loadRepository } from '../../lib/repository/validate';
import { modelFilePython, writeModelFiles, type ModelFileSpec } from '../model-files/model-file-writer';
import { makeRepo, removeRepos } from './repo-builder';

const python = modelFilePython();
// The QA model of server qa/L0_model_config/autofill_noplatform/openvino: two INT32 [1,4] in, two out.
const QA_INPUTS = [['Func/PartitionedCall/input/_0:0', 'I32', [1, 4]], ['input1', 'I32', [1, 4]]] as const;
const QA_OUTPUTS = [['Func/PartitionedCall/output/_2:0', 'I32', [1, 4]], ['Func/PartitionedCall/output/_3:0', 'I32', [1, 4]]] as const;
const specs: Record<string, ModelFileSpec> = {
  qa: { format: 'openvino', inputs: QA_INPUTS, outputs: QA_OUTPUTS },
  batched: {
    format: 'openvino',
    inputs: [['images', 'FP32', [1, 3, 224, 224], '[N,C,H,W]']],
    outputs: [['logits', 'FP32', [1, 1000], '[N,C]']],
  },
  dynamic: { format: 'openvino', inputs: [['images', 'FP32', [-1, 3, 224, 224]]], outputs: [['logits', 'FP32', [-1, 1000]]] },
  unnamed: { format: 'openvino', inputs: [['', 'FP32', [1, 4]]], outputs: [['y', 'FP32', [1, 4]]] },
};
const files: Record<string, Buffer> = {};

const suite = python ? describe : describe.skip;
afterAll(removeRepos);

suite(`Triton's OpenVINO backend, offline${python ? '' : ' (skipped: no python3)'}`, () => {
  beforeAll(() => {
    const dir = mkdtempSync(join(tmpdir(), 'mme-ov-rules-'));
    writeModelFiles(Object.fromEntries(Object.entries(specs).map(([k, s]) => [join(dir, k), s])));
    for (const key of Object.keys(specs)) files[key] = readFileSync(join(dir, key));
    rmSync(dir, { recursive: true, force: true });
  });

  async function check(config: string, model: keyof typeof specs = 'qa') {
    const repo = await loadRepository(
      makeRepo({ 'm/config.pbtxt': `backend: "openvino"\n${config}`, 'm/1/model.xml': files[model]!, 'm/1/model.bin': '' }),
    );
    return checkOpenVinoModel(repo.models[0]!);
  }
  const messages = (r: { diagnostics: { message: string }[] }) => r.diagnostics.map((d) => d.message);
  const io = (name: string, dims = '[ 1, 4 ]') => `{ name: "${name}" data_type: TYPE_INT32 dims: ${dims} }`;
  const inputs = (...list: string[]) => `input [ ${list.join(', ')} ]`;
  const outputs = `output [ ${io('Func/PartitionedCall/output/_2:0')}, ${io('Func/PartitionedCall/output/_3:0')} ]`;

  it('completes an empty config from the IR; a layout with N makes it batch (max_batch_size 4, dynamic batching)', async () => {
    const plain = await check('');
    expect(plain.diagnostics).toEqual([]);
    expect(plain.completed).toMatchObject({
      max_batch_size: 0,
      input: [{ name: 'Func/PartitionedCall/input/_0:0', data_type: 'TYPE_INT32', dims: [1n, 4n] }, { name: 'input1' }],
      output: [{ name: 'Func/PartitionedCall/output/_2:0' }, { name: 'Func/PartitionedCall/output/_3:0' }],
    });
    const batched = await check('', 'batched');
    expect(batched.diagnostics).toEqual([]);
    expect(batched.completed).toMatchObject({
      max_batch_size: 4,
      dynamic_batching: {},
      input: [{ name: 'images', data_type: 'TYPE_FP32', dims: [3n, 224n, 224n] }],
      output: [{ name: 'logits', data_type: 'TYPE_FP32', dims: [1000n] }],
    });
  });

  it('writes -1 for every dimension of a shape with a dynamic one, which the dims check then refuses', async () => {
    // io_shape.is_static() is asked of the whole shape (openvino.cc:855-857); doesMatch(3, -1) is false (:196-207).
    const { completed, diagnostics } = await check('', 'dynamic');
    expect(completed?.input).toEqual([{ name: 'images', data_type: 'TYPE_FP32', dims: [-1n, -1n, -1n, -1n] }]);
    expect(messages({ diagnostics })[0]).toMatch(/^model 'm', tensor 'images': the model expects 4 dimensions \(shape \[-1,3,224,224\]\)/);
    const listed = await check(`input [ { name: "images" data_type: TYPE_FP32 dims: [ -1, 3, 224, 224 ] } ]\n` +
      'output [ { name: "logits" data_type: TYPE_FP32 dims: [ -1, 1000 ] } ]', 'dynamic');
    expect(listed.diagnostics).toEqual([]);
  });

  it('accepts a config that matches (the QA partial_config: outputs left to auto-complete)', async () => {
    expect((await check(`${inputs(io('Func/PartitionedCall/input/_0:0'), io('input1'))}\n${outputs}`)).diagnostics).toEqual([]);
    const partial = await check(inputs(io('Func/PartitionedCall/input/_0:0'), io('input1')));
    expect(partial.diagnostics).toEqual([]);
    expect(partial.completed?.output?.map((o) => o.name)).toEqual(['Func/PartitionedCall/output/_2:0', 'Func/PartitionedCall/output/_3:0']);
  });

  it('rejects too few and too many inputs (the QA too_few_inputs, too_many_inputs)', async () => {
    expect(messages(await check(`${inputs(io('input1'))}\n${outputs}`))[0]).toMatch(
      /^unable to load model 'm', configuration expects 1 inputs, model provides 2\./,
    );
    const three = inputs(io('Func/PartitionedCall/input/_0:0'), io('input1'), io('input_extra'));
    expect(messages(await check(`${three}\n${outputs}`))[0]).toMatch(
      /^unable to load model 'm', configuration expects 3 inputs, model provides 2\./,
    );
  });

  it('rejects an unknown input and an unknown output (the QA unknown_input, unknown_output), at their lines', async () => {
    const unknown = await check(`${inputs(io('Func/PartitionedCall/input/_0:0'), io('unknown_input'))}\n${outputs}`);
    expect(messages(unknown)[0]).toMatch(
      /^unexpected inference input 'unknown_input', allowed inputs are: Func\/PartitionedCall\/input\/_0:0, input1\. /,
    );
    expect(unknown.diagnostics[0]).toMatchObject({ file: 'm/config.pbtxt', line: 2 });
    const out = await check(`${inputs(io('Func/PartitionedCall/input/_0:0'), io('input1'))}\noutput [ ${io('unknown_output')} ]`);
    expect(messages(out)[0]).toMatch(
      /^unexpected inference output 'unknown_output', allowed outputs are: Func\/PartitionedCall\/output\/_2:0, Func\/Partitioned/,
    );
  });

  it('rejects dims the IR does not have (the QA bad_input_dims, bad_output_dims), unless RESHAPE_IO_LAYERS', async () => {
    const bad = `${inputs(io('Func/PartitionedCall/input/_0:0'), io('input1', '[ 1, 256 ]'))}\n${outputs}`;
    expect(messages(await check(bad))).toEqual([
      "model 'm', tensor 'input1': the model expects 2 dimensions (shape [1,4]) " +
        'but the model configuration specifies 2 dimensions (shape [1,256])',
    ]);
    const reshaped = `${bad}\nparameters { key: "RESHAPE_IO_LAYERS" value: { string_value: "true" } }`;
    expect((await check(reshaped)).diagnostics).toEqual([]);
    const wide = io('Func/PartitionedCall/output/_2:0', '[ 1, 128 ]');
    const badOut = `${inputs(io('Func/PartitionedCall/input/_0:0'), io('input1'))}\noutput [ ${wide} ]`;
    expect(messages(await check(badOut))[0]).toMatch(
      /^model 'm', tensor 'Func\/PartitionedCall\/output\/_2:0': the model expects 2 dimensions \(shape \[1,4\]\)/,
    );
  });

  it('rejects a config type the backend cannot convert to, and a tensor without names; warns about an empty stand-in', async () => {
    const bf16 = `${inputs(io('Func/PartitionedCall/input/_0:0'), '{ name: "input1" data_type: TYPE_BF16 dims: [ 1, 4 ] }')}\n${outputs}`;
    expect(messages(await check(bf16))).toEqual([
      expect.stringMatching(/^unsupported datatype TYPE_BF16 for input 'input1' for model 'm'\./),
    ]);
    expect(messages(await check('', 'unnamed'))[0]).toMatch(/^Attempt to get a name for a Tensor without names: /);
    const repo = await loadRepository(makeRepo({ 'm/config.pbtxt': 'backend: "openvino"', 'm/1/model.xml': '', 'm/1/model.bin': '' }));
    expect(checkOpenVinoModel(repo.models[0]!).diagnostics).toMatchObject([{ severity: 'warning', code: 'model-file-empty' }]);
    const text = await loadRepository(makeRepo({ 'm/config.pbtxt': 'backend: "openvino"', 'm/1/model.xml': 'x', 'm/1/model.bin': '' }));
    expect(checkOpenVinoModel(text.models[0]!).diagnostics).toMatchObject([{ severity: 'error', code: 'openvino-invalid' }]);
  });
});
