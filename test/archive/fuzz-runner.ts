// Child process of tar-reader.fuzz.test.ts: runs fuzz cases `start`.. of a seed and reports each one over IPC once
// it is delivered, so the parent can kill it when the next one does not finish in time (a hang, even a busy loop).
// Usage (by the test, through fuzz-watch.ts): node --require tsx/cjs fuzz-runner.ts <seed> <count> <sandbox-dir> <start>

import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { seededRandom } from '../../lib/plan/seeded-random';
import { baseArchives, makeCase, readAll, runCase } from './fuzz-cases';
import { report } from './fuzz-watch';

async function main(): Promise<void> {
  const [seed, count, sandbox, start] = process.argv.slice(2);
  const random = seededRandom(Number(seed));
  const bases = baseArchives();
  const originals = new Map<Buffer, string[]>();
  for (const base of bases) originals.set(base.tar, (await readAll(gzipSync(base.tar))).entries);
  const jail = join(sandbox!, `jail-${process.pid}`);
  for (let index = 0; index < Number(count); index++) {
    // Cases before `start` are made and dropped, so case N is the same whichever process runs it.
    const fuzz = makeCase(random, bases);
    if (index < Number(start)) continue;
    const { outcome, failures } = await runCase(fuzz, index, jail, originals);
    await report({ finished: index, outcome, failures });
  }
  await report({ done: true });
  process.disconnect();
}

void main();
