"""Fused CUDA operators for PyTorch: bias + GELU, dropout, batched float32 GEMM."""

from fused_ops.ops import batched_matmul, bias_gelu, default_device, fused_dropout

__all__ = ["batched_matmul", "bias_gelu", "default_device", "fused_dropout"]
