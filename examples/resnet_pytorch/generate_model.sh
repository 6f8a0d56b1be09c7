#!/usr/bin/env bash
# Produces resnet/1/model.pt (TorchScript ResNet-50, about 100 MB, not committed). Run on a host with Docker and
# internet access, from anywhere:  examples/resnet_pytorch/generate_model.sh
# The container is NVIDIA's PyTorch image of the same release as the serving Triton image (TRITON_VERSION, default
# 24.09), so the TorchScript file matches the libtorch of Triton's PyTorch backend.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
triton_version="${TRITON_VERSION:-24.09}"

if [[ "${MME_DEPLOY_IN_CONTAINER:-}" != 1 ]]; then
  exec docker run --rm \
    -e MME_DEPLOY_IN_CONTAINER=1 -e HOST_UID="$(id -u)" -e HOST_GID="$(id -g)" \
    -v "$here":/workspace -w /workspace \
    "nvcr.io/nvidia/pytorch:${triton_version}-py3" bash generate_model.sh
fi

python export_torchscript.py --out resnet/1/model.pt
chown -R "${HOST_UID:-0}:${HOST_GID:-0}" resnet
