// Options every live-endpoint command shares (where the models are, which account and region), and the small
// pieces of output they share. Light on purpose: program.ts imports it to declare the options.

import type { Command } from 'commander';
import { regionNameProblem } from '../catalog/aws-regions';
import { UsageError } from './cli-errors';
import { described } from './help-style';
import type { AwsConnection } from '../aws/aws-clients';
import type { LocationOptions } from '../aws/endpoint';

export interface AwsCommandOptions extends AwsConnection {
  readonly json?: boolean;
}

export interface ModelLocationCommandOptions extends AwsCommandOptions, LocationOptions {}

/** --region, --profile and --json, on every command that talks to AWS. */
export function addAwsOptions(command: Command, jsonHelp = 'print one JSON document on stdout'): Command {
  return command
    .option('--region <region>', described('AWS region', { env: 'AWS_REGION', default: 'the profile\'s region' }))
    .option('--profile <name>', described('AWS profile from ~/.aws/config', {
      env: 'AWS_PROFILE',
      default: 'the default credential chain',
    }))
    .option('--json', jsonHelp);
}

/** Where the models live: --endpoint (its ModelDataUrl) or --s3, plus --endpoint-url for S3-compatible stores. */
export function addLocationOptions(command: Command): Command {
  return addAwsOptions(command)
    .option('--endpoint <name>', 'the multi-model endpoint whose ModelDataUrl holds the models (this or --s3 is required)')
    .option('--s3 <url>', 'the model prefix directly, s3://bucket/prefix/ (this or --endpoint is required)')
    .option('--variant <name>', 'the production variant to follow when the endpoint has several')
    .option('--endpoint-url <url>', 'an S3-compatible endpoint (MinIO, LocalStack), used with --s3');
}

/** The connection options as the AWS clients take them; a region that cannot be one is a usage error. */
export function connectionOf(options: AwsConnection): AwsConnection {
  const problem = options.region === undefined ? undefined : regionNameProblem(options.region);
  if (problem) throw new UsageError(`--region: ${problem}`);
  const urlProblem = options.endpointUrl === undefined ? undefined : endpointUrlProblem(options.endpointUrl);
  if (urlProblem) throw new UsageError(`--endpoint-url: ${urlProblem}`);
  return {
    ...(options.region ? { region: options.region } : {}),
    ...(options.profile ? { profile: options.profile } : {}),
    ...(options.endpointUrl ? { endpointUrl: options.endpointUrl } : {}),
  };
}

/**
 * Why `url` cannot be an endpoint URL, or undefined: the SDK takes only an absolute http(s) URL (`localhost:4569`
 * parses as a URL whose scheme is `localhost:`, and the SDK then fails far from the cause).
 */
export function endpointUrlProblem(url: string): string | undefined {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed && (parsed.protocol === 'http:' || parsed.protocol === 'https:') && parsed.hostname) return undefined;
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? undefined : `http://${url}`;
  return (
    `'${url}' is not an http:// or https:// URL` +
    (withScheme ? `: give the scheme, e.g. --endpoint-url ${withScheme}` : ': S3-compatible stores answer over http or https')
  );
}
