import type { ModelConfig } from '../../lib/config/model-config-schema';
import { backendOf, estimateModelMemory, loadedVersions } from '../../lib/plan/memory-estimate';

const MiB = 1024 * 1024;

function model(config: ModelConfig | undefined, files: [string, number][], name = 'm') {
  return { name, ...(config ? { config } : {}), files: files.map(([path, size]) => ({ path, size })) };
}

describe('GPU memory estimate', () => {
  it('counts a TensorRT engine once however many instances share it, plus each instance\'s workspace', () => {
    const estimate = estimateModelMemory(
      model({ platform: 'tensorrt_plan', instance_group: [{ kind: 'KIND_GPU', count: 2 }] }, [
        ['1/model.plan', 100 * MiB],
        ['config.pbtxt', 200],
      ]),
    );
    expect(estimate).toMatchObject({ backend: 'tensorrt', gpuInstances: 2, weightBytes: 100 * MiB });
    expect(estimate.gpuBytes).toBe(100 * MiB + 2 * 256 * MiB);
  });

  it('gives every ONNX Runtime instance its own copy of the weights', () => {
    const estimate = estimateModelMemory(
      model({ backend: 'onnxruntime', instance_group: [{ count: 3 }] }, [['1/model.onnx', 40 * MiB]]),
    );
    expect(estimate.gpuInstances).toBe(3);
    expect(estimate.gpuBytes).toBe(3 * 40 * MiB * 1.25 + 3 * 256 * MiB);
  });

  it('holds no GPU memory for Python or DALI models on KIND_CPU, nor for an ensemble', () => {
    const python = model(
      { backend: 'python', instance_group: [{ kind: 'KIND_CPU', count: 4 }] },
      [['1/model.py', 1000], ['1/big.bin', 50 * MiB]],
    );
    const dali = model({ backend: 'dali', instance_group: [{ kind: 'KIND_CPU' }] }, [['1/model.dali', 5 * MiB]]);
    const ensemble = model({ platform: 'ensemble' }, [['1/README.md', 10]]);
    for (const m of [python, dali, ensemble]) expect(estimateModelMemory(m).gpuBytes).toBe(0);
  });

  it('charges a CUDA context to a Python model that asks for KIND_GPU', () => {
    const estimate = estimateModelMemory(model({ backend: 'python', instance_group: [{ kind: 'KIND_GPU' }] }, [['1/model.py', 10]]));
    expect(estimate.gpuBytes).toBe(512 * MiB);
  });

  it('counts only the versions Triton loads: the latest by default, or as version_policy says', () => {
    const files: [string, number][] = [['1/model.pt', 10], ['2/model.pt', 20], ['3/model.pt', 40]];
    expect(loadedVersions(model({ backend: 'pytorch' }, files))).toEqual(['3']);
    expect(estimateModelMemory(model({ backend: 'pytorch' }, files)).weightBytes).toBe(40);
    expect(estimateModelMemory(model({ backend: 'pytorch', version_policy: { all: {} } }, files)).weightBytes).toBe(70);
    expect(
      estimateModelMemory(model({ backend: 'pytorch', version_policy: { latest: { num_versions: 2 } } }, files)).weightBytes,
    ).toBe(60);
    expect(
      estimateModelMemory(model({ backend: 'pytorch', version_policy: { specific: { versions: [1n] } } }, files))
        .weightBytes,
    ).toBe(10);
  });

  it('recognises the backend from the platform, and from the model file when there is no config', () => {
    expect(backendOf(model({ platform: 'tensorflow_savedmodel' }, []))).toBe('tensorflow');
    expect(backendOf(model(undefined, [['1/model.onnx', 1]]))).toBe('onnxruntime');
    expect(backendOf(model(undefined, [['1/model.savedmodel/saved_model.pb', 1]]))).toBe('tensorflow');
    expect(backendOf(model({ backend: 'fil' }, []))).toBe('other');
  });

  it('finds the conda-pack environment a Python model unpacks on load', () => {
    const estimate = estimateModelMemory(
      model(
        {
          backend: 'python',
          parameters: { EXECUTION_ENV_PATH: { string_value: '$$TRITON_MODEL_DIRECTORY/env.tar.gz' } },
        },
        [['env.tar.gz', 300 * MiB], ['1/model.py', 10]],
      ),
    );
    expect(estimate.pythonEnvBytes).toBe(300 * MiB);
  });
});
