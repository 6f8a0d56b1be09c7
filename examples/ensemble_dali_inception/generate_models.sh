#!/usr/bin/env bash
# Produces the files of ensemble_dali_inception that are not committed: dali/1/model.dali (serialized DALI
# pipeline), inception_graphdef/1/model.graphdef (Google's frozen Inception v3) and
# inception_graphdef/inception_labels.txt. Run on a GPU host with Docker and internet access, from anywhere:
#   examples/ensemble_dali_inception/generate_models.sh
# DALI_VERSION must not be newer than the DALI in the Triton image that serves the pipeline (its release notes list
# it); the default, 1.36.0, is older than the DALI of Triton 24.09.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
triton_version="${TRITON_VERSION:-24.09}"
dali_version="${DALI_VERSION:-1.36.0}"

if [[ "${MME_DEPLOY_IN_CONTAINER:-}" != 1 ]]; then
  exec docker run --gpus=all --rm \
    -e MME_DEPLOY_IN_CONTAINER=1 -e DALI_VERSION="$dali_version" -e HOST_UID="$(id -u)" -e HOST_GID="$(id -g)" \
    -v "$here":/workspace -w /workspace \
    "nvcr.io/nvidia/pytorch:${triton_version}-py3" bash generate_models.sh
fi

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# Inception v3, frozen TF graph, as in the seed.
curl -fsSL -o "$scratch/inception.tar.gz" \
  https://storage.googleapis.com/download.tensorflow.org/models/inception_v3_2016_08_28_frozen.pb.tar.gz
tar -xzf "$scratch/inception.tar.gz" -C "$scratch"
mkdir -p inception_graphdef/1
mv "$scratch/inception_v3_2016_08_28_frozen.pb" inception_graphdef/1/model.graphdef

# The 1001 labels (background + ImageNet's 1000) from AWS's public sample bucket; the seed copies the same object
# with `aws s3 cp s3://sagemaker-sample-files/datasets/labels/inception_labels.txt`.
curl -fsSL -o inception_graphdef/inception_labels.txt \
  https://sagemaker-sample-files.s3.amazonaws.com/datasets/labels/inception_labels.txt

pip install --no-cache-dir --quiet --extra-index-url https://pypi.nvidia.com "nvidia-dali-cuda120==${dali_version}"
python dali_pipeline.py --out dali/1/model.dali

# Files written in the container belong to root; give them back to whoever ran the script.
chown -R "${HOST_UID:-0}:${HOST_GID:-0}" dali inception_graphdef
echo "ensemble_dali_inception: wrote dali/1/model.dali, inception_graphdef/1/model.graphdef and inception_labels.txt"
