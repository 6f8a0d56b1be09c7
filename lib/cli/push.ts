// `mme-deploy push <archive.tar.gz | repository-dir>`: puts a TargetModel under a multi-model endpoint's S3 prefix.
// A directory is validated and packed on the fly straight into the multipart upload (no temporary file); an
// existing TargetModel is never replaced without --force, checked before the first byte is sent.

import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import type { ModelConfig } from '../config/model-config-schema';
import { defaultTargetModel, targetModelProblems } from '../repository/mme-rules';
import type { ValidationReport } from '../repository/validate';
import { CliError, CliIo, ExitCode, UsageError } from './io';
import { ModelLocationCommandOptions, ROLLOUT_ADVICE, cachedCopyNote, connectionOf, formatBytes, toJson } from './aws-options';

export interface PushOptions extends ModelLocationCommandOptions {
  /** The TargetModel name. @default the archive's file name, or `<directory>.tar.gz` */
  readonly name?: string;
  /** Replace an existing TargetModel. */
  readonly force?: boolean;
  /** gzip level when packing a directory. */
  readonly level?: string;
  /** Cancels the push (the CLI wires Ctrl-C to it; tests pass their own). */
  readonly signal?: AbortSignal;
  /** Multipart part size in bytes (tests use S3's 5 MiB minimum). */
  readonly partSize?: number;
  /** Name the TargetModel `<name>-<sha256:12>.tar.gz` (lib/bundle/target-model-name.ts, the CDK ModelArchive's rule). */
  readonly versioned?: boolean;
}

interface PushSource {
  readonly targetModel: string;
  /** Opens the bytes; archives are opened only once the upload may start. */
  readonly open: () => Readable;
  /** Abandons the source when nothing (more) will be read. */
  readonly close: () => void;
  readonly size?: number;
  /** The served model's config when known (directories), for the invoke example. */
  readonly config?: ModelConfig;
  readonly kind: 'archive' | 'directory';
  /** With --versioned: the archive the name was computed from, which the upload must match. */
  readonly versioned?: { readonly sha256: string; readonly size: number };
}

export async function runPush(given: string, options: PushOptions, io: CliIo): Promise<number> {
  const path = resolve(io.cwd, given);
  if (!options.endpoint && !options.s3) {
    throw new UsageError('Where to? Give --endpoint NAME (its ModelDataUrl is used) or --s3 s3://bucket/prefix/.');
  }
  if (options.versioned && options.force) {
    throw new UsageError(
      '--versioned and --force exclude each other: a versioned TargetModel is never replaced, its name changes with its content.',
    );
  }
  const source = await openSource(path, given, options, io);
  if (typeof source === 'number') return source;

  const controller = new AbortController();
  const onSigint = () => {
    io.stderr('\nCancelling: aborting the multipart upload so no parts are left behind (Ctrl-C again to quit at once)...\n');
    process.removeListener('SIGINT', onSigint);
    controller.abort();
  };
  process.on('SIGINT', onSigint);
  options.signal?.addEventListener('abort', () => controller.abort(), { once: true });
  try {
    return await pushSource(source, options, controller.signal, io);
  } finally {
    process.removeListener('SIGINT', onSigint);
    source.close();
  }
}

async function openSource(path: string, shown: string, options: PushOptions, io: CliIo): Promise<PushSource | number> {
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(path)).isDirectory();
  } catch {
    throw new UsageError(`${shown} does not exist; give a TargetModel archive (.tar.gz) or a model repository directory.`);
  }
  const targetModel = options.name ?? (isDirectory ? defaultTargetModel(path.replace(/[\\/]+$/, '') || path) : basename(path));
  const problem = targetModelProblems(targetModel);
  if (problem) throw new UsageError(`${problem}${options.name ? '' : ' Choose a name with --name.'}`);

  if (!isDirectory) {
    const { size } = await stat(path);
    await checkGzip(path, shown);
    const versioned = options.versioned ? await versionedName(path, { name: targetModel }) : undefined;
    let stream: Readable | undefined;
    return {
      targetModel: versioned?.targetModel ?? targetModel,
      ...(versioned ? { versioned } : {}),
      open: () => (stream = createReadStream(path, { highWaterMark: 1 << 20 })),
      close: () => stream?.destroy(),
      size,
      kind: 'archive',
    };
  }
  const level = options.level === undefined ? undefined : Number(options.level);
  if (level !== undefined && (!Number.isInteger(level) || level < 0 || level > 9)) {
    throw new UsageError(`--level ${options.level} is not a gzip level; use 0 (store) to 9 (smallest).`);
  }
  const { packRepository } = require('../archive/pack-repository') as typeof import('../archive/pack-repository');
  const { RepositoryAccessError } = require('../repository/validate') as typeof import('../repository/validate');
  // --versioned: a first pass through the deterministic packer names the archive; the upload streams the second.
  const versioned = options.versioned
    ? await versionedName(path, { name: targetModel, ...(level !== undefined ? { level } : {}) })
    : undefined;
  let packed;
  try {
    packed = await packRepository(path, { name: targetModel, ...(level !== undefined ? { level } : {}) });
  } catch (err) {
    if (err instanceof RepositoryAccessError) throw new UsageError(err.message);
    throw err;
  }
  if (!packed.ok) {
    const { formatReport, reportToJson } = require('./report-format') as typeof import('./report-format');
    if (options.json) io.stdout(toJson({ ok: false, validation: reportToJson(packed.report) }));
    else io.stderr(`${formatReport(packed.report, shown)}Nothing was uploaded: fix the errors above first.\n`);
    return ExitCode.Failure;
  }
  // The manifest rejects when the stream fails; the upload reports that failure, so this one is only observed.
  packed.manifest.catch(() => undefined);
  const config = servedConfig(packed.report);
  const stream = packed.stream;
  return {
    targetModel: versioned?.targetModel ?? packed.targetModel,
    open: () => stream,
    close: () => stream.destroy(),
    kind: 'directory',
    ...(config ? { config } : {}),
    ...(versioned ? { versioned } : {}),
  };
}

/** The versioned TargetModel of `path`; a directory with errors falls through to the packing that reports them. */
async function versionedName(path: string, options: { name: string; level?: number }) {
  const { versionedTargetModelOf } = await import('../bundle/versioned-target-model');
  const named = await versionedTargetModelOf(path, options);
  return named.ok ? named : undefined;
}

async function checkGzip(path: string, shown: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    const magic = Buffer.alloc(2);
    const { bytesRead } = await handle.read(magic, 0, 2, 0);
    if (bytesRead < 2 || magic[0] !== 0x1f || magic[1] !== 0x8b) {
      throw new UsageError(`${shown} is not gzip-compressed; SageMaker extracts every TargetModel as a .tar.gz. Push the repository directory instead, or make the archive with \`mme-deploy package\`.`);
    }
  } finally {
    await handle.close();
  }
}

/** The model SageMaker serves from this repository: the ensemble, or the only model. */
function servedConfig(report: ValidationReport): ModelConfig | undefined {
  const ensembles = report.models.filter((m) => m.platform === 'ensemble' || m.config?.platform === 'ensemble');
  if (ensembles.length === 1) return ensembles[0]!.config;
  return report.models.length === 1 ? report.models[0]!.config : undefined;
}

async function pushSource(source: PushSource, options: PushOptions, signal: AbortSignal, io: CliIo): Promise<number> {
  const { createS3Client } = require('../aws/aws-clients') as typeof import('../aws/aws-clients');
  const { resolveModelLocation } = require('../aws/endpoint') as typeof import('../aws/endpoint');
  const { headTargetModel, uploadTargetModel } = require('../aws/model-store') as typeof import('../aws/model-store');
  const connection = connectionOf(options);
  const { location, endpoint } = await resolveModelLocation({ ...options, ...connection });
  const s3 = createS3Client(connection);
  try {
    const url = `s3://${location.bucket}/${location.prefix}${source.targetModel}`;
    const existing = await headTargetModel(s3, location, source.targetModel, connection);
    if (existing && source.versioned && existing.size === source.versioned.size) {
      // The name holds the content hash: the same name and size is the same archive, already there.
      const { sha256 } = source.versioned;
      if (options.json) io.stdout(toJson({ targetModel: source.targetModel, url, size: existing.size, sha256, unchanged: true }));
      else io.stdout(`${source.targetModel} is already at ${url} (same content); nothing was uploaded.\n`);
      return ExitCode.Ok;
    }
    if (existing && !options.force) {
      const when = existing.lastModified ? `, last modified ${existing.lastModified.toISOString()}` : '';
      throw new CliError(
        `${url} already exists (${formatBytes(existing.size)}${when}); nothing was uploaded. Push under another name with --name (recommended: callers switch when ready), or replace it with --force. ${cachedCopyNote(source.targetModel)} ${ROLLOUT_ADVICE}`,
      );
    }
    if (existing) io.stderr(`Replacing ${url} (--force). ${cachedCopyNote(source.targetModel)} ${ROLLOUT_ADVICE}\n`);

    const progress = progressReporter(io, source);
    const started = Date.now();
    let result;
    try {
      result = await uploadTargetModel({
        client: s3,
        location,
        targetModel: source.targetModel,
        body: source.open(),
        force: Boolean(options.force),
        signal,
        onProgress: progress.update,
        ...(source.size !== undefined ? { size: source.size } : {}),
        ...(options.partSize ? { partSize: options.partSize } : {}),
        ...connection,
      });
    } finally {
      progress.stop();
    }
    if (source.versioned) await checkVersionedResult(source, result.sha256, s3, location, connection);
    const seconds = (Date.now() - started) / 1000;
    const invoke = invokeExample(source, endpoint?.endpointName ?? options.endpoint);
    if (options.json) {
      io.stdout(
        toJson({
          targetModel: source.targetModel,
          url: result.url,
          size: result.size,
          sha256: result.sha256,
          etag: result.etag ?? null,
          versionId: result.versionId ?? null,
          replaced: Boolean(existing),
          seconds,
          endpoint: endpoint?.endpointName ?? null,
        }),
      );
    } else {
      io.stdout(
        `Pushed ${source.targetModel} to ${result.url}\n` +
          `  ${formatBytes(result.size)} in ${seconds.toFixed(1)} s, sha256 ${result.sha256}\n` +
          `TargetModel: ${source.targetModel}\n` +
          `Invoke it:\n  ${invoke}\n`,
      );
    }
    return ExitCode.Ok;
  } finally {
    s3.destroy();
  }
}

/** The uploaded bytes must be the ones the name was computed from; otherwise the upload is removed again. */
async function checkVersionedResult(
  source: PushSource,
  sha256: string,
  s3: import('@aws-sdk/client-s3').S3Client,
  location: import('../aws/s3-location').ModelLocation,
  connection: ReturnType<typeof connectionOf>,
): Promise<void> {
  const { checkVersionedUpload } = await import('../bundle/versioned-target-model');
  try {
    checkVersionedUpload({ targetModel: source.targetModel, sha256: source.versioned!.sha256 }, sha256);
  } catch (err) {
    const { deleteTargetModel } = await import('../aws/model-store');
    await deleteTargetModel(s3, location, source.targetModel, connection);
    throw new CliError(`${(err as Error).message} The upload was removed again.`);
  }
}

function invokeExample(source: PushSource, endpointName: string | undefined): string {
  const endpoint = endpointName ?? '<endpoint-name>';
  const inputs = (source.config?.input ?? []).map((input) => {
    const type = input.data_type;
    if (type === 'TYPE_STRING') return `--text ${input.name}="Hello world"`;
    if (type === 'TYPE_UINT8') return `--input ${input.name}=@image.jpg`;
    return `--input ${input.name}=@${(input.name ?? 'input').toLowerCase()}.json`;
  });
  const args = inputs.length > 0 ? inputs.join(' ') : '--input NAME=@input.json';
  return `mme-deploy invoke --endpoint ${endpoint} --target-model ${source.targetModel} ${args}`;
}

interface ProgressReporter {
  update(uploaded: number, total: number | undefined): void;
  stop(): void;
}

/** A cli-progress bar on a terminal (stderr); elsewhere a plain line every 10 % (or every 256 MiB when the size is
 *  unknown), so logs stay readable. */
function progressReporter(io: CliIo, source: PushSource): ProgressReporter {
  const label = source.kind === 'directory' ? 'packing + uploading' : 'uploading';
  if (io.isTTY) {
    const { SingleBar, Presets } = require('cli-progress') as typeof import('cli-progress');
    const known = source.size !== undefined;
    const bar = new SingleBar(
      {
        stream: process.stderr,
        format: known
          ? `${label} [{bar}] {percentage}% | {done} of {size} | {speed}/s | eta {eta_formatted}`
          : `${label} {done} | {speed}/s`,
        hideCursor: true,
        clearOnComplete: false,
        etaBuffer: 20,
      },
      Presets.shades_classic,
    );
    const started = Date.now();
    bar.start(source.size ?? 1, 0, { done: formatBytes(0), size: formatBytes(source.size ?? 0), speed: formatBytes(0) });
    return {
      update(uploaded) {
        const speed = uploaded / Math.max(0.001, (Date.now() - started) / 1000);
        bar.update(known ? uploaded : 0, { done: formatBytes(uploaded), speed: formatBytes(speed) });
      },
      stop: () => bar.stop(),
    };
  }
  let nextMark = 0;
  return {
    update(uploaded, total) {
      if (uploaded < nextMark) return;
      if (total) {
        const percent = Math.floor((uploaded / total) * 100);
        io.stderr(`${label}: ${percent}% (${formatBytes(uploaded)} of ${formatBytes(total)})\n`);
        nextMark = Math.min(total, (Math.floor(percent / 10) + 1) * total * 0.1);
        if (uploaded >= total) nextMark = Infinity;
      } else {
        io.stderr(`${label}: ${formatBytes(uploaded)}\n`);
        nextMark = uploaded + 256 * 1024 * 1024;
      }
    },
    stop() {},
  };
}
