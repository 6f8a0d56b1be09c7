// `mme-deploy push --versioned` against a real S3-protocol server (s3rver on 127.0.0.1): the TargetModel is named by
// the archive's content with the CDK ModelArchive's rule, so a changed model never lands on a cached name.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { versionedTargetModelOf } from '../../lib/bundle/versioned-target-model';
import { CliIo } from '../../lib/cli/io';
import { runPush } from '../../lib/cli/push';
import { LocalS3, S3RVER_CREDENTIALS, startLocalS3 } from './s3rver-harness';

function captureIo(): CliIo & { out: () => string } {
  let out = '';
  return { stdout: (t) => (out += t), stderr: () => undefined, isTTY: false, env: process.env, cwd: process.cwd(), out: () => out };
}

let s3: LocalS3;
let dir: string;
let where: { s3: string; endpointUrl: string };
beforeAll(async () => {
  process.env.AWS_ACCESS_KEY_ID = S3RVER_CREDENTIALS.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = S3RVER_CREDENTIALS.secretAccessKey;
  s3 = await startLocalS3(['models']);
  where = { s3: 's3://models/prod/', endpointUrl: s3.endpoint };
});
afterAll(() => s3.close());
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'push-versioned-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function repository(): string {
  const root = join(dir, 'adder');
  mkdirSync(join(root, 'adder', '1'), { recursive: true });
  writeFileSync(
    join(root, 'adder', 'config.pbtxt'),
    'name: "adder"\nbackend: "python"\nmax_batch_size: 8\n' +
      'input [ { name: "A" data_type: TYPE_FP32 dims: [ 4 ] } ]\noutput [ { name: "SUM" data_type: TYPE_FP32 dims: [ 1 ] } ]\n',
  );
  writeFileSync(join(root, 'adder', '1', 'model.py'), 'class TritonPythonModel:\n    def execute(self, requests):\n        return []\n');
  return root;
}

async function keys(): Promise<string[]> {
  const listed = await s3.client.send(new ListObjectsV2Command({ Bucket: 'models', Prefix: 'prod/' }));
  return (listed.Contents ?? []).map((o) => o.Key!).sort();
}

async function sha256Of(key: string): Promise<string> {
  const object = await s3.client.send(new GetObjectCommand({ Bucket: 'models', Key: key }));
  return createHash('sha256')
    .update(await object.Body!.transformToByteArray())
    .digest('hex');
}

describe('mme-deploy push --versioned (s3rver)', () => {
  it('names a directory <name>-<sha256:12>.tar.gz of the archive it uploads, as the CDK ModelArchive would', async () => {
    const root = repository();
    const io = captureIo();
    expect(await runPush(root, { ...where, versioned: true }, io)).toBe(0);
    const [key] = await keys();
    expect(key).toMatch(/^prod\/adder-[0-9a-f]{12}\.tar\.gz$/);
    expect(key!.slice('prod/adder-'.length, -'.tar.gz'.length)).toBe((await sha256Of(key!)).slice(0, 12));
    expect(await versionedTargetModelOf(root)).toMatchObject({ targetModel: key!.slice('prod/'.length) });
    expect(io.out()).toContain(`TargetModel: ${key!.slice('prod/'.length)}`);
  });

  it('uploads nothing when the same content is already there, and a new name when it changed', async () => {
    const root = repository();
    expect(await runPush(root, { ...where, versioned: true }, captureIo())).toBe(0);
    const first = await keys();
    const again = captureIo();
    expect(await runPush(root, { ...where, versioned: true }, again)).toBe(0);
    expect(again.out()).toMatch(
      /adder-[0-9a-f]{12}\.tar\.gz is already at s3:\/\/models\/prod\/adder-.* \(same content\); nothing was uploaded/,
    );
    expect(await keys()).toEqual(first);

    appendFileSync(join(root, 'adder', '1', 'model.py'), '# v2\n');
    expect(await runPush(root, { ...where, versioned: true }, captureIo())).toBe(0);
    const both = await keys();
    expect(both).toHaveLength(2); // the old version stays for instances and clients still using it
    expect(both).toEqual(expect.arrayContaining(first));
  });

  it('names an archive file by its own bytes', async () => {
    const root = repository();
    const archive = join(dir, 'adder.tar.gz');
    execFileSync('tar', ['-C', root, '-czf', archive, '.']);
    expect(await runPush(archive, { ...where, versioned: true, name: 'adder-archive.tar.gz' }, captureIo())).toBe(0);
    const sha = createHash('sha256').update(readFileSync(archive)).digest('hex');
    expect(await keys()).toContain(`prod/adder-archive-${sha.slice(0, 12)}.tar.gz`);
  });

  it('refuses --force with --versioned, uploading nothing', async () => {
    const before = await keys();
    await expect(runPush(repository(), { ...where, versioned: true, force: true }, captureIo())).rejects.toThrow(
      /--versioned and --force exclude each other/,
    );
    expect(await keys()).toEqual(before);
  });
});
