import { join } from 'node:path';
import { savedModel } from '../model-files/tensorflow-writer';
import { torchScript } from '../model-files/torchscript-writer';
import { AutoCompleteSession } from '../../lib/python-auto-complete/run';
import { validateRepository as validateAlone, type ValidateOptions } from '../../lib/repository/validate';
import { makeRepo, removeRepos, RepoFiles } from './repo-builder';
import { FLOAT, onnxModel } from '../model-files/onnx-writer';

afterAll(removeRepos);

// The model.py syntax check of every validation here runs in one python, started once (a session's fork server),
// instead of one python per validation: the same check, for one interpreter start.
let session: AutoCompleteSession;
beforeAll(() => (session = AutoCompleteSession.open()));
afterAll(() => session.close());
const validateRepository = (path: string, options: ValidateOptions = {}) => validateAlone(path, { ...options, pythonSyntax: { session } });

const IO = `
input [ { name: "INPUT" data_type: TYPE_FP32 dims: [ 3, 4 ] } ]
output [ { name: "OUTPUT" data_type: TYPE_FP32 dims: [ 12 ] } ]`;

/** A model.onnx with the interface IO declares (a batch dimension in front). */
const MODEL_ONNX = onnxModel([['INPUT', FLOAT, ['batch', 3, 4]]], [['OUTPUT', FLOAT, ['batch', 12]]]);

/** An OpenVINO IR (v11, as openvino's serializer writes it) with the interface IO declares. */
const MODEL_XML = [
  '<?xml version="1.0"?>',
  '<net name="model" version="11">',
  '<layers>',
  '<layer id="0" name="INPUT" type="Parameter" version="opset1">',
  '<data shape="?,3,4" element_type="fp32"/>',
  '<output>',
  '<port id="0" precision="FP32" names="INPUT">',
  '<dim>-1</dim>',
  '<dim>3</dim>',
  '<dim>4</dim>',
  '</port>',
  '</output>',
  '</layer>',
  '<layer id="1" name="convert1" type="Convert" version="opset1">',
  '<data destination_type="fp32"/>',
  '<input>',
  '<port id="0" precision="FP32">',
  '<dim>-1</dim>',
  '<dim>3</dim>',
  '<dim>4</dim>',
  '</port>',
  '</input>',
  '<output>',
  '<port id="1" precision="FP32" names="OUTPUT">',
  '<dim>-1</dim>',
  '<dim>12</dim>',
  '</port>',
  '</output>',
  '</layer>',
  '<layer id="2" name="result2" type="Result" version="opset1">',
  '<input>',
  '<port id="0" precision="FP32">',
  '<dim>-1</dim>',
  '<dim>12</dim>',
  '</port>',
  '</input>',
  '</layer>',
  '</layers>',
  '<edges>',
  '<edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>',
  '<edge from-layer="1" from-port="1" to-layer="2" to-port="0"/>',
  '</edges>',
  '<rt_info>',
  '<MO_version value="2023.0"/>',
  '</rt_info>',
  '</net>',
].join('\n');

/** A valid ONNX model `m`; `config` is appended to its config.pbtxt, `files` added to the repository. */
function onnx(config = '', files: RepoFiles = {}, header = 'name: "m"\nbackend: "onnxruntime"\nmax_batch_size: 8'): RepoFiles {
  return { 'm/config.pbtxt': `${header}\n${IO}\n${config}\n`, 'm/1/model.onnx': MODEL_ONNX, ...files };
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
    expect(report.models).toEqual([
      expect.objectContaining({ name: 'm', path: '.', platform: 'onnxruntime_onnx', backend: 'onnxruntime', versions: [1] }),
    ]);
  });

  it('reports files relative to the given path, with line and column', async () => {
    const report = await validateRepository(makeRepo(onnx('', {}, 'name: "x"\nbackend: "onnxruntime"')));
    expect(report.diagnostics[0]).toMatchObject({ code: 'name-mismatch', file: 'm/config.pbtxt', line: 1, column: 1, model: 'm' });
  });

  it('rejects a name that differs from the directory (Triton: directory name must equal model name)', async () => {
    const found = await validateRepository(makeRepo(onnx('', {}, 'name: "other"\nbackend: "onnxruntime"\nmax_batch_size: 8')));
    expect(found.diagnostics[0]!.message).toContain("unexpected directory name 'm' for model 'other'");
    await expectClean(onnx('', {}, 'backend: "onnxruntime"\nmax_batch_size: 8'));
  });

  it('treats a model directory given without config.pbtxt as that model, not as a repository of models 1, 2', async () => {
    const root = makeRepo({ 'mymodel/1/model.plan': '', 'mymodel/2/model.plan': '' });
    const report = await validateRepository(join(root, 'mymodel'));
    expect(report.models.map((m) => m.name)).toEqual(['mymodel']);
    expect(report.diagnostics).toMatchObject([{ severity: 'warning', code: 'config-missing', file: '.' }]);
    expect(report.diagnostics[0]!.message).toContain('generates it from the tensorrt model');
    expect(report.diagnostics[0]!.message).toContain('The path given is a model directory: 1/, 2/ are its version directories');
    // A backend that cannot generate a config: the error says so.
    const pt = await validateRepository(join(makeRepo({ 'net/1/model.pt': 'x' }), 'net'));
    expect(pt.diagnostics.map((d) => `${d.severity}:${d.code}`)).toEqual(['error:config-missing']);
  });

  it('points at a config.pbtxt put in the version directory', async () => {
    const report = await validateRepository(
      makeRepo({
        'ens/1/config.pbtxt': 'platform: "ensemble"',
        'm/1/model.py': 'class TritonPythonModel:\n    def execute(self, r):\n        return []\n',
        'm/config.pbtxt': 'backend: "python"',
      }),
    );
    const d = report.diagnostics.find((x) => x.model === 'ens' && x.code === 'unknown-backend');
    expect(d?.message).toContain("Could not determine backend for model 'ens'");
    expect(d?.message).toContain(
      'ens/1/config.pbtxt is in the version directory, where Triton does not look: move it to ens/config.pbtxt.',
    );
  });

  it('says a hidden directory holding a model is skipped because it is hidden (Triton would load it)', async () => {
    const report = await validateRepository(makeRepo({ ...onnx(), '.old/config.pbtxt': 'backend: "python"', '.old/1/model.py': 'x' }));
    expect(report.models.map((m) => m.name)).toEqual(['m']);
    expect(report.diagnostics).toMatchObject([{ severity: 'warning', code: 'hidden-model-directory', file: '.old' }]);
    expect(report.diagnostics[0]!.message).toContain(
      'it is hidden: this tool skips hidden directories, so it is not checked. ' +
        "Triton does not skip it: it loads it as a model named '.old'",
    );
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
    await expectFault(onnx('', { 'm/2abc/model.onnx': MODEL_ONNX }), 'version-numeric-prefix', 'warning');
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

  it('selects no version with latest { num_versions: 0 } or an empty latest { }: the load fails', async () => {
    for (const policy of ['version_policy { latest { num_versions: 0 } }', 'version_policy { latest { } }']) {
      const report = await validateRepository(makeRepo(onnx(policy)));
      expect(report.models[0]!.versions).toEqual([]);
      const d = report.diagnostics.find((x) => x.code === 'no-version');
      expect(d).toMatchObject({ severity: 'error', file: 'm/config.pbtxt' });
      expect(d!.line).toBeGreaterThan(0);
      expect(d!.message).toMatch(
        /^at least one version must be available under the version policy of model 'm': latest \{ num_versions: 0 \} selects no version/,
      );
    }
  });

  it('applies version_policy: latest N, all, specific', async () => {
    const files = { 'm/2/model.onnx': MODEL_ONNX, 'm/3/model.onnx': MODEL_ONNX };
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
    await expectClean(onnx('', { 'm/2/model.onnx': MODEL_ONNX, 'm/0/': null }));
    await expectFault(onnx('version_policy { all { } }', { 'm/2/': null }), 'model-file-missing');
  });
});

describe('config presence, platform and backend (§1.5, §1.B, §2)', () => {
  it('lets backends that auto-complete run without config.pbtxt, with a warning', async () => {
    await expectFault({ 'm/1/model.onnx': MODEL_ONNX }, 'config-missing', 'warning');
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
    // A TorchScript model.pt whose forward takes the config's one input.
    const modelPt = torchScript({ forward: 'INPUT: Tensor' });
    await expectClean({ 'm/config.pbtxt': `platform: "pytorch_libtorch" max_batch_size: 8 ${IO}`, 'm/1/model.pt': modelPt });
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
    await expectFault(
      { 'm/config.pbtxt': `platform: "tensorflow_savedmodel" max_batch_size: 1 ${IO}`, 'm/1/model.savedmodel': 'x' },
      'model-file-not-a-directory',
    );
    await expectClean({
      'm/config.pbtxt': `platform: "tensorflow_savedmodel" max_batch_size: 1 ${IO}`,
      'm/1/model.savedmodel/saved_model.pb': savedModel([['INPUT', 1, [-1, 3, 4]]], [['OUTPUT', 1, [-1, 12]]]),
    });
    await expectFault(
      { 'm/config.pbtxt': `platform: "tensorrt_plan" max_batch_size: 1 ${IO}`, 'm/1/model.plan/': null },
      'model-file-not-a-file',
    );
    await expectClean(onnx('', { 'm/1/model.onnx': null, 'm/1/model.onnx/model.onnx': MODEL_ONNX }));
  });

  it('warns (never errs) about a backend no Triton image ships: whether its library is installed is up to the server', async () => {
    const custom = { 'm/config.pbtxt': `backend: "mybackend" max_batch_size: 1 ${IO}`, 'm/1/model.mybackend': 'x' };
    const found = await validateRepository(makeRepo(custom));
    expect(found.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(found.diagnostics.find((d) => d.code === 'unknown-backend-library')?.message).toContain(
      "unable to find backend library for backend 'mybackend', try specifying runtime on the model configuration.",
    );
    await expectClean({
      'm/config.pbtxt': `backend: "mybackend" runtime: "libcustom.so" max_batch_size: 1 ${IO}`,
      'm/1/model.mybackend': 'x',
    });
  });

  it('uses default_model_filename and requires the OpenVINO weights file', async () => {
    await expectClean(onnx('default_model_filename: "bert.onnx"', { 'm/1/bert.onnx': MODEL_ONNX }));
    await expectFault(onnx('default_model_filename: "bert.onnx"'), 'model-file-missing');
    const openvino = `backend: "openvino" max_batch_size: 1 ${IO}`;
    await expectFault({ 'm/config.pbtxt': openvino, 'm/1/model.xml': MODEL_XML }, 'openvino-bin-missing');
    await expectClean({ 'm/config.pbtxt': openvino, 'm/1/model.xml': MODEL_XML, 'm/1/model.bin': 'x' });
  });

  it("words a missing model file as the backend does (\"unable to find '...' for model instance\")", async () => {
    const message = async (files: RepoFiles) =>
      (await validateRepository(makeRepo(files))).diagnostics.find((d) => d.code === 'model-file-missing')?.message;
    expect(await message({ 'm/config.pbtxt': onnx()['m/config.pbtxt']!, 'm/1/': null }))
      .toMatch(/^unable to find 'm\/1\/model\.onnx' for model instance 'm': /);
    expect(await message({ 'm/config.pbtxt': `backend: "openvino" max_batch_size: 1 ${IO}`, 'm/1/': null }))
      .toMatch(/^unable to find 'm\/1\/model\.xml' for model 'm': /);
    expect(await message({ 'm/config.pbtxt': `platform: "tensorflow_graphdef" max_batch_size: 1 ${IO}`, 'm/1/': null }))
      .toMatch(/^m\/1\/model\.graphdef is missing: /);
  });

  it('warns when a cc_model_filenames file is missing', async () => {
    await expectFault(onnx('cc_model_filenames { key: "7.5" value: "t4.onnx" }'), 'cc-model-file-missing', 'warning');
    await expectClean(onnx('cc_model_filenames { key: "7.5" value: "t4.onnx" }', { 'm/1/t4.onnx': 'x' }));
  });
});

describe('files the config names, read from disk (§8, §11, §12)', () => {
  it('finds label, warmup and initial state files and measures them', async () => {
    // A line ending in \ goes on at the start of the next (a template literal's line continuation): no line break there.
    const config = `output [ { name: "CLS" data_type: TYPE_FP32 dims: [ 3 ] label_filename: "labels.txt" } ]
      model_warmup [ { name: "w" batch_size: 1 inputs { key: "INPUT" value: { data_type: TYPE_FP32 dims: [ 3, 4 ] \
input_data_file: "in.bin" } } } ]
      sequence_batching { state [ { input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [ 2 ]
        initial_state [ { name: "a" data_type: TYPE_FP32 dims: [ 2 ] data_file: "s.bin" } ] } ] }`;
    // The model takes the state input too (onnxruntime counts it) and has the CLS output.
    const model = onnxModel(
      [['INPUT', FLOAT, ['batch', 3, 4]], ['i', FLOAT, ['batch', 2]]],
      [['OUTPUT', FLOAT, ['batch', 12]], ['CLS', FLOAT, ['batch', 3]], ['o', FLOAT, ['batch', 2]]],
    );
    const files = {
      'm/1/model.onnx': model,
      'm/labels.txt': 'a\nb\nc\n',
      'm/warmup/in.bin': Buffer.alloc(48),
      'm/initial_state/s.bin': Buffer.alloc(8),
    };
    await expectClean(onnx(config, files));
    expect(await codes(onnx(config, { ...files, 'm/warmup/in.bin': Buffer.alloc(47), 'm/initial_state/s.bin': Buffer.alloc(4) }))).toEqual([
      'error:warmup-file-short',
      'error:initial-state-file-short',
    ]);
    // A directory where the label file belongs is no label file (and Triton skips it as a version directory).
    expect(await codes(onnx(config, { 'm/1/model.onnx': model, 'm/labels.txt/': null, 'labels.txt': 'x' }))).toEqual([
      'error:label-file-missing',
      'error:warmup-file-missing',
      'error:initial-state-file-missing',
      'warning:version-not-numeric',
    ]);
  });
});

describe('python backend (§16)', () => {
  const MODEL_PY =
    'import numpy as np\n\nclass TritonPythonModel:\n    def initialize(self, args):\n' +
    '        pass\n\n    def execute(self, requests):\n        return []\n';
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

  it('requires a TritonPythonModel attribute: an error only when nothing in model.py can bind the name', async () => {
    await expectFault(py('class Model:\n    def execute(self, requests):\n        return []\n'), 'python-model-class');
    await expectClean(py('class TritonPythonModel:\n    async def execute(self, requests):\n        return []\n'));
    // The stub looks the name up on the imported module (pb_stub.cc:565): imports, re-exports and aliases all serve.
    for (const source of [
      'from my_models import *\n',
      'from my_models import TritonPythonModel\n',
      'from .impl import Impl as TritonPythonModel\n',
      'import impl\nTritonPythonModel = impl.Model\n',
      'try:\n    from fast import TritonPythonModel\nexcept ImportError:\n    from slow import TritonPythonModel\n',
      'def __getattr__(name):\n    return load(name)\n',
      'class TritonPythonModel(BaseModel):\n    pass\n',
    ]) {
      await expectClean(py(source));
    }
  });

  it('warns (the load succeeds, every request fails) when a plain TritonPythonModel class has no execute', async () => {
    await expectFault(py('class TritonPythonModel:\n    def initialize(self, args):\n        pass\n'), 'python-model-execute', 'warning');
  });

  it('lets auto_complete_config supply inputs and outputs', async () => {
    const source = `${MODEL_PY}\n    @staticmethod\n    def auto_complete_config(config):\n        return config\n`;
    const found = await codes({ 'm/config.pbtxt': 'backend: "python"', 'm/1/model.py': source });
    expect(found).toEqual(['warning:missing-inputs', 'warning:missing-outputs']);
  });
});
