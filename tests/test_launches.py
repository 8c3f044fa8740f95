"""--launch-syntax hip: <<<>>> to hipLaunchKernelGGL, piecewise."""

import pytest

from hipport.edits import apply_edits
from hipport.parse.lexer import Lexer
from hipport.rewrite.launches import launch_edits

LEX = Lexer([b"cuda"])


def convert(src: bytes) -> bytes:
    edits, skipped = launch_edits(LEX.lex(src))
    assert not skipped
    return apply_edits(src, edits)


@pytest.mark.parametrize("src, expected", [
    (b"k<<<g, b>>>(x, y);", b"hipLaunchKernelGGL(k, dim3(g), dim3(b), 0, 0, x, y);"),
    (b"k<<<g, b, smem>>>(x);", b"hipLaunchKernelGGL(k, dim3(g), dim3(b), smem, 0, x);"),
    (b"k<<<g, b, 0, s>>>(x);", b"hipLaunchKernelGGL(k, dim3(g), dim3(b), 0, s, x);"),
    (b"k<<<g, b>>>();", b"hipLaunchKernelGGL(k, dim3(g), dim3(b), 0, 0);"),
    (b"k<<<g,b,0,s>>>( );", b"hipLaunchKernelGGL(k, dim3(g), dim3(b),0,s );"),
    (b"k<float, 4><<<dim3(n, 1), f(a, b)>>>(p, q<int, 2>(z));",
     b"hipLaunchKernelGGL(HIP_KERNEL_NAME(k<float, 4>), dim3(dim3(n, 1)), dim3(f(a, b)), 0, 0, p, q<int, 2>(z));"),
    (b"ns::k<T> <<< (n + 255) / 256, 256 >>> (x);",
     b"hipLaunchKernelGGL(HIP_KERNEL_NAME(ns::k<T>), dim3((n + 255) / 256), dim3(256), 0, 0, x);"),
    (b"#define L(n) k<<<n, 1>>>(n)\n", b"#define L(n) hipLaunchKernelGGL(k, dim3(n), dim3(1), 0, 0, n)\n"),
])
def test_launches(src, expected):
    assert convert(src) == expected


def test_not_in_comments_or_strings():
    src = b'// k<<<1, 1>>>(x);\nputs("k<<<1,1>>>()");\n'
    edits, skipped = launch_edits(LEX.lex(src))
    assert edits == [] and skipped == []


def test_unsplittable_launch_is_left_and_reported():
    src = b"k<<<g>>>(x);"  # one launch parameter: not valid, leave it alone
    edits, skipped = launch_edits(LEX.lex(src))
    assert edits == [] and skipped == [1]


def test_comparison_inside_template_arguments():
    src = b"if (a < n) x = 1;\nk<float, (sizeof(float) > 2 ? 2 : 1)><<<g, b>>>(p);"
    assert convert(src) == (b"if (a < n) x = 1;\nhipLaunchKernelGGL(HIP_KERNEL_NAME(k<float, "
                            b"(sizeof(float) > 2 ? 2 : 1)>), dim3(g), dim3(b), 0, 0, p);")


def test_callee_never_reaches_past_a_statement():
    src = b"x = a > b;\n>  <<<g, b>>>(p);"
    edits, skipped = launch_edits(LEX.lex(src))
    assert edits == [] and len(skipped) == 1
