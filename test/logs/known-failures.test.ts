// Each failure the log reader knows, from the text Triton, a backend or TensorRT writes for it, with the validator
// rule it names (which must exist in lib/repository, so a renamed rule cannot leave a dangling name behind).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { knownFailure } from '../../lib/logs/known-failures';

const CASES: [code: string, reason: string, rule?: string][] = [
  [
    'tensorrt-compute-capability',
    '6: The engine plan file is generated on an incompatible device, expecting compute 7.5 got compute 8.6, please rebuild.',
    'tensorrt-plan-target',
  ],
  [
    'tensorrt-version',
    '6: The engine plan file is not compatible with this version of TensorRT, expecting library version 8.6.1 got 8.5.3, please rebuild.',
    'tensorrt-plan-target',
  ],
  [
    'tensorrt-version',
    '1: [stdArchiveReader.cpp::StdArchiveReaderInitCommon::46] Error Code 1: Serialization (Serialization assertion ' +
      'stdVersionRead == serializationVersion failed.Version tag does not match. ' +
      'Note: Current Version: 236, Serialized Engine Version: 237)',
    'tensorrt-plan-target',
  ],
  ['disk-full', "Internal: OSError: [Errno 28] No space left on device: '/tmp/python_env_Ab12Cd/0/lib'"],
  [
    'python-shared-memory',
    "Internal: Unable to initialize shared memory key 'triton_python_backend_shm_region_2' to requested size (16777216 " +
      "bytes). If you are running Triton inside docker, use '--shm-size' flag to control the shared memory region size. " +
      'Each Python backend model instance requires at least 1 MB of shared memory. Error: No space left on device',
  ],
  [
    'python-shared-memory',
    "Failed to increase the shared memory pool size to 67108864 bytes. If you are running Triton inside docker, use '--shm-size' " +
      'flag to control the shared memory region size. Error: No space left on device',
  ],
  [
    'out-of-memory',
    'Internal: onnx runtime error 6: Exception during initialization: ' +
      'bfc_arena.cc:368 Failed to allocate memory for requested buffer of size 268435456',
  ],
  ['out-of-memory', 'Internal: RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 14.58 GiB total capacity)'],
  [
    'execution-env-missing',
    'Internal: Failed to get the canonical path for /opt/ml/models/h/model/pre/py310_env.tar.gz.',
    'execution-env-missing',
  ],
  [
    'execution-env-activate',
    "Internal: Path /tmp/python_env_Ab12Cd/0/bin/activate does not exist. The Python environment should contain an 'activate' script.",
    'mme-execution-env-activate',
  ],
  ['execution-env-unpack', 'Internal: archive_read_open_filename() failed.', 'mme-execution-env-format'],
  ['python-stub-died', "Internal: Stub process 'preprocess_0_0' is not healthy."],
  ['python-stub-died', 'Internal: Stub process is not healthy.'],
  ['request-byte-size', "[request id: <id_unknown>] input byte size mismatch for input 'IN' for model 'm'. Expected 12, got 8"],
  ['request-datatype', "[request id: 3] inference input 'IN' data-type is 'FP64', but model 'm' expects 'FP32'"],
  [
    'python-module-missing',
    "Internal: ModuleNotFoundError: No module named 'transformers.models'\n\nAt:\n  /opt/ml/models/h/model/pre/1/model.py(3): <module>",
  ],
  ['python-model-class', "Internal: AttributeError: module '1.model' has no attribute 'TritonPythonModel'", 'python-model-class'],
  ['python-exception', 'Internal: ValueError: weights missing\n\nAt:\n  /opt/ml/models/h/model/pre/1/model.py(21): initialize'],
  [
    'backend-not-found',
    "Invalid argument: unable to find backend library for backend 'pyhton', try specifying runtime on the model configuration.",
  ],
  [
    'unknown-backend',
    "Invalid argument: Invalid model name: Could not determine backend for model 'x' with no " +
      "backend in model configuration. Expected model name of the form 'model.<backend_name>'.",
    'unknown-backend',
  ],
  [
    'name-mismatch',
    "Invalid argument: unexpected directory name 'pre' for model 'preprocess', directory name must equal model name",
    'name-mismatch',
  ],
  ['no-version', "Invalid argument: at least one version must be available under the version policy of model 'ensemble'", 'no-version'],
  [
    'target-model-name',
    "Invalid argument: invalid model name 'models/a.tar.gz', model name must not contain path traversal characters",
    'mme-target-model-name',
  ],
  [
    'ensemble-missing-model',
    'Invalid argument: ensemble sentiment.tar.gz contains models that are not available or ambiguous: tokenizer',
    'ensemble-missing-model',
  ],
  ['unload-timeout', 'Error: UNLOAD did not complete within expected 350 seconds. This may result in SageMaker UNLOAD timeout.'],
];

describe('known failures', () => {
  // Every row with three entries: jest takes a missing one for the `done` callback.
  it.each(CASES.map(([code, reason, rule]) => [code, reason, rule ?? null] as const))('recognises %s', (code, reason, rule) => {
    const failure = knownFailure(reason);
    expect(failure?.code).toBe(code);
    expect(failure?.rule ?? null).toBe(rule);
    expect(failure!.title).toMatch(/\.$/);
    expect(failure!.fix).toMatch(/\.$/);
  });

  it('names the missing package, not its submodule', () => {
    expect(knownFailure("ModuleNotFoundError: No module named 'transformers.models'")!.fix).toBe(
      "Add transformers to the model's conda-pack environment (EXECUTION_ENV_PATH) or to the image.",
    );
  });

  it('reads the cause from the backend\'s lines when the reason holds only the last error', () => {
    const failure = knownFailure(
      'Internal: unable to create TensorRT engine: 4: [runtime.cpp::deserializeCudaEngine::66] Error Code 4: ' +
        'Internal Error (Engine deserialization failed.)',
      ['6: The engine plan file is generated on an incompatible device, expecting compute 8.9 got compute 7.5, please rebuild.'],
    );
    expect(failure!.title).toBe(
      'The TensorRT engine was built for a GPU of compute capability 7.5 (NVIDIA T4: ' +
        "ml.g4dn), but this instance's GPU is 8.9 (NVIDIA L4: ml.g6).",
    );
  });

  it('knows nothing of a reason it has no rule for', () => {
    expect(knownFailure("Invalid argument: model 'x' has no input named 'y'")).toBeUndefined();
    expect(knownFailure('ROOM 101 is full')).toBeUndefined();
  });

  it('names only validator rules that exist', () => {
    const repository = join(__dirname, '..', '..', 'lib', 'repository');
    const source = (readdirSync(repository, { recursive: true, encoding: 'utf8' }) as string[])
      .filter((f) => f.endsWith('.ts'))
      .map((f) => readFileSync(join(repository, f), 'utf8'))
      .join('\n');
    const rules = [...new Set(CASES.flatMap(([, , rule]) => (rule ? [rule] : [])))];
    expect(rules.filter((rule) => !source.includes(`'${rule}'`))).toEqual([]);
  });
});
