// §9 instance groups, checked from config text (lib/repository/model-rules/instance-groups.ts).

import { expectClean, expectFault, onnx, ONNX_IO } from './model-from-text';

describe('instance groups (§9)', () => {
  it.each([
    ['KIND_MODEL with gpus', 'instance_group [ { kind: KIND_MODEL gpus: [ 0 ] } ]', 'instance-group-model-gpus'],
    ['KIND_CPU with gpus', 'instance_group [ { kind: KIND_CPU gpus: [ 0 ] } ]', 'instance-group-cpu-gpus'],
    ['a negative gpu id', 'instance_group [ { kind: KIND_GPU gpus: [ -1 ] } ]', 'instance-group-gpu-id'],
    ['a profile on ONNX', 'instance_group [ { kind: KIND_GPU profile: [ "0" ] } ]', 'instance-group-profile-platform'],
    [
      'a resource both global and per device',
      'instance_group [ { kind: KIND_GPU rate_limiter { resources [ { name: "R" global: true count: 1 } ] } }, ' +
        '{ kind: KIND_GPU rate_limiter { resources [ { name: "R" count: 1 } ] } } ]',
      'rate-limiter-resource-scope',
    ],
  ])('rejects %s', (_case, extra, code) => {
    expectFault(onnx(extra), code);
  });

  it('warns about a GPU id that single-GPU SageMaker instances do not have', () => {
    expectFault(onnx('instance_group [ { kind: KIND_GPU gpus: [ 1 ] } ]'), 'instance-group-gpu-id', 'warning');
    expectClean(onnx('instance_group [ { count: 2 kind: KIND_GPU gpus: [ 0 ] } ]'));
  });

  it('checks TensorRT profiles are non-negative integers', () => {
    const trt = (g: string) => ({ config: `platform: "tensorrt_plan" max_batch_size: 8 ${ONNX_IO} ${g}`, files: { '1/model.plan': 'x' } });
    expectFault(trt('instance_group [ { kind: KIND_GPU profile: [ "a" ] } ]'), 'instance-group-profile');
    expectFault(trt('instance_group [ { kind: KIND_GPU profile: [ "" ] } ]'), 'instance-group-profile');
    expectClean(trt('instance_group [ { kind: KIND_GPU profile: [ "0", "1" ] } ]'));
  });
});

