// The checks of TritonMultiModelEndpoint's props that need no construct: each adds its problems (sentences naming
// the prop) to a list, so the endpoint reports every problem at once, and returns the value the resources use.

import { Duration, SizeRoundingBehavior, Token } from 'aws-cdk-lib';
import type { GpuInstanceType } from '../lib/catalog/instance-types';
import { GPU_MME_INSTANCE_TYPES_URL, mmeInstanceTypeNames } from '../lib/catalog/instance-types';
import { DEFAULT_TRITON_VERSION, unreadServeVariables } from '../lib/catalog/triton-images';
import { meetsComputeCapability, tritonMinComputeCapability } from '../lib/catalog/triton-releases';
import type { InstanceType } from './instance-type';
import type { TritonMultiModelEndpointProps } from './triton-multi-model-endpoint';

/**
 * SageMaker's pattern of endpoint and variant names (botocore/data/sagemaker/2017-07-24/service-2.json, shapes
 * EndpointName and VariantName, max 63), anchored at both ends as SageMaker applies it.
 */
const SAGEMAKER_NAME = /^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$/;

/** One problem list, thrown once as `Invalid <what>:` followed by one line per problem. */
export function throwIfProblems(what: string, problems: string[]): void {
  if (problems.length > 0) throw new Error(`Invalid ${what}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
}

/** The hardware of `type` when it is a single-GPU type AWS lists for GPU multi-model endpoints. */
export function checkInstanceType(type: InstanceType, problems: string[]): GpuInstanceType | undefined {
  if (Token.isUnresolved(type.name)) return undefined;
  const allowed = `Allowed: ${mmeInstanceTypeNames().join(', ')}.`;
  const hardware = type.hardware;
  if (!hardware) {
    problems.push(`instanceType '${type.name}' is not a GPU instance type of a GPU multi-model endpoint. ${allowed}`);
  } else if (!hardware.mmeSupported || hardware.gpuCount !== 1) {
    // The same reason plan gives: AWS's table lists only single-GPU types, and no g6 (GPU_MME_INSTANCE_TYPES_URL).
    problems.push(
      `instanceType '${type.name}' (${hardware.gpuCount} × ${hardware.gpuModel}) is not in AWS's list of GPU instance types ` +
        `for multi-model endpoints (${GPU_MME_INSTANCE_TYPES_URL}). ${allowed}`,
    );
  }
  return hardware;
}

/** The instance count, at least 1. */
export function checkInstanceCount(count: number, problems: string[]): number {
  if (!Number.isInteger(count) || count < 1) problems.push(`initialInstanceCount must be a whole number of at least 1, got ${count}.`);
  return count;
}

export function checkEndpointName(name: string | undefined, problems: string[]): void {
  if (name === undefined || Token.isUnresolved(name) || SAGEMAKER_NAME.test(name)) return;
  problems.push(`endpointName '${name}' is invalid: 1–63 letters, digits and hyphens, starting and ending with a letter or digit.`);
}

/** CreateEndpointConfig refuses a variant name outside SageMaker's name pattern, after the model was created. */
export function checkVariantName(name: string, problems: string[]): void {
  if (Token.isUnresolved(name) || SAGEMAKER_NAME.test(name)) return;
  problems.push(`variantName '${name}' is invalid: 1–63 letters, digits and hyphens, starting and ending with a letter or digit.`);
}

/** The prefix with a trailing `/` (or empty for the bucket root). */
export function normalizePrefix(prefix: string, problems: string[]): string {
  if (Token.isUnresolved(prefix)) return prefix;
  if (prefix.startsWith('/')) problems.push(`modelPrefix '${prefix}' must not start with '/': S3 keys have no leading slash.`);
  if (prefix.split('/').some((part) => part === '..' || part === '.')) {
    problems.push(`modelPrefix '${prefix}' must not contain '.' or '..' segments.`);
  }
  if (/[*?]/.test(prefix)) problems.push(`modelPrefix '${prefix}' must not contain '*' or '?'.`);
  return prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`;
}

/** Whole seconds from 60 to 3600 (the range of both container timeouts). */
export function checkTimeout(name: string, value: Duration, problems: string[]): number | undefined {
  if (value.isUnresolved()) return undefined;
  const seconds = value.toSeconds();
  if (!Number.isInteger(seconds) || seconds < 60 || seconds > 3600) {
    problems.push(`${name} must be a whole number of seconds from 60 to 3600, got ${value.toHumanString()}.`);
  }
  return seconds;
}

/** VolumeSizeInGB: only on EBS-only types (CreateEndpointConfig rejects it and KmsKeyId on NVMe instance storage). */
export function checkVolume(
  props: TritonMultiModelEndpointProps,
  hardware: GpuInstanceType | undefined,
  problems: string[],
): number | undefined {
  const storage = hardware?.instanceStorage;
  if (hardware && storage?.kind === 'nvme') {
    const store = `${hardware.name} has a ${storage.sizeGb} GB local NVMe instance store`;
    if (props.volumeSize) {
      problems.push(`volumeSize is not allowed: ${store}, and CreateEndpointConfig rejects VolumeSizeInGB there. Leave it out.`);
    }
    if (props.volumeEncryptionKey) {
      problems.push(
        `volumeEncryptionKey is not allowed: ${store}, and CreateEndpointConfig rejects KmsKeyId for instances with ` +
          'local storage. Encrypt the model archives with SSE-KMS on the bucket instead (modelBucketEncryptionKey).',
      );
    }
    return undefined;
  }
  // EBS-only types (p2, p3) take both; the SageMaker Python SDK's volume_size_supported() rule agrees.
  if (!props.volumeSize) return undefined;
  const gib = props.volumeSize.toGibibytes({ rounding: SizeRoundingBehavior.NONE });
  if (!Number.isInteger(gib) || gib < 1 || gib > 512) {
    problems.push(`volumeSize must be a whole number of GiB from 1 to 512, got ${gib}.`);
  }
  return gib;
}

/** The container environment: SAGEMAKER_MULTI_MODEL, the typed knobs, then the extra variables as given. */
export function checkExtraEnvironment(typed: Record<string, string>, extra: Record<string, string> | undefined, problems: string[]): void {
  for (const key of Object.keys(extra ?? {})) {
    if (key in typed) problems.push(`extraEnvironment.${key} repeats a variable the typed environment sets; keep one.`);
  }
  if (extra?.SAGEMAKER_MULTI_MODEL !== undefined && extra.SAGEMAKER_MULTI_MODEL !== 'true') {
    problems.push('extraEnvironment.SAGEMAKER_MULTI_MODEL must stay "true" on a multi-model endpoint.');
  }
}

/** What a Triton release decides: whether its CUDA runs on the GPU, and which serve variables it reads. */
export interface ReleaseFindings {
  readonly problems: string[];
  /** Advice: [warning id, message]. */
  readonly warnings: Array<[string, string]>;
}

/**
 * Checks the instance's GPU and the container variables against Triton `version`: a GPU below the release's minimum
 * compute capability is refused (the container cannot use it); a typed knob the release's serve script does not read
 * is refused (it would silently do nothing), an extra variable of that kind is a warning.
 */
export function checkTritonRelease(
  version: string,
  hardware: GpuInstanceType | undefined,
  typed: Record<string, string>,
  extra: Record<string, string> | undefined,
  hasInferenceAmi: boolean,
): ReleaseFindings {
  const problems: string[] = [];
  const warnings: Array<[string, string]> = [];
  const minimum = tritonMinComputeCapability(version);
  if (hardware && !meetsComputeCapability(hardware.computeCapability, minimum)) {
    const olderRelease = meetsComputeCapability(hardware.computeCapability, '6.0'); // what every release before 25.01 needs
    problems.push(
      `instanceType '${hardware.name}' has an ${hardware.gpuModel} (CUDA compute capability ${hardware.computeCapability}); ` +
        `Triton ${version} supports compute capability ${minimum} and later (NVIDIA's release notes), so the server ` +
        `cannot use this GPU. Choose a g4dn or g5 type${olderRelease ? ' or a Triton release before 25.01' : ''}.`,
    );
  }
  for (const { variable, since } of unreadServeVariables(version, typed)) {
    const noOp = variable === 'SAGEMAKER_TRITON_INFERENCE_TYPE' && typed[variable] === 'infer';
    const message =
      `environment sets ${variable}, which Triton's SageMaker serve script reads from release ${since} on; the image ` +
      `is ${version}, whose serve ignores it.`;
    if (noOp) warnings.push(['mme-deploy:unread-variable', `${message} 'infer' is what it does anyway; leave the setting out.`]);
    else problems.push(`${message} Use an image of ${since} or later, or leave the setting out.`);
  }
  for (const { variable, since } of unreadServeVariables(version, extra ?? {})) {
    warnings.push([
      'mme-deploy:unread-variable',
      `extraEnvironment sets ${variable}, which Triton's SageMaker serve script reads from release ${since} on; the image is ${version}.`,
    ]);
  }
  // YY.MM strings compare in release order.
  if (version > DEFAULT_TRITON_VERSION && !hasInferenceAmi) {
    warnings.push([
      'mme-deploy:gpu-driver',
      `Triton ${version} is newer than ${DEFAULT_TRITON_VERSION}, the newest release known to run on SageMaker's ` +
        'default GPU driver (470, CUDA 11.4); newer images have failed there with CUDA error 803. Set ' +
        'inferenceAmiVersion (for example InferenceAmiVersion.AL2_GPU_3_1, driver 550) unless you have tested it.',
    ]);
  }
  return { problems, warnings };
}
