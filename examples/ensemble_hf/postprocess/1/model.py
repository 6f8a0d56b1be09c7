"""Triton python model (numpy only): token embeddings -> one L2-normalised sentence embedding per input.

Mean pooling over the tokens the attention mask marks as real (padding does not dilute the mean), then division by
the L2 norm, as sentence-transformers does for all-MiniLM-L6-v2.
"""

import json

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        output = pb_utils.get_output_config_by_name(config, "SENT_EMBED")
        self.output_dtype = pb_utils.triton_string_to_numpy(output["data_type"])

    def execute(self, requests):
        responses = []
        for request in requests:
            embeddings = pb_utils.get_input_tensor_by_name(request, "TOKEN_EMBEDS_POST").as_numpy()  # [b, 128, 384]
            mask = pb_utils.get_input_tensor_by_name(request, "ATTENTION_POST").as_numpy()  # [b, 128]

            weights = mask.astype(np.float32)[:, :, None]
            summed = (embeddings.astype(np.float32) * weights).sum(axis=1)
            counts = np.maximum(weights.sum(axis=1), 1e-9)  # an all-padding row gives zeros, not NaN
            mean = summed / counts
            norms = np.maximum(np.linalg.norm(mean, axis=1, keepdims=True), 1e-12)
            sentence = (mean / norms).astype(self.output_dtype)

            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("SENT_EMBED", sentence)]))
        return responses
