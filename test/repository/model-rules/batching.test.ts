// §5 batch inputs and outputs, §6–§8 scheduling, checked from config text and a file list
// (lib/repository/model-rules/batch-io.ts, dynamic-batching.ts, sequence-batching.ts).

import { expectClean, expectFault, onnx } from './model-from-text';

describe('batch inputs and outputs (§5)', () => {
  it.each([
    [
      'two source inputs',
      'batch_input [ { kind: BATCH_ELEMENT_COUNT target_name: "n" data_type: TYPE_INT32 source_input: [ "INPUT", "INPUT" ] } ]',
      'batch-input-sources',
    ],
    [
      'an FP16 batch input',
      'batch_input [ { kind: BATCH_ELEMENT_COUNT target_name: "n" data_type: TYPE_FP16 source_input: "INPUT" } ]',
      'batch-input-data-type',
    ],
    [
      'an unknown source input',
      'batch_input [ { kind: BATCH_ELEMENT_COUNT target_name: "n" data_type: TYPE_INT32 source_input: "NOPE" } ]',
      'batch-input-unknown-source',
    ],
    ['a batch output without source', 'batch_output [ { target_name: "OUTPUT" } ]', 'batch-output-sources'],
    ['an unknown target output', 'batch_output [ { target_name: "NOPE" source_input: "INPUT" } ]', 'batch-output-unknown-target'],
    [
      'a target output given twice in one batch output',
      'batch_output [ { target_name: [ "OUTPUT", "OUTPUT" ] source_input: "INPUT" } ]',
      'batch-output-duplicate-target',
    ],
    [
      'a batch output whose source is not an input',
      'batch_output [ { target_name: "OUTPUT" source_input: "NOPE" } ]',
      'batch-output-unknown-source',
    ],
  ])('rejects %s', (_case, extra, code) => {
    expectFault(onnx(extra), code);
  });

  it('accepts well-formed batch inputs and outputs', () => {
    expectClean(
      onnx(
        'batch_input [ { kind: BATCH_ACCUMULATED_ELEMENT_COUNT target_name: "n" data_type: TYPE_FP32 source_input: "INPUT" } ] ' +
          'batch_output [ { target_name: "OUTPUT" source_input: "INPUT" } ]',
      ),
    );
  });

  it('accepts the same target in two batch outputs: core checks uniqueness within one entry only', () => {
    expectClean(onnx('batch_output [ { target_name: "OUTPUT" source_input: "INPUT" }, { target_name: "OUTPUT" source_input: "INPUT" } ]'));
  });
});


describe('scheduling (§6, §7, §8)', () => {
  it('rejects the response cache on a decoupled model and on a sequence-batched model', () => {
    expectFault(onnx('model_transaction_policy { decoupled: true } response_cache { enable: true }'), 'decoupled-response-cache');
    expectFault(onnx('sequence_batching { } response_cache { enable: true }'), 'sequence-response-cache');
  });

  it.each([
    ['a zero preferred batch size', 'dynamic_batching { preferred_batch_size: [ 0 ] }', 'preferred-batch-size-not-positive'],
    ['a preferred size above max_batch_size', 'dynamic_batching { preferred_batch_size: [ 4, 16 ] }', 'preferred-batch-size-too-large'],
    [
      'a default priority outside the levels',
      'dynamic_batching { priority_levels: 2 default_priority_level: 3 }',
      'default-priority-level-range',
    ],
    [
      'a queue policy for an unknown level',
      'dynamic_batching { priority_levels: 2 default_priority_level: 1 priority_queue_policy { key: 5 value { } } }',
      'priority-queue-policy-range',
    ],
    [
      'preserve_ordering with priorities',
      'dynamic_batching { preserve_ordering: true priority_levels: 2 default_priority_level: 1 }',
      'preserve-ordering-priorities',
    ],
    [
      'preserve_ordering with DELAY',
      'dynamic_batching { preserve_ordering: true default_queue_policy { timeout_action: DELAY default_timeout_microseconds: 100 } }',
      'preserve-ordering-delay',
    ],
  ])('rejects %s', (_case, extra, code) => {
    expectFault(onnx(extra), code);
  });

  it('accepts valid dynamic batching, and dynamic batching without batching (queueing only)', () => {
    expectClean(
      onnx(
        'dynamic_batching { preferred_batch_size: [ 4, 8 ] max_queue_delay_microseconds: 100 priority_levels: 2 ' +
          'default_priority_level: 1 priority_queue_policy { key: 2 value { max_queue_size: 3 } } }',
      ),
    );
    expectClean(onnx('dynamic_batching { }', {}, 'backend: "onnxruntime"'));
  });

  const control = (body: string) => `sequence_batching { control_input [ ${body} ] }`;
  it.each([
    [
      'a nameless control tensor',
      control('{ control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] }'),
      'sequence-control-name',
    ],
    [
      'one control tensor for two kinds',
      control(
        '{ name: "S" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] }, ' +
          '{ name: "S" control [ { kind: CONTROL_SEQUENCE_END int32_false_true: [ 0, 1 ] } ] }',
      ),
      'sequence-control-duplicate',
    ],
    [
      'two START tensors',
      control(
        '{ name: "A" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] }, ' +
          '{ name: "B" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] }',
      ),
      'sequence-control-kind-duplicate',
    ],
    ['START without values', control('{ name: "A" control [ { kind: CONTROL_SEQUENCE_START } ] }'), 'sequence-control-list-missing'],
    [
      'START with two value lists',
      control('{ name: "A" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] bool_false_true: [ false, true ] } ] }'),
      'sequence-control-list-multiple',
    ],
    [
      'START with three values',
      control('{ name: "A" control [ { kind: CONTROL_SEQUENCE_START fp32_false_true: [ 0, 1, 2 ] } ] }'),
      'sequence-control-list-length',
    ],
    [
      'CORRID with values',
      control('{ name: "C" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 int32_false_true: [ 0, 1 ] } ] }'),
      'sequence-corrid-list',
    ],
    [
      'CORRID of FP32',
      control('{ name: "C" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_FP32 } ] }'),
      'sequence-corrid-data-type',
    ],
    [
      'oldest preferred size above max_batch_size',
      'sequence_batching { oldest { preferred_batch_size: [ 32 ] } }',
      'sequence-preferred-batch-size',
    ],
    ['slot utilization above 1', 'sequence_batching { direct { minimum_slot_utilization: 1.5 } }', 'sequence-slot-utilization'],
    [
      'two initial states',
      'sequence_batching { state [ { input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [ 2 ] ' +
        'initial_state [ { name: "a" data_type: TYPE_FP32 dims: [ 2 ] zero_data: true }, ' +
        '{ name: "b" data_type: TYPE_FP32 dims: [ 2 ] zero_data: true } ] } ] }',
      'initial-state-count',
    ],
    [
      'an initial state of another type',
      'sequence_batching { state [ { input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [ 2 ] ' +
        'initial_state [ { name: "a" data_type: TYPE_INT32 dims: [ 2 ] zero_data: true } ] } ] }',
      'initial-state-data-type',
    ],
    [
      'a nameless initial state',
      'sequence_batching { state [ { input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [ 2 ] ' +
        'initial_state [ { data_type: TYPE_FP32 dims: [ 2 ] zero_data: true } ] } ] }',
      'initial-state-name',
    ],
    [
      'initial state dims of another rank',
      'sequence_batching { state [ { input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [ 2 ] ' +
        'initial_state [ { name: "a" data_type: TYPE_FP32 dims: [ 2, 1 ] zero_data: true } ] } ] }',
      'initial-state-dims',
    ],
    [
      'variable initial state dims',
      'sequence_batching { state [ { input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [ -1 ] ' +
        'initial_state [ { name: "a" data_type: TYPE_FP32 dims: [ -1 ] zero_data: true } ] } ] }',
      'initial-state-variable-dims',
    ],
    [
      'initial state dims that differ',
      'sequence_batching { state [ { input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [ 2 ] ' +
        'initial_state [ { name: "a" data_type: TYPE_FP32 dims: [ 3 ] zero_data: true } ] } ] }',
      'initial-state-dim-mismatch',
    ],
    [
      'an initial state without data',
      'sequence_batching { state [ { input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [ 2 ] ' +
        'initial_state [ { name: "a" data_type: TYPE_FP32 dims: [ 2 ] } ] } ] }',
      'initial-state-data',
    ],
    [
      'a missing initial state file',
      'sequence_batching { state [ { input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [ 2 ] ' +
        'initial_state [ { name: "a" data_type: TYPE_FP32 dims: [ 2 ] data_file: "s.bin" } ] } ] }',
      'initial-state-file-missing',
    ],
    [
      'a state input name given twice',
      'sequence_batching { state [ { input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [ 2 ] ' +
        'initial_state [ { name: "a" data_type: TYPE_FP32 dims: [ 2 ] zero_data: true } ] }, ' +
        '{ input_name: "i" output_name: "p" data_type: TYPE_FP32 dims: [ 2 ] ' +
        'initial_state [ { name: "b" data_type: TYPE_FP32 dims: [ 2 ] zero_data: true } ] } ] }',
      'state-duplicate-input',
    ],
    [
      'growable memory without a single buffer',
      'sequence_batching { state [ { input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [ 2 ] ' +
        'use_growable_memory: true } ] } instance_group [ { kind: KIND_GPU } ]',
      'state-growable-memory',
    ],
  ])('rejects %s', (_case, extra, code) => {
    expectFault(onnx(extra), code);
  });

  it('checks the size of an initial state data file', () => {
    const state =
      'sequence_batching { state [ { input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [ 2 ] ' +
      'initial_state [ { name: "a" data_type: TYPE_FP32 dims: [ 2 ] data_file: "s.bin" } ] } ] }';
    expectFault(onnx(state, { 'initial_state/s.bin': Buffer.alloc(4) }), 'initial-state-file-short');
    expectClean(onnx(state, { 'initial_state/s.bin': Buffer.alloc(8) }));
  });

  it('accepts a complete sequence batcher', () => {
    // A line ending in \ goes on at the start of the next (a template literal's line continuation): no line break there.
    expectClean(
      onnx(`sequence_batching { max_sequence_idle_microseconds: 5000000 oldest { max_candidate_sequences: 4 preferred_batch_size: [ 2 ] }
      control_input [ { name: "START" control [ { kind: CONTROL_SEQUENCE_START fp32_false_true: [ 0, 1 ] } ] },
                      { name: "CORRID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 } ] } ]
      state [ { input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [ 2 ] \
use_same_buffer_for_input_output: true use_growable_memory: true initial_state [ { name: "a" data_type: TYPE_FP32 dims: [ 2 ] \
zero_data: true } ] } ] }
      instance_group [ { kind: KIND_GPU } ]`),
    );
  });

  it('rejects a batch strategy library with the sequence batcher: the load fails', () => {
    expectFault(
      onnx('sequence_batching { } parameters { key: "TRITON_BATCH_STRATEGY_PATH" value { string_value: "s.so" } }', { 's.so': 'x' }),
      'batch-strategy-with-sequence',
    );
    expectFault(
      onnx('sequence_batching { } parameters { key: "TRITON_BATCH_STRATEGY_PATH" value { string_value: "" } }'),
      'batch-strategy-with-sequence',
    );
  });
});

