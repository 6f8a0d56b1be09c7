// push of a TargetModel archive reads it to its end and applies the MME rules before a byte is sent (s3rver on
// 127.0.0.1): a damaged archive or one `validate --mme` refuses exits 1 with nothing in S3; --no-verify still sends it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { runPush } from '../../lib/cli/push';
import { reportFailure } from '../../lib/cli/program';
import { directoryMember, fileMember, tarOf } from '../archive/crafted-archives';
import { captureIo } from '../cli/run-cli';
import { useLocalS3 } from '../aws/s3rver-harness';

const s3 = useLocalS3(['models']);
const fixtures = join(__dirname, '..', 'fixtures');
let dir: string;
let scratch: string;
let savedTmp: string | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'push-verify-'));
  // The verifier's temporary copy goes here, so each test can see that nothing of it is left.
  scratch = mkdtempSync(join(tmpdir(), 'push-verify-tmp-'));
  savedTmp = process.env.TMPDIR;
  process.env.TMPDIR = scratch;
});
afterEach(() => {
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
  rmSync(dir, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

const where = (prefix: string) => ({ s3: `s3://models/${prefix}/`, endpointUrl: s3().endpoint });

async function storedKeys(prefix: string): Promise<string[]> {
  const listed = await s3().client.send(new ListObjectsV2Command({ Bucket: 'models', Prefix: `${prefix}/` }));
  return (listed.Contents ?? []).map((o) => o.Key ?? '');
}

/** runPush as program.ts runs it, given the archive's name in its directory: an error becomes its one-line message. */
async function push(archive: string, options: { prefix: string; verify?: boolean }) {
  const io = captureIo({ cwd: dir });
  let code: number;
  try {
    code = await runPush(basename(archive), { ...where(options.prefix), ...(options.verify === false ? { verify: false } : {}) }, io);
  } catch (err) {
    code = reportFailure(err, io, false);
  }
  return { code, out: io.out(), err: io.err() };
}

function gnuTar(fixture: string, name: string): string {
  const archive = join(dir, name);
  execFileSync('tar', ['-C', join(fixtures, fixture), '-czf', archive, '.']);
  return archive;
}

describe('push of an archive verifies it first', () => {
  it('exits 1 for a truncated archive, naming it, with nothing uploaded', async () => {
    const whole = readFileSync(gnuTar('ensemble-valid-pipeline', 'whole.tar.gz'));
    const archive = join(dir, 'cut.tar.gz');
    writeFileSync(archive, whole.subarray(0, whole.length >> 1));
    const result = await push(archive, { prefix: 'cut' });
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/^mme-deploy: cut\.tar\.gz: not a valid gzip stream: it is cut short/);
    expect(await storedKeys('cut')).toEqual([]);
    expect(await s3().listMultipartUploads('models')).toEqual([]);
    expect(readdirSync(scratch)).toEqual([]);
  });

  it('exits 1 for a gzip that holds no tar, with nothing uploaded', async () => {
    const archive = join(dir, 'notes.tar.gz');
    writeFileSync(archive, gzipSync(Buffer.from('these are not the models you are looking for\n'.repeat(20))));
    const result = await push(archive, { prefix: 'notar' });
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/^mme-deploy: notes\.tar\.gz: not a valid tar archive/);
    expect(await storedKeys('notar')).toEqual([]);
  });

  it('exits 1 for a hand-made tar with a broken ensemble, printing the rule, with nothing uploaded', async () => {
    const archive = gnuTar('ensemble-dtype-mismatch', 'ens.tar.gz');
    const result = await push(archive, { prefix: 'ens' });
    expect(result.code).toBe(1);
    expect(result.err).toContain('ens/config.pbtxt:40:9: error [ensemble-dtype-mismatch]');
    expect(result.err).toContain('Nothing was uploaded');
    expect(await storedKeys('ens')).toEqual([]);
    expect(readdirSync(scratch)).toEqual([]);
  });

  it('exits 1 for a stray __MACOSX beside two models, which SageMaker does download', async () => {
    const tar = tarOf(
      directoryMember('__MACOSX'),
      fileMember('__MACOSX/._config.pbtxt', 'junk'),
      directoryMember('m'),
      fileMember('m/config.pbtxt', 'backend: "python"\nmax_batch_size: 0\ninput [ { name: "X" data_type: TYPE_FP32 dims: [ 1 ] } ]\n' +
        'output [ { name: "Y" data_type: TYPE_FP32 dims: [ 1 ] } ]\n'),
      directoryMember('m/1'),
      fileMember('m/1/model.py', 'class TritonPythonModel:\n    pass\n'),
    );
    const archive = join(dir, 'mac.tar.gz');
    writeFileSync(archive, gzipSync(tar));
    const result = await push(archive, { prefix: 'mac' });
    expect(result.code).toBe(1);
    expect(result.err).toContain('error [stray-directory]');
    expect(await storedKeys('mac')).toEqual([]);
  });

  it('uploads a sound archive, with the invoke example from the config it read', async () => {
    const archive = gnuTar('ensemble-valid-pipeline', 'good.tar.gz');
    const result = await push(archive, { prefix: 'good' });
    expect(result.err).not.toContain('error');
    expect(result.code).toBe(0);
    expect(await storedKeys('good')).toEqual(['good/good.tar.gz']);
    expect(result.out).toMatch(/mme-deploy invoke good\.tar\.gz --endpoint <endpoint-name> --/);
  });

  it('with --no-verify, uploads what it would have refused (only the gzip magic is checked)', async () => {
    const archive = gnuTar('ensemble-dtype-mismatch', 'unchecked.tar.gz');
    const result = await push(archive, { prefix: 'unchecked', verify: false });
    expect(result.code).toBe(0);
    expect(await storedKeys('unchecked')).toEqual(['unchecked/unchecked.tar.gz']);
  });
});
