// How SageMaker rolls an endpoint update out (CfnEndpoint.DeploymentConfig): blue/green with all-at-once, canary or
// linear traffic shifting, or a rolling update in batches; both with auto-rollback on CloudWatch alarms.
// Ranges: SageMaker API reference BlueGreenUpdatePolicy, TrafficRoutingConfig, RollingUpdatePolicy, CapacitySize
// (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_BlueGreenUpdatePolicy.html and siblings).

import { Duration } from 'aws-cdk-lib';
import type * as sagemaker from 'aws-cdk-lib/aws-sagemaker';

/** A share of the variant's instances: a count or a percentage of the fleet (SageMaker's CapacitySize). */
export class CapacitySize {
  /** `count` instances (at least 1). */
  public static instances(count: number): CapacitySize {
    return new CapacitySize('INSTANCE_COUNT', count);
  }
  /** `percent` % of the fleet (1–100). */
  public static percent(percent: number): CapacitySize {
    return new CapacitySize('CAPACITY_PERCENT', percent);
  }
  private constructor(
    /** `INSTANCE_COUNT` or `CAPACITY_PERCENT`. */
    public readonly type: 'INSTANCE_COUNT' | 'CAPACITY_PERCENT',
    /** The number of instances or the percentage. */
    public readonly value: number,
  ) {}

  /** @internal */
  public _problems(name: string): string[] {
    const max = this.type === 'CAPACITY_PERCENT' ? 100 : Infinity;
    if (Number.isInteger(this.value) && this.value >= 1 && this.value <= max) return [];
    const range = this.type === 'CAPACITY_PERCENT' ? 'percentage from 1 to 100' : 'number of instances of at least 1';
    return [`${name} must be a whole ${range}, got ${this.value}.`];
  }
}

/** How a blue/green update shifts traffic from the old fleet (blue) to the new one (green). */
export class TrafficRouting {
  /** All traffic at once, after the new fleet is healthy (SageMaker's default). */
  public static allAtOnce(): TrafficRouting {
    return new TrafficRouting({ type: 'ALL_AT_ONCE' });
  }
  /**
   * `size` of the traffic first (the canary), then the rest after `bake`.
   * @param bake how long the canary takes traffic before the rest shifts (0–3600 s)
   */
  public static canary(size: CapacitySize, bake: Duration): TrafficRouting {
    return new TrafficRouting({ type: 'CANARY', canarySize: size, bake });
  }
  /**
   * Traffic shifts in steps of `step`, waiting `bake` between steps.
   * @param bake the wait between steps (0–3600 s)
   */
  public static linear(step: CapacitySize, bake: Duration): TrafficRouting {
    return new TrafficRouting({ type: 'LINEAR', linearStepSize: step, bake });
  }
  private constructor(
    private readonly spec: { type: string; canarySize?: CapacitySize; linearStepSize?: CapacitySize; bake?: Duration },
  ) {}

  /** @internal */
  public _render(problems: string[]): sagemaker.CfnEndpoint.TrafficRoutingConfigProperty {
    const { type, canarySize, linearStepSize, bake } = this.spec;
    problems.push(...(canarySize?._problems('canary size') ?? []), ...(linearStepSize?._problems('linear step size') ?? []));
    return {
      type,
      canarySize: canarySize && { type: canarySize.type, value: canarySize.value },
      linearStepSize: linearStepSize && { type: linearStepSize.type, value: linearStepSize.value },
      waitIntervalInSeconds: bake && seconds('traffic routing bake time', bake, 0, 3600, problems),
    };
  }
}

/** Options of a blue/green update. */
export interface BlueGreenDeploymentOptions {
  /**
   * How traffic moves to the new fleet.
   * @default TrafficRouting.allAtOnce()
   */
  readonly trafficRouting?: TrafficRouting;
  /**
   * How long the old fleet is kept after all traffic moved, ready for a rollback (0–3600 s).
   * @default - SageMaker's default, 0: the old fleet is terminated at once
   */
  readonly terminationWait?: Duration;
  /**
   * How long the whole deployment may take (600–28800 s); must exceed the bake and termination waits.
   * @default - SageMaker's default
   */
  readonly maximumExecutionTimeout?: Duration;
}

/** Options of a rolling update. */
export interface RollingDeploymentOptions {
  /** How many instances (or what share of the fleet) are replaced per step. */
  readonly maximumBatchSize: CapacitySize;
  /** How long each new batch takes traffic before the next step (0–3600 s). */
  readonly bake: Duration;
  /**
   * How many instances a rollback restores per step.
   * @default - the whole old fleet at once
   */
  readonly rollbackMaximumBatchSize?: CapacitySize;
  /**
   * How long the whole deployment may take (600–28800 s).
   * @default - SageMaker's default
   */
  readonly maximumExecutionTimeout?: Duration;
}

/**
 * How SageMaker rolls out an update of the endpoint (a new endpoint configuration: image, instance type, settings).
 * Blue/green provisions a complete second fleet for the update, so it needs (and bills) up to twice the variant's GPU
 * instances while both fleets run; a rolling update replaces the fleet batch by batch and needs only one batch more.
 */
export abstract class EndpointDeployment {
  /** A blue/green update: a new fleet is provisioned, traffic moves to it, the old one is terminated. */
  public static blueGreen(options: BlueGreenDeploymentOptions = {}): EndpointDeployment {
    return new BlueGreenDeployment(options);
  }
  /** A rolling update: the fleet is replaced `maximumBatchSize` at a time. */
  public static rolling(options: RollingDeploymentOptions): EndpointDeployment {
    return new RollingDeployment(options);
  }

  /** @internal The DeploymentConfig without its alarms; problems go to `problems`. */
  public abstract _render(problems: string[]): sagemaker.CfnEndpoint.DeploymentConfigProperty;
}

class BlueGreenDeployment extends EndpointDeployment {
  constructor(private readonly options: BlueGreenDeploymentOptions) {
    super();
  }
  public _render(problems: string[]): sagemaker.CfnEndpoint.DeploymentConfigProperty {
    const o = this.options;
    return {
      blueGreenUpdatePolicy: {
        trafficRoutingConfiguration: (o.trafficRouting ?? TrafficRouting.allAtOnce())._render(problems),
        terminationWaitInSeconds: o.terminationWait && seconds('terminationWait', o.terminationWait, 0, 3600, problems),
        maximumExecutionTimeoutInSeconds:
          o.maximumExecutionTimeout && seconds('maximumExecutionTimeout', o.maximumExecutionTimeout, 600, 28800, problems),
      },
    };
  }
}

class RollingDeployment extends EndpointDeployment {
  constructor(private readonly options: RollingDeploymentOptions) {
    super();
  }
  public _render(problems: string[]): sagemaker.CfnEndpoint.DeploymentConfigProperty {
    const o = this.options;
    problems.push(
      ...o.maximumBatchSize._problems('maximumBatchSize'),
      ...(o.rollbackMaximumBatchSize?._problems('rollbackMaximumBatchSize') ?? []),
    );
    const rollback = o.rollbackMaximumBatchSize;
    return {
      rollingUpdatePolicy: {
        maximumBatchSize: { type: o.maximumBatchSize.type, value: o.maximumBatchSize.value },
        waitIntervalInSeconds: seconds('bake', o.bake, 0, 3600, problems),
        rollbackMaximumBatchSize: rollback && { type: rollback.type, value: rollback.value },
        maximumExecutionTimeoutInSeconds:
          o.maximumExecutionTimeout && seconds('maximumExecutionTimeout', o.maximumExecutionTimeout, 600, 28800, problems),
      },
    };
  }
}

function seconds(name: string, value: Duration, min: number, max: number, problems: string[]): number {
  const s = value.toSeconds();
  if (value.isUnresolved()) return s;
  if (!Number.isInteger(s) || s < min || s > max) {
    problems.push(`deployment ${name} must be a whole number of seconds from ${min} to ${max}, got ${value.toHumanString()}.`);
  }
  return s;
}
