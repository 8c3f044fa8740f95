// Error-checking helpers shared by every translation unit of saxpy_ops.
#pragma once

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>
#include <curand.h>

// Abort with file/line information when a CUDA runtime call fails, e.g.
//   CUDA_CHECK(cudaMalloc(&ptr, bytes));   // "cudaMalloc failed: out of memory"
#define CUDA_CHECK(expr)                                                        \
    do {                                                                        \
        cudaError_t status_ = (expr);                                           \
        if (status_ != cudaSuccess) {                                           \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, \
                         #expr, cudaGetErrorString(status_));                   \
            std::exit(EXIT_FAILURE);                                            \
        }                                                                       \
    } while (0)

// Launches report errors lazily: check the launch itself, not just the next sync.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

#define CURAND_CHECK(expr)                                                      \
    do {                                                                        \
        curandStatus_t status_ = (expr);                                        \
        if (status_ != CURAND_STATUS_SUCCESS) {                                 \
            std::fprintf(stderr, "%s:%d: %s failed with cuRAND status %d\n",   \
                         __FILE__, __LINE__, #expr, static_cast<int>(status_)); \
            std::exit(EXIT_FAILURE);                                            \
        }                                                                       \
    } while (0)

namespace saxpy_ops {

// Usable from host code (grid sizing) and device code (tiling).
__host__ __device__ inline int ceil_div(int n, int d) { return (n + d - 1) / d; }

constexpr int kBlockSize = 256;

}  // namespace saxpy_ops
