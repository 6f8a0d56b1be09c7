// Triton's static ensemble rules (triton-inference-server/core:src/model_config_utils.cc:161): what one ensemble config must satisfy on
// its own, before any composing model is looked at — steps and maps present, each tensor written once, and data
// flowing from the ensemble inputs to every ensemble output with no tensor left dangling.

import type { EnsembleStepConfig, ModelConfig } from '../config/model-config-schema';
import { closest, diagnostic, type Diagnostic, type DiagnosticSource, type Severity, type SourcePosition } from '../diagnostics';
import { tritonName, type LoadedModel } from './model';

/** Whether the model is an ensemble Triton would schedule as one (platform `ensemble` with `ensemble_scheduling`). */
export function isEnsemble(model: LoadedModel): boolean {
  return model.config.platform === 'ensemble' && model.config.ensemble_scheduling !== undefined;
}

export function stepsOf(config: ModelConfig): readonly EnsembleStepConfig[] {
  return config.ensemble_scheduling?.step ?? [];
}

/** The composing-model → ensemble-tensor pairs of a map, in the order written. */
export function mapEntries(map: Record<string, string> | undefined): [string, string][] {
  return map ? Object.entries(map) : [];
}

/** A diagnostic about `model`'s config, placed at `at` when the parser recorded a position. */
export function ensembleDiagnostic(
  model: LoadedModel,
  severity: Severity,
  code: string,
  message: string,
  at: SourcePosition | undefined,
): Diagnostic {
  return diagnostic(severity, code, message, configSource(model), at);
}

/** The model's config.pbtxt as a diagnostic source (with its text, so faults get a caret excerpt). */
export function configSource(model: LoadedModel): DiagnosticSource {
  return { file: model.configFile, model: model.name, text: model.configText };
}

/** Where step `index` starts, or failing that where `ensemble_scheduling` is written. */
export function stepPosition(model: LoadedModel, index: number, field?: string): SourcePosition | undefined {
  const scheduling = model.config.ensemble_scheduling;
  const step = stepsOf(model.config)[index];
  return (
    (field !== undefined ? model.positions.of(step, field) : undefined) ??
    model.positions.of(step) ??
    model.positions.of(scheduling, 'step', index) ??
    model.positions.of(model.config, 'ensemble_scheduling')
  );
}

/** Where the map entry `key` of step `index` is written (falls back to the map field, then the step). */
export function mapEntryPosition(
  model: LoadedModel,
  index: number,
  map: 'input_map' | 'output_map',
  key: string,
): SourcePosition | undefined {
  const step = stepsOf(model.config)[index];
  return model.positions.of(step?.[map], key) ?? stepPosition(model, index, map);
}

/** How a step is named in messages: `step 1 (model 'bert')`, with Triton's 0-based index. */
export function describeStep(step: EnsembleStepConfig | undefined, index: number): string {
  return step?.model_name ? `step ${index} (model '${step.model_name}')` : `step ${index}`;
}

/** One ensemble tensor as the steps' maps use it. */
export interface TensorUse {
  readonly step: number;
  /** The composing model's input (for consumers) or output (for producers) name: the map key. */
  readonly key: string;
}

export interface TensorFlow {
  readonly name: string;
  readonly producers: TensorUse[];
  readonly consumers: TensorUse[];
  readonly isInput: boolean;
  readonly isOutput: boolean;
  /** Computed: the tensor gets a value when a request arrives (data-flow reachability, rule 10.11). */
  ready: boolean;
}

/**
 * The data flow of an ensemble: every tensor named by a map or by the ensemble's input/output, who writes it, who
 * reads it, and whether it is computed when a request arrives. A step fires when ALL its input tensors are ready
 * (Triton's BFS in `ValidateEnsembleSchedulingConfig`); a tensor is ready when it is an ensemble input or a step that
 * writes it fired.
 */
export function analyzeDataFlow(config: ModelConfig): { tensors: Map<string, TensorFlow>; fired: boolean[] } {
  const tensors = new Map<string, TensorFlow>();
  const inputs = new Set((config.input ?? []).map((i) => i.name ?? ''));
  const outputs = new Set((config.output ?? []).map((o) => o.name ?? ''));
  const tensor = (name: string): TensorFlow => {
    let t = tensors.get(name);
    if (!t) {
      t = { name, producers: [], consumers: [], isInput: inputs.has(name), isOutput: outputs.has(name), ready: false };
      tensors.set(name, t);
    }
    return t;
  };
  const steps = stepsOf(config);
  steps.forEach((step, index) => {
    for (const [key, value] of mapEntries(step.input_map)) tensor(value).consumers.push({ step: index, key });
    for (const [key, value] of mapEntries(step.output_map)) tensor(value).producers.push({ step: index, key });
  });

  // Kahn-style: count each step's inputs not yet ready; a step fires when its count reaches zero.
  const fired = steps.map(() => false);
  const waiting = steps.map((step) => new Set(mapEntries(step.input_map).map(([, value]) => value)).size);
  const queue: TensorFlow[] = [];
  for (const t of tensors.values()) {
    if (t.isInput) {
      t.ready = true;
      queue.push(t);
    }
  }
  while (queue.length > 0) {
    const t = queue.shift()!;
    for (const index of new Set(t.consumers.map((c) => c.step))) {
      if (fired[index] || --waiting[index]! > 0) continue;
      fired[index] = true;
      for (const [, value] of mapEntries(steps[index]!.output_map)) {
        const written = tensors.get(value)!;
        if (!written.ready) {
          written.ready = true;
          queue.push(written);
        }
      }
    }
  }
  return { tensors, fired };
}

/**
 * Rules 10.1–10.12 (and 10.24, which needs only the step) on one ensemble. 10.13 (platform/backend, version
 * directory) belongs to the repository rules. Returns nothing for a model that is not an ensemble or whose config did
 * not parse.
 */
export function checkEnsembleStatic(model: LoadedModel): Diagnostic[] {
  if (!model.parsed || !isEnsemble(model)) return [];
  const { config, positions } = model;
  const name = tritonName(model);
  const out: Diagnostic[] = [];
  const error = (code: string, message: string, at: SourcePosition | undefined) =>
    out.push(ensembleDiagnostic(model, 'error', code, message, at));

  if ((config.instance_group?.length ?? 0) > 0) {
    error(
      'ensemble-instance-group',
      `instance group should not be specified for ensemble '${name}'. Triton runs an ensemble's steps on its ` +
        `composing models' instances: remove instance_group here and set it on the composing models.`,
      positions.of(config, 'instance_group'),
    );
  }
  if (config.optimization !== undefined) {
    error(
      'ensemble-optimization',
      `optimization should not be specified for ensemble '${name}'. Remove the optimization block; set it on the composing models instead.`,
      positions.of(config, 'optimization'),
    );
  }
  if ((config.model_warmup?.length ?? 0) > 0) {
    error(
      'ensemble-model-warmup',
      `model_warmup can not be specified for ensemble '${name}'. Remove model_warmup here; warm up the composing models instead.`,
      positions.of(config, 'model_warmup'),
    );
  }

  const steps = stepsOf(config);
  if (steps.length === 0) {
    error(
      'ensemble-no-step',
      `must specify 'step' for ensemble '${name}'. Add at least one step { model_name: "..." input_map {...} ` +
        'output_map {...} } to ensemble_scheduling.',
      positions.of(config, 'ensemble_scheduling'),
    );
    return out;
  }

  let wiringComplete = true;
  steps.forEach((step, index) => {
    if (!step.model_name) {
      error(
        'ensemble-step-model-name',
        `must specify 'model_name' in step ${index} of ensemble '${name}'. Name the composing model (its directory name) this step runs.`,
        stepPosition(model, index),
      );
    }
    if (mapEntries(step.input_map).length === 0) {
      wiringComplete = false;
      error(
        'ensemble-step-input-map',
        `must specify 'input_map' in step ${index} of ensemble '${name}'. Add input_map { key: "<input of ` +
          `${step.model_name || 'the model'}>" value: "<ensemble tensor>" } for each of the model's inputs.`,
        stepPosition(model, index),
      );
    }
    if (mapEntries(step.output_map).length === 0) {
      wiringComplete = false;
      error(
        'ensemble-step-output-map',
        `must specify 'output_map' in step ${index} of ensemble '${name}'. Add output_map { key: "<output of ` +
          `${step.model_name || 'the model'}>" value: "<ensemble tensor>" } for the outputs later steps or the ` +
          'ensemble use.',
        stepPosition(model, index),
      );
    }
  });

  // 10.8 (and 10.24): each ensemble tensor has one writer. Core's BuildEnsembleGraph (src/model_config_utils.cc:105-125)
  // reports a second writer at poll time, whether it is another step or another output of the same step, so the
  // message is the same; the fault is shown at the value that names the tensor again.
  const writers = new Map<string, number>();
  steps.forEach((step, index) => {
    const byTensor = new Map<string, string[]>();
    for (const [key, value] of mapEntries(step.output_map)) byTensor.set(value, [...(byTensor.get(value) ?? []), key]);
    const onlyOnce = (tensor: string) => `ensemble tensor '${tensor}' can appear in an output map only once for ` +
      `ensemble '${name}' step ${index}.`;
    for (const [tensor, keys] of byTensor) {
      if (keys.length > 1) {
        error(
          'ensemble-outputs-into-one-tensor',
          `${onlyOnce(tensor)} ${describeStep(step, index)} maps its outputs ` +
            `${keys.map((k) => `'${k}'`).join(' and ')} all to '${tensor}' ` +
            `(Triton: "in ensemble ${name}, multiple outputs in model ${step.model_name ?? ''} are mapped to the ` +
              `same ensemble tensor ${tensor}"): give each output its own ensemble tensor name.`,
          model.positions.ofMapValue(step.output_map, keys[1]!) ?? mapEntryPosition(model, index, 'output_map', keys[1]!),
        );
      }
      const first = writers.get(tensor);
      if (first !== undefined) {
        error(
          'ensemble-tensor-written-twice',
          `${onlyOnce(tensor)} ${describeStep(steps[first], first)} already writes '${tensor}': rename the ` +
            'output_map value in one of the two steps.',
          model.positions.ofMapValue(step.output_map, keys[0]!) ?? mapEntryPosition(model, index, 'output_map', keys[0]!),
        );
      } else {
        writers.set(tensor, index);
      }
    }
  });

  // With a step missing a map, every tensor around it would look disconnected: fix the wiring first.
  if (!wiringComplete) return out;

  const { tensors } = analyzeDataFlow(config);
  const tensorNames = [...tensors.keys()];

  (config.input ?? []).forEach((input, index) => {
    const inputName = input.name ?? '';
    // Read by a step, or written by one (then reported below as an unused tensor).
    if (tensors.has(inputName)) return;
    const near = closest(inputName, tensorNames.filter((t) => !tensors.get(t)!.producers.length));
    error(
      'ensemble-input-unused',
      `ensemble input '${inputName}' for ensemble ${name}' is not used. No step's input_map reads '${inputName}'` +
        (near ? ` (a step reads '${near}': is that a misspelling?)` : '') +
        `: map it to a composing model's input (input_map { key: "<model input>" value: "${inputName}" }) or remove the input.`,
      positions.of(config, 'input', index),
    );
  });

  (config.output ?? []).forEach((output, index) => {
    const outputName = output.name ?? '';
    const t = tensors.get(outputName);
    if (!t) {
      const near = closest(outputName, tensorNames.filter((n) => tensors.get(n)!.producers.length));
      error(
        'ensemble-output-unused',
        `ensemble output '${outputName}' for ensemble ${name}' is not used. No step's output_map writes '${outputName}'` +
          (near ? ` (a step writes '${near}': is that a misspelling?)` : '') +
          `: map a composing model's output to it (output_map { key: "<model output>" value: "${outputName}" }) or remove the output.`,
        positions.of(config, 'output', index),
      );
      return;
    }
    if (!t.ready) {
      const at = positions.of(config, 'output', index);
      if (t.producers.length === 0) {
        error(
          'ensemble-output-not-written',
          `output '${outputName}' for ensemble '${name}' is not written. Steps read '${outputName}' but no step's output_map writes it: ` +
            `map a composing model's output to it (output_map { key: "<model output>" value: "${outputName}" }).`,
          at,
        );
        return;
      }
      const root = disconnectedRoot(t, tensors, steps);
      error(
        'ensemble-output-not-written',
        `output '${outputName}' for ensemble '${name}' is not written` +
          (root ? `: at least one of its depending tensors, '${root}', is not connected` : '') +
          `. No chain of steps leads from the ensemble inputs to '${outputName}'` +
          (root
            ? `: '${root}' is read by a step but neither an ensemble input nor written by any step. Map it from an ` +
              'ensemble input or a step output.'
            : ': the steps that write it wait on each other in a loop. Break the loop so each step reads tensors computed before it.'),
        at,
      );
    }
  });

  // 10.12: every tensor other than an ensemble output must be computed and read. Report causes, not echoes: a
  // tensor that is never written (a root) and a tensor nobody reads; a produced tensor that is not ready only because
  // of a root upstream is reported through that root.
  for (const t of tensors.values()) {
    if (t.isOutput) continue;
    const isRoot = !t.isInput && t.producers.length === 0;
    if (isRoot) {
      const reader = t.consumers[0]!;
      const near = closest(
        t.name,
        tensorNames.filter((n) => n !== t.name && (tensors.get(n)!.isInput || tensors.get(n)!.producers.length > 0)),
      );
      error(
        'ensemble-tensor-unused',
        `ensemble tensor '${t.name}' is unused in ensemble '${name}'. ` +
          `${describeStep(steps[reader.step], reader.step)} reads '${t.name}' (for its input '${reader.key}') but ` +
          'it is neither an ensemble input nor written by any step' +
          // A value one typo away from its key ("tokn_ids" for "token_ids") is a typo, not a swapped pair.
          (swappedKey(reader.key, config, tensors) && near !== reader.key
            ? `; its key '${reader.key}' is an ensemble tensor, so key and value look swapped: the key is the ` +
              `composing model's input name, the value the ensemble tensor.`
            : (near ? ` — did you mean '${near}'?` : '') +
              `: map it from an ensemble input or a step output, or add it to the ensemble's input list.`),
        mapEntryPosition(model, reader.step, 'input_map', reader.key),
      );
    } else if (t.consumers.length === 0) {
      const writer = t.producers[0];
      error(
        'ensemble-tensor-unused',
        `ensemble tensor '${t.name}' is unused in ensemble '${name}'. ` +
          (writer
            ? `${describeStep(steps[writer.step], writer.step)} writes '${t.name}' (from its output ` +
              `'${writer.key}') but no step reads it and it is not an ensemble output: ` +
              `remove that output_map entry (a composing model's outputs may be left unmapped) or add '${t.name}' ` +
                `to the ensemble's output list.`
            : `Nothing reads it: remove it.`),
        writer ? mapEntryPosition(model, writer.step, 'output_map', writer.key) : undefined,
      );
    } else if (!t.ready && !disconnectedRoot(t, tensors, steps)) {
      const writer = t.producers[0]!;
      error(
        'ensemble-tensor-unused',
        `ensemble tensor '${t.name}' is unused in ensemble '${name}'. It is never computed: the steps that write ` +
          'it depend on it themselves, in a loop. ' +
          `Break the loop so that each step reads only tensors computed before it.`,
        mapEntryPosition(model, writer.step, 'output_map', writer.key),
      );
    }
  }
  return out;
}

/** Whether an input_map key names a tensor that exists on the ensemble side (an input, or written by a step). */
function swappedKey(key: string, config: ModelConfig, tensors: ReadonlyMap<string, TensorFlow>): boolean {
  if ((config.input ?? []).some((i) => i.name === key)) return true;
  return (tensors.get(key)?.producers.length ?? 0) > 0;
}

/** An upstream tensor of `start` that nothing writes and is no ensemble input: why `start` is never computed. */
function disconnectedRoot(
  start: TensorFlow,
  tensors: ReadonlyMap<string, TensorFlow>,
  steps: readonly EnsembleStepConfig[],
): string | undefined {
  const seen = new Set<string>();
  const queue = [start];
  while (queue.length > 0) {
    const t = queue.shift()!;
    if (seen.has(t.name)) continue;
    seen.add(t.name);
    if (!t.isInput && t.producers.length === 0) return t.name;
    if (t.isInput) continue;
    for (const producer of t.producers) {
      for (const [, value] of mapEntries(steps[producer.step]?.input_map)) {
        const upstream = tensors.get(value);
        if (upstream && !upstream.ready) queue.push(upstream);
      }
    }
  }
  return undefined;
}
