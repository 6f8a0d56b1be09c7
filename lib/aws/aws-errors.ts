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
    return new MmeError(
      'AWS_UNREACHABLE',
      `Could not connect to the service for ${resource} (${code}): check the network, --region and --endpoint-url.`,
    );
  }
  return new MmeError('AWS_FAILED', `${permission} on ${resource} failed: ${name}: ${message}`);
}
