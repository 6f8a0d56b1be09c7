import { App, Duration, RemovalPolicy, Size, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import {
  InferenceAmiVersion,
  InstanceType,
  ModelCacheSetting,
  TritonInferenceType,
  TritonMultiModelEndpoint,
  TritonMultiModelEndpointProps,
} from '../../constructs';
import { tritonVersionRegions } from '../../lib/catalog/triton-images';

function stackWith(props: TritonMultiModelEndpointProps = {}, region?: string) {
  const app = new App();
  const stack = new Stack(app, 'S', region ? { env: { region, account: '111122223333' } } : undefined);
  const endpoint = new TritonMultiModelEndpoint(stack, 'Mme', props);
  return { stack, endpoint };
}

function variant(template: Template): Record<string, unknown> {
  const configs = template.findResources('AWS::SageMaker::EndpointConfig');
  const [config] = Object.values(configs) as Array<{ Properties: { ProductionVariants: Record<string, unknown>[] } }>;
  return config.Properties.ProductionVariants[0];
}

describe('TritonMultiModelEndpoint with every default (env-agnostic stack)', () => {
  const { stack } = stackWith();
  const template = Template.fromStack(stack);

  it('creates one MultiModel Triton model over s3://<new bucket>/models/', () => {
    template.resourceCountIs('AWS::SageMaker::Model', 1);
    template.hasResourceProperties('AWS::SageMaker::Model', {
      PrimaryContainer: {
        Mode: 'MultiModel',
        ModelDataUrl: { 'Fn::Join': ['', ['s3://', { Ref: Match.stringLikeRegexp('^MmeModelBucket') }, '/models/']] },
        Environment: { SAGEMAKER_MULTI_MODEL: 'true' },
        MultiModelConfig: Match.absent(),
      },
      VpcConfig: Match.absent(),
      EnableNetworkIsolation: Match.absent(),
    });
  });

  it('looks the SageMaker Triton 24.09 image up in a CfnMapping of the regions the SDK lists it in', () => {
    template.hasResourceProperties('AWS::SageMaker::Model', {
      PrimaryContainer: {
        Image: {
          'Fn::Join': [
            '',
            [
              { 'Fn::FindInMap': ['TritonImageRegistryMap2409', { Ref: 'AWS::Region' }, 'account'] },
              '.dkr.ecr.',
              { Ref: 'AWS::Region' },
              '.',
              { 'Fn::FindInMap': ['TritonImageRegistryMap2409', { Ref: 'AWS::Region' }, 'domainSuffix'] },
              '/sagemaker-tritonserver:24.09-py3',
            ],
          ],
        },
      },
    });
    const mapping = template.toJSON().Mappings.TritonImageRegistryMap2409;
    expect(Object.keys(mapping).sort()).toEqual(tritonVersionRegions('24.09'));
    expect(Object.keys(mapping)).not.toContain('mx-central-1'); // first listed with 25.04
    expect(mapping['us-east-1']).toEqual({ account: '763104351884', domainSuffix: 'amazonaws.com' });
    expect(mapping['cn-north-1']).toEqual({ account: '727897471807', domainSuffix: 'amazonaws.com.cn' });
  });

  it('runs one ml.g4dn.xlarge with 600 s startup and download timeouts and no volume settings', () => {
    expect(variant(template)).toEqual({
      VariantName: 'AllTraffic',
      ModelName: { 'Fn::GetAtt': [expect.stringMatching(/^MmeModel/), 'ModelName'] },
      InstanceType: 'ml.g4dn.xlarge',
      InitialInstanceCount: 1,
      InitialVariantWeight: 1,
      ContainerStartupHealthCheckTimeoutInSeconds: 600,
      ModelDataDownloadTimeoutInSeconds: 600,
    });
    template.hasResourceProperties('AWS::SageMaker::EndpointConfig', { KmsKeyId: Match.absent() });
    template.hasResourceProperties('AWS::SageMaker::Endpoint', {
      EndpointName: Match.absent(),
      RetainAllVariantProperties: Match.absent(),
    });
  });

  it('warns that one instance has no spare', () => {
    Annotations.fromStack(stack).hasWarning('/S/Mme', Match.stringLikeRegexp('initialInstanceCount is 1'));
  });

  it('creates a private, TLS-only, encrypted, versioned bucket that is kept on stack deletion', () => {
    template.hasResource('AWS::S3::Bucket', {
      DeletionPolicy: 'Retain',
      Properties: {
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        VersioningConfiguration: { Status: 'Enabled' },
        BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
        // Versioned, yet not forever: deleted archives are recoverable for 30 days, then expire.
        LifecycleConfiguration: {
          Rules: [
            {
              Id: 'ArchiveVersions',
              Status: 'Enabled',
              NoncurrentVersionExpiration: { NoncurrentDays: 30 },
              ExpiredObjectDeleteMarker: true,
              AbortIncompleteMultipartUpload: { DaysAfterInitiation: 7 },
            },
          ],
        },
      },
    });
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
    expect(JSON.stringify(template.toJSON())).not.toContain('Custom::S3AutoDeleteObjects');
  });

  it('gives the role only prefix reads, its logs, SageMaker metrics and the image pull', () => {
    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [{ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'sagemaker.amazonaws.com' } }],
      },
      ManagedPolicyArns: Match.absent(),
    });
    const bucketArn = { 'Fn::GetAtt': [expect.stringMatching(/^MmeModelBucket/), 'Arn'] };
    const [policy] = Object.values(template.findResources('AWS::IAM::Policy')) as Array<{
      Properties: { PolicyDocument: { Statement: unknown[] } };
    }>;
    // Exactly these six statements, in any order.
    expect(policy.Properties.PolicyDocument.Statement).toHaveLength(6);
    expect(policy.Properties.PolicyDocument.Statement).toEqual(
      expect.arrayContaining([
        { Action: 's3:GetObject', Effect: 'Allow', Resource: { 'Fn::Join': ['', [bucketArn, '/models/*']] } },
        {
          Action: 's3:ListBucket',
          Condition: { StringLike: { 's3:prefix': ['models/*'] } },
          Effect: 'Allow',
          Resource: bucketArn,
        },
        {
          Action: ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents', 'logs:DescribeLogStreams'],
          Effect: 'Allow',
          Resource: {
            'Fn::Join': [
              '',
              [
                'arn:',
                { Ref: 'AWS::Partition' },
                ':logs:',
                { Ref: 'AWS::Region' },
                ':',
                { Ref: 'AWS::AccountId' },
                ':log-group:/aws/sagemaker/Endpoints/*',
              ],
            ],
          },
        },
        {
          Action: 'cloudwatch:PutMetricData',
          Condition: { StringLike: { 'cloudwatch:namespace': ['/aws/sagemaker/*', 'AWS/SageMaker'] } },
          Effect: 'Allow',
          Resource: '*',
        },
        {
          Action: ['ecr:BatchCheckLayerAvailability', 'ecr:GetDownloadUrlForLayer', 'ecr:BatchGetImage'],
          Effect: 'Allow',
          Resource: {
            'Fn::Join': [
              '',
              [
                'arn:',
                { Ref: 'AWS::Partition' },
                ':ecr:',
                { Ref: 'AWS::Region' },
                ':',
                { 'Fn::FindInMap': ['TritonImageRegistryMap2409', { Ref: 'AWS::Region' }, 'account'] },
                ':repository/sagemaker-tritonserver',
              ],
            ],
          },
        },
        { Action: 'ecr:GetAuthorizationToken', Effect: 'Allow', Resource: '*' },
      ]),
    );
  });

  it('creates the model only after the role policy exists', () => {
    const [model] = Object.values(template.findResources('AWS::SageMaker::Model')) as Array<{ DependsOn: string[] }>;
    const [policyId] = Object.keys(template.findResources('AWS::IAM::Policy'));
    expect(model.DependsOn).toContain(policyId);
  });
});

describe('TritonMultiModelEndpoint in a concrete region', () => {
  it('uses the literal image URI and no mapping', () => {
    const template = Template.fromStack(stackWith({}, 'eu-west-1').stack);
    template.hasResourceProperties('AWS::SageMaker::Model', {
      PrimaryContainer: { Image: '763104351884.dkr.ecr.eu-west-1.amazonaws.com/sagemaker-tritonserver:24.09-py3' },
    });
    expect(template.toJSON().Mappings).toBeUndefined();
  });

  it('uses the amazonaws.com.cn domain in China', () => {
    const { endpoint, stack } = stackWith({}, 'cn-north-1');
    const model = stack.resolve(endpoint.cfnModel.primaryContainer) as { image: string };
    expect(model.image).toBe('727897471807.dkr.ecr.cn-north-1.amazonaws.com.cn/sagemaker-tritonserver:24.09-py3');
  });

  it('fails synth for a region without a known Triton image, naming the known ones', () => {
    expect(() => stackWith({}, 'xx-east-9')).toThrow(
      /No SageMaker Triton image is known for region 'xx-east-9'. Known regions: .*eu-west-1/,
    );
  });
});

describe('TritonMultiModelEndpoint props', () => {
  it('accepts another single-GPU type and sets the name, variant, count, timeouts, cache setting and AMI', () => {
    const { stack } = stackWith({
      instanceType: InstanceType.of('ml.g5.2xlarge'),
      initialInstanceCount: 2,
      endpointName: 'triton-mme',
      variantName: 'Blue',
      containerStartupHealthCheckTimeout: Duration.minutes(20),
      modelDataDownloadTimeout: Duration.seconds(60),
      modelCacheSetting: ModelCacheSetting.DISABLED,
      inferenceAmiVersion: InferenceAmiVersion.AL2_GPU_3_1,
      networkIsolation: true,
    });
    const template = Template.fromStack(stack);
    expect(variant(template)).toMatchObject({
      VariantName: 'Blue',
      InstanceType: 'ml.g5.2xlarge',
      InitialInstanceCount: 2,
      ContainerStartupHealthCheckTimeoutInSeconds: 1200,
      ModelDataDownloadTimeoutInSeconds: 60,
      InferenceAmiVersion: 'al2-ami-sagemaker-inference-gpu-3-1',
    });
    template.hasResourceProperties('AWS::SageMaker::Endpoint', { EndpointName: 'triton-mme' });
    template.hasResourceProperties('AWS::SageMaker::Model', {
      PrimaryContainer: { MultiModelConfig: { ModelCacheSetting: 'Disabled' } },
      EnableNetworkIsolation: true,
    });
    Annotations.fromStack(stack).hasNoWarning('/S/Mme', Match.stringLikeRegexp('initialInstanceCount'));
  });

  it('renders the typed Triton knobs and the raw extra environment', () => {
    const { stack } = stackWith({
      environment: {
        modelNamespacing: false,
        threadCount: 16,
        bufferManagerThreadCount: 4,
        logVerbose: 0,
        logInfo: true,
        logWarning: true,
        logError: true,
        pythonShmDefaultSize: Size.mebibytes(64),
        pythonShmGrowthSize: Size.mebibytes(2),
        modelLoadGpuLimit: 0.8,
        tensorflowVersion: 2,
        inferenceType: TritonInferenceType.INFER,
        additionalArgs: ['--exit-on-error=false', '--log-format=ISO8601'],
        allowMetrics: true,
        metricsPort: 8002,
      },
      extraEnvironment: { MY_SETTING: 'x' },
    });
    Template.fromStack(stack).hasResourceProperties('AWS::SageMaker::Model', {
      PrimaryContainer: {
        Environment: {
          SAGEMAKER_MULTI_MODEL: 'true',
          SAGEMAKER_TRITON_DISABLE_MODEL_NAMESPACING: 'false',
          SAGEMAKER_TRITON_THREAD_COUNT: '16',
          SAGEMAKER_TRITON_BUFFER_MANAGER_THREAD_COUNT: '4',
          SAGEMAKER_TRITON_LOG_VERBOSE: '0',
          SAGEMAKER_TRITON_LOG_INFO: 'true',
          SAGEMAKER_TRITON_LOG_WARNING: 'true',
          SAGEMAKER_TRITON_LOG_ERROR: 'true',
          SAGEMAKER_TRITON_SHM_DEFAULT_BYTE_SIZE: String(64 * 1024 * 1024),
          SAGEMAKER_TRITON_SHM_GROWTH_BYTE_SIZE: String(2 * 1024 * 1024),
          SAGEMAKER_TRITON_MODEL_LOAD_GPU_LIMIT: '0.8',
          SAGEMAKER_TRITON_TENSORFLOW_VERSION: '2',
          SAGEMAKER_TRITON_INFERENCE_TYPE: 'infer',
          SAGEMAKER_TRITON_ADDITIONAL_ARGS: '--exit-on-error=false --log-format=ISO8601',
          SAGEMAKER_TRITON_ALLOW_METRICS: 'true',
          SAGEMAKER_TRITON_METRICS_PORT: '8002',
          MY_SETTING: 'x',
        },
      },
    });
  });

  it('warns that SAGEMAKER_TRITON_DEFAULT_MODEL_NAME is ignored on an MME', () => {
    const { stack } = stackWith({ initialInstanceCount: 2, extraEnvironment: { SAGEMAKER_TRITON_DEFAULT_MODEL_NAME: 'ensemble' } });
    Annotations.fromStack(stack).hasWarning('/S/Mme', Match.stringLikeRegexp('SAGEMAKER_TRITON_DEFAULT_MODEL_NAME is ignored'));
  });

  it('reads an existing bucket under a normalized prefix and decrypts with its key', () => {
    const app = new App();
    const stack = new Stack(app, 'S');
    const key = new kms.Key(stack, 'Key');
    const bucket = s3.Bucket.fromBucketName(stack, 'Existing', 'my-models');
    const endpoint = new TritonMultiModelEndpoint(stack, 'Mme', {
      modelBucket: bucket,
      modelPrefix: 'team/a',
      modelBucketEncryptionKey: key,
    });
    expect(endpoint.prefix).toBe('team/a/');
    expect(stack.resolve(endpoint.modelDataUrl)).toBe('s3://my-models/team/a/');
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::S3::Bucket', 0);
    const statements = (
      Object.values(template.findResources('AWS::IAM::Policy'))[0] as {
        Properties: { PolicyDocument: { Statement: Array<{ Action: unknown; Resource: unknown }> } };
      }
    ).Properties.PolicyDocument.Statement;
    expect(statements).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          Action: 's3:GetObject',
          Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::my-models/team/a/*']] },
        }),
        expect.objectContaining({ Action: 'kms:Decrypt', Resource: { 'Fn::GetAtt': [expect.stringMatching(/^Key/), 'Arn'] } }),
      ]),
    );
  });

  it('encrypts a new bucket with the given KMS key', () => {
    const app = new App();
    const stack = new Stack(app, 'S');
    new TritonMultiModelEndpoint(stack, 'Mme', { modelBucketEncryptionKey: new kms.Key(stack, 'Key') });
    Template.fromStack(stack).hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          { BucketKeyEnabled: true, ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: Match.anyValue() } },
        ],
      },
    });
  });

  it('serves models from the bucket root for an empty prefix', () => {
    const { endpoint, stack } = stackWith({ modelPrefix: '' });
    expect(endpoint.prefix).toBe('');
    expect(stack.resolve(endpoint.modelDataUrl)).toEqual({ 'Fn::Join': ['', ['s3://', { Ref: expect.any(String) }, '/']] });
  });

  it('sets the EBS volume size and key on an EBS-only type (p3.2xlarge)', () => {
    const app = new App();
    const stack = new Stack(app, 'S');
    const key = new kms.Key(stack, 'VolumeKey');
    new TritonMultiModelEndpoint(stack, 'Mme', {
      instanceType: InstanceType.of('ml.p3.2xlarge'),
      volumeSize: Size.gibibytes(100),
      volumeEncryptionKey: key,
    });
    const template = Template.fromStack(stack);
    expect(variant(template)).toMatchObject({ VolumeSizeInGB: 100 });
    template.hasResourceProperties('AWS::SageMaker::EndpointConfig', {
      KmsKeyId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^VolumeKey'), 'Arn'] },
    });
  });

  it('runs in a VPC with a new security group and the ENI permissions', () => {
    const app = new App();
    const stack = new Stack(app, 'S');
    const vpc = ec2.Vpc.fromVpcAttributes(stack, 'Vpc', {
      vpcId: 'vpc-0a1b2c3d',
      availabilityZones: ['eu-west-1a', 'eu-west-1b'],
      privateSubnetIds: ['subnet-0aaa1111', 'subnet-0bbb2222'],
    });
    const endpoint = new TritonMultiModelEndpoint(stack, 'Mme', { vpc });
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::SageMaker::Model', {
      VpcConfig: {
        Subnets: ['subnet-0aaa1111', 'subnet-0bbb2222'],
        SecurityGroupIds: [{ 'Fn::GetAtt': [Match.stringLikeRegexp('^MmeSecurityGroup'), 'GroupId'] }],
      },
    });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Action: Match.arrayWith(['ec2:CreateNetworkInterface', 'ec2:DescribeSubnets']), Resource: '*' }),
        ]),
      },
    });
    expect(endpoint.connections.securityGroups).toHaveLength(1);
  });

  it('uses given security groups and subnets', () => {
    const app = new App();
    const stack = new Stack(app, 'S');
    const vpc = ec2.Vpc.fromVpcAttributes(stack, 'Vpc', {
      vpcId: 'vpc-0a1b2c3d',
      availabilityZones: ['a', 'b'],
      privateSubnetIds: ['subnet-0aaa1111', 'subnet-0bbb2222'],
      publicSubnetIds: ['subnet-0ccc3333', 'subnet-0ddd4444'],
    });
    const sg = ec2.SecurityGroup.fromSecurityGroupId(stack, 'Sg', 'sg-0123abcd');
    new TritonMultiModelEndpoint(stack, 'Mme', { vpc, vpcSubnets: { subnetType: ec2.SubnetType.PUBLIC }, securityGroups: [sg] });
    Template.fromStack(stack).hasResourceProperties('AWS::SageMaker::Model', {
      VpcConfig: { Subnets: ['subnet-0ccc3333', 'subnet-0ddd4444'], SecurityGroupIds: ['sg-0123abcd'] },
    });
  });

  it('tags every resource', () => {
    const { stack } = stackWith({ tags: { team: 'ml' } });
    const template = Template.fromStack(stack);
    for (const type of [
      'AWS::SageMaker::Model',
      'AWS::SageMaker::EndpointConfig',
      'AWS::SageMaker::Endpoint',
      'AWS::IAM::Role',
      'AWS::S3::Bucket',
    ]) {
      template.hasResourceProperties(type, { Tags: Match.arrayWith([{ Key: 'team', Value: 'ml' }]) });
    }
  });

  it('grants InvokeEndpoint on this endpoint only', () => {
    const { stack, endpoint } = stackWith();
    const role = new iam.Role(stack, 'Caller', { assumedBy: new iam.AccountRootPrincipal() });
    endpoint.grantInvoke(role);
    Template.fromStack(stack).hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: Match.stringLikeRegexp('^Caller') }],
      PolicyDocument: {
        Statement: [{ Action: 'sagemaker:InvokeEndpoint', Effect: 'Allow', Resource: { Ref: Match.stringLikeRegexp('^MmeEndpoint') } }],
      },
    });
  });
});

describe('TritonMultiModelEndpoint grants, removal and the bucket lifecycle', () => {
  it('grants InvokeEndpoint for given TargetModels only, with the sagemaker:TargetModel condition', () => {
    const { stack, endpoint } = stackWith();
    const role = new iam.Role(stack, 'Caller', { assumedBy: new iam.AccountRootPrincipal() });
    endpoint.grantInvoke(role, { targetModels: ['resnet-3f9a0c1b2d4e.tar.gz', 'bert-*'] });
    Template.fromStack(stack).hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: Match.stringLikeRegexp('^Caller') }],
      PolicyDocument: {
        Statement: [
          {
            Action: 'sagemaker:InvokeEndpoint',
            Effect: 'Allow',
            Resource: { Ref: Match.stringLikeRegexp('^MmeEndpoint') },
            Condition: { StringLike: { 'sagemaker:TargetModel': ['resnet-3f9a0c1b2d4e.tar.gz', 'bert-*'] } },
          },
        ],
      },
    });
    expect(() => endpoint.grantInvoke(role, { targetModels: [] })).toThrow(
      'grantInvoke on S/Mme: targetModels is empty; leave it out to allow every TargetModel.',
    );
  });

  it('applies a removal policy to the model, the configuration and the endpoint instead of throwing', () => {
    const { stack, endpoint } = stackWith();
    endpoint.applyRemovalPolicy(RemovalPolicy.RETAIN);
    const resources = Template.fromStack(stack).toJSON().Resources as Record<string, { Type: string; DeletionPolicy?: string }>;
    const policies = Object.values(resources)
      .filter((r) => r.Type.startsWith('AWS::SageMaker::'))
      .map((r) => [r.Type, r.DeletionPolicy]);
    expect(policies.sort()).toEqual([
      ['AWS::SageMaker::Endpoint', 'Retain'],
      ['AWS::SageMaker::EndpointConfig', 'Retain'],
      ['AWS::SageMaker::Model', 'Retain'],
    ]);
  });

  it('retains the bucket it creates by default, and empties and deletes it when told to', () => {
    const bucketOf = (stack: Stack) =>
      Object.values(Template.fromStack(stack).toJSON().Resources as Record<string, { Type: string; DeletionPolicy?: string }>).find(
        (r) => r.Type === 'AWS::S3::Bucket',
      )!;
    expect(bucketOf(stackWith().stack).DeletionPolicy).toBe('Retain');
    const { stack } = stackWith({ modelBucketRemovalPolicy: RemovalPolicy.DESTROY, modelBucketAutoDeleteObjects: true });
    expect(bucketOf(stack).DeletionPolicy).toBe('Delete');
    Template.fromStack(stack).resourceCountIs('Custom::S3AutoDeleteObjects', 1);
    expect(() => stackWith({ modelBucketAutoDeleteObjects: true })).toThrow(
      /modelBucketAutoDeleteObjects needs modelBucketRemovalPolicy: RemovalPolicy\.DESTROY\./,
    );
    const other = new Stack(new App(), 'O');
    expect(() =>
      stackWith({ modelBucket: s3.Bucket.fromBucketName(other, 'B', 'mine'), modelBucketRemovalPolicy: RemovalPolicy.DESTROY }),
    ).toThrow(/apply to the bucket the endpoint creates, not to modelBucket/);
  });

  it('bounds noncurrent versions of the new bucket as configured, and refuses what S3 would', () => {
    const { stack } = stackWith({
      modelBucketNoncurrentVersionExpiration: Duration.days(7),
      modelBucketNoncurrentVersionsToRetain: 2,
    });
    Template.fromStack(stack).hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: [
          Match.objectLike({ Id: 'ArchiveVersions', NoncurrentVersionExpiration: { NoncurrentDays: 7, NewerNoncurrentVersions: 2 } }),
        ],
      },
    });
    let message = '';
    try {
      stackWith({ modelBucketNoncurrentVersionExpiration: Duration.hours(12), modelBucketNoncurrentVersionsToRetain: 0 });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('modelBucketNoncurrentVersionExpiration must be a whole number of days, at least 1; got 12 hours.');
    expect(message).toContain('modelBucketNoncurrentVersionsToRetain must be a whole number from 1 to 100, got 0.');
    const other = new Stack(new App(), 'O');
    expect(() =>
      stackWith({ modelBucket: s3.Bucket.fromBucketName(other, 'B', 'mine'), modelBucketNoncurrentVersionExpiration: Duration.days(3) }),
    ).toThrow(/apply to the bucket the endpoint creates; give modelBucket's own lifecycle rules instead/);
  });
});

describe('TritonMultiModelEndpoint synth-time errors', () => {
  const allowed = /Allowed: ml\.g4dn\.xlarge, .*ml\.p2\.xlarge\./;

  it('rejects a multi-GPU type, naming the allowed ones', () => {
    expect(() => stackWith({ instanceType: InstanceType.of('ml.g4dn.12xlarge') })).toThrow(
      /'ml.g4dn.12xlarge' \(4 × NVIDIA T4\) is not in AWS's list of GPU instance types for multi-model endpoints \(https:\/\/docs\.aws/,
    );
    expect(() => stackWith({ instanceType: InstanceType.of('ml.g4dn.12xlarge') })).toThrow(allowed);
  });

  it('rejects a CPU type and a type AWS does not list for GPU MMEs', () => {
    expect(() => stackWith({ instanceType: InstanceType.of('ml.m5.xlarge') })).toThrow(
      /'ml.m5.xlarge' is not a GPU instance type of a GPU multi-model endpoint/,
    );
    expect(() => stackWith({ instanceType: InstanceType.of('g4dn.xlarge') })).toThrow(/'g4dn.xlarge' is not a GPU instance type/);
    expect(() => stackWith({ instanceType: InstanceType.of('ml.g6.xlarge') })).toThrow(
      /'ml.g6.xlarge' \(1 × NVIDIA L4\) is not in AWS's list of GPU instance types for multi-model endpoints/,
    );
  });

  it('rejects a volume size and a volume key on NVMe instances, pointing to SSE-KMS on the bucket', () => {
    const app = new App();
    const stack = new Stack(app, 'S');
    expect(
      () =>
        new TritonMultiModelEndpoint(stack, 'Mme', {
          instanceType: InstanceType.of('ml.g4dn.2xlarge'),
          volumeSize: Size.gibibytes(50),
          volumeEncryptionKey: new kms.Key(stack, 'K'),
        }),
    ).toThrow(
      new RegExp(
        /volumeSize is not allowed: ml.g4dn.2xlarge has a 225 GB local NVMe instance store[\s\S]*/.source +
          /volumeEncryptionKey is not allowed: .*rejects KmsKeyId[\s\S]*modelBucketEncryptionKey/.source,
      ),
    );
  });

  it('rejects an EBS volume size outside 1–512 GiB', () => {
    expect(() => stackWith({ instanceType: InstanceType.of('ml.p3.2xlarge'), volumeSize: Size.gibibytes(600) })).toThrow(
      /volumeSize must be a whole number of GiB from 1 to 512, got 600/,
    );
  });

  it('rejects timeouts outside 60–3600 s', () => {
    expect(() =>
      stackWith({ containerStartupHealthCheckTimeout: Duration.seconds(30), modelDataDownloadTimeout: Duration.hours(2) }),
    ).toThrow(
      new RegExp(
        /containerStartupHealthCheckTimeout must be a whole number of seconds from 60 to 3600, got 30 seconds[\s\S]*/.source +
          /modelDataDownloadTimeout .* got 2 hours/.source,
      ),
    );
  });

  it('rejects a bad instance count, endpoint name and prefix, all in one error', () => {
    let message = '';
    try {
      stackWith({ initialInstanceCount: 0, endpointName: 'bad_name', modelPrefix: '/models/../x' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/^Invalid TritonMultiModelEndpoint props \(S\/Mme\):/);
    expect(message).toContain('initialInstanceCount must be a whole number of at least 1, got 0.');
    expect(message).toContain("endpointName 'bad_name' is invalid");
    expect(message).toContain("modelPrefix '/models/../x' must not start with '/'");
    expect(message).toContain("must not contain '.' or '..' segments");
  });

  it('rejects invalid Triton knobs', () => {
    expect(() =>
      stackWith({
        environment: {
          threadCount: 0,
          logVerbose: -1,
          pythonShmDefaultSize: Size.kibibytes(1023),
          modelLoadGpuLimit: 1.5,
          metricsPort: 70000,
        },
      }),
    ).toThrow(
      new RegExp(
        /threadCount must be a positive integer[\s\S]*logVerbose must be an integer of 0 or more[\s\S]*/.source +
          /at least 1 MiB[\s\S]*0 < f ≤ 1, got 1.5[\s\S]*metricsPort must be a TCP port/.source,
      ),
    );
  });

  it('rejects an extra variable that repeats a typed knob or turns multi-model mode off', () => {
    expect(() =>
      stackWith({
        environment: { threadCount: 4 },
        extraEnvironment: { SAGEMAKER_TRITON_THREAD_COUNT: '8', SAGEMAKER_MULTI_MODEL: 'false' },
      }),
    ).toThrow(/extraEnvironment.SAGEMAKER_TRITON_THREAD_COUNT repeats a variable[\s\S]*SAGEMAKER_MULTI_MODEL must stay "true"/);
  });

  it('reports an image problem together with the other problems', () => {
    expect(() => stackWith({ instanceType: InstanceType.of('ml.m5.xlarge') }, 'xx-east-9')).toThrow(
      /'ml.m5.xlarge' is not a GPU instance type[\s\S]*No SageMaker Triton image is known for region 'xx-east-9'/,
    );
  });

  it('rejects subnets or security groups without a VPC', () => {
    expect(() => stackWith({ vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_ISOLATED } })).toThrow(
      /vpcSubnets and securityGroups need vpc/,
    );
  });

  it('has no connections without a VPC', () => {
    expect(() => stackWith().endpoint.connections).toThrow(/has no VPC/);
  });
});
