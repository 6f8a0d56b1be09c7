// `mme-deploy invoke --endpoint E --target-model T ...`: one InvokeEndpoint call with a KServe v2 body built from
// files and sentences (shaped by the model's config.pbtxt when --model is given), the outputs printed per tensor.

import { resolve } from 'node:path';
import { MmeError } from '../errors';
import { CliIo, ExitCode } from './io';
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
  if (!options.endpoint) throw new MmeError('USAGE', 'Which endpoint? Give --endpoint NAME.');
  if (!options.targetModel) {
    throw new MmeError('USAGE', `Which model? Give --target-model NAME.tar.gz (see \`mme-deploy list --endpoint ${options.endpoint}\`).`);
  }
  const top = options.top === undefined ? undefined : Number(options.top);
  if (top !== undefined && (!Number.isInteger(top) || top < 1)) {
    throw new MmeError('USAGE', `--top ${options.top} must be a positive whole number.`);
  }

  const { buildInvokeRequest, decodeInferenceResponse, formatInferenceResponse, inferenceResponseToJson } = await import(
    '../aws/invoke-request'
  );
  const { JSON_CONTENT_TYPE } = await import('../aws/kserve-codec');
  const { readInvokeModelConfig } = await import('../aws/invoke-model-config');
  const config = options.model ? (await readInvokeModelConfig(resolve(io.cwd, options.model))).config : undefined;
  const request = await buildInvokeRequest(
    {
      ...(options.input ? { inputs: options.input } : {}),
      ...(options.text ? { texts: options.text } : {}),
      ...(options.body !== undefined ? { body: options.body } : {}),
      ...(options.binary !== undefined ? { binary: options.binary } : {}),
      ...(options.shape ? { shape: options.shape } : {}),
      ...(options.datatype ? { datatype: options.datatype } : {}),
      ...(options.output ? { outputs: options.output } : {}),
    },
    config,
    { cwd: io.cwd },
  );
  if (request.body.length > MAX_INVOKE_PAYLOAD) {
    const mebibytes = (request.body.length / 1024 / 1024).toFixed(1);
    const json = request.contentType === JSON_CONTENT_TYPE;
    const smaller = json ? 'Try --binary, which is several times smaller than JSON.' : 'Send fewer or smaller inputs.';
    throw new MmeError('USAGE', `The request is ${mebibytes} MiB; InvokeEndpoint accepts at most 6 MiB. ${smaller}`);
  }

  const { createSageMakerRuntimeClient, loadSageMakerRuntime } = await import('../aws/aws-clients');
  const { explainAwsError } = await import('../aws/aws-errors');
  const { explainInvokeFailure } = await import('../catalog/container-failures');
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
    const region = options.region ? { region: options.region } : {};
    throw (
      explainInvokeFailure(err, { endpoint: options.endpoint, targetModel: options.targetModel, ...region }) ??
      explainAwsError(err, {
        ...region,
        ...(options.profile ? { profile: options.profile } : {}),
        permission: 'sagemaker:InvokeEndpoint',
        resource: `endpoint ${options.endpoint} (TargetModel ${options.targetModel})`,
      })
    );
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
