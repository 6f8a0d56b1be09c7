// The endpoint a repository or an archive is meant for, as `validate`, `package` and `local load` are told it
// (`--instance-type`, `--triton-version`): checked against the catalog, with the defaults the constructs use.

import { MmeError } from '../errors';
import { findInstanceType, notMmeReason, type GpuInstanceType } from './instance-types';
import { DEFAULT_TRITON_VERSION, isTritonVersion } from './triton-images';

/** The instance type the constructs deploy unless told otherwise. */
export const DEFAULT_INSTANCE_TYPE = 'ml.g4dn.xlarge';

export interface EndpointTargetOptions {
  /** @default DEFAULT_INSTANCE_TYPE */
  readonly instanceType?: string;
  /** `YY.MM`. @default - the `fallback` given, else DEFAULT_TRITON_VERSION */
  readonly tritonVersion?: string;
  /**
   * The target is a GPU multi-model endpoint (`package`, `validate --mme`, `local load`): an instance type AWS does not
   * list for one is refused, as `plan` and the constructs refuse it. @default false
   */
  readonly multiModel?: boolean;
}

export interface EndpointTarget {
  readonly instanceType: GpuInstanceType;
  readonly tritonVersion: string;
}

/**
 * The target's facts; an instance type the catalog does not know, or a release not of the form YY.MM, is a USAGE
 * MmeError naming the option, and so is a type no GPU multi-model endpoint runs on when `multiModel` is set.
 * `fallbackTritonVersion` stands in for an absent `tritonVersion` (`local` passes the local container's release).
 */
export function endpointTarget(options: EndpointTargetOptions, fallbackTritonVersion?: string): EndpointTarget {
  const instanceType = findInstanceType(options.instanceType ?? DEFAULT_INSTANCE_TYPE);
  if (!instanceType) {
    throw new MmeError(
      'USAGE',
      `--instance-type ${options.instanceType}: not a GPU instance type the catalog knows (for example ${DEFAULT_INSTANCE_TYPE}).`,
    );
  }
  const notMme = options.multiModel ? notMmeReason(instanceType) : undefined;
  if (notMme) throw new MmeError('USAGE', `--instance-type ${notMme}.`);
  const tritonVersion = options.tritonVersion ?? fallbackTritonVersion ?? DEFAULT_TRITON_VERSION;
  if (!isTritonVersion(tritonVersion)) {
    throw new MmeError('USAGE', `--triton-version ${tritonVersion}: expected YY.MM, for example ${DEFAULT_TRITON_VERSION}.`);
  }
  return { instanceType, tritonVersion };
}
