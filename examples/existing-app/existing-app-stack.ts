// An application stack that already has a VPC, a KMS-encrypted bucket and a caller role, and adds a Triton GPU
// multi-model endpoint to them with mme-deploy's constructs. Everything external is imported by attributes, so the
// app synthesizes offline (no Vpc.fromLookup).

import { Annotations, Duration, Stack, StackProps } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
// In your own project: import { ... } from 'mme-deploy/constructs';
import { InferenceAmiVersion, InstanceType, TritonImage, TritonMultiModelEndpoint } from '../../constructs';

/** What the existing infrastructure is; the defaults are placeholders for the example. */
export interface ExistingAppStackProps extends StackProps {
  readonly vpcId: string;
  readonly availabilityZones: string[];
  readonly privateSubnetIds: string[];
  readonly privateSubnetRouteTableIds: string[];
  readonly modelBucketName: string;
  readonly modelBucketKeyArn: string;
  /** The role of the service that calls the endpoint (for example a Lambda function's role). */
  readonly callerRoleArn: string;
}

export class ExistingAppStack extends Stack {
  public readonly endpoint: TritonMultiModelEndpoint;

  constructor(scope: Construct, id: string, props: ExistingAppStackProps) {
    super(scope, id, props);

    const vpc = ec2.Vpc.fromVpcAttributes(this, 'Vpc', {
      vpcId: props.vpcId,
      availabilityZones: props.availabilityZones,
      privateSubnetIds: props.privateSubnetIds,
      privateSubnetRouteTableIds: props.privateSubnetRouteTableIds,
    });
    const key = kms.Key.fromKeyArn(this, 'ModelKey', props.modelBucketKeyArn);
    const bucket = s3.Bucket.fromBucketAttributes(this, 'Models', { bucketName: props.modelBucketName, encryptionKey: key });

    this.endpoint = new TritonMultiModelEndpoint(this, 'Recommendations', {
      image: TritonImage.fromSageMakerDlc('24.09'),
      instanceType: InstanceType.G5_XLARGE,
      initialInstanceCount: 2,
      modelBucket: bucket,
      modelPrefix: 'recommendations/',
      vpc,
      inferenceAmiVersion: InferenceAmiVersion.AL2_GPU_2_1,
      containerStartupHealthCheckTimeout: Duration.minutes(15),
      environment: { modelLoadGpuLimit: 0.9 },
      tags: { service: 'recommendations' },
    });

    const scaling = this.endpoint.autoScaleInstanceCount({ minCapacity: 2, maxCapacity: 6 });
    scaling.scaleOnGpuUtilization('Gpu', { targetUtilizationPercent: 60 });
    this.endpoint.addDashboard('Dashboard', { dashboardName: 'recommendations-mme' });

    this.endpoint.grantInvoke(iam.Role.fromRoleArn(this, 'Caller', props.callerRoleArn, { mutable: true }));

    // Synth cannot see an imported VPC's routes, so it warns that private subnets need endpoints or NAT for S3, ECR
    // and CloudWatch. Say why this VPC is fine, once (on the stack: aws-cdk-lib matches acknowledgments made on an
    // ancestor of the construct that warns).
    Annotations.of(this).acknowledgeWarning(
      'mme-deploy:vpc-egress',
      'The private subnets route through the shared NAT gateways of the network account.',
    );
  }
}

/** The placeholder environment the example and its test use. */
export const EXAMPLE_PROPS: ExistingAppStackProps = {
  env: { account: '111122223333', region: 'eu-west-1' },
  vpcId: 'vpc-0a1b2c3d4e5f60718',
  availabilityZones: ['eu-west-1a', 'eu-west-1b'],
  privateSubnetIds: ['subnet-0aaaaaaaaaaaaaaa1', 'subnet-0bbbbbbbbbbbbbbb2'],
  privateSubnetRouteTableIds: ['rtb-0aaaaaaaaaaaaaaa1', 'rtb-0bbbbbbbbbbbbbbb2'],
  modelBucketName: 'acme-ml-models',
  modelBucketKeyArn: 'arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab',
  callerRoleArn: 'arn:aws:iam::111122223333:role/recommendations-api',
};
