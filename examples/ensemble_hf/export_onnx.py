#!/usr/bin/env python3
"""Exports a Hugging Face BERT-family encoder to ONNX with the tensor names of bert-trt/config.pbtxt, and saves the
model's fast tokenizer as tokenizer.json for the preprocess model. Run by generate_models.sh inside NVIDIA's
PyTorch container (needs internet for the download, not a GPU)."""

import argparse
from pathlib import Path

import torch
from transformers import AutoModel, AutoTokenizer

SEQUENCE_LENGTH = 128  # dims of token_ids/attn_mask in bert-trt/config.pbtxt and of OUTPUT0/OUTPUT1 in preprocess


class EncoderWithTritonNames(torch.nn.Module):
    """Takes the INT32 tensors the ensemble passes and returns (token embeddings, pooled embedding)."""

    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, token_ids, attn_mask):
        out = self.encoder(input_ids=token_ids.long(), attention_mask=attn_mask.long(), return_dict=True)
        return out.last_hidden_state, out.pooler_output


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="sentence-transformers/all-MiniLM-L6-v2")
    parser.add_argument("--onnx", type=Path, required=True, help="where to write the ONNX file")
    parser.add_argument("--tokenizer", type=Path, required=True, help="where to write tokenizer.json")
    args = parser.parse_args()

    tokenizer = AutoTokenizer.from_pretrained(args.model, use_fast=True)
    if not tokenizer.is_fast:
        raise SystemExit(f"{args.model} has no fast tokenizer: the preprocess model needs a tokenizer.json")
    args.tokenizer.parent.mkdir(parents=True, exist_ok=True)
    tokenizer.backend_tokenizer.save(str(args.tokenizer))

    encoder = AutoModel.from_pretrained(args.model).eval()
    dummy = torch.ones((1, SEQUENCE_LENGTH), dtype=torch.int32)
    names = {"inputs": ["token_ids", "attn_mask"], "outputs": ["output", "pooled_embeds"]}
    with torch.no_grad():
        torch.onnx.export(
            EncoderWithTritonNames(encoder),
            (dummy, dummy),
            str(args.onnx),
            opset_version=14,
            input_names=names["inputs"],
            output_names=names["outputs"],
            dynamic_axes={name: {0: "batch"} for name in names["inputs"] + names["outputs"]},
        )
    print(f"wrote {args.onnx} and {args.tokenizer}")


if __name__ == "__main__":
    main()
