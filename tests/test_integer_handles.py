"""Rule HP958: arithmetic on CUdeviceptr and texture objects, which the port turns into pointers. The fixture's
expected lines are exactly the lines hipcc rejects once ported."""

from __future__ import annotations

import re
from pathlib import Path

from hiptools import hipcc_syntax_check, requires_hipcc
from hipport.analysis import analyze, context_for
from hipport.config import Settings
from hipport.pipeline import port_source

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "fixtures" / "check" / "library-semantics" / "integer_handle_arithmetic.cpp"


def flagged(code: bytes, name: str = "f.cpp") -> list[int]:
    ctx = context_for(code, name, "cpp", Settings())
    return sorted({f.line for f in analyze(ctx) if f.rule == "HP958"})


def expected_lines(text: str) -> list[int]:
    return [i for i, line in enumerate(text.splitlines(), 1) if "expect: HP958" in line]


@requires_hipcc
def test_the_flagged_lines_are_those_hipcc_rejects(tmp_path):
    data = FIXTURE.read_bytes()
    ported = tmp_path / "ported.cpp"
    ported.write_bytes(port_source(data, FIXTURE.name, "cpp", Settings(target_hip=(5, 2))).data)
    proc = hipcc_syntax_check(ported)
    rejected = sorted({int(n) for n in re.findall(r"ported\.cpp:(\d+):\d+: error", proc.stdout + proc.stderr)})
    assert rejected == expected_lines(data.decode()) == flagged(data)


SCOPES = b"""#include <cuda.h>
void a(CUdeviceptr p, CUdeviceptr* pp) { cuMemsetD8(p + 4, 0, 1); cuMemsetD8(pp[1] + 4, 0, 1); pp = pp + 1; }
void b(int p) { int q = p + 4; (void)q; }
void c(CUdeviceptr* p) { cuMemsetD8(*p + 4, 0, 1); }
"""


def test_a_name_is_judged_by_its_own_function():
    # line 2: p and pp[1] are device pointers (one finding a call), pp + 1 is a pointer's step;
    # line 3: an int p; line 4: a pointer to one, dereferenced.
    assert flagged(SCOPES) == [2, 4]
    ctx = context_for(SCOPES, "f.cpp", "cpp", Settings())
    assert len([f for f in analyze(ctx) if f.rule == "HP958" and f.line == 2]) == 2


def test_c_files_keep_additive_arithmetic():
    code = b"#include <cuda.h>\nvoid f(CUdeviceptr p) { cuMemsetD8(p + 4, 0, 1); cuMemsetD8(p & ~0xffull, 0, 1); }\n"
    ctx = context_for(code, "f.c", "cpp", Settings())
    assert [f.snippet[f.column - 1:f.end_column - 1] for f in analyze(ctx) if f.rule == "HP958"] == ["p & ~0xffull"]
