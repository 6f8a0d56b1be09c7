// §1 versions and config presence: a version directory Triton would load, a config.pbtxt where the backend cannot
// write one, and no file Triton would mistake for a second config.

import { join } from 'node:path';
import { CONFIG_FILE } from '../build-model';
import { ioCompletion } from '../io-completion';
import { LoadedModel, relPath } from '../model';
import type { Reporter } from './reporter';

export function checkVersions(model: LoadedModel, r: Reporter) {
  const c = model.config;
  const specific = c.version_policy?.specific?.versions;
  if (specific) {
    const present = new Set(model.versionDirs.map((v) => v.version));
    specific.forEach((v, i) => {
      if (!present.has(Number(v))) {
        const fatal = model.versions.length === 0;
        r[fatal ? 'error' : 'warning']('version-missing', c.version_policy!.specific!, 'versions',
          `version ${v} is specified for model '${model.name}', but the version directory is not present. Create ` +
            `${relPath(model.relDir, String(v))}/ or remove ${v} from version_policy.`, i);
      }
    });
  }
  if (model.versions.length === 0) {
    // core src/model_repository_manager/model_lifecycle.cc:452-458 (AsyncLoad after VersionsToLoad)
    const message = `at least one version must be available under the version policy of model '${model.name}'`;
    const latest = c.version_policy?.latest;
    if (latest && model.versionDirs.length > 0 && (latest.num_versions ?? 0) === 0) {
      r.error('no-version', c.version_policy!, 'latest', `${message}: latest { num_versions: ${latest.num_versions ?? 0} } ` +
        'selects no version (only a config without version_policy gets latest { num_versions: 1 }). Set num_versions: 1 ' +
        'or more, or remove version_policy.');
      return;
    }
    const why = model.versionDirs.length === 0 ? `${relPath(model.relDir) || model.name}/ has no numeric version ` +
      'directory' : 'the version_policy selects none of the version directories present';
    r.file('error', 'no-version', model.hasConfig ? model.configFile : relPath(model.relDir) || '.',
      `${message}: ${why}. Add a version directory such as ` +
        `${relPath(model.relDir, '1')}/${model.platform === 'ensemble' ? ' (empty for an ensemble)' : ' holding the model file'}.`);
  }
}

export function checkMissingConfig(model: LoadedModel, r: Reporter) {
  const where = relPath(model.relDir) || '.';
  // A config.pbtxt one level too deep is never read: Triton reads <model>/config.pbtxt only.
  const misplaced = model.versionDirs.find((v) => model.files.stat(join(model.dir, v.dirName, CONFIG_FILE))?.kind === 'file');
  const hint = misplaced
    ? ` ${relPath(model.relDir, misplaced.dirName, CONFIG_FILE)} is in the version directory, where Triton does ` +
      `not look: move it to ${relPath(model.relDir, CONFIG_FILE)}.`
    : model.relDir === '' && model.versionDirs.length > 0
      ? ` (The path given is a model directory: ${model.versionDirs.map((v) => `${v.dirName}/`).join(', ')} are its version directories.)`
      : '';
  if (!model.backend) {
    r.file('error', 'unknown-backend', where, 'Invalid model name: Could not determine backend for model ' +
      `'${model.name}' with no backend in model configuration. Expected model name of the form ` +
      `'model.<backend_name>'.${hint || ' Add a config.pbtxt with backend (or platform), or put the model file under ' +
      'its default name (model.onnx, model.plan, model.pt, model.py, ...) in the version directory.'}`);
    return;
  }
  // core src/model.cc:94-98: without config.pbtxt the load goes on only when the backend sets a config; the python
  // backend always does (python_backend src/python_be.cc:2050-2056), as do those that auto-complete.
  const completion = ioCompletion(model);
  if (completion === 'when-empty' || completion === 'fills-listed' || completion === 'fills-entries') {
    r.file('warning', 'config-missing', where, `Model '${model.name}' has no config.pbtxt; Triton generates it from ` +
      `the ${model.backend === 'python' ? 'auto_complete_config function' : `${model.backend} model`} at load time.${hint} ` +
      "Write a config.pbtxt to fix inputs, outputs and batching (and so SageMaker's ensemble detection can read it).");
  } else if (model.backend === 'python') {
    r.file('warning', 'config-missing', where, `Model '${model.name}' has no config.pbtxt and its model.py has no ` +
      `auto_complete_config: Triton loads it with no inputs and no outputs, so no request can name a tensor.${hint} Add ` +
      `${relPath(model.relDir, 'config.pbtxt')} or an auto_complete_config.`);
  } else if (completion === 'unknown') {
    r.file('warning', 'config-missing', where, `Model '${model.name}' has no config.pbtxt: the load works only if ` +
      `the ${model.backend} backend writes one ("model configuration is not provided for model '${model.name}'" ` +
      `otherwise). Add ${relPath(model.relDir, 'config.pbtxt')} to be sure.`);
  } else {
    r.file('error', 'config-missing', where, `model configuration is not provided for model '${model.name}': the ` +
      `${model.backend} backend cannot generate one.${hint} Add ${relPath(model.relDir, 'config.pbtxt')}.`);
  }
}

export function checkDuplicateConfigPrefix(model: LoadedModel, r: Reporter) {
  for (const name of model.entryNames) {
    if (name !== 'config.pbtxt' && 'config.pbtxt'.startsWith(name)) {
      r.file('warning', 'duplicate-config', relPath(model.relDir, name), 'Triton logs "Duplicate model config is ' +
        `detected" for '${name}' next to config.pbtxt and cannot track changes to this model. Rename or remove it.`);
    }
  }
}
