// Child process of ModelArchive: validates and packs one model repository into a file, and prints the outcome as one
// JSON line. A separate process because CDK bundling is synchronous and the packer is stream-based (asynchronous).
//
//   node model-archive-worker.js <repository-dir> <out-file> <target-model> [level]

import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { packRepository } from '../lib/bundle/pack-repository';
import type { Diagnostic } from '../lib/diagnostics';

/** What the worker prints on stdout. */
export type WorkerResult =
  | { ok: true; targetModel: string; size: number; sha256: string; models: string[]; diagnostics: Diagnostic[] }
  | { ok: false; diagnostics: Diagnostic[] };

async function run(argv: string[]): Promise<WorkerResult> {
  const [repository, outFile, targetModel, level] = argv;
  if (!repository || !outFile || !targetModel) {
    throw new Error('usage: model-archive-worker <repository-dir> <out-file> <target-model> [level]');
  }
  const packed = await packRepository(repository, { name: targetModel, level: level === undefined ? undefined : Number(level) });
  if (!packed.ok) return { ok: false, diagnostics: packed.report.diagnostics };
  await pipeline(packed.stream, createWriteStream(outFile));
  const manifest = await packed.manifest;
  return {
    ok: true,
    targetModel: manifest.targetModel,
    size: manifest.size,
    sha256: manifest.sha256,
    models: manifest.models.map((m) => m.name),
    diagnostics: packed.report.diagnostics,
  };
}

run(process.argv.slice(2)).then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 2;
  },
);
