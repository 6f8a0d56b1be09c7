// Child process of fuzz-watch.test.ts: a fuzz runner that starts a process of its own, finishes case 0, then hangs
// on case 1. It writes `<its pid> <its child's pid>` to <dir>/pids first.
// Usage (by the test, through runWatched): node --require tsx/cjs hanging-fuzz-runner.ts <dir> <start>

import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { report } from './fuzz-watch';

async function main(): Promise<void> {
  const [dir] = process.argv.slice(2);
  const sleeper = spawn('sleep', ['1000'], { stdio: 'ignore' });
  writeFileSync(join(dir!, 'pids'), `${process.pid} ${sleeper.pid}`);
  await report({ finished: 0, outcome: 'accepted', failures: [] });
  // Case 1 never ends: only the watcher's deadline stops it.
  setInterval(() => undefined, 60_000);
}

void main();
