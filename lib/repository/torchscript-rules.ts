// What Triton's PyTorch backend checks of a config against its TorchScript model.pt at load, offline. Source:
// triton-inference-server/pytorch_backend @ 266fd38: src/pt/model_state.cc:236-249 (torch::jit::load; any exception
// fails the load "failed to load model"), src/pt/model_instance_state.cc:95-150 (the inputs forward must take: config
// inputs, batch inputs, sequence controls and states), ValidateInputs :1311-1384 (forward's schema: self skipped,
// one Dict argument or Tensor/List arguments only, their count), GetNamingConvention :399-520 (forward argument names,
// else <name>__<index>, else the config's order, which is no load error), AddInputToMap :178-212, and the request
// path :1087 (input_tensors sized to forward's inputs) and :1201-1250 (each input stored at its mapped index).

import type { ModelConfig } from '../config/model-config-schema';
import { closest, diagnostic, type Diagnostic, type SourcePosition } from '../diagnostics';
import { readTorchScript, type TorchArgument } from '../model-files/torchscript';
import {
  configPosition,
  emptyModelFile,
  modelFileDiagnostic,
  readWith,
  versionModelFiles,
  type ModelFileSubject,
} from './model-file-subject';

/** Reads the model.pt of every version Triton would load and checks the config's inputs against forward's schema. */
export function checkTorchScriptModel(model: ModelFileSubject): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const file of versionModelFiles(model, model.defaultModelFilename ?? 'model.pt')) {
    const read = readWith(model.files, file.path, readTorchScript);
    if (read === 'unreadable') continue;
    const source = { file: file.shown, model: model.name };
    if (!read.ok) {
      if (read.reason === 'is empty') out.push(emptyModelFile(model, file.shown, 'The PyTorch backend'));
      else {
        out.push(
          diagnostic(
            'error',
            'pytorch-invalid',
            `${file.shown} ${read.reason}. The PyTorch backend fails the load ("failed to load model '${model.name}'"): ` +
              'save the model with torch.jit.save(torch.jit.script(model) or torch.jit.trace(model, example), path).',
            source,
          ),
        );
      }
      continue;
    }
    if (!read.model.forward) {
      out.push(
        diagnostic('warning', 'pytorch-forward-unread', `${file.shown}: forward's arguments were not found (${read.model.unknown}), ` +
          'so the config\'s inputs are not checked against them.', source),
      );
      continue;
    }
    new ForwardChecker(model, read.model.forward, file.shown, out).run();
  }
  return out;
}

/** CONTROL_SEQUENCE_* kinds the backend adds to the inputs forward must take (model_instance_state.cc:112-140). */
const COUNTED_CONTROLS = ['CONTROL_SEQUENCE_START', 'CONTROL_SEQUENCE_END', 'CONTROL_SEQUENCE_READY', 'CONTROL_SEQUENCE_CORRID'];

/** The inputs forward must take: config inputs, batch inputs, the sequence controls given and the states (:95-145). */
export function expectedInputCount(config: ModelConfig): number {
  const sequence = config.sequence_batching;
  const kinds = new Set((sequence?.control_input ?? []).flatMap((c) => (c.control ?? []).map((k) => k.kind ?? 'CONTROL_SEQUENCE_START')));
  const controls = sequence ? COUNTED_CONTROLS.filter((k) => kinds.has(k as never)).length : 0;
  return (config.input?.length ?? 0) + (config.batch_input?.length ?? 0) + controls + (sequence?.state?.length ?? 0);
}

class ForwardChecker {
  constructor(
    private readonly model: ModelFileSubject,
    private readonly forward: readonly TorchArgument[],
    private readonly file: string,
    private readonly out: Diagnostic[],
  ) {}

  private at(message: object | undefined, field?: string): SourcePosition | undefined {
    return configPosition(this.model, message, field);
  }

  private report(severity: 'error' | 'warning', code: string, message: string, at?: SourcePosition): void {
    this.out.push(modelFileDiagnostic(this.model, severity, code, message, at, this.file));
  }

  run(): void {
    const config = this.model.config;
    // The argument at 0 is skipped when it is of a class type: self (:1325-1331).
    const args = this.forward[0]?.kind === 'class' ? this.forward.slice(1) : this.forward;
    const signature = `forward(${args.map((a) => `${a.name}: ${a.type}`).join(', ')})`;
    if (args.length === 1 && args[0]!.kind === 'dict') return; // one Dict(str, Tensor): inputs are its keys (:1332-1334)
    if (args.length === 0) return;
    if (args.slice(1).some((a) => a.kind === 'dict')) {
      this.report('error', 'pytorch-forward-dict', 'Multiple inputs of kind DictType were detected. Only a single input of type ' +
        `Dict(str, Tensor) is supported. (${this.file}: ${signature}.) The PyTorch backend fails the load.`);
      return;
    }
    const other = args.find((a) => a.kind !== 'tensor' && a.kind !== 'list');
    if (other) {
      this.report('error', 'pytorch-forward-argument-type', `An input of type '${other.type}' was detected in the model. Only a ` +
        `single input of type Dict(str, Tensor) or input(s) of type Tensor are supported. (${this.file}: argument ` +
        `'${other.name}' of ${signature}.) The PyTorch backend fails the load: make forward take Tensors (or List[str]).`);
      return;
    }
    const expected = expectedInputCount(config);
    if (args.length !== expected) {
      this.report('error', 'pytorch-input-count', `unable to load model '${this.model.name}', configuration expects ${expected} ` +
        `inputs, model provides ${args.length}. (${this.file}: ${signature}; the configuration's count includes batch inputs, ` +
        'sequence controls and states.)', this.at(config, 'input'));
      return;
    }
    this.names(args, signature);
  }

  /** GetNamingConvention (:399-520): how config inputs find forward's arguments; only a wrong mapping is reported. */
  private names(args: readonly TorchArgument[], signature: string): void {
    const inputs = this.model.config.input ?? [];
    const allowed = args.map((a) => a.name);
    if (inputs.length === 0 || inputs.every((io) => allowed.includes(io.name ?? ''))) return; // FORWARD_ARGUMENT
    const indexOf = (name: string): number | undefined => {
      const at = name.indexOf('__');
      if (at < 0) return undefined;
      const digits = name.slice(at + 2);
      return /^\d*$/.test(digits) ? Number(digits || 0) : undefined;
    };
    if (inputs.every((io) => indexOf(io.name ?? '') !== undefined)) {
      // NAMED_INDEX: input <name>__<i> is forward's argument i; the request path stores it at that index (:1201-1250)
      // of a list sized to forward's inputs (:1087).
      const seen = new Map<number, string>();
      for (const io of inputs) {
        const index = indexOf(io.name ?? '')!;
        if (index >= args.length) {
          this.report('warning', 'pytorch-input-index', `input '${io.name}' names argument ${index} of forward, which takes ` +
            `${args.length} (${this.file}: ${signature}): the backend loads the model, but a request cannot be fed to it. ` +
            `Number the inputs 0 to ${args.length - 1}.`, this.at(io, 'name'));
        } else if (seen.has(index)) {
          this.report('warning', 'pytorch-input-index', `inputs '${seen.get(index)}' and '${io.name}' both name argument ${index} ` +
            `('${args[index]!.name}') of forward (${this.file}: ${signature}), so one of forward's arguments gets neither. ` +
            'Give each input its own index.', this.at(io, 'name'));
        }
        seen.set(index, io.name ?? '');
      }
      return;
    }
    // STRICT_CONFIG_ORDERING: the config's order decides, whatever the names say.
    const strangers = inputs.filter((io) => !allowed.includes(io.name ?? ''));
    const mapping = inputs.map((io, i) => `'${io.name}' -> ${args[i]?.name ?? '?'}`).join(', ');
    const hint = strangers
      .map((io) => closest(io.name ?? '', allowed))
      .map((guess, i) => (guess ? ` (did you mean '${guess}' for '${strangers[i]!.name}'?)` : ''))
      .join('');
    this.report('warning', 'pytorch-input-order', `input '${strangers[0]!.name}' is neither an argument of forward nor named ` +
      `<name>__<index>${hint}, so the PyTorch backend feeds the inputs to ${this.file}'s ${signature} in the config's order: ` +
      `${mapping}. Name the inputs after forward's arguments (${allowed.join(', ')}) or INPUT__0, INPUT__1, ... to map them ` +
      'by name.', this.at(strangers[0], 'name'));
  }
}
