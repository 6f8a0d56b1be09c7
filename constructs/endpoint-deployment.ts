// How SageMaker rolls an endpoint update out (CfnEndpoint.DeploymentConfig): blue/green with all-at-once, canary or
// linear traffic shifting, or a rolling update in batches; both with auto-rollback on CloudWatch alarms.
// Ranges: SageMaker API reference BlueGreenUpdatePolicy, TrafficRoutingConfig, RollingUpdatePolicy, CapacitySize
// (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_BlueGreenUpdatePolicy.html and siblings). The shares
// of the fleet: TrafficRoutingConfig ("CanarySize ... less than or equal to 50% of the variant's total instance count",
// "LinearStepSize ... 10-50%") and RollingUpdatePolicy ("MaximumBatchSize ... between 5% to 50%").

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

  /** @internal The share of a fleet of `fleet` instances, in percent. */
  public _percentOf(fleet: number): number {
    return this.type === 'CAPACITY_PERCENT' ? this.value : (100 * this.value) / fleet;
  }

  /** @internal How many steps of this size move a fleet of `fleet` instances. */
  public _stepsFor(fleet: number): number {
    return this.type === 'CAPACITY_PERCENT' ? Math.ceil(100 / this.value) : Math.ceil(fleet / this.value);
  }

  /** @internal */
  public toString(): string {
    return this.type === 'CAPACITY_PERCENT' ? `${this.value} %` : `${this.value} instance${this.value === 1 ? '' : 's'}`;
  }
}

/**
 * The bake of `TrafficRouting.allAtOnce()` when none is given: SageMaker requires a WaitIntervalInSeconds, and its
 * rollback alarms are evaluated only during bakes (https://docs.aws.amazon.com/sagemaker/latest/dg/
 * deployment-guardrails-configuration.html: "CloudWatch alarms are a prerequisite for using baking periods"). Ten
 * minutes lets a 5-minute alarm period complete at least once on the new fleet before the old one is terminated.
 */
export const DEFAULT_BAKE = Duration.minutes(10);

/** How a blue/green update shifts traffic from the old fleet (blue) to the new one (green). */
export class TrafficRouting {
  /**
   * All traffic at once, after the new fleet is healthy; the old fleet stays ready for a rollback during `bake`, while
   * the rollback alarms are watched. SageMaker requires the bake (TrafficRoutingConfig.WaitIntervalInSeconds); with
   * none, no alarm is ever evaluated.
   * @param bake how long the rollback alarms are watched after the shift (0–3600 s) @default DEFAULT_BAKE, 10 minutes
   */
  public static allAtOnce(bake: Duration = DEFAULT_BAKE): TrafficRouting {
    return new TrafficRouting({ type: 'ALL_AT_ONCE', bake });
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

  /** @internal The TrafficRoutingConfig; `fleet` is the variant's instance count when known. */
  public _render(problems: string[], fleet: number | undefined): sagemaker.CfnEndpoint.TrafficRoutingConfigProperty {
    const { type, canarySize, linearStepSize, bake } = this.spec;
    const sizeProblems = [...(canarySize?._problems('canary size') ?? []), ...(linearStepSize?._problems('linear step size') ?? [])];
    problems.push(...sizeProblems);
    if (sizeProblems.length === 0 && fleet !== undefined) {
      if (canarySize) checkShare('canary size', canarySize, fleet, 0, 50, problems);
      if (linearStepSize) checkShare('linear step size', linearStepSize, fleet, 10, 50, problems);
    }
    return {
      type,
      canarySize: canarySize && { type: canarySize.type, value: canarySize.value },
      linearStepSize: linearStepSize && { type: linearStepSize.type, value: linearStepSize.value },
      waitIntervalInSeconds: seconds('traffic routing bake time', bake ?? DEFAULT_BAKE, 0, 3600, problems),
    };
  }

  /** @internal The seconds the deployment spends baking (a lower bound of its duration). */
  public _waits(fleet: number | undefined): number {
    const { linearStepSize, bake } = this.spec;
    const steps = linearStepSize && fleet !== undefined ? linearStepSize._stepsFor(fleet) : 1;
    return steps * (bake ?? DEFAULT_BAKE).toSeconds();
  }
}

/** Options of a blue/green update. */
export interface BlueGreenDeploymentOptions {
  /**
   * How traffic moves to the new fleet.
   * @default TrafficRouting.allAtOnce() - all at once, then a 10-minute bake (DEFAULT_BAKE) watching the rollback alarms
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
  /**
   * A blue/green update: a new fleet is provisioned, traffic moves to it, the rollback alarms are watched for the bake
   * (10 minutes with the default `TrafficRouting.allAtOnce()`), then the old fleet is terminated.
   */
  public static blueGreen(options: BlueGreenDeploymentOptions = {}): EndpointDeployment {
    return new BlueGreenDeployment(options);
  }
  /** A rolling update: the fleet is replaced `maximumBatchSize` at a time. */
  public static rolling(options: RollingDeploymentOptions): EndpointDeployment {
    return new RollingDeployment(options);
  }

  /**
   * @internal The DeploymentConfig without its alarms; problems go to `problems`. `fleet` is the variant's instance
   * count when known: the shares of the fleet SageMaker allows are checked against it.
   */
  public abstract _render(problems: string[], fleet?: number): sagemaker.CfnEndpoint.DeploymentConfigProperty;
}

class BlueGreenDeployment extends EndpointDeployment {
  constructor(private readonly options: BlueGreenDeploymentOptions) {
    super();
  }
  public _render(problems: string[], fleet?: number): sagemaker.CfnEndpoint.DeploymentConfigProperty {
    const o = this.options;
    const routing = o.trafficRouting ?? TrafficRouting.allAtOnce();
    const waits = routing._waits(fleet) + (o.terminationWait?.toSeconds() ?? 0);
    checkTimeoutExceedsWaits(o.maximumExecutionTimeout, waits, problems);
    return {
      blueGreenUpdatePolicy: {
        trafficRoutingConfiguration: routing._render(problems, fleet),
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
  public _render(problems: string[], fleet?: number): sagemaker.CfnEndpoint.DeploymentConfigProperty {
    const o = this.options;
    const sizeProblems = [
      ...o.maximumBatchSize._problems('maximumBatchSize'),
      ...(o.rollbackMaximumBatchSize?._problems('rollbackMaximumBatchSize') ?? []),
    ];
    problems.push(...sizeProblems);
    if (sizeProblems.length === 0 && fleet !== undefined) checkShare('maximumBatchSize', o.maximumBatchSize, fleet, 5, 50, problems);
    if (sizeProblems.length === 0) {
      const batches = fleet !== undefined ? o.maximumBatchSize._stepsFor(fleet) : 1;
      checkTimeoutExceedsWaits(o.maximumExecutionTimeout, batches * o.bake.toSeconds(), problems);
    }
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

/** SageMaker's share of the fleet for a canary, a linear step or a rolling batch (`min` exclusive when 0). */
function checkShare(name: string, size: CapacitySize, fleet: number, min: number, max: number, problems: string[]): void {
  if (!Number.isInteger(fleet) || fleet < 1) return; // the instance count's own check reports it
  if (fleet === 1) {
    problems.push(
      `${name} ${size} cannot be a share of a 1-instance fleet: a canary, linear or rolling deployment needs at least 2 ` +
        'instances. Use EndpointDeployment.blueGreen() (all at once) or initialInstanceCount of 2 or more.',
    );
    return;
  }
  const percent = size._percentOf(fleet);
  if (percent > max || percent < min || percent === 0) {
    const of = size.type === 'INSTANCE_COUNT' ? `, ${Math.round(percent)} % of ${fleet} instances` : '';
    const range = min === 0 ? `at most ${max} %` : `${min}–${max} %`;
    problems.push(`${name} must be ${range} of the variant's instances (SageMaker refuses others), got ${size}${of}.`);
  }
}

/** SageMaker: the execution timeout "should be larger than the total waiting time" (API_BlueGreenUpdatePolicy). */
function checkTimeoutExceedsWaits(timeout: Duration | undefined, waits: number, problems: string[]): void {
  if (!timeout || timeout.isUnresolved() || timeout.toSeconds() > waits) return;
  problems.push(
    `deployment maximumExecutionTimeout (${timeout.toHumanString()}) must be longer than the deployment's bakes and ` +
      `termination wait (${Duration.seconds(waits).toHumanString()} at least), or SageMaker times out every update.`,
  );
}

function seconds(name: string, value: Duration, min: number, max: number, problems: string[]): number {
  const s = value.toSeconds();
  if (value.isUnresolved()) return s;
  if (!Number.isInteger(s) || s < min || s > max) {
    problems.push(`deployment ${name} must be a whole number of seconds from ${min} to ${max}, got ${value.toHumanString()}.`);
  }
  return s;
}
