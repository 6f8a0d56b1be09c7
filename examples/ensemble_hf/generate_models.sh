#!/usr/bin/env bash
# Produces the files of ensemble_hf that are not committed: bert-trt/1/model.plan (TensorRT engine) and
# preprocess/tokenizer.json. Run on a GPU host with Docker and internet access, from anywhere:
#   examples/ensemble_hf/generate_models.sh [hugging-face-model-id]
# The engine only loads on the same GPU architecture and TensorRT version it was built with, so the build container
# is NVIDIA's PyTorch image of the same release as the Triton image that serves it (TRITON_VERSION, default 24.09).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
model_id="${1:-sentence-transformers/all-MiniLM-L6-v2}"
triton_version="${TRITON_VERSION:-24.09}"

if [[ "${MME_DEPLOY_IN_CONTAINER:-}" != 1 ]]; then
  exec docker run --gpus=all --rm \
    -e MME_DEPLOY_IN_CONTAINER=1 -e HOST_UID="$(id -u)" -e HOST_GID="$(id -g)" \
    -v "$here":/workspace -w /workspace \
    "nvcr.io/nvidia/pytorch:${triton_version}-py3" bash generate_models.sh "$model_id"
fi

pip install --no-cache-dir --quiet transformers==4.44.2
# trtexec is on PATH in NVIDIA's PyTorch images or, failing that, in /usr/src/tensorrt/bin.
trtexec="$(command -v trtexec || echo /usr/src/tensorrt/bin/trtexec)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

python export_onnx.py --model "$model_id" --onnx "$scratch/model.onnx" --tokenizer preprocess/tokenizer.json

mkdir -p bert-trt/1
# Batch 1..32 with the fixed sequence length 128 of the configs (the config's max_batch_size is 16).
"$trtexec" --onnx="$scratch/model.onnx" --saveEngine=bert-trt/1/model.plan \
  --minShapes=token_ids:1x128,attn_mask:1x128 \
  --optShapes=token_ids:16x128,attn_mask:16x128 \
  --maxShapes=token_ids:32x128,attn_mask:32x128 \
  --memPoolSize=workspace:14000

# Files written in the container belong to root; give them back to whoever ran the script.
chown -R "${HOST_UID:-0}:${HOST_GID:-0}" bert-trt preprocess
echo "ensemble_hf: wrote bert-trt/1/model.plan and preprocess/tokenizer.json"
