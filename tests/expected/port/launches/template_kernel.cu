#include <hip/hip_runtime.h>

#include <algorithm>

template <typename T, int Unroll>
__global__ void scale(T* data, T factor, int n) {
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * Unroll;
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
        if (base + u < n) data[base + u] *= factor;
    }
}

template <typename A, typename B>
struct Pair {
    A first;
    B second;
};

template <typename P>
__global__ void fill_pairs(P* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = P{i, 0.5f};
}

static int blocks_for(int n, int per_block) { return (n + per_block - 1) / per_block; }

void run(float* data, Pair<int, float>* pairs, int n, int m) {
    hipLaunchKernelGGL(HIP_KERNEL_NAME(scale<float, 4>), dim3(blocks_for(n, 4 * 128)), dim3(128), 0, 0, data, 2.0f, n);
    hipLaunchKernelGGL(HIP_KERNEL_NAME(scale<float, 1>), dim3(std::max(blocks_for(n, 256), 1)), dim3(256), 0, 0, data, static_cast<float>(std::min(n, m)), n);
    hipLaunchKernelGGL(HIP_KERNEL_NAME(fill_pairs<Pair<int, float>>), dim3((m > 1024 ? 1024 : m)), dim3(128), 0, 0, pairs, std::min<int>(n, m));
    hipLaunchKernelGGL(HIP_KERNEL_NAME(scale<float, (sizeof(float) > 2 ? 2 : 1)>), dim3(blocks_for(n, 2 * 64)), dim3(64), 0, 0, data, 1.0f, n);
    hipDeviceSynchronize();
}
