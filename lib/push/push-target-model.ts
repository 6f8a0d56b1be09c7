// pushTargetModel, the push use case: puts a TargetModel under a multi-model endpoint's S3 prefix. A directory is
// validated and packed on the fly straight into the multipart upload (no temporary file); an existing TargetModel
// is never replaced without `force`, checked before the first byte is sent. Cancelling goes through `signal`.

import { createS3Client } from '../aws/aws-clients';
import { LocationOptions, ResolvedEndpoint, resolveModelLocation } from '../aws/endpoint';
import {
  cachedCopyNote,
  deleteTargetModel,
  headTargetModel,
  ROLLOUT_ADVICE,
  StoredModel,
  uploadTargetModel,
  UploadResult,
} from '../aws/model-store';
import { checkVersionedUpload } from '../bundle/versioned-target-model';
import { s3Url } from '../aws/s3-location';
import type { ModelConfig } from '../config/model-config-schema';
import { MmeError } from '../errors';
import { formatBytes } from '../format-bytes';
import type { ValidationReport } from '../repository/validate';
import { openPushSource, PushSource } from './push-source';

export interface PushTargetModelOptions {
  /** Absolute path of a TargetModel archive (.tar.gz) or of a model repository directory. */
  readonly source: string;
  /** How the source is named in messages. @default - `source` */
  readonly shown?: string;
  /** Where the models live (`s3`, or `endpoint` and its ModelDataUrl), and the AWS connection. */
  readonly location: LocationOptions;
  /** The TargetModel name. @default - the archive's file name, or `<directory>.tar.gz` */
  readonly name?: string;
  /** Replace an existing TargetModel. @default false */
  readonly force?: boolean;
  /** gzip level 0–9 when packing a directory. @default 6 */
  readonly level?: number;
  /** Cancels the push; a multipart upload under way is aborted so no parts are left behind. */
  readonly signal?: AbortSignal;
  /** Called once the checks passed, just before the first byte is sent. */
  readonly onStart?: (start: PushStart) => void;
  /** Called as parts complete, with the bytes uploaded so far (and the total when known). */
  readonly onProgress?: (uploaded: number, total: number | undefined) => void;
  /** Multipart part size in bytes. @default 16 MiB (S3's minimum is 5 MiB) */
  readonly partSize?: number;
  /** Called once a multipart upload exists, with the command that aborts it (for a user who quits before the abort). */
  readonly onMultipartUpload?: (cleanupCommand: string) => void;
  /**
   * Name the TargetModel by its content, `<name>-<sha256:12>.tar.gz` (the CDK ModelArchive's rule); the same content
   * already there is not uploaded again. Excludes `force`. @default false
   */
  readonly versioned?: boolean;
  /**
   * Read an archive to its end (tar structure, every gzip member's CRC) and apply the MME rules `validate --mme`
   * applies to a directory before anything is sent; false checks only the gzip magic. @default true
   */
  readonly verify?: boolean;
}

export interface PushStart {
  readonly kind: PushSource['kind'];
  readonly targetModel: string;
  readonly url: string;
  /** The byte count, when known before the upload (an archive). */
  readonly size?: number;
  /** The TargetModel being replaced (`force`). */
  readonly replacing?: StoredModel;
}

export type PushResult =
  /** The directory or archive has errors: nothing was uploaded. */
  | { readonly ok: false; readonly report: ValidationReport }
  /** `versioned`, and the same content is already there under its name: nothing was uploaded. */
  | {
      readonly ok: true;
      readonly unchanged: true;
      readonly kind: PushSource['kind'];
      readonly targetModel: string;
      readonly url: string;
      readonly size: number;
      readonly sha256: string;
      readonly replaced: false;
      readonly endpoint?: ResolvedEndpoint;
      readonly config?: ModelConfig;
    }
  | {
      readonly ok: true;
      readonly unchanged?: false;
      readonly kind: PushSource['kind'];
      readonly targetModel: string;
      readonly upload: UploadResult;
      /** Whether an existing TargetModel was replaced. */
      readonly replaced: boolean;
      /** The endpoint followed, when the location was given as one. */
      readonly endpoint?: ResolvedEndpoint;
      /** The config of the model SageMaker serves, when it can be told (read from the archive or the directory). */
      readonly config?: ModelConfig;
    };

/**
 * Pushes one TargetModel. Throws `MmeError`: `NOT_FOUND`/`USAGE` for a source or name that cannot be pushed,
 * `ALREADY_EXISTS` without `force`, `ABORTED` when cancelled before the upload, `UPLOAD_CANCELLED` during it, and the
 * AWS codes of the calls.
 */
export async function pushTargetModel(options: PushTargetModelOptions): Promise<PushResult> {
  const { location: where, signal } = options;
  if (options.versioned && options.force) {
    throw new MmeError(
      'USAGE',
      '--versioned and --force exclude each other: a versioned TargetModel is never replaced, its name follows its content.',
    );
  }
  const source = await openPushSource(options.source, options.shown ?? options.source, {
    ...(options.name !== undefined ? { name: options.name } : {}),
    ...(options.level !== undefined ? { level: options.level } : {}),
    ...(options.versioned ? { versioned: true } : {}),
    ...(options.verify === false ? { verify: false } : {}),
    ...(signal ? { signal } : {}),
  });
  if ('report' in source) return { ok: false, report: source.report };
  const s3 = await createS3Client(where);
  try {
    throwIfAborted(signal, source.targetModel);
    const { location, endpoint } = await resolveModelLocation(where);
    const context = {
      ...(where.profile ? { profile: where.profile } : {}),
      ...(where.region ? { region: where.region } : {}),
      ...(where.endpointUrl ? { endpointUrl: where.endpointUrl } : {}),
    };
    const url = s3Url(location, source.targetModel);
    const existing = await headTargetModel(s3, location, source.targetModel, context);
    if (existing && source.versioned && existing.size === source.versioned.size) {
      // The name holds the content hash: the same name and size is the same archive, already there.
      const { sha256, size } = source.versioned;
      const { kind, targetModel } = source;
      // Nothing is read from an archive that is already there: its config is known only for a directory.
      const config = await source.config();
      const known = { ...(endpoint ? { endpoint } : {}), ...(config ? { config } : {}) };
      return { ok: true, unchanged: true, kind, targetModel, url, size, sha256, replaced: false, ...known };
    }
    if (existing && !options.force) {
      const when = existing.lastModified ? `, last modified ${existing.lastModified.toISOString()}` : '';
      throw new MmeError(
        'ALREADY_EXISTS',
        `${url} already exists (${formatBytes(existing.size)}${when}); nothing was uploaded. Push under another name ` +
          'with --name (recommended: callers switch when ready), or replace it with --force. ' +
          `${cachedCopyNote(source.targetModel)} ${ROLLOUT_ADVICE}`,
      );
    }
    throwIfAborted(signal, source.targetModel);
    options.onStart?.({
      kind: source.kind,
      targetModel: source.targetModel,
      url,
      ...(source.size !== undefined ? { size: source.size } : {}),
      ...(existing ? { replacing: existing } : {}),
    });
    const upload = await uploadTargetModel({
      client: s3,
      location,
      targetModel: source.targetModel,
      body: source.open(),
      force: Boolean(options.force),
      ...(signal ? { signal } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(source.size !== undefined ? { size: source.size } : {}),
      ...(options.partSize ? { partSize: options.partSize } : {}),
      ...(options.onMultipartUpload ? { onMultipartUpload: options.onMultipartUpload } : {}),
      ...context,
    });
    const remove = () => deleteTargetModel(s3, location, source.targetModel, context);
    if (source.size !== undefined && upload.size !== source.size) {
      // An object SageMaker would fail to extract is worse than none: the file changed while it was read, say.
      await remove();
      throw new MmeError(
        'INVALID',
        `${url} received ${upload.size} bytes of the archive's ${source.size}; the upload was removed again. Make sure ` +
          'nothing writes the archive while it is pushed, and push it again.',
      );
    }
    if (source.versioned) await checkVersioned(source, upload.sha256, remove);
    const config = await source.config();
    return {
      ok: true,
      kind: source.kind,
      targetModel: source.targetModel,
      upload,
      replaced: Boolean(existing),
      ...(endpoint ? { endpoint } : {}),
      ...(config ? { config } : {}),
    };
  } finally {
    s3.destroy();
    source.close();
  }
}

/** The uploaded bytes must be the ones the versioned name was computed from; otherwise the upload is removed again. */
async function checkVersioned(source: PushSource, uploaded: string, remove: () => Promise<void>): Promise<void> {
  try {
    checkVersionedUpload({ targetModel: source.targetModel, sha256: source.versioned!.sha256, kind: source.kind }, uploaded);
  } catch (err) {
    await remove();
    throw new MmeError('INVALID', `${(err as Error).message} The upload was removed again.`);
  }
}

function throwIfAborted(signal: AbortSignal | undefined, targetModel: string): void {
  if (signal?.aborted) throw new MmeError('ABORTED', `Push of ${targetModel} cancelled before the upload started; nothing was uploaded.`);
}
