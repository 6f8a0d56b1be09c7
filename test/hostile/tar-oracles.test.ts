// The oracles' shell of the differential archive fuzz (tar-oracles.ts): the tools' statuses it reports on a case, and
// a tool that never ends stopped after its timeout and counted as refusing, the next tools still run.

import { spawnSync } from 'node:child_process';
import {
  chmodSync, closeSync, constants, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileMember, gzipOf, tarOf } from '../archive/crafted-archives';
import { suiteFor, suiteUnless } from '../tools';
import { OracleShell } from './tar-oracles';

let dir: string;
let shell: OracleShell | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mme-tar-oracles-'));
});
afterEach(async () => {
  // Stand-ins still blocked on the FIFO (their stop failed) are let go, so the shell ends and the test fails, not hangs.
  const letGo = () => {
    try {
      closeSync(openSync(join(dir, 'never-written'), constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // no FIFO, or no one blocked on it
    }
  };
  const lettingGo = setInterval(letGo, 50);
  await shell?.end();
  clearInterval(lettingGo);
  shell = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** Writes case `index` under <dir>/cases as the runner does: its archive and an empty directory for GNU tar. */
function writeCase(index: number, bytes: Buffer): void {
  mkdirSync(join(dir, 'cases', String(index), 'gnu'), { recursive: true });
  writeFileSync(join(dir, 'cases', String(index), 'case.tar.gz'), bytes);
}

const gnuTar = spawnSync('tar', ['--version'], { encoding: 'utf8' });
const notGnu = /GNU tar/.test(gnuTar.stdout ?? '') ? undefined : { reason: 'needs GNU tar as `tar`', install: ['apt-get install tar'] };

suiteUnless(notGnu)('the oracles on real archives', () => {
  suiteFor({ tools: ['bsdtar'] })('GNU tar and bsdtar', () => {
    it('reports each tool accepting a sound archive, GNU tar listing it, and each refusing garbage', async () => {
      writeCase(0, gzipOf(tarOf(fileMember('m/config.pbtxt', 'name: "m"\n'))));
      writeCase(1, Buffer.from('not an archive\n'));
      shell = new OracleShell(join(dir, 'cases'), 60_000);
      shell.send(0);
      shell.send(1);
      expect(await shell.statuses(0)).toEqual({ list: 0, extract: 0, bsd: 0 });
      expect(readFileSync(join(dir, 'cases', '0', 'list'), 'latin1')).toMatch(/^-\S+ \d+\/\d+ +10 .* m\/config\.pbtxt\n$/);
      expect(readFileSync(join(dir, 'cases', '0', 'gnu', 'm', 'config.pbtxt'), 'utf8')).toBe('name: "m"\n');
      const garbage = await shell.statuses(1);
      expect(garbage.list).not.toBe(0);
      expect(garbage.extract).not.toBe(0);
      expect(garbage.bsd).not.toBe(0);
    });
  });
});

/**
 * A shell whose PATH finds stand-ins for `tar` and `bsdtar` first (shell scripts), with cases 0 and 1 written and sent.
 */
function standInShell(tar: string, bsdtar: string, toolTimeoutMs: number): OracleShell {
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  for (const [name, script] of [['tar', tar], ['bsdtar', bsdtar]] as const) {
    writeFileSync(join(bin, name), `#!/bin/sh\n${script}`);
    chmodSync(join(bin, name), 0o755);
  }
  writeCase(0, Buffer.from('case 0'));
  writeCase(1, Buffer.from('case 1'));
  const started = new OracleShell(join(dir, 'cases'), toolTimeoutMs, { ...process.env, PATH: `${bin}:${process.env.PATH}` });
  started.send(0);
  started.send(1);
  return started;
}

describe('a tool that never ends', () => {
  it('is stopped after its timeout and counts as refusing; the tools after it still run, case after case', async () => {
    // Stand-ins on PATH: GNU tar's listing blocks forever (opening a FIFO no one writes), its extraction marks the
    // case, bsdtar exits 3.
    const fifo = join(dir, 'never-written');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    shell = standInShell(`case " $* " in *" -tvzf "*) exec 3<"${fifo}"; exit 0 ;; esac\necho extracted >"$4/marker"\n`, 'exit 3\n', 300);
    // 143: 128 + SIGTERM's number, as the shell reports a command a signal ended.
    expect(await shell.statuses(0)).toEqual({ list: 143, extract: 0, bsd: 3 });
    expect(await shell.statuses(1)).toEqual({ list: 143, extract: 0, bsd: 3 });
    expect(readFileSync(join(dir, 'cases', '1', 'gnu', 'marker'), 'utf8')).toBe('extracted\n');
  });
});

describe('the extraction', () => {
  it('is not run when GNU tar lists a case as refused and bsdtar accepts it (no verdict reads it), and is otherwise', async () => {
    // Stand-ins on PATH: GNU tar's listing refuses case 0 and accepts case 1, its extraction marks the case it runs on;
    // bsdtar accepts both.
    shell = standInShell(
      'case " $* " in *" -tvzf "*"/0/case.tar.gz "*) exit 2 ;; *" -tvzf "*) exit 0 ;; esac\necho extracted >"$4/marker"\n',
      'exit 0\n',
      60_000,
    );
    expect(await shell.statuses(0)).toEqual({ list: 2, extract: undefined, bsd: 0 });
    expect(existsSync(join(dir, 'cases', '0', 'gnu', 'marker'))).toBe(false);
    expect(await shell.statuses(1)).toEqual({ list: 0, extract: 0, bsd: 0 });
    expect(readFileSync(join(dir, 'cases', '1', 'gnu', 'marker'), 'utf8')).toBe('extracted\n');
  });
});
