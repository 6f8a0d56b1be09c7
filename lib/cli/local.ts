// `mme-deploy local load|invoke|unload|list`: drives a Triton container on this machine through the same requests
// SageMaker sends to an MME container, so an archive's load/invoke/unload cycle can be tried before deploying.

import type { InvokeInputOptions } from './invoke-flags';
import { stat } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { CliError, CliIo, ExitCode } from './io';
import { MmeError } from '../errors';
import { shellCommand, shellQuote } from '../shell-quote';
import { errorJson } from './json';
import { formatDiagnosticText } from './report-format';
import { buildInvokeRequest, decodeInferenceResponse, formatInferenceResponse, inferenceResponseToJson } from '../kserve/invoke-request';
import type { ModelConfig } from '../config/model-config-schema';
import { readInvokeModelConfig } from '../aws/invoke-model-config';
import {
  ContainerResponse,
  DEFAULT_CONTAINER_URL,
  MmeContainerClient,
  expectSuccess,
  parseContainerUrl,
  parseModelList,
} from '../local/container-client';
import {
  CONTAINER_MODELS_ROOT,
  checkArchiveFile,
  containerModelUrl,
  defaultTargetModel,
  listStaged,
  modelHash,
  stageArchive,
  targetModelProblem,
} from '../local/model-store';
import { compareWithTarget, inspectLocalContainer, queryLocalGpus, resolveTarget, TargetFinding } from '../local/target-environment';
import { refuseZip } from './cli-errors';
import { escapeLine } from './terminal-text';

/** The models directory when neither --models-dir nor MME_DEPLOY_LOCAL_MODELS_DIR is given (relative to cwd). */
export const DEFAULT_MODELS_DIR = 'mme-local-models';

export interface LocalConnectionOptions {
  /** The container's SageMaker port. @default MME_DEPLOY_LOCAL_URL, else http://127.0.0.1:8080 */
  readonly url?: string;
  /** The host directory mounted at /opt/ml/models. @default MME_DEPLOY_LOCAL_MODELS_DIR, else ./mme-local-models */
  readonly modelsDir?: string;
  readonly json?: boolean;
}

export interface LocalLoadOptions extends LocalConnectionOptions {
  /** The TargetModel name. @default the archive's file name */
  readonly name?: string;
  /** Where the container sees --models-dir. @default /opt/ml/models */
  readonly containerRoot?: string;
  /** The endpoint's instance type this machine is compared with. @default ml.g4dn.xlarge */
  readonly instanceType?: string;
  /** The endpoint's InferenceAmiVersion (its GPU driver). @default - SageMaker's default driver */
  readonly inferenceAmiVersion?: string;
  /** The Triton release deployed. @default the local container's, else DEFAULT_TRITON_VERSION */
  readonly tritonVersion?: string;
  /** The local container's name or id, for its /dev/shm. @default the container publishing --url's port */
  readonly container?: string;
  /**
   * Stage for a container without a GPU: KIND_GPU instance groups become KIND_CPU in the staged copy (each model
   * named), models that need a GPU refuse the archive. @default false - the archive's files as they are
   */
  readonly cpu?: boolean;
}

export interface LocalInvokeOptions extends LocalConnectionOptions, InvokeInputOptions {}

export async function runLocalLoad(archive: string, options: LocalLoadOptions, io: CliIo, signal?: AbortSignal): Promise<number> {
  // The archive first: a zip or a missing file is named before any container is looked for.
  refuseZip(archive, io.cwd);
  await checkArchiveFile(resolve(io.cwd, archive), archive);
  const client = clientFor(options, io, signal);
  const targetModel = options.name ?? defaultTargetModel(archive);
  const problem = targetModelProblem(targetModel);
  if (problem) throw new MmeError('USAGE', `TargetModel ${JSON.stringify(targetModel)} ${problem}.`);
  const containerRoot = options.containerRoot ?? CONTAINER_MODELS_ROOT;
  if (!containerRoot.startsWith('/')) {
    throw new MmeError(
      'USAGE',
      `--container-root ${containerRoot} must be an absolute path inside the container (default ${CONTAINER_MODELS_ROOT}).`,
    );
  }
  const hash = modelHash(targetModel);
  // Before anything is sent: a bad --instance-type, --triton-version or --inference-ami-version is a usage error.
  resolveTarget(options);

  // Ask first, so that the files of a model the container is serving are never replaced under it.
  const current = await client.describe(hash);
  if (current.status === 200) {
    throw new MmeError(
      'ALREADY_EXISTS',
      `${targetModel} is already loaded (GET /models/${hash} answered 200). SageMaker never loads a model twice; ` +
        `run \`${shellCommand(['mme-deploy', 'local', 'unload', targetModel])}\` first to load a new copy.`,
    );
  }

  const modelsDir = modelsDirFor(options, io);
  const cpu = options.cpu === true;
  const outcome = await stageArchive(resolve(io.cwd, archive), modelsDir, targetModel, {
    ...(cpu ? { device: 'cpu' as const } : {}),
    ...(signal ? { signal } : {}),
  });
  for (const d of outcome.diagnostics) io.stderr(`${formatDiagnosticText(d, { prefix: `${archive}: ` })}\n`);
  const staged = outcome.staged;
  if (!staged) {
    const message =
      outcome.refusedFor === 'cpu'
        ? `refused to load ${archive} with --cpu: the errors above name the models that cannot run without a GPU. ` +
          'Nothing was staged or sent to the container.'
        : `refused to load ${archive}: SageMaker would not load it as intended (the errors above, the rules ` +
          '`mme-deploy package` applies). Nothing was sent to the container.';
    io.stderr(`mme-deploy: ${escapeLine(message)}\n`);
    if (options.json) io.stdout(errorJson('INVALID', message, { diagnostics: outcome.diagnostics }));
    return ExitCode.Failure;
  }

  // This machine against the endpoint it stands in for: the GPU, its driver, the container's /dev/shm.
  // With --cpu the container has no GPU to compare: what the target's GPU does is left untried, and said so once.
  const [gpus, container] = await Promise.all([
    cpu ? undefined : queryLocalGpus(io.env),
    inspectLocalContainer(client.baseUrl, options.container, io.env),
  ]);
  const target = resolveTarget(options, container);
  const compared = compareWithTarget({ ...(gpus ? { gpus } : {}), ...(container ? { container } : {}) }, target, staged.tensorrtPlans);
  const findings = cpu ? [cpuModeNote(target), ...compared.filter((f) => f.code !== 'local-gpu-unknown')] : compared;
  if (!options.json) for (const finding of findings) io.stderr(formatFinding(finding));

  const url = containerModelUrl(hash, containerRoot);
  const started = performance.now();
  expectSuccess('load', targetModel, await client.load(hash, targetModel, url));
  const seconds = (performance.now() - started) / 1000;

  if (options.json) {
    io.stdout(
      `${JSON.stringify({
        targetModel,
        hash,
        url,
        modelDir: staged.modelDir,
        entries: staged.entries.length,
        replaced: staged.replaced,
        ...(cpu ? { device: 'cpu', rewritten: staged.rewritten } : {}),
        loadSeconds: round(seconds),
        target: { instanceType: target.instanceType.name, tritonVersion: target.tritonVersion, driverBranch: target.driver.branch },
        findings,
        diagnostics: outcome.diagnostics,
      })}\n`,
    );
  } else {
    io.stdout(
      `Loaded ${targetModel} in ${seconds.toFixed(1)} s\n` +
        `  hash (model_name): ${hash}\n` +
        `  extracted to:      ${staged.modelDir} ` +
        `(${staged.entries.length} entries${staged.replaced ? ', replacing the previous copy' : ''})\n` +
        `  container url:     ${url}\n` +
        (cpu ? `  device:            CPU (${rewrittenText(staged.rewritten)})\n` : '') +
        `Invoke it with: mme-deploy local invoke ${shellQuote(targetModel)} ` +
        `${invokeHint(await servedModelConfig(staged.modelDir).catch(() => undefined))}\n`,
    );
  }
  return ExitCode.Ok;
}

/** What a --cpu load leaves untried: everything about the target's GPU. */
function cpuModeNote(target: { readonly instanceType: { readonly name: string; readonly gpuModel: string } }): TargetFinding {
  return {
    severity: 'note',
    code: 'cpu-mode',
    message:
      `--cpu: the models run on this machine's CPU, so GPU memory, speed, TensorRT and the driver of ` +
      `${target.instanceType.name} (${target.instanceType.gpuModel}) are not tried here.`,
  };
}

function rewrittenText(models: readonly string[]): string {
  if (models.length === 0) return 'no config needed a change';
  return `config.pbtxt rewritten for ${models.map((m) => escapeLine(m)).join(', ')}`;
}

function formatFinding(finding: TargetFinding): string {
  return `mme-deploy: ${finding.severity} [${finding.code}] ${finding.message}\n`;
}

export async function runLocalInvoke(targetModel: string, options: LocalInvokeOptions, io: CliIo, signal?: AbortSignal): Promise<number> {
  const client = clientFor(options, io, signal);
  const top = parseTop(options.top);
  const hash = modelHash(targetModel);
  // The config of the model the container serves for this archive shapes and types the inputs, like `invoke`.
  // When that model cannot be told (an ambiguous archive), explicit --shape/--datatype still let the request go.
  let modelConfig: ModelConfig | undefined;
  if (options.body === undefined) {
    try {
      modelConfig = await servedModelConfig(join(modelsDirFor(options, io), hash, 'model'));
    } catch (err) {
      const userError = err instanceof CliError || err instanceof MmeError;
      if (!userError || (options.shape === undefined && options.datatype === undefined)) throw err;
    }
  }
  const request = await buildInvokeRequest(
    {
      ...(options.input ? { inputs: options.input } : {}),
      ...(options.text ? { texts: options.text } : {}),
      ...(options.body !== undefined ? { body: options.body } : {}),
      ...(options.binary !== undefined ? { binary: options.binary } : {}),
      ...(options.shape !== undefined ? { shape: options.shape } : {}),
      ...(options.datatype !== undefined ? { datatype: options.datatype } : {}),
      ...(options.output ? { outputs: options.output } : {}),
    },
    modelConfig,
    { cwd: io.cwd },
  );

  const started = performance.now();
  const response = expectSuccess('invoke', targetModel, await client.invoke(hash, targetModel, request.body, request.contentType));
  const milliseconds = performance.now() - started;
  const decoded = decodeInferenceResponse(response.body, contentTypeOf(response));
  if (options.json) {
    io.stdout(`${JSON.stringify(inferenceResponseToJson(decoded))}\n`);
  } else {
    io.stdout(formatInferenceResponse(decoded, top !== undefined ? { top } : {}));
    io.stdout(`latency ${milliseconds.toFixed(1)} ms (local container, no SageMaker routing)\n`);
  }
  return ExitCode.Ok;
}

export async function runLocalUnload(targetModel: string, options: LocalConnectionOptions, io: CliIo): Promise<number> {
  const client = clientFor(options, io);
  const hash = modelHash(targetModel);
  const started = performance.now();
  expectSuccess('unload', targetModel, await client.unload(hash, targetModel));
  const seconds = (performance.now() - started) / 1000;
  if (options.json) {
    io.stdout(`${JSON.stringify({ targetModel, hash, unloadSeconds: round(seconds) })}\n`);
  } else {
    io.stdout(
      `Unloaded ${targetModel} (${hash}) in ${seconds.toFixed(1)} s. ` +
        'Its extracted files stay in the models directory, as SageMaker keeps them on disk; the next load replaces them.\n',
    );
  }
  return ExitCode.Ok;
}

interface ListedRow {
  targetModel?: string;
  hash: string;
  loaded: boolean;
  modelUrl?: string;
  archive?: string;
}

export async function runLocalList(options: LocalConnectionOptions, io: CliIo): Promise<number> {
  const client = clientFor(options, io);
  const listed = parseModelList(expectSuccess('list', '(all models)', await client.list()));
  const staged = await listStaged(modelsDirFor(options, io));

  const rows = new Map<string, ListedRow>();
  for (const [hash, record] of staged) {
    // Triton's GET /models only names models whose Triton name equals their hash, which a TargetModel never is,
    // so each staged archive is asked about directly.
    const described = await client.describe(hash);
    rows.set(hash, {
      targetModel: record.targetModel,
      hash,
      loaded: described.status === 200,
      archive: record.archive,
      ...modelUrlOf(described),
    });
  }
  let unnamed = 0;
  for (const model of listed) {
    if (!model.modelName) {
      unnamed += 1;
      continue;
    }
    const row = rows.get(model.modelName);
    rows.set(model.modelName, {
      ...(row ?? { hash: model.modelName }),
      loaded: true,
      ...(model.modelUrl ? { modelUrl: model.modelUrl } : {}),
    });
  }
  const all = [...rows.values()].sort((a, b) => (a.targetModel ?? a.hash).localeCompare(b.targetModel ?? b.hash));
  if (options.json) {
    io.stdout(`${JSON.stringify({ models: all, unnamed })}\n`);
    return ExitCode.Ok;
  }
  if (all.length === 0 && unnamed === 0) {
    io.stdout('No models loaded or extracted. Load one with: mme-deploy local load <archive.tar.gz>\n');
    return ExitCode.Ok;
  }
  const header = ['TARGET MODEL', 'HASH', 'STATE'];
  const table = all.map((row) => [
    row.targetModel !== undefined ? escapeLine(row.targetModel) : '(not loaded by mme-deploy)',
    row.hash,
    row.loaded ? 'loaded' : 'extracted, not loaded',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((r) => r[i]!.length)));
  for (const line of [header, ...table]) io.stdout(`${line.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell)).join('  ')}\n`);
  if (unnamed > 0) {
    io.stdout(
      `${unnamed} entr${unnamed === 1 ? 'y' : 'ies'} of GET /models came back as {}: Triton lists a model by name only ` +
        'when its Triton name equals its hash, and a TargetModel never does.\n',
    );
  }
  return ExitCode.Ok;
}

// ---------------------------------------------------------------------------------------------------------------

function clientFor(options: LocalConnectionOptions, io: CliIo, signal?: AbortSignal): MmeContainerClient {
  return new MmeContainerClient(parseContainerUrl(options.url ?? io.env.MME_DEPLOY_LOCAL_URL ?? DEFAULT_CONTAINER_URL), signal);
}

function modelsDirFor(options: LocalConnectionOptions, io: CliIo): string {
  const dir = options.modelsDir ?? io.env.MME_DEPLOY_LOCAL_MODELS_DIR ?? DEFAULT_MODELS_DIR;
  return isAbsolute(dir) ? dir : resolve(io.cwd, dir);
}

function parseTop(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(text)) throw new MmeError('USAGE', `--top ${text} must be a positive whole number, e.g. --top 5.`);
  return Number(text);
}

/**
 * The config of the model Triton serves from the extracted copy of the archive (the ensemble, as its LOAD picks it),
 * or undefined when there is no copy: then the flags alone shape the request.
 */
async function servedModelConfig(modelDir: string): Promise<ModelConfig | undefined> {
  const found = await stat(modelDir).catch(() => undefined);
  if (!found?.isDirectory()) return undefined;
  return (await readInvokeModelConfig(modelDir)).config;
}

/** Example input flags for the served model: `--text NAME=...` for string inputs, `--input NAME=@NAME.json` else. */
function invokeHint(config: ModelConfig | undefined): string {
  const inputs = config?.input ?? [];
  if (inputs.length === 0) return '--input NAME=@file.json | --text NAME=sentence | --body request.json';
  return inputs
    .map((input) =>
      input.data_type === 'TYPE_STRING'
        ? shellCommand(['--text', `${input.name}=...`])
        : shellCommand(['--input', `${input.name}=@${input.name}.json`]),
    )
    .join(' ');
}

function contentTypeOf(response: ContainerResponse): string | undefined {
  const value = response.headers['content-type'];
  return Array.isArray(value) ? value[0] : value;
}

function modelUrlOf(response: ContainerResponse): { modelUrl?: string } {
  if (response.status !== 200) return {};
  try {
    const parsed = JSON.parse(response.body.toString('utf8')) as { modelUrl?: unknown };
    return typeof parsed.modelUrl === 'string' ? { modelUrl: parsed.modelUrl } : {};
  } catch {
    return {};
  }
}

function round(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}
