#!/usr/bin/env python3
"""Exports torchvision's pretrained ResNet-50 to ONNX with a dynamic batch dimension, input `input` and output
`output` (the tensor names of resnet/config.pbtxt), for trtexec to compile."""

import argparse
from pathlib import Path

import torch
import torchvision


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="where to write the ONNX file")
    out = parser.parse_args().out

    model = torchvision.models.resnet50(weights=torchvision.models.ResNet50_Weights.IMAGENET1K_V1).eval()
    example = torch.randn(1, 3, 224, 224)
    with torch.no_grad():
        torch.onnx.export(
            model,
            example,
            str(out),
            opset_version=13,
            input_names=["input"],
            output_names=["output"],
            dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
        )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
