"""Compare the fused operators with their PyTorch reference on a CUDA device."""

import pytest
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def test_bias_gelu_matches_reference():
    from fused_ops import bias_gelu

    x = torch.randn(64, 128, device="cuda")
    bias = torch.randn(128, device="cuda")
    expected = torch.nn.functional.gelu(x + bias, approximate="tanh")
    torch.testing.assert_close(bias_gelu(x, bias), expected, rtol=1e-3, atol=1e-3)


def test_dropout_is_deterministic_per_seed():
    from fused_ops import fused_dropout

    x = torch.ones(4096, device="cuda")
    a, b = fused_dropout(x, 0.25, seed=7), fused_dropout(x, 0.25, seed=7)
    assert torch.equal(a, b)
    assert 0.6 < (a != 0).float().mean().item() < 0.9


def test_batched_matmul_matches_bmm():
    from fused_ops import batched_matmul

    a = torch.randn(3, 16, 32, device="cuda")
    b = torch.randn(3, 32, 8, device="cuda")
    torch.testing.assert_close(batched_matmul(a, b), torch.bmm(a, b), rtol=1e-2, atol=1e-2)
