// The SageMaker multi-model endpoint archive rules (SageMakerMMELoadModel,
// triton-inference-server/server:src/sagemaker_server.cc:947-1145): how SageMaker's Triton loader picks the model
// to register from an extracted archive, and what makes that choice fail or go astray.

import { isAbsolute, join, relative, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { readTarGz } from '../archive/tar-reader';
import { asWarning, diagnostic, fewNames, type Diagnostic, type Severity } from '../diagnostics';
import { isInside } from '../paths';
import type { Discovery } from './discover';
import { decoupledModels, topLevelEnsembles } from './ensemble-graph';
import { configSource, isEnsemble } from './ensemble-rules';
import { LoadedModel, relPath } from './model';
import { resolveExecutionEnvPath } from './model-rules';

/** Faults about the archive as a whole (no one file) are reported at its root. */
const ARCHIVE = { file: '.' };

/** SageMaker's textual ensemble detection: RE2 PartialMatch of this pattern on config.pbtxt (sagemaker_server.cc). */
export const SAGEMAKER_ENSEMBLE_PATTERN = /platform:(\s)*"ensemble"/;
/** SageMaker's loader warns above this many model directories in one archive. */
export const MME_MODEL_WARNING_THRESHOLD = 5;
/** conda-pack environments above this size slow every cold load (they are unpacked each time). */
export const LARGE_ENV_BYTES = 500 * 1024 * 1024;

/** The model SageMaker registers under the TargetModel name, when the archive makes that choice unambiguous. */
export function loadedModel(discovery: Discovery): LoadedModel | undefined {
  if (discovery.models.length === 1) return discovery.models[0];
  const matching = discovery.models.filter((m) => m.configText !== undefined && SAGEMAKER_ENSEMBLE_PATTERN.test(m.configText));
  if (matching.length === 1) return matching[0];
  const top = topLevelEnsembles(new Map(discovery.models.map((m) => [m.name, m])));
  return top.length === 1 ? top[0] : undefined;
}

/** The TargetModel name an archive of `path` gets by default: `<dirname>.tar.gz`. */
export function defaultTargetModel(root: string): string {
  const name = root.split(sep).filter(Boolean).pop() ?? 'model';
  return `${name}.tar.gz`;
}

/**
 * Why `name` cannot be a TargetModel at all, or undefined: the one rule `push`, `list` and `remove` share, so that
 * every name `list` shows as a TargetModel is one `remove` accepts. A TargetModel is the S3 key below the endpoint's
 * prefix and Triton's model name: Triton refuses names with '/' or equal to '..' (ValidateModelName,
 * triton-inference-server/core:src/model_repository_manager/model_repository_manager.cc:67), and '' or '.' would name the prefix itself.
 */
export function targetModelNameProblem(name: string): string | undefined {
  const triton = `Triton refuses it ("invalid model name '${name}', model name must not contain path traversal characters")`;
  if (name.trim() === '') {
    return `TargetModel '${name}' is empty: it would name the endpoint's S3 prefix itself. Give the name \`mme-deploy list\` shows.`;
  }
  if (name === '.' || name === '..') return `TargetModel '${name}' is a path segment, not a name; ${triton}.`;
  if (name.includes('/')) return `TargetModel '${name}' contains '/': ${triton}. Use a flat name such as '${name.split('/').pop()}'.`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(name)) return `TargetModel '${name}' contains control ` +
    `characters or a backslash; use letters, digits, '.', '-' and '_'.`;
  // SageMaker's own rule for the header, refused at InvokeEndpoint: 1 to 1024 characters matching \A\S[\p{Print}]*\z
  // (Java's \p{Print}: printable ASCII): SageMaker Runtime's service model, shape TargetModelHeader, in
  // boto/botocore:botocore/data/sagemaker-runtime/2017-05-13/service-2.json (test/bundle/target-model-pattern.test.ts).
  if (name.length > TARGET_MODEL_MAX_LENGTH) {
    return `TargetModel '${name.slice(0, 40)}...' is ${name.length} characters; SageMaker takes at most ` +
      `${TARGET_MODEL_MAX_LENGTH}. Choose a shorter name.`;
  }
  if (!/^[\x21-\x7e][\x20-\x7e]*$/.test(name)) {
    const bad = [...name].find((c, i) => !/[\x20-\x7e]/.test(c) || (i === 0 && c === ' '))!;
    return `TargetModel '${name}' ${bad === ' ' ? 'starts with a space' : `contains '${bad}'`}: SageMaker takes only ` +
      `printable ASCII in a TargetModel (its pattern \\A\\S[\\p{Print}]*\\z) and refuses the invoke. Use letters, ` +
      `digits, '.', '-' and '_'.`;
  }
  return undefined;
}

/** The longest TargetModel SageMaker takes (InvokeEndpoint's TargetModel header, max 1024). */
export const TARGET_MODEL_MAX_LENGTH = 1024;

/** The rules for a TargetModel `push` uploads: a usable name (targetModelNameProblem) that ends in .tar.gz. */
export function targetModelProblems(targetModel: string): string | undefined {
  const nameProblem = targetModelNameProblem(targetModel);
  if (nameProblem) return nameProblem;
  if (!targetModel.endsWith('.tar.gz') || targetModel === '.tar.gz') {
    return `TargetModel '${targetModel}' must end in '.tar.gz': SageMaker downloads and extracts it as a gzip tarball. ` +
      `Use '${targetModel.replace(/\.(tgz|tar|gz)$/, '')}.tar.gz'.`;
  }
  return undefined;
}

/**
 * What a reader streaming a whole TargetModel archive learnt of the .tar.gz files inside it that it did not write out
 * (lib/bundle/verify-archive.ts), by absolute path in the extracted copy: whether one holds `bin/activate`, or why it
 * is no tar.gz. The conda-pack check asks this instead of reading a placeholder.
 */
export type EnvArchiveContents = ReadonlyMap<string, { readonly hasActivate: boolean } | { readonly error: string }>;

export interface MmeArchiveOptions {
  readonly envArchives?: EnvArchiveContents;
}

export async function checkMmeArchive(discovery: Discovery, targetModel: string, options: MmeArchiveOptions = {}): Promise<Diagnostic[]> {
  const out: Diagnostic[] = [];
  const models = new Map(discovery.models.map((m) => [m.name, m]));
  const problem = targetModelProblems(targetModel);
  if (problem) out.push(diagnostic('error', 'mme-target-model-name', problem, ARCHIVE));

  if (discovery.layout === 'repository' && discovery.models.length > 1) checkEnsembleChoice(discovery, models, out);

  const loaded = loadedModel(discovery);
  if (loaded) {
    const decoupled = loaded.config.model_transaction_policy?.decoupled ? [loaded.name] : decoupledModels(loaded, models);
    if (decoupled.length > 0) {
      const names = decoupled.map((m) => `'${m}'`).join(', ');
      const makes = loaded.name === decoupled[0] ? '' : `, which makes ensemble '${loaded.name}' decoupled`;
      const message =
        `${names} ${decoupled.length === 1 ? 'is' : 'are'} decoupled (model_transaction_policy { decoupled: true })${makes}: ` +
        `SageMaker's invoke endpoint refuses it ("HTTP end point doesn't support models with decoupled transaction ` +
        'policy"). Use a non-decoupled model on an MME.';
      out.push(diagnostic('error', 'mme-decoupled', message, { file: loaded.configFile, model: loaded.name }));
    }
    // Only an ensemble has steps: a model SageMaker picks by a matching comment is reported by checkEnsembleChoice.
    if (discovery.models.length > 1 && isEnsemble(loaded)) checkUnusedModels(loaded, models, out);
  }

  if (discovery.models.length > MME_MODEL_WARNING_THRESHOLD) {
    const message =
      `The archive holds ${discovery.models.length} model directories; SageMaker's Triton loader warns above ` +
      `${MME_MODEL_WARNING_THRESHOLD} and recommends smaller ensembles for better memory management (every model ` +
      'loads into GPU memory on each cold start).';
    out.push(diagnostic('warning', 'mme-many-models', message, ARCHIVE));
  }
  for (const model of discovery.models) out.push(...(await checkExecutionEnv(model, options.envArchives)));
  return out;
}

function checkEnsembleChoice(discovery: Discovery, models: Map<string, LoadedModel>, out: Diagnostic[]) {
  const names = fewNames(discovery.models.map((m) => m.name));
  const detected = discovery.models.filter((m) => m.configText !== undefined && SAGEMAKER_ENSEMBLE_PATTERN.test(m.configText));
  const top = topLevelEnsembles(models).filter((m) => isEnsemble(m));
  const nested = new Set([...models.values()].filter(isEnsemble).map((m) => m.name));
  for (const t of top) nested.delete(t.name);

  if (top.length === 0) {
    // A config that matches the pattern without being an ensemble (a comment) is the one SageMaker
    // loads (server src/sagemaker_server.cc:1016-1021: the last match in readdir order wins).
    const pattern = 'its ensemble pattern \'platform:\\s*"ensemble"\' although it is no ensemble (a comment, say)';
    const loads =
      detected.length === 0 ? 'whichever directory readdir lists last, which is arbitrary' :
      detected.length === 1 ? `'${detected[0]!.name}' alone, since its config.pbtxt matches ${pattern}` :
      `whichever of ${fewNames(detected.map((m) => `'${m.name}'`))} readdir lists last, since each config.pbtxt matches ${pattern}`;
    const message =
      `The archive holds ${discovery.models.length} model directories (${names}) and no ensemble: SageMaker loads ` +
      `${loads}. Package one model per archive, or add an ensemble (platform: "ensemble") that composes them.`;
    out.push(diagnostic('error', 'mme-no-ensemble', message, ARCHIVE));
    return;
  }
  if (top.length > 1) {
    const message =
      `The archive holds ${top.length} top-level ensembles (${fewNames(top.map((m) => m.name))}): SageMaker ` +
      'registers only one of them (the last its directory scan matches), so the others can never be invoked. ' +
      'Package each ensemble with its composing models in its own archive.';
    out.push(diagnostic('error', 'mme-multiple-ensembles', message, ARCHIVE));
  }
  for (const t of top) {
    if (t.configText !== undefined && !SAGEMAKER_ENSEMBLE_PATTERN.test(t.configText)) {
      const message =
        `SageMaker finds the ensemble by matching the text 'platform:\\s*"ensemble"' in config.pbtxt, and ` +
        `${t.configFile} does not match it (write exactly platform: "ensemble" — no space before the colon, double ` +
        'quotes). Otherwise SageMaker loads an arbitrary directory of the archive.';
      out.push(diagnostic('error', 'mme-ensemble-not-detected', message, { file: t.configFile, model: t.name }));
    }
  }
  for (const m of detected) {
    if (top.some((t) => t.name === m.name)) continue;
    const why = nested.has(m.name) ? `it is an ensemble nested in ${top.map((t) => `'${t.name}'`).join(', ')}` :
      'its text matches the pattern although it is not the ensemble (a comment, say)';
    const flatten = nested.has(m.name) ? ': flatten the nested ensemble into the top-level one' : '';
    const message =
      `${m.configFile} also matches SageMaker's ensemble pattern 'platform:\\s*"ensemble"' (${why}); SageMaker ` +
      `registers the last match in readdir order, which may be this one instead of '${top[0]!.name}'. Keep one ` +
      `matching config per archive${flatten}.`;
    out.push(diagnostic('error', 'mme-ambiguous-ensemble', message, { file: m.configFile, model: m.name }));
  }
}

/** `loaded` and every model its ensemble steps name, transitively: what core loads along with it. */
export function reachedFrom(loaded: LoadedModel, models: ReadonlyMap<string, LoadedModel>): Set<string> {
  const reached = new Set<string>();
  const visit = (m: LoadedModel) => {
    if (reached.has(m.name)) return;
    reached.add(m.name);
    for (const step of m.config.ensemble_scheduling?.step ?? []) {
      const next = step.model_name ? models.get(step.model_name) : undefined;
      if (next) visit(next);
    }
  };
  visit(loaded);
  return reached;
}

/**
 * Stray directories (`__MACOSX`, `.vscode`) in the archive `package` writes: none, since it keeps only model
 * directories at the archive root (lib/bundle/pack-repository.ts), so their errors become warnings. Only for the
 * archive-to-be (`package`, `validate --mme`): an archive someone else made (`local load`) may really hold one.
 */
export function leftOutOfTheArchive(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  const why =
    ' For this archive it does not matter: `package` leaves it out, so SageMaker never sees it (if you make the archive ' +
    'yourself, do delete it).';
  return diagnostics.map((d) => (d.code === 'stray-directory' && d.severity === 'error' ? asWarning(d, why) : d));
}

/**
 * Errors SageMaker never meets: those of directories it does not load, made warnings. Its loader registers the one
 * directory whose config.pbtxt matches SAGEMAKER_ENSEMBLE_PATTERN and loads it alone (server src/sagemaker_server.cc:
 * 1016-1021, 1033-1035, 1109 TRITONSERVER_ServerLoadModel in explicit mode); core loads the models its steps name
 * and no other directory (core src/model_repository_manager/model_repository_manager.cc), so a stray or broken
 * directory beside a found ensemble does not fail the load. When the choice depends on readdir order (no match, or
 * several: reported by the archive rules) nothing is changed, nor are the archive rules' own findings.
 */
export function outsideTheLoad(discovery: Discovery, diagnostics: readonly Diagnostic[]): Diagnostic[] {
  // A hidden directory's config.pbtxt (or one under a name that is not UTF-8) is read by SageMaker's scan but not here.
  const unseen = discovery.diagnostics.some((d) => d.code === 'hidden-model-directory' || d.code === 'name-not-utf8');
  const matching = discovery.models.filter((m) => m.configText !== undefined && SAGEMAKER_ENSEMBLE_PATTERN.test(m.configText));
  if (discovery.layout !== 'repository' || unseen || matching.length !== 1) return [...diagnostics];
  const loaded = matching[0]!;
  const reached = reachedFrom(loaded, new Map(discovery.models.map((m) => [m.name, m])));
  return diagnostics.map((d) => {
    if (d.severity !== 'error' || d.model === undefined || reached.has(d.model) || d.code.startsWith('mme-')) return d;
    const why =
      ` Not on this multi-model endpoint, though: SageMaker loads only '${loaded.name}' and the models its steps name, ` +
      `never '${d.model}' (which is still downloaded and extracted with every cold load).`;
    return asWarning(d, why);
  });
}

/** Models that the loaded ensemble never reaches are downloaded and extracted on every cold load for nothing. */
function checkUnusedModels(loaded: LoadedModel, models: Map<string, LoadedModel>, out: Diagnostic[]) {
  const reached = reachedFrom(loaded, models);
  for (const m of models.values()) {
    if (reached.has(m.name) || isEnsemble(m)) continue;
    const pythonHint =
      m.backend === 'python'
        ? ' (if a python model calls it through BLS, keep it: SageMaker loads BLS targets only when something loads them)'
        : '';
    const message =
      `'${m.name}' is not a step of ensemble '${loaded.name}'; SageMaker downloads it with every cold load but never ` +
      `loads it${pythonHint}. Remove it from the archive or add it to the ensemble.`;
    out.push(diagnostic('warning', 'mme-unused-model', message, { file: relPath(m.relDir) || '.', model: m.name }));
  }
}

async function checkExecutionEnv(model: LoadedModel, known?: EnvArchiveContents): Promise<Diagnostic[]> {
  const env = resolveExecutionEnvPath(model);
  if (!env) return [];
  const out: Diagnostic[] = [];
  const at = model.positions.of(model.config.parameters, 'EXECUTION_ENV_PATH');
  const report = (severity: Severity, code: string, message: string) => {
    out.push(diagnostic(severity, code, message, configSource(model), at));
  };
  if (env.path === undefined) {
    // Triton takes the path as it is (core src/model_config_utils.cc LocalizePythonBackendExecutionEnvironmentPath
    // rewrites only $$TRITON_MODEL_DIRECTORY; python_backend src/pb_env.cc:262 realpath()s the rest), so this loads
    // wherever the file exists. On SageMaker it exists only if the serving image ships it: the MME downloads nothing
    // but the model archive.
    report(
      'warning',
      'mme-execution-env-path',
      `EXECUTION_ENV_PATH '${env.value}' does not start with $$TRITON_MODEL_DIRECTORY. Triton accepts ` +
        `${isAbsolute(env.value) ? 'an absolute path' : 'it (resolved from the server\'s working directory)'}, but ` +
          'on a SageMaker endpoint ' +
        'the file must already be on the instance: the multi-model endpoint downloads only this archive, so the load ' +
        'fails with "Failed to get the canonical path for ..." unless the serving image provides it. To ship the ' +
        'environment with the model, put the conda-pack archive in the model directory and write ' +
        '"$$TRITON_MODEL_DIRECTORY/<env>.tar.gz".',
    );
    return out;
  }
  const stats = model.files.stat(env.path);
  if (!stats || !isInside(model.dir, env.path)) return out; // reported by the model rules
  const shown = relPath(model.relDir, relative(model.dir, env.path).split(sep).join('/'));
  const noActivate = `Path ${shown}/bin/activate does not exist. The Python environment should contain an 'activate' script`;
  if (stats.kind === 'directory') {
    if (!model.files.stat(join(env.path, 'bin', 'activate'))) {
      report('error', 'mme-execution-env-activate', `${noActivate}. Build the environment with conda-pack (it writes bin/activate).`);
    }
    return out;
  }
  if (!/\.(tar\.gz|tgz)$/.test(env.path)) {
    report(
      'error',
      'mme-execution-env-format',
      `EXECUTION_ENV_PATH ${shown} is a file but not a .tar.gz: the python backend expects a conda-pack archive ` +
        '(conda pack -o env.tar.gz) or an unpacked environment directory.',
    );
    return out;
  }
  if (stats.size === 0) {
    report('warning', 'mme-execution-env-empty', `EXECUTION_ENV_PATH ${shown} is empty (a stand-in?), so its contents ` +
      'are not checked here; the python backend cannot extract an empty file. Put the conda-pack archive there before deploying.');
    return out;
  }
  let hasActivate = false;
  try {
    const seen = known?.get(env.path);
    if (seen && 'error' in seen) throw new Error(seen.error);
    if (seen) hasActivate = seen.hasActivate;
    else hasActivate = await holdsActivate(env.path);
  } catch (err) {
    const message = `EXECUTION_ENV_PATH ${shown} is not a readable tar.gz (${(err as Error).message}). Rebuild it with conda-pack.`;
    report('error', 'mme-execution-env-format', message);
    return out;
  }
  if (!hasActivate) {
    const message = `${noActivate}: ${shown} holds no bin/activate, so it is not a conda-pack archive. Build it with conda-pack.`;
    report('error', 'mme-execution-env-activate', message);
  }
  if (stats.size > LARGE_ENV_BYTES) {
    report(
      'warning',
      'mme-large-execution-env',
      `${shown} is ${(stats.size / 1024 / 1024).toFixed(0)} MB: the python backend unpacks it on every cold load of ` +
        'this model, which delays first requests. Trim the environment, share it across models, or install the ' +
        'packages into the serving image (triton-image/requirements.txt).',
    );
  }
  return out;
}

/** Whether the conda-pack archive at `source` (a path or a stream) holds `bin/activate`; rejects when it is no tar.gz. */
export async function holdsActivate(source: string | Readable): Promise<boolean> {
  let found = false;
  await readTarGz(source, (entry) => {
    if (entry.path === 'bin/activate') found = true; // readTarGz drops a leading ./ and a trailing / (normalizeEntryPath)
  });
  return found;
}
