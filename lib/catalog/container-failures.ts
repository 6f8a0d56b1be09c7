// What a failure of the model container means and what to do about it, said once for both ways of reaching it:
// `invoke` sees it through InvokeEndpoint (a ModelError carrying the container's status and body), `local` straight
// from Triton's SageMaker front-end. The statuses are Triton's (server src/sagemaker_server.cc @ e1db8a6):
//   404  INVOKE or UNLOAD of a hash the container has not loaded (:214, :715), with an empty body;
//   409  LOAD of a model already registered under that name or from that directory (:1095-1099, :1112-1116);
//   507  LOAD or INVOKE failed with an out-of-memory text (:409-421, :928-941; the texts at :894-911, among them
//        "CUDA out of memory", "CUDA_OUT_OF_MEMORY", "OOM", "Failed to allocate memory", "No space left on device");
//   400  any other Triton error, as `{"error": "<Triton's text>"}` (HTTP_RESPOND_IF_ERR, :33-42).
// SageMaker's side (https://docs.aws.amazon.com/sagemaker/latest/dg/mms-container-apis.html and
// invoke-multi-model-endpoint.html): a 409 on LOAD means "already loaded"; a 507 makes SageMaker unload the least
// recently used models and retry; InvokeEndpoint itself answers a container failure with HTTP 424 ModelError
// (OriginalStatusCode, OriginalMessage, LogStreamArn), a load still running after 60 s with 429
// ModelNotReadyException (the load goes on for up to 360 s), and a TargetModel it cannot download with
// ValidationError "Failed to download model data".

import { MmeError } from '../errors';
import { shellQuote } from '../shell-quote';
import { MEMORY_REMEDY, tritonFailure } from './triton-failures';

export type ContainerOperation = 'load' | 'invoke' | 'unload' | 'list' | 'describe';

/** One failed request to the container. */
export interface ContainerFailure {
  readonly operation: ContainerOperation;
  readonly targetModel: string;
  /** The container's HTTP status. */
  readonly status: number;
  /** Triton's error text, unwrapped from `{"error": ...}` by `tritonErrorText`; empty when there was none. */
  readonly text: string;
}

/** Where the failure was seen: on an endpoint, through InvokeEndpoint, or from a container on this machine. */
export type FailureSite =
  | { readonly kind: 'endpoint'; readonly endpoint: string }
  | { readonly kind: 'local' };

/** Triton's error text from an error body (`{"error": "..."}`), else the body as text (often empty). */
export function tritonErrorText(body: string | Uint8Array): string {
  const text = (typeof body === 'string' ? body : Buffer.from(body).toString('utf8')).trim();
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    if (typeof parsed.error === 'string') return parsed.error;
  } catch {
    // Not JSON: Triton answers some statuses with an empty body.
  }
  return text;
}

/** The sentence for a failed container request: what happened (with Triton's own text), why, and what to do. */
export function explainContainerFailure(failure: ContainerFailure, site: FailureSite): string {
  const { operation, targetModel, status, text } = failure;
  const detail = text ? `: ${text}` : '';
  const local = site.kind === 'local';
  switch (status) {
    case 404:
      return local
        ? `${targetModel} is not loaded in the container (HTTP 404${detail}). ` +
            `Load it first: \`mme-deploy local load <archive.tar.gz> --name ${shellQuote(targetModel)}\`.`
        : `${targetModel} is not loaded in the container that took the call (HTTP 404${detail}). Check that ${targetModel} ` +
            `is the name of an archive under the endpoint's S3 prefix (\`mme-deploy list --endpoint ${shellQuote(site.endpoint)}\`), ` +
            'spelled exactly, with its .tar.gz; then call again: SageMaker loads a model on the call that needs it.';
    case 409:
      return local
        ? `${targetModel} is already loaded (HTTP 409${detail}). SageMaker never loads a model twice; ` +
            `run \`mme-deploy local unload ${shellQuote(targetModel)}\` first to load a new copy.`
        : `Triton already holds a model registered as ${targetModel} (HTTP 409${detail}). SageMaker takes a 409 on load ` +
            'for "already loaded", so calling again usually works; if it keeps failing, the instance holds a stale copy: ' +
            'update the endpoint to replace its instances.';
    case 507:
      return outOfMemory(failure, site);
    case 400:
      return `Triton refused to ${operation} ${targetModel} (HTTP 400)${detail || ' with no error text'}.${hintFor400(failure, site)}`;
    case 405:
      return local
        ? `The container refused the ${operation} request for ${targetModel} (HTTP 405${detail}); is --url Triton's SageMaker port?`
        : `The container refused to ${operation} ${targetModel} (HTTP 405${detail}).`;
    default:
      return `The container answered HTTP ${status} to ${operation} ${targetModel}${detail}.${causeOf(text)}`;
  }
}

/** " <cause> <fix>" from the one failure table (triton-failures.ts), or "" for a text it has no row for. */
function causeOf(text: string): string {
  const known = tritonFailure(text);
  if (!known) return '';
  const rule = known.rule ? ` (\`mme-deploy validate --mme\` reports it before a push as ${known.rule}.)` : '';
  return ` ${known.title} ${known.fix}${rule}`;
}

// Triton's SageMaker front end answers 507 for any of its out-of-memory strings (sagemaker_server.cc:894-911), among
// them "No space left on device", which is the disk or, from the python backend, /dev/shm: the table tells them apart.
function outOfMemory(failure: ContainerFailure, site: FailureSite): string {
  const { operation, targetModel, text } = failure;
  const doing = operation === 'load' ? 'loading' : operation === 'invoke' ? 'running' : operation === 'unload' ? 'unloading' : 'serving';
  const detail = text ? `: ${text}` : '';
  const known = tritonFailure(text);
  if (known && known.code !== 'out-of-memory') {
    return `${targetModel} failed ${doing} (HTTP 507${detail}). ${known.title} ${known.fix}`;
  }
  if (site.kind === 'local') {
    return (
      `Out of GPU memory ${doing} ${targetModel} (HTTP 507${detail}). On SageMaker the endpoint would now unload the ` +
      'least recently used models and retry; locally, unload another model with `mme-deploy local unload <target>` ' +
      `and try again. To make it fit on the endpoint: ${lowerFirst(MEMORY_REMEDY)}.`
    );
  }
  return (
    `Out of GPU or host memory ${doing} ${targetModel} (HTTP 507${detail}). SageMaker answers a 507 by unloading the ` +
    `least recently used models and trying again, so ${targetModel} did not fit even then. To make it fit: ` +
    `${lowerFirst(MEMORY_REMEDY)}.`
  );
}

const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);

/** Triton's 400 texts that have a known cause, each with what to do. */
function hintFor400(failure: ContainerFailure, site: FailureSite): string {
  const { operation, text } = failure;
  const local = site.kind === 'local';
  if (/(receiving|sending) (FP16|BF16) data via JSON is not supported/.test(text)) {
    return (
      ' Triton takes and returns FP16 and BF16 only as binary tensor data: invoke sends binary+json by itself when it ' +
      `knows the datatypes (${local ? 'from the loaded archive' : 'give --model <archive or directory>'}), or pass --binary.`
    );
  }
  if (/decoupled transaction policy/.test(text)) {
    return ' SageMaker\'s HTTP front-end expects one response per request, so a decoupled model cannot be invoked through it.';
  }
  if (local && /Invalid "url"/.test(text)) {
    return (
      ' The container only accepts archives under /opt/ml/models: mount --models-dir there ' +
      '(`-v "$PWD/mme-local-models:/opt/ml/models"`) and keep --container-root at its default.'
    );
  }
  if (local && operation === 'load' && /no such file|does not exist|failed to (open|stat)/i.test(text)) {
    return ' Is --models-dir the host directory mounted at /opt/ml/models in the container?';
  }
  if (local && !text) {
    // Triton answers a route it does not serve with a bare 400, as for /models on a single-model container.
    return ' Was the container started with -e SAGEMAKER_MULTI_MODEL=true?';
  }
  const cause = causeOf(text);
  if (cause) return cause;
  if (operation === 'load' || isLoadFailure(text)) {
    return (
      ' The archive did not load: check it with `mme-deploy validate --mme <repository>`' +
      (local ? '' : ' and try the load on a GPU machine with `mme-deploy local load <archive>`') +
      '; the container log has Triton\'s full load output.'
    );
  }
  if (!local && REQUEST_MISMATCH.test(text)) {
    return " Give --model <archive or directory> so invoke shapes and types the inputs from the model's config.pbtxt.";
  }
  return '';
}

/** Triton's wording for inputs that do not match the model's config (http_server.cc, core infer_request.cc). */
const REQUEST_MISMATCH = new RegExp(
  [
    'unexpected (shape|datatype|inference (input|output))',
    'expected \\d+ inputs',
    'unexpected size for input',
    "Unable to parse 'data'",
    'shape does not match',
  ].join('|'),
);

/** Triton's wording for a model that failed to load (core model_lifecycle/model_repository_manager messages). */
function isLoadFailure(text: string): boolean {
  return /failed to load|load failed|failed to poll|unable to load|poll failed|no version is available|invalid model name/i.test(text);
}

// ---------------------------------------------------------------------------------------------------------------
// InvokeEndpoint.

export interface InvokeFailureContext {
  readonly endpoint: string;
  readonly targetModel: string;
  readonly region?: string;
}

interface SdkError {
  readonly name?: string;
  readonly message?: string;
  readonly OriginalStatusCode?: number;
  readonly OriginalMessage?: string;
  readonly LogStreamArn?: string;
}

/**
 * An InvokeEndpoint failure explained for a multi-model endpoint, or undefined when it is not one of the invoke's
 * own (access, credentials, throttling: lib/aws/aws-errors.ts says those for every command).
 */
export function explainInvokeFailure(err: unknown, context: InvokeFailureContext): MmeError | undefined {
  const e = (err ?? {}) as SdkError;
  const message = (e.message ?? '').trim();
  const { endpoint, targetModel } = context;
  switch (e.name) {
    case 'ModelError': {
      const status = e.OriginalStatusCode ?? Number(/\((\d{3})\)/.exec(message)?.[1] ?? 0);
      const text = tritonErrorText(e.OriginalMessage ?? '');
      const operation = isLoadFailure(text) ? 'load' : 'invoke';
      const logs = e.LogStreamArn ? ` Container logs: ${e.LogStreamArn}` : '';
      const explained = status
        ? explainContainerFailure({ operation, targetModel, status, text }, { kind: 'endpoint', endpoint })
        : `The model answered with an error: ${text || message}.`;
      return new MmeError('MODEL_ERROR', `${explained}${logs}`, { cause: err });
    }
    case 'ModelNotReadyException':
      return new MmeError(
        'AWS_NOT_READY',
        `${targetModel} is still being downloaded and loaded on endpoint ${endpoint} (ModelNotReadyException: ${message}). ` +
          'InvokeEndpoint waits 60 s; SageMaker goes on loading the model for up to 360 s, so call again in a moment.',
        { cause: err },
      );
    case 'ValidationError':
    case 'ValidationException':
      return explainValidation(message, context, err);
    default:
      return undefined;
  }
}

function explainValidation(message: string, context: InvokeFailureContext, err: unknown): MmeError | undefined {
  const { endpoint, targetModel, region } = context;
  if (/not found/i.test(message) && /endpoint/i.test(message)) {
    return new MmeError(
      'AWS_NOT_FOUND',
      `Endpoint '${endpoint}' does not exist${region ? ` in ${region}` : ''}. Check the name and --region.`,
      { cause: err },
    );
  }
  if (/target model/i.test(message) && /not a multi-model endpoint|does not support/i.test(message)) {
    return new MmeError(
      'ENDPOINT_UNUSABLE',
      `Endpoint '${endpoint}' is not a multi-model endpoint, so it takes no --target-model. (${message})`,
      { cause: err },
    );
  }
  if (/Failed to download model data|does not exist|not found/i.test(message)) {
    return new MmeError(
      'AWS_NOT_FOUND',
      `SageMaker could not load ${targetModel}: ${message} Check the name with \`mme-deploy list --endpoint ${shellQuote(endpoint)}\`: ` +
        "TargetModel is the archive's key below the endpoint's S3 prefix.",
      { cause: err },
    );
  }
  return undefined;
}
