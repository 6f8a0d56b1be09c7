// pushTargetModel's refusals and failures against s3rver on 127.0.0.1, each with the exact message the user reads
// and what is left in S3 afterwards: an existing TargetModel, a cancelled push (before and during the upload), an
// archive rewritten while it is pushed, a versioned name taken by other bytes; and what the events and result say.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { versionedTargetModelOf } from '../../lib/bundle/versioned-target-model';
import { PushStart, pushTargetModel } from '../../lib/push/push-target-model';
import { useLocalS3 } from '../aws/s3rver-harness';
import { copyAdder, gzipMagicFile, storedGzip, tarArchive } from './push-fixture';

const s3 = useLocalS3(['models']);
let dir: string;
let prefix: string;
let count = 0;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'push-failures-'));
  prefix = `t${++count}`; // each test its own prefix: no test sees another's objects
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const location = () => ({ s3: `s3://models/${prefix}/`, endpointUrl: s3().endpoint });

const repository = (): string => copyAdder(dir);

const archiveOf = (root: string, name: string): string => tarArchive(dir, root, name);

async function keys(): Promise<string[]> {
  const listed = await s3().client.send(new ListObjectsV2Command({ Bucket: 'models', Prefix: `${prefix}/` }));
  return (listed.Contents ?? []).map((o) => o.Key!.slice(prefix.length + 1)).sort();
}

async function objectSha256(targetModel: string): Promise<string> {
  const object = await s3().client.send(new GetObjectCommand({ Bucket: 'models', Key: `${prefix}/${targetModel}` }));
  return createHash('sha256').update(await object.Body!.transformToByteArray()).digest('hex');
}

const CACHE_AND_ROLLOUT = (targetModel: string) =>
  `Instances that already loaded ${targetModel} keep serving their cached copy until SageMaker unloads it (when it ` +
  'is idle and memory or disk is needed); S3 is not watched. To roll out a change at once, push it under a new ' +
  'TargetModel name and switch callers to that name.';

describe('a push that is refused', () => {
  it('leaves an existing TargetModel as it was, saying its size and age, and how to go on', async () => {
    await pushTargetModel({ source: repository(), location: location(), name: 'live.tar.gz' });
    const before = await objectSha256('live.tar.gz');
    const head = await s3().client.send(new HeadObjectCommand({ Bucket: 'models', Key: `${prefix}/live.tar.gz` }));
    const size = head.ContentLength!;
    expect(size).toBeLessThan(1024); // so its size reads in bytes
    const onStart = jest.fn();
    await expect(pushTargetModel({ source: repository(), location: location(), name: 'live.tar.gz', onStart })).rejects.toMatchObject({
      code: 'ALREADY_EXISTS',
      message:
        `s3://models/${prefix}/live.tar.gz already exists (${size} B, last modified ${head.LastModified!.toISOString()}); ` +
        'nothing was uploaded. Push under another name with --name (recommended: callers switch when ready), or ' +
        `replace it with --force. ${CACHE_AND_ROLLOUT('live.tar.gz')}`,
    });
    expect(onStart).not.toHaveBeenCalled();
    expect(await objectSha256('live.tar.gz')).toBe(before);
  });

  it('says a push cancelled before the upload uploaded nothing', async () => {
    const abort = new AbortController();
    abort.abort();
    await expect(pushTargetModel({ source: repository(), location: location(), signal: abort.signal })).rejects.toMatchObject({
      code: 'ABORTED',
      message: 'Push of adder.tar.gz cancelled before the upload started; nothing was uploaded.',
    });
    expect(await keys()).toEqual([]);
  });

  it('stops reading an archive being verified when cancelled', async () => {
    const archive = archiveOf(repository(), 'adder.tar.gz');
    const abort = new AbortController();
    abort.abort();
    await expect(pushTargetModel({ source: archive, shown: 'adder.tar.gz', location: location(), signal: abort.signal })).rejects.toEqual(
      expect.objectContaining({ code: 'ABORTED', message: expect.stringContaining('interrupted while reading the archive') }),
    );
    expect(await keys()).toEqual([]);
  });

  it('verifies an archive by default, uploading nothing when a rule is broken', async () => {
    const archive = archiveOf(join(__dirname, '..', 'fixtures', 'ensemble-dtype-mismatch'), 'ens.tar.gz');
    const result = await pushTargetModel({ source: archive, location: location() });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.report.diagnostics.map((d) => d.code)).toContain('ensemble-dtype-mismatch');
    expect(await keys()).toEqual([]);
  });

  it('refuses a versioned name that holds an archive of another size, leaving that object alone', async () => {
    const root = repository();
    const named = await versionedTargetModelOf(root, { name: 'adder.tar.gz' });
    if (!named.ok) throw new Error('the fixture validates');
    await s3().client.send(new PutObjectCommand({ Bucket: 'models', Key: `${prefix}/${named.targetModel}`, Body: 'other bytes' }));
    await expect(pushTargetModel({ source: root, location: location(), versioned: true })).rejects.toMatchObject({
      code: 'ALREADY_EXISTS',
      message: expect.stringMatching(
        new RegExp(`^s3://models/${prefix}/${named.targetModel.replace(/\./g, '\\.')} already exists \\(11 B`),
      ),
    });
    expect(await objectSha256(named.targetModel)).toBe(createHash('sha256').update('other bytes').digest('hex'));
  });
});

describe('a push that fails halfway', () => {
  it('cancelled during a multipart upload: says so, and leaves no object and no parts', async () => {
    const archive = join(dir, 'big.tar.gz');
    // verify: false, and cancelled before the end: only the gzip magic is read. Six parts, more than the four uploaded
    // at once: at least one part is still to be read when the push is cancelled.
    gzipMagicFile(archive, 30 << 20);
    const abort = new AbortController();
    const cleanup: string[] = [];
    const pushed = pushTargetModel({
      source: archive,
      location: { ...location(), region: 'us-east-1' },
      verify: false,
      partSize: 5 << 20,
      signal: abort.signal,
      // The upload exists: the user presses Ctrl-C now.
      onMultipartUpload: (command) => {
        cleanup.push(command);
        abort.abort();
      },
    });
    await expect(pushed).rejects.toMatchObject({
      code: 'UPLOAD_CANCELLED',
      message: `Push of s3://models/${prefix}/big.tar.gz cancelled. Nothing was left in S3 (the multipart upload was aborted).`,
    });
    expect(cleanup).toEqual([
      expect.stringMatching(
        new RegExp(
          `^aws s3api abort-multipart-upload --bucket models --key ${prefix}/big\\.tar\\.gz --upload-id \\S+ ` +
            `--endpoint-url ${s3().endpoint.replace(/\./g, '\\.')} --region us-east-1$`,
        ),
      ),
    ]);
    expect(await keys()).toEqual([]);
    expect((await s3().listMultipartUploads('models')).filter(([key]) => key.startsWith(`${prefix}/`))).toEqual([]);
  });

  it('removes a versioned upload whose bytes are not those the name was computed from (the archive rewritten)', async () => {
    const archive = archiveOf(repository(), 'adder.tar.gz');
    const original = readFileSync(archive);
    const sha = createHash('sha256').update(original).digest('hex');
    // Same size, other bytes (still gzip): only the hash can tell.
    const rewritten = Buffer.concat([original.subarray(0, 2), randomBytes(original.length - 2)]);
    const rewrittenSha = createHash('sha256').update(rewritten).digest('hex');
    const pushed = pushTargetModel({
      source: archive,
      location: location(),
      versioned: true,
      onStart: () => writeFileSync(archive, rewritten),
    });
    const targetModel = `adder-${sha.slice(0, 12)}.tar.gz`;
    await expect(pushed).rejects.toMatchObject({
      code: 'INVALID',
      message:
        `The archive uploaded as ${targetModel} hashes to ${rewrittenSha.slice(0, 12)}…, not ${sha.slice(0, 12)}…: the ` +
        'archive file changed while it was being pushed. Push it again once it is stable. The upload was removed again.',
    });
    expect(await keys()).toEqual([]);
  });
});

describe('what a push reports', () => {
  it('announces an archive with its size, and reports progress against that size', async () => {
    const archive = join(dir, 'blob.tar.gz');
    writeFileSync(archive, storedGzip(6 << 20));
    const size = statSync(archive).size;
    const starts: PushStart[] = [];
    const totals = new Set<number | undefined>();
    const result = await pushTargetModel({
      source: archive,
      location: location(),
      verify: false,
      partSize: 5 << 20,
      onStart: (start) => starts.push(start),
      onProgress: (_, total) => totals.add(total),
    });
    expect(starts).toStrictEqual([{ kind: 'archive', targetModel: 'blob.tar.gz', url: `s3://models/${prefix}/blob.tar.gz`, size }]);
    expect([...totals]).toEqual([size]);
    expect(result).toMatchObject({ ok: true, upload: { size } });
  });

  it('announces a directory without a size (it is packed as it goes)', async () => {
    const starts: PushStart[] = [];
    await pushTargetModel({ source: repository(), location: location(), onStart: (start) => starts.push(start) });
    expect(starts).toStrictEqual([{ kind: 'directory', targetModel: 'adder.tar.gz', url: `s3://models/${prefix}/adder.tar.gz` }]);
  });

  it('packs a directory at the gzip level given', async () => {
    const root = repository();
    const result = await pushTargetModel({ source: root, location: location(), level: 0 });
    const stored = await versionedTargetModelOf(root, { name: 'adder.tar.gz', level: 0 });
    const standard = await versionedTargetModelOf(root, { name: 'adder.tar.gz' });
    expect(result.ok && !result.unchanged && result.upload.sha256).toBe(stored.ok && stored.sha256);
    expect(stored.ok && standard.ok && stored.sha256 !== standard.sha256).toBe(true);
    expect(await objectSha256('adder.tar.gz')).toBe(stored.ok && stored.sha256);
  });

  it("gives an unverified archive's served config, read from the bytes uploaded", async () => {
    const archive = archiveOf(repository(), 'adder.tar.gz');
    const result = await pushTargetModel({ source: archive, location: location(), verify: false });
    expect(result.ok && result.config?.input?.map((i) => i.name)).toEqual(['INPUT0']);
  });

  it("gives the served config when the same versioned content is already there", async () => {
    const root = repository();
    await pushTargetModel({ source: root, location: location(), versioned: true });
    const again = await pushTargetModel({ source: root, location: location(), versioned: true });
    expect(again).toMatchObject({ ok: true, unchanged: true });
    expect(again.ok && again.config?.input?.map((i) => i.name)).toEqual(['INPUT0']);
  });
});
