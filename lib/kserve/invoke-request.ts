// Turns command-line inputs (`NAME=@file.json`, `NAME=@image.jpg`, `NAME=sentence`, `--body request.json`) into a
// KServe v2 request body, shaped and typed by the model's config.pbtxt, and prints decoded responses for people.
// Shared by `invoke` (SageMaker Runtime) and `local invoke`; it knows nothing about AWS clients.

import { readFile, stat } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import type { ModelConfig } from '../config/model-config-schema';
import { dataTypeOfConfig } from '../config/data-types';
import { MmeError } from '../errors';
import {
  EncodedBody,
  InferenceRequest,
  InferenceResponse,
  JSON_CONTENT_TYPE,
  KSERVE_DATATYPES,
  KServeDatatype,
  RequestedOutput,
  RequestTooLargeError,
  Tensor,
  TensorElement,
  elementCount,
  encodeInferenceRequest,
  isKServeDatatype,
  jsonCarries,
} from './kserve-codec';

export { decodeInferenceResponse } from './kserve-codec';

export interface InvokeSpec {
  /** `NAME=@file.json` (a JSON array, nested or flat, or a `{shape, datatype, data}` tensor), `NAME=@file.jpg`
   *  (any non-JSON file: its raw bytes as one UINT8 tensor `[1, n]`, or one BYTES element when the input is BYTES),
   *  or `NAME=<inline JSON array>`. */
  readonly inputs?: readonly string[];
  /** `NAME=sentence`: one BYTES element each; repeating a NAME makes a batch. */
  readonly texts?: readonly string[];
  /** A request.json file sent as-is with `application/json`; excludes every other field. */
  readonly body?: string;
  /**
   * `true`: send inputs as binary tensor data too (`application/vnd.sagemaker-triton.binary+json`).
   * `false`: plain JSON both ways; an FP16 or BF16 input, or such an output the config declares, is then refused
   * before sending, since Triton refuses them as JSON, and a BYTES output that is not UTF-8 comes back altered.
   * @default - inputs as JSON (binary when one is FP16 or BF16), outputs asked for as binary, as tritonclient does
   */
  readonly binary?: boolean;
  /** `1,3,224,224` for every input, or `NAME=1,3,224,224` entries separated by `;` or spaces; `x` also separates. */
  readonly shape?: string;
  /** `FP32` for every input, or `NAME=FP32` entries separated by `;` or spaces. */
  readonly datatype?: string;
  /** Output names to return (default: all). */
  readonly outputs?: readonly string[];
}

export interface BuildOptions {
  /** Directory relative file names are read from. @default process.cwd() */
  readonly cwd?: string;
  /**
   * Refuse a body larger than this (RequestTooLargeError) before encoding it, or as soon as the JSON passes it; a raw
   * input file larger than this is refused before it is read. @default - no limit
   */
  readonly maxBytes?: number;
}

type ConfigTensor = NonNullable<ModelConfig['input']>[number];

/** What the model config says about one input: its KServe datatype and the full shape (batch dim as -1). */
interface InputTemplate {
  readonly name: string;
  readonly datatype?: KServeDatatype;
  readonly shape?: readonly number[];
  readonly optional: boolean;
}

/** Builds the request body and its content type. Bad input gives an MmeError that says how to fix it. */
export async function buildInvokeRequest(
  spec: InvokeSpec,
  modelConfig?: ModelConfig,
  options: BuildOptions = {},
): Promise<EncodedBody> {
  const cwd = options.cwd ?? process.cwd();
  if (spec.body !== undefined) {
    if (spec.inputs?.length || spec.texts?.length || spec.binary || spec.shape || spec.datatype || spec.outputs?.length) {
      throw new MmeError(
        'USAGE',
        '--body sends request.json as-is; it cannot be combined with --input, --text, --binary, --shape, --datatype or --output.',
      );
    }
    const path = resolve(cwd, spec.body);
    const body = await readUserFile(path, '--body');
    try {
      JSON.parse(body.toString('utf8'));
    } catch (err) {
      const why = (err as Error).message;
      throw new MmeError('USAGE', `--body ${spec.body} is not valid JSON (${why}); the endpoint expects a KServe v2 request.`);
    }
    return { body, contentType: JSON_CONTENT_TYPE };
  }

  const templates = modelConfig ? inputTemplates(modelConfig) : undefined;
  const shapes = parseNamedOption(spec.shape, '--shape', parseDims);
  const datatypes = parseNamedOption(spec.datatype, '--datatype', parseDatatype);
  const givenInputs = [
    ...(spec.inputs ?? []).map((arg) => splitAssignment(arg, '--input')),
    ...(spec.texts ?? []).map((arg) => splitAssignment(arg, '--text')),
  ];
  if (givenInputs.length === 0) {
    const expected = templates ? ` The model expects: ${templates.map(describeTemplate).join(', ')}.` : '';
    throw new MmeError('USAGE', `Nothing to send: give --input NAME=@file, --text NAME=sentence or --body request.json.${expected}`);
  }
  for (const name of [...shapes.byName.keys(), ...datatypes.byName.keys()]) {
    if (!givenInputs.some((given) => given.name === name)) {
      throw new MmeError('USAGE', `--shape/--datatype name '${name}', but no --input or --text gives that input.`);
    }
  }

  const tensors: Tensor[] = [];
  const texts = new Map<string, string[]>();
  for (const text of (spec.texts ?? []).map((arg) => splitAssignment(arg, '--text'))) {
    texts.set(text.name, [...(texts.get(text.name) ?? []), text.value]);
  }
  const seen = new Set<string>();
  for (const input of (spec.inputs ?? []).map((arg) => splitAssignment(arg, '--input'))) {
    if (seen.has(input.name) || texts.has(input.name)) throw new MmeError('USAGE', `Input '${input.name}' is given more than once.`);
    seen.add(input.name);
    const template = findTemplate(templates, input.name, modelConfig);
    const given = await readInputValue(input.value, cwd, input.name, options.maxBytes);
    tensors.push(shapeTensor(input.name, given, template, shapes.forName(input.name), datatypes.forName(input.name)));
  }
  for (const [name, sentences] of texts) {
    const template = findTemplate(templates, name, modelConfig);
    const given: GivenValue = { kind: 'text', data: sentences };
    tensors.push(shapeTensor(name, given, template, shapes.forName(name), datatypes.forName(name)));
  }

  if (templates) {
    const missing = templates.filter((t) => !t.optional && !tensors.some((tensor) => tensor.name === t.name));
    if (missing.length > 0) {
      throw new MmeError('USAGE', `The model also needs ${missing.map(describeTemplate).join(', ')}; give each with --input or --text.`);
    }
  }
  const outputs = requestedOutputs(spec.outputs, modelConfig);
  const request: InferenceRequest = outputs ? { inputs: tensors, outputs } : { inputs: tensors };
  const binary = chooseBinary(spec.binary, tensors, outputs, modelConfig);
  return encodeInferenceRequest(request, {
    binary,
    binaryOutputs: spec.binary !== false,
    ...(options.maxBytes !== undefined ? { maxBytes: options.maxBytes } : {}),
  });
}

/**
 * Whether the inputs go as binary tensor data: JSON unless told otherwise, but Triton refuses FP16 and BF16 as JSON
 * in both directions (data-types.ts), so a request with such an input goes as binary+json by itself; where the
 * caller insists on JSON (`--no-binary`) such an input, or such an output the config declares, is refused here,
 * before anything is sent, with Triton's own words.
 */
function chooseBinary(
  binary: boolean | undefined,
  inputs: readonly Tensor[],
  outputs: readonly RequestedOutput[] | undefined,
  config: ModelConfig | undefined,
): boolean {
  if (binary === true) return true;
  const input = inputs.find((tensor) => !jsonCarries(tensor.datatype));
  const wanted = outputs?.map((o) => o.name);
  const output = (config?.output ?? [])
    .map((o) => ({ name: o.name ?? '', datatype: kserveDatatypeOf(o.data_type) }))
    .find((o) => o.datatype && !jsonCarries(o.datatype) && (!wanted || wanted.includes(o.name)));
  if (binary === undefined) return Boolean(input);
  if (input) {
    throw new MmeError(
      'USAGE',
      `Input '${input.name}' is ${input.datatype}, which Triton refuses as JSON ("receiving ${input.datatype} data via JSON ` +
        `is not supported. Please use the binary data format for input ${input.name}"). ` +
        'Drop --no-binary: FP16 and BF16 go as binary+json by themselves.',
    );
  }
  if (output) {
    throw new MmeError(
      'USAGE',
      `Output '${output.name}' is ${output.datatype}, which Triton refuses to send as JSON ("sending ${output.datatype} data ` +
        'via JSON is not supported. Please use the binary data format for output"). ' +
        'Drop --no-binary, or ask only for other outputs with --output.',
    );
  }
  return false;
}

// ---------------------------------------------------------------------------------------------------------------
// Model config -> what each input must look like.

/** `TYPE_FP32` -> `FP32`; `TYPE_STRING` is Triton's name for BYTES. */
export function kserveDatatypeOf(configType: string | undefined): KServeDatatype | undefined {
  return dataTypeOfConfig(configType)?.kserve;
}

function inputTemplates(config: ModelConfig): InputTemplate[] {
  const batching = (config.max_batch_size ?? 0) > 0;
  return (config.input ?? []).map((input: ConfigTensor) => {
    const dims = input.dims?.map((d) => Number(d));
    const shape = dims ? (batching ? [-1, ...dims] : dims) : undefined;
    const datatype = kserveDatatypeOf(input.data_type);
    return {
      name: input.name ?? '',
      ...(datatype ? { datatype } : {}),
      ...(shape ? { shape } : {}),
      optional: Boolean(input.optional),
    };
  });
}

function describeTemplate(template: InputTemplate): string {
  const shape = template.shape ? ` [${template.shape.join(', ')}]` : '';
  return `'${template.name}' (${template.datatype ?? 'any type'}${shape})`;
}

function findTemplate(templates: InputTemplate[] | undefined, name: string, config?: ModelConfig): InputTemplate | undefined {
  if (!templates) return undefined;
  const template = templates.find((t) => t.name === name);
  if (!template) {
    const model = config?.name ? `Model '${config.name}'` : 'The model';
    const known = templates.length > 0 ? `its inputs are ${templates.map(describeTemplate).join(', ')}` : 'its config declares no inputs';
    throw new MmeError('USAGE', `${model} has no input '${name}'; ${known}.`);
  }
  return template;
}

function requestedOutputs(names: readonly string[] | undefined, config?: ModelConfig): RequestedOutput[] | undefined {
  if (!names || names.length === 0) return undefined;
  const declared = config?.output?.map((o) => o.name ?? '');
  for (const name of names) {
    if (declared && !declared.includes(name)) {
      const known = declared.map((n) => `'${n}'`).join(', ') || 'none';
      throw new MmeError('USAGE', `The model has no output '${name}'; its outputs are ${known}.`);
    }
  }
  return names.map((name) => ({ name }));
}

// ---------------------------------------------------------------------------------------------------------------
// Reading what the user gave.

type GivenValue =
  | { kind: 'raw'; bytes: Buffer; file: string }
  | { kind: 'text'; data: string[] }
  | { kind: 'json'; data: TensorElement[]; nestedShape: number[]; shape?: number[]; datatype?: KServeDatatype; source: string };

function splitAssignment(arg: string, flag: string): { name: string; value: string } {
  const at = arg.indexOf('=');
  if (at <= 0) throw new MmeError('USAGE', `${flag} ${JSON.stringify(arg)} must look like NAME=value (the model input name, then '=').`);
  return { name: arg.slice(0, at), value: arg.slice(at + 1) };
}

async function readUserFile(path: string, flag: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' ? 'does not exist' : code === 'EISDIR' ? 'is a directory' : `cannot be read (${code ?? (err as Error).message})`;
    throw new MmeError(code === 'ENOENT' ? 'NOT_FOUND' : 'UNREADABLE', `${flag}: ${path} ${why}.`);
  }
}

async function readInputValue(value: string, cwd: string, name: string, maxBytes = Infinity): Promise<GivenValue> {
  if (!value.startsWith('@')) return fromJson(value, `--input ${name}`, name);
  const file = value.slice(1);
  const path = resolve(cwd, file);
  if (extname(file).toLowerCase() !== '.json' && maxBytes !== Infinity) {
    // Raw bytes go into the body one for one (or more, as JSON): a file over the limit is refused unread.
    const size = (await stat(path).catch(() => undefined))?.size ?? 0;
    if (size > maxBytes) throw new RequestTooLargeError(size, maxBytes, false, true);
  }
  const bytes = await readUserFile(path, `--input ${name}`);
  if (extname(file).toLowerCase() !== '.json') return { kind: 'raw', bytes, file };
  return fromJson(bytes.toString('utf8'), file, name);
}

function fromJson(text: string, source: string, name: string): GivenValue {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    const why = (err as Error).message;
    throw new MmeError('USAGE', `${source} is not valid JSON (${why}); give a JSON array of values for input '${name}'.`);
  }
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
    // A KServe tensor object, as it would appear in a request's "inputs".
    const tensor = parsed as { shape?: unknown; datatype?: unknown; data?: unknown };
    if (!Array.isArray(tensor.data)) {
      throw new MmeError('USAGE', `${source} is a JSON object without a "data" array; give an array, or {"shape", "datatype", "data"}.`);
    }
    const given = fromArray(tensor.data, source, name);
    if (tensor.shape !== undefined) {
      if (!Array.isArray(tensor.shape) || !tensor.shape.every((d) => Number.isInteger(d) && d >= 0)) {
        throw new MmeError('USAGE', `${source}: "shape" must be an array of non-negative integers.`);
      }
      given.shape = tensor.shape as number[];
    }
    if (tensor.datatype !== undefined) given.datatype = parseDatatype(String(tensor.datatype), source);
    return given;
  }
  if (!Array.isArray(parsed)) {
    return fromArray([parsed], source, name);
  }
  return fromArray(parsed, source, name);
}

function fromArray(array: unknown[], source: string, name: string): Extract<GivenValue, { kind: 'json' }> {
  const data: TensorElement[] = [];
  const nestedShape = nestingShape(array, source, name);
  const walk = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') data.push(value);
    else {
      const what = JSON.stringify(value);
      throw new MmeError('USAGE', `${source}: input '${name}' holds ${what}; values must be numbers, strings or booleans.`);
    }
  };
  walk(array);
  return { kind: 'json', data, nestedShape, source };
}

/**
 * The shape of a nested array. A tensor is rectangular, so a ragged array (`[[1, 2], [3]]`) is refused, naming the
 * first row whose shape differs from its first sibling's, rather than flattened into data of the wrong shape.
 */
function nestingShape(array: unknown[], source: string, name: string): number[] {
  const path: number[] = [];
  const visit = (value: unknown): number[] => {
    if (!Array.isArray(value)) return [];
    if (value.length === 0) return [0];
    path.push(0);
    const first = visit(value[0]);
    for (let index = 1; index < value.length; index++) {
      path[path.length - 1] = index;
      const shape = visit(value[index]);
      if (shape.length !== first.length || shape.some((dim, i) => dim !== first[i])) {
        const row = path.map((i) => `[${i}]`).join('');
        const sibling = [...path.slice(0, -1), 0].map((i) => `[${i}]`).join('');
        throw new MmeError(
          'BAD_SHAPE',
          `${source}: input '${name}' is a ragged array: ` +
            `${row} is ${describeNesting(shape)} but ${sibling} is ${describeNesting(first)}. ` +
            'A tensor is rectangular: give every row the same length, or give a flat array and --shape.',
        );
      }
    }
    path.pop();
    return [value.length, ...first];
  };
  return visit(array);
}

function describeNesting(shape: readonly number[]): string {
  if (shape.length === 0) return 'a single value';
  if (shape.length === 1) return `a row of ${shape[0]} value${shape[0] === 1 ? '' : 's'}`;
  return `a ${shape.join('×')} array`;
}

// ---------------------------------------------------------------------------------------------------------------
// Shape and datatype resolution.

function shapeTensor(
  name: string,
  given: GivenValue,
  template: InputTemplate | undefined,
  explicitShape: number[] | undefined,
  explicitDatatype: KServeDatatype | undefined,
): Tensor {
  const datatype = resolveDatatype(name, given, template, explicitDatatype);
  let data: readonly TensorElement[];
  if (given.kind === 'raw') {
    if (datatype === 'BYTES') data = [given.bytes];
    else if (datatype === 'UINT8') data = Array.from(given.bytes);
    else if (datatype === 'INT8') data = Array.from(new Int8Array(given.bytes));
    else {
      throw new MmeError(
        'USAGE',
        `Input '${name}' is ${datatype}, but ${given.file} is not a .json file, so it would be sent as raw bytes ` +
          '(UINT8 or BYTES). Give a JSON array of values instead.',
      );
    }
  } else {
    data = given.data;
  }
  const count = data.length;
  const templateShape = template?.shape;
  let shape: number[];
  if (explicitShape) {
    shape = fillWildcards(explicitShape, count, name, '--shape');
  } else if (given.kind === 'json' && given.shape) {
    shape = given.shape;
  } else if (given.kind === 'json' && given.nestedShape.length > 1) {
    shape = fitNested(given.nestedShape, templateShape, name);
  } else if (templateShape) {
    shape = fillWildcards(templateShape, count, name, 'the model config');
  } else if (given.kind === 'raw' && datatype !== 'BYTES') {
    shape = [1, count];
  } else if (given.kind === 'text' || given.kind === 'raw') {
    shape = [count, 1];
  } else {
    shape = [count];
  }
  if (templateShape) checkAgainstTemplate(name, shape, templateShape);
  if (elementCount(shape) !== count) {
    throw new MmeError(
      'BAD_SHAPE',
      `Input '${name}' has ${values(count)}, but shape [${shape.join(', ')}] holds ${product(shape)}: the dims must ` +
        'multiply to the number of values.',
    );
  }
  return { name, datatype, shape, data };
}

function resolveDatatype(
  name: string,
  given: GivenValue,
  template: InputTemplate | undefined,
  explicit: KServeDatatype | undefined,
): KServeDatatype {
  const fromFile = given.kind === 'json' ? given.datatype : undefined;
  const chosen = explicit ?? fromFile;
  if (chosen && template?.datatype && chosen !== template.datatype) {
    throw new MmeError(
      'USAGE',
      `Input '${name}' is ${template.datatype} in the model config, but ${chosen} was given; drop --datatype or fix it.`,
    );
  }
  if (chosen) return chosen;
  if (template?.datatype) return template.datatype;
  if (given.kind === 'text') return 'BYTES';
  if (given.kind === 'raw') return 'UINT8';
  if (given.data.length > 0 && given.data.every((v) => typeof v === 'boolean')) return 'BOOL';
  if (given.data.length > 0 && given.data.every((v) => typeof v === 'string')) return 'BYTES';
  return 'FP32';
}

function values(count: number): string {
  return `${count} value${count === 1 ? '' : 's'}`;
}

/** `6 (2 × 3)`, or `6` for one dim. */
function product(shape: readonly number[]): string {
  const total = shape.reduce((p, d) => p * d, 1);
  return shape.length > 1 ? `${total} (${shape.join(' × ')})` : String(total);
}

/** Resolves -1 dims from the element count: all but the last wildcard become 1 (a batch of one). */
function fillWildcards(template: readonly number[], count: number, name: string, from: string): number[] {
  const wildcards = template.map((d, i) => (d < 0 ? i : -1)).filter((i) => i >= 0);
  const fixed = template.reduce((product, d) => (d < 0 ? product : product * d), 1);
  if (wildcards.length === 0) {
    if (fixed !== count) {
      throw new MmeError(
        'BAD_SHAPE',
        `Input '${name}' has ${values(count)}, but shape [${template.join(', ')}] from ${from} holds ${product(template)}: ` +
          'the dims must multiply to the number of values. ' +
          (from === '--shape' ? 'Fix --shape or the data.' : 'Give --shape or fix the data.'),
      );
    }
    return [...template];
  }
  const last = wildcards[wildcards.length - 1]!;
  const rest = fixed === 0 ? 0 : count / fixed;
  if (!Number.isInteger(rest)) {
    throw new MmeError(
      'BAD_SHAPE',
      `Input '${name}' has ${values(count)}, which does not fit shape [${template.join(', ')}] from ${from} ` +
        `(not a multiple of ${fixed}, the product of its fixed dims); ` +
        (from === '--shape' ? 'fix --shape or the data.' : 'give --shape or fix the data.'),
    );
  }
  return template.map((d, i) => (d >= 0 ? d : i === last ? rest : 1));
}

/** A nested JSON array gives its own shape; a batching model's missing batch dim is added as 1. */
function fitNested(nested: number[], template: readonly number[] | undefined, name: string): number[] {
  if (!template || nested.length === template.length) return nested;
  if (nested.length === template.length - 1 && template[0] === -1) return [1, ...nested];
  throw new MmeError(
    'BAD_SHAPE',
    `Input '${name}' is a ${nested.length}-dimensional array [${nested.join(', ')}], but the model expects shape [${template.join(', ')}].`,
  );
}

function checkAgainstTemplate(name: string, shape: readonly number[], template: readonly number[]): void {
  const fits = shape.length === template.length && template.every((d, i) => d < 0 || d === shape[i]);
  if (!fits) {
    throw new MmeError(
      'BAD_SHAPE',
      `Input '${name}' has shape [${shape.join(', ')}], but the model config expects [${template.join(', ')}] ` +
        `(-1 is any size${template[0] === -1 ? '; the first dim is the batch' : ''}).`,
    );
  }
}

// ---------------------------------------------------------------------------------------------------------------
// --shape and --datatype option values.

interface NamedOption<T> {
  readonly all?: T;
  readonly byName: Map<string, T>;
  forName(name: string): T | undefined;
}

function parseNamedOption<T>(text: string | undefined, flag: string, parse: (value: string, flag: string) => T): NamedOption<T> {
  const byName = new Map<string, T>();
  let all: T | undefined;
  for (const entry of (text ?? '').split(/[;\s]+/).filter(Boolean)) {
    const at = entry.indexOf('=');
    if (at < 0) {
      if (all !== undefined) {
        throw new MmeError('USAGE', `${flag} ${JSON.stringify(text)} gives two values without input names; use NAME=value for each.`);
      }
      all = parse(entry, flag);
    } else {
      byName.set(entry.slice(0, at), parse(entry.slice(at + 1), flag));
    }
  }
  return { ...(all !== undefined ? { all } : {}), byName, forName: (name) => byName.get(name) ?? all };
}

function parseDims(value: string, flag: string): number[] {
  const parts = value.replace(/^\[|\]$/g, '').split(/[,x]/);
  const dims = parts.map((p) => Number(p.trim()));
  if (parts.length === 0 || !dims.every((d) => Number.isInteger(d) && d >= -1) || parts.some((p) => p.trim() === '')) {
    throw new MmeError(
      'USAGE',
      `${flag} ${JSON.stringify(value)} is not a shape; write dims like 1,3,224,224 (-1 is filled from the data).`,
    );
  }
  return dims;
}

/** A KServe name (`FP32`, `BYTES`) or a config.pbtxt name with or without its prefix (`TYPE_FP32`, `STRING`). */
function parseDatatype(value: string, flag: string): KServeDatatype {
  const upper = value.toUpperCase();
  const name = isKServeDatatype(upper) ? upper : kserveDatatypeOf(upper.startsWith('TYPE_') ? upper : `TYPE_${upper}`);
  if (!name) throw new MmeError('USAGE', `${flag} ${JSON.stringify(value)} is not a datatype; use one of ${KSERVE_DATATYPES.join(', ')}.`);
  return name;
}

// ---------------------------------------------------------------------------------------------------------------
// Showing a response.

export interface FormatOptions {
  /** Show the K largest values (with their indices) per row of the last dimension. */
  readonly top?: number;
  /** Elements shown before eliding the middle. @default 16 */
  readonly maxValues?: number;
}

/** One block per output: name, dtype, shape, values (elided when long), and top-k when asked. */
export function formatInferenceResponse(response: InferenceResponse, options: FormatOptions = {}): string {
  const maxValues = options.maxValues ?? 16;
  const lines: string[] = [];
  if (response.model_name) {
    const version = response.model_version ? ` (version ${oneLine(response.model_version)})` : '';
    lines.push(`model ${oneLine(response.model_name)}${version}`);
  }
  for (const output of response.outputs) {
    lines.push(`${oneLine(output.name)}  ${oneLine(output.datatype)} [${output.shape.join(', ')}]`);
    lines.push(`  values: ${formatValues(output.data, maxValues)}`);
    // Top-k ranks the last dimension (a classifier's scores); a row of one value has nothing to rank.
    const rowLength = output.shape.length > 0 ? output.shape[output.shape.length - 1]! : output.data.length;
    if (options.top && options.top > 0 && output.datatype !== 'BYTES' && output.datatype !== 'BOOL' && rowLength > 1) {
      const rows = output.data.length / rowLength;
      for (let row = 0; row < rows; row++) {
        const slice = output.data.slice(row * rowLength, (row + 1) * rowLength);
        const label = rows > 1 ? `  top ${options.top} (row ${row}):` : `  top ${options.top}:`;
        lines.push(label);
        for (const { index, value } of topK(slice, options.top)) {
          lines.push(`    ${String(index).padStart(6)}  ${formatElement(value)}`);
        }
      }
    }
  }
  return `${lines.join('\n')}\n`;
}

/** A name the server sent, its line breaks shown as `\n`: a tensor name never starts a line of its own. */
function oneLine(text: string): string {
  const escape = (c: string) => (c === '\n' ? '\\n' : c === '\r' ? '\\r' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return text.replace(/[\r\n\u0085\u2028\u2029]/g, escape);
}

export function topK(values: readonly TensorElement[], k: number): { index: number; value: TensorElement }[] {
  return values
    .map((value, index) => ({ index, value, key: Number(value) }))
    .filter((entry) => !Number.isNaN(entry.key))
    .sort((a, b) => b.key - a.key || a.index - b.index)
    .slice(0, k)
    .map(({ index, value }) => ({ index, value }));
}

function formatValues(values: readonly TensorElement[], max: number): string {
  if (values.length <= max) return `[${values.map(formatElement).join(', ')}]`;
  const head = Math.ceil(max * 0.75);
  const tail = max - head;
  const hidden = values.length - head - tail;
  const shown = [...values.slice(0, head), ...values.slice(values.length - tail)].map(formatElement);
  shown.splice(head, 0, `… ${hidden} more …`);
  return `[${shown.join(', ')}]`;
}

export function formatElement(value: TensorElement): string {
  if (value instanceof Uint8Array) {
    const text = Buffer.from(value).toString('utf8');
    if (Buffer.from(text, 'utf8').equals(Buffer.from(value)) && !/[\u0000-\u0008\u000e-\u001f]/.test(text)) {
      return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);
    }
    return `<${value.length} bytes>`;
  }
  if (typeof value === 'number') {
    if (Object.is(value, -0)) return '-0';
    if (Number.isInteger(value)) return String(value);
    return String(Number(value.toPrecision(6)));
  }
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/** The decoded response as plain JSON (for --json): data inline; what a JSON number cannot hold is kept as a string:
 *  64-bit integers beyond 2^53 as their digits, `-0`, `NaN`, `Infinity`; non-UTF-8 bytes as `{"base64": …}`. */
export function inferenceResponseToJson(response: InferenceResponse): unknown {
  return {
    ...response,
    outputs: response.outputs.map((output) => ({
      name: output.name,
      datatype: output.datatype,
      shape: output.shape,
      ...(output.parameters ? { parameters: output.parameters } : {}),
      data: output.data.map(jsonElement),
    })),
  };
}

function jsonElement(value: TensorElement): unknown {
  if (typeof value === 'bigint') {
    const safe = value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER);
    return safe ? Number(value) : value.toString();
  }
  if (value instanceof Uint8Array) {
    const text = Buffer.from(value).toString('utf8');
    return Buffer.from(text, 'utf8').equals(Buffer.from(value)) ? text : { base64: Buffer.from(value).toString('base64') };
  }
  if (Object.is(value, -0)) return '-0';
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  return value;
}
