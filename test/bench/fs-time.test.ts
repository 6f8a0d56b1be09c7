// bench/fs-time.js, the preload bench/validate.js splits a run's time with: each file-system call the program makes
// is counted once, under its own name, even when node's own implementation of it calls other timed functions.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PRELOAD = join(__dirname, '..', '..', 'bench', 'fs-time.js');

interface Times {
  totalSeconds: number;
  fsSeconds: number;
  calls: Record<string, { calls: number; ns: number }>;
}

function timesOf(script: string, env: NodeJS.ProcessEnv = {}): { times: Times | undefined; status: number | null } {
  const dir = mkdtempSync(join(tmpdir(), 'mme-fs-time-'));
  try {
    writeFileSync(join(dir, 'a.txt'), 'a');
    const file = join(dir, 'times.json');
    const run = spawnSync(process.execPath, ['-r', PRELOAD, '-e', script, dir], {
      env: { ...process.env, MME_BENCH_FS_TIME: file, ...env },
    });
    let times: Times | undefined;
    try {
      times = JSON.parse(readFileSync(file, 'utf8')) as Times;
    } catch {
      times = undefined;
    }
    return { times, status: run.status };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

it('counts each call once, under the name the program called', () => {
  const { times, status } = timesOf(`
    const fs = require('node:fs'); const { join } = require('node:path'); const dir = process.argv[1];
    fs.readFileSync(join(dir, 'a.txt')); fs.readFileSync(join(dir, 'a.txt'), 'utf8');
    fs.readdirSync(dir, { withFileTypes: true });
    const fd = fs.openSync(join(dir, 'a.txt'), 'r'); fs.readSync(fd, Buffer.alloc(1)); fs.closeSync(fd);
    fs.realpathSync.native(dir);`);
  expect(status).toBe(0);
  // readFileSync opens, reads and closes through fs.openSync, fs.readSync and fs.closeSync: counted as itself only.
  expect(Object.fromEntries(Object.entries(times!.calls).map(([name, t]) => [name, t.calls]))).toEqual({
    readFileSync: 2,
    readdirSync: 1,
    openSync: 1,
    readSync: 1,
    closeSync: 1,
    realpathSync: 1,
  });
  const sum = Object.values(times!.calls).reduce((s, t) => s + t.ns, 0);
  expect(times!.fsSeconds).toBeCloseTo(sum / 1e9, 9);
  expect(times!.totalSeconds).toBeGreaterThanOrEqual(times!.fsSeconds);
});

it('writes nothing without MME_BENCH_FS_TIME, and the program runs as without it', () => {
  const { times, status } = timesOf("require('node:fs').readdirSync(process.argv[1]); process.exitCode = 3;", {
    MME_BENCH_FS_TIME: '',
  });
  expect(status).toBe(3);
  expect(times).toBeUndefined();
});
