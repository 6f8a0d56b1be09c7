// renderTritonEnvironment: the typed Triton knobs become the serve script's SAGEMAKER_TRITON_* variables, and values
// Triton would refuse are reported before deploy.

import { Size } from 'aws-cdk-lib';
import { renderTritonEnvironment } from '../../constructs/triton-environment';

describe('renderTritonEnvironment: python shared memory', () => {
  it('accepts a 1 MiB region, python_backend\'s real minimum', () => {
    expect(renderTritonEnvironment({ pythonShmDefaultSize: Size.mebibytes(1) })).toEqual({
      env: { SAGEMAKER_TRITON_SHM_DEFAULT_BYTE_SIZE: '1048576' },
      errors: [],
    });
  });

  it('refuses anything under 1 MiB, naming the knob', () => {
    const { env, errors } = renderTritonEnvironment({ pythonShmDefaultSize: Size.kibibytes(1023) });
    expect(env).toEqual({});
    expect(errors).toEqual(["environment.pythonShmDefaultSize must be at least 1 MiB (the Python backend's minimum), got 1047552 bytes."]);
  });
});
