// The installed CLI is one bundled file (scripts/bundle-cli.js, run by `npm run build`): it must run the commands
// by itself, keep packages external and keep the AWS SDK out of commands that do not call AWS.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const BIN = join(ROOT, 'dist', 'bin', 'mme-deploy.js');

function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...env } });
}

describe('the bundled CLI (dist/bin/mme-deploy.js)', () => {
  beforeAll(() => {
    if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\` (npm ci runs it).`);
  });

  it('holds our own modules and requires only packages and node built-ins', () => {
    const text = readFileSync(BIN, 'utf8');
    expect(text.startsWith('#!/usr/bin/env node\n')).toBe(true);
    const relative = [...text.matchAll(/require\("(\.[^"]*)"\)/g)].map((m) => m[1]);
    expect(relative).toEqual([]);
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
