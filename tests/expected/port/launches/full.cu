#include <hip/hip_runtime.h>

__global__ void scale(float* out, const float* in, float factor, int n) {
    extern __shared__ float tile[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    if (i < n) out[i] = tile[threadIdx.x] * factor;
}

void run(float* out, const float* in, int n, hipStream_t stream) {
    const int threads = 256;
    const int blocks = (n + threads - 1) / threads;
    const size_t shmem = threads * sizeof(float);
    hipLaunchKernelGGL(scale, dim3(blocks), dim3(threads), shmem, stream, out, in, 2.0f, n);
    hipLaunchKernelGGL(scale, dim3(blocks), dim3(threads), threads * sizeof(float), 0, out, out, 0.5f, n);

    hipStream_t side;
    hipStreamCreate(&side);
    hipLaunchKernelGGL(scale, dim3(dim3(blocks)), dim3(dim3(threads)), shmem, side, out, in, 1.0f, n);
    hipStreamSynchronize(side);
    hipStreamDestroy(side);
}
