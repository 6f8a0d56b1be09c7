// The Triton and SageMaker-front-end messages `mme-deploy logs` understands, each with where it is written.
// Matching is on the message, never on the file:line in the prefix, which moves between releases.
//
// Sources (snapshots): triton-inference-server/core @ 73aad7c (2026-06), server @ e1db8a6 (2026-08),
// python_backend @ f9088ff (2026-07). `MRM` = src/model_repository_manager/model_repository_manager.cc,
// `lifecycle` = src/model_repository_manager/model_lifecycle.cc.

/** A Triton model as the core prints it: `<namespace>::<name>` with namespacing on (SageMaker's default), else `<name>`. */
export interface ModelId {
  readonly name: string;
  /** The model repository the model was found in (namespace = repository path, MRM:1207-1208). */
  readonly namespace?: string;
}

/** What one message says, stripped of its wording. */
export type Fact =
  | { readonly t: 'server-started'; readonly address: string }
  | { readonly t: 'server-stopping'; readonly detail: string }
  | { readonly t: 'server-failed'; readonly reason: string }
  | { readonly t: 'load-requested'; readonly target: string }
  | { readonly t: 'load-hash'; readonly hash: string }
  | { readonly t: 'repository-registered'; readonly repository: string }
  | { readonly t: 'load-started'; readonly model: ModelId; readonly version: number }
  | { readonly t: 'load-succeeded'; readonly model: ModelId }
  | { readonly t: 'load-failed'; readonly model: ModelId; readonly version?: number; readonly reason?: string }
  | { readonly t: 'ensemble-failed'; readonly model: ModelId; readonly dependency: ModelId; readonly reason: string }
  | { readonly t: 'eviction'; readonly target: string }
  | { readonly t: 'unloaded'; readonly model: ModelId; readonly version: number }
  | { readonly t: 'unload-failed'; readonly target?: string; readonly reason: string }
  | { readonly t: 'invoking'; readonly target: string }
  | { readonly t: 'invoke-failed'; readonly reason: string }
  | { readonly t: 'python-init-failed'; readonly reason: string }
  | { readonly t: 'python-execute-failed'; readonly instance: string; readonly reason: string }
  | { readonly t: 'execution-env'; readonly path: string }
  | { readonly t: 'other' };

interface Rule {
  /** A cheap substring every matching message contains, tested before the regex. */
  readonly has: string;
  readonly pattern: RegExp;
  readonly fact: (m: RegExpExecArray) => Fact;
}

/** `/opt/ml/models/h/model::pre` -> { namespace, name }; `pre` -> { name }. */
export function parseModelId(text: string): ModelId {
  const sep = text.lastIndexOf('::');
  return sep < 0 ? { name: text } : { name: text.slice(sep + 2), namespace: text.slice(0, sep) };
}

const id = (text: string | undefined) => parseModelId(text ?? '');

// Ordered: the first rule whose substring and pattern match wins. `s` flag: raw (unescaped) messages may span lines.
const RULES: readonly Rule[] = [
  // ---- core: model life cycle ----
  // lifecycle:473  LOG_INFO << "loading: " << model_id << ":" << version;
  { has: 'loading: ', pattern: /^loading: (.+):(\d+)$/, fact: (m) => ({ t: 'load-started', model: id(m[1]), version: Number(m[2]) }) },
  // lifecycle:849  LOG_INFO << "successfully loaded '" << model_id << "'";
  { has: 'successfully loaded', pattern: /^successfully loaded '(.+)'$/, fact: (m) => ({ t: 'load-succeeded', model: id(m[1]) }) },
  // lifecycle:654  LOG_ERROR << "failed to load '" << model_id << "' version " << version << ": " << status.AsString();
  {
    has: 'failed to load',
    pattern: /^failed to load '(.+?)' version (\d+): ([\s\S]*)$/,
    fact: (m) => ({ t: 'load-failed', model: id(m[1]), version: Number(m[2]), reason: m[3]! }),
  },
  // MRM:770  LOG_ERROR << "failed to load model '" << model_id << "': " << status.Message();
  {
    has: 'failed to load model',
    pattern: /^failed to load model '(.+?)': ([\s\S]*)$/,
    fact: (m) => ({ t: 'load-failed', model: id(m[1]), reason: m[2]! }),
  },
  // lifecycle:789  LOG_INFO << "failed to load '" << model_id << "'";  (after :654, which carries the reason)
  { has: 'failed to load', pattern: /^failed to load '(.+)'$/, fact: (m) => ({ t: 'load-failed', model: id(m[1]) }) },
  // MRM:749  LOG_ERROR << status.AsString();  with the status built at MRM:1866-1906, e.g.
  //   "Invalid argument: ensemble 'E' depends on 'M' which has no loaded version. Model 'M' loading failed with error: R"
  {
    has: 'depends on',
    pattern: /^(?:[A-Z][a-z]+(?: [a-z]+)?: )?ensemble '(.+?)' depends on '(.+?)' (which [\s\S]*)$/,
    fact: (m) => ({ t: 'ensemble-failed', model: id(m[1]), dependency: id(m[2]), reason: m[3]! }),
  },
  // lifecycle:636  LOG_INFO << "successfully unloaded '" << model_id << "' version " << version;
  {
    has: 'successfully unloaded',
    pattern: /^successfully unloaded '(.+)' version (\d+)$/,
    fact: (m) => ({ t: 'unloaded', model: id(m[1]), version: Number(m[2]) }),
  },
  // MRM:1766  LOG_INFO << "Model repository registered: " << repository;
  {
    has: 'Model repository registered: ',
    pattern: /^Model repository registered: (\S+)$/,
    fact: (m) => ({ t: 'repository-registered', repository: m[1]! }),
  },

  // ---- server: the SageMaker front end (src/sagemaker_server.cc) ----
  // :291  LOG_INFO << "Started Sagemaker HTTPService at " << addr;
  {
    has: 'Started Sagemaker HTTPService',
    pattern: /^Started Sagemaker HTTPService at (\S+)$/,
    fact: (m) => ({ t: 'server-started', address: m[1]! }),
  },
  // :317  LOG_VERBOSE(1) << "Received model_name: " << model_name_string;  (the hash SageMaker loads the archive under)
  { has: 'Received model_name: ', pattern: /^Received model_name: (\S+)$/, fact: (m) => ({ t: 'load-hash', hash: m[1]! }) },
  // :360  LOG_INFO << "Loading SageMaker TargetModel: " << target_model;
  {
    has: 'Loading SageMaker TargetModel: ',
    pattern: /^Loading SageMaker TargetModel: (.+)$/,
    fact: (m) => ({ t: 'load-requested', target: m[1]! }),
  },
  // :719  LOG_INFO << "Unloading SageMaker TargetModel: " << target_model << std::endl;
  {
    has: 'Unloading SageMaker TargetModel: ',
    pattern: /^Unloading SageMaker TargetModel: (.+)$/,
    fact: (m) => ({ t: 'eviction', target: m[1]! }),
  },
  // :230  LOG_INFO << "Invoking SageMaker TargetModel: " << target_model;
  {
    has: 'Invoking SageMaker TargetModel: ',
    pattern: /^Invoking SageMaker TargetModel: (.+)$/,
    fact: (m) => ({ t: 'invoking', target: m[1]! }),
  },
  // :606  LOG_VERBOSE(1) << "Infer failed: " << TRITONSERVER_ErrorMessage(err);
  { has: 'Infer failed: ', pattern: /^Infer failed: ([\s\S]*)$/, fact: (m) => ({ t: 'invoke-failed', reason: m[1]! }) },
  // :733  LOG_ERROR << "Error when unloading SageMaker Model with dependents for model: " << target_model;
  {
    has: 'Error when unloading SageMaker Model',
    pattern: /^Error when unloading SageMaker Model with dependents for model: (.+)$/,
    fact: (m) => ({ t: 'unload-failed', target: m[1]!, reason: m[0] }),
  },
  // :781  LOG_ERROR << "Error: UNLOAD did not complete within expected " << 350 << " seconds. This may result in ..."
  {
    has: 'UNLOAD did not complete',
    pattern: /^Error: UNLOAD did not complete[\s\S]*$/,
    fact: (m) => ({ t: 'unload-failed', reason: m[0] }),
  },
  // :760  LOG_ERROR << "Error: Received non-zero exit code on checking for model unavailability. " << message;
  {
    has: 'checking for model unavailability',
    pattern: /^Error: Received non-zero exit code on checking for model unavailability[\s\S]*$/,
    fact: (m) => ({ t: 'unload-failed', reason: m[0] }),
  },

  // ---- core and server: shutting down ----
  // core src/server.cc:312  LOG_INFO << "Waiting for in-flight requests to complete.";
  {
    has: 'Waiting for in-flight requests',
    pattern: /^Waiting for in-flight requests to complete\.$/,
    fact: (m) => ({ t: 'server-stopping', detail: m[0] }),
  },

  // ---- python backend ----
  // pb_stub.cc:389  LOG_INFO << "Failed to initialize Python stub: " << error_string;  (error_string = pybind11's what())
  {
    has: 'Failed to initialize Python stub: ',
    pattern: /^Failed to initialize Python stub: ([\s\S]*)$/,
    fact: (m) => ({ t: 'python-init-failed', reason: m[1]! }),
  },
  // pb_stub.cc:736-741  "Failed to process the request(s) for model '" + name_ + "', message: " + error_string
  //   (name_ is the model instance, `<model>_<group>_<n>`: core backend_model.cc:621, model_config_utils.cc:891)
  {
    has: 'Failed to process the request(s) for model',
    pattern: /^Failed to process the request\(s\) for model (?:instance )?'(.+?)', message: ([\s\S]*)$/,
    fact: (m) => ({ t: 'python-execute-failed', instance: m[1]!, reason: m[2]! }),
  },
  // python_be.cc:2104  LOG_MESSAGE(INFO, "Using Python execution env " + python_execution_env_)
  { has: 'Using Python execution env ', pattern: /^Using Python execution env (\S+)$/, fact: (m) => ({ t: 'execution-env', path: m[1]! }) },
];

/** What a message says; `{ t: 'other' }` for every message not in the catalogue. */
export function classifyMessage(message: string): Fact {
  for (const rule of RULES) {
    if (!message.includes(rule.has)) continue;
    const m = rule.pattern.exec(message);
    if (m) return rule.fact(m);
  }
  return OTHER;
}

const OTHER: Fact = { t: 'other' };

/**
 * What an unprefixed line says: the few messages written straight to stdout/stderr, not through Triton's logger.
 * Undefined for every other line (a continuation of the message before, or output of the model's own code).
 */
export function classifyRawLine(line: string): Fact | undefined {
  // server src/triton_signal.cc:112  std::cout << "Signal (" << signum << ") received." << std::endl;
  let m = /^Signal \((\d+)\) received\.$/.exec(line);
  if (m) return { t: 'server-stopping', detail: m[0] };
  // server src/common.h:122 (FAIL_IF_ERR, e.g. main.cc:517 "creating server")
  //   std::cerr << "error: " << MSG << ": " << TRITONSERVER_ErrorCodeString(err) << " - " << message;
  //   with the code strings of common src/error.cc:42-64 ("Internal", "Invalid argument", ...).
  m = /^error: (.+?): (Unknown|Internal|Not found|Invalid argument|Unavailable|Unsupported|Already exists) - ([\s\S]*)$/.exec(line);
  if (m) return { t: 'server-failed', reason: `${m[1]}: ${m[2]} - ${m[3]}` };
  return undefined;
}

/**
 * A CloudWatch Logs filter pattern (`?"phrase" ...`: lines holding any of the phrases) for the lines that report a
 * failure, or tie a model to its TargetModel, or explain a TensorRT failure. `status` reads only these: a busy
 * endpoint writes several lines per request, none of which matter for failures. Unknown errors are not among them;
 * `mme-deploy logs` reads every line. Syntax: https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/FilterAndPatternSyntax.html
 */
export const FAILURE_FILTER_PATTERN = [
  'Loading SageMaker TargetModel',
  'Received model_name',
  'Model repository registered',
  'loading: ',
  'successfully loaded',
  'failed to load',
  'depends on',
  'Failed to initialize Python stub',
  'Failed to process the request',
  'Infer failed',
  'UNLOAD did not complete',
  'Error when unloading',
  'engine plan file',
  'Version tag does not match',
  'creating server',
]
  .map((phrase) => `?"${phrase}"`)
  .join(' ');
