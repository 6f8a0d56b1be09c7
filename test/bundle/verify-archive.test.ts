// validateTargetModelArchive and `validate <archive.tar.gz>`: a TargetModel archive read to its end and judged with
// the rules `validate --mme` applies to a directory, as SageMaker extracts it.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { validateTargetModelArchive } from '../../lib/bundle/verify-archive';
import { runValidate } from '../../lib/cli/validate';
import { directoryMember, fileMember, member, tarOf } from '../archive/crafted-archives';
import { captureIo } from '../cli/run-cli';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'verify-archive-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const PYTHON_CONFIG =
  'backend: "python"\nmax_batch_size: 0\ninput [ { name: "X" data_type: TYPE_FP32 dims: [ 1 ] } ]\n' +
  'output [ { name: "Y" data_type: TYPE_FP32 dims: [ 1 ] } ]\n';
const WITH_ENV =
  PYTHON_CONFIG + 'parameters: { key: "EXECUTION_ENV_PATH" value: { string_value: "$$TRITON_MODEL_DIRECTORY/env.tar.gz" } }\n';

function write(name: string, ...members: Buffer[]): string {
  const path = join(dir, name);
  writeFileSync(path, gzipSync(tarOf(...members), { level: 1 }));
  return path;
}

function pythonModel(config: string, ...extra: Buffer[]): Buffer[] {
  return [
    directoryMember('m'),
    fileMember('m/config.pbtxt', config),
    directoryMember('m/1'),
    fileMember('m/1/model.py', 'class TritonPythonModel:\n    def execute(self, requests):\n        return []\n'),
    ...extra,
  ];
}

/** A conda-pack-like archive larger than the verifier writes out: it is read only as it streams past. */
function envArchive(withActivate: boolean): Buffer {
  const members = [directoryMember('lib'), fileMember('lib/weights.bin', randomBytes(5 << 20))];
  if (withActivate) members.push(directoryMember('bin'), fileMember('bin/activate', '# conda-pack\n'));
  return gzipSync(tarOf(...members), { level: 0 });
}

describe('validateTargetModelArchive', () => {
  it('accepts a python model whose large conda-pack environment holds bin/activate', async () => {
    const archive = write('ok.tar.gz', ...pythonModel(WITH_ENV, fileMember('m/env.tar.gz', envArchive(true))));
    const report = await validateTargetModelArchive(archive, 'ok.tar.gz');
    expect(report.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(report).toMatchObject({ ok: true, models: [{ name: 'm' }] });
  });

  it('refuses a large environment without bin/activate, and one that is no tar.gz, read as they stream past', async () => {
    const noActivate = write('a.tar.gz', ...pythonModel(WITH_ENV, fileMember('m/env.tar.gz', envArchive(false))));
    const codes = (await validateTargetModelArchive(noActivate, 'a.tar.gz')).diagnostics.map((d) => d.code);
    expect(codes).toContain('mme-execution-env-activate');
    const garbage = write('b.tar.gz', ...pythonModel(WITH_ENV, fileMember('m/env.tar.gz', randomBytes(5 << 20))));
    const report = await validateTargetModelArchive(garbage, 'b.tar.gz');
    expect(report.diagnostics.find((d) => d.code === 'mme-execution-env-format')?.message).toMatch(/is not a readable tar\.gz/);
  });

  it('judges the TargetModel name it will be uploaded as', async () => {
    const archive = write('model.tgz', ...pythonModel(PYTHON_CONFIG));
    const report = await validateTargetModelArchive(archive, 'model.tgz');
    expect(report.diagnostics.map((d) => d.code)).toEqual(['mme-target-model-name']);
    expect((await validateTargetModelArchive(archive, 'model.tgz', { targetModel: 'model.tar.gz' })).ok).toBe(true);
  });

  it('refuses a symbolic link that leaves the archive, leaving nothing in the temporary directory', async () => {
    const scratch = mkdtempSync(join(dir, 'tmp-'));
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = scratch;
    try {
      const link = member({ name: 'm/1/data', typeflag: '2', linkName: '../../../etc/passwd' });
      const archive = write('link.tar.gz', ...pythonModel(PYTHON_CONFIG, link));
      await expect(validateTargetModelArchive(archive, 'link.tar.gz')).rejects.toMatchObject({
        code: 'TAR_UNSAFE_ENTRY',
        message: expect.stringMatching(/^link\.tar\.gz: entry "m\/1\/data" is a symbolic link that points to/),
      });
      expect(readdirSync(scratch)).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  });
});

describe('mme-deploy validate <archive.tar.gz>', () => {
  it('validates the archive\'s models (exit 1 on an error) where it used to answer "not a directory"', async () => {
    const broken = write('broken.tar.gz', directoryMember('m'), fileMember('m/config.pbtxt', PYTHON_CONFIG));
    const io = captureIo({ cwd: dir });
    expect(await runValidate(broken, {}, io)).toBe(1);
    expect(io.out()).toMatch(/error \[no-version\]/);
    expect(io.out()).toMatch(/broken\.tar\.gz: invalid \(1 model; 1 error/);
    const ok = write('ok.tar.gz', ...pythonModel(PYTHON_CONFIG));
    const good = captureIo({ cwd: dir });
    expect(await runValidate(ok, { mme: true }, good)).toBe(0);
    expect(good.out()).toMatch(/ok\.tar\.gz: valid \(1 model; 0 errors/);
  });

  it('keeps "not a directory" for a file that is no archive, and refuses --run-python on an archive', async () => {
    const text = join(dir, 'config.pbtxt');
    writeFileSync(text, PYTHON_CONFIG);
    await expect(runValidate(text, {}, captureIo())).rejects.toMatchObject({ code: 'USAGE', message: /not a directory/ });
    const archive = write('ok.tar.gz', ...pythonModel(PYTHON_CONFIG));
    await expect(runValidate(archive, { runPython: true }, captureIo())).rejects.toMatchObject({ code: 'USAGE' });
  });
});
