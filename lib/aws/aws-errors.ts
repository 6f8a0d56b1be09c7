// Turns AWS SDK errors into sentences a user can act on: which permission is missing, which endpoint or bucket
// does not exist, what the model itself said. Anything unrecognised keeps the service's own name and message.
// Each carries an error code (lib/errors.ts); the CLI decides the exit code.

import { MmeError } from '../errors';

export interface AwsCallContext {
  /** The IAM action the call needs, e.g. `s3:PutObject`. */
  readonly permission: string;
  /** What it acted on, for messages: `s3://bucket/key`, `endpoint my-mme`. */
  readonly resource: string;
  readonly profile?: string;
  readonly region?: string;
}

interface SdkError {
  name?: string;
  message?: string;
  Code?: string;
  code?: string;
  $metadata?: { httpStatusCode?: number };
  OriginalStatusCode?: number;
  OriginalMessage?: string;
  LogStreamArn?: string;
}

export function awsErrorName(err: unknown): string {
  const e = (err ?? {}) as SdkError;
  return e.name ?? e.Code ?? e.code ?? 'Error';
}

export function httpStatus(err: unknown): number | undefined {
  return ((err ?? {}) as SdkError).$metadata?.httpStatusCode;
}

export function isNotFound(err: unknown): boolean {
  const name = awsErrorName(err);
  return name === 'NotFound' || name === 'NoSuchKey' || httpStatus(err) === 404;
}

/**
 * An MmeError whose code names the failure and whose message says what failed and how to fix it. An MmeError (already
 * a sentence with a code) passes through unchanged.
 */
export function explainAwsError(err: unknown, context: AwsCallContext): MmeError {
  if (err instanceof MmeError) return err;
  const foreign = notAwsProblem(err, context);
  if (foreign) return foreign;
  const e = (err ?? {}) as SdkError;
  const name = awsErrorName(err);
  const message = (e.message ?? String(err)).trim();
  const who = context.profile ? `the credentials of profile '${context.profile}'` : 'the credentials in use';
  const { permission, resource } = context;

  const denied = name === 'AccessDenied' || name === 'AccessDeniedException' || name === 'Forbidden';
  if (denied || (httpStatus(err) === 403 && name !== 'SignatureDoesNotMatch')) {
    return new MmeError(
      'AWS_ACCESS_DENIED',
      `Access denied: ${who} may not ${permission} on ${resource}. Grant ${permission} to that role or user (or pick ` +
        'another --profile).',
    );
  }
  if (name === 'NoSuchBucket') {
    const region = context.region ? ` (region ${context.region})` : '';
    return new MmeError('AWS_NOT_FOUND', `Bucket of ${resource} does not exist${region}. Check --s3, or the endpoint's ModelDataUrl.`);
  }
  if (name === 'CredentialsProviderError' || /Could not load credentials|credential.*not found/i.test(message)) {
    return new MmeError(
      'AWS_CONFIG',
      `No AWS credentials found. Run \`aws configure\` or \`aws sso login\`, set AWS_PROFILE, or pass --profile. (${message})`,
    );
  }
  if (/Region is missing/i.test(message)) {
    return new MmeError('AWS_CONFIG', 'No AWS region is set: pass --region, set AWS_REGION, or give the profile a region.');
  }
  if (['ExpiredToken', 'ExpiredTokenException', 'InvalidClientTokenId', 'UnrecognizedClientException'].includes(name)) {
    return new MmeError(
      'AWS_CONFIG',
      `AWS refused the credentials (${name}): they are expired or invalid. Refresh them (e.g. \`aws sso login\`) and retry.`,
    );
  }
  if (name === 'SignatureDoesNotMatch') {
    return new MmeError(
      'AWS_CONFIG',
      `AWS refused the request signature for ${resource}: the secret key does not match the access key, or the clock is off.`,
    );
  }
  if (/Throttl|TooManyRequests|SlowDown|RequestLimitExceeded/i.test(name)) {
    return new MmeError(
      'AWS_THROTTLED',
      `AWS is throttling ${permission} (${name}) and kept refusing after retries with backoff; try again in a minute.`,
    );
  }
  if (name === 'ModelError') {
    const status = e.OriginalStatusCode ? `HTTP ${e.OriginalStatusCode}` : 'an error';
    const logs = e.LogStreamArn ? ` Container logs: ${e.LogStreamArn}` : '';
    return new MmeError('MODEL_ERROR', `The model answered with ${status}: ${e.OriginalMessage ?? message}.${logs}`);
  }
  if (name === 'ModelNotReadyException') {
    return new MmeError('AWS_NOT_READY', `${resource} is not ready yet (${message}); it may still be downloading ` +
      'or loading. Retry in a moment.');
  }
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ETIMEDOUT' || code === 'ECONNRESET') {
    const called = typeof err === 'object' && err !== null ? REACHED.get(err) : undefined;
    if (called && !isAwsHost(called.url)) {
      return new MmeError('AWS_UNREACHABLE', `${called.url} ${CONNECTION_FAULT[code]} (${code}) on ${permission} for ${resource}: it is ` +
        `no AWS endpoint; ${endpointFix(called.service)}.`);
    }
    return new MmeError(
      'AWS_UNREACHABLE',
      `Could not connect to the service for ${resource} (${code}): check the network, --region and --endpoint-url.`,
    );
  }
  return new MmeError('AWS_FAILED', `${permission} on ${resource} failed: ${name}: ${message}`);
}


// ---- answers from something that is not AWS (AWS_ENDPOINT_URL pointed at a web server, a closed port) ----

/** What one SDK call reached: the endpoint's origin and the service's name in AWS_ENDPOINT_URL_<SERVICE>. */
export interface EndpointCall {
  readonly url: string;
  /** `S3`, `SAGEMAKER`, ... as in AWS_ENDPOINT_URL_<SERVICE>. */
  readonly service: string;
}

/** The HTTP answer of a call, as the SDK received it: status, content type and the first bytes of an error body. */
export interface EndpointAnswer extends EndpointCall {
  readonly status: number;
  readonly contentType?: string;
  readonly head?: string;
}

/**
 * Calls by the SDK error or raw response they produced, written by the clients' middleware (aws-clients.ts,
 * `recordEndpoint`): the SDK's own error names neither the URL nor what came back.
 */
export const REACHED = new WeakMap<object, EndpointCall>();
export const ANSWERED = new WeakMap<object, EndpointAnswer>();

const CONNECTION_FAULT: Record<string, string> = {
  ECONNREFUSED: 'refused the connection',
  ENOTFOUND: 'does not resolve',
  ETIMEDOUT: 'did not answer in time',
  ECONNRESET: 'closed the connection without an answer',
};

function endpointFix(service: string): string {
  const flag = service === 'S3' ? ', or --endpoint-url' : '';
  return `check AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_${service}${flag} (unset them to reach AWS)`;
}

function isAwsHost(url: string): boolean {
  try {
    return /(^|\.)amazonaws\.com(\.cn)?$|(^|\.)api\.aws$/.test(new URL(url).hostname);
  } catch {
    return false;
  }
}

/** JSON, XML and AWS's own event streams: what AWS answers with; anything else (HTML, plain text) is someone else. */
export const AWS_CONTENT = /json|xml|amz|octet-stream|event-stream/i;

/**
 * The one-line explanation when the answer came from something that is not an AWS endpoint: the SDK could not read it
 * (a web page, garbage), or it answered an error in a content type AWS never uses. Undefined for anything else.
 */
function notAwsProblem(err: unknown, context: AwsCallContext): MmeError | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as SdkError & { $response?: RawResponse; $responseBodyText?: string };
  const response = e.$response;
  if (!response) return undefined;
  const answer = ANSWERED.get(response);
  const status = answer?.status ?? response.statusCode ?? 0;
  const contentType = answer?.contentType ?? headerOf(response.headers, 'content-type');
  // The SDK could not read the answer at all (a web page, garbage): no service error was made of it, so it has no
  // $fault (every service exception says whether the client or the server is at fault).
  const unreadable = !('$fault' in e);
  const foreignType = status >= 300 && contentType !== undefined && !AWS_CONTENT.test(contentType);
  // An error status with no error code at all (S3's XML parser found nothing it knows in the body).
  const noCode = answer !== undefined && status >= 300 && (e.message === 'UnknownError' || awsErrorName(err) === 'UnknownError');
  if (!unreadable && !foreignType && !noCode) return undefined;
  if (answer && isAwsHost(answer.url)) return undefined;
  const text = answer?.head ?? e.$responseBodyText ?? (typeof response.body === 'string' ? response.body : undefined);
  const body = text === undefined || text === '' ? 'an empty body' : quoteHead(text);
  const where = answer?.url ?? 'the endpoint';
  const service = answer?.service ?? (context.permission.split(':')[0] ?? '').toUpperCase().replace(/-/g, '_');
  return new MmeError(
    'AWS_CONFIG',
    `${where} is not an AWS endpoint: ${context.permission} got HTTP ${status}${contentType ? ` ${contentType}` : ''} with ` +
      `${body}; ${endpointFix(service)}.`,
  );
}

interface RawResponse {
  readonly statusCode?: number;
  readonly headers?: Record<string, string>;
  readonly body?: unknown;
}

function headerOf(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}

/** The first characters of a body, quoted, with anything unprintable escaped: `"<html><body>Not F..."`. */
export function quoteHead(text: string, length = 32): string {
  const head = [...text.slice(0, length * 2)].slice(0, length).join('');
  const escaped = head.replace(/[^\x20-\x7e]/g, (c) => {
    const code = c.codePointAt(0)!;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
  });
  return `"${escaped.replace(/"/g, '\\"')}${[...text].length > length ? '...' : ''}"`;
}
