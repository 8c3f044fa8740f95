// Operator schemas, their CUDA implementations, and the Python module that loads them.
#include <torch/extension.h>
#include <torch/library.h>

#include "ops.h"

TORCH_LIBRARY(fused_ops, m) {
  m.def("bias_gelu(Tensor x, Tensor bias) -> Tensor");
  m.def("fused_dropout(Tensor x, float p, int seed) -> Tensor");
  m.def("batched_matmul(Tensor a, Tensor b) -> Tensor");
}

TORCH_LIBRARY_IMPL(fused_ops, CUDA, m) {
  m.impl("bias_gelu", &fused_ops::bias_gelu);
  m.impl("fused_dropout", &fused_ops::fused_dropout);
  m.impl("batched_matmul", &fused_ops::batched_matmul);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "Fused CUDA operators, registered as torch.ops.fused_ops";
  m.def("is_available", [] { return torch::cuda::is_available(); });
}
