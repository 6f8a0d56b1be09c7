// §11 labels, §12 warmup, §13 parameters and §14 metrics, checked from config text and a file list
// (lib/repository/model-rules/labels.ts, warmup.ts, parameters.ts, metrics.ts).

import { expectClean, expectFault, onnx } from './model-from-text';

describe('labels, warmup, parameters and metrics (§11–§14)', () => {
  const labelled = (file: string) => `output [ { name: "CLS" data_type: TYPE_FP32 dims: [ 3 ] label_filename: "${file}" } ]`;
  it('requires label files inside the model directory', () => {
    expectFault(onnx(labelled('labels.txt')), 'label-file-missing');
    expectFault(onnx(labelled('../labels.txt'), { '../labels.txt': 'a' }), 'label-file-outside');
    expectClean(onnx(labelled('labels.txt'), { 'labels.txt': 'a\nb\nc\n' }));
  });

  const warmup = (input: string) => `model_warmup [ { name: "w" batch_size: 1 inputs { key: "INPUT" value: { ${input} } } } ]`;
  it('checks warmup inputs', () => {
    expectFault(onnx(warmup('data_type: TYPE_FP32 dims: [ -1, 4 ] zero_data: true')), 'warmup-variable-dims');
    expectFault(onnx(warmup('data_type: TYPE_FP32 dims: [ 3, 4 ]')), 'warmup-no-data');
    expectFault(onnx(warmup('data_type: TYPE_FP32 dims: [ 3, 4 ] input_data_file: "in.bin"')), 'warmup-file-missing');
    expectFault(
      onnx(warmup('data_type: TYPE_FP32 dims: [ 3, 4 ] input_data_file: "in.bin"'), { 'warmup/in.bin': Buffer.alloc(47) }),
      'warmup-file-short',
    );
    expectClean(onnx(warmup('data_type: TYPE_FP32 dims: [ 3, 4 ] input_data_file: "in.bin"'), { 'warmup/in.bin': Buffer.alloc(48) }));
    expectClean(onnx(warmup('data_type: TYPE_FP32 dims: [ 3, 4 ] random_data: true')));
  });

  const param = (key: string, value: string) => `parameters { key: "${key}" value { string_value: "${value}" } }`;
  it('checks EXECUTION_ENV_PATH, FORCE_CPU_ONLY_INPUT_TENSORS and TRITON_BATCH_STRATEGY_PATH', () => {
    expectFault(onnx(param('EXECUTION_ENV_PATH', '$$TRITON_MODEL_DIRECTORY/env.tar.gz')), 'execution-env-missing');
    expectFault(onnx(param('EXECUTION_ENV_PATH', '$$TRITON_MODEL_DIRECTORY/../env.tar.gz')), 'execution-env-outside');
    expectClean(onnx(param('EXECUTION_ENV_PATH', '$$TRITON_MODEL_DIRECTORY/env.tar.gz'), { 'env.tar.gz': 'x' }));
    expectFault(onnx(param('FORCE_CPU_ONLY_INPUT_TENSORS', 'true')), 'force-cpu-only-value');
    expectClean(onnx(param('FORCE_CPU_ONLY_INPUT_TENSORS', 'no')));
    expectFault(onnx(param('TRITON_BATCH_STRATEGY_PATH', '../s.so')), 'batch-strategy-escapes');
    expectFault(onnx(param('TRITON_BATCH_STRATEGY_PATH', 's.so')), 'batch-strategy-missing');
    expectClean(onnx(param('TRITON_BATCH_STRATEGY_PATH', 's.so'), { 's.so': 'x' }));
  });

  it('checks model_metrics', () => {
    expectFault(onnx('model_metrics { metric_control [ { histogram_options { buckets: [ 1 ] } } ] }'), 'metric-identifier-missing');
    expectFault(
      onnx('model_metrics { metric_control [ { metric_identifier { } histogram_options { buckets: [ 1 ] } } ] }'),
      'metric-family-missing',
    );
    expectFault(
      onnx('model_metrics { metric_control [ { metric_identifier { family: "nv_inference_request_duration" } } ] }'),
      'metric-histogram-missing',
    );
    expectFault(
      onnx('model_metrics { metric_control [ { metric_identifier { family: "nv_inference_request_duration" } histogram_options { } } ] }'),
      'metric-buckets-missing',
    );
    expectFault(
      onnx('model_metrics { metric_control [ { metric_identifier { family: "my_metric" } histogram_options { buckets: [ 1 ] } } ] }'),
      'metric-family-not-customizable',
      'warning',
    );
    expectClean(
      onnx(
        'model_metrics { metric_control [ { metric_identifier { family: ' +
          '"nv_inference_request_duration" } histogram_options { buckets: [ 1, 10, 100 ] } } ] }',
      ),
    );
  });
});

