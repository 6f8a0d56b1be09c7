// Autoscaling of a multi-model endpoint variant's instance count, shaped like ecs.ScalableTaskCount: target tracking
// on GPU utilization (the AWS GPU MME practice), GPU memory, invocations or any metric; step scaling on a metric;
// schedules. Any number of policies; each method returns the policy it creates.

import { Duration } from 'aws-cdk-lib';
import * as appscaling from 'aws-cdk-lib/aws-applicationautoscaling';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import type { IMultiModelEndpoint } from './multi-model-endpoint-base';
import { throwIfProblems } from './endpoint-settings';

/** Properties of the scalable instance count an endpoint creates in `autoScaleInstanceCount`. */
export interface ScalableInstanceCountProps extends appscaling.BaseScalableAttributeProps {
  /** The endpoint whose metrics drive the policies. */
  readonly endpoint: IMultiModelEndpoint;
}

/**
 * Target-tracking options. There is no `policyName`: names follow the construct path, which changes with the instance
 * type, so that an instance type change can replace the policies in the same deployment (see docs/cdk.md).
 */
export type TrackingOptions = Omit<appscaling.BaseTargetTrackingProps, 'policyName'>;

/** Target tracking on a utilization percentage of the endpoint's instances. */
export interface UtilizationScalingProps extends TrackingOptions {
  /**
   * The average utilization, in percent of the instance's one GPU, to keep the variant at.
   * @default 60 for GPU utilization, 75 for GPU memory utilization
   */
  readonly targetUtilizationPercent?: number;
}

/** Target tracking on invocations per instance. */
export interface InvocationsScalingProps extends TrackingOptions {
  /** The requests per second one instance sustains within your latency goal (measure it with a load test). */
  readonly maxRequestsPerSecond: number;
  /**
   * The share of `maxRequestsPerSecond` to aim at, leaving headroom for bursts and model loads (0 < f ≤ 1).
   * @default 0.5
   */
  readonly safetyFactor?: number;
}

/** Target tracking on any metric. */
export interface MetricScalingProps extends TrackingOptions {
  /** The metric to keep at `targetValue` (an average over the variant works best). */
  readonly metric: cloudwatch.IMetric;
  /** The value to keep the metric at. */
  readonly targetValue: number;
}

/** The instance count of a GPU multi-model endpoint variant, as Application Auto Scaling sees it. */
export class ScalableInstanceCount extends appscaling.BaseScalableAttribute {
  private readonly endpoint: IMultiModelEndpoint;

  constructor(scope: Construct, id: string, props: ScalableInstanceCountProps) {
    super(scope, id, props);
    this.endpoint = props.endpoint;
  }

  /** The scalable target the policies attach to (`AWS::ApplicationAutoScaling::ScalableTarget`). */
  public get scalableTarget(): appscaling.ScalableTarget {
    return this.node.findChild('Target') as appscaling.ScalableTarget;
  }

  /**
   * Keeps the variant's average GPUUtilization (namespace `/aws/sagemaker/Endpoints`) at a target, the policy of AWS's
   * GPU MME example: target 60 %, scale-in cooldown 600 s (model reloads make scale-in costly), scale-out 200 s.
   */
  public scaleOnGpuUtilization(id: string, props: UtilizationScalingProps = {}): appscaling.TargetTrackingScalingPolicy {
    return this.trackUtilization(id, 'GPUUtilization', this.endpoint.metricGpuUtilization(), 60, props);
  }

  /**
   * Keeps the variant's average GPUMemoryUtilization at a target. An MME keeps models loaded until memory runs short,
   * so memory stays high under a steady model mix; prefer GPU utilization unless loads fail for memory.
   */
  public scaleOnGpuMemoryUtilization(id: string, props: UtilizationScalingProps = {}): appscaling.TargetTrackingScalingPolicy {
    return this.trackUtilization(id, 'GPUMemoryUtilization', this.endpoint.metricGpuMemoryUtilization(), 75, props);
  }

  /**
   * Keeps `SageMakerVariantInvocationsPerInstance` (per minute) at `safetyFactor × maxRequestsPerSecond × 60`, the
   * metric AWS recommends for MMEs (it counts every model's invocations together).
   */
  public scaleOnInvocations(id: string, props: InvocationsScalingProps): appscaling.TargetTrackingScalingPolicy {
    const safetyFactor = props.safetyFactor ?? 0.5;
    const problems: string[] = [];
    if (!(props.maxRequestsPerSecond > 0)) problems.push(`maxRequestsPerSecond must be more than 0, got ${props.maxRequestsPerSecond}.`);
    if (!(safetyFactor > 0 && safetyFactor <= 1)) problems.push(`safetyFactor must be in (0, 1], got ${safetyFactor}.`);
    throwIfProblems(`scaleOnInvocations('${id}')`, problems);
    this.doScaleToTrackMetric(id, {
      predefinedMetric: appscaling.PredefinedMetric.SAGEMAKER_VARIANT_INVOCATIONS_PER_INSTANCE,
      targetValue: safetyFactor * props.maxRequestsPerSecond * 60,
      disableScaleIn: props.disableScaleIn,
      scaleInCooldown: props.scaleInCooldown,
      scaleOutCooldown: props.scaleOutCooldown,
    });
    return this.policy(id);
  }

  /** Keeps any metric at `targetValue` (target tracking). */
  public scaleToTrackMetric(id: string, props: MetricScalingProps): appscaling.TargetTrackingScalingPolicy {
    this.doScaleToTrackMetric(id, {
      customMetric: props.metric,
      targetValue: props.targetValue,
      disableScaleIn: props.disableScaleIn,
      scaleInCooldown: props.scaleInCooldown,
      scaleOutCooldown: props.scaleOutCooldown,
    });
    return this.policy(id);
  }

  /** Step scaling: adds or removes instances by the intervals `props.scalingSteps` give for the metric's value. */
  public scaleOnMetric(id: string, props: appscaling.BasicStepScalingPolicyProps): appscaling.StepScalingPolicy {
    this.doScaleOnMetric(id, props);
    return this.policy(id);
  }

  /** Sets the minimum and/or maximum capacity on a schedule (a scheduled action of the scalable target). */
  public scaleOnSchedule(id: string, props: appscaling.ScalingSchedule): void {
    this.doScaleOnSchedule(id, props);
  }

  private trackUtilization(
    id: string,
    metricName: string,
    metric: cloudwatch.IMetric,
    defaultTarget: number,
    props: UtilizationScalingProps,
  ): appscaling.TargetTrackingScalingPolicy {
    const target = props.targetUtilizationPercent ?? defaultTarget;
    const problems: string[] = [];
    if (!(target > 0 && target <= 100)) problems.push(`targetUtilizationPercent must be in (0, 100], got ${target}.`);
    throwIfProblems(`scale on ${metricName} ('${id}')`, problems);
    this.doScaleToTrackMetric(id, {
      customMetric: metric,
      targetValue: target,
      disableScaleIn: props.disableScaleIn,
      scaleInCooldown: props.scaleInCooldown ?? Duration.seconds(600),
      scaleOutCooldown: props.scaleOutCooldown ?? Duration.seconds(200),
    });
    return this.policy(id);
  }

  /** The policy `id` the base class has just created (under the scalable target, where aws-cdk-lib puts it). */
  private policy<T extends Construct>(id: string): T {
    return this.scalableTarget.node.findChild(id) as T;
  }
}
