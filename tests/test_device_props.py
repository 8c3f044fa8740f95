"""cudaDeviceProp fields and hipDeviceProp_t: the table (mappings/structs/device_props.tsv), the
script that writes it, and rule HP502 by target."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from hipport.analysis import analyze, context_for
from hipport.config import Settings
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
    ((6, 0), ["sparseCudaArraySupported", "mpsEnabled"]),
    (None, ["sparseCudaArraySupported", "mpsEnabled"]),
])
def test_reported_fields_depend_on_the_target(target, fields):
    ctx = context_for(CODE, "f.cu", "cuda", Settings(target_hip=target))
    found = [f for f in analyze(ctx) if f.rule == "HP502"]
    assert [CODE.splitlines()[f.line - 1][f.column - 1:f.end_column - 1].decode() for f in found] == fields
    messages = {f.message.split("`")[1]: f.message for f in found}
    renamed = messages["sparseCudaArraySupported"]
    assert "is `sparseHipArraySupported` in hipDeviceProp_t" in renamed
    assert ("from HIP 6.0 (target 5.2)" in renamed) == (target == (5, 2))
    assert "no hipDeviceProp_t field" in messages["mpsEnabled"]


def test_a_file_without_device_properties_is_not_read():
    code = b"struct S { int unifiedAddressing; };\nint g(S s) { return s.unifiedAddressing; }\n"
    ctx = context_for(code, "g.cu", "cuda", Settings(target_hip=(5, 2)))
    assert [f for f in analyze(ctx) if f.rule == "HP502"] == []
