"""Triton python model (numpy only): classifier logits -> softmax probabilities and the most likely label."""

import json
from pathlib import Path

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        config = json.loads(args["model_config"])
        probabilities = pb_utils.get_output_config_by_name(config, "probabilities")
        self.probability_dtype = pb_utils.triton_string_to_numpy(probabilities["data_type"])

        # labels.txt sits in the model directory beside config.pbtxt: one label per line, in logit order.
        labels_path = Path(__file__).resolve().parent.parent / "labels.txt"
        if not labels_path.is_file():
            raise pb_utils.TritonModelException(
                f"labels file {labels_path} is missing: ship labels.txt beside config.pbtxt")
        self.labels = [line for line in labels_path.read_text(encoding="utf-8").splitlines() if line]
        classes = int(probabilities["dims"][-1])
        if len(self.labels) != classes:
            raise pb_utils.TritonModelException(
                f"{labels_path} has {len(self.labels)} labels but the 'probabilities' output has {classes} classes")

    def execute(self, requests):
        responses = []
        for request in requests:
            logits = pb_utils.get_input_tensor_by_name(request, "logits").as_numpy().astype(np.float64)
            # Subtracting the row maximum keeps exp() finite for large logits without changing the result.
            exp = np.exp(logits - logits.max(axis=-1, keepdims=True))
            probabilities = exp / exp.sum(axis=-1, keepdims=True)
            best = probabilities.argmax(axis=-1)
            labels = np.array([[self.labels[i].encode("utf-8")] for i in best], dtype=np.object_)
            responses.append(
                pb_utils.InferenceResponse(
                    output_tensors=[
                        pb_utils.Tensor("label", labels),
                        pb_utils.Tensor("probabilities", probabilities.astype(self.probability_dtype)),
                    ]
                )
            )
        return responses
