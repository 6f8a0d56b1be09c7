// push --versioned (pushTargetModel with `versioned`) against s3rver on 127.0.0.1: the TargetModel is named by the
// archive's content with the CDK ModelArchive's rule, so a changed model never lands on a name instances cached.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { versionedTargetModelOf } from '../../lib/bundle/versioned-target-model';
import { runPush } from '../../lib/cli/push';
import { pushTargetModel } from '../../lib/push/push-target-model';
import { useLocalS3 } from '../aws/s3rver-harness';

const s3 = useLocalS3(['models']);
const location = {
  s3: 's3://models/versioned/',
  get endpointUrl() {
    return s3().endpoint;
  },
};
const fixture = join(__dirname, '..', 'constructs', 'fixtures', 'repositories', 'add_one_python');
let dir: string;
let repository: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'push-versioned-'));
  repository = join(dir, 'adder');
  cpSync(fixture, repository, { recursive: true });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function keys(): Promise<string[]> {
  const listed = await s3().client.send(new ListObjectsV2Command({ Bucket: 'models', Prefix: 'versioned/' }));
  return (listed.Contents ?? []).map((o) => o.Key!).sort();
}

async function sha256Of(key: string): Promise<string> {
  const object = await s3().client.send(new GetObjectCommand({ Bucket: 'models', Key: key }));
  return createHash('sha256').update(await object.Body!.transformToByteArray()).digest('hex');
}

describe('push --versioned (s3rver)', () => {
  it('names a directory <name>-<sha256:12>.tar.gz of the archive it uploads, as the CDK ModelArchive would', async () => {
    const result = await pushTargetModel({ source: repository, location, versioned: true });
    expect(result).toMatchObject({ ok: true, targetModel: expect.stringMatching(/^adder-[0-9a-f]{12}\.tar\.gz$/) });
    const targetModel = (result as { targetModel: string }).targetModel;
    expect(targetModel.slice('adder-'.length, -'.tar.gz'.length)).toBe((await sha256Of(`versioned/${targetModel}`)).slice(0, 12));
    expect(await versionedTargetModelOf(repository)).toMatchObject({ targetModel });
  });

  it('uploads nothing when the same content is there, and a new name beside the old when it changed', async () => {
    await pushTargetModel({ source: repository, location, versioned: true });
    const first = await keys();
    const again = await pushTargetModel({ source: repository, location, versioned: true });
    expect(again).toMatchObject({ ok: true, unchanged: true, replaced: false });
    expect(await keys()).toEqual(first);

    appendFileSync(join(repository, 'add_one', '1', 'model.py'), '# v2\n');
    expect(await pushTargetModel({ source: repository, location, versioned: true })).toMatchObject({ ok: true, replaced: false });
    const both = await keys();
    expect(both.filter((k) => k.startsWith('versioned/adder-'))).toHaveLength(first.length + 1);
    expect(both).toEqual(expect.arrayContaining(first)); // the old version stays for instances and clients still using it
  });

  it('checks model.py with one python per push: the hashing pass packs the directory just validated without it', async () => {
    // A model.py no test before this one pushed: python answers for it (a source this process already found valid is
    // answered from memory, python-auto-complete/syntax-check.ts validSources), whatever order the tests run in.
    appendFileSync(join(repository, 'add_one', '1', 'model.py'), `# ${process.hrtime.bigint()}\n`);
    // Every process the push starts (the syntax check's python is the only one), counted as it is spawned.
    // The module object itself, which the library calls through (an `import *` namespace is a frozen copy).
    const spawn = jest.spyOn(require('node:child_process') as typeof import('node:child_process'), 'spawn');
    try {
      expect(await pushTargetModel({ source: repository, location, versioned: true })).toMatchObject({ ok: true });
      expect(spawn.mock.calls.map(([, args]) => (args as string[]).slice(0, 4))).toEqual([['-I', '-S', '-B', '-c']]);
      // The check still runs, and still refuses: a model.py that does not compile is not pushed.
      appendFileSync(join(repository, 'add_one', '1', 'model.py'), 'def broken(:\n');
      const refused = await pushTargetModel({ source: repository, location, versioned: true });
      expect(refused.ok).toBe(false);
      expect(!refused.ok && refused.report.diagnostics.map((d) => d.code)).toContain('python-syntax');
    } finally {
      spawn.mockRestore();
    }
  });

  it('names an archive file by its own bytes', async () => {
    const archive = join(dir, 'adder.tar.gz');
    execFileSync('tar', ['-C', repository, '-czf', archive, '.']);
    await pushTargetModel({ source: archive, location, versioned: true, name: 'adder-archive.tar.gz' });
    const sha = createHash('sha256').update(readFileSync(archive)).digest('hex');
    expect(await keys()).toContain(`versioned/adder-archive-${sha.slice(0, 12)}.tar.gz`);
  });

  it('refuses --force with --versioned, uploading nothing', async () => {
    const before = await keys();
    await expect(pushTargetModel({ source: repository, location, versioned: true, force: true })).rejects.toThrow(
      /--versioned and --force exclude each other/,
    );
    expect(await keys()).toEqual(before);
  });

  it('says on the command line that the same content is already there', async () => {
    let out = '';
    const io = { stdout: (t: string) => (out += t), stderr: () => undefined, isTTY: false, env: process.env, cwd: dir };
    const where = { s3: location.s3, endpointUrl: location.endpointUrl };
    expect(await runPush('adder', { ...where, versioned: true }, io)).toBe(0);
    expect(await runPush('adder', { ...where, versioned: true }, io)).toBe(0);
    expect(out).toMatch(
      /adder-[0-9a-f]{12}\.tar\.gz is already at s3:\/\/models\/versioned\/adder-.* \(same content\); nothing was uploaded/,
    );
  });
});
