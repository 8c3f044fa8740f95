"""How rules/_syntax reads #if branches: which of nvcc's host pass, its device pass and hipcc
compile the code after each conditional directive."""

import pytest

from hipport.analysis import context_for
from hipport.config import Settings
from hipport.rules import _syntax as sx

# A name of each kind the evaluator knows: defined by nvcc, defined only in the device pass,
# defined by hipcc, HIP's and never nvcc's, and one nobody knows.
NAMES = ["__CUDACC__", "__CUDA_ARCH__", "__HIP_PLATFORM_AMD__", "__HIP_PLATFORM_NVIDIA__", "__HIPCC__",
         "MY_PROJECT_H", "__NVCC__", "CUDART_VERSION"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("negate", ["", "!"])
def test_defined_tests_told_directly_as_the_evaluator_tells_them(name, negate):
    cond = f"{negate}defined({name})"
    sx._truths.cache_clear()
    direct = sx._truths(cond)
    by_evaluator = tuple(sx._truth_of(cond, env) for env in (sx._HOST_ENV, sx._DEVICE_ENV, sx._HIP_ENV))
    assert direct == by_evaluator


def passes_at_mark(text: bytes) -> tuple[bool, bool, bool]:
    ctx = context_for(text, "t.cu", "cuda", Settings())
    return sx._pass_states(ctx, text.index(b"MARK"))


@pytest.mark.parametrize("text, passes", [
    # (never in nvcc's host pass, never in its device pass, never compiled by hipcc)
    (b"#ifndef T_H\n#define T_H\nMARK\n#endif\n", (False, False, False)),
    (b"#ifdef __CUDA_ARCH__\nMARK\n#endif\n", (True, False, False)),
    (b"#ifndef __CUDA_ARCH__\nMARK\n#endif\n", (False, True, False)),
    (b"#ifndef __HIP_PLATFORM_AMD__\nMARK\n#endif\n", (False, False, True)),
    (b"#ifdef __HIP_PLATFORM_AMD__\nMARK\n#endif\n", (True, True, False)),
    (b"#ifdef __HIP_PLATFORM_AMD__\nx\n#else\nMARK\n#endif\n", (False, False, True)),
    (b"#if defined(__HIPCC__)\nx\n#elif 0\ny\n#else\nMARK\n#endif\n", (False, False, True)),
    (b"#if 0\n#include <a.h>\n#define X 1\nMARK\n#endif\n", (True, True, True)),
    (b"#if 0\nx\n#endif\n#define Y 2\nMARK\n", (False, False, False)),  # after the block
])
def test_pass_states(text, passes):
    assert passes_at_mark(text) == passes
