import { validateRepository } from '../../lib/repository/validate';
import { makeRepo, removeRepos, RepoFiles } from './repo-builder';

afterAll(removeRepos);

const IO = `
input [ { name: "INPUT" data_type: TYPE_FP32 dims: [ 3, 4 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_FP32 dims: [ 12 ] } ]`;

/** A valid ONNX model `m`; `config` is appended to its config.pbtxt, `files` added to the repository. */
function onnx(config = '', files: RepoFiles = {}, header = 'name: "m"\nbackend: "onnxruntime"\nmax_batch_size: 8'): RepoFiles {
  return { 'm/config.pbtxt': `${header}\n${IO}\n${config}\n`, 'm/1/model.onnx': 'onnx', ...files };
}

async function codes(files: RepoFiles, options = {}) {
  const report = await validateRepository(makeRepo(files), options);
  return report.diagnostics.map((d) => `${d.severity}:${d.code}`);
}

async function expectFault(files: RepoFiles, code: string, severity: 'error' | 'warning' = 'error') {
  const found = await codes(files);
  expect(found).toContain(`${severity}:${code}`);
}

async function expectClean(files: RepoFiles) {
  expect(await codes(files)).toEqual([]);
}

describe('repository discovery (§1)', () => {
  it('accepts a valid model, given as a repository or as the model directory itself', async () => {
    await expectClean(onnx());
    const root = makeRepo(onnx());
    const report = await validateRepository(`${root}/m`);
    expect(report.ok).toBe(true);
    expect(report.models).toEqual([expect.objectContaining({ name: 'm', path: '.', platform: 'onnxruntime_onnx', backend: 'onnxruntime', versions: [1] })]);
  });

  it('reports files relative to the given path, with line and column', async () => {
    const report = await validateRepository(makeRepo(onnx('', {}, 'name: "x"\nbackend: "onnxruntime"')));
    expect(report.diagnostics[0]).toMatchObject({ code: 'name-mismatch', file: 'm/config.pbtxt', line: 1, column: 1, model: 'm' });
  });

  it('rejects a name that differs from the directory (Triton: directory name must equal model name)', async () => {
    const found = await validateRepository(makeRepo(onnx('', {}, 'name: "other"\nbackend: "onnxruntime"')));
    expect(found.diagnostics[0]!.message).toContain("unexpected directory name 'm' for model 'other'");
    await expectClean(onnx('', {}, 'backend: "onnxruntime"'));
  });

  it.each(['.ipynb_checkpoints', '__MACOSX', '.hidden'])('rejects a stray %s directory that Triton would try to load', async (dir) => {
    await expectFault({ ...onnx(), [`${dir}/`]: null }, 'stray-directory');
  });

  it('ignores files at the repository root', async () => {
    await expectClean({ ...onnx(), 'README.md': '# models' });
  });

  it('reports an empty repository', async () => {
    await expectFault({ 'README.md': 'x' }, 'empty-repository');
  });

  it('throws an access error for a missing path or a file', async () => {
    await expect(validateRepository('/nonexistent/repo')).rejects.toThrow(/no such file or directory/);
    const root = makeRepo({ 'f.txt': 'x' });
    await expect(validateRepository(`${root}/f.txt`)).rejects.toThrow(/not a directory/);
  });

  it('warns about a file named like a prefix of config.pbtxt', async () => {
    await expectFault(onnx('', { 'm/config': 'x' }), 'duplicate-config', 'warning');
  });
});

describe('version directories (§1.A)', () => {
  it('ignores names with leading zeros and names that are not numbers, with a warning', async () => {
    await expectFault(onnx('', { 'm/01/': null }), 'version-leading-zeros', 'warning');
    await expectFault(onnx('', { 'm/v2/': null }), 'version-not-numeric', 'warning');
    await expectFault(onnx('', { 'm/2abc/model.onnx': 'x' }), 'version-numeric-prefix', 'warning');
  });

  it('skips warmup, initial_state and configs silently', async () => {
    await expectClean(onnx('', { 'm/warmup/': null, 'm/initial_state/': null, 'm/configs/': null }));
  });

  it('requires at least one version directory (ensembles too)', async () => {
    const files = onnx();
    delete files['m/1/model.onnx'];
    const found = await validateRepository(makeRepo(files));
    expect(found.diagnostics.map((d) => d.code)).toEqual(['no-version']);
    expect(found.diagnostics[0]!.message).toContain("at least one version must be available under the version policy of model 'm'");
  });

  it('applies version_policy: latest N, all, specific', async () => {
    const files = { 'm/2/model.onnx': 'x', 'm/3/model.onnx': 'x' };
    const latest = await validateRepository(makeRepo(onnx('version_policy { latest { num_versions: 2 } }', files)));
    expect(latest.models[0]!.versions).toEqual([2, 3]);
    const all = await validateRepository(makeRepo(onnx('version_policy { all { } }', files)));
    expect(all.models[0]!.versions).toEqual([1, 2, 3]);
    const specific = await validateRepository(makeRepo(onnx('version_policy { specific { versions: [ 1, 3 ] } }', files)));
    expect(specific.models[0]!.versions).toEqual([1, 3]);
    expect((await validateRepository(makeRepo(onnx('', files)))).models[0]!.versions).toEqual([3]);
  });

  it('reports a specific version whose directory is missing', async () => {
    await expectFault(onnx('version_policy { specific { versions: [ 1, 7 ] } }'), 'version-missing', 'warning');
    const none = await codes(onnx('version_policy { specific { versions: [ 7 ] } }'));
    expect(none).toEqual(expect.arrayContaining(['error:version-missing', 'error:no-version']));
  });

  it('checks the model file only in the versions the policy selects', async () => {
    await expectClean(onnx('', { 'm/2/model.onnx': 'x', 'm/0/': null }));
    await expectFault(onnx('version_policy { all { } }', { 'm/2/': null }), 'model-file-missing');
  });
});

describe('config presence, platform and backend (§1.5, §1.B, §2)', () => {
  it('lets backends that auto-complete run without config.pbtxt, with a warning', async () => {
    await expectFault({ 'm/1/model.onnx': 'x' }, 'config-missing', 'warning');
    await expectFault({ 'm/1/model.pt': 'x' }, 'config-missing', 'error');
    await expectFault({ 'm/1/weights.bin': 'x' }, 'unknown-backend', 'error');
  });

  it('infers the backend from the first version directory and checks its model file', async () => {
    const report = await validateRepository(makeRepo({ 'm/config.pbtxt': `name: "m" max_batch_size: 8 ${IO}`, 'm/1/model.plan': 'x' }));
    expect(report.models[0]).toMatchObject({ platform: 'tensorrt_plan', backend: 'tensorrt' });
    expect(report.ok).toBe(true);
  });

  it('names the backend by a model directory of the form x.<backend> and does not check custom backends\' files', async () => {
    const report = await validateRepository(makeRepo({ 'id.identity/config.pbtxt': `max_batch_size: 8 ${IO}`, 'id.identity/1/': null }));
    expect(report.models[0]).toMatchObject({ backend: 'identity' });
    expect(report.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  });

  it('rejects a config that names no backend it can determine', async () => {
    await expectFault({ 'm/config.pbtxt': `max_batch_size: 8 ${IO}`, 'm/1/weights.bin': 'x' }, 'unknown-backend');
  });

  it('rejects an unknown platform', async () => {
    await expectFault(onnx('', {}, 'platform: "onnx_runtime"'), 'unknown-platform');
  });

  it('rejects a backend/platform pair that does not match', async () => {
    await expectFault(onnx('', {}, 'backend: "onnxruntime" platform: "tensorrt_plan"'), 'platform-backend-mismatch');
    await expectFault({ 'm/config.pbtxt': `backend: "tensorflow" ${IO}`, 'm/1/saved/': null }, 'platform-backend-mismatch');
    await expectFault({ 'm/config.pbtxt': `platform: "libtorch" ${IO}`, 'm/1/model.pt': 'x' }, 'platform-backend-mismatch');
    await expectClean({ 'm/config.pbtxt': `platform: "pytorch_libtorch" max_batch_size: 8 ${IO}`, 'm/1/model.pt': 'x' });
  });

  it('rejects a runtime that escapes the backend directory', async () => {
    await expectFault(onnx('runtime: "../evil.so"'), 'runtime-escapes');
    await expectClean(onnx('runtime: "libtriton_onnxruntime.so"'));
  });

  it('rejects ensemble scheduling on a non-ensemble, a backend on an ensemble, and an ensemble without scheduling', async () => {
    await expectFault(onnx('ensemble_scheduling { step { model_name: "x" } }'), 'ensemble-scheduling-not-ensemble');
    await expectFault({ 'e/config.pbtxt': `platform: "ensemble" backend: "python" ${IO}`, 'e/1/': null }, 'ensemble-backend');
    await expectFault({ 'e/config.pbtxt': `platform: "ensemble" ${IO}`, 'e/1/': null }, 'ensemble-missing-scheduling');
  });

  it('checks whether the model file must be a file or a directory', async () => {
    await expectFault({ 'm/config.pbtxt': `platform: "tensorflow_savedmodel" max_batch_size: 1 ${IO}`, 'm/1/model.savedmodel': 'x' }, 'model-file-not-a-directory');
    await expectClean({ 'm/config.pbtxt': `platform: "tensorflow_savedmodel" max_batch_size: 1 ${IO}`, 'm/1/model.savedmodel/saved_model.pb': 'x' });
    await expectFault({ 'm/config.pbtxt': `platform: "tensorrt_plan" max_batch_size: 1 ${IO}`, 'm/1/model.plan/': null }, 'model-file-not-a-file');
    await expectClean(onnx('', { 'm/1/model.onnx': null, 'm/1/model.onnx/model.onnx': 'x' }));
  });

  it('uses default_model_filename and requires the OpenVINO weights file', async () => {
    await expectClean(onnx('default_model_filename: "bert.onnx"', { 'm/1/bert.onnx': 'x' }));
    await expectFault(onnx('default_model_filename: "bert.onnx"'), 'model-file-missing');
    await expectFault({ 'm/config.pbtxt': `backend: "openvino" max_batch_size: 1 ${IO}`, 'm/1/model.xml': 'x' }, 'openvino-bin-missing');
    await expectClean({ 'm/config.pbtxt': `backend: "openvino" max_batch_size: 1 ${IO}`, 'm/1/model.xml': 'x', 'm/1/model.bin': 'x' });
  });

  it('warns when a cc_model_filenames file is missing', async () => {
    await expectFault(onnx('cc_model_filenames { key: "7.5" value: "t4.onnx" }'), 'cc-model-file-missing', 'warning');
    await expectClean(onnx('cc_model_filenames { key: "7.5" value: "t4.onnx" }', { 'm/1/t4.onnx': 'x' }));
  });
});

describe('max_batch_size, inputs and outputs (§3, §4)', () => {
  it('rejects a negative max_batch_size', async () => {
    await expectFault(onnx('', {}, 'backend: "onnxruntime" max_batch_size: -1'), 'negative-max-batch-size');
  });

  it.each([
    ['a nameless input', 'input [ { data_type: TYPE_FP32 dims: [ 1 ] } ]', 'input-missing-name'],
    ['an input without data_type', 'input [ { name: "A" dims: [ 1 ] } ]', 'input-missing-data-type'],
    ['an output with TYPE_INVALID', 'output [ { name: "B" data_type: TYPE_INVALID dims: [ 1 ] } ]', 'output-missing-data-type'],
    ['an input without dims', 'input [ { name: "A" data_type: TYPE_FP32 } ]', 'input-missing-dims'],
    ['a zero dimension', 'input [ { name: "A" data_type: TYPE_FP32 dims: [ 0 ] } ]', 'invalid-dims'],
    ['a dimension of -2', 'output [ { name: "B" data_type: TYPE_FP32 dims: [ -2 ] } ]', 'invalid-dims'],
    ['a bad reshape dimension', 'input [ { name: "A" data_type: TYPE_FP32 dims: [ 4 ] reshape { shape: [ 0, 4 ] } } ]', 'invalid-reshape'],
    ['dims and reshape of different size', 'input [ { name: "A" data_type: TYPE_FP32 dims: [ 4 ] reshape { shape: [ 2, 3 ] } } ]', 'reshape-mismatch'],
    ['different variable-size segments', 'input [ { name: "A" data_type: TYPE_FP32 dims: [ -1, 4 ] reshape { shape: [ -1, 2, -1 ] } } ]', 'reshape-mismatch'],
    ['variable dims with a fixed reshape', 'input [ { name: "A" data_type: TYPE_FP32 dims: [ -1 ] reshape { shape: [ 4 ] } } ]', 'reshape-mismatch'],
    ['an element count over int64', 'input [ { name: "A" data_type: TYPE_FP32 dims: [ 9223372036854775807, 2 ] } ]', 'element-count-overflow'],
    ['NHWC with 2 dims', 'input [ { name: "A" data_type: TYPE_FP32 format: FORMAT_NHWC dims: [ 3, 4 ] } ]', 'format-dims'],
    ['a shape tensor on ONNX', 'input [ { name: "A" data_type: TYPE_INT32 dims: [ 2 ] is_shape_tensor: true } ]', 'shape-tensor-platform'],
    ['non-linear IO on ONNX', 'input [ { name: "A" data_type: TYPE_FP32 dims: [ 3, 4, 4 ] is_non_linear_format_io: true } ]', 'non-linear-io-platform'],
    ['two inputs with one name', 'input [ { name: "INPUT" data_type: TYPE_FP32 dims: [ 1 ] } ]', 'duplicate-input'],
  ])('rejects %s', async (_case, extra, code) => {
    await expectFault(onnx(extra), code);
  });

  it.each([
    ['a scalar as dims [1] with an empty reshape', 'input [ { name: "A" data_type: TYPE_FP32 dims: [ 1 ] reshape { shape: [ ] } } ]'],
    ['matching variable-size segments', 'input [ { name: "A" data_type: TYPE_FP32 dims: [ 2, 4, -1, 6 ] reshape { shape: [ 8, -1, 1, 6 ] } } ]'],
    ['NCHW with 3 dims', 'input [ { name: "A" data_type: TYPE_FP32 format: FORMAT_NCHW dims: [ 3, 224, 224 ] } ]'],
    ['a variable-size dimension', 'output [ { name: "B" data_type: TYPE_STRING dims: [ -1 ] } ]'],
  ])('accepts %s', async (_case, extra) => {
    await expectClean(onnx(extra));
  });

  it('rejects an empty reshape on a non-batching model', async () => {
    await expectFault(onnx('input [ { name: "A" data_type: TYPE_FP32 dims: [ 1 ] reshape { shape: [ ] } } ]', {}, 'backend: "onnxruntime"'), 'empty-reshape');
  });

  it('allows shape tensors and non-linear IO on TensorRT, and rejects TYPE_STRING there', async () => {
    const trt = (io: string) => ({ 'm/config.pbtxt': `platform: "tensorrt_plan" max_batch_size: 8 ${io}`, 'm/1/model.plan': 'x' });
    await expectClean(trt('input [ { name: "A" data_type: TYPE_INT32 dims: [ 2 ] is_shape_tensor: true } ] output [ { name: "B" data_type: TYPE_FP32 dims: [ 3, 4, 4 ] is_non_linear_format_io: true } ]'));
    await expectFault(trt('input [ { name: "A" data_type: TYPE_FP32 dims: [ 4 ] is_non_linear_format_io: true } ] output [ { name: "B" data_type: TYPE_FP32 dims: [ 1 ] } ]'), 'non-linear-io-dims');
    await expectFault(trt('input [ { name: "A" data_type: TYPE_STRING dims: [ 1 ] } ] output [ { name: "B" data_type: TYPE_FP32 dims: [ 1 ] } ]'), 'tensorrt-string');
  });

  it('warns, not errors, when a backend that auto-completes has no inputs; errors for PyTorch', async () => {
    await expectFault({ 'm/config.pbtxt': 'backend: "onnxruntime"', 'm/1/model.onnx': 'x' }, 'missing-inputs', 'warning');
    await expectFault({ 'm/config.pbtxt': 'platform: "pytorch_libtorch"', 'm/1/model.pt': 'x' }, 'missing-inputs', 'error');
  });
});

describe('batch inputs and outputs (§5)', () => {
  it.each([
    ['two source inputs', 'batch_input [ { kind: BATCH_ELEMENT_COUNT target_name: "n" data_type: TYPE_INT32 source_input: [ "INPUT", "INPUT" ] } ]', 'batch-input-sources'],
    ['an FP16 batch input', 'batch_input [ { kind: BATCH_ELEMENT_COUNT target_name: "n" data_type: TYPE_FP16 source_input: "INPUT" } ]', 'batch-input-data-type'],
    ['an unknown source input', 'batch_input [ { kind: BATCH_ELEMENT_COUNT target_name: "n" data_type: TYPE_INT32 source_input: "NOPE" } ]', 'batch-input-unknown-source'],
    ['a batch output without source', 'batch_output [ { target_name: "OUTPUT" } ]', 'batch-output-sources'],
    ['an unknown target output', 'batch_output [ { target_name: "NOPE" source_input: "INPUT" } ]', 'batch-output-unknown-target'],
    ['a target output given twice', 'batch_output [ { target_name: "OUTPUT" source_input: "INPUT" }, { target_name: "OUTPUT" source_input: "INPUT" } ]', 'batch-output-duplicate-target'],
  ])('rejects %s', async (_case, extra, code) => {
    await expectFault(onnx(extra), code);
  });

  it('accepts well-formed batch inputs and outputs', async () => {
    await expectClean(onnx('batch_input [ { kind: BATCH_ACCUMULATED_ELEMENT_COUNT target_name: "n" data_type: TYPE_FP32 source_input: "INPUT" } ] batch_output [ { target_name: "OUTPUT" source_input: "INPUT" } ]'));
  });
});

describe('scheduling (§6, §7, §8)', () => {
  it('rejects the response cache on a decoupled model and on a sequence-batched model', async () => {
    await expectFault(onnx('model_transaction_policy { decoupled: true } response_cache { enable: true }'), 'decoupled-response-cache');
    await expectFault(onnx('sequence_batching { } response_cache { enable: true }'), 'sequence-response-cache');
  });

  it.each([
    ['a zero preferred batch size', 'dynamic_batching { preferred_batch_size: [ 0 ] }', 'preferred-batch-size-not-positive'],
    ['a preferred size above max_batch_size', 'dynamic_batching { preferred_batch_size: [ 4, 16 ] }', 'preferred-batch-size-too-large'],
    ['a default priority outside the levels', 'dynamic_batching { priority_levels: 2 default_priority_level: 3 }', 'default-priority-level-range'],
    ['a queue policy for an unknown level', 'dynamic_batching { priority_levels: 2 default_priority_level: 1 priority_queue_policy { key: 5 value { } } }', 'priority-queue-policy-range'],
    ['preserve_ordering with priorities', 'dynamic_batching { preserve_ordering: true priority_levels: 2 default_priority_level: 1 }', 'preserve-ordering-priorities'],
    ['preserve_ordering with DELAY', 'dynamic_batching { preserve_ordering: true default_queue_policy { timeout_action: DELAY default_timeout_microseconds: 100 } }', 'preserve-ordering-delay'],
  ])('rejects %s', async (_case, extra, code) => {
    await expectFault(onnx(extra), code);
  });

  it('accepts valid dynamic batching, and dynamic batching without batching (queueing only)', async () => {
    await expectClean(onnx('dynamic_batching { preferred_batch_size: [ 4, 8 ] max_queue_delay_microseconds: 100 priority_levels: 2 default_priority_level: 1 priority_queue_policy { key: 2 value { max_queue_size: 3 } } }'));
    await expectClean(onnx('dynamic_batching { }', {}, 'backend: "onnxruntime"'));
  });

  const control = (body: string) => `sequence_batching { control_input [ ${body} ] }`;
  it.each([
    ['a nameless control tensor', control('{ control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] }'), 'sequence-control-name'],
    ['one control tensor for two kinds', control('{ name: "S" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] }, { name: "S" control [ { kind: CONTROL_SEQUENCE_END int32_false_true: [ 0, 1 ] } ] }'), 'sequence-control-duplicate'],
    ['two START tensors', control('{ name: "A" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] }, { name: "B" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] }'), 'sequence-control-kind-duplicate'],
    ['START without values', control('{ name: "A" control [ { kind: CONTROL_SEQUENCE_START } ] }'), 'sequence-control-list-missing'],
    ['START with two value lists', control('{ name: "A" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] bool_false_true: [ false, true ] } ] }'), 'sequence-control-list-multiple'],
    ['START with three values', control('{ name: "A" control [ { kind: CONTROL_SEQUENCE_START fp32_false_true: [ 0, 1, 2 ] } ] }'), 'sequence-control-list-length'],
    ['CORRID with values', control('{ name: "C" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 int32_false_true: [ 0, 1 ] } ] }'), 'sequence-corrid-list'],
    ['CORRID of FP32', control('{ name: "C" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_FP32 } ] }'), 'sequence-corrid-data-type'],
    ['oldest preferred size above max_batch_size', 'sequence_batching { oldest { preferred_batch_size: [ 32 ] } }', 'sequence-preferred-batch-size'],
    ['slot utilization above 1', 'sequence_batching { direct { minimum_slot_utilization: 1.5 } }', 'sequence-slot-utilization'],
    ['two initial states', 'sequence_batching { state [ { input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [ 2 ] initial_state [ { name: "a" data_type: TYPE_FP32 dims: [ 2 ] zero_data: true }, { name: "b" data_type: TYPE_FP32 dims: [ 2 ] zero_data: true } ] } ] }', 'initial-state-count'],
    ['an initial state of another type', 'sequence_batching { state [ { input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [ 2 ] initial_state [ { name: "a" data_type: TYPE_INT32 dims: [ 2 ] zero_data: true } ] } ] }', 'initial-state-data-type'],
    ['a nameless initial state', 'sequence_batching { state [ { input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [ 2 ] initial_state [ { data_type: TYPE_FP32 dims: [ 2 ] zero_data: true } ] } ] }', 'initial-state-name'],
    ['initial state dims of another rank', 'sequence_batching { state [ { input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [ 2 ] initial_state [ { name: "a" data_type: TYPE_FP32 dims: [ 2, 1 ] zero_data: true } ] } ] }', 'initial-state-dims'],
    ['variable initial state dims', 'sequence_batching { state [ { input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [ -1 ] initial_state [ { name: "a" data_type: TYPE_FP32 dims: [ -1 ] zero_data: true } ] } ] }', 'initial-state-variable-dims'],
    ['initial state dims that differ', 'sequence_batching { state [ { input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [ 2 ] initial_state [ { name: "a" data_type: TYPE_FP32 dims: [ 3 ] zero_data: true } ] } ] }', 'initial-state-dim-mismatch'],
    ['an initial state without data', 'sequence_batching { state [ { input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [ 2 ] initial_state [ { name: "a" data_type: TYPE_FP32 dims: [ 2 ] } ] } ] }', 'initial-state-data'],
    ['a missing initial state file', 'sequence_batching { state [ { input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [ 2 ] initial_state [ { name: "a" data_type: TYPE_FP32 dims: [ 2 ] data_file: "s.bin" } ] } ] }', 'initial-state-file-missing'],
    ['a state input name given twice', 'sequence_batching { state [ { input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [ 2 ] initial_state [ { name: "a" data_type: TYPE_FP32 dims: [ 2 ] zero_data: true } ] }, { input_name: "i" output_name: "p" data_type: TYPE_FP32 dims: [ 2 ] initial_state [ { name: "b" data_type: TYPE_FP32 dims: [ 2 ] zero_data: true } ] } ] }', 'state-duplicate-input'],
    ['growable memory without a single buffer', 'sequence_batching { state [ { input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [ 2 ] use_growable_memory: true } ] } instance_group [ { kind: KIND_GPU } ]', 'state-growable-memory'],
  ])('rejects %s', async (_case, extra, code) => {
    await expectFault(onnx(extra), code);
  });

  it('checks the size of an initial state data file', async () => {
    const state = 'sequence_batching { state [ { input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [ 2 ] initial_state [ { name: "a" data_type: TYPE_FP32 dims: [ 2 ] data_file: "s.bin" } ] } ] }';
    await expectFault(onnx(state, { 'm/initial_state/s.bin': Buffer.alloc(4) }), 'initial-state-file-short');
    await expectClean(onnx(state, { 'm/initial_state/s.bin': Buffer.alloc(8) }));
  });

  it('accepts a complete sequence batcher', async () => {
    await expectClean(onnx(`sequence_batching { max_sequence_idle_microseconds: 5000000 oldest { max_candidate_sequences: 4 preferred_batch_size: [ 2 ] }
      control_input [ { name: "START" control [ { kind: CONTROL_SEQUENCE_START fp32_false_true: [ 0, 1 ] } ] },
                      { name: "CORRID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 } ] } ]
      state [ { input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [ 2 ] use_same_buffer_for_input_output: true use_growable_memory: true initial_state [ { name: "a" data_type: TYPE_FP32 dims: [ 2 ] zero_data: true } ] } ] }
      instance_group [ { kind: KIND_GPU } ]`));
  });

  it('warns that a batch strategy library is ignored with the sequence batcher', async () => {
    await expectFault(onnx('sequence_batching { } parameters { key: "TRITON_BATCH_STRATEGY_PATH" value { string_value: "s.so" } }', { 'm/s.so': 'x' }), 'batch-strategy-with-sequence', 'warning');
  });
});

describe('instance groups (§9)', () => {
  it.each([
    ['KIND_MODEL with gpus', 'instance_group [ { kind: KIND_MODEL gpus: [ 0 ] } ]', 'instance-group-model-gpus'],
    ['KIND_CPU with gpus', 'instance_group [ { kind: KIND_CPU gpus: [ 0 ] } ]', 'instance-group-cpu-gpus'],
    ['a negative gpu id', 'instance_group [ { kind: KIND_GPU gpus: [ -1 ] } ]', 'instance-group-gpu-id'],
    ['a profile on ONNX', 'instance_group [ { kind: KIND_GPU profile: [ "0" ] } ]', 'instance-group-profile-platform'],
    ['a resource both global and per device', 'instance_group [ { kind: KIND_GPU rate_limiter { resources [ { name: "R" global: true count: 1 } ] } }, { kind: KIND_GPU rate_limiter { resources [ { name: "R" count: 1 } ] } } ]', 'rate-limiter-resource-scope'],
  ])('rejects %s', async (_case, extra, code) => {
    await expectFault(onnx(extra), code);
  });

  it('warns about a GPU id that single-GPU SageMaker instances do not have', async () => {
    await expectFault(onnx('instance_group [ { kind: KIND_GPU gpus: [ 1 ] } ]'), 'instance-group-gpu-id', 'warning');
    await expectClean(onnx('instance_group [ { count: 2 kind: KIND_GPU gpus: [ 0 ] } ]'));
  });

  it('checks TensorRT profiles are non-negative integers', async () => {
    const trt = (g: string) => ({ 'm/config.pbtxt': `platform: "tensorrt_plan" max_batch_size: 8 ${IO} ${g}`, 'm/1/model.plan': 'x' });
    await expectFault(trt('instance_group [ { kind: KIND_GPU profile: [ "a" ] } ]'), 'instance-group-profile');
    await expectFault(trt('instance_group [ { kind: KIND_GPU profile: [ "" ] } ]'), 'instance-group-profile');
    await expectClean(trt('instance_group [ { kind: KIND_GPU profile: [ "0", "1" ] } ]'));
  });
});

describe('labels, warmup, parameters and metrics (§11–§14)', () => {
  const labelled = (file: string) => `output [ { name: "CLS" data_type: TYPE_FP32 dims: [ 3 ] label_filename: "${file}" } ]`;
  it('requires label files inside the model directory', async () => {
    await expectFault(onnx(labelled('labels.txt')), 'label-file-missing');
    await expectFault(onnx(labelled('../labels.txt'), { 'labels.txt': 'a' }), 'label-file-outside');
    await expectClean(onnx(labelled('labels.txt'), { 'm/labels.txt': 'a\nb\nc\n' }));
  });

  const warmup = (input: string) => `model_warmup [ { name: "w" batch_size: 1 inputs { key: "INPUT" value: { ${input} } } } ]`;
  it('checks warmup inputs', async () => {
    await expectFault(onnx(warmup('data_type: TYPE_FP32 dims: [ -1, 4 ] zero_data: true')), 'warmup-variable-dims');
    await expectFault(onnx(warmup('data_type: TYPE_FP32 dims: [ 3, 4 ]')), 'warmup-no-data');
    await expectFault(onnx(warmup('data_type: TYPE_FP32 dims: [ 3, 4 ] input_data_file: "in.bin"')), 'warmup-file-missing');
    await expectFault(onnx(warmup('data_type: TYPE_FP32 dims: [ 3, 4 ] input_data_file: "in.bin"'), { 'm/warmup/in.bin': Buffer.alloc(47) }), 'warmup-file-short');
    await expectClean(onnx(warmup('data_type: TYPE_FP32 dims: [ 3, 4 ] input_data_file: "in.bin"'), { 'm/warmup/in.bin': Buffer.alloc(48) }));
    await expectClean(onnx(warmup('data_type: TYPE_FP32 dims: [ 3, 4 ] random_data: true')));
  });

  const param = (key: string, value: string) => `parameters { key: "${key}" value { string_value: "${value}" } }`;
  it('checks EXECUTION_ENV_PATH, FORCE_CPU_ONLY_INPUT_TENSORS and TRITON_BATCH_STRATEGY_PATH', async () => {
    await expectFault(onnx(param('EXECUTION_ENV_PATH', '$$TRITON_MODEL_DIRECTORY/env.tar.gz')), 'execution-env-missing');
    await expectFault(onnx(param('EXECUTION_ENV_PATH', '$$TRITON_MODEL_DIRECTORY/../env.tar.gz')), 'execution-env-outside');
    await expectClean(onnx(param('EXECUTION_ENV_PATH', '$$TRITON_MODEL_DIRECTORY/env.tar.gz'), { 'm/env.tar.gz': 'x' }));
    await expectFault(onnx(param('FORCE_CPU_ONLY_INPUT_TENSORS', 'true')), 'force-cpu-only-value');
    await expectClean(onnx(param('FORCE_CPU_ONLY_INPUT_TENSORS', 'no')));
    await expectFault(onnx(param('TRITON_BATCH_STRATEGY_PATH', '../s.so')), 'batch-strategy-escapes');
    await expectFault(onnx(param('TRITON_BATCH_STRATEGY_PATH', 's.so')), 'batch-strategy-missing');
    await expectClean(onnx(param('TRITON_BATCH_STRATEGY_PATH', 's.so'), { 'm/s.so': 'x' }));
  });

  it('checks model_metrics', async () => {
    await expectFault(onnx('model_metrics { metric_control [ { histogram_options { buckets: [ 1 ] } } ] }'), 'metric-identifier-missing');
    await expectFault(onnx('model_metrics { metric_control [ { metric_identifier { } histogram_options { buckets: [ 1 ] } } ] }'), 'metric-family-missing');
    await expectFault(onnx('model_metrics { metric_control [ { metric_identifier { family: "nv_inference_request_duration" } } ] }'), 'metric-histogram-missing');
    await expectFault(onnx('model_metrics { metric_control [ { metric_identifier { family: "nv_inference_request_duration" } histogram_options { } } ] }'), 'metric-buckets-missing');
    await expectFault(onnx('model_metrics { metric_control [ { metric_identifier { family: "my_metric" } histogram_options { buckets: [ 1 ] } } ] }'), 'metric-family-not-customizable', 'warning');
    await expectClean(onnx('model_metrics { metric_control [ { metric_identifier { family: "nv_inference_request_duration" } histogram_options { buckets: [ 1, 10, 100 ] } } ] }'));
  });
});

describe('python backend (§16)', () => {
  const MODEL_PY = 'import numpy as np\n\nclass TritonPythonModel:\n    def initialize(self, args):\n        pass\n\n    def execute(self, requests):\n        return []\n';
  const py = (source: string | null, config = '') => ({
    'm/config.pbtxt': `backend: "python" max_batch_size: 8 ${IO} ${config}`,
    'm/1/': null,
    ...(source !== null ? { 'm/1/model.py': source } : {}),
  });

  it('accepts a python model with TritonPythonModel.execute', async () => {
    await expectClean(py(MODEL_PY));
  });

  it('requires model.py (Python model file not found)', async () => {
    const found = await validateRepository(makeRepo(py(null)));
    expect(found.diagnostics[0]!.message).toContain("Python model file not found in 'm/1/model.py'");
  });

  it('requires the file name to end with .py', async () => {
    await expectFault(py(MODEL_PY, 'default_model_filename: "model.txt"'), 'python-model-extension');
  });

  it('requires class TritonPythonModel and its execute method', async () => {
    await expectFault(py('class Model:\n    def execute(self, requests):\n        return []\n'), 'python-model-class');
    await expectFault(py('class TritonPythonModel:\n    def initialize(self, args):\n        pass\n'), 'python-model-execute');
    await expectClean(py('class TritonPythonModel:\n    async def execute(self, requests):\n        return []\n'));
  });

  it('lets auto_complete_config supply inputs and outputs', async () => {
    const source = `${MODEL_PY}\n    @staticmethod\n    def auto_complete_config(config):\n        return config\n`;
    const found = await codes({ 'm/config.pbtxt': 'backend: "python"', 'm/1/model.py': source });
    expect(found).toEqual(['warning:missing-inputs', 'warning:missing-outputs']);
  });
});
