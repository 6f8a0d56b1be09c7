// `local load --cpu`: what a Triton container without a GPU needs changed in an archive's staged copy, and which
// models cannot run there at all. The archive itself is never changed; config.pbtxt files of the copy are edited in
// place (comments and layout kept, lib/config/text-fields.ts), one warning per model says what changed.
// Sources read: triton-inference-server/core @ 73aad7c, tensorrt_backend @ e2ef6d7, dali_backend @ 01783f8,
// onnxruntime_backend @ 00fd3e8 (all triton-inference-server/), NVIDIA/DALI @ 003b1f7.

import { join } from 'node:path';
import type { ModelConfig } from '../config/model-config-schema';
import { parseModelConfig } from '../config/parse';
import { applyEdits, removeField, replaceValue, textFields, valuesOf, type TextEdit, type TextField } from '../config/text-fields';
import { diagnostic, type Diagnostic } from '../diagnostics';
import { daliGpuOperators, readDaliPipeline } from '../model-files/dali';
import type { Discovery } from '../repository/discover';
import type { LoadedModel } from '../repository/model';
import { readWith, versionModelFiles } from '../repository/model-file-subject';
import { loadedModel, reachedFrom } from '../repository/mme-rules';

/** A config.pbtxt of the staged copy, as CPU mode rewrote it. */
export interface CpuRewrite {
  readonly model: string;
  /** Absolute path of the config.pbtxt to overwrite in the staged copy. */
  readonly path: string;
  readonly text: string;
}

export interface CpuPlan {
  /** One warning per rewritten model, notes on what a CPU run does not show; errors for models that cannot run. */
  readonly diagnostics: Diagnostic[];
  /** Empty when any diagnostic is an error: nothing is to be staged then. */
  readonly rewrites: CpuRewrite[];
}

/**
 * What staging `discovery` (an extracted archive) for a container without a GPU takes. Only the models Triton loads
 * for the archive count (the ensemble SageMaker picks and its steps, else every model): the rest are never loaded.
 */
export function planCpuStaging(discovery: Discovery): CpuPlan {
  const loaded = loadedModel(discovery);
  const models = new Map(discovery.models.map((m) => [m.name, m]));
  const reached = loaded ? reachedFrom(loaded, models) : new Set(models.keys());
  const diagnostics: Diagnostic[] = [];
  const rewrites: CpuRewrite[] = [];
  for (const model of discovery.models) {
    if (!reached.has(model.name) || model.config.ensemble_scheduling !== undefined || model.platform === 'ensemble') continue;
    const refusal = gpuOnly(model);
    if (refusal) {
      diagnostics.push(refusal);
      continue;
    }
    const rewrite = rewriteForCpu(model, diagnostics);
    if (rewrite) rewrites.push(rewrite);
  }
  // Refused: nothing is staged, so no model is said to be rewritten.
  if (diagnostics.some((d) => d.severity === 'error')) {
    return { diagnostics: diagnostics.filter((d) => d.code !== CODE_REWRITTEN), rewrites: [] };
  }
  return { diagnostics, rewrites };
}

// ---- models that cannot run on a CPU ---------------------------------------------------------------------------

const CODE_GPU_ONLY = 'cpu-mode-gpu-only';
const CODE_REWRITTEN = 'cpu-mode-rewritten';

function gpuOnly(model: LoadedModel): Diagnostic | undefined {
  const at = { file: model.configFile, model: model.name };
  if (model.platform === 'tensorrt_plan' || model.backend === 'tensorrt') {
    // triton-inference-server/tensorrt_backend:src/instance_state.cc:262: an instance that is not KIND_GPU fails with
    // "TensorRT backend supports only GPU device"; a plan is an engine for one GPU and has no CPU form.
    return diagnostic(
      'error',
      CODE_GPU_ONLY,
      `'${model.name}' is a TensorRT plan, which runs only on a GPU (Triton: "TensorRT backend supports only GPU device"), ` +
        'so --cpu cannot load it: load the archive without --cpu on a machine with an NVIDIA GPU.',
      at,
      model.positions.of(model.config, model.config.platform ? 'platform' : 'backend'),
    );
  }
  if (model.backend === 'dali') return daliOnCpu(model);
  return undefined;
}

/**
 * A DALI model on a machine without a GPU: triton-inference-server/dali_backend:src/dali_model.h:258 builds it with
 * CPU_ONLY_DEVICE_ID when CUDA finds no device, and DALI then refuses every "gpu" or "mixed" operator
 * (NVIDIA/DALI:dali/pipeline/pipeline.cc @ 003b1f7, Pipeline::AddOperator: "Cannot add a GPU operator ..., device_id should not
 * be equal CPU_ONLY_DEVICE_ID", and the same for mixed operators). Decided from the serialized pipeline when there is
 * one; a pipeline given as Python (autoserialization, dali_backend:src/dali_model.h:186) is only known once DALI runs it.
 */
function daliOnCpu(model: LoadedModel): Diagnostic | undefined {
  const at = { file: model.configFile, model: model.name };
  const filename = model.config.default_model_filename || 'model.dali';
  const serialized = versionModelFiles(model, filename);
  const unknown: string[] = [];
  for (const file of serialized) {
    const read = readWith(model.files, file.path, readDaliPipeline);
    if (read === 'unreadable' || !read.ok) {
      unknown.push(`${file.shown} ${read === 'unreadable' ? 'cannot be read' : read.reason}`);
      continue;
    }
    const gpu = daliGpuOperators(read.pipeline);
    if (gpu.length > 0) {
      const named = gpu.slice(0, 3).map((op) => `${op.name} (${op.device})`).join(', ');
      const more = gpu.length > 3 ? ` and ${gpu.length - 3} more` : '';
      return diagnostic(
        'error',
        CODE_GPU_ONLY,
        `'${model.name}' is a DALI pipeline with GPU operators in ${file.shown}: ${named}${more}; without a GPU DALI refuses ` +
          'them ("Cannot add a GPU operator ..., device_id should not be equal CPU_ONLY_DEVICE_ID"), so --cpu cannot load it: ' +
          'serialize the pipeline with device="cpu" operators to try it here, or load without --cpu on a GPU.',
        at,
      );
    }
  }
  if (serialized.length === 0 && versionModelFiles(model, 'dali.py').length > 0) {
    unknown.push('its pipeline is Python (dali.py), which only DALI can run');
  }
  if (unknown.length === 0) return undefined;
  return diagnostic(
    'warning',
    'cpu-mode-dali-unknown',
    `'${model.name}': cannot tell whether its DALI pipeline needs a GPU (${unknown.join('; ')}); if it has "gpu" or "mixed" ` +
      'operators the load fails with DALI\'s "device_id should not be equal CPU_ONLY_DEVICE_ID".',
    at,
  );
}

// ---- rewriting instance groups ---------------------------------------------------------------------------------

function rewriteForCpu(model: LoadedModel, diagnostics: Diagnostic[]): CpuRewrite | undefined {
  const at = { file: model.configFile, model: model.name };
  const config = model.config;
  const groups = config.instance_group ?? [];
  const growable = (config.sequence_batching?.state ?? []).filter((s) => s.use_growable_memory);
  notes(model, diagnostics);
  if (groups.length === 0 && growable.length === 0) {
    // No instance_group: core gives the model the backend's preferred group, skipping a KIND_GPU one when there is no
    // GPU, or KIND_AUTO, which becomes KIND_CPU (triton-inference-server/core:src/model_config_utils.cc:849 and :897).
    return undefined;
  }
  const text = model.configText;
  const fields = text !== undefined && model.parsed ? textFields(text) : undefined;
  if (text === undefined || !fields) {
    if (!groups.some((g) => g.kind === 'KIND_GPU' || (g.gpus ?? []).length > 0) && growable.length === 0) return undefined;
    diagnostics.push(
      diagnostic(
        'error',
        'cpu-mode-config-unreadable',
        `'${model.name}': its config.pbtxt does not parse, so its instance groups cannot be rewritten for CPU; ` +
          '`mme-deploy validate` on the repository says why.',
        at,
      ),
    );
    return undefined;
  }

  const edits: TextEdit[] = [];
  const changes: string[] = [];
  const groupValues = valuesOf(fields, 'instance_group');
  groups.forEach((group, index) => {
    const value = groupValues[index];
    if (value?.kind !== 'message') throw new Error(`instance_group ${index} of ${model.name} not found in its text`);
    // An unnamed group gets the name Triton gives it, <model>_<index> (triton-inference-server/core:src/model_config_utils.cc:890).
    const label = `'${group.name || `${config.name || model.name}_${index}`}'`;
    const gpus = group.gpus ?? [];
    const gpuFields = value.fields.filter((f) => f.name === 'gpus');
    if (group.kind === 'KIND_GPU') {
      const kindValue = valuesOf(value.fields, 'kind').pop()!;
      edits.push(replaceValue(kindValue, 'KIND_CPU'));
      edits.push(...gpuFields.map((f) => removeField(text, f)));
      changes.push(`${label} KIND_GPU -> KIND_CPU${gpus.length > 0 ? `, gpus [${gpus.join(', ')}] removed` : ''}`);
    } else if ((group.kind === undefined || group.kind === 'KIND_AUTO') && gpus.length > 0) {
      // KIND_AUTO becomes KIND_CPU when there is no GPU, keeping its gpus (triton-inference-server/core:
      // src/model_config_utils.cc:895), and ValidateInstanceGroup refuses KIND_CPU with gpus (same file, :1778).
      edits.push(...gpuFields.map((f) => removeField(text, f)));
      changes.push(`${label} KIND_AUTO (KIND_CPU without a GPU), gpus [${gpus.join(', ')}] removed`);
    } else if (group.kind === 'KIND_MODEL') {
      diagnostics.push(
        diagnostic(
          'warning',
          'cpu-mode-kind-model',
          `'${model.name}': instance_group ${label} is KIND_MODEL, so the ${model.backend ?? 'model\'s'} backend places it ` +
            'itself; left as it is, it loads here only if that backend falls back to the CPU.',
          at,
        ),
      );
    }
  });
  if (growable.length > 0) {
    // triton-inference-server/core:src/sequence_state.cc:147: "'use_growable_memory' can only work with KIND_GPU
    // model instances right now. Please either change the instance type to KIND_GPU or set 'use_growable_memory' to
    // false". Without it the state buffer is allocated whole: the same results, more memory at the start.
    for (const state of valuesOf(valuesOf(fields, 'sequence_batching').flatMap(messageFields), 'state')) {
      for (const field of messageFields(state).filter((f) => f.name === 'use_growable_memory')) edits.push(removeField(text, field));
    }
    changes.push(`use_growable_memory removed from state ${growable.map((s) => `'${s.input_name}'`).join(', ')} (KIND_GPU only)`);
  }
  if (edits.length === 0) return undefined;

  const rewritten = applyEdits(text, edits);
  assertRewritten(model.name, rewritten);
  const python = model.backend === 'python' ? '; model.py now runs on a CPU instance, so code that calls CUDA itself fails' : '';
  diagnostics.push(
    diagnostic(
      'warning',
      CODE_REWRITTEN,
      `'${model.name}' rewritten for CPU in the staged copy (the archive is unchanged): ${changes.join('; ')}${python}.`,
      at,
      model.positions.of(model.config, groups.length > 0 ? 'instance_group' : 'sequence_batching'),
    ),
  );
  return { model: model.name, path: join(model.dir, 'config.pbtxt'), text: rewritten };
}

function messageFields(value: { kind: string; fields?: readonly TextField[] }): readonly TextField[] {
  return value.kind === 'message' ? (value.fields ?? []) : [];
}

/** What a CPU run leaves untried and the endpoint will still do. */
function notes(model: LoadedModel, diagnostics: Diagnostic[]): void {
  const accelerators = model.config.optimization?.execution_accelerators?.gpu_execution_accelerator ?? [];
  if (model.backend === 'onnxruntime' && accelerators.length > 0) {
    // triton-inference-server/onnxruntime_backend:src/onnxruntime.cc:444: gpu_execution_accelerator is read only for GPU (or
    // AUTO) instances; a CPU instance ignores it, so it is left in the staged config.
    diagnostics.push(
      diagnostic(
        'warning',
        'cpu-mode-gpu-accelerator',
        `'${model.name}': gpu_execution_accelerator ${accelerators.map((a) => a.name ?? '').join(', ')} is ignored by CPU ` +
          'instances (onnxruntime_backend reads it only for GPU ones), so this run does not try it; the endpoint will.',
        { file: model.configFile, model: model.name },
      ),
    );
  }
}

/** A rewritten config must still parse, with no KIND_GPU group and no gpus left: else the edit is a bug here. */
function assertRewritten(name: string, text: string): void {
  const parsed = parseModelConfig(text);
  const left = (parsed.config as ModelConfig).instance_group ?? [];
  const broken =
    parsed.diagnostics.some((d) => d.severity === 'error') || left.some((g) => g.kind === 'KIND_GPU' || (g.gpus ?? []).length > 0);
  if (broken) throw new Error(`internal error: the CPU rewrite of ${name}'s config.pbtxt is not what it should be`);
}
