#include <hip/hip_runtime.h>

__global__ void big_tile(float* x) {
    extern __shared__ float tile[];
    tile[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    x[threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
}

int configure(float* x) {
    hipFuncSetAttribute(reinterpret_cast<const void*>(big_tile), hipFuncAttributeMaxDynamicSharedMemorySize, 48 * 1024);
    hipFuncAttributes attr;
    hipFuncGetAttributes(&attr, reinterpret_cast<const void*>(big_tile));
    hipFuncSetCacheConfig(reinterpret_cast<const void*>(big_tile), hipFuncCachePreferShared);
    void* args[] = {&x};
    hipLaunchKernel((const void*)big_tile, dim3(1), dim3(64), args, 64 * sizeof(float), 0);
    int blocks = 0;
    hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, big_tile, 64, 64 * sizeof(float));
    return attr.numRegs + blocks;
}
