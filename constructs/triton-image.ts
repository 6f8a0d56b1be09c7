// TritonImage: the three ways to name the Triton container of a GPU multi-model endpoint (the SageMaker Triton image,
// a Dockerfile built as a CDK asset, an ECR repository), each bound to the endpoint that uses it.

import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Annotations, Aws, CfnMapping, Stack, Token } from 'aws-cdk-lib';
import * as ecr from 'aws-cdk-lib/aws-ecr';
import * as ecrAssets from 'aws-cdk-lib/aws-ecr-assets';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import {
  DEFAULT_TRITON_VERSION,
  TRITON_REPOSITORY,
  isTritonVersion,
  listedTritonVersions,
  tritonImageRegions,
  tritonImageRegistry,
  tritonImageUri,
  tritonVersionRegions,
} from '../lib/catalog/triton-images';
import { projectPath } from './project-path';

/** What an image gives the endpoint that binds it. */
export interface TritonImageConfig {
  /** The image URI for `PrimaryContainer.Image` (may hold tokens). */
  readonly imageUri: string;
  /** The Triton release (`YY.MM`) when known. */
  readonly tritonVersion?: string;
}

/** The Triton container image of a multi-model endpoint. */
export abstract class TritonImage {
  /**
   * The SageMaker NVIDIA Triton image `sagemaker-tritonserver:<version>-py3`, from the account that hosts it in the
   * stack's region (our own table, lib/catalog/triton-images.ts). A stack with a concrete region gets the literal URI;
   * an environment-agnostic stack gets a `CfnMapping` looked up with `AWS::Region` at deploy time.
   *
   * @param version the Triton release, `YY.MM` (default `DEFAULT_TRITON_VERSION`, which runs on g4dn)
   */
  public static fromSageMakerDlc(version: string = DEFAULT_TRITON_VERSION): TritonImage {
    return new SageMakerDlcImage(version);
  }

  /**
   * A Triton image built from a Dockerfile directory as a CDK Docker image asset (built and pushed by `cdk deploy`,
   * only hashed at synth). The image must keep Triton's SageMaker `serve` entrypoint and the label
   * `com.amazonaws.sagemaker.capabilities.multi-models=true`.
   *
   * The Triton release the endpoint checks GPU drivers against is the one the build will use: the tag of
   * `buildArgs.BASE_IMAGE` (`...tritonserver:24.08-py3`), else `buildArgs.TRITON_VERSION`, else the Dockerfile's
   * `ARG TRITON_VERSION=` default or its `FROM` tag.
   *
   * The image is built for `linux/amd64` unless `options.platform` says otherwise: SageMaker's GPU instances are x86_64,
   * and Docker on an Apple-silicon machine would otherwise build an arm64 image the endpoint cannot start.
   *
   * @param directory the build context (default: this project's `triton-image/` directory)
   * @param options Docker image asset options @default - `platform: Platform.LINUX_AMD64`
   */
  public static fromAsset(directory?: string, options: ecrAssets.DockerImageAssetOptions = {}): TritonImage {
    return new AssetImage(directory ?? projectPath('triton-image'), { platform: ecrAssets.Platform.LINUX_AMD64, ...options });
  }

  /**
   * An image already in an ECR repository of this account.
   *
   * @param tag the image tag (default `latest`)
   */
  public static fromEcrRepository(repository: ecr.IRepository, tag: string = 'latest'): TritonImage {
    return new RepositoryImage(repository, tag);
  }

  /**
   * An image in the ECR repository of this account named `repositoryName`, imported where the endpoint is.
   *
   * @param tag the image tag (default `latest`)
   */
  public static fromEcrRepositoryName(repositoryName: string, tag: string = 'latest'): TritonImage {
    return new RepositoryImage((scope) => ecr.Repository.fromRepositoryName(scope, 'TritonImageRepository', repositoryName), tag);
  }

  /** Resolves the image for `scope` and lets `grantee` (the model's role) pull it. */
  public abstract bind(scope: Construct, grantee: iam.IGrantable): TritonImageConfig;
}

class SageMakerDlcImage extends TritonImage {
  constructor(private readonly version: string) {
    super();
  }

  public bind(scope: Construct, grantee: iam.IGrantable): TritonImageConfig {
    if (!isTritonVersion(this.version)) {
      throw new Error(
        `TritonImage.fromSageMakerDlc: version '${this.version}' is not of the form YY.MM (for example '${DEFAULT_TRITON_VERSION}').`,
      );
    }
    const stack = Stack.of(scope);
    const tag = `${this.version}-py3`;
    if (!tritonVersionRegions(this.version)) {
      Annotations.of(scope).addWarningV2(
        'mme-deploy:unlisted-triton-version',
        `The SageMaker SDK does not list Triton image ${this.version} (it lists ${listedTritonVersions().join(', ')}); the ` +
          'deployment fails if the tag does not exist in the region. Check AWS\'s list of available images first.',
      );
    }
    let account: string;
    let imageUri: string;
    if (Token.isUnresolved(stack.region)) {
      const mapping = regionMapping(stack, this.version);
      account = mapping.findInMap(Aws.REGION, 'account');
      const suffix = mapping.findInMap(Aws.REGION, 'domainSuffix');
      imageUri = `${account}.dkr.ecr.${Aws.REGION}.${suffix}/${TRITON_REPOSITORY}:${tag}`;
    } else {
      imageUri = tritonImageUri(stack.region, this.version); // throws, naming the known regions
      account = tritonImageRegistry(stack.region)!.account;
    }
    // The execution role pulls the image (SageMaker checks it at CreateModel): repository-scoped pull rights plus
    // GetAuthorizationToken, which has no resource-level permissions.
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['ecr:BatchCheckLayerAvailability', 'ecr:GetDownloadUrlForLayer', 'ecr:BatchGetImage'],
      resourceArns: [`arn:${stack.partition}:ecr:${stack.region}:${account}:repository/${TRITON_REPOSITORY}`],
    });
    iam.Grant.addToPrincipal({ grantee, actions: ['ecr:GetAuthorizationToken'], resourceArns: ['*'] });
    return { imageUri, tritonVersion: this.version };
  }
}

/**
 * One mapping per stack and version: region → { account, domainSuffix }, for the regions where the SDK lists the
 * version (every region of the catalog for an unlisted one), so a deploy elsewhere fails before any resource changes.
 */
function regionMapping(stack: Stack, version: string): CfnMapping {
  const regions = tritonVersionRegions(version);
  const id = regions ? `TritonImageRegistryMap${version.replace('.', '')}` : 'TritonImageRegistryMap';
  const existing = stack.node.tryFindChild(id);
  if (existing) return existing as CfnMapping;
  const mapping: Record<string, Record<string, string>> = {};
  for (const region of regions ?? tritonImageRegions()) {
    const registry = tritonImageRegistry(region)!;
    mapping[region] = { account: registry.account, domainSuffix: registry.domainSuffix };
  }
  return new CfnMapping(stack, id, { mapping });
}

const MME_LABEL = /com\.amazonaws\.sagemaker\.capabilities\.multi-models\s*=\s*"?true/;
const TRITON_BASE = /^\s*FROM\s+\S*(sagemaker-tritonserver|tritonserver)\S*/im;

class AssetImage extends TritonImage {
  constructor(
    private readonly directory: string,
    private readonly options: ecrAssets.DockerImageAssetOptions,
  ) {
    super();
  }

  public bind(scope: Construct, grantee: iam.IGrantable): TritonImageConfig {
    const directory = resolve(this.directory);
    const dockerfile = join(directory, this.options.file ?? 'Dockerfile');
    if (!existsSync(directory) || !statSync(directory).isDirectory()) {
      throw new Error(`TritonImage.fromAsset: '${directory}' is not a directory; give the Docker build context.`);
    }
    if (!existsSync(dockerfile)) {
      throw new Error(`TritonImage.fromAsset: no Dockerfile at '${dockerfile}'.`);
    }
    const text = readFileSync(dockerfile, 'utf8');
    // A GPU MME refuses images without the multi-models label; SageMaker's and NVIDIA's Triton images carry it.
    if (!MME_LABEL.test(text) && !TRITON_BASE.test(text)) {
      Annotations.of(scope).addWarningV2(
        'mme-deploy:image-label',
        `${dockerfile} neither builds FROM a Triton image nor sets LABEL com.amazonaws.sagemaker.capabilities.multi-models=true; ` +
          'SageMaker rejects a multi-model endpoint image without that label.',
      );
    }
    const tritonVersion = assetTritonVersion(text, this.options.buildArgs ?? {});
    const asset = new ecrAssets.DockerImageAsset(scope, 'TritonImageAsset', { ...this.options, directory });
    asset.repository.grantPull(grantee);
    return { imageUri: asset.imageUri, tritonVersion };
  }
}

/**
 * The Triton release an asset build will produce, from its build args over the Dockerfile's defaults. Throws when the
 * build args contradict each other or the build would fail on triton-image's version guard, so synth says it first.
 */
function assetTritonVersion(dockerfile: string, buildArgs: Record<string, string>): string | undefined {
  const fromArg = buildArgs.TRITON_VERSION;
  if (fromArg !== undefined && !isTritonVersion(fromArg)) {
    throw new Error(
      `TritonImage.fromAsset: buildArgs.TRITON_VERSION '${fromArg}' is not of the form YY.MM ` +
        `(for example '${DEFAULT_TRITON_VERSION}').`,
    );
  }
  const fromBase =
    buildArgs.BASE_IMAGE !== undefined
      ? tritonVersionOfTag(buildArgs.BASE_IMAGE.replace(/@.*$/, '').split(':').pop() ?? '')
      : undefined;
  if (fromBase && fromArg && fromBase !== fromArg) {
    throw new Error(
      `TritonImage.fromAsset: buildArgs.BASE_IMAGE is Triton ${fromBase} but buildArgs.TRITON_VERSION is ${fromArg}; ` +
        'make them name the same release.',
    );
  }
  // triton-image/Dockerfile pins its default release by digest: another TRITON_VERSION needs its own BASE_DIGEST.
  const pinnedDigest = /^\s*ARG\s+BASE_DIGEST\s*=\s*(sha256:[0-9a-f]{64})/m.exec(dockerfile)?.[1];
  const defaultVersion = tritonVersionOf(dockerfile);
  if (
    fromArg &&
    fromArg !== defaultVersion &&
    pinnedDigest &&
    buildArgs.BASE_DIGEST === undefined &&
    buildArgs.BASE_IMAGE === undefined
  ) {
    throw new Error(
      `TritonImage.fromAsset: buildArgs.TRITON_VERSION ${fromArg} differs from the Dockerfile's ${defaultVersion}, ` +
        'whose base is pinned by digest; ' +
        `also set buildArgs.BASE_DIGEST ('' to follow the tag, or the digest of ${fromArg}: scripts/pin-base-image.sh).`,
    );
  }
  return fromBase ?? fromArg ?? defaultVersion;
}

/** The Triton release a Dockerfile pins through `ARG TRITON_VERSION=YY.MM` or its FROM tag, if it says. */
function tritonVersionOf(dockerfile: string): string | undefined {
  const arg = /^\s*ARG\s+TRITON_VERSION\s*=\s*"?(\d{2}\.\d{2})/m.exec(dockerfile);
  if (arg) return arg[1];
  const from = /^\s*FROM\s+\S*tritonserver:(\d{2}\.\d{2})/im.exec(dockerfile);
  return from?.[1];
}

class RepositoryImage extends TritonImage {
  constructor(
    private readonly repository: ecr.IRepository | ((scope: Construct) => ecr.IRepository),
    private readonly tag: string,
  ) {
    super();
  }

  public bind(scope: Construct, grantee: iam.IGrantable): TritonImageConfig {
    const repository = typeof this.repository === 'function' ? this.repository(scope) : this.repository;
    repository.grantPull(grantee);
    return { imageUri: repository.repositoryUriForTag(this.tag), tritonVersion: tritonVersionOfTag(this.tag) };
  }
}

/** `24.09` of a tag like `24.09-py3`, when the tag follows Triton's naming. */
function tritonVersionOfTag(tag: string): string | undefined {
  return /^(\d{2}\.\d{2})(-|$)/.exec(tag)?.[1];
}
