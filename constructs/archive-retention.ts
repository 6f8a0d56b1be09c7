// ArchiveRetention: which previous versions of a content-named model archive stay in the bucket after a deployment,
// so that clients still invoking an older TargetModel keep working for a while.

import { Duration } from 'aws-cdk-lib';

/** How long previous versions of each archive are kept. The live version is never deleted. */
export class ArchiveRetention {
  /** Keeps the `count` newest previous versions of each archive (0: only the live one). */
  public static versions(count: number): ArchiveRetention {
    return new ArchiveRetention({ versions: count });
  }
  /** Keeps each previous version for `duration` after a newer one replaced it (deleted at the next deployment after). */
  public static duration(duration: Duration): ArchiveRetention {
    return new ArchiveRetention({ duration });
  }
  /** Keeps the `count` newest previous versions, and older ones until `duration` after they were replaced. */
  public static versionsAndDuration(count: number, duration: Duration): ArchiveRetention {
    return new ArchiveRetention({ versions: count, duration });
  }
  /** Keeps every version: nothing is ever deleted. */
  public static all(): ArchiveRetention {
    return new ArchiveRetention({});
  }

  private constructor(private readonly spec: { versions?: number; duration?: Duration }) {}

  /** @internal Whether nothing is ever deleted. */
  public get _keepsAll(): boolean {
    return this.spec.versions === undefined && this.spec.duration === undefined;
  }

  /** @internal */
  public _problems(): string[] {
    const { versions } = this.spec;
    if (versions !== undefined && !(Number.isInteger(versions) && versions >= 0)) {
      return [`retention keeps a whole number of versions, 0 or more; got ${versions}.`];
    }
    return [];
  }

  /** @internal The custom resource properties. */
  public _properties(): { KeepVersions: number; KeepForSeconds: number } {
    return { KeepVersions: this.spec.versions ?? 0, KeepForSeconds: this.spec.duration?.toSeconds() ?? 0 };
  }
}
