// Uniform random fills: the cuRAND host API, and a curand_kernel device kernel.
#include <curand_kernel.h>

#include "saxpy_ops/check.cuh"
#include "saxpy_ops/ops.h"

namespace saxpy_ops {
namespace {

__global__ void uniform_kernel(float* out, int n, unsigned long long seed) {
    const int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= n) {
        return;
    }
    // One subsequence per thread: independent streams, same seed.
    curandState state;
    curand_init(seed, id, 0, &state);
    out[id] = curand_uniform(&state);
}

}  // namespace

void fill_uniform(float* d_x, std::size_t n, std::uint64_t seed) {
    curandGenerator_t gen;
    CURAND_CHECK(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_DEFAULT));
    CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(gen, seed));
    CURAND_CHECK(curandGenerateUniform(gen, d_x, n));
    CURAND_CHECK(curandDestroyGenerator(gen));
    CUDA_CHECK(cudaDeviceSynchronize());
}

void fill_uniform_device(float* d_x, int n, std::uint64_t seed) {
    uniform_kernel<<<ceil_div(n, kBlockSize), kBlockSize>>>(d_x, n, seed);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace saxpy_ops
