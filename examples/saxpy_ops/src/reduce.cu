// Block-level reductions in shared memory, finished with one atomic per block.
#include "saxpy_ops/check.cuh"
#include "saxpy_ops/ops.h"

namespace saxpy_ops {
namespace {

// Dynamic shared memory: the launch passes blockDim.x * sizeof(float) bytes.
__global__ void sum_kernel(const float* x, int n, float* out) {
    extern __shared__ float partial[];
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        acc += x[i];
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    // Tree reduction; blockDim.x is a power of two.
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            partial[threadIdx.x] += partial[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(out, partial[0]);
    }
}

// Static shared memory, fixed block size.
__global__ void count_above_kernel(const float* x, int n, float threshold, int* out) {
    __shared__ int counts[kBlockSize];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    counts[threadIdx.x] = (i < n && x[i] > threshold) ? 1 : 0;
    __syncthreads();
    for (int s = kBlockSize / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) {
            counts[threadIdx.x] += counts[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0 && counts[0] != 0) {
        atomicAdd(out, counts[0]);
    }
}

}  // namespace

float sum(const float* d_x, int n) {
    float* d_out = nullptr;
    CUDA_CHECK(cudaMalloc(&d_out, sizeof(float)));
    CUDA_CHECK(cudaMemset(d_out, 0, sizeof(float)));
    const int block = kBlockSize;
    const int grid = ceil_div(n, block * 4);
    sum_kernel<<<grid, block, block * sizeof(float)>>>(d_x, n, d_out);
    CUDA_CHECK_LAUNCH();
    float result = 0.0f;
    CUDA_CHECK(cudaMemcpy(&result, d_out, sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_out));
    return result;
}

int count_above(const float* d_x, int n, float threshold) {
    int* d_count = nullptr;
    CUDA_CHECK(cudaMalloc(&d_count, sizeof(int)));
    CUDA_CHECK(cudaMemset(d_count, 0, sizeof(int)));
    count_above_kernel<<<ceil_div(n, kBlockSize), kBlockSize>>>(d_x, n, threshold, d_count);
    CUDA_CHECK_LAUNCH();
    int count = 0;
    CUDA_CHECK(cudaMemcpy(&count, d_count, sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_count));
    return count;
}

}  // namespace saxpy_ops
