// Small TargetModel archives for the measuring tests and the stand-in's command line: a model directory with its
// config.pbtxt and a placeholder weight file, packed with GNU tar as users pack them by hand.

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ArchiveSpec {
  /** The model directory's name inside the archive. */
  readonly model: string;
  readonly config: string;
  /** Extra files, by path relative to the model directory (`warmup/x.bin`, `TEXT.sample`). */
  readonly files?: Readonly<Record<string, Buffer | string>>;
}

/**
 * Writes `<dir>/<targetModel>` for each spec, with one shell running GNU tar for all of them (a process start from
 * the big test process costs more than a tar does); returns the archives' paths by TargetModel.
 */
export function writeArchives(dir: string, specs: Readonly<Record<string, ArchiveSpec>>): Record<string, string> {
  const work = mkdtempSync(join(tmpdir(), 'archive-'));
  try {
    const args: string[] = [];
    const written: Record<string, string> = {};
    Object.entries(specs).forEach(([targetModel, spec], i) => {
      const modelDir = join(work, String(i), spec.model);
      mkdirSync(join(modelDir, '1'), { recursive: true });
      writeFileSync(join(modelDir, 'config.pbtxt'), spec.config);
      writeFileSync(join(modelDir, '1', 'model.onnx'), 'not really onnx');
      for (const [path, content] of Object.entries(spec.files ?? {})) {
        mkdirSync(join(modelDir, path, '..'), { recursive: true });
        writeFileSync(join(modelDir, path), content);
      }
      written[targetModel] = join(dir, targetModel);
      args.push(join(work, String(i)), written[targetModel], spec.model);
    });
    // Each archive as `tar -C <its work dir> -czf <archive> <model>` would make it.
    const script = 'while [ $# -gt 0 ]; do tar -C "$1" -czf "$2" "$3" || exit 1; shift 3; done';
    execFileSync('sh', ['-c', script, 'sh', ...args]);
    return written;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** A batching classifier: FP32 [3] in, FP32 [2] and INT64 [1] out. */
export function classifier(name: string): ArchiveSpec {
  return {
    model: name,
    config: `name: "${name}"
backend: "onnxruntime"
max_batch_size: 4
input [ { name: "X" data_type: TYPE_FP32 dims: [ 3 ] } ]
output [ { name: "SCORES" data_type: TYPE_FP32 dims: [ 2 ] }, { name: "LABEL" data_type: TYPE_INT64 dims: [ 1 ] } ]
`,
  };
}

/** Triton's model_warmup: a random FP32 input and a UINT8 input read from warmup/pixels.bin. */
export function withWarmup(name: string): ArchiveSpec {
  return {
    model: name,
    config: `name: "${name}"
backend: "onnxruntime"
max_batch_size: 8
input [ { name: "X" data_type: TYPE_FP32 dims: [ -1 ] }, { name: "PIXELS" data_type: TYPE_UINT8 dims: [ 4 ] } ]
output [ { name: "Y" data_type: TYPE_FP16 dims: [ 1 ] } ]
model_warmup [ {
  name: "sample"
  batch_size: 2
  inputs { key: "X" value: { data_type: TYPE_FP32 dims: [ 5 ] random_data: true } }
  inputs { key: "PIXELS" value: { data_type: TYPE_UINT8 dims: [ 4 ] input_data_file: "pixels.bin" } }
} ]
`,
    files: { 'warmup/pixels.bin': Buffer.from([1, 2, 3, 4, 5, 6]) },
  };
}

/** No batching, a variable-length BYTES input with a sample file beside config.pbtxt. */
export function withTextSample(name: string): ArchiveSpec {
  return {
    model: name,
    config: `name: "${name}"
backend: "python"
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "EMBEDDING" data_type: TYPE_FP32 dims: [ -1, 4 ] } ]
`,
    files: { 'TEXT.sample': 'The quick brown fox' },
  };
}
