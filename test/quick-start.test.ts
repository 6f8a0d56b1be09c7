// The README's quick start, as a new user runs it on a fresh clone: after `npm ci` (its install is the repository's
// node_modules, its build the dist/ the global setup made), the quick start's commands run the CLI at once and never
// build again; `prepare` (what `npm ci` and `npm install` run) builds only a stale dist/. The clone sits under a
// directory only its owner may enter (what `mktemp -d` makes), as the tests of a clone in a home directory meet it.

import { execFileSync, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const ROOT = join(__dirname, '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { main: buildMain, staleReason } = require('../scripts/build.js') as {
  main: (args: string[], root?: string) => void;
  staleReason: (root: string) => string | undefined;
};

/** The README's quick-start commands: the first fenced block under `## Quick start`, comments removed. */
export function quickStartCommands(readme: string): string[] {
  const section = readme.split(/^## Quick start$/m)[1]?.split(/^## /m)[0] ?? '';
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter(Boolean);
}

/** Every file under `dir` with its modification time, to see whether anything rewrote it. */
function snapshot(dir: string): Record<string, number> {
  const out: Record<string, number> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, e.name);
      if (e.isDirectory()) walk(path);
      else out[path.slice(dir.length + 1)] = statSync(path).mtimeMs;
    }
  };
  walk(dir);
  return out;
}

describe('the README quick start on a fresh clone', () => {
  const owner = mkdtempSync(join(tmpdir(), 'mme-clone-'));
  const clone = join(owner, 'mme-deploy');
  let dist: Record<string, number> = {};
  afterAll(() => rmSync(owner, { recursive: true, force: true }));

  beforeAll(() => {
    // The files a clone has: tracked ones and new ones not ignored, as they are in this working tree.
    const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
    for (const file of listed.split('\0').filter(Boolean)) {
      if (!existsSync(join(ROOT, file))) continue; // deleted in the working tree, not yet committed
      mkdirSync(dirname(join(clone, file)), { recursive: true });
      cpSync(join(ROOT, file), join(clone, file), { verbatimSymlinks: true });
    }
    // `npm ci`: its install is this repository's node_modules; its build, the dist/ the global setup made (copied
    // after the sources, so it is newer, as `npm ci`'s own build would be).
    symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
    cpSync(join(ROOT, 'dist'), join(clone, 'dist'), { recursive: true });
    dist = snapshot(join(clone, 'dist'));
  }, 120_000);

  it('shows npm ci, then the CLI on the complete example, then npm test', () => {
    const commands = quickStartCommands(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    expect(commands[0]).toBe('npm ci');
    expect(commands).toContain('npm test');
    expect(commands.some((c) => c.includes('package examples/sentiment_onnx'))).toBe(true);
    // npx in the clone itself would install the clone into npx's cache first (npm's libnpmexec does so when the local
    // package's own bin has the command's name), seconds to minutes and a second copy: the clone runs dist/ directly.
    expect(commands.filter((c) => /^npx\s+mme-deploy\b/.test(c))).toEqual([]);
  });

  it("runs the quick start's commands without building: dist/ is never rewritten", () => {
    const commands = quickStartCommands(readFileSync(join(clone, 'README.md'), 'utf8')).filter(
      (c) => c !== 'npm ci' && c !== 'npm test',
    );
    for (const command of commands) {
      // Offline: a command that would fetch or install something (npx installing the clone into its cache) fails.
      const run = spawnSync('sh', ['-c', command], {
        cwd: clone,
        encoding: 'utf8',
        env: { ...process.env, npm_config_offline: 'true', npm_config_yes: 'false', CI: '' },
      });
      expect({ command, status: run.status, stderr: run.stderr }).toEqual({ command, status: 0, stderr: expect.any(String) });
    }
    expect(existsSync(join(clone, 'sentiment_onnx.tar.gz'))).toBe(true);
    expect(snapshot(join(clone, 'dist'))).toEqual(dist);
  });

  it('prepare (run by npm ci and npm install) leaves a current dist/ alone', () => {
    const run = spawnSync('npm', ['run', 'prepare', '--silent'], { cwd: clone, encoding: 'utf8' });
    expect(run.stderr).toContain('mme-deploy: dist/ is current: no build');
    expect(run.status).toBe(0);
    expect(snapshot(join(clone, 'dist'))).toEqual(dist);
  });

  it('prepare builds when dist/ is missing or a source is newer (a fresh clone, a pull)', () => {
    // A tree of its own: the clone's dist/ stays as the other tests here expect it, in any order.
    const tree = mkdtempSync(join(tmpdir(), 'mme-stale-'));
    try {
      const write = (file: string) => {
        mkdirSync(dirname(join(tree, file)), { recursive: true });
        writeFileSync(join(tree, file), '');
      };
      ['lib/index.ts', 'bin/mme-deploy.ts', 'constructs/index.ts', 'package.json', 'tsconfig.json'].forEach(write);
      expect(staleReason(tree)).toBe('dist/lib/index.js is missing');
      const earlier = new Date(Date.now() - 60_000);
      for (const file of ['lib/index.ts', 'bin/mme-deploy.ts', 'constructs/index.ts', 'package.json', 'tsconfig.json']) {
        utimesSync(join(tree, file), earlier, earlier);
      }
      ['dist/lib/index.js', 'dist/constructs/index.js', 'dist/bin/mme-deploy.js'].forEach(write);
      expect(staleReason(tree)).toBeUndefined();
      const later = new Date(Date.now() + 60_000);
      utimesSync(join(tree, 'lib', 'index.ts'), later, later);
      expect(staleReason(tree)).toBe('lib is newer than dist/');
    } finally {
      rmSync(tree, { recursive: true, force: true });
    }
  });

  it('a failed build says how its step ended: the exit status, or the signal that killed it silently', () => {
    const tree = mkdtempSync(join(tmpdir(), 'mme-failing-build-'));
    const written: string[] = [];
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    const exitCode = process.exitCode;
    try {
      const tsc = join(tree, 'node_modules', 'typescript', 'bin', 'tsc');
      mkdirSync(dirname(tsc), { recursive: true });
      const failWith = (body: string) => {
        writeFileSync(tsc, body);
        written.length = 0;
        process.exitCode = undefined;
        buildMain(['--if-stale'], tree);
        return { message: written.join(''), exitCode: process.exitCode };
      };
      const command = `Command failed: ${process.execPath} ${tsc} -p tsconfig.build.json`;
      expect(failWith('process.exit(3);')).toEqual({ message: `mme-deploy: build failed: ${command} (exit 3)\n`, exitCode: 1 });
      expect(failWith("process.kill(process.pid, 'SIGKILL');")).toEqual({
        message: `mme-deploy: build failed: ${command} (killed by SIGKILL)\n`,
        exitCode: 1,
      });
    } finally {
      stderr.mockRestore();
      process.exitCode = exitCode;
      rmSync(tree, { recursive: true, force: true });
    }
  });

  it('the unprivileged-user tests skip, with the reason, when the clone is in an owner-only directory', () => {
    const env: NodeJS.ProcessEnv = { ...process.env, CI: '' };
    for (const name of ['MME_TEST_TOOLS', 'MME_TEST_SKIP_LOG', 'MME_TEST_RUN_DIR', 'MME_CFN_LINT_DIR', 'JEST_WORKER_ID']) {
      delete env[name];
    }
    const run = spawnSync(
      process.execPath,
      [join(clone, 'node_modules', 'jest', 'bin', 'jest.js'), '--maxWorkers=1', '--verbose', 'test/cli/read-errors.test.ts'],
      { cwd: clone, env, encoding: 'utf8', maxBuffer: 1 << 26 },
    );
    const output = `${run.stdout}\n${run.stderr}`;
    if (process.getuid?.() === 0) {
      expect(output).toMatch(/skipped for what this machine lacks \(the unprivileged user \(uid 65534\) cannot run the CLI from .*EACCES/);
      expect(output).toMatch(/0 failed, 1 skipped/);
    } else {
      expect(output).toMatch(/5 passed, 0 failed/);
    }
    expect(run.status).toBe(0);
  }, 240_000);

  it('the packed package runs no build when installed: prepare without the build script does nothing', () => {
    // What `npm pack` ships has no scripts/ (package.json `files`); only a clone or a git-URL install builds.
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string>; files: string[] };
    expect(pkg.files).not.toContain('scripts');
    for (const hook of ['preinstall', 'install', 'postinstall']) expect(pkg.scripts[hook]).toBeUndefined();
    expect(pkg.scripts.prepack).toBe('node scripts/build.js');
    const installed = mkdtempSync(join(tmpdir(), 'mme-installed-'));
    try {
      const run = spawnSync('sh', ['-c', pkg.scripts.prepare!], { cwd: installed, encoding: 'utf8' });
      expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
      expect(readdirSync(installed)).toEqual([]);
    } finally {
      rmSync(installed, { recursive: true, force: true });
    }
  });
});
