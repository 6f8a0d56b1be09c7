// Speaks SageMaker's multi-model container API (POST/GET/DELETE /models, POST /models/<hash>/invoke) to a Triton
// container on this machine, and turns its status codes into messages that say what SageMaker would do.

import { request as httpRequest, IncomingHttpHeaders } from 'node:http';
import { MmeError } from '../errors';

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

export type ContainerOperation = 'load' | 'invoke' | 'unload' | 'list' | 'describe';

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
    throw new MmeError('USAGE', `--url ${text}: give only scheme, host and port (e.g. ${DEFAULT_CONTAINER_URL}); the paths are SageMaker's.`);
  }
  return url;
}

/** A client for one container; every method resolves with the raw response or rejects with an MmeError. */
export class MmeContainerClient {
  constructor(readonly baseUrl: URL) {}

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

  /** `DELETE /models/<hash>`; Triton finds the TargetModel from its own table. */
  unload(hash: string): Promise<ContainerResponse> {
    return this.send('DELETE', `/models/${encodeURIComponent(hash)}`);
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
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => resolvePromise({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        },
      );
      req.on('error', (err: NodeJS.ErrnoException) => reject(connectionError(this.baseUrl, method, path, err)));
      req.end(body);
    });
  }
}

function connectionError(base: URL, method: string, path: string, err: NodeJS.ErrnoException): MmeError {
  const where = `${base.origin}`;
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
  const text = response.body.toString('utf8').trim();
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    if (typeof parsed.error === 'string') return parsed.error;
  } catch {
    // Not JSON: Triton answers some statuses with an empty body.
  }
  return text;
}

/**
 * The message for a non-2xx response, naming the TargetModel, the status and what to do. Statuses follow Triton's
 * SageMaker front-end: 409 already loaded, 507 out of (GPU) memory, 404 not loaded, 400 Triton's own error text.
 */
export function describeFailure(operation: ContainerOperation, targetModel: string, response: ContainerResponse): string {
  const triton = errorText(response);
  const detail = triton ? `: ${triton}` : '';
  const status = response.status;
  switch (status) {
    case 409:
      return (
        `${targetModel} is already loaded (HTTP 409${detail}). SageMaker never loads a model twice; ` +
        `run \`mme-deploy local unload ${targetModel}\` first to load a new copy.`
      );
    case 507:
      return (
        `Out of GPU memory ${operation === 'load' ? 'loading' : 'running'} ${targetModel} (HTTP 507${detail}). ` +
        'On SageMaker the endpoint would now unload the least recently used models and retry; locally, unload ' +
        'another model with `mme-deploy local unload <target>` and try again, or use an instance type with more GPU memory.'
      );
    case 404:
      return (
        `${targetModel} is not loaded in the container (HTTP 404${detail}). ` +
        `Load it first: \`mme-deploy local load <archive.tar.gz> --name ${targetModel}\`.`
      );
    case 400: {
      let hint = '';
      if (/Invalid "url"/.test(triton)) {
        hint =
          ' The container only accepts archives under /opt/ml/models: mount --models-dir there ' +
          '(`-v "$PWD/mme-local-models:/opt/ml/models"`) and keep --container-root at its default.';
      } else if (operation === 'load' && /no such file|does not exist|failed to (open|stat)/i.test(triton)) {
        hint = ' Is --models-dir the host directory mounted at /opt/ml/models in the container?';
      } else if (!triton) {
        // Triton answers a route it does not serve with a bare 400, as for /models on a single-model container.
        hint = ' Was the container started with -e SAGEMAKER_MULTI_MODEL=true?';
      }
      return `Triton refused to ${operation} ${targetModel} (HTTP 400)${detail || ' with no error text'}.${hint}`;
    }
    case 405:
      return `The container refused the ${operation} request for ${targetModel} (HTTP 405${detail}); is --url Triton's SageMaker port?`;
    default:
      return `The container answered HTTP ${status} to ${operation} ${targetModel}${detail}.`;
  }
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
  throw new MmeError('CONTAINER_FAILED', `GET /models answered something that is not a model list: ${response.body.toString('utf8').slice(0, 200)}`);
}
