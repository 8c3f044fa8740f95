"""The work on one file grows with the file, not with its square: a generated or vendored file
may hold hundreds of functions that share a name (overloads, members of many classes,
functors' `operator()`), hundreds of shared arrays, or hundreds of functions each with a name
of its own. Counted, not timed: the Python lines run (sys.settrace) and the scans of the
whole text, for a file and for the same file four times over."""

import sys

import pytest

from hipport import patterns
from hipport.analysis import context_for
from hipport.config import Settings
from hipport.files import file_kind
from hipport.pipeline import port_source
from hipport.rules import _syntax as sx

# Each a piece of a file, repeated with %(i)d numbered; every piece brings work for the rules
# that tell host code from device code.
PIECES = {
    # one host function name defined again and again (overloads): each definition asks who calls it
    "overloads": b"__global__ void k(float* x, int v) { x[threadIdx.x] = v; }\n"
                 b"void launch(float* d, int v%(i)d) { k<<<1, 32>>>(d, v%(i)d); }\n",
    "namespaces": b"namespace n%(i)d { __global__ void k(float* x) { x[0] = 1; }\n"
                  b"void run(float* d) { k<<<1, 1>>>(d); } }\n",
    # functors: every `operator()` is called by that one name
    "functors": b"__global__ void kk%(i)d(float* x) { x[0] = %(i)d; }\n"
                b"struct L%(i)d { void operator()(float* d) const { kk%(i)d<<<1, 1>>>(d); } };\n"
                b"void call%(i)d(float* d) { L%(i)d()(d); L%(i)d l; l.operator()(d); }\n",
    # a warp-sized shared array per kernel: each is looked up among the file's subscripts
    "shared arrays": b"__global__ void s%(i)d(float* x) { __shared__ float t[32]; t[threadIdx.x & 31] = x[0];"
                     b" __syncthreads(); x[1] = t[0]; }\n"
                     b"void go%(i)d(float* d) { s%(i)d<<<1, 32, 70000>>>(d); }\n",
}


# Build files: a flag reported by one row of the flag tables is not reported again by another,
# which was a look through every flag reported so far.
BUILD_PIECES = {
    "CMakeLists.txt": b"add_library(lib%(i)d SHARED k%(i)d.cu)\n"
                      b"target_compile_options(lib%(i)d PRIVATE -arch=sm_80 --use_fast_math -rdc=true)\n",
    "Makefile": b"k%(i)d.o: k%(i)d.cu\n\tnvcc -arch=sm_80 -O3 --use_fast_math -c $< -o $@\n",
}


def repeated(piece: bytes, count: int, head: bytes = b"#include <cuda_runtime.h>\n") -> bytes:
    return head + b"".join(piece % {b"i": i} for i in range(count))


def lines_run(data: bytes, rel: str = "t.cu") -> int:
    count = [0]

    def trace(frame, event, arg):
        count[0] += 1
        return trace

    sys.settrace(trace)
    try:
        port_source(data, rel, file_kind(rel), Settings())
    finally:
        sys.settrace(None)
    return count[0]


@pytest.mark.parametrize("rel, name", [("t.cu", name) for name in PIECES] + [(rel, rel) for rel in BUILD_PIECES])
def test_four_times_the_file_is_about_four_times_the_work(rel, name, monkeypatch):
    monkeypatch.setattr(sx, "_walked", [0])  # both files' trees indexed the same way (see sx._of_type)
    piece, head = (PIECES[name], b"#include <cuda_runtime.h>\n") if rel == "t.cu" else (BUILD_PIECES[rel], b"")
    small, large = repeated(piece, 40, head), repeated(piece, 160, head)
    for data in (small, large):  # what a process learns once (tables, rules, answers kept for the next files)
        port_source(data, rel, file_kind(rel), Settings())
    small_work, large_work = lines_run(small, rel), lines_run(large, rel)
    assert large_work < 4.5 * small_work, (small_work, large_work)  # quadratic work: 5 to 15 times over


def test_a_file_is_scanned_for_a_bounded_number_of_names(monkeypatch):
    """Each host function's name is looked up in the text; past a few names, one pass indexes
    every word instead of a scan of the whole text per name."""
    scans = []
    real = patterns.whole_word_starts

    def counted(data, word):
        scans.append(word)
        return real(data, word)

    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("hipport.") and getattr(module, "whole_word_starts", None) is real:
            monkeypatch.setattr(module, "whole_word_starts", counted)
    data = repeated(PIECES["shared arrays"], 200)  # 200 launching functions, each of its own name
    port_source(data, "t.cu", "cuda", Settings())
    assert 0 < len(scans) <= sx._SCANS_BEFORE_INDEX


@pytest.mark.parametrize("words", [
    [b"go%d" % i for i in range(60)] + [b"s1", b"t", b"x", b"absent", b"go", b"float", b"_", b"0x"],
    [b"threadIdx", b"__shared__", b"cuda_runtime", b"include", b"s199", b"d"],
])
def test_word_starts_finds_what_a_scan_finds(words):
    data = repeated(PIECES["shared arrays"], 200) + b"go7"  # a word at the very end too
    ctx = context_for(data, "t.cu", "cuda", Settings())
    for word in words * 2:  # asked again after the index is built
        assert sx.word_starts(ctx, word) == patterns.whole_word_starts(data, word), word


def test_nodes_between_are_the_nodes_that_start_in_the_span():
    data = repeated(PIECES["shared arrays"], 30)
    ctx = context_for(data, "t.cu", "cuda", Settings())
    everything = sx.nodes(ctx, "subscript_expression")
    assert len(everything) == 120  # four a piece
    for start, end in [(0, len(data)), (0, 0), (400, 1800), (everything[5].start_byte, everything[9].start_byte),
                       (everything[5].start_byte + 1, everything[9].start_byte + 1), (len(data), len(data) + 5)]:
        assert sx.nodes_between(ctx, "subscript_expression", start, end) == [
            n for n in everything if start <= n.start_byte < end]
