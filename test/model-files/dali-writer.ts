// Serialized DALI pipelines for tests, encoded by protoc from text format with dali_subset.proto (DALI's field numbers).

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/** One operator: its schema name, its `device` argument (omitted when undefined) and the devices of its outputs. */
export interface DaliOpSpec {
  readonly name: string;
  readonly device?: string;
  readonly outputs: readonly string[];
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
  const run = spawnSync(protoc, ['--encode=dali_proto.PipelineDef', `-I${__dirname}`, join(__dirname, 'dali_subset.proto')], {
    input: text,
    timeout: 60_000,
  });
  if (run.status !== 0) throw new Error(`protoc failed: ${run.stderr.toString()}`);
  return run.stdout;
}
