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

// Each SDK package is loaded on first use (`await import`, the library's one way of loading lazily).
export const loadS3 = () => import('@aws-sdk/client-s3');
export const loadLibStorage = () => import('@aws-sdk/lib-storage');
export const loadSageMaker = () => import('@aws-sdk/client-sagemaker');
export const loadSageMakerRuntime = () => import('@aws-sdk/client-sagemaker-runtime');
export const loadAutoScaling = () => import('@aws-sdk/client-application-auto-scaling');
export const loadCloudWatch = () => import('@aws-sdk/client-cloudwatch');
export const loadCloudWatchLogs = () => import('@aws-sdk/client-cloudwatch-logs');

export async function createS3Client(connection: AwsConnection): Promise<S3Client> {
  const { S3Client } = await loadS3();
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

export async function createSageMakerClient(connection: AwsConnection): Promise<SageMakerClient> {
  const { SageMakerClient } = await loadSageMaker();
  return new SageMakerClient({ ...common(connection), ...RETRY });
}

export async function createSageMakerRuntimeClient(connection: AwsConnection): Promise<SageMakerRuntimeClient> {
  const { SageMakerRuntimeClient } = await loadSageMakerRuntime();
  return new SageMakerRuntimeClient({ ...common(connection), ...RETRY });
}

export async function createAutoScalingClient(connection: AwsConnection): Promise<ApplicationAutoScalingClient> {
  const { ApplicationAutoScalingClient } = await loadAutoScaling();
  return new ApplicationAutoScalingClient({ ...common(connection), ...RETRY });
}

export async function createCloudWatchClient(connection: AwsConnection): Promise<CloudWatchClient> {
  const { CloudWatchClient } = await loadCloudWatch();
  return new CloudWatchClient({ ...common(connection), ...RETRY });
}

/**
 * CloudWatch Logs allows few FilterLogEvents calls per second per account and region, shared by everyone in it, so
 * this client retries more patiently and the adaptive mode also slows its own request rate while throttled.
 */
export async function createCloudWatchLogsClient(connection: AwsConnection): Promise<CloudWatchLogsClient> {
  const { CloudWatchLogsClient } = await loadCloudWatchLogs();
  return new CloudWatchLogsClient({ ...common(connection), maxAttempts: 8, retryMode: 'adaptive' });
}
