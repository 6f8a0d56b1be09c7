// ModelArchive: validates and packs local Triton model repositories at synth time (cached by their content hash)
// and deploys them as `<prefix><name>.tar.gz`, so `cdk deploy` ships the models with the endpoint.

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { Annotations, AssetHashType, BundlingOutput, DockerImage, FileSystem, Size, Validations } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import * as s3deploy from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import type { Diagnostic } from '../lib/diagnostics';
import type { WorkerResult } from './model-archive-worker';
import { nagText } from './nag-finding';
import { projectPath } from './project-path';

/** One model repository to ship. */
export interface ModelRepositorySource {
  /** The repository directory (its subdirectories are models; one ensemble when there are several). */
  readonly path: string;
  /**
   * The archive name: the object is `<prefix><name>.tar.gz` and invocations use TargetModel `<name>.tar.gz`.
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
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * Model archives built from local repositories at synth and copied under the endpoint's prefix on deploy. Other
 * objects under the prefix are left alone (no pruning), so archives pushed with the CLI survive a deploy.
 */
export class ModelArchive extends Construct {
  /** The TargetModel names of the archives, `<name>.tar.gz`. */
  public readonly targetModels: string[];
  /** The S3 keys of the archives. */
  public readonly objectKeys: string[];
  public readonly deployment: s3deploy.BucketDeployment;

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
      if (seen.has(name)) errors.push(`two repositories are named '${name}'; give one of them another name.`);
      seen.add(name);
      return { path, name };
    });
    if (props.compressionLevel !== undefined && !(Number.isInteger(props.compressionLevel) && props.compressionLevel >= 0 && props.compressionLevel <= 9)) {
      errors.push(`compressionLevel must be a whole number from 0 to 9, got ${props.compressionLevel}.`);
    }
    if (prefix !== '' && !prefix.endsWith('/')) errors.push(`prefix '${prefix}' must end with '/'.`);
    if (errors.length > 0) throw new Error(`Invalid ModelArchive props (${this.node.path}):\n${errors.map((e) => `  - ${e}`).join('\n')}`);

    this.targetModels = entries.map((e) => `${e.name}.tar.gz`);
    this.objectKeys = this.targetModels.map((t) => `${prefix}${t}`);

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
                  const result = packInChildProcess(path, join(outputDir, `${name}.tar.gz`), `${name}.tar.gz`, props.compressionLevel);
                  for (const d of result.diagnostics.filter((d) => d.severity !== 'error')) {
                    Annotations.of(this).addWarningV2(`mme-deploy:${d.code}`, formatDiagnostic(d, path));
                  }
                  if (!result.ok) {
                    const errors = result.diagnostics.filter((d) => d.severity === 'error');
                    failures.push(`model repository '${path}' is invalid:\n${errors.map((d) => `  ${formatDiagnostic(d, path)}`).join('\n')}`);
                    throw new Error(failures[failures.length - 1]);
                  }
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

    this.deployment = new s3deploy.BucketDeployment(this, 'Deployment', {
      sources: assets.map((asset) => s3deploy.Source.bucket(asset.bucket, asset.s3ObjectKey)),
      destinationBucket: props.bucket,
      destinationKeyPrefix: prefix === '' ? undefined : prefix,
      prune: false,
      extract: true,
      memoryLimit: props.memoryLimit ?? 1024,
      ephemeralStorageSize: props.ephemeralStorageSize ?? Size.gibibytes(10),
    });
    this.acknowledgeUploadFunction(props.bucket, assets[0]);
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
