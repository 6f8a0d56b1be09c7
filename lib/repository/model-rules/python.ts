// §16 python backend: model.py defines TritonPythonModel with execute, and may auto-complete its own config.

import { join } from 'node:path';
import type { LoadedModel } from '../model';
import type { Reporter } from './reporter';

export function checkPythonModel(model: LoadedModel, r: Reporter, path: string, file: string) {
  const source = model.files.readText(path);
  if (source === undefined) return;
  if (!/^class\s+TritonPythonModel\b/m.test(source)) {
    r.file('error', 'python-model-class', file, `${file} does not define class TritonPythonModel at module level; ` +
      'the python backend fails the load with an AttributeError. Define class TritonPythonModel with an ' +
      'execute(self, requests) method.');
  } else if (!/^\s+(async\s+)?def\s+execute\s*\(/m.test(source)) {
    r.file('error', 'python-model-execute', file, `Python model ${file} does not implement \`execute\` method. Add ` +
      'def execute(self, requests) returning one InferenceResponse per request.');
  }
}

/** Whether the model is a python model whose model.py defines auto_complete_config (so Triton completes its config). */
export function pythonAutoCompletes(model: LoadedModel): boolean {
  return model.backend === 'python' && (pythonSource(model)?.includes('auto_complete_config') ?? false);
}

/** The source of the python model in its first selected version, for auto_complete_config detection. */
function pythonSource(model: LoadedModel): string | undefined {
  const version = model.versions[model.versions.length - 1];
  const dirName = model.versionDirs.find((v) => v.version === version)?.dirName;
  if (dirName === undefined) return undefined;
  return model.files.readText(join(model.dir, dirName, model.defaultModelFilename ?? 'model.py'));
}
