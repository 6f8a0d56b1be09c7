// §1 versions and config presence: a version directory Triton would load, a config.pbtxt where the backend cannot
// write one, and no file Triton would mistake for a second config.

import { autoCompletesIo } from '../backend-inference';
import { LoadedModel, relPath } from '../model';
import { pythonAutoCompletes } from './python';
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
    const why = model.versionDirs.length === 0 ? `${relPath(model.relDir) || model.name}/ has no numeric version ` +
      'directory' : 'the version_policy selects none of the version directories present';
    r.file('error', 'no-version', model.hasConfig ? model.configFile : relPath(model.relDir) || '.',
      `at least one version must be available under the version policy of model '${model.name}': ${why}. Add a ` +
        'version directory such as ' +
        `${relPath(model.relDir, '1')}/${model.platform === 'ensemble' ? ' (empty for an ensemble)' : ' holding the model file'}.`);
  }
}

export function checkMissingConfig(model: LoadedModel, r: Reporter) {
  const where = relPath(model.relDir) || '.';
  if (!model.backend) {
    r.file('error', 'unknown-backend', where, 'Invalid model name: Could not determine backend for model ' +
      `'${model.name}' with no backend in model configuration. Expected model name of the form ` +
      `'model.<backend_name>'. Add a config.pbtxt with backend (or platform), or put the model file under its ` +
      'default name (model.onnx, model.plan, model.pt, model.py, ...) in the version directory.');
    return;
  }
  const python = pythonAutoCompletes(model);
  if (autoCompletesIo(model.backend, model.platform) || python) {
    r.file('warning', 'config-missing', where, `Model '${model.name}' has no config.pbtxt; Triton auto-completes ` +
      `it from the ${model.backend} model file at load time. Write a config.pbtxt to fix inputs, outputs and ` +
      `batching (and so SageMaker's ensemble detection can read it).`);
  } else {
    r.file('error', 'config-missing', where, `model configuration is not provided for model '${model.name}': the ` +
      `${model.backend} backend cannot generate one. Add ${relPath(model.relDir, 'config.pbtxt')}.`);
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
