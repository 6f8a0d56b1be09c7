// §9 instance groups: kinds and GPU ids (SageMaker GPU MMEs have one GPU), TensorRT profiles, rate limiter resources.

import type { LoadedModel } from '../model';
import type { Reporter } from './reporter';

export function checkInstanceGroups(model: LoadedModel, r: Reporter, isEnsemble: boolean) {
  const c = model.config;
  const groups = c.instance_group ?? [];
  if (isEnsemble) return; // 10.1 is an ensemble rule
  const resources = new Map<string, 'global' | 'device'>();
  groups.forEach((g, i) => {
    const label = g.name || `${model.name}_${i}`;
    const gpus = g.gpus ?? [];
    if (g.kind === 'KIND_MODEL' && gpus.length > 0) {
      r.error('instance-group-model-gpus', g, 'gpus', `instance group ${label} of model ${model.name} has kind ` +
        'KIND_MODEL but specifies one or more GPUs.');
    }
    if (g.kind === 'KIND_CPU' && gpus.length > 0) {
      r.error('instance-group-cpu-gpus', g, 'gpus', `instance group ${label} of model ${model.name} has kind ` +
        'KIND_CPU but specifies one or more GPUs.');
    }
    gpus.forEach((id, j) => {
      if (id < 0) {
        r.error('instance-group-gpu-id', g, 'gpus', `instance group ${label} of model ${model.name} specifies ` +
          `invalid or unsupported gpu id ${id}. GPU ids start at 0.`, j);
      } else if (id > 0) {
        r.warning('instance-group-gpu-id', g, 'gpus', `instance group ${label} of model ${model.name} specifies ` +
          `gpu id ${id}; SageMaker GPU multi-model endpoints run on single-GPU instances (GPU 0 only), where ` +
          `Triton reports "specifies invalid or unsupported gpu id ${id}".`, j);
      }
    });
    const profiles = g.profile ?? [];
    if (profiles.length > 0 && model.platform !== 'tensorrt_plan') {
      r.error('instance-group-profile-platform', g, 'profile', `instance group ${label} of model ${model.name} and ` +
        `platform ${model.platform ?? ''}specifies profile field which is only supported for TensorRT models.`);
    }
    profiles.forEach((p, j) => {
      if (p === '') {
        r.error('instance-group-profile', g, 'profile', `profile name must not be empty (instance group ${label} ` +
          `of model ${model.name}).`, j);
      } else if (!/^\d+$/.test(p)) {
        r.error('instance-group-profile', g, 'profile', `instance group ${label} of model ${model.name} specifies ` +
          `invalid profile ${p}. The field should contain the string representation of a non-negative integer.`, j);
      }
    });
    for (const res of g.rate_limiter?.resources ?? []) {
      const scope = res.global ? 'global' : 'device';
      const name = res.name ?? '';
      const prior = resources.get(name);
      if (prior && prior !== scope) {
        r.error('rate-limiter-resource-scope', res, 'global', `Resource "${name}" is present as both global and ` +
          'device-specific resource in the model configuration.');
      }
      resources.set(name, scope);
    }
  });
}
