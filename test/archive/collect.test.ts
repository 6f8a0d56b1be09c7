import { execFileSync } from 'node:child_process';
import { linkSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { collectEntries } from '../../lib/archive/collect';
import { tempDir, writeTree } from './archive-fixtures';

describe('collectEntries', () => {
  let dir: ReturnType<typeof tempDir>;
  let repo: string;
  beforeEach(() => {
    dir = tempDir();
    repo = join(dir.path, 'repo');
    writeTree(repo, {
      'ensemble/config.pbtxt': 'platform: "ensemble"\n',
      'ensemble/1/': '',
      'pre/config.pbtxt': 'backend: "python"\n',
      'pre/1/model.py': 'print(1)\n',
      'pre-b/config.pbtxt': 'x',
    });
  });
  afterEach(() => dir.cleanup());

  it('lists files and directories (empty ones too) sorted bytewise, parents before children', async () => {
    const { entries, problems } = await collectEntries(repo);
    expect(problems).toEqual([]);
    expect(entries.map((e) => `${e.type[0]} ${e.path}`)).toEqual([
      'd ensemble',
      'd ensemble/1',
      'f ensemble/config.pbtxt',
      'd pre',
      'd pre-b',
      'f pre-b/config.pbtxt',
      'd pre/1',
      'f pre/1/model.py',
      'f pre/config.pbtxt',
    ]);
    const model = entries.find((e) => e.path === 'pre/1/model.py')!;
    const stats = statSync(join(repo, 'pre/1/model.py'));
    expect(model).toEqual({
      path: 'pre/1/model.py',
      type: 'file',
      source: join(realpathSync(repo), 'pre/1/model.py'),
      size: 9,
      executable: false,
      identity: { dev: stats.dev, ino: stats.ino },
    });
  });

  it('marks files with an execute bit as executable', async () => {
    writeFileSync(join(repo, 'pre/1/run.sh'), '#!/bin/sh\n', { mode: 0o744 });
    const { entries } = await collectEntries(repo);
    expect(entries.find((e) => e.path === 'pre/1/run.sh')?.executable).toBe(true);
  });

  it('places every entry under the prefix, the prefix directory included', async () => {
    const { entries } = await collectEntries(join(repo, 'pre'), { prefix: 'pre' });
    expect(entries.map((e) => e.path)).toEqual(['pre', 'pre/1', 'pre/1/model.py', 'pre/config.pbtxt']);
  });

  it('leaves out tool by-products and lists them', async () => {
    writeTree(repo, {
      '.git/HEAD': 'ref',
      'pre/1/__pycache__/model.cpython-311.pyc': 'x',
      'pre/.DS_Store': 'x',
      '.ipynb_checkpoints/a.ipynb': '{}',
      'pre/1/model.py~': 'x',
      'pre/1/.model.py.swp': 'x',
      'pre/vocab.bak': 'kept',
    });
    const { entries, excluded } = await collectEntries(repo);
    expect(excluded).toEqual([
      '.git',
      '.ipynb_checkpoints',
      'pre/.DS_Store',
      'pre/1/.model.py.swp',
      'pre/1/__pycache__',
      'pre/1/model.py~',
    ]);
    const paths = entries.map((e) => e.path);
    expect(paths).toContain('pre/vocab.bak');
    expect(paths.filter((p) => excluded.some((x) => p === x || p.startsWith(`${x}/`)))).toEqual([]);
  });

  it('follows a symbolic link to a file or directory inside the repository as if it were one', async () => {
    symlinkSync('../pre/1/model.py', join(repo, 'ensemble/model-link.py'));
    symlinkSync('../pre/1', join(repo, 'ensemble/2'));
    const { entries, problems } = await collectEntries(repo);
    expect(problems).toEqual([]);
    const byPath = new Map(entries.map((e) => [e.path, e]));
    expect(byPath.get('ensemble/model-link.py')).toMatchObject({ type: 'file', size: 9 });
    expect(byPath.get('ensemble/2')).toMatchObject({ type: 'directory' });
    expect(byPath.get('ensemble/2/model.py')).toMatchObject({ type: 'file', source: join(realpathSync(repo), 'pre/1/model.py') });
  });

  it('refuses a symbolic link that points outside the repository', async () => {
    writeFileSync(join(dir.path, 'secret.txt'), 'x');
    symlinkSync('../../../secret.txt', join(repo, 'pre/1/weights.bin'));
    const { problems } = await collectEntries(repo);
    expect(problems).toEqual([
      expect.objectContaining({ severity: 'error', code: 'symlink-escape', file: 'pre/1/weights.bin' }),
    ]);
    expect(problems[0]!.message).toMatch(/outside the repository .*cp --remove-destination/);
  });

  it('refuses a dangling symbolic link', async () => {
    symlinkSync('missing.bin', join(repo, 'pre/1/weights.bin'));
    const { problems } = await collectEntries(repo);
    expect(problems).toEqual([expect.objectContaining({ code: 'symlink-dangling', file: 'pre/1/weights.bin' })]);
    expect(problems[0]!.message).toContain('"missing.bin", which does not exist');
  });

  it('refuses a symbolic link to a directory that contains it instead of walking forever', async () => {
    symlinkSync('..', join(repo, 'pre/1/up'));
    const { problems } = await collectEntries(repo);
    expect(problems).toEqual([expect.objectContaining({ code: 'symlink-loop', file: 'pre/1/up' })]);
  });

  it('refuses a FIFO as a special file', async () => {
    execFileSync('mkfifo', [join(repo, 'pre/1/pipe')]);
    const { problems } = await collectEntries(repo);
    expect(problems).toEqual([expect.objectContaining({ code: 'special-file', file: 'pre/1/pipe' })]);
    expect(problems[0]!.message).toContain('is a FIFO (named pipe)');
  });

  it('refuses a hard link whose other link is outside the repository, and accepts one whose links are all inside', async () => {
    writeFileSync(join(dir.path, 'outside.bin'), 'shared');
    linkSync(join(dir.path, 'outside.bin'), join(repo, 'pre/1/shared.bin'));
    linkSync(join(repo, 'pre/1/model.py'), join(repo, 'pre/model-copy.py'));
    const { problems } = await collectEntries(repo);
    expect(problems).toEqual([expect.objectContaining({ code: 'hardlink-outside', file: 'pre/1/shared.bin' })]);
  });

  it('refuses a name that is not valid UTF-8, showing its bytes, instead of reporting it missing', async () => {
    writeFileSync(Buffer.concat([Buffer.from(join(repo, 'pre/1/bad')), Buffer.from([0xff]), Buffer.from('.bin')]), 'x');
    const { entries, problems } = await collectEntries(repo);
    expect(problems).toEqual([expect.objectContaining({ code: 'name-not-utf8', file: 'pre/1/bad\\xff.bin' })]);
    expect(problems[0]!.message).not.toMatch(/ENOENT/);
    expect(entries.map((e) => e.path)).not.toContainEqual(expect.stringContaining('bad'));
  });

  it.each([
    ['a backslash', 'pre/1/..\\x', 'pre/1/..\\x', 'a backslash'],
    ['a leading drive letter', 'c:model/x', 'c:model', 'drive letter'],
  ])('refuses a name with %s, which the extractor would refuse too', async (_case, path, refused, message) => {
    writeTree(repo, { [path]: 'x' });
    const { problems } = await collectEntries(repo);
    expect(problems).toEqual([expect.objectContaining({ code: 'unsafe-name', file: refused })]);
    expect(problems[0]!.message).toContain(message);
  });

  it('reports a missing root or a file as the root', async () => {
    expect((await collectEntries(join(dir.path, 'nope'))).problems).toEqual([
      expect.objectContaining({ code: 'unreadable', file: '.' }),
    ]);
    expect((await collectEntries(join(repo, 'pre/config.pbtxt'))).problems).toEqual([
      expect.objectContaining({ code: 'not-a-directory' }),
    ]);
  });
});
