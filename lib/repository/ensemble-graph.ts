// An ensemble against the composing models beside it (ValidateEnsembleConfig,
// triton-inference-server/core:src/ensemble_scheduler/ensemble_utils.cc:246): models present and loadable, no
// cycle between ensembles, batch sizes, every map key a real input/output, one data type and shape per tensor,
// decoupled streams kept apart. Also the pipeline as a graph of steps and tensors, for `mme-deploy graph`.

import type { DataTypeName, EnsembleStepConfig } from '../config/model-config-schema';
import { closest, type Diagnostic, type SourcePosition } from '../diagnostics';
import {
  analyzeDataFlow,
  checkEnsembleStatic,
  describeStep,
  ensembleDiagnostic,
  isEnsemble,
  mapEntries,
  mapEntryPosition,
  stepPosition,
  stepsOf,
} from './ensemble-rules';
import { ioCompletion } from './io-completion';
import type { LoadedModel } from './model';

export interface EnsembleGraphOptions {
  /**
   * Problems already found in each model, by model name. A composing model with an error is "not valid" to Triton
   * (rule 10.16), and its first error is quoted. When left out, only models whose config did not parse count as
   * invalid.
   * @default - no known problems
   */
  readonly modelDiagnostics?: ReadonlyMap<string, readonly Diagnostic[]>;
}

/**
 * Models whose inputs/outputs Triton's backend may still fill in at load (auto-complete). Their configs as written
 * are not the last word, so nothing may cascade from them into an ensemble (issue 10.1): a step that maps a tensor
 * the model only declares after auto-complete (vLLM's text_input) is not an error. A model whose completion was done
 * offline (its model.onnx read) arrives here with the completed config.
 */
function mayAutoCompleteIo(model: LoadedModel): boolean {
  return ioCompletion(model) !== 'none';
}

/**
 * Whether auto-complete may add tensors to a list that the config already fills (not only fill empty lists). TensorRT
 * does not ('fills-listed'): a step naming a tensor its non-empty list lacks fails the load.
 */
function mayAddToLists(model: LoadedModel): boolean {
  const completion = ioCompletion(model);
  return completion === 'fills-entries' || completion === 'unknown';
}

const LATEST = -1n;

/**
 * Rules 10.14–10.30 for one ensemble against the models of its repository (keyed by model name). Static rules
 * (10.1–10.12) are `checkEnsembleStatic`'s; `checkEnsembles` runs both over a whole repository.
 */
export function checkEnsembleGraph(
  ensemble: LoadedModel,
  models: ReadonlyMap<string, LoadedModel>,
  options: EnsembleGraphOptions = {},
): Diagnostic[] {
  if (!ensemble.parsed || !isEnsemble(ensemble)) return [];
  const out: Diagnostic[] = [];
  const e = ensemble.name;
  const config = ensemble.config;
  const steps = stepsOf(config);
  const error = (code: string, message: string, at: SourcePosition | undefined) =>
    out.push(ensembleDiagnostic(ensemble, 'error', code, message, at));

  // 10.14: one diagnostic naming every missing model, as Triton does.
  const missing: { name: string; step: number }[] = [];
  steps.forEach((step, index) => {
    const m = step.model_name;
    if (m && !models.has(m) && !missing.some((x) => x.name === m)) missing.push({ name: m, step: index });
  });
  if (missing.length > 0) {
    const available = [...models.keys()].filter((n) => n !== e);
    const hints = missing
      .map(({ name }) => [name, closest(name, available)] as const)
      .filter(([, near]) => near !== undefined)
      .map(([name, near]) => `'${near}' for '${name}'`);
    error(
      'ensemble-missing-model',
      `ensemble ${e} contains models that are not available or ambiguous: ${missing.map((m) => m.name).join(', ')}. ` +
        `Each composing model must be a directory beside '${e}' named exactly as the step's model_name` +
        (hints.length ? ` (did you mean ${hints.join(', ')}?)` : '') +
        (available.length ? `; models here: ${available.join(', ')}.` : '; there are no other models here.'),
      stepPosition(ensemble, missing[0]!.step, 'model_name'),
    );
  }

  // 10.15: name the whole path back to this ensemble.
  const cycle = findEnsembleCycle(e, models);
  if (cycle) {
    const first = steps.findIndex((s) => s.model_name === cycle[1]);
    error(
      'ensemble-cycle',
      `${cycleMessage(cycle)}. An ensemble cannot contain itself, directly or through other ensembles` +
        (cycle.length > 3 ? ` (${cycle.join(' -> ')})` : '') +
        ': ' +
        `remove the step that closes the loop.`,
      stepPosition(ensemble, Math.max(first, 0), 'model_name'),
    );
  }

  const batching = (config.max_batch_size ?? 0) > 0;
  const tensors = new Map<string, TensorSpec>();
  const declare = (name: string, spec: TensorSpec) => {
    if (!tensors.has(name)) tensors.set(name, spec);
  };
  for (const [kind, tensorsOfKind] of [['input', config.input ?? []], ['output', config.output ?? []]] as const) {
    for (const tensor of tensorsOfKind) {
      declare(tensor.name ?? '', {
        model: e,
        batching,
        dataType: tensor.data_type,
        // 10.27: the ensemble's own tensors are compared by their reshape when they have one.
        dims: tensor.reshape ? (tensor.reshape.shape ?? []) : (tensor.dims ?? []),
        where: `ensemble ${kind} '${tensor.name}'`,
      });
    }
  }

  // A model run by several steps is reported once per rule, at its first step.
  const reported = new Set<string>();
  steps.forEach((step, index) => {
    const m = step.model_name;
    const model = m ? models.get(m) : undefined;
    if (!model) return;
    const at = stepPosition(ensemble, index, 'model_name');
    const firstStepOfModel = !reported.has(model.name);
    reported.add(model.name);
    // A model on this ensemble's own cycle is reported by 10.15 above.
    const onOwnCycle = cycle?.includes(model.name) ?? false;

    // 10.16 / 10.17: Triton loads composing models first; an unloadable one makes the ensemble fail.
    const firstError = firstErrorOf(model, options);
    const innerCycle = isEnsemble(model) && !onOwnCycle ? findEnsembleCycle(model.name, models) : undefined;
    if (onOwnCycle || !firstStepOfModel) {
      // reported already
    } else if (model.versions.length === 0) {
      error(
        'ensemble-model-no-version',
        `ensemble '${e}' depends on '${m}' which has no loaded version.` +
          (firstError
            ? ` Model '${m}' loading failed with error: ${firstError}`
            : ` Give '${m}' a numeric version directory (such as ${m}/1/) that its version_policy selects.`),
        at,
      );
    } else if (firstError || !model.parsed || innerCycle) {
      const reason =
        firstError ??
        (!model.parsed
          ? `its ${model.configFile} could not be parsed`
          : cycleMessage(innerCycle!));
      error(
        'ensemble-invalid-model',
        `ensemble '${e}' depends on '${m}' which is not valid. Model '${m}' failed with error: ${reason}`,
        at,
      );
    }

    // 10.18: an unset model_version is 0 to protobuf, and Triton then asks for version 0.
    if (model.versions.length > 0) {
      const required = step.model_version ?? 0n;
      if (required !== LATEST && !model.versions.some((v) => BigInt(v) === required)) {
        error(
          'ensemble-model-version-not-loaded',
          `ensemble '${e}' depends on '${m}' whose required version ${required} is not loaded. ` +
            (step.model_version === undefined
              ? `${describeStep(step, index)} does not set model_version, so Triton asks for version 0 (the ` +
                'protobuf default): set model_version: -1 to use the latest version.'
              : `'${m}' loads version${model.versions.length > 1 ? 's' : ''} ${model.versions.join(', ')} (under ` +
                'its version_policy): use one of them, or -1 for the latest.'),
          stepPosition(ensemble, index, 'model_version'),
        );
      }
    }

    // 10.19 (= 3.3): composing max_batch_size 0 is allowed, a smaller positive one is not.
    const mbs = model.config.max_batch_size ?? 0;
    const ensembleMbs = config.max_batch_size ?? 0;
    if (firstStepOfModel && mbs !== 0 && mbs < ensembleMbs) {
      error(
        'ensemble-max-batch-size',
        `ensemble ${e} allows maximum batch size ${ensembleMbs}, but it contains model ${m} which only allows ` +
          `maximum batch size to be ${mbs}. ` +
          `Lower the ensemble's max_batch_size to at most ${mbs}, or raise '${m}''s.`,
        at,
      );
    }

    // One root cause, one error: when the composing model's own tensor list is wrong (a name its model file does
    // not have), Triton never loads it, so never compares the ensemble's maps with it; checking them here would only
    // echo that error, with suggestions drawn from the very names that are wrong. Other failures (a missing file)
    // leave its tensor names trustworthy, and the maps are still checked.
    if (!model.parsed || hasTensorError(model, options)) return;
    checkStepTensors(ensemble, index, step, model, tensors, out);
  });

  checkDecoupledStreams(ensemble, models, out);
  return out;
}

/** Whether the model's own errors say its declared inputs or outputs are wrong (`onnx-unknown-input`, ...). */
function hasTensorError(model: LoadedModel, options: EnsembleGraphOptions): boolean {
  return (options.modelDiagnostics?.get(model.name) ?? []).some(
    (d) => d.severity === 'error' && /-unknown-(input|output)$|^byte-order-mark$|^syntax-error$/.test(d.code),
  );
}

function firstErrorOf(model: LoadedModel, options: EnsembleGraphOptions): string | undefined {
  const first = options.modelDiagnostics?.get(model.name)?.find((d) => d.severity === 'error');
  if (!first) return undefined;
  const where = first.line !== undefined ? ` (${first.file}:${first.line})` : '';
  return `${first.message}${where}`;
}

/** What one map entry (or ensemble input/output) says about an ensemble tensor. */
interface TensorSpec {
  readonly model: string;
  readonly batching: boolean;
  readonly dataType: DataTypeName | undefined;
  readonly dims: readonly bigint[];
  /** For messages: `input 'token_ids' of 'bert-trt'`. */
  readonly where: string;
}

/** Rules 10.20–10.27 for one step: Triton's `ValidateTensorMapping`. */
function checkStepTensors(
  ensemble: LoadedModel,
  index: number,
  step: EnsembleStepConfig,
  model: LoadedModel,
  tensors: Map<string, TensorSpec>,
  out: Diagnostic[],
): void {
  const e = ensemble.name;
  const m = model.name;
  const error = (code: string, message: string, at: SourcePosition | undefined) =>
    out.push(ensembleDiagnostic(ensemble, 'error', code, message, at));
  const batching = (model.config.max_batch_size ?? 0) > 0;
  const inputs = model.config.input ?? [];
  const outputs = model.config.output ?? [];
  const inputMap = mapEntries(step.input_map);
  const outputMap = mapEntries(step.output_map);

  const unknownInputs = inputs.length === 0 && mayAutoCompleteIo(model);
  const unknownOutputs = outputs.length === 0 && mayAutoCompleteIo(model);
  // A step without input_map or output_map is reported by the static rules (10.6, 10.7): do not echo it here.
  const checkInputs = !unknownInputs && inputMap.length > 0;
  const checkOutputs = !unknownOutputs && outputMap.length > 0;
  if (unknownInputs || unknownOutputs) {
    const sides = [unknownInputs && 'inputs', unknownOutputs && 'outputs'].filter(Boolean).join(' and ');
    out.push(
      ensembleDiagnostic(
        ensemble,
        'warning',
        'ensemble-step-unchecked',
        `${describeStep(step, index)}: '${m}' ${model.hasConfig ? `lists no ${sides} in its config.pbtxt` : 'has no config.pbtxt'}; ` +
          `Triton's ${model.backend ? `${model.backend} ` : ''}backend fills them in at load (auto-complete), ` +
          `so the ${sides === 'inputs' ? 'input_map' : sides === 'outputs' ? 'output_map' : 'maps'} of this step ` +
            `cannot be checked here. List them in ${model.configFile} to have them checked.`,
        stepPosition(ensemble, index, 'model_name'),
      ),
    );
  }

  const consistent = (tensor: string, spec: TensorSpec, at: SourcePosition | undefined) => {
    const known = tensors.get(tensor);
    if (!known) {
      tensors.set(tensor, spec);
      return;
    }
    if (known.dataType && spec.dataType && known.dataType !== spec.dataType) {
      error(
        'ensemble-dtype-mismatch',
        `in ensemble ${e}, ensemble tensor ${tensor}: inconsistent data type: ${known.dataType} is inferred from ` +
          `model ${known.model} while ${spec.dataType} is inferred from model ${spec.model}. ` +
          `${capitalize(known.where)} is ${known.dataType} but ${spec.where} is ${spec.dataType}: make the two ` +
            'data_type fields the same (convert in the model if the types really differ).',
        at,
      );
      return;
    }
    if (known.dims.length === 0 || spec.dims.length === 0) return;
    const full = (s: TensorSpec) => (s.batching ? [-1n, ...s.dims] : [...s.dims]);
    if (!dimsAgree(known.dims, spec.dims) && !dimsAgree(full(known), full(spec))) {
      error(
        'ensemble-shape-mismatch',
        `in ensemble ${e}, ensemble tensor ${tensor}: inconsistent shape: ${dimsText(full(known))} is inferred ` +
          `from model ${known.model} while ${dimsText(full(spec))} is inferred from model ${spec.model}. ` +
          `${capitalize(known.where)} has dims ${dimsText(known.dims)}${batchNote(known)} but ${spec.where} has ` +
            `dims ${dimsText(spec.dims)}${batchNote(spec)}: ` +
          `make them agree (-1 matches any size; dims leave out the batch dimension when max_batch_size > 0).`,
        at,
      );
    }
  };

  if (checkInputs) {
    const names = inputs.map((i) => i.name ?? '');
    // Inputs that an unknown key most likely meant: their 10.21 would only echo the 10.20 reported for the key.
    const explained = new Set<string>();
    for (const [key, value] of inputMap) {
      if (names.includes(key)) continue;
      const near = closest(key, names.filter((n) => !step.input_map![n]));
      // A key one typo away from its value ("token_id" -> "token_ids") is a typo, not a swapped pair.
      const swapped = names.includes(value) && !names.includes(key) && near !== value;
      explained.add(swapped ? value : (near ?? ''));
      const message =
        `in ensemble ${e}, ensemble tensor ${value} is mapping to non-existing input ${key} in model ${m}. ` +
        unknownKeyHint('input', m, value, names, swapped, near);
      if (mayAddToLists(model)) {
        out.push(ensembleDiagnostic(ensemble, 'warning', 'ensemble-unknown-input',
          `${message} ${mayAddNote(model, 'input', key)}`, mapEntryPosition(ensemble, index, 'input_map', key)));
      } else {
        error('ensemble-unknown-input', message, mapEntryPosition(ensemble, index, 'input_map', key));
      }
    }
    for (const input of inputs) {
      const inputName = input.name ?? '';
      const entry = inputMap.find(([key]) => key === inputName);
      if (!entry) {
        if (input.optional || explained.has(inputName)) continue;
        error(
          'ensemble-input-not-mapped',
          `in ensemble ${e}, input ${inputName} in model ${m} is not mapped to any ensemble tensors. ` +
            `Add input_map { key: "${inputName}" value: "<ensemble tensor>" } to ${describeStep(step, index)}, or ` +
              `mark the input optional: true in ${model.configFile}.`,
          stepPosition(ensemble, index, 'input_map'),
        );
        continue;
      }
      consistent(
        entry[1],
        { model: m, batching, dataType: input.data_type, dims: input.dims ?? [], where: `input '${inputName}' of '${m}'` },
        mapEntryPosition(ensemble, index, 'input_map', inputName),
      );
    }
  }

  if (checkOutputs) {
    const names = outputs.map((o) => o.name ?? '');
    const written = new Set<string>();
    for (const [key, value] of outputMap) {
      // Two outputs into one tensor is reported by the static rules (10.24); compare the first only.
      if (written.has(value)) continue;
      written.add(value);
      const output = outputs.find((o) => (o.name ?? '') === key);
      if (!output) {
        const near = closest(key, names);
        const swapped = names.includes(value) && near !== value;
        const message =
          `in ensemble ${e}, ensemble tensor ${value} is mapped from non-existing output ${key} in model ${m}. ` +
          unknownKeyHint('output', m, value, names, swapped, near);
        if (mayAddToLists(model)) {
          out.push(ensembleDiagnostic(ensemble, 'warning', 'ensemble-unknown-output',
            `${message} ${mayAddNote(model, 'output', key)}`, mapEntryPosition(ensemble, index, 'output_map', key)));
        } else {
          error('ensemble-unknown-output', message, mapEntryPosition(ensemble, index, 'output_map', key));
        }
        continue;
      }
      consistent(
        value,
        { model: m, batching, dataType: output.data_type, dims: output.dims ?? [], where: `output '${key}' of '${m}'` },
        mapEntryPosition(ensemble, index, 'output_map', key),
      );
    }
  }
}

/** Why an unknown map key is only a warning: the composing model's backend may still add that tensor. */
function mayAddNote(model: LoadedModel, kind: 'input' | 'output', key: string): string {
  return `Triton's ${model.backend ?? ''} backend completes '${model.name}''s config at load (auto-complete) and ` +
    `may add ${kind} '${key}'; ` +
    `if it does not, the load fails with this message. List the ${kind} in ${model.configFile} to have the step checked here.`;
}

/**
 * Triton's wording for a cycle `[a, ..., z, a]`: "a -> ... -> z -> a", the ensemble, the one that closes the loop,
 * and the ensemble again (core src/model_repository_manager/model_repository_manager.cc:2250-2256).
 */
function cycleMessage(cycle: readonly string[]): string {
  const start = cycle[0]!;
  return `circular dependency between ensembles: ${start} -> ... -> ${cycle[cycle.length - 2]!} -> ${start}`;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function batchNote(spec: TensorSpec): string {
  return spec.batching ? ` plus the batch dimension` : '';
}

/** Triton's `CompareDimsWithWildcard`: same rank, each pair equal or either -1. */
/** How to fix an input_map/output_map key that names no input/output of the composing model. */
function unknownKeyHint(
  kind: 'input' | 'output',
  model: string,
  value: string,
  names: readonly string[],
  swapped: boolean,
  near: string | undefined,
): string {
  if (swapped) {
    return `'${value}' is an ${kind} of '${model}': key and value look swapped — the key is the composing model's ` +
      `${kind} name, the value the ensemble tensor.`;
  }
  return (
    `'${model}' has ${kind}${names.length === 1 ? '' : 's'} ${names.map((n) => `'${n}'`).join(', ') || '(none)'}` +
    (near ? ` (did you mean '${near}'?)` : '') +
    `. The ${kind}_map key is the composing model's ${kind} name, the value the ensemble tensor.`
  );
}

export function dimsAgree(a: readonly bigint[], b: readonly bigint[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i] || d === LATEST || b[i] === LATEST);
}

/** Triton's `DimsListToString`: `[-1,128]`. */
export function dimsText(dims: readonly bigint[]): string {
  return `[${dims.join(',')}]`;
}

// ---- cycles and decoupled models ----------------------------------------------------------------------------

/** The ensembles `name`'s steps run directly (composing models that are ensembles). */
function composingEnsembles(name: string, models: ReadonlyMap<string, LoadedModel>): string[] {
  const model = models.get(name);
  if (!model || !isEnsemble(model)) return [];
  const names: string[] = [];
  for (const step of stepsOf(model.config)) {
    const m = step.model_name;
    const composing = m ? models.get(m) : undefined;
    if (composing && isEnsemble(composing) && !names.includes(m!)) names.push(m!);
  }
  return names;
}

/**
 * The shortest chain of ensembles leading from `start` back to itself (`['a', 'b', 'a']`), or undefined when `start`
 * is on no cycle.
 */
export function findEnsembleCycle(start: string, models: ReadonlyMap<string, LoadedModel>): string[] | undefined {
  const parent = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const current = queue.shift()!;
    for (const next of composingEnsembles(current, models)) {
      if (next === start) {
        const path = [start];
        for (let at = current; at !== start; at = parent.get(at)!) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!parent.has(next)) {
        parent.set(next, current);
        queue.push(next);
      }
    }
  }
  return undefined;
}

function isDecoupledModel(model: LoadedModel, models: ReadonlyMap<string, LoadedModel>, seen: Set<string>): boolean {
  if (model.config.model_transaction_policy?.decoupled === true) return true;
  return isEnsemble(model) && decoupledModels(model, models, seen).length > 0;
}

/**
 * The composing models (at any depth) that are decoupled, in step order. Triton makes an ensemble decoupled when any
 * of them is (rule 10.29) — and SageMaker cannot invoke a decoupled model.
 */
export function decoupledModels(
  ensemble: LoadedModel,
  models: ReadonlyMap<string, LoadedModel>,
  seen: Set<string> = new Set(),
): string[] {
  if (seen.has(ensemble.name)) return [];
  seen.add(ensemble.name);
  const found: string[] = [];
  for (const step of stepsOf(ensemble.config)) {
    const model = step.model_name ? models.get(step.model_name) : undefined;
    if (!model || found.includes(model.name)) continue;
    if (model.config.model_transaction_policy?.decoupled === true) found.push(model.name);
    else if (isEnsemble(model)) {
      for (const inner of decoupledModels(model, models, seen)) if (!found.includes(inner)) found.push(inner);
    }
  }
  return found;
}

/** Whether Triton serves this ensemble as decoupled (rule 10.29): some composing model, at any depth, is decoupled. */
export function isDecoupledEnsemble(ensemble: LoadedModel, models: ReadonlyMap<string, LoadedModel>): boolean {
  return isEnsemble(ensemble) && decoupledModels(ensemble, models).length > 0;
}

/**
 * Rule 10.28: a step (or the ensemble's response) must not combine tensors from different decoupled streams. Each
 * decoupled step starts a new stream; other steps pass on the stream of their inputs.
 */
function checkDecoupledStreams(ensemble: LoadedModel, models: ReadonlyMap<string, LoadedModel>, out: Diagnostic[]) {
  const steps = stepsOf(ensemble.config);
  const decoupled = steps.map((s) => {
    const model = s.model_name ? models.get(s.model_name) : undefined;
    return model ? isDecoupledModel(model, models, new Set([ensemble.name])) : false;
  });
  if (!decoupled.some(Boolean)) return;

  const stream = new Map<string, number>();
  const origin = ['the request'];
  for (const input of ensemble.config.input ?? []) stream.set(input.name ?? '', 0);
  const fired = steps.map(() => false);
  const mixed = (tensorNames: string[]) => {
    const labels = tensorNames.map((t) => stream.get(t)!);
    const other = labels.findIndex((l) => l !== labels[0]);
    return other < 0
      ? undefined
      : `'${tensorNames[0]}' comes from ${origin[labels[0]!]} while '${tensorNames[other]}' comes from ${origin[labels[other]!]}`;
  };
  for (let changed = true; changed; ) {
    changed = false;
    steps.forEach((step, index) => {
      if (fired[index]) return;
      const reads = mapEntries(step.input_map).map(([, v]) => v);
      if (reads.length === 0 || !reads.every((t) => stream.has(t))) return;
      fired[index] = true;
      changed = true;
      const conflict = mixed(reads);
      if (conflict) {
        out.push(
          ensembleDiagnostic(
            ensemble,
            'error',
            'ensemble-mixed-decoupled-inputs',
            `in ensemble ${ensemble.name}, step of model '${step.model_name}' receives inputs originated from ` +
              'different decoupled models. ' +
              `In ${describeStep(step, index)}, ${conflict}: a step can only combine tensors of one decoupled response stream.`,
            stepPosition(ensemble, index, 'input_map'),
          ),
        );
      }
      let label = stream.get(reads[0]!)!;
      if (decoupled[index]) {
        origin.push(`the responses of decoupled model '${step.model_name}'`);
        label = origin.length - 1;
      }
      for (const [, value] of mapEntries(step.output_map)) if (!stream.has(value)) stream.set(value, label);
    });
  }
  const outputs = (ensemble.config.output ?? []).map((o) => o.name ?? '');
  if (outputs.length > 1 && outputs.every((o) => stream.has(o))) {
    const conflict = mixed(outputs);
    if (conflict) {
      out.push(
        ensembleDiagnostic(
          ensemble,
          'error',
          'ensemble-mixed-decoupled-inputs',
          `in ensemble ${ensemble.name}, step of model '${ensemble.name}' receives inputs originated from different decoupled models. ` +
            `The ensemble's outputs mix streams: ${conflict}. Produce all outputs from one decoupled stream.`,
          ensemble.positions.of(ensemble.config, 'output'),
        ),
      );
    }
  }
}

// ---- a whole repository ---------------------------------------------------------------------------------------

/**
 * Static and graph rules for every ensemble among `models`, composing ensembles first so that an invalid nested
 * ensemble makes its parents report rule 10.16 with its first error.
 */
export function checkEnsembles(
  models: ReadonlyMap<string, LoadedModel>,
  options: EnsembleGraphOptions = {},
): Diagnostic[] {
  const known = new Map<string, Diagnostic[]>();
  for (const [name, diagnostics] of options.modelDiagnostics ?? []) known.set(name, [...diagnostics]);
  const out: Diagnostic[] = [];
  const done = new Set<string>();
  const visit = (name: string, path: Set<string>) => {
    if (done.has(name) || path.has(name)) return;
    path.add(name);
    for (const inner of composingEnsembles(name, models)) visit(inner, path);
    path.delete(name);
    done.add(name);
    const model = models.get(name)!;
    const found = [...checkEnsembleStatic(model), ...checkEnsembleGraph(model, models, { modelDiagnostics: known })];
    known.set(name, [...(known.get(name) ?? []), ...found]);
    out.push(...found);
  };
  for (const model of models.values()) if (isEnsemble(model)) visit(model.name, new Set());
  return out;
}

/** Ensembles that no other ensemble runs as a step: the ones a client calls (and SageMaker's TargetModel holds). */
export function topLevelEnsembles(models: ReadonlyMap<string, LoadedModel>): LoadedModel[] {
  const nested = new Set<string>();
  for (const model of models.values()) {
    for (const inner of composingEnsembles(model.name, models)) if (inner !== model.name) nested.add(inner);
  }
  const ensembles = [...models.values()].filter(isEnsemble);
  const top = ensembles.filter((m) => !nested.has(m.name));
  // Ensembles that only run each other (a cycle) are still worth drawing.
  return top.length > 0 ? top : ensembles;
}

// ---- the pipeline as a picture --------------------------------------------------------------------------------

export type GraphNodeKind = 'input' | 'output' | 'step' | 'unconnected';

export interface GraphNode {
  /** Unique within the graph: `input:NAME`, `output:NAME`, `step:INDEX`, `unwritten:NAME`, `unread:NAME`. */
  readonly id: string;
  readonly kind: GraphNodeKind;
  /** The tensor name (inputs, outputs, unconnected tensors) or the composing model's name (steps). */
  readonly label: string;
  /** For steps: the composing model's platform or backend (`python`, `tensorrt_plan`, `ensemble`). */
  readonly runtime?: string;
  /** For steps: the model_version asked for, when not -1. */
  readonly version?: string;
  /** For steps whose model is not in the repository. */
  readonly missing?: boolean;
  readonly decoupled?: boolean;
  /** For unconnected tensors: why they hang loose. */
  readonly note?: string;
}

export interface GraphEdge {
  readonly from: string;
  readonly to: string;
  /** The ensemble tensor carried. */
  readonly tensor: string;
  readonly dataType?: DataTypeName;
  /** Dims as declared (without the batch dimension of batching models). */
  readonly dims?: readonly bigint[];
}

export interface EnsembleGraph {
  readonly ensemble: string;
  readonly maxBatchSize: number;
  readonly decoupled: boolean;
  readonly nodes: readonly GraphNode[];
  readonly edges: readonly GraphEdge[];
}

/** The ensemble's steps and tensors as nodes and edges, with each tensor's type taken from the configs that declare it. */
export function buildEnsembleGraph(ensemble: LoadedModel, models: ReadonlyMap<string, LoadedModel>): EnsembleGraph {
  const config = ensemble.config;
  const steps = stepsOf(config);
  const nodes: GraphNode[] = [];
  const edges: GraphEdge[] = [];
  const types = tensorTypes(ensemble, models);

  for (const input of config.input ?? []) nodes.push({ id: `input:${input.name ?? ''}`, kind: 'input', label: input.name ?? '' });
  steps.forEach((step, index) => {
    const model = step.model_name ? models.get(step.model_name) : undefined;
    const runtime = model ? (isEnsemble(model) ? 'ensemble' : (model.platform ?? model.backend)) : undefined;
    const version = step.model_version !== undefined && step.model_version !== LATEST ? String(step.model_version) : undefined;
    nodes.push({
      id: `step:${index}`,
      kind: 'step',
      label: step.model_name || '(no model_name)',
      ...(runtime ? { runtime } : {}),
      ...(version !== undefined ? { version } : {}),
      ...(model ? {} : { missing: true }),
      ...(model && isDecoupledModel(model, models, new Set([ensemble.name])) ? { decoupled: true } : {}),
    });
  });
  for (const output of config.output ?? []) nodes.push({ id: `output:${output.name ?? ''}`, kind: 'output', label: output.name ?? '' });

  const { tensors } = analyzeDataFlow(config);
  for (const t of tensors.values()) {
    const sources = [...(t.isInput ? [`input:${t.name}`] : []), ...t.producers.map((p) => `step:${p.step}`)];
    const targets = [...t.consumers.map((c) => `step:${c.step}`), ...(t.isOutput ? [`output:${t.name}`] : [])];
    if (sources.length === 0) {
      sources.push(`unwritten:${t.name}`);
      nodes.push({ id: `unwritten:${t.name}`, kind: 'unconnected', label: t.name, note: 'never written' });
    }
    if (targets.length === 0) {
      targets.push(`unread:${t.name}`);
      nodes.push({ id: `unread:${t.name}`, kind: 'unconnected', label: t.name, note: 'never read' });
    }
    const type = types.get(t.name);
    for (const from of sources) {
      for (const to of targets) {
        edges.push({
          from,
          to,
          tensor: t.name,
          ...(type?.dataType ? { dataType: type.dataType } : {}),
          ...(type && type.dims.length ? { dims: type.dims } : {}),
        });
      }
    }
  }
  return {
    ensemble: ensemble.name,
    maxBatchSize: config.max_batch_size ?? 0,
    decoupled: isDecoupledEnsemble(ensemble, models),
    nodes,
    edges,
  };
}

/** Each tensor's type: as the ensemble declares it, else as its writer declares it, else as its first reader does. */
function tensorTypes(
  ensemble: LoadedModel,
  models: ReadonlyMap<string, LoadedModel>,
): Map<string, { dataType?: DataTypeName; dims: readonly bigint[] }> {
  const types = new Map<string, { dataType?: DataTypeName; dims: readonly bigint[] }>();
  const set = (name: string, dataType: DataTypeName | undefined, dims: readonly bigint[] | undefined) => {
    if (!types.has(name) && (dataType || dims?.length)) types.set(name, { ...(dataType ? { dataType } : {}), dims: dims ?? [] });
  };
  for (const io of [...(ensemble.config.input ?? []), ...(ensemble.config.output ?? [])]) set(io.name ?? '', io.data_type, io.dims);
  const steps = stepsOf(ensemble.config);
  for (const step of steps) {
    const model = step.model_name ? models.get(step.model_name) : undefined;
    for (const [key, value] of mapEntries(step.output_map)) {
      const output = model?.config.output?.find((o) => o.name === key);
      set(value, output?.data_type, output?.dims);
    }
  }
  for (const step of steps) {
    const model = step.model_name ? models.get(step.model_name) : undefined;
    for (const [key, value] of mapEntries(step.input_map)) {
      const input = model?.config.input?.find((i) => i.name === key);
      set(value, input?.data_type, input?.dims);
    }
  }
  return types;
}
