"""Where the port puts `#include <hip/hip_runtime.h>` when the file includes the runtime itself,
but after other CUDA headers (hipport/rewrite/includes.py). nvcc includes the runtime ahead of
everything; HIP 5.2's hip_cooperative_groups.h, driver_types.h and texture headers fail to
compile without it ahead of them (tests/test_compile.py compiles the fixture that shows it)."""

from __future__ import annotations

from hipport.config import Settings
from hipport.pipeline import port_source

RUNTIME = b"#include <hip/hip_runtime.h>"


def port(data: bytes, rel: str = "k.cu", kind: str = "cuda") -> bytes:
    ported = port_source(data, rel, kind, Settings())
    assert ported.result.status in ("ported", "unchanged"), ported.result
    return ported.data


def test_the_runtime_goes_before_the_first_header_that_came_ahead_of_it():
    data = b"#include <cstdio>\n#include <cooperative_groups.h>\n#include <driver_types.h>\n#include <cuda_runtime.h>\n"
    assert port(data) == (b"#include <cstdio>\n" + RUNTIME + b"\n#include <hip/hip_cooperative_groups.h>\n"
                          b"#include <hip/driver_types.h>\n" + RUNTIME + b"\n")


def test_a_runtime_include_first_gets_no_second_one():
    data = b"#include <cuda_runtime.h>\n#include <cooperative_groups.h>\n"
    out = port(data)
    assert out == RUNTIME + b"\n#include <hip/hip_cooperative_groups.h>\n"


def test_the_inserted_line_ends_as_the_line_it_precedes():
    data = b"#include <cooperative_groups.h>\r\n#include <cuda_runtime.h>\r\n"
    assert port(data) == RUNTIME + b"\r\n#include <hip/hip_cooperative_groups.h>\r\n" + RUNTIME + b"\r\n"


def test_inside_a_branch_the_runtime_goes_in_that_branch():
    data = b"#ifdef USE_CG\n#  include <cooperative_groups.h>\n#endif\n#include <cuda_runtime.h>\n"
    assert port(data) == (b"#ifdef USE_CG\n" + RUNTIME + b"\n#  include <hip/hip_cooperative_groups.h>\n"
                          b"#endif\n" + RUNTIME + b"\n")


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


def test_without_a_runtime_include_the_earlier_rule_places_it():
    # No runtime include of its own: one is added at the first include, as before.
    data = b"#include <cooperative_groups.h>\n__global__ void k() {}\n"
    assert port(data) == RUNTIME + b"\n#include <hip/hip_cooperative_groups.h>\n__global__ void k() {}\n"
