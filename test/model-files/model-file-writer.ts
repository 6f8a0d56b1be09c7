// Writes model files for tests through make_model_files.py (python3 with protobuf, and protoc): TensorFlow GraphDefs
// and SavedModels, and OpenVINO IRs. The readers are tested against files another protobuf implementation wrote.

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/** [signature key, graph tensor, DT_ name, dims (null: unknown rank)] */
export type TfTensorSpec = readonly [string, string, string, readonly number[] | null];

export type ModelFileSpec =
  | {
      readonly format: 'graphdef';
      readonly nodes: readonly (readonly [string, string])[];
      /** Bytes of weights in Const nodes before the nodes, split over `consts` nodes (default 1). */
      readonly constBytes?: number;
      readonly consts?: number;
    }
  | {
      readonly format: 'savedmodel';
      readonly metaGraphs: readonly {
        readonly tags: readonly string[];
        readonly signatures: Readonly<Record<string, { inputs: readonly TfTensorSpec[]; outputs: readonly TfTensorSpec[] }>>;
      }[];
      readonly graphBytes?: number;
    }
  | {
      readonly format: 'openvino';
      /** [names (comma-separated, '' for none), precision (FP32, I64, ...), dims (-1 dynamic; null a dynamic rank), layout] */
      readonly inputs: readonly (readonly [string, string, readonly number[] | null, string?])[];
      readonly outputs: readonly (readonly [string, string, readonly number[], string?])[];
      /** Const layers to add (a big graph). */
      readonly layers?: number;
    };

let found: string | null | undefined;

/** The python3 that has protobuf (with protoc on PATH), or undefined; under CI its absence fails the test run. */
export function modelFilePython(): string | undefined {
  if (found === undefined) {
    found = null;
    const protoc = spawnSync('protoc', ['--version'], { timeout: 30_000 }).status === 0;
    for (const python of [process.env.MME_DEPLOY_TEST_PYTHON, '/usr/bin/python3', 'python3']) {
      if (!python || !protoc) continue;
      if (spawnSync(python, ['-c', 'import google.protobuf'], { timeout: 60_000 }).status === 0) {
        found = python;
        break;
      }
    }
    if (found === null && process.env.CI) throw new Error('CI needs python3-protobuf and protobuf-compiler (.ci/run installs them)');
  }
  return found ?? undefined;
}

/** Writes each spec to its path (directories are created) in one python process. */
export function writeModelFiles(jobs: Readonly<Record<string, ModelFileSpec>>, python = modelFilePython()): void {
  if (!python) throw new Error('no python3 with protobuf');
  const run = spawnSync(python, [join(__dirname, 'make_model_files.py')], {
    input: JSON.stringify(jobs),
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (run.status !== 0) throw new Error(`make_model_files.py failed: ${run.stderr}`);
}
