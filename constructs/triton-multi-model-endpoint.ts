// TritonMultiModelEndpoint: a SageMaker GPU multi-model endpoint running NVIDIA Triton — execution role and policy,
// model (Mode MultiModel over an S3 prefix), endpoint config and endpoint — with metrics, grants, deployment
// guardrails and autoscaling that survives instance type changes.

import { Annotations, ArnFormat, Duration, Lazy, RemovalPolicy, Size, Stack, Tags, Token, Validations } from 'aws-cdk-lib';
import * as appscaling from 'aws-cdk-lib/aws-applicationautoscaling';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sagemaker from 'aws-cdk-lib/aws-sagemaker';
import { Construct } from 'constructs';
import { EndpointDeployment } from './endpoint-deployment';
import { adviseOnVpcEgress } from './endpoint-network';
import {
  checkEndpointName,
  checkExtraEnvironment,
  checkInstanceCount,
  checkInstanceType,
  checkTimeout,
  checkTritonRelease,
  checkVariantName,
  checkVolume,
  normalizePrefix,
  throwIfProblems,
} from './endpoint-settings';
import { InstanceType } from './instance-type';
import {
  IMultiModelEndpoint,
  importEndpoint,
  MultiModelEndpointAttributes,
  MultiModelEndpointBase,
  MultiModelEndpointImportOptions,
  SAGEMAKER_NAMESPACE,
} from './multi-model-endpoint-base';
import { MultiModelEndpointDashboard, MultiModelEndpointDashboardProps } from './multi-model-endpoint-dashboard';
import { nagText } from './nag-finding';
import { ScalableInstanceCount } from './scalable-instance-count';
import { ScalingGuard } from './scaling-guard';
import { TritonEnvironment, renderTritonEnvironment } from './triton-environment';
import { TritonImage, TritonImageConfig } from './triton-image';

export { ENDPOINT_INSTANCE_NAMESPACE, MultiModelEndpointBase, SAGEMAKER_NAMESPACE } from './multi-model-endpoint-base';
export type {
  GrantInvokeOptions,
  IMultiModelEndpoint,
  MultiModelEndpointAttributes,
  MultiModelEndpointImportOptions,
} from './multi-model-endpoint-base';

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
  private constructor(
    /** The `InferenceAmiVersion` value. */
    public readonly version: string,
  ) {}
}

/** Properties of a TritonMultiModelEndpoint. */
export interface TritonMultiModelEndpointProps {
  /**
   * The Triton container.
   * @default TritonImage.fromSageMakerDlc() - the pinned SageMaker Triton image, which runs on g4dn
   */
  readonly image?: TritonImage;
  /**
   * The instance type: one of the single-GPU types AWS lists for GPU multi-model endpoints whose GPU the Triton release
   * supports. Changing it on an autoscaled endpoint works in one `cdk deploy` (see `autoScaleInstanceCount`).
   * @default InstanceType.G4DN_XLARGE
   */
  readonly instanceType?: InstanceType;
  /**
   * Instances at creation (and the count autoscaling starts from). Fewer than 2 leaves no spare instance in another
   * Availability Zone; synth warns.
   * @default 1
   */
  readonly initialInstanceCount?: number;
  /**
   * The role SageMaker runs the model with. The endpoint attaches its own policy (prefix reads, image pull, logs,
   * metrics) to it; an imported role must be mutable for that, or already allow those actions (synth warns).
   * @default - a new role trusted by sagemaker.amazonaws.com, without managed policies
   */
  readonly role?: iam.IRole;
  /**
   * The bucket holding the model archives.
   * @default - a new bucket: public access blocked, TLS only, encrypted, versioned, retained on stack deletion
   */
  readonly modelBucket?: s3.IBucket;
  /**
   * The key prefix under which the archives live; the endpoint's ModelDataUrl is `s3://bucket/prefix` and an
   * invocation's TargetModel is the key relative to it. A missing trailing `/` is added.
   * @default 'models/'
   */
  readonly modelPrefix?: string;
  /**
   * The KMS key of the model bucket: the new bucket is encrypted with it (SSE-KMS), and the role may decrypt with it.
   * @default - the new bucket uses SSE-S3; an imported bucket's own `encryptionKey`, if any
   */
  readonly modelBucketEncryptionKey?: kms.IKey;
  /**
   * What happens to the new model bucket when it leaves the stack (a stack deletion, a replacement).
   * @default RemovalPolicy.RETAIN - the bucket and its archives stay
   */
  readonly modelBucketRemovalPolicy?: RemovalPolicy;
  /**
   * Empty the new model bucket (every archive and version) before deleting it; needs `modelBucketRemovalPolicy:
   * RemovalPolicy.DESTROY`. For test and development stacks.
   * @default false
   */
  readonly modelBucketAutoDeleteObjects?: boolean;
  /**
   * How long a noncurrent version in the new model bucket (an archive the retention deleted, or an object overwritten)
   * stays recoverable before S3 expires it. The bucket is versioned: without this, every deleted archive would be kept
   * (and billed) forever. Whole days, at least 1.
   * @default Duration.days(30)
   */
  readonly modelBucketNoncurrentVersionExpiration?: Duration;
  /**
   * How many noncurrent versions of each key the new model bucket keeps past `modelBucketNoncurrentVersionExpiration`
   * (S3's NewerNoncurrentVersions, 1–100). Archive keys hold their content hash, so a key rarely has more than one.
   * @default - none: every noncurrent version expires
   */
  readonly modelBucketNoncurrentVersionsToRetain?: number;
  /**
   * Where the new model bucket writes its server access logs.
   * @default - no access logs
   */
  readonly serverAccessLogsBucket?: s3.IBucket;
  /**
   * Typed Triton server settings. Settings the image's Triton release does not read are refused.
   * @default - the image's defaults
   */
  readonly environment?: TritonEnvironment;
  /**
   * More container environment variables, as given. A key may not repeat one the typed `environment` sets.
   * @default - none
   */
  readonly extraEnvironment?: Record<string, string>;
  /**
   * Whether loaded models stay cached.
   * @default - SageMaker's default, ModelCacheSetting.ENABLED
   */
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
  /**
   * How SageMaker rolls out an update of the endpoint configuration (blue/green or rolling). Blue/green runs up to twice
   * the variant's instances while both fleets exist.
   * @default - SageMaker's default: blue/green, all traffic at once, old fleet terminated at once, no alarms
   */
  readonly deployment?: EndpointDeployment;
  /**
   * CloudWatch alarms that roll a deployment back (at most 10). For an alarm on this endpoint's own metrics, give it an
   * explicit `alarmName` and pass `cloudwatch.Alarm.fromAlarmName(this, id, name)`: a reference to the alarm itself
   * would make the endpoint and the alarm depend on each other.
   * @default - with `deployment`: the deployment alarms of the dashboard `addDashboard()` creates, if any
   */
  readonly autoRollbackAlarms?: cloudwatch.IAlarm[];
  /**
   * Run the model in this VPC. Private subnets need VPC endpoints or NAT for S3, ECR and CloudWatch (synth warns).
   * @default - no VPC
   */
  readonly vpc?: ec2.IVpc;
  /**
   * The subnets of the model's network interfaces.
   * @default - the VPC's private subnets
   */
  readonly vpcSubnets?: ec2.SubnetSelection;
  /**
   * The security groups of the model's network interfaces.
   * @default - one new security group allowing all outbound traffic
   */
  readonly securityGroups?: ec2.ISecurityGroup[];
  /**
   * Cut the container off the network. SageMaker still downloads archives; Python models that fetch from the
   * internet at load time fail.
   * @default false
   */
  readonly networkIsolation?: boolean;
  /**
   * The endpoint name.
   * @default - a name CloudFormation generates
   */
  readonly endpointName?: string;
  /**
   * The production variant's name.
   * @default 'AllTraffic'
   */
  readonly variantName?: string;
  /**
   * Tags for every resource of the construct.
   * @default - none
   */
  readonly tags?: Record<string, string>;
}

/** What the props resolve to once checked. */
interface Settings {
  readonly hardware: ReturnType<typeof checkInstanceType>;
  readonly timeouts: { containerStartupHealthCheckTimeoutInSeconds?: number; modelDataDownloadTimeoutInSeconds?: number };
  readonly volumeSizeInGb?: number;
  readonly environment: Record<string, string>;
  readonly deployment?: sagemaker.CfnEndpoint.DeploymentConfigProperty;
}

/**
 * A SageMaker GPU multi-model endpoint serving NVIDIA Triton ensembles from `<bucket>/<prefix><TargetModel>`.
 */
export class TritonMultiModelEndpoint extends MultiModelEndpointBase implements ec2.IConnectable, iam.IGrantable {
  /** Imports an existing endpoint by name, to watch it or grant invocations. */
  public static fromEndpointName(
    scope: Construct,
    id: string,
    endpointName: string,
    options: MultiModelEndpointImportOptions = {},
  ): IMultiModelEndpoint {
    return importEndpoint(scope, id, { endpointName, variantName: options.variantName });
  }

  /**
   * Imports an existing endpoint by ARN. The ARN holds the name in lower case; metrics need the name as created, so
   * give `fromEndpointAttributes` both when the name has capitals.
   */
  public static fromEndpointArn(
    scope: Construct,
    id: string,
    endpointArn: string,
    options: MultiModelEndpointImportOptions = {},
  ): IMultiModelEndpoint {
    return importEndpoint(scope, id, { endpointArn, variantName: options.variantName });
  }

  /** Imports an existing endpoint by name and/or ARN. */
  public static fromEndpointAttributes(scope: Construct, id: string, attrs: MultiModelEndpointAttributes): IMultiModelEndpoint {
    return importEndpoint(scope, id, attrs);
  }

  public readonly endpointName: string;
  public readonly endpointArn: string;
  public readonly variantName: string;
  public override readonly instanceType: InstanceType;
  /** Instances at creation. */
  public readonly initialInstanceCount: number;
  /** `s3://<bucket>/<prefix>`, the model's ModelDataUrl. */
  public readonly modelDataUrl: string;
  /** The bucket of the model archives. */
  public readonly bucket: s3.IBucket;
  /** The key prefix of the archives, ending in `/` (or empty for the bucket root). */
  public readonly prefix: string;
  /** The role SageMaker runs the model with. */
  public readonly role: iam.IRole;
  /** The role, as the principal that grants to this endpoint go to. */
  public readonly grantPrincipal: iam.IPrincipal;
  /** The policy holding what the endpoint itself needs; attached to `role`. */
  public readonly executionPolicy: iam.Policy;
  /** The Triton release of the image, when known. */
  public readonly tritonVersion?: string;
  public readonly cfnModel: sagemaker.CfnModel;
  public readonly cfnEndpointConfig: sagemaker.CfnEndpointConfig;
  public readonly cfnEndpoint: sagemaker.CfnEndpoint;
  private readonly _connections?: ec2.Connections;
  private readonly rollbackAlarmsGiven?: cloudwatch.IAlarm[];
  private readonly hasDeploymentConfig: boolean;
  private scalableInstanceCount?: ScalableInstanceCount;
  private dashboard?: MultiModelEndpointDashboard;

  constructor(scope: Construct, id: string, props: TritonMultiModelEndpointProps = {}) {
    super(scope, id, { physicalName: props.endpointName });
    this.instanceType = props.instanceType ?? InstanceType.G4DN_XLARGE;
    this.initialInstanceCount = props.initialInstanceCount ?? 1;
    this.variantName = props.variantName ?? 'AllTraffic';
    this.rollbackAlarmsGiven = props.autoRollbackAlarms;
    this.hasDeploymentConfig = props.deployment !== undefined;
    const problems: string[] = [];
    this.prefix = normalizePrefix(props.modelPrefix ?? 'models/', problems);
    const settings = this.checkProps(props, problems);

    this.role = props.role ?? this.createRole();
    this.grantPrincipal = this.role.grantPrincipal;
    this.executionPolicy = this.attachExecutionPolicy(props.role !== undefined);
    const image = this.bindImage(props.image ?? TritonImage.fromSageMakerDlc(), problems);
    this.tritonVersion = image?.tritonVersion;
    if (this.tritonVersion) this.checkRelease(this.tritonVersion, settings, props, problems);
    throwIfProblems(`TritonMultiModelEndpoint props (${this.node.path})`, problems);

    this.bucket = props.modelBucket ?? this.createBucket(props);
    this.modelDataUrl = `s3://${this.bucket.bucketName}/${this.prefix}`;
    this.grantModelRead(props.modelBucketEncryptionKey ?? this.bucket.encryptionKey);
    this.grantLogsAndMetrics();
    const vpcConfig = props.vpc ? this.attachToVpc(props.vpc, props.vpcSubnets, props.securityGroups) : undefined;
    if (props.vpc) this._connections = new ec2.Connections({ securityGroups: this.securityGroupsOf(props) });

    this.cfnModel = this.createModel(image!, settings, vpcConfig, props);
    this.cfnEndpointConfig = this.createEndpointConfig(settings, props);
    this.cfnEndpoint = this.createEndpoint(settings, props.endpointName);
    this.endpointName = this.cfnEndpoint.attrEndpointName;
    this.endpointArn = this.cfnEndpoint.ref; // Ref of AWS::SageMaker::Endpoint is its ARN
    this.acknowledgeEndpointNameAttribute();
    this.grantDescribeAlarms((props.autoRollbackAlarms ?? []).map((alarm) => alarm.alarmArn));

    // Not on the scalable target: RegisterScalableTarget refuses tags on a target already registered (every redeploy of
    // a taggable ScalableTarget, which it is from aws-cdk-lib 2.276 on), and cfn-lint 1.51's schema has no Tags there.
    const untagged = { excludeResourceTypes: ['AWS::ApplicationAutoScaling::ScalableTarget'] };
    for (const [key, value] of Object.entries(props.tags ?? {})) Tags.of(this).add(key, value, untagged);
    this.acknowledgeDesignedWildcards();
  }

  /**
   * Applies `policy` to the model, the endpoint configuration and the endpoint (a `Resource`'s own would look for one
   * default child and throw). The model bucket keeps its own (`modelBucketRemovalPolicy`).
   */
  public override applyRemovalPolicy(policy: RemovalPolicy): void {
    for (const resource of [this.cfnModel, this.cfnEndpointConfig, this.cfnEndpoint]) resource.applyRemovalPolicy(policy);
  }

  /** The security groups of the model, when it runs in a VPC. */
  public get connections(): ec2.Connections {
    if (!this._connections) throw new Error(`${this.node.path} has no VPC, so no connections.`);
    return this._connections;
  }

  /**
   * Lets Application Auto Scaling change the variant's instance count between `minCapacity` and `maxCapacity`, and
   * makes redeploys keep the scaled count (RetainAllVariantProperties). Add policies to the result. A later change of
   * the instance type or variant name deploys in one `cdk deploy`: a ScalingGuard deregisters the variant before the
   * endpoint update and the scaling resources are registered again after it; a deploy that fails and rolls back
   * leaves the registration, its policies and scheduled actions as they were (see ScalingGuard). The instance type and
   * variant name must be known at synth (not a CfnParameter): they name the scaling resources.
   */
  public autoScaleInstanceCount(props: appscaling.EnableScalingProps): ScalableInstanceCount {
    const minCapacity = props.minCapacity ?? 1;
    const problems: string[] = [];
    if (this.scalableInstanceCount) problems.push('autoScaleInstanceCount has already been called for this endpoint.');
    if (!Number.isInteger(minCapacity) || minCapacity < 1) {
      problems.push(`minCapacity must be a whole number of at least 1, got ${minCapacity}.`);
    }
    if (!Number.isInteger(props.maxCapacity) || props.maxCapacity < minCapacity) {
      problems.push(`maxCapacity must be a whole number of at least minCapacity (${minCapacity}), got ${props.maxCapacity}.`);
    }
    if (this.initialInstanceCount < minCapacity || this.initialInstanceCount > props.maxCapacity) {
      problems.push(
        `initialInstanceCount (${this.initialInstanceCount}) must lie between minCapacity (${minCapacity}) and ` +
          `maxCapacity (${props.maxCapacity}).`,
      );
    }
    for (const [name, value] of [['instanceType', this.instanceType.name], ['variantName', this.variantName]]) {
      if (Token.isUnresolved(value)) {
        problems.push(
          `${name} is a token (a CfnParameter or another deploy-time value), which autoscaling cannot follow: the scaling ` +
            `resources are named after it so that a change deploys in one go. Give it at synth, e.g. from context (-c).`,
        );
      }
    }
    throwIfProblems(`autoScaleInstanceCount props (${this.node.path})`, problems);

    const guard = new ScalingGuard(this, 'ScalingGuard', {
      endpoint: this.cfnEndpoint,
      variantName: this.variantName,
      instanceType: this.instanceType.name,
      hasDeploymentConfig: this.cfnEndpoint.deploymentConfig !== undefined,
    });
    this.scalableInstanceCount = new ScalableInstanceCount(this, scalingGenerationId(this.instanceType, this.variantName), {
      serviceNamespace: appscaling.ServiceNamespace.SAGEMAKER,
      resourceId: `endpoint/${this.endpointName}/variant/${this.variantName}`,
      dimension: 'sagemaker:variant:DesiredInstanceCount',
      role: iam.Role.fromRoleArn(
        this,
        'AutoScalingRole',
        Stack.of(this).formatArn({
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
    guard.carry(this.scalableInstanceCount);
    // ... a replaced registration must not be deregistered by the cleanup of the old one (see ScalingGuard) ...
    this.scalableInstanceCount.scalableTarget.applyRemovalPolicy(RemovalPolicy.RETAIN);
    // ... and an endpoint update must not reset the count autoscaling chose (aws/aws-cdk#23151).
    this.cfnEndpoint.retainAllVariantProperties = true;
    return this.scalableInstanceCount;
  }

  /**
   * A CloudWatch dashboard of this endpoint's metrics, with alarms. With `deployment` and no `autoRollbackAlarms`, its
   * deployment alarms roll updates back.
   */
  public addDashboard(id: string, props: Omit<MultiModelEndpointDashboardProps, 'endpoint'> = {}): MultiModelEndpointDashboard {
    const dashboard = new MultiModelEndpointDashboard(this, id, { ...props, endpoint: this });
    if (!this.dashboard && this.hasDeploymentConfig && !this.rollbackAlarmsGiven) {
      this.grantDescribeAlarms(dashboard.deploymentAlarmNames.map((name) => this.alarmArn(name)));
    }
    this.dashboard ??= dashboard;
    return dashboard;
  }

  // ---- the steps of the constructor ----

  /** Every check that needs no construct; problems are collected, warnings added. */
  private checkProps(props: TritonMultiModelEndpointProps, problems: string[]): Settings {
    const hardware = checkInstanceType(this.instanceType, problems);
    checkInstanceCount(this.initialInstanceCount, problems);
    if (Number.isInteger(this.initialInstanceCount) && this.initialInstanceCount === 1) {
      Annotations.of(this).addWarningV2(
        'mme-deploy:single-instance',
        'initialInstanceCount is 1: one instance means no spare in another Availability Zone and downtime while it is ' +
          'replaced; 2 or more is recommended for production.',
      );
    }
    checkEndpointName(props.endpointName, problems);
    checkVariantName(this.variantName, problems);
    const timeouts = {
      containerStartupHealthCheckTimeoutInSeconds: checkTimeout(
        'containerStartupHealthCheckTimeout',
        props.containerStartupHealthCheckTimeout ?? Duration.minutes(10),
        problems,
      ),
      modelDataDownloadTimeoutInSeconds: checkTimeout(
        'modelDataDownloadTimeout',
        props.modelDataDownloadTimeout ?? Duration.minutes(10),
        problems,
      ),
    };
    const volumeSizeInGb = checkVolume(props, hardware, problems);
    const { env, errors } = renderTritonEnvironment(props.environment);
    problems.push(...errors);
    checkExtraEnvironment(env, props.extraEnvironment, problems);
    if (props.extraEnvironment?.SAGEMAKER_TRITON_DEFAULT_MODEL_NAME !== undefined) {
      Annotations.of(this).addWarningV2(
        'mme-deploy:default-model-name',
        'SAGEMAKER_TRITON_DEFAULT_MODEL_NAME is ignored on a multi-model endpoint: each request names its archive as TargetModel.',
      );
    }
    if (!props.vpc && (props.vpcSubnets || props.securityGroups)) problems.push('vpcSubnets and securityGroups need vpc.');
    if (props.modelBucketAutoDeleteObjects && props.modelBucketRemovalPolicy !== RemovalPolicy.DESTROY) {
      problems.push('modelBucketAutoDeleteObjects needs modelBucketRemovalPolicy: RemovalPolicy.DESTROY.');
    }
    if (props.modelBucket && (props.modelBucketRemovalPolicy || props.modelBucketAutoDeleteObjects)) {
      problems.push(
        'modelBucketRemovalPolicy and modelBucketAutoDeleteObjects apply to the bucket the endpoint creates, not to modelBucket.',
      );
    }
    checkNoncurrentVersions(props, problems);
    if ((props.autoRollbackAlarms?.length ?? 0) > 10) {
      problems.push(`autoRollbackAlarms holds ${props.autoRollbackAlarms!.length} alarms; SageMaker takes at most 10.`);
    }
    const deployment = props.deployment?._render(problems, this.initialInstanceCount);
    return { hardware, timeouts, volumeSizeInGb, environment: env, deployment };
  }

  /** What Triton's release decides: whether it runs on the GPU, which serve variables it reads, driver advice. */
  private checkRelease(version: string, settings: Settings, props: TritonMultiModelEndpointProps, problems: string[]): void {
    const { hardware, environment } = settings;
    const findings = checkTritonRelease(version, hardware, environment, props.extraEnvironment, !!props.inferenceAmiVersion);
    problems.push(...findings.problems);
    for (const [id, message] of findings.warnings) Annotations.of(this).addWarningV2(id, message);
  }

  private createRole(): iam.Role {
    return new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('sagemaker.amazonaws.com'),
      description: `Execution role of the Triton multi-model endpoint ${this.node.path}`,
    });
  }

  /**
   * The endpoint's own rights live in one policy of their own, so that cdk-nag acknowledgments cover exactly these
   * statements: whatever else is granted to the role later lands in the role's default policy and is checked.
   */
  private attachExecutionPolicy(givenRole: boolean): iam.Policy {
    const policy = new iam.Policy(this, 'ExecutionPolicy');
    this.role.attachInlinePolicy(policy);
    const attached = Stack.of(this).resolve((policy.node.defaultChild as iam.CfnPolicy).roles) !== undefined;
    if (givenRole && !attached) {
      // At synth, when every statement is in (a dashboard added later brings the rollback alarms' DescribeAlarms).
      this.node.addValidation({
        validate: () => {
          Annotations.of(this).addWarningV2('mme-deploy:immutable-role', this.immutableRoleWarning(policy));
          return [];
        },
      });
    }
    return policy;
  }

  /** What an imported immutable role must already allow: every action of the execution policy, with its resources. */
  private immutableRoleWarning(policy: iam.Policy): string {
    const statements = (Stack.of(this).resolve(policy.document.toJSON()) as { Statement?: Array<{ Action: string | string[] }> })
      .Statement ?? [];
    const actions = [...new Set(statements.flatMap((st) => (Array.isArray(st.Action) ? st.Action : [st.Action])))].sort();
    return (
      `The role ${this.role.roleName} is imported as immutable, so the endpoint cannot attach its policy. The role must ` +
      `already allow: ${actions.join(', ')} (on the resources of ${policy.node.path}; see the synthesized template).`
    );
  }

  /**
   * SageMaker reads the rollback alarms with the execution role: "Ensure that your IAM execution role has permission to
   * perform the cloudwatch:DescribeAlarms action on the auto-rollback alarms you specify"
   * (https://docs.aws.amazon.com/sagemaker/latest/dg/deployment-guardrails-configuration.html).
   */
  private grantDescribeAlarms(alarmArns: string[]): void {
    if (alarmArns.length === 0) return;
    this.executionPolicy.addStatements(new iam.PolicyStatement({ actions: ['cloudwatch:DescribeAlarms'], resources: alarmArns }));
  }

  /** An alarm's ARN from its literal name: a reference to the alarm would make the policy depend on it (a cycle). */
  private alarmArn(alarmName: string): string {
    const arnFormat = ArnFormat.COLON_RESOURCE_NAME;
    return Stack.of(this).formatArn({ service: 'cloudwatch', resource: 'alarm', resourceName: alarmName, arnFormat });
  }

  /** Resolves the image for the stack's region; its pull rights go to the execution policy. */
  private bindImage(image: TritonImage, problems: string[]): TritonImageConfig | undefined {
    try {
      return image.bind(this, new PolicyGrantee(this.role, this.executionPolicy));
    } catch (err) {
      problems.push(err instanceof Error ? err.message : String(err));
      return undefined;
    }
  }

  private createBucket(props: TritonMultiModelEndpointProps): s3.Bucket {
    const key = props.modelBucketEncryptionKey;
    const logs = props.serverAccessLogsBucket;
    return new s3.Bucket(this, 'ModelBucket', {
      serverAccessLogsBucket: logs,
      serverAccessLogsPrefix: logs ? `${this.node.path.replace(/\//g, '-')}/` : undefined,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: key ? s3.BucketEncryption.KMS : s3.BucketEncryption.S3_MANAGED,
      encryptionKey: key,
      bucketKeyEnabled: key ? true : undefined,
      versioned: true,
      removalPolicy: props.modelBucketRemovalPolicy ?? RemovalPolicy.RETAIN,
      autoDeleteObjects: props.modelBucketAutoDeleteObjects ?? false,
      lifecycleRules: [
        {
          id: 'ArchiveVersions',
          // Deleted and overwritten archives stay recoverable for a while, then go; so do the delete markers left
          // once no version is behind them, and multipart uploads (CLI pushes, archive copies) that never completed.
          noncurrentVersionExpiration: props.modelBucketNoncurrentVersionExpiration ?? Duration.days(30),
          noncurrentVersionsToRetain: props.modelBucketNoncurrentVersionsToRetain,
          expiredObjectDeleteMarker: true,
          abortIncompleteMultipartUploadAfter: Duration.days(7),
        },
      ],
    });
  }

  /** GetObject under the prefix, ListBucket only for keys under it, Decrypt with the bucket's key. */
  private grantModelRead(key: kms.IKey | undefined): void {
    this.executionPolicy.addStatements(
      new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [this.bucket.arnForObjects(`${this.prefix}*`)] }),
      new iam.PolicyStatement({
        actions: ['s3:ListBucket'],
        resources: [this.bucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [`${this.prefix}*`] } },
      }),
    );
    key?.grantDecrypt(new PolicyGrantee(this.role, this.executionPolicy));
  }

  /** The container's CloudWatch Logs group and the SageMaker metric namespaces. */
  private grantLogsAndMetrics(): void {
    this.executionPolicy.addStatements(
      new iam.PolicyStatement({
        actions: ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents', 'logs:DescribeLogStreams'],
        resources: [this.logGroupsArn()],
      }),
      new iam.PolicyStatement({
        actions: ['cloudwatch:PutMetricData'],
        resources: ['*'],
        conditions: { StringLike: { 'cloudwatch:namespace': ['/aws/sagemaker/*', SAGEMAKER_NAMESPACE] } },
      }),
    );
  }

  /** Subnets, security groups, the ENI rights SageMaker needs there, and advice on the way out of private subnets. */
  private attachToVpc(
    vpc: ec2.IVpc,
    selection: ec2.SubnetSelection | undefined,
    given: ec2.ISecurityGroup[] | undefined,
  ): sagemaker.CfnModel.VpcConfigProperty {
    const subnets = vpc.selectSubnets(selection);
    const securityGroups = given ?? [
      new ec2.SecurityGroup(this, 'SecurityGroup', {
        vpc,
        description: `Triton multi-model endpoint ${this.node.path}`,
        allowAllOutbound: true,
      }),
    ];
    this.executionPolicy.addStatements(
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
    adviseOnVpcEgress(this, vpc, subnets);
    return { subnets: subnets.subnetIds, securityGroupIds: securityGroups.map((sg) => sg.securityGroupId) };
  }

  private securityGroupsOf(props: TritonMultiModelEndpointProps): ec2.ISecurityGroup[] {
    return props.securityGroups ?? [this.node.findChild('SecurityGroup') as ec2.SecurityGroup];
  }

  private createModel(
    image: TritonImageConfig,
    settings: Settings,
    vpcConfig: sagemaker.CfnModel.VpcConfigProperty | undefined,
    props: TritonMultiModelEndpointProps,
  ): sagemaker.CfnModel {
    const model = new sagemaker.CfnModel(this, 'Model', {
      executionRoleArn: this.role.roleArn,
      primaryContainer: {
        image: image.imageUri,
        mode: 'MultiModel',
        modelDataUrl: this.modelDataUrl,
        environment: { SAGEMAKER_MULTI_MODEL: 'true', ...settings.environment, ...props.extraEnvironment },
        multiModelConfig: props.modelCacheSetting ? { modelCacheSetting: props.modelCacheSetting } : undefined,
      },
      vpcConfig,
      enableNetworkIsolation: props.networkIsolation,
    });
    // SageMaker checks the role's rights (image pull, S3 read) when it creates the model: the policy must exist first.
    model.node.addDependency(this.executionPolicy);
    if (!props.role) model.node.addDependency(this.role);
    return model;
  }

  private createEndpointConfig(settings: Settings, props: TritonMultiModelEndpointProps): sagemaker.CfnEndpointConfig {
    return new sagemaker.CfnEndpointConfig(this, 'EndpointConfig', {
      productionVariants: [
        {
          variantName: this.variantName,
          modelName: this.cfnModel.attrModelName,
          instanceType: this.instanceType.name,
          initialInstanceCount: this.initialInstanceCount,
          initialVariantWeight: 1,
          ...settings.timeouts,
          volumeSizeInGb: settings.volumeSizeInGb,
          inferenceAmiVersion: props.inferenceAmiVersion?.version,
        },
      ],
      kmsKeyId: props.volumeEncryptionKey?.keyArn,
    });
  }

  private createEndpoint(settings: Settings, endpointName: string | undefined): sagemaker.CfnEndpoint {
    return new sagemaker.CfnEndpoint(this, 'Endpoint', {
      endpointConfigName: this.cfnEndpointConfig.attrEndpointConfigName,
      endpointName,
      deploymentConfig:
        settings.deployment || this.rollbackAlarmsGiven
          ? { ...settings.deployment, autoRollbackConfiguration: Lazy.any({ produce: () => this.renderRollbackAlarms() }) }
          : undefined,
    });
  }

  /**
   * aws-cdk-lib's template validation (its CloudFormation Validate plugin) reports every `Fn::GetAtt` of `EndpointName`
   * as an unknown attribute (E9004, and F6101 in outputs: "'EndpointName' is not one of ['EndpointArn']"): its schema
   * lacks it. The attribute is documented
   * (https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-sagemaker-endpoint.html,
   * aws-cdk-lib's `CfnEndpoint.attrEndpointName`), cfn-lint accepts it, and it is the only form of the name that
   * metrics and scaling take (the ARN holds it in lower case). Unacknowledged, a default synth printed it 29 times,
   * with a stack trace each. aws-cdk-lib applies an acknowledgment to every finding with that rule id in the app
   * (aws-cdk-lib/core/lib/private/synthesis-validation.ts, collectSuppressions), which is why it is documented.
   */
  private acknowledgeEndpointNameAttribute(): void {
    const reason =
      "Fn::GetAtt EndpointName is a documented attribute of AWS::SageMaker::Endpoint (aws-cdk-lib's CfnEndpoint.attrEndpointName); " +
      "the validator's schema lacks it. mme-deploy's TritonMultiModelEndpoint uses it for metrics, scaling and outputs.";
    Validations.of(this).acknowledge(
      { id: 'CloudFormation-Validate::E9004', reason },
      { id: 'CloudFormation-Validate::F6101', reason },
    );
  }

  /** The alarms that roll a deployment back: the given ones, else the dashboard's deployment alarms. */
  private renderRollbackAlarms(): sagemaker.CfnEndpoint.AutoRollbackConfigProperty | undefined {
    const names = this.rollbackAlarmsGiven?.map((alarm) => alarm.alarmName) ?? this.dashboard?.deploymentAlarmNames ?? [];
    if (names.length === 0) return undefined;
    return { alarms: names.map((alarmName) => ({ alarmName })) };
  }

  private logGroupsArn(): string {
    return Stack.of(this).formatArn({
      service: 'logs',
      resource: 'log-group',
      resourceName: '/aws/sagemaker/Endpoints/*',
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
  }

  /**
   * The execution policy's wildcards are deliberate; say why where cdk-nag (AwsSolutions-IAM5) flags them, on that
   * policy only: a wildcard granted to the role later lands in its default policy and still shows up.
   */
  private acknowledgeDesignedWildcards(): void {
    const wildcard = (resource: string) => `AwsSolutions-IAM5[Resource::${resource}]`;
    Validations.of(this.executionPolicy).acknowledge(
      {
        id: wildcard(nagText(this, this.bucket.arnForObjects(`${this.prefix}*`))),
        reason:
          'A multi-model endpoint loads any archive under its ModelDataUrl prefix on demand, so it reads every key ' +
          'under that prefix (and nothing else in the bucket).',
      },
      {
        id: wildcard(nagText(this, this.logGroupsArn())),
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
}

/** The role as a grantee whose statements go to the endpoint's execution policy instead of the role's default one. */
class PolicyGrantee implements iam.IPrincipal {
  public readonly grantPrincipal: iam.IPrincipal = this;
  public readonly assumeRoleAction: string;
  public readonly policyFragment: iam.PrincipalPolicyFragment;
  public readonly principalAccount?: string;

  constructor(
    role: iam.IRole,
    private readonly policy: iam.Policy,
  ) {
    this.assumeRoleAction = role.assumeRoleAction;
    this.policyFragment = role.policyFragment;
    this.principalAccount = role.principalAccount;
  }

  public addToPolicy(statement: iam.PolicyStatement): boolean {
    return this.addToPrincipalPolicy(statement).statementAdded;
  }

  public addToPrincipalPolicy(statement: iam.PolicyStatement): iam.AddToPrincipalPolicyResult {
    this.policy.addStatements(statement);
    return { statementAdded: true, policyDependable: this.policy };
  }
}

/** The noncurrent-version settings apply to the created bucket and take what S3's lifecycle rules take. */
function checkNoncurrentVersions(props: TritonMultiModelEndpointProps, problems: string[]): void {
  const expiration = props.modelBucketNoncurrentVersionExpiration;
  const retain = props.modelBucketNoncurrentVersionsToRetain;
  if (props.modelBucket && (expiration !== undefined || retain !== undefined)) {
    problems.push(
      'modelBucketNoncurrentVersionExpiration and modelBucketNoncurrentVersionsToRetain apply to the bucket the endpoint ' +
        "creates; give modelBucket's own lifecycle rules instead.",
    );
  }
  if (expiration !== undefined && !Token.isUnresolved(expiration.toSeconds())) {
    const days = expiration.toSeconds() / 86400;
    if (!Number.isInteger(days) || days < 1) {
      const got = expiration.toHumanString();
      problems.push(`modelBucketNoncurrentVersionExpiration must be a whole number of days, at least 1; got ${got}.`);
    }
  }
  if (retain !== undefined && !(Number.isInteger(retain) && retain >= 1 && retain <= 100)) {
    problems.push(`modelBucketNoncurrentVersionsToRetain must be a whole number from 1 to 100, got ${retain}.`);
  }
}

/**
 * The construct id of the scaling resources: it holds the instance type and the variant, so that changing either gives
 * the scalable target and its policies new logical IDs and names (see ScalingGuard).
 */
function scalingGenerationId(instanceType: InstanceType, variantName: string): string {
  return ['InstanceCount', instanceType.name, ...(variantName === 'AllTraffic' ? [] : [variantName])].join('-');
}
