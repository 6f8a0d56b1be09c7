// Creates the AWS SDK clients the live-endpoint commands use, loading each SDK package only when a command needs it
// (so `--help` and `validate` never pay for it). Credentials come from the SDK's default chain or a named profile.

import type { ApplicationAutoScalingClient } from '@aws-sdk/client-application-auto-scaling';
import type { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SageMakerClient } from '@aws-sdk/client-sagemaker';
import type { SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import { checkProfile } from './aws-profiles';
import { ANSWERED, AWS_CONTENT, REACHED } from './aws-errors';

export interface AwsConnection {
  /** @default - the SDK's region chain (AWS_REGION, the profile's region) */
  readonly region?: string;
  /** A profile from ~/.aws/config and ~/.aws/credentials. @default - the default credential chain */
  readonly profile?: string;
  /** An S3-compatible endpoint (MinIO, s3rver, LocalStack): path-style addressing, checksums only where required. */
  readonly endpointUrl?: string;
}

/**
 * Throttling and transient errors are retried by the SDK's standard strategy (exponential backoff with jitter);
 * five attempts instead of three because `status` and `list` make bursts of calls.
 */
const RETRY = { maxAttempts: 5, retryMode: 'standard' } as const;

function common(connection: AwsConnection): { region?: string; profile?: string } {
  return {
    ...(connection.region ? { region: connection.region } : {}),
    ...(connection.profile ? { profile: connection.profile } : {}),
  };
}

/** The part of an SDK client the endpoint recorder needs (every client has it). */
interface WithMiddleware {
  readonly middlewareStack: { add(middleware: unknown, options: { step: 'deserialize'; priority: 'low'; name: string }): void };
}

/**
 * Services whose every answer is JSON or XML; S3 (objects have any content type) and SageMaker Runtime (the model's
 * answer as it gave it) are not among them.
 */
const PROTOCOL_ONLY = new Set(['SAGEMAKER', 'APPLICATION_AUTO_SCALING', 'CLOUDWATCH', 'CLOUDWATCH_LOGS']);

/** Error bodies longer than this are cut when recorded: enough for a message, never a whole page held twice. */
const HEAD_BYTES = 256;

/**
 * Records which URL each call reached and, for an error status, what came back (status, content type, the first
 * bytes), so that an answer from something that is not AWS (AWS_ENDPOINT_URL pointed at a web server, a closed port)
 * is explained in one line naming the URL (explainAwsError). It sits just inside the SDK's deserializer, so it sees
 * the raw response first; an error body is read (the deserializer reads it anyway) and handed on unchanged.
 */
function recordEndpoint<C extends WithMiddleware>(client: C, service: string): C {
  type Request = { protocol?: string; hostname?: string; port?: number };
  type Response = { statusCode?: number; headers?: Record<string, string>; body?: unknown };
  const middleware = (next: (args: { request: unknown }) => Promise<{ response: unknown }>) =>
    async (args: { request: unknown }) => {
      const request = (args.request ?? {}) as Request;
      const url = `${request.protocol ?? 'https:'}//${request.hostname ?? ''}${request.port ? `:${request.port}` : ''}`;
      let out: { response: unknown };
      try {
        out = await next(args);
      } catch (err) {
        if (typeof err === 'object' && err !== null) REACHED.set(err, { url, service });
        throw err;
      }
      const response = out.response as Response;
      const status = response.statusCode ?? 0;
      const type = Object.entries(response.headers ?? {}).find(([k]) => k.toLowerCase() === 'content-type')?.[1];
      let head: string | undefined;
      // An error body, or a success in a content type these JSON and XML services never send (a web page).
      const foreign = status >= 300 || (PROTOCOL_ONLY.has(service) && !AWS_CONTENT.test(type ?? 'none'));
      if (foreign && isReadable(response.body)) {
        const chunks: Buffer[] = [];
        for await (const chunk of response.body) chunks.push(Buffer.from(chunk as Uint8Array));
        const body = Buffer.concat(chunks);
        head = body.subarray(0, HEAD_BYTES).toString('utf8');
        const { Readable } = await import('node:stream');
        response.body = Readable.from([body]);
      }
      ANSWERED.set(response, { url, service, status, ...(type ? { contentType: type } : {}), ...(head !== undefined ? { head } : {}) });
      return out;
    };
  client.middlewareStack.add(middleware, { step: 'deserialize', priority: 'low', name: 'mmeDeployRecordEndpoint' });
  return client;
}

function isReadable(body: unknown): body is AsyncIterable<unknown> {
  return typeof body === 'object' && body !== null && typeof (body as { pipe?: unknown }).pipe === 'function' &&
    Symbol.asyncIterator in body;
}

// Each SDK package is loaded on first use (`await import`, the library's one way of loading lazily).
export const loadS3 = () => import('@aws-sdk/client-s3');
export const loadLibStorage = () => import('@aws-sdk/lib-storage');
export const loadSageMaker = () => import('@aws-sdk/client-sagemaker');
export const loadSageMakerRuntime = () => import('@aws-sdk/client-sagemaker-runtime');
export const loadAutoScaling = () => import('@aws-sdk/client-application-auto-scaling');
export const loadCloudWatch = () => import('@aws-sdk/client-cloudwatch');
export const loadCloudWatchLogs = () => import('@aws-sdk/client-cloudwatch-logs');

export async function createS3Client(connection: AwsConnection): Promise<S3Client> {
  await checkProfile(connection.profile);
  const { S3Client } = await loadS3();
  return recordEndpoint(new S3Client({
    ...common(connection),
    ...RETRY,
    ...(connection.endpointUrl
      ? {
          endpoint: connection.endpointUrl,
          forcePathStyle: true,
          // Most S3-compatible stores do not understand the streaming checksum trailers the SDK adds by default.
          requestChecksumCalculation: 'WHEN_REQUIRED' as const,
          responseChecksumValidation: 'WHEN_REQUIRED' as const,
          // Their region is whatever the store says; a placeholder keeps the SDK from refusing to sign.
          region: connection.region ?? 'us-east-1',
        }
      : {}),
  }), 'S3');
}

export async function createSageMakerClient(connection: AwsConnection): Promise<SageMakerClient> {
  await checkProfile(connection.profile);
  const { SageMakerClient } = await loadSageMaker();
  return recordEndpoint(new SageMakerClient({ ...common(connection), ...RETRY }), 'SAGEMAKER');
}

export async function createSageMakerRuntimeClient(connection: AwsConnection): Promise<SageMakerRuntimeClient> {
  await checkProfile(connection.profile);
  const { SageMakerRuntimeClient } = await loadSageMakerRuntime();
  return recordEndpoint(new SageMakerRuntimeClient({ ...common(connection), ...RETRY }), 'SAGEMAKER_RUNTIME');
}

export async function createAutoScalingClient(connection: AwsConnection): Promise<ApplicationAutoScalingClient> {
  await checkProfile(connection.profile);
  const { ApplicationAutoScalingClient } = await loadAutoScaling();
  return recordEndpoint(new ApplicationAutoScalingClient({ ...common(connection), ...RETRY }), 'APPLICATION_AUTO_SCALING');
}

export async function createCloudWatchClient(connection: AwsConnection): Promise<CloudWatchClient> {
  await checkProfile(connection.profile);
  const { CloudWatchClient } = await loadCloudWatch();
  return recordEndpoint(new CloudWatchClient({ ...common(connection), ...RETRY }), 'CLOUDWATCH');
}

/**
 * CloudWatch Logs allows few FilterLogEvents calls per second per account and region, shared by everyone in it, so
 * this client retries more patiently and the adaptive mode also slows its own request rate while throttled.
 */
export async function createCloudWatchLogsClient(connection: AwsConnection): Promise<CloudWatchLogsClient> {
  await checkProfile(connection.profile);
  const { CloudWatchLogsClient } = await loadCloudWatchLogs();
  return recordEndpoint(new CloudWatchLogsClient({ ...common(connection), maxAttempts: 8, retryMode: 'adaptive' }), 'CLOUDWATCH_LOGS');
}
