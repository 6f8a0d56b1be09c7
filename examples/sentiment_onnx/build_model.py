#!/usr/bin/env python3
"""Builds every artifact of the sentiment_onnx example from this file alone, offline, in seconds on a CPU:
the word vocabulary, the labels, a tiny sentiment classifier trained here and exported to ONNX (opset 13), the
expected outputs for three sentences and an example KServe v2 request.

Run with Debian's packages (python3-torch, python3-onnx):  /usr/bin/python3 examples/sentiment_onnx/build_model.py
The result is deterministic: a fixed seed, one CPU thread and deterministic kernels give the same weights each run.
"""

import argparse
import json
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import numpy_helper

SEED = 1234
MAX_TOKENS = 16  # preprocess pads/truncates to this; the classifier's input dims are [16]
EMBEDDING_DIM = 16
EPOCHS = 200
LABELS = ["negative", "positive"]
PAD, UNK = "[PAD]", "[UNK]"  # ids 0 and 1: the classifier averages only ids >= 2
OPSET = 13

# Must stay identical to preprocess/1/model.py: lowercase, then runs of letters, digits and apostrophes are words.
WORD = re.compile(r"[a-z0-9']+")

# A small hand-written training set: (sentence, label index). Enough for a bag-of-words model to separate the
# two classes; it is a demonstration of the serving pipeline, not a useful sentiment model.
TRAINING_SET = [
    ("I loved this movie, it was wonderful", 1),
    ("What a great and delightful film", 1),
    ("The acting was brilliant and the story moving", 1),
    ("Excellent service, friendly staff, I am very happy", 1),
    ("This is the best meal I have had in years", 1),
    ("A beautiful, charming and funny show", 1),
    ("I really enjoyed every minute of it", 1),
    ("Fantastic quality, works perfectly", 1),
    ("Highly recommended, an amazing experience", 1),
    ("The hotel was clean, quiet and lovely", 1),
    ("Superb performance, a joy to watch", 1),
    ("Great value and fast delivery, very pleased", 1),
    ("The staff were kind and helpful", 1),
    ("A wonderful book that I will read again", 1),
    ("Such a pleasant surprise, I love it", 1),
    ("Perfect fit and great comfort", 1),
    ("The music was uplifting and the crowd happy", 1),
    ("Good food, good people, good times", 1),
    ("An excellent, clever and fun game", 1),
    ("I am delighted with the result", 1),
    ("I hated this movie, it was awful", 0),
    ("What a boring and terrible film", 0),
    ("The acting was poor and the story dull", 0),
    ("Rude staff and slow service, I am very angry", 0),
    ("This is the worst meal I have had in years", 0),
    ("An ugly, tedious and silly show", 0),
    ("I regret every minute of it", 0),
    ("Cheap quality, broke after one day", 0),
    ("Not recommended, a horrible experience", 0),
    ("The hotel was dirty, noisy and depressing", 0),
    ("Dreadful performance, painful to watch", 0),
    ("Overpriced and late delivery, very disappointed", 0),
    ("The staff were unfriendly and useless", 0),
    ("A dull book that I could not finish", 0),
    ("Such a nasty surprise, I hate it", 0),
    ("Bad fit and no comfort at all", 0),
    ("The music was depressing and the crowd bored", 0),
    ("Bad food, bad people, bad times", 0),
    ("A broken, frustrating and unfair game", 0),
    ("I am disappointed with the result", 0),
]

# The documented inputs: request.json sends these, expected_outputs.json and the README give what comes back.
EXAMPLE_SENTENCES = [
    "What a wonderful, delightful film!",
    "The service was slow and the food awful.",
    "Great staff but a dull and noisy hotel.",
]


def words(text):
    return WORD.findall(text.lower())


def build_vocab(sentences):
    """[PAD], [UNK], then every training word by descending frequency, ties alphabetical (stable across runs)."""
    counts = {}
    for sentence in sentences:
        for word in words(sentence):
            counts[word] = counts.get(word, 0) + 1
    ranked = sorted(counts, key=lambda w: (-counts[w], w))
    return [PAD, UNK] + ranked


def encode(text, ids):
    row = [ids.get(word, ids[UNK]) for word in words(text)][:MAX_TOKENS]
    return row + [ids[PAD]] * (MAX_TOKENS - len(row))


class BagOfWordsClassifier(torch.nn.Module):
    """Mean of the known words' embeddings, then a linear layer to one logit per label."""

    def __init__(self, vocab_size):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab_size, EMBEDDING_DIM, padding_idx=0)
        self.linear = torch.nn.Linear(EMBEDDING_DIM, len(LABELS))

    def forward(self, input_ids):
        known = (input_ids > 1).unsqueeze(-1).to(torch.float32)  # padding and unknown words do not count
        summed = (self.embedding(input_ids) * known).sum(dim=1)
        count = known.sum(dim=1).clamp(min=1.0)
        return self.linear(summed / count)


def train(vocab):
    ids = {word: i for i, word in enumerate(vocab)}
    inputs = torch.tensor([encode(text, ids) for text, _ in TRAINING_SET], dtype=torch.int64)
    targets = torch.tensor([label for _, label in TRAINING_SET], dtype=torch.int64)
    model = BagOfWordsClassifier(len(vocab))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=0.003)
    loss_fn = torch.nn.CrossEntropyLoss()
    for _ in range(EPOCHS):
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        accuracy = (model(inputs).argmax(dim=1) == targets).float().mean().item()
    return model, loss.item(), accuracy


def export_onnx(model, path):
    example = torch.zeros((1, MAX_TOKENS), dtype=torch.int64)
    torch.onnx.export(
        model,
        example,
        str(path),
        opset_version=OPSET,
        input_names=["input_ids"],
        output_names=["logits"],
        dynamic_axes={"input_ids": {0: "batch"}, "logits": {0: "batch"}},
        do_constant_folding=True,
    )
    proto = onnx.load(str(path))
    onnx.checker.check_model(proto, full_check=True)
    check_signature(proto)
    return proto


def check_signature(proto):
    """The graph's inputs and outputs must be what classifier/config.pbtxt declares (batch dim implicit there)."""
    def signature(values):
        return [
            (v.name, v.type.tensor_type.elem_type,
             [d.dim_value if d.HasField("dim_value") else d.dim_param for d in v.type.tensor_type.shape.dim])
            for v in values
        ]
    expected_inputs = [("input_ids", onnx.TensorProto.INT64, ["batch", MAX_TOKENS])]
    expected_outputs = [("logits", onnx.TensorProto.FLOAT, ["batch", len(LABELS)])]
    actual_inputs = [s for s in signature(proto.graph.input) if s[0] not in {i.name for i in proto.graph.initializer}]
    if actual_inputs != expected_inputs or signature(proto.graph.output) != expected_outputs:
        sys.exit(f"exported graph signature {actual_inputs} -> {signature(proto.graph.output)} does not match the "
                 f"config ({expected_inputs} -> {expected_outputs})")


def numpy_dtype(onnx_type):
    to_numpy = getattr(onnx.helper, "tensor_dtype_to_np_dtype", None)  # onnx >= 1.13; 1.12 has only the mapping
    return to_numpy(onnx_type) if to_numpy else onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[onnx_type]


def run_graph(proto, input_ids):
    """Evaluates the exported graph with numpy, op by op, so the ONNX file itself (not only torch) is checked
    without onnxruntime. Covers exactly the operators this export produces and refuses anything else."""
    values = {t.name: numpy_helper.to_array(t) for t in proto.graph.initializer}
    values["input_ids"] = input_ids

    def attribute(node, name, default=None):
        for a in node.attribute:
            if a.name == name:
                return onnx.helper.get_attribute_value(a)
        return default

    for node in proto.graph.node:
        x = [values[name] if name else None for name in node.input]
        op = node.op_type
        if op == "Constant":
            out = numpy_helper.to_array(attribute(node, "value"))
        elif op == "Gather":
            out = np.take(x[0], x[1], axis=attribute(node, "axis", 0))
        elif op == "Greater":
            out = x[0] > x[1]
        elif op == "Unsqueeze":
            out = np.expand_dims(x[0], tuple(int(a) for a in x[1]))
        elif op == "Cast":
            out = x[0].astype(numpy_dtype(attribute(node, "to")))
        elif op == "Mul":
            out = x[0] * x[1]
        elif op == "Div":
            out = x[0] / x[1]
        elif op == "Add":
            out = x[0] + x[1]
        elif op == "ReduceSum":
            axes = tuple(int(a) for a in x[1]) if len(x) > 1 and x[1] is not None else None
            out = np.sum(x[0], axis=axes, keepdims=bool(attribute(node, "keepdims", 1)))
        elif op == "Clip":
            low = x[1] if len(x) > 1 and x[1] is not None else None
            high = x[2] if len(x) > 2 and x[2] is not None else None
            out = np.clip(x[0], low, high)
        elif op == "Max":
            out = np.maximum(x[0], x[1])
        elif op == "MatMul":
            out = x[0] @ x[1]
        elif op == "Gemm":
            a = x[0].T if attribute(node, "transA", 0) else x[0]
            b = x[1].T if attribute(node, "transB", 0) else x[1]
            out = attribute(node, "alpha", 1.0) * (a @ b)
            if len(x) > 2:
                out = out + attribute(node, "beta", 1.0) * x[2]
        else:
            sys.exit(f"run_graph does not implement ONNX operator {op}; extend it or simplify the model")
        values[node.output[0]] = np.asarray(out)
    return values[proto.graph.output[0].name]


def write_json(path, value):
    """Indented JSON with arrays of numbers kept on one line, so the files read well in a diff and a README."""
    text = json.dumps(value, indent=2)
    number = r"-?[0-9][0-9.eE+-]*"
    text = re.sub(rf"\[\s+({number}(?:,\s+{number})*)\s+\]",
                  lambda m: "[" + re.sub(r",\s+", ", ", m.group(1)) + "]", text)
    path.write_text(text + "\n", encoding="utf-8")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent,
                        help="repository directory to write into (default: the directory of this script)")
    out = parser.parse_args().out

    # torch 1.13 warns about its own prim::Constant shape inference on every export; the checks below cover it.
    warnings.filterwarnings("ignore", category=UserWarning, module="torch.onnx")
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    vocab = build_vocab(text for text, _ in TRAINING_SET)
    model, loss, accuracy = train(vocab)
    if accuracy < 1.0:
        sys.exit(f"training accuracy {accuracy:.2f} < 1.0: the classifier did not learn the training set")

    for d in ("preprocess", "postprocess", "classifier/1", "ensemble/1"):
        (out / d).mkdir(parents=True, exist_ok=True)
    (out / "preprocess" / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    (out / "postprocess" / "labels.txt").write_text("\n".join(LABELS) + "\n", encoding="utf-8")
    proto = export_onnx(model, out / "classifier" / "1" / "model.onnx")

    ids = {word: i for i, word in enumerate(vocab)}
    input_ids = torch.tensor([encode(text, ids) for text in EXAMPLE_SENTENCES], dtype=torch.int64)
    with torch.no_grad():
        logits = model(input_ids)
        probabilities = torch.softmax(logits, dim=1)
    onnx_logits = run_graph(proto, input_ids.numpy())
    if not np.allclose(onnx_logits, logits.numpy(), atol=1e-5):
        sys.exit(f"the ONNX graph computes {onnx_logits.tolist()}, torch computes {logits.tolist()}")

    examples = [
        {
            "text": text,
            "input_ids": row.tolist(),
            "logits": [float(v) for v in row_logits],
            "probabilities": [float(v) for v in row_probs],
            "label": LABELS[int(row_probs.argmax())],
        }
        for text, row, row_logits, row_probs in zip(EXAMPLE_SENTENCES, input_ids, logits.numpy(), probabilities.numpy())
    ]
    expected = {
        "description": "Written by build_model.py: what the ensemble returns for request.json (probabilities computed "
                       "by torch; the exported ONNX graph was checked to give the same logits).",
        "torch_version": torch.__version__,
        "onnx_opset": OPSET,
        "max_tokens": MAX_TOKENS,
        "labels": LABELS,
        "training": {"sentences": len(TRAINING_SET), "epochs": EPOCHS, "final_loss": round(loss, 6),
                     "accuracy": accuracy},
        "examples": examples,
    }
    write_json(out / "expected_outputs.json", expected)
    request = {
        "inputs": [{"name": "text", "shape": [len(EXAMPLE_SENTENCES), 1], "datatype": "BYTES",
                    "data": EXAMPLE_SENTENCES}],
        "outputs": [{"name": "label"}, {"name": "probabilities"}],
    }
    write_json(out / "request.json", request)

    size = (out / "classifier" / "1" / "model.onnx").stat().st_size
    print(f"vocabulary: {len(vocab)} words; training loss {loss:.4f}, accuracy {accuracy:.2f}; model.onnx {size} bytes")
    print("| sentence | input_ids (first 8) | P(negative) | P(positive) | label |")
    print("|---|---|---|---|---|")
    for e in examples:
        print(f"| {e['text']} | {e['input_ids'][:8]} | {e['probabilities'][0]:.4f} | {e['probabilities'][1]:.4f} "
              f"| {e['label']} |")


if __name__ == "__main__":
    main()
