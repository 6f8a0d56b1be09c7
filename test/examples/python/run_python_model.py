"""Runs Triton python model.py files outside Triton (with the test double of triton_python_backend_utils) for the
examples' tests. Reads a JSON job on stdin, writes the responses as JSON on stdout.

Job: {"model_py": path, "model_config": <Triton's JSON form of config.pbtxt>,
      "requests": [{"<input>": {"datatype": "BYTES"|"FP32"|..., "shape": [...], "data": [flat values]}}]}
Out: {"responses": [{"<output>": {"datatype", "shape", "data"}} | {"error": message}]}
Or {"jobs": [job, ...]}: {"results": [out | {"failed": traceback}, ...]}, every job in this one process.
"""

import importlib.util
import json
import sys
import traceback
from pathlib import Path

import numpy as np

sys.dont_write_bytecode = True  # keep __pycache__ out of the example repositories

sys.path.insert(0, str(Path(__file__).resolve().parent))
import triton_python_backend_utils as pb_utils  # noqa: E402  (the test double above)

KSERVE_TO_NUMPY = {
    "BOOL": np.bool_, "UINT8": np.uint8, "INT8": np.int8, "INT16": np.int16, "INT32": np.int32, "INT64": np.int64,
    "FP16": np.float16, "FP32": np.float32, "FP64": np.float64, "BYTES": np.object_,
}


def to_tensor(name, spec):
    dtype = KSERVE_TO_NUMPY[spec["datatype"]]
    if dtype is np.object_:
        flat = np.array([value.encode("utf-8") for value in spec["data"]], dtype=np.object_)
    else:
        flat = np.array(spec["data"], dtype=dtype)
    return pb_utils.Tensor(name, flat.reshape(spec["shape"]))


def from_tensor(tensor):
    array = tensor.as_numpy()
    if array.dtype == np.object_:
        datatype = "BYTES"
        data = [v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in array.reshape(-1)]
    else:
        datatype = next(k for k, v in KSERVE_TO_NUMPY.items() if np.dtype(v) == array.dtype)
        data = array.reshape(-1).tolist()
    return {"datatype": datatype, "shape": list(array.shape), "data": data}


def run(job):
    path = Path(job["model_py"]).resolve()
    spec = importlib.util.spec_from_file_location(f"{path.parent.name}.{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    model = module.TritonPythonModel()
    if hasattr(model, "initialize"):
        model.initialize({
            "model_config": json.dumps(job["model_config"]),
            "model_instance_kind": "CPU",
            "model_instance_name": f"{job['model_config'].get('name', 'model')}_0",
            "model_instance_device_id": "0",
            "model_repository": str(path.parent.parent),
            "model_version": path.parent.name,
            "model_name": job["model_config"].get("name", path.parent.parent.name),
        })
    requests = [
        pb_utils.InferenceRequest([to_tensor(name, tensor) for name, tensor in request.items()])
        for request in job["requests"]
    ]
    responses = model.execute(requests)
    if len(responses) != len(requests):
        raise SystemExit(f"execute returned {len(responses)} responses for {len(requests)} requests")
    out = []
    for response in responses:
        if response.has_error():
            out.append({"error": response.error().message()})
        else:
            out.append({t.name(): from_tensor(t) for t in response.output_tensors()})
    if hasattr(model, "finalize"):
        model.finalize()
    return {"responses": out}


def main():
    job = json.load(sys.stdin)
    if "jobs" not in job:
        json.dump(run(job), sys.stdout)
        return
    # Several jobs, one process (numpy imported once): each model is loaded afresh, from its own module object, and a
    # job that fails is reported as its own failure, with its traceback.
    results = []
    for one in job["jobs"]:
        try:
            results.append(run(one))
        except BaseException:  # noqa: B036  (SystemExit too: one job's failure, not the batch's)
            results.append({"failed": traceback.format_exc()})
    json.dump({"results": results}, sys.stdout)


if __name__ == "__main__":
    main()
