// `validate` and `package` told the target endpoint (--instance-type, --triton-version, as `local load` is), how
// warnings count (--accept CODE, --strict), and the model.py syntax check (on by default, --no-python-syntax).

import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_TRITON_VERSION } from '../../lib/catalog/triton-images';
import { makeRepo, removeRepos } from '../repository/repo-builder';
import { suiteFor } from '../tools';
import { runCli } from './run-cli';

const out = mkdtempSync(join(tmpdir(), 'mme-flags-'));
afterAll(() => {
  removeRepos();
  rmSync(out, { recursive: true, force: true });
});

/** One TensorRT plan: valid, with one warning (tensorrt-plan-target) whenever the target is known. */
const PLAN = {
  'p/config.pbtxt': 'name: "p"\nplatform: "tensorrt_plan"\nmax_batch_size: 0\n' +
    'input [ { name: "x" data_type: TYPE_FP32 dims: [ 2 ] } ]\noutput [ { name: "y" data_type: TYPE_FP32 dims: [ 2 ] } ]\n',
  'p/1/model.plan': '',
};
const pythonModel = (source: string) => ({ 'm/config.pbtxt': 'name: "m"\nbackend: "python"\n', 'm/1/model.py': source });
const VALID_PY = 'class TritonPythonModel:\n    def execute(self, requests):\n        return []\n';
const EXCEPT_STAR_PY =
  'class TritonPythonModel:\n    def execute(self, requests):\n        try:\n            return []\n' +
  '        except* ValueError:\n            return []\n';

const oneLine = (stderr: string) => stderr.trimEnd().split('\n');

describe('--instance-type and --triton-version', () => {
  it('are defined once: validate, package and local load show the same options and defaults', async () => {
    for (const command of [['validate'], ['package'], ['local', 'load']]) {
      // Commander wraps the help to the terminal's width: compared with its whitespace folded.
      const help = (await runCli([...command, '--help'])).stdout.replace(/\s+/g, ' ');
      expect(help).toMatch(/--instance-type <type> the endpoint's SageMaker instance type .*?\(default: ml\.g4dn\.xlarge\)/);
      expect(help).toMatch(/--triton-version <YY\.MM> the Triton release deployed/);
    }
    // The help spells the catalog's default without loading the catalog: the two must agree.
    expect((await runCli(['validate', '--help'])).stdout.replace(/\s+/g, ' ')).toContain(`(default: ${DEFAULT_TRITON_VERSION})`);
  });

  it('name the GPU and TensorRT the plan warning asks for', async () => {
    const repo = makeRepo(PLAN);
    const byDefault = await runCli(['validate', repo, '--mme', '--json']);
    expect(JSON.parse(byDefault.stdout).diagnostics[0].message).toContain(
      'compute capability 7.5 (the NVIDIA T4 of ml.g4dn.xlarge) with TensorRT 10.4.0.26',
    );
    const run = await runCli(['validate', repo, '--instance-type', 'ml.g5.xlarge', '--triton-version', '25.01', '--json']);
    expect(run.code).toBe(0);
    const [d] = JSON.parse(run.stdout).diagnostics;
    expect(d).toMatchObject({ severity: 'warning', code: 'tensorrt-plan-target' });
    expect(d.message).toContain('compute capability 8.6 (the NVIDIA A10G of ml.g5.xlarge) with TensorRT 10.8.0.43');
  });

  it('refuse an unknown instance type or a release not of the form YY.MM in one line, exit 2, nothing written', async () => {
    const repo = makeRepo(PLAN);
    const badType = await runCli(['validate', repo, '--instance-type', 'ml.m5.large']);
    expect(badType.code).toBe(2);
    expect(badType.stdout).toBe('');
    expect(oneLine(badType.stderr)).toEqual([
      'mme-deploy: --instance-type ml.m5.large: not a GPU instance type the catalog knows (for example ml.g4dn.xlarge).',
    ]);
    const badVersion = await runCli(['package', repo, '-o', join(out, 'bad.tar.gz'), '--triton-version', '24.9']);
    expect(badVersion.code).toBe(2);
    expect(oneLine(badVersion.stderr)).toEqual(['mme-deploy: --triton-version 24.9: expected YY.MM, for example 24.09.']);
    expect(existsSync(join(out, 'bad.tar.gz'))).toBe(false);
  });

  it('refuse, for a multi-model endpoint, a type AWS does not list for one, as plan does; validate without --mme takes it', async () => {
    const repo = makeRepo(PLAN);
    const reason =
      "ml.g6.xlarge (1 × NVIDIA L4) is not in AWS's list of GPU instance types for multi-model endpoints " +
      '(https://docs.aws.amazon.com/sagemaker/latest/dg/multi-model-support.html); choose one of ml.g4dn.xlarge,';
    const archive = join(out, 'g6.tar.gz');
    for (const args of [['validate', repo, '--mme'], ['package', repo, '-o', archive]]) {
      const run = await runCli([...args, '--instance-type', 'ml.g6.xlarge']);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      const [line, ...more] = oneLine(run.stderr);
      expect(line.startsWith(`mme-deploy: --instance-type ${reason}`)).toBe(true);
      expect(more).toEqual([]);
    }
    expect(existsSync(archive)).toBe(false);
    // A multi-GPU type is no MME type either; without --mme the target only names the GPU plans are built for.
    expect((await runCli(['validate', repo, '--mme', '--instance-type', 'ml.g5.12xlarge'])).code).toBe(2);
    const single = await runCli(['validate', repo, '--instance-type', 'ml.g6.xlarge', '--json']);
    expect(single.code).toBe(0);
    expect(JSON.parse(single.stdout).diagnostics[0].message).toContain('(the NVIDIA L4 of ml.g6.xlarge)');
  });
});

describe('--accept CODE', () => {
  it('acknowledges a warning code: not counted, summed up in human output, marked accepted in --json', async () => {
    const repo = makeRepo(PLAN);
    const human = await runCli(['validate', repo, '--mme', '--accept', 'tensorrt-plan-target']);
    expect(human.code).toBe(0);
    expect(human.stdout).not.toContain('warning [tensorrt-plan-target]');
    expect(human.stdout).toContain('accepted: 1 warning (tensorrt-plan-target), acknowledged with --accept\n');
    expect(human.stdout).toContain(': valid (1 model; 0 errors, 0 warnings, 1 accepted)');
    const json = JSON.parse((await runCli(['validate', repo, '--mme', '--accept', 'tensorrt-plan-target', '--json'])).stdout);
    expect(json.ok).toBe(true);
    expect(json.diagnostics).toEqual([expect.objectContaining({ code: 'tensorrt-plan-target', severity: 'warning', accepted: true })]);
  });

  it('takes several codes, repeated or comma-separated', async () => {
    const repo = makeRepo(PLAN);
    const accept = ['--accept', 'mme-unused-model,tensorrt-plan-target', '--accept', 'model-file-empty'];
    const run = await runCli(['validate', repo, '--mme', ...accept]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('1 accepted');
  });

  it('refuses an error code and an unknown code in one line, exit 2, before any work', async () => {
    const repo = makeRepo(PLAN);
    const error = await runCli(['validate', repo, '--accept', 'unknown-field']);
    expect(error.code).toBe(2);
    expect(error.stdout).toBe('');
    expect(oneLine(error.stderr)).toEqual([
      'mme-deploy: --accept unknown-field is an error code: an error is a load failure and cannot be accepted; fix it ' +
        '(only warnings can be accepted).',
    ]);
    const unknown = await runCli(['package', repo, '-o', join(out, 'u.tar.gz'), '--accept', 'tensorrt-plan-targt']);
    expect(unknown.code).toBe(2);
    expect(oneLine(unknown.stderr)).toEqual([
      'mme-deploy: --accept tensorrt-plan-targt is not a warning code mme-deploy reports (did you mean tensorrt-plan-target?).',
    ]);
    expect(existsSync(join(out, 'u.tar.gz'))).toBe(false);
    const json = await runCli(['validate', repo, '--accept', 'nope', '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({ error: { code: 'USAGE', message: expect.stringContaining('--accept nope') } });
  });
});

describe('--strict', () => {
  it('makes warnings not accepted fail validate (exit 1); accepted ones do not', async () => {
    const repo = makeRepo(PLAN);
    expect((await runCli(['validate', repo, '--mme'])).code).toBe(0);
    const strict = await runCli(['validate', repo, '--mme', '--strict']);
    expect(strict.code).toBe(1);
    expect(strict.stdout).toContain(
      ': invalid under --strict (1 model; 0 errors, 1 warning): fix the warnings, or acknowledge them with --accept CODE',
    );
    expect(JSON.parse((await runCli(['validate', repo, '--mme', '--strict', '--json'])).stdout).ok).toBe(false);
    expect((await runCli(['validate', repo, '--mme', '--strict', '--accept', 'tensorrt-plan-target'])).code).toBe(0);
  });

  it('passes a repository without warnings', async () => {
    expect((await runCli(['validate', makeRepo({ 'm/config.pbtxt': PLAN['p/config.pbtxt'].replace('"p"', '"m"'),
      'm/1/model.plan': '' }), '--strict'])).code).toBe(0);
  });

  it('makes package refuse the archive: exit 1, nothing written, not even a temp file', async () => {
    const repo = makeRepo(PLAN);
    const dir = mkdtempSync(join(out, 'strict-'));
    const archive = join(dir, 'p.tar.gz');
    const run = await runCli(['package', repo, '-o', archive, '--strict']);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('Nothing was written: fix the warnings above, or acknowledge them with --accept CODE');
    expect(readdirSync(dir)).toEqual([]);
    const json = await runCli(['package', repo, '-o', archive, '--strict', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, written: false });
    const accepted = await runCli(['package', repo, '-o', archive, '--strict', '--accept', 'tensorrt-plan-target', '--json']);
    expect(accepted.code).toBe(0);
    expect(JSON.parse(accepted.stdout)).toMatchObject({
      ok: true,
      written: true,
      diagnostics: [expect.objectContaining({ code: 'tensorrt-plan-target', accepted: true })],
    });
    expect(readdirSync(dir)).toEqual(['p.tar.gz']);
  });
});

suiteFor({ tools: ['python3'] })('the model.py syntax check in validate and package', () => {
  it('is on by default, with the target image\'s Python, and --no-python-syntax turns it off', async () => {
    const repo = makeRepo(pythonModel(EXCEPT_STAR_PY));
    const run = await runCli(['validate', repo]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('error [python-syntax] m/1/model.py does not compile with Python 3.10');
    expect((await runCli(['validate', repo, '--triton-version', '25.04'])).code).toBe(0);
    expect((await runCli(['validate', repo, '--no-python-syntax'])).code).toBe(0);
  });

  it('refuses the archive in package, where validation comes first', async () => {
    const repo = makeRepo(pythonModel(EXCEPT_STAR_PY));
    const dir = mkdtempSync(join(out, 'py-'));
    const run = await runCli(['package', repo, '-o', join(dir, 'm.tar.gz')]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('[python-syntax]');
    expect(readdirSync(dir)).toEqual([]);
    expect((await runCli(['package', repo, '-o', join(dir, 'm.tar.gz'), '--triton-version', '25.04'])).code).toBe(0);
  });

  it('checks the model.py inside an archive too (one packed with --no-python-syntax)', async () => {
    const repo = makeRepo(pythonModel(EXCEPT_STAR_PY));
    const archive = join(mkdtempSync(join(out, 'arch-')), 'm.tar.gz');
    expect((await runCli(['package', repo, '-o', archive, '--no-python-syntax'])).code).toBe(0);
    const run = await runCli(['validate', archive, '--json']);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout).diagnostics).toEqual([
      expect.objectContaining({ severity: 'error', code: 'python-syntax', file: 'm/1/model.py' }),
    ]);
    expect((await runCli(['validate', archive, '--triton-version', '25.04'])).code).toBe(0);
  });

  it('without python3 on PATH, says so in one note and passes', async () => {
    const repo = makeRepo(pythonModel(VALID_PY));
    const env = { PATH: join(out, 'no-python-here') };
    const run = await runCli(['validate', repo], { env });
    expect(run.code).toBe(0);
    const notes = run.stdout.split('\n').filter((l) => l.startsWith('note '));
    expect(notes).toEqual([
      expect.stringMatching(/^note \[python-syntax-skipped\] python3 was not found, so the syntax of 1 python model file was not /),
    ]);
    expect(notes[0]).toContain('Install python3');
    const json = JSON.parse((await runCli(['validate', repo, '--json'], { env })).stdout);
    expect(json.notes).toEqual([{ code: 'python-syntax-skipped', message: expect.stringContaining('python3 was not found') }]);
    expect(json.ok).toBe(true);
  });
});
