// openPushSource, what a push uploads, checked without S3: the refusals of a source and of its TargetModel name (exact
// messages), the gzip magic check, the served model's config read from the bytes as they go, and that closing a
// source lets go of the file or the packer.
import { createHash } from 'node:crypto';
import {
  mkdtempSync, readdirSync, readlinkSync, realpathSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { versionedTargetModelOf } from '../../lib/bundle/versioned-target-model';
import { openPushSource, PushSource } from '../../lib/push/push-source';
import { copyAdder, gzipMagicFile, tarArchive } from './push-fixture';

let dir: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'push-source-')));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const repository = (): string => copyAdder(dir);

const archiveOf = (root: string, name: string): string => tarArchive(dir, root, name);

/** The source, which must be one (not a validation report). */
async function source(path: string, options: Parameters<typeof openPushSource>[2] = {}): Promise<PushSource> {
  const opened = await openPushSource(path, 'shown-name', options);
  if ('report' in opened) throw new Error(`unexpected report: ${JSON.stringify(opened.report.diagnostics)}`);
  return opened;
}

async function sha256(stream: Readable): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** File descriptors of this process open on `path` (Linux: /proc/self/fd). */
function descriptorsOn(path: string): string[] {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path;
    } catch {
      return false; // the descriptor readdir itself used, closed meanwhile
    }
  });
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > 5000) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const NOT_GZIP =
  ' is not gzip-compressed; SageMaker extracts every TargetModel as a .tar.gz. Push the repository directory ' +
  'instead, or make the archive with `mme-deploy package`.';

describe('openPushSource refuses what cannot be pushed', () => {
  it('says a path it cannot stat is unreadable, not missing (a symlink loop)', async () => {
    const loop = join(dir, 'loop.tar.gz');
    symlinkSync(loop, loop);
    await expect(openPushSource(loop, 'loop.tar.gz', {})).rejects.toMatchObject({
      code: 'UNREADABLE',
      message: expect.stringMatching(/^cannot read loop\.tar\.gz: /),
    });
  });

  it('asks for --name when the default name is no TargetModel, and not when the name was given', async () => {
    const archive = archiveOf(repository(), 'adder.tgz');
    await expect(openPushSource(archive, 'adder.tgz', {})).rejects.toMatchObject({
      code: 'USAGE',
      message:
        "TargetModel 'adder.tgz' must end in '.tar.gz': SageMaker downloads and extracts it as a gzip tarball. " +
        "Use 'adder.tar.gz'. Choose a name with --name.",
    });
    await expect(openPushSource(archive, 'adder.tgz', { name: 'team/adder.tar.gz' })).rejects.toMatchObject({
      code: 'USAGE',
      message: expect.not.stringContaining('--name'),
    });
  });

  it('names a directory given with a trailing slash after the directory', async () => {
    const opened = await source(`${repository()}/`);
    expect(opened.targetModel).toBe('adder.tar.gz');
    opened.close();
  });

  it.each([
    ['a text file', Buffer.from('name: "adder"\n')],
    ['an empty file', Buffer.alloc(0)],
    ['one byte of the magic', Buffer.from([0x1f])],
    ['the first magic byte only', Buffer.from([0x1f, 0x00, 0x08])],
    ['the second magic byte only', Buffer.from([0x00, 0x8b, 0x08])],
  ])('refuses %s as not gzip, even unverified, and closes the file it looked at', async (_, bytes) => {
    const file = join(dir, 'model.tar.gz');
    writeFileSync(file, bytes);
    for (const verify of [false, true]) {
      await expect(openPushSource(file, 'model.tar.gz', { verify })).rejects.toMatchObject({
        code: 'USAGE',
        message: `model.tar.gz${NOT_GZIP}`,
      });
    }
    expect(descriptorsOn(file)).toEqual([]);
  });
});

describe('an archive source', () => {
  it('is verified by default: an archive breaking a rule gives the report, and unverified a source', async () => {
    const archive = archiveOf(join(__dirname, '..', 'fixtures', 'ensemble-dtype-mismatch'), 'ens.tar.gz');
    const verified = await openPushSource(archive, 'ens.tar.gz', {});
    expect('report' in verified && verified.report.ok).toBe(false);
    expect('report' in verified && verified.report.diagnostics.map((d) => d.code)).toContain('ensemble-dtype-mismatch');
    const unverified = await source(archive, { verify: false });
    expect(unverified).toMatchObject({ kind: 'archive', targetModel: 'ens.tar.gz', size: statSync(archive).size });
    unverified.close();
  });

  it('stops verifying when the signal is aborted', async () => {
    const archive = archiveOf(repository(), 'adder.tar.gz');
    const abort = new AbortController();
    abort.abort();
    await expect(openPushSource(archive, 'adder.tar.gz', { signal: abort.signal })).rejects.toMatchObject({ code: 'ABORTED' });
  });

  it('reads the served model config from the bytes uploaded, when not verified first', async () => {
    const archive = archiveOf(repository(), 'adder.tar.gz');
    const opened = await source(archive, { verify: false });
    expect(await opened.config()).toBeUndefined(); // nothing read yet
    await sha256(opened.open());
    expect((await opened.config())?.input?.map((i) => i.name)).toEqual(['INPUT0']);
  });

  it('fails the upload stream when the file cannot be read any more, rather than ending it short', async () => {
    const archive = archiveOf(repository(), 'adder.tar.gz');
    const opened = await source(archive, { verify: false });
    unlinkSync(archive);
    await expect(sha256(opened.open())).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('lets go of the file when closed before the upload has read it', async () => {
    const archive = join(dir, 'big.tar.gz');
    // More than the two 1 MiB buffers hold: the file stays open, waiting for a reader.
    gzipMagicFile(archive, 5 << 20);
    const opened = await source(archive, { verify: false });
    opened.open();
    await until(() => descriptorsOn(archive).length === 1, 'the archive is open');
    opened.close();
    await until(() => descriptorsOn(archive).length === 0, 'the archive is closed');
  });
});

describe('a directory source', () => {
  it('packs at the level given, the same bytes the versioned name is computed from', async () => {
    const root = repository();
    const stored = await source(root, { level: 0 });
    const storedSha = await sha256(stored.open());
    const named = await versionedTargetModelOf(root, { name: 'adder.tar.gz', level: 0 });
    expect(named.ok && storedSha).toBe(named.ok && named.sha256);
    const standard = await source(root);
    expect(await sha256(standard.open())).not.toBe(storedSha);
  });

  it('names a versioned directory by the bytes at the level given', async () => {
    const root = repository();
    const named = await versionedTargetModelOf(root, { name: 'adder.tar.gz', level: 1 });
    const opened = await source(root, { versioned: true, level: 1 });
    expect(named.ok && opened.targetModel).toBe(named.ok && named.targetModel);
    expect(opened.versioned).toEqual(named.ok && { sha256: named.sha256, size: named.size });
    expect(opened.targetModel).not.toBe((await source(root, { versioned: true })).targetModel);
    opened.close();
  });

  it('stops the packer when closed', async () => {
    const opened = await source(repository());
    const body = opened.open();
    opened.close();
    expect(body.destroyed).toBe(true);
  });
});
