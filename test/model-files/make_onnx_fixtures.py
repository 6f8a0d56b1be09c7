"""Writes the ONNX models lib/model-files/onnx.ts is tested against, with python's onnx package, into argv[1].

  batching.onnx          dynamic batch (dim_param), a named and a fixed dimension, an initializer listed as a graph
                         input (IR 8: overridable), a second output of another type
  weights.onnx           a 24 MiB initializer in raw_data between the nodes and the graph's inputs and outputs
  external.onnx          an initializer stored as external data in external.onnx.data
  sequence.onnx          a sequence-typed input (not a tensor) and a rank-0 output
  negative.onnx          a dim_value of -1 (some exporters write it) and an input with no shape
  old_ir.onnx            IR version 3, where every initializer must also be a graph input
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]


def save(model, name, **kwargs):
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name), **kwargs)


def tensor(name, elem, dims):
    return helper.make_tensor_value_info(name, elem, dims)


# batching.onnx
w = numpy_helper.from_array(np.ones((3,), dtype=np.float32), "bias")
g = helper.make_graph(
    [helper.make_node("Add", ["x", "bias"], ["y"]), helper.make_node("Cast", ["y"], ["label"], to=TensorProto.INT64)],
    "batching",
    [tensor("x", TensorProto.FLOAT, ["batch", "seq", 3]), tensor("bias", TensorProto.FLOAT, [3])],
    [tensor("y", TensorProto.FLOAT, ["batch", "seq", 3]), tensor("label", TensorProto.INT64, ["batch", "seq", 3])],
    [w],
)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="mme-deploy tests")
m.ir_version = 8
save(m, "batching.onnx")

# weights.onnx: the weights sit before graph.input and graph.output in the file (initializer is field 5, input 11)
big = numpy_helper.from_array(np.zeros((6 * 1024 * 1024,), dtype=np.float32), "w")
g = helper.make_graph(
    [helper.make_node("Add", ["x", "w"], ["y"])], "weights",
    [tensor("x", TensorProto.FLOAT, [6 * 1024 * 1024])], [tensor("y", TensorProto.FLOAT, [6 * 1024 * 1024])], [big])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
save(m, "weights.onnx")

# external.onnx
ext = numpy_helper.from_array(np.ones((4096,), dtype=np.float32), "ext_w")
g = helper.make_graph(
    [helper.make_node("Mul", ["x", "ext_w"], ["y"])], "external",
    [tensor("x", TensorProto.FLOAT, [4096])], [tensor("y", TensorProto.FLOAT, [4096])], [ext])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
save(m, "external.onnx", save_as_external_data=True, all_tensors_to_one_file=True, location="external.onnx.data",
     size_threshold=0)

# sequence.onnx
seq = helper.make_tensor_sequence_value_info("items", TensorProto.FLOAT, None)
g = helper.make_graph(
    [helper.make_node("SequenceLength", ["items"], ["n"])], "sequence", [seq], [tensor("n", TensorProto.INT64, [])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
save(m, "sequence.onnx")

# negative.onnx
x = tensor("x", TensorProto.INT32, [-1, 4])
noshape = helper.make_tensor_value_info("free", TensorProto.INT32, None)
g = helper.make_graph(
    [helper.make_node("Identity", ["x"], ["y"]), helper.make_node("Identity", ["free"], ["z"])], "negative",
    [x, noshape], [tensor("y", TensorProto.INT32, [-1, 4]), helper.make_tensor_value_info("z", TensorProto.INT32, None)])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.save(m, os.path.join(out, "negative.onnx"))  # dim_value -1 is not valid to the checker, but exporters write it

# old_ir.onnx
w = numpy_helper.from_array(np.ones((2,), dtype=np.float32), "w")
g = helper.make_graph(
    [helper.make_node("Add", ["x", "w"], ["y"])], "old_ir",
    [tensor("x", TensorProto.FLOAT, [2]), tensor("w", TensorProto.FLOAT, [2])], [tensor("y", TensorProto.FLOAT, [2])], [w])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 8)])
m.ir_version = 3
save(m, "old_ir.onnx")
