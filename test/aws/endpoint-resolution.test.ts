// resolveModelLocation, which push, list and remove --endpoint run first: the S3 prefix of an endpoint's model, and
// every refusal on the way (a deleted model, no ModelDataUrl, no such variant, several variants, not multi-model),
// with the exact SageMaker requests it sends.

import {
  DescribeEndpointCommand,
  DescribeEndpointConfigCommand,
  DescribeModelCommand,
  SageMakerClient,
} from '@aws-sdk/client-sagemaker';
import { mockClient } from 'aws-sdk-client-mock';
import { resolveModelLocation } from '../../lib/aws/endpoint';
import { MmeError } from '../../lib/errors';

const sageMaker = mockClient(SageMakerClient);
const client = new SageMakerClient({ region: 'us-east-1' });

interface Variant {
  readonly VariantName: string;
  readonly ModelName?: string;
}

function endpointWith(variants: Variant[], model: Record<string, unknown> | Error): void {
  sageMaker.on(DescribeEndpointCommand).resolves({
    EndpointName: 'mme',
    EndpointConfigName: 'mme-config',
    EndpointStatus: 'InService',
    ProductionVariants: variants.map((v) => ({ VariantName: v.VariantName, CurrentInstanceCount: 1 })),
  } as never);
  sageMaker.on(DescribeEndpointConfigCommand).resolves({
    ProductionVariants: variants.map((v) => ({ ...v, InstanceType: 'ml.g4dn.xlarge', InitialInstanceCount: 1 })),
  } as never);
  if (model instanceof Error) sageMaker.on(DescribeModelCommand).rejects(model);
  else sageMaker.on(DescribeModelCommand).resolves(model as never);
}

const MULTI_MODEL = { PrimaryContainer: { Mode: 'MultiModel', ModelDataUrl: 's3://bucket/models/', Image: 'triton' } };

async function refusal(options: Parameters<typeof resolveModelLocation>[0]): Promise<{ code: string; message: string }> {
  try {
    await resolveModelLocation(options, client);
  } catch (err) {
    expect(err).toBeInstanceOf(MmeError);
    return { code: (err as MmeError).code, message: (err as MmeError).message };
  }
  throw new Error('resolveModelLocation did not refuse');
}

beforeEach(() => sageMaker.reset());

describe('resolveModelLocation', () => {
  it("resolves an endpoint to its model's ModelDataUrl, asking SageMaker exactly three things", async () => {
    endpointWith([{ VariantName: 'AllTraffic', ModelName: 'mme-model' }], MULTI_MODEL);
    const { location, endpoint } = await resolveModelLocation({ endpoint: 'mme' }, client);
    expect(location).toEqual(expect.objectContaining({ bucket: 'bucket', prefix: 'models/' }));
    expect(endpoint).toEqual(expect.objectContaining({ variantName: 'AllTraffic', modelName: 'mme-model', image: 'triton' }));
    expect(sageMaker.calls().map((call) => [call.args[0].constructor.name, call.args[0].input])).toEqual([
      ['DescribeEndpointCommand', { EndpointName: 'mme' }],
      ['DescribeEndpointConfigCommand', { EndpointConfigName: 'mme-config' }],
      ['DescribeModelCommand', { ModelName: 'mme-model' }],
    ]);
  });

  it('takes --s3 as given and asks SageMaker nothing', async () => {
    const { location } = await resolveModelLocation({ s3: 's3://other/prefix/' }, client);
    expect(location).toEqual(expect.objectContaining({ bucket: 'other', prefix: 'prefix/' }));
    expect(sageMaker.calls()).toEqual([]);
  });

  it('refuses both --endpoint and --s3, and neither', async () => {
    expect(await refusal({ endpoint: 'mme', s3: 's3://b/p/' })).toEqual({
      code: 'USAGE',
      message: 'Give either --endpoint NAME or --s3 s3://bucket/prefix/, not both.',
    });
    expect(await refusal({})).toEqual({
      code: 'USAGE',
      message: 'Which endpoint? Give --endpoint NAME (its ModelDataUrl is used) or --s3 s3://bucket/prefix/.',
    });
  });

  it('says the endpoint config points to a deleted model', async () => {
    const gone = Object.assign(new Error('Could not find model "arn:aws:sagemaker:us-east-1:1:model/mme-model".'), {
      name: 'ValidationException',
    });
    endpointWith([{ VariantName: 'AllTraffic', ModelName: 'mme-model' }], gone);
    expect(await refusal({ endpoint: 'mme' })).toEqual({
      code: 'AWS_NOT_FOUND',
      message: "Model 'mme-model' of endpoint 'mme' no longer exists; the endpoint config points to a deleted model.",
    });
  });

  it('refuses a model with no ModelDataUrl', async () => {
    endpointWith([{ VariantName: 'AllTraffic', ModelName: 'mme-model' }], { PrimaryContainer: { Mode: 'MultiModel' } });
    expect(await refusal({ endpoint: 'mme' })).toEqual({
      code: 'ENDPOINT_UNUSABLE',
      message: "Model 'mme-model' of endpoint 'mme' has no ModelDataUrl, so there is no S3 prefix to hold its models.",
    });
  });

  it('refuses a single-model endpoint', async () => {
    endpointWith([{ VariantName: 'AllTraffic', ModelName: 'one' }], { PrimaryContainer: { ModelDataUrl: 's3://b/m.tar.gz' } });
    expect(await refusal({ endpoint: 'mme' })).toEqual({
      code: 'ENDPOINT_UNUSABLE',
      message:
        "Endpoint 'mme' is not a multi-model endpoint: its model 'one' has Mode SingleModel. TargetModel, push, list and " +
        'remove need a model created with Mode: MultiModel.',
    });
  });

  it('refuses a --variant the endpoint lacks, naming those it has', async () => {
    endpointWith([{ VariantName: 'Blue', ModelName: 'm' }, { VariantName: 'Green', ModelName: 'm' }], MULTI_MODEL);
    expect(await refusal({ endpoint: 'mme', variant: 'Red' })).toEqual({
      code: 'USAGE',
      message: "Endpoint 'mme' has no variant 'Red'; its variants are Blue, Green.",
    });
  });

  it('asks for --variant when variants serve different models, and takes the one named', async () => {
    endpointWith([{ VariantName: 'Blue', ModelName: 'a' }, { VariantName: 'Green', ModelName: 'b' }], MULTI_MODEL);
    expect(await refusal({ endpoint: 'mme' })).toEqual({
      code: 'USAGE',
      message: "Endpoint 'mme' has 2 variants with different models (Blue: a, Green: b); choose one with --variant.",
    });
    const { endpoint } = await resolveModelLocation({ endpoint: 'mme', variant: 'Green' }, client);
    expect(endpoint?.modelName).toBe('b');
  });

  it('takes the one model of several variants that share it', async () => {
    endpointWith([{ VariantName: 'Blue', ModelName: 'same' }, { VariantName: 'Green', ModelName: 'same' }], MULTI_MODEL);
    const { endpoint } = await resolveModelLocation({ endpoint: 'mme' }, client);
    expect(endpoint).toEqual(expect.objectContaining({ variantName: 'Blue', modelName: 'same' }));
  });

  it('refuses an endpoint with no variants, and a variant that names no model', async () => {
    endpointWith([], MULTI_MODEL);
    expect(await refusal({ endpoint: 'mme' })).toEqual({
      code: 'ENDPOINT_UNUSABLE',
      message: "Endpoint 'mme' has no production variants.",
    });
    endpointWith([{ VariantName: 'AllTraffic' }], MULTI_MODEL);
    expect(await refusal({ endpoint: 'mme' })).toEqual({
      code: 'ENDPOINT_UNUSABLE',
      message:
        "Variant 'AllTraffic' of endpoint 'mme' names no model (serverless or inference components are not multi-model " +
        'endpoints).',
    });
  });
});
