"""The regions pass: what is code, comment, string, include path, directive."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from hipport.parse.lexer import Lexer

LEX = Lexer([b"cuda", b"cu", b"CU", b"cublas"])


def words(src: bytes) -> list[bytes]:
    return [t.text for t in LEX.lex(src).identifiers]


def test_comments_and_strings_hide_names():
    src = (b'// cudaMalloc\n/* cudaFree */ int x = cudaSuccess;\nconst char* s = "cudaMemcpy";\n'
           b"auto r = R\"d(cudaFree \" )d\"; char c = 'c'; int n = 1'000; L\"cudaX\";\n")
    assert words(src) == [b"cudaSuccess"]


def test_line_comment_continues_after_backslash():
    assert words(b"// note \\\ncudaMalloc(p);\ncudaFree(p);\n") == [b"cudaFree"]


def test_macro_bodies_are_code_but_their_strings_are_not():
    src = b'#define CHECK(x) \\\n  do { cudaError_t e = (x); puts("cudaMalloc"); /* cublasSgemm */ } while (0)\n'
    assert words(src) == [b"cudaError_t"]


def test_only_whole_words_starting_with_a_prefix():
    assert words(b"my_cudaMalloc(); xcuda(); cudaMallocWrapper(); a.cudaFree;\n") == [
        b"cudaMallocWrapper", b"cudaFree"]


def test_unterminated_comment_runs_to_end():
    lexed = LEX.lex(b"cudaFree(p);\n/* never closed cudaMalloc\n")
    assert [t.text for t in lexed.identifiers] == [b"cudaFree"]
    assert lexed.comments[-1][1] == len(lexed.data)


def test_include_paths_and_branches():
    src = b'#include <cuda_runtime.h>\n#ifdef X\n#  include "cublas_v2.h"\n#else\n#include <cuda.h>\n#endif\n#error "cudaMalloc"\n'
    lexed = LEX.lex(src)
    incs = [(d.path(src), d.branch) for d in lexed.includes]
    assert incs == [(b"cuda_runtime.h", ()), (b"cublas_v2.h", ((0, 0),)), (b"cuda.h", ((0, 1),))]
    assert lexed.identifiers == []  # the #error message is a string
    assert [d.name for d in lexed.directives] == [b"include", b"ifdef", b"include", b"else", b"include", b"endif", b"error"]


def test_device_code_markers():
    assert LEX.lex(b"__global__ void k() {}\n").has_device_code()
    assert LEX.lex(b"void f() { k<<<1, 1>>>(); }\n").has_device_code()
    assert not LEX.lex(b'void f() { puts("__global__ <<<"); } // threadIdx\n').has_device_code()


def test_arbitrary_bytes_do_not_break_it():
    data = bytes(range(256)) * 4 + b"\n\xe9 cudaMalloc \xff"
    assert words(data)[-1] == b"cudaMalloc"


def test_previous_code_steps_over_comments():
    src = b"obj. /* c */ // d.\n  cudaFree; end. // x\n cudaMalloc"
    lexed = LEX.lex(src)
    assert src[: lexed.previous_code(src.index(b"cudaFree"))].endswith(b"obj.")
    assert src[: lexed.previous_code(src.index(b"cudaMalloc"))].endswith(b"end.")


# Lexed.defines_named: one search over all the names against a test of each #define's name.
_NAME_PIECES = ["A", "a", "_", "9", "Mask", "MASK", "mask", "Warp", "lane", "Plane", "cuda", "X"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_NAME_PIECES), min_size=1, max_size=4), max_size=12),
       st.sampled_from([rb"mask", rb"warp|wave|lane", rb"a", rb"^cuda", rb"X$", rb"9"]),
       st.booleans())
def test_defines_named_finds_what_a_test_per_define_finds(names, pattern, lowered):
    names = ["".join(parts) for parts in names]
    data = "".join(f"#define {'_' if n[0].isdigit() else ''}{n}{' (x)' if i % 3 else ''} {i}\n"
                   for i, n in enumerate(names)).encode()
    lexed = LEX.lex(data)
    regex = re.compile(pattern, re.M)
    expected = [m for m in lexed.defines if regex.search(m.name.lower() if lowered else m.name)]
    assert lexed.defines_named(regex, lowered=lowered) == expected


def test_defines_named_reports_a_name_once_and_keeps_the_order():
    lexed = LEX.lex(b"#define MASK_MASK 1\n#define B 2\n#define mask 3\n#define Full_Mask 4\n")
    assert [m.name for m in lexed.defines_named(re.compile(rb"mask"), lowered=True)] == \
        [b"MASK_MASK", b"mask", b"Full_Mask"]
    assert [m.name for m in lexed.defines_named(re.compile(rb"mask"))] == [b"mask"]
    assert LEX.lex(b"int x;\n").defines_named(re.compile(rb"x")) == []
