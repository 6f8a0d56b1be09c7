"""Writes model files for the model-file readers' tests and the real-world corpus, without any framework installed.

Reads {"<output path>": <spec>} as JSON on stdin; a spec's "format" says what to write:

  graphdef    {"nodes": [[name, op], ...], "constBytes": n}: a GraphDef (TensorFlow's field numbers, via
              tensorflow_subset.proto compiled by protoc); with constBytes, a Const node holding that many bytes of
              weights comes first, as in a frozen graph
  savedmodel  {"metaGraphs": [{"tags": [...], "signatures": {key: {"inputs": [[key, tensor, dtype, dims]],
              "outputs": [...]}}}], "graphBytes": n}: a saved_model.pb; dims null is an unknown rank, -1 an unknown
              dimension; graphBytes puts a graph with that many bytes of constants in each meta graph
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def compiled():
    out = tempfile.mkdtemp(prefix="mme-protos-")
    subprocess.run(["protoc", f"--proto_path={HERE}", f"--python_out={out}", "tensorflow_subset.proto"], check=True)
    sys.path.insert(0, out)
    import tensorflow_subset_pb2  # noqa: E402

    return tensorflow_subset_pb2


def shape(proto, dims):
    if dims is None:
        proto.unknown_rank = True
        return
    for d in dims:
        proto.dim.add().size = d


def const_node(graph, tf, size):
    node = graph.node.add()
    node.name = "weights"
    node.op = "Const"
    tensor = node.attr["value"].tensor
    tensor.dtype = tf.DT_FLOAT
    shape(tensor.tensor_shape, [size // 4])
    tensor.tensor_content = os.urandom(size)


def graphdef(tf, spec):
    graph = tf.GraphDef()
    graph.versions.producer = 27
    if spec.get("constBytes"):
        const_node(graph, tf, spec["constBytes"])
    for name, op in spec["nodes"]:
        node = graph.node.add()
        node.name = name
        node.op = op
        if op == "Placeholder":
            node.attr["dtype"].type = tf.DT_FLOAT
    return graph


def tensor_info(info, tf, tensor, dtype, dims):
    info.name = tensor
    info.dtype = tf.DataType.Value(dtype)
    shape(info.tensor_shape, dims)


def savedmodel(tf, spec):
    model = tf.SavedModel()
    model.saved_model_schema_version = 1
    for m in spec["metaGraphs"]:
        meta = model.meta_graphs.add()
        meta.meta_info_def.tags.extend(m["tags"])
        meta.meta_info_def.tensorflow_version = "2.13.0"
        if spec.get("graphBytes"):
            const_node(meta.graph_def, tf, spec["graphBytes"])
        for key, sig in m["signatures"].items():
            s = meta.signature_def[key]
            s.method_name = "tensorflow/serving/predict"
            for k, tensor, dtype, dims in sig["inputs"]:
                tensor_info(s.inputs[k], tf, tensor, dtype, dims)
            for k, tensor, dtype, dims in sig["outputs"]:
                tensor_info(s.outputs[k], tf, tensor, dtype, dims)
    return model


def main():
    jobs = json.load(sys.stdin)
    tf = compiled()
    for path, spec in jobs.items():
        os.makedirs(os.path.dirname(path), exist_ok=True)
        kind = spec["format"]
        if kind == "graphdef":
            data = graphdef(tf, spec).SerializeToString()
        elif kind == "savedmodel":
            data = savedmodel(tf, spec).SerializeToString()
        else:
            raise SystemExit(f"unknown format {kind}")
        with open(path, "wb") as f:
            f.write(data)


main()
