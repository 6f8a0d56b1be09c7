// S3 locations of an MME's models: the endpoint's ModelDataUrl is a prefix, and each TargetModel is the key of one
// tar.gz below it (AWS's multi-model container contract; triton-inference-server/server:src/sagemaker_server.cc:947).

import { MmeError } from '../errors';

export interface ModelLocation {
  readonly bucket: string;
  /** The key prefix, empty or ending with `/`. */
  readonly prefix: string;
}

/** Parses `s3://bucket/prefix/` (the trailing slash is added when missing: MME model data is always a prefix). */
export function parseS3Prefix(url: string, flag = '--s3'): ModelLocation {
  const match = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(url.trim());
  if (!match || !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(match[1]!)) {
    throw new MmeError('USAGE', `${flag} ${JSON.stringify(url)} is not an S3 prefix; write it as s3://bucket/prefix/.`);
  }
  let prefix = match[2] ?? '';
  if (prefix !== '' && !prefix.endsWith('/')) prefix += '/';
  return { bucket: match[1]!, prefix };
}

export function s3Url(location: ModelLocation, targetModel = ''): string {
  return `s3://${location.bucket}/${location.prefix}${targetModel}`;
}

export function objectKey(location: ModelLocation, targetModel: string): string {
  return `${location.prefix}${targetModel}`;
}
