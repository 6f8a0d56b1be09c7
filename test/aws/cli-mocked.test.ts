// The exact AWS calls behind push, list, invoke and status, with aws-sdk-client-mock standing in for the services.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  AbortMultipartUploadCommand,
} from '@aws-sdk/client-s3';
import { DescribeEndpointCommand, DescribeEndpointConfigCommand, DescribeModelCommand, SageMakerClient } from '@aws-sdk/client-sagemaker';
import { InvokeEndpointCommand, SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import {
  ApplicationAutoScalingClient,
  DescribeScalableTargetsCommand,
  DescribeScalingPoliciesCommand,
} from '@aws-sdk/client-application-auto-scaling';
import { CloudWatchClient, GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { CloudWatchLogsClient, FilterLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import { mockClient } from 'aws-sdk-client-mock';
import { captureIo } from '../cli/run-cli';
import { runPush } from '../../lib/cli/push';
import { runList } from '../../lib/cli/list';
import { runInvoke } from '../../lib/cli/invoke';
import { runStatus } from '../../lib/cli/status';
import { binaryJsonContentType } from '../../lib/kserve/kserve-codec';
import { endpointStatus, statusMetricQueries } from '../../lib/aws/endpoint-status';
import { useAwsProfiles } from './aws-profile-fixture';

useAwsProfiles(['dev']);

const s3 = mockClient(S3Client);
const sageMaker = mockClient(SageMakerClient);
const runtime = mockClient(SageMakerRuntimeClient);
const autoScaling = mockClient(ApplicationAutoScalingClient);
const cloudWatch = mockClient(CloudWatchClient);
// status also reads the failures of the hour (tested in logs-mocked.test.ts); here the log has none.
const cloudWatchLogs = mockClient(CloudWatchLogsClient);

function awsError(name: string, status: number, message = name): Error {
  return Object.assign(new Error(message), { name, $metadata: { httpStatusCode: status } });
}

let dir: string;
/** The command's output, recorded, with the test's directory as working directory. */
const capture = () => captureIo({ cwd: dir });
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cli-mocked-'));
  for (const mock of [s3, sageMaker, runtime, autoScaling, cloudWatch, cloudWatchLogs]) mock.reset();
  cloudWatchLogs.on(FilterLogEventsCommand).resolves({ events: [] });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const unverified = { s3: 's3://model-bucket/mme/', verify: false } as const;

/** Bytes that pass the gzip magic check only: these tests push with verify false (push-verify.test.ts verifies). */
function archive(name: string, bytes: number): string {
  const path = join(dir, name);
  const data = Buffer.alloc(bytes, 7);
  data[0] = 0x1f;
  data[1] = 0x8b;
  writeFileSync(path, data);
  return path;
}

function mockMultiModelEndpoint(mode = 'MultiModel'): void {
  sageMaker.on(DescribeEndpointCommand, { EndpointName: 'mme' }).resolves({
    EndpointName: 'mme',
    EndpointConfigName: 'mme-config',
    EndpointStatus: 'InService',
    ProductionVariants: [{ VariantName: 'AllTraffic', CurrentInstanceCount: 2, DesiredInstanceCount: 3 }],
  });
  sageMaker.on(DescribeEndpointConfigCommand, { EndpointConfigName: 'mme-config' }).resolves({
    ProductionVariants: [{ VariantName: 'AllTraffic', ModelName: 'mme-model', InstanceType: 'ml.g4dn.xlarge', InitialInstanceCount: 1 }],
  });
  sageMaker.on(DescribeModelCommand, { ModelName: 'mme-model' }).resolves({
    PrimaryContainer: {
      Mode: mode as 'MultiModel',
      ModelDataUrl: 's3://model-bucket/mme/',
      Image: '763104351884.dkr.ecr.us-east-1.amazonaws.com/sagemaker-tritonserver:24.09-py3',
    },
  });
}

describe('push: the conditional write', () => {
  it('checks with HeadObject first, then PUTs a small archive with IfNoneMatch "*" and a SHA-256 checksum', async () => {
    s3.on(HeadObjectCommand).rejects(awsError('NotFound', 404));
    s3.on(PutObjectCommand).resolves({ ETag: '"abc"' });
    const io = capture();
    expect(await runPush(archive('small.tar.gz', 1000), { ...unverified }, io)).toBe(0);
    expect(s3.calls().map((c) => c.args[0].constructor.name)).toEqual(['HeadObjectCommand', 'PutObjectCommand']);
    expect(s3.commandCalls(HeadObjectCommand)[0]!.args[0].input).toEqual({ Bucket: 'model-bucket', Key: 'mme/small.tar.gz' });
    const { Body, ...put } = s3.commandCalls(PutObjectCommand)[0]!.args[0].input;
    expect(put).toEqual({
      Bucket: 'model-bucket',
      Key: 'mme/small.tar.gz',
      ContentType: 'application/gzip',
      ChecksumAlgorithm: 'SHA256',
      IfNoneMatch: '*',
    });
    expect((Body as Buffer).length).toBe(1000);
  });

  it('sends IfNoneMatch "*" on CreateMultipartUpload and CompleteMultipartUpload for a large archive', async () => {
    s3.on(HeadObjectCommand).rejects(awsError('NotFound', 404));
    s3.on(CreateMultipartUploadCommand).resolves({ UploadId: 'upload-1' });
    s3.on(UploadPartCommand).resolves({ ETag: '"part"', ChecksumSHA256: 'c2hh' });
    s3.on(CompleteMultipartUploadCommand).resolves({ ETag: '"whole"' });
    const io = capture();
    expect(await runPush(archive('big.tar.gz', 11 * 1024 * 1024), { ...unverified, partSize: 5 * 1024 * 1024 }, io)).toBe(0);
    expect(s3.commandCalls(CreateMultipartUploadCommand)[0]!.args[0].input).toEqual({
      Bucket: 'model-bucket',
      Key: 'mme/big.tar.gz',
      ContentType: 'application/gzip',
      ChecksumAlgorithm: 'SHA256',
      IfNoneMatch: '*',
    });
    expect(s3.commandCalls(UploadPartCommand)).toHaveLength(3);
    const complete = s3.commandCalls(CompleteMultipartUploadCommand)[0]!.args[0].input;
    expect(complete).toMatchObject({ Bucket: 'model-bucket', Key: 'mme/big.tar.gz', UploadId: 'upload-1', IfNoneMatch: '*' });
    expect(complete.MultipartUpload!.Parts!.map((p) => p.PartNumber)).toEqual([1, 2, 3]);
    expect(io.err()).toContain('uploading: 100% (11.0 MiB of 11.0 MiB)');
  });

  it('writes unconditionally with --force', async () => {
    s3.on(HeadObjectCommand).resolves({ ContentLength: 5, LastModified: new Date('2026-01-01T00:00:00Z') });
    s3.on(PutObjectCommand).resolves({});
    expect(await runPush(archive('small.tar.gz', 100), { ...unverified, force: true }, capture())).toBe(0);
    expect(s3.commandCalls(PutObjectCommand)[0]!.args[0].input.IfNoneMatch).toBeUndefined();
  });

  it('sends no byte when the TargetModel exists', async () => {
    s3.on(HeadObjectCommand).resolves({ ContentLength: 5 * 1024 ** 3, LastModified: new Date('2026-01-01T00:00:00Z') });
    await expect(runPush(archive('small.tar.gz', 100), { ...unverified }, capture())).rejects.toThrow(
      's3://model-bucket/mme/small.tar.gz already exists (5.0 GiB, last modified 2026-01-01T00:00:00.000Z); nothing was uploaded.',
    );
    expect(s3.calls()).toHaveLength(1);
  });

  it('reports a model written by someone else during the upload (412) without overwriting it', async () => {
    s3.on(HeadObjectCommand).rejects(awsError('NotFound', 404));
    s3.on(PutObjectCommand).rejects(awsError('PreconditionFailed', 412, 'At least one of the pre-conditions you specified did not hold'));
    await expect(runPush(archive('small.tar.gz', 100), { ...unverified }, capture())).rejects.toThrow(
      's3://model-bucket/mme/small.tar.gz was created by someone else while this upload ran; it was not overwritten.',
    );
  });

  it('aborts the multipart upload when a part fails', async () => {
    s3.on(HeadObjectCommand).rejects(awsError('NotFound', 404));
    s3.on(CreateMultipartUploadCommand).resolves({ UploadId: 'upload-2' });
    s3.on(UploadPartCommand).rejects(awsError('InternalError', 500));
    s3.on(AbortMultipartUploadCommand).resolves({});
    await expect(
      runPush(archive('big.tar.gz', 11 * 1024 * 1024), { ...unverified, partSize: 5 * 1024 * 1024 }, capture()),
    ).rejects.toThrow(/Nothing was left in S3 \(the multipart upload was aborted\)/);
    expect(s3.commandCalls(AbortMultipartUploadCommand)[0]!.args[0].input).toEqual({
      Bucket: 'model-bucket',
      Key: 'mme/big.tar.gz',
      UploadId: 'upload-2',
    });
  });

  it('names the missing permission on AccessDenied', async () => {
    s3.on(HeadObjectCommand).rejects(awsError('Forbidden', 403));
    await expect(runPush(archive('small.tar.gz', 100), { ...unverified, profile: 'dev' }, capture())).rejects.toThrow(
      'Access denied checking whether s3://model-bucket/mme/small.tar.gz exists: ' +
        "the credentials of profile 'dev' need s3:GetObject on it and s3:ListBucket on bucket model-bucket",
    );
  });
});

describe('endpoint resolution', () => {
  it('follows DescribeEndpoint -> DescribeEndpointConfig -> DescribeModel to the ModelDataUrl prefix', async () => {
    mockMultiModelEndpoint();
    s3.on(ListObjectsV2Command).resolves({
      Contents: [{ Key: 'mme/resnet.tar.gz', Size: 2048, LastModified: new Date('2026-02-03T04:05:06Z') }],
    });
    const io = capture();
    expect(await runList({ endpoint: 'mme', json: true }, io)).toBe(0);
    expect(sageMaker.calls().map((c) => c.args[0].input)).toEqual([
      { EndpointName: 'mme' },
      { EndpointConfigName: 'mme-config' },
      { ModelName: 'mme-model' },
    ]);
    expect(s3.commandCalls(ListObjectsV2Command)[0]!.args[0].input).toEqual({ Bucket: 'model-bucket', Prefix: 'mme/' });
    expect(JSON.parse(io.out())).toEqual({
      location: 's3://model-bucket/mme/',
      endpoint: 'mme',
      count: 1,
      totalSize: 2048,
      models: [{ targetModel: 'resnet.tar.gz', size: 2048, lastModified: '2026-02-03T04:05:06.000Z' }],
    });
  });

  it('refuses an endpoint that is not multi-model', async () => {
    mockMultiModelEndpoint('SingleModel');
    await expect(runList({ endpoint: 'mme' }, capture())).rejects.toThrow(
      "Endpoint 'mme' is not a multi-model endpoint: its model 'mme-model' has Mode SingleModel.",
    );
  });

  it('says when the endpoint does not exist', async () => {
    sageMaker.on(DescribeEndpointCommand).rejects(awsError('ValidationException', 400, 'Could not find endpoint "nope".'));
    await expect(runList({ endpoint: 'nope', region: 'eu-west-1' }, capture())).rejects.toThrow(
      "Endpoint 'nope' does not exist in eu-west-1.",
    );
  });

  it('names the missing permission when DescribeEndpoint is denied', async () => {
    sageMaker.on(DescribeEndpointCommand).rejects(awsError('AccessDeniedException', 400, 'User is not authorized'));
    await expect(runList({ endpoint: 'mme' }, capture())).rejects.toThrow('may not sagemaker:DescribeEndpoint on endpoint mme');
  });
});

describe('invoke', () => {
  const response = () => {
    const header = JSON.stringify({
      model_name: 'dali.tar.gz',
      model_version: '1',
      outputs: [{ name: 'OUTPUT', datatype: 'FP32', shape: [1, 4], parameters: { binary_data_size: 16 } }],
    });
    const blob = Buffer.alloc(16);
    [0.1, 0.7, 0.15, 0.05].forEach((v, i) => blob.writeFloatLE(v, i * 4));
    return {
      Body: new Uint8Array(Buffer.concat([Buffer.from(header), blob])),
      ContentType: binaryJsonContentType(header.length),
      InvokedProductionVariant: 'AllTraffic',
    };
  };

  it('sends InvokeEndpoint with TargetModel and the binary+json content type, and prints top-k', async () => {
    writeFileSync(join(dir, 'dog.jpg'), Buffer.from([0xff, 0xd8, 0xff]));
    runtime.on(InvokeEndpointCommand).resolves(response() as never);
    const io = capture();
    const code = await runInvoke(
      { endpoint: 'mme', targetModel: 'dali.tar.gz', input: ['INPUT=@dog.jpg'], shape: '1,3', datatype: 'UINT8', binary: true, top: '2' },
      io,
    );
    expect(code).toBe(0);
    const header =
      '{"parameters":{"binary_data_output":true},' +
      '"inputs":[{"name":"INPUT","shape":[1,3],"datatype":"UINT8","parameters":{"binary_data_size":3}}]}';
    expect(runtime.commandCalls(InvokeEndpointCommand)[0]!.args[0].input).toEqual({
      EndpointName: 'mme',
      TargetModel: 'dali.tar.gz',
      ContentType: `application/vnd.sagemaker-triton.binary+json;json-header-size=${header.length}`,
      Body: Buffer.concat([Buffer.from(header), Buffer.from([0xff, 0xd8, 0xff])]),
    });
    expect(io.out()).toBe(
      'model dali.tar.gz (version 1)\nOUTPUT  FP32 [1, 4]\n  values: [0.1, 0.7, 0.15, 0.05]\n  top 2:\n         1  0.7\n         2  0.15\n',
    );
  });

  it('shapes inputs from the ensemble config found in --model (a repository directory)', async () => {
    const repo = join(dir, 'model_tf_dali');
    require('node:fs').mkdirSync(join(repo, 'dali'), { recursive: true });
    require('node:fs').mkdirSync(join(repo, 'ensemble_dali_inception', '1'), { recursive: true });
    writeFileSync(join(repo, 'dali', 'config.pbtxt'), 'name: "dali"\nbackend: "dali"\nmax_batch_size: 256\n');
    writeFileSync(
      join(repo, 'ensemble_dali_inception', 'config.pbtxt'),
      'name: "ensemble_dali_inception"\nplatform: "ensemble"\nmax_batch_size: 256\n' +
        'input [ { name: "INPUT" data_type: TYPE_UINT8 dims: [ -1 ] } ]\n' +
        'output [ { name: "OUTPUT" data_type: TYPE_FP32 dims: [ 1001 ] } ]\n',
    );
    writeFileSync(join(dir, 'dog.jpg'), Buffer.from([1, 2, 3, 4, 5]));
    runtime.on(InvokeEndpointCommand).resolves(response() as never);
    expect(
      await runInvoke({ endpoint: 'mme', targetModel: 'dali.tar.gz', model: 'model_tf_dali', input: ['INPUT=@dog.jpg'] }, capture()),
    ).toBe(0);
    const sent = runtime.commandCalls(InvokeEndpointCommand)[0]!.args[0].input;
    expect(sent.ContentType).toBe('application/json');
    expect(Buffer.from(sent.Body as Uint8Array).toString()).toBe(
      '{"parameters":{"binary_data_output":true},"inputs":[{"name":"INPUT","shape":[1,5],"datatype":"UINT8","data":[1,2,3,4,5]}]}',
    );
    await expect(
      runInvoke({ endpoint: 'mme', targetModel: 'dali.tar.gz', model: 'model_tf_dali', input: ['IMAGE=@dog.jpg'] }, capture()),
    ).rejects.toThrow("Model 'ensemble_dali_inception' has no input 'IMAGE'; its inputs are 'INPUT' (UINT8 [-1, -1]).");
  });

  it('passes on what the model said when it fails, unwrapped from Triton\'s error JSON, with what to do', async () => {
    runtime.on(InvokeEndpointCommand).rejects(
      Object.assign(awsError('ModelError', 424, 'Received client error (400)'), {
        OriginalStatusCode: 400,
        OriginalMessage: '{"error":"unexpected shape for input \'INPUT\'"}',
        LogStreamArn: 'arn:aws:logs:us-east-1:1:log-group:/aws/sagemaker/Endpoints/mme',
      }),
    );
    await expect(runInvoke({ endpoint: 'mme', targetModel: 'dali.tar.gz', input: ['INPUT=[1,2]'] }, capture())).rejects.toThrow(
      "Triton refused to invoke dali.tar.gz (HTTP 400): unexpected shape for input 'INPUT'. Give --model <archive or directory> " +
        "so invoke shapes and types the inputs from the model's config.pbtxt. Container logs: arn:aws:logs",
    );
  });

  it('refuses a request over the 6 MiB InvokeEndpoint limit before sending it', async () => {
    writeFileSync(join(dir, 'huge.bin'), Buffer.alloc(7 * 1024 * 1024));
    await expect(
      runInvoke({ endpoint: 'mme', targetModel: 'x.tar.gz', input: ['INPUT=@huge.bin'], binary: true }, capture()),
    ).rejects.toThrow(/InvokeEndpoint accepts at most 6 MiB/);
    expect(runtime.calls()).toHaveLength(0);
  });
});

describe('status', () => {
  const now = new Date('2026-11-30T05:00:30Z');
  const start = new Date('2026-11-30T04:00:00Z');
  const end = new Date('2026-11-30T05:00:00Z');

  it('reads the endpoint, its scalable target and policies, and one hour of metrics', async () => {
    mockMultiModelEndpoint();
    autoScaling.on(DescribeScalableTargetsCommand).resolves({ ScalableTargets: [{ MinCapacity: 1, MaxCapacity: 5 } as never] });
    autoScaling.on(DescribeScalingPoliciesCommand).resolves({
      ScalingPolicies: [
        {
          PolicyName: 'gpu-60',
          PolicyType: 'TargetTrackingScaling',
          TargetTrackingScalingPolicyConfiguration: {
            TargetValue: 60,
            ScaleInCooldown: 600,
            ScaleOutCooldown: 200,
            CustomizedMetricSpecification: { MetricName: 'GPUUtilization', Namespace: '/aws/sagemaker/Endpoints', Statistic: 'Average' },
          },
        } as never,
      ],
    });
    cloudWatch.on(GetMetricDataCommand).resolves({
      MetricDataResults: [
        { Id: 'loadedModelCount0', Timestamps: [new Date('2026-11-30T04:58:00Z'), new Date('2026-11-30T04:59:00Z')], Values: [3, 4] },
        { Id: 'loadedModelCount1', Timestamps: [], Values: [] },
        { Id: 'gpuUtilization0', Timestamps: [new Date('2026-11-30T04:59:00Z')], Values: [41.5] },
        { Id: 'modelCacheHit0', Timestamps: [new Date('2026-11-30T04:59:00Z')], Values: [0.875] },
        { Id: 'modelLoadingWaitTime0', Timestamps: [new Date('2026-11-30T04:59:00Z')], Values: [2_500_000] },
      ],
    });
    const io = capture();
    expect(await runStatus({ endpoint: 'mme', now }, io)).toBe(0);

    const scope = { ServiceNamespace: 'sagemaker', ScalableDimension: 'sagemaker:variant:DesiredInstanceCount' };
    expect(autoScaling.commandCalls(DescribeScalableTargetsCommand)[0]!.args[0].input).toEqual({
      ...scope,
      ResourceIds: ['endpoint/mme/variant/AllTraffic'],
    });
    expect(autoScaling.commandCalls(DescribeScalingPoliciesCommand)[0]!.args[0].input).toEqual({
      ...scope,
      ResourceId: 'endpoint/mme/variant/AllTraffic',
    });
    const metrics = cloudWatch.commandCalls(GetMetricDataCommand)[0]!.args[0].input;
    expect(metrics).toEqual({
      MetricDataQueries: statusMetricQueries('mme', 'AllTraffic'),
      StartTime: start,
      EndTime: end,
      ScanBy: 'TimestampAscending',
    });
    expect(
      metrics.MetricDataQueries!.map((q) => `${q.MetricStat!.Metric!.Namespace} ${q.MetricStat!.Metric!.MetricName} ${q.MetricStat!.Stat}`),
    ).toEqual([
      '/aws/sagemaker/Endpoints LoadedModelCount Average',
      'AWS/SageMaker LoadedModelCount Average',
      '/aws/sagemaker/Endpoints GPUUtilization Average',
      '/aws/sagemaker/Endpoints GPUMemoryUtilization Average',
      'AWS/SageMaker ModelCacheHit Average',
      'AWS/SageMaker ModelLoadingWaitTime Average',
    ]);
    expect(metrics.MetricDataQueries![0]!.MetricStat!.Metric!.Dimensions).toEqual([
      { Name: 'EndpointName', Value: 'mme' },
      { Name: 'VariantName', Value: 'AllTraffic' },
    ]);

    const text = io.out();
    expect(text).toContain('Endpoint      mme  InService');
    expect(text).toContain('Variant       AllTraffic  ml.g4dn.xlarge  2 instances (scaling to 3)');
    expect(text).toContain('Auto scaling  1-5 instances');
    expect(text).toContain(
      '  policy      gpu-60: TargetTrackingScaling on /aws/sagemaker/Endpoints/GPUUtilization (Average) target 60, ' +
        'cooldown in 600 s / out 200 s',
    );
    expect(text).toMatch(/LoadedModelCount \(Average\) +4 +3 +4 +3\.5/);
    expect(text).toMatch(/ModelCacheHit \(Average\) +87\.5 %/);
    expect(text).toMatch(/ModelLoadingWaitTime \(Average\) +2\.50 s/);
    expect(text).toMatch(/GPUMemoryUtilization \(Average\) +- +- +- +-/);
  });

  it('still reports the endpoint when metrics are denied, with a note naming the permission', async () => {
    mockMultiModelEndpoint();
    autoScaling.on(DescribeScalableTargetsCommand).resolves({ ScalableTargets: [] });
    cloudWatch.on(GetMetricDataCommand).rejects(awsError('AccessDenied', 403));
    const io = capture();
    expect(await runStatus({ endpoint: 'mme', now }, io)).toBe(0);
    expect(io.out()).toContain('Auto scaling  none (fixed instance count)');
    expect(io.err()).toContain(
      'note: Metrics not shown: Access denied: the credentials in use may not cloudwatch:GetMetricData on endpoint mme.',
    );
  });

  it('still reports the endpoint and its metrics when scaling calls fail, with a note naming the call refused', async () => {
    mockMultiModelEndpoint();
    cloudWatch.on(GetMetricDataCommand).resolves({
      MetricDataResults: [{ Id: 'gpuUtilization0', Timestamps: [new Date('2026-11-30T04:59:00Z')], Values: [41.5] }],
    });
    autoScaling.on(DescribeScalableTargetsCommand).rejects(awsError('AccessDeniedException', 400));
    let io = capture();
    expect(await runStatus({ endpoint: 'mme', now }, io)).toBe(0);
    expect(io.out()).toMatch(/^Endpoint +mme +InService$/m);
    expect(io.out()).not.toContain('Auto scaling');
    expect(io.out()).toMatch(/GPUUtilization \(Average\) +41\.5/);
    expect(io.err()).toContain(
      'note: Auto scaling not shown: Access denied: the credentials in use may not ' +
        'application-autoscaling:DescribeScalableTargets on endpoint mme.',
    );
    expect(autoScaling.commandCalls(DescribeScalingPoliciesCommand)).toHaveLength(0);

    // The target is readable but its policies are not: the note names DescribeScalingPolicies, not the target call.
    autoScaling.reset();
    autoScaling.on(DescribeScalableTargetsCommand).resolves({ ScalableTargets: [{ MinCapacity: 1, MaxCapacity: 5 } as never] });
    autoScaling.on(DescribeScalingPoliciesCommand).rejects(awsError('AccessDeniedException', 400));
    io = capture();
    expect(await runStatus({ endpoint: 'mme', now }, io)).toBe(0);
    expect(io.out()).not.toContain('Auto scaling');
    const refused = 'application-autoscaling:DescribeScalingPolicies on endpoint/mme/variant/AllTraffic';
    expect(io.err()).toMatch(/^note: Auto scaling not shown: Access denied: .*$/m);
    expect(io.err()).toContain(refused);
  });

  it('says when the endpoint does not exist before making (loading) the scaling, metrics and logs clients', async () => {
    // runStatus hands endpointStatus the SageMaker client and a function that makes the other three.
    const region = { region: 'eu-west-1' };
    const others = jest.fn(async () => ({
      autoScaling: new ApplicationAutoScalingClient(region),
      cloudWatch: new CloudWatchClient(region),
      logs: new CloudWatchLogsClient(region),
    }));
    const clients = { sageMaker: new SageMakerClient(region), others };
    sageMaker.on(DescribeEndpointCommand).rejects(awsError('ValidationException', 400, 'Could not find endpoint "nope".'));
    await expect(endpointStatus(clients, 'nope', { ...region, now })).rejects.toThrow("Endpoint 'nope' does not exist in eu-west-1.");
    expect(others).not.toHaveBeenCalled();
    // Once the endpoint is found, they are made once and used.
    sageMaker.reset();
    mockMultiModelEndpoint();
    autoScaling.on(DescribeScalableTargetsCommand).resolves({ ScalableTargets: [] });
    cloudWatch.on(GetMetricDataCommand).resolves({ MetricDataResults: [] });
    const report = await endpointStatus(clients, 'mme', { ...region, now });
    expect(others).toHaveBeenCalledTimes(1);
    expect(report.endpoint.endpointName).toBe('mme');
    expect(autoScaling.commandCalls(DescribeScalableTargetsCommand)).toHaveLength(1);
    expect(cloudWatch.commandCalls(GetMetricDataCommand)).toHaveLength(1);
    expect(cloudWatchLogs.commandCalls(FilterLogEventsCommand).length).toBeGreaterThan(0);
  });
});
