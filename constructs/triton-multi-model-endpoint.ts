// TritonMultiModelEndpoint: a SageMaker GPU multi-model endpoint running NVIDIA Triton — execution role, model
// (Mode MultiModel over an S3 prefix), endpoint config and endpoint — with its metrics, grants and autoscaling.

import {
  Annotations,
  ArnFormat,
  Duration,
  IResource,
  Resource,
  Size,
  SizeRoundingBehavior,
  Stack,
  Tags,
  Token,
  Validations,
} from 'aws-cdk-lib';
import * as appscaling from 'aws-cdk-lib/aws-applicationautoscaling';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sagemaker from 'aws-cdk-lib/aws-sagemaker';
import { Construct } from 'constructs';
import { findInstanceType, mmeInstanceTypeNames } from '../lib/catalog/instance-types';
import { DEFAULT_TRITON_VERSION } from '../lib/catalog/triton-images';
import { nagText } from './nag-finding';
import { MultiModelEndpointDashboard, MultiModelEndpointDashboardProps } from './multi-model-endpoint-dashboard';
import { ScalableInstanceCount } from './scalable-instance-count';
import { TritonEnvironment, renderTritonEnvironment } from './triton-environment';
import { TritonImage, TritonImageConfig } from './triton-image';

/** The SageMaker CloudWatch namespace of invocation and model-loading metrics. */
export const SAGEMAKER_NAMESPACE = 'AWS/SageMaker';
/** The CloudWatch namespace of per-instance metrics (utilization, loaded models). */
export const ENDPOINT_INSTANCE_NAMESPACE = '/aws/sagemaker/Endpoints';

/** Whether a multi-model endpoint keeps models it has loaded (`MultiModelConfig.ModelCacheSetting`). */
export enum ModelCacheSetting {
  /** Keep loaded models until memory or disk runs short (SageMaker's default). */
  ENABLED = 'Enabled',
  /** Load on every invocation: for many models each invoked rarely. Changing it replaces the model. */
  DISABLED = 'Disabled',
}

/** The GPU driver image of the endpoint's instances (`ProductionVariant.InferenceAmiVersion`). */
export class InferenceAmiVersion {
  /** Driver 535, CUDA 12.2. */
  public static readonly AL2_GPU_2 = new InferenceAmiVersion('al2-ami-sagemaker-inference-gpu-2');
  /** Driver 535, CUDA 12.2. */
  public static readonly AL2_GPU_2_1 = new InferenceAmiVersion('al2-ami-sagemaker-inference-gpu-2-1');
  /** Driver 550, CUDA 12.4. */
  public static readonly AL2_GPU_3_1 = new InferenceAmiVersion('al2-ami-sagemaker-inference-gpu-3-1');
  /** A version this class does not name yet. */
  public static of(version: string): InferenceAmiVersion {
    return new InferenceAmiVersion(version);
  }
  private constructor(public readonly version: string) {}
}

/** A GPU multi-model endpoint, created here or imported. */
export interface IMultiModelEndpoint extends IResource {
  /** @attribute */
  readonly endpointName: string;
  /** @attribute */
  readonly endpointArn: string;
  /** The production variant the metrics and autoscaling refer to. */
  readonly variantName: string;
  /** Lets `grantee` call InvokeEndpoint on this endpoint. */
  grantInvoke(grantee: iam.IGrantable): iam.Grant;
  /** A metric of this endpoint's variant (dimensions EndpointName and VariantName). */
  metric(namespace: string, metricName: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricGpuUtilization(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricGpuMemoryUtilization(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricCpuUtilization(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricMemoryUtilization(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricDiskUtilization(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricLoadedModelCount(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricModelLoadingWaitTime(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricModelLoadingTime(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricModelUnloadingTime(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricModelDownloadingTime(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricModelCacheHit(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricInvocations(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricInvocationsPerInstance(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricModelLatency(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricOverheadLatency(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricInvocation4XXErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  metricInvocation5XXErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
}

/** What `fromEndpointName` needs besides the name. */
export interface MultiModelEndpointImportOptions {
  /**
   * The production variant to watch.
   * @default 'AllTraffic'
   */
  readonly variantName?: string;
}

/** Metrics and grants shared by created and imported endpoints. */
abstract class MultiModelEndpointBase extends Resource implements IMultiModelEndpoint {
  public abstract readonly endpointName: string;
  public abstract readonly endpointArn: string;
  public abstract readonly variantName: string;

  public grantInvoke(grantee: iam.IGrantable): iam.Grant {
    return iam.Grant.addToPrincipal({ grantee, actions: ['sagemaker:InvokeEndpoint'], resourceArns: [this.endpointArn] });
  }

  public metric(namespace: string, metricName: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace,
      metricName,
      dimensionsMap: { EndpointName: this.endpointName, VariantName: this.variantName },
      ...props,
    }).attachTo(this);
  }

  /** Percent of the instance's GPU in use (average over instances). */
  public metricGpuUtilization(props?: cloudwatch.MetricOptions) {
    return this.utilization('GPUUtilization', props);
  }
  /** Percent of GPU memory in use; models stay loaded until it runs short. */
  public metricGpuMemoryUtilization(props?: cloudwatch.MetricOptions) {
    return this.utilization('GPUMemoryUtilization', props);
  }
  public metricCpuUtilization(props?: cloudwatch.MetricOptions) {
    return this.utilization('CPUUtilization', props);
  }
  public metricMemoryUtilization(props?: cloudwatch.MetricOptions) {
    return this.utilization('MemoryUtilization', props);
  }
  /** Percent of the instance's disk in use; the MME model cache lives there. */
  public metricDiskUtilization(props?: cloudwatch.MetricOptions) {
    return this.utilization('DiskUtilization', props);
  }
  /** Models loaded in the container, per instance (average). */
  public metricLoadedModelCount(props?: cloudwatch.MetricOptions) {
    return this.metric(ENDPOINT_INSTANCE_NAMESPACE, 'LoadedModelCount', { statistic: 'Average', ...props });
  }
  /** Time an invocation waited for its model to be downloaded and loaded (microseconds, average). */
  public metricModelLoadingWaitTime(props?: cloudwatch.MetricOptions) {
    return this.microseconds('ModelLoadingWaitTime', props);
  }
  /** Time Triton took to load a model (microseconds, average). */
  public metricModelLoadingTime(props?: cloudwatch.MetricOptions) {
    return this.microseconds('ModelLoadingTime', props);
  }
  /** Time Triton took to unload a model (microseconds, average). */
  public metricModelUnloadingTime(props?: cloudwatch.MetricOptions) {
    return this.microseconds('ModelUnloadingTime', props);
  }
  /** Time taken to download a model archive from S3 (microseconds, average). */
  public metricModelDownloadingTime(props?: cloudwatch.MetricOptions) {
    return this.microseconds('ModelDownloadingTime', props);
  }
  /** Invocations whose model was already loaded; the default Average statistic is the cache-hit ratio (0–1). */
  public metricModelCacheHit(props?: cloudwatch.MetricOptions) {
    return this.metric(SAGEMAKER_NAMESPACE, 'ModelCacheHit', { statistic: 'Average', ...props });
  }
  public metricInvocations(props?: cloudwatch.MetricOptions) {
    return this.count('Invocations', props);
  }
  public metricInvocationsPerInstance(props?: cloudwatch.MetricOptions) {
    return this.count('InvocationsPerInstance', props);
  }
  /** Time the container took to answer (microseconds, average). */
  public metricModelLatency(props?: cloudwatch.MetricOptions) {
    return this.microseconds('ModelLatency', props);
  }
  /** Time SageMaker added around the container (microseconds, average). */
  public metricOverheadLatency(props?: cloudwatch.MetricOptions) {
    return this.microseconds('OverheadLatency', props);
  }
  public metricInvocation4XXErrors(props?: cloudwatch.MetricOptions) {
    return this.count('Invocation4XXErrors', props);
  }
  public metricInvocation5XXErrors(props?: cloudwatch.MetricOptions) {
    return this.count('Invocation5XXErrors', props);
  }

  private utilization(metricName: string, props?: cloudwatch.MetricOptions) {
    return this.metric(ENDPOINT_INSTANCE_NAMESPACE, metricName, {
      statistic: 'Average',
      unit: cloudwatch.Unit.PERCENT,
      ...props,
    });
  }
  private microseconds(metricName: string, props?: cloudwatch.MetricOptions) {
    return this.metric(SAGEMAKER_NAMESPACE, metricName, { statistic: 'Average', ...props });
  }
  private count(metricName: string, props?: cloudwatch.MetricOptions) {
    return this.metric(SAGEMAKER_NAMESPACE, metricName, { statistic: 'Sum', ...props });
  }
}

/** Properties of a TritonMultiModelEndpoint. */
export interface TritonMultiModelEndpointProps {
  /**
   * The Triton container.
   * @default TritonImage.fromSageMakerDlc() - the pinned SageMaker Triton image, which runs on g4dn
   */
  readonly image?: TritonImage;
  /**
   * The instance type: only the single-GPU types AWS lists for GPU multi-model endpoints (mmeInstanceTypeNames()).
   * @default 'ml.g4dn.xlarge'
   */
  readonly instanceType?: string;
  /**
   * Instances at creation (and the count autoscaling starts from). Fewer than 2 leaves no spare instance in another
   * Availability Zone; synth warns.
   * @default 1
   */
  readonly initialInstanceCount?: number;
  /**
   * The bucket holding the model archives.
   * @default - a new bucket: public access blocked, TLS only, encrypted, versioned, retained on stack deletion
   */
  readonly modelBucket?: s3.IBucket;
  /**
   * The key prefix under which the `<name>.tar.gz` archives live; the endpoint's ModelDataUrl is `s3://bucket/prefix`
   * and an invocation's TargetModel is the key relative to it. A missing trailing `/` is added.
   * @default 'models/'
   */
  readonly modelPrefix?: string;
  /**
   * The KMS key of the model bucket: the new bucket is encrypted with it (SSE-KMS), and the role may decrypt with it.
   * @default - the new bucket uses SSE-S3; an imported bucket's own `encryptionKey`, if any
   */
  readonly modelBucketEncryptionKey?: kms.IKey;
  /**
   * Where the new model bucket writes its server access logs.
   * @default - no access logs
   */
  readonly serverAccessLogsBucket?: s3.IBucket;
  /** Typed Triton server settings. @default - the image's defaults */
  readonly environment?: TritonEnvironment;
  /**
   * More container environment variables, as given. A key may not repeat one the typed `environment` sets.
   * @default - none
   */
  readonly extraEnvironment?: Record<string, string>;
  /** @default - SageMaker's default, ModelCacheSetting.ENABLED */
  readonly modelCacheSetting?: ModelCacheSetting;
  /**
   * The GPU driver image. g4dn's default driver is 470 (CUDA 11.4); newer Triton images may need a newer one.
   * @default - SageMaker's default for the instance type
   */
  readonly inferenceAmiVersion?: InferenceAmiVersion;
  /**
   * How long SageMaker waits for Triton to start and answer /ping (60–3600 s).
   * @default Duration.minutes(10)
   */
  readonly containerStartupHealthCheckTimeout?: Duration;
  /**
   * How long SageMaker may take to download model data to an instance (60–3600 s).
   * @default Duration.minutes(10)
   */
  readonly modelDataDownloadTimeout?: Duration;
  /**
   * EBS volume per instance (1–512 GiB). Not allowed on instance types with NVMe instance storage (g4dn, g5, g6):
   * CreateEndpointConfig rejects it.
   * @default - SageMaker's default
   */
  readonly volumeSize?: Size;
  /**
   * KMS key of the instances' EBS volumes. Not allowed on instance types with NVMe instance storage: encrypt the
   * model bucket with SSE-KMS (`modelBucketEncryptionKey`) instead.
   * @default - AWS-managed encryption
   */
  readonly volumeEncryptionKey?: kms.IKey;
  /** Run the model in this VPC. @default - no VPC */
  readonly vpc?: ec2.IVpc;
  /** @default - the VPC's private subnets */
  readonly vpcSubnets?: ec2.SubnetSelection;
  /** @default - one new security group allowing all outbound traffic */
  readonly securityGroups?: ec2.ISecurityGroup[];
  /**
   * Cut the container off the network. SageMaker still downloads archives; Python models that fetch from the
   * internet at load time fail.
   * @default false
   */
  readonly networkIsolation?: boolean;
  /** @default - a name CloudFormation generates */
  readonly endpointName?: string;
  /** @default 'AllTraffic' */
  readonly variantName?: string;
  /** Tags for every resource of the construct. @default - none */
  readonly tags?: Record<string, string>;
}

/** The CfnEndpoint limit on endpoint names. */
const ENDPOINT_NAME = /^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$/;

/**
 * A SageMaker GPU multi-model endpoint serving NVIDIA Triton ensembles from `<bucket>/<prefix><name>.tar.gz`.
 */
export class TritonMultiModelEndpoint extends MultiModelEndpointBase implements ec2.IConnectable {
  /** Imports an existing endpoint to watch it or grant invocations. */
  public static fromEndpointName(
    scope: Construct,
    id: string,
    endpointName: string,
    options: MultiModelEndpointImportOptions = {},
  ): IMultiModelEndpoint {
    class Import extends MultiModelEndpointBase {
      public readonly endpointName = endpointName;
      public readonly variantName = options.variantName ?? 'AllTraffic';
      // SageMaker ARNs carry the endpoint name in lower case.
      public readonly endpointArn = Stack.of(scope).formatArn({
        service: 'sagemaker',
        resource: 'endpoint',
        resourceName: Token.isUnresolved(endpointName) ? endpointName : endpointName.toLowerCase(),
      });
    }
    return new Import(scope, id);
  }

  public readonly endpointName: string;
  public readonly endpointArn: string;
  public readonly variantName: string;
  /** `s3://<bucket>/<prefix>`, the model's ModelDataUrl. */
  public readonly modelDataUrl: string;
  public readonly bucket: s3.IBucket;
  /** The key prefix of the archives, ending in `/` (or empty for the bucket root). */
  public readonly prefix: string;
  /** The role SageMaker runs the model with. */
  public readonly role: iam.Role;
  public readonly instanceType: string;
  public readonly initialInstanceCount: number;
  /** The Triton release of the image, when known. */
  public readonly tritonVersion?: string;
  public readonly cfnModel: sagemaker.CfnModel;
  public readonly cfnEndpointConfig: sagemaker.CfnEndpointConfig;
  public readonly cfnEndpoint: sagemaker.CfnEndpoint;
  private readonly _connections?: ec2.Connections;
  private scalableInstanceCount?: ScalableInstanceCount;

  constructor(scope: Construct, id: string, props: TritonMultiModelEndpointProps = {}) {
    super(scope, id, { physicalName: props.endpointName });
    const errors: string[] = [];

    this.instanceType = props.instanceType ?? 'ml.g4dn.xlarge';
    const instance = checkInstanceType(this.instanceType, errors);
    this.initialInstanceCount = props.initialInstanceCount ?? 1;
    if (!Number.isInteger(this.initialInstanceCount) || this.initialInstanceCount < 1) {
      errors.push(`initialInstanceCount must be a whole number of at least 1, got ${this.initialInstanceCount}.`);
    } else if (this.initialInstanceCount < 2) {
      Annotations.of(this).addWarningV2(
        'mme-deploy:single-instance',
        `initialInstanceCount is ${this.initialInstanceCount}: one instance means no spare in another Availability ` +
          'Zone and downtime while it is replaced; 2 or more is recommended for production.',
      );
    }
    this.variantName = props.variantName ?? 'AllTraffic';
    if (props.endpointName !== undefined && !Token.isUnresolved(props.endpointName) && !ENDPOINT_NAME.test(props.endpointName)) {
      errors.push(
        `endpointName '${props.endpointName}' is invalid: 1–63 letters, digits and hyphens, starting and ending with a letter or digit.`,
      );
    }

    this.prefix = normalizePrefix(props.modelPrefix ?? 'models/', errors);
    const timeouts = {
      containerStartupHealthCheckTimeoutInSeconds: checkTimeout(
        'containerStartupHealthCheckTimeout',
        props.containerStartupHealthCheckTimeout ?? Duration.minutes(10),
        errors,
      ),
      modelDataDownloadTimeoutInSeconds: checkTimeout(
        'modelDataDownloadTimeout',
        props.modelDataDownloadTimeout ?? Duration.minutes(10),
        errors,
      ),
    };
    const volumeSizeInGb = checkVolume(props, instance, errors);

    const { env: tritonEnv, errors: envErrors } = renderTritonEnvironment(props.environment);
    errors.push(...envErrors);
    for (const key of Object.keys(props.extraEnvironment ?? {})) {
      if (key in tritonEnv) errors.push(`extraEnvironment.${key} repeats a variable the typed environment sets; keep one.`);
    }
    if (props.extraEnvironment?.SAGEMAKER_MULTI_MODEL !== undefined && props.extraEnvironment.SAGEMAKER_MULTI_MODEL !== 'true') {
      errors.push('extraEnvironment.SAGEMAKER_MULTI_MODEL must stay "true" on a multi-model endpoint.');
    }
    if (props.extraEnvironment?.SAGEMAKER_TRITON_DEFAULT_MODEL_NAME !== undefined) {
      Annotations.of(this).addWarningV2(
        'mme-deploy:default-model-name',
        'SAGEMAKER_TRITON_DEFAULT_MODEL_NAME is ignored on a multi-model endpoint: each request names its archive as TargetModel.',
      );
    }
    if (!props.vpc && (props.vpcSubnets || props.securityGroups)) errors.push('vpcSubnets and securityGroups need vpc.');

    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('sagemaker.amazonaws.com'),
      description: `Execution role of the Triton multi-model endpoint ${this.node.path}`,
    });
    // Binding resolves the image for the stack's region; an unknown region or version is one more problem to report.
    let image: TritonImageConfig | undefined;
    try {
      image = (props.image ?? TritonImage.fromSageMakerDlc()).bind(this, this.role);
    } catch (err) {
      errors.push(err instanceof Error ? err.message : String(err));
    }
    if (errors.length > 0 || !image) {
      throw new Error(`Invalid TritonMultiModelEndpoint props (${this.node.path}):\n${errors.map((e) => `  - ${e}`).join('\n')}`);
    }
    this.tritonVersion = image.tritonVersion;
    if (this.tritonVersion && this.tritonVersion > DEFAULT_TRITON_VERSION && !props.inferenceAmiVersion) {
      // YY.MM strings compare in release order.
      Annotations.of(this).addWarningV2(
        'mme-deploy:gpu-driver',
        `Triton ${this.tritonVersion} is newer than ${DEFAULT_TRITON_VERSION}, the newest release known to run on SageMaker's ` +
          'default GPU driver (470, CUDA 11.4); newer images have failed there with CUDA error 803. Set ' +
          'inferenceAmiVersion (for example InferenceAmiVersion.AL2_GPU_3_1, driver 550) unless you have tested it.',
      );
    }

    this.bucket = props.modelBucket ?? this.createBucket(props.modelBucketEncryptionKey, props.serverAccessLogsBucket);
    this.grantModelRead(props.modelBucketEncryptionKey ?? this.bucket.encryptionKey);
    this.grantLogsAndMetrics();

    let vpcConfig: sagemaker.CfnModel.VpcConfigProperty | undefined;
    if (props.vpc) {
      const securityGroups = props.securityGroups ?? [
        new ec2.SecurityGroup(this, 'SecurityGroup', {
          vpc: props.vpc,
          description: `Triton multi-model endpoint ${this.node.path}`,
          allowAllOutbound: true,
        }),
      ];
      this._connections = new ec2.Connections({ securityGroups });
      vpcConfig = {
        subnets: props.vpc.selectSubnets(props.vpcSubnets).subnetIds,
        securityGroupIds: securityGroups.map((sg) => sg.securityGroupId),
      };
      this.grantVpcAccess();
    }

    this.modelDataUrl = `s3://${this.bucket.bucketName}/${this.prefix}`;
    this.cfnModel = new sagemaker.CfnModel(this, 'Model', {
      executionRoleArn: this.role.roleArn,
      primaryContainer: {
        image: image.imageUri,
        mode: 'MultiModel',
        modelDataUrl: this.modelDataUrl,
        environment: { SAGEMAKER_MULTI_MODEL: 'true', ...tritonEnv, ...props.extraEnvironment },
        multiModelConfig: props.modelCacheSetting ? { modelCacheSetting: props.modelCacheSetting } : undefined,
      },
      vpcConfig,
      enableNetworkIsolation: props.networkIsolation,
    });
    // SageMaker checks the role's rights (image pull, S3 read) when it creates the model: the policy must exist first.
    this.cfnModel.node.addDependency(this.role);

    this.cfnEndpointConfig = new sagemaker.CfnEndpointConfig(this, 'EndpointConfig', {
      productionVariants: [
        {
          variantName: this.variantName,
          modelName: this.cfnModel.attrModelName,
          instanceType: this.instanceType,
          initialInstanceCount: this.initialInstanceCount,
          initialVariantWeight: 1,
          ...timeouts,
          volumeSizeInGb,
          inferenceAmiVersion: props.inferenceAmiVersion?.version,
        },
      ],
      kmsKeyId: props.volumeEncryptionKey?.keyArn,
    });

    this.cfnEndpoint = new sagemaker.CfnEndpoint(this, 'Endpoint', {
      endpointConfigName: this.cfnEndpointConfig.attrEndpointConfigName,
      endpointName: props.endpointName,
    });
    this.endpointName = this.cfnEndpoint.attrEndpointName;
    this.endpointArn = this.cfnEndpoint.ref; // Ref of AWS::SageMaker::Endpoint is its ARN

    for (const [key, value] of Object.entries(props.tags ?? {})) Tags.of(this).add(key, value);
    this.acknowledgeDesignedWildcards();
  }

  /**
   * The role's wildcards are deliberate; say why where cdk-nag (AwsSolutions-IAM5) would flag them. Only these exact
   * resources are acknowledged, so a wildcard added later still shows up.
   */
  private acknowledgeDesignedWildcards(): void {
    const logGroups = Stack.of(this).formatArn({
      service: 'logs',
      resource: 'log-group',
      resourceName: '/aws/sagemaker/Endpoints/*',
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    const wildcard = (resource: string) => `AwsSolutions::AwsSolutions-IAM5[Resource::${resource}]`;
    Validations.of(this.role).acknowledge(
      {
        id: wildcard(nagText(this, this.bucket.arnForObjects(`${this.prefix}*`))),
        reason:
          'A multi-model endpoint loads any archive under its ModelDataUrl prefix on demand, so it reads every key ' +
          'under that prefix (and nothing else in the bucket).',
      },
      {
        id: wildcard(nagText(this, logGroups)),
        reason:
          'SageMaker names the container log group /aws/sagemaker/Endpoints/<endpoint name>; the name is generated ' +
          'at deploy time, so the grant covers that log-group path only.',
      },
      {
        id: wildcard('*'),
        reason:
          'Only actions without resource-level permissions use "*": ecr:GetAuthorizationToken, ' +
          'cloudwatch:PutMetricData (limited by a cloudwatch:namespace condition to the SageMaker namespaces) and, ' +
          'in a VPC, the EC2 network-interface actions SageMaker needs to attach the model to the subnets.',
      },
    );
  }

  /** The security groups of the model, when it runs in a VPC. */
  public get connections(): ec2.Connections {
    if (!this._connections) throw new Error(`${this.node.path} has no VPC, so no connections.`);
    return this._connections;
  }

  /**
   * Lets Application Auto Scaling change the variant's instance count between `minCapacity` and `maxCapacity`, and
   * makes redeploys keep the scaled count (RetainAllVariantProperties). Add policies to the result.
   */
  public autoScaleInstanceCount(props: appscaling.EnableScalingProps): ScalableInstanceCount {
    const minCapacity = props.minCapacity ?? 1;
    const errors: string[] = [];
    if (this.scalableInstanceCount) errors.push('autoScaleInstanceCount has already been called for this endpoint.');
    if (!Number.isInteger(minCapacity) || minCapacity < 1) errors.push(`minCapacity must be a whole number of at least 1, got ${minCapacity}.`);
    if (!Number.isInteger(props.maxCapacity) || props.maxCapacity < minCapacity) {
      errors.push(`maxCapacity must be a whole number of at least minCapacity (${minCapacity}), got ${props.maxCapacity}.`);
    }
    if (this.initialInstanceCount < minCapacity || this.initialInstanceCount > props.maxCapacity) {
      errors.push(
        `initialInstanceCount (${this.initialInstanceCount}) must lie between minCapacity (${minCapacity}) and maxCapacity (${props.maxCapacity}).`,
      );
    }
    if (errors.length > 0) throw new Error(`Invalid autoScaleInstanceCount props (${this.node.path}):\n${errors.map((e) => `  - ${e}`).join('\n')}`);

    const stack = Stack.of(this);
    this.scalableInstanceCount = new ScalableInstanceCount(this, 'InstanceCount', {
      serviceNamespace: appscaling.ServiceNamespace.SAGEMAKER,
      resourceId: `endpoint/${this.endpointName}/variant/${this.variantName}`,
      dimension: 'sagemaker:variant:DesiredInstanceCount',
      role: iam.Role.fromRoleArn(
        this,
        'AutoScalingRole',
        stack.formatArn({
          service: 'iam',
          region: '',
          resource: 'role',
          resourceName:
            'aws-service-role/sagemaker.application-autoscaling.amazonaws.com/AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint',
          arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
        }),
      ),
      minCapacity,
      maxCapacity: props.maxCapacity,
      endpoint: this,
    });
    // The variant must exist before it is registered as a scalable target (aws/aws-cdk#20659) ...
    this.scalableInstanceCount.node.addDependency(this.cfnEndpoint);
    // ... and an endpoint update must not reset the count autoscaling chose (aws/aws-cdk#23151).
    this.cfnEndpoint.retainAllVariantProperties = true;
    return this.scalableInstanceCount;
  }

  /** A CloudWatch dashboard of this endpoint's metrics, with alarms. */
  public addDashboard(id: string, props: Omit<MultiModelEndpointDashboardProps, 'endpoint'> = {}): MultiModelEndpointDashboard {
    return new MultiModelEndpointDashboard(this, id, { ...props, endpoint: this });
  }

  private createBucket(key: kms.IKey | undefined, logs: s3.IBucket | undefined): s3.Bucket {
    return new s3.Bucket(this, 'ModelBucket', {
      serverAccessLogsBucket: logs,
      serverAccessLogsPrefix: logs ? `${this.node.path.replace(/\//g, '-')}/` : undefined,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: key ? s3.BucketEncryption.KMS : s3.BucketEncryption.S3_MANAGED,
      encryptionKey: key,
      bucketKeyEnabled: key ? true : undefined,
      versioned: true,
      autoDeleteObjects: false,
    });
  }

  /** GetObject under the prefix, ListBucket only for keys under it, Decrypt with the bucket's key. */
  private grantModelRead(key: kms.IKey | undefined): void {
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [this.bucket.arnForObjects(`${this.prefix}*`)] }),
    );
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [this.bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [`${this.prefix}*`] } },
      }),
    );
    key?.grantDecrypt(this.role);
  }

  /** The container's CloudWatch Logs group and the SageMaker metric namespaces. */
  private grantLogsAndMetrics(): void {
    const stack = Stack.of(this);
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents', 'logs:DescribeLogStreams'],
        resources: [
          stack.formatArn({
            service: 'logs',
            resource: 'log-group',
            resourceName: '/aws/sagemaker/Endpoints/*',
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        ],
      }),
    );
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['cloudwatch:PutMetricData'],
        resources: ['*'],
        conditions: { StringLike: { 'cloudwatch:namespace': ['/aws/sagemaker/*', SAGEMAKER_NAMESPACE] } },
      }),
    );
  }

  /** What SageMaker needs to attach the model's network interfaces in the VPC. */
  private grantVpcAccess(): void {
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: [
          'ec2:CreateNetworkInterface',
          'ec2:CreateNetworkInterfacePermission',
          'ec2:DeleteNetworkInterface',
          'ec2:DeleteNetworkInterfacePermission',
          'ec2:DescribeNetworkInterfaces',
          'ec2:DescribeVpcs',
          'ec2:DescribeDhcpOptions',
          'ec2:DescribeSubnets',
          'ec2:DescribeSecurityGroups',
        ],
        resources: ['*'],
      }),
    );
  }
}

function checkInstanceType(name: string, errors: string[]): ReturnType<typeof findInstanceType> {
  if (Token.isUnresolved(name)) return undefined;
  const allowed = `Allowed: ${mmeInstanceTypeNames().join(', ')}.`;
  const type = findInstanceType(name);
  if (!name.startsWith('ml.') || !type) {
    errors.push(`instanceType '${name}' is not a GPU instance type of a GPU multi-model endpoint. ${allowed}`);
  } else if (type.gpuCount !== 1) {
    errors.push(
      `instanceType '${name}' has ${type.gpuCount} GPUs; GPU multi-model endpoints run only on single-GPU instances. ${allowed}`,
    );
  } else if (!type.mmeSupported) {
    errors.push(`instanceType '${name}' is not listed by AWS for GPU multi-model endpoints. ${allowed}`);
  }
  return type;
}

function normalizePrefix(prefix: string, errors: string[]): string {
  if (Token.isUnresolved(prefix)) return prefix;
  if (prefix.startsWith('/')) errors.push(`modelPrefix '${prefix}' must not start with '/': S3 keys have no leading slash.`);
  if (prefix.split('/').some((part) => part === '..' || part === '.')) {
    errors.push(`modelPrefix '${prefix}' must not contain '.' or '..' segments.`);
  }
  if (/[*?]/.test(prefix)) errors.push(`modelPrefix '${prefix}' must not contain '*' or '?'.`);
  return prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`;
}

function checkTimeout(name: string, value: Duration, errors: string[]): number | undefined {
  if (value.isUnresolved()) return undefined;
  const seconds = value.toSeconds();
  if (!Number.isInteger(seconds) || seconds < 60 || seconds > 3600) {
    errors.push(`${name} must be a whole number of seconds from 60 to 3600, got ${value.toHumanString()}.`);
  }
  return seconds;
}

function checkVolume(
  props: TritonMultiModelEndpointProps,
  instance: ReturnType<typeof findInstanceType>,
  errors: string[],
): number | undefined {
  const nvme = instance?.instanceStorage.kind === 'nvme' ? instance : undefined;
  if (nvme && nvme.instanceStorage.kind === 'nvme') {
    const store = `${nvme.name} has a ${nvme.instanceStorage.sizeGb} GB local NVMe instance store`;
    if (props.volumeSize) {
      errors.push(`volumeSize is not allowed: ${store}, and CreateEndpointConfig rejects VolumeSizeInGB there. Leave it out.`);
    }
    if (props.volumeEncryptionKey) {
      errors.push(
        `volumeEncryptionKey is not allowed: ${store}, and CreateEndpointConfig rejects KmsKeyId for instances with ` +
          'local storage. Encrypt the model archives with SSE-KMS on the bucket instead (modelBucketEncryptionKey).',
      );
    }
  }
  // EBS-only types (p2, p3) take both; the SageMaker Python SDK's volume_size_supported() rule agrees.
  if (!props.volumeSize || nvme) return undefined;
  const gib = props.volumeSize.toGibibytes({ rounding: SizeRoundingBehavior.NONE });
  if (!Number.isInteger(gib) || gib < 1 || gib > 512) {
    errors.push(`volumeSize must be a whole number of GiB from 1 to 512, got ${gib}.`);
  }
  return gib;
}
