// pushTargetModel as a library call (no CLI): events, results and coded errors, against s3rver on 127.0.0.1.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PushStart, pushTargetModel } from '../../lib/push/push-target-model';
import { useLocalS3 } from '../aws/s3rver-harness';

const s3 = useLocalS3(['models']);
const location = { s3: 's3://models/lib/', get endpointUrl() { return s3().endpoint; } };
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'push-lib-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A one-model python repository `<dir>/adder`; `broken` leaves out its version directory. */
function repository(broken = false): string {
  const root = join(dir, 'adder');
  mkdirSync(join(root, 'adder'), { recursive: true });
  writeFileSync(
    join(root, 'adder', 'config.pbtxt'),
    'backend: "python"\nmax_batch_size: 8\ninput [ { name: "A" data_type: TYPE_FP32 dims: [ 4 ] } ]\n' +
      'output [ { name: "SUM" data_type: TYPE_FP32 dims: [ 1 ] } ]\n',
  );
  if (!broken) {
    mkdirSync(join(root, 'adder', '1'), { recursive: true });
    writeFileSync(join(root, 'adder', '1', 'model.py'), 'class TritonPythonModel:\n    def execute(self, requests):\n        return []\n');
  }
  return root;
}

describe('pushTargetModel', () => {
  it('packs a directory into the upload, announcing the start and reporting progress', async () => {
    const starts: PushStart[] = [];
    const progress: number[] = [];
    const result = await pushTargetModel({
      source: repository(),
      location,
      onStart: (start) => starts.push(start),
      onProgress: (uploaded) => progress.push(uploaded),
    });
    expect(result).toMatchObject({ ok: true, kind: 'directory', targetModel: 'adder.tar.gz', replaced: false });
    expect(result.ok && result.config?.input?.[0]?.name).toBe('A');
    expect(starts).toEqual([{ kind: 'directory', targetModel: 'adder.tar.gz', url: 's3://models/lib/adder.tar.gz' }]);
    expect(progress.length).toBeGreaterThan(0);
  });

  it('returns the validation report of a directory with errors, uploading nothing', async () => {
    const onStart = jest.fn();
    const result = await pushTargetModel({ source: repository(true), location, name: 'broken.tar.gz', onStart });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.report.diagnostics.map((d) => d.code)).toContain('no-version');
    expect(onStart).not.toHaveBeenCalled();
  });

  it('refuses to replace without force, naming the existing object, and says which one it replaces with force', async () => {
    await pushTargetModel({ source: repository(), location, name: 'twice.tar.gz' });
    await expect(pushTargetModel({ source: repository(), location, name: 'twice.tar.gz' })).rejects.toMatchObject({
      code: 'ALREADY_EXISTS',
      message: expect.stringContaining('s3://models/lib/twice.tar.gz already exists'),
    });
    const starts: PushStart[] = [];
    const onStart = (start: PushStart) => starts.push(start);
    const result = await pushTargetModel({ source: repository(), location, name: 'twice.tar.gz', force: true, onStart });
    expect(result).toMatchObject({ ok: true, replaced: true });
    expect(starts[0]?.replacing).toMatchObject({ targetModel: 'twice.tar.gz' });
  });

  it('stops before the upload when the signal is already aborted, and names a missing source', async () => {
    const abort = new AbortController();
    abort.abort();
    await expect(pushTargetModel({ source: repository(), location, signal: abort.signal })).rejects.toMatchObject({ code: 'ABORTED' });
    await expect(pushTargetModel({ source: join(dir, 'nope.tar.gz'), shown: 'nope.tar.gz', location })).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringMatching(/^nope\.tar\.gz does not exist/),
    });
  });
});

describe('an archive file as push source', () => {
  it('hands the upload every byte of the file, however late the upload starts reading', async () => {
    const { gzipSync } = await import('node:zlib');
    const { randomBytes, createHash } = await import('node:crypto');
    const { readFileSync } = await import('node:fs');
    const { openPushSource } = await import('../../lib/push/push-source');
    // Several of the reader's 1 MiB chunks: the file starts flowing as soon as the source opens.
    const archive = join(dir, 'big.tar.gz');
    writeFileSync(archive, gzipSync(randomBytes(5 << 20), { level: 0 }));
    const source = await openPushSource(archive, 'big.tar.gz', { verify: false });
    if ('report' in source) throw new Error('an archive has no report');
    const body = source.open();
    await new Promise((resolve) => setTimeout(resolve, 200)); // the upload's client loads meanwhile
    const hash = createHash('sha256');
    for await (const chunk of body) hash.update(chunk as Buffer);
    expect(hash.digest('hex')).toBe(createHash('sha256').update(readFileSync(archive)).digest('hex'));
    await source.config();
  });
});

describe('an archive that changes while it is pushed', () => {
  it('is refused and its partial object removed again', async () => {
    const { gzipSync } = await import('node:zlib');
    const { randomBytes } = await import('node:crypto');
    const { statSync, truncateSync } = await import('node:fs');
    const { HeadObjectCommand, S3Client } = await import('@aws-sdk/client-s3');
    const archive = join(dir, 'shrinking.tar.gz');
    writeFileSync(archive, gzipSync(randomBytes(3 << 20), { level: 0 }));
    const { size } = statSync(archive);
    const pushed = pushTargetModel({
      source: archive,
      location,
      verify: false,
      // Called after the size was taken and before a byte is read: the file loses its second half.
      onStart: () => truncateSync(archive, 1 << 20),
    });
    await expect(pushed).rejects.toMatchObject({
      code: 'INVALID',
      message:
        `s3://models/lib/shrinking.tar.gz received ${1 << 20} bytes of the archive's ${size}; the upload was removed again. ` +
        'Make sure nothing writes the archive while it is pushed, and push it again.',
    });
    const client = new S3Client({ endpoint: s3().endpoint, forcePathStyle: true, region: 'us-east-1' });
    await expect(client.send(new HeadObjectCommand({ Bucket: 'models', Key: 'lib/shrinking.tar.gz' }))).rejects.toMatchObject({
      name: 'NotFound',
    });
    client.destroy();
  });
});
