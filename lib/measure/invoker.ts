// One way to send a request body to a TargetModel and get its answer or its failure explained, for `smoke` and
// `loadtest`: through InvokeEndpoint on a live endpoint, or straight to a local container's SageMaker port.
// A failure is never thrown: it comes back with a short cause (what `loadtest` counts by) and the explanation
// `invoke`, `local` and `logs` give (lib/catalog/container-failures.ts, lib/logs/known-failures.ts).

import type { SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import { MmeError } from '../errors';
import { AwsConnection, loadSageMakerRuntime } from '../aws/aws-clients';
import { checkProfile } from '../aws/aws-profiles';
import { awsErrorName, explainAwsError } from '../aws/aws-errors';
import { explainInvokeFailure, explainContainerFailure, tritonErrorText } from '../catalog/container-failures';
import { knownFailure } from '../logs/known-failures';
import { MmeContainerClient } from '../local/container-client';
import { modelHash } from '../local/model-store';
import { InvokeConnection, InvokeSigner, RawResponse, SigningCredentials } from './signed-invoke';

export interface InvocationFailure {
  /** Short and stable, what failures are counted by: `ModelError 507`, `ModelNotReadyException`, `ECONNRESET`. */
  readonly cause: string;
  /** The error code: a known failure's (`out-of-memory`) or the MmeError's (`MODEL_ERROR`). */
  readonly code: string;
  /** What happened, why, and what to do. */
  readonly message: string;
}

export type InvokeOutcome =
  | { readonly ok: true; readonly body: Uint8Array; readonly contentType?: string }
  | { readonly ok: false; readonly failure: InvocationFailure };

export interface ModelInvoker {
  /** `endpoint mme` or `local container http://127.0.0.1:8080`, for reports. */
  readonly site: string;
  /** Sends `body` (left unchanged once sent: a load test sends one body many times, its hash kept by identity). */
  invoke(targetModel: string, body: Uint8Array, contentType: string, signal?: AbortSignal): Promise<InvokeOutcome>;
  close(): void;
}

export interface EndpointInvokerOptions extends AwsConnection {
  readonly endpoint: string;
  readonly variant?: string;
  /** Requests in flight at once; the connection pool holds that many sockets. @default 50 */
  readonly maxSockets?: number;
  /** Give up on one request after this many milliseconds (`timeout`). @default 60 000, InvokeEndpoint's own limit */
  readonly timeoutMs?: number;
}

/**
 * Calls InvokeEndpoint with one attempt per request: a retried request would hide its failure and stretch its
 * latency, and a measurement must see both. Each call is one SigV4-signed request on a pooled keep-alive connection
 * (signed-invoke.ts says why not the SDK's send); region, credentials and endpoint come from the SDK's own chains.
 */
export async function endpointInvoker(options: EndpointInvokerOptions): Promise<ModelInvoker> {
  await checkProfile(options.profile);
  const { SageMakerRuntimeClient } = await loadSageMakerRuntime();
  const sdk: SageMakerRuntimeClient = new SageMakerRuntimeClient({
    ...(options.region ? { region: options.region } : {}),
    ...(options.profile ? { profile: options.profile } : {}),
  });
  const config = sdk.config;
  let region: string;
  let base: URL;
  try {
    region = await config.region();
    const configured = await config.serviceConfiguredEndpoint?.();
    const resolved = config.endpointProvider({
      Region: region,
      UseFIPS: await config.useFipsEndpoint(),
      UseDualStack: await config.useDualstackEndpoint(),
      ...(configured ? { Endpoint: configured } : {}),
    });
    base = new URL(resolved.url.href);
  } catch (err) {
    sdk.destroy();
    throw explainAwsError(err, { ...options, permission: 'sagemaker:InvokeEndpoint', resource: `endpoint ${options.endpoint}` });
  }
  let credentials: SigningCredentials | undefined;
  const credentialsNow = async (): Promise<SigningCredentials> => {
    // Refreshed five minutes before they expire, as the SDK does.
    if (!credentials || (credentials.expiration && credentials.expiration.getTime() - Date.now() < 300_000)) {
      credentials = await config.credentials();
    }
    return credentials;
  };
  try {
    await credentialsNow();
  } catch (err) {
    sdk.destroy();
    throw explainAwsError(err, { ...options, permission: 'sagemaker:InvokeEndpoint', resource: `endpoint ${options.endpoint}` });
  }
  const path = `${base.pathname.replace(/\/$/, '')}/endpoints/${encodeURIComponent(options.endpoint)}/invocations`;
  const url = new URL(path, base);
  const signer = new InvokeSigner(url, region, options.variant);
  const connection = new InvokeConnection(url, options.maxSockets ?? 50, options.timeoutMs ?? 60_000);
  const context = { ...options, ...(options.region ? {} : { region }) };
  return {
    site: `endpoint ${options.endpoint}`,
    async invoke(targetModel, body, contentType, signal) {
      try {
        const now = Date.now();
        // Credentials in hand are used without an await until five minutes before they expire.
        const expiring = !credentials || (credentials.expiration && credentials.expiration.getTime() - now < 300_000);
        const headers = await signer.headers(targetModel, contentType, body, expiring ? await credentialsNow() : credentials!, now);
        const response = await connection.request(headers, body, signal);
        if (response.status >= 200 && response.status < 300) {
          const type = response.headers['content-type'];
          return { ok: true, body: response.body, ...(type ? { contentType: String(type) } : {}) };
        }
        return { ok: false, failure: endpointFailure(serviceError(response), context, targetModel) };
      } catch (err) {
        return { ok: false, failure: endpointFailure(err, context, targetModel) };
      }
    },
    close: () => {
      connection.destroy();
      sdk.destroy();
    },
  };
}

/**
 * An error answer as the SDK would raise it: the name from x-amzn-ErrorType (before its `:`), the message and, for a
 * ModelError, the container's OriginalStatusCode, OriginalMessage and LogStreamArn (restJson1, SageMaker Runtime).
 */
export function serviceError(response: RawResponse): Error & Record<string, unknown> {
  const type = String(response.headers['x-amzn-errortype'] ?? '').split(':')[0] ?? '';
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(response.body.toString('utf8')) as Record<string, unknown>;
  } catch {
    // A body that is not JSON: the status says what there is to say.
  }
  const name = type || String(parsed.__type ?? parsed.code ?? '').split('#').pop() || `HTTP ${response.status}`;
  const message = String(parsed.message ?? parsed.Message ?? response.body.toString('utf8').slice(0, 500));
  const error = Object.assign(new Error(message), parsed, { $metadata: { httpStatusCode: response.status } });
  error.name = name;
  return error as Error & Record<string, unknown>;
}

/** An InvokeEndpoint error as a failure: its cause, and the sentence `invoke` prints for it. */
export function endpointFailure(err: unknown, options: EndpointInvokerOptions, targetModel: string): InvocationFailure {
  const e = err as { name?: string; code?: string; OriginalStatusCode?: number; OriginalMessage?: string; message?: string };
  const region = options.region ? { region: options.region } : {};
  const name = awsErrorName(err);
  if (e.code && /^E[A-Z]+$/.test(e.code)) {
    return { cause: e.code, code: 'NETWORK', message: `${targetModel}: the connection failed (${e.code}: ${e.message ?? ''}).` };
  }
  if (name === 'TimeoutError' || name === 'AbortError') {
    return { cause: name === 'AbortError' ? 'aborted' : 'timeout', code: 'TIMEOUT', message: `${targetModel}: no answer in time.` };
  }
  const explained =
    explainInvokeFailure(err, { endpoint: options.endpoint, targetModel, ...region }) ??
    explainAwsError(err, { ...region, ...(options.profile ? { profile: options.profile } : {}), permission: 'sagemaker:InvokeEndpoint',
      resource: `endpoint ${options.endpoint} (TargetModel ${targetModel})` });
  if (name === 'ModelError') {
    const text = tritonErrorText(e.OriginalMessage ?? '');
    return withKnown(`ModelError ${e.OriginalStatusCode ?? ''}`.trim(), explained, text);
  }
  return { cause: name || explained.code, code: explained.code, message: explained.message };
}

/** Adds the known failure's title and fix (the `logs` table) when Triton's text matches one. */
function withKnown(cause: string, explained: MmeError, text: string): InvocationFailure {
  const known = knownFailure(text);
  if (!known) return { cause, code: explained.code, message: explained.message };
  return { cause, code: known.code, message: `${explained.message} ${known.title} ${known.fix}` };
}

export interface LocalInvokerOptions {
  readonly url: URL;
  readonly timeoutMs?: number;
}

/** Sends POST /models/<hash>/invoke to a local container, as SageMaker does for the TargetModel of that name. */
export function localInvoker(options: LocalInvokerOptions): ModelInvoker {
  return {
    site: `local container ${options.url.origin}`,
    async invoke(targetModel, body, contentType, signal) {
      const client = new MmeContainerClient(options.url, signal);
      try {
        const response = await client.invoke(modelHash(targetModel), targetModel, Buffer.from(body), contentType);
        if (response.status >= 200 && response.status < 300) {
          const type = response.headers['content-type'];
          return { ok: true, body: response.body, ...(type ? { contentType: String(type) } : {}) };
        }
        const text = tritonErrorText(response.body);
        const message = explainContainerFailure({ operation: 'invoke', targetModel, status: response.status, text }, { kind: 'local' });
        return { ok: false, failure: withKnown(`HTTP ${response.status}`, new MmeError('CONTAINER_FAILED', message), text) };
      } catch (err) {
        const error = err instanceof MmeError ? err : new MmeError('CONTAINER_UNREACHABLE', (err as Error).message);
        return { ok: false, failure: { cause: error.code, code: error.code, message: error.message } };
      }
    },
    close: () => undefined,
  };
}
