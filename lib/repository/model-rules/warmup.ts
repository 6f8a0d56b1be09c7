// §12 warmup: every input fully shaped and given data, data files present in warmup/ and large enough.

import { join } from 'node:path';
import { isInside } from '../../paths';
import { LoadedModel, relPath } from '../model';
import { fileSize } from '../model-files';
import type { Reporter } from './reporter';
import { byteSize } from './tensor-bytes';

export function checkWarmup(model: LoadedModel, r: Reporter) {
  const c = model.config;
  if (model.platform === 'ensemble') return; // 10.3
  for (const warmup of c.model_warmup ?? []) {
    const inputs = warmup.inputs ?? {};
    for (const [name, input] of Object.entries(inputs)) {
      if ((input.dims ?? []).includes(-1n)) {
        r.error('warmup-variable-dims', input, 'dims', 'warmup setting expects all variable-size dimensions are ' +
          `specified for input '${name}'.`);
      }
      if (input.zero_data === undefined && input.random_data === undefined && input.input_data_file === undefined) {
        r.error('warmup-no-data', inputs, name, `warmup setting expects input '${name}' to have input_data_type ` +
          'set. Add zero_data: true, random_data: true or input_data_file.');
      }
      if (input.input_data_file !== undefined) {
        const path = join(model.dir, 'warmup', input.input_data_file);
        const size = fileSize(model.files, path);
        const file = relPath(model.relDir, 'warmup', input.input_data_file);
        if (!isInside(join(model.dir, 'warmup'), path) || size === undefined) {
          r.error('warmup-file-missing', input, 'input_data_file', `failed to open text file for read ${file}: No ` +
            `such file or directory. Warmup data files live in ${relPath(model.relDir, 'warmup')}/.`);
        } else if (input.data_type !== 'TYPE_STRING') {
          const needed = byteSize(input.data_type, input.dims ?? []);
          if (needed !== undefined) {
            if (size < needed) {
              r.error('warmup-file-short', input, 'input_data_file', `warmup setting expects ${needed} bytes, but ` +
                `the data provided from ${input.input_data_file}only has ${size} bytes.`);
            }
          }
        }
      }
    }
  }
}
