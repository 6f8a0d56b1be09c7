// Slow: ~5 s on a quiet 2-core machine (test/sequencer.js starts it early on a clean clone).
// The image's serve script, run for real with stub `tritonserver` and `nvidia-smi` executables on a PATH of their
// own: the stub records the argv and environment it was exec'd with, so each test reads what Triton would have got.
// The stubs are POSIX sh scripts (dash, where /bin/sh is dash, starts in a fraction of bash's time; serve itself runs
// in bash, as in the image), and serve's run with no setting at all is made once for the tests that read it.

import { spawnSync } from 'node:child_process';
import {
  accessSync,
  chmodSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { itWithTools } from '../tools';
import { loadScaled } from '../load-scale';

const SERVE = resolve(__dirname, '../../triton-image/serve');

/** The tools serve itself uses, found once on the test runner's PATH and linked into every sandbox. */
const HOST_TOOLS = ['bash', 'find', 'sort', 'mkdir'];

function which(tool: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, tool);
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

interface Sandbox {
  root: string;
  bin: string;
  modelRepo: string;
  mmeRepo: string;
  records: string;
}

interface ServeRun {
  status: number | null;
  stdout: string;
  stderr: string;
  pid: number | undefined;
  /** tritonserver's argv (without argv[0]); undefined when serve never exec'd it. */
  argv?: string[];
  /** The environment tritonserver saw for the variables it reads itself. */
  env?: Record<string, string>;
  tritonPid?: number;
}

let sandboxes: string[] = [];
/** Sandboxes removed when the file ends: the shared run's (defaultMme). */
const kept: string[] = [];

afterEach(() => {
  for (const dir of sandboxes) rmSync(dir, { recursive: true, force: true });
  sandboxes = [];
});
afterAll(() => {
  for (const dir of kept) rmSync(dir, { recursive: true, force: true });
});

interface SandboxOptions {
  tritonserver?: boolean;
  gpus?: number;
  /** Size of the shared-memory mount the `df` stub reports, in KiB; null for no `df` at all. @default 65536 */
  shmKib?: number | null;
}

/** The stubs' interpreter: POSIX sh on the runner's PATH, named by its path (the sandbox's PATH has only HOST_TOOLS). */
const SH = which('sh') ?? '/bin/sh';

function makeSandbox(options: SandboxOptions = {}): Sandbox {
  const root = mkdtempSync(join(tmpdir(), 'mme-serve-'));
  sandboxes.push(root);
  const bin = join(root, 'bin');
  const records = join(root, 'records');
  mkdirSync(bin);
  mkdirSync(records);
  for (const tool of HOST_TOOLS) {
    const found = which(tool);
    if (!found) throw new Error(`the serve tests need \`${tool}\` on PATH`);
    symlinkSync(found, join(bin, tool));
  }
  if (options.tritonserver !== false) {
    // `eval` reads the variable the loop names (sh has no ${!name}); set or not is told apart from set and empty.
    writeStub(
      join(bin, 'tritonserver'),
      `#!${SH}
printf '%s\\0' "$@" > "${records}/argv"
for name in SAGEMAKER_TRITON_PING_MODE SAGEMAKER_TRITON_DEFAULT_MODEL_NAME SAGEMAKER_TRITON_INFERENCE_TYPE; do
  eval "set=\\\${$name+set} value=\\\${$name-}"
  if [ -n "$set" ]; then printf '%s=%s\\0' "$name" "$value"; fi
done > "${records}/env"
printf '%s' "$$" > "${records}/pid"
`,
    );
  }
  const shmKib = options.shmKib === undefined ? 65536 : options.shmKib;
  if (shmKib !== null) {
    // The mount point is df's last argument.
    writeStub(
      join(bin, 'df'),
      `#!${SH}\neval "mount=\\\${$#}"\nprintf 'Filesystem     1024-blocks  Used Available Capacity ` +
        `Mounted on\\nshm %s 0 %s 0%% %s\\n' ${shmKib} ${shmKib} "$mount"\n`,
    );
  }
  if (options.gpus !== undefined) {
    const lines = Array.from({ length: options.gpus }, (_, i) => `GPU ${i}: Tesla T4 (UUID: GPU-0000000${i})`);
    writeStub(join(bin, 'nvidia-smi'), `#!${SH}\nprintf '%s\\n' ${lines.map((l) => `'${l}'`).join(' ')}\n`);
  }
  return { root, bin, records, modelRepo: join(root, 'opt-ml-model'), mmeRepo: join(root, 'tmp-sagemaker') };
}

function writeStub(path: string, text: string): void {
  writeFileSync(path, text);
  chmodSync(path, 0o755);
}

/** Creates model directories (and files) under the single-model repository: `['a/', 'b/config.pbtxt']`. */
function layout(sandbox: Sandbox, entries: string[]): void {
  mkdirSync(sandbox.modelRepo, { recursive: true });
  for (const entry of entries) {
    const path = join(sandbox.modelRepo, entry);
    if (entry.endsWith('/')) mkdirSync(path, { recursive: true });
    else {
      mkdirSync(resolve(path, '..'), { recursive: true });
      writeFileSync(path, 'name: "x"\n');
    }
  }
}

function runServe(sandbox: Sandbox, env: Record<string, string>, args: string[] = ['serve']): ServeRun {
  const result = spawnSync(SERVE, args, {
    env: {
      PATH: sandbox.bin,
      MME_DEPLOY_SERVE_MODEL_REPO: sandbox.modelRepo,
      MME_DEPLOY_SERVE_MME_REPO: sandbox.mmeRepo,
      ...env,
    },
    encoding: 'utf8',
    // A hang, not a slow start: 20 s on a quiet machine, scaled by the run's load.
    timeout: loadScaled(20_000),
  });
  const run: ServeRun = { status: result.status, stdout: result.stdout, stderr: result.stderr, pid: result.pid };
  const argvFile = join(sandbox.records, 'argv');
  if (existsSync(argvFile)) {
    run.argv = readFileSync(argvFile, 'utf8').split('\0').slice(0, -1);
    run.env = Object.fromEntries(
      readFileSync(join(sandbox.records, 'env'), 'utf8')
        .split('\0')
        .slice(0, -1)
        .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
    );
    run.tritonPid = Number(readFileSync(join(sandbox.records, 'pid'), 'utf8'));
  }
  return run;
}

function runMme(env: Record<string, string> = {}, sandboxOptions: SandboxOptions = {}): ServeRun {
  const sandbox = makeSandbox(sandboxOptions);
  const run = runServe(sandbox, { SAGEMAKER_MULTI_MODEL: 'true', ...env });
  if (run.status !== 0) throw new Error(`serve failed (${run.status}): ${run.stderr}`);
  return run;
}

let defaults: { sandbox: Sandbox; run: ServeRun; mmeRepoMade: boolean } | undefined;

/**
 * serve in MME mode with nothing else set (a 64 MiB /dev/shm), run once for the five tests that each read one thing
 * of that run (the same script in the same environment, five times, proved nothing one run does not). Whichever test
 * runs first makes it; its sandbox stays until the file ends, and whether serve made the placeholder repository is
 * recorded when it ran.
 */
function defaultMme(): { sandbox: Sandbox; run: ServeRun; mmeRepoMade: boolean } {
  if (!defaults) {
    const sandbox = makeSandbox();
    kept.push(...sandboxes.splice(sandboxes.indexOf(sandbox.root), 1));
    const run = runServe(sandbox, { SAGEMAKER_MULTI_MODEL: 'true' });
    if (run.status !== 0) throw new Error(`serve failed (${run.status}): ${run.stderr}`);
    defaults = { sandbox, run, mmeRepoMade: existsSync(sandbox.mmeRepo) };
  }
  return defaults;
}

describe('serve in multi-model (MME) mode', () => {
  it('starts tritonserver with the SageMaker front-end, explicit model control and the placeholder repository', () => {
    const { sandbox, run, mmeRepoMade } = defaultMme();
    expect(run.status).toBe(0);
    expect(run.argv).toEqual([
      '--allow-sagemaker=true',
      '--allow-http=false',
      '--model-control-mode=explicit',
      `--model-repository=${sandbox.mmeRepo}`,
      '--model-namespacing=true',
      '--allow-grpc=false',
      '--allow-metrics=false',
      '--log-verbose=true',
      '--backend-config=python,shm-default-byte-size=16777216',
      '--backend-config=python,shm-growth-byte-size=1048576',
    ]);
    expect(mmeRepoMade).toBe(true);
    expect(run.stdout).toContain('Triton is running in SageMaker MME mode. Using Triton ping mode: "live"');
  });

  it('exports ping mode live, so a failed model load does not fail /ping', () => {
    expect(defaultMme().run.env).toEqual({ SAGEMAKER_TRITON_PING_MODE: 'live' });
  });

  it('lets SAGEMAKER_TRITON_OVERRIDE_PING_MODE choose the ping mode', () => {
    expect(runMme({ SAGEMAKER_TRITON_OVERRIDE_PING_MODE: 'ready' }).env?.SAGEMAKER_TRITON_PING_MODE).toBe('ready');
  });

  it('replaces tritonserver with exec, so signals reach it directly', () => {
    const { run } = defaultMme();
    expect(run.tritonPid).toBe(run.pid);
  });

  it('does not load any model at start', () => {
    expect(defaultMme().run.argv?.some((arg) => arg.startsWith('--load-model'))).toBe(false);
  });
});

describe('serve maps each environment variable to its tritonserver flag', () => {
  const cases: Array<[string, string, string[]]> = [
    ['SAGEMAKER_BIND_TO_PORT', '8081', ['--sagemaker-port=8081']],
    ['SAGEMAKER_SAFE_PORT_RANGE', '9000-9999', ['--sagemaker-safe-port-range=9000-9999']],
    ['SAGEMAKER_TRITON_DISABLE_MODEL_NAMESPACING', 'false', ['--model-namespacing=false']],
    ['SAGEMAKER_TRITON_ALLOW_GRPC', 'true', ['--allow-grpc=true']],
    ['SAGEMAKER_TRITON_ALLOW_METRICS', 'true', ['--allow-metrics=true']],
    ['SAGEMAKER_TRITON_METRICS_PORT', '8002', ['--metrics-port=8002']],
    ['SAGEMAKER_TRITON_GRPC_PORT', '8001', ['--grpc-port=8001']],
    ['SAGEMAKER_TRITON_BUFFER_MANAGER_THREAD_COUNT', '4', ['--buffer-manager-thread-count=4']],
    ['SAGEMAKER_TRITON_THREAD_COUNT', '16', ['--sagemaker-thread-count=16']],
    ['SAGEMAKER_TRITON_LOG_VERBOSE', '0', ['--log-verbose=0']],
    ['SAGEMAKER_TRITON_LOG_INFO', 'false', ['--log-info=false']],
    ['SAGEMAKER_TRITON_LOG_WARNING', 'false', ['--log-warning=false']],
    ['SAGEMAKER_TRITON_LOG_ERROR', 'true', ['--log-error=true']],
    ['SAGEMAKER_TRITON_SHM_DEFAULT_BYTE_SIZE', '33554432', ['--backend-config=python,shm-default-byte-size=33554432']],
    // python_backend's real minimum (its check is `< 1 * 1024 * 1024` although its message says 4 MiB).
    ['SAGEMAKER_TRITON_SHM_DEFAULT_BYTE_SIZE', '1048576', ['--backend-config=python,shm-default-byte-size=1048576']],
    ['SAGEMAKER_TRITON_SHM_GROWTH_BYTE_SIZE', '2097152', ['--backend-config=python,shm-growth-byte-size=2097152']],
    ['SAGEMAKER_TRITON_TENSORFLOW_VERSION', '2', ['--backend-config=tensorflow,version=2']],
    ['SAGEMAKER_TRITON_ADDITIONAL_ARGS', '--exit-timeout-secs=30 --load-model=bls_target', [
      '--exit-timeout-secs=30',
      '--load-model=bls_target',
    ]],
  ];

  it.each(cases)('%s=%s', (name, value, flags) => {
    const argv = runMme({ [name]: value }).argv ?? [];
    for (const flag of flags) expect(argv).toContain(flag);
  });

  it('replaces a default flag instead of adding a second one', () => {
    const argv = runMme({
      SAGEMAKER_TRITON_LOG_VERBOSE: '0',
      SAGEMAKER_TRITON_ALLOW_GRPC: 'true',
      SAGEMAKER_TRITON_DISABLE_MODEL_NAMESPACING: 'false',
      SAGEMAKER_TRITON_SHM_DEFAULT_BYTE_SIZE: '8388608',
    }).argv ?? [];
    expect(argv.filter((a) => a.startsWith('--log-verbose='))).toEqual(['--log-verbose=0']);
    expect(argv.filter((a) => a.startsWith('--allow-grpc='))).toEqual(['--allow-grpc=true']);
    expect(argv.filter((a) => a.startsWith('--model-namespacing='))).toEqual(['--model-namespacing=false']);
    expect(argv.filter((a) => a.startsWith('--backend-config=python,shm-default'))).toEqual([
      '--backend-config=python,shm-default-byte-size=8388608',
    ]);
  });

  it('gives SAGEMAKER_TRITON_MODEL_LOAD_GPU_LIMIT to every GPU that nvidia-smi lists', () => {
    const argv = runMme({ SAGEMAKER_TRITON_MODEL_LOAD_GPU_LIMIT: '0.8' }, { gpus: 2 }).argv ?? [];
    const at = argv.indexOf('--model-load-gpu-limit');
    expect(argv.slice(at, at + 4)).toEqual(['--model-load-gpu-limit', '0:0.8', '--model-load-gpu-limit', '1:0.8']);
  });

  it('warns and adds no GPU limit when nvidia-smi lists no GPU', () => {
    const run = runMme({ SAGEMAKER_TRITON_MODEL_LOAD_GPU_LIMIT: '0.5' }, { gpus: 0 });
    expect(run.argv).not.toContain('--model-load-gpu-limit');
    expect(run.stdout).toContain('nvidia-smi lists no GPU');
  });

  it('passes every word of every line of SAGEMAKER_TRITON_ADDITIONAL_ARGS', () => {
    const argv =
      runMme({ SAGEMAKER_TRITON_ADDITIONAL_ARGS: '--exit-timeout-secs=30\n--load-model=a\t--load-model=b\n\n  --strict-readiness=false\n' })
        .argv ?? [];
    expect(argv.slice(-4)).toEqual(['--exit-timeout-secs=30', '--load-model=a', '--load-model=b', '--strict-readiness=false']);
  });

  it('splits SAGEMAKER_TRITON_ADDITIONAL_ARGS on whitespace without expanding globs', () => {
    const argv = runMme({ SAGEMAKER_TRITON_ADDITIONAL_ARGS: '  --load-model=*   --log-file=/tmp/t.log ' }).argv ?? [];
    expect(argv.slice(-2)).toEqual(['--load-model=*', '--log-file=/tmp/t.log']);
  });

  it('ignores the `serve` argument SageMaker passes and appends any further arguments', () => {
    const sandbox = makeSandbox();
    const run = runServe(sandbox, { SAGEMAKER_MULTI_MODEL: 'true' }, ['serve', '--log-format=ISO8601']);
    expect(run.argv).not.toContain('serve');
    expect(run.argv?.at(-1)).toBe('--log-format=ISO8601');
  });

  it('accepts SAGEMAKER_TRITON_INFERENCE_TYPE values tritonserver knows and leaves the variable to it', () => {
    for (const type of ['infer', 'generate', 'generate_stream']) {
      expect(runMme({ SAGEMAKER_TRITON_INFERENCE_TYPE: type }).env?.SAGEMAKER_TRITON_INFERENCE_TYPE).toBe(type);
    }
  });
});

describe('serve in single-model mode', () => {
  it('loads the only model directory and tells tritonserver its name', () => {
    const sandbox = makeSandbox();
    layout(sandbox, ['sentiment/1/', 'sentiment/config.pbtxt']);
    const run = runServe(sandbox, {});
    expect(run.status).toBe(0);
    expect(run.argv).toContain(`--model-repository=${sandbox.modelRepo}`);
    expect(run.argv?.at(-1)).toBe('--load-model=sentiment');
    expect(run.env).toEqual({ SAGEMAKER_TRITON_PING_MODE: 'ready', SAGEMAKER_TRITON_DEFAULT_MODEL_NAME: 'sentiment' });
    expect(run.stdout).toContain('Starting with the only existing model directory sentiment');
  });

  it('loads SAGEMAKER_TRITON_DEFAULT_MODEL_NAME among several directories (an ensemble and its steps)', () => {
    const sandbox = makeSandbox();
    layout(sandbox, ['ensemble/1/', 'preprocess/1/', 'onnx/1/']);
    const run = runServe(sandbox, { SAGEMAKER_TRITON_DEFAULT_MODEL_NAME: 'ensemble' });
    expect(run.status).toBe(0);
    expect(run.argv?.filter((a) => a.startsWith('--load-model'))).toEqual(['--load-model=ensemble']);
  });

  it('treats SAGEMAKER_MULTI_MODEL=false as single-model mode', () => {
    const sandbox = makeSandbox();
    layout(sandbox, ['m/1/']);
    const run = runServe(sandbox, { SAGEMAKER_MULTI_MODEL: 'false' });
    expect(run.argv).toContain(`--model-repository=${sandbox.modelRepo}`);
    expect(run.argv).toContain('--load-model=m');
  });
});

describe('serve refuses to start on a misconfiguration', () => {
  interface ErrorCase {
    title: string;
    env?: Record<string, string>;
    models?: string[];
    sandbox?: { tritonserver?: boolean; gpus?: number };
    message: RegExp;
  }
  const mme = { SAGEMAKER_MULTI_MODEL: 'true' };
  const cases: ErrorCase[] = [
    {
      title: 'config.pbtxt at the root of the single-model repository',
      models: ['config.pbtxt', '1/'],
      message: /Incorrect directory structure\.[\s\S]*needs to contain the top level folder/,
    },
    { title: 'an empty single-model repository', models: [], message: /No model found in model repository/ },
    { title: 'a missing single-model repository', message: /No model found in model repository: .* does not exist/ },
    {
      title: 'several model directories (a hidden one counts) and no default name',
      models: ['ensemble/1/', '__MACOSX/'],
      message: /More than 1 model directory found[\s\S]*SAGEMAKER_TRITON_DEFAULT_MODEL_NAME[\s\S]*: __MACOSX ensemble/,
    },
    {
      title: 'a default model name with no such directory',
      env: { SAGEMAKER_TRITON_DEFAULT_MODEL_NAME: 'ensembel' },
      models: ['ensemble/1/'],
      message: /SAGEMAKER_TRITON_DEFAULT_MODEL_NAME ensembel does not exist/,
    },
    {
      title: 'an unknown SAGEMAKER_TRITON_INFERENCE_TYPE',
      env: { ...mme, SAGEMAKER_TRITON_INFERENCE_TYPE: 'predict' },
      message: /Invalid SAGEMAKER_TRITON_INFERENCE_TYPE 'predict'[\s\S]*infer, generate, generate_stream/,
    },
    {
      title: 'an unknown ping mode override',
      env: { ...mme, SAGEMAKER_TRITON_OVERRIDE_PING_MODE: 'healthy' },
      message: /Invalid SAGEMAKER_TRITON_OVERRIDE_PING_MODE 'healthy'[\s\S]*ready, live/,
    },
    {
      title: 'a port that is not a number',
      env: { ...mme, SAGEMAKER_BIND_TO_PORT: '80a' },
      message: /Invalid SAGEMAKER_BIND_TO_PORT '80a'/,
    },
    {
      title: 'a port out of range',
      env: { ...mme, SAGEMAKER_BIND_TO_PORT: '70000' },
      message: /Invalid SAGEMAKER_BIND_TO_PORT '70000'/,
    },
    {
      title: 'a reversed safe port range',
      env: { ...mme, SAGEMAKER_SAFE_PORT_RANGE: '9999-9000' },
      message: /Invalid SAGEMAKER_SAFE_PORT_RANGE '9999-9000'/,
    },
    {
      title: 'a python shared-memory region under 1 MiB',
      env: { ...mme, SAGEMAKER_TRITON_SHM_DEFAULT_BYTE_SIZE: '1048575' },
      message: /Invalid SAGEMAKER_TRITON_SHM_DEFAULT_BYTE_SIZE '1048575'.*at least 1048576 \(1 MiB\)/,
    },
    {
      title: 'gRPC on its default port outside SAGEMAKER_SAFE_PORT_RANGE',
      env: { ...mme, SAGEMAKER_SAFE_PORT_RANGE: '9000-9999', SAGEMAKER_TRITON_ALLOW_GRPC: 'true' },
      message: /cannot listen to GRPC requests at port 8001, allowed port range is \[9000, 9999\][\s\S]*Set SAGEMAKER_TRITON_GRPC_PORT/,
    },
    {
      title: 'metrics on their default port outside SAGEMAKER_SAFE_PORT_RANGE',
      env: { ...mme, SAGEMAKER_SAFE_PORT_RANGE: '9000-9999', SAGEMAKER_TRITON_ALLOW_METRICS: 'ON' },
      message: /cannot listen to metrics requests at port 8002[\s\S]*Set SAGEMAKER_TRITON_METRICS_PORT/,
    },
    {
      title: 'a port from SAGEMAKER_TRITON_ADDITIONAL_ARGS outside SAGEMAKER_SAFE_PORT_RANGE',
      env: {
        ...mme,
        SAGEMAKER_SAFE_PORT_RANGE: '9000-9999',
        SAGEMAKER_TRITON_ALLOW_GRPC: '1',
        SAGEMAKER_TRITON_GRPC_PORT: '9001',
        SAGEMAKER_TRITON_ADDITIONAL_ARGS: '--grpc-port 7001',
      },
      message: /GRPC requests at port 7001/,
    },
    {
      title: 'gRPC and metrics on the same port',
      env: {
        ...mme,
        SAGEMAKER_TRITON_ALLOW_GRPC: 'true',
        SAGEMAKER_TRITON_ALLOW_METRICS: 'true',
        SAGEMAKER_TRITON_GRPC_PORT: '9100',
        SAGEMAKER_TRITON_METRICS_PORT: '9100',
      },
      message: new RegExp(
        /cannot listen to GRPC requests and metrics requests at the same address and port 0\.0\.0\.0:9100[\s\S]*/.source +
          /SAGEMAKER_TRITON_METRICS_PORT/.source,
      ),
    },
    {
      title: 'gRPC on the SageMaker port',
      env: { ...mme, SAGEMAKER_TRITON_ALLOW_GRPC: 'true', SAGEMAKER_TRITON_GRPC_PORT: '8080' },
      message: /SageMaker requests and GRPC requests at the same address and port 0\.0\.0\.0:8080/,
    },
    {
      title: 'a zero shared-memory growth step',
      env: { ...mme, SAGEMAKER_TRITON_SHM_GROWTH_BYTE_SIZE: '0' },
      message: /Invalid SAGEMAKER_TRITON_SHM_GROWTH_BYTE_SIZE '0'/,
    },
    {
      title: 'a GPU limit that is not a fraction',
      env: { ...mme, SAGEMAKER_TRITON_MODEL_LOAD_GPU_LIMIT: '80%' },
      sandbox: { gpus: 1 },
      message: /Invalid SAGEMAKER_TRITON_MODEL_LOAD_GPU_LIMIT '80%'/,
    },
    {
      title: 'a GPU limit without nvidia-smi',
      env: { ...mme, SAGEMAKER_TRITON_MODEL_LOAD_GPU_LIMIT: '0.8' },
      message: /nvidia-smi was not found[\s\S]*--gpus all/,
    },
    {
      title: 'no tritonserver on PATH',
      env: mme,
      sandbox: { tritonserver: false },
      message: /tritonserver was not found on PATH/,
    },
  ];

  it.each(cases)('exits 1 on $title', ({ env = {}, models, sandbox: sandboxOptions, message }) => {
    const sandbox = makeSandbox(sandboxOptions);
    if (models) layout(sandbox, models);
    const run = runServe(sandbox, env);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(message);
    expect(run.argv).toBeUndefined();
  });
});

describe('serve checks ports the way tritonserver will', () => {
  it('accepts gRPC and metrics inside SAGEMAKER_SAFE_PORT_RANGE, and the SageMaker port outside it (as Triton does)', () => {
    const run = runMme({
      SAGEMAKER_SAFE_PORT_RANGE: '9000-9999',
      SAGEMAKER_TRITON_ALLOW_GRPC: 'true',
      SAGEMAKER_TRITON_GRPC_PORT: '9001',
      SAGEMAKER_TRITON_ALLOW_METRICS: 'true',
      SAGEMAKER_TRITON_METRICS_PORT: '9002',
    });
    expect(run.argv).toContain('--sagemaker-safe-port-range=9000-9999');
  });

  it('ignores default ports of endpoints that stay disabled', () => {
    expect(runMme({ SAGEMAKER_SAFE_PORT_RANGE: '9000-9999', SAGEMAKER_TRITON_ALLOW_GRPC: 'false' }).argv).toContain('--allow-grpc=false');
  });

  it('compares only endpoints on the same address, as Triton does', () => {
    const run = runMme({
      SAGEMAKER_SAFE_PORT_RANGE: '9000-9999',
      SAGEMAKER_TRITON_ALLOW_GRPC: 'true',
      SAGEMAKER_TRITON_ADDITIONAL_ARGS: '--grpc-address=127.0.0.1',
    });
    expect(run.argv).toContain('--grpc-address=127.0.0.1');
  });
});

describe('serve reports /dev/shm at start', () => {
  it('logs the size and how many python-backend regions fit in it', () => {
    const { run } = defaultMme(); // with the stub df's 64 MiB (65536 KiB), its default
    expect(run.stdout).toMatch(
      /: 64 MiB\. Each python-backend model instance takes SAGEMAKER_TRITON_SHM_DEFAULT_BYTE_SIZE=16777216 \(16 MiB\) of it, so 4 fit\./,
    );
  });

  it('counts with the configured region size', () => {
    expect(runMme({ SAGEMAKER_TRITON_SHM_DEFAULT_BYTE_SIZE: '2097152' }, { shmKib: 65536 }).stdout).toMatch(/\(2 MiB\) of it, so 32 fit/);
  });

  it('warns when not even one region fits', () => {
    const run = runMme({}, { shmKib: 8192 });
    expect(run.stdout).toMatch(/WARNING: .* is smaller than one python-backend region[\s\S]*Unable to initialize shared memory key/);
  });

  it('still starts when /dev/shm cannot be measured', () => {
    const run = runMme({}, { shmKib: null });
    expect(run.stdout).toContain('WARNING: could not measure');
    expect(run.argv).toBeDefined();
  });
});

describe('serve script hygiene', () => {
  itWithTools('passes shellcheck', { tools: ['shellcheck'] }, (found) => {
    const result = spawnSync(found.paths.shellcheck!, ['--shell=bash', SERVE], { encoding: 'utf8' });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('is executable and starts with a bash shebang', () => {
    expect(readFileSync(SERVE, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env bash');
    expect(() => accessSync(SERVE, constants.X_OK)).not.toThrow();
  });
});
