// InstanceType: the instance type of a GPU multi-model endpoint variant, as a value with the known types as statics
// (like aws-sagemaker-alpha's InstanceType) and the hardware facts of lib/catalog/instance-types.ts behind it.

import { Token } from 'aws-cdk-lib';
import { findInstanceType, GpuInstanceType } from '../lib/catalog/instance-types';

/**
 * The instance type of a GPU multi-model endpoint. The statics are the single-GPU types AWS lists for GPU multi-model
 * endpoints; `of()` names any other (the endpoint refuses types it cannot run on, saying why).
 */
export class InstanceType {
  /** 1 × NVIDIA T4 (16 GiB), 4 vCPUs, 125 GB NVMe. */
  public static readonly G4DN_XLARGE = InstanceType.of('ml.g4dn.xlarge');
  /** 1 × NVIDIA T4 (16 GiB), 8 vCPUs, 225 GB NVMe. */
  public static readonly G4DN_2XLARGE = InstanceType.of('ml.g4dn.2xlarge');
  /** 1 × NVIDIA T4 (16 GiB), 16 vCPUs, 225 GB NVMe. */
  public static readonly G4DN_4XLARGE = InstanceType.of('ml.g4dn.4xlarge');
  /** 1 × NVIDIA T4 (16 GiB), 32 vCPUs, 900 GB NVMe. */
  public static readonly G4DN_8XLARGE = InstanceType.of('ml.g4dn.8xlarge');
  /** 1 × NVIDIA T4 (16 GiB), 64 vCPUs, 900 GB NVMe. */
  public static readonly G4DN_16XLARGE = InstanceType.of('ml.g4dn.16xlarge');
  /** 1 × NVIDIA A10G (24 GiB), 4 vCPUs, 250 GB NVMe. */
  public static readonly G5_XLARGE = InstanceType.of('ml.g5.xlarge');
  /** 1 × NVIDIA A10G (24 GiB), 8 vCPUs, 450 GB NVMe. */
  public static readonly G5_2XLARGE = InstanceType.of('ml.g5.2xlarge');
  /** 1 × NVIDIA A10G (24 GiB), 16 vCPUs, 600 GB NVMe. */
  public static readonly G5_4XLARGE = InstanceType.of('ml.g5.4xlarge');
  /** 1 × NVIDIA A10G (24 GiB), 32 vCPUs, 900 GB NVMe. */
  public static readonly G5_8XLARGE = InstanceType.of('ml.g5.8xlarge');
  /** 1 × NVIDIA A10G (24 GiB), 64 vCPUs, 1900 GB NVMe. */
  public static readonly G5_16XLARGE = InstanceType.of('ml.g5.16xlarge');
  /** 1 × NVIDIA V100 (16 GiB), 8 vCPUs, EBS only. Triton 25.01 and later do not run on its GPU. */
  public static readonly P3_2XLARGE = InstanceType.of('ml.p3.2xlarge');
  /** 1 × NVIDIA K80 (12 GiB), 4 vCPUs, EBS only. No Triton release runs on its GPU (compute capability 3.7). */
  public static readonly P2_XLARGE = InstanceType.of('ml.p2.xlarge');

  /** An instance type by its SageMaker name, `ml.<family>.<size>` (a token is taken as given). */
  public static of(name: string): InstanceType {
    return new InstanceType(name);
  }

  /** The hardware behind the type, or undefined for a type the catalog does not know (or a token). */
  public readonly hardware?: GpuInstanceType;

  private constructor(
    /** The SageMaker name, e.g. `ml.g4dn.xlarge`. */
    public readonly name: string,
  ) {
    this.hardware = Token.isUnresolved(name) || !name.startsWith('ml.') ? undefined : findInstanceType(name);
  }

  /** The SageMaker name. */
  public toString(): string {
    return this.name;
  }
}
