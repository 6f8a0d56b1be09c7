import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, AssetStaging, Duration, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import { ArchiveRetention, ModelArchive, ModelArchiveProps } from '../../constructs';
import { versionedKeyPattern, versionedTargetModel } from '../../lib/bundle/target-model-name';
import { versionedTargetModelOf } from '../../lib/bundle/versioned-target-model';

const repositories = join(__dirname, 'fixtures', 'repositories');
const valid = join(repositories, 'add_one_python');
const broken = join(repositories, 'broken_config');

function synthIn(outdir: string, props: Omit<ModelArchiveProps, 'bucket'>) {
  const app = new App({ outdir });
  const stack = new Stack(app, 'S');
  const bucket = s3.Bucket.fromBucketName(stack, 'Models', 'team-models');
  const archive = new ModelArchive(stack, 'Archive', { bucket, ...props });
  const assembly = app.synth();
  return { archive, stack, assembly, template: Template.fromJSON(assembly.getStackByName('S').template) };
}

/** The staged `*.tar.gz` files of an assembly directory, with their modification times. */
function stagedArchives(outdir: string): Array<{ file: string; mtimeMs: number }> {
  return readdirSync(outdir)
    .filter((d) => d.startsWith('asset.') && statSync(join(outdir, d)).isDirectory())
    .flatMap((d) => readdirSync(join(outdir, d)).map((f) => join(outdir, d, f)))
    .filter((f) => f.endsWith('.tar.gz'))
    .map((file) => ({ file, mtimeMs: statSync(file).mtimeMs }));
}

describe('ModelArchive of valid repositories', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'mme-archive-'));
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));
  const { archive, template } = synthIn(outdir, { repositories: [valid, { path: valid, name: 'add_one_v2' }], prefix: 'prod/' });

  it("names each archive <directory or given name>-<first 12 hex of its SHA-256>.tar.gz, by the library's rule", () => {
    const staged = stagedArchives(outdir)
      .map((a) => a.file)
      .sort();
    const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
    expect(archive.targetModels).toEqual([
      versionedTargetModel('add_one_python', sha(staged[0]!)),
      versionedTargetModel('add_one_v2', sha(staged[1]!)),
    ]);
    expect(archive.targetModels[0]).toMatch(/^add_one_python-[0-9a-f]{12}\.tar\.gz$/);
    // The same repository packs to the same bytes, whatever the name.
    expect(archive.targetModels[0]!.slice(-19)).toBe(archive.targetModels[1]!.slice(-19));
    expect(archive.objectKeys).toEqual(archive.targetModels.map((t) => `prod/${t}`));
    expect(archive.targetModelOf('add_one_v2')).toBe(archive.targetModels[1]);
    expect(archive.targetModelOf('add_one_v2.tar.gz')).toBe(archive.targetModels[1]);
    expect(() => archive.targetModelOf('nope')).toThrow(/has no archive named 'nope'; it has add_one_python, add_one_v2/);
  });

  it('names a repository as `mme-deploy push --versioned` does (one rule, one deterministic packer)', async () => {
    const pushed = await versionedTargetModelOf(valid);
    expect(pushed).toMatchObject({ ok: true, targetModel: archive.targetModels[0] });
  });

  it('packs each repository at synth with the models at the archive root', () => {
    const staged = stagedArchives(outdir).map((a) => a.file);
    expect(staged.map((f) => f.split('/').pop()).sort()).toEqual([...archive.targetModels].sort());
    const listing = execFileSync('tar', ['-tzf', staged[0]!], { encoding: 'utf8' }).trim().split('\n').sort();
    expect(listing).toEqual(['add_one/', 'add_one/1/', 'add_one/1/model.py', 'add_one/config.pbtxt']);
  });

  it('outputs the TargetModels', () => {
    expect(Object.values(template.toJSON().Outputs)).toEqual([
      { Description: 'TargetModel names to invoke', Value: archive.targetModels.join(',') },
    ]);
  });

  it('keeps 3 previous versions of each archive by default, after the upload, never the live one', () => {
    template.hasResourceProperties('Custom::MmeDeployArchiveRetention', {
      Bucket: 'team-models',
      Archives: [
        { Prefix: 'prod/add_one_python-', Pattern: versionedKeyPattern('prod/', 'add_one_python'), Live: archive.objectKeys[0] },
        { Prefix: 'prod/add_one_v2-', Pattern: versionedKeyPattern('prod/', 'add_one_v2'), Live: archive.objectKeys[1] },
      ],
      KeepVersions: 3,
      KeepForSeconds: 0,
    });
    const [retention] = Object.values(template.findResources('Custom::MmeDeployArchiveRetention')) as Array<{ DependsOn: string[] }>;
    expect(retention!.DependsOn).toEqual(expect.arrayContaining([expect.stringMatching(/^ArchiveDeploymentCustomResource/)]));
    template.hasResourceProperties('AWS::IAM::Role', {
      Policies: [
        {
          PolicyName: 'Inline',
          PolicyDocument: {
            Version: '2012-10-17',
            Statement: [
              {
                Effect: 'Allow',
                Action: ['s3:ListBucket'],
                Resource: Match.anyValue(),
                // Its own archives only (an empty prefix must not mean the whole bucket).
                Condition: { StringLike: { 's3:prefix': ['prod/add_one_python-*', 'prod/add_one_v2-*'] } },
              },
              {
                Effect: 'Allow',
                Action: ['s3:DeleteObject'],
                Resource: [
                  Match.objectLike({ 'Fn::Join': ['', Match.arrayWith([':s3:::team-models/prod/add_one_python-*'])] }),
                  Match.objectLike({ 'Fn::Join': ['', Match.arrayWith([':s3:::team-models/prod/add_one_v2-*'])] }),
                ],
              },
            ],
          },
        },
      ],
    });
  });

  it('copies them under the prefix on deploy, extracting the staged zips and pruning nothing', () => {
    template.hasResourceProperties('Custom::CDKBucketDeployment', {
      DestinationBucketName: 'team-models',
      DestinationBucketKeyPrefix: 'prod/',
      Prune: false,
      SourceObjectKeys: [Match.stringLikeRegexp('\\.zip$'), Match.stringLikeRegexp('\\.zip$')],
    });
    template.hasResourceProperties('AWS::Lambda::Function', { MemorySize: 1024, EphemeralStorage: { Size: 10240 } });
  });

  it('does not pack an unchanged repository again (cache by content hash), and names it the same', () => {
    const before = stagedArchives(outdir);
    AssetStaging.clearAssetHashCache(); // forget the in-process cache: only the staged files may answer
    const again = synthIn(outdir, { repositories: [valid, { path: valid, name: 'add_one_v2' }], prefix: 'prod/' });
    expect(stagedArchives(outdir)).toEqual(before);
    expect(again.archive.targetModels).toEqual(archive.targetModels);
  });

  it('packs a repository again when its content changes', () => {
    const copy = mkdtempSync(join(tmpdir(), 'mme-repo-'));
    // An assembly directory of its own: the archives staged here must not show up in the other tests' outdir.
    const changingOut = mkdtempSync(join(tmpdir(), 'mme-archive-'));
    try {
      cpSync(valid, copy, { recursive: true });
      const first = synthIn(changingOut, { repositories: [{ path: copy, name: 'changing' }] });
      const hashOf = (a: typeof first) => (a.archive.node.findChild('Archive-changing') as s3assets.Asset).assetHash;
      writeFileSync(join(copy, 'add_one', '1', 'model.py'), '# changed\n', { flag: 'a' });
      AssetStaging.clearAssetHashCache();
      const second = synthIn(changingOut, { repositories: [{ path: copy, name: 'changing' }] });
      expect(hashOf(second)).not.toEqual(hashOf(first));
      // A new TargetModel: instances that cached the old archive never serve it under the new name.
      expect(second.archive.targetModels[0]).not.toEqual(first.archive.targetModels[0]);
      expect(second.archive.targetModels[0]).toMatch(/^changing-[0-9a-f]{12}\.tar\.gz$/);
    } finally {
      rmSync(copy, { recursive: true, force: true });
      rmSync(changingOut, { recursive: true, force: true });
    }
  });
});

describe('ModelArchive retention choices', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'mme-archive-'));
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it('keeps every version with ArchiveRetention.all() (no retention resource)', () => {
    const { template } = synthIn(outdir, { repositories: [valid], retention: ArchiveRetention.all(), output: false });
    template.resourceCountIs('Custom::MmeDeployArchiveRetention', 0);
    expect(template.toJSON().Outputs).toBeUndefined();
  });

  it('keeps versions for a time, or a number and a time', () => {
    const byTime = synthIn(outdir, { repositories: [valid], retention: ArchiveRetention.duration(Duration.days(7)) });
    byTime.template.hasResourceProperties('Custom::MmeDeployArchiveRetention', { KeepVersions: 0, KeepForSeconds: 604800 });
    const both = synthIn(outdir, { repositories: [valid], retention: ArchiveRetention.versionsAndDuration(1, Duration.hours(1)) });
    both.template.hasResourceProperties('Custom::MmeDeployArchiveRetention', { KeepVersions: 1, KeepForSeconds: 3600 });
  });
});

describe('ModelArchive of a repository with warnings', () => {
  it('packs it and shows each warning as a synth warning', () => {
    const outdir = mkdtempSync(join(tmpdir(), 'mme-archive-'));
    try {
      const { stack } = synthIn(outdir, { repositories: [join(repositories, 'add_one_with_notes')] });
      Annotations.fromStack(stack).hasWarning(
        '/S/Archive',
        Match.stringLikeRegexp('^add_one/notes: warning: Triton ignores this directory: .*\\[version-not-numeric\\]'),
      );
      expect(stagedArchives(outdir).map((a) => a.file.split('/').pop())).toEqual([
        expect.stringMatching(/^add_one_with_notes-[0-9a-f]{12}\.tar\.gz$/),
      ]);
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });
});

describe('ModelArchive synth-time errors', () => {
  it("fails synth with the validator's diagnostics as file:line:column", () => {
    const outdir = mkdtempSync(join(tmpdir(), 'mme-archive-'));
    try {
      expect(() => synthIn(outdir, { repositories: [broken] })).toThrow(
        new RegExp(
          `^ModelArchive S/Archive: model repository '${broken}' is invalid:\\n` +
            '  broken/config\\.pbtxt:4:17: error: Expected integer for int32 field "max_batch_size", got: "eight"\\. ' +
            '\\[wrong-value-type\\]$',
        ),
      );
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  });

  it('rejects an empty list, a missing directory, duplicate and bad names, a bad level and prefix, in one error', () => {
    const stack = new Stack(new App(), 'S');
    const bucket = s3.Bucket.fromBucketName(stack, 'B', 'bucket');
    expect(() => new ModelArchive(stack, 'Empty', { bucket, repositories: [] })).toThrow(/repositories is empty/);
    let message = '';
    try {
      new ModelArchive(stack, 'Bad', {
        bucket,
        prefix: 'models',
        compressionLevel: 12,
        repositories: [valid, valid, join(repositories, 'missing'), { path: valid, name: 'a/b' }, { path: valid, name: 'x'.repeat(1010) }],
        retention: ArchiveRetention.versions(-1),
      });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/^Invalid ModelArchive props \(S\/Bad\):/);
    expect(message).toContain("two repositories are named 'add_one_python'");
    expect(message).toMatch(/'.*missing' is not a directory/);
    expect(message).toContain("archive name 'a/b' may hold only letters");
    expect(message).toContain(`archive name '${'x'.repeat(40)}...' gives TargetModels 1030 characters long; SageMaker takes at most 1024.`);
    expect(message).toContain('compressionLevel must be a whole number from 0 to 9, got 12');
    expect(message).toContain("prefix 'models' must end with '/'");
    expect(message).toContain('retention keeps a whole number of versions, 0 or more; got -1.');
  });
});
