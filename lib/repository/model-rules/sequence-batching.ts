// §8 sequence batching: control tensors, the oldest and direct strategies, and implicit state with its initial data.

import { join } from 'node:path';
import { LoadedModel, relPath, tritonName } from '../model';
import { fileSize } from '../model-files';
import type { Reporter } from './reporter';
import { byteSize } from './tensor-bytes';

export function checkSequenceBatching(model: LoadedModel, r: Reporter) {
  const c = model.config;
  const sb = c.sequence_batching;
  if (!sb) return;
  const name = tritonName(model);
  if (c.response_cache?.enable) {
    r.error('sequence-response-cache', c, 'response_cache', 'Response Cache does not currently support model ' +
      `${name} with sequence batching scheduler. Please disable the response cache.`);
  }
  const tensors = new Set<string>();
  const kinds = new Set<string>();
  for (const ci of sb.control_input ?? []) {
    if (!ci.name) {
      r.error('sequence-control-name', ci, undefined, `sequence batching control tensor must have a name for ${name}.`);
    } else if (tensors.has(ci.name)) {
      r.error('sequence-control-duplicate', ci, 'name', `sequence batching control tensor '${ci.name}' is ` +
        `specified for multiple control kinds for ${name}.`);
    }
    if (ci.name) tensors.add(ci.name);
    for (const control of ci.control ?? []) {
      const kind = control.kind ?? 'CONTROL_SEQUENCE_START';
      if (kinds.has(kind)) {
        r.error('sequence-control-kind-duplicate', control, 'kind', `sequence batching specifies multiple ${kind} tensors for ${name}.`);
      }
      kinds.add(kind);
      const lists = (['int32_false_true', 'fp32_false_true', 'bool_false_true'] as const).filter((l) => (control[l]?.length ?? 0) > 0);
      if (kind === 'CONTROL_SEQUENCE_CORRID') {
        if (lists.length > 0) {
          r.error('sequence-corrid-list', control, lists[0], 'sequence batching must not specify either ' +
            `'int32_false_true', 'fp32_false_true' or 'bool_false_true' for CONTROL_SEQUENCE_CORRID for ${name}.`);
        }
        const dt = control.data_type;
        if (!dt || !['TYPE_UINT64', 'TYPE_INT64', 'TYPE_UINT32', 'TYPE_INT32', 'TYPE_STRING'].includes(dt)) {
          r.error('sequence-corrid-data-type', control, dt ? 'data_type' : 'kind',
            `unexpected data type for control CONTROL_SEQUENCE_CORRID for ${name}. Allowed data types are ` +
              'TYPE_UINT64, TYPE_INT64, TYPE_UINT32, TYPE_INT32 and TYPE_STRING');
        }
        continue;
      }
      if (lists.length === 0) {
        r.error('sequence-control-list-missing', control, 'kind', 'sequence batching must specify either ' +
          `'int32_false_true', 'fp32_false_true' or 'bool_false_true' for ${kind} for ${name}.`);
      } else if (lists.length > 1) {
        r.error('sequence-control-list-multiple', control, lists[1], 'sequence batching specifies more than one ' +
          `from 'int32_false_true', 'fp32_false_true' and 'bool_false_true' for ${kind} for ${name}.`);
      } else if (control[lists[0]!]!.length !== 2) {
        r.error('sequence-control-list-length', control, lists[0], `sequence batching control '${lists[0]}' must ` +
          `have exactly 2 entries for ${kind} for ${name}.`);
      }
    }
  }
  const mbs = c.max_batch_size ?? 0;
  (sb.oldest?.preferred_batch_size ?? []).forEach((size, i) => {
    if (size <= 0) {
      r.error('sequence-preferred-batch-size', sb.oldest!, 'preferred_batch_size',
        `sequence batching preferred batch size must be positive for ${name}.`, i);
    } else if (size > mbs) {
      r.error('sequence-preferred-batch-size', sb.oldest!, 'preferred_batch_size',
        `sequence batching preferred batch size must be <= max batch size for ${name}.`, i);
    }
  });
  const util = sb.direct?.minimum_slot_utilization;
  if (util !== undefined && (util < 0 || util > 1 || Number.isNaN(util))) {
    r.error('sequence-slot-utilization', sb.direct!, 'minimum_slot_utilization',
      `sequence batching minimum slot utilization must be in range (0.0, 1.0] for ${name}.`);
  }
  const stateInputs = new Map<string, number>();
  const stateOutputs = new Set<string>();
  (sb.state ?? []).forEach((state) => {
    const input = state.input_name ?? '';
    const initial = state.initial_state ?? [];
    if (stateInputs.has(input)) {
      if (initial.length > 0) {
        r.error('state-duplicate-input', state, 'input_name', `State input name '${input}' specified more than once.`);
      } else {
        r.warning('state-duplicate-input', state, 'input_name', `Detected duplicate 'input_name' in the state configuration: '${input}'.`);
      }
    }
    stateInputs.set(input, 1);
    if (state.output_name && stateOutputs.has(state.output_name)) {
      r.warning('state-duplicate-output', state, 'output_name', `Detected duplicate 'output_name' in the state ` +
        `configuration: '${state.output_name}'.`);
    }
    if (state.output_name) stateOutputs.add(state.output_name);
    if (initial.length > 1) {
      r.error('initial-state-count', state, 'initial_state', `initial_state field for state input '${input}' must ` +
        `contain exactly one or zero element. Found '${initial.length}' elements.`);
    }
    const init = initial[0];
    if (init) {
      if (init.data_type !== state.data_type) {
        r.error('initial-state-data-type', init, 'data_type', `The data type used for 'initial_state' field of ` +
          `state '${input}' does not match the state data type.`);
      }
      if (!init.name) {
        r.error('initial-state-name', init, undefined, `Field 'name' must be set when using initial_state for state input '${input}'.`);
      }
      const idims = init.dims ?? [];
      const sdims = state.dims ?? [];
      if (idims.length !== sdims.length) {
        r.error('initial-state-dims', init, 'dims', `Number of dimensions in 'initial_state' doesn't match the ` +
          `size of 'state' dimensions for state input '${input}'. ${idims.length} != ${sdims.length}`);
      } else if (idims.includes(-1n)) {
        r.error('initial-state-variable-dims', init, 'dims', `'initial_state' field for state input name ` +
          `'${input}' contains variable dimensions.`);
      } else {
        idims.forEach((d, i) => {
          if (sdims[i] !== -1n && sdims[i] !== d) {
            r.error('initial-state-dim-mismatch', init, 'dims', `'initial_state' dim for input name '${input}' ` +
              `doesn't match 'state' dim description. ${d} != ${sdims[i]}`, i);
          }
        });
      }
      if (init.zero_data === undefined && init.data_file === undefined) {
        r.error('initial-state-data', init, undefined, `initial_state setting expects state'${input}' to have state_data set`);
      } else if (init.data_file !== undefined) {
        const file = relPath(model.relDir, 'initial_state', init.data_file);
        const path = join(model.dir, 'initial_state', init.data_file);
        const needed = byteSize(init.data_type, idims);
        const size = fileSize(model.files, path);
        if (size === undefined) {
          r.error('initial-state-file-missing', init, 'data_file', `failed to open text file for read ${file}: No ` +
            `such file or directory. Put the file in ${relPath(model.relDir, 'initial_state')}/.`);
        } else if (needed !== undefined && size < needed) {
          r.error('initial-state-file-short', init, 'data_file', `initial_state setting expects ${needed} bytes, ` +
            `but the data provided from ${init.data_file}only has ${size} bytes.`);
        }
      }
    }
    if (state.use_growable_memory) {
      if (!state.use_same_buffer_for_input_output) {
        r.error('state-growable-memory', state, 'use_growable_memory', `In order to 'use_growable_memory', you ` +
          `must also enable 'use_single_buffer' for state input name '${input}'.`);
      }
      const gpuOnly = (c.instance_group ?? []).length > 0 && (c.instance_group ?? []).every((g) => g.kind === 'KIND_GPU');
      if (!gpuOnly) {
        r.warning('state-growable-memory-gpu', state, 'use_growable_memory',
          `'use_growable_memory' can only work with KIND_GPU model instances right now; set kind: KIND_GPU on the ` +
            `instance groups of ${name}.`);
      }
    }
  });
  // core src/backend_model.cc:185-191: TritonModel::Create fails the load (the message reads like a warning, but
  // it is returned as INVALID_ARG), whatever the parameter's value.
  if (c.parameters?.TRITON_BATCH_STRATEGY_PATH) {
    r.error('batch-strategy-with-sequence', c.parameters, 'TRITON_BATCH_STRATEGY_PATH',
      'TRITON_BATCH_STRATEGY_PATH cannot be specified with sequence batcher, using default batching strategy. ' +
        'Triton fails the load with this message: remove the parameter (a custom batching strategy only works with ' +
        'the dynamic batcher).');
  }
}
