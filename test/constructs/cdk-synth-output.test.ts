// What `cdk synth` prints for the ready app, through the real CDK CLI: each warning alone, not after a bare
// `file:line` of the construct that raised it (the annotation's stack trace, which the CLI prints when there is one).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

describe('cdk synth output', () => {
  it('prints the single-instance warning without a source location before it', () => {
    const outdir = mkdtempSync(join(tmpdir(), 'mme-synth-'));
    try {
      const synth = spawnSync(join(root, 'node_modules', '.bin', 'cdk'), ['synth', '-q', '-o', outdir], {
        cwd: root,
        env: { PATH: process.env.PATH, HOME: outdir, CDK_VALIDATION: 'false' },
        encoding: 'utf8',
      });
      expect(synth.status).toBe(0);
      const lines = synth.stderr.split('\n');
      const warning = lines.findIndex((l) => l.startsWith('WARNING initialInstanceCount is 1'));
      expect(warning).toBeGreaterThanOrEqual(0);
      expect(lines.filter((l) => /^\S+\.[jt]s:\d+:\d+$/.test(l.trim()))).toEqual([]);
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  }, 60_000);
});
