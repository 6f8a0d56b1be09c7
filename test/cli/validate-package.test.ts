import { asGiven } from '../../lib/cli/report-format';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packRepository } from '../../lib/bundle/pack-repository';
import { makeRepo, removeRepos } from '../repository/repo-builder';
import { runCli } from './run-cli';
import { spawnCli } from './cli-process';
import { FLOAT, onnxModel } from '../model-files/onnx-writer';

const out = mkdtempSync(join(tmpdir(), 'mme-cli-'));
afterAll(() => {
  removeRepos();
  rmSync(out, { recursive: true, force: true });
});

const MODEL = {
  'net/config.pbtxt': `name: "net"
backend: "onnxruntime"
max_batch_size: 4
input [ { name: "x" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "y" data_type: TYPE_FP32 dims: [ 2 ] } ]
`,
  'net/1/model.onnx': onnxModel([['x', FLOAT, ['batch', 2]]], [['y', FLOAT, ['batch', 2]]]),
};
const BROKEN = { ...MODEL, 'net/config.pbtxt': MODEL['net/config.pbtxt'].replace('dims: [ 2 ]', 'dimz: [ 2 ]') };
const DIMZ_COLUMN = BROKEN['net/config.pbtxt'].split('\n')[3]!.indexOf('dimz') + 1;

describe('mme-deploy validate', () => {
  it('exits 0 on a valid repository and prints a verdict', async () => {
    const run = await runCli(['validate', makeRepo(MODEL)]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/valid \(1 model; 0 errors, 0 warnings\)/);
  });

  it('exits 1 with file:line:col, the message and a caret, grouped by model', async () => {
    const repo = makeRepo(BROKEN);
    const run = await runCli(['validate', repo]);
    expect(run.code).toBe(1);
    // The file as a path from where the user is, spelled from the path they gave: an editor opens it at line:col.
    expect(run.stdout).toContain(
      `net:\n  ${repo}/net/config.pbtxt:4:${DIMZ_COLUMN}: error [unknown-field] Message ` +
        'type "inference.ModelInput" has no field named "dimz". Did you mean "dims"?',
    );
    expect(run.stdout).toContain('^');
  });

  it('names files as the user gave the path: ./ensemble_hf/bert-trt/config.pbtxt, ensemble_hf/x, a model directory', () => {
    expect(asGiven('./ensemble_hf', 'bert-trt/config.pbtxt')).toBe('./ensemble_hf/bert-trt/config.pbtxt');
    expect(asGiven('ensemble_hf/', 'bert-trt/config.pbtxt')).toBe('ensemble_hf/bert-trt/config.pbtxt');
    expect(asGiven('.', 'bert-trt/config.pbtxt')).toBe('./bert-trt/config.pbtxt');
    expect(asGiven('/', 'm/config.pbtxt')).toBe('/m/config.pbtxt');
    expect(asGiven('./ensemble_hf/bert-trt', '.')).toBe('./ensemble_hf/bert-trt');
    expect(asGiven('model.tar.gz', 'm/config.pbtxt')).toBe('m/config.pbtxt');
  });

  it('prints exactly one JSON object with --json', async () => {
    const run = await runCli(['validate', makeRepo(BROKEN), '--json']);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout);
    expect(report).toEqual({
      ok: false,
      models: [{ name: 'net', path: 'net', platform: 'onnxruntime_onnx', backend: 'onnxruntime', versions: [1] }],
      diagnostics: [
        expect.objectContaining({
          severity: 'error',
          code: 'unknown-field',
          file: 'net/config.pbtxt',
          line: 4,
          column: DIMZ_COLUMN,
          model: 'net',
        }),
      ],
    });
  });

  it('exits 2 for a missing path or a file, without a stack trace', async () => {
    const missing = await runCli(['validate', join(out, 'nope')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no such file or directory/);
    expect(missing.stderr).not.toMatch(/\n\s+at /);
    writeFileSync(join(out, 'file.txt'), 'x');
    expect((await runCli(['validate', join(out, 'file.txt')])).code).toBe(2);
  });

  it('exits 2 for usage errors and 0 for --help', async () => {
    expect((await runCli(['validate'])).code).toBe(2);
    expect((await runCli(['frobnicate'])).code).toBe(2);
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('validate');
    expect(help.stdout).toContain('package');
  });

  it('applies the MME rules with --mme', async () => {
    const repo = makeRepo({
      ...MODEL,
      'other/config.pbtxt': MODEL['net/config.pbtxt'].replace('"net"', '"other"'),
      'other/1/model.onnx': MODEL['net/1/model.onnx'],
    });
    expect((await runCli(['validate', repo])).code).toBe(0);
    const run = await runCli(['validate', repo, '--mme']);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('mme-no-ensemble');
  });
});

describe('mme-deploy config', () => {
  it('prints the parsed config as JSON: protobuf names, enum names, 64-bit integers as strings, nothing autofilled', async () => {
    const repo = makeRepo(MODEL);
    const run = await runCli(['config', join(repo, 'net'), '--json']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      name: 'net',
      backend: 'onnxruntime',
      max_batch_size: 4,
      input: [{ name: 'x', data_type: 'TYPE_FP32', dims: ['2'] }],
      output: [{ name: 'y', data_type: 'TYPE_FP32', dims: ['2'] }],
    });
  });

  it('exits 1 with the parse errors, and 2 when there is no config', async () => {
    const run = await runCli(['config', join(makeRepo(BROKEN), 'net')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`net/config.pbtxt:4:${DIMZ_COLUMN}: error [unknown-field]`);
    expect((await runCli(['config', out])).code).toBe(2);
  });
});

describe('mme-deploy package', () => {
  it('writes the archive with the models at its root and prints TargetModel, size and sha256', async () => {
    const repo = makeRepo(MODEL);
    const target = join(out, 'first.tar.gz');
    const run = await runCli(['package', repo, '-o', target]);
    expect(run.code).toBe(0);
    const sha = execFileSync('sha256sum', [target]).toString().split(' ')[0];
    expect(run.stdout).toContain(`sha256       ${sha}`);
    expect(run.stdout).toContain('TargetModel  first.tar.gz');
    expect(execFileSync('tar', ['-tzf', target]).toString().split('\n').filter(Boolean)).toEqual([
      'net/', 'net/1/', 'net/1/model.onnx', 'net/config.pbtxt',
    ]);
  });

  it('packs one model directory as one directory inside the archive, named <dir>.tar.gz by default', async () => {
    const repo = makeRepo(MODEL);
    const run = await runCli(['package', join(repo, 'net'), '--json'], { cwd: out });
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout);
    expect(result).toMatchObject({ ok: true, written: true, output: 'net.tar.gz', targetModel: 'net.tar.gz', entries: 4 });
    expect(execFileSync('tar', ['-tzf', join(out, 'net.tar.gz')]).toString()).toContain('net/config.pbtxt');
  });

  it('is byte-identical when built twice, and GNU tar reproduces the files', async () => {
    const repo = makeRepo({
      ...MODEL,
      'net/1/tokenizer/vocab.txt': 'a\nb\n',
      'net/1/empty/': null,
      'net/.git/HEAD': 'ref',
      'net/1/model.py~': 'backup',
    });
    const a = join(out, 'a.tar.gz');
    const b = join(out, 'b.tar.gz');
    expect((await runCli(['package', repo, '-o', a])).code).toBe(0);
    expect((await runCli(['package', repo, '-o', b, '--name', 'a.tar.gz'])).code).toBe(0);
    expect(readFileSync(a).equals(readFileSync(b))).toBe(true);
    const dest = mkdtempSync(join(out, 'x-'));
    execFileSync('tar', ['-xzf', a, '-C', dest]);
    expect(readFileSync(join(dest, 'net/1/model.onnx')).equals(MODEL['net/1/model.onnx'])).toBe(true);
    expect(readdirSync(join(dest, 'net')).sort()).toEqual(['1', 'config.pbtxt']);
    expect(readdirSync(join(dest, 'net/1/empty'))).toEqual([]);
  });

  it('lists what it left out', async () => {
    const repo = makeRepo({ ...MODEL, 'net/1/__pycache__/m.pyc': 'x', 'net/.DS_Store': 'x', 'README.md': 'hi' });
    const run = await runCli(['package', repo, '-o', join(out, 'left.tar.gz'), '--json']);
    expect(JSON.parse(run.stdout).excluded).toEqual(['README.md', 'net/.DS_Store', 'net/1/__pycache__']);
  });

  it('refuses to write anything when the repository is invalid, keeping an existing output', async () => {
    const target = join(out, 'kept.tar.gz');
    writeFileSync(target, 'previous archive');
    const run = await runCli(['package', makeRepo(BROKEN), '-o', target, '--force']);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('Nothing was written');
    expect(readFileSync(target, 'utf8')).toBe('previous archive');
    expect(readdirSync(out).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('refuses a symlink that leaves the repository', async () => {
    const repo = makeRepo(MODEL);
    execFileSync('ln', ['-s', '/etc/hostname', join(repo, 'net/1/escape.txt')]);
    const run = await runCli(['package', repo, '-o', join(out, 'escape.tar.gz')]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('symlink');
    expect(existsSync(join(out, 'escape.tar.gz'))).toBe(false);
  });

  it('leaves nothing behind when interrupted', async () => {
    const repo = makeRepo({ ...MODEL, 'net/1/big.bin': Buffer.alloc(8 * 1024 * 1024, 7) });
    const target = join(out, 'interrupted.tar.gz');
    writeFileSync(target, 'older');
    const abort = new AbortController();
    abort.abort();
    const { runPackage } = await import('../../lib/cli/package');
    await expect(
      runPackage(
        repo,
        { output: target, force: true },
        { stdout: () => undefined, stderr: () => undefined, isTTY: false, env: {}, cwd: out },
        abort.signal,
      ),
    ).rejects.toThrow(/interrupted: no archive was written/);
    expect(readFileSync(target, 'utf8')).toBe('older');
    expect(readdirSync(out).filter((f) => f.includes('interrupted') && f !== 'interrupted.tar.gz')).toEqual([]);
  });

  it('rejects a bad --level, an output inside the repository and a non-.tar.gz output with exit 2', async () => {
    const repo = makeRepo(MODEL);
    expect((await runCli(['package', repo, '--level', '11'])).code).toBe(2);
    expect((await runCli(['package', repo, '-o', join(repo, 'self.tar.gz')])).code).toBe(2);
    expect((await runCli(['package', repo, '-o', join(out, 'x.zip')])).code).toBe(2);
    expect((await runCli(['package', join(out, 'missing')])).code).toBe(2);
  });

  it('compares the output with the repository by path segments and through links', async () => {
    const repo = makeRepo(MODEL);
    // "..x.tar.gz" starts with ".." but is a file inside the repository, not its parent.
    const dotted = await runCli(['package', repo, '-o', join(repo, '..x.tar.gz')]);
    expect(dotted.code).toBe(2);
    expect(dotted.stderr).toContain('is inside the repository being packed');
    expect(existsSync(join(repo, '..x.tar.gz'))).toBe(false);
    const link = join(out, `link-to-repo-${Date.now()}`);
    symlinkSync(repo, link);
    const linked = await runCli(['package', repo, '-o', join(link, 'net', 'x.tar.gz')]);
    expect(linked.code).toBe(2);
    expect(linked.stderr).toContain('is inside the repository being packed');
    // A sibling whose name merely starts with the repository's name is outside.
    const sibling = `${repo}-archives`;
    mkdirSync(sibling);
    try {
      expect((await runCli(['package', repo, '-o', join(sibling, 'net.tar.gz')])).code).toBe(0);
    } finally {
      rmSync(sibling, { recursive: true, force: true });
    }
  });

  it(
    'refuses to pack a name its own extractor would refuse (not UTF-8 too, ' +
      'not as ENOENT), and never calls a FIFO model.py a directory',
    async () => {
      const backslash = makeRepo({ ...MODEL, 'net/1/..\\x': 'x' });
      const run = await runCli(['package', backslash, '-o', join(out, 'backslash.tar.gz')]);
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(/net\/1\/\.\.\\x contains a backslash/);
      expect(existsSync(join(out, 'backslash.tar.gz'))).toBe(false);

      const notUtf8 = makeRepo(MODEL);
      mkdirSync(Buffer.concat([Buffer.from(join(notUtf8, 'x')), Buffer.from([0xfe]), Buffer.from('/1')]), { recursive: true });
      writeFileSync(Buffer.concat([Buffer.from(join(notUtf8, 'net/1/w')), Buffer.from([0xff])]), 'x');
      const names = await runCli(['package', notUtf8, '-o', join(out, 'not-utf8.tar.gz')]);
      expect(names.code).toBe(1);
      expect(names.stdout).toContain("[name-not-utf8] 'x\uFFFD' has a name that is not valid UTF-8");
      expect(names.stdout).not.toContain('ENOENT');

      const python = makeRepo({ 'p/config.pbtxt': 'name: "p"\nbackend: "python"\n', 'p/1/': '' });
      execFileSync('mkfifo', [join(python, 'p/1/model.py')]);
      const fifo = await runCli(['validate', python]);
      expect(fifo.code).toBe(1);
      expect(fifo.stdout).toContain(
        'p/1/model.py must be a file for the python backend, but it is not a regular file (a FIFO, socket or device).',
      );
    },
  );

  it('exposes the archive as a stream with a manifest for other consumers', async () => {
    const result = await packRepository(makeRepo(MODEL), { name: 'm.tar.gz' });
    if (!result.ok) throw new Error('expected a valid repository');
    const chunks: Buffer[] = [];
    for await (const chunk of result.stream) chunks.push(chunk as Buffer);
    const manifest = await result.manifest;
    expect(manifest).toMatchObject({ targetModel: 'm.tar.gz', size: Buffer.concat(chunks).length, entries: 4 });
    expect(manifest.sha256).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('the installed entry point', () => {
  // The bundled CLI, package.json's `bin` (a tsx start of bin/mme-deploy.ts compiles every module it loads: seconds of CPU).
  it('runs the README main job on the complete example and reports errors without a stack trace', async () => {
    const cwd = mkdtempSync(join(out, 'readme-'));
    const ok = spawnCli(['package', join(__dirname, '../../examples/sentiment_onnx')], { cwd });
    const bad = spawnCli(['validate', join(cwd, 'missing')], { cwd });
    expect({ status: await ok.exit, stderr: ok.err() }).toEqual({ status: 0, stderr: '' });
    expect(existsSync(join(cwd, 'sentiment_onnx.tar.gz'))).toBe(true);
    expect(await bad.exit).toBe(2);
    expect(bad.err()).toMatch(/^mme-deploy: /);
    expect(bad.err()).not.toMatch(/\n\s+at /);
  });
});
