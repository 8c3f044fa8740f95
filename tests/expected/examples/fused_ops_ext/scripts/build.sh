#!/usr/bin/env bash
# Show the GPUs, then build the extension in place for the first one.
set -euo pipefail
cd "$(dirname "$0")/.."

rocm-smi
GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
echo "building fused_ops for ${GPU_NAME}"

export PYTORCH_ROCM_ARCH="gfx90a;gfx942"
python setup.py build_ext --inplace
