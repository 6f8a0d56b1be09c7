// The rule for tests that need a machine tool (test/tools.ts), checked the way a new user meets it: on a machine with
// only Node, `npm test` skips those tests and says what to install; under CI=true the same run fails.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { findTools, INSTALL, INVENTORY_VARIABLE, onPath, probeTools, SKIP_LOG_VARIABLE, testFor, underCi } from './tools';

const ROOT = join(__dirname, '..');
const nothing = { tools: {}, pythons: [] };

describe('finding tools', () => {
  it('names every missing tool and module with the command that installs it', () => {
    const found = findTools({ tools: ['protoc', 'cfn-lint'], python: ['onnx', 'numpy'] }, nothing);
    expect(found).toEqual({
      ok: false,
      reason: 'needs protoc, cfn-lint, python3, a python3 that imports onnx, numpy',
      install: [
        'apt-get install protobuf-compiler',
        'pip install cfn-lint==1.51.0',
        'apt-get install python3',
        'apt-get install python3-onnx',
        'apt-get install python3-numpy',
      ],
    });
  });

  it('picks the first python3 that has every module, not the first python3', () => {
    const inventory = {
      tools: { python3: '/a/python3' },
      pythons: [
        { path: '/a/python3', modules: ['numpy' as const] },
        { path: '/b/python3', modules: ['numpy' as const, 'onnx' as const] },
      ],
    };
    expect(findTools({ python: ['onnx'] }, inventory)).toEqual({ ok: true, paths: {}, python: '/b/python3' });
    expect(findTools({ python: ['google.protobuf'] }, inventory)).toMatchObject({
      ok: false,
      install: ['apt-get install python3-protobuf', 'or set MME_DEPLOY_TEST_PYTHON to a python3 with google.protobuf'],
    });
  });

  it('looks only on PATH: with PATH empty it finds nothing', () => {
    const empty = mkdtempSync(join(tmpdir(), 'mme-empty-path-'));
    try {
      expect(onPath('sh', empty)).toEqual([]);
      expect(probeTools({ PATH: empty })).toEqual(nothing);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  testFor({ tools: ['python3'] })('asks each python3 once, however many ways PATH reaches it, and a venv\'s link to it apart', () => {
    const python = findTools({ tools: ['python3'] });
    const dir = mkdtempSync(join(tmpdir(), 'mme-two-paths-'));
    try {
      mkdirSync(join(dir, 'a'));
      symlinkSync(python.ok ? python.paths.python3! : 'python3', join(dir, 'a', 'python3'));
      symlinkSync(join(dir, 'a'), join(dir, 'b'));
      const probed = probeTools({ PATH: [join(dir, 'a'), join(dir, 'b')].join(delimiter) });
      expect(probed.pythons).toHaveLength(1);
      expect(probed.tools.python3).toBe(probed.pythons[0]!.path);
      // A link to the same file from another directory (a venv's python3) may be another python: asked too.
      mkdirSync(join(dir, 'venv'));
      symlinkSync(join(dir, 'a', 'python3'), join(dir, 'venv', 'python3'));
      const both = probeTools({ PATH: [join(dir, 'a'), join(dir, 'venv')].join(delimiter) });
      expect(both.pythons.map((p) => p.path)).toEqual([join(dir, 'a', 'python3'), join(dir, 'venv', 'python3')]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  testFor({ tools: ['python3'] })("takes a python console script (cfn-lint) beside the python a shim runs, not the shim", () => {
    const python = findTools({ tools: ['python3'] });
    const dir = mkdtempSync(join(tmpdir(), 'mme-shims-'));
    const script = (path: string, text: string) => writeFileSync(path, text, { mode: 0o755 });
    try {
      // A venv's python and the cfn-lint pip put beside it; on PATH only shims (as pyenv's) that run them.
      const bin = join(dir, 'venv', 'bin');
      mkdirSync(bin, { recursive: true });
      mkdirSync(join(dir, 'shims'));
      symlinkSync(python.ok ? python.paths.python3! : 'python3', join(bin, 'python3'));
      script(join(bin, 'cfn-lint'), `#!${join(bin, 'python3')}\nimport sys\n`);
      script(join(dir, 'shims', 'python3'), `#!/bin/sh\nexec '${join(bin, 'python3')}' "$@"\n`);
      script(join(dir, 'shims', 'cfn-lint'), `#!/bin/sh\nexec '${join(bin, 'cfn-lint')}' "$@"\n`);
      const shims = probeTools({ PATH: join(dir, 'shims') });
      expect(shims.tools.python3).toBe(join(bin, 'python3'));
      expect(shims.tools['cfn-lint']).toBe(join(bin, 'cfn-lint'));
      // A console script on PATH is what PATH gives, whatever is beside the python.
      const other = join(dir, 'other');
      mkdirSync(other);
      script(join(other, 'cfn-lint'), `#!${join(bin, 'python3')}\nimport sys\n`);
      expect(probeTools({ PATH: [other, join(dir, 'shims')].join(delimiter) }).tools['cfn-lint']).toBe(join(other, 'cfn-lint'));
      // A shim with no script beside the python stays.
      rmSync(join(bin, 'cfn-lint'));
      expect(probeTools({ PATH: join(dir, 'shims') }).tools['cfn-lint']).toBe(join(dir, 'shims', 'cfn-lint'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads CI as CI does: set and not "false" or "0"', () => {
    expect([undefined, '', '0', 'false', 'FALSE', 'true', '1'].map((CI) => underCi({ CI }))).toEqual([
      false,
      false,
      false,
      false,
      false,
      true,
      true,
    ]);
  });

  it('has an install command for every tool and module, each an apt package or a pinned pip one', () => {
    for (const command of Object.values(INSTALL)) expect(command).toMatch(/^(apt-get install [a-z0-9-]+|pip install [a-z-]+==[\d.]+)$/);
  });
});

describe('npm test on a machine with only Node (the tools hidden from PATH)', () => {
  // Jest itself, on gated files: python3 and shellcheck (example scripts), protoc and python3-protobuf (the parser's
  // oracle), bsdtar (the archive tests); the global teardown's cfn-lint too.
  const files = ['test/examples/example-scripts.test.ts', 'test/config/parse.conformance.test.ts'];
  const bin = mkdtempSync(join(tmpdir(), 'mme-only-node-'));
  symlinkSync(process.execPath, join(bin, 'node'));
  afterAll(() => rmSync(bin, { recursive: true, force: true }));

  function jest(ci: string | undefined) {
    const env: NodeJS.ProcessEnv = { ...process.env, PATH: bin };
    for (const name of [INVENTORY_VARIABLE, SKIP_LOG_VARIABLE, 'MME_TEST_RUN_DIR', 'MME_CFN_LINT_DIR', 'MME_DEPLOY_PYTHON']) {
      delete env[name];
    }
    delete env.MME_DEPLOY_TEST_PYTHON;
    delete env.JEST_WORKER_ID;
    if (ci === undefined) delete env.CI;
    else env.CI = ci;
    const run = spawnSync(
      process.execPath,
      [join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'), '--maxWorkers=1', '--verbose', '--runTestsByPath', ...files],
      { cwd: ROOT, env, encoding: 'utf8', maxBuffer: 1 << 26 },
    );
    return { status: run.status, output: `${run.stdout}\n${run.stderr}` };
  }

  it('outside CI: passes, lists the tests as skipped with what to install, and skips cfn-lint with a note', () => {
    const run = jest(undefined);
    expect(run.output).toMatch(/0 failed, \d+ skipped/);
    expect(run.output).toMatch(/passes shellcheck — skipped: needs shellcheck \(install: apt-get install shellcheck\)/);
    expect(run.output).toMatch(/skipped for what this machine lacks .*to run them: sudo apt-get install .*protobuf-compiler/);
    expect(run.output).toContain('skipped: cfn-lint of the synthesized templates needs cfn-lint (install: pip install cfn-lint==1.51.0)');
    expect(run.status).toBe(0);
  }, 240_000);

  it('under CI=true: the same tests fail, saying CI installs every tool', () => {
    const run = jest('true');
    expect(run.output).toMatch(/needs shellcheck .*CI installs every tool the tests use/);
    expect(run.output).toMatch(/[1-9]\d* failed/);
    expect(run.status).toBe(1);
  }, 240_000);
});

describe('the prerequisites, named the same in the README, .ci/run and test/tools.ts', () => {
  const aptPackages = Object.values(INSTALL)
    .filter((c) => c.startsWith('apt-get install '))
    .map((c) => c.slice('apt-get install '.length));
  const read = (file: string) => require('node:fs').readFileSync(join(ROOT, file), 'utf8') as string;

  it("the README's one install command and .ci/run's apt-get line hold every package the tests look for", () => {
    const readme = /sudo apt-get install ((?:\\\n|[^\n])+)/.exec(read('README.md'))?.[1]?.split(/[\s\\]+/) ?? [];
    const ci = /apt-get install -y -qq ((?:[^\n]|\\\n)+?)(?:>|\n(?!\s))/.exec(read('.ci/run'))?.[1]?.split(/[\s\\]+/) ?? [];
    // python3 itself comes with Debian's python3-* packages.
    for (const name of aptPackages.filter((p) => p !== 'python3')) {
      expect({ name, readme: readme.includes(name), ci: ci.includes(name) }).toEqual({ name, readme: true, ci: true });
    }
    expect(read('README.md')).toContain(INSTALL['cfn-lint']);
  });
});
