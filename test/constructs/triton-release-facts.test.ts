import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import {
  InferenceAmiVersion,
  InstanceType,
  TritonImage,
  TritonInferenceType,
  TritonMultiModelEndpoint,
  TritonMultiModelEndpointProps,
} from '../../constructs';

function synth(props: TritonMultiModelEndpointProps, region?: string) {
  const stack = new Stack(new App(), 'S', region ? { env: { region, account: '111122223333' } } : undefined);
  new TritonMultiModelEndpoint(stack, 'Mme', { initialInstanceCount: 2, ...props });
  return stack;
}

describe('facts by Triton release', () => {
  it('refuses p2 (K80, compute capability 3.7) for every release, with the reason', () => {
    expect(() => synth({ instanceType: InstanceType.P2_XLARGE })).toThrow(
      /'ml.p2.xlarge' has an NVIDIA K80 \(CUDA compute capability 3.7\); Triton 24.09 supports compute capability 6.0 and later/,
    );
  });

  it('runs p3 (V100, 7.0) on 24.09 but refuses it on 25.09 (releases from 25.01 need 7.5)', () => {
    expect(() => synth({ instanceType: InstanceType.P3_2XLARGE })).not.toThrow();
    expect(() =>
      synth({
        instanceType: InstanceType.P3_2XLARGE,
        image: TritonImage.fromSageMakerDlc('25.09'),
        inferenceAmiVersion: InferenceAmiVersion.AL2_GPU_3_1,
      }),
    ).toThrow(/Triton 25.09 supports compute capability 7.5 and later .* or a Triton release before 25.01/);
  });

  it('refuses inferenceType generate on an image whose serve does not read it (before 25.03)', () => {
    expect(() => synth({ environment: { inferenceType: TritonInferenceType.GENERATE } })).toThrow(
      new RegExp(
        /environment sets SAGEMAKER_TRITON_INFERENCE_TYPE, which Triton's /.source +
          /SageMaker serve script reads from release 25.03 on; the image is 24.09/.source,
      ),
    );
    const stack = synth({
      environment: { inferenceType: TritonInferenceType.GENERATE },
      image: TritonImage.fromSageMakerDlc('25.04'),
      inferenceAmiVersion: InferenceAmiVersion.AL2_GPU_3_1,
    });
    Template.fromStack(stack).hasResourceProperties('AWS::SageMaker::Model', {
      PrimaryContainer: { Environment: Match.objectLike({ SAGEMAKER_TRITON_INFERENCE_TYPE: 'generate' }) },
    });
  });

  it('only warns about inferenceType infer before 25.03 (that is what the serve does anyway), and about extra variables', () => {
    const stack = synth({
      environment: { inferenceType: TritonInferenceType.INFER },
      extraEnvironment: { SAGEMAKER_TRITON_INFERENCE_TYPE_X: 'y' },
    });
    Annotations.fromStack(stack).hasWarning('/S/Mme', Match.stringLikeRegexp("'infer' is what it does anyway"));
    const extra = synth({
      image: TritonImage.fromEcrRepositoryName('team/triton', '23.05-py3'),
      extraEnvironment: { SAGEMAKER_TRITON_ADDITIONAL_ARGS: '--x' },
    });
    Annotations.fromStack(extra).hasWarning(
      '/S/Mme',
      Match.stringLikeRegexp('extraEnvironment sets SAGEMAKER_TRITON_ADDITIONAL_ARGS.*from release 23.07 on; the image is 23.05'),
    );
  });

  it('checks knobs against the release of a custom image tag too', () => {
    expect(() =>
      synth({ image: TritonImage.fromEcrRepositoryName('team/triton', '23.03-py3'), environment: { modelNamespacing: false } }),
    ).toThrow(
      /SAGEMAKER_TRITON_DISABLE_MODEL_NAMESPACING, which Triton's SageMaker serve script reads from release 23.04 on; the image is 23.03/,
    );
  });

  it('refuses a listed version in a region the SDK does not list it for, naming the versions that region has', () => {
    expect(() => synth({}, 'mx-central-1')).toThrow(
      /The SageMaker Triton image 24.09 is not listed for region 'mx-central-1' .* Versions listed in mx-central-1: 25.04, 25.09, 26.05\./,
    );
    expect(() =>
      synth({ image: TritonImage.fromSageMakerDlc('25.09'), inferenceAmiVersion: InferenceAmiVersion.AL2_GPU_3_1 }, 'cn-north-1'),
    ).toThrow(/Versions listed in cn-north-1: 23.12, 24.01, 24.03, 24.05, 24.09, 25.04\./);
  });

  it('warns on a version the SDK does not list, and maps every known region for it', () => {
    const stack = synth({ image: TritonImage.fromSageMakerDlc('24.07') });
    Annotations.fromStack(stack).hasWarning('/S/Mme', Match.stringLikeRegexp('The SageMaker SDK does not list Triton image 24.07'));
    expect(Object.keys(Template.fromStack(stack).toJSON().Mappings)).toEqual(['TritonImageRegistryMap']);
  });
});

describe('advice for an endpoint in private subnets', () => {
  const warning = (stack: Stack) =>
    Annotations.fromStack(stack).findWarning('/S/Mme', Match.stringLikeRegexp('reaches S3, ECR and CloudWatch'));

  it("names everything an imported VPC's private subnets need, since it cannot be checked", () => {
    const stack = new Stack(new App(), 'S');
    const vpc = ec2.Vpc.fromVpcAttributes(stack, 'Vpc', {
      vpcId: 'vpc-0a1b2c3d',
      availabilityZones: ['a', 'b'],
      privateSubnetIds: ['subnet-0aaa1111', 'subnet-0bbb2222'],
    });
    new TritonMultiModelEndpoint(stack, 'Mme', { vpc, initialInstanceCount: 2 });
    const [found] = warning(stack);
    expect(found!.entry.data).toMatch(
      new RegExp(
        /private subnets .* Missing \(an imported VPC cannot be checked.*\): an S3 gateway endpoint .*/.source +
          /, an ecr.api interface endpoint .*, an ecr.dkr .*, a logs .*, a monitoring .* — or a NAT gateway/.source,
      ),
    );
  });

  it('names only what an isolated VPC built here lacks, and nothing once it has all', () => {
    const stack = new Stack(new App(), 'S');
    const vpc = new ec2.Vpc(stack, 'Vpc', {
      natGateways: 0,
      subnetConfiguration: [{ name: 'iso', subnetType: ec2.SubnetType.PRIVATE_ISOLATED }],
    });
    vpc.addGatewayEndpoint('S3', { service: ec2.GatewayVpcEndpointAwsService.S3 });
    new TritonMultiModelEndpoint(stack, 'Mme', { vpc, initialInstanceCount: 2 });
    vpc.addInterfaceEndpoint('EcrApi', { service: ec2.InterfaceVpcEndpointAwsService.ECR });
    const [found] = warning(stack);
    expect(found!.entry.data).toMatch(
      new RegExp(
        /isolated subnets \(no NAT\).*Missing: an ecr.dkr interface endpoint .*/.source +
          /, a logs .*, a monitoring .*\. \[ack: mme-deploy:vpc-egress\]$/.source,
      ),
    );
    expect(found!.entry.data).not.toMatch(/S3 gateway|ecr.api|NAT gateway for all/);

    const complete = new Stack(new App(), 'S');
    const vpc2 = new ec2.Vpc(complete, 'Vpc', {
      natGateways: 0,
      subnetConfiguration: [{ name: 'iso', subnetType: ec2.SubnetType.PRIVATE_ISOLATED }],
    });
    vpc2.addGatewayEndpoint('S3', { service: ec2.GatewayVpcEndpointAwsService.S3 });
    for (const [id, service] of Object.entries({
      EcrApi: ec2.InterfaceVpcEndpointAwsService.ECR,
      EcrDkr: ec2.InterfaceVpcEndpointAwsService.ECR_DOCKER,
      Logs: ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_LOGS,
      Monitoring: ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_MONITORING,
    })) {
      vpc2.addInterfaceEndpoint(id, { service });
    }
    new TritonMultiModelEndpoint(complete, 'Mme', { vpc: vpc2, initialInstanceCount: 2 });
    expect(warning(complete)).toEqual([]);
  });

  it('stays quiet for private subnets with a NAT gateway and for public subnets', () => {
    const stack = new Stack(new App(), 'S');
    const vpc = new ec2.Vpc(stack, 'Vpc', { natGateways: 1 });
    new TritonMultiModelEndpoint(stack, 'Mme', { vpc, initialInstanceCount: 2 });
    expect(warning(stack)).toEqual([]);
    const pub = new Stack(new App(), 'S');
    const vpc2 = new ec2.Vpc(pub, 'Vpc', { natGateways: 0, subnetConfiguration: [{ name: 'pub', subnetType: ec2.SubnetType.PUBLIC }] });
    new TritonMultiModelEndpoint(pub, 'Mme', { vpc: vpc2, vpcSubnets: { subnetType: ec2.SubnetType.PUBLIC }, initialInstanceCount: 2 });
    expect(warning(pub)).toEqual([]);
  });
});
