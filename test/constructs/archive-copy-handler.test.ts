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
import { onEvent } from '../../constructs/handlers/archive-copy/index.js';
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
