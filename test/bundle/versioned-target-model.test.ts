import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { packRepository } from '../../lib/bundle/pack-repository';
import { checkVersionedUpload, versionedTargetModelOf } from '../../lib/bundle/versioned-target-model';
import { isMmeError } from '../../lib/errors';

const fixtures = join(__dirname, '..', 'constructs', 'fixtures', 'repositories');

/** The SHA-256 of what packRepository streams for `path` (what a push uploads). */
async function packedSha256(path: string, level?: number): Promise<string> {
  const packed = await packRepository(path, level === undefined ? {} : { level });
  if (!packed.ok) throw new Error('fixture is invalid');
  const hash = createHash('sha256');
  await pipeline(packed.stream, new Writable({ write: (chunk: Buffer, _e, done) => (hash.update(chunk), done()) }));
  return hash.digest('hex');
}

describe('the versioned TargetModel of what is about to be pushed', () => {
  it('names a directory by the SHA-256 of the archive the push will stream (the packer is deterministic)', async () => {
    const path = join(fixtures, 'add_one_python');
    const named = await versionedTargetModelOf(path);
    const sha = await packedSha256(path);
    expect(named).toEqual({ ok: true, targetModel: `add_one_python-${sha.slice(0, 12)}.tar.gz`, sha256: sha, size: expect.any(Number) });
    expect(await versionedTargetModelOf(path, { name: 'adder' })).toMatchObject({ targetModel: `adder-${sha.slice(0, 12)}.tar.gz` });
  });

  it("depends on the gzip level, which must be the push's", async () => {
    const path = join(fixtures, 'add_one_python');
    const stored = await versionedTargetModelOf(path, { level: 0 });
    expect(stored).toMatchObject({ sha256: await packedSha256(path, 0) });
    expect(stored).not.toEqual(await versionedTargetModelOf(path));
  });

  it('names an archive file by its own bytes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mme-versioned-'));
    try {
      const file = join(dir, 'resnet.tar.gz');
      writeFileSync(file, Buffer.from([0x1f, 0x8b, 1, 2, 3]));
      const sha = createHash('sha256')
        .update(Buffer.from([0x1f, 0x8b, 1, 2, 3]))
        .digest('hex');
      expect(await versionedTargetModelOf(file)).toEqual({
        ok: true,
        targetModel: `resnet-${sha.slice(0, 12)}.tar.gz`,
        sha256: sha,
        size: 5,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('returns the validation report of a directory with errors', async () => {
    const named = await versionedTargetModelOf(join(fixtures, 'broken_config'));
    expect(named.ok).toBe(false);
    expect(!named.ok && named.report.diagnostics.some((d) => d.code === 'wrong-value-type')).toBe(true);
  });

  it('refuses an upload whose bytes differ from the named ones', () => {
    const expected = { targetModel: 'm-aaaaaaaaaaaa.tar.gz', sha256: 'a'.repeat(64) };
    expect(() => checkVersionedUpload(expected, 'a'.repeat(64))).not.toThrow();
    let error: unknown;
    try {
      checkVersionedUpload(expected, 'b'.repeat(64));
    } catch (err) {
      error = err;
    }
    expect(isMmeError(error, 'INVALID')).toBe(true);
    expect((error as Error).message).toMatch(/the repository changed while it was being pushed/);
    expect(() => checkVersionedUpload({ ...expected, kind: 'archive' }, 'b'.repeat(64))).toThrow(
      /: the archive file changed while it was being pushed/,
    );
  });
});
