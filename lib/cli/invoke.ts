// `mme-deploy invoke --endpoint E --target-model T ...`: one InvokeEndpoint call with a KServe v2 body built from
// files and sentences (shaped by the model's config.pbtxt when --model is given), the outputs printed per tensor.

import { resolve } from 'node:path';
import { MmeError } from '../errors';
import { CliIo, ExitCode, UsageError } from './io';
import { AwsCommandOptions, connectionOf } from './aws-options';
import { toJson } from './json';
import type { InvokeInputOptions } from './invoke-flags';

export interface InvokeOptions extends AwsCommandOptions, InvokeInputOptions {
  readonly endpoint?: string;
  readonly targetModel?: string;
  /** The TargetModel's archive or repository directory, read for input names, shapes and datatypes. */
  readonly model?: string;
  /** Send to this production variant (TargetVariant). */
  readonly variant?: string;
}

/** InvokeEndpoint refuses larger payloads with HTTP 413 (aws-anchors-and-user-pain.md §4.2). */
export const MAX_INVOKE_PAYLOAD = 6 * 1024 * 1024;

export async function runInvoke(options: InvokeOptions, io: CliIo): Promise<number> {
  if (!options.endpoint) throw new UsageError('Which endpoint? Give --endpoint NAME.');
  if (!options.targetModel) {
    throw new UsageError('Which model? Give --target-model NAME.tar.gz (see `mme-deploy list --endpoint ' + options.endpoint + '`).');
  }
  const top = options.top === undefined ? undefined : Number(options.top);
  if (top !== undefined && (!Number.isInteger(top) || top < 1)) throw new UsageError(`--top ${options.top} must be a positive whole number.`);

  const { buildInvokeRequest, decodeInferenceResponse, formatInferenceResponse, inferenceResponseToJson } = await import(
    '../aws/invoke-request'
  );
  const { readInvokeModelConfig } = await import('../aws/invoke-model-config');
  const config = options.model ? (await readInvokeModelConfig(resolve(io.cwd, options.model))).config : undefined;
  const request = await buildInvokeRequest(
    {
      ...(options.input ? { inputs: options.input } : {}),
      ...(options.text ? { texts: options.text } : {}),
      ...(options.body !== undefined ? { body: options.body } : {}),
      ...(options.binary ? { binary: true } : {}),
      ...(options.shape ? { shape: options.shape } : {}),
      ...(options.datatype ? { datatype: options.datatype } : {}),
      ...(options.output ? { outputs: options.output } : {}),
    },
    config,
    { cwd: io.cwd },
  );
  if (request.body.length > MAX_INVOKE_PAYLOAD) {
    throw new UsageError(
      `The request is ${(request.body.length / 1024 / 1024).toFixed(1)} MiB; InvokeEndpoint accepts at most 6 MiB. ${options.binary ? 'Send fewer or smaller inputs.' : 'Try --binary, which is several times smaller than JSON.'}`,
    );
  }

  const { createSageMakerRuntimeClient, loadSageMakerRuntime } = await import('../aws/aws-clients');
  const { awsErrorName, explainAwsError } = await import('../aws/aws-errors');
  const { InvokeEndpointCommand } = await loadSageMakerRuntime();
  const connection = connectionOf(options);
  const client = await createSageMakerRuntimeClient(connection);
  const started = Date.now();
  let response;
  try {
    response = await client.send(
      new InvokeEndpointCommand({
        EndpointName: options.endpoint,
        TargetModel: options.targetModel,
        ContentType: request.contentType,
        Body: request.body,
        ...(options.variant ? { TargetVariant: options.variant } : {}),
      }),
    );
  } catch (err) {
    throw invokeError(err, options, awsErrorName(err), explainAwsError);
  } finally {
    client.destroy();
  }
  const milliseconds = Date.now() - started;
  const body = response.Body ?? new Uint8Array();
  const decoded = decodeInferenceResponse(body, response.ContentType);
  if (options.json) {
    io.stdout(toJson(inferenceResponseToJson(decoded)));
  } else {
    io.stdout(formatInferenceResponse(decoded, top ? { top } : {}));
    const variant = response.InvokedProductionVariant ? ` on variant ${response.InvokedProductionVariant}` : '';
    io.stderr(`(${milliseconds} ms round trip${variant}; the first call to a model includes its download and load)\n`);
  }
  return ExitCode.Ok;
}

function invokeError(
  err: unknown,
  options: InvokeOptions,
  name: string,
  explain: typeof import('../aws/aws-errors').explainAwsError,
): Error {
  const message = (err as Error)?.message ?? '';
  if (name === 'ValidationError' || name === 'ValidationException') {
    if (/not found/i.test(message) && /endpoint/i.test(message)) {
      const where = options.region ? ` in ${options.region}` : '';
      return new MmeError('AWS_NOT_FOUND', `Endpoint '${options.endpoint}' does not exist${where}. Check the name and --region.`);
    }
    if (/target model/i.test(message) && /not a multi-model endpoint|does not support/i.test(message)) {
      const text = `Endpoint '${options.endpoint}' is not a multi-model endpoint, so it takes no --target-model. (${message})`;
      return new MmeError('ENDPOINT_UNUSABLE', text);
    }
    if (/Failed to download model data|does not exist|not found/i.test(message)) {
      const check = `Check the name with \`mme-deploy list --endpoint ${options.endpoint}\`.`;
      return new MmeError('AWS_NOT_FOUND', `SageMaker could not load ${options.targetModel}: ${message} ${check}`);
    }
  }
  return explain(err, {
    ...(options.region ? { region: options.region } : {}),
    ...(options.profile ? { profile: options.profile } : {}),
    permission: 'sagemaker:InvokeEndpoint',
    resource: `endpoint ${options.endpoint} (TargetModel ${options.targetModel})`,
  });
}
