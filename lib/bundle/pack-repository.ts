// packRepository, the bundling use case: validate a repository with the SageMaker MME rules, then stream it as the
// tar.gz an MME loads, with a manifest (TargetModel, size, sha256, models, what was left out) that resolves when the
// stream ends. It joins the repository rules and the archive format; neither knows the other.

import { createHash } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { defaultTargetModel } from '../repository/mme-rules';
import type { PlanTarget } from '../repository/tensorrt-plan-rules';
import { ModelSummary, validateArchive, type ValidateOptions, ValidationReport } from '../repository/validate';
import { createTarGzStream } from '../archive/tar-gz';

export interface PackOptions {
  /**
   * The TargetModel name (the S3 object name below the endpoint's prefix).
   * @default - `<directory name>.tar.gz`
   */
  readonly name?: string;
  /**
   * gzip level 0–9; incompressible spans (weights) are stored whatever the level.
   * @default 6
   */
  readonly level?: number;
  /** Worker threads for compression. @default - one per core, at most 4 */
  readonly workers?: number;
  /**
   * Called as files are read into the archive, with the bytes of file content read so far and the total to read
   * (for progress; the archive itself is smaller or a little larger).
   * @default - no progress
   */
  readonly onProgress?: (read: number, total: number) => void;
  /** The endpoint the archive is meant for (see validateRepository). @default ml.g4dn.xlarge with DEFAULT_TRITON_VERSION */
  readonly target?: PlanTarget;
  /** Compile the python models' sources first (see validateRepository). @default true */
  readonly pythonSyntax?: ValidateOptions['pythonSyntax'];
}

export interface PackManifest {
  readonly targetModel: string;
  readonly size: number;
  readonly sha256: string;
  readonly models: ModelSummary[];
  /** Paths left out of the archive (`.git`, `__pycache__`, editor backups, ...). */
  readonly excluded: string[];
  /** Number of tar entries (files and directories). */
  readonly entries: number;
}

export type PackResult =
  | { readonly ok: false; readonly report: ValidationReport }
  | {
      readonly ok: true;
      readonly report: ValidationReport;
      readonly targetModel: string;
      /** The tar.gz bytes. Destroy it to abandon the archive (that stops the compression workers). */
      readonly stream: Readable;
      /** Resolves when `stream` has ended; rejects when it fails. */
      readonly manifest: Promise<PackManifest>;
      /** Bytes of file content the archive will hold (what `onProgress` counts up to). */
      readonly contentBytes: number;
    };

/**
 * Validates `path` (a repository or one model directory) with Triton's and SageMaker's MME rules and, when it has no
 * error, returns the archive as a stream. Archive layout: a repository's model directories at the archive root; a
 * single model directory as one directory inside (`resnet/config.pbtxt`, `resnet/1/model.pt`), as the seeds pack it.
 * What is refused is decided by `validateArchive`, the code `validate --mme` runs. Throws `RepositoryAccessError` when
 * `path` cannot be read as a directory or a file in it cannot be read (UNREADABLE); the stream errors with UNREADABLE
 * if a file becomes unreadable or changes while it is packed.
 */
export async function packRepository(path: string, options: PackOptions = {}): Promise<PackResult> {
  const targetModel = options.name ?? defaultTargetModel(path.replace(/[\\/]+$/, '') || path);
  const { report, archive: collected } = await validateArchive(path, {
    targetModel,
    ...(options.target ? { target: options.target } : {}),
    ...(options.pythonSyntax !== undefined ? { pythonSyntax: options.pythonSyntax } : {}),
  });
  if (!report.ok) return { ok: false, report };

  const single = report.models.length === 1 && report.models[0]!.path === '.';
  // Triton and SageMaker read only directories at a repository's root: files there (READMEs, build scripts) stay out.
  const modelDirs = new Set(report.models.map((m) => m.path));
  const entries = single ? collected.entries : collected.entries.filter((e) => modelDirs.has(e.path.split('/')[0]!));
  const excluded = [
    ...collected.excluded,
    ...collected.entries.filter((e) => !entries.includes(e) && !e.path.includes('/')).map((e) => e.path),
  ].sort();
  const tarGz = createTarGzStream(entries, {
    ...(options.level !== undefined ? { level: options.level } : {}),
    ...(options.workers !== undefined ? { workers: options.workers } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  });
  const contentBytes = entries.reduce((sum, e) => sum + e.size, 0);
  const hash = createHash('sha256');
  let size = 0;
  const stream = new PassThrough({ highWaterMark: 1 << 20 });
  const manifest = new Promise<PackManifest>((resolve, reject) => {
    tarGz.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      size += chunk.length;
    });
    tarGz.once('end', () =>
      resolve({
        targetModel,
        size,
        sha256: hash.digest('hex'),
        models: report.models,
        excluded,
        entries: entries.length,
      }),
    );
    tarGz.once('error', reject);
    stream.once('close', () => {
      if (!tarGz.readableEnded) {
        tarGz.destroy();
        reject(new Error('the archive stream was closed before it ended'));
      }
    });
  });
  // A consumer that only wants the stream must not get an unhandled rejection from the manifest.
  manifest.catch(() => undefined);
  tarGz.pipe(stream);
  tarGz.once('error', (err) => stream.destroy(err));
  return { ok: true, report, targetModel, stream, manifest, contentBytes };
}

/** The model SageMaker serves from an archive of these models: the one ensemble, or the only model. */
export function servedModel(models: readonly ModelSummary[]): ModelSummary | undefined {
  const ensembles = models.filter((m) => m.platform === 'ensemble' || m.config?.platform === 'ensemble');
  if (ensembles.length === 1) return ensembles[0];
  return models.length === 1 ? models[0] : undefined;
}
