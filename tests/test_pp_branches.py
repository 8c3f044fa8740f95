"""How rules/_syntax reads #if branches: which of nvcc's host pass, its device pass and hipcc
compile the code after each conditional directive."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hipport.analysis import context_for
from hipport.config import Settings
from hipport.rules import _syntax as sx

# A name of each kind the evaluator knows: defined by nvcc, defined only in the device pass,
# defined by hipcc, HIP's and never nvcc's, and one nobody knows.
NAMES = ["__CUDACC__", "__CUDA_ARCH__", "__HIP_PLATFORM_AMD__", "__HIP_PLATFORM_NVIDIA__", "__HIPCC__",
         "MY_PROJECT_H", "__NVCC__", "CUDART_VERSION"]


def by_evaluator(cond: str) -> tuple[bool | None, bool | None, bool | None]:
    """The condition evaluated in each pass's environment in turn, with no shortcut."""
    return tuple(sx._PPEval(sx._pp_tokens(cond), *env).parse().truth()
                 for env in (sx._HOST_ENV, sx._DEVICE_ENV, sx._HIP_ENV))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("negate", ["", "!"])
def test_defined_tests_told_directly_as_the_evaluator_tells_them(name, negate):
    cond = f"{negate}defined({name})"
    sx._truths.cache_clear()
    assert sx._truths(cond) == by_evaluator(cond)


@pytest.mark.parametrize("cond, truths", [
    # No name that tells the passes apart: evaluated once, the same in all three.
    ("defined(_WIN32) || 0", (None, None, None)),
    ("0 && defined(MY_PROJECT_H)", (False, False, False)),
    ("(1 + 2) * 3 == 9", (True, True, True)),
    # Names that do: each pass on its own.
    ("__CUDA_ARCH__ >= 700", (False, None, None)),
    ("defined(MY_PROJECT_H) || defined(__HIPCC__)", (None, None, True)),
    ("!defined(__NVCC__) && 1", (False, False, None)),
    ("defined(__gfx90a__)", (False, False, None)),
])
def test_truths_of_conditions(cond, truths):
    sx._truths.cache_clear()
    assert sx._truths(cond) == truths == by_evaluator(cond)


_OPERAND = st.one_of(st.sampled_from(NAMES + ["__gfx90a__", "0", "1", "700"]),
                     st.sampled_from(NAMES).map(lambda n: f"defined({n})"))


@settings(max_examples=300, deadline=None)
@given(st.recursive(_OPERAND, lambda inner: st.one_of(
    st.tuples(inner, st.sampled_from(["&&", "||", ">=", "==", "+", "<"]), inner).map(" ".join),
    inner.map(lambda e: f"!({e})")), max_leaves=6))
def test_truths_shortcut_agrees_with_the_evaluator(cond):
    sx._truths.cache_clear()
    assert sx._truths(cond) == by_evaluator(cond)


@pytest.mark.parametrize("line", [
    b"#ifndef GUARD_H", b"  #  ifdef GUARD_H  ", b"#ifdef GUARD_H\r", b"#elifndef X1",
    b"#ifdef X // a comment", b"#ifdef /* c */ X", b"#ifndef X \\\n  junk", b"#ifdef X Y",
    b"#if defined(X)", b"#elif X > 1", b"#else", b"#else // X", b"#ifdef",
])
def test_directive_conditions_read_as_the_logical_line_reads(line):
    text = line + b"\nMARK\n#endif\n"
    ctx = context_for(text, "t.cu", "cuda", Settings())
    d = ctx.lexed.directives[0]
    assert sx._directive_condition(text, d) == sx._condition(
        sx._logical_line(text, d.start)[0], d.name.decode("latin-1"))


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
