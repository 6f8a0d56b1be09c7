// Autoscaling of a multi-model endpoint variant's instance count: GPU utilization (the AWS GPU MME practice), GPU
// memory utilization, and SageMaker's invocations-per-instance metric.

import { Duration } from 'aws-cdk-lib';
import * as appscaling from 'aws-cdk-lib/aws-applicationautoscaling';
import { Construct } from 'constructs';
import type { IMultiModelEndpoint } from './triton-multi-model-endpoint';

/** Properties of the scalable instance count an endpoint creates in `autoScaleInstanceCount`. */
export interface ScalableInstanceCountProps extends appscaling.BaseScalableAttributeProps {
  /** The endpoint whose metrics drive the policies. */
  readonly endpoint: IMultiModelEndpoint;
}

/** Target tracking on a utilization percentage of the endpoint's instances. */
export interface UtilizationScalingProps extends appscaling.BaseTargetTrackingProps {
  /**
   * The average utilization, in percent of the instance's one GPU, to keep the variant at.
   * @default 60 for GPU utilization, 75 for GPU memory utilization
   */
  readonly targetUtilizationPercent?: number;
}

/** Target tracking on invocations per instance. */
export interface InvocationsScalingProps extends appscaling.BaseTargetTrackingProps {
  /** The requests per second one instance sustains within your latency goal (measure it with a load test). */
  readonly maxRequestsPerSecond: number;
  /**
   * The share of `maxRequestsPerSecond` to aim at, leaving headroom for bursts and model loads (0 < f ≤ 1).
   * @default 0.5
   */
  readonly safetyFactor?: number;
}

/** The instance count of a GPU multi-model endpoint variant, as Application Auto Scaling sees it. */
export class ScalableInstanceCount extends appscaling.BaseScalableAttribute {
  private readonly endpoint: IMultiModelEndpoint;

  constructor(scope: Construct, id: string, props: ScalableInstanceCountProps) {
    super(scope, id, props);
    this.endpoint = props.endpoint;
  }

  /**
   * Keep the variant's average GPUUtilization (namespace `/aws/sagemaker/Endpoints`) at a target, the policy of AWS's
   * GPU MME example: target 60 %, scale-in cooldown 600 s (model reloads make scale-in costly), scale-out 200 s.
   */
  public scaleOnGpuUtilization(id: string, props: UtilizationScalingProps = {}): void {
    this.trackUtilization(id, 'GPUUtilization', this.endpoint.metricGpuUtilization(), 60, props);
  }

  /**
   * Keep the variant's average GPUMemoryUtilization at a target. An MME keeps models loaded until memory runs short,
   * so memory stays high under a steady model mix; prefer GPU utilization unless loads fail for memory.
   */
  public scaleOnGpuMemoryUtilization(id: string, props: UtilizationScalingProps = {}): void {
    this.trackUtilization(id, 'GPUMemoryUtilization', this.endpoint.metricGpuMemoryUtilization(), 75, props);
  }

  /**
   * Keep `SageMakerVariantInvocationsPerInstance` (per minute) at `safetyFactor × maxRequestsPerSecond × 60`, the
   * metric AWS recommends for MMEs (it counts every model's invocations together).
   */
  public scaleOnInvocations(id: string, props: InvocationsScalingProps): void {
    const safetyFactor = props.safetyFactor ?? 0.5;
    const errors: string[] = [];
    if (!(props.maxRequestsPerSecond > 0)) errors.push(`maxRequestsPerSecond must be more than 0, got ${props.maxRequestsPerSecond}.`);
    if (!(safetyFactor > 0 && safetyFactor <= 1)) errors.push(`safetyFactor must be in (0, 1], got ${safetyFactor}.`);
    throwIfAny(`scaleOnInvocations('${id}')`, errors);
    this.doScaleToTrackMetric(id, {
      predefinedMetric: appscaling.PredefinedMetric.SAGEMAKER_VARIANT_INVOCATIONS_PER_INSTANCE,
      targetValue: safetyFactor * props.maxRequestsPerSecond * 60,
      policyName: props.policyName,
      disableScaleIn: props.disableScaleIn,
      scaleInCooldown: props.scaleInCooldown,
      scaleOutCooldown: props.scaleOutCooldown,
    });
  }

  private trackUtilization(
    id: string,
    metricName: string,
    metric: import('aws-cdk-lib/aws-cloudwatch').IMetric,
    defaultTarget: number,
    props: UtilizationScalingProps,
  ): void {
    const target = props.targetUtilizationPercent ?? defaultTarget;
    const errors: string[] = [];
    if (!(target > 0 && target <= 100)) errors.push(`targetUtilizationPercent must be in (0, 100], got ${target}.`);
    throwIfAny(`scale on ${metricName} ('${id}')`, errors);
    this.doScaleToTrackMetric(id, {
      customMetric: metric,
      targetValue: target,
      policyName: props.policyName,
      disableScaleIn: props.disableScaleIn,
      scaleInCooldown: props.scaleInCooldown ?? Duration.seconds(600),
      scaleOutCooldown: props.scaleOutCooldown ?? Duration.seconds(200),
    });
  }
}

function throwIfAny(what: string, errors: string[]): void {
  if (errors.length > 0) throw new Error(`Invalid ${what}:\n${errors.map((e) => `  - ${e}`).join('\n')}`);
}
