// The python sources `--run-python` runs: a stand-in for the python backend's `triton_python_backend_utils` module and
// the runner that imports a model.py and calls its auto_complete_config, as Triton's stub does at load. They are kept
// here as text so they ship inside the package's dist/ and are written to a temporary directory for each run.
//
// What Triton does (triton-inference-server/python_backend @ f9088ff): the stub puts the version directory, the model
// directory and the backend directory on sys.path, imports `<version>.<stem>` (src/pb_stub.cc:2043-2080), looks up
// TritonPythonModel on that module and, if it has auto_complete_config, calls it with a ModelConfig built from the
// config as JSON (:501-535); the result must be a ModelConfig. The ModelConfig methods and their errors follow
// src/resources/triton_python_backend_utils.py (class ModelConfig): they are written anew here, with the same
// behaviour and the same messages, so that a model's mistakes read as Triton would report them.

import { SYNTAX_VERDICTS } from './syntax-check';

/** The stand-in `triton_python_backend_utils`. */
export const STAND_IN_UTILS =
  `"""Stand-in for Triton's triton_python_backend_utils, for running auto_complete_config offline (mme-deploy --run-python).

ModelConfig behaves as the python backend's does at load; the rest of the module is present so that model files
that import names from it import, but none of it runs a model."""

import json


class TritonModelException(Exception):
    pass


class TritonError(Exception):
    def __init__(self, message="", code=None):
        super().__init__(message)
        self._message = message

    def message(self):
        return self._message


class _Placeholder:
    """Stands for classes a model builds only when it serves requests."""

    def __init__(self, *args, **kwargs):
        raise TritonModelException("not available while auto-completing a configuration")


class Tensor(_Placeholder):
    pass


class InferenceRequest(_Placeholder):
    pass


class InferenceResponse(_Placeholder):
    pass


class MetricFamily(_Placeholder):
    COUNTER = 0
    GAUGE = 1
    HISTOGRAM = 2


class PreferredMemory(_Placeholder):
    pass


class Logger:
    @staticmethod
    def log(message, level=None):
        pass

    log_info = log_warn = log_error = log_verbose = log


TRITONSERVER_MEMORY_CPU = 0
TRITONSERVER_MEMORY_GPU = 2
TRITONSERVER_REQUEST_FLAG_SEQUENCE_START = 1
TRITONSERVER_REQUEST_FLAG_SEQUENCE_END = 2
TRITONSERVER_RESPONSE_COMPLETE_FINAL = 1
TRITONSERVER_REQUEST_RELEASE_ALL = 1
TRITONSERVER_REQUEST_RELEASE_RESCHEDULE = 2

_MODEL_DIR = None


def get_model_dir():
    return _MODEL_DIR


def _config_entry(entries, name):
    for entry in entries:
        if entry.get("name") == name:
            return entry
    return {}


def get_input_config_by_name(model_config, name):
    return _config_entry(model_config.get("input", []), name)


def get_output_config_by_name(model_config, name):
    return _config_entry(model_config.get("output", []), name)


def get_input_tensor_by_name(request, name):
    raise TritonModelException("not available while auto-completing a configuration")


def get_output_tensor_by_name(response, name):
    raise TritonModelException("not available while auto-completing a configuration")


# The type names, in TRITONSERVER_DataType order (core include/triton/core/tritonserver.h: BOOL = 1 ... BYTES = 13).
_TYPE_NAMES = ("BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64", "FP16", "FP32",
               "FP64", "STRING")


def _numpy_types():
    import numpy

    return (numpy.bool_, numpy.uint8, numpy.uint16, numpy.uint32, numpy.uint64, numpy.int8, numpy.int16,
            numpy.int32, numpy.int64, numpy.float16, numpy.float32, numpy.float64, numpy.object_)


def __getattr__(name):
    # Module attributes that need numpy are built when first read, so models that never touch them import without
    # numpy; Triton's module has them from the start (TRITON_STRING_TO_NUMPY, utils.py:32).
    if name == "TRITON_STRING_TO_NUMPY":
        return {"TYPE_" + type_name: numpy_type for type_name, numpy_type in zip(_TYPE_NAMES, _numpy_types())}
    raise AttributeError("module 'triton_python_backend_utils' has no attribute '" + name + "'")


def triton_string_to_numpy(triton_type):
    return __getattr__("TRITON_STRING_TO_NUMPY")[triton_type]


def triton_to_numpy_type(data_type):
    types = _numpy_types()
    return types[data_type - 1] if 1 <= data_type <= len(types) else None


def numpy_to_triton_type(data_type):
    for index, numpy_type in enumerate(_numpy_types()):
        if data_type == numpy_type:
            return index + 1
    return None


def using_decoupled_model_transaction_policy(model_config):
    return bool(model_config.get("model_transaction_policy", {}).get("decoupled", False))


def serialize_byte_tensor(input_tensor):
    raise TritonModelException("not available while auto-completing a configuration")


def deserialize_bytes_tensor(encoded_tensor):
    raise TritonModelException("not available while auto-completing a configuration")


def load_model(*args, **kwargs):
    raise TritonModelException("not available while auto-completing a configuration")


def unload_model(*args, **kwargs):
    raise TritonModelException("not available while auto-completing a configuration")


def is_model_ready(*args, **kwargs):
    return False


class ModelConfig:
    """The model configuration auto_complete_config receives and returns."""

    def __init__(self, model_config):
        self._model_config = json.loads(model_config)

    def as_dict(self):
        return self._model_config

    def _name(self):
        return self._model_config["name"]

    def set_max_batch_size(self, max_batch_size):
        if self._model_config["max_batch_size"] > max_batch_size:
            raise ValueError(
                "configuration specified max_batch_size " + str(self._model_config["max_batch_size"])
                + ", but in auto-complete-config function for model '" + self._name()
                + "' specified max_batch_size " + str(max_batch_size)
            )
        self._model_config["max_batch_size"] = max_batch_size

    def set_dynamic_batching(self):
        for scheduler in ("sequence_batching", "ensemble_scheduling"):
            if scheduler in self._model_config:
                raise ValueError(
                    "Configuration specified scheduling_choice as '" + scheduler
                    + "', but auto-complete-config function for model '" + self._name()
                    + "' tries to set scheduling_choice as 'dynamic_batching'"
                )
        self._model_config.setdefault("dynamic_batching", {})

    def _check_properties(self, kind, tensor, allowed, allowed_text):
        for key in tensor:
            if key not in allowed:
                raise ValueError(
                    kind + " '" + str(tensor.get("name")) + "' in auto-complete-config function for model '"
                    + self._name() + "' contains property other than " + allowed_text + "."
                )
        if "name" not in tensor:
            raise ValueError(kind + " in auto-complete-config function for model '" + self._name() + "' is missing 'name' property.")
        for key in ("data_type", "dims"):
            if key not in tensor:
                raise ValueError(
                    kind + " '" + tensor["name"] + "' in auto-complete-config function for model '" + self._name()
                    + "' is missing '" + key + "' property."
                )

    def _merge(self, kind, tensor):
        for current in self._model_config[kind]:
            if current["name"] != tensor["name"]:
                continue
            if current["data_type"] != "TYPE_INVALID" and current["data_type"] != tensor["data_type"]:
                raise ValueError(
                    "unable to load model '" + self._name() + "', configuration expects datatype "
                    + current["data_type"] + " for " + kind + " '" + tensor["name"] + "', model provides "
                    + tensor["data_type"]
                )
            if current["dims"] and current["dims"] != tensor["dims"]:
                raise ValueError(
                    "model '" + self._name() + "', tensor '" + tensor["name"] + "': the model expects dims "
                    + str(tensor["dims"]) + " but the model configuration specifies dims " + str(current["dims"])
                )
            if kind == "input" and "optional" in current and "optional" in tensor and current["optional"] != tensor["optional"]:
                raise ValueError(
                    "model '" + self._name() + "', tensor '" + tensor["name"] + "': the model expects optional "
                    + str(tensor["optional"]) + " but the model configuration specifies optional " + str(current["optional"])
                )
            current["data_type"] = tensor["data_type"]
            current["dims"] = tensor["dims"]
            if kind == "input" and "optional" in tensor:
                current["optional"] = tensor["optional"]
            return
        self._model_config[kind].append(tensor)

    def add_input(self, input):
        self._check_properties("input", input, ("name", "data_type", "dims", "optional"), "'name', 'data_type', 'dims' and 'optional'")
        self._merge("input", input)

    def add_output(self, output):
        self._check_properties("output", output, ("name", "data_type", "dims"), "'name', 'data_type' and 'dims'")
        self._merge("output", output)

    def set_model_transaction_policy(self, transaction_policy_dict):
        for key in transaction_policy_dict:
            if key != "decoupled":
                raise ValueError(
                    "model transaction property in auto-complete-config function for model '" + self._name()
                    + "' contains property other than 'decoupled'."
                )
        policy = self._model_config.setdefault("model_transaction_policy", {})
        if "decoupled" in transaction_policy_dict:
            if "decoupled" in policy and policy["decoupled"] != transaction_policy_dict["decoupled"]:
                raise ValueError(
                    "trying to change decoupled property in auto-complete-config for model '" + self._name()
                    + "', which is already set to '" + str(policy["decoupled"]) + "'."
                )
            policy["decoupled"] = transaction_policy_dict["decoupled"]
`;

const RUNNER_IMPORTS = `import importlib
import json
import os
import sys
import traceback
`;

/**
 * What the runner does with its job (`job`, read by RUNNER from stdin, handed over by FORK_SERVER in the forked
 * process): import model.py, run auto_complete_config, print one result as JSON on stdout. Whatever the model prints
 * goes to stderr, so stdout stays the result.
 */
const RUNNER_BODY = `result_out = sys.stdout
sys.stdout = sys.stderr


def model_line(error):
    """The line of the model file where the error happened (the innermost frame in that file), if any."""
    line = getattr(error, "lineno", None) if isinstance(error, SyntaxError) else None
    for frame in traceback.extract_tb(error.__traceback__):
        if os.path.realpath(frame.filename) == os.path.realpath(job["model_file"]):
            line = frame.lineno
    return line


def fail(stage, error):
    return {"ok": False, "stage": stage, "type": type(error).__name__, "message": str(error), "line": model_line(error)}


def run():
    for path in (job["version_dir"], job["model_dir"], job["stub_dir"]):
        sys.path.append(path)
    import triton_python_backend_utils as pb_utils

    pb_utils._MODEL_DIR = job["version_dir"]
    try:
        module = importlib.import_module(job["module"])
    except BaseException as error:
        return fail("import", error)
    try:
        model_class = getattr(module, "TritonPythonModel")
    except AttributeError as error:
        return fail("class", error)
    config = pb_utils.ModelConfig(job["config"])
    ran = hasattr(model_class, "auto_complete_config")
    if ran:
        try:
            config = model_class.auto_complete_config(config)
        except BaseException as error:
            return fail("auto_complete", error)
    if not isinstance(config, pb_utils.ModelConfig):
        return {
            "ok": False, "stage": "return", "type": "TypeError", "line": None,
            "message": "auto_complete_config function in model '" + job["name"] + "' must return a valid pb.ModelConfig object.",
        }
    return {"ok": True, "ran": ran, "config": config._model_config}


result = run()
result_out.write(json.dumps(result))
result_out.flush()
`;

/** The runner: reads one job as JSON on stdin, prints one result as JSON on stdout (RUNNER_BODY). */
export const RUNNER =
  `"""Imports one model.py as Triton's python backend stub does and runs its auto_complete_config (mme-deploy --run-python).

Job (stdin): {"stub_dir", "version_dir", "model_dir", "module", "model_file", "name", "config": <JSON text>}
Result (stdout): {"ok": true, "ran": bool, "config": {...}} or {"ok": false, "stage", "type", "message", "line"}"""

${RUNNER_IMPORTS}
job = json.loads(sys.stdin.read())
${RUNNER_BODY}`;

/**
 * The fork server (fork-server.ts): imports numpy once, then forks one process per job it is sent, which runs the job
 * as RUNNER does in a process of its own: stdin, stdout and stderr its own pipes (stdin empty, as the runner's is once
 * it has read its job), the model's directory as working directory, sys.argv[0] the runner's path; the server kills
 * it at its timeout and answers with what it wrote and how it ended. Only the forked process returns from _serve.
 * A job `{"syntax_check": {"feature", "files": [[name, base64 source], ...]}}` is the model.py syntax check instead:
 * the forked process runs SYNTAX_VERDICTS and prints its answer as the checker's own python does (syntax-check.ts).
 */
export const FORK_SERVER =
  `"""Runs RUNNER's jobs each in a process forked from this one (mme-deploy --run-python), so that python starts once.

Requests (stdin, a JSON line each): {"id", "cwd", "timeout_ms", "stderr_limit", "input": <the runner's job as JSON>},
or {"cancel": <id>}: that job's process is killed (its answer is not wanted). Stdin closed: every process is killed.
First line (stdout): {"executable": sys.executable}.
Answers (stdout, a JSON line each): {"id", "timeout", "exit" or "signal", "stdout", "stderr"} (base64), or
{"id", "unavailable": true} when no process could be started for it: the caller then starts one itself."""

${RUNNER_IMPORTS}import atexit
import base64
import gc
import select
import signal
import threading
import time
import warnings

if not hasattr(os, "fork"):
    sys.exit(3)

# Its own path first: what the caller starts a python of its own with, when this one cannot run a model.
os.write(1, (json.dumps({"executable": sys.executable}) + "\\n").encode())

try:
    import numpy as _numpy  # most models import it: imported once here, inherited by every forked process

    _numpy.random.seed()  # the first seeding loads what seeding needs (40 ms): done here, not in every child
except BaseException:
    _numpy = None

try:
    # The stand-in (in this script's directory, sys.path[0]) is compiled once here, not in every forked process, where
    # no .pyc is read (-B): measured, 210 of the 1,100 page faults a forked model costs. RUNNER_BODY's import and the
    # model's then find it in sys.modules; _MODEL_DIR is set in the forked process, for its model only.
    import triton_python_backend_utils  # noqa: F401
except BaseException:
    pass  # the forked process imports it, as a process of its own does


def _serve():
    poller = select.poll()
    children = {}  # pid -> the job's state
    by_fd = {}  # pipe -> (state, "out" | "err")
    pending = b""
    poller.register(0, select.POLLIN)

    def answer(message):
        data = (json.dumps(message) + "\\n").encode()
        while data:
            data = data[os.write(1, data):]

    def start(request):
        if not os.path.isdir(request["cwd"]):
            answer({"id": request["id"], "unavailable": True})
            return None
        pipes = [os.pipe(), os.pipe(), os.pipe()]  # the child's stdin, stdout, stderr
        sys.stdout.flush()
        sys.stderr.flush()
        # The child's garbage collections then leave this process's objects alone: touching them would copy their
        # memory page by page into the child (measured: 0.15 s of CPU per model, half what forking saves).
        gc.freeze()
        try:
            with warnings.catch_warnings():
                # Python 3.12 warns (here, in the parent) that forking with threads alive (numpy's BLAS) may deadlock
                # the child: the child runs python code, and BLAS starts its threads again.
                warnings.simplefilter("ignore", DeprecationWarning)
                pid = os.fork()
        except OSError:
            for r, w in pipes:
                os.close(r)
                os.close(w)
            answer({"id": request["id"], "unavailable": True})
            return None
        if pid == 0:
            for target, (r, w) in enumerate(pipes):
                os.dup2(r if target == 0 else w, target)
            for fd in [fd for pair in pipes for fd in pair] + list(by_fd):
                os.close(fd)
            os.chdir(request["cwd"])
            sys.argv[0] = os.path.join(os.path.dirname(sys.argv[0]), "run_auto_complete.py")
            if _numpy is not None:
                _numpy.random.seed()  # seeded from the OS, as a process of its own would be, not as its siblings
            return json.loads(request["input"])
        os.close(pipes[0][0])
        os.close(pipes[0][1])  # the child's stdin is empty
        os.close(pipes[1][1])
        os.close(pipes[2][1])
        state = {
            "id": request["id"], "pid": pid, "out": [], "err": [], "err_size": 0, "limit": request["stderr_limit"],
            "deadline": time.monotonic() + request["timeout_ms"] / 1000, "timed_out": False, "status": None, "open": 2,
        }
        children[pid] = state
        for fd, which in ((pipes[1][0], "out"), (pipes[2][0], "err")):
            by_fd[fd] = (state, which)
            poller.register(fd, select.POLLIN)
        return None

    def finish(state):
        del children[state["pid"]]
        message = {"id": state["id"], "timeout": state["timed_out"]}
        if os.WIFSIGNALED(state["status"]):
            message["signal"] = os.WTERMSIG(state["status"])
        else:
            message["exit"] = os.WEXITSTATUS(state["status"])
        message["stdout"] = base64.b64encode(b"".join(state["out"])).decode()
        message["stderr"] = base64.b64encode(b"".join(state["err"])).decode()
        answer(message)

    while True:
        now = time.monotonic()
        waits = [max(0, s["deadline"] - now) for s in children.values() if not s["timed_out"]]
        if any(s["open"] == 0 and s["status"] is None for s in children.values()):
            waits.append(0.005)  # its pipes are closed: its exit is a moment away
        for fd, _ in poller.poll(min(waits) * 1000 if waits else None):
            if fd == 0:
                chunk = os.read(0, 65536)
                if not chunk:
                    # The caller is done, or gone: no job is wanted any more.
                    for s in children.values():
                        if s["status"] is None:
                            os.kill(s["pid"], signal.SIGKILL)
                            os.waitpid(s["pid"], 0)
                    return None
                pending += chunk
                while b"\\n" in pending:
                    line, pending = pending.split(b"\\n", 1)
                    request = json.loads(line)
                    if "cancel" in request:
                        for s in children.values():
                            if s["id"] == request["cancel"] and s["status"] is None:
                                os.kill(s["pid"], signal.SIGKILL)
                        continue
                    job = start(request)
                    if job is not None:
                        return job
                continue
            state, which = by_fd[fd]
            chunk = os.read(fd, 65536)
            if not chunk:
                poller.unregister(fd)
                os.close(fd)
                del by_fd[fd]
                state["open"] -= 1
            elif which == "out":
                state["out"].append(chunk)
            elif state["err_size"] < state["limit"]:
                state["err"].append(chunk)
                state["err_size"] += len(chunk)
        now = time.monotonic()
        for state in list(children.values()):
            if state["status"] is None:
                pid, status = os.waitpid(state["pid"], os.WNOHANG)
                if pid != 0:
                    state["status"] = status
            # As a process of its own is watched: not done (exited, its pipes closed) by the deadline is a timeout.
            if not state["timed_out"] and now >= state["deadline"]:
                state["timed_out"] = True
                if state["status"] is None:
                    os.kill(state["pid"], signal.SIGKILL)
            if state["status"] is not None and state["open"] == 0:
                finish(state)


def _exit():
    """Ends the forked process as the interpreter ends one (threads joined, atexit handlers run, streams flushed), but
    without freeing every object: in a forked process that copies all the memory it touches (0.2 s of CPU a model)."""
    threading._shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except BaseException:
            pass
    os._exit(0)


${SYNTAX_VERDICTS}

job = _serve()
if job is None:
    os._exit(0)  # the server: nothing of a model's runs here, nothing needs finalizing
if "syntax_check" in job:
    # A model.py syntax check (syntax-check.ts) of the session's validations: parsed in a process of its own, as the
    # checker's python would, whatever a model did to the server before.
    _request = job["syntax_check"]
    _verdicts = syntax_verdicts(_request["feature"], ((n, base64.b64decode(s)) for n, s in _request["files"]))
    _data = json.dumps(_verdicts).encode()
    while _data:
        _data = _data[os.write(1, _data):]
    os._exit(0)
${RUNNER_BODY}
_exit()
`;
