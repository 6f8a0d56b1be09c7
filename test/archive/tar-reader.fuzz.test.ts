// Fuzzes the archive reader and extractor with mutated archives: gzip-level byte flips and truncations, tar-level
// byte flips, and header field mutations with recomputed checksums (so they reach the field parsers). Every case must
// end within a deadline, either accepted or with a domain error (an MmeError whose code is TAR_* or UNREADABLE);
// extraction must never write outside its destination; a damaged gzip stream is never accepted with other content.
// The cases run in a child process watched case by case: a busy loop starves timers in its own process, so only a
// watcher outside it can see a hang. Seeded and reproducible: MME_FUZZ_SEED=<n> reruns a seed, MME_FUZZ_CASES=<n>
// changes the count.

import { fork } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seededRandom } from '../../lib/plan/seeded-random';
import { TAR_BLOCK } from '../../lib/archive/tar-header';
import { baseArchives, makeCase } from './fuzz-cases';
import type { RunnerMessage } from './fuzz-runner';
import { loadScaled } from '../load-scale';

const SEED = Number(process.env.MME_FUZZ_SEED ?? 20261214);
const CASES = Number(process.env.MME_FUZZ_CASES ?? 5000);
/** A case's archive is a few KiB and takes milliseconds: one still running after this hangs. */
// A hang, not a slow case: 5 s on a quiet machine, scaled by the run's load.
const DEADLINE_MS = loadScaled(5000);

interface FuzzRun {
  readonly failures: string[];
  accepted: number;
  rejected: number;
  /** The first case not yet reported. */
  next: number;
}

/** Runs cases `start`.. in a child; resolves when all are done, or when one hangs or kills it (then the child is gone). */
function runFrom(start: number, sandbox: string, run: FuzzRun): Promise<void> {
  return new Promise((resolve) => {
    const child = fork(join(__dirname, 'fuzz-runner.ts'), [String(SEED), String(start), String(CASES), sandbox], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    // The case under way is always run.next: the runner reports each case, delivered, before it starts the next.
    const watch = () => {
      clearTimeout(timer);
      timer = setTimeout(() => finish(`HANG: ${describeCase(run.next)} still running after ${DEADLINE_MS} ms`, run.next + 1), DEADLINE_MS);
    };
    const finish = (failure?: string, next = run.next) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (failure) run.failures.push(failure);
      run.next = next;
      child.kill('SIGKILL');
      resolve();
    };
    watch();
    child.on('message', (message: RunnerMessage) => {
      if ('finished' in message) {
        run.failures.push(...message.failures);
        if (message.outcome === 'accepted') run.accepted++;
        else run.rejected++;
        run.next = message.finished + 1;
        watch();
      } else {
        finish();
      }
    });
    child.on('exit', (code, signal) => {
      if (run.next < CASES) {
        finish(`STALL: the runner exited (${code ?? signal}) during ${describeCase(run.next)}: ${stderr.trim()}`, run.next + 1);
      } else finish();
    });
  });
}

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
    const run: FuzzRun = { failures: [], accepted: 0, rejected: 0, next: 0 };
    while (run.next < CASES && run.failures.length < 10) await runFrom(run.next, sandbox, run);
    if (run.failures.length > 0) {
      throw new Error(
        `archive fuzzing failed with seed ${SEED} (rerun: MME_FUZZ_SEED=${SEED} npx jest test/archive/tar-reader.fuzz.test.ts):\n` +
          run.failures.join('\n'),
      );
    }
    // Both outcomes occur in numbers, so the mutations reach past the first header and every check is exercised.
    expect(run.accepted + run.rejected).toBe(CASES);
    expect(run.accepted).toBeGreaterThan(CASES / 50);
    expect(run.rejected).toBeGreaterThan(CASES / 2);
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
