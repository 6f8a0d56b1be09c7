// pushTargetModel with aws-sdk-client-mock in place of S3 and SageMaker: the answers s3rver never gives (an object
// without Last-Modified, a 403 on HEAD) and a push that follows an endpoint to its ModelDataUrl, with the exact
// requests sent.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DescribeEndpointCommand, DescribeEndpointConfigCommand, DescribeModelCommand, SageMakerClient } from '@aws-sdk/client-sagemaker';
import { mockClient } from 'aws-sdk-client-mock';
import { versionedTargetModelOf } from '../../lib/bundle/versioned-target-model';
import { pushTargetModel } from '../../lib/push/push-target-model';
import { useAwsProfiles } from '../aws/aws-profile-fixture';
import { copyAdder } from './push-fixture';

useAwsProfiles(['team']);

const s3 = mockClient(S3Client);
const sageMaker = mockClient(SageMakerClient);
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'push-mocked-'));
  s3.reset();
  sageMaker.reset();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const repository = (): string => copyAdder(dir);

function awsError(name: string, status: number): Error {
  return Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } });
}

/** The S3 requests sent, as [command, input] (the upload's body left out). */
function s3Requests(): [string, Record<string, unknown>][] {
  return s3.calls().map((call) => {
    const { Body: _body, ...input } = call.args[0].input as Record<string, unknown>;
    return [call.args[0].constructor.name, input];
  });
}

/** An endpoint `mme` whose one model keeps its TargetModels under s3://bucket/models/. */
function mockEndpoint(): void {
  sageMaker.on(DescribeEndpointCommand).resolves({
    EndpointName: 'mme',
    EndpointConfigName: 'mme-config',
    EndpointStatus: 'InService',
    ProductionVariants: [{ VariantName: 'AllTraffic', CurrentInstanceCount: 1 }],
  } as never);
  sageMaker.on(DescribeEndpointConfigCommand).resolves({
    ProductionVariants: [{ VariantName: 'AllTraffic', ModelName: 'mme-model', InstanceType: 'ml.g5.xlarge', InitialInstanceCount: 1 }],
  } as never);
  sageMaker.on(DescribeModelCommand).resolves({
    PrimaryContainer: { Mode: 'MultiModel', ModelDataUrl: 's3://bucket/models/', Image: 'triton' },
  } as never);
}

describe('pushTargetModel (mocked AWS)', () => {
  it('refuses to replace an object S3 gives no date for, with its size only, sending nothing but the HEAD', async () => {
    s3.on(HeadObjectCommand).resolves({ ContentLength: 2048 });
    await expect(pushTargetModel({ source: repository(), location: { s3: 's3://bucket/models/' } })).rejects.toMatchObject({
      code: 'ALREADY_EXISTS',
      message: expect.stringMatching(/^s3:\/\/bucket\/models\/adder\.tar\.gz already exists \(2\.0 KiB\); nothing was uploaded\. /),
    });
    expect(s3Requests()).toEqual([['HeadObjectCommand', { Bucket: 'bucket', Key: 'models/adder.tar.gz' }]]);
  });

  it("names the profile whose credentials may not check whether the TargetModel exists", async () => {
    s3.on(HeadObjectCommand).rejects(awsError('Forbidden', 403));
    const location = { s3: 's3://bucket/models/', profile: 'team' };
    await expect(pushTargetModel({ source: repository(), location })).rejects.toMatchObject({
      code: 'AWS_ACCESS_DENIED',
      message:
        "Access denied checking whether s3://bucket/models/adder.tar.gz exists: the credentials of profile 'team' need " +
        's3:GetObject on it and s3:ListBucket on bucket bucket (without ListBucket, S3 reports a missing object as forbidden).',
    });
    expect(s3.commandCalls(PutObjectCommand)).toEqual([]);
  });

  it("follows an endpoint to its ModelDataUrl and returns the endpoint with the result", async () => {
    mockEndpoint();
    s3.on(HeadObjectCommand).rejects(awsError('NotFound', 404));
    s3.on(PutObjectCommand).resolves({ ETag: '"e"' });
    const result = await pushTargetModel({ source: repository(), location: { endpoint: 'mme', region: 'us-east-1' } });
    expect(result).toMatchObject({
      ok: true,
      kind: 'directory',
      targetModel: 'adder.tar.gz',
      replaced: false,
      endpoint: { endpointName: 'mme', modelName: 'mme-model' },
    });
    expect(s3Requests()).toEqual([
      ['HeadObjectCommand', { Bucket: 'bucket', Key: 'models/adder.tar.gz' }],
      [
        'PutObjectCommand',
        expect.objectContaining({ Bucket: 'bucket', Key: 'models/adder.tar.gz', ContentType: 'application/gzip', IfNoneMatch: '*' }),
      ],
    ]);
  });

  it('returns the endpoint and the served config when the same versioned content is already there', async () => {
    mockEndpoint();
    const root = repository();
    const named = await versionedTargetModelOf(root, { name: 'adder.tar.gz' });
    if (!named.ok) throw new Error('the fixture validates');
    s3.on(HeadObjectCommand).resolves({ ContentLength: named.size });
    const result = await pushTargetModel({ source: root, location: { endpoint: 'mme', region: 'us-east-1' }, versioned: true });
    expect(result).toMatchObject({
      ok: true,
      unchanged: true,
      targetModel: named.targetModel,
      url: `s3://bucket/models/${named.targetModel}`,
      sha256: named.sha256,
      endpoint: { endpointName: 'mme' },
    });
    expect(result.ok && result.config?.input?.map((i) => i.name)).toEqual(['INPUT0']);
    expect(s3Requests()).toEqual([['HeadObjectCommand', { Bucket: 'bucket', Key: `models/${named.targetModel}` }]]);
  });
});
