// §3 max_batch_size and §4 inputs and outputs, checked from config text (lib/repository/model-rules/io.ts).

import { checkModel } from '../../../lib/repository/model-rules';
import { expectClean, expectFault, modelFromText, onnx } from './model-from-text';

describe('max_batch_size, inputs and outputs (§3, §4)', () => {
  it('rejects a negative max_batch_size', () => {
    expectFault(onnx('', {}, 'backend: "onnxruntime" max_batch_size: -1'), 'negative-max-batch-size');
  });

  it.each([
    ['a nameless input', 'input [ { data_type: TYPE_FP32 dims: [ 1 ] } ]', 'input-missing-name'],
    ['an input without data_type', 'input [ { name: "A" dims: [ 1 ] } ]', 'input-missing-data-type'],
    ['an output with TYPE_INVALID', 'output [ { name: "B" data_type: TYPE_INVALID dims: [ 1 ] } ]', 'output-missing-data-type'],
    ['an input without dims', 'input [ { name: "A" data_type: TYPE_FP32 } ]', 'input-missing-dims'],
    ['a zero dimension', 'input [ { name: "A" data_type: TYPE_FP32 dims: [ 0 ] } ]', 'invalid-dims'],
    ['a dimension of -2', 'output [ { name: "B" data_type: TYPE_FP32 dims: [ -2 ] } ]', 'invalid-dims'],
    ['a bad reshape dimension', 'input [ { name: "A" data_type: TYPE_FP32 dims: [ 4 ] reshape { shape: [ 0, 4 ] } } ]', 'invalid-reshape'],
    [
      'dims and reshape of different size',
      'input [ { name: "A" data_type: TYPE_FP32 dims: [ 4 ] reshape { shape: [ 2, 3 ] } } ]',
      'reshape-mismatch',
    ],
    [
      'different variable-size segments',
      'input [ { name: "A" data_type: TYPE_FP32 dims: [ -1, 4 ] reshape { shape: [ -1, 2, -1 ] } } ]',
      'reshape-mismatch',
    ],
    [
      'variable dims with a fixed reshape',
      'input [ { name: "A" data_type: TYPE_FP32 dims: [ -1 ] reshape { shape: [ 4 ] } } ]',
      'reshape-mismatch',
    ],
    [
      'an element count over int64',
      'input [ { name: "A" data_type: TYPE_FP32 dims: [ 9223372036854775807, 2 ] } ]',
      'element-count-overflow',
    ],
    ['NHWC with 2 dims', 'input [ { name: "A" data_type: TYPE_FP32 format: FORMAT_NHWC dims: [ 3, 4 ] } ]', 'format-dims'],
    ['a shape tensor on ONNX', 'input [ { name: "A" data_type: TYPE_INT32 dims: [ 2 ] is_shape_tensor: true } ]', 'shape-tensor-platform'],
    [
      'non-linear IO on ONNX',
      'input [ { name: "A" data_type: TYPE_FP32 dims: [ 3, 4, 4 ] is_non_linear_format_io: true } ]',
      'non-linear-io-platform',
    ],
  ])('rejects %s', (_case, extra, code) => {
    expectFault(onnx(extra), code);
  });

  it.each([
    ['a scalar as dims [1] with an empty reshape', 'input [ { name: "A" data_type: TYPE_FP32 dims: [ 1 ] reshape { shape: [ ] } } ]'],
    [
      'matching variable-size segments',
      'input [ { name: "A" data_type: TYPE_FP32 dims: [ 2, 4, -1, 6 ] reshape { shape: [ 8, -1, 1, 6 ] } } ]',
    ],
    ['NCHW with 3 dims', 'input [ { name: "A" data_type: TYPE_FP32 format: FORMAT_NCHW dims: [ 3, 224, 224 ] } ]'],
    ['a variable-size dimension', 'output [ { name: "B" data_type: TYPE_STRING dims: [ -1 ] } ]'],
  ])('accepts %s', (_case, extra) => {
    expectClean(onnx(extra));
  });

  it('warns, not errors, on a name declared twice: core keeps the first (src/model.cc:105 inserts into a map)', () => {
    const { model, diagnostics } = modelFromText(
      `${onnx().config}input [ { name: "INPUT" data_type: TYPE_FP32 dims: [ 3, 4 ] } ]`,
      onnx().files,
    );
    const found = [...diagnostics, ...checkModel(model)].filter((d) => d.code === 'duplicate-input');
    expect(found).toMatchObject([{ severity: 'warning', line: 8 }]);
    expect(found[0]!.message).toContain('Triton loads it and keeps the first declaration (the two are identical)');
    expectFault(onnx('output [ { name: "OUTPUT" data_type: TYPE_INT32 dims: [ 12 ] } ]'), 'duplicate-output', 'warning');
  });

  it('rejects an empty reshape on a non-batching model', () => {
    expectFault(
      onnx('input [ { name: "A" data_type: TYPE_FP32 dims: [ 1 ] reshape { shape: [ ] } } ]', {}, 'backend: "onnxruntime"'),
      'empty-reshape',
    );
  });

  it('allows shape tensors and non-linear IO on TensorRT, and rejects TYPE_STRING there', () => {
    const trt = (io: string) => ({ config: `platform: "tensorrt_plan" max_batch_size: 8 ${io}`, files: { '1/model.plan': 'x' } });
    expectClean(
      trt(
        'input [ { name: "A" data_type: TYPE_INT32 dims: [ 2 ] is_shape_tensor: true } ] ' +
          'output [ { name: "B" data_type: TYPE_FP32 dims: [ 3, 4, 4 ] is_non_linear_format_io: true } ]',
      ),
    );
    expectFault(
      trt(
        'input [ { name: "A" data_type: TYPE_FP32 dims: [ 4 ] is_non_linear_format_io: true } ] ' +
          'output [ { name: "B" data_type: TYPE_FP32 dims: [ 1 ] } ]',
      ),
      'non-linear-io-dims',
    );
    expectFault(
      trt('input [ { name: "A" data_type: TYPE_STRING dims: [ 1 ] } ] output [ { name: "B" data_type: TYPE_FP32 dims: [ 1 ] } ]'),
      'tensorrt-string',
    );
  });

  it('warns, not errors, when a backend that auto-completes has no inputs; errors for PyTorch', () => {
    expectFault({ config: 'backend: "onnxruntime"', files: { '1/model.onnx': 'x' } }, 'missing-inputs', 'warning');
    expectFault({ config: 'platform: "pytorch_libtorch"', files: { '1/model.pt': 'x' } }, 'missing-inputs', 'error');
  });
});

