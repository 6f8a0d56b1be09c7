// Speaks SageMaker's multi-model container API (POST/GET/DELETE /models, POST /models/<hash>/invoke) to a Triton
// container on this machine, and turns its status codes into messages that say what SageMaker would do.

import { request as httpRequest, IncomingHttpHeaders } from 'node:http';
import { MmeError } from '../errors';
import { ContainerOperation, explainContainerFailure, tritonErrorText } from '../catalog/container-failures';

/** The local container's SageMaker port, as `docker run -p 8080:8080` publishes it. */
export const DEFAULT_CONTAINER_URL = 'http://127.0.0.1:8080';

/** SageMaker passes the TargetModel in this header; Triton uses it as the model's name. */
export const TARGET_MODEL_HEADER = 'X-Amzn-SageMaker-Target-Model';

export interface ContainerResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** One entry of `GET /models`; Triton prints `{}` for models whose Triton name is not their hash. */
export interface ListedModel {
  readonly modelName?: string;
  readonly modelUrl?: string;
}

export type { ContainerOperation } from '../catalog/container-failures';

/** Parses and checks `--url`: an http URL with no path beyond `/`. */
export function parseContainerUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new MmeError('USAGE', `--url ${JSON.stringify(text)} is not a URL; give the container's address, e.g. ${DEFAULT_CONTAINER_URL}.`);
  }
  if (url.protocol !== 'http:') {
    throw new MmeError('USAGE', `--url ${text}: the container's SageMaker port speaks plain http (e.g. ${DEFAULT_CONTAINER_URL}).`);
  }
  if (url.pathname !== '/' || url.search || url.hash) {
    throw new MmeError(
      'USAGE',
      `--url ${text}: give only scheme, host and port (e.g. ${DEFAULT_CONTAINER_URL}); the paths are SageMaker's.`,
    );
  }
  return url;
}

/**
 * A client for one container; every method resolves with the raw response or rejects with an MmeError:
 * CONTAINER_UNREACHABLE when nothing answers or what answers is not Triton's SageMaker server (a web page),
 * ABORTED when `signal` aborts a request.
 */
export class MmeContainerClient {
  constructor(
    readonly baseUrl: URL,
    private readonly signal?: AbortSignal,
  ) {}

  /** `POST /models`: what SageMaker sends after extracting an archive. */
  load(hash: string, targetModel: string, url: string): Promise<ContainerResponse> {
    const body = Buffer.from(JSON.stringify({ model_name: hash, url }), 'utf8');
    return this.send('POST', '/models', body, { 'Content-Type': 'application/json', [TARGET_MODEL_HEADER]: targetModel });
  }

  /** `POST /models/<hash>/invoke` with a KServe v2 body. */
  invoke(hash: string, targetModel: string, body: Buffer, contentType: string): Promise<ContainerResponse> {
    return this.send('POST', `/models/${encodeURIComponent(hash)}/invoke`, body, {
      'Content-Type': contentType,
      [TARGET_MODEL_HEADER]: targetModel,
    });
  }

  /**
   * `DELETE /models/<hash>` with the TargetModel header, as SageMaker sends it. Triton unloads the model named in the
   * header and falls back to the hash without it (triton-inference-server/server src/sagemaker_server.cc:701-707, then
   * TRITONSERVER_ServerUnloadModelAndDependents at :727): no model is named after the hash, so without the header it
   * unloads nothing, polls for up to 350 s (:746-785) and answers 200 with the TargetModel still loaded.
   */
  unload(hash: string, targetModel: string): Promise<ContainerResponse> {
    return this.send('DELETE', `/models/${encodeURIComponent(hash)}`, undefined, { [TARGET_MODEL_HEADER]: targetModel });
  }

  list(): Promise<ContainerResponse> {
    return this.send('GET', '/models');
  }

  describe(hash: string): Promise<ContainerResponse> {
    return this.send('GET', `/models/${encodeURIComponent(hash)}`);
  }

  private send(method: string, path: string, body?: Buffer, headers: Record<string, string> = {}): Promise<ContainerResponse> {
    const target = new URL(path, this.baseUrl);
    return new Promise((resolvePromise, reject) => {
      const req = httpRequest(
        target,
        {
          method,
          headers: { ...headers, ...(body ? { 'Content-Length': String(body.length) } : {}), Accept: '*/*' },
          ...(this.signal ? { signal: this.signal } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', (err: NodeJS.ErrnoException) => reject(connectionError(this.baseUrl, method, path, err)));
          res.on('end', () => {
            const response = { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) };
            const notTriton = notTritonReason(response);
            if (notTriton) {
              reject(
                new MmeError(
                  'CONTAINER_UNREACHABLE',
                  `${this.baseUrl.origin} is not a Triton container's SageMaker port: ` +
                    `${method} ${path} answered HTTP ${response.status} with ${notTriton}, where Triton answers JSON. Pass the ` +
                    `port the container publishes as 8080 with --url (it runs \`serve\` with SAGEMAKER_MULTI_MODEL=true).`,
                ),
              );
            } else resolvePromise(response);
          });
        },
      );
      req.on('error', (err: NodeJS.ErrnoException) => reject(connectionError(this.baseUrl, method, path, err)));
      req.end(body);
    });
  }
}

/**
 * Why a response cannot come from Triton's SageMaker server, or undefined: Triton answers JSON or nothing, never a
 * web page (a proxy, a dashboard or another service on the port would).
 */
function notTritonReason(response: ContainerResponse): string | undefined {
  const type = String(response.headers['content-type'] ?? '').toLowerCase();
  const start = response.body.subarray(0, 256).toString('utf8').trimStart().toLowerCase();
  if (type.includes('html') || start.startsWith('<!doctype html') || start.startsWith('<html')) return 'a web page';
  if (type.includes('xml') || start.startsWith('<?xml')) return 'an XML document';
  return undefined;
}

function connectionError(base: URL, method: string, path: string, err: NodeJS.ErrnoException): MmeError {
  const where = `${base.origin}`;
  if (err.name === 'AbortError') {
    return new MmeError('ABORTED', `interrupted: ${method} ${path} was cancelled (the container may still complete it).`);
  }
  if (err.code === 'ECONNREFUSED' || err.code === 'ECONNRESET' || err.code === 'EHOSTUNREACH') {
    return new MmeError(
      'CONTAINER_UNREACHABLE',
      `No container answers at ${where} (${err.code} on ${method} ${path}). Start one as docs/local.md shows ` +
        '(`docker run --gpus all -p 127.0.0.1:8080:8080 -e SAGEMAKER_MULTI_MODEL=true ' +
        '-v "$PWD/mme-local-models:/opt/ml/models" <image> serve`), wait for "Started Sagemaker HTTPService", ' +
        'or pass --url.',
    );
  }
  return new MmeError('CONTAINER_UNREACHABLE', `${method} ${where}${path} failed: ${err.message}`);
}

/** Triton's error text from an error response (`{"error": "..."}`), else the body as text. */
export function errorText(response: ContainerResponse): string {
  return tritonErrorText(response.body);
}

/** The message for a non-2xx response, naming the TargetModel, the status and what to do (lib/catalog/container-failures.ts). */
export function describeFailure(operation: ContainerOperation, targetModel: string, response: ContainerResponse): string {
  return explainContainerFailure({ operation, targetModel, status: response.status, text: errorText(response) }, { kind: 'local' });
}

/** Returns the response when its status is 2xx, else throws an MmeError with the mapped message. */
export function expectSuccess(operation: ContainerOperation, targetModel: string, response: ContainerResponse): ContainerResponse {
  if (response.status >= 200 && response.status < 300) return response;
  throw new MmeError('CONTAINER_FAILED', describeFailure(operation, targetModel, response));
}

/** The entries of a `GET /models` body; an unparseable body is an MmeError. */
export function parseModelList(response: ContainerResponse): ListedModel[] {
  try {
    const parsed = JSON.parse(response.body.toString('utf8')) as { models?: unknown };
    if (Array.isArray(parsed.models)) {
      return parsed.models.map((entry) => {
        const item = (entry ?? {}) as Record<string, unknown>;
        return {
          ...(typeof item.modelName === 'string' ? { modelName: item.modelName } : {}),
          ...(typeof item.modelUrl === 'string' ? { modelUrl: item.modelUrl } : {}),
        };
      });
    }
  } catch {
    // Reported below.
  }
  throw new MmeError(
    'CONTAINER_FAILED',
    `GET /models answered something that is not a model list: ${response.body.toString('utf8').slice(0, 200)}`,
  );
}
