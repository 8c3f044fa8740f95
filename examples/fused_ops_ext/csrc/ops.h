// Host entry points of the fused_ops extension.
#pragma once

#include <torch/extension.h>

namespace fused_ops {

// y = gelu(x + bias), bias broadcast over the last dimension.
torch::Tensor bias_gelu(const torch::Tensor& x, const torch::Tensor& bias);

// Inverted dropout with a counter-based generator: same (seed, p) -> same mask.
torch::Tensor fused_dropout(const torch::Tensor& x, double p, int64_t seed);

// c[i] = a[i] @ b[i] for float32 batches, through cuBLAS.
torch::Tensor batched_matmul(const torch::Tensor& a, const torch::Tensor& b);

}  // namespace fused_ops
