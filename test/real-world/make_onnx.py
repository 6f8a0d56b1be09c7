"""Writes the corpus's ONNX models (test/real-world/corpus.json "onnxModels") with the python onnx package.

Reads {"<output path>": <spec>} as JSON on stdin. A spec names the graph's inputs, outputs and initializers the
upstream model has (read from the upstream files with onnx.load when the corpus was built); the graph computes
each output from the first input with Identity or Cast, which is enough for a valid model with that interface.
Dims: a number is dim_value, a string dim_param, null a dimension with neither.
"""

import json
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TYPES = {name: getattr(TensorProto, name) for name in (
    "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING", "BOOL", "FLOAT16", "DOUBLE",
    "UINT32", "UINT64", "BFLOAT16")}
NUMPY = {"FLOAT": np.float32, "INT32": np.int32, "INT64": np.int64, "FLOAT16": np.float16, "DOUBLE": np.float64,
         "UINT8": np.uint8, "INT8": np.int8, "BOOL": np.bool_}


def value_info(name, elem_type, dims):
    vi = helper.make_tensor_value_info(name, TYPES[elem_type], [])
    shape = vi.type.tensor_type.shape
    for d in dims:
        dim = shape.dim.add()
        if isinstance(d, int):
            dim.dim_value = d
        elif isinstance(d, str):
            dim.dim_param = d
    return vi


def build(spec):
    inputs = [value_info(*i) for i in spec["inputs"]]
    outputs = [value_info(*o) for o in spec["outputs"]]
    initializers = []
    for name, elem_type, dims in spec.get("initializers", []):
        initializers.append(numpy_helper.from_array(np.zeros(dims, dtype=NUMPY[elem_type]), name))
        if spec.get("initializersAreInputs"):
            inputs.append(value_info(name, elem_type, dims))
    first, first_type = spec["inputs"][0][0], spec["inputs"][0][1]
    nodes = []
    for name, elem_type, _ in spec["outputs"]:
        if elem_type == first_type:
            nodes.append(helper.make_node("Identity", [first], [name]))
        else:
            nodes.append(helper.make_node("Cast", [first], [name], to=TYPES[elem_type]))
    graph = helper.make_graph(nodes, spec.get("graph", "corpus"), inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", spec.get("opset", 13))],
                              producer_name="mme-deploy corpus")
    model.ir_version = spec.get("ir", 7)
    onnx.checker.check_model(model)
    return model


def main():
    jobs = json.load(sys.stdin)
    for path, spec in jobs.items():
        onnx.save(build(spec), path)


if __name__ == "__main__":
    main()
