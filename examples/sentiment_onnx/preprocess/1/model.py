"""Triton python model (numpy only): sentences -> fixed-length rows of word ids for the ONNX classifier.

Same rules as build_model.py, which trained the classifier: lowercase, words are runs of a-z, 0-9 and apostrophes,
unknown words map to [UNK], rows are truncated or padded with [PAD] to the length the config declares.
"""

import json
import re
from pathlib import Path

import numpy as np
import triton_python_backend_utils as pb_utils

WORD = re.compile(r"[a-z0-9']+")


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        output = pb_utils.get_output_config_by_name(config, "input_ids")
        self.length = int(output["dims"][-1])
        self.dtype = pb_utils.triton_string_to_numpy(output["data_type"])

        # vocab.txt sits in the model directory (one level above this version directory), so it travels in the
        # archive with the model and nothing is fetched at load time.
        vocab_path = Path(__file__).resolve().parent.parent / "vocab.txt"
        if not vocab_path.is_file():
            raise pb_utils.TritonModelException(
                f"vocabulary file {vocab_path} is missing: ship vocab.txt beside config.pbtxt "
                "(examples/sentiment_onnx/build_model.py writes it)")
        words = vocab_path.read_text(encoding="utf-8").splitlines()
        self.ids = {word: index for index, word in enumerate(words)}
        self.pad_id = self.ids["[PAD]"]
        self.unk_id = self.ids["[UNK]"]

    def encode(self, text):
        ids = [self.ids.get(word, self.unk_id) for word in WORD.findall(text.lower())]
        return ids[: self.length]

    def execute(self, requests):
        responses = []
        for request in requests:
            # TYPE_STRING arrives as a numpy object array of bytes, shape [batch, 1].
            texts = pb_utils.get_input_tensor_by_name(request, "text").as_numpy().reshape(-1)
            rows = np.full((len(texts), self.length), self.pad_id, dtype=self.dtype)
            for row, value in enumerate(texts):
                text = value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value)
                ids = self.encode(text)
                rows[row, : len(ids)] = ids
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("input_ids", rows)]))
        return responses
