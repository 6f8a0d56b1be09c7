// push, list and remove run in-process against a real S3-protocol server (s3rver on 127.0.0.1).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { readTarGz } from '../../lib/archive/tar-reader';
import { captureIo } from '../cli/run-cli';
import { runList } from '../../lib/cli/list';
import { runPush } from '../../lib/cli/push';
import { runRemove } from '../../lib/cli/remove';
import { gzipMagicFile } from '../push/push-fixture';
import { LocalS3, S3RVER_CREDENTIALS, startLocalS3 } from './s3rver-harness';

let s3: LocalS3;
let dir: string;
let where: { s3: string; endpointUrl: string };
beforeAll(async () => {
  process.env.AWS_ACCESS_KEY_ID = S3RVER_CREDENTIALS.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = S3RVER_CREDENTIALS.secretAccessKey;
  s3 = await startLocalS3(['models']);
  where = { s3: 's3://models/endpoint-a/', endpointUrl: s3.endpoint };
});
afterAll(() => s3.close());
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'push-cli-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function repository(): string {
  const root = join(dir, 'adder');
  mkdirSync(join(root, 'adder', '1'), { recursive: true });
  writeFileSync(
    join(root, 'adder', 'config.pbtxt'),
    'name: "adder"\nbackend: "python"\nmax_batch_size: 8\ninput [ { name: "A" data_type: TYPE_FP32 dims: [ 4 ] } ]\n' +
      'output [ { name: "SUM" data_type: TYPE_FP32 dims: [ 1 ] } ]\ninstance_group [ { kind: KIND_CPU } ]\n',
  );
  writeFileSync(join(root, 'adder', '1', 'model.py'), 'class TritonPythonModel:\n    def execute(self, requests):\n        return []\n');
  return root;
}

async function objectBytes(key: string): Promise<Buffer> {
  const object = await s3.client.send(new GetObjectCommand({ Bucket: 'models', Key: key }));
  return Buffer.from(await object.Body!.transformToByteArray());
}

async function entryNames(archive: Buffer): Promise<string[]> {
  const names: string[] = [];
  await readTarGz(Readable.from([archive]), (entry) => {
    names.push(entry.path);
  });
  return names;
}

describe('mme-deploy push (s3rver)', () => {
  it('uploads an archive under its file name and prints the TargetModel and an invoke example', async () => {
    const root = repository();
    const archive = join(dir, 'adder-v1.tar.gz');
    execFileSync('tar', ['-C', root, '-czf', archive, '.']);
    const io = captureIo();
    expect(await runPush(archive, where, io)).toBe(0);
    expect(io.out()).toContain('Pushed adder-v1.tar.gz to s3://models/endpoint-a/adder-v1.tar.gz');
    expect(io.out()).toContain('TargetModel: adder-v1.tar.gz');
    // The archive's own input name, read from the bytes uploaded.
    expect(io.out()).toContain('mme-deploy invoke adder-v1.tar.gz --endpoint <endpoint-name> --input A=@a.json');
    expect(await entryNames(await objectBytes('endpoint-a/adder-v1.tar.gz'))).toContain('adder/config.pbtxt');
  });

  it('validates, packs and streams a repository directory, with an invoke example from its config', async () => {
    const io = captureIo();
    expect(await runPush(repository(), { ...where, json: true }, io)).toBe(0);
    const result = JSON.parse(io.out());
    expect(result).toMatchObject({ targetModel: 'adder.tar.gz', url: 's3://models/endpoint-a/adder.tar.gz', replaced: false });
    const stored = await objectBytes('endpoint-a/adder.tar.gz');
    expect(result.size).toBe(stored.length);
    expect(result.sha256).toBe(require('node:crypto').createHash('sha256').update(stored).digest('hex'));
    expect(await entryNames(stored)).toEqual(expect.arrayContaining(['adder/config.pbtxt', 'adder/1/model.py']));
  });

  it('refuses an invalid repository before contacting S3', async () => {
    const root = repository();
    rmSync(join(root, 'adder', '1'), { recursive: true });
    const io = captureIo();
    expect(await runPush(root, { ...where, name: 'broken.tar.gz' }, io)).toBe(1);
    expect(io.err()).toContain('Nothing was uploaded');
    const listing = captureIo();
    await runList({ ...where, json: true }, listing);
    expect(JSON.parse(listing.out()).models.map((m: { targetModel: string }) => m.targetModel)).not.toContain('broken.tar.gz');
  });

  it('refuses to replace an existing TargetModel without --force, and replaces it with --force', async () => {
    await s3.client.send(new PutObjectCommand({ Bucket: 'models', Key: 'endpoint-a/live.tar.gz', Body: 'serving' }));
    const refused = captureIo();
    await expect(runPush(repository(), { ...where, name: 'live.tar.gz' }, refused)).rejects.toThrow(
      new RegExp(
        /s3:\/\/models\/endpoint-a\/live.tar.gz already exists \(7 B, last modified .*/.source +
          /\); nothing was uploaded\..*keep serving their cached copy/.source,
      ),
    );
    expect((await objectBytes('endpoint-a/live.tar.gz')).toString()).toBe('serving');

    const forced = captureIo();
    expect(await runPush(repository(), { ...where, name: 'live.tar.gz', force: true }, forced)).toBe(0);
    expect(forced.err()).toContain('Replacing s3://models/endpoint-a/live.tar.gz (--force).');
    expect(forced.out()).toContain('mme-deploy invoke live.tar.gz --endpoint <endpoint-name> --input A=@a.json');
    expect(await entryNames(await objectBytes('endpoint-a/live.tar.gz'))).toContain('adder/config.pbtxt');
  });

  it('cancelled midway (Ctrl-C), leaves no object and no multipart upload', async () => {
    const big = join(dir, 'big.tar.gz');
    gzipMagicFile(big, 2 + 30 * 1024 * 1024); // verify: false: only its gzip magic is read before the upload
    const controller = new AbortController();
    const io = captureIo();
    s3.commands.length = 0;
    const started = runPush(big, { ...where, signal: controller.signal, partSize: 5 * 1024 * 1024, verify: false }, io);
    const timer = setInterval(() => {
      if (io.err().includes('uploading: ')) controller.abort();
    }, 5);
    await expect(started).rejects.toMatchObject({
      code: 'UPLOAD_CANCELLED',
      message: expect.stringContaining('Push of s3://models/endpoint-a/big.tar.gz cancelled. Nothing was left in S3'),
    });
    clearInterval(timer);
    const listing = captureIo();
    await runList({ ...where, json: true }, listing);
    expect(JSON.parse(listing.out()).models.map((m: { targetModel: string }) => m.targetModel)).not.toContain('big.tar.gz');
    expect(await s3.listMultipartUploads('models')).toEqual([]);
  });

  it('explains a TargetModel name Triton would refuse', async () => {
    await expect(runPush(repository(), { ...where, name: 'team/adder.tar.gz' }, captureIo())).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.stringContaining("contains '/'"),
    });
  });
});

describe('mme-deploy list and remove (s3rver)', () => {
  // Each test has a prefix of its own holding the same three models, so a deletion in one is never seen by another,
  // whatever the order (jest --randomize).
  let prefix = '';
  let tests = 0;
  const other = () => ({ s3: `s3://models/${prefix}`, endpointUrl: s3.endpoint });

  beforeEach(async () => {
    prefix = `endpoint-b-${++tests}/`;
    for (const name of ['a.tar.gz', 'b.tar.gz', 'c.tar.gz']) {
      await s3.client.send(new PutObjectCommand({ Bucket: 'models', Key: `${prefix}${name}`, Body: Buffer.alloc(2048) }));
    }
  });

  it('lists TargetModel, size and last modified', async () => {
    const io = captureIo();
    expect(await runList(other(), io)).toBe(0);
    const lines = io.out().replace(/\n$/, '').split('\n');
    expect(lines[0]).toBe('      SIZE  LAST MODIFIED (UTC)  TARGETMODEL');
    expect(lines[1]).toMatch(/^ {3}2\.0 KiB {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}a\.tar\.gz$/);
    expect(lines[4]).toBe(`3 models, 6.0 KiB under s3://models/${prefix}`);
  });

  it('asks before deleting and keeps the model on no', async () => {
    const io = captureIo({ answer: 'n' });
    expect(await runRemove('a.tar.gz', other(), io)).toBe(1);
    expect(io.err()).toBe('Not deleted.\n');
    const listing = captureIo();
    await runList({ ...other(), json: true }, listing);
    expect(JSON.parse(listing.out()).count).toBe(3);
  });

  it('refuses to delete without a terminal unless --yes', async () => {
    await expect(runRemove('a.tar.gz', other(), captureIo())).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.stringContaining('Pass --yes'),
    });
  });

  it('deletes with --yes and explains the cache', async () => {
    const io = captureIo();
    expect(await runRemove('b.tar.gz', { ...other(), yes: true }, io)).toBe(0);
    expect(io.out()).toContain(
      `Deleted s3://models/${prefix}b.tar.gz.\nInstances that already loaded b.tar.gz keep serving their cached copy`,
    );
    const listing = captureIo();
    await runList({ ...other(), json: true }, listing);
    expect(JSON.parse(listing.out()).models.map((m: { targetModel: string }) => m.targetModel)).toEqual(['a.tar.gz', 'c.tar.gz']);
  });

  it('says so when the model is not there', async () => {
    await expect(runRemove('zzz.tar.gz', { ...other(), yes: true }, captureIo())).rejects.toThrow(
      `There is no s3://models/${prefix}zzz.tar.gz; nothing was deleted.`,
    );
  });
});

describe('one TargetModel name rule for push, list and remove (s3rver)', () => {
  const third = () => ({ s3: 's3://models/endpoint-c/', endpointUrl: s3.endpoint });
  const keys = async () => {
    const listing = captureIo();
    await runList({ ...third(), json: true }, listing);
    return JSON.parse(listing.out()).models.map((m: { targetModel: string }) => m.targetModel);
  };

  beforeAll(async () => {
    // The prefix's own "folder" object, a TargetModel, and an object in a sub-folder that no TargetModel can name.
    for (const key of ['endpoint-c/', 'endpoint-c/ok.tar.gz', 'endpoint-c/sub/x.tar.gz']) {
      await s3.client.send(new PutObjectCommand({ Bucket: 'models', Key: key, Body: Buffer.alloc(16) }));
    }
  });

  it('lists an object in a sub-folder marked as not a TargetModel, saying why once', async () => {
    const io = captureIo();
    expect(await runList(third(), io)).toBe(0);
    const lines = io.out().trimEnd().split('\n');
    expect(lines[1]).toMatch(/ ok\.tar\.gz$/);
    expect(lines[2]).toMatch(/ sub\/x\.tar\.gz {2}\(not a TargetModel\)$/);
    expect(lines[4]).toMatch(
      /^1 object\(s\) marked \(not a TargetModel\) cannot be loaded, invoked or removed by name: TargetModel 'sub\/x.tar.gz' contains '\/'/,
    );
    const json = captureIo();
    await runList({ ...third(), json: true }, json);
    expect(JSON.parse(json.out()).models[1]).toMatchObject({
      targetModel: 'sub/x.tar.gz',
      problem: expect.stringContaining("contains '/'"),
    });
  });

  it.each([
    ['', /is empty: it would name the endpoint's S3 prefix itself/],
    ['.', /is a path segment, not a name/],
    ['..', /is a path segment, not a name/],
    ['sub/x.tar.gz', /contains '\/'.*`remove` deletes TargetModels only/],
  ])('refuses to remove %j, by the rule list marks it with, deleting nothing', async (name, message) => {
    await expect(runRemove(name, { ...third(), yes: true }, captureIo())).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.stringMatching(message),
    });
    expect(await keys()).toEqual(['ok.tar.gz', 'sub/x.tar.gz']);
    await expect(s3.client.send(new GetObjectCommand({ Bucket: 'models', Key: 'endpoint-c/' }))).resolves.toBeDefined();
  });

  it('guards the library too: deleting or reading the prefix itself is a usage error', async () => {
    const { deleteTargetModel, headTargetModel } = await import('../../lib/aws/model-store');
    const location = { bucket: 'models', prefix: 'endpoint-c/' };
    await expect(deleteTargetModel(s3.client, location, '')).rejects.toMatchObject({ code: 'USAGE' });
    await expect(headTargetModel(s3.client, location, '..')).rejects.toMatchObject({ code: 'USAGE' });
  });

  it('refuses to push under a name that list would mark', async () => {
    await expect(runPush(repository(), { ...third(), name: '..' }, captureIo())).rejects.toMatchObject({ code: 'USAGE' });
    expect(await keys()).toEqual(['ok.tar.gz', 'sub/x.tar.gz']);
  });
});
