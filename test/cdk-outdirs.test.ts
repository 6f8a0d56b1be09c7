// The test environment removes the output directories aws-cdk-lib makes for Apps given no outdir (test/cdk-outdirs.js).

import * as realFs from 'node:fs';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { noteCdkOutdirs } = require('./cdk-outdirs') as typeof import('./cdk-outdirs');

describe('noteCdkOutdirs', () => {
  it("removes the directories made for aws-cdk-lib's App without an outdir, and no other", () => {
    const base = mkdtempSync(join(tmpdir(), 'mme-cdk-outdirs-'));
    // A copy of fs whose mkdtempSync makes its directories under `base`: the real fs stays as it is.
    const fs = { ...realFs, mkdtempSync: (prefix: string) => realFs.mkdtempSync(join(base, prefix.split('/').pop()!)) };
    try {
      const outdirs = noteCdkOutdirs(fs);
      const cdkOut = fs.mkdtempSync(join(tmpdir(), 'cdk.out'));
      const other = fs.mkdtempSync(join(tmpdir(), 'cdk.output-'));
      realFs.writeFileSync(join(cdkOut, 'manifest.json'), '{}');
      outdirs.removeMade();
      expect(existsSync(cdkOut)).toBe(false);
      expect(existsSync(other)).toBe(true);
      // Only what was made since: a second call removes nothing more.
      const later = fs.mkdtempSync(join(tmpdir(), 'cdk.out'));
      outdirs.removeMade();
      expect([existsSync(later), existsSync(other)]).toEqual([false, true]);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('is what the App uses: the synthesized assembly of an App given no outdir lies in such a directory', () => {
    const app = new App();
    new Stack(app, 'S');
    const { directory } = app.synth();
    expect(directory).toMatch(/\/cdk\.out[^/]{6}$/);
    expect(directory.startsWith(realFs.realpathSync(tmpdir()))).toBe(true);
  });
});
