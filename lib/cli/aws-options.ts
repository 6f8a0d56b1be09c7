// Options every live-endpoint command shares (where the models are, which account and region), and the small
// pieces of output they share. Light on purpose: program.ts imports it to declare the options.

import type { Command } from 'commander';
import type { AwsConnection } from '../aws/aws-clients';
import type { LocationOptions } from '../aws/endpoint';

export interface AwsCommandOptions extends AwsConnection {
  readonly json?: boolean;
}

export interface ModelLocationCommandOptions extends AwsCommandOptions, LocationOptions {}

/** --region, --profile and --json, on every command that talks to AWS. */
export function addAwsOptions(command: Command, jsonHelp = 'print one JSON document on stdout'): Command {
  return command
    .option('--region <region>', 'AWS region (default: AWS_REGION or the profile\'s region)')
    .option('--profile <name>', 'AWS profile from ~/.aws/config (default: the default credential chain)')
    .option('--json', jsonHelp);
}

/** Where the models live: --endpoint (its ModelDataUrl) or --s3, plus --endpoint-url for S3-compatible stores. */
export function addLocationOptions(command: Command): Command {
  return addAwsOptions(command)
    .option('--endpoint <name>', 'the multi-model endpoint whose ModelDataUrl holds the models')
    .option('--s3 <url>', 'the model prefix directly, s3://bucket/prefix/ (instead of --endpoint)')
    .option('--variant <name>', 'the production variant to follow when the endpoint has several')
    .option('--endpoint-url <url>', 'an S3-compatible endpoint (MinIO, LocalStack), used with --s3');
}

export function connectionOf(options: AwsConnection): AwsConnection {
  return {
    ...(options.region ? { region: options.region } : {}),
    ...(options.profile ? { profile: options.profile } : {}),
    ...(options.endpointUrl ? { endpointUrl: options.endpointUrl } : {}),
  };
}
