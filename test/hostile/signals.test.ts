// Signals where the commands did not expect them (issue 23 item 14, issue 27 item 3): a second Ctrl-C during package
// names the temp archive left; a signal while no command listens exits 130; no command leaves its listeners behind.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CANCEL_SIGNALS, withCancellation } from '../../lib/cli/signals';
import { captureIo, runCli } from '../cli/run-cli';
import { sparseRepository, spawnCli, standIn, until } from '../cli/cli-process';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mme-hostile-signals-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const repository = (name: string, size: number): string => sparseRepository(dir, name, size);

const listeners = () => CANCEL_SIGNALS.map((name) => process.listenerCount(name));

describe('signal listeners', () => {
  it('are all removed after each command, whether it succeeds or fails', async () => {
    const before = listeners();
    const ok = await runCli(['package', repository('small', 10), '-o', join(dir, 'small.tar.gz')]);
    expect(ok.code).toBe(0);
    expect(listeners()).toEqual(before);
    const failed = await runCli(['package', join(dir, 'missing'), '-o', join(dir, 'missing.tar.gz')]);
    expect(failed.code).toBe(2);
    expect(listeners()).toEqual(before);
    const planned = await runCli(['plan', join(dir, 'small.tar.gz')]);
    expect(planned.code).toBe(0);
    expect(listeners()).toEqual(before);
  });

  it('are removed by withCancellation when the action throws, and while it runs there is one per signal', async () => {
    const before = listeners();
    await expect(
      withCancellation(captureIo(), {}, async () => {
        expect(listeners()).toEqual(before.map((n) => n + 1));
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(listeners()).toEqual(before);
  });

  it('never add up to a MaxListenersExceededWarning over many commands', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      for (let i = 0; i < 12; i++) await withCancellation(captureIo(), {}, async () => undefined);
      await new Promise((r) => setImmediate(r));
    } finally {
      process.removeListener('warning', onWarning);
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });
});

describe('a second Ctrl-C during package', () => {
  it('leaves no temp archive, or prints the command that removes it', async () => {
    const run = spawnCli(['package', repository('big', 16 * 1024 ** 3), '-o', join(dir, 'big.tar.gz')], { cwd: dir });
    const temps = () => readdirSync(dir).filter((f) => f.startsWith('.big.tar.gz.') && f.endsWith('.tmp'));
    await until(() => temps().length > 0, 'the temp file', 20, run);
    const [temp] = temps();
    run.kill('SIGINT');
    run.kill('SIGINT');
    expect(await run.exit).toBe(130);
    if (existsSync(join(dir, temp!))) {
      const command = /Remove the partial archive: (rm -f -- \S+)\n/.exec(run.err());
      expect(command?.[1]).toBe(`rm -f -- ${join(dir, temp!)}`);
      expect(spawnSync('sh', ['-c', command![1]!]).status).toBe(0);
    }
    expect(temps()).toEqual([]);
    expect(existsSync(join(dir, 'big.tar.gz'))).toBe(false);
  }, 30_000);
});

describe('a signal while no command listens', () => {
  for (const signal of ['SIGTERM', 'SIGHUP', 'SIGINT'] as const) {
    it(`exits 130 on ${signal} (local unload, which has nothing to clean up, waiting on the container)`, async () => {
      let requests = 0;
      const container = await standIn(() => {
        requests += 1; // held: the container never answers
      });
      try {
        const run = spawnCli(['local', 'unload', 'm.tar.gz', '--url', container.url], { cwd: dir });
        await until(() => requests === 1, 'DELETE /models', 20, run);
        run.kill(signal);
        expect(await run.exit).toBe(130);
      } finally {
        await container.close();
      }
    }, 30_000);
  }
});
