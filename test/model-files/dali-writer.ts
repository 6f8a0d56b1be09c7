// Serialized DALI pipelines for tests, encoded here or by protoc from text format with dali_subset.proto (DALI's field
// numbers), laid out as DALI's Pipeline::SerializeToProtobuf writes them (NVIDIA/DALI dali/pipeline/pipeline.cc): every operator
// an OpDef with its schema name, instance name, outputs and arguments (a DALIDataType argument as int64), then the
// pipeline's outputs with their declared dtype and ndim (-1 when undeclared).

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { varint } from './protobuf-writer';

/** One operator: its schema name, its `device` argument (omitted when undefined) and the devices of its outputs. */
export interface DaliOpSpec {
  readonly name: string;
  readonly device?: string;
  readonly outputs: readonly string[];
}

/** DALIDataType numbers (NVIDIA/DALI dali/core/dali_data_type.h), by the names nvidia.dali.types gives them. */
export const DALI_TYPES = {
  UINT8: 0, UINT16: 1, UINT32: 2, UINT64: 3, INT8: 4, INT16: 5, INT32: 6, INT64: 7, FLOAT16: 8, FLOAT: 9, FLOAT64: 10, BOOL: 11,
  STRING: 12,
} as const;
export type DaliTypeName = keyof typeof DALI_TYPES;

/** A pipeline by its interface: what fn.external_source declares, and what pipeline_def's output_dtype/ndim declare. */
export interface DaliPipelineSpec {
  /** PipelineDef.batch_size (pipeline_def's batch_size). @default 8 */
  readonly batchSize?: number;
  /** The input operators, in the order they were added. */
  readonly inputs: readonly {
    readonly name: string;
    readonly device?: string;
    readonly dtype?: DaliTypeName;
    readonly ndim?: number;
    readonly layout?: string;
    /** The operator's schema. @default 'ExternalSource' */
    readonly schema?: string;
  }[];
  /** The pipeline's outputs: each is made by its own operator (a Copy) whose output node has that name. */
  readonly outputs: readonly { readonly name: string; readonly device?: string; readonly dtype?: DaliTypeName; readonly ndim?: number }[];
  /** Names in PipelineDef.external_inputs, as pipelines serialized by DALI before 0.23 hold them. */
  readonly legacyExternalInputs?: readonly string[];
}

const quote = (s: string) => JSON.stringify(s);

/** A message as [field name, field number, value] triples: written as text for protoc, or encoded here. */
type Message = readonly (readonly [string, number, string | number | boolean | Message])[];

/** The PipelineDef DALI would serialize for a pipeline with this interface. */
function pipelineMessage(spec: DaliPipelineSpec): Message {
  const io = (name: string, device: string, extra: Message = []): Message => [
    ['name', 1, name], ['device', 2, device], ['is_argument_input', 3, false], ...extra,
  ];
  const arg = (name: string, value: string | number | boolean): Message => {
    const [type, field, number] =
      typeof value === 'string' ? ['string', 'strings', 5] : typeof value === 'number' ? ['int64', 'ints', 4] : ['bool', 'bools', 6];
    return [['name', 1, name], ['type', 2, type], [field, number, value], ['is_vector', 8, false]];
  };
  let id = 0;
  const inputs: Message = spec.inputs.map((input) => {
    const device = input.device ?? 'cpu';
    const args: Message = [
      ['args', 4, arg('device', device)],
      ...(input.dtype !== undefined ? ([['args', 4, arg('dtype', DALI_TYPES[input.dtype])]] as const) : []),
      ...(input.ndim !== undefined ? ([['args', 4, arg('ndim', input.ndim)]] as const) : []),
      ...(input.layout !== undefined ? ([['args', 4, arg('layout', input.layout)]] as const) : []),
      ['args', 4, arg('preserve_name', true)],
    ];
    return ['op', 5, [
      ['name', 1, input.schema ?? 'ExternalSource'], ['output', 3, io(input.name, device)], ...args,
      ['inst_name', 5, input.name], ['logical_id', 6, id++],
    ]] as const;
  });
  const from = spec.inputs[0];
  const producers: Message = spec.outputs.map((output) => {
    const device = output.device ?? 'cpu';
    return ['op', 5, [
      ['name', 1, 'Copy'], ...(from ? ([['input', 2, io(from.name, from.device ?? 'cpu')]] as const) : []),
      ['output', 3, io(output.name, device)], ['args', 4, arg('device', device)], ['inst_name', 5, output.name], ['logical_id', 6, id++],
    ]] as const;
  });
  return [
    ['num_threads', 1, 4],
    ['batch_size', 2, spec.batchSize ?? 8],
    ...inputs,
    ...producers,
    ...(spec.legacyExternalInputs ?? []).map((name) => ['external_inputs', 6, name] as const),
    ...spec.outputs.map((o) => ['pipe_outputs', 7, io(o.name, o.device ?? 'cpu', [
      ['dtype', 5, o.dtype === undefined ? -1 : DALI_TYPES[o.dtype]], ['ndim', 6, o.ndim ?? -1],
    ])] as const),
    ['device_id', 8, 0],
  ];
}

function asText(message: Message): string {
  return message
    .map(([name, , value]) =>
      typeof value === 'object' ? `${name} { ${asText(value)} }` : `${name}: ${typeof value === 'string' ? quote(value) : value}`)
    .join(' ');
}

function encodeMessage(message: Message): Buffer {
  return Buffer.concat(
    message.map(([, number, value]) => {
      if (typeof value === 'number' || typeof value === 'boolean') return Buffer.from([...varint(number * 8), ...varint(Number(value))]);
      const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : encodeMessage(value);
      return Buffer.concat([Buffer.from([...varint(number * 8 + 2), ...varint(bytes.length)]), bytes]);
    }),
  );
}

/** The bytes DALI would serialize for a pipeline with this interface, encoded here (no tool needed). */
export function daliPipeline(spec: DaliPipelineSpec): Buffer {
  return encodeMessage(pipelineMessage(spec));
}

/** The same pipeline encoded by protoc from text format: the reader is tested against another protobuf writer. */
export function daliPipelineByProtoc(spec: DaliPipelineSpec, protoc: string): Buffer {
  return encode(asText(pipelineMessage(spec)), protoc);
}

/** The bytes DALI's Pipeline::SerializeToProtobuf would write for these operators (the fields the reader uses). */
export function daliPipelineBytes(ops: readonly DaliOpSpec[], protoc: string): Buffer {
  const text = [
    'num_threads: 4',
    'batch_size: 8',
    ...ops.map((op, i) => {
      const outputs = op.outputs.map((d, o) => `output { name: "${op.name}_${i}_${o}" device: "${d}" }`).join(' ');
      const device = op.device ? ` args { name: "device" type: "string" strings: "${op.device}" }` : '';
      return `op { name: "${op.name}" ${outputs} args { name: "preserve" type: "bool" bools: false }${device} ` +
        `inst_name: "__${op.name}_${i}" logical_id: ${i} }`;
    }),
    ...ops.slice(-1).flatMap((op) => op.outputs.map((d, o) => `pipe_outputs { name: "${op.name}_${ops.length - 1}_${o}" device: "${d}" }`)),
    'device_id: 0',
  ].join('\n');
  return encode(text, protoc);
}

function encode(text: string, protoc: string): Buffer {
  const run = spawnSync(protoc, ['--encode=dali_proto.PipelineDef', `-I${__dirname}`, join(__dirname, 'dali_subset.proto')], {
    input: text,
    timeout: 60_000,
  });
  if (run.status !== 0) throw new Error(`protoc failed: ${run.stderr.toString()}`);
  return run.stdout;
}
