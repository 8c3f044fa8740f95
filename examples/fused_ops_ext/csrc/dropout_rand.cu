// Inverted dropout with cuRAND's Philox generator: the mask depends on (seed, element) only,
// so a backward pass can regenerate it instead of storing it.
#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <curand_kernel.h>

#include "cuda_utils.cuh"
#include "ops.h"

namespace fused_ops {

template <typename scalar_t>
__global__ void fused_dropout_kernel(const scalar_t* __restrict__ x, scalar_t* __restrict__ out,
                                     int64_t n, float p, unsigned long long seed) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) {
    return;
  }
  curandStatePhilox4_32_10_t state;
  curand_init(seed, static_cast<unsigned long long>(i), 0, &state);
  const float keep = curand_uniform(&state) >= p ? 1.f / (1.f - p) : 0.f;
  out[i] = static_cast<scalar_t>(to_float(x[i]) * keep);
}

torch::Tensor fused_dropout(const torch::Tensor& x, double p, int64_t seed) {
  CHECK_INPUT(x);
  TORCH_CHECK(p >= 0.0 && p < 1.0, "dropout probability must be in [0, 1)");
  c10::cuda::CUDAGuard device_guard(x.device());
  auto out = torch::empty_like(x);
  const int64_t n = x.numel();
  if (n == 0) {
    return out;
  }
  auto stream = at::cuda::getCurrentCUDAStream();
  AT_DISPATCH_FLOATING_TYPES_AND_HALF(x.scalar_type(), "fused_dropout", [&] {
    fused_dropout_kernel<scalar_t><<<blocks_for(n), kThreads, 0, stream>>>(
        x.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), n, static_cast<float>(p),
        static_cast<unsigned long long>(seed));
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

}  // namespace fused_ops
