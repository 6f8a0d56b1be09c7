// The model file in each loaded version (§1.B): present, of the kind its backend loads, with its companions.

import { join } from 'node:path';
import { modelFileRule } from '../backend-inference';
import { LoadedModel, relPath } from '../model';
import { checkPythonModel } from './python';
import type { Reporter } from './reporter';

/**
 * How the backends that check for the model file themselves word its absence ("unable to find '<path>' for model
 * instance '<name>'"), so users can search for it: onnxruntime_backend @ 00fd3e8 src/onnxruntime.cc:423-427,
 * pytorch_backend @ 266fd38 src/pt/model_state.cc:203-206, tensorrt_backend @ e2ef6d7 src/instance_state.cc:166-170,
 * openvino_backend @ db19304 src/openvino.cc:225-229 ("for model").
 */
const MISSING_FILE_WORDING: Readonly<Record<string, string>> = {
  onnxruntime: 'model instance',
  pytorch: 'model instance',
  tensorrt: 'model instance',
  openvino: 'model',
};

export function checkModelFiles(model: LoadedModel, r: Reporter) {
  const rule = modelFileRule(model);
  const filename = model.defaultModelFilename;
  if (!rule || !filename) return;
  if (model.firstSubdir?.startsWith('.') && !model.config.backend && !model.config.platform) {
    r.file('warning', 'hidden-first-subdir', relPath(model.relDir, model.firstSubdir),
      `Triton infers the backend of '${model.name}' from its lexicographically first subdirectory, which is ` +
        `'${model.firstSubdir}'. Delete it, or set backend/platform in config.pbtxt.`);
  }
  if (model.backend === 'python' && !filename.endsWith('.py')) {
    r.error('python-model-extension', model.config, 'default_model_filename',
      `Model name must end with '.py'. Model name is "${filename}".`);
    return;
  }
  const versionNames = new Map(model.versionDirs.map((v) => [v.version, v.dirName]));
  for (const version of model.versions) {
    const dirName = versionNames.get(version)!;
    const file = relPath(model.relDir, dirName, filename);
    const path = join(model.dir, dirName, filename);
    const stats = model.files.stat(path);
    if (!stats && model.backend === 'dali') {
      // dali_backend @ 01783f8 src/dali_model.h:150-152, 186-219: without the serialized pipeline the backend
      // serializes <version>/dali.py itself (autoserialization); only when both are missing does the load fail.
      const fallback = relPath(model.relDir, dirName, 'dali.py');
      if (model.files.stat(join(model.dir, dirName, 'dali.py'))?.kind === 'file') continue;
      r.file('error', 'model-file-missing', file, 'Failed to load model file. The program looked in the following ' +
        `locations: ${file}, ${fallback}. Put the serialized pipeline (pipe.serialize(filename=...)) at ${file}, or ` +
        `the pipeline's source with an @autoserialize function at ${fallback}.`);
      continue;
    }
    if (!stats) {
      const triton = MISSING_FILE_WORDING[model.backend ?? ''];
      const message = model.backend === 'python'
        ? `Python model file not found in '${file}'. Put model.py in ${relPath(model.relDir, dirName)}/ (or set default_model_filename).`
        : `${triton ? `unable to find '${file}' for ${triton} '${model.name}'` : `${file} is missing`}: the ` +
          `${model.backend} backend loads ${filename} from each version directory. Add the model file, or set ` +
          `default_model_filename to the file's name.`;
      r.file('error', 'model-file-missing', file, message);
      continue;
    }
    if (rule.kind === 'file' && stats.kind !== 'file') {
      r.file('error', 'model-file-not-a-file', file, `${file} must be a file for the ${model.backend} ` +
        `backend${model.platform ? ` (${model.platform})` : ''}, but it is ` +
        `${stats.kind === 'directory' ? 'a directory' : 'not a regular file (a FIFO, socket or device)'}.`);
    }
    if (rule.kind === 'directory' && stats.kind !== 'directory') r.file('error', 'model-file-not-a-directory', file,
      `${file} must be a SavedModel directory for platform tensorflow_savedmodel, but it is a file. Use platform ` +
        '"tensorflow_graphdef" for a frozen graph.');
    const weights = filename.replace(/\.xml$/, '.bin');
    if (model.backend === 'openvino' && filename.endsWith('.xml') && !model.files.stat(join(model.dir, dirName, weights))) {
      r.file('error', 'openvino-bin-missing', file, `${file} needs its weights file ${weights} beside it.`);
    }
    if (model.backend === 'python' && stats.kind === 'file') checkPythonModel(model, r, path, file);
  }
  const cc = model.config.cc_model_filenames ?? {};
  for (const [capability, name] of Object.entries(cc)) {
    for (const version of model.versions) {
      const dirName = versionNames.get(version)!;
      if (!model.files.stat(join(model.dir, dirName, name))) {
        r.warning('cc-model-file-missing', cc, capability, 'cc_model_filenames maps compute capability ' +
          `${capability} to '${name}', which is missing from ${relPath(model.relDir, dirName)}/. GPUs with that ` +
          'capability would fail to load the model.');
      }
    }
  }
}
