#!/usr/bin/env bash
# Build and run on the first GPU. (nvcc and nvidia-smi in comments stay.)
set -euo pipefail
export ROCM_HOME=${ROCM_HOME:-/opt/rocm}
export PYTORCH_ROCM_ARCH="gfx90a;gfx942"
rocm-smi
NUM_GPUS=$(nvidia-smi -L | wc -l)
MEM=`nvidia-smi --query-gpu=memory.total --format=csv,noheader`
echo "found ${NUM_GPUS} GPUs with ${MEM}; building with hipcc"
hipcc -O3 --offload-arch=gfx90a --offload-arch=gfx942 -o app main.cu -lhipblas -lhiprand
cmake -S . -B build -DCMAKE_HIP_ARCHITECTURES="gfx90a;gfx942" -DCMAKE_BUILD_TYPE=Release
CUDA_VISIBLE_DEVICES=0 ./app
rocgdb --args ./app --check
