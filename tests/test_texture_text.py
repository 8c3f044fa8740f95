"""The texture rules' sites read from the text (_texture_text) against the tree's reading."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hipport.analysis import analyze, context_for
from hipport.config import Settings
from hipport.files import file_kind
from hipport.rules import texture

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(p for base in ("fixtures", "examples") for p in (ROOT / base).rglob("*")
                 if p.is_file() and file_kind(p.name) in ("cuda", "cpp") and "broken" not in p.parts)


def ctx_of(text: bytes, name: str = "t.cu"):
    return context_for(text, name, file_kind(name), Settings())


def from_text(ctx):
    return texture._text_sites(ctx)


# The forms read from the text, as cuda-samples writes them.
PLAIN = [
    b"__global__ void k(float* out, cudaTextureObject_t tex, int w) {\n"
    b"  out[0] = tex2D<float>(tex, 0.5f, 0.5f) + tex1Dfetch<float>((tex), 3);\n}\n",
    b"__device__ float f(const cudaTextureObject_t t, float x) { return 2.0f - tex1D<float>(t, x); }\n",
    b"void k(const Ray, float *, cudaTextureObject_t);\n",
    b"cudaTextureObject_t tex;\nstatic cudaTextureObject_t a = 0, *b, c[4];\n",
    b"struct S { cudaTextureObject_t tex; cudaSurfaceObject_t surf; };\n",
    b"void g(cudaSurfaceObject_t s, CUsurfObject w) {\n"
    b"  size_t n = sizeof(cudaSurfaceObject_t) * 4;\n"
    b"  cudaSurfaceObject_t *p = (cudaSurfaceObject_t *)malloc(n);\n"
    b"  surf2Dwrite(1.0f, s, 0, 0);\n  float v; surf2Dread(&v, w, 0, 0);\n}\n",
    b"void h(cudaArray_t arr) {\n  cudaTextureObject_t tex{};\n  cudaResourceDesc rd;\n"
    b"  checkCudaErrors(cudaCreateTextureObject(&tex, &rd, nullptr, nullptr));\n"
    b"  if (cudaCreateSurfaceObject(&s, &rd) != cudaSuccess) return;\n}\n",
    b"__global__ void k(int* o, cudaTextureObject_t t) { float4 v; tex2D(&v, t, 0.5f, 0.5f); o[0] = tex2D(t, 1, 1); }\n",
    b"__global__ void k(float* o, int t) { o[0] = tex2D(t, 1, 1) + tex1Dfetch(NULL, 2); }\n",
    b"void rotate(cudaTextureObject_t &texObj, cudaSurfaceObject_t &&s, cudaTextureObject_t*& p);\n",
    b"#define FETCH(t, i) tex1Dfetch<float>(t, i)\n// tex2D(texImage, x, y) in a comment\n"
    b"const char* s = \"tex2D(t, x, y)\";\n",
    # a template argument, a function definition returning a handle, `extern "C"`
    b"std::vector<cudaSurfaceObject_t> surfaces, more;\nstd::map<int, const cudaTextureObject_t*> m;\n",
    b"struct S { std::vector<cudaSurfaceObject_t> a; };\ntemplate <cudaTextureObject_t> void f();\n",
    b"static cudaSurfaceObject_t make(cudaArray_t &a)\n{\n  cudaSurfaceObject_t s = 0;\n  return s;\n}\n",
    b"__host__ __device__ __inline__ cudaTextureObject_t decode(uint2 o) { return 0; }\n",
    b"extern \"C\" cudaTextureObject_t texImage;\nextern \"C\" const cudaTextureObject_t t2, t3;\n",
]

# Forms left to the tree: a definition of a fetch name, a qualified or member call, a named
# template parameter, a qualifier not read here, a constructor-style initializer, a method, a
# comment inside a call, a prototype returning a handle.
UNSURE = [
    b"__device__ float tex2D(int t, float x, float y) { return x; }\n"
    b"__global__ void k(float* o) { o[0] = tex2D(1, 0.5f, 0.5f); }\n",
    b"void h(cudaTextureObject_t* t) { ::cudaCreateTextureObject(t, 0, 0, 0); }\n",
    b"struct T { template <class V> V tex2D(int, float, float); };\n"
    b"__device__ float k(T o) { return o.tex2D<float>(1, 0.5f, 0.5f); }\n",
    b"template <cudaTextureObject_t T> void f();\n",
    b"__device__ cudaTextureObject_t t;\n",
    b"cudaTextureObject_t t(5);\n",
    b"struct S { cudaTextureObject_t get() const { return t; } cudaTextureObject_t t; };\n",
    b"__global__ void k(float* o, cudaTextureObject_t t) { o[0] = tex2D<float>(t /* obj */, 1, 1); }\n",
    b"cudaTextureObject_t make(cudaArray_t a);\n",
    b"typedef unsigned long long CUtexObject;\n",
    b"struct tex2D { tex2D(int a) : v(a) {} int v; };\n",
]


@pytest.mark.parametrize("text", PLAIN + UNSURE)
def test_where_the_text_answers_it_agrees_with_the_tree(text):
    ctx = ctx_of(text)
    sites = from_text(ctx)
    if sites is not None:
        assert sites == texture.tree_sites(ctx_of(text))
    assert (sites is not None) == (text in PLAIN)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_fixtures_read_from_text_agree_with_the_tree(path: Path):
    data = path.read_bytes()
    sites = from_text(ctx_of(data, path.name))
    if sites is not None:
        assert sites == texture.tree_sites(ctx_of(data, path.name))


# Pieces of code around the texture names, plain and not: any sequence of them that the text
# answers for must be read as the tree reads it.
TOP = [b"cudaTextureObject_t g;", b"static const cudaSurfaceObject_t s1 = 0, s2;", b"struct A { CUtexObject t; };",
       b"__device__ float tex2D(int, float, float);", b"texture<float, 2> legacy;", b"#define T tex2D(a, b, c)",
       b"cudaTextureObject_t mk(int);", b"extern \"C\" cudaTextureObject_t e;", b"// tex1D(t, x)",
       b"namespace n { cudaTextureObject_t t = f(1, 2); }", b"template <class T> T tex1D(T, float);"]
BODY = [b"x = tex2D<float>(t, 1, 2);", b"x = tex2D(t, 1, 2);", b"tex2D(&v, t, 1, 2);", b"x += 2 * tex1Dfetch<int>(t, i);",
        b"cudaTextureObject_t a, *b = nullptr;", b"cudaTextureObject_t c = (cudaTextureObject_t)n;",
        b"surf2Dwrite(v, s, 0, 0);", b"surf2Dread(&v, (s), 0);", b"cudaCreateTextureObject(&t, &r, &d, 0);",
        b"r = cudaCreateSurfaceObject(&s, &r);", b"x = o.tex2D<float>(t, 1, 2);", b"x = ::tex2D(t, 1, 2);",
        b"x = c ? tex2D(t, 1, 2) : 0;", b"x = tex2D(t /* c */, 1, 2);", b"x = tex3D<float>(f(t), 1, 2, 3);",
        b"cudaTextureObject_t d[2] = {0, 0};", b"for (cudaTextureObject_t i = 0; i < 2; ++i) {}",
        b"if (1) { y = tex1D<float>(t, 0); }", b"std::vector<cudaTextureObject_t> v;",
        b"auto l = [](cudaTextureObject_t q) { return tex1D<float>(q, 0); };"]
PARAMS = [b"", b"cudaTextureObject_t t", b"const cudaTextureObject_t t, int i", b"cudaSurfaceObject_t s, float v",
          b"int t, cudaTextureObject_t", b"cudaTextureObject_t &t", b"cudaTextureObject_t* t"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(TOP), max_size=3), st.sampled_from(PARAMS), st.lists(st.sampled_from(BODY), max_size=5))
def test_any_mix_read_from_text_agrees_with_the_tree(top, params, body):
    text = b"\n".join([*top, b"__global__ void k(" + params + b") {", *body, b"}", b""])
    sites = from_text(ctx_of(text))
    if sites is not None:
        assert sites == texture.tree_sites(ctx_of(text))


def test_plain_texture_code_costs_no_parse():
    text = (b"__global__ void blur(float* out, cudaTextureObject_t src, int w) {\n"
            b"  int x = threadIdx.x;\n  out[x] = tex2D<float>(src, x + 0.5f, 0.5f);\n}\n"
            b"void run(cudaArray_t arr, float* out) {\n  cudaTextureObject_t tex = 0;\n"
            b"  cudaResourceDesc rd = {};\n  cudaTextureDesc td = {};\n"
            b"  cudaCreateTextureObject(&tex, &rd, &td, nullptr);\n"
            b"  blur<<<1, 32>>>(out, tex, 32);\n  cudaDestroyTextureObject(tex);\n}\n")
    ctx = ctx_of(text)
    rules = [r for r in texture_rules()]
    found = analyze(ctx, rules)
    assert "tree" not in ctx.__dict__
    assert sorted({f.rule for f in found}) == ["HP251", "HP252", "HP253"]
    # the same findings from the tree
    ctx = ctx_of(text)
    ctx.memo["texture_sites"] = texture.tree_sites(ctx)
    assert analyze(ctx, rules) == found


def test_a_handle_passed_by_reference_is_a_texture_object():
    text = (b"__global__ void k(float* o, cudaTextureObject_t &t) { o[0] = tex2D(t, 1, 1); }\n"
            b"void rotate(cudaTextureObject_t &texObj, float angle);\n")
    for from_the_tree in (False, True):
        ctx = ctx_of(text)
        if from_the_tree:
            ctx.memo["texture_sites"] = texture.tree_sites(ctx)
        found = [(f.rule, f.line) for f in analyze(ctx, texture_rules())]
        # declared twice, and `tex2D(t, ...)` is an object's fetch (not taken for a reference's)
        assert found == [("HP253", 1), ("HP253", 2)], from_the_tree


def texture_rules():
    from hipport.rules import all_rules

    return [r for r in all_rules() if r.category in ("texture-reference", "texture-object")]
