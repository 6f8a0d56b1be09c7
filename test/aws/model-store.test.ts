import { randomBytes, createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { deleteTargetModel, headTargetModel, listTargetModels, uploadTargetModel } from '../../lib/aws/model-store';
import { LocalS3, startLocalS3 } from './s3rver-harness';

const location = { bucket: 'models', prefix: 'mme/' };
let s3: LocalS3;
beforeAll(async () => {
  s3 = await startLocalS3(['models']);
});
afterAll(() => s3.close());

async function readObject(key: string): Promise<Buffer> {
  const object = await s3.client.send(new GetObjectCommand({ Bucket: 'models', Key: key }));
  return Buffer.from(await object.Body!.transformToByteArray());
}

/** A stream of `total` bytes in 1 MiB chunks that fails after `failAfter` bytes when given. */
function source(data: Buffer, failAfter?: number): Readable {
  let offset = 0;
  return new Readable({
    read() {
      if (failAfter !== undefined && offset >= failAfter) {
        this.destroy(new Error('disk read failed'));
        return;
      }
      const chunk = data.subarray(offset, offset + 1024 * 1024);
      offset += chunk.length;
      this.push(chunk.length > 0 ? chunk : null);
    },
  });
}

describe('models in S3 under the endpoint prefix (s3rver)', () => {
  it('uploads a small archive in one PUT and reports its SHA-256', async () => {
    const data = randomBytes(100_000);
    const result = await uploadTargetModel({ client: s3.client, location, targetModel: 'small.tar.gz', body: source(data), force: false });
    expect(result).toMatchObject({ key: 'mme/small.tar.gz', url: 's3://models/mme/small.tar.gz', size: 100_000 });
    expect(result.sha256).toBe(createHash('sha256').update(data).digest('hex'));
    expect((await readObject('mme/small.tar.gz')).equals(data)).toBe(true);
  });

  it('streams a large archive as a multipart upload, byte for byte', async () => {
    const data = randomBytes(12 * 1024 * 1024 + 5);
    const progress: number[] = [];
    const result = await uploadTargetModel({
      client: s3.client,
      location,
      targetModel: 'big.tar.gz',
      body: source(data),
      force: false,
      partSize: 5 * 1024 * 1024,
      onProgress: (uploaded) => progress.push(uploaded),
    });
    expect(result.size).toBe(data.length);
    expect((await readObject('mme/big.tar.gz')).equals(data)).toBe(true);
    expect(progress[progress.length - 1]).toBe(data.length);
    expect(await s3.listMultipartUploads('models')).toEqual([]);
  });

  it('sees an open multipart upload through ListMultipartUploads until it is aborted (so the checks below can fail)', async () => {
    const { UploadId } = await s3.client.send(new CreateMultipartUploadCommand({ Bucket: 'models', Key: 'mme/open.tar.gz' }));
    expect(await s3.listMultipartUploads('models')).toEqual([['mme/open.tar.gz', UploadId]]);
    await s3.client.send(new AbortMultipartUploadCommand({ Bucket: 'models', Key: 'mme/open.tar.gz', UploadId }));
    expect(await s3.listMultipartUploads('models')).toEqual([]);
  });

  it('leaves no object and no multipart upload behind when the source fails midway', async () => {
    const data = randomBytes(20 * 1024 * 1024);
    const push = uploadTargetModel({
      client: s3.client,
      location,
      targetModel: 'broken.tar.gz',
      body: source(data, 11 * 1024 * 1024),
      force: false,
      partSize: 5 * 1024 * 1024,
    });
    s3.commands.length = 0;
    await expect(push).rejects.toThrow(/disk read failed.*Nothing was left in S3 \(the multipart upload was aborted\)/s);
    expect(s3.commands.filter((c) => c !== 'UploadPartCommand')).toEqual([
      'CreateMultipartUploadCommand',
      'AbortMultipartUploadCommand',
      'AbortMultipartUploadCommand',
    ]);
    expect(s3.commands.filter((c) => c === 'UploadPartCommand').length).toBeGreaterThanOrEqual(1);
    expect(await headTargetModel(s3.client, location, 'broken.tar.gz')).toBeUndefined();
    expect(await s3.listMultipartUploads('models')).toEqual([]);
  });

  it('leaves nothing behind when cancelled (Ctrl-C) midway', async () => {
    const controller = new AbortController();
    let sent = 0;
    const slow = new Readable({
      read() {
        sent += 1024 * 1024;
        if (sent === 8 * 1024 * 1024) setTimeout(() => controller.abort(), 10);
        setTimeout(() => this.push(randomBytes(1024 * 1024)), sent > 8 * 1024 * 1024 ? 50 : 0);
      },
    });
    s3.commands.length = 0;
    const push = uploadTargetModel({
      client: s3.client,
      location,
      targetModel: 'cancelled.tar.gz',
      body: slow,
      force: false,
      partSize: 5 * 1024 * 1024,
      signal: controller.signal,
    });
    await expect(push).rejects.toThrow('Push of s3://models/mme/cancelled.tar.gz cancelled. Nothing was left in S3');
    expect(s3.commands).toContain('UploadPartCommand');
    expect(s3.commands).toContain('AbortMultipartUploadCommand');
    expect(await headTargetModel(s3.client, location, 'cancelled.tar.gz')).toBeUndefined();
    expect(await s3.listMultipartUploads('models')).toEqual([]);
  });

  it('lists the models under the prefix, with sizes and dates, and nothing outside it', async () => {
    const names = ['m0000.tar.gz', 'm0001.tar.gz', 'm0002.tar.gz'];
    await Promise.all(
      names.map((name, i) => s3.client.send(new PutObjectCommand({ Bucket: 'models', Key: `bulk/${name}`, Body: Buffer.alloc(i + 1) }))),
    );
    await s3.client.send(new PutObjectCommand({ Bucket: 'models', Key: 'bulkier/other.tar.gz', Body: 'x' }));
    const listed = [];
    for await (const model of listTargetModels(s3.client, { bucket: 'models', prefix: 'bulk/' })) listed.push(model);
    expect(listed.map((m) => [m.targetModel, m.key, m.size])).toEqual(names.map((name, i) => [name, `bulk/${name}`, i + 1]));
    expect(listed[0]!.lastModified).toBeInstanceOf(Date);
  });

  it('deletes one model and nothing else', async () => {
    await s3.client.send(new PutObjectCommand({ Bucket: 'models', Key: 'del/a.tar.gz', Body: 'a' }));
    await s3.client.send(new PutObjectCommand({ Bucket: 'models', Key: 'del/b.tar.gz', Body: 'b' }));
    await deleteTargetModel(s3.client, { bucket: 'models', prefix: 'del/' }, 'a.tar.gz');
    const left = [];
    for await (const model of listTargetModels(s3.client, { bucket: 'models', prefix: 'del/' })) left.push(model.targetModel);
    expect(left).toEqual(['b.tar.gz']);
  });

  it('names a missing bucket', async () => {
    const listing = listTargetModels(s3.client, { bucket: 'nope', prefix: 'p/' });
    await expect(listing.next()).rejects.toThrow('Bucket of s3://nope/p/ does not exist. Check --s3, or the endpoint\'s ModelDataUrl.');
  });
});

describe('listing past one page (aws-sdk-client-mock: the exact requests)', () => {
  it('follows the continuation token to the second page and stops when the listing is complete', async () => {
    const client = new S3Client({ region: 'us-east-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
    const mock = mockClient(client);
    const when = new Date('2026-01-01T00:00:00Z');
    const pages = [
      {
        IsTruncated: true,
        NextContinuationToken: 'page-2',
        Contents: [
          { Key: 'bulk/m0000.tar.gz', Size: 0, LastModified: when },
          { Key: 'bulk/m0001.tar.gz', Size: 1, LastModified: when },
        ],
      },
      { IsTruncated: false, Contents: [{ Key: 'bulk/m1000.tar.gz', Size: 1000, LastModified: when }] },
    ];
    // A copy of each request as sent: the paginator reuses one input object, setting the token on it for the next page.
    const requests: unknown[] = [];
    mock.on(ListObjectsV2Command).callsFake((input: object) => {
      requests.push(JSON.parse(JSON.stringify(input)));
      const page = pages.shift();
      if (!page) throw new Error('a third page was asked for');
      return page;
    });
    const listed = [];
    for await (const model of listTargetModels(client, { bucket: 'models', prefix: 'bulk/' })) listed.push(model);
    expect(listed.map((m) => [m.targetModel, m.size])).toEqual([
      ['m0000.tar.gz', 0],
      ['m0001.tar.gz', 1],
      ['m1000.tar.gz', 1000],
    ]);
    expect(listed[2]!.lastModified).toEqual(when);
    expect(requests).toEqual([
      { Bucket: 'models', Prefix: 'bulk/' },
      { Bucket: 'models', Prefix: 'bulk/', ContinuationToken: 'page-2' },
    ]);
    mock.restore();
  });
});
