// Serialized DALI pipelines for tests, encoded by protoc from text format with dali_subset.proto (DALI's field numbers),
// laid out as DALI's Pipeline::SerializeToProtobuf writes them (NVIDIA/DALI dali/pipeline/pipeline.cc): every operator
// an OpDef with its schema name, instance name, outputs and arguments (a DALIDataType argument as int64), then the
// pipeline's outputs with their declared dtype and ndim (-1 when undeclared).

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

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

/** The bytes DALI would serialize for a pipeline with this interface. */
export function daliPipeline(spec: DaliPipelineSpec, protoc = 'protoc'): Buffer {
  let id = 0;
  const ops = [
    ...spec.inputs.map((input) => {
      const device = input.device ?? 'cpu';
      const args = [
        `args { name: "device" type: "string" strings: ${quote(device)} is_vector: false }`,
        ...(input.dtype !== undefined ? [`args { name: "dtype" type: "int64" ints: ${DALI_TYPES[input.dtype]} is_vector: false }`] : []),
        ...(input.ndim !== undefined ? [`args { name: "ndim" type: "int64" ints: ${input.ndim} is_vector: false }`] : []),
        ...(input.layout !== undefined ? [`args { name: "layout" type: "string" strings: ${quote(input.layout)} is_vector: false }`] : []),
        'args { name: "preserve_name" type: "bool" bools: true is_vector: false }',
      ];
      return `op { name: ${quote(input.schema ?? 'ExternalSource')} ` +
        `output { name: ${quote(input.name)} device: ${quote(device)} is_argument_input: false } ${args.join(' ')} ` +
        `inst_name: ${quote(input.name)} logical_id: ${id++} }`;
    }),
    ...spec.outputs.map((output) => {
      const device = output.device ?? 'cpu';
      const from = spec.inputs[0];
      const input = from ? `input { name: ${quote(from.name)} device: ${quote(from.device ?? 'cpu')} is_argument_input: false } ` : '';
      return `op { name: "Copy" ${input}output { name: ${quote(output.name)} device: ${quote(device)} is_argument_input: false } ` +
        `args { name: "device" type: "string" strings: ${quote(device)} is_vector: false } ` +
        `inst_name: ${quote(output.name)} logical_id: ${id++} }`;
    }),
  ];
  const text = [
    'num_threads: 4',
    `batch_size: ${spec.batchSize ?? 8}`,
    ...ops,
    ...(spec.legacyExternalInputs ?? []).map((name) => `external_inputs: ${quote(name)}`),
    ...spec.outputs.map(
      (o) => `pipe_outputs { name: ${quote(o.name)} device: ${quote(o.device ?? 'cpu')} is_argument_input: false ` +
        `dtype: ${o.dtype === undefined ? -1 : DALI_TYPES[o.dtype]} ndim: ${o.ndim ?? -1} }`,
    ),
    'device_id: 0',
    'seed: -1',
  ].join('\n');
  return encode(text, protoc);
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
