// TritonMmeStack: the deployable stack of `cdk deploy` — one Triton GPU multi-model endpoint with GPU autoscaling,
// dashboard and alarms, and (optionally) model repositories packed at synth and uploaded under its prefix.

import { CfnOutput, Duration, FeatureFlags, RemovalPolicy, Stack, StackProps } from 'aws-cdk-lib';
import { S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY } from 'aws-cdk-lib/cx-api';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { ArchiveRetention } from './archive-retention';
import { EndpointDeployment } from './endpoint-deployment';
import { InstanceType } from './instance-type';
import { ModelArchive, ModelRepositorySource } from './model-archive';
import { MultiModelEndpointDashboard } from './multi-model-endpoint-dashboard';
import { ScalableInstanceCount } from './scalable-instance-count';
import { TritonImage } from './triton-image';
import { TritonMultiModelEndpoint } from './triton-multi-model-endpoint';

/** Properties of a TritonMmeStack. */
export interface TritonMmeStackProps extends StackProps {
  /**
   * The Triton container.
   * @default TritonImage.fromSageMakerDlc()
   */
  readonly image?: TritonImage;
  /**
   * The single-GPU instance type.
   * @default InstanceType.G4DN_XLARGE
   */
  readonly instanceType?: InstanceType;
  /**
   * Instances at creation.
   * @default 1
   */
  readonly initialInstanceCount?: number;
  /**
   * The fewest instances autoscaling keeps.
   * @default 1
   */
  readonly minCapacity?: number;
  /**
   * The most instances autoscaling starts.
   * @default 5
   */
  readonly maxCapacity?: number;
  /**
   * Average GPU utilization (%) that autoscaling keeps the endpoint at.
   * @default 60
   */
  readonly gpuUtilizationTarget?: number;
  /**
   * An existing bucket for the model archives.
   * @default - a new bucket (or modelBucketName)
   */
  readonly modelBucket?: s3.IBucket;
  /**
   * The name of an existing bucket for the model archives, imported in the stack.
   * @default - a new bucket
   */
  readonly modelBucketName?: string;
  /**
   * The key prefix of the archives.
   * @default 'models/'
   */
  readonly modelPrefix?: string;
  /**
   * The endpoint name.
   * @default - generated
   */
  readonly endpointName?: string;
  /**
   * How SageMaker rolls out endpoint updates; the dashboard's deployment alarms roll them back.
   * @default - SageMaker's default (blue/green, all at once)
   */
  readonly deployment?: EndpointDeployment;
  /**
   * Model repositories to validate and pack at synth and upload on deploy.
   * @default - none: push archives with `mme-deploy push` instead
   */
  readonly modelRepositories?: Array<string | ModelRepositorySource>;
  /**
   * Which previous versions of the packed archives stay in the bucket after a deployment.
   * @default ArchiveRetention.versions(3)
   */
  readonly archiveRetention?: ArchiveRetention;
  /**
   * Topic for alarm notifications.
   * @default - alarms without actions (or alarmTopicArn)
   */
  readonly alarmTopic?: sns.ITopic;
  /**
   * The ARN of a topic for alarm notifications, imported in the stack.
   * @default - alarms without actions
   */
  readonly alarmTopicArn?: string;
}

/** One GPU multi-model endpoint with autoscaling on GPU utilization, a dashboard, alarms and its models. */
export class TritonMmeStack extends Stack {
  public readonly endpoint: TritonMultiModelEndpoint;
  public readonly scaling: ScalableInstanceCount;
  public readonly dashboard: MultiModelEndpointDashboard;
  public readonly models?: ModelArchive;

  constructor(scope: Construct, id: string, props: TritonMmeStackProps = {}) {
    super(scope, id, {
      description: 'mme-deploy: NVIDIA Triton on a SageMaker GPU multi-model endpoint',
      ...props,
    });

    const modelBucket =
      props.modelBucket ??
      (props.modelBucketName ? s3.Bucket.fromBucketName(this, 'ModelBucket', props.modelBucketName) : undefined);
    this.endpoint = new TritonMultiModelEndpoint(this, 'Endpoint', {
      serverAccessLogsBucket: modelBucket ? undefined : this.createAccessLogsBucket(),
      image: props.image,
      instanceType: props.instanceType,
      initialInstanceCount: props.initialInstanceCount,
      modelBucket,
      modelPrefix: props.modelPrefix,
      endpointName: props.endpointName,
      deployment: props.deployment,
    });
    this.scaling = this.endpoint.autoScaleInstanceCount({
      minCapacity: props.minCapacity ?? 1,
      maxCapacity: props.maxCapacity ?? 5,
    });
    this.scaling.scaleOnGpuUtilization('GpuUtilization', { targetUtilizationPercent: props.gpuUtilizationTarget ?? 60 });
    this.dashboard = this.endpoint.addDashboard('Dashboard', {
      alarmTopic:
        props.alarmTopic ?? (props.alarmTopicArn ? sns.Topic.fromTopicArn(this, 'AlarmTopic', props.alarmTopicArn) : undefined),
    });

    if (props.modelRepositories && props.modelRepositories.length > 0) {
      this.models = new ModelArchive(this, 'Models', {
        repositories: props.modelRepositories,
        bucket: this.endpoint.bucket,
        prefix: this.endpoint.prefix,
        retention: props.archiveRetention,
        output: false,
      });
      new CfnOutput(this, 'TargetModels', {
        value: this.models.targetModels.join(','),
        description: 'TargetModel names to invoke',
      });
      if (this.models.retention) {
        new CfnOutput(this, 'ArchiveCleanup', {
          value: this.models.retention.getAttString('Problems'),
          description: 'What the archive retention could not do at the last deployment',
        });
      }
    }

    new CfnOutput(this, 'EndpointName', { value: this.endpoint.endpointName });
    new CfnOutput(this, 'DashboardName', { value: this.dashboard.dashboard.dashboardName });
    new CfnOutput(this, 'ModelDataUrl', { value: this.endpoint.modelDataUrl });
    new CfnOutput(this, 'ModelBucketName', { value: this.endpoint.bucket.bucketName });
  }

  /** The bucket receiving the new model bucket's server access logs (who read or wrote which archive). */
  private createAccessLogsBucket(): s3.Bucket {
    const logs = new s3.Bucket(this, 'AccessLogs', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: s3.BucketEncryption.S3_MANAGED, // S3 log delivery cannot write to SSE-KMS buckets
      // With the bucket-policy feature flag S3 log delivery needs no ACLs; without it CDK grants LogDeliveryWrite,
      // which needs ObjectWriter ownership.
      objectOwnership: FeatureFlags.of(this).isEnabled(S3_SERVER_ACCESS_LOGS_USE_BUCKET_POLICY)
        ? s3.ObjectOwnership.BUCKET_OWNER_ENFORCED
        : s3.ObjectOwnership.OBJECT_WRITER,
      lifecycleRules: [{ expiration: Duration.days(365) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    return logs;
  }
}
