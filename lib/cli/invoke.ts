// `mme-deploy invoke T --endpoint E ...`: one InvokeEndpoint call with a KServe v2 body built from
// files and sentences (shaped by the model's config.pbtxt when --model is given), the outputs printed per tensor.

import { resolve } from 'node:path';
import { MmeError } from '../errors';
import { shellCommand } from '../shell-quote';
import { CliIo, ExitCode, note, UsageError } from './io';
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
  /** Seconds to wait for the answer. @default 60 */
  readonly timeout?: string;
  /** MiB of response body to accept. @default 32 */
  readonly maxResponse?: string;
}

/** InvokeEndpoint refuses larger payloads with HTTP 413. */
export const MAX_INVOKE_PAYLOAD = 6 * 1024 * 1024;
/** A real-time endpoint's container must answer within 60 s, so waiting longer only hides a hang. */
export const DEFAULT_INVOKE_TIMEOUT_SECONDS = 60;
export const DEFAULT_MAX_RESPONSE_MIB = 32;

/**
 * The TargetModel of `invoke`: its first argument, as in `remove` and `local invoke`. The older `--target-model` is still
 * taken, with a note; both at once must agree.
 */
export function targetModelOf(argument: string | undefined, options: InvokeOptions, io: CliIo): string | undefined {
  const option = options.targetModel;
  if (option === undefined) return argument;
  if (argument !== undefined && argument !== option) {
    throw new UsageError(`two TargetModels: '${argument}' and --target-model '${option}'; give one, as the first argument`);
  }
  if (argument === undefined) {
    note(io, `note: --target-model is deprecated; give the TargetModel first: ${shellCommand(['mme-deploy', 'invoke', option])} ...\n`);
  }
  return option;
}

export async function runInvoke(options: InvokeOptions, io: CliIo, signal?: AbortSignal): Promise<number> {
  if (!options.endpoint) throw new MmeError('USAGE', 'Which endpoint? Give --endpoint NAME.');
  if (!options.targetModel) {
    const list = shellCommand(['mme-deploy', 'list', '--endpoint', options.endpoint]);
    throw new MmeError('USAGE', `Which model? Give the TargetModel first: mme-deploy invoke NAME.tar.gz --endpoint ` +
      `${shellCommand([options.endpoint])} ... (see \`${list}\`).`);
  }
  const top = options.top === undefined ? undefined : Number(options.top);
  if (top !== undefined && (!Number.isInteger(top) || top < 1)) {
    throw new MmeError('USAGE', `--top ${options.top} must be a positive whole number.`);
  }
  const timeout = positiveNumber(options.timeout, '--timeout', DEFAULT_INVOKE_TIMEOUT_SECONDS);
  const maxResponse = Math.floor(positiveNumber(options.maxResponse, '--max-response', DEFAULT_MAX_RESPONSE_MIB) * 1024 * 1024);

  const { buildInvokeRequest, decodeInferenceResponse, formatInferenceResponse, inferenceResponseToJson } = await import(
    '../kserve/invoke-request'
  );
  const { RequestTooLargeError } = await import('../kserve/kserve-codec');
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
    { cwd: io.cwd, maxBytes: MAX_INVOKE_PAYLOAD },
  ).catch((err: unknown) => {
    // Refused before it was (wholly) encoded: a 7 MiB request no longer costs seconds to turn down.
    if (!(err instanceof RequestTooLargeError)) throw err;
    const size = `${err.exact ? '' : 'about '}${(err.bytes / 1024 / 1024).toFixed(1)} MiB`;
    const smaller = err.binary ? 'Send fewer or smaller inputs.' : 'Try --binary, which is several times smaller than JSON.';
    throw new MmeError('USAGE', `The request is ${size}; InvokeEndpoint accepts at most 6 MiB. ${smaller}`);
  });

  const { createSageMakerRuntimeClient, loadSageMakerRuntime } = await import('../aws/aws-clients');
  const { explainAwsError } = await import('../aws/aws-errors');
  const { explainInvokeFailure } = await import('../catalog/container-failures');
  const { InvokeEndpointCommand } = await loadSageMakerRuntime();
  const connection = connectionOf(options);
  const client = await createSageMakerRuntimeClient(connection);
  client.middlewareStack.addRelativeTo(responseCap(maxResponse), {
    relation: 'after',
    toMiddleware: 'deserializerMiddleware',
    name: 'mmeDeployResponseCap',
  });
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeout * 1000);
  const onAbort = () => deadline.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
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
      { abortSignal: deadline.signal },
    );
  } catch (err) {
    if (signal?.aborted) {
      throw new MmeError('ABORTED', 'interrupted: the request was cancelled (the endpoint may still run it).');
    }
    if (deadline.signal.aborted) {
      throw new MmeError(
        'AWS_FAILED',
        `No answer from ${options.endpoint} for ${options.targetModel} within ${timeout} s (--timeout); the endpoint ` +
          'may still run the request. A first call includes the model\'s download and load: try again, or raise --timeout.',
      );
    }
    if (err instanceof MmeError) throw err;
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
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
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
    note(io, `(${milliseconds} ms round trip${variant}; the first call to a model includes its download and load)\n`);
  }
  return ExitCode.Ok;
}

function positiveNumber(given: string | undefined, flag: string, fallback: number): number {
  if (given === undefined) return fallback;
  const value = Number(given);
  if (!Number.isFinite(value) || value <= 0) throw new MmeError('USAGE', `${flag} ${given} must be a positive number.`);
  return value;
}

/**
 * An SDK middleware that refuses a response body over `maxBytes` before the SDK collects it into memory: by its
 * Content-Length, else by counting the bytes as they stream in.
 */
function responseCap(maxBytes: number) {
  const refuse = (bytes: string) =>
    new MmeError(
      'AWS_FAILED',
      `The response is ${bytes}, over the ${(maxBytes / 1024 / 1024).toFixed(0)} MiB --max-response allows; nothing was ` +
        'printed. Ask for fewer outputs with --output, or raise --max-response.',
    );
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return (next: (args: any) => Promise<any>) => async (args: unknown) => {
    const result = await next(args);
    const raw = result.response as { headers?: Record<string, string>; body?: NodeJS.ReadableStream & { destroy?: () => void } };
    const length = Number(raw?.headers?.['content-length'] ?? NaN);
    if (Number.isFinite(length) && length > maxBytes) {
      raw.body?.destroy?.();
      throw refuse(`${(length / 1024 / 1024).toFixed(1)} MiB`);
    }
    if (raw?.body && typeof (raw.body as { pipe?: unknown }).pipe === 'function') {
      const { Transform } = await import('node:stream');
      let seen = 0;
      const counted = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          seen += chunk.length;
          done(seen > maxBytes ? refuse(`over ${(maxBytes / 1024 / 1024).toFixed(0)} MiB`) : null, chunk);
        },
      });
      raw.body.on('error', (err: Error) => counted.destroy(err));
      raw.body = raw.body.pipe(counted);
    }
    return result;
  };
}
