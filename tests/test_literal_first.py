"""Patterns written literal-first (the word, then its boundary checked behind it) find what
the `\\b`-led alternations they replace found: whole words, with the same spellings around."""

import pytest

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
