"""Triton python model: sentences -> BERT token ids and attention masks, padded/truncated to the config's length.

Uses the `tokenizers` library with tokenizer.json from this model's directory (generate_models.sh saves it there),
never a download from the Hugging Face Hub at load time: endpoints with network isolation or without internet egress
would fail to load the model.
"""

import json
from pathlib import Path

import numpy as np
import triton_python_backend_utils as pb_utils
from tokenizers import Tokenizer


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        ids_config = pb_utils.get_output_config_by_name(config, "OUTPUT0")
        mask_config = pb_utils.get_output_config_by_name(config, "OUTPUT1")
        self.ids_dtype = pb_utils.triton_string_to_numpy(ids_config["data_type"])
        self.mask_dtype = pb_utils.triton_string_to_numpy(mask_config["data_type"])
        length = int(ids_config["dims"][-1])  # 128: the TensorRT engine's sequence length

        path = Path(__file__).resolve().parent.parent / "tokenizer.json"
        if not path.is_file():
            raise pb_utils.TritonModelException(
                f"tokenizer file {path} is missing: run generate_models.sh, which saves tokenizer.json beside "
                "config.pbtxt")
        tokenizer = Tokenizer.from_file(str(path))
        # Keep the tokenizer's own pad token and id when it defines them ([PAD] = 0 for BERT vocabularies).
        padding = tokenizer.padding or {}
        tokenizer.enable_truncation(max_length=length)
        tokenizer.enable_padding(
            length=length,
            pad_id=padding.get("pad_id", 0),
            pad_type_id=padding.get("pad_type_id", 0),
            pad_token=padding.get("pad_token", "[PAD]"),
        )
        self.tokenizer = tokenizer

    def execute(self, requests):
        responses = []
        for request in requests:
            # TYPE_STRING arrives as a numpy object array of bytes, shape [batch, 1].
            values = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy().reshape(-1)
            texts = [v.decode("utf-8", errors="replace") if isinstance(v, bytes) else str(v) for v in values]
            encodings = self.tokenizer.encode_batch(texts)
            ids = np.array([e.ids for e in encodings], dtype=self.ids_dtype)
            mask = np.array([e.attention_mask for e in encodings], dtype=self.mask_dtype)
            responses.append(
                pb_utils.InferenceResponse(
                    output_tensors=[pb_utils.Tensor("OUTPUT0", ids), pb_utils.Tensor("OUTPUT1", mask)]
                )
            )
        return responses
