// Slow: ~11 s on a quiet 2-core machine (test/sequencer.js starts it early on a clean clone).
// Fuzzes the archive reader and extractor with mutated archives: gzip-level byte flips and truncations, tar-level
// byte flips, and header field mutations with recomputed checksums (so they reach the field parsers). Every case must
// end within a deadline, either accepted or with a domain error (an MmeError whose code is TAR_* or UNREADABLE);
// extraction must never write outside its destination; a damaged gzip stream is never accepted with other content.
// The cases run in a child process watched case by case: a busy loop starves timers in its own process, so only a
// watcher outside it can see a hang (fuzz-watch.ts). Seeded and reproducible: MME_FUZZ_SEED=<n> reruns a seed, MME_FUZZ_CASES=<n>
// changes the count.

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seededRandom } from '../../lib/plan/seeded-random';
import { TAR_BLOCK } from '../../lib/archive/tar-header';
import { baseArchives, makeCase } from './fuzz-cases';
import { runWatched } from './fuzz-watch';

const SEED = Number(process.env.MME_FUZZ_SEED ?? 20261214);
const CASES = Number(process.env.MME_FUZZ_CASES ?? 5000);
/** A case's archive is a few KiB and takes milliseconds: one still running after this (times the load) hangs. */
const DEADLINE_MS = 5000;

/** Case `index` as the runner made it, for a report about a case the runner could not report itself. */
function describeCase(index: number): string {
  const random = seededRandom(SEED);
  const bases = baseArchives();
  let fuzz = makeCase(random, bases);
  for (let i = 0; i < index; i++) fuzz = makeCase(random, bases);
  return `case ${index} (${fuzz.description})`;
}

describe('archive reader fuzzing', () => {
  // A quarter of the cases are extracted: in memory (tmpfs) when the machine has it, since on a busy disk the
  // metadata writes of a thousand small extractions take most of a minute.
  let sandbox: string;
  beforeAll(() => {
    sandbox = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'mme-archive-fuzz-'));
  });
  afterAll(() => rmSync(sandbox, { recursive: true, force: true }));

  it(`survives ${CASES} mutated archives (seed ${SEED}): no hang, no escape, only domain errors`, async () => {
    const run = await runWatched({
      runner: join(__dirname, 'fuzz-runner.ts'),
      args: [String(SEED), String(CASES), sandbox],
      cases: CASES,
      deadlineMs: DEADLINE_MS,
      describe: describeCase,
    });
    const accepted = run.outcomes.accepted ?? 0;
    const rejected = run.outcomes.rejected ?? 0;
    if (run.failures.length > 0) {
      throw new Error(
        `archive fuzzing failed with seed ${SEED} (rerun: MME_FUZZ_SEED=${SEED} npx jest test/archive/tar-reader.fuzz.test.ts):\n` +
          run.failures.join('\n'),
      );
    }
    // Both outcomes occur in numbers, so the mutations reach past the first header and every check is exercised.
    expect(accepted + rejected).toBe(CASES);
    expect(accepted).toBeGreaterThan(CASES / 50);
    expect(rejected).toBeGreaterThan(CASES / 2);
  });

  it('makes the same cases from the same seed', () => {
    const bases = baseArchives();
    const first = seededRandom(SEED);
    const second = seededRandom(SEED);
    for (let i = 0; i < 50; i++) expect(makeCase(first, bases).bytes.equals(makeCase(second, bases).bytes)).toBe(true);
  });

  it('mutates real header blocks of its base archives', () => {
    for (const { tar, headers } of baseArchives()) {
      expect(headers.length).toBeGreaterThan(1);
      for (const offset of headers) {
        expect(offset % TAR_BLOCK).toBe(0);
        expect(tar.toString('latin1', offset + 257, offset + 262)).toBe('ustar');
      }
    }
  });
});
