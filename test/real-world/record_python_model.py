"""Records the interface of upstream python models for the corpus's stand-ins (run by test/real-world/import.js).

The corpus commits no one's code. In place of each upstream model.py, corpus.ts writes a stand-in of its own from
what this script records (python-models.json), as make_onnx.py writes ONNX models from their recorded interface.
What the validator can see of a python model, and so what is recorded:
- the module-level imports, in order, with any try/except around them: which names they bind, and which of them
  fail to import, are part of how the model loads;
- class TritonPythonModel: its base classes and the names, decorators and parameters of its methods (no bodies);
- auto_complete_config, run once: the calls it makes on the configuration it is given, with their values, and how it
  ends (returning that configuration or something else, or raising);
- an exception the module raises at import from a statement that is not kept (the stand-in raises it there).

  python3 record_python_model.py <directory holding mme-deploy's stand-in triton_python_backend_utils.py>
  stdin: [{"file": <a model.py arranged in its case>}, ...]
  stdout: [{"file", "spec": {...}, "behaviour": {...}} or {"file", "error": "..."}, ...]

Each file is imported in a python process of its own, as Triton's stub (and validate --run-python) imports it: the
version directory, the model directory and the stand-in's directory on sys.path, imported as <version>.<stem>.
"""

import ast
import builtins
import copy
import importlib
import importlib.abc
import importlib.util
import json
import os
import subprocess
import sys
import traceback
import types
from concurrent.futures import ThreadPoolExecutor

CLASS = "TritonPythonModel"
AUTO_COMPLETE = "auto_complete_config"
DECORATORS = ("staticmethod", "classmethod")


class Unsupported(Exception):
    """A construct the stand-ins cannot express: the maintainer has to extend this script, not guess."""


# ---- what the file says (ast) ----------------------------------------------------------------------------------

def is_import(node):
    return isinstance(node, (ast.Import, ast.ImportFrom))


def contains_import(node):
    return any(is_import(n) for n in ast.walk(node))


def imports_only(statements):
    """The statements with only their imports (and try blocks around imports) kept; `pass` where nothing is left."""
    kept = []
    for node in statements:
        if is_import(node):
            kept.append(node)
        elif isinstance(node, ast.Try) and contains_import(node):
            kept.append(ast.Try(
                body=imports_only(node.body),
                handlers=[ast.ExceptHandler(type=h.type, name=h.name, body=imports_only(h.body)) for h in node.handlers],
                orelse=[n for n in imports_only(node.orelse) if not isinstance(n, ast.Pass)],
                finalbody=[n for n in imports_only(node.finalbody) if not isinstance(n, ast.Pass)],
            ))
    return kept or [ast.Pass()]


def literal_default(node, where):
    try:
        ast.literal_eval(node)
    except ValueError:
        raise Unsupported(f"{where}: a parameter's default is not a literal ({ast.unparse(node)})")
    return node


def signature(fn, where):
    """The method as `[@decorator ...][async ]name(parameters)`, without annotations."""
    decorators = []
    for d in fn.decorator_list:
        if not (isinstance(d, ast.Name) and d.id in DECORATORS):
            raise Unsupported(f"{where}: method {fn.name} has decorator @{ast.unparse(d)}")
        decorators.append(f"@{d.id} ")
    a = fn.args
    bare = lambda arg: ast.arg(arg=arg.arg) if arg else None  # noqa: E731
    params = ast.arguments(
        posonlyargs=[bare(x) for x in a.posonlyargs], args=[bare(x) for x in a.args], vararg=bare(a.vararg),
        kwonlyargs=[bare(x) for x in a.kwonlyargs], kw_defaults=[d and literal_default(d, where) for d in a.kw_defaults],
        kwarg=bare(a.kwarg), defaults=[literal_default(d, where) for d in a.defaults],
    )
    prefix = "".join(decorators) + ("async " if isinstance(fn, ast.AsyncFunctionDef) else "")
    return f"{prefix}{fn.name}({ast.unparse(params)})"


def interface(source, where):
    """The spec's module statements (with the index of the top-level statement each stands for), bases and methods."""
    tree = ast.parse(source, where)
    module, model = [], None
    for index, node in enumerate(tree.body):
        if is_import(node) or (isinstance(node, ast.Try) and contains_import(node)):
            module.append((index, ast.unparse(imports_only([node])[0])))
        elif isinstance(node, ast.ClassDef) and node.name == CLASS:
            model = node
        elif contains_import(node) and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            raise Unsupported(f"{where}:{node.lineno}: an import inside a module-level {type(node).__name__}")
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == CLASS for t in node.targets):
            raise Unsupported(f"{where}:{node.lineno}: {CLASS} is assigned, not defined")
    if model is None:
        raise Unsupported(f"{where}: no class {CLASS} (a model class bound another way is not supported yet)")
    if model.keywords or model.decorator_list:
        raise Unsupported(f"{where}:{model.lineno}: class {CLASS} has a metaclass, keywords or decorators")
    methods = [signature(n, where) for n in model.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return tree, module, [ast.unparse(b) for b in model.bases], methods


# ---- what the file does (run in a process of its own) -------------------------------------------------------

class _Anything:
    """What an empty module's attributes are: callable, subclassable, iterable, anything."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything()

    def __call__(self, *args, **kwargs):
        return _Anything()

    def __iter__(self):
        return iter(())

    def __mro_entries__(self, bases):
        return (object,)


class _EmptyModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Anything()


class _EmptyModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on sys.meta_path: an empty module for each of the model's imports that is not installed (and for what is
    imported from it), and the names of those it stood for."""

    def __init__(self, names):
        self.allowed = {n for n in names if importlib.util.find_spec(n) is None}  # before this finder is on the path
        self.names = set()

    def find_spec(self, name, path, target=None):
        top = name.split(".")[0]
        if top not in self.allowed:
            return None
        self.names.add(top)
        return importlib.util.spec_from_loader(name, self, is_package=True)

    def create_module(self, spec):
        return _EmptyModule(spec.name)

    def exec_module(self, module):
        module.__path__ = []


def exact_literal(value, where):
    """`value` as JSON, only when JSON (and so the stand-in's python literal) gives back exactly the same value."""
    if value is None or isinstance(value, (bool, str)) or type(value) is int:
        return value
    if type(value) is float and not value.is_integer():
        return value
    if type(value) is list:
        return [exact_literal(v, where) for v in value]
    if type(value) is dict and all(type(k) is str for k in value):
        return {k: exact_literal(v, where) for k, v in value.items()}
    raise Unsupported(f"{where}: a value that JSON does not give back as it is: {value!r}")


def exception(error, where):
    try:
        args = [exact_literal(a, where) for a in error.args]
    except Unsupported:
        args = None
    return {"type": type(error).__name__, "message": str(error), "args": args}


class _RecordingConfig:
    """Stands for pb_utils.ModelConfig: records each call of its methods and checks nothing, so that the stand-in's
    calls meet the real checks (the stand-in triton_python_backend_utils's) when the validator runs it."""

    def __init__(self, name, methods):
        self.calls = []
        self.read = False
        self.methods = methods
        # The config Triton hands a python model whose config.pbtxt declares nothing (see auto-complete.ts).
        self.config = {"name": name, "platform": "", "backend": "python", "runtime": "",
                       "version_policy": {"latest": {"num_versions": 1}}, "max_batch_size": 0, "input": [],
                       "output": [], "batch_input": [], "batch_output": [], "default_model_filename": ""}
        self.before = copy.deepcopy(self.config)

    def as_dict(self):
        self.read = True
        return self.config

    def __getattr__(self, name):
        if name not in self.__dict__.get("methods", ()):
            raise AttributeError(f"'ModelConfig' object has no attribute '{name}'")

        def call(*args, **kwargs):
            if kwargs:
                raise Unsupported(f"{name} called with keyword arguments")
            self.calls.append([name, *copy.deepcopy(list(args))])
        return call


def module_line(error, file):
    """The line of the module-level statement of `file` that raised, if any."""
    if isinstance(error, SyntaxError):
        return error.lineno
    line = None
    for frame in traceback.extract_tb(error.__traceback__):
        if os.path.realpath(frame.filename) == os.path.realpath(file) and frame.name == "<module>":
            line = frame.lineno
    return line


def behaviour(stub_dir, file, empty_modules):
    """What importing `file` and calling its auto_complete_config do, with empty modules standing for `empty_modules`
    where they are not installed."""
    version_dir = os.path.dirname(os.path.abspath(file))
    model_dir = os.path.dirname(version_dir)
    sys.path.extend([version_dir, model_dir, stub_dir])
    os.chdir(version_dir)
    finder = _EmptyModules(empty_modules)
    sys.meta_path.append(finder)
    import triton_python_backend_utils as pb_utils

    pb_utils._MODEL_DIR = version_dir
    stem = os.path.splitext(os.path.basename(file))[0]
    result = {"import": None, "autoComplete": None}
    try:
        module = importlib.import_module(f"{os.path.basename(version_dir)}.{stem}")
    except BaseException as error:
        result["import"] = {**exception(error, file), "line": module_line(error, file)}
        return result
    model = getattr(module, CLASS, None)
    if model is None or not hasattr(model, AUTO_COMPLETE):
        return result
    methods = {n for n in dir(pb_utils.ModelConfig) if not n.startswith("_") and n != "as_dict"}
    config = _RecordingConfig(os.path.basename(model_dir), methods)
    try:
        returned = model.auto_complete_config(config)
        if returned is config:
            then = "return config"
        elif returned is None:
            then = "return None"
        else:
            then = {"return": exact_literal(returned, file)}
    except Unsupported:
        raise
    except BaseException as error:
        then = {"raise": exception(error, file)}
    if config.config != config.before:
        raise Unsupported(f"{file}: {AUTO_COMPLETE} changes the dict as_dict() returns; a stand-in cannot record that")
    recorded = {"calls": config.calls, "then": then}
    if config.read:
        recorded["readsConfig"] = True
    if finder.names:
        recorded["withEmptyModules"] = sorted(finder.names)
    result["autoComplete"] = recorded
    return result


def run_behaviour(stub_dir, file, empty_modules=()):
    args = [sys.executable, "-B", os.path.abspath(__file__), "--behaviour", stub_dir, file, ",".join(empty_modules)]
    run = subprocess.run(args, capture_output=True, text=True,
                         timeout=120, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "HF_HUB_OFFLINE": "1",
                                           "TRANSFORMERS_OFFLINE": "1"})
    if run.returncode != 0:
        raise Unsupported(f"{file}: recording failed: {run.stderr.strip()[-2000:]}")
    return json.loads(run.stdout)


# ---- the spec ----------------------------------------------------------------------------------------------------

def imported_modules(tree):
    """The top-level packages the module's own module-level imports name."""
    names = set()
    for node in tree.body:
        for n in ast.walk(node) if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else ():
            if isinstance(n, ast.Import):
                names.update(a.name.split(".")[0] for a in n.names)
            elif isinstance(n, ast.ImportFrom) and n.level == 0:
                names.add(n.module.split(".")[0])
    return sorted(names)


def raise_statement(error, where):
    if error["args"] is None or not isinstance(getattr(builtins, error["type"], None), type):
        raise Unsupported(f"{where}: raises {error['type']}({error['message']!r}), which a stand-in cannot raise as it is")
    return f"raise {error['type']}({', '.join(repr(a) for a in error['args'])})"


def record(stub_dir, file):
    with open(file, encoding="utf-8") as f:
        source = f.read()
    tree, module, bases, methods = interface(source, file)
    seen = run_behaviour(stub_dir, file)
    failed = seen["import"]
    statements = [text for _, text in module]
    if failed and failed["line"] is not None:
        # A statement the stand-in does not keep raised at import: the stand-in raises the same in its place.
        at = next((i for i, n in enumerate(tree.body) if n.lineno <= failed["line"] <= n.end_lineno), None)
        kept = [i for i, _ in module]
        if at is not None and at not in kept:
            position = sum(1 for i in kept if i < at)
            statements.insert(position, raise_statement(failed, file) + "  # the upstream module raises this here")
    spec = {"module": statements}
    if bases:
        spec["bases"] = bases
    spec["methods"] = methods
    if any(m.split("(")[0].split(" ")[-1] == AUTO_COMPLETE for m in methods):
        auto = seen["autoComplete"]
        if failed:
            # Its imports fail here: run it with empty modules standing for those that are not installed.
            again = run_behaviour(stub_dir, file, empty_modules=imported_modules(tree))
            if again["import"]:
                raise Unsupported(f"{file}: does not import here ({failed['type']}: {failed['message']}), nor with "
                                  f"empty modules for those not installed ({again['import']['message']})")
            auto = again["autoComplete"]
        if isinstance(auto["then"], dict) and "raise" in auto["then"]:
            raise_statement(auto["then"]["raise"], file)
        spec["autoComplete"] = auto
    return {"file": file, "spec": spec, "behaviour": {
        "import": failed and {"type": failed["type"], "message": failed["message"]},
        "autoComplete": spec.get("autoComplete") and {k: spec["autoComplete"][k] for k in ("calls", "then")},
    }}


def main():
    if sys.argv[1] == "--behaviour":
        out = sys.stdout
        sys.stdout = sys.stderr  # what the model prints is not the result
        result = behaviour(sys.argv[2], sys.argv[3], [n for n in sys.argv[4].split(",") if n])
        out.write(json.dumps(result))
        return
    stub_dir = os.path.abspath(sys.argv[1])
    jobs = json.load(sys.stdin)

    def one(job):
        try:
            return record(stub_dir, job["file"])
        except (Unsupported, SyntaxError) as error:
            return {"file": job["file"], "error": str(error)}

    with ThreadPoolExecutor(max_workers=2) as pool:
        json.dump(list(pool.map(one, jobs)), sys.stdout)


if __name__ == "__main__":
    main()
