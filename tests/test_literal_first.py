"""Patterns written literal-first (the word, then its boundary checked behind it) find what
the `\\b`-led alternations they replace found: whole words, with the same spellings around."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hipport.check import check_source
from hipport.config import Settings
from hipport.rules import all_rules


def flagged(name: str, text: bytes, code: str) -> list[str]:
    kind = "cuda" if name.endswith(".cu") else "cpp"
    found = check_source(text, name, kind, Settings(), all_rules()).findings
    lines = text.decode().splitlines()
    return [lines[f.line - 1][f.column - 1 : f.end_column - 1] for f in found if f.rule == code]


CG = b"#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n__global__ void k(int* o) {\n"


@pytest.mark.parametrize("name, text, code, want", [
    # meta_group_* only as a member call, `.` or `->` before it (spaces allowed)
    ("a.cu", CG + b"  auto t = cg::tiled_partition<32>(cg::this_thread_block());\n"
                  b"  o[0] = t.meta_group_rank();\n  o[1] = t -> meta_group_size ();\n"
                  b"  o[2] = meta_group_rank();\n}\n", "HP802", ["meta_group_rank", "meta_group_size"]),
    # the property call's member, not a longer function's
    ("b.cpp", b"bool f() {\n  return at::cuda::getCurrentDeviceProperties()->major >= 8\n"
              b"      || mygetDeviceProperties()->major > 7;\n}\n", "HP703", ["major"]),
    # a device-property object's member; a longer name holding the object's name is another
    ("c.cpp", b"#include <cuda_runtime.h>\nint f() {\n  cudaDeviceProp prop;\n  int myprop = 0;\n"
              b"  return prop.major >= 7 && myprop > 7;\n}\n", "HP703", ["major"]),
    # NVIDIA-only library names as whole words
    ("d.cu", b"void g() {\n  cutlass::gemm::GemmShape<1, 1, 1> s;\n  xcute::y();\n}\n", "HP902", ["cutlass::"]),
    ("e.cu", b"void g() {\n  my_nvjpegCreate(0);\n  nvjpegCreateSimple(0);\n}\n", "HP902", ["nvjpegCreateSimple"]),
    # async-copy names as whole words
    ("f.cu", b"#include <cuda/pipeline>\n__global__ void k() {\n  my__pipeline_commit();\n"
             b"  __pipeline_commit();\n}\n", "HP852", ["__pipeline_commit"]),
])
def test_literal_first_patterns_find_whole_words(name, text, code, want):
    assert flagged(name, text, code) == want



_PIECES = [b"cudaDeviceProp", b"hipDeviceProp_t", b"CUdevprop", b"cudaDevice", b" ", b"const", b"*", b"&",
           b"x", b";", b"_", b"(", b"\n", b"a1", b"ab", b"b"]


def _spans(matches) -> list[tuple[int, int, bytes]]:
    return [(m.start(), m.end(), m.group()) for m in matches]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30))
def test_leftmost_matches_are_the_alternations(pieces):
    """patterns.leftmost_matches over per-literal patterns finds what finditer over their
    alternation finds, even where one pattern's match starts inside another's."""
    import re

    from hipport.patterns import leftmost_matches
    from hipport.rules.arch_macro import _PROP_DECLS, _PROP_TYPES

    data = b"".join(pieces)
    tail = rb"\s*(?:const\s*)?[*&]*\s*(?:const\s*)?([A-Za-z_]\w*)\s*[;,=)\[{(]"
    alternation = re.compile(b"(?:" + b"|".join(_PROP_TYPES) + rb")" + tail)
    assert _spans(leftmost_matches(_PROP_DECLS, data)) == _spans(alternation.finditer(data))
    # a tie goes to the first pattern, as in an alternation
    words = [re.compile(rb"ab"), re.compile(rb"a\w"), re.compile(rb"b")]
    assert _spans(leftmost_matches(words, data)) == _spans(re.compile(rb"ab|a\w|b").finditer(data))


_LINK_PIECES = [b"-l", b"lib", b"cutensor", b"nvjpeg", b"nvjpeg2k", b"nppc", b"nppial", b"nvcomp_x", b"cufile",
                b"cufile_rdma", b"CUDA::", b"cublas", b"find_package", b"FIND_PACKAGE", b"Find_Package",
                b"(", b" ", b"-", b".", b"x", b"2k", b"\n", b"$", b"nv", b"cu", b"np"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_LINK_PIECES), max_size=25))
def test_link_parts_match_as_the_link_alternation(pieces):
    from hipport.patterns import leftmost_matches
    from hipport.rules.cuda_only_library import _LINK, _LINK_PARTS

    data = b"".join(pieces)
    found = [(m.start(), m.end(), m.lastgroup) for m in leftmost_matches(_LINK_PARTS, data)]
    assert found == [(m.start(), m.end(), m.lastgroup) for m in _LINK.finditer(data)]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([b"warp", b"wave", b"lane", b"warplane", b"_x", b" ", b"=", b"(", b"/*c*/",
                                 b"\\", b"\n", b"{", b"*", b"/*"]), max_size=16))
def test_warp_declarators_match_as_their_alternation(pieces):
    from hipport.patterns import leftmost_matches
    from hipport.rules.warp import _WARP_DECLARATOR, _WARP_DECLARATORS

    data = b"".join(pieces)
    assert _spans(leftmost_matches(_WARP_DECLARATORS, data)) == _spans(_WARP_DECLARATOR.finditer(data))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from([b"mask", b"MASK", b"Mask", b"_", b"x", b"1", b" ", b"$", b"\xe9", b"maskmask"]),
                max_size=14))
def test_word_finds_are_the_regexes(pieces):
    import re

    from hipport.patterns import starts_of, whole_word_starts

    data = b"".join(pieces)
    assert whole_word_starts(data, b"mask") == [m.start() for m in re.finditer(rb"\bmask\b", data)]
    assert starts_of(data.lower(), b"mask") == [m.start() for m in re.finditer(rb"(?=(?i:mask))", data)]


_TORCH_PIECES = [b"USE_CUDA", b"CUDAGuard", b"OptionalCUDAGuard", b"cuda::", b"c10::cuda", b"CUDAStream",
                 b"CUDACachingAllocator", b"::recordStream", b"getCurrentCUDAStream", b"x", b"_", b" ", b":",
                 b"\n", b"1", b"(", b"USE_CUDA_"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_TORCH_PIECES), max_size=25), st.sampled_from(["v1", "v2"]))
def test_torch_names_match_as_their_bounded_alternation(pieces, variant):
    """PyTorch's names (rewrite/torch.py), searched literal first, are found where the
    alternation between word boundaries finds them, longest first."""
    import re

    from hipport.rewrite.torch import _names

    data = b"".join(pieces)
    names, pattern = _names(variant)
    alts = b"|".join(re.escape(n.encode()) for n in sorted(names, key=len, reverse=True))
    bounded = re.compile(rb"(?<!\w)(?:" + alts + rb")(?!\w)")
    assert _spans(pattern.finditer(data)) == _spans(bounded.finditer(data))


def test_an_include_finds_the_library_that_names_its_header():
    """The set and prefix tuple that turn most includes away at once give the library the
    test of each library's headers in turn gives, for every header named and near misses."""
    from hipport.rules.cuda_only_library import LIBRARIES, _header_matches, _library_for_header

    def in_turn(path):
        return next((lib for lib in LIBRARIES if any(_header_matches(path, h) for h in lib.headers)), None)

    paths = {"cuda_runtime.h", "ATen/cuda/CUDAContext.h", "", "cutlass", "cutlass.h", "mycutlass/x.h"}
    for lib in LIBRARIES:
        for h in lib.headers:
            stem = h.rstrip("*")
            paths |= {h, stem, stem + "x.h", stem + "/y.h", stem[:-1], "x/" + stem, stem.upper()}
    found = {p: _library_for_header(p) for p in paths}
    assert found == {p: in_turn(p) for p in paths}
    assert sum(lib is not None for lib in found.values()) > len(LIBRARIES)  # the headers were found
