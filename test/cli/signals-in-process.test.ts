// withCancellation in-process: what the first and the second signal do, and that the listeners are gone afterwards.
// (test/cli/signals-process.test.ts sends real signals to a real CLI; this one reaches every branch, so mutation
// testing sees them.)

import type { CliIo } from '../../lib/cli/io';
import { CANCEL_SIGNALS, withCancellation } from '../../lib/cli/signals';

function recordingIo(): CliIo & { readonly errors: string[] } {
  const errors: string[] = [];
  return { errors, stdout: () => undefined, stderr: (text) => errors.push(text), isTTY: false, env: {}, cwd: '/' };
}

function listenerCounts(): number[] {
  return CANCEL_SIGNALS.map((name) => process.listenerCount(name));
}

/** Delivers a signal to the process's listeners without a real kill (Jest's worker would die of one). */
function deliver(name: NodeJS.Signals): void {
  process.emit(name, name);
}

describe('withCancellation', () => {
  it.each(CANCEL_SIGNALS)('aborts the signal on the first %s, printing the notice once', async (name) => {
    const io = recordingIo();
    const reason = await withCancellation(io, { notice: 'cleaning up\n', exit: () => undefined }, async ({ signal }) => {
      expect(signal.aborted).toBe(false);
      deliver(name);
      return (signal.reason as Error).message;
    });
    expect(reason).toBe(`received ${name}`);
    expect(io.errors).toEqual(['cleaning up\n']);
  });

  it('prints nothing on the first signal when there is no notice', async () => {
    const io = recordingIo();
    const aborted = await withCancellation(io, { exit: () => undefined }, async ({ signal }) => {
      deliver('SIGINT');
      return signal.aborted;
    });
    expect(aborted).toBe(true);
    expect(io.errors).toEqual([]);
  });

  it('quits with 130 on the second signal, naming what is left to clean up', async () => {
    const io = recordingIo();
    const exits: number[] = [];
    await withCancellation(io, { exit: (code) => exits.push(code) }, async ({ onQuit }) => {
      onQuit(() => 'Run: aws s3api abort-multipart-upload --bucket b --key k --upload-id u');
      deliver('SIGTERM');
      expect(exits).toEqual([]);
      deliver('SIGINT');
    });
    expect(exits).toEqual([130]);
    expect(io.errors).toEqual([
      '\nmme-deploy: quit before cleaning up. Run: aws s3api abort-multipart-upload --bucket b --key k --upload-id u\n',
    ]);
  });

  it('quits with 130 on the second signal with a bare line when nothing is left over', async () => {
    const io = recordingIo();
    const exits: number[] = [];
    await withCancellation(io, { exit: (code) => exits.push(code) }, async ({ onQuit }) => {
      onQuit(() => undefined);
      deliver('SIGINT');
      deliver('SIGHUP');
    });
    expect(exits).toEqual([130]);
    expect(io.errors).toEqual(['\nmme-deploy: quit before cleaning up.\n']);
  });

  it('removes its listeners when the action resolves and when it throws', async () => {
    const before = listenerCounts();
    await withCancellation(recordingIo(), {}, async () => {
      expect(listenerCounts()).toEqual(before.map((count) => count + 1));
    });
    expect(listenerCounts()).toEqual(before);
    await expect(
      withCancellation(recordingIo(), {}, async () => {
        throw new Error('upload failed');
      }),
    ).rejects.toThrow('upload failed');
    expect(listenerCounts()).toEqual(before);
  });

  it('calls process.exit(130) on the second signal when no exit is given, even with no onQuit', async () => {
    const exit = jest.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    try {
      const io = recordingIo();
      await withCancellation(io, {}, async () => {
        deliver('SIGINT');
        deliver('SIGINT');
      });
      expect(exit.mock.calls).toEqual([[130]]);
      expect(io.errors).toEqual(['\nmme-deploy: quit before cleaning up.\n']);
    } finally {
      exit.mockRestore();
    }
  });

  it('after SIGHUP, and only then, ignores write errors on stdout and stderr, once for the process', async () => {
    // A fresh copy of the module: whether write errors are ignored is per process, so per module instance here.
    let fresh!: typeof import('../../lib/cli/signals');
    jest.isolateModules(() => {
      fresh = require('../../lib/cli/signals');
    });
    const errorListeners = () => [process.stdout.listenerCount('error'), process.stderr.listenerCount('error')];
    const before = errorListeners();
    for (const name of ['SIGINT', 'SIGTERM'] as const) {
      await fresh.withCancellation(recordingIo(), { exit: () => undefined }, async () => deliver(name));
    }
    expect(errorListeners()).toEqual(before);
    await fresh.withCancellation(recordingIo(), { exit: () => undefined }, async () => deliver('SIGHUP'));
    const after = errorListeners();
    expect(after).toEqual(before.map((count) => count + 1));
    await fresh.withCancellation(recordingIo(), { exit: () => undefined }, async () => deliver('SIGHUP'));
    expect(errorListeners()).toEqual(after);
    // The listener swallows the error: emitting one on a stream with no other listener would throw.
    const swallow = process.stdout.listeners('error').at(-1) as (error: Error) => unknown;
    expect(swallow(new Error('EPIPE'))).toBeUndefined();
  });

  it('on EPIPE (the reader went away): exits 0 when no command runs, cancels a running one as by SIGPIPE', async () => {
    let fresh!: typeof import('../../lib/cli/signals');
    jest.isolateModules(() => {
      fresh = require('../../lib/cli/signals');
    });
    const listenersOf = () => ({
      signals: CANCEL_SIGNALS.map((name) => process.listeners(name) as ((...args: unknown[]) => void)[]),
      stdout: process.stdout.listeners('error') as ((...args: unknown[]) => void)[],
      stderr: process.stderr.listeners('error') as ((...args: unknown[]) => void)[],
    });
    const before = listenersOf();
    const exits: number[] = [];
    fresh.exitOnSignalsOutsideCommands((code) => exits.push(code));
    const onError = process.stdout.listeners('error').at(-1) as (error: NodeJS.ErrnoException) => void;
    const epipe = Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
    try {
      const reason = await fresh.withCancellation(recordingIo(), { exit: (code) => exits.push(code) }, async ({ signal }) => {
        onError(epipe);
        return (signal.reason as Error).message;
      });
      expect(reason).toBe('received SIGPIPE');
      expect(exits).toEqual([]);
      onError(epipe);
      expect(exits).toEqual([0]);
      // Any other error on stdout is no closed reader: it is not swallowed.
      expect(() => onError(Object.assign(new Error('write EIO'), { code: 'EIO' }))).toThrow('write EIO');
    } finally {
      const added = <T>(now: T[], then: T[]) => now.filter((listener) => !then.includes(listener));
      const after = listenersOf();
      CANCEL_SIGNALS.forEach((name, i) => added(after.signals[i]!, before.signals[i]!).forEach((l) => process.removeListener(name, l)));
      added(after.stdout, before.stdout).forEach((l) => process.stdout.removeListener('error', l));
      added(after.stderr, before.stderr).forEach((l) => process.stderr.removeListener('error', l));
    }
  });
});
