// The model.py syntax check: python models' sources compiled by python3's parser for the target image's Python, never
// run, one python process for every file of a repository, a note (not an error) when there is no python3.

import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { checkPythonSyntax } from '../../lib/python-auto-complete/syntax-check';
import { validateRepository } from '../../lib/repository/validate';
import { makeRepo, removeRepos, RepoFiles } from '../repository/repo-builder';
import { pythonWith, suiteFor } from '../tools';

const work = mkdtempSync(join(tmpdir(), 'mme-syntax-'));
afterAll(() => {
  removeRepos();
  rmSync(work, { recursive: true, force: true });
});

const CONFIG = (name: string) => `name: "${name}"\nbackend: "python"\n`;
const VALID = 'class TritonPythonModel:\n    def execute(self, requests):\n        return []\n';
/** `def execute(self, requests)` without its colon: python says "expected ':'" at line 2, column 34. */
const MISSING_COLON = 'class TritonPythonModel:\n    def execute(self, requests)\n        return []\n';
/** Valid from Python 3.11 on (PEP 654), refused by 3.10's grammar. */
const EXCEPT_STAR =
  'class TritonPythonModel:\n    def execute(self, requests):\n        try:\n            return []\n' +
  '        except* ValueError:\n            return []\n';

function pythonRepo(sources: Record<string, string | Buffer>): string {
  const files: RepoFiles = {};
  for (const [name, source] of Object.entries(sources)) {
    files[`${name}/config.pbtxt`] = CONFIG(name);
    files[`${name}/1/model.py`] = source;
  }
  return makeRepo(files);
}

/**
 * python3 itself (sys.executable, test/tools.ts), for what the tests start on their own: `python3` on PATH is often a
 * shim (pyenv: about 0.7 s of CPU a start, a chain of bash scripts) that only the product's own first start must pay.
 */
const PYTHON3 = pythonWith([]) ?? 'python3';

/** An interpreter that records each start in `log`, then runs python3: how many processes a run starts. */
function countingPython(log: string): string {
  const path = join(work, `python-${Math.random().toString(36).slice(2)}`);
  writeFileSync(path, `#!/bin/sh\necho started >> '${log}'\nexec '${PYTHON3}' "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

const starts = (log: string) => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0);

suiteFor({ tools: ['python3'] })('model.py syntax check', () => {
  it('refuses a source that does not compile at its line:col, with python\'s message and a caret', async () => {
    const report = await validateRepository(pythonRepo({ m: MISSING_COLON }));
    expect(report.ok).toBe(false);
    const [d] = report.diagnostics.filter((x) => x.code === 'python-syntax');
    expect(d).toMatchObject({ severity: 'error', file: 'm/1/model.py', line: 2, column: 32, model: 'm' });
    expect(d!.message).toContain("SyntaxError: expected ':'");
    expect(d!.message).toContain('Python 3.10, the Python of Triton 24.09');
    expect(d!.excerpt).toBe(`    def execute(self, requests)\n${' '.repeat(31)}^`);
  });

  it('accepts a valid source, and says nothing of it', async () => {
    const report = await validateRepository(pythonRepo({ m: VALID }));
    expect(report.diagnostics.filter((d) => d.code.startsWith('python-'))).toEqual([]);
    expect(report.notes).toBeUndefined();
  });

  it('refuses except* for Triton 24.09 (Python 3.10) and accepts it for 25.04 (Python 3.12)', async () => {
    const repo = pythonRepo({ m: EXCEPT_STAR });
    const old = await validateRepository(repo, { target: { tritonVersion: '24.09' } });
    const [d] = old.diagnostics.filter((x) => x.code === 'python-syntax');
    // Python places this one at the end of the try statement (3.11), not at `except*`: its place, as python gives it.
    expect(d).toMatchObject({ severity: 'error', file: 'm/1/model.py' });
    expect(d!.line).toBeGreaterThanOrEqual(5);
    expect(d!.message).toContain('(SyntaxError: Exception groups are only supported in Python 3.11 and greater)');
    const recent = await validateRepository(repo, { target: { tritonVersion: '25.04' } });
    expect(recent.diagnostics.filter((x) => x.code === 'python-syntax')).toEqual([]);
  });

  it('refuses a non-UTF-8 source with no coding declaration as python\'s import does, and accepts one that declares it', async () => {
    const latin1 = Buffer.concat([Buffer.from('class TritonPythonModel:\n    NAME = "caf'), Buffer.from([0xe9]), Buffer.from('"\n')]);
    const report = await validateRepository(pythonRepo({ m: latin1 }));
    const [d] = report.diagnostics.filter((x) => x.code === 'python-syntax');
    expect(d).toMatchObject({ line: 2, column: 16 });
    expect(d!.message).toContain("Non-UTF-8 code starting with '\\xe9' in file m/1/model.py on line 2, but no encoding declared");
    const declared = Buffer.concat([Buffer.from('# -*- coding: latin-1 -*-\n'), latin1, Buffer.from(VALID.slice(VALID.indexOf('\n') + 1))]);
    const ok = await validateRepository(pythonRepo({ m: declared }));
    expect(ok.diagnostics.filter((x) => x.code === 'python-syntax')).toEqual([]);
  });

  it('never runs the source: code at the top of model.py has no effect', async () => {
    const marker = join(work, 'ran');
    const repo = pythonRepo({ m: `open(${JSON.stringify(marker)}, "w").write("ran")\n${VALID}` });
    await validateRepository(repo);
    expect(existsSync(marker)).toBe(false);
  });

  it('runs no site-packages code: a .pth file that prints and writes neither runs nor spoils the answer', async () => {
    // A virtual environment of python3 (what `python3 -m venv --without-pip` writes) whose site-packages holds a .pth
    // line that `site` runs at start-up: it prints into stdout, where the checker answers, and leaves a marker.
    const asked = spawnSync(PYTHON3, ['-c', 'import sys; print(sys.executable); print("%d.%d" % sys.version_info[:2])'], {
      encoding: 'utf8',
    });
    const [executable, version] = asked.stdout.trim().split('\n') as [string, string];
    const venv = join(work, 'venv-with-pth');
    const sitePackages = join(venv, 'lib', `python${version}`, 'site-packages');
    mkdirSync(sitePackages, { recursive: true });
    mkdirSync(join(venv, 'bin'));
    symlinkSync(executable, join(venv, 'bin', 'python3'));
    writeFileSync(join(venv, 'pyvenv.cfg'), `home = ${dirname(executable)}\ninclude-system-site-packages = false\n`);
    const marker = join(work, 'pth-ran');
    writeFileSync(join(sitePackages, 'noisy.pth'), `import sys; sys.stdout.write("site ran\\n"); open(${JSON.stringify(marker)}, "w")\n`);
    // The environment is effective: a python started as usual (-I alone) runs the line.
    const plain = spawnSync(join(venv, 'bin', 'python3'), ['-I', '-c', 'pass'], { encoding: 'utf8' });
    expect([plain.stdout.includes('site ran\n'), existsSync(marker)]).toEqual([true, true]);
    rmSync(marker);

    const jobs = [{ name: 'a/1/model.py', source: Buffer.from(VALID) }, { name: 'b/1/model.py', source: Buffer.from(MISSING_COLON) }];
    const result = await checkPythonSyntax(jobs, { pythonVersion: '3.10', python: join(venv, 'bin', 'python3') });
    if (!result.ran) throw new Error(`the check did not run: ${result.reason}`);
    expect(result.faults.map((f) => f?.type)).toEqual([undefined, 'SyntaxError']);
    expect(existsSync(marker)).toBe(false);
  });

  it('starts one python process for every python model of a repository, none for a repository without any', async () => {
    const log = join(work, 'starts-many');
    const python = countingPython(log);
    const repo = pythonRepo({ a: VALID, b: MISSING_COLON, c: EXCEPT_STAR });
    const report = await validateRepository(repo, { pythonSyntax: { python } });
    expect(starts(log)).toBe(1);
    expect(report.diagnostics.filter((d) => d.code === 'python-syntax').map((d) => d.model)).toEqual(['b', 'c']);
    // A later run in the same process starts the interpreter itself: a shim such as this one (or pyenv's) runs once.
    const again = await validateRepository(repo, { pythonSyntax: { python } });
    expect(starts(log)).toBe(1);
    expect(again.diagnostics).toEqual(report.diagnostics);

    const none = join(work, 'starts-none');
    const onnx = makeRepo({ 'n/config.pbtxt': 'backend: "onnxruntime"\n', 'n/1/model.onnx': '' });
    await validateRepository(onnx, { pythonSyntax: { python: countingPython(none) } });
    expect(starts(none)).toBe(0);
  });

  it('is skipped with pythonSyntax: false (the same file is refused by default, above)', async () => {
    const report = await validateRepository(pythonRepo({ m: MISSING_COLON }), { pythonSyntax: false });
    expect(report.diagnostics.filter((d) => d.code === 'python-syntax')).toEqual([]);
    expect(report.ok).toBe(true);
  });

  it('gives one note, not an error, when there is no python3 on PATH', async () => {
    const repo = pythonRepo({ a: MISSING_COLON, b: VALID });
    const report = await validateRepository(repo, { pythonSyntax: { env: { PATH: join(work, 'no-such-dir') } } });
    expect(report.ok).toBe(true);
    expect(report.diagnostics.filter((d) => d.code === 'python-syntax')).toEqual([]);
    expect(report.notes).toEqual([
      {
        code: 'python-syntax-skipped',
        message: expect.stringMatching(/^python3 was not found, so the syntax of 2 python model files was not checked\. Install python3/),
      },
    ]);
  });

  it('names the interpreter MME_DEPLOY_PYTHON gives, and says what failed when it cannot check', async () => {
    const broken = join(work, 'broken-python');
    writeFileSync(broken, '#!/bin/sh\necho "no such module" >&2\nexit 3\n');
    chmodSync(broken, 0o755);
    const result = await checkPythonSyntax([{ name: 'model.py', source: Buffer.from(VALID) }], {
      pythonVersion: '3.10',
      env: { ...process.env, MME_DEPLOY_PYTHON: broken },
    });
    expect(result).toEqual({ ran: false, python: broken, missing: false, reason: 'exited 3: no such module' });
  });
});

suiteFor({ tools: ['python3'] })('model.py syntax check, streamed', () => {
  it('answers each of thousands of sources at its own index, more than a pipe holds, names with newlines included', async () => {
    // 3,000 sources of ~300 bytes: about 1 MB, far past what the pipe takes before python reads.
    const padding = `# ${'x'.repeat(260)}\n`;
    const jobs = Array.from({ length: 3000 }, (_, i) => ({
      name: i === 7 ? 'odd\nname é/model.py' : `m${i}/1/model.py`,
      source: Buffer.from(padding + (i === 7 || i === 2999 ? MISSING_COLON : VALID)),
    }));
    const result = await checkPythonSyntax(jobs, { pythonVersion: '3.10' });
    if (!result.ran) throw new Error(`the check did not run: ${result.reason}`);
    expect(result.faults).toHaveLength(3000);
    const faulty = result.faults.flatMap((f, i) => (f ? [i] : []));
    expect(faulty).toEqual([7, 2999]);
    expect(result.faults[7]).toMatchObject({ type: 'SyntaxError', line: 3 });
    expect(result.faults[7]!.message).toContain("expected ':'");
  });

  it('gives each copy of a source its own verdict: copies of a valid one pass, each faulty copy names its own file', async () => {
    // Python parses a valid source once however many models hold it; a faulty one is parsed for each file.
    const latin = Buffer.concat([Buffer.from('import os\nNAME = "caf'), Buffer.from([0xe9]), Buffer.from('"\n')]);
    const jobs = [VALID, MISSING_COLON, VALID, MISSING_COLON, latin, latin, VALID].map((source, i) => ({
      name: `m${i}/1/model.py`,
      source: Buffer.from(source),
    }));
    const result = await checkPythonSyntax(jobs, { pythonVersion: '3.10' });
    if (!result.ran) throw new Error(`the check did not run: ${result.reason}`);
    expect(result.faults.map((f) => f?.line ?? null)).toEqual([null, 2, null, 2, 2, 2, null]);
    expect(result.faults[4]!.message).toContain('in file m4/1/model.py on line 2');
    expect(result.faults[5]!.message).toContain('in file m5/1/model.py on line 2');
  });

  it('starts no python for a source this process found valid with the same interpreter and target, only for the others', async () => {
    // A name of its own: what the interpreter it names found is remembered apart from the other tests' python3.
    const python = countingPython(join(work, 'starts-remembered'));
    const valid = Buffer.from(`${VALID}# remembered\n`);
    const faulty = Buffer.from(`${MISSING_COLON}# remembered\n`);
    const check = (sources: Buffer[], more: { pythonVersion?: string; timeoutMs?: number } = {}) =>
      checkPythonSyntax(
        sources.map((source, i) => ({ name: `m${i}/1/model.py`, source })),
        { pythonVersion: '3.10', python, ...more },
      );
    const first = await check([valid, faulty]);
    if (!first.ran) throw new Error(`the check did not run: ${first.reason}`);
    expect(first.faults.map((f) => f?.line ?? null)).toEqual([null, 2]);
    // The faulty source is sent again and answered at its own index; the valid one is answered from memory.
    const mixed = await check([faulty, valid, faulty]);
    expect(mixed).toEqual({ ...first, faults: [first.faults[1], undefined, first.faults[1]] });
    // A time limit no python start can meet: only an answer from memory arrives within it.
    const tight = { timeoutMs: 1 };
    expect(await check([valid, valid], tight)).toEqual({ ...first, faults: [undefined, undefined] });
    expect(await check([faulty], tight)).toMatchObject({ ran: false, reason: 'did not finish within 0 s' });
    // Memory is per target: the same source for Triton 25.04's Python 3.12 goes to python.
    await check([valid]);
    expect(await check([valid], { ...tight, pythonVersion: '3.12' })).toMatchObject({ ran: false });
  });

  it('gives python\'s import wording for a file that fails the fast parse (a declared encoding it cannot decode)', async () => {
    const source = Buffer.concat([Buffer.from('# -*- coding: ascii -*-\nNAME = "caf'), Buffer.from([0xe9]), Buffer.from('"\n')]);
    const result = await checkPythonSyntax([{ name: 'm/1/model.py', source }], { pythonVersion: '3.10' });
    if (!result.ran) throw new Error(`the check did not run: ${result.reason}`);
    expect(result.faults[0]).toMatchObject({ type: 'SyntaxError', line: 2 });
    expect(result.faults[0]!.message).toMatch(/^\(unicode error\) 'ascii' codec can't decode byte 0xe9/);
  });
});
