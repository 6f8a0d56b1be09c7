// Hostile pull requests against `validate`, `validate --mme` and `package` (issue 23 items 1-4): no secret read through
// a link, --json always valid JSON, one-line messages stay one line, a huge config.pbtxt never read whole.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_CONFIG_BYTES } from '../../lib/config/parse';
import { runCli } from '../cli/run-cli';
import { FORGED, hostileRepository, HostileRepository, SECRET } from './hostile-repositories';

let base: string;
beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'mme-hostile-'));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

const COMMANDS = [['validate'], ['validate', '--mme'], ['package']] as const;

let archives = 0;

/** Runs `command` on the repository, with and without --json; every --json stdout must parse. */
async function runAll(repo: string, out: string) {
  const runs = [];
  for (const command of COMMANDS) {
    for (const json of [false, true]) {
      const args = [...command, repo, ...(command[0] === 'package' ? ['-o', join(out, `${(archives += 1)}.tar.gz`)] : [])];
      const run = await runCli(json ? [...args, '--json'] : args);
      if (json) expect(() => JSON.parse(run.stdout)).not.toThrow();
      runs.push({ args: json ? [...args, '--json'] : args, ...run });
    }
  }
  return runs;
}

describe('a link that leaves the repository is never read', () => {
  it.each<[HostileRepository, string]>([
    ['config-link', 'm/config.pbtxt'],
    ['model-dir-link', 'm/config.pbtxt'],
    ['python-link', 'p/1/model.py'],
    ['version-dir-link', 'p/1/model.py'],
  ])('%s: validate, validate --mme and package name the link, exit 2 and never show the secret', async (kind, file) => {
    const repo = hostileRepository(base, kind);
    for (const run of await runAll(repo, base)) {
      expect({ args: run.args, out: run.stdout + run.stderr }).not.toEqual(
        expect.objectContaining({ out: expect.stringContaining('hostile-test-secret') }),
      );
      expect(run.code).toBe(2);
      const line = `mme-deploy: cannot read ${repo}/${file}: a symbolic link that leaves the repository (to `;
      expect(run.stderr).toContain(line);
      expect(run.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    }
  });

  it('still reads a link that stays inside the repository', async () => {
    const repo = hostileRepository(base, 'del-name');
    const { symlinkSync, renameSync } = await import('node:fs');
    renameSync(join(repo, 'net\x7fdel', 'config.pbtxt'), join(repo, 'real.pbtxt'));
    symlinkSync(join(repo, 'real.pbtxt'), join(repo, 'net\x7fdel', 'config.pbtxt'));
    const run = await runCli(['validate', repo, '--json']);
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout).models[0].name).toBe('net\x7fdel');
  });
  expect(SECRET).toContain('hostile-test-secret');
});

describe('many unreadable paths', () => {
  it('are named five at a time with how many more, in one short line (a repository copied without read permission)', async () => {
    // Twelve models whose config.pbtxt is a link out of the repository: each is a path that cannot be read.
    const { mkdirSync, symlinkSync, writeFileSync } = await import('node:fs');
    const outside = join(base, 'outside.pbtxt');
    writeFileSync(outside, 'name: "x"\n');
    const repo = join(base, 'repo');
    for (let i = 0; i < 12; i++) {
      const model = join(repo, `m${String(i).padStart(2, '0')}`);
      mkdirSync(join(model, '1'), { recursive: true });
      symlinkSync(outside, join(model, 'config.pbtxt'));
    }
    const human = await runCli(['validate', repo]);
    const json = await runCli(['validate', repo, '--json']);
    for (const run of [human, json]) expect(run.code).toBe(2);
    const message = (JSON.parse(json.stdout) as { error: { message: string } }).error.message;
    expect(human.stderr).toBe(`mme-deploy: ${message}\n`);
    expect(message.match(/cannot read /g)).toHaveLength(5);
    expect(message).toContain(`cannot read ${repo}/m04/config.pbtxt: a symbolic link that leaves the repository`);
    expect(message).not.toContain('m05');
    expect(message).toContain('; and 7 more paths that cannot be read (12 in all).');
    expect(message).toContain('copy the file into it in place of the link');
  });
});

describe('--json is valid JSON whatever the names hold', () => {
  it('keeps a DEL byte a DEL (escaped the JSON way) and shows it as \\x7f to a terminal', async () => {
    const repo = hostileRepository(base, 'del-name');
    const runs = await runAll(repo, base);
    for (const run of runs.filter((r) => r.args.includes('--json'))) {
      const parsed = JSON.parse(run.stdout);
      expect(parsed.models.map((m: { name: string }) => m.name)).toEqual(['net\x7fdel']);
      expect(run.stdout).toContain('net\\u007fdel');
      expect(run.stdout).not.toContain('\x7f');
    }
    const human = runs.find((r) => r.args.length === 2)!;
    expect(human.stdout).toContain('net\\x7fdel');
    expect(human.stdout).not.toContain('\x7f');
  });
});

describe('one-line messages stay one line', () => {
  it('escapes a newline in a model directory name, so no forged line is printed', async () => {
    const repo = hostileRepository(base, 'newline-name');
    for (const run of await runAll(repo, base)) {
      const lines = `${run.stdout}\n${run.stderr}`.split('\n');
      expect(lines.filter((l) => l.startsWith(FORGED))).toEqual([]);
      if (run.args.includes('--json')) expect(JSON.parse(run.stdout).models[0].name).toBe(`net\n${FORGED}`);
      else expect(run.stdout + run.stderr).not.toContain('net\n');
    }
    // A message that quotes the name (a diagnostic about the directory) keeps it on its line, escaped.
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(repo, `net\n${FORGED}`, 'config.pbtxt'), 'bogus_field: 1\n');
    for (const run of await runAll(repo, base)) {
      expect(`${run.stdout}\n${run.stderr}`.split('\n').filter((l) => l.startsWith(FORGED))).toEqual([]);
      if (!run.args.includes('--json')) expect(run.stdout + run.stderr).toContain(`net\\n${FORGED}`);
    }
  });
});

describe('config.pbtxt size', () => {
  it('refuses a sparse 700 MB config.pbtxt from its size, without reading it', async () => {
    const repo = hostileRepository(base, 'sparse-config');
    const used = process.memoryUsage().rss;
    const run = await runCli(['validate', repo, '--json']);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout);
    expect(report.diagnostics).toContainEqual(expect.objectContaining({
      code: 'config-too-large',
      file: 'm/config.pbtxt',
      message: `m/config.pbtxt is ${700 * 1024 * 1024} bytes; a model configuration is at most ${MAX_CONFIG_BYTES} bytes here. ` +
        'Check that this is really a config.pbtxt.',
    }));
    // Read whole, the file took 1.1 GB; the refusal costs nothing like its size.
    expect(process.memoryUsage().rss - used).toBeLessThan(100 * 1024 * 1024);
  });
});
