"""Argument-aware rewrites (hipport/rewrite/calls.py): tables of (input, expected) per target,
plus inputs that must come back unchanged."""

from __future__ import annotations

import re

import pytest

from hipport.analysis import analyze, context_for
from hipport.config import Settings
from hipport.mappings import load
from hipport.pipeline import port_source
from hipport.rewrite.calls import NAMESPACE_ONLY, UNTAG, Site, kept_argument, parse_call, ports_unmapped, transform_for


def port(code: str, target: str | None = None) -> str:
    settings = Settings(target_hip=tuple(int(x) for x in target.split(".")) if target else None)
    # A .cuh header: no runtime include is added unless device code is present.
    out = port_source(code.encode(), "t.cpp", "cpp", settings).data.decode()
    return out


def test_every_transform_named_in_the_tables_exists():
    for target in ((5, 2), None):
        m = load(target_hip=target)
        named = set(m.transforms.values()) - {NAMESPACE_ONLY, UNTAG}
        for spec in named:
            assert callable(transform_for(spec)), spec  # raises ValueError for an unknown name
        assert "cudaEventCreate" in m.transforms


@pytest.mark.parametrize("spec, message", [
    ("no_such_transform", "unknown transform 'no_such_transform'"),
    ("defaults(x, 0)", "bad arguments"),
    ("symbol()", "bad arguments"),
    ("cast(1)", "bad arguments"),
    ("nope(1)", "unknown transform nope(...)"),
    ("symbol(1) + ", "not a transform"),
    ("warp_sync(1)", "unknown transform warp_sync(...)"),
    ("drop_null(3)", "needs counts above the index"),
    ("drop_null(3, 3)", "needs counts above the index"),
])
def test_a_transform_cell_that_names_nothing_is_refused(spec, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        transform_for(spec)


def test_parse_call_spans():
    data = b"f( a, g(b, c) , \"x,y\" ,{1,2})"
    call = parse_call(data, 1)
    assert [data[s:e] for s, e in call.args] == [b"a", b"g(b, c)", b'"x,y"', b"{1,2}"]
    assert parse_call(b"f ()", 1).args == []
    assert parse_call(b"f;", 1) is None
    assert parse_call(b"f(a;", 1) is None


@pytest.mark.parametrize("code, expected", [
    ("cudaEventCreate(&e);", "hipEventCreate(&e);"),
    ("cudaEventCreate(&e, cudaEventDisableTiming);", "hipEventCreateWithFlags(&e, hipEventDisableTiming);"),
    ("cudaMallocHost(&p, n);", "hipHostMalloc(&p, n, hipHostMallocDefault);"),
    ("cudaMallocHost(&p, n, 0);", "hipHostMalloc(&p, n, 0);"),
    ("cudaStreamWaitEvent(s, e);", "hipStreamWaitEvent(s, e, 0);"),
    ("cudaStreamWaitEvent(s, e, flags);", "hipStreamWaitEvent(s, e, flags);"),
    ("cudaMemcpyToSymbol(table, src, n);", "hipMemcpyToSymbol(HIP_SYMBOL(table), src, n);"),
    ("cudaMemcpyToSymbol(HIP_SYMBOL(table), src, n);", "hipMemcpyToSymbol(HIP_SYMBOL(table), src, n);"),
    ("cudaMemcpyFromSymbol(dst, ns::table, n);", "hipMemcpyFromSymbol(dst, HIP_SYMBOL(ns::table), n);"),
    ("cudaGetSymbolAddress(&p, counter);", "hipGetSymbolAddress(&p, HIP_SYMBOL(counter));"),
    ("cudaFuncSetAttribute(k<float>, cudaFuncAttributeMaxDynamicSharedMemorySize, s);",
     "hipFuncSetAttribute(reinterpret_cast<const void*>(k<float>), hipFuncAttributeMaxDynamicSharedMemorySize, s);"),
    ("cudaFuncGetAttributes(&a, (void*)k);", "hipFuncGetAttributes(&a, (void*)k);"),
    ("cudaGraphInstantiate(&x, g, 0);", "hipGraphInstantiateWithFlags(&x, g, 0);"),
    ("cudaGraphInstantiate(&x, g, nullptr, nullptr, 0);", "hipGraphInstantiate(&x, g, nullptr, nullptr, 0);"),
    ("cudaGraphInstantiate(&x, g);", "hipGraphInstantiateWithFlags(&x, g, 0);"),
    # CUDA's C++ API takes T** where HIP takes void**: a cast, parenthesised around anything
    # but a plain (address of a) name, member or element.
    ("cudaHostAlloc(&p, n, cudaHostAllocMapped);", "hipHostAlloc((void **)&p, n, hipHostMallocMapped);"),
    ("cudaHostAlloc((void**)&p, n, 0);", "hipHostAlloc((void**)&p, n, 0);"),
    ("cudaHostAlloc(reinterpret_cast<void**>(&p), n, 0);", "hipHostAlloc(reinterpret_cast<void**>(&p), n, 0);"),
    ("cudaHostGetDevicePointer(&s->dev, s->host, 0);", "hipHostGetDevicePointer((void **)&s->dev, s->host, 0);"),
    ("cudaHostGetDevicePointer(&bufs[i].dev, h, 0);", "hipHostGetDevicePointer((void **)&bufs[i].dev, h, 0);"),
    ("cudaMallocPitch(pp, &pitch, w, h);", "hipMallocPitch((void **)pp, &pitch, w, h);"),
    ("cudaMallocPitch(big ? &a : &b, &pitch, w, h);", "hipMallocPitch((void **)(big ? &a : &b), &pitch, w, h);"),
    # NVRTC's `const char * const *` takes a `char **`; hipRTC's `const char **` needs the cast.
    ("nvrtcCompileProgram(prog, n, opts);", "hiprtcCompileProgram(prog, n, (const char **)opts);"),
    ("nvrtcCompileProgram(prog, n, opts.data());", "hiprtcCompileProgram(prog, n, (const char **)(opts.data()));"),
    ("nvrtcCompileProgram(prog, n, (const char**)opts);", "hiprtcCompileProgram(prog, n, (const char**)opts);"),
    ("nvrtcCompileProgram(prog, 0, NULL);", "hiprtcCompileProgram(prog, 0, NULL);"),
    ("nvrtcCreateProgram(&p, src, \"k.cu\", 1, hdrs, names);",
     "hiprtcCreateProgram(&p, src, \"k.cu\", 1, (const char **)hdrs, (const char **)names);"),
    ("nvrtcCreateProgram(&p, src, name, 0, NULL, nullptr);", "hiprtcCreateProgram(&p, src, name, 0, NULL, nullptr);"),
    # A name declared with the type already needs no cast; `const char *const *` does.
    ("const char* opts[] = {\"-G\"}; nvrtcCompileProgram(p, 1, opts);",
     "const char* opts[] = {\"-G\"}; hiprtcCompileProgram(p, 1, opts);"),
    ("const char** o; nvrtcCompileProgram(p, 1, o);", "const char** o; hiprtcCompileProgram(p, 1, o);"),
    ("const char *const *o; nvrtcCompileProgram(p, 1, o);",
     "const char *const *o; hiprtcCompileProgram(p, 1, (const char **)o);"),
    # Defaulted trailing arguments HIP requires: only the missing ones are added.
    ("cudaMalloc3DArray(&a, &d, e);", "hipMalloc3DArray(&a, &d, e, 0);"),
    ("cudaMalloc3DArray(&a, &d, e, f);", "hipMalloc3DArray(&a, &d, e, f);"),
    ("cudaGraphInstantiateWithFlags(&x, g);", "hipGraphInstantiateWithFlags(&x, g, 0);"),
    ("cudaWaitExternalSemaphoresAsync(s, p, 1);", "hipWaitExternalSemaphoresAsync(s, p, 1, 0);"),
    # Two transforms on one call: the kernel cast and the defaults.
    ("cudaLaunchCooperativeKernel(k, g, b, a);",
     "hipLaunchCooperativeKernel(reinterpret_cast<const void*>(k), g, b, a, 0, 0);"),
    ("cudaLaunchCooperativeKernel(k, g, b, a, smem);",
     "hipLaunchCooperativeKernel(reinterpret_cast<const void*>(k), g, b, a, smem, 0);"),
    ("cudaLaunchCooperativeKernel(k, g, b, a, smem, s);",
     "hipLaunchCooperativeKernel(reinterpret_cast<const void*>(k), g, b, a, smem, s);"),
    ("cuCtxCreate(&c, nullptr, 0, dev);", "hipCtxCreate(&c, 0, dev);"),
    ("cuCtxCreate(&c, 0, dev);", "hipCtxCreate(&c, 0, dev);"),
    ("cuCtxCreate(&c, &params, 0, dev);", "hipCtxCreate(&c, &params, 0, dev);"),
    # CUDA 13's edge data: dropped where null, at the form's own argument count only.
    ("cudaGraphAddDependencies(g, &a, &b, NULL, 1);", "hipGraphAddDependencies(g, &a, &b, 1);"),
    ("cudaGraphAddDependencies(g, &a, &b, 1);", "hipGraphAddDependencies(g, &a, &b, 1);"),
    ("cudaGraphAddDependencies(g, &a, &b, &edge, 1);", "hipGraphAddDependencies(g, &a, &b, &edge, 1);"),
    ("cudaGraphNodeGetDependencies(n, deps, 0, &count);", "hipGraphNodeGetDependencies(n, deps, &count);"),
    ("cuGraphAddNode(&n, g, deps, nullptr, k, &p);", "hipGraphAddNode(&n, g, deps, k, &p);"),
    ("cudaStreamGetCaptureInfo(s, &st);", "hipStreamGetCaptureInfo_v2(s, &st);"),
    ("cudaStreamGetCaptureInfo(s, &st, &id);", "hipStreamGetCaptureInfo_v2(s, &st, &id);"),
    ("cudaStreamGetCaptureInfo(s, &st, 0, &g, &d, /* edges */ NULL, &n);",
     "hipStreamGetCaptureInfo_v2(s, &st, 0, &g, &d, &n);"),
    ("cudaStreamUpdateCaptureDependencies(s, d, NULL, 1, f);", "hipStreamUpdateCaptureDependencies(s, d, 1, f);"),
    ("cudaGraphGetEdges(g, f, t, NULL // edges\n, &n);", "hipGraphGetEdges(g, f, t, &n);"),
    ("cudaStreamUpdateCaptureDependencies(s, d, 0, f);", "hipStreamUpdateCaptureDependencies(s, d, 0, f);"),
    # Four arguments: CUDA 13's form with the flags defaulted only where a pointer is spelled.
    ("cudaStreamUpdateCaptureDependencies(s, d, NULL, 1);", "hipStreamUpdateCaptureDependencies(s, d, 1);"),
    ("cudaStreamUpdateCaptureDependencies(s, d, nullptr, n);", "hipStreamUpdateCaptureDependencies(s, d, n);"),
    ("cudaStreamUpdateCaptureDependencies(s, d, 1, flags);", "hipStreamUpdateCaptureDependencies(s, d, 1, flags);"),
    # CUDA 12.3's explicit names of the same forms.
    ("cudaGraphAddDependencies_v2(g, &a, &b, NULL, 1);", "hipGraphAddDependencies(g, &a, &b, 1);"),
    ("cudaStreamUpdateCaptureDependencies_v2(s, d, 0, n);", "hipStreamUpdateCaptureDependencies(s, d, n);"),
    ("cudaStreamGetCaptureInfo_v3(s, &st, &id, &g, &d, nullptr);", "hipStreamGetCaptureInfo_v2(s, &st, &id, &g, &d);"),
    ("cuGraphNodeGetDependencies_v2(n, d, NULL, &count);", "hipGraphNodeGetDependencies(n, d, &count);"),
    ("cub::DeviceReduce::Sum(t, n, a, b, k); ::cub::WarpReduce<int> w;",
     "hipcub::DeviceReduce::Sum(t, n, a, b, k); ::hipcub::WarpReduce<int> w;"),
    ("int cub = 1; mylib::cub::f(); s.cub = cub;", "int cub = 1; mylib::cub::f(); s.cub = cub;"),
    # A struct tag whose HIP name is a typedef: `struct` goes; CUDA's own tag declared is left.
    ("struct cudaGraphicsResource *r;", "hipGraphicsResource *r;"),
    ("void f(struct  cudaLaunchParams* p, const struct cudaGraphicsResource **rs);",
     "void f(hipLaunchParams* p, const hipGraphicsResource **rs);"),
    ("cudaGraphicsResource *r; cudaGraphicsResource_t t;", "hipGraphicsResource *r; hipGraphicsResource_t t;"),
    ("struct cudaGraphicsResource;", "struct cudaGraphicsResource;"),
    ("struct cudaDeviceProp p;", "struct hipDeviceProp_t p;"),
    ("mystruct cudaGraphicsResource *r;", "mystruct hipGraphicsResource *r;"),
    # Not calls, or not CUDA's: the plain rename or nothing.
    ("auto f = &cudaEventCreate;", "auto f = &hipEventCreate;"),
    ("obj.cudaEventCreate(&e, 1);", "obj.cudaEventCreate(&e, 1);"),
    ("// cudaEventCreate(&e, 1);", "// cudaEventCreate(&e, 1);"),
])
def test_call_transforms(code, expected):
    assert port(code) == expected


@pytest.mark.parametrize("code, new, old", [
    ("v = __shfl_down_sync(0xffffffff, v, 1);", "v = __shfl_down_sync(0xffffffffffffffffULL, v, 1);",
     "v = __shfl_down(v, 1);"),
    ("v = __shfl_sync(mask, v, 0, 16);", "v = __shfl_sync(mask, v, 0, 16);", "v = __shfl(v, 0, 16);"),
    ("b = __ballot_sync(~0u, p);", "b = __ballot_sync(0xffffffffffffffffULL, p);", "b = __ballot(p);"),
    ("b = __all_sync(FULL, p);", "b = __all_sync(FULL, p);", "b = __all(p);"),
    ("m = __activemask();", "m = __activemask();", "m = __ballot(1);"),
    ("__syncwarp(0xffffffff);", "__builtin_amdgcn_wave_barrier();", "__builtin_amdgcn_wave_barrier();"),
    ("__syncwarp();", "__builtin_amdgcn_wave_barrier();", "__builtin_amdgcn_wave_barrier();"),
])
def test_warp_intrinsics_by_target(code, new, old):
    assert port(code, "6.2") == new
    assert port(code, "5.2") == old


@pytest.mark.parametrize("code, new, old", [
    ("cuGetErrorString(e, &s);", "hipDrvGetErrorString(e, &s);", "(*(&s) = hipGetErrorString(e), hipSuccess);"),
    ("r = cuGetErrorName(e, &p->name);", "r = hipDrvGetErrorName(e, &p->name);",
     "r = (*(&p->name) = hipGetErrorName(e), hipSuccess);"),
    # An out-argument with an index is not copied: left for unsupported-api below 5.4.
    ("cuGetErrorString(e, &tab[i]);", "hipDrvGetErrorString(e, &tab[i]);", "cuGetErrorString(e, &tab[i]);"),
])
def test_driver_error_strings_by_target(code, new, old):
    assert port(code, "6.2") == new
    assert port(code, "5.2") == old


def test_only_returned_through_ports_a_call_its_row_does_not_map():
    assert ports_unmapped("returned_through(1, hipGetErrorString)")
    assert not ports_unmapped("drop_null(3, 5)") and not ports_unmapped("function(0) + defaults(4, 0, 0)")
    site = Site(b"f(e, &s)", "f", "", parse_call(b"f(e, &s)", 1), (5, 2))
    assert transform_for("returned_through(1, g)")(site).name == "(*(&s) = g"
    assert not transform_for("defaults(2, 0)")(site).edits  # the others leave it whole


def test_unsupported_api_reports_only_the_error_string_calls_left():
    code = b"#include <cuda.h>\nvoid f(CUresult e, const char** tab) {\n  const char* s;\n" \
           b"  cuGetErrorString(e, &s);\n  cuGetErrorString(e, &tab[1]);\n}\n"
    found = {t: [f.line for f in analyze(context_for(code, "f.cpp", "cpp", Settings(target_hip=t))) if f.rule == "HP501"]
             for t in ((5, 2), (6, 2))}
    assert found == {(5, 2): [5], (6, 2): []}


def test_warp_rewrites_leave_notes():
    result = port_source(b"__global__ void k(int* x) { x[0] = __shfl_sync(0xffffffff, x[1], 0); }\n",
                         "k.cu", "cuda", Settings(target_hip=(6, 2))).result
    assert any("HIP_ENABLE_WARP_SYNC_BUILTINS" in n for n in result.notes)
    assert any("64 lanes" in n for n in result.notes)


def test_kept_argument_is_the_non_null_edge_data():
    def kept(code: bytes) -> int | None:
        call = parse_call(code, code.index(b"("))
        return kept_argument("drop_null(3, 5)", Site(code, "f", "g", call, (5, 2)))
    assert kept(b"f(g, a, b, &e, 1)") == 3
    assert kept(b"f(g, a, b, NULL, 1)") is None
    assert kept(b"f(g, a, b, 1)") is None  # the older form: nothing to drop
    assert kept_argument("function(0)", Site(b"f(k)", "f", "g", parse_call(b"f(k)", 1), (5, 2))) is None
    # drop_null_pointer: at its count the older form's number stands there, which is no edge data.
    code = b"f(s, d, n, flags)"
    assert kept_argument("drop_null(2, 5) + drop_null_pointer(2, 4)", Site(code, "f", "g", parse_call(code, 1), (5, 2))) is None


def test_untag_only_where_the_target_maps_the_name():
    # HIP 4.3 has hipExternalMemoryBufferDesc but not hipGraphicsResource (4.4): the tag of a
    # name left as CUDA's stays, or `cudaGraphicsResource *r` would name no type at all.
    code = "struct cudaGraphicsResource *r; struct cudaExternalMemoryBufferDesc d;"
    assert port(code, "4.3") == "struct cudaGraphicsResource *r; hipExternalMemoryBufferDesc d;"
    assert port(code, "4.4") == "hipGraphicsResource *r; hipExternalMemoryBufferDesc d;"


def test_a_call_the_target_cannot_port_keeps_its_arguments():
    # hipGraphAddNode comes with HIP 6.2, hipGraphInstantiateWithFlags with 5.0: below, the
    # call stays CUDA's whole, for unsupported-api to report, and HP503 says nothing more.
    code = "cudaGraphAddNode(&n, g, deps, NULL, k, &p); cudaGraphInstantiateWithFlags(&x, g);"
    assert port(code, "4.3") == code
    assert port(code, "6.2") == "hipGraphAddNode(&n, g, deps, k, &p); hipGraphInstantiateWithFlags(&x, g, 0);"
    edge = b"void f(cudaGraph_t g, cudaGraphNode_t* d, cudaGraphEdgeData* e, cudaGraphNodeParams* p) {\n" \
           b"  cudaGraphNode_t n; cudaGraphAddNode(&n, g, d, e, 1, p);\n}\n"
    rules = {t: sorted(f.rule for f in analyze(context_for(edge, "f.cu", "cuda", Settings(target_hip=t)))
                       if f.rule in ("HP501", "HP503")) for t in ((5, 2), (6, 2))}
    assert rules[(6, 2)] == ["HP503"]
    assert "HP503" not in rules[(5, 2)] and "HP501" in rules[(5, 2)]
