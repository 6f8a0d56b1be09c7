// Builds throwaway model repositories and archives for the archive tests, under the OS temp directory.

import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { readTarGz, TarEntry } from '../../lib/archive/tar-reader';

/** A fresh temp directory, removed by the returned cleanup. */
export function tempDir(): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), 'mme-archive-test-'));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

/** Writes files (path → content) and creates directories (paths ending in `/`) under `root`. */
export function writeTree(root: string, tree: Record<string, string | Buffer>): void {
  for (const [path, content] of Object.entries(tree)) {
    if (path.endsWith('/')) {
      mkdirSync(join(root, path), { recursive: true });
    } else {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), content);
    }
  }
}

/**
 * A two-model repository spanning several 1 MiB compression spans: an empty version dir, an executable, random
 * weights, compressible text, a path over 100 bytes and a non-ASCII name.
 */
export function sampleRepository(root: string): void {
  writeTree(root, {
    'ensemble/config.pbtxt': 'name: "ensemble"\nplatform: "ensemble"\n',
    'ensemble/1/': '',
    'bert/config.pbtxt': 'name: "bert"\nbackend: "python"\n',
    'bert/1/model.py': 'import triton_python_backend_utils as pb_utils\n'.repeat(200),
    'bert/1/weights.bin': randomBytes(2_500_000),
    'bert/1/merges.txt': 'merge token pair\n'.repeat(100_000),
    [`bert/1/${'tokenizer-'.repeat(12)}/vocab-with-a-long-name.txt`]: 'hello\nworld\n'.repeat(1000),
    'bert/1/résumé.txt': 'non-ASCII name\n',
  });
  writeFileSync(join(root, 'bert/1/run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
}

/** Every entry the reader delivers, with the text of each file read to its end. */
export async function listEntries(
  source: string | Readable | Buffer | Buffer[],
): Promise<(TarEntry & { text?: string })[]> {
  const seen: (TarEntry & { text?: string })[] = [];
  const input = Buffer.isBuffer(source) ? Readable.from([source]) : Array.isArray(source) ? Readable.from(source) : source;
  await readTarGz(input, async (entry, content) => {
    if (entry.type !== 'file') {
      seen.push(entry);
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of content) chunks.push(chunk as Buffer);
    seen.push({ ...entry, text: Buffer.concat(chunks).toString() });
  });
  return seen;
}
