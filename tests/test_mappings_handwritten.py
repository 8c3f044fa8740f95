"""The hand-written mapping tables (NCCL, NVTX, number formats, cooperative groups, macros, device
intrinsics, Thrust, PyTorch's extra pairs), their qualified rows (`thrust::cuda::par`), and
scripts/import_torch_mappings.py. Facts and sources: mappings/README.md."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from hiptools import describe, find_hip_header, find_hipcc, hipcc_syntax_check, requires_hipcc
from hipport import mappings
from hipport.config import Settings
from hipport.mappings import load, library_counts, parse_version
from hipport.pipeline import port_source

REPO = Path(__file__).resolve().parents[1]
TABLES = REPO / "mappings"
HAND = ("cg", "device_math", "macros", "nccl", "numeric_types", "nvtx", "thrust", "torch_extra")
NAME_COLUMNS = (
    "cuda hip roc kind section cuda_added cuda_deprecated cuda_changed cuda_removed hip_added "
    "hip_deprecated hip_changed hip_removed experimental roc_added risk note"
).split()
KINDS = {"function", "type", "enum", "macro", "namespace", "other"}
CATEGORIES = {  # SPEC's finding categories
    "dynamic-parallelism", "texture-reference", "texture-object", "inline-ptx", "warp-size",
    "warp-mask", "unsupported-api", "deprecated-api", "tensor-core", "shared-memory-limit",
    "arch-macro", "version-macro", "cooperative-groups", "async-copy", "cuda-only-library",
    "library-semantics", "unified-memory", "launch-bounds", "build-flags", "pytorch-extension",
}
QUALIFIED = re.compile(r"[A-Za-z_]\w*(?:::[A-Za-z_]\w*)+\Z")
# Rows of a hand-written table that name a generated row on purpose: HIPIFY's table (2024-10)
# lists these as unsupported, HIP has them (hand-written rows win only over unsupported ones).
# __nv_bfloat16 is mapped by HIPIFY (to hip_bfloat16), so its row loses to device.tsv's; overrides.tsv
# carries the same mapping and replaces the generated row.
KNOWN_CONFLICTS = {"__nv_bfloat16"}


def _rows(path: Path) -> tuple[list[str], list[str], list[dict]]:
    text = path.read_text(encoding="utf-8")
    lines = text[:-1].split("\n")
    comments = [line for line in lines if line.startswith("#")]
    body = [line for line in lines if not line.startswith("#")]
    header = body[0].split("\t")
    return comments, header, [dict(zip(header, line.split("\t"))) for line in body[1:]]


def _table(stem: str) -> dict[str, dict]:
    return {r["cuda"]: r for r in _rows(TABLES / f"{stem}.tsv")[2]}


def _script():
    name = "import_torch_mappings"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts/import_torch_mappings.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _port(code: str, target: tuple[int, int] | None = None):
    return port_source(code.encode(), "t.cpp", "cpp", Settings(target_hip=target))


# ---------------------------------------------------------------------------------------------
# every hand-written table


@pytest.mark.parametrize("stem", HAND)
def test_table_loads_with_its_library(stem):
    comments, header, rows = _rows(TABLES / f"{stem}.tsv")
    assert comments[0].startswith("# hand-written"), comments[0]
    assert header == NAME_COLUMNS
    assert rows, stem
    m = load()
    counts = library_counts(m)
    assert stem in counts, f"{stem}.tsv did not load"
    for r in rows:
        assert r["kind"] in KINDS, r
        assert r["note"], f"{stem}: {r['cuda']}: every hand-written row says where it comes from"
        assert not r["risk"] or r["risk"] in CATEGORIES, r
        if not r["hip"]:
            assert r["risk"], f"{stem}: {r['cuda']}: an unsupported row names its finding category"
            assert m.unsupported_reason(r["cuda"]) is not None, r["cuda"]
        for c in header:
            if c.endswith(("_added", "_deprecated", "_changed", "_removed")) and r[c]:
                assert parse_version(r[c]), r
        if QUALIFIED.match(r["cuda"]):
            # The renamer replaces only the last word: the HIP name keeps the qualifier's depth.
            assert not r["hip"] or r["hip"].count("::") == r["cuda"].count("::"), r


def test_default_target_unchanged():
    """No hand-written row is newer than the HIPIFY tables' release: the default target stays."""
    newest = max(parse_version(r["hip_added"])[:2] for stem in HAND
                 for r in _table(stem).values() if r["hip_added"])
    assert newest <= (6, 3)
    assert load().target_hip == (6, 3)


def test_no_bare_common_words():
    """The lexer surfaces every word starting like a table name: plain hand-written names must
    look like API names (an underscore, a digit or a capital), not English words (`reduce`,
    `wait`). A qualified row may end in a common word (`cooperative_groups::reduce`): the renamer
    only matches it with its qualifier, so the bare word must not be a row of its own."""
    allowed = {"nvcuda", "htanh"}
    m = load()
    common = set()
    for stem in HAND:
        for name in _table(stem):
            last = name.rsplit("::", 1)[-1]
            if "::" not in name:
                assert name in allowed or re.search(r"[_0-9A-Z]", name), f"{stem}: {name}"
            elif not re.search(r"[_0-9A-Z]", last):
                assert last not in m.entries, f"{stem}: {name}: `{last}` is also a plain row"
                common.add(last)
    assert {"reduce", "wait", "plus", "par", "cuda", "mark"} <= common
    # ... and ported code using those words bare, or under another qualifier, stays as it is
    code = "".join(f"int {w} = {w}(x) + other::{w} + {w}::y;\n" for w in sorted(common))
    out = _port(code)
    assert out.data.decode() == code and out.result.unmapped == ()


def test_hand_written_tables_do_not_overlap_each_other():
    stems = [p.stem for p in TABLES.glob("*.tsv")
             if p.stem not in mappings.GENERATED and p.stem not in ("includes", "overrides")]
    seen: dict[str, str] = {}
    for stem in sorted(stems):
        for name in _rows(TABLES / f"{stem}.tsv")[2]:
            assert name["cuda"] not in seen, f"{name['cuda']} in {seen.get(name['cuda'])} and {stem}"
            seen[name["cuda"]] = stem
    overrides = {r["cuda"] for r in _rows(TABLES / "overrides.tsv")[2]}
    mine = {n for stem in HAND for n in _table(stem)}
    assert overrides & mine <= KNOWN_CONFLICTS, "overrides.tsv would silently replace a hand-written row"
    # where it does, it carries the hand-written row's mapping over the generated one
    over = {r["cuda"]: r for r in _rows(TABLES / "overrides.tsv")[2]}
    for name in overrides & mine:
        hand = next(_table(s)[name] for s in HAND if name in _table(s))
        assert (over[name]["hip"], over[name]["hip_added"]) == (hand["hip"], hand["hip_added"]), name


def test_shadowing_generated_rows_is_intentional():
    generated = {}
    for stem in mappings.GENERATED:
        for r in _rows(TABLES / f"{stem}.tsv")[2]:
            generated[r["cuda"]] = (stem, r)
    overlaps = {}
    for stem in HAND:
        for name, r in _table(stem).items():
            if name in generated:
                overlaps[name] = (stem, r, *generated[name])
    assert overlaps, "numeric_types.tsv fills HIPIFY's unsupported bf16/fp8 rows"
    for name, (stem, r, gen_stem, gen) in overlaps.items():
        assert stem == "numeric_types", f"{name}: {stem}.tsv repeats {gen_stem}.tsv"
        if name in KNOWN_CONFLICTS:
            assert gen["hip"] and gen["hip"] != r["hip"]
            continue
        assert not gen["hip"], f"{name}: {gen_stem}.tsv maps it already; the hand row is dead"
        assert "HIPIFY" in r["note"], f"{name}: say why the HIPIFY row is overridden"
        assert load().lookup(name).library == "numeric_types"
    m = load()
    assert any(c.startswith("__nv_bfloat16: device (hip_bfloat16) kept") for c in m.conflicts)
    assert sorted(n for n in overlaps if n in KNOWN_CONFLICTS) == sorted(KNOWN_CONFLICTS)


@pytest.mark.parametrize("target", [None, (5, 2), (6, 2)])
@pytest.mark.parametrize("libs", ["hip", "roc"])
@pytest.mark.parametrize("experimental", [False, True])
def test_no_mapping_chains(target, libs, experimental):
    """Porting twice must change nothing: no replacement is itself a name the tables rename."""
    names = load(target, libs, experimental).names
    chains = {k: v for k, v in names.items() if v in names}
    assert not chains, sorted(chains.items())[:10]


def test_counts():
    m = load()
    counts = library_counts(m)
    supported = sum(c["supported"] for c in counts.values())
    print(f"\nrenames {len(m.names)}, supported {supported} at HIP {m.target_hip}")
    for stem in HAND:
        print(f"  {stem:14} {counts[stem]}")
    assert len(m.names) >= 4700
    assert supported >= 5300


# ---------------------------------------------------------------------------------------------
# NCCL -> RCCL


def test_nccl():
    m, old = load(), load((5, 2))
    assert m.lookup("ncclAllReduce").hip == "ncclAllReduce"
    assert "ncclAllReduce" not in m.names and m.unsupported_reason("ncclAllReduce") is None
    assert m.lookup("ncclAllReduce").library == "nccl"
    assert m.names["ncclAlltoAll"] == "ncclAllToAll"
    assert m.unsupported_reason("ncclCommSplit") is None
    assert old.unsupported_reason("ncclCommSplit") == "added in HIP 6.0 (target 5.2)"
    assert m.unsupported_reason("ncclCommShrink") == "no HIP equivalent"
    assert m.lookup("ncclCommShrink").risk == "unsupported-api"
    assert m.unsupported_reason("ncclFloat8e4m3") is None
    assert m.names["ncclFloat8e4m3"] == "ncclFp8E4M3"
    assert m.lookup("ncclFloat8e4m3").risk == "library-semantics"
    assert m.includes["nccl.h"] == "rccl/rccl.h"


def test_nccl_port():
    code = ("#include <nccl.h>\n"
            "void f(ncclComm_t c) { ncclAlltoAll(0, 0, 1, ncclFloat, c, 0); ncclCommShrink(c); }\n")
    out = _port(code)
    text = out.data.decode()
    assert "#include <rccl/rccl.h>" in text and "ncclAllToAll(" in text and "ncclComm_t" in text
    unmapped = {u["name"]: u["reason"] for u in out.result.unmapped}
    assert unmapped["ncclCommShrink"] == "no HIP equivalent"


def test_identity_rows_are_not_reported():
    out = _port("void f(ncclComm_t c) { ncclAllReduce(0, 0, 1, ncclFloat, ncclSum, c, 0); }\n")
    assert out.result.unmapped == ()


# ---------------------------------------------------------------------------------------------
# NVTX -> roctx


def test_nvtx():
    m = load()
    expected = {
        "nvtxRangePushA": "roctxRangePushA", "nvtxRangePush": "roctxRangePush",
        "nvtxRangePop": "roctxRangePop", "nvtxMarkA": "roctxMarkA", "nvtxMark": "roctxMark",
        "nvtxRangeStartA": "roctxRangeStartA", "nvtxRangeStart": "roctxRangeStart",
        "nvtxRangeEnd": "roctxRangeStop", "nvtxRangeId_t": "roctx_range_id_t",
    }
    for cuda, hip in expected.items():
        assert m.names[cuda] == hip
    supported = {n for n, r in _table("nvtx").items() if r["hip"]}
    assert supported == set(expected), "roctx has nothing else"
    for name in ("nvtxRangePushEx", "nvtxMarkEx", "nvtxNameOsThreadA", "nvtxDomainCreateA",
                 "nvtxRangePushW", "nvtxEventAttributes_t", "NVTX_VERSION", "nvtx3", "NVTX3_FUNC_RANGE"):
        assert m.unsupported_reason(name) == "no HIP equivalent", name
        assert m.lookup(name).risk == "unsupported-api"
    assert m.includes["nvToolsExt.h"] == "roctracer/roctx.h"
    assert "nvtx3/nvtx3.hpp" not in m.includes and m.include_library["nvtx3/nvtx3.hpp"] == "nvtx"


def test_nvtx_port():
    out = _port('#include <nvtx3/nvToolsExt.h>\nvoid f() { nvtxRangePushA("x"); nvtxRangePop(); '
                "nvtx3::scoped_range r{\"y\"}; }\n")
    text = out.data.decode()
    assert "#include <roctracer/roctx.h>" in text
    assert 'roctxRangePushA("x"); roctxRangePop();' in text
    assert {u["name"] for u in out.result.unmapped} == {"nvtx3::scoped_range"}  # named in full


# ---------------------------------------------------------------------------------------------
# fp16 / bf16 / fp8


def test_numeric_types():
    m, m62, old = load(), load((6, 2)), load((5, 2))
    assert m.names["__nv_bfloat162"] == "__hip_bfloat162"
    assert m.names["nv_bfloat162"] == "__hip_bfloat162"
    assert m.names["__nv_bfloat16_raw"] == "__hip_bfloat16_raw"
    assert old.unsupported_reason("__nv_bfloat162") == "added in HIP 5.7 (target 5.2)"
    # same names in hip/hip_bf16.h: supported, not renamed
    assert m.unsupported_reason("__float2bfloat16") is None and "__float2bfloat16" not in m.names
    assert old.unsupported_reason("__float2bfloat16") == "added in HIP 5.7 (target 5.2)"
    # fp8: hip_fp8.h came in 6.2 with the FNUZ types only; the OCP types in 6.3
    assert m.names["__nv_fp8_e4m3"] == "__hip_fp8_e4m3"
    assert m62.unsupported_reason("__nv_fp8_e4m3") == "added in HIP 6.3 (target 6.2)"
    assert m62.names["__NV_SATFINITE"] == "__HIP_SATFINITE"
    assert m62.names["__nv_cvt_float_to_fp8"] == "__hip_cvt_float_to_fp8"
    assert m.unsupported_reason("__nv_fp4_e2m1") == "no HIP equivalent"
    assert m.unsupported_reason("__nv_fp8_e8m0") == "no HIP equivalent"
    # __half keeps its name (device.tsv), and so do the CUDA 13 aliases' targets
    for name in ("__half", "__half2", "__float2half", "__half2float"):
        assert m.lookup(name).hip == name and name not in m.names
    assert m.names["nv_half"] == "__half"
    assert m.unsupported_reason("make_half2") is None


def test_nv_bfloat16_row():
    assert _table("numeric_types")["__nv_bfloat16"]["hip"] == "__hip_bfloat16"
    assert _table("numeric_types")["__nv_bfloat16"]["hip_added"] == "5.7.0"


def test_nv_bfloat16_maps_to_hip_bfloat16():
    """HIPIFY's row (device.tsv) says hip_bfloat16, the older type; overrides.tsv replaces it."""
    m, m57, old = load(), load((5, 7)), load((5, 6))
    assert m.names["__nv_bfloat16"] == "__hip_bfloat16"
    assert m57.names["__nv_bfloat16"] == "__hip_bfloat16"
    assert old.unsupported_reason("__nv_bfloat16") == "added in HIP 5.7 (target 5.6)"
    assert m.lookup("__nv_bfloat16").library == "device"  # the replaced row's library
    # the header comes with the type: hip/hip_bf16.h is in 5.6, __hip_bfloat16 only from 5.7
    assert m57.includes["cuda_bf16.h"] == "hip/hip_bf16.h" and "cuda_bf16.h" not in old.includes
    text = _port("#include <cuda_bf16.h>\n__nv_bfloat16 f(float x) { return __float2bfloat16(x); }\n").data
    assert text.decode() == ("#include <hip/hip_bf16.h>\n"
                             "__hip_bfloat16 f(float x) { return __float2bfloat16(x); }\n")


# ---------------------------------------------------------------------------------------------
# cooperative groups


def test_cooperative_groups():
    m, m62, old = load(), load((6, 2)), load((5, 2))
    for name in ("memcpy_async", "wait_prior", "labeled_partition", "this_cluster", "cluster_group",
                 "invoke_one", "block_tile_memory", "reduce_update_async"):
        assert m.unsupported_reason(name) == "no HIP equivalent", name
        assert m.lookup(name).risk == "cooperative-groups"
    assert m.unsupported_reason("binary_partition") is None
    assert m62.unsupported_reason("binary_partition") == "added in HIP 6.3 (target 6.2)"
    assert old.unsupported_reason("meta_group_rank") == "added in HIP 5.7 (target 5.2)"
    # HIP has the rest under the same names: no rows (they would only add lexer noise)
    for name in ("this_thread_block", "tiled_partition", "thread_block_tile", "this_grid",
                 "grid_group", "sync", "coalesced_threads", "cooperative_groups", "reduce", "wait"):
        assert m.lookup(name) is None, name
    assert m.includes["cooperative_groups.h"] == "hip/hip_cooperative_groups.h"


# ---------------------------------------------------------------------------------------------
# macros


def test_macros():
    m = load()
    assert m.names["__CUDACC__"] == "__HIPCC__"  # driver.tsv
    assert m.names["__CUDACC_RTC__"] == "__HIPCC_RTC__"
    assert m.names["__CUDA_RUNTIME_H__"] == "HIP_INCLUDE_HIP_HIP_RUNTIME_H"
    assert m.names["__CUDA_FP16_H__"] == "HIP_INCLUDE_HIP_HIP_FP16_H"
    assert m.names["CUDA_API_PER_THREAD_DEFAULT_STREAM"] == "HIP_API_PER_THREAD_DEFAULT_STREAM"
    assert m.names["__CUDA_NO_HALF_OPERATORS__"] == "__HIP_NO_HALF_OPERATORS__"
    assert "__CUDA_BF16_H__" not in load((5, 2)).names
    for name in ("__CUDA_ARCH__", "__CUDA_ARCH_LIST__", "__NVCC__"):
        assert name not in m.names and m.lookup(name).risk == "arch-macro"
        assert "__HIP" in m.lookup(name).note
    for name in ("CUDA_VERSION", "CUDART_VERSION", "__CUDACC_VER_MAJOR__"):
        assert name not in m.names and m.lookup(name).risk == "version-macro"
    assert "USE_CUDA" not in m.entries  # the project's own macro
    # HIP on AMD has no callback calling-convention macro: a finding, with what to do.
    assert "CUDART_CB" not in m.names and m.lookup("CUDART_CB").risk == "unsupported-api"
    assert "define CUDART_CB empty" in m.lookup("CUDART_CB").note
    # nor a __grid_constant__ kernel-parameter annotation: a by-value parameter needs none
    assert "__grid_constant__" not in m.names and m.lookup("__grid_constant__").risk == "unsupported-api"
    assert "Define __grid_constant__ empty for HIP builds" in m.lookup("__grid_constant__").note


# The guards of CUDA's type headers, mapped to the guards of the HIP headers that
# hip/hip_runtime.h includes: code that tests them (cuda-samples' helper_cuda.h defines
# checkCudaErrors under `#ifdef __DRIVER_TYPES_H__`) stays compiled once the runtime is in.
TYPE_GUARDS = ("__DRIVER_TYPES_H__", "__VECTOR_TYPES_H__", "__TEXTURE_TYPES_H__", "__SURFACE_TYPES_H__",
               "__CHANNEL_DESCRIPTOR_H__", "__LIBRARY_TYPES_H__")
_WITH_THE_RUNTIME = "which hip/hip_runtime.h includes"


def test_type_header_guards_are_mapped():
    rows = _table("macros")
    with_runtime = {name for name, r in rows.items() if _WITH_THE_RUNTIME in r["note"]}
    assert with_runtime == set(TYPE_GUARDS)
    m, old = load(), load((5, 2))
    for name in TYPE_GUARDS:
        assert m.names[name] == old.names[name] == rows[name]["hip"]
        assert rows[name]["hip"].startswith("HIP_INCLUDE_HIP_") and rows[name]["section"] == "Header guards"


@requires_hipcc
def test_type_header_guards_are_defined_by_the_hip_runtime(tmp_path):
    rows = _table("macros")
    checks = "".join(f"#ifndef {rows[n]['hip']}\n#error {n} -> {rows[n]['hip']}: not defined\n#endif\n"
                     for n in TYPE_GUARDS)
    source = tmp_path / "guards.hip"
    source.write_text("#include <hip/hip_runtime.h>\n" + checks, encoding="utf-8")
    proc = hipcc_syntax_check(source)
    assert proc.returncode == 0, describe(proc)


# The macros code tests to know a CUDA library's header came in (cuda-samples' helper_cuda.h
# defines its cuBLAS/cuFFT/cuSPARSE/cuSOLVER/cuRAND error strings under them): the HIP
# library header the port includes instead must define the mapped name.
LIBRARY_GUARDS = [("cublas_v2.h", "CUBLAS_API_H_"), ("cufft.h", "_CUFFT_H_"), ("cusparse.h", "CUSPARSEAPI"),
                  ("cusolverDn.h", "CUSOLVER_COMMON_H_"), ("curand.h", "CURAND_H_"), ("curand.h", "CURANDAPI")]


def test_library_guards_are_the_tables_whole_section():
    rows = _table("macros")
    assert {n for n, r in rows.items() if r["section"] == "Library guards"} == {g for _, g in LIBRARY_GUARDS}


@pytest.mark.parametrize("header, guard", LIBRARY_GUARDS)
def test_library_guards_follow_the_header(tmp_path, header, guard):
    code = f"#include <{header}>\n#ifndef {guard}\n#error the guard is not defined\n#endif\n"
    text = port_source(code.encode(), "t.cpp", "cpp", Settings(target_hip=(5, 2))).data.decode()
    hip_header = re.match(r"#include <([^>]+)>", text).group(1)
    mapped = _table("macros")[guard]["hip"]
    assert text.splitlines()[1:] == [f"#ifndef {mapped}", "#error the guard is not defined", "#endif"]
    if find_hipcc() is None or find_hip_header(hip_header) is None:
        pytest.skip(f"{hip_header} is not installed here, or hipcc is not: the rename is checked as text")
    source = tmp_path / "guard.hip"
    source.write_text(text, encoding="utf-8")
    proc = hipcc_syntax_check(source)
    assert proc.returncode == 0, describe(proc)


def test_macros_port():
    code = ("#if defined(__CUDACC__) && !defined(__CUDACC_RTC__)\n#endif\n"
            "#if CUDA_VERSION >= 11000 && __CUDA_ARCH__ >= 800\n#endif\n")
    text = _port(code).data.decode()
    assert "defined(__HIPCC__) && !defined(__HIPCC_RTC__)" in text
    assert "CUDA_VERSION >= 11000 && __CUDA_ARCH__ >= 800" in text
    cb = _port("void CUDART_CB done(cudaStream_t s, cudaError_t e, void* p);\n")
    assert b"void CUDART_CB done(hipStream_t s, hipError_t e, void* p);" in cb.data
    assert [f.rule for f in cb.result.findings if "CUDART_CB" in f.message] == ["HP501"]


# ---------------------------------------------------------------------------------------------
# device intrinsics


def test_device_math():
    m, old = load(), load((5, 2))
    for name in ("__dp4a", "__nanosleep", "__isGlobal", "__cvta_generic_to_shared",
                 "__reduce_add_sync", "__vimax3_s32", "__u128AtomicCAS", "atomicInc_system"):
        assert m.unsupported_reason(name) == "no HIP equivalent", name
    assert m.names["atomicAdd_block"] == "atomicAdd"
    assert m.names["atomicCAS_block"] == "atomicCAS"
    assert m.unsupported_reason("__match_any_sync") is None
    assert old.unsupported_reason("__match_any_sync") == "added in HIP 6.2 (target 5.2)"
    assert m.lookup("__match_any_sync").risk == "warp-mask"
    assert m.lookup("nvcuda").risk == "tensor-core"
    # what the generated device table already has is not repeated
    device = _table("device_math")
    for name in ("__fdividef", "__expf", "__saturatef", "__ldg", "__funnelshift_l", "__trap",
                 "__brev", "__clz", "__popc"):
        assert name not in device and m.lookup(name).library == "device", name


# ---------------------------------------------------------------------------------------------
# Thrust, and the qualified rows (thrust.tsv, cg.tsv, nvtx.tsv)


def test_thrust_plain():
    m = load()
    assert m.names["THRUST_DEVICE_SYSTEM_CUDA"] == "THRUST_DEVICE_SYSTEM_HIP"
    assert m.names["__THRUST_HAS_CUDART__"] == "__THRUST_HAS_HIPRT__"
    assert m.includes["thrust/system/cuda/execution_policy.h"] == "thrust/system/hip/execution_policy.h"


def _qualified_rows() -> dict[str, tuple[str, dict]]:
    return {name: (stem, r) for stem in HAND for name, r in _table(stem).items() if QUALIFIED.match(name)}


def test_qualified_rows_are_where_expected():
    rows = _qualified_rows()
    assert {stem for stem, _ in rows.values()} == {"cg", "nvtx", "thrust"}
    for name, (stem, r) in rows.items():
        assert name.split("::")[0] == {"cg": "cooperative_groups", "nvtx": "nvtx3", "thrust": "thrust"}[stem]
        assert not r["hip"] or QUALIFIED.match(r["hip"]), r
        assert r["kind"] in KINDS and (r["hip"] or r["risk"] in CATEGORIES)


def test_qualified_rows_load():
    new, old = load(), load((5, 2))
    assert new.names["thrust::cuda"] == "thrust::hip"
    assert new.names["thrust::system::cuda"] == "thrust::system::hip"
    assert new.names["thrust::cuda_cub"] == "thrust::hip_rocprim"
    assert new.names["thrust::cuda::par_nosync"] == "thrust::hip::par_nosync"
    assert "thrust::cuda::par_nosync" not in old.names and "thrust::cuda" in old.names
    assert old.unsupported_reason("thrust::cuda::par_nosync") == "added in HIP 5.3 (target 5.2)"
    assert new.unsupported_reason("thrust::cuda::universal_host_pinned_vector") == "no HIP equivalent"
    assert new.unsupported_reason("cooperative_groups::reduce") == "no HIP equivalent"
    assert new.lookup("cooperative_groups::reduce").risk == "cooperative-groups"
    assert new.unsupported_reason("nvtx3::scoped_range") == "no HIP equivalent"
    assert new.target_hip == (6, 3)
    counts = library_counts(new)
    for stem in ("cg", "nvtx", "thrust"):
        assert sum(counts[stem].values()) == len(_table(stem)), stem


def test_qualified_rows_port_to_their_hip_names():
    """Each mapped qualified row, written out as code, becomes its HIP name: the renamer replaces
    the last word, and the qualifier's own rows (`thrust::cuda`) the words before it."""
    for name, (stem, r) in _qualified_rows().items():
        if not r["hip"]:
            continue
        for prefix in ("", "::"):
            code = f"auto x = {prefix}{name};\n"
            assert _port(code).data.decode() == f"auto x = {prefix}{r['hip']};\n", (stem, name)


@pytest.mark.parametrize("code, expected", [
    ("auto p = thrust::cuda::par;", "auto p = thrust::hip::par;"),
    ("auto p = ::thrust::cuda::par;", "auto p = ::thrust::hip::par;"),
    ("thrust::fill(thrust::cuda::par_nosync, p, p + n, 0);",
     "thrust::fill(thrust::hip::par_nosync, p, p + n, 0);"),
    ("using namespace thrust::system::cuda;", "using namespace thrust::system::hip;"),
    ("auto e = thrust::system::cuda::par;", "auto e = thrust::system::hip::par;"),
    ("auto &c = thrust::system::cuda_category();", "auto &c = thrust::system::hip_category();"),
    ("auto q = thrust::cuda_cub::par_nosync;", "auto q = thrust::hip_rocprim::par_nosync;"),
    # not these namespaces: untouched
    ("cuda::std::atomic<int> a; int m = cuda::std::max(1, 2);",
     "cuda::std::atomic<int> a; int m = cuda::std::max(1, 2);"),
    ("auto s = at::cuda::getCurrentCUDAStream();", "auto s = at::cuda::getCurrentCUDAStream();"),
    ("auto p = mylib::cuda::par; int cuda = par;", "auto p = mylib::cuda::par; int cuda = par;"),
    ("cooperative_groups::reduce(t, x, cooperative_groups::plus<int>());",
     "cooperative_groups::reduce(t, x, cooperative_groups::plus<int>());"),
])
def test_qualified_port(code, expected):
    out = _port(code + "\n")
    assert out.data.decode() == expected + "\n"
    # Only known qualified rows without a HIP form are reported, by their full names.
    m = load()
    for u in out.result.unmapped:
        assert "::" in u["name"] and m.unsupported_reason(u["name"]) is not None, u


# ---------------------------------------------------------------------------------------------
# includes


def test_includes_added():
    m, old = load(), load((5, 2))
    for header in ("cuda/pipeline", "cuda/barrier", "cuda/annotated_ptr", "mma.h", "cuda_fp4.h",
                   "cuda_device_runtime_api.h", "nvtx3/nvtx3.hpp", "nvToolsExtSync.h"):
        assert header in m.include_library and header not in m.includes, header
    assert m.includes["cusparseLt.h"] == "hipsparselt/hipsparselt.h"
    assert "cusparseLt.h" not in old.includes


@requires_hipcc
def test_driver_functions_header_brings_the_make_helpers(tmp_path):
    # HIPIFY does not map driver_functions.h; the make_hip* helpers are in hip_runtime_api.h.
    code = ("#include <driver_functions.h>\n"
            "cudaExtent e = make_cudaExtent(1, 2, 3);\ncudaPos p = make_cudaPos(0, 0, 0);\n"
            "cudaPitchedPtr q = make_cudaPitchedPtr(nullptr, 16, 4, 4);\n")
    text = port_source(code.encode(), "t.cpp", "cpp", Settings(target_hip=(5, 2))).data.decode()
    assert text.startswith("#include <hip/hip_runtime_api.h>\nhipExtent e = make_hipExtent(1, 2, 3);")
    source = tmp_path / "extent.cpp"
    source.write_text(text, encoding="utf-8")
    proc = hipcc_syntax_check(source)
    assert proc.returncode == 0, describe(proc)


# ---------------------------------------------------------------------------------------------
# PyTorch's extra pairs and their import script


def test_torch_extra():
    m, old = load(), load((5, 2))
    rows = _table("torch_extra")
    assert rows and all(r["note"].startswith("from torch/utils/hipify (torch ") for r in rows.values())
    assert all(r["hip"] for r in rows.values())
    assert m.names["cusparseLtMatmul"] == "hipsparseLtMatmul"
    assert old.unsupported_reason("cusparseLtMatmul") == "added in HIP 6.0 (target 5.2)"
    assert m.names["curand4"] == "hiprand4"
    assert m.names["cudaStreamGetCaptureInfo_v2"] == "hipStreamGetCaptureInfo_v2"
    excluded = _script().EXCLUDED
    for name in ("cublasSdotBatched", "MAJOR_VERSION", "CUBLAS_DATA_FLOAT", "nvmlDevice_t"):
        assert name in excluded and name not in rows
    # HIPIFY rows stay as HIPIFY has them: torch's pairs for names HIPIFY lists are not imported
    assert m.lookup("cudaErrorInvalidTexture").library == "runtime"
    assert m.unsupported_reason("cudaErrorInvalidTexture") == "no HIP equivalent"


def _installed_torch_file():
    try:
        return _script().find_mappings_file()
    except (ImportError, ValueError):
        return None


@pytest.mark.skipif(_installed_torch_file() is None, reason="torch is not installed")
def test_torch_script_reproduces_the_table(tmp_path):
    script = _script()
    path = _installed_torch_file()
    version = script.torch_version(path)
    recorded = re.search(r"\(torch ([^)]+)\)", (TABLES / "torch_extra.tsv").read_text().split("\n")[0])
    if version != recorded.group(1):
        pytest.skip(f"torch {version} installed, the table comes from torch {recorded.group(1)}")
    out = tmp_path / "torch_extra.tsv"
    count, dropped = script.import_torch(path, TABLES, out, version)
    assert out.read_bytes() == (TABLES / "torch_extra.tsv").read_bytes(), \
        "rerun python scripts/import_torch_mappings.py"
    assert count == len(_table("torch_extra"))
    assert set(script.EXCLUDED) <= set(dropped), "an EXCLUDED entry no longer matches torch's list"


FAKE_CONSTANTS = "CONV_TYPE = 33\nAPI_RUNTIME = 38\nHIP_UNSUPPORTED = 47\nAPI_PYTORCH = 1337\n"
FAKE_NEW = '''import collections
CUDA_IDENTIFIER_MAP = collections.OrderedDict([
    ("cudaMalloc", "hipMalloc"),
    ("cudaNewThing", "hipNewThing"),
    ("cuda::std::max", "::max"),
    ("THCudaCheck", "THHipCheck"),
    ("cublasSdotBatched", "hipblasSdotBatched"),
    ("curand_ORDERING_X", "HIPRAND_ORDERING_X"),
])
CUDA_TYPE_NAME_MAP = collections.OrderedDict([
    ("cusparseLtHandle_t", "hipsparseLtHandle_t"), ("cudaNewThing", "hipOther")])
CUDA_SPECIAL_MAP = collections.OrderedDict([("CUSPARSE_COMPUTE_16F", "HIPSPARSELT_COMPUTE_16F")])
PYTORCH_SPECIFIC_MAPPINGS = collections.OrderedDict([("USE_CUDA", "USE_ROCM")])
'''
FAKE_OLD = '''import collections
from .constants import *
CUDA_IDENTIFIER_MAP = collections.OrderedDict([
    ("cudaOldThing", ("hipOldThing", CONV_TYPE, API_RUNTIME)),
    ("cudaGone", ("hipGone", CONV_TYPE, API_RUNTIME, HIP_UNSUPPORTED)),
    ("cudaTorchOwn", ("hipTorchOwn", CONV_TYPE, API_PYTORCH)),
])
'''


@pytest.mark.parametrize("source, expected", [
    (FAKE_NEW, ["CUSPARSE_COMPUTE_16F", "cudaNewThing", "cusparseLtHandle_t"]),
    (FAKE_OLD, ["cudaOldThing"]),
])
def test_torch_script_filters(tmp_path, source, expected):
    """Without torch: a list in either of torch's formats, against a one-table folder."""
    script = _script()
    hipify = tmp_path / "torch" / "utils" / "hipify"
    hipify.mkdir(parents=True)
    (hipify / "cuda_to_hip_mappings.py").write_text(source)
    (hipify / "constants.py").write_text(FAKE_CONSTANTS)
    (tmp_path / "torch" / "version.py").write_text("__version__ = '9.9.0+cpu'\n")
    tables = tmp_path / "tables"
    tables.mkdir()
    (tables / "runtime.tsv").write_text("# hand-written test\ncuda\thip\ncudaMalloc\thipMalloc\n")
    (tables / "includes.tsv").write_text("# hand-written test\ncuda\thip\ncudaNewThing\tx\n")
    out = tables / "torch_extra.tsv"
    out.write_text("# hand-written old\ncuda\thip\ncudaOldThing\thipOldThing\n")  # not "known"
    path = hipify / "cuda_to_hip_mappings.py"
    assert script.torch_version(path) == "9.9.0"
    assert script.main([str(path), "--tables", str(tables), "-q"]) == 0
    first = out.read_bytes()
    _, header, rows = _rows(out)
    assert header == NAME_COLUMNS
    assert [r["cuda"] for r in rows] == expected
    assert all(r["note"].startswith("from torch/utils/hipify (torch 9.9.0)") for r in rows)
    if "cudaNewThing" in expected:
        by = {r["cuda"]: r for r in rows}
        assert by["cudaNewThing"]["hip"] == "hipNewThing"  # the first spelling wins
        assert by["cusparseLtHandle_t"]["hip_added"] == "6.0.0"
        assert by["cusparseLtHandle_t"]["kind"] == "type"
        assert by["CUSPARSE_COMPUTE_16F"]["kind"] == "enum"
    assert script.main([str(path), "--tables", str(tables), "-q"]) == 0
    assert out.read_bytes() == first, "the output depends only on the inputs"
    assert "_hipport_torch_hipify" not in sys.modules


def test_torch_script_missing_file(tmp_path, capsys):
    assert _script().main([str(tmp_path / "nowhere.py"), "--tables", str(tmp_path)]) == 2
    assert "not found" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------
# documentation


def test_readme_describes_every_table():
    readme = (TABLES / "README.md").read_text(encoding="utf-8")
    for stem in HAND:
        assert f"`{stem}.tsv`" in readme, stem
    assert "thrust::cuda::par" in readme and "::thrust::" in readme
