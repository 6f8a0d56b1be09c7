// ModelArchive: validates and packs local Triton model repositories at synth time (cached by their content hash)
// and deploys them under content-named keys `<prefix><name>-<hash>.tar.gz` (lib/bundle/target-model-name.ts), so
// `cdk deploy` ships changed models under new TargetModels and never overwrites one an instance may have cached.
// Previous versions are kept by a retention (a number of versions or a time) and never the live one deleted.

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import {
  Annotations,
  AssetHashType,
  AssetStaging,
  BundlingOutput,
  CfnOutput,
  CustomResource,
  DockerImage,
  FileSystem,
  Size,
  Validations,
} from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import * as s3deploy from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import { archiveBaseName, versionedKeyPattern, versionedTargetModel } from '../lib/bundle/target-model-name';
import type { Diagnostic } from '../lib/diagnostics';
import { targetModelProblems } from '../lib/repository/mme-rules';
import { ArchiveRetention } from './archive-retention';
import { handlerProvider } from './handler-provider';
import type { WorkerResult } from './model-archive-worker';
import { nagText } from './nag-finding';
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
   * Memory of the upload function; the archives pass through it.
   * @default 1024
   */
  readonly memoryLimit?: number;
  /**
   * Scratch space of the upload function, which must hold the largest archive twice (zip and extracted).
   * @default Size.gibibytes(10)
   */
  readonly ephemeralStorageSize?: Size;
  /**
   * Which previous versions of each archive stay in the bucket after a deployment, for clients still invoking them.
   * The live version (and any newer one pushed by hand) is never deleted.
   * @default ArchiveRetention.versions(3)
   */
  readonly retention?: ArchiveRetention;
  /**
   * A stack output (`<id>TargetModels`) listing the TargetModels, comma-separated.
   * @default true
   */
  readonly output?: boolean;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * Model archives built from local repositories at synth and copied under the endpoint's prefix on deploy, each under
 * a name that holds its content hash. Other objects under the prefix are left alone (no pruning), so archives pushed
 * with the CLI survive a deploy; previous versions of these archives go as `retention` says.
 */
export class ModelArchive extends Construct {
  /** The TargetModels of the archives, `<name>-<hash>.tar.gz`, in the order of `repositories`. */
  public readonly targetModels: string[];
  /** The S3 keys of the archives. */
  public readonly objectKeys: string[];
  /** The upload of the archives. */
  public readonly deployment: s3deploy.BucketDeployment;
  /** The custom resource deleting versions the retention no longer keeps (none with `ArchiveRetention.all()`). */
  public readonly retention?: CustomResource;
  private readonly byName = new Map<string, string>();

  constructor(scope: Construct, id: string, props: ModelArchiveProps) {
    super(scope, id);
    const prefix = props.prefix ?? 'models/';
    const errors: string[] = [];
    const sources = props.repositories.map((r) => (typeof r === 'string' ? { path: r } : r));
    if (sources.length === 0) errors.push('repositories is empty; give at least one model repository directory.');
    const seen = new Set<string>();
    const entries = sources.map((source) => {
      const path = resolve(source.path);
      const name = source.name ?? basename(path);
      if (!existsSync(path) || !statSync(path).isDirectory()) errors.push(`'${source.path}' is not a directory.`);
      if (!NAME.test(name)) errors.push(`archive name '${name}' may hold only letters, digits, '.', '_' and '-'.`);
      // Every version's TargetModel must be one InvokeEndpoint takes (the one rule push and package apply): its length.
      else if (targetModelProblems(versionedTargetModel(name, '0'.repeat(64)))) {
        errors.push(`archive name '${name.slice(0, 40)}...' gives TargetModels ${versionedTargetModel(name, '0'.repeat(64)).length} ` +
          `characters long; SageMaker takes at most 1024. Give it a shorter name.`);
      }
      if (seen.has(name)) errors.push(`two repositories are named '${name}'; give one of them another name.`);
      seen.add(name);
      return { path, name };
    });
    const level = props.compressionLevel;
    if (level !== undefined && !(Number.isInteger(level) && level >= 0 && level <= 9)) {
      errors.push(`compressionLevel must be a whole number from 0 to 9, got ${props.compressionLevel}.`);
    }
    if (prefix !== '' && !prefix.endsWith('/')) errors.push(`prefix '${prefix}' must end with '/'.`);
    errors.push(...(props.retention?._problems() ?? []));
    if (errors.length > 0) throw new Error(`Invalid ModelArchive props (${this.node.path}):\n${errors.map((e) => `  - ${e}`).join('\n')}`);

    const failures: string[] = [];
    let assets: s3assets.Asset[];
    try {
      assets = entries.map(
        ({ path, name }) =>
          new s3assets.Asset(this, `Archive-${name}`, {
            path,
            // The cache key is the repository's content plus what else shapes the archive (its name, the gzip level,
            // the packer's version): an unchanged repository is neither validated nor packed again.
            assetHashType: AssetHashType.CUSTOM,
            assetHash: FileSystem.fingerprint(path, {
              extraHash: JSON.stringify({ name, level: props.compressionLevel, packer: packerVersion() }),
            }),
            bundling: {
              image: DockerImage.fromRegistry('mme-deploy-bundles-locally'), // never pulled: local bundling always runs
              outputType: BundlingOutput.NOT_ARCHIVED,
              local: {
                tryBundle: (outputDir) => {
                  const packed = join(outputDir, `${name}.tar.gz`);
                  const result = packInChildProcess(path, packed, `${name}.tar.gz`, props.compressionLevel);
                  for (const d of result.diagnostics.filter((d) => d.severity !== 'error')) {
                    Annotations.of(this).addWarningV2(`mme-deploy:${d.code}`, formatDiagnostic(d, path));
                  }
                  if (!result.ok) {
                    const errors = result.diagnostics.filter((d) => d.severity === 'error');
                    const lines = errors.map((d) => `  ${formatDiagnostic(d, path)}`).join('\n');
                    failures.push(`model repository '${path}' is invalid:\n${lines}`);
                    throw new Error(failures[failures.length - 1]);
                  }
                  renameSync(packed, join(outputDir, versionedTargetModel(name, result.sha256)));
                  return true;
                },
              },
            },
          }),
      );
    } catch (err) {
      // CDK wraps bundling errors in its own message; say only what is wrong with the repository.
      if (failures.length > 0) throw new Error(`ModelArchive ${this.node.path}: ${failures.join('\n')}`);
      throw err;
    }
    // The staged directory holds the one archive, named by the library's rule when it was packed (now or in an
    // earlier synth whose staged copy is reused).
    this.targetModels = assets.map((asset, i) => stagedTargetModel(asset, entries[i]!.name));
    this.objectKeys = this.targetModels.map((t) => `${prefix}${t}`);
    entries.forEach((e, i) => this.byName.set(e.name, this.targetModels[i]!));

    this.deployment = new s3deploy.BucketDeployment(this, 'Deployment', {
      sources: assets.map((asset) => s3deploy.Source.bucket(asset.bucket, asset.s3ObjectKey)),
      destinationBucket: props.bucket,
      destinationKeyPrefix: prefix === '' ? undefined : prefix,
      prune: false,
      extract: true,
      memoryLimit: props.memoryLimit ?? 1024,
      ephemeralStorageSize: props.ephemeralStorageSize ?? Size.gibibytes(10),
    });
    this.acknowledgeUploadFunction(props.bucket, assets[0]!);
    const retention = props.retention ?? ArchiveRetention.versions(3);
    if (!retention._keepsAll) this.retention = this.pruneOldVersions(props.bucket, prefix, entries.map((e) => e.name), retention);
    if (props.output ?? true) {
      new CfnOutput(this, 'TargetModels', { value: this.targetModels.join(','), description: 'TargetModel names to invoke' });
    }
  }

  /** The TargetModel of the archive named `name` (the directory name unless the source named it). */
  public targetModelOf(name: string): string {
    const found = this.byName.get(archiveBaseName(name));
    if (!found) throw new Error(`${this.node.path} has no archive named '${name}'; it has ${[...this.byName.keys()].join(', ')}.`);
    return found;
  }

  /** After each upload: delete the versions of these archives the retention no longer keeps. */
  private pruneOldVersions(bucket: s3.IBucket, prefix: string, names: string[], retention: ArchiveRetention): CustomResource {
    const provider = handlerProvider(this, {
      resourceType: ARCHIVE_RETENTION_TYPE,
      handler: 'archive-retention',
      description: 'mme-deploy: deletes model archive versions the retention no longer keeps',
      statements: [],
    });
    // Only this construct's own archives, `<prefix><name>-*`: with an empty prefix `<prefix>*` would be the whole bucket.
    const own = names.map((name) => `${prefix}${name}-*`);
    provider.addToRolePolicy({
      Effect: 'Allow',
      Action: ['s3:ListBucket'],
      Resource: bucket.bucketArn,
      Condition: { StringLike: { 's3:prefix': own } },
    });
    provider.addToRolePolicy({ Effect: 'Allow', Action: ['s3:DeleteObject'], Resource: own.map((key) => bucket.arnForObjects(key)) });
    const resource = new CustomResource(this, 'Retention', {
      serviceToken: provider.serviceToken,
      resourceType: ARCHIVE_RETENTION_TYPE,
      properties: {
        Bucket: bucket.bucketName,
        Archives: names.map((name) => ({
          Prefix: `${prefix}${name}-`,
          Pattern: versionedKeyPattern(prefix, name),
          Live: this.objectKeys[names.indexOf(name)],
        })),
        ...retention._properties(),
      },
    });
    resource.node.addDependency(this.deployment);
    return resource;
  }

  /**
   * The upload function is aws-cdk-lib's BucketDeployment handler; its role and runtime are the library's choices.
   * Acknowledge them at that function only, with the reasons.
   */
  private acknowledgeUploadFunction(bucket: s3.IBucket, asset: s3assets.Asset): void {
    const handler = this.deployment.handlerRole.node.scope;
    if (!handler) return;
    const wildcardActions = ['s3:GetObject*', 's3:GetBucket*', 's3:List*', 's3:DeleteObject*', 's3:Abort*'];
    const kmsActions = ['kms:GenerateDataKey*', 'kms:ReEncrypt*'];
    const actionReason =
      'aws-cdk-lib grants its BucketDeployment handler these S3 (and, for SSE-KMS buckets, KMS) action groups to ' +
      'copy the staged archives; the grants are limited to the CDK asset bucket and the model bucket.';
    Validations.of(handler).acknowledge(
      ...[...wildcardActions, ...kmsActions].map((action) => ({
        id: `AwsSolutions-IAM5[Action::${action}]`,
        reason: actionReason,
      })),
      {
        id: `AwsSolutions-IAM5[Resource::${nagText(this, asset.bucket.arnForObjects('*'))}]`,
        reason: 'The handler reads the staged archives, whose keys are content hashes chosen at deploy time, from the CDK asset bucket.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::${nagText(this, bucket.arnForObjects('*'))}]`,
        reason:
          'aws-cdk-lib scopes the handler to the destination bucket\'s objects; it writes only under the model prefix ' +
          '(destinationKeyPrefix) and never prunes.',
      },
      {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        reason: 'The managed policy only lets the upload function write its own CloudWatch Logs.',
      },
      {
        id: 'AwsSolutions-L1',
        reason: 'The runtime of the BucketDeployment handler is pinned by aws-cdk-lib and moves with library upgrades.',
      },
    );
  }
}

const ARCHIVE_RETENTION_TYPE = 'Custom::MmeDeployArchiveRetention';

/** The archive file in `asset`'s staged directory: its name is the TargetModel. */
function stagedTargetModel(asset: s3assets.Asset, name: string): string {
  const staging = asset.node.findChild('Stage') as AssetStaging;
  const files = existsSync(staging.absoluteStagedPath) ? readdirSync(staging.absoluteStagedPath) : [];
  const pattern = new RegExp(versionedKeyPattern('', name));
  const archive = files.find((f) => pattern.test(f));
  if (!archive) throw new Error(`The staged asset of archive '${name}' (${staging.absoluteStagedPath}) holds no ${name}-<hash>.tar.gz.`);
  return archive;
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
  const fromSource = __filename.endsWith('.ts');
  const worker = join(__dirname, `model-archive-worker${fromSource ? '.ts' : '.js'}`);
  const args = [...(fromSource ? ['--import', 'tsx'] : []), worker, repository, outFile, name];
  if (level !== undefined) args.push(String(level));
  // cwd = the package root, so `--import tsx` resolves to our own dev dependency wherever cdk runs from.
  const child = spawnSync(process.execPath, args, { cwd: projectPath(), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const line = child.stdout?.trim().split('\n').pop();
  if (child.status !== 0 || !line) {
    throw new Error(`packing '${repository}' failed: ${child.error?.message ?? child.stderr?.trim() ?? `exit ${child.status}`}`);
  }
  return JSON.parse(line) as WorkerResult;
}
