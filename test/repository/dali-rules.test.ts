// Triton's DALI backend, offline: auto-complete and the config-against-pipeline checks on model.dali files written by
// test/model-files/dali-writer.ts, with the backend's own wording. The pipelines are those of the backend's QA
// (dali_backend qa/L0_config_validation and qa/L0_autoconfig) as their pipeline definitions declare them.

import { checkDaliModel } from '../../lib/repository/dali-rules';
import { loadRepository, validateRepository } from '../../lib/repository/validate';
import { daliPipeline, type DaliPipelineSpec } from '../model-files/dali-writer';
import { makeRepo, removeRepos, type RepoFiles } from './repo-builder';

afterAll(removeRepos);

// qa/L0_config_validation/pipeline_gpu.py: DALI_INPUT_0 declares nothing, DALI_INPUT_1 FLOAT16; the outputs are
// declared FLOAT (ndim 1) and undeclared type (ndim 1).
const VALIDATION: DaliPipelineSpec = {
  batchSize: 256,
  inputs: [{ name: 'DALI_INPUT_0' }, { name: 'DALI_INPUT_1', device: 'gpu', dtype: 'FLOAT16' }],
  outputs: [
    { name: '__ArithmeticGenericOp_2', device: 'gpu', dtype: 'FLOAT', ndim: 1 },
    { name: '__ArithmeticGenericOp_5', device: 'gpu', ndim: 1 },
  ],
};
// qa/L0_autoconfig full_autoconfig/1/dali.py: everything declared, outputs named.
const AUTOCONFIG: DaliPipelineSpec = {
  batchSize: 256,
  inputs: [{ name: 'DALI_INPUT_0', dtype: 'FLOAT16', ndim: 1 }, { name: 'DALI_INPUT_1', device: 'gpu', dtype: 'FLOAT16', ndim: 1 }],
  outputs: [
    { name: 'DALI_OUTPUT_0', device: 'gpu', dtype: 'FLOAT16', ndim: 1 },
    { name: 'DALI_OUTPUT_1', device: 'gpu', dtype: 'FLOAT', ndim: 1 },
  ],
};

const io = (name: string, type: string, dims = '[ -1 ]') => `{ name: "${name}" data_type: ${type} dims: ${dims} }`;
/** model0_gpu_valid's config, with one line to change. */
function qaConfig(change: (text: string) => string = (t) => t): string {
  return change(
    'backend: "dali"\nmax_batch_size: 32\n' +
      `input [ ${io('DALI_INPUT_0', 'TYPE_FP32')}, ${io('DALI_INPUT_1', 'TYPE_FP16')} ]\n` +
      `output [ ${io('DALI_OUTPUT_0', 'TYPE_FP32')}, ${io('DALI_OUTPUT_1', 'TYPE_FP32')} ]\n` +
      'dynamic_batching { preferred_batch_size: [ 32 ] }\n',
  );
}

describe("Triton's DALI backend, offline", () => {
  const files = (config: string | undefined, spec: DaliPipelineSpec, extra: RepoFiles = {}): RepoFiles => ({
    ...(config === undefined ? {} : { 'm/config.pbtxt': config }),
    'm/1/model.dali': daliPipeline(spec),
    ...extra,
  });
  async function check(config: string | undefined, spec: DaliPipelineSpec = VALIDATION) {
    const repo = await loadRepository(makeRepo(files(config, spec)));
    return checkDaliModel(repo.models[0]!);
  }
  const messages = (r: { diagnostics: { message: string }[] }) => r.diagnostics.map((d) => d.message);

  it('accepts the QA config that matches (model0_gpu_valid) and leaves it as it is', async () => {
    const { diagnostics, completed } = await check(qaConfig());
    expect(diagnostics).toEqual([]);
    expect(completed).toMatchObject({
      max_batch_size: 32,
      input: [{ name: 'DALI_INPUT_0', data_type: 'TYPE_FP32', dims: [-1n] }, { name: 'DALI_INPUT_1', data_type: 'TYPE_FP16' }],
      output: [{ name: 'DALI_OUTPUT_0', data_type: 'TYPE_FP32' }, { name: 'DALI_OUTPUT_1', data_type: 'TYPE_FP32' }],
    });
  });

  it("refuses an input type the pipeline contradicts, in the backend's words (model1_gpu_invalid_i_type)", async () => {
    const result = await check(qaConfig((t) => t.replace(io('DALI_INPUT_1', 'TYPE_FP16'), io('DALI_INPUT_1', 'TYPE_FP32'))));
    expect(result.completed).toBeUndefined();
    expect(result.diagnostics).toHaveLength(1);
    expect(result.diagnostics[0]).toMatchObject({ severity: 'error', code: 'dali-data-type', file: 'm/config.pbtxt', line: 3 });
    expect(result.diagnostics[0]!.message).toBe(
      'Mismatch of data_type config for "DALI_INPUT_1". Data type defined in config: TYPE_FP32. ' +
        'Data type defined in pipeline: TYPE_FP16.',
    );
  });

  it('refuses an output with more dimensions than the pipeline declares (model2_gpu_invalid_o_ndim)', async () => {
    const result = await check(qaConfig((t) => t.replace(io('DALI_OUTPUT_1', 'TYPE_FP32'), io('DALI_OUTPUT_1', 'TYPE_FP32', '[ 1, -1 ]'))));
    expect(result.diagnostics).toMatchObject([{ severity: 'error', code: 'dali-dims', line: 4 }]);
    expect(messages(result)[0]).toMatch(
      /^Mismatch in number of dimensions for "DALI_OUTPUT_1". Number of dimensions defined in config: 2. Number of dimensions defined in /,
    );
    expect(messages(result)[0]).toMatch(/defined in pipeline: 1 \(the batch dimension is not counted/);
  });

  it('completes an output the config leaves out, by position, when the pipeline declares its type (model4, auto-complete on)', async () => {
    const dropOutput = qaConfig((t) => t.replace(`, ${io('DALI_OUTPUT_1', 'TYPE_FP32')}`, ''));
    const declared = { ...VALIDATION, outputs: [VALIDATION.outputs[0]!, { ...VALIDATION.outputs[1]!, dtype: 'FLOAT' as const }] };
    const result = await check(dropOutput, declared);
    expect(result.diagnostics).toEqual([]);
    // The pipeline's second output is appended under its own name.
    expect(result.completed?.output).toEqual([
      { name: 'DALI_OUTPUT_0', data_type: 'TYPE_FP32', dims: [-1n] },
      { name: '__ArithmeticGenericOp_5', data_type: 'TYPE_FP32', dims: [-1n] },
    ]);
    // pipeline_gpu.py declares no type for it: the appended output has none, and ValidateConfig fails the load.
    const undeclared = await check(dropOutput);
    expect(undeclared.completed).toBeUndefined();
    expect(undeclared.diagnostics).toMatchObject([{ severity: 'error', code: 'dali-missing-data-type', line: 4 }]);
    expect(messages(undeclared)[0]).toMatch(/^Missing data_type config for "__ArithmeticGenericOp_5"/);
  });

  it('fails the load for an input type neither the config nor the pipeline gives (ValidateDtypeConfig)', async () => {
    // DALI_INPUT_0 declares no dtype in pipeline_gpu.py: leaving data_type out of the config too fails the load.
    const result = await check(qaConfig((t) => t.replace(io('DALI_INPUT_0', 'TYPE_FP32'), '{ name: "DALI_INPUT_0" dims: [ -1 ] }')));
    expect(result.diagnostics).toMatchObject([{ severity: 'error', code: 'dali-missing-data-type', line: 3 }]);
    expect(messages(result)[0]).toMatch(/^Missing data_type config for "DALI_INPUT_0": neither config.pbtxt nor m\/1\/model.dali/);
    // Declared by the pipeline, it is filled in.
    const declared = await check(qaConfig((t) => t.replace(io('DALI_INPUT_1', 'TYPE_FP16'), '{ name: "DALI_INPUT_1" dims: [ -1 ] }')));
    expect(declared.diagnostics).toEqual([]);
    expect(declared.completed?.input?.[1]).toEqual({ name: 'DALI_INPUT_1', data_type: 'TYPE_FP16', dims: [-1n] });
  });

  it('refuses a config input the pipeline does not have, naming the ones it has', async () => {
    const result = await check(qaConfig((t) => t.replace('"DALI_INPUT_0"', '"DALI_INPUT_O"')));
    expect(result.diagnostics).toMatchObject([{ severity: 'error', code: 'dali-unknown-input', line: 3 }]);
    expect(messages(result)[0]).toBe(
      'Configuration file contains config for DALI_INPUT_O but such input is not present in the pipeline. ' +
        'm/1/model.dali has the inputs DALI_INPUT_0, DALI_INPUT_1 (the names its external sources are given with name=...).',
    );
  });

  it('refuses more outputs than the pipeline returns, and an input of the wrong rank', async () => {
    const more = await check(qaConfig((t) => t.replace(']\ndynamic', `, ${io('EXTRA', 'TYPE_FP32')} ]\ndynamic`)));
    expect(more.diagnostics).toMatchObject([{ code: 'dali-output-count', line: 4 }]);
    expect(messages(more)[0]).toMatch(
      /^The number of outputs specified in the DALI pipeline and the configuration file do not match. Model config outputs: 3. Pipeline/,
    );
    const rank = await check(
      'backend: "dali"\nmax_batch_size: 8\ninput [ { name: "DALI_INPUT_1" data_type: TYPE_FP16 dims: [ -1, -1 ] } ]\n',
      AUTOCONFIG,
    );
    expect(rank.diagnostics).toMatchObject([{ code: 'dali-dims', line: 3 }]);
  });

  it('takes the outer dimension off an output named in split_along_outer_axis', async () => {
    const spec: DaliPipelineSpec = { ...AUTOCONFIG, outputs: [{ name: 'FRAMES', dtype: 'UINT8', ndim: 4 }, AUTOCONFIG.outputs[1]!] };
    const config = (split: string) =>
      `backend: "dali"\nmax_batch_size: 8\noutput [ { name: "FRAMES" data_type: TYPE_UINT8 dims: [ -1, -1, 3 ] } ]\n` +
      `parameters: { key: "split_along_outer_axis" value: { string_value: "${split}" } }\n`;
    expect((await check(config('OTHER:FRAMES'), spec)).diagnostics).toEqual([]);
    expect((await check(config('OTHER'), spec)).diagnostics).toMatchObject([{ code: 'dali-dims', line: 3 }]);
  });

  it('counts the batch dimension in dims when max_batch_size is 0', async () => {
    const config = (dims: string) =>
      `backend: "dali"\nmax_batch_size: 0\ninput [ { name: "DALI_INPUT_0" data_type: TYPE_FP16 dims: ${dims} } ]\n`;
    expect((await check(config('[ -1, -1 ]'), AUTOCONFIG)).diagnostics).toEqual([]);
    const short = await check(config('[ -1 ]'), AUTOCONFIG);
    expect(messages(short)[0]).toMatch(/defined in config: 1. Number of dimensions defined in pipeline: 2 \(with the batch/);
    expect((await check('backend: "dali"\nmax_batch_size: 0\n', AUTOCONFIG)).completed).toMatchObject({
      max_batch_size: 0,
      input: [{ name: 'DALI_INPUT_0', dims: [-1n, -1n] }, { name: 'DALI_INPUT_1', dims: [-1n, -1n] }],
    });
  });

  it('completes a config that names only the backend as qa/L0_autoconfig expects (full_autoconfig, no_config_file.dali)', async () => {
    const expected = {
      max_batch_size: 256,
      dynamic_batching: {},
      input: [
        { name: 'DALI_INPUT_0', data_type: 'TYPE_FP16', dims: [-1n], allow_ragged_batch: true },
        { name: 'DALI_INPUT_1', data_type: 'TYPE_FP16', dims: [-1n], allow_ragged_batch: true },
      ],
      output: [
        { name: 'DALI_OUTPUT_0', data_type: 'TYPE_FP16', dims: [-1n] },
        { name: 'DALI_OUTPUT_1', data_type: 'TYPE_FP32', dims: [-1n] },
      ],
    };
    const full = await check('name: "m"\nbackend: "dali"\n', AUTOCONFIG);
    expect(full.diagnostics).toEqual([]);
    expect(full.completed).toMatchObject(expected);
    // No config.pbtxt: the model directory's name says the backend (no_config_file.dali).
    const repo = await loadRepository(makeRepo({ 'no_config_file.dali/1/model.dali': daliPipeline(AUTOCONFIG) }));
    expect(checkDaliModel(repo.models[0]!)).toEqual({ diagnostics: [], completed: expect.objectContaining(expected) });
  });

  it('completes a partial config as qa/L0_autoconfig expects (partial_autoconfig): renamed outputs, its own batching', async () => {
    const partial =
      'backend: "dali"\nmax_batch_size: 32\ninput [ { name: "DALI_INPUT_0" data_type: TYPE_FP16 allow_ragged_batch: true } ]\n' +
      'output [ { name: "OUT_A" } ]\noutput [ { name: "OUT_B" } ]\ndynamic_batching { preferred_batch_size: [ 16, 32 ] }\n';
    const { diagnostics, completed } = await check(partial, {
      ...AUTOCONFIG,
      inputs: [{ name: 'DALI_INPUT_0', ndim: 1 }, AUTOCONFIG.inputs[1]!],
      outputs: [
        { name: '__ArithmeticGenericOp_2', dtype: 'FLOAT16', ndim: 1 },
        { name: '__ArithmeticGenericOp_6', dtype: 'FLOAT', ndim: 1 },
      ],
    });
    expect(diagnostics).toEqual([]);
    expect(completed).toMatchObject({
      max_batch_size: 32,
      dynamic_batching: { preferred_batch_size: [16, 32] },
      input: [{ name: 'DALI_INPUT_0', data_type: 'TYPE_FP16', dims: [-1n] }, { name: 'DALI_INPUT_1', data_type: 'TYPE_FP16' }],
      output: [{ name: 'OUT_A', data_type: 'TYPE_FP16', dims: [-1n] }, { name: 'OUT_B', data_type: 'TYPE_FP32', dims: [-1n] }],
    });
  });

  it('says what happens to a model.dali that is not a serialized pipeline', async () => {
    const run = async (content: Buffer, extra: RepoFiles = {}) => {
      const repo = await loadRepository(makeRepo({ 'm/config.pbtxt': qaConfig(), 'm/1/model.dali': content, ...extra }));
      return checkDaliModel(repo.models[0]!).diagnostics;
    };
    const garbage = Buffer.from([0x08, 0x00, 0x2a, 0x09, 0x00, 0xff, 0xfe]);
    expect(await run(garbage)).toMatchObject([{ severity: 'error', code: 'dali-pipeline-invalid', file: 'm/1/model.dali' }]);
    // A dali.py beside it is where the backend goes next; python text may itself be autoserialized.
    expect(await run(garbage, { 'm/1/dali.py': '' })).toMatchObject([{ severity: 'warning', code: 'dali-pipeline-unread' }]);
    expect(await run(Buffer.from('import nvidia.dali as dali\n'))).toMatchObject([{ severity: 'warning', code: 'dali-pipeline-unread' }]);
    const empty = await run(Buffer.alloc(0), { 'm/1/dali.py': '' });
    expect(empty).toMatchObject([{ severity: 'warning', code: 'model-file-empty' }]);
    expect(empty[0]!.message).toMatch(/serializes m\/1\/dali.py instead/);
  });

  it('checks an ensemble against the outputs the pipeline completes, and validate fails the load it would fail', async () => {
    const ensemble =
      'platform: "ensemble"\nmax_batch_size: 8\ninput [ { name: "RAW" data_type: TYPE_FP16 dims: [ -1 ] } ]\n' +
      'output [ { name: "OUT" data_type: TYPE_FP16 dims: [ -1 ] } ]\n' +
      'ensemble_scheduling { step [ { model_name: "m" model_version: -1 input_map { key: "DALI_INPUT_0" value: "RAW" } ' +
      'input_map { key: "DALI_INPUT_1" value: "RAW" } output_map { key: "DALI_OUTPUT_X" value: "OUT" } } ] }\n';
    const root = makeRepo({ ...files('backend: "dali"\nmax_batch_size: 8\n', AUTOCONFIG), 'e/config.pbtxt': ensemble, 'e/1/': null });
    const report = await validateRepository(root);
    expect(report.ok).toBe(false);
    const unknown = report.diagnostics.find((d) => d.code === 'ensemble-unknown-output');
    expect(unknown).toMatchObject({ severity: 'error', file: 'e/config.pbtxt' });
    const fixed = makeRepo({
      ...files('backend: "dali"\nmax_batch_size: 8\n', AUTOCONFIG),
      'e/config.pbtxt': ensemble.replace('DALI_OUTPUT_X', 'DALI_OUTPUT_0'),
      'e/1/': null,
    });
    const ok = await validateRepository(fixed);
    expect(ok.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    const wrong = makeRepo(files(qaConfig((t) => t.replace('"DALI_INPUT_0"', '"DALI_INPUT_O"')), VALIDATION));
    expect((await validateRepository(wrong)).diagnostics).toContainEqual(expect.objectContaining({ code: 'dali-unknown-input' }));
  });
});
