// TensorRT plans and the endpoint's GPU: a serialized engine runs only on the compute capability it was built for and
// with the TensorRT version that built it, so a plan built on a developer's GPU or with another TensorRT fails to load
// on the endpoint. Nothing in the file says which it was built for without TensorRT itself: a warning, never an error.

import { DEFAULT_INSTANCE_TYPE } from '../catalog/endpoint-target';
import { findInstanceType } from '../catalog/instance-types';
import { DEFAULT_TRITON_VERSION } from '../catalog/triton-images';
import { tritonRelease } from '../catalog/triton-releases';
import { Diagnostic, diagnostic } from '../diagnostics';
import type { LoadedModel } from './model';

/** The endpoint the repository is validated for. */
export interface PlanTarget {
  /** @default ml.g4dn.xlarge, the constructs' default */
  readonly instanceType?: string;
  /** @default DEFAULT_TRITON_VERSION, the constructs' and the image's default */
  readonly tritonVersion?: string;
}

/** One warning per `tensorrt_plan` model, naming the compute capability and TensorRT version its engine must match. */
export function checkTensorrtPlans(models: readonly LoadedModel[], target: PlanTarget = {}): Diagnostic[] {
  const plans = models.filter((m) => m.platform === 'tensorrt_plan');
  if (plans.length === 0) return [];
  const instanceName = target.instanceType ?? DEFAULT_INSTANCE_TYPE;
  const instance = findInstanceType(instanceName);
  const version = target.tritonVersion ?? DEFAULT_TRITON_VERSION;
  const release = tritonRelease(version);
  const gpu = instance
    ? `compute capability ${instance.computeCapability} (the ${instance.gpuModel} of ${instance.name})`
    : `the GPU of ${instanceName}`;
  const tensorrt = release
    ? `TensorRT ${release.tensorrt}, the version in Triton ${version}'s image`
    : `the TensorRT of Triton ${version}'s image`;
  return plans.map((model) =>
    diagnostic(
      'warning',
      'tensorrt-plan-target',
      `'${model.name}' is a TensorRT plan: its engine loads only on the GPU architecture and with the TensorRT version that built it. ` +
        `Build ${model.defaultModelFilename ?? 'model.plan'} for ${gpu} with ${tensorrt}, e.g. with trtexec inside that image on that ` +
        'instance type; otherwise the LOAD fails with TensorRT\'s "The engine plan file is generated on an incompatible device" or ' +
        '"is not compatible with this version of TensorRT".',
      { file: model.configFile, model: model.name, ...(model.configText !== undefined ? { text: model.configText } : {}) },
      model.positions.of(model.config, 'platform') ?? model.positions.of(model.config, 'backend'),
    ),
  );
}
