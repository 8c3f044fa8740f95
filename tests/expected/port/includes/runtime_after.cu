// Headers included before the runtime: nvcc includes cuda_runtime.h ahead of everything, but
// HIP 5.2's hip_cooperative_groups.h and driver_types.h do not compile without hip_runtime.h
// ahead of them, so the port puts it there.
#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>
#include <hip/driver_types.h>
#include <hip/hip_runtime.h>
#include <cstdio>

namespace cg = cooperative_groups;

__global__ void scale(float* data, float factor, int n) {
    cg::thread_block block = cg::this_thread_block();
    int i = blockIdx.x * blockDim.x + block.thread_rank();
    if (i < n) data[i] *= factor;
    block.sync();
}

int main() {
    float* d = nullptr;
    hipMalloc(&d, 256 * sizeof(float));
    scale<<<2, 128>>>(d, 2.0f, 256);
    hipError_t err = hipDeviceSynchronize();
    printf("%s\n", hipGetErrorString(err));
    hipFree(d);
    return 0;
}
