// The installed CLI is one bundled file (scripts/bundle-cli.js, run by `npm run build`), started by a launcher from a
// V8 code cache: it must run the commands by itself, keep packages external, keep the AWS SDK out of commands that do
// not call AWS, and use its cache only when the cache is the one made for it.

import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const BIN = join(ROOT, 'dist', 'bin', 'mme-deploy.js');
const BUNDLE = join(ROOT, 'dist', 'bin', 'mme-deploy-cli.js');
const CACHE = join(ROOT, 'dist', 'bin', 'mme-deploy-cli.cache');

/** What the launcher in `dir` makes of its cache, asked of a node started without flags (they would change V8's). */
function cacheUse(dir: string, nodeFlags: string[] = []): string {
  const launcher = JSON.stringify(join(dir, 'mme-deploy.js'));
  const result = spawnSync(process.execPath, [...nodeFlags, '-e', `process.stdout.write(require(${launcher}).compileCli().cache)`], {
    encoding: 'utf8',
  });
  expect(result.stderr).toBe('');
  return result.stdout;
}

function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...env } });
}

describe('the bundled CLI (dist/bin/mme-deploy.js)', () => {
  beforeAll(() => {
    if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\` (npm ci runs it).`);
  });

  it('holds our own modules and requires only packages and node built-ins', () => {
    expect(readFileSync(BIN, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    for (const file of [BIN, BUNDLE]) {
      const text = readFileSync(file, 'utf8');
      const relative = [...text.matchAll(/require\("(\.[^"]*)"\)/g)].map((m) => m[1]);
      expect({ file, relative }).toEqual({ file, relative: [] });
    }
    // The launcher compiles the bundle with vm, whose scripts cannot `import()` without an experimental option.
    expect(readFileSync(BUNDLE, 'utf8')).not.toMatch(/\bimport\(/);
  });

  it('starts from the code cache the build wrote, and only when the cache is the one made for that bundle', () => {
    expect(cacheUse(join(ROOT, 'dist', 'bin'))).toBe('used');
    // A copy of the three files, with the package.json that --help's version comes from.
    const root = mkdtempSync(join(tmpdir(), 'mme-launcher-'));
    try {
      const dir = join(root, 'bin');
      mkdirSync(dir);
      copyFileSync(join(ROOT, 'package.json'), join(root, 'package.json'));
      for (const file of [BIN, BUNDLE, CACHE]) copyFileSync(file, join(dir, file.slice(file.lastIndexOf('/') + 1)));
      const help = () => spawnSync(process.execPath, [join(dir, 'mme-deploy.js'), '--help'], { encoding: 'utf8' });
      expect(cacheUse(dir)).toBe('used');
      expect(help().stdout).toMatch(/^Usage: mme-deploy .*\n\nValidate, package/);
      // V8 refuses a cache made with other V8 flags; the CLI then compiles from its source.
      expect(cacheUse(dir, ['--no-opt'])).toBe('rejected');
      // The bundle edited in place, to the same length: V8 would take the cache for it (it checks only the length),
      // and print the description the build compiled. Its CRC-32 is not the cache's, which is not used.
      const bundle = join(dir, 'mme-deploy-cli.js');
      const text = readFileSync(bundle, 'latin1');
      expect(text).toContain('.description("Validate, package');
      writeFileSync(bundle, text.replace('.description("Validate, package', '.description("VALIDATE, package'), 'latin1');
      expect(cacheUse(dir)).toBe('stale');
      expect(help()).toMatchObject({ status: 0, stdout: expect.stringMatching(/\n\nVALIDATE, package/), stderr: '' });
      // The bundle as built, and a cache whose header names another bundle: not used either.
      writeFileSync(bundle, text, 'latin1');
      expect(cacheUse(dir)).toBe('used');
      const cache = readFileSync(join(dir, 'mme-deploy-cli.cache'));
      const other = ((parseInt(cache.toString('latin1', 0, 8), 16) ^ 1) >>> 0).toString(16).padStart(8, '0');
      writeFileSync(join(dir, 'mme-deploy-cli.cache'), Buffer.concat([Buffer.from(other), cache.subarray(8)]));
      expect(cacheUse(dir)).toBe('stale');
      // No cache at all: compiled from the source.
      rmSync(join(dir, 'mme-deploy-cli.cache'));
      expect(cacheUse(dir)).toBe('missing');
      expect(help()).toMatchObject({ status: 0, stdout: expect.stringMatching(/^Usage: mme-deploy .*\n\nValidate, package/), stderr: '' });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('exits 0 without a stack trace when its reader goes away before it writes (`mme-deploy --help | head -0`)', async () => {
    for (const args of [['--help'], ['validate', join('examples', 'sentiment_onnx'), '--json']]) {
      const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.destroy(); // the pipe's read end closes: the CLI's first write gets EPIPE
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const status = await new Promise<number | null>((done) => child.on('close', (code) => done(code)));
      expect({ args, status, stderr }).toEqual({ args, status: 0, stderr: '' });
    }
  });

  it('prints the package version', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const result = run(['--version']);
    expect(result.status).toBe(0);
    expect(result.stdout.trim()).toBe(pkg.version);
  });

  it('validates the complete example without loading the AWS SDK', () => {
    // NODE_DEBUG=module lists every module the process loads, on stderr.
    const result = run(['validate', join('examples', 'sentiment_onnx')], { NODE_DEBUG: 'module' });
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/valid/);
    expect(result.stderr).not.toMatch(/@aws-sdk/);
  });
});
