#!/usr/bin/env python3
"""Saves torchvision's pretrained ResNet-50 as TorchScript (resnet/1/model.pt) for Triton's PyTorch backend:
traced with one 3x224x224 RGB example, as seed 004 describes. Input INPUT__0 [N,3,224,224] -> OUTPUT__0 [N,1000]."""

import argparse
from pathlib import Path

import torch
import torchvision


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(__file__).resolve().parent / "resnet" / "1" / "model.pt"
    parser.add_argument("--out", type=Path, default=default, help=f"default: {default}")
    out = parser.parse_args().out

    model = torchvision.models.resnet50(weights=torchvision.models.ResNet50_Weights.IMAGENET1K_V1).eval()
    example = torch.randn(1, 3, 224, 224)
    with torch.no_grad():
        traced = torch.jit.trace(model, example)
    out.parent.mkdir(parents=True, exist_ok=True)
    traced.save(str(out))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
