#include <hip/hip_runtime.h>

__global__ void transpose(const float* in, float* out, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        out[x * height + y] = in[y * width + x];
    }
}

void run(const float* in, float* out, int width, int height) {
    dim3 block(16, 16);
    dim3 grid((width + block.x - 1) / block.x, (height + block.y - 1) / block.y);
    hipLaunchKernelGGL(transpose, dim3(grid), dim3(block), 0, 0, in, out, width, height);

    const dim3 small_block(8, 8, 1);
    hipLaunchKernelGGL(transpose, dim3(dim3((width + 7) / 8, (height + 7) / 8)), dim3(small_block), 0, 0, in, out, width, height);
    hipLaunchKernelGGL(transpose, dim3(dim3(1, 1, 1)), dim3(dim3(8, 8)), 0, 0, in, out, 8, 8);

    dim3 grid3 = grid;
    grid3.z = 1;
    hipLaunchKernelGGL(transpose, dim3(grid3), dim3(dim3(16, 16, 1)), 0, 0, in, out, width, height);
    hipDeviceSynchronize();
}
