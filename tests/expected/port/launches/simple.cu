#include <hip/hip_runtime.h>

__global__ void add_one(int* data, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += 1;
}

__global__ void noop() {}

void run(int* data, int n) {
    int grid = (n + 127) / 128;
    int block = 128;
    hipLaunchKernelGGL(add_one, dim3(grid), dim3(block), 0, 0, data, n);
    hipLaunchKernelGGL(add_one, dim3(1), dim3(1), 0, 0, data, 1);
    hipLaunchKernelGGL(add_one, dim3(grid ), dim3(block), 0, 0,  data , n );
    hipLaunchKernelGGL(noop, dim3(1), dim3(1), 0, 0);
    hipDeviceSynchronize();
}
