#!/usr/bin/env bash
# Produces resnet/1/model.plan (TensorRT engine of ResNet-50, FP16, batch 1..128; not committed). Run on a GPU host
# with Docker and internet access, from anywhere:  examples/resnet_tensorrt/generate_model.sh
# An engine only loads on the GPU architecture and TensorRT version it was built with: build it on the instance
# family you deploy to (g4dn = T4, g5 = A10G, ...) in NVIDIA's PyTorch image of the serving Triton release
# (TRITON_VERSION, default 24.09).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
triton_version="${TRITON_VERSION:-24.09}"

if [[ "${MME_DEPLOY_IN_CONTAINER:-}" != 1 ]]; then
  exec docker run --gpus=all --rm \
    -e MME_DEPLOY_IN_CONTAINER=1 -e HOST_UID="$(id -u)" -e HOST_GID="$(id -g)" \
    -v "$here":/workspace -w /workspace \
    "nvcr.io/nvidia/pytorch:${triton_version}-py3" bash generate_model.sh
fi

# trtexec is on PATH in NVIDIA's PyTorch images or, failing that, in /usr/src/tensorrt/bin.
trtexec="$(command -v trtexec || echo /usr/src/tensorrt/bin/trtexec)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

python export_onnx.py --out "$scratch/model.onnx"
mkdir -p resnet/1
# Optimised for the config's max_batch_size 128 (the warm-up runs one batch of 128).
"$trtexec" --onnx="$scratch/model.onnx" --saveEngine=resnet/1/model.plan \
  --minShapes=input:1x3x224x224 --optShapes=input:128x3x224x224 --maxShapes=input:128x3x224x224 --fp16
chown -R "${HOST_UID:-0}:${HOST_GID:-0}" resnet
