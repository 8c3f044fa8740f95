"""cudaDeviceProp fields and hipDeviceProp_t: the table (mappings/structs/device_props.tsv), the
script that writes it, rule HP502 by target, and the members the port renames
(rewrite/members.py, with mappings/structs/members.tsv)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from hipport.analysis import analyze, context_for
from hipport.config import Settings
from hipport.pipeline import port_source
from hipport.mappings import parse_version
from hipport.table_files import data_table

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("import_device_props", ROOT / "scripts" / "import_device_props.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_script_reads_struct_fields_and_dates_them():
    script = _script()
    cuda_h = "struct __device_builtin__ cudaDeviceProp {\n  char name[256]; /* the name */\n  int a;\n  int b[3];\n  int sparseCudaX;\n  int gone;\n};"
    hip_old = "typedef struct hipDeviceProp_t {\n  char name[256];  // the name\n  int a;\n} hipDeviceProp_t;"
    hip_new = "typedef struct hipDeviceProp_t {\n  char name[256];\n  int a;\n  int b[3];\n  int sparseHipX;\n} hipDeviceProp_t;"
    assert script.struct_fields(cuda_h, "struct __device_builtin__ cudaDeviceProp") == ["name", "a", "b", "sparseCudaX", "gone"]
    fields = {v: script.struct_fields(t, "typedef struct hipDeviceProp_t") for v, t in (("5.2.0", hip_old), ("6.0.0", hip_new))}
    assert script.rows(["name", "b", "sparseCudaX", "gone"], fields) == [
        ("name", "name", "", ""),
        ("b", "b", "6.0.0", ""),
        ("sparseCudaX", "sparseHipX", "6.0.0", "HIP spells it sparseHipX"),
        ("gone", "", "", "no hipDeviceProp_t field up to HIP 6.0.0"),
    ]


def test_the_table_is_well_formed():
    rows = data_table("structs", "device_props")
    fields = [r["field"] for r in rows]
    assert len(fields) == len(set(fields)) and {"unifiedAddressing", "warpSize", "mpsEnabled"} <= set(fields)
    for r in rows:
        assert not r["hip_added"] or parse_version(r["hip_added"]), r
        assert r["hip"] or r["note"].startswith("no hipDeviceProp_t field"), r
    by = {r["field"]: r for r in rows}
    assert by["warpSize"]["hip"] == "warpSize" and by["warpSize"]["hip_added"] == ""  # HIP 5.2 has it
    assert by["unifiedAddressing"]["hip_added"] == "6.0.0"
    assert by["sparseCudaArraySupported"]["hip"] == "sparseHipArraySupported"


CODE = b"""#include <cuda_runtime.h>
int f(cudaDeviceProp* p, cudaDeviceProp q) {
    return p->unifiedAddressing + q.warpSize + q.sparseCudaArraySupported + q.mpsEnabled;
}
"""


@pytest.mark.parametrize("target, fields", [
    ((5, 2), ["unifiedAddressing", "sparseCudaArraySupported", "mpsEnabled"]),
    ((6, 0), ["mpsEnabled"]),
    (None, ["mpsEnabled"]),
])
def test_reported_fields_depend_on_the_target(target, fields):
    ctx = context_for(CODE, "f.cu", "cuda", Settings(target_hip=target))
    found = [f for f in analyze(ctx) if f.rule == "HP502"]
    assert [CODE.splitlines()[f.line - 1][f.column - 1:f.end_column - 1].decode() for f in found] == fields
    messages = {f.message.split("`")[1]: f.message for f in found}
    if target == (5, 2):  # HIP's spelling comes with 6.0; from there the port renames it
        assert "has it as `sparseHipArraySupported` from HIP 6.0 (target 5.2)" in messages["sparseCudaArraySupported"]
    assert "no hipDeviceProp_t field" in messages["mpsEnabled"]


@pytest.mark.parametrize("target, expected", [
    ((5, 2), "q.sparseCudaArraySupported + a->requestedHandleType;"),
    ((6, 0), "q.sparseHipArraySupported + a->requestedHandleType;"),
])
def test_members_hip_spells_otherwise_are_renamed(target, expected):
    code = b"int f(cudaDeviceProp q, CUmemAllocationProp* a) {\n  return q.sparseCudaArraySupported + a->requestedHandleTypes; }\n"
    out = port_source(code, "f.cpp", "cpp", Settings(target_hip=target)).data
    assert expected.encode() in out
    assert port_source(out, "f.cpp", "cpp", Settings(target_hip=target)).data == out


def test_a_member_the_file_declares_is_not_renamed():
    code = b"struct Mine { int requestedHandleTypes; };\nint g(Mine m) { return m.requestedHandleTypes; }\n"
    assert port_source(code, "g.cpp", "cpp", Settings()).data == code


def test_a_file_without_device_properties_is_not_read():
    code = b"struct S { int unifiedAddressing; };\nint g(S s) { return s.unifiedAddressing; }\n"
    ctx = context_for(code, "g.cu", "cuda", Settings(target_hip=(5, 2)))
    assert [f for f in analyze(ctx) if f.rule == "HP502"] == []
