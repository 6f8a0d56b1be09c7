// validateRepository: discovery, every model's rules, the ensemble graph and (optionally) the SageMaker MME archive
// rules, as one report. This is the library entry point the CLI, the packer and the CDK constructs share.

import { basename } from 'node:path';
import type { ModelConfig } from '../config/model-config-schema';
import { Diagnostic, hasErrors, type Note, sortDiagnostics } from '../diagnostics';
import type { CollectResult } from '../archive/collect';
import { discoverModels, discoverStepwise, DiscoverOptions, unreadableError } from './discover';
import type { PythonSyntaxSession } from './python-syntax';
import type { AutoCompleteSession, RunOptions } from '../python-auto-complete/run';
import { completeWithPython, modelFileCompleter, withCompletedConfig, type Completion } from './auto-complete';
import { checkEnsembles } from './ensemble-graph';
import { relPath, type LoadedModel } from './model';
import { checkModel } from './model-rules';
import type { PlanTarget } from './tensorrt-plan-rules';
import type { EnvArchiveContents } from './mme-rules';

export { RepositoryAccessError } from './discover';

export interface ModelSummary {
  readonly name: string;
  /** The model directory relative to the path given ('.' when the path is the model directory). */
  readonly path: string;
  readonly platform?: string;
  readonly backend?: string;
  /** The versions Triton would load (version_policy applied). */
  readonly versions: number[];
  readonly config?: ModelConfig;
}

export interface ValidationReport {
  readonly ok: boolean;
  readonly models: ModelSummary[];
  readonly diagnostics: Diagnostic[];
  /** What the user should know that changes no verdict: a check that could not run here. */
  readonly notes?: readonly Note[];
}

export interface ValidateOptions extends DiscoverOptions {
  /** Also apply the SageMaker MME archive rules (the repository is one TargetModel archive). */
  readonly mme?: boolean;
  /** The TargetModel name the archive will be uploaded as (MME rules check it). */
  readonly targetModel?: string;
  /**
   * The endpoint the repository is meant for: TensorRT plans must be built for its GPU and TensorRT (checked with
   * `mme`, or whenever a target is given), python sources must compile with its image's Python.
   * @default ml.g4dn.xlarge with DEFAULT_TRITON_VERSION
   */
  readonly target?: PlanTarget;
  /**
   * Compile python models' sources (model.py of every loaded version) with the local python3's parser for the Python
   * of the target's Triton image, never running them: one that does not compile is an error (`python-syntax`). No
   * python3 here: a note, nothing checked. `false` skips it; `{ python }` names the interpreter, `{ env }` the
   * environment it is looked for in (PATH, MME_DEPLOY_PYTHON), `{ session }` has the python of an open
   * AutoCompleteSession check them (its interpreter and environment; it starts a python of the check's own when the
   * session's cannot), so that many validations start no python each. A `runPython` session is used for it too.
   * @default true (the interpreter MME_DEPLOY_PYTHON names, else python3, on this process's PATH)
   */
  readonly pythonSyntax?:
    | boolean
    | { readonly python?: string; readonly env?: NodeJS.ProcessEnv; readonly session?: AutoCompleteSession };
  /**
   * Run python models' auto_complete_config in python3 subprocesses, as Triton does at load, and check and use the
   * config it completes. This executes the models' code. `true` for the defaults, or the interpreter and timeout.
   * @default false
   */
  readonly runPython?: boolean | RunOptions;
  /**
   * The path is a TargetModel archive extracted as SageMaker extracts it (lib/bundle/verify-archive.ts): it is judged
   * as it is, with nothing left out (a `__MACOSX` in it really is downloaded), where a directory is judged as `package`
   * would pack it.
   * @default false
   */
  readonly archived?: boolean;
  /** With `archived`: what the reader found in nested .tar.gz files it did not write out (see checkMmeArchive). */
  readonly envArchives?: EnvArchiveContents;
}

export interface LoadedRepository {
  readonly layout: 'repository' | 'model';
  readonly root: string;
  readonly models: LoadedModel[];
  readonly diagnostics: Diagnostic[];
}

/**
 * Reads and parses every model (no rules beyond parsing and version directories). Throws `RepositoryAccessError` when
 * the path or a config.pbtxt cannot be read.
 */
export async function loadRepository(path: string, options: DiscoverOptions = {}): Promise<LoadedRepository> {
  const discovery = discoverModels(path, options);
  const unreadable = unreadableError(discovery);
  if (unreadable) throw unreadable;
  return discovery;
}

/**
 * Validates a model repository (or one model directory) with Triton's rules. Throws `RepositoryAccessError` when the
 * path cannot be read as a directory, or when a file the rules read (with `mme`: any file of the archive) exists but
 * cannot be read (`UNREADABLE`, listing each path and why); every fault in the models themselves is a diagnostic.
 */
export async function validateRepository(path: string, options: ValidateOptions = {}): Promise<ValidationReport> {
  return (await inspectRepository(path, options, false)).report;
}

/**
 * validateRepository with the MME rules, plus the archive's entries as `package` packs them: the one walk that decides
 * what `validate --mme` and `package` both refuse (links leaving the repository, special files, unreadable files,
 * names an extractor refuses), so they never disagree. A single model directory is laid out as one directory inside.
 */
export async function validateArchive(
  path: string,
  options: Omit<ValidateOptions, 'mme'> = {},
): Promise<{ report: ValidationReport; archive: CollectResult }> {
  const { report, archive } = await inspectRepository(path, { ...options, mme: true }, true);
  return { report, archive: archive! };
}

async function inspectRepository(
  path: string,
  options: ValidateOptions,
  keepArchive: boolean,
): Promise<{ report: ValidationReport; archive?: CollectResult }> {
  // In MME mode the repository is judged as it will be packed: what the packer leaves out is not there. The archive
  // modules load only then, to keep `validate` quick to start.
  const packs = options.mme && !options.ignore && !options.archived;
  const excludedReason = packs ? (await import('../archive/exclusions')).excludedReason : undefined;
  const ignore = options.ignore ?? (excludedReason ? (name: string) => excludedReason(name) !== undefined : undefined);
  // The model.py syntax check's python child parses each python model's source while the next models load and the
  // rules run: its verdicts are awaited last (on a 10,000-model python repository it took as long again, after).
  const syntaxOn = options.pythonSyntax !== false;
  let session: PythonSyntaxSession | undefined;
  const steps = discoverStepwise(path, ignore ? { ignore } : {});
  let step;
  try {
    // Synchronous but for the first python model (the check's module loads then) and a yield now and then: a promise
    // per model cost more than the check's bookkeeping on a 10,000-model repository (bench/validate.js).
    for (let sent = 0; !(step = steps.next()).done;) {
      const model = step.value;
      if (!syntaxOn || model.backend !== 'python') continue;
      session ??= await startSyntax(options);
      session.add(model);
      if (++sent % YIELD_EVERY === 0) await yieldToPipe();
    }
  } catch (err) {
    session?.cancel();
    throw err;
  }
  const checking = session?.finish();
  const discovery = step.value;
  const diagnostics = [...discovery.diagnostics];
  const models = discovery.models;
  // SageMaker registers the model it loads under the TargetModel name, so that one's `name` may differ.
  const renamed = new Set<string>();
  // The MME rules read conda-pack archives (tar, zlib): loaded only when asked for, to keep `validate` quick to start.
  const mme = options.mme ? await import('./mme-rules') : undefined;
  const loaded = mme?.loadedModel(discovery);
  if (loaded) renamed.add(loaded.name);

  const notes: Note[] = [];
  // A model.py that does not compile fails its import the same way: --run-python need not start it, so it waits.
  let syntax = options.runPython ? await checking : undefined;
  const runnable = syntax ? models.filter((m) => !syntax!.failed.has(m.name)) : models;
  const runOptions = options.runPython === true || !options.runPython ? {} : options.runPython;
  const fromPython: ReadonlyMap<string, Completion> = options.runPython
    ? await completeWithPython(runnable, syntax?.executable && runOptions.python === syntaxPython(options)
      ? { ...runOptions, executable: syntax.executable }
      : runOptions)
    : new Map();
  // Ensembles are checked against the configs Triton will have after auto-complete, where that can be reproduced.
  const asLoaded = new Map<string, LoadedModel>();
  const completeFromModelFile = await modelFileCompleter(models);
  const found: Diagnostic[][] = [];
  for (const model of models) {
    const completion = completeFromModelFile(model) ?? fromPython.get(model.name);
    found.push([...checkModel(model, { renamed, completed: completion?.config }), ...(completion?.diagnostics ?? [])]);
    asLoaded.set(model.name, withCompletedConfig(model, completion));
    if (checking && found.length % YIELD_EVERY === 0) await yieldToPipe();
  }
  syntax ??= await checking;
  if (syntax) notes.push(...syntax.notes);
  // Each model's own diagnostics: discovery's, the rules', then the syntax check's.
  const discovered = byModelName(discovery.diagnostics);
  const syntaxFaults = byModelName(syntax?.diagnostics ?? []);
  const byModel = new Map<string, Diagnostic[]>();
  models.forEach((model, i) => {
    const own = syntaxFaults.has(model.name) ? [...found[i]!, ...syntaxFaults.get(model.name)!] : found[i]!;
    byModel.set(model.name, [...(discovered.get(model.name) ?? []), ...own]);
    diagnostics.push(...own);
  });
  diagnostics.push(...checkEnsembles(asLoaded, { modelDiagnostics: byModel }));
  // The endpoint's GPU only matters for an archive meant for it, or when the endpoint is named (and its catalog loads
  // only then, like the MME rules).
  if (mme || options.target) {
    const { checkTensorrtPlans } = await import('./tensorrt-plan-rules');
    diagnostics.push(...checkTensorrtPlans(models, options.target));
  }
  let archive: CollectResult | undefined;
  if (mme) {
    const targetModel = options.targetModel ?? mme.defaultTargetModel(discovery.root);
    const known = options.envArchives ? { envArchives: options.envArchives } : {};
    diagnostics.push(...(await mme.checkMmeArchive(discovery, targetModel, known)));
  }
  if (mme && !options.archived) {
    const { collectEntries } = await import('../archive/collect');
    const prefix = discovery.layout === 'model' ? { prefix: basename(discovery.root) } : {};
    archive = await collectEntries(path, prefix);
    diagnostics.push(...archive.problems);
    const given = path.replace(/[\\/]+$/, '') || path;
    discovery.unreadable.push(...archive.unreadable.map((f) => ({ ...f, path: relPath(given, f.path === '.' ? '' : f.path) })));
  }
  const unreadable = unreadableError(discovery);
  if (unreadable) throw unreadable;
  const packed = mme && !options.archived ? mme.leftOutOfTheArchive(diagnostics) : diagnostics;
  const sorted = sortDiagnostics(mme ? mme.outsideTheLoad(discovery, packed) : diagnostics);
  const report = { ok: !hasErrors(sorted), models: models.map(summarize), diagnostics: sorted, ...(notes.length ? { notes } : {}) };
  return keepArchive && archive ? { report, archive } : { report };
}

/** While the syntax check's child works, the event loop runs every so many models: the pipe takes what waited. */
const YIELD_EVERY = 64;

function yieldToPipe(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Diagnostics grouped by their model, each group in the given order. */
function byModelName(diagnostics: readonly Diagnostic[]): Map<string, Diagnostic[]> {
  const groups = new Map<string, Diagnostic[]>();
  for (const d of diagnostics) {
    if (d.model === undefined) continue;
    const group = groups.get(d.model);
    if (group) group.push(d);
    else groups.set(d.model, [d]);
  }
  return groups;
}

/**
 * The model.py syntax check (on unless `pythonSyntax` is false), started at the first python model: its module loads
 * then. Not earlier (at process start, beside the CLI bundle's load): a repository without python models would pay for
 * an interpreter it never uses (a pyenv shim's start-up is about 0.6 s of CPU, on a one-core CI runner wall time too),
 * and the first python model usually comes first. The interpreter is started by the name PATH (or MME_DEPLOY_PYTHON)
 * gives it, never resolved ahead or remembered across runs: which python a shim picks (pyenv: PYENV_VERSION, the
 * .python-version files above the working directory, the global version) is known only by running it.
 */
async function startSyntax(options: ValidateOptions): Promise<PythonSyntaxSession> {
  const { startPythonModelsSyntax } = await import('./python-syntax');
  const { DEFAULT_TRITON_VERSION } = await import('../catalog/triton-images');
  const python = syntaxPython(options);
  const env = typeof options.pythonSyntax === 'object' ? options.pythonSyntax.env : undefined;
  const session = syntaxSession(options);
  const runner = session ? (await import('../python-auto-complete/run')).syntaxCheckRunner(session) : undefined;
  return startPythonModelsSyntax({
    tritonVersion: options.target?.tritonVersion ?? DEFAULT_TRITON_VERSION,
    ...(python !== undefined ? { python } : {}),
    ...(env ? { env } : {}),
    ...(runner ? { runner } : {}),
  });
}

/** The session that checks the syntax: the one given for it, else the runPython one unless an interpreter is named. */
function syntaxSession(options: ValidateOptions): AutoCompleteSession | undefined {
  const syntax = typeof options.pythonSyntax === 'object' ? options.pythonSyntax : {};
  if (syntax.session) return syntax.session;
  if (syntax.python !== undefined || syntax.env !== undefined) return undefined;
  return typeof options.runPython === 'object' ? options.runPython.session : undefined;
}

function syntaxPython(options: ValidateOptions): string | undefined {
  return typeof options.pythonSyntax === 'object' ? options.pythonSyntax.python : undefined;
}

function summarize(model: LoadedModel): ModelSummary {
  return {
    name: model.name,
    path: model.relDir || '.',
    ...(model.platform ? { platform: model.platform } : {}),
    ...(model.backend ? { backend: model.backend } : {}),
    versions: [...model.versions],
    config: model.config,
  };
}
