// The versioned TargetModel of something about to be pushed (`mme-deploy push --versioned`): an archive file, or a
// repository directory as it will be packed. The name holds the archive's SHA-256 (target-model-name.ts), so it must
// be known before the upload picks its key — while a directory is packed on the fly into the upload.
//
// Design: the packer is deterministic, so a directory is packed twice — once into a hash (nothing kept: no disk, no
// memory beyond the packer's own) to learn the name, once into the upload — and the upload's own SHA-256 is checked
// against the first (a repository changed in between is caught; the caller removes what it uploaded). Cost: the
// directory is read and compressed twice; bench/package.js packs 1 GiB of weights in about 8 s on 2 busy cores, so
// about 8 s more per GiB, against a temporary file (a second copy on disk) or an upload to a temporary key copied
// afterwards (an extra S3 copy, and a stray key under the endpoint's prefix if the push dies). An archive file is
// only read once more, to hash it.

import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { packRepository } from './pack-repository';
import { MmeError } from '../errors';
import { defaultTargetModel } from '../repository/mme-rules';
import type { ValidateOptions, ValidationReport } from '../repository/validate';
import { archiveBaseName, versionedTargetModel } from './target-model-name';

export interface VersionedNameOptions {
  /** The archive name before the hash is added. @default - the archive's file name, or the directory's name */
  readonly name?: string;
  /** gzip level when packing a directory: it must be the level the push packs at. @default 6 */
  readonly level?: number;
  /** Cancels the hashing pass. */
  readonly signal?: AbortSignal;
  /**
   * The model.py syntax check of a directory's hashing pass (see validateRepository). A caller that has just validated
   * the same directory (push) turns it off: the pass then starts no python of its own. @default true
   */
  readonly pythonSyntax?: ValidateOptions['pythonSyntax'];
}

export type VersionedName =
  | {
      readonly ok: true;
      /** `<name>-<sha256:12>.tar.gz`. */
      readonly targetModel: string;
      /** The SHA-256 of the archive's bytes: the upload's must equal it. */
      readonly sha256: string;
      readonly size: number;
    }
  /** The directory has errors: nothing to name. */
  | { readonly ok: false; readonly report: ValidationReport };

/** The versioned TargetModel of the archive file or repository directory at `path`. */
export async function versionedTargetModelOf(path: string, options: VersionedNameOptions = {}): Promise<VersionedName> {
  const isDirectory = (await stat(path)).isDirectory();
  const name = options.name ?? (isDirectory ? defaultTargetModel(path.replace(/[\\/]+$/, '') || path) : basename(path));
  const digest = isDirectory ? await packedDigest(path, name, options) : await fileDigest(path, options.signal);
  if (!digest.ok) return digest;
  return { ok: true, targetModel: versionedTargetModel(name, digest.sha256), sha256: digest.sha256, size: digest.size };
}

/**
 * The SHA-256 the upload of `targetModel` must have had; throws INVALID naming what changed when it differs: the
 * repository directory, or the archive file (`kind: 'archive'`).
 */
export function checkVersionedUpload(
  expected: { targetModel: string; sha256: string; kind?: 'archive' | 'directory' },
  uploadedSha256: string,
): void {
  if (uploadedSha256 === expected.sha256) return;
  const changed = expected.kind === 'archive' ? 'archive file' : 'repository';
  throw new MmeError(
    'INVALID',
    `The archive uploaded as ${expected.targetModel} hashes to ${uploadedSha256.slice(0, 12)}…, not ` +
      `${expected.sha256.slice(0, 12)}…: the ${changed} changed while it was being pushed. Push it again once it is stable.`,
  );
}

type Digest = { ok: true; sha256: string; size: number } | { ok: false; report: ValidationReport };

async function packedDigest(path: string, name: string, options: VersionedNameOptions): Promise<Digest> {
  // Validated under the plain name; the hash added later changes no name rule's outcome.
  const packed = await packRepository(path, {
    name: `${archiveBaseName(name)}.tar.gz`,
    ...(options.level !== undefined ? { level: options.level } : {}),
    ...(options.pythonSyntax !== undefined ? { pythonSyntax: options.pythonSyntax } : {}),
  });
  if (!packed.ok) return { ok: false, report: packed.report };
  // The manifest hashes the bytes as they stream; this sink only lets them flow.
  await (options.signal ? pipeline(packed.stream, discard(), { signal: options.signal }) : pipeline(packed.stream, discard()));
  const manifest = await packed.manifest;
  return { ok: true, sha256: manifest.sha256, size: manifest.size };
}

async function fileDigest(path: string, signal: AbortSignal | undefined): Promise<Digest> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20, ...(signal ? { signal } : {}) }) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { ok: true, sha256: hash.digest('hex'), size };
}

function discard(): Writable {
  return new Writable({ write: (_chunk, _encoding, done) => done() });
}
