"""Python wrappers over torch.ops.fused_ops (registered by the compiled _C module)."""

from __future__ import annotations

import torch

from fused_ops import _C  # noqa: F401  (loads the library, registering torch.ops.fused_ops)


def default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def bias_gelu(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return torch.ops.fused_ops.bias_gelu(x.contiguous(), bias.contiguous())


def fused_dropout(x: torch.Tensor, p: float = 0.1, seed: int = 0) -> torch.Tensor:
    return torch.ops.fused_ops.fused_dropout(x.contiguous(), p, seed)


def batched_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.ops.fused_ops.batched_matmul(a.contiguous(), b.contiguous())
