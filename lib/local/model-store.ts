// The models directory a local Triton container mounts at /opt/ml/models, laid out exactly as SageMaker lays out its
// own: each TargetModel archive extracted into `<root>/<hash>/model/` (triton-inference-server/server:src/sagemaker_server.cc:1040-1066).

import { createHash, randomBytes } from 'node:crypto';
import { Dirent } from 'node:fs';
import { constants } from 'node:fs';
import { access, mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { extractTarGz } from '../archive/tar-reader';
import { diagnostic, Diagnostic, hasErrors } from '../diagnostics';
import { ErrorCode, MmeError, isMmeError, unreadable } from '../errors';
import { discoverModels, RepositoryAccessError } from '../repository/discover';
import { checkMmeArchive, outsideTheLoad } from '../repository/mme-rules';
import type { Discovery } from '../repository/discover';
import { planCpuStaging } from './cpu-mode';

/** Where SageMaker puts MME archives inside the container; the only root Triton's LOAD accepts. */
export const CONTAINER_MODELS_ROOT = '/opt/ml/models';

/** Written beside `model/` so that later commands know which TargetModel a hash directory holds. */
export const STAGE_RECORD = '.mme-deploy-local.json';

export interface StageRecord {
  readonly targetModel: string;
  readonly archive: string;
  /** 'cpu' when the copy was staged by `local load --cpu` (its configs rewritten for a container without a GPU). */
  readonly device?: 'cpu';
}

export interface StageOptions {
  /**
   * 'cpu': stage for a container without a GPU (lib/local/cpu-mode.ts): KIND_GPU instance groups become KIND_CPU in
   * the copy, and an archive with a model that needs a GPU is refused. @default 'gpu' - the archive's files as they are
   */
  readonly device?: 'gpu' | 'cpu';
  readonly signal?: AbortSignal;
}

/**
 * The `model_name` SageMaker would send for a TargetModel: opaque to Triton, used in `/models/<hash>` URLs and as
 * the directory name. Deterministic so that `load`, `invoke` and `unload` agree without shared state, and made of
 * the characters Triton's url check accepts (`[0-9A-Za-z._]+`).
 */
export function modelHash(targetModel: string): string {
  return createHash('sha256').update(targetModel, 'utf8').digest('hex').slice(0, 32);
}

/** The LOAD body's `url`: the archive's extraction directory as the container sees it. */
export function containerModelUrl(hash: string, containerRoot: string = CONTAINER_MODELS_ROOT): string {
  return `${containerRoot.replace(/\/+$/, '')}/${hash}/model`;
}

/** The TargetModel a `load` without `--name` uses: the archive's file name, as `push` names its S3 objects. */
export function defaultTargetModel(archive: string): string {
  return basename(archive);
}

/** Why Triton would refuse this TargetModel (it becomes the Triton model name), or undefined when it is fine. */
export function targetModelProblem(targetModel: string): string | undefined {
  if (targetModel === '') return 'is empty';
  if (targetModel.includes('/')) {
    return (
      'contains "/", which Triton refuses in a model name ("must not contain path traversal characters"); ' +
      'use a flat name such as sentiment.tar.gz'
    );
  }
  if (targetModel === '.' || targetModel === '..') return 'is not a usable model name';
  if (/[\u0000-\u001f\u007f]/.test(targetModel)) return 'contains control characters';
  return undefined;
}

export interface StagedArchive {
  readonly hash: string;
  /** `<modelsDir>/<hash>` on this machine. */
  readonly hashDir: string;
  /** `<modelsDir>/<hash>/model` on this machine: the archive's content. */
  readonly modelDir: string;
  /** Entries extracted, in archive order. */
  readonly entries: readonly string[];
  /** True when an earlier copy written by `local load` was replaced. */
  readonly replaced: boolean;
  /** The models whose platform is `tensorrt_plan`: their engines must match the target GPU. */
  readonly tensorrtPlans: readonly string[];
  /** With `device: 'cpu'`: the models whose config.pbtxt the copy holds rewritten. */
  readonly rewritten: readonly string[];
}

/** What staging found: the archive rules' diagnostics and, unless one of them is an error, the installed copy. */
export interface StageOutcome {
  /** The SageMaker MME archive rules applied to the extracted archive (paths relative to the archive root). */
  readonly diagnostics: readonly Diagnostic[];
  /** Undefined when the archive was refused: nothing was installed and an earlier copy is untouched. */
  readonly staged?: StagedArchive;
  /** Why it was refused: the MME archive rules, or a model that cannot run without a GPU (`device: 'cpu'`). */
  readonly refusedFor?: 'mme-rules' | 'cpu';
}

/**
 * Extracts `archive` into `<modelsDir>/<hash>/model/`, then applies the SageMaker MME archive rules to the extracted
 * files (what `package` checks, here on what Triton will really see): an archive with errors, such as one whose model
 * Triton would pick by readdir order, is refused and nothing is installed. Links that stay inside the archive are
 * extracted (conda environments hold them); a link that leaves it refuses the archive. The copy is built beside the
 * destination and renamed into place, so a failure leaves nothing half-written. A previous copy that `local load`
 * wrote for the same TargetModel is replaced; a directory it did not write is never touched.
 */
export async function stageArchive(
  archive: string,
  modelsDir: string,
  targetModel: string,
  signalOrOptions?: AbortSignal | StageOptions,
): Promise<StageOutcome> {
  const options: StageOptions = signalOrOptions instanceof AbortSignal ? { signal: signalOrOptions } : (signalOrOptions ?? {});
  const signal = options.signal;
  const cpu = options.device === 'cpu';
  const archivePath = resolve(archive);
  await checkArchiveFile(archivePath, archive);

  const root = resolve(modelsDir);
  const hash = modelHash(targetModel);
  const hashDir = join(root, hash);
  const existing = await stat(hashDir).catch(() => undefined);
  if (existing && !(await readStageRecord(hashDir))) {
    throw new MmeError(
      'ALREADY_EXISTS',
      `${hashDir} already exists and was not written by \`mme-deploy local load\`; not overwriting it. ` +
        'Remove it yourself or choose another --models-dir.',
    );
  }

  await mkdir(root, { recursive: true });
  const suffix = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const staging = join(root, `.${hash}.staging-${suffix}`);
  let entries: string[];
  let checked: Checked;
  let rewritten: string[] = [];
  try {
    // SageMaker's loader scans every top-level directory as a model: thousands are no model archive.
    const bounds = { links: 'inside' as const, maxTopLevel: MAX_TOP_LEVEL_ENTRIES };
    entries = await extractTarGz(archivePath, join(staging, 'model'), { ...bounds, ...(signal ? { signal } : {}) });
    checked = await checkExtracted(join(staging, 'model'), targetModel);
    if (hasErrors(checked.diagnostics)) {
      await rm(staging, { recursive: true, force: true });
      return { diagnostics: checked.diagnostics, refusedFor: 'mme-rules' };
    }
    if (cpu && checked.discovery) {
      // Only the staged copy changes: the configs were extracted from the archive, which is only ever read.
      const plan = planCpuStaging(checked.discovery);
      checked = { ...checked, diagnostics: [...checked.diagnostics, ...plan.diagnostics] };
      if (hasErrors(plan.diagnostics)) {
        await rm(staging, { recursive: true, force: true });
        return { diagnostics: checked.diagnostics, refusedFor: 'cpu' };
      }
      for (const rewrite of plan.rewrites) {
        // Replaced, not written through: a config.pbtxt the archive links (hard or soft) to another file stays apart.
        await rm(rewrite.path, { force: true });
        await writeFile(rewrite.path, rewrite.text, { flag: 'wx' });
      }
      rewritten = plan.rewrites.map((r) => r.model);
    }
    const record: StageRecord = { targetModel, archive: archivePath, ...(cpu ? { device: 'cpu' as const } : {}) };
    await writeFile(join(staging, STAGE_RECORD), `${JSON.stringify(record, null, 2)}\n`);
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    if (isMmeError(err, 'ABORTED')) {
      throw new MmeError('ABORTED', `interrupted: ${archive} was not loaded, and nothing of it was left in ${modelsDir}.`);
    }
    throw new MmeError(extractionErrorCode(err), `Could not extract ${archive}: ${(err as Error).message}`, { cause: err });
  }

  if (existing) {
    const old = join(root, `.${hash}.old-${suffix}`);
    await rename(hashDir, old);
    await rename(staging, hashDir);
    await rm(old, { recursive: true, force: true });
  } else {
    await rename(staging, hashDir);
  }
  const staged = {
    hash,
    hashDir,
    modelDir: join(hashDir, 'model'),
    entries,
    replaced: Boolean(existing),
    tensorrtPlans: checked.tensorrtPlans,
    rewritten,
  };
  return { diagnostics: checked.diagnostics, staged };
}

/** Top-level entries an archive may hold before `local load` refuses it without extracting the rest. */
const MAX_TOP_LEVEL_ENTRIES = 1000;

/**
 * Throws NOT_FOUND or UNREADABLE unless `path` is a regular file this user may read: checked before anything else
 * (a container is asked nothing about an archive that is not there).
 */
export async function checkArchiveFile(path: string, shown: string): Promise<void> {
  let info;
  try {
    info = await stat(path);
    await access(path, constants.R_OK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new MmeError('NOT_FOUND', `${shown}: no such archive file (expected a .tar.gz made by mme-deploy package).`);
    }
    throw unreadable(shown, err);
  }
  if (!info.isFile()) throw new MmeError('USAGE', `${shown} is not a file; give the .tar.gz made by mme-deploy package.`);
}

/**
 * The MME archive rules on an extracted archive, as SageMaker's loader will see it: nothing is left out (a stray
 * `__MACOSX` really is there), so the stray-directory findings of discovery count too; the per-model Triton rules are
 * left to Triton's own LOAD, which reports them with its own words.
 */
interface Checked {
  readonly diagnostics: Diagnostic[];
  readonly tensorrtPlans: string[];
  /** Undefined when the extracted archive holds no model at all. */
  readonly discovery?: Discovery;
}

async function checkExtracted(modelDir: string, targetModel: string): Promise<Checked> {
  let discovery;
  try {
    discovery = discoverModels(modelDir);
  } catch (err) {
    if (err instanceof RepositoryAccessError) {
      return { diagnostics: [diagnostic('error', 'empty-repository', err.message, { file: '.' })], tensorrtPlans: [] };
    }
    throw err;
  }
  // A stray directory beside the ensemble SageMaker finds is never loaded: a warning there, as in `package`.
  const diagnostics = outsideTheLoad(discovery, [
    ...discovery.diagnostics.filter((d) => d.code === 'stray-directory' || d.code === 'empty-repository'),
    ...(await checkMmeArchive(discovery, targetModel)),
  ]);
  const tensorrtPlans = discovery.models.filter((m) => m.platform === 'tensorrt_plan').map((m) => m.name);
  return { diagnostics, tensorrtPlans, discovery };
}

/** The code for a failed extraction: the archive's own code, I/O for errors from the filesystem, a bad archive else. */
function extractionErrorCode(err: unknown): ErrorCode {
  if (isMmeError(err)) return err.code;
  if (typeof (err as NodeJS.ErrnoException).code === 'string') return 'UNWRITABLE';
  return /^Refusing to extract/.test((err as Error).message) ? 'TAR_UNSAFE_ENTRY' : 'TAR_BAD_ARCHIVE';
}

/** The record `stageArchive` left in a hash directory, or undefined when there is none (or it is unreadable). */
export async function readStageRecord(hashDir: string): Promise<StageRecord | undefined> {
  try {
    const parsed = JSON.parse(await readFile(join(hashDir, STAGE_RECORD), 'utf8')) as Partial<StageRecord>;
    if (typeof parsed.targetModel === 'string' && typeof parsed.archive === 'string') {
      return { targetModel: parsed.targetModel, archive: parsed.archive };
    }
  } catch {
    // Missing or not ours: the caller treats both alike.
  }
  return undefined;
}

/** Every archive `local load` staged under `modelsDir`, by hash; empty when the directory does not exist. */
export async function listStaged(modelsDir: string): Promise<Map<string, StageRecord>> {
  const staged = new Map<string, StageRecord>();
  let entries: Dirent[];
  try {
    entries = await readdir(resolve(modelsDir), { withFileTypes: true });
  } catch {
    return staged;
  }
  for (const entry of entries) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const record = await readStageRecord(join(resolve(modelsDir), entry.name));
    if (record) staged.set(entry.name, record);
  }
  return staged;
}
