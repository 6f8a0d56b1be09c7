// The fuzz tests' watcher (fuzz-watch.ts): a case that hangs is reported and its runner killed with all it started,
// and the runner is reaped before the watcher is done, so its CPU time counts for the test file that ran it.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runWatched } from './fuzz-watch';
import { procStat } from '../proc-stat';

/** Whether a process runs: neither gone nor a zombie (one killed, its parent gone, waiting for init to reap it). */
function running(pid: number): boolean {
  const stat = procStat(pid);
  return stat !== undefined && stat.state !== 'Z';
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mme-fuzz-watch-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('fuzz runs watched case by case', () => {
  it('reports a hanging case, then leaves neither its runner nor what the runner started', async () => {
    const run = await runWatched({
      runner: join(__dirname, 'hanging-fuzz-runner.ts'),
      args: [dir],
      cases: 2,
      deadlineMs: 1000,
      maxFailures: 1,
      describe: (index) => `case ${index}`,
    });
    expect(run.outcomes).toEqual({ accepted: 1 });
    expect(run.failures).toEqual([expect.stringMatching(/^HANG: case 1 still running after \d+ ms$/)]);
    const [runner, sleeper] = readFileSync(join(dir, 'pids'), 'utf8').split(' ').map(Number) as [number, number];
    // Reaped already: gone, not a zombie.
    expect(running(runner)).toBe(false);
    expect(() => process.kill(runner, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
    // Killed with its runner's process group (SIGKILL is delivered at once; its end is awaited a moment).
    for (let waited = 0; running(sleeper) && waited < 2000; waited += 50) await new Promise((r) => setTimeout(r, 50));
    expect(running(sleeper)).toBe(false);
  });
});
