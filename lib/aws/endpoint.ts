// From an endpoint name to where its models live: DescribeEndpoint -> DescribeEndpointConfig -> DescribeModel ->
// ModelDataUrl, which for a multi-model endpoint is the S3 prefix that holds every TargetModel.

import type { DescribeEndpointCommandOutput, SageMakerClient } from '@aws-sdk/client-sagemaker';
import { MmeError } from '../errors';
import { AwsConnection, createSageMakerClient, loadSageMaker } from './aws-clients';
import { awsErrorName, explainAwsError } from './aws-errors';
import { ModelLocation, parseS3Prefix } from './s3-location';

export interface EndpointVariant {
  readonly variantName: string;
  readonly modelName?: string;
  readonly instanceType?: string;
  readonly initialInstanceCount?: number;
  readonly currentInstanceCount?: number;
  readonly desiredInstanceCount?: number;
}

export interface ResolvedEndpoint {
  readonly endpointName: string;
  readonly endpointConfigName: string;
  readonly status?: string;
  readonly failureReason?: string;
  readonly creationTime?: Date;
  readonly lastModifiedTime?: Date;
  readonly variants: readonly EndpointVariant[];
  /** The variant whose model was followed. */
  readonly variantName: string;
  readonly modelName: string;
  readonly modelDataUrl: string;
  readonly location: ModelLocation;
  readonly image?: string;
  readonly modelCacheSetting?: string;
}

interface Context {
  readonly region?: string;
  readonly profile?: string;
}

/**
 * Follows an endpoint to its model data. Refuses, with a sentence, an endpoint that does not exist, one whose model
 * is not `Mode: MultiModel`, and a choice between variants that the user has to make (`variant`).
 */
export async function resolveEndpoint(
  client: SageMakerClient,
  endpointName: string,
  options: Context & { variant?: string } = {},
): Promise<ResolvedEndpoint> {
  const { DescribeEndpointCommand, DescribeEndpointConfigCommand, DescribeModelCommand } = await loadSageMaker();
  const where = options.region ? ` in ${options.region}` : '';
  let endpoint: DescribeEndpointCommandOutput;
  try {
    endpoint = await client.send(new DescribeEndpointCommand({ EndpointName: endpointName }));
  } catch (err) {
    if (awsErrorName(err) === 'ValidationException' && /Could not find endpoint/i.test((err as Error).message)) {
      const message = `Endpoint '${endpointName}' does not exist${where}. Check the name and --region (aws sagemaker list-endpoints).`;
      throw new MmeError('AWS_NOT_FOUND', message);
    }
    throw explainAwsError(err, { ...options, permission: 'sagemaker:DescribeEndpoint', resource: `endpoint ${endpointName}` });
  }
  const endpointConfigName = endpoint.EndpointConfigName ?? '';
  let config;
  try {
    config = await client.send(new DescribeEndpointConfigCommand({ EndpointConfigName: endpointConfigName }));
  } catch (err) {
    const resource = `endpoint config ${endpointConfigName}`;
    throw explainAwsError(err, { ...options, permission: 'sagemaker:DescribeEndpointConfig', resource });
  }
  const live = new Map((endpoint.ProductionVariants ?? []).map((v) => [v.VariantName, v]));
  const variants: EndpointVariant[] = (config.ProductionVariants ?? []).map((v) => {
    const current = live.get(v.VariantName);
    return {
      variantName: v.VariantName ?? '',
      ...(v.ModelName ? { modelName: v.ModelName } : {}),
      ...(v.InstanceType ? { instanceType: v.InstanceType } : {}),
      ...(v.InitialInstanceCount !== undefined ? { initialInstanceCount: v.InitialInstanceCount } : {}),
      ...(current?.CurrentInstanceCount !== undefined ? { currentInstanceCount: current.CurrentInstanceCount } : {}),
      ...(current?.DesiredInstanceCount !== undefined ? { desiredInstanceCount: current.DesiredInstanceCount } : {}),
    };
  });
  const variant = pickVariant(endpointName, variants, options.variant);
  const modelName = variant.modelName;
  if (!modelName) {
    throw new MmeError(
      'ENDPOINT_UNUSABLE',
      `Variant '${variant.variantName}' of endpoint '${endpointName}' names no model (serverless or inference components ` +
        'are not multi-model endpoints).',
    );
  }
  let model;
  try {
    model = await client.send(new DescribeModelCommand({ ModelName: modelName }));
  } catch (err) {
    if (awsErrorName(err) === 'ValidationException' && /Could not find model/i.test((err as Error).message)) {
      throw new MmeError(
        'AWS_NOT_FOUND',
        `Model '${modelName}' of endpoint '${endpointName}' no longer exists; the endpoint config points to a deleted model.`,
      );
    }
    throw explainAwsError(err, { ...options, permission: 'sagemaker:DescribeModel', resource: `model ${modelName}` });
  }
  const container = model.PrimaryContainer ?? model.Containers?.[0];
  if (container?.Mode !== 'MultiModel') {
    throw new MmeError(
      'ENDPOINT_UNUSABLE',
      `Endpoint '${endpointName}' is not a multi-model endpoint: its model '${modelName}' has Mode ` +
        `${container?.Mode ?? 'SingleModel'}. TargetModel, push, list and remove need a model created with Mode: MultiModel.`,
    );
  }
  const modelDataUrl = container.ModelDataUrl ?? container.ModelDataSource?.S3DataSource?.S3Uri;
  if (!modelDataUrl) {
    throw new MmeError(
      'ENDPOINT_UNUSABLE',
      `Model '${modelName}' of endpoint '${endpointName}' has no ModelDataUrl, so there is no S3 prefix to hold its models.`,
    );
  }
  const cache = container.MultiModelConfig?.ModelCacheSetting;
  return {
    endpointName,
    endpointConfigName,
    ...(endpoint.EndpointStatus ? { status: endpoint.EndpointStatus } : {}),
    ...(endpoint.FailureReason ? { failureReason: endpoint.FailureReason } : {}),
    ...(endpoint.CreationTime ? { creationTime: endpoint.CreationTime } : {}),
    ...(endpoint.LastModifiedTime ? { lastModifiedTime: endpoint.LastModifiedTime } : {}),
    variants,
    variantName: variant.variantName,
    modelName,
    modelDataUrl,
    location: parseS3Prefix(modelDataUrl, `ModelDataUrl of model ${modelName}`),
    ...(container.Image ? { image: container.Image } : {}),
    ...(cache ? { modelCacheSetting: cache } : {}),
  };
}

function pickVariant(endpointName: string, variants: EndpointVariant[], wanted?: string): EndpointVariant {
  if (wanted) {
    const found = variants.find((v) => v.variantName === wanted);
    if (!found) {
      const names = variants.map((v) => v.variantName).join(', ');
      throw new MmeError('USAGE', `Endpoint '${endpointName}' has no variant '${wanted}'; its variants are ${names}.`);
    }
    return found;
  }
  if (variants.length === 0) throw new MmeError('ENDPOINT_UNUSABLE', `Endpoint '${endpointName}' has no production variants.`);
  const models = new Set(variants.map((v) => v.modelName));
  if (models.size > 1) {
    const which = variants.map((v) => `${v.variantName}: ${v.modelName}`).join(', ');
    throw new MmeError(
      'USAGE',
      `Endpoint '${endpointName}' has ${variants.length} variants with different models (${which}); choose one with --variant.`,
    );
  }
  return variants[0]!;
}

export interface LocationOptions extends AwsConnection {
  readonly endpoint?: string;
  readonly s3?: string;
  readonly variant?: string;
}

/** Where the models are: `--s3` as given, or the endpoint's ModelDataUrl. Exactly one of the two is needed. */
export async function resolveModelLocation(
  options: LocationOptions,
  sageMaker?: SageMakerClient,
): Promise<{ location: ModelLocation; endpoint?: ResolvedEndpoint }> {
  if (options.endpoint && options.s3) {
    throw new MmeError('USAGE', 'Give either --endpoint NAME or --s3 s3://bucket/prefix/, not both.');
  }
  if (options.s3) return { location: parseS3Prefix(options.s3) };
  if (!options.endpoint) {
    throw new MmeError('USAGE', 'Which endpoint? Give --endpoint NAME (its ModelDataUrl is used) or --s3 s3://bucket/prefix/.');
  }
  const client = sageMaker ?? (await createSageMakerClient(options));
  const endpoint = await resolveEndpoint(client, options.endpoint, options);
  return { location: endpoint.location, endpoint };
}
