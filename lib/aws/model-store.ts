// The models of a multi-model endpoint as S3 objects under its prefix: upload one (streamed, multipart, SHA-256
// checked, never silently replacing another), list them all, delete one.

import { createHash } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { MmeError } from '../errors';
import { targetModelNameProblem } from '../repository/mme-rules';
import { shellCommand } from '../shell-quote';
import { explainAwsError, isNotFound, awsErrorName, httpStatus } from './aws-errors';
import { loadLibStorage, loadS3 } from './aws-clients';
import { ModelLocation, objectKey, s3Url } from './s3-location';

export interface StoredModel {
  /** The name to pass as TargetModel: the key below the prefix. */
  readonly targetModel: string;
  readonly key: string;
  readonly size: number;
  readonly lastModified?: Date;
  /**
   * Set when the key below the prefix is not a usable TargetModel name (`sub/x.tar.gz`): SageMaker cannot load it
   * and `remove` refuses it, by the same rule (targetModelNameProblem).
   */
  readonly problem?: string;
}

/** Throws USAGE unless `targetModel` names one object below the prefix, never the prefix itself or a parent. */
function checkName(targetModel: string): void {
  const problem = targetModelNameProblem(targetModel);
  if (problem) throw new MmeError('USAGE', problem);
}

interface Context {
  readonly profile?: string;
  readonly region?: string;
  /** An S3-compatible endpoint, repeated in the commands printed for manual clean-up. */
  readonly endpointUrl?: string;
}

/** The stored model, or undefined when there is no object under that name. */
export async function headTargetModel(
  client: S3Client,
  location: ModelLocation,
  targetModel: string,
  context: Context = {},
): Promise<StoredModel | undefined> {
  checkName(targetModel);
  const { HeadObjectCommand } = await loadS3();
  const key = objectKey(location, targetModel);
  try {
    const head = await client.send(new HeadObjectCommand({ Bucket: location.bucket, Key: key }));
    return { targetModel, key, size: head.ContentLength ?? 0, ...(head.LastModified ? { lastModified: head.LastModified } : {}) };
  } catch (err) {
    if (isNotFound(err) && awsErrorName(err) !== 'NoSuchBucket') return undefined;
    if (httpStatus(err) === 403) {
      // S3 answers HEAD on a missing key with 403, not 404, when the caller may not list the bucket.
      const who = context.profile ? `the credentials of profile '${context.profile}'` : 'the credentials in use';
      throw new MmeError(
        'AWS_ACCESS_DENIED',
        `Access denied checking whether ${s3Url(location, targetModel)} exists: ${who} need s3:GetObject on it and ` +
          `s3:ListBucket on bucket ${location.bucket} (without ListBucket, S3 reports a missing object as forbidden).`,
      );
    }
    throw explainAwsError(err, { ...context, permission: 's3:GetObject', resource: s3Url(location, targetModel) });
  }
}

/** Every object under the prefix, page by page (1,000 keys per ListObjectsV2 call), in key order. */
export async function* listTargetModels(client: S3Client, location: ModelLocation, context: Context = {}): AsyncGenerator<StoredModel> {
  const { paginateListObjectsV2 } = await loadS3();
  try {
    for await (const page of paginateListObjectsV2({ client }, { Bucket: location.bucket, Prefix: location.prefix })) {
      for (const object of page.Contents ?? []) {
        if (!object.Key || object.Key === location.prefix) continue;
        const targetModel = object.Key.slice(location.prefix.length);
        const problem = targetModelNameProblem(targetModel);
        yield {
          targetModel,
          key: object.Key,
          ...(problem ? { problem } : {}),
          size: object.Size ?? 0,
          ...(object.LastModified ? { lastModified: object.LastModified } : {}),
        };
      }
    }
  } catch (err) {
    throw explainAwsError(err, { ...context, permission: 's3:ListBucket', resource: s3Url(location) });
  }
}

export async function deleteTargetModel(
  client: S3Client,
  location: ModelLocation,
  targetModel: string,
  context: Context = {},
): Promise<void> {
  checkName(targetModel);
  const { DeleteObjectCommand } = await loadS3();
  try {
    await client.send(new DeleteObjectCommand({ Bucket: location.bucket, Key: objectKey(location, targetModel) }));
  } catch (err) {
    throw explainAwsError(err, { ...context, permission: 's3:DeleteObject', resource: s3Url(location, targetModel) });
  }
}

export interface UploadOptions extends Context {
  readonly client: S3Client;
  readonly location: ModelLocation;
  readonly targetModel: string;
  /** The tar.gz bytes. */
  readonly body: Readable;
  /** The byte count when known in advance (an archive file), for progress. */
  readonly size?: number;
  /** Replace an existing object; otherwise the write is conditional (`If-None-Match: *`). */
  readonly force: boolean;
  /** Aborting stops reading, and the multipart upload is aborted so no parts are left behind. */
  readonly signal?: AbortSignal;
  /** Called as parts complete, with bytes uploaded so far. */
  readonly onProgress?: (uploaded: number, total: number | undefined) => void;
  /** @default 16 MiB (up to 160 GiB in 10,000 parts); S3's minimum is 5 MiB. */
  readonly partSize?: number;
  /** Parts in flight at once. @default 4 */
  readonly queueSize?: number;
  /**
   * Called once a multipart upload exists, with the exact command that aborts it: what to tell a user who quits
   * before the abort this function makes on failure has finished.
   */
  readonly onMultipartUpload?: (cleanupCommand: string) => void;
}

export interface UploadResult {
  readonly key: string;
  readonly url: string;
  readonly size: number;
  /** Hex SHA-256 of the whole object, computed while streaming. */
  readonly sha256: string;
  readonly etag?: string;
  readonly versionId?: string;
}

export const DEFAULT_PART_SIZE = 16 * 1024 * 1024;

/**
 * Streams `body` to `s3://bucket/prefix/targetModel`. Each part (or the single PUT) carries an `x-amz-checksum-sha256`
 * that S3 verifies; the whole-object SHA-256 is returned. Without `force`, the object is written with
 * `IfNoneMatch: '*'`, so a model that appeared meanwhile is never replaced. On any failure or abort the multipart
 * upload is aborted; the error says so, or gives the command to clean up if even that failed.
 */
export async function uploadTargetModel(options: UploadOptions): Promise<UploadResult> {
  const { client, location, targetModel } = options;
  const { Upload } = await loadLibStorage();
  const key = objectKey(location, targetModel);
  const url = s3Url(location, targetModel);
  const hash = createHash('sha256');
  let size = 0;
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      size += chunk.length;
      callback(null, chunk);
    },
  });
  // Errors on the source (a failing pack, a read error) and aborts both surface through `hashing`, which is what
  // the upload reads; lib-storage then stops, waits for parts in flight and aborts the multipart upload.
  const source: Readable = options.body;
  source.on('error', (err) => hashing.destroy(err));
  source.pipe(hashing);
  const onAbort = () => {
    const reason = Object.assign(new Error('Upload aborted.'), { name: 'AbortError' });
    source.unpipe(hashing);
    source.destroy();
    hashing.destroy(reason);
  };
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener('abort', onAbort, { once: true });

  const upload = new Upload({
    client,
    params: {
      Bucket: location.bucket,
      Key: key,
      Body: hashing,
      ContentType: 'application/gzip',
      ChecksumAlgorithm: 'SHA256',
      ...(options.force ? {} : { IfNoneMatch: '*' }),
    },
    partSize: options.partSize ?? DEFAULT_PART_SIZE,
    queueSize: options.queueSize ?? 4,
    leavePartsOnError: false,
  });
  upload.on('httpUploadProgress', (progress) => options.onProgress?.(progress.loaded ?? 0, options.size ?? progress.total));
  // The upload id exists once CreateMultipartUpload answered: watched on the client for the time of this upload.
  const watcher = `mme-deploy-upload-${key}-${Math.random()}`;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      const uploadId = (result.output as { UploadId?: string }).UploadId;
      if (context.commandName === 'CreateMultipartUploadCommand' && uploadId) {
        options.onMultipartUpload?.(abortCommand(location.bucket, key, uploadId, options));
      }
      return result;
    },
    { step: 'initialize', name: watcher },
  );
  try {
    const result = await upload.done();
    return {
      key,
      url,
      size,
      sha256: hash.digest('hex'),
      ...(result.ETag ? { etag: result.ETag } : {}),
      ...(result.VersionId ? { versionId: result.VersionId } : {}),
    };
  } catch (err) {
    const leftover = await abortLeftover(client, location.bucket, key, upload.uploadId);
    throw uploadError(err, { ...options, url, aborted: Boolean(options.signal?.aborted), leftover });
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    client.middlewareStack.remove(watcher);
  }
}

/** `aws s3api abort-multipart-upload ...` for this upload, with the connection flags the push was given. */
export function abortCommand(bucket: string, key: string, uploadId: string, context: Context): string {
  return shellCommand([
    'aws', 's3api', 'abort-multipart-upload', '--bucket', bucket, '--key', key, '--upload-id', uploadId,
    ...(context.endpointUrl ? ['--endpoint-url', context.endpointUrl] : []),
    ...(context.region ? ['--region', context.region] : []),
    ...(context.profile ? ['--profile', context.profile] : []),
  ]);
}

/** Aborts the multipart upload again (lib-storage normally has); returns the id when parts may remain. */
async function abortLeftover(client: S3Client, bucket: string, key: string, uploadId: string | undefined): Promise<string | undefined> {
  if (!uploadId) return undefined;
  const { AbortMultipartUploadCommand } = await loadS3();
  try {
    await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }));
    return undefined;
  } catch (err) {
    return awsErrorName(err) === 'NoSuchUpload' || httpStatus(err) === 404 ? undefined : uploadId;
  }
}

function uploadError(
  err: unknown,
  details: UploadOptions & { url: string; aborted: boolean; leftover: string | undefined },
): MmeError {
  const key = objectKey(details.location, details.targetModel);
  const cleanup = details.leftover
    ? ' Some uploaded parts may remain (and are billed); remove them with: ' +
      abortCommand(details.location.bucket, key, details.leftover, details)
    : ' Nothing was left in S3 (the multipart upload was aborted).';
  if (details.aborted) return new MmeError('UPLOAD_CANCELLED', `Push of ${details.url} cancelled.${cleanup}`);
  const name = awsErrorName(err);
  if (name === 'PreconditionFailed' || name === 'ConditionalRequestConflict' || httpStatus(err) === 412) {
    return new MmeError(
      'ALREADY_EXISTS',
      `${details.url} was created by someone else while this upload ran; it was not overwritten.${cleanup} Push under ` +
        'another --name, or re-run with --force to replace it.',
    );
  }
  const explained = explainAwsError(err, { ...details, permission: 's3:PutObject', resource: details.url });
  return new MmeError(explained.code, `${explained.message}${cleanup}`);
}

/** To change what callers get at once: a new name, since instances keep serving what they loaded. */
export const ROLLOUT_ADVICE = 'To roll out a change at once, push it under a new TargetModel name and switch callers to that name.';

/** The cache caveat every change to a stored model carries: SageMaker does not notice S3 changes. */
export function cachedCopyNote(targetModel: string): string {
  return (
    `Instances that already loaded ${targetModel} keep serving their cached copy until SageMaker unloads it ` +
    '(when it is idle and memory or disk is needed); S3 is not watched.'
  );
}
