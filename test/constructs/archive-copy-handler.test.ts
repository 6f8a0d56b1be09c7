import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { handler, onEvent } from '../../constructs/handlers/archive-copy/index.js';
import { LocalS3, startLocalS3 } from '../aws/s3rver-harness';

type CopyEvent = Parameters<typeof onEvent>[0];

const TARGET_MODEL = 'resnet-0123456789ab.tar.gz';
const ARCHIVE = Buffer.from('the archive bytes, as the CDK CLI staged them');

function event(requestType: CopyEvent['RequestType'], size = ARCHIVE.length): CopyEvent {
  return {
    RequestType: requestType,
    ResourceProperties: {
      SourceBucket: 'cdk-assets',
      SourceKey: 'f00d.tar.gz',
      Bucket: 'models',
      Key: `prod/${TARGET_MODEL}`,
      TargetModel: TARGET_MODEL,
      // CloudFormation hands numbers over as strings.
      Size: String(size),
    },
  };
}

describe('the ModelArchive copy handler against a real S3 server (s3rver)', () => {
  let s3: LocalS3;
  beforeEach(async () => {
    s3 = await startLocalS3(['cdk-assets', 'models']);
    await s3.client.send(new PutObjectCommand({ Bucket: 'cdk-assets', Key: 'f00d.tar.gz', Body: ARCHIVE }));
    s3.commands.length = 0;
  });
  afterEach(() => s3.close());
  const stored = async () => {
    const out = await s3.client.send(new GetObjectCommand({ Bucket: 'models', Key: `prod/${TARGET_MODEL}` }));
    return Buffer.from(await out.Body!.transformToByteArray());
  };

  it('copies the staged archive to its content-named key, S3 to S3, and answers its TargetModel and key', async () => {
    const result = await onEvent(event('Create'), s3.client);
    expect(s3.commands).toEqual(['HeadObjectCommand', 'CopyObjectCommand']);
    expect(await stored()).toEqual(ARCHIVE);
    expect(result).toEqual({
      PhysicalResourceId: `s3://models/prod/${TARGET_MODEL}`,
      Data: { TargetModel: TARGET_MODEL, ObjectKey: `prod/${TARGET_MODEL}`, Copied: 'true' },
    });
  });

  it('copies nothing when the key is already there with the archive size (a redeploy, a rollback to it)', async () => {
    await onEvent(event('Create'), s3.client);
    s3.commands.length = 0;
    const lines: string[] = [];
    const result = await onEvent(event('Update'), s3.client, { log: (l) => lines.push(l) });
    expect(s3.commands).toEqual(['HeadObjectCommand']);
    expect(result.Data.Copied).toBe('false');
    expect(lines).toEqual([
      `s3://models/prod/${TARGET_MODEL} is there (${ARCHIVE.length} bytes; its name is its content hash): not copied again.`,
    ]);
  });

  it('copies again over an object of another size under the name (a partial or foreign upload)', async () => {
    await s3.client.send(new PutObjectCommand({ Bucket: 'models', Key: `prod/${TARGET_MODEL}`, Body: 'short' }));
    const result = await onEvent(event('Update'), s3.client);
    expect(result.Data.Copied).toBe('true');
    expect(await stored()).toEqual(ARCHIVE);
  });

  it('fails the resource when the staged archive is missing, so nothing that uses the name is deployed', async () => {
    const missing = event('Create');
    const props = { ...missing.ResourceProperties, SourceKey: 'gone.tar.gz' };
    await expect(onEvent({ ...missing, ResourceProperties: props }, s3.client)).rejects.toThrow();
    await expect(stored()).rejects.toThrow();
  });

  it('deletes nothing when the resource is deleted: a replaced archive may still be invoked', async () => {
    await onEvent(event('Create'), s3.client);
    s3.commands.length = 0;
    const result = await onEvent({ ...event('Delete'), PhysicalResourceId: `s3://models/prod/${TARGET_MODEL}` }, s3.client);
    expect(s3.commands).toEqual([]);
    expect(result.PhysicalResourceId).toBe(`s3://models/prod/${TARGET_MODEL}`);
    expect(await stored()).toEqual(ARCHIVE);
  });
});

describe('the ModelArchive copy handler for archives past CopyObject’s limit', () => {
  let s3: ReturnType<typeof mockClient>;
  beforeEach(() => {
    s3 = mockClient(S3Client);
    s3.on(HeadObjectCommand).rejects(Object.assign(new Error('NotFound'), { name: 'NotFound', $metadata: { httpStatusCode: 404 } }));
    s3.on(CreateMultipartUploadCommand).resolves({ UploadId: 'up-1' });
  });
  afterEach(() => s3.restore());
  const target = { Bucket: 'models', Key: `prod/${TARGET_MODEL}` };

  it('copies in ranged parts (UploadPartCopy) and completes with the parts in order', async () => {
    s3.on(UploadPartCopyCommand).callsFake(async (input: { PartNumber: number }) => ({
      CopyPartResult: { ETag: `"e${input.PartNumber}"` },
    }));
    s3.on(CompleteMultipartUploadCommand).resolves({});
    await onEvent(event('Create', 25), new S3Client({}), { singleCopyLimit: 10, partSize: 10 });
    expect(s3.commandCalls(CopyObjectCommand)).toHaveLength(0);
    expect(s3.commandCalls(UploadPartCopyCommand).map((c) => c.args[0].input)).toEqual(
      ['bytes=0-9', 'bytes=10-19', 'bytes=20-24'].map((range, i) => ({
        ...target,
        UploadId: 'up-1',
        PartNumber: i + 1,
        CopySource: 'cdk-assets/f00d.tar.gz',
        CopySourceRange: range,
      })),
    );
    expect(s3.commandCalls(CompleteMultipartUploadCommand).map((c) => c.args[0].input)).toEqual([
      { ...target, UploadId: 'up-1', MultipartUpload: { Parts: [1, 2, 3].map((n) => ({ PartNumber: n, ETag: `"e${n}"` })) } },
    ]);
  });

  it('aborts the multipart upload when a part fails, leaving no hidden parts, and fails the resource', async () => {
    s3.on(UploadPartCopyCommand).callsFake(async (input: { PartNumber: number }) => {
      if (input.PartNumber === 2) throw new Error('InternalError');
      return { CopyPartResult: { ETag: '"e"' } };
    });
    await expect(onEvent(event('Create', 25), new S3Client({}), { singleCopyLimit: 10, partSize: 10 })).rejects.toThrow('InternalError');
    expect(s3.commandCalls(AbortMultipartUploadCommand).map((c) => c.args[0].input)).toEqual([{ ...target, UploadId: 'up-1' }]);
    expect(s3.commandCalls(CompleteMultipartUploadCommand)).toHaveLength(0);
  });

  it('fails on a refused HeadObject (403) instead of taking the archive for missing', async () => {
    s3.on(HeadObjectCommand).rejects(Object.assign(new Error('Forbidden'), { name: 'Forbidden', $metadata: { httpStatusCode: 403 } }));
    await expect(onEvent(event('Create'), new S3Client({}))).rejects.toThrow('Forbidden');
    expect(s3.commandCalls(CopyObjectCommand)).toHaveLength(0);
  });
});

describe('the ModelArchive copy handler: its requests and answers, exactly (mocked S3)', () => {
  let s3: ReturnType<typeof mockClient>;
  const notFound = (fields: { name?: string; status?: number }) => {
    const metadata = fields.status ? { $metadata: { httpStatusCode: fields.status } } : {};
    return Object.assign(new Error('gone'), { name: fields.name ?? 'Error', ...metadata });
  };
  beforeEach(() => {
    s3 = mockClient(S3Client);
    s3.on(HeadObjectCommand).rejects(notFound({ name: 'NotFound', status: 404 }));
    s3.on(CopyObjectCommand).resolves({});
    s3.on(CreateMultipartUploadCommand).resolves({ UploadId: 'up-2' });
    s3.on(CompleteMultipartUploadCommand).resolves({});
  });
  afterEach(() => s3.restore());
  const target = { Bucket: 'models', Key: `prod/${TARGET_MODEL}` };
  const withSource = (sourceKey: string, size: number): CopyEvent => {
    const base = event('Create', size);
    return { ...base, ResourceProperties: { ...base.ResourceProperties, SourceKey: sourceKey } };
  };
  const ranges = () => s3.commandCalls(UploadPartCopyCommand).map((c) => c.args[0].input.CopySourceRange);

  it('copies with one CopyObject up to 5 GiB, the source key URL-encoded part by part, and logs the copy', async () => {
    const lines: string[] = [];
    const result = await onEvent(withSource('assets dir/a+b#c.tar.gz', 5 * 1024 ** 3), new S3Client({}), { log: (l) => lines.push(l) });
    expect(s3.commandCalls(HeadObjectCommand).map((c) => c.args[0].input)).toEqual([target]);
    expect(s3.commandCalls(CopyObjectCommand).map((c) => c.args[0].input)).toEqual([
      { ...target, CopySource: 'cdk-assets/assets%20dir/a%2Bb%23c.tar.gz' },
    ]);
    expect(s3.commandCalls(CreateMultipartUploadCommand)).toHaveLength(0);
    expect(lines).toEqual([`Copied s3://cdk-assets/assets dir/a+b#c.tar.gz to s3://models/prod/${TARGET_MODEL} (5368709120 bytes).`]);
    expect(result).toEqual({
      PhysicalResourceId: `s3://models/prod/${TARGET_MODEL}`,
      Data: { TargetModel: TARGET_MODEL, ObjectKey: `prod/${TARGET_MODEL}`, Copied: 'true' },
    });
  });

  it('copies one byte past 5 GiB in 512 MiB parts, the last one short', async () => {
    s3.on(UploadPartCopyCommand).resolves({ CopyPartResult: { ETag: '"e"' } });
    const size = 5 * 1024 ** 3 + 1;
    await onEvent(withSource('f00d.tar.gz', size), new S3Client({}));
    expect(s3.commandCalls(CopyObjectCommand)).toHaveLength(0);
    expect(s3.commandCalls(CreateMultipartUploadCommand).map((c) => c.args[0].input)).toEqual([target]);
    const part = 512 * 1024 ** 2;
    const expected = Array.from({ length: 10 }, (_, i) => `bytes=${i * part}-${(i + 1) * part - 1}`);
    expect(ranges()).toEqual([...expected, `bytes=${size - 1}-${size - 1}`]);
    const completed = s3.commandCalls(CompleteMultipartUploadCommand)[0]!.args[0].input;
    expect(completed.MultipartUpload?.Parts?.map((p) => p.PartNumber)).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
  });

  it('copies at the limit in one CopyObject and one byte over it in parts', async () => {
    s3.on(UploadPartCopyCommand).resolves({});
    await onEvent(event('Create', 10), new S3Client({}), { singleCopyLimit: 10, partSize: 4 });
    expect(s3.commandCalls(CopyObjectCommand)).toHaveLength(1);
    await onEvent(event('Create', 11), new S3Client({}), { singleCopyLimit: 10, partSize: 4 });
    expect(ranges()).toEqual(['bytes=0-3', 'bytes=4-7', 'bytes=8-10']);
    // A part answer without CopyPartResult: the part is listed without an ETag, and S3 judges the completion.
    const completed = s3.commandCalls(CompleteMultipartUploadCommand)[0]!.args[0].input;
    expect(completed.MultipartUpload?.Parts).toEqual([1, 2, 3].map((n) => ({ PartNumber: n, ETag: undefined })));
  });

  it('copies at most 8 parts at once, and starts no part after one failed', async () => {
    let running = 0;
    let most = 0;
    s3.on(UploadPartCopyCommand).callsFake(async (input: { PartNumber: number }) => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running--;
      return { CopyPartResult: { ETag: `"e${input.PartNumber}"` } };
    });
    await onEvent(event('Create', 20), new S3Client({}), { singleCopyLimit: 1, partSize: 1 });
    expect(most).toBe(8);
    expect(ranges()).toHaveLength(20);

    s3.on(UploadPartCopyCommand).callsFake(async (input: { PartNumber: number }) => {
      if (input.PartNumber === 2) throw new Error('SlowDown');
      await new Promise((resolve) => setTimeout(resolve, 20));
      return {};
    });
    s3.resetHistory();
    await expect(onEvent(event('Create', 20), new S3Client({}), { singleCopyLimit: 1, partSize: 1 })).rejects.toThrow('SlowDown');
    // The 8 parts under way when part 2 failed, and none after (workers still running would start more).
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(ranges()).toHaveLength(8);
    expect(s3.commandCalls(AbortMultipartUploadCommand).map((c) => c.args[0].input)).toEqual([{ ...target, UploadId: 'up-2' }]);
  });

  it('fails with the part\'s error, not the abort\'s, when the abort fails too', async () => {
    s3.on(UploadPartCopyCommand).rejects(new Error('InternalError'));
    s3.on(AbortMultipartUploadCommand).rejects(new Error('AbortRefused'));
    await expect(onEvent(event('Create', 25), new S3Client({}), { singleCopyLimit: 10, partSize: 10 })).rejects.toThrow('InternalError');
    expect(s3.commandCalls(AbortMultipartUploadCommand)).toHaveLength(1);
    s3.on(UploadPartCopyCommand).resolves({});
    s3.on(CompleteMultipartUploadCommand).rejects(new Error('EntityTooSmall'));
    s3.resetHistory();
    await expect(onEvent(event('Create', 25), new S3Client({}), { singleCopyLimit: 10, partSize: 10 })).rejects.toThrow('EntityTooSmall');
    expect(s3.commandCalls(AbortMultipartUploadCommand).map((c) => c.args[0].input)).toEqual([{ ...target, UploadId: 'up-2' }]);
  });

  it('takes a 404 of any name, or a NotFound without a status, for a missing key; anything else fails', async () => {
    for (const missing of [notFound({ status: 404 }), notFound({ name: 'NotFound' })]) {
      s3.on(HeadObjectCommand).rejects(missing);
      s3.resetHistory();
      await onEvent(event('Create'), new S3Client({}));
      expect(s3.commandCalls(CopyObjectCommand)).toHaveLength(1);
    }
    s3.on(HeadObjectCommand).rejects(notFound({ name: 'NoSuchBucket', status: 400 }));
    await expect(onEvent(event('Create'), new S3Client({}))).rejects.toThrow('gone');
    s3.on(HeadObjectCommand).rejects('plain string rejection');
    await expect(onEvent(event('Create'), new S3Client({}))).rejects.toThrow();
  });

  it('logs a copy over an object of another size', async () => {
    s3.on(HeadObjectCommand).resolves({ ContentLength: 5 });
    const lines: string[] = [];
    await onEvent(event('Update'), new S3Client({}), { log: (l) => lines.push(l) });
    expect(lines).toEqual([
      `s3://models/prod/${TARGET_MODEL} has 5 bytes, not ${ARCHIVE.length}: copying it again.`,
      `Copied s3://cdk-assets/f00d.tar.gz to s3://models/prod/${TARGET_MODEL} (${ARCHIVE.length} bytes).`,
    ]);
  });

  it('is the Lambda handler with a default client, logging to the function\'s log (console.log)', async () => {
    s3.on(HeadObjectCommand).resolves({ ContentLength: ARCHIVE.length });
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      expect((await handler(event('Create'))).Data.Copied).toBe('false');
      expect(log.mock.calls).toEqual([
        [`s3://models/prod/${TARGET_MODEL} is there (${ARCHIVE.length} bytes; its name is its content hash): not copied again.`],
      ]);
    } finally {
      log.mockRestore();
    }
  });

  it('on Delete answers the resource\'s own id, or the key\'s when CloudFormation gives none, and sends nothing', async () => {
    const data = { TargetModel: TARGET_MODEL, ObjectKey: `prod/${TARGET_MODEL}`, Copied: 'false' };
    expect(await onEvent({ ...event('Delete'), PhysicalResourceId: 's3://models/prod/old.tar.gz' }, new S3Client({}))).toEqual({
      PhysicalResourceId: 's3://models/prod/old.tar.gz',
      Data: data,
    });
    expect(await onEvent(event('Delete'), new S3Client({}))).toEqual({
      PhysicalResourceId: `s3://models/prod/${TARGET_MODEL}`,
      Data: data,
    });
    expect(s3.calls()).toHaveLength(0);
  });
});
