// Batched float32 matrix products through cuBLAS, on PyTorch's handle and stream.
#include <ATen/hip/HIPContext.h>
#include <ATen/hip/Exceptions.h>
#include <c10/hip/HIPGuard.h>
#include <hipblas/hipblas.h>

#include "cuda_utils.cuh"
#include "ops.h"

namespace fused_ops {

torch::Tensor batched_matmul(const torch::Tensor& a, const torch::Tensor& b) {
  CHECK_INPUT(a);
  CHECK_INPUT(b);
  TORCH_CHECK(a.scalar_type() == at::kFloat && b.scalar_type() == at::kFloat, "float32 only");
  TORCH_CHECK(a.dim() == 3 && b.dim() == 3 && a.size(0) == b.size(0) && a.size(2) == b.size(1),
              "expected a [B, M, K] and b [B, K, N]");
  const at::cuda::OptionalCUDAGuard device_guard(a.device());
  const int batch = static_cast<int>(a.size(0));
  const int m = static_cast<int>(a.size(1));
  const int k = static_cast<int>(a.size(2));
  const int n = static_cast<int>(b.size(2));
  auto c = torch::empty({batch, m, n}, a.options());

  hipblasHandle_t handle = at::cuda::getCurrentCUDABlasHandle();
  TORCH_CUDABLAS_CHECK(hipblasSetStream(handle, at::cuda::getCurrentCUDAStream()));
#if defined(CUDA_VERSION) && CUDA_VERSION >= 11000
  // TF32 tensor cores for float32 GEMMs on Ampere and newer.
  TORCH_CUDABLAS_CHECK(hipblasSetMathMode(handle, HIPBLAS_TF32_TENSOR_OP_MATH));
#endif
  const float alpha = 1.f;
  const float beta = 0.f;
  // Row-major C = A B is column-major C^T = B^T A^T: swap the operands.
  TORCH_CUDABLAS_CHECK(hipblasSgemmStridedBatched(
      handle, HIPBLAS_OP_N, HIPBLAS_OP_N, n, m, k, &alpha, b.data_ptr<float>(), n,
      static_cast<long long>(k) * n, a.data_ptr<float>(), k, static_cast<long long>(m) * k, &beta,
      c.data_ptr<float>(), n, static_cast<long long>(m) * n, batch));
  return c;
}

}  // namespace fused_ops
