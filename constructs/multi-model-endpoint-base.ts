// What every GPU multi-model endpoint offers, whether created here or imported: its name and ARN, the aws-cdk-lib
// endpoint reference (so integrations such as apigateway.SagemakerIntegration take it), invoke grants and metrics.

import { ArnFormat, IResource, Resource, Stack, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as sagemaker from 'aws-cdk-lib/aws-sagemaker';
import { Construct } from 'constructs';
import type { InstanceType } from './instance-type';

/** The SageMaker CloudWatch namespace of invocation and model-loading metrics. */
export const SAGEMAKER_NAMESPACE = 'AWS/SageMaker';
/** The CloudWatch namespace of per-instance metrics (utilization, loaded models). */
export const ENDPOINT_INSTANCE_NAMESPACE = '/aws/sagemaker/Endpoints';

/**
 * A GPU multi-model endpoint, created here or imported. It is an aws-cdk-lib `sagemaker.IEndpoint`, so constructs that
 * take one (for example `apigateway.SagemakerIntegration`) take it too.
 */
export interface IMultiModelEndpoint extends IResource, sagemaker.IEndpoint {
  /** @attribute */
  readonly endpointName: string;
  /** @attribute */
  readonly endpointArn: string;
  /** The production variant the metrics and autoscaling refer to. */
  readonly variantName: string;
  /** The variant's instance type, when known (imported endpoints do not know it). */
  readonly instanceType?: InstanceType;
  /**
   * Lets `grantee` call InvokeEndpoint on this endpoint; with `targetModels`, only for those TargetModels.
   * @param options which TargetModels @default - every TargetModel
   */
  grantInvoke(grantee: iam.IGrantable, options?: GrantInvokeOptions): iam.Grant;
  /**
   * A metric of this endpoint's variant (dimensions EndpointName and VariantName).
   * @param props statistic, period, label and the like. @default - CloudWatch's defaults (Average over 5 minutes)
   */
  metric(namespace: string, metricName: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  /** GPUUtilization: percent of the instance's GPU in use. @default - Average over 5 minutes */
  metricGpuUtilization(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  /** GPUMemoryUtilization: percent of GPU memory in use. @default - Average over 5 minutes */
  metricGpuMemoryUtilization(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  /** CPUUtilization: percent of one vCPU, so up to 100 × vCPUs. @default - Average over 5 minutes */
  metricCpuUtilization(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  /** MemoryUtilization: percent of the instance's memory in use. @default - Average over 5 minutes */
  metricMemoryUtilization(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  /** DiskUtilization: percent of the disk holding the model cache. @default - Average over 5 minutes */
  metricDiskUtilization(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  /** LoadedModelCount: models loaded in the container, per instance. @default - Average over 5 minutes */
  metricLoadedModelCount(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  /** ModelLoadingWaitTime (µs): how long invocations waited for their model. @default - Average over 5 minutes */
  metricModelLoadingWaitTime(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  /** ModelLoadingTime (µs): how long Triton took to load a model. @default - Average over 5 minutes */
  metricModelLoadingTime(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  /** ModelUnloadingTime (µs): how long Triton took to unload a model. @default - Average over 5 minutes */
  metricModelUnloadingTime(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  /** ModelDownloadingTime (µs): how long an archive took to download. @default - Average over 5 minutes */
  metricModelDownloadingTime(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  /** ModelCacheHit: the Average is the share of invocations whose model was loaded (0–1). @default - Average, 5 minutes */
  metricModelCacheHit(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  /** Invocations. @default - Sum over 5 minutes */
  metricInvocations(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  /** InvocationsPerInstance. @default - Sum over 5 minutes */
  metricInvocationsPerInstance(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  /** ModelLatency (µs): time the container took to answer. @default - Average over 5 minutes */
  metricModelLatency(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  /** OverheadLatency (µs): time SageMaker added around the container. @default - Average over 5 minutes */
  metricOverheadLatency(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  /** Invocation4XXErrors. @default - Sum over 5 minutes */
  metricInvocation4XXErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
  /** Invocation5XXErrors. @default - Sum over 5 minutes */
  metricInvocation5XXErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric;
}

/** What `grantInvoke` allows. */
export interface GrantInvokeOptions {
  /**
   * The TargetModels the grantee may invoke, as names (`resnet-3f9a0c1b2d4e.tar.gz`, e.g. from
   * `ModelArchive.targetModels`) or IAM wildcard patterns (`resnet-*`), checked by the `sagemaker:TargetModel`
   * condition key of InvokeEndpoint
   * (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonsagemaker.html).
   * @default - every TargetModel under the endpoint's prefix
   */
  readonly targetModels?: string[];
}

/** An existing endpoint, by name or ARN (one of them). */
export interface MultiModelEndpointAttributes {
  /**
   * The endpoint name, with its case (metrics and invocations need it).
   * @default - taken from `endpointArn`, whose name SageMaker writes in lower case
   */
  readonly endpointName?: string;
  /**
   * The endpoint ARN.
   * @default - formatted from `endpointName` in this stack's account and region
   */
  readonly endpointArn?: string;
  /**
   * The production variant to watch.
   * @default 'AllTraffic'
   */
  readonly variantName?: string;
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
export abstract class MultiModelEndpointBase extends Resource implements IMultiModelEndpoint {
  public abstract readonly endpointName: string;
  public abstract readonly endpointArn: string;
  public abstract readonly variantName: string;
  public readonly instanceType?: InstanceType;

  /** The aws-cdk-lib reference to this endpoint. */
  public get endpointRef(): sagemaker.IEndpoint['endpointRef'] {
    return { endpointArn: this.endpointArn };
  }

  public grantInvoke(grantee: iam.IGrantable, options: GrantInvokeOptions = {}): iam.Grant {
    const targetModels = options.targetModels;
    if (targetModels !== undefined && targetModels.length === 0) {
      throw new Error(`grantInvoke on ${this.node.path}: targetModels is empty; leave it out to allow every TargetModel.`);
    }
    return iam.Grant.addToPrincipal({
      grantee,
      actions: ['sagemaker:InvokeEndpoint'],
      resourceArns: [this.endpointArn],
      // StringLike: names match themselves, and `resnet-*` every version of an archive.
      conditions: targetModels ? { StringLike: { 'sagemaker:TargetModel': targetModels } } : undefined,
    });
  }

  public metric(namespace: string, metricName: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace,
      metricName,
      dimensionsMap: { EndpointName: this.endpointName, VariantName: this.variantName },
      ...props,
    }).attachTo(this);
  }

  public metricGpuUtilization(props?: cloudwatch.MetricOptions) {
    return this.utilization('GPUUtilization', props);
  }
  public metricGpuMemoryUtilization(props?: cloudwatch.MetricOptions) {
    return this.utilization('GPUMemoryUtilization', props);
  }
  public metricCpuUtilization(props?: cloudwatch.MetricOptions) {
    return this.utilization('CPUUtilization', props);
  }
  public metricMemoryUtilization(props?: cloudwatch.MetricOptions) {
    return this.utilization('MemoryUtilization', props);
  }
  public metricDiskUtilization(props?: cloudwatch.MetricOptions) {
    return this.utilization('DiskUtilization', props);
  }
  public metricLoadedModelCount(props?: cloudwatch.MetricOptions) {
    return this.metric(ENDPOINT_INSTANCE_NAMESPACE, 'LoadedModelCount', { statistic: 'Average', ...props });
  }
  public metricModelLoadingWaitTime(props?: cloudwatch.MetricOptions) {
    return this.microseconds('ModelLoadingWaitTime', props);
  }
  public metricModelLoadingTime(props?: cloudwatch.MetricOptions) {
    return this.microseconds('ModelLoadingTime', props);
  }
  public metricModelUnloadingTime(props?: cloudwatch.MetricOptions) {
    return this.microseconds('ModelUnloadingTime', props);
  }
  public metricModelDownloadingTime(props?: cloudwatch.MetricOptions) {
    return this.microseconds('ModelDownloadingTime', props);
  }
  public metricModelCacheHit(props?: cloudwatch.MetricOptions) {
    return this.metric(SAGEMAKER_NAMESPACE, 'ModelCacheHit', { statistic: 'Average', ...props });
  }
  public metricInvocations(props?: cloudwatch.MetricOptions) {
    return this.count('Invocations', props);
  }
  public metricInvocationsPerInstance(props?: cloudwatch.MetricOptions) {
    return this.count('InvocationsPerInstance', props);
  }
  public metricModelLatency(props?: cloudwatch.MetricOptions) {
    return this.microseconds('ModelLatency', props);
  }
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

/** An endpoint this app did not create: metrics, dashboards and grants only. */
class ImportedEndpoint extends MultiModelEndpointBase {
  public readonly endpointName: string;
  public readonly endpointArn: string;
  public readonly variantName: string;

  constructor(scope: Construct, id: string, attrs: MultiModelEndpointAttributes) {
    super(scope, id, attrs.endpointArn ? { environmentFromArn: attrs.endpointArn } : {});
    if (!attrs.endpointName && !attrs.endpointArn) {
      throw new Error(`Imported endpoint ${this.node.path} needs endpointName or endpointArn.`);
    }
    this.variantName = attrs.variantName ?? 'AllTraffic';
    this.endpointName = attrs.endpointName ?? nameOfArn(this, attrs.endpointArn!);
    this.endpointArn =
      attrs.endpointArn ??
      Stack.of(this).formatArn({
        service: 'sagemaker',
        resource: 'endpoint',
        // SageMaker writes the endpoint name in its ARN in lower case.
        resourceName: Token.isUnresolved(this.endpointName) ? this.endpointName : this.endpointName.toLowerCase(),
      });
  }
}

/** Imports an existing endpoint by attributes. */
export function importEndpoint(scope: Construct, id: string, attrs: MultiModelEndpointAttributes): IMultiModelEndpoint {
  return new ImportedEndpoint(scope, id, attrs);
}

function nameOfArn(scope: Construct, arn: string): string {
  return Stack.of(scope).splitArn(arn, ArnFormat.SLASH_RESOURCE_NAME).resourceName!;
}
