"""Writes model files for the model-file readers' tests and the real-world corpus, without any framework installed.

Reads {"<output path>": <spec>} as JSON on stdin; a spec's "format" says what to write:

  graphdef    {"nodes": [[name, op], ...], "constBytes": n, "consts": k}: a GraphDef (TensorFlow's field numbers,
              via tensorflow_subset.proto compiled by protoc); with constBytes, k Const nodes (default 1) holding that
              many bytes of weights in all come first, as in a frozen graph
  savedmodel  {"metaGraphs": [{"tags": [...], "signatures": {key: {"inputs": [[key, tensor, dtype, dims]],
              "outputs": [...]}}}], "graphBytes": n}: a saved_model.pb; dims null is an unknown rank, -1 an unknown
              dimension; graphBytes puts a graph with that many bytes of constants in each meta graph
  openvino    {"inputs": [[names, precision, dims, layout]], "outputs": [[names, precision, dims, layout]], "layers": n}: an
              OpenVINO IR model.xml (version 11): a Parameter per input, a Convert feeding a Result per output (the
              Convert's port carries the output's names), n Const layers between them as a big graph has; names is a
              comma-separated string ("" for none), dims a list where -1 is dynamic, null a dynamic rank
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def compiled():
    # The generated module is imported from a directory of its own, removed once it is loaded.
    with tempfile.TemporaryDirectory(prefix="mme-protos-") as out:
        subprocess.run(["protoc", f"--proto_path={HERE}", f"--python_out={out}", "tensorflow_subset.proto"], check=True)
        sys.path.insert(0, out)
        try:
            import tensorflow_subset_pb2  # noqa: E402
        finally:
            sys.path.remove(out)

    return tensorflow_subset_pb2


def shape(proto, dims):
    if dims is None:
        proto.unknown_rank = True
        return
    for d in dims:
        proto.dim.add().size = d


def const_node(graph, tf, size, name="weights"):
    node = graph.node.add()
    node.name = name
    node.op = "Const"
    tensor = node.attr["value"].tensor
    tensor.dtype = tf.DT_FLOAT
    shape(tensor.tensor_shape, [size // 4])
    tensor.tensor_content = os.urandom(size)


def graphdef(tf, spec):
    graph = tf.GraphDef()
    graph.versions.producer = 27
    consts = spec.get("consts", 1)
    for i in range(consts if spec.get("constBytes") else 0):
        const_node(graph, tf, spec["constBytes"] // consts, "weights" if consts == 1 else f"weights_{i}")
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


def xml_escape(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def port(pid, precision, dims, names=None):
    attrs = f'id="{pid}" precision="{precision}"'
    if names:
        attrs += f' names="{xml_escape(names)}"'
    body = "".join(f"<dim>{d}</dim>" for d in (dims or []))
    return f"<port {attrs}>{body}</port>"


def openvino(spec):
    layers, edges = [], []
    lid = 0
    inputs = []
    for names, precision, dims, *rest in spec["inputs"]:
        layout = rest[0] if rest else None
        shape = "..." if dims is None else ",".join("?" if d == -1 else str(d) for d in dims)
        rt = f'<rt_info><attribute name="layout" version="0" layout="{layout}"/></rt_info>' if layout else ""
        layers.append(
            f'<layer id="{lid}" name="{xml_escape(names.split(",")[0] or f"param{lid}")}" type="Parameter" version="opset1">'
            f'<data shape="{shape}" element_type="{precision.lower()}"/>{rt}<output>{port(0, precision, dims, names)}</output></layer>'
        )
        inputs.append((lid, precision, dims))
        lid += 1
    for i in range(spec.get("layers", 0)):
        layers.append(
            f'<layer id="{lid}" name="const{i}" type="Const" version="opset1"><data element_type="f32" shape="64,64" '
            f'offset="{i * 16384}" size="16384"/><output>{port(0, "FP32", [64, 64])}</output></layer>'
        )
        lid += 1
    first = inputs[0] if inputs else None
    for names, precision, dims, *rest in spec["outputs"]:
        out_rt = f'<rt_info><attribute name="layout" version="0" layout="{rest[0]}"/></rt_info>' if rest else ""
        conv, result = lid, lid + 1
        lid += 2
        src_dims = first[2] if first else dims
        layers.append(
            f'<layer id="{conv}" name="convert{conv}" type="Convert" version="opset1"><data destination_type="{precision.lower()}"/>'
            f'<input>{port(0, first[1] if first else precision, src_dims)}</input><output>{port(1, precision, dims, names)}</output></layer>'
        )
        layers.append(
            f'<layer id="{result}" name="result{result}" type="Result" version="opset1">{out_rt}<input>{port(0, precision, dims)}</input></layer>'
        )
        if first:
            edges.append(f'<edge from-layer="{first[0]}" from-port="0" to-layer="{conv}" to-port="0"/>')
        edges.append(f'<edge from-layer="{conv}" from-port="1" to-layer="{result}" to-port="0"/>')
    return (
        '<?xml version="1.0"?>\n<net name="model" version="11">\n<layers>\n' + "\n".join(layers) + "\n</layers>\n<edges>\n"
        + "\n".join(edges) + '\n</edges>\n<rt_info><MO_version value="2023.0"/></rt_info>\n</net>\n'
    ).encode()


def main():
    jobs = json.load(sys.stdin)
    tf = compiled() if any(spec["format"] != "openvino" for spec in jobs.values()) else None
    for path, spec in jobs.items():
        os.makedirs(os.path.dirname(path), exist_ok=True)
        kind = spec["format"]
        if kind == "graphdef":
            data = graphdef(tf, spec).SerializeToString()
        elif kind == "savedmodel":
            data = savedmodel(tf, spec).SerializeToString()
        elif kind == "openvino":
            data = openvino(spec)
        else:
            raise SystemExit(f"unknown format {kind}")
        with open(path, "wb") as f:
            f.write(data)


main()
