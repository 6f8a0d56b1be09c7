// Events from the log lines of SageMaker multi-model endpoint instances. Every line below has the shape Triton and
// its SageMaker front end write (messages and file:line from triton-inference-server core @ 73aad7c, server @ e1db8a6,
// python_backend @ f9088ff; TensorRT and ONNX Runtime texts as reported in the issues cited beside them).
// A log line ending in \ goes on at the start of the next (a template literal's line continuation): it is one line.
import { LogEvent, LogRecord } from '../../lib/logs/log-event';
import { EndpointLogParser, parseEndpointLog } from '../../lib/logs/endpoint-log-parser';

const A = 'AllTraffic/i-0a1b2c3d4e5f60001';
const B = 'AllTraffic/i-0a1b2c3d4e5f60002';
const H1 = '3f2a8c1e0b6d4a9f8e7c6b5a49382716';
const H2 = '9c4e7d2b1a0f6e5d4c3b2a1908f7e6d5';

/** Records of one stream, one per line, in the order written. */
function stream(name: string, text: string): LogRecord[] {
  return text
    .replace(/^\n/, '')
    .split('\n')
    .map((message) => ({ stream: name, message }));
}

const parse = (records: LogRecord[]) => parseEndpointLog(records, { year: 2026 });
const brief = (e: LogEvent) => [e.kind, e.targetModel, e.tritonModel].filter((x) => x !== undefined).join(' ');

// An ensemble TargetModel loading, as Triton 24.06+ writes it (escaped messages, verbose level 1 as `serve` sets it).
const ENSEMBLE_LOAD = `
I1130 14:02:10.000100 1 sagemaker_server.cc:154] "SageMaker request: 2 /models"
I1130 14:02:10.000200 1 sagemaker_server.cc:236] "SageMaker request: LOAD MODEL"
I1130 14:02:10.000300 1 sagemaker_server.cc:317] "Received model_name: ${H1}"
I1130 14:02:10.000400 1 sagemaker_server.cc:322] "Received url: /opt/ml/models/${H1}/model"
I1130 14:02:10.000500 1 sagemaker_server.cc:360] "Loading SageMaker TargetModel: sentiment.tar.gz"
I1130 14:02:10.000900 1 sagemaker_server.cc:1019] "SageMaker front-end detected an Ensemble config at path: \
/opt/ml/models/${H1}/model/ensemble/config.pbtxt\\n"
I1130 14:02:10.001000 1 model_repository_manager.cc:1766] "Model repository registered: /opt/ml/models/${H1}/model"
I1130 14:02:10.010000 1 model_lifecycle.cc:473] "loading: /opt/ml/models/${H1}/model::preprocess:1"
I1130 14:02:10.010100 1 model_lifecycle.cc:473] "loading: /opt/ml/models/${H1}/model::bert:1"
I1130 14:02:10.500000 1 python_be.cc:2499] "TRITONBACKEND_ModelInitialize: preprocess (version 1)"
I1130 14:02:10.600000 1 python_be.cc:2104] "Using Python execution env /opt/ml/models/${H1}/model/preprocess/processing_env.tar.gz"
I1130 14:02:12.000000 1 model_lifecycle.cc:849] "successfully loaded '/opt/ml/models/${H1}/model::preprocess'"
I1130 14:02:13.000000 1 model_lifecycle.cc:849] "successfully loaded '/opt/ml/models/${H1}/model::bert'"
I1130 14:02:13.100000 1 model_lifecycle.cc:473] "loading: /opt/ml/models/${H1}/model::sentiment.tar.gz:1"
I1130 14:02:13.200000 1 model_lifecycle.cc:849] "successfully loaded '/opt/ml/models/${H1}/model::sentiment.tar.gz'"`;

describe('loads', () => {
  it('reports an ensemble load with its composing models, all tied to the TargetModel', () => {
    const events = parse(stream(A, ENSEMBLE_LOAD));
    expect(events.map(brief)).toEqual([
      'load-started sentiment.tar.gz sentiment.tar.gz',
      'load-started sentiment.tar.gz preprocess',
      'load-started sentiment.tar.gz bert',
      'load-succeeded sentiment.tar.gz preprocess',
      'load-succeeded sentiment.tar.gz bert',
      'load-succeeded sentiment.tar.gz sentiment.tar.gz',
    ]);
    expect(events[0]).toMatchObject({
      instance: 'i-0a1b2c3d4e5f60001',
      stream: A,
      hash: H1,
      time: new Date('2026-11-30T14:02:10.000Z'),
      source: 'sagemaker_server.cc:360',
    });
    expect(events[2]).toMatchObject({ version: 1, message: `loading: /opt/ml/models/${H1}/model::bert:1` });
    expect(events.some((e) => e.failure)).toBe(false);
  });

  it('joins the stub\'s python traceback to the load failure and names the missing module (raw output of older images)', () => {
    // Triton 23.x (unescaped): the stub prints pybind11's error with its frames on the following lines
    // (pb_stub.cc:389), then the core reports the same error (model_lifecycle.cc:654, :789) and fails the ensemble
    // (model_repository_manager.cc:749).
    const frames = `
At:
  /opt/ml/models/${H2}/model/preprocess/1/model.py(6): <module>
  <frozen importlib._bootstrap>(241): _call_with_frames_removed
  <frozen importlib._bootstrap_external>(883): exec_module
  <frozen importlib._bootstrap>(688): _load_unlocked
  /usr/lib/python3.10/importlib/__init__.py(126): import_module
`;
    const events = parse(
      stream(
        A,
        `
I1130 14:05:01.000000 1 sagemaker_server.cc:360] Loading SageMaker TargetModel: model_trt_python.tar.gz
I1130 14:05:01.001000 1 model_repository_manager.cc:1766] Model repository registered: /opt/ml/models/${H2}/model
I1130 14:05:01.010000 1 model_lifecycle.cc:473] loading: /opt/ml/models/${H2}/model::preprocess:1
I1130 14:05:01.010100 1 model_lifecycle.cc:473] loading: /opt/ml/models/${H2}/model::bert_trt:1
I1130 14:05:04.200000 311 pb_stub.cc:389]  Failed to initialize Python stub: ModuleNotFoundError: No module named 'transformers'
${frames}
E1130 14:05:04.600000 1 model_lifecycle.cc:654] failed to load '/opt/ml/models/${H2}/model::preprocess' version 1: \
Internal: ModuleNotFoundError: No module named 'transformers'
${frames}
I1130 14:05:04.600100 1 model_lifecycle.cc:789] failed to load '/opt/ml/models/${H2}/model::preprocess'
I1130 14:05:06.000000 1 model_lifecycle.cc:849] successfully loaded '/opt/ml/models/${H2}/model::bert_trt'
E1130 14:05:06.000200 1 model_repository_manager.cc:749] Invalid argument: \
ensemble '/opt/ml/models/${H2}/model::model_trt_python.tar.gz' depends on '/opt/ml/models/${H2}/model::preprocess' \
which has no loaded version. Model '/opt/ml/models/${H2}/model::preprocess' loading failed with error: Internal: \
ModuleNotFoundError: No module named 'transformers'
${frames}`,
      ),
    );
    expect(events.map(brief)).toEqual([
      'load-started model_trt_python.tar.gz model_trt_python.tar.gz',
      'load-started model_trt_python.tar.gz preprocess',
      'load-started model_trt_python.tar.gz bert_trt',
      'load-failed model_trt_python.tar.gz preprocess',
      'load-succeeded model_trt_python.tar.gz bert_trt',
      'load-failed model_trt_python.tar.gz model_trt_python.tar.gz',
    ]);
    const failed = events[3]!;
    expect(failed.message).toBe("Internal: ModuleNotFoundError: No module named 'transformers'");
    expect(failed.traceback).toEqual([
      `/opt/ml/models/${H2}/model/preprocess/1/model.py(6): <module>`,
      '<frozen importlib._bootstrap>(241): _call_with_frames_removed',
      '<frozen importlib._bootstrap_external>(883): exec_module',
      '<frozen importlib._bootstrap>(688): _load_unlocked',
      '/usr/lib/python3.10/importlib/__init__.py(126): import_module',
    ]);
    expect(failed.failure).toMatchObject({ code: 'python-module-missing' });
    expect(failed.failure!.fix).toContain('Add transformers to the model');
    expect(failed.source).toBe('model_lifecycle.cc:654');
    // The stub's lines and the core's lines are one event: nothing is left over as a separate python error.
    expect(events.filter((e) => e.kind === 'python-error')).toEqual([]);
    // 1 prefixed line, the blank line and At:, 5 frames and the blank line std::endl leaves, for the stub and the core.
    expect(failed.lines).toBe(2 * 9);
    expect(events[5]!.failure).toMatchObject({
      code: 'ensemble-dependency',
      fix: "Fix 'preprocess': its own failure is reported beside this one.",
    });
  });

  it('joins TensorRT\'s own diagnosis to the load failure it explains (compute capability)', () => {
    // Single-model archive (config.pbtxt at the archive root): the repository is /opt/ml/models/<hash>.
    // TensorRT texts as reported in NVIDIA/TensorRT#3130 (T4, engine built on sm_86) and #2177.
    const events = parse(
      stream(
        B,
        `
I1130 15:00:00.000000 1 sagemaker_server.cc:360] "Loading SageMaker TargetModel: detector.tar.gz"
I1130 15:00:00.001000 1 model_repository_manager.cc:1766] "Model repository registered: /opt/ml/models/${H2}"
I1130 15:00:00.002000 1 model_lifecycle.cc:473] "loading: /opt/ml/models/${H2}::detector.tar.gz:1"
I1130 15:00:00.100000 1 tensorrt.cc:233] "TRITONBACKEND_ModelInitialize: detector.tar.gz (version 1)"
I1130 15:00:01.000000 1 logging.cc:46] "Loaded engine size: 161 MiB"
E1130 15:00:01.100000 1 logging.cc:40] "6: The engine plan file is generated on an incompatible device, \
expecting compute 7.5 got compute 8.6, please rebuild."
E1130 15:00:01.100100 1 logging.cc:40] "4: [runtime.cpp::deserializeCudaEngine::66] Error Code 4: \
Internal Error (Engine deserialization failed.)"
E1130 15:00:01.200000 1 model_lifecycle.cc:654] "failed to load '/opt/ml/models/${H2}::detector.tar.gz' version 1: Internal: \
unable to create TensorRT engine: 4: [runtime.cpp::deserializeCudaEngine::66] Error Code 4: \
Internal Error (Engine deserialization failed.)"
I1130 15:00:01.200100 1 model_lifecycle.cc:789] "failed to load '/opt/ml/models/${H2}::detector.tar.gz'"`,
      ),
    );
    expect(events.map(brief)).toEqual(['load-started detector.tar.gz detector.tar.gz', 'load-failed detector.tar.gz detector.tar.gz']);
    const failed = events[1]!;
    expect(failed).toMatchObject({ instance: 'i-0a1b2c3d4e5f60002', hash: H2, version: 1 });
    expect(failed.context).toEqual([
      '6: The engine plan file is generated on an incompatible device, expecting compute 7.5 got compute 8.6, please rebuild.',
      '4: [runtime.cpp::deserializeCudaEngine::66] Error Code 4: Internal Error (Engine deserialization failed.)',
    ]);
    expect(failed.failure).toEqual({
      code: 'tensorrt-compute-capability',
      title:
        'The TensorRT engine was built for a GPU of compute capability 8.6 (NVIDIA A10G: ' +
        "ml.g5), but this instance's GPU is 7.5 (NVIDIA T4: ml.g4dn).",
      fix: "Build the plan on the endpoint's GPU type (compute 7.5), or ship one plan per GPU with cc_model_filenames in config.pbtxt.",
      rule: 'tensorrt-plan-target',
    });
  });

  it('recognises a TensorRT version mismatch', () => {
    const events = parse(
      stream(
        A,
        `
I1130 15:10:00.000000 1 sagemaker_server.cc:360] "Loading SageMaker TargetModel: yolo.tar.gz"
I1130 15:10:00.002000 1 model_lifecycle.cc:473] "loading: /opt/ml/models/${H1}::yolo.tar.gz:1"
E1130 15:10:01.100000 1 logging.cc:40] "6: The engine plan file is not compatible with this version of TensorRT, \
expecting library version 8.6.1 got 8.5.3, please rebuild."
E1130 15:10:01.200000 1 model_lifecycle.cc:654] "failed to load '/opt/ml/models/${H1}::yolo.tar.gz' version 1: Internal: \
unable to create TensorRT engine: 4: [runtime.cpp::deserializeCudaEngine::66] Error Code 4: \
Internal Error (Engine deserialization failed.)"`,
      ),
    );
    expect(events[1]!.failure).toMatchObject({
      code: 'tensorrt-version',
      title: 'The TensorRT engine was serialized by TensorRT 8.5.3, but the image runs TensorRT 8.6.1.',
    });
  });

  it('classifies a GPU out-of-memory load failure (ONNX Runtime, triton-inference-server/server#5661)', () => {
    const events = parse(
      stream(
        A,
        `I1130 15:20:00.000000 1 sagemaker_server.cc:360] "Loading SageMaker TargetModel: classifier.tar.gz"
E1130 15:20:03.000000 1 model_lifecycle.cc:654] "failed to load '/opt/ml/models/${H1}/model::classifier.tar.gz' version 1: \
Internal: onnx runtime error 6: Exception during initialization: /workspace/onnxruntime/onnxruntime/core/framework/bfc_arena.cc:368 \
void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, \
onnxruntime::WaitNotificationFn) Failed to allocate memory for requested buffer of size 268435456\\n"`,
      ),
    );
    expect(events[1]).toMatchObject({ kind: 'load-failed', targetModel: 'classifier.tar.gz', failure: { code: 'out-of-memory' } });
    expect(events[1]!.failure!.fix).toContain('mme-deploy plan');
  });

  it('names the validator rule for a missing EXECUTION_ENV_PATH archive (python_backend pb_env.cc:263-266)', () => {
    const events = parse(
      stream(
        A,
        `I1130 15:30:00.000000 1 sagemaker_server.cc:360] "Loading SageMaker TargetModel: tok.tar.gz"
I1130 15:30:00.100000 1 model_lifecycle.cc:473] "loading: /opt/ml/models/${H1}/model::tokenizer:1"
I1130 15:30:00.200000 1 python_be.cc:2104] "Using Python execution env /opt/ml/models/${H1}/model/tokenizer/py310_env.tar.gz"
E1130 15:30:00.300000 1 model_lifecycle.cc:654] "failed to load '/opt/ml/models/${H1}/model::tokenizer' version 1: \
Internal: Failed to get the canonical path for /opt/ml/models/${H1}/model/tokenizer/py310_env.tar.gz."`,
      ),
    );
    expect(events[2]).toMatchObject({
      kind: 'load-failed',
      targetModel: 'tok.tar.gz',
      tritonModel: 'tokenizer',
      failure: { code: 'execution-env-missing', rule: 'execution-env-missing' },
    });
  });

  it('ties a composing model to the one TargetModel loading when namespacing is off', () => {
    const events = parse(
      stream(
        A,
        `I1130 16:00:00.000000 1 sagemaker_server.cc:360] "Loading SageMaker TargetModel: pipeline.tar.gz"
I1130 16:00:00.100000 1 model_lifecycle.cc:473] "loading: postprocess:1"
E1130 16:00:00.300000 1 model_lifecycle.cc:654] "failed to load 'postprocess' version 1: Invalid argument: \
unable to find backend library for backend 'pyhton', try specifying runtime on the model configuration."`,
      ),
    );
    expect(events[2]).toMatchObject({ targetModel: 'pipeline.tar.gz', tritonModel: 'postprocess', failure: { code: 'backend-not-found' } });
    expect(events[2]!.hash).toBeUndefined();
  });
});

describe('evictions, requests and the server', () => {
  it('reports SageMaker unloading a TargetModel as an eviction, and each model Triton unloads', () => {
    const events = parse(
      stream(
        A,
        `${ENSEMBLE_LOAD}
I1130 14:30:00.000000 1 sagemaker_server.cc:154] "SageMaker request: 4 /models/${H1}"
I1130 14:30:00.000100 1 sagemaker_server.cc:250] "SageMaker request: UNLOAD MODEL"
I1130 14:30:00.000200 1 sagemaker_server.cc:719] "Unloading SageMaker TargetModel: sentiment.tar.gz\\n"
I1130 14:30:00.400000 1 model_lifecycle.cc:636] "successfully unloaded '/opt/ml/models/${H1}/model::sentiment.tar.gz' version 1"
I1130 14:30:00.900000 1 model_lifecycle.cc:636] "successfully unloaded '/opt/ml/models/${H1}/model::preprocess' version 1"
I1130 14:30:01.000000 1 sagemaker_server.cc:774] "UNLOAD for model sentiment.tar.gz completed in 1 seconds."
I1130 14:30:01.000100 1 model_repository_manager.cc:1798] "Model repository unregistered: /opt/ml/models/${H1}/model"`,
      ),
    ).slice(6);
    expect(events.map(brief)).toEqual([
      'eviction sentiment.tar.gz sentiment.tar.gz',
      'unloaded sentiment.tar.gz sentiment.tar.gz',
      'unloaded sentiment.tar.gz preprocess',
    ]);
    expect(events[0]).toMatchObject({ hash: H1, message: 'Unloading SageMaker TargetModel: sentiment.tar.gz' });
  });

  it('reports an unload that outlasts SageMaker\'s timeout', () => {
    const events = parse(
      stream(
        A,
        'E1130 14:36:00.000000 1 sagemaker_server.cc:781] "Error: UNLOAD did not complete within expected 350 seconds. ' +
          'This may result in SageMaker UNLOAD timeout."',
      ),
    );
    expect(events).toEqual([
      expect.objectContaining({ kind: 'unload-failed', failure: expect.objectContaining({ code: 'unload-timeout' }) }),
    ]);
  });

  it('joins a python execute error to the failed request and ties it to the TargetModel through its frames', () => {
    const tb =
      'TypeError: a bytes-like object is required, ' +
      `not 'str'\\n\\nAt:\\n  /opt/ml/models/${H1}/model/preprocess/1/model.py(52): execute\\n`;
    const events = parse(
      stream(
        A,
        `${ENSEMBLE_LOAD}
I1130 14:10:00.000000 1 sagemaker_server.cc:230] "Invoking SageMaker TargetModel: sentiment.tar.gz"
I1130 14:10:00.000100 1 sagemaker_server.cc:230] "Invoking SageMaker TargetModel: other.tar.gz"
E1130 14:10:00.020000 1 pb_stub.cc:741] "Failed to process the request(s) for model 'preprocess_0_0', message: ${tb}"
I1130 14:10:00.020500 1 sagemaker_server.cc:606] "Infer failed: \
Failed to process the request(s) for model 'preprocess_0_0', message: ${tb}"`,
      ),
    ).slice(6);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      kind: 'invoke-failed',
      targetModel: 'sentiment.tar.gz',
      tritonModel: 'preprocess',
      message:
        "Failed to process the request(s) for model 'preprocess_0_0', message: TypeError: a bytes-like object is required, not 'str'",
      traceback: [`/opt/ml/models/${H1}/model/preprocess/1/model.py(52): execute`],
      failure: {
        code: 'python-exception',
        title: `The python model raised TypeError at /opt/ml/models/${H1}/model/preprocess/1/model.py(52): execute.`,
      },
      lines: 2,
    });
  });

  it('leaves a failed request without a TargetModel when requests to several were in flight', () => {
    const events = parse(
      stream(
        A,
        `I1130 14:10:00.000000 1 sagemaker_server.cc:230] "Invoking SageMaker TargetModel: a.tar.gz"
I1130 14:10:00.000100 1 sagemaker_server.cc:230] "Invoking SageMaker TargetModel: b.tar.gz"
I1130 14:10:00.020500 1 sagemaker_server.cc:606] "Infer failed: [request id: \
<id_unknown>] expected 1 inputs but got 2 inputs for model 'a.tar.gz'"`,
      ),
    );
    expect(events).toHaveLength(1);
    expect(events[0]!.targetModel).toBeUndefined();
  });

  it('reports a CPython traceback printed by the model itself as one python error', () => {
    const events = parse(
      stream(
        A,
        `${ENSEMBLE_LOAD}
Traceback (most recent call last):
  File "/opt/ml/models/${H1}/model/preprocess/1/model.py", line 40, in execute
    ids = self.tokenizer(text)["input_ids"]
KeyError: 'input_ids'
I1130 14:20:00.000000 1 sagemaker_server.cc:230] "Invoking SageMaker TargetModel: sentiment.tar.gz"`,
      ),
    ).slice(6);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      kind: 'python-error',
      targetModel: 'sentiment.tar.gz',
      tritonModel: 'preprocess',
      message: "KeyError: 'input_ids'",
      traceback: [`File "/opt/ml/models/${H1}/model/preprocess/1/model.py", line 40, in execute | ids = self.tokenizer(text)["input_ids"]`],
      lines: 4,
    });
  });

  it('reports the server starting and stopping once, from the signal and the core', () => {
    const events = parse(
      stream(
        A,
        `I1130 13:59:58.000000 1 sagemaker_server.cc:291] "Started Sagemaker HTTPService at 0.0.0.0:8080"
Signal (15) received.
I1130 18:00:00.000100 1 server.cc:312] "Waiting for in-flight requests to complete."
I1130 18:00:00.000200 1 server.cc:328] "Timeout 30: Found 0 model versions that have in-flight inferences"`,
      ),
    );
    expect(events.map((e) => e.kind)).toEqual(['server-started', 'server-stopping']);
    expect(events[0]!.message).toBe('Started Sagemaker HTTPService at 0.0.0.0:8080');
  });

  it('reports an error it does not know verbatim, and never joins lines of another instance', () => {
    const events = parse([
      ...stream(A, 'I1130 15:00:00.000000 1 sagemaker_server.cc:360] "Loading SageMaker TargetModel: x.tar.gz"'),
      ...stream(B, 'E1130 15:00:00.500000 1 backend_model.cc:719] "ERROR: Failed to create instance: unexpected error"'),
      ...stream(A, 'W1130 15:00:00.600000 1 some_backend.cc:12] "something new"'),
    ]);
    expect(events.find((e) => e.instance === 'i-0a1b2c3d4e5f60002')).toMatchObject({
      kind: 'error',
      message: 'ERROR: Failed to create instance: unexpected error',
      source: 'backend_model.cc:719',
    });
    // A's warning came while x.tar.gz was loading and no failure came to explain it: reported on its own.
    expect(events.find((e) => e.kind === 'warning')).toMatchObject({ instance: 'i-0a1b2c3d4e5f60001', message: 'something new' });
    expect(events.find((e) => e.kind === 'error')!.failure).toBeUndefined();
  });

  it('keeps the model\'s own output out of the messages it follows', () => {
    const events = parse(
      stream(
        A,
        `I1130 15:00:00.000000 1 sagemaker_server.cc:360] Loading SageMaker TargetModel: x.tar.gz
I1130 15:00:01.000000 1 model_lifecycle.cc:849] successfully loaded '/opt/ml/models/${H1}/model::x.tar.gz'
tokenizer ready`,
      ),
    );
    expect(events.map(brief)).toEqual(['load-started x.tar.gz x.tar.gz', 'load-succeeded x.tar.gz x.tar.gz']);
  });
});

describe('incremental parsing (--follow)', () => {
  it('completes a stream\'s last message once the stream is idle, and reports a stub error no failure joined', () => {
    const parser = new EndpointLogParser({ year: 2026 });
    parser.push({
      stream: A,
      timestamp: Date.UTC(2026, 10, 30, 14, 0, 0),
      message: 'I1130 14:00:00.000000 1 sagemaker_server.cc:291] "Started Sagemaker HTTPService at 0.0.0.0:8080"',
    });
    expect(parser.drain()).toEqual([]);
    expect(parser.drain({ activeStreams: [] }).map((e) => e.kind)).toEqual(['server-started']);

    const t = Date.UTC(2026, 10, 30, 14, 1, 0);
    parser.push({
      stream: A,
      timestamp: t,
      message: 'I1130 14:01:00.000000 77 pb_stub.cc:389]  Failed to initialize Python stub: ValueError: no weights',
    });
    parser.push({ stream: A, timestamp: t, message: 'At:' });
    parser.push({ stream: A, timestamp: t, message: `  /opt/ml/models/${H1}/model/m/1/model.py(12): initialize` });
    expect(parser.drain({ activeStreams: [], now: t + 1000 })).toEqual([]);
    const late = parser.drain({ now: t + 31_000 });
    expect(late).toEqual([
      expect.objectContaining({ kind: 'python-error', tritonModel: 'm', hash: H1, message: 'ValueError: no weights', lines: 3 }),
    ]);
  });
});
