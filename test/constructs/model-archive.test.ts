// Slow: ~8 s on a quiet 2-core machine (test/sequencer.js starts it early on a clean clone).
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { App, AssetStaging, CfnOutput, Duration, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import { ArchiveRetention, ModelArchive, ModelArchiveProps } from '../../constructs';
import { packWorkerArgs } from '../../constructs/pack-worker';
import { versionedKeyPattern, versionedTargetModel } from '../../lib/bundle/target-model-name';
import { versionedTargetModelOf } from '../../lib/bundle/versioned-target-model';
import { dependenciesOf, Template as CfnTemplate } from './lifecycle-harness';

const root = join(__dirname, '..', '..');
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

/** The staged archives of an assembly directory (file assets `asset.<hash>.tar.gz`), with their modification times. */
function stagedArchives(outdir: string): Array<{ file: string; mtimeMs: number }> {
  return readdirSync(outdir)
    .filter((f) => /^asset\.[0-9a-f]+\.tar\.gz$/.test(f))
    .map((f) => join(outdir, f))
    .map((file) => ({ file, mtimeMs: statSync(file).mtimeMs }));
}

/** Every resource `id` depends on, directly or through others (Ref, Fn::GetAtt, Fn::Sub, DependsOn). */
function dependsOnTransitively(template: CfnTemplate, id: string): Set<string> {
  const seen = new Set<string>();
  const visit = (at: string) => {
    for (const dep of dependenciesOf(template.Resources[at]!, template)) {
      if (!seen.has(dep)) {
        seen.add(dep);
        visit(dep);
      }
    }
  };
  visit(id);
  return seen;
}

// The tests of valid repositories, of consumers and of retention synthesize the same add_one_python archive: in one
// assembly directory it is packed once, by the first synth (below, as the tests are collected), and found staged by
// the others (the cache the tests below prove); the same bytes, since the archive's name and content are the same.
const oneArchive = mkdtempSync(join(tmpdir(), 'mme-archive-'));
afterAll(() => rmSync(oneArchive, { recursive: true, force: true }));

describe('ModelArchive of valid repositories', () => {
  const outdir = oneArchive;
  const { archive, stack, template } = synthIn(outdir, { repositories: [valid, { path: valid, name: 'add_one_v2' }], prefix: 'prod/' });
  const copies = template.findResources('Custom::MmeDeployArchiveCopy');
  const copyId = (targetModel: string) =>
    Object.keys(copies).find((id) => (copies[id] as { Properties: { TargetModel: string } }).Properties.TargetModel === targetModel)!;

  it("names each archive <directory or given name>-<first 12 hex of its SHA-256>.tar.gz, by the library's rule", () => {
    const staged = stagedArchives(outdir).map((a) => a.file);
    // The same repository packs to the same bytes, whatever the name: one content, staged twice.
    const shas = staged.map((file) => createHash('sha256').update(readFileSync(file)).digest('hex'));
    expect(new Set(shas).size).toBe(1);
    expect(archive.literalTargetModels).toEqual([
      versionedTargetModel('add_one_python', shas[0]!),
      versionedTargetModel('add_one_v2', shas[0]!),
    ]);
    expect(archive.literalTargetModels[0]).toMatch(/^add_one_python-[0-9a-f]{12}\.tar\.gz$/);
    expect(archive.sizes).toEqual(staged.map((file) => statSync(file).size));
    expect(() => archive.targetModelOf('nope')).toThrow(/has no archive named 'nope'; it has add_one_python, add_one_v2/);
  });

  it('gives out names and keys that resolve through the copy of their archive (usable only once it is in S3)', () => {
    const [python, v2] = archive.literalTargetModels as [string, string];
    expect(stack.resolve(archive.targetModels)).toEqual([
      { 'Fn::GetAtt': [copyId(python), 'TargetModel'] },
      { 'Fn::GetAtt': [copyId(v2), 'TargetModel'] },
    ]);
    expect(stack.resolve(archive.objectKeys)).toEqual([
      { 'Fn::GetAtt': [copyId(python), 'ObjectKey'] },
      { 'Fn::GetAtt': [copyId(v2), 'ObjectKey'] },
    ]);
    expect(stack.resolve(archive.targetModelOf('add_one_v2'))).toEqual({ 'Fn::GetAtt': [copyId(v2), 'TargetModel'] });
    expect(stack.resolve(archive.targetModelOf('add_one_v2.tar.gz'))).toEqual({ 'Fn::GetAtt': [copyId(v2), 'TargetModel'] });
  });

  it('names a repository as `mme-deploy push --versioned` does (one rule, one deterministic packer)', async () => {
    const pushed = await versionedTargetModelOf(valid);
    expect(pushed).toMatchObject({ ok: true, targetModel: archive.literalTargetModels[0] });
  });

  it('stages each archive as a file asset, the tar.gz itself with the models at its root', () => {
    const staged = stagedArchives(outdir).map((a) => a.file);
    expect(staged).toHaveLength(2);
    const listing = execFileSync('tar', ['-tzf', staged[0]!], { encoding: 'utf8' }).trim().split('\n').sort();
    expect(listing).toEqual(['add_one/', 'add_one/1/', 'add_one/1/model.py', 'add_one/config.pbtxt']);
  });

  it('outputs the TargetModels once copied, and what the retention could not do', () => {
    expect(Object.values(template.toJSON().Outputs)).toEqual([
      {
        Description: 'TargetModel names to invoke',
        Value: {
          'Fn::Join': [
            '',
            [
              { 'Fn::GetAtt': [copyId(archive.literalTargetModels[0]!), 'TargetModel'] },
              ',',
              { 'Fn::GetAtt': [copyId(archive.literalTargetModels[1]!), 'TargetModel'] },
            ],
          ],
        },
      },
      {
        Description: 'What the archive retention could not do at the last deployment',
        Value: { 'Fn::GetAtt': [Object.keys(template.findResources('Custom::MmeDeployArchiveRetention'))[0], 'Problems'] },
      },
    ]);
  });

  it('copies each archive with a resource of its own, S3 to S3, with rights to that source object and target key only', () => {
    const [python] = archive.literalTargetModels as [string, string];
    expect(Object.keys(copies)).toHaveLength(2);
    template.hasResourceProperties('Custom::MmeDeployArchiveCopy', {
      SourceBucket: { 'Fn::Sub': 'cdk-hnb659fds-assets-${AWS::AccountId}-${AWS::Region}' },
      SourceKey: Match.stringLikeRegexp('^[0-9a-f]{64}\\.gz$'),
      Bucket: 'team-models',
      Key: `prod/${python}`,
      TargetModel: python,
      Size: archive.sizes[0],
    });
    // No BucketDeployment: nothing downloads, extracts or syncs the archives.
    template.resourceCountIs('Custom::CDKBucketDeployment', 0);
    const role = Object.values(template.findResources('AWS::IAM::Role')).find((r) =>
      JSON.stringify(r).includes('s3:AbortMultipartUpload'),
    ) as { Properties: { Policies: Array<{ PolicyDocument: { Statement: unknown[] } }> } };
    const statements = role.Properties.Policies[0]!.PolicyDocument.Statement;
    expect(statements).toHaveLength(6); // three for each archive
    expect(statements).toContainEqual({
      Effect: 'Allow',
      Action: ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload'],
      Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:s3:::team-models/prod/${python}`]] },
    });
    expect(statements).toContainEqual({
      Effect: 'Allow',
      Action: ['s3:ListBucket'],
      Resource: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::team-models']] },
      Condition: { StringEquals: { 's3:prefix': `prod/${python}` } },
    });
    expect(JSON.stringify(statements)).not.toContain('*');
    // Server-side copies: no scratch space and a small fixed memory, whatever the archives weigh.
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('copies a model archive'),
      MemorySize: 256,
      Timeout: 900,
      EphemeralStorage: Match.absent(),
    });
  });

  it('keeps 3 previous versions of each archive by default, after the copies, by a deploy history of its own', () => {
    template.hasResourceProperties('Custom::MmeDeployArchiveRetention', {
      Bucket: 'team-models',
      HistoryKey: Match.stringLikeRegexp('^\\.mme-deploy/archive-history/prod/SArchive[0-9A-F]{8}\\.json$'),
      Archives: [
        {
          Prefix: 'prod/add_one_python-',
          Pattern: versionedKeyPattern('prod/', 'add_one_python'),
          Live: stack.resolve(archive.objectKeys[0]),
        },
        { Prefix: 'prod/add_one_v2-', Pattern: versionedKeyPattern('prod/', 'add_one_v2'), Live: stack.resolve(archive.objectKeys[1]) },
      ],
      KeepVersions: 3,
      KeepForSeconds: 0,
    });
    const [retention] = Object.keys(template.findResources('Custom::MmeDeployArchiveRetention'));
    const after = dependsOnTransitively(template.toJSON() as CfnTemplate, retention!);
    expect(Object.keys(copies).filter((id) => !after.has(id))).toEqual([]);
    const role = Object.values(template.findResources('AWS::IAM::Role')).find((r) =>
      JSON.stringify(r).includes('s3:DeleteObject'),
    ) as { Properties: { Policies: Array<{ PolicyDocument: { Statement: Array<Record<string, unknown>> } }> } };
    const [readWrite, list, del] = role.Properties.Policies[0]!.PolicyDocument.Statement;
    expect(readWrite).toMatchObject({ Action: ['s3:GetObject', 's3:PutObject'] });
    const history = /:s3:::team-models\/\.mme-deploy\/archive-history\/prod\/SArchive[0-9A-F]{8}\.json"/;
    expect(JSON.stringify(readWrite!.Resource)).toMatch(history);
    type Retention = { Properties: { HistoryKey: string } };
    const historyKey = template.findResources('Custom::MmeDeployArchiveRetention') as Record<string, Retention>;
    expect(list).toMatchObject({
      Action: ['s3:ListBucket'],
      Condition: { StringEquals: { 's3:prefix': Object.values(historyKey)[0]!.Properties.HistoryKey } },
    });
    // Deletions: its own archives only (an empty prefix must not mean the whole bucket).
    expect(del).toEqual({
      Effect: 'Allow',
      Action: ['s3:DeleteObject'],
      Resource: [
        { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::team-models/prod/add_one_python-*']] },
        { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::team-models/prod/add_one_v2-*']] },
      ],
    });
  });

  it('does not pack an unchanged repository again (cache by content hash), and names it the same', () => {
    const before = stagedArchives(outdir);
    AssetStaging.clearAssetHashCache(); // forget the in-process cache: only the staged files may answer
    const again = synthIn(outdir, { repositories: [valid, { path: valid, name: 'add_one_v2' }], prefix: 'prod/' });
    expect(stagedArchives(outdir)).toEqual(before);
    expect(again.archive.literalTargetModels).toEqual(archive.literalTargetModels);
  });

  it('names a cached archive from its staged bytes when the record of its packing is gone', () => {
    rmSync(join(outdir, 'mme-deploy-archives'), { recursive: true, force: true });
    AssetStaging.clearAssetHashCache();
    const again = synthIn(outdir, { repositories: [valid, { path: valid, name: 'add_one_v2' }], prefix: 'prod/' });
    expect(again.archive.literalTargetModels).toEqual(archive.literalTargetModels);
  });

  it('packs a repository again when its content changes', () => {
    // A copy of add_one_python, synthesized under the same name into the same assembly directory: unchanged, it is
    // the archive already staged there (no packing); changed, it is packed anew. The new archive and its record are
    // removed again: the other tests of this directory find one content staged.
    const copy = mkdtempSync(join(tmpdir(), 'mme-repo-'));
    const staged = new Set(stagedArchives(outdir).map((a) => a.file));
    const records = join(outdir, 'mme-deploy-archives');
    const recorded = new Set(existsSync(records) ? readdirSync(records) : []);
    try {
      cpSync(valid, copy, { recursive: true });
      AssetStaging.clearAssetHashCache();
      const first = synthIn(outdir, { repositories: [{ path: copy, name: 'add_one_python' }] });
      const hashOf = (a: typeof first) => (a.archive.node.findChild('Archive-add_one_python') as s3assets.Asset).assetHash;
      expect(first.archive.literalTargetModels).toEqual([archive.literalTargetModels[0]]);
      const added = () => stagedArchives(outdir).filter((a) => !staged.has(a.file));
      expect(added()).toEqual([]);
      writeFileSync(join(copy, 'add_one', '1', 'model.py'), '# changed\n', { flag: 'a' });
      AssetStaging.clearAssetHashCache();
      const second = synthIn(outdir, { repositories: [{ path: copy, name: 'add_one_python' }] });
      expect(hashOf(second)).not.toEqual(hashOf(first));
      expect(added()).toHaveLength(1);
      // A new TargetModel: instances that cached the old archive never serve it under the new name.
      expect(second.archive.literalTargetModels[0]).not.toEqual(first.archive.literalTargetModels[0]);
      expect(second.archive.literalTargetModels[0]).toMatch(/^add_one_python-[0-9a-f]{12}\.tar\.gz$/);
    } finally {
      rmSync(copy, { recursive: true, force: true });
      for (const { file } of stagedArchives(outdir)) if (!staged.has(file)) rmSync(file, { force: true });
      if (existsSync(records)) for (const f of readdirSync(records)) if (!recorded.has(f)) rmSync(join(records, f), { force: true });
    }
  });
});

describe('ModelArchive names handed to consumers', () => {
  const outdir = oneArchive;

  function consumerTemplate(name: (archive: ModelArchive) => string) {
    const app = new App({ outdir });
    const stack = new Stack(app, 'S');
    const bucket = s3.Bucket.fromBucketName(stack, 'Models', 'team-models');
    const archive = new ModelArchive(stack, 'Archive', { bucket, repositories: [valid], output: false });
    new lambda.Function(stack, 'Client', {
      runtime: lambda.Runtime.NODEJS_22_X,
      handler: 'index.handler',
      code: lambda.Code.fromInline('exports.handler = async () => {};'),
      environment: { TARGET_MODEL: name(archive) },
    });
    new CfnOutput(stack, 'Model', { value: name(archive) });
    const template = app.synth().getStackByName('S').template as CfnTemplate & { Outputs: Record<string, { Value: unknown }> };
    const ofType = (type: string) => Object.keys(template.Resources).filter((id) => template.Resources[id]!.Type === type);
    const [client] = ofType('AWS::Lambda::Function').filter((id) => id.startsWith('Client'));
    const [copy] = ofType('Custom::MmeDeployArchiveCopy');
    return { template, client: client!, copy: copy! };
  }

  it('a function whose environment holds a TargetModel is deployed only after that archive is in S3', () => {
    const { template, client, copy } = consumerTemplate((archive) => archive.targetModelOf('add_one_python'));
    expect(dependsOnTransitively(template, client).has(copy)).toBe(true);
    expect(template.Outputs.Model!.Value).toEqual({ 'Fn::GetAtt': [copy, 'TargetModel'] });
  });

  it('the literal names carry no such dependency (why consumers get the tokens)', () => {
    const { template, client, copy } = consumerTemplate((archive) => archive.literalTargetModels[0]!);
    expect(dependsOnTransitively(template, client).has(copy)).toBe(false);
  });
});

describe('ModelArchive retention choices', () => {
  const outdir = oneArchive;

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
  it('packs it and shows each warning as a synth warning, model.py checked by the python MME_DEPLOY_PYTHON names', () => {
    const outdir = mkdtempSync(join(tmpdir(), 'mme-archive-'));
    // The packing worker is a child process: it must get this process's environment (jest's sandboxed copy here).
    const saved = process.env.MME_DEPLOY_PYTHON;
    const python = join(outdir, 'recording-python');
    writeFileSync(python, `#!/bin/sh\necho "$@" >>"${python}.calls"\nexec ${saved ?? 'python3'} "$@"\n`, { mode: 0o755 });
    process.env.MME_DEPLOY_PYTHON = python;
    try {
      const { stack, archive } = synthIn(outdir, { repositories: [join(repositories, 'add_one_with_notes')] });
      expect(readFileSync(`${python}.calls`, 'utf8')).toMatch(/^-I -S -B -c /);
      Annotations.fromStack(stack).hasWarning(
        '/S/Archive',
        Match.stringLikeRegexp('^add_one/notes: warning: Triton ignores this directory: .*\\[version-not-numeric\\]'),
      );
      expect(stagedArchives(outdir)).toHaveLength(1);
      expect(archive.literalTargetModels).toEqual([expect.stringMatching(/^add_one_with_notes-[0-9a-f]{12}\.tar\.gz$/)]);
    } finally {
      if (saved === undefined) delete process.env.MME_DEPLOY_PYTHON;
      else process.env.MME_DEPLOY_PYTHON = saved;
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

describe('ModelArchive packing worker', () => {
  const source = join(root, 'constructs', 'model-archive.ts');

  it('is the built worker from dist/, and from the sources while dist/ is current (the global setup built it)', () => {
    expect(packWorkerArgs(join(root, 'dist', 'constructs', 'model-archive.js'))).toEqual([
      join(root, 'dist', 'constructs', 'model-archive-worker.js'),
    ]);
    expect(packWorkerArgs(source)).toEqual([join(root, 'dist', 'constructs', 'model-archive-worker.js')]);
  });

  it('is the source through tsx when dist/ is missing or older than a source, and packs the same bytes', async () => {
    // A checkout of its own: its build script, one source, and dist/ as a build leaves it.
    const tree = mkdtempSync(join(tmpdir(), 'mme-worker-tree-'));
    const out = mkdtempSync(join(tmpdir(), 'mme-worker-out-'));
    try {
      const write = (file: string, text = '') => {
        mkdirSync(dirname(join(tree, file)), { recursive: true });
        writeFileSync(join(tree, file), text);
      };
      write('scripts/build.js', readFileSync(join(root, 'scripts', 'build.js'), 'utf8'));
      write('lib/index.ts');
      const tsx = ['--import', 'tsx', join(root, 'constructs', 'model-archive-worker.ts')];
      expect(packWorkerArgs(source, tree)).toEqual(tsx); // no dist/
      const earlier = new Date(Date.now() - 60_000);
      for (const file of ['scripts/build.js', 'lib/index.ts']) utimesSync(join(tree, file), earlier, earlier);
      ['dist/lib/index.js', 'dist/constructs/index.js', 'dist/bin/mme-deploy.js', 'dist/constructs/model-archive-worker.js'].forEach((f) =>
        write(f),
      );
      expect(packWorkerArgs(source, tree)).toEqual([join(tree, 'dist', 'constructs', 'model-archive-worker.js')]);
      const later = new Date(Date.now() + 60_000);
      utimesSync(join(tree, 'lib', 'index.ts'), later, later);
      expect(packWorkerArgs(source, tree)).toEqual(tsx); // a source edited since the build
      // The source worker runs (as ModelArchive starts it, from the package root) and packs what the library packs.
      const args = [...tsx, valid, join(out, 'a.tar.gz'), 'add_one_python.tar.gz'];
      const run = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
      expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
      const result = JSON.parse(run.stdout) as { ok: boolean; sha256: string };
      expect(result.ok).toBe(true);
      expect(createHash('sha256').update(readFileSync(join(out, 'a.tar.gz'))).digest('hex')).toBe(result.sha256);
      const targetModel = versionedTargetModel('add_one_python', result.sha256);
      expect(await versionedTargetModelOf(valid)).toMatchObject({ ok: true, targetModel });
    } finally {
      rmSync(tree, { recursive: true, force: true });
      rmSync(out, { recursive: true, force: true });
    }
  });
});
