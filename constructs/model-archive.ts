// ModelArchive: validates and packs local Triton model repositories at synth time (cached by their content hash)
// and copies them under content-named keys `<prefix><name>-<hash>.tar.gz` (lib/bundle/target-model-name.ts), so
// `cdk deploy` ships changed models under new TargetModels and never overwrites one an instance may have cached.
// Each archive is one file asset and one copy resource: a deploy copies only the archives whose content changed, S3 to
// S3 (constructs/handlers/archive-copy). Previous versions go as a retention says, ranked by the construct's own deploy
// history (constructs/handlers/archive-retention), never the live one. (aws-cdk-lib's BucketDeployment, used before,
// downloads and extracts every source into Lambda scratch space and runs `aws s3 sync`, which compares size and
// modification time; extraction sets new times, so every archive was uploaded again on every change: aws-cdk-lib
// 2.269.0 custom-resource-handlers/dist/aws-s3-deployment/bucket-deployment-handler/index.py:213-238,382-384.)

import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { basename, join, resolve } from 'node:path';
import {
  Annotations,
  AssetHashType,
  AssetStaging,
  BundlingOutput,
  CfnOutput,
  CustomResource,
  DockerImage,
  Duration,
  FileSystem,
  Names,
  Size,
  Stack,
  Stage,
} from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import { Construct } from 'constructs';
import { archiveBaseName, versionedKeyPattern, versionedTargetModel } from '../lib/bundle/target-model-name';
import type { Diagnostic } from '../lib/diagnostics';
import { targetModelProblems } from '../lib/repository/mme-rules';
import { ArchiveRetention } from './archive-retention';
import { handlerProvider } from './handler-provider';
import type { WorkerResult } from './model-archive-worker';
import { packWorkerArgs } from './pack-worker';
import { projectPath } from './project-path';
/** One model repository to ship. */
export interface ModelRepositorySource {
  /** The repository directory (its subdirectories are models; one ensemble when there are several). */
  readonly path: string;
  /**
   * The archive name: the object is `<prefix><name>-<hash>.tar.gz`, whose key below the prefix is the TargetModel.
   * @default - the directory's name
   */
  readonly name?: string;
}

/** Properties of a ModelArchive. */
export interface ModelArchiveProps {
  /** The repositories to validate, pack and upload. */
  readonly repositories: Array<string | ModelRepositorySource>;
  /** The bucket of the endpoint's models (`TritonMultiModelEndpoint.bucket`). */
  readonly bucket: s3.IBucket;
  /**
   * The key prefix of the endpoint's models (`TritonMultiModelEndpoint.prefix`), ending in `/`.
   * @default 'models/'
   */
  readonly prefix?: string;
  /**
   * gzip level of the archives, 0 (stored) to 9 (small).
   * @default - the packer's default
   */
  readonly compressionLevel?: number;
  /**
   * Which previous versions of each archive stay in the bucket after a deployment, for clients still invoking them,
   * ranked by this construct's deploy history. The live version and archives it did not deploy are never deleted.
   * @default ArchiveRetention.versions(3)
   */
  readonly retention?: ArchiveRetention;
  /**
   * Stack outputs: `<id>TargetModels` listing the TargetModels, comma-separated, and `<id>ArchiveCleanup` with what the
   * retention could not do (`none` when all went well).
   * @default true
   */
  readonly output?: boolean;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** What packing a repository gave, kept beside the staged assets so that a cached archive keeps its name. */
interface PackedArchive {
  readonly targetModel: string;
  readonly size: number;
}

/**
 * Model archives built from local repositories at synth and copied under the endpoint's prefix on deploy, each under
 * a name that holds its content hash. Other objects under the prefix are left alone (no pruning), so archives pushed
 * with the CLI survive a deploy; previous versions of these archives go as `retention` says.
 */
export class ModelArchive extends Construct {
  /**
   * The TargetModels of the archives, `<name>-<hash>.tar.gz`, in the order of `repositories`. Each is a token that
   * resolves to the copy resource's `TargetModel` attribute, so whatever uses it (a function's environment, an output,
   * a grant) is created or updated only after that archive is in the bucket.
   */
  public readonly targetModels: string[];
  /** The S3 keys of the archives, tokens like `targetModels`. */
  public readonly objectKeys: string[];
  /**
   * The same names as plain strings, known at synth: for checks and tests. They carry no dependency on the upload, so
   * give consumers `targetModels` instead.
   */
  public readonly literalTargetModels: string[];
  /** The size of each archive in bytes, in the order of `repositories`. */
  public readonly sizes: number[];
  /** The copy of each archive into the bucket, in the order of `repositories`. */
  public readonly uploads: CustomResource[];
  /** The custom resource deleting versions the retention no longer keeps (none with `ArchiveRetention.all()`). */
  public readonly retention?: CustomResource;
  private readonly byName = new Map<string, string>();

  constructor(scope: Construct, id: string, props: ModelArchiveProps) {
    super(scope, id);
    const prefix = props.prefix ?? 'models/';
    const entries = checkProps(this.node.path, prefix, props);
    const packed = entries.map(({ path, name }) => this.pack(path, name, props.compressionLevel));
    this.literalTargetModels = packed.map((p) => p.archive.targetModel);
    this.sizes = packed.map((p) => p.archive.size);
    this.uploads = packed.map(({ asset, archive }, i) => this.copy(asset, archive, props.bucket, prefix, entries[i]!.name));
    this.targetModels = this.uploads.map((upload) => upload.getAttString('TargetModel'));
    this.objectKeys = this.uploads.map((upload) => upload.getAttString('ObjectKey'));
    entries.forEach((e, i) => this.byName.set(e.name, this.targetModels[i]!));

    const retention = props.retention ?? ArchiveRetention.versions(3);
    if (!retention._keepsAll) this.retention = this.pruneOldVersions(props.bucket, prefix, entries.map((e) => e.name), retention);
    if (props.output ?? true) {
      new CfnOutput(this, 'TargetModels', { value: this.targetModels.join(','), description: 'TargetModel names to invoke' });
      if (this.retention) {
        new CfnOutput(this, 'ArchiveCleanup', {
          value: this.retention.getAttString('Problems'),
          description: 'What the archive retention could not do at the last deployment',
        });
      }
    }
  }

  /** The TargetModel of the archive named `name` (the directory name unless the source named it), as a token. */
  public targetModelOf(name: string): string {
    const found = this.byName.get(archiveBaseName(name));
    if (!found) throw new Error(`${this.node.path} has no archive named '${name}'; it has ${[...this.byName.keys()].join(', ')}.`);
    return found;
  }

  /**
   * Validates and packs one repository into a file asset (the archive itself, uploaded by the CDK CLI as it is). The
   * cache key is the repository's content plus what else shapes the archive (its name, the gzip level, the packer's
   * version): an unchanged repository is neither validated nor packed again while its staged file is in the assembly.
   */
  private pack(path: string, name: string, level: number | undefined): { asset: s3assets.Asset; archive: PackedArchive } {
    const fingerprint = FileSystem.fingerprint(path, { extraHash: JSON.stringify({ name, level, packer: packerVersion() }) });
    const record = join(Stage.of(this)!.assetOutdir, 'mme-deploy-archives', `${fingerprint}.json`);
    const failures: string[] = [];
    let asset: s3assets.Asset;
    try {
      asset = new s3assets.Asset(this, `Archive-${name}`, {
        path,
        assetHashType: AssetHashType.CUSTOM,
        assetHash: fingerprint,
        bundling: {
          image: DockerImage.fromRegistry('mme-deploy-bundles-locally'), // never pulled: local bundling always runs
          outputType: BundlingOutput.SINGLE_FILE,
          local: {
            tryBundle: (outputDir) => {
              const packed = join(outputDir, `${name}.tar.gz`);
              const result = packInChildProcess(path, packed, `${name}.tar.gz`, level);
              for (const d of result.diagnostics.filter((d) => d.severity !== 'error')) {
                Annotations.of(this).addWarningV2(`mme-deploy:${d.code}`, formatDiagnostic(d, path));
              }
              if (!result.ok) {
                const errors = result.diagnostics.filter((d) => d.severity === 'error');
                const lines = errors.map((d) => `  ${formatDiagnostic(d, path)}`).join('\n');
                failures.push(`model repository '${path}' is invalid:\n${lines}`);
                throw new Error(failures[failures.length - 1]);
              }
              const targetModel = versionedTargetModel(name, result.sha256);
              renameSync(packed, join(outputDir, targetModel));
              writeRecord(record, { targetModel, size: result.size });
              return true;
            },
          },
        },
      });
    } catch (err) {
      // CDK wraps bundling errors in its own message; say only what is wrong with the repository.
      if (failures.length > 0) throw new Error(`ModelArchive ${this.node.path}: ${failures.join('\n')}`);
      throw err;
    }
    return { asset, archive: stagedArchive(asset, name, record) };
  }

  /**
   * The copy of one staged archive to `<prefix><TargetModel>`: S3 to S3, skipped when the key is already there with
   * the archive's size (the key holds its content hash). The function's rights name the one source object and the one
   * target key. CloudFormation updates only the copies whose archive changed.
   */
  private copy(asset: s3assets.Asset, archive: PackedArchive, bucket: s3.IBucket, prefix: string, name: string): CustomResource {
    const provider = handlerProvider(this, {
      resourceType: ARCHIVE_COPY_TYPE,
      handler: 'archive-copy',
      description: 'mme-deploy: copies a model archive from the CDK asset bucket to the model bucket, server-side',
      statements: [],
      // Server-side copies: the function holds no archive bytes, whatever their size; 15 minutes is Lambda's limit
      // (a multipart copy of 8 parts at a time).
      timeout: Duration.minutes(15),
      memorySize: Size.mebibytes(256),
    });
    const key = `${prefix}${archive.targetModel}`;
    const partition = Stack.of(this).partition;
    provider.addToRolePolicy({
      Effect: 'Allow',
      Action: ['s3:GetObject'],
      Resource: `arn:${partition}:s3:::${asset.s3BucketName}/${asset.s3ObjectKey}`,
    });
    provider.addToRolePolicy({
      Effect: 'Allow',
      Action: ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload'],
      Resource: bucket.arnForObjects(key),
    });
    // A missing key answers HeadObject with 404 (not 403) only to a caller that may list it.
    provider.addToRolePolicy({
      Effect: 'Allow',
      Action: ['s3:ListBucket'],
      Resource: bucket.bucketArn,
      Condition: { StringEquals: { 's3:prefix': key } },
    });
    if (bucket.encryptionKey) {
      provider.addToRolePolicy({ Effect: 'Allow', Action: ['kms:Decrypt', 'kms:GenerateDataKey'], Resource: bucket.encryptionKey.keyArn });
    }
    return new CustomResource(this, `Upload-${name}`, {
      serviceToken: provider.serviceToken,
      resourceType: ARCHIVE_COPY_TYPE,
      properties: {
        SourceBucket: asset.s3BucketName,
        SourceKey: asset.s3ObjectKey,
        Bucket: bucket.bucketName,
        Key: key,
        TargetModel: archive.targetModel,
        Size: archive.size,
      },
    });
  }

  /** After the copies: delete the versions of these archives the retention no longer keeps. */
  private pruneOldVersions(bucket: s3.IBucket, prefix: string, names: string[], retention: ArchiveRetention): CustomResource {
    const provider = handlerProvider(this, {
      resourceType: ARCHIVE_RETENTION_TYPE,
      handler: 'archive-retention',
      description: 'mme-deploy: deletes model archive versions the retention no longer keeps',
      statements: [],
    });
    // The history of this construct's deploys: one object, outside the prefix so that it is no TargetModel.
    const historyKey = `.mme-deploy/archive-history/${prefix}${Names.uniqueId(this)}.json`;
    provider.addToRolePolicy({ Effect: 'Allow', Action: ['s3:GetObject', 's3:PutObject'], Resource: bucket.arnForObjects(historyKey) });
    provider.addToRolePolicy({
      Effect: 'Allow',
      Action: ['s3:ListBucket'],
      Resource: bucket.bucketArn,
      Condition: { StringEquals: { 's3:prefix': historyKey } }, // a first deploy reads a missing history as 404
    });
    // Only this construct's own archives, `<prefix><name>-*`: with an empty prefix `<prefix>*` would be the whole bucket.
    const own = names.map((name) => `${prefix}${name}-*`);
    provider.addToRolePolicy({ Effect: 'Allow', Action: ['s3:DeleteObject'], Resource: own.map((key) => bucket.arnForObjects(key)) });
    const resource = new CustomResource(this, 'Retention', {
      serviceToken: provider.serviceToken,
      resourceType: ARCHIVE_RETENTION_TYPE,
      properties: {
        Bucket: bucket.bucketName,
        HistoryKey: historyKey,
        Archives: names.map((name, i) => ({
          Prefix: `${prefix}${name}-`,
          Pattern: versionedKeyPattern(prefix, name),
          Live: this.objectKeys[i],
        })),
        ...retention._properties(),
      },
    });
    // `Live` is each copy's ObjectKey attribute: the retention runs after every copy (no DependsOn needed, cfn-lint W3005).
    return resource;
  }
}

const ARCHIVE_COPY_TYPE = 'Custom::MmeDeployArchiveCopy';
const ARCHIVE_RETENTION_TYPE = 'Custom::MmeDeployArchiveRetention';

/** Every problem of the props at once; the repositories with their archive names. */
function checkProps(path: string, prefix: string, props: ModelArchiveProps): Array<{ path: string; name: string }> {
  const errors: string[] = [];
  const sources = props.repositories.map((r) => (typeof r === 'string' ? { path: r } : r));
  if (sources.length === 0) errors.push('repositories is empty; give at least one model repository directory.');
  const seen = new Set<string>();
  const entries = sources.map((source) => {
    const dir = resolve(source.path);
    const name = source.name ?? basename(dir);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) errors.push(`'${source.path}' is not a directory.`);
    if (!NAME.test(name)) errors.push(`archive name '${name}' may hold only letters, digits, '.', '_' and '-'.`);
    // Every version's TargetModel must be one InvokeEndpoint takes (the one rule push and package apply): its length.
    else if (targetModelProblems(versionedTargetModel(name, '0'.repeat(64)))) {
      errors.push(`archive name '${name.slice(0, 40)}...' gives TargetModels ${versionedTargetModel(name, '0'.repeat(64)).length} ` +
        `characters long; SageMaker takes at most 1024. Give it a shorter name.`);
    }
    if (seen.has(name)) errors.push(`two repositories are named '${name}'; give one of them another name.`);
    seen.add(name);
    return { path: dir, name };
  });
  const level = props.compressionLevel;
  if (level !== undefined && !(Number.isInteger(level) && level >= 0 && level <= 9)) {
    errors.push(`compressionLevel must be a whole number from 0 to 9, got ${props.compressionLevel}.`);
  }
  if (prefix !== '' && !prefix.endsWith('/')) errors.push(`prefix '${prefix}' must end with '/'.`);
  errors.push(...(props.retention?._problems() ?? []));
  if (errors.length > 0) throw new Error(`Invalid ModelArchive props (${path}):\n${errors.map((e) => `  - ${e}`).join('\n')}`);
  return entries;
}

function writeRecord(file: string, archive: PackedArchive): void {
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, JSON.stringify(archive));
}

/**
 * The name and size of `asset`'s staged archive: from the record packing wrote, or (the record gone) from the staged
 * file's own SHA-256. A stack whose bundling is skipped (`cdk deploy` of another stack) stages nothing: its names
 * are placeholders, never deployed.
 */
function stagedArchive(asset: s3assets.Asset, name: string, record: string): PackedArchive {
  const staged = (asset.node.findChild('Stage') as AssetStaging).absoluteStagedPath;
  if (statSync(staged).isDirectory()) return { targetModel: versionedTargetModel(name, '0'.repeat(64)), size: 0 };
  const size = statSync(staged).size;
  if (existsSync(record)) {
    const kept = JSON.parse(readFileSync(record, 'utf8')) as PackedArchive;
    if (kept.size === size && new RegExp(versionedKeyPattern('', name)).test(kept.targetModel)) return kept;
  }
  const archive = { targetModel: versionedTargetModel(name, sha256Of(staged)), size };
  writeRecord(record, archive);
  return archive;
}

function sha256Of(file: string): string {
  const hash = createHash('sha256');
  const buffer = Buffer.alloc(1024 * 1024);
  const fd = openSync(file, 'r');
  try {
    for (let n = readSync(fd, buffer); n > 0; n = readSync(fd, buffer)) hash.update(buffer.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

/** `file:line:column: severity message [code]`, the file relative to the repository when inside it. */
export function formatDiagnostic(d: Diagnostic, repository: string): string {
  const file = d.file.startsWith(`${repository}/`) ? d.file.slice(repository.length + 1) : d.file;
  const where = [file, d.line, d.line !== undefined ? d.column : undefined].filter((x) => x !== undefined).join(':');
  return `${where}: ${d.severity}: ${d.message} [${d.code}]`;
}

/** The mme-deploy version, so that a new packer does not reuse archives an older one staged. */
function packerVersion(): string {
  return (JSON.parse(readFileSync(projectPath('package.json'), 'utf8')) as { version?: string }).version ?? '0';
}

function packInChildProcess(repository: string, outFile: string, name: string, level?: number): WorkerResult {
  const args = [...packWorkerArgs(__filename), repository, outFile, name];
  if (level !== undefined) args.push(String(level));
  // cwd = the package root, so `--import tsx` resolves to our own dev dependency wherever cdk runs from. `env`: the
  // process.env this module sees (MME_DEPLOY_PYTHON, PATH), which a host that sandboxes modules (jest) keeps apart
  // from the native environment spawnSync passes by default; in a plain `cdk synth` the two are the same.
  const child = spawnSync(process.execPath, args, {
    cwd: projectPath(),
    env: process.env,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const line = child.stdout?.trim().split('\n').pop();
  if (child.status !== 0 || !line) {
    throw new Error(`packing '${repository}' failed: ${child.error?.message ?? child.stderr?.trim() ?? `exit ${child.status}`}`);
  }
  return JSON.parse(line) as WorkerResult;
}
