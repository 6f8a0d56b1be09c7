import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { targetModelNameProblem } from '../../lib/repository/mme-rules';
import { AutoCompleteSession } from '../../lib/python-auto-complete/run';
import { validateRepository, type ValidateOptions } from '../../lib/repository/validate';
import { makeRepo, removeRepos, RepoFiles } from './repo-builder';
import { FLOAT, INT32, onnxModel } from '../model-files/onnx-writer';

afterAll(removeRepos);

// The model.py syntax check of every validation below runs in one python, started once (a session's fork server),
// instead of one python per validation: the same check, for one interpreter start.
let session: AutoCompleteSession;
beforeAll(() => (session = AutoCompleteSession.open()));
afterAll(() => session.close());
const validate = (path: string, options: ValidateOptions = {}) => validateRepository(path, { ...options, pythonSyntax: { session } });

const PY = 'class TritonPythonModel:\n    def execute(self, requests):\n        return []\n';
const pre = (config = '') => ({
  'pre/config.pbtxt': `name: "pre" backend: "python" max_batch_size: 4
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "IDS" data_type: TYPE_INT32 dims: [ 8 ] } ]
${config}`,
  'pre/1/model.py': PY,
});
const net = {
  'net/config.pbtxt': `name: "net" backend: "onnxruntime" max_batch_size: 4
input [ { name: "ids" data_type: TYPE_INT32 dims: [ 8 ] } ]
output [ { name: "logits" data_type: TYPE_FP32 dims: [ 2 ] } ]`,
  'net/1/model.onnx': onnxModel([['ids', INT32, ['batch', 8]]], [['logits', FLOAT, ['batch', 2]]]),
};
const ensemble = (name = 'ens', platform = 'platform: "ensemble"') => ({
  [`${name}/config.pbtxt`]: `name: "${name}" ${platform} max_batch_size: 4
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "LOGITS" data_type: TYPE_FP32 dims: [ 2 ] } ]
ensemble_scheduling { step [
  { model_name: "pre" model_version: -1 input_map { key: "TEXT" value: "TEXT" } output_map { key: "IDS" value: "ids" } },
  { model_name: "net" model_version: -1 input_map { key: "ids" value: "ids" } output_map { key: "logits" value: "LOGITS" } } ] }`,
  [`${name}/1/`]: null,
});

async function mme(files: RepoFiles, targetModel = 'model.tar.gz') {
  const report = await validate(makeRepo(files), { mme: true, targetModel });
  return report.diagnostics.map((d) => `${d.severity}:${d.code}`);
}

describe('SageMaker MME archive rules', () => {
  it('accepts an ensemble with its composing models at the archive root', async () => {
    expect(await mme({ ...pre(), ...net, ...ensemble() })).toEqual([]);
  });

  it('lets the loaded ensemble\'s name differ from its directory (SageMaker renames it), but not composing models\' names', async () => {
    const files: RepoFiles = { ...pre(), ...net, ...ensemble() };
    files['ens/config.pbtxt'] = (files['ens/config.pbtxt'] as string).replace('name: "ens"', 'name: "pipeline"');
    expect(await mme(files)).toEqual([]);
    const plain = await validate(makeRepo(files));
    expect(plain.diagnostics.map((d) => d.code)).toContain('name-mismatch');
    files['pre/config.pbtxt'] = (files['pre/config.pbtxt'] as string).replace('name: "pre"', 'name: "preprocess"');
    expect(await mme(files)).toContain('error:name-mismatch');
  });

  it('lets a single model directory be loaded under any name', async () => {
    const root = makeRepo({ ...net });
    const report = await validate(join(root, 'net'), { mme: true, targetModel: 'resnet_v0.tar.gz' });
    expect(report.ok).toBe(true);
  });

  it('rejects several model directories without an ensemble (SageMaker would load an arbitrary one)', async () => {
    expect(await mme({ ...pre(), ...net })).toContain('error:mme-no-ensemble');
  });

  it('rejects two top-level ensembles in one archive', async () => {
    expect(await mme({ ...pre(), ...net, ...ensemble('a'), ...ensemble('b') })).toContain('error:mme-multiple-ensembles');
  });

  it('rejects an ensemble that SageMaker\'s textual match does not find', async () => {
    expect(await mme({ ...pre(), ...net, ...ensemble('ens', 'platform : "ensemble"') })).toContain('error:mme-ensemble-not-detected');
    expect(await mme({ ...pre(), ...net, ...ensemble('ens', "platform: 'ensemble'") })).toContain('error:mme-ensemble-not-detected');
  });

  it('rejects another config that the match would pick, such as a commented line', async () => {
    expect(await mme({ ...pre('# was platform: "ensemble"'), ...net, ...ensemble() })).toContain('error:mme-ambiguous-ensemble');
  });

  it('rejects a nested ensemble, which SageMaker may register instead of the outer one', async () => {
    // A line ending in \ goes on at the start of the next (a template literal's line continuation): no line break there.
    const outer = {
      'outer/config.pbtxt': `platform: "ensemble" max_batch_size: 4
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "LOGITS" data_type: TYPE_FP32 dims: [ 2 ] } ]
ensemble_scheduling { step [ { model_name: "ens" input_map { key: "TEXT" value: "TEXT" } \
output_map { key: "LOGITS" value: "LOGITS" } } ] }`,
      'outer/1/': null,
    };
    const found = await mme({ ...pre(), ...net, ...ensemble(), ...outer });
    expect(found).toContain('error:mme-ambiguous-ensemble');
    expect(found).not.toContain('error:mme-multiple-ensembles');
  });

  it('only warns about a stray directory, which package leaves out of the archive, and ignores what it excludes', async () => {
    // Beside one model SageMaker would pick by readdir order if the directory were in the archive; package keeps only
    // model directories at the root, so it never is (local load, on an archive made elsewhere, still refuses it).
    expect(await mme({ ...net, '__MACOSX/': null })).toEqual(['warning:stray-directory']);
    expect(await mme({ ...net, '.vscode/settings.json': '{}' })).toEqual(['warning:stray-directory']);
    const report = await validate(makeRepo({ ...net, '__MACOSX/': null }), { mme: true });
    expect(report.ok).toBe(true);
    expect(report.diagnostics[0]!.message).toContain('`package` leaves it out, so SageMaker never sees it');
    // Plain validate: Triton loads every subdirectory, so there it is an error.
    expect((await validate(makeRepo({ ...net, '__MACOSX/': null }))).ok).toBe(false);
    expect(await mme({ ...pre(), ...net, ...ensemble(), '.ipynb_checkpoints/x': 'y', 'pre/1/__pycache__/m.pyc': 'z' })).toEqual([]);
  });

  it('only warns about directories beside a found ensemble that SageMaker never loads (sagemaker_server.cc:1033-1035, 1109)', async () => {
    const debris: RepoFiles = { '__MACOSX/ens/._config.pbtxt': 'x', '.vscode/settings.json': '{}', 'workspace/export.sh': 'x' };
    const found = await mme({ ...pre(), ...net, ...ensemble(), ...debris });
    expect(found.filter((c) => c.startsWith('error:'))).toEqual([]);
    expect(found).toEqual(expect.arrayContaining(['warning:stray-directory', 'warning:no-version', 'warning:mme-unused-model']));
    // The warning says why it is one: the ensemble SageMaker loads, and the directory it never loads.
    const report = await validate(makeRepo({ ...pre(), ...net, ...ensemble(), ...debris }), { mme: true });
    const helper = report.diagnostics.find((d) => d.code === 'no-version' && d.model === 'workspace');
    expect(helper?.message).toContain("SageMaker loads only 'ens' and the models its steps name, never 'workspace'");
    // A plain Triton repository loads every directory: there they are errors.
    const plain = await validate(makeRepo({ ...pre(), ...net, ...ensemble(), ...debris }));
    expect(plain.diagnostics.filter((d) => d.severity === 'error').map((d) => d.code)).toEqual(
      expect.arrayContaining(['stray-directory', 'no-version']),
    );
    // A composing model's fault is met at load, and so is any fault when SageMaker's choice depends on readdir order.
    const broken = { ...pre(), ...net, ...ensemble(), ...debris, 'net/config.pbtxt': `${net['net/config.pbtxt']}\nmax_batch_size: 8` };
    expect(await mme(broken)).toContain('error:duplicate-field');
    expect(await mme({ ...pre(), ...net, ...ensemble('a'), ...ensemble('b'), 'workspace/export.sh': 'x' })).toContain('error:no-version');
  });

  it('requires a version directory for the ensemble too', async () => {
    const files: RepoFiles = { ...pre(), ...net, ...ensemble() };
    delete files['ens/1/'];
    expect(await mme(files)).toContain('error:no-version');
  });

  it('rejects a decoupled composing model (SageMaker invoke refuses decoupled models)', async () => {
    expect(await mme({ ...pre('model_transaction_policy { decoupled: true }'), ...net, ...ensemble() })).toContain('error:mme-decoupled');
  });

  it('warns about models the ensemble never uses and about more than five models', async () => {
    const extra: RepoFiles = {};
    for (const n of ['u1', 'u2', 'u3', 'u4']) {
      extra[`${n}/config.pbtxt`] = net['net/config.pbtxt'].replace('name: "net"', `name: "${n}"`);
      extra[`${n}/1/model.onnx`] = net['net/1/model.onnx'];
    }
    const found = await mme({ ...pre(), ...net, ...ensemble(), ...extra });
    expect(found.filter((c) => c === 'warning:mme-unused-model')).toHaveLength(4);
    expect(found).toContain('warning:mme-many-models');
  });

  it.each([
    ['a name with a slash', 'models/a.tar.gz'],
    ['a name without .tar.gz', 'model.zip'],
  ])('rejects a TargetModel with %s', async (_case, name) => {
    expect(await mme({ ...net }, name)).toContain('error:mme-target-model-name');
  });

  describe('EXECUTION_ENV_PATH', () => {
    const env = (value: string) => `parameters { key: "EXECUTION_ENV_PATH" value { string_value: "${value}" } }`;

    function condaPack(dir: string, withActivate: boolean): void {
      const src = join(dir, 'envsrc');
      mkdirSync(join(src, 'bin'), { recursive: true });
      mkdirSync(join(src, 'lib'), { recursive: true });
      writeFileSync(join(src, 'lib', 'x.py'), 'x');
      if (withActivate) writeFileSync(join(src, 'bin', 'activate'), '# activate');
      execFileSync('tar', ['-czf', join(dir, 'pre', 'env.tar.gz'), '-C', src, '.']);
      rmSync(src, { recursive: true, force: true });
    }

    it('accepts a conda-pack archive inside the model directory that holds bin/activate', async () => {
      const root = makeRepo({ ...pre(env('$$TRITON_MODEL_DIRECTORY/env.tar.gz')), ...net, ...ensemble() });
      condaPack(root, true);
      const report = await validate(root, { mme: true, targetModel: 'm.tar.gz' });
      expect(report.diagnostics).toEqual([]);
    });

    it('rejects an archive without bin/activate', async () => {
      const root = makeRepo({ ...pre(env('$$TRITON_MODEL_DIRECTORY/env.tar.gz')), ...net, ...ensemble() });
      condaPack(root, false);
      const report = await validate(root, { mme: true, targetModel: 'm.tar.gz' });
      expect(report.diagnostics.map((d) => d.code)).toEqual(['mme-execution-env-activate']);
      expect(report.diagnostics[0]!.message).toContain("The Python environment should contain an 'activate' script");
      expect(report.diagnostics[0]!.excerpt).toMatch(/key: "EXECUTION_ENV_PATH".*\n +\^$/);
    });

    it('takes an empty archive for a stand-in: a warning that its contents are not checked', async () => {
      const found = await mme({ ...pre(env('$$TRITON_MODEL_DIRECTORY/env.tar.gz')), 'pre/env.tar.gz': '', ...net, ...ensemble() });
      expect(found).toContain('warning:mme-execution-env-empty');
      expect(found.filter((c) => c.startsWith('error:'))).toEqual([]);
    });

    it('rejects a missing env and a file that is no tar.gz, and warns about a path outside $$TRITON_MODEL_DIRECTORY', async () => {
      expect(await mme({ ...pre(env('$$TRITON_MODEL_DIRECTORY/env.tar.gz')), ...net, ...ensemble() })).toContain(
        'error:execution-env-missing',
      );
      // Triton accepts the path; on SageMaker it works only if the image ships the file: a warning (issue 10.6).
      const found = await mme({ ...pre(env('/opt/conda/env.tar.gz')), ...net, ...ensemble() });
      expect(found).toContain('warning:mme-execution-env-path');
      expect(found.filter((c) => c.startsWith('error:'))).toEqual([]);
      expect(await mme({ ...pre(env('$$TRITON_MODEL_DIRECTORY/env.zip')), 'pre/env.zip': 'zip', ...net, ...ensemble() })).toContain(
        'error:mme-execution-env-format',
      );
      expect(
        await mme({ ...pre(env('$$TRITON_MODEL_DIRECTORY/env.tar.gz')), 'pre/env.tar.gz': 'not gzip at all', ...net, ...ensemble() }),
      ).toContain('error:mme-execution-env-format');
    });

    it('accepts an unpacked environment directory with bin/activate', async () => {
      // Triton also logs that it ignores pre/env/ as a version directory; that warning is true and harmless.
      expect(await mme({ ...pre(env('$$TRITON_MODEL_DIRECTORY/env')), 'pre/env/bin/activate': '#', ...net, ...ensemble() })).toEqual([
        'warning:version-not-numeric',
      ]);
      expect(await mme({ ...pre(env('$$TRITON_MODEL_DIRECTORY/env')), 'pre/env/lib/': null, ...net, ...ensemble() })).toContain(
        'error:mme-execution-env-activate',
      );
    });
  });
});

describe("TargetModel names InvokeEndpoint can carry (its TargetModel header pattern \\A\\S[\\p{Print}]*\\z, ≤ 1024)", () => {
  it('refuses a leading space, characters outside printable ASCII and names over 1024 characters, saying why', () => {
    expect(targetModelNameProblem(' resnet.tar.gz')).toMatch(/^TargetModel ' resnet\.tar\.gz' starts with a space: SageMaker takes/);
    expect(targetModelNameProblem('modèle.tar.gz')).toMatch(/^TargetModel 'modèle\.tar\.gz' contains 'è': SageMaker takes only printable/);
    expect(targetModelNameProblem(`${'a'.repeat(1018)}.tar.gz`)).toMatch(/is 1025 characters; SageMaker takes at most 1024\./);
  });

  it('accepts printable ASCII names, spaces inside included', () => {
    for (const name of ['resnet.tar.gz', 'a b.tar.gz', `${'a'.repeat(1017)}.tar.gz`, 'x~!@#$%^&()=+[]{};,.tar.gz']) {
      expect(targetModelNameProblem(name)).toBeUndefined();
    }
  });
});
