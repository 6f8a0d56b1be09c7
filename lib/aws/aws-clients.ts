// Creates the AWS SDK clients the live-endpoint commands use, loading each SDK package only when a command needs it
// (so `--help` and `validate` never pay for it). Credentials come from the SDK's default chain or a named profile.

import type { ApplicationAutoScalingClient } from '@aws-sdk/client-application-auto-scaling';
import type { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SageMakerClient } from '@aws-sdk/client-sagemaker';
import type { SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';

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

// `require` rather than `import()`: both are lazy, but only `require` also works where the code runs under a
// CommonJS test runner without ESM support; the type annotations keep the SDK's types.
export function loadS3(): typeof import('@aws-sdk/client-s3') {
  return require('@aws-sdk/client-s3');
}
export function loadLibStorage(): typeof import('@aws-sdk/lib-storage') {
  return require('@aws-sdk/lib-storage');
}
export function loadSageMaker(): typeof import('@aws-sdk/client-sagemaker') {
  return require('@aws-sdk/client-sagemaker');
}
export function loadSageMakerRuntime(): typeof import('@aws-sdk/client-sagemaker-runtime') {
  return require('@aws-sdk/client-sagemaker-runtime');
}
export function loadAutoScaling(): typeof import('@aws-sdk/client-application-auto-scaling') {
  return require('@aws-sdk/client-application-auto-scaling');
}
export function loadCloudWatch(): typeof import('@aws-sdk/client-cloudwatch') {
  return require('@aws-sdk/client-cloudwatch');
}
export function loadCloudWatchLogs(): typeof import('@aws-sdk/client-cloudwatch-logs') {
  return require('@aws-sdk/client-cloudwatch-logs');
}

export function createS3Client(connection: AwsConnection): S3Client {
  const { S3Client } = loadS3();
  return new S3Client({
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
  });
}

export function createSageMakerClient(connection: AwsConnection): SageMakerClient {
  const { SageMakerClient } = loadSageMaker();
  return new SageMakerClient({ ...common(connection), ...RETRY });
}

export function createSageMakerRuntimeClient(connection: AwsConnection): SageMakerRuntimeClient {
  const { SageMakerRuntimeClient } = loadSageMakerRuntime();
  return new SageMakerRuntimeClient({ ...common(connection), ...RETRY });
}

export function createAutoScalingClient(connection: AwsConnection): ApplicationAutoScalingClient {
  const { ApplicationAutoScalingClient } = loadAutoScaling();
  return new ApplicationAutoScalingClient({ ...common(connection), ...RETRY });
}

export function createCloudWatchClient(connection: AwsConnection): CloudWatchClient {
  const { CloudWatchClient } = loadCloudWatch();
  return new CloudWatchClient({ ...common(connection), ...RETRY });
}

/**
 * CloudWatch Logs allows few FilterLogEvents calls per second per account and region, shared by everyone in it, so
 * this client retries more patiently and the adaptive mode also slows its own request rate while throttled.
 */
export function createCloudWatchLogsClient(connection: AwsConnection): CloudWatchLogsClient {
  const { CloudWatchLogsClient } = loadCloudWatchLogs();
  return new CloudWatchLogsClient({ ...common(connection), maxAttempts: 8, retryMode: 'adaptive' });
}
