// §11 labels: an output's label file lives in the model directory.

import { join } from 'node:path';
import { isInside } from '../../paths';
import { LoadedModel, relPath } from '../model';
import { fileSize } from '../model-files';
import type { Reporter } from './reporter';

export function checkLabels(model: LoadedModel, r: Reporter) {
  for (const out of model.config.output ?? []) {
    const label = out.label_filename;
    if (!label) continue;
    const path = join(model.dir, label);
    if (!isInside(model.dir, path)) {
      r.error('label-file-outside', out, 'label_filename', `label file path '${label}' for output '${out.name}' in ` +
        `model '${model.name}' is outside model directory. Put the labels file in ` +
        `${relPath(model.relDir) || 'the model directory'}/.`);
    } else if (fileSize(model.files, path) === undefined) {
      r.error('label-file-missing', out, 'label_filename', 'failed to open text file for read ' +
        `${relPath(model.relDir, label)}: No such file or directory. label_filename is relative to the model ` +
        'directory (not the version directory).');
    }
  }
}
