// SAXPY / DAXPY with a templated grid-stride kernel, run on its own stream
// and timed with CUDA events.
#include "saxpy_ops/check.cuh"
#include "saxpy_ops/ops.h"

namespace saxpy_ops {
namespace {

template <typename T>
__global__ void axpy_kernel(T a, const T* __restrict__ x, T* __restrict__ y, int n) {
    const int stride = blockDim.x * gridDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = a * x[i] + y[i];
    }
}

template <typename T>
float run_axpy(T a, const T* h_x, T* h_y, int n) {
    const size_t bytes = static_cast<size_t>(n) * sizeof(T);
    T* d_x = nullptr;
    T* d_y = nullptr;
    CUDA_CHECK(cudaMalloc(&d_x, bytes));
    CUDA_CHECK(cudaMalloc(&d_y, bytes));

    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));

    CUDA_CHECK(cudaMemcpyAsync(d_x, h_x, bytes, cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaMemcpyAsync(d_y, h_y, bytes, cudaMemcpyHostToDevice, stream));

    const int block = kBlockSize;
    const int grid = ceil_div(n, block) < 1024 ? ceil_div(n, block) : 1024;
    CUDA_CHECK(cudaEventRecord(start, stream));
    axpy_kernel<T><<<grid, block, 0, stream>>>(a, d_x, d_y, n);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(stop, stream));

    CUDA_CHECK(cudaMemcpyAsync(h_y, d_y, bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));

    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));

    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    return ms;
}

}  // namespace

float saxpy(float a, const float* h_x, float* h_y, int n) { return run_axpy(a, h_x, h_y, n); }

float daxpy(double a, const double* h_x, double* h_y, int n) { return run_axpy(a, h_x, h_y, n); }

}  // namespace saxpy_ops
