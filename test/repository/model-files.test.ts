// The disk view of a model's files: where a file lives is decided before a byte of it is read, from one lstat and its
// directory (plain directories given by discovery are not resolved again), and a file whose link leaves the repository
// is never read, whichever part of its path is the link.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { diskFiles, LINK_LEAVES_REPOSITORY } from '../../lib/repository/model-files';

let base: string;
let repo: string;
let model: string;
const failures: Array<[string, string | undefined]> = [];
const onUnreadable = (path: string, err: NodeJS.ErrnoException) => void failures.push([path, err.code]);

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'mme-model-files-')));
  repo = join(base, 'repo');
  model = join(repo, 'm');
  mkdirSync(join(model, '1'), { recursive: true });
  mkdirSync(join(base, 'outside'));
  writeFileSync(join(base, 'outside', 'model.py'), 'SECRET\n');
  writeFileSync(join(model, '1', 'model.py'), 'class TritonPythonModel: pass\n');
  failures.length = 0;
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

/** The view discovery gives a model directory that is no link, with `1/` a plain directory. */
const view = () => diskFiles(onUnreadable, { rootReal: repo, plainDirs: [model, join(model, '1')] });

describe('diskFiles', () => {
  it('reads a plain file in a plain directory, and reports its kind and size', () => {
    const files = view();
    const path = join(model, '1', 'model.py');
    expect(files.readText(path)).toBe('class TritonPythonModel: pass\n');
    expect(files.stat(path)).toEqual({ kind: 'file', size: 30 });
    expect(files.stat(join(model, '1'))).toEqual(expect.objectContaining({ kind: 'directory' }));
    expect(files.stat(join(model, '1', 'absent.py'))).toBeUndefined();
    expect(files.readText(join(model, '1', 'absent.py'))).toBeUndefined();
    expect(failures).toEqual([]);
  });

  it('never reads a file that is a link leaving the repository, though its directory is plain', () => {
    symlinkSync(join(base, 'outside', 'model.py'), join(model, '1', 'secret.py'));
    const files = view();
    const path = join(model, '1', 'secret.py');
    expect(files.readText(path)).toBeUndefined();
    expect(files.open(path)).toBe(LINK_LEAVES_REPOSITORY);
    expect(failures).toEqual([
      [path, LINK_LEAVES_REPOSITORY],
      [path, LINK_LEAVES_REPOSITORY],
    ]);
  });

  it('never reads a plain file in a directory that is a link leaving the repository', () => {
    symlinkSync(join(base, 'outside'), join(model, '2'));
    const files = view();
    const path = join(model, '2', 'model.py');
    expect(files.readText(path)).toBeUndefined();
    const reader = files.open(path);
    expect(reader).toBe(LINK_LEAVES_REPOSITORY);
    expect(failures.map(([, code]) => code)).toEqual([LINK_LEAVES_REPOSITORY, LINK_LEAVES_REPOSITORY]);
  });

  it('never reads below a plain directory inside a linked one (the deeper directory is resolved too)', () => {
    mkdirSync(join(base, 'outside', 'sub'));
    writeFileSync(join(base, 'outside', 'sub', 'model.py'), 'SECRET\n');
    symlinkSync(join(base, 'outside'), join(model, '2'));
    expect(view().readText(join(model, '2', 'sub', 'model.py'))).toBeUndefined();
    expect(failures.map(([, code]) => code)).toEqual([LINK_LEAVES_REPOSITORY]);
  });

  it('reads through links that stay inside the repository', () => {
    symlinkSync(join(model, '1'), join(model, '2'));
    symlinkSync('model.py', join(model, '1', 'alias.py'));
    const files = view();
    expect(files.readText(join(model, '2', 'model.py'))).toBe('class TritonPythonModel: pass\n');
    expect(files.readText(join(model, '1', 'alias.py'))).toBe('class TritonPythonModel: pass\n');
    const reader = files.open(join(model, '2', 'alias.py'));
    expect(typeof reader).toBe('object');
    if (typeof reader === 'object') reader.close();
    expect(failures).toEqual([]);
  });

  it('does not open a FIFO to read it (it would wait for a writer forever)', () => {
    const fifo = join(model, '1', 'model.py');
    rmSync(fifo);
    execFileSync('mkfifo', [fifo]);
    const files = view();
    expect(files.readText(fifo)).toBeUndefined();
    expect(files.stat(fifo)).toEqual(expect.objectContaining({ kind: 'other' }));
    expect(failures).toEqual([]);
  });

  it('without plain directories, still decides per directory (the repository root given alone)', () => {
    symlinkSync(join(base, 'outside', 'model.py'), join(model, '1', 'secret.py'));
    const files = diskFiles(onUnreadable, { rootReal: repo });
    expect(files.readText(join(model, '1', 'model.py'))).toBe('class TritonPythonModel: pass\n');
    expect(files.readText(join(model, '1', 'secret.py'))).toBeUndefined();
    expect(failures.map(([, code]) => code)).toEqual([LINK_LEAVES_REPOSITORY]);
  });
});
