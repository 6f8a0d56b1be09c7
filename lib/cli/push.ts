// `mme-deploy push <archive.tar.gz | repository-dir>`: reads the options, makes one library call (pushTargetModel:
// validate and pack a directory on the fly, never replace without --force, abort cleanly) and prints the result.

import { resolve } from 'node:path';
import { Presets, SingleBar } from 'cli-progress';
import { cachedCopyNote, ROLLOUT_ADVICE } from '../aws/model-store';
import type { ModelConfig } from '../config/model-config-schema';
import { MmeError } from '../errors';
import { formatBytes } from '../format-bytes';
import { PushStart, pushTargetModel } from '../push/push-target-model';
import { shellCommand, shellQuote } from '../shell-quote';
import { ModelLocationCommandOptions, connectionOf } from './aws-options';
import { refuseZip, withPathAsGiven } from './cli-errors';
import { CliIo, ExitCode, note } from './io';
import { toJson } from './json';
import { formatReport, reportToJson } from './report-format';

export interface PushOptions extends ModelLocationCommandOptions {
  /** The TargetModel name. @default the archive's file name, or `<directory>.tar.gz` */
  readonly name?: string;
  /** Replace an existing TargetModel. */
  readonly force?: boolean;
  /** gzip level when packing a directory. */
  readonly level?: string;
  /** Cancels the push (program.ts wires Ctrl-C, SIGTERM and SIGHUP to it; tests pass their own). */
  readonly signal?: AbortSignal;
  /** Registers what to print if the user quits before the cancelled upload is aborted (program.ts). */
  readonly onQuit?: (describe: () => string | undefined) => void;
  /** Multipart part size in bytes (tests use S3's 5 MiB minimum). */
  readonly partSize?: number;
  /** Name the TargetModel `<name>-<sha256:12>.tar.gz`, as the CDK ModelArchive does. */
  readonly versioned?: boolean;
  /** `--no-verify` makes it false: an archive is uploaded with only its gzip magic checked. */
  readonly verify?: boolean;
}

export async function runPush(given: string, options: PushOptions, io: CliIo): Promise<number> {
  refuseZip(given, io.cwd);
  if (!options.endpoint && !options.s3) {
    throw new MmeError('USAGE', 'Where to? Give --endpoint NAME (its ModelDataUrl is used) or --s3 s3://bucket/prefix/.');
  }
  const level = options.level === undefined ? undefined : Number(options.level);
  if (level !== undefined && (!Number.isInteger(level) || level < 0 || level > 9)) {
    throw new MmeError('USAGE', `--level ${options.level} is not a gzip level; use 0 (store) to 9 (smallest).`);
  }
  let progress: ProgressReporter | undefined;
  let started = 0;
  let cleanup: string | undefined;
  options.onQuit?.(() => (cleanup ? `Parts of the upload may remain in S3 (and are billed); remove them with: ${cleanup}` : undefined));
  const onStart = (start: PushStart) => {
    if (start.replacing) {
      note(io, `Replacing ${start.url} (--force). ${cachedCopyNote(start.targetModel)} ${ROLLOUT_ADVICE}\n`);
    }
    progress = progressReporter(io, start);
    started = Date.now();
  };
  let result;
  const source = resolve(io.cwd, given);
  try {
    result = await pushTargetModel({
      source,
      shown: given,
      location: { ...connectionOf(options), ...locationOf(options) },
      force: Boolean(options.force),
      onStart,
      onProgress: (uploaded, total) => progress?.update(uploaded, total),
      ...(options.name !== undefined ? { name: options.name } : {}),
      ...(level !== undefined ? { level } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.partSize ? { partSize: options.partSize } : {}),
      onMultipartUpload: (command) => (cleanup = command),
      ...(options.versioned ? { versioned: true } : {}),
      ...(options.verify === false ? { verify: false } : {}),
    });
  } catch (err) {
    throw withPathAsGiven(err, source, given);
  } finally {
    progress?.stop();
  }
  if (!result.ok) {
    if (options.json) io.stdout(toJson({ ok: false, validation: reportToJson(result.report) }));
    else io.stderr(`${formatReport(result.report, given)}Nothing was uploaded: fix the errors above first.\n`);
    return ExitCode.Failure;
  }
  if (result.unchanged) {
    const { targetModel, url, size, sha256 } = result;
    if (options.json) io.stdout(toJson({ targetModel, url, size, sha256, unchanged: true }));
    else io.stdout(`${targetModel} is already at ${url} (same content); nothing was uploaded.\n`);
    return ExitCode.Ok;
  }
  const { upload, targetModel } = result;
  const seconds = (Date.now() - started) / 1000;
  const endpointName = result.endpoint?.endpointName ?? options.endpoint;
  if (options.json) {
    io.stdout(
      toJson({
        targetModel,
        url: upload.url,
        size: upload.size,
        sha256: upload.sha256,
        etag: upload.etag ?? null,
        versionId: upload.versionId ?? null,
        replaced: result.replaced,
        seconds,
        endpoint: result.endpoint?.endpointName ?? null,
      }),
    );
  } else {
    io.stdout(
      `Pushed ${targetModel} to ${upload.url}\n` +
        `  ${formatBytes(upload.size)} in ${seconds.toFixed(1)} s, sha256 ${upload.sha256}\n` +
        `TargetModel: ${targetModel}\n` +
        `Invoke it:\n  ${invokeExample(targetModel, result.config, endpointName)}\n`,
    );
  }
  return ExitCode.Ok;
}

function locationOf(options: PushOptions) {
  return {
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.s3 ? { s3: options.s3 } : {}),
    ...(options.variant ? { variant: options.variant } : {}),
  };
}

function invokeExample(targetModel: string, config: ModelConfig | undefined, endpointName: string | undefined): string {
  const endpoint = endpointName ? shellQuote(endpointName) : '<endpoint-name>';
  const inputs = (config?.input ?? []).map((input) => {
    const type = input.data_type;
    if (type === 'TYPE_STRING') return shellCommand(['--text', `${input.name}=Hello world`]);
    if (type === 'TYPE_UINT8') return shellCommand(['--input', `${input.name}=@image.jpg`]);
    return shellCommand(['--input', `${input.name}=@${(input.name ?? 'input').toLowerCase()}.json`]);
  });
  const args = inputs.length > 0 ? inputs.join(' ') : '--input NAME=@input.json';
  return `${shellCommand(['mme-deploy', 'invoke', targetModel])} --endpoint ${endpoint} ${args}`;
}

interface ProgressReporter {
  update(uploaded: number, total: number | undefined): void;
  stop(): void;
}

/** A cli-progress bar on a terminal (stderr); elsewhere a plain line every 10 % (or every 256 MiB when the size is
 *  unknown), so logs stay readable. */
function progressReporter(io: CliIo, source: PushStart): ProgressReporter {
  const label = source.kind === 'directory' ? 'packing + uploading' : 'uploading';
  if (io.isTTY) {
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
        note(io, `${label}: ${percent}% (${formatBytes(uploaded)} of ${formatBytes(total)})\n`);
        nextMark = Math.min(total, (Math.floor(percent / 10) + 1) * total * 0.1);
        if (uploaded >= total) nextMark = Infinity;
      } else {
        note(io, `${label}: ${formatBytes(uploaded)}\n`);
        nextMark = uploaded + 256 * 1024 * 1024;
      }
    },
    stop() {},
  };
}
