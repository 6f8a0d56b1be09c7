// The archive reader agrees with GNU tar, which is what SageMaker extracts with (issue 23 items 6, 9-13): the crafted
// archives of hostile-archives.ts, each judged by GNU tar here and by our reader, `local load`'s extraction and `plan`.
import { spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExtractionVerdict, extractTarGz, readTarGz } from '../../lib/archive/tar-reader';
import { runCli } from '../cli/run-cli';
import { HostileArchive, writeHostileArchive } from './hostile-archives';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mme-tar-agreement-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** GNU tar's verdict: its exit status and what it extracted (path -> 'file:<content>', 'dir' or 'link'). */
function gnuTar(archive: string): { status: number | null; tree: Record<string, string> } {
  const out = join(dir, 'gnu');
  mkdirSync(out);
  const run = spawnSync('tar', ['-xzf', archive, '-C', out], { encoding: 'utf8' });
  return { status: run.status, tree: tree(out) };
}

function tree(root: string, prefix = ''): Record<string, string> {
  const found: Record<string, string> = {};
  for (const name of readdirSync(join(root, prefix))) {
    const rel = prefix ? `${prefix}/${name}` : name;
    const stats = lstatSync(join(root, rel));
    if (stats.isDirectory()) Object.assign(found, { [rel]: 'dir' }, tree(root, rel));
    else found[rel] = stats.isSymbolicLink() ? 'link' : `file:${readFileSync(join(root, rel), 'utf8')}`;
  }
  return found;
}

async function ourVerdict(archive: string): Promise<{ error?: string; tree?: Record<string, string> }> {
  const out = join(dir, 'ours');
  try {
    await extractTarGz(archive, out, { links: 'inside' });
    return { tree: tree(out) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

describe('what GNU tar refuses, we refuse', () => {
  it.each<[HostileArchive, string]>([
    ['trailing-garbage', 'not a valid gzip stream: data that is not zeros follows the last gzip member, at byte '],
    ['bad-sparse-record', 'malformed extended header at byte 2048: invalid GNU.sparse.major="x"'],
  ])('%s', async (name, message) => {
    const archive = writeHostileArchive(dir, name);
    expect(gnuTar(archive).status).not.toBe(0);
    expect((await ourVerdict(archive)).error).toContain(message);
    // plan reads with the same reader: the same verdict, as an error.
    const plan = await runCli(['plan', archive]);
    expect(plan.code).not.toBe(0);
    expect(plan.stderr).toContain(message);
  });
});

describe('what GNU tar extracts, we extract the same way', () => {
  const agreeing: HostileArchive[] = ['trailing-zeros', 'link-then-file', 'typeflag-X', 'global-size'];
  it.each<HostileArchive>(agreeing)('%s', async (name) => {
    const archive = writeHostileArchive(dir, name);
    const gnu = gnuTar(archive);
    expect(gnu.status).toBe(0);
    expect((await ourVerdict(archive)).tree).toEqual(gnu.tree);
  });

  it('dotdot-link-then-file: the link, as GNU tar makes it when the later file got the placeholder\'s inode number', async () => {
    // GNU tar leaves a placeholder file for a link whose target has "..", and makes the link at the end only where that
    // placeholder is still there: the same device and inode number (praiskup/tar:src/extract.c:2040-2046). Linux's
    // stat has no birth time, so nothing else is compared (HAVE_BIRTHTIME 0, BIRTHTIME_EQ true: :50-63). The later
    // file unlinks the placeholder and is created in its place, usually with its inode number, and GNU tar makes the
    // link over it; when another process took that number in between (a busy machine), the file stays. We make the
    // link, the usual outcome; GNU tar's either one.
    const archive = writeHostileArchive(dir, 'dotdot-link-then-file');
    const gnu = gnuTar(archive);
    expect(gnu.status).toBe(0);
    const ours = (await ourVerdict(archive)).tree!;
    expect(ours['m/1/model.py']).toBe('link');
    const fileStayed = { ...ours, 'm/1/model.py': 'file:class TritonPythonModel: pass\n' };
    expect([ours, fileStayed]).toContainEqual(gnu.tree);
  });

  it('link-then-file keeps the file, as GNU tar does, and typeflag X names the entry', async () => {
    expect((await ourVerdict(writeHostileArchive(dir, 'link-then-file'))).tree!['m/1/model.py']).toBe(
      'file:class TritonPythonModel: pass\n',
    );
    const names: string[] = [];
    await readTarGz(writeHostileArchive(dir, 'typeflag-X'), (entry) => void names.push(entry.path));
    expect(names).toEqual(['m', 'm/config.pbtxt', 'm/1', 'm/1/model.py']);
  });
});

describe('one verdict for local load and plan', () => {
  it.each<[HostileArchive, string]>([
    ['dot-dot', 'entry "m/../../evil.py" has a ".." segment that would escape the destination'],
    ['link-out', 'entry "m/1/model.py" is a symbolic link that '],
    ['device', 'entry "m/1/tty" is a character device'],
    ['deep-path', 'is 10003 directories deep; a model archive needs far fewer (at most 256 here)'],
  ])('%s', async (name, message) => {
    const archive = writeHostileArchive(dir, name);
    const extracted = await ourVerdict(archive);
    expect(extracted.error).toContain(message);
    const plan = await runCli(['plan', archive]);
    expect(plan.code).toBe(1);
    expect(plan.stderr).toContain(message);
    // One line: no stack overflow, no source dumped.
    expect(plan.stderr.trimEnd().split('\n')).toHaveLength(1);
    // The verdict alone, as push's checks can use it, says the same.
    const verdict = new ExtractionVerdict('inside');
    const error = await readTarGz(archive, (entry) => void verdict.check(entry)).then(() => verdict.finish()).then(
      () => undefined,
      (err: Error) => err.message,
    );
    expect(error).toBe(extracted.error);
  });
});
