"""Where the port puts `#include <hip/hip_runtime.h>` when the file includes the runtime itself,
but after other CUDA headers (hipport/rewrite/includes.py). nvcc includes the runtime ahead of
everything; HIP 5.2's hip_cooperative_groups.h, driver_types.h and texture headers fail to
compile without it ahead of them (tests/test_compile.py compiles the fixture that shows it)."""

from __future__ import annotations

import pytest

from hipport.config import Settings
from hipport.pipeline import port_source

RUNTIME = b"#include <hip/hip_runtime.h>"


def port(data: bytes) -> bytes:
    ported = port_source(data, "k.cu", "cuda", Settings())
    assert ported.result.status in ("ported", "unchanged"), ported.result
    return ported.data


CASES = {
    "before-the-first-header-ahead-of-it": (
        b"#include <cstdio>\n#include <cooperative_groups.h>\n#include <driver_types.h>\n#include <cuda_runtime.h>\n",
        b"#include <cstdio>\n" + RUNTIME + b"\n#include <hip/hip_cooperative_groups.h>\n"
        b"#include <hip/driver_types.h>\n" + RUNTIME + b"\n"),
    "none-when-the-runtime-comes-first": (
        b"#include <cuda_runtime.h>\n#include <cooperative_groups.h>\n",
        RUNTIME + b"\n#include <hip/hip_cooperative_groups.h>\n"),
    "ended-as-the-line-it-precedes": (
        b"#include <cooperative_groups.h>\r\n#include <cuda_runtime.h>\r\n",
        RUNTIME + b"\r\n#include <hip/hip_cooperative_groups.h>\r\n" + RUNTIME + b"\r\n"),
    "after-a-byte-order-mark": (
        b"\xef\xbb\xbf#include <cooperative_groups.h>\n#include <cuda_runtime.h>\n",
        b"\xef\xbb\xbf" + RUNTIME + b"\n#include <hip/hip_cooperative_groups.h>\n" + RUNTIME + b"\n"),
    "inside-the-branch-of-that-header": (
        b"#ifdef USE_CG\n#  include <cooperative_groups.h>\n#endif\n#include <cuda_runtime.h>\n",
        b"#ifdef USE_CG\n" + RUNTIME + b"\n#  include <hip/hip_cooperative_groups.h>\n#endif\n" + RUNTIME + b"\n"),
    # No runtime include of its own: one is added at the first include, as before.
    "without-one-the-earlier-rule-places-it": (
        b"#include <cooperative_groups.h>\n__global__ void k() {}\n",
        RUNTIME + b"\n#include <hip/hip_cooperative_groups.h>\n__global__ void k() {}\n"),
}


@pytest.mark.parametrize("data, expected", CASES.values(), ids=CASES.keys())
def test_where_the_runtime_include_goes(data, expected):
    assert port(data) == expected


def test_only_cuda_headers_ahead_of_the_runtime_count():
    # A project header, a system header, a header already in HIP form: none is a CUDA header
    # the port changed, so none gets the runtime ahead of it (a second port adds nothing).
    data = b'#include "mine.h"\n#include <vector>\n#include <hip/hip_cooperative_groups.h>\n#include <cuda_runtime.h>\n'
    assert port(data) == data.replace(b"<cuda_runtime.h>", b"<hip/hip_runtime.h>")


def test_porting_twice_adds_nothing():
    data = b"#include <cooperative_groups.h>\n#include <cuda_runtime.h>\n__global__ void k() {}\n"
    once = port(data)
    assert once.count(RUNTIME) == 2
    assert port(once) == once
