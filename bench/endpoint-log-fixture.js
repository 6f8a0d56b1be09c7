// A recorded-looking CloudWatch log of a SageMaker GPU multi-model endpoint with several instances, and the events
// it holds (the ground truth `mme-deploy logs` must find). Deterministic for a seed. Used by bench/logs.js and by
// test/logs/endpoint-log-fixture.test.ts.
//
// Every line has the shape its writer gives it; message and file:line from the sources the parser cites
// (triton-inference-server core @ 73aad7c, server @ e1db8a6, python_backend @ f9088ff, tensorrt_backend @ e2ef6d7,
// onnxruntime_backend @ 00fd3e8); TensorRT's and ONNX Runtime's own texts as reported in NVIDIA/TensorRT#3130,
// #2177 and triton-inference-server/server#5661. The SageMaker front end logs at verbose level 1, as `serve` sets it.
'use strict';

/** mulberry32: a small seeded generator, so a seed always gives the same log. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The TargetModels the endpoint serves: an archive of model directories (ensemble + composing models, repository
 * /opt/ml/models/<hash>/model) or a model at the archive root (repository /opt/ml/models/<hash>).
 */
const TARGETS = [
  { name: 'sentiment.tar.gz', composing: [['preprocess', 'python'], ['bert', 'onnxruntime']], failure: 'execute' },
  {
    name: 'model_trt_python.tar.gz',
    composing: [['preprocess', 'python'], ['bert_trt', 'tensorrt'], ['postprocess', 'python']],
    failure: 'module',
  },
  { name: 'detector.tar.gz', backend: 'tensorrt', failure: 'compute' },
  { name: 'classifier.tar.gz', backend: 'onnxruntime', failure: 'oom' },
  { name: 'ranker.tar.gz', backend: 'python', failure: 'env' },
  { name: 'resnet50.tar.gz', backend: 'onnxruntime' },
  { name: 'retrieval.tar.gz', composing: [['tokenize', 'python'], ['encoder', 'tensorrt']] },
];

const INIT = {
  python: ['python_be.cc:2499', 'python_be.cc:2544'],
  onnxruntime: ['onnxruntime.cc:3030', 'onnxruntime.cc:3095'],
  tensorrt: ['tensorrt.cc:233', 'tensorrt.cc:299'],
};

/**
 * @param {{ instances?: number, lines?: number, escaped?: boolean, seed?: number, start?: number }} [options]
 *   instances: log streams (default 3); lines: at least this many lines (default 10000); escaped: Triton 24.06+
 *   JSON-escaped messages, else raw ones as older images write (default true); start: ms of the first line.
 */
function generateEndpointLog(options = {}) {
  const instances = options.instances ?? 3;
  const wanted = options.lines ?? 10000;
  const escaped = options.escaped ?? true;
  const rnd = random(options.seed ?? 1);
  const start = options.start ?? Date.UTC(2026, 10, 30, 13, 0, 0);
  const perInstance = Math.ceil(wanted / instances);
  const streams = [];
  const expected = [];

  for (let n = 0; n < instances; n++) {
    const instance = `i-0a1b2c3d4e5f6${String(n).padStart(4, '0')}`;
    const stream = `AllTraffic/${instance}`;
    const records = [];
    let us = (start + n * 137) * 1000; // microseconds; instances start a little apart
    let nextId = 0;
    const pick = (list) => list[Math.floor(rnd() * list.length)];
    const hex = (len) => Array.from({ length: len }, () => '0123456789abcdef'[Math.floor(rnd() * 16)]).join('');
    const advance = (minMs, maxMs) => (us += Math.round((minMs + rnd() * (maxMs - minMs)) * 1000));

    const push = (text) => records.push({ stream, timestamp: Math.floor(us / 1000), message: text, eventId: `${n}-${nextId++}` });
    const prefix = (level, pid, source) => {
      const d = new Date(Math.floor(us / 1000));
      const p2 = (v) => String(v).padStart(2, '0');
      const micros = String(us % 1_000_000).padStart(6, '0');
      return (
        `${level}${p2(d.getUTCMonth() + 1)}${p2(d.getUTCDate())} ` +
        `${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}.${micros} ${pid} ${source}] `
      );
    };
    /** One Triton log call; a raw multi-line message continues on unprefixed lines at the same time. */
    const log = (level, source, message, { pid = 1, raw = false } = {}) => {
      advance(1, 3);
      if (escaped && !raw) {
        push(prefix(level, pid, source) + JSON.stringify(message));
      } else {
        const [first, ...rest] = message.split('\n');
        push(prefix(level, pid, source) + first);
        for (const line of rest) push(line);
      }
    };
    const expect = (kind, fields = {}) => expected.push({ kind, time: Math.floor(us / 1000), instance, ...fields });

    // ---- start ----
    push('Triton is running in SageMaker MME mode. Using Triton ping mode: "live"'); // docker/sagemaker/serve:59
    log('I', 'pinned_memory_manager.cc:277', "Pinned memory pool is created at '0x7f2b54000000' with size 268435456");
    log('I', 'cuda_memory_manager.cc:107', 'CUDA memory pool is created on device 0 with size 67108864');
    log(
      'I',
      'tritonserver.cc:2598',
      '\n+----------------------------------+------------------------------------------+\n' +
        '| Option                           | Value                                    |\n' +
        '+----------------------------------+------------------------------------------+\n' +
        '| server_id                        | triton                                   |\n' +
        '| server_version                   | 2.50.0                                   |\n' +
        '| model_repository_path[0]         | /tmp/sagemaker                           |\n' +
        '| model_control_mode               | MODE_EXPLICIT                            |\n' +
        '+----------------------------------+------------------------------------------+\n',
      { raw: true },
    );
    log('I', 'metrics.cc:889', 'Collecting metrics for GPU 0: Tesla T4');
    log('I', 'sagemaker_server.cc:291', 'Started Sagemaker HTTPService at 0.0.0.0:8080');
    expect('server-started');

    const loaded = new Map(); // TargetModel -> { hash, repo, models }
    const hashes = new Map();
    let lastPing = us;

    const load = (t) => {
      const hash = hashes.get(t.name) ?? hex(32);
      hashes.set(t.name, hash);
      const root = !t.composing;
      const repo = root ? `/opt/ml/models/${hash}` : `/opt/ml/models/${hash}/model`;
      const id = (m) => `${repo}::${m}`;
      log('I', 'sagemaker_server.cc:154', 'SageMaker request: 2 /models');
      log('I', 'sagemaker_server.cc:236', 'SageMaker request: LOAD MODEL');
      log('I', 'sagemaker_server.cc:317', `Received model_name: ${hash}`);
      log('I', 'sagemaker_server.cc:322', `Received url: /opt/ml/models/${hash}/model`);
      log('I', 'sagemaker_server.cc:360', `Loading SageMaker TargetModel: ${t.name}`);
      expect('load-started', { targetModel: t.name, tritonModel: t.name });
      // A target with a known failure fails one load in three.
      const fails = t.failure && t.failure !== 'execute' && rnd() < 0.34;
      if (!root) {
        for (const [m] of t.composing) log('I', 'sagemaker_server.cc:995', `Reading model sub-directory: ${m}\n`);
        log('I', 'sagemaker_server.cc:995', 'Reading model sub-directory: ensemble\n');
        log(
          'I',
          'sagemaker_server.cc:1019',
          `SageMaker front-end detected an Ensemble config at path: /opt/ml/models/${hash}/model/ensemble/config.pbtxt\n`,
        );
      }
      log('I', 'model_repository_manager.cc:1766', `Model repository registered: ${repo}`);
      const models = root ? [[t.name, t.backend]] : t.composing;
      for (const [m] of models) {
        log('I', 'model_lifecycle.cc:473', `loading: ${id(m)}:1`);
        if (m !== t.name) expect('load-started', { targetModel: t.name, tritonModel: m });
      }
      let failed;
      if (fails) {
        failed = models.find(([, b]) =>
          t.failure === 'compute' ? b === 'tensorrt' : t.failure === 'oom' ? b === 'onnxruntime' : b === 'python',
        )[0];
      }
      for (const [m, backend] of models) {
        advance(200, 900);
        log('I', INIT[backend][0], `TRITONBACKEND_ModelInitialize: ${m} (version 1)`);
        if (m !== failed) {
          log('I', INIT[backend][1], `TRITONBACKEND_ModelInstanceInitialize: ${m}_0_0 (${backend === 'python' ? 'CPU' : 'GPU'} device 0)`);
          advance(300, 2500);
          log('I', 'model_lifecycle.cc:849', `successfully loaded '${id(m)}'`);
          expect('load-succeeded', { targetModel: t.name, tritonModel: m });
          continue;
        }
        const where = root ? `/opt/ml/models/${hash}/model` : `/opt/ml/models/${hash}/model/${m}`;
        let reason;
        let failure;
        let firstLine; // an event's time is that of its first line: here the stub's, when it writes the error first
        if (t.failure === 'module') {
          const frames =
            `\n\nAt:\n  ${where}/1/model.py(6): <module>\n  <frozen importlib._bootstrap>(241): _call_with_frames_removed\n` +
            '  <frozen importlib._bootstrap_external>(883): exec_module\n  <frozen importlib._bootstrap>(688): _load_unlocked\n' +
            '  /usr/lib/python3.10/importlib/__init__.py(126): import_module\n';
          // The stub writes before it can hand its log to the server: its own pid, raw (pb_stub.cc:389, pb_stub_log.cc:95-101).
          log('I', 'pb_stub.cc:389', ` Failed to initialize Python stub: ModuleNotFoundError: No module named 'transformers'${frames}`, {
            pid: 100 + Math.floor(rnd() * 9000),
            raw: true,
          });
          firstLine = Math.floor(us / 1000);
          reason = `Internal: ModuleNotFoundError: No module named 'transformers'${frames}`;
          failure = 'python-module-missing';
        } else if (t.failure === 'compute') {
          log('I', 'logging.cc:46', 'Loaded engine size: 161 MiB');
          log(
            'E',
            'logging.cc:40',
            '6: The engine plan file is generated on an incompatible device, expecting compute 7.5 got compute 8.6, please rebuild.',
          );
          const last =
            '2: [engine.cpp::deserializeEngine::1148] Error Code 2: ' +
            'Internal Error (Assertion engine->deserialize(start, size, allocator, runtime) failed. )';
          log('E', 'logging.cc:40', last);
          reason = `Internal: unable to create TensorRT engine: ${last}`;
          failure = 'tensorrt-compute-capability';
        } else if (t.failure === 'oom') {
          reason =
            'Internal: onnx runtime error 6: Exception during initialization: ' +
            '/workspace/onnxruntime/onnxruntime/core/framework/bfc_arena.cc:368 ' +
            'void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, ' +
            'onnxruntime::WaitNotificationFn) Failed to allocate memory for requested buffer of size 268435456\n';
          failure = 'out-of-memory';
        } else {
          log('I', 'python_be.cc:2104', `Using Python execution env ${where}/py310_env.tar.gz`);
          reason = `Internal: Failed to get the canonical path for ${where}/py310_env.tar.gz.`;
          failure = 'execution-env-missing';
        }
        log('E', 'model_lifecycle.cc:654', `failed to load '${id(m)}' version 1: ${reason}`);
        expect('load-failed', { targetModel: t.name, tritonModel: m, failure, ...(firstLine !== undefined ? { time: firstLine } : {}) });
        log('I', 'model_lifecycle.cc:789', `failed to load '${id(m)}'`);
      }
      if (!root && !failed) {
        log('I', 'model_lifecycle.cc:473', `loading: ${id(t.name)}:1`);
        log('I', 'model_lifecycle.cc:849', `successfully loaded '${id(t.name)}'`);
        expect('load-succeeded', { targetModel: t.name, tritonModel: t.name });
      }
      if (!root && failed) {
        log(
          'E',
          'model_repository_manager.cc:749',
          `Invalid argument: ensemble '${id(t.name)}' depends on '${id(failed)}' which has no loaded version. ` +
            `Model '${id(failed)}' loading failed with error: Internal: ModuleNotFoundError: No module named 'transformers'`,
        );
        expect('load-failed', { targetModel: t.name, tritonModel: t.name, failure: 'ensemble-dependency' });
      }
      if (failed) {
        if (t.failure === 'oom') log('I', 'sagemaker_server.cc:936', 'Received an OOM error during LOAD MODEL. Returning a 507.');
        log('I', 'sagemaker_server.cc:1133', `Unregistered model repository due to load failure for model: ${t.name}\n`);
        log('I', 'model_repository_manager.cc:1798', `Model repository unregistered: ${repo}`);
        return false;
      }
      loaded.set(t.name, { hash, repo, models: root ? [t.name] : [t.name, ...t.composing.map(([m]) => m)] });
      return true;
    };

    const evict = (name) => {
      const { hash, repo, models } = loaded.get(name);
      log('I', 'sagemaker_server.cc:154', `SageMaker request: 4 /models/${hash}`);
      log('I', 'sagemaker_server.cc:250', 'SageMaker request: UNLOAD MODEL');
      log('I', 'sagemaker_server.cc:719', `Unloading SageMaker TargetModel: ${name}\n`);
      expect('eviction', { targetModel: name, tritonModel: name });
      log(
        'I',
        'sagemaker_server.cc:751',
        `Using Model Repository Index during UNLOAD to check for status of model hash: ${hash} for model: ${name}`,
      );
      for (const m of models) {
        advance(50, 400);
        log('I', 'model_lifecycle.cc:636', `successfully unloaded '${repo}::${m}' version 1`);
        expect('unloaded', { targetModel: name, tritonModel: m });
      }
      log('I', 'sagemaker_server.cc:774', `UNLOAD for model ${name} completed in 1 seconds.`);
      log('I', 'model_repository_manager.cc:1798', `Model repository unregistered: ${repo}`);
      loaded.delete(name);
    };

    const invoke = (t) => {
      if (!loaded.has(t.name) && !load(t)) return;
      const { hash } = loaded.get(t.name);
      log('I', 'sagemaker_server.cc:154', `SageMaker request: 2 /models/${hash}/invoke`);
      log('I', 'sagemaker_server.cc:208', 'SageMaker request: INVOKE MODEL');
      log('I', 'sagemaker_server.cc:218', 'SageMaker MME Custom Invoke Model Path');
      log('I', 'sagemaker_server.cc:230', `Invoking SageMaker TargetModel: ${t.name}`);
      if (t.failure === 'execute' && rnd() < 0.05) {
        const error =
          `Failed to process the request(s) for model 'preprocess_0_0', message: TypeError: ` +
          `a bytes-like object is required, not 'str'\n\nAt:\n  /opt/ml/models/${hash}/model/preprocess/1/model.py(52): execute\n`;
        log('E', 'pb_stub.cc:741', error);
        expect('invoke-failed', { targetModel: t.name, tritonModel: 'preprocess', failure: 'python-exception' });
        log('I', 'sagemaker_server.cc:606', `Infer failed: ${error}`);
      }
    };

    while (records.length < perInstance) {
      advance(20, 400);
      if (us - lastPing > 5_000_000) {
        log('I', 'sagemaker_server.cc:154', 'SageMaker request: 0 /ping');
        lastPing = us;
      }
      const r = rnd();
      if (r < 0.9) {
        // Traffic goes mostly to the healthy models; the broken ones are called now and then.
        invoke(rnd() < 0.85 ? pick(TARGETS.filter((t) => !t.failure || t.failure === 'execute')) : pick(TARGETS));
      } else if (r < 0.94 && loaded.size > 3) {
        evict(pick([...loaded.keys()]));
      } else if (r < 0.945) {
        // An error the parser has no rule for (model_repository_manager.cc:516): reported verbatim.
        log('E', 'model_repository_manager.cc:516', 'Failed to set config modification time: model_config_content_name_ is empty');
        expect('error', { message: 'Failed to set config modification time: model_config_content_name_ is empty' });
      }
    }

    // ---- the last instance is scaled in ----
    if (n === instances - 1) {
      advance(100, 200);
      push('Signal (15) received.'); // server src/triton_signal.cc:112
      expect('server-stopping');
      log('I', 'server.cc:312', 'Waiting for in-flight requests to complete.');
      log('I', 'server.cc:328', 'Timeout 30: Found 0 model versions that have in-flight inferences');
      log('I', 'server.cc:343', 'All models are stopped, unloading models');
      for (const [name, { repo, models }] of loaded) {
        for (const m of models) {
          log('I', 'model_lifecycle.cc:636', `successfully unloaded '${repo}::${m}' version 1`);
          expect('unloaded', { targetModel: name, tritonModel: m });
        }
      }
    }
    streams.push(records);
  }

  // CloudWatch interleaves the streams by time (FilterLogEvents); lines of one stream keep their order.
  const records = streams.flat().sort((a, b) => a.timestamp - b.timestamp);
  return { records, expected };
}

module.exports = { generateEndpointLog };
