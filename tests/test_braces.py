"""parse.braces (brace structure from the lexer) and the declaration pre-check built on it."""

from pathlib import Path

import pytest

from hipport.config import Settings
from hipport.files import file_kind
from hipport.loaders import tools
from hipport.parse.braces import BLOCK, LINKAGE, SCOPE
from hipport.parse.declarations import certainly_a_member, members_declared, might_declare, user_declared
from hipport.pipeline import port_source
from hipport.rewrite.names import _context

ROOT = Path(__file__).resolve().parent.parent


def lexed(text: bytes):
    return tools(Settings())[1].lex(text)


def kind_at(text: bytes, marker: bytes) -> str:
    """The kind of the innermost brace pair around `marker`."""
    lx = lexed(text)
    i = lx.braces.innermost(text.index(marker))
    return "file" if i < 0 else lx.braces.kind(i)


@pytest.mark.parametrize("text, want", [
    (b"void f(int a) { MARK; }", BLOCK),
    (b"__global__ void __launch_bounds__(256) k(float* p) { MARK; }", BLOCK),
    (b"struct S { int get() const { MARK; } };", BLOCK),
    (b"struct S { void run() override\n{ MARK; } };", BLOCK),
    (b"auto f = [&](int i) { MARK; };", BLOCK),
    (b"auto f = [] { MARK; };", BLOCK),
    (b"template <class T> T g(T x) { return x; }\nint h() { if (1) { MARK; } }", BLOCK),
    (b"int v[] = { MARK };", BLOCK),
    (b"void f() { int a; { MARK; } }", BLOCK),
    (b"void f(int c) { switch (c) { case 1: { MARK; } } }", BLOCK),
    (b"void f() {\n#pragma omp parallel\n  { MARK; }\n}", BLOCK),
    (b"void f() { enum { MARK }; }", BLOCK),
    (b"void f() { try { MARK; } catch (...) {} }", BLOCK),
    (b"namespace ns { MARK; }", SCOPE),
    (b"class C : public Base<int> { MARK; };", SCOPE),
    (b"struct __align__(16) { MARK; } s;", SCOPE),  # an attribute's `)`, not a function's
    (b"template <> struct Info<unsigned char> { MARK; };", SCOPE),
    (b"extern \"C\" { MARK; }", LINKAGE),
    (b"int x; MARK;", "file"),
])
def test_brace_kinds(text, want):
    assert kind_at(text, b"MARK") == want


def test_braces_in_comments_literals_and_macros_do_not_count():
    text = b'// {\nconst char* s = "{";\n#define OPEN {\nvoid f() { /* } */ MARK; }\n'
    lx = lexed(text)
    assert lx.braces.balanced
    assert len(lx.braces.opens) == 1
    assert lx.braces.kind(lx.braces.innermost(text.index(b"MARK"))) == BLOCK


def test_unpaired_braces_under_if_are_reported():
    text = b"#if A\nvoid f(int a) {\n#else\nvoid f() {\n#endif\n  MARK;\n}\n"
    assert not lexed(text).braces.balanced


def _starts(text: bytes, word: bytes) -> list[int]:
    return [t.start for t in lexed(text).identifiers if t.text == word]


@pytest.mark.parametrize("text", [
    b"struct Hooks { void* (*cudaMalloc)(size_t); };",
    b"namespace mylib { void cudaFree(void* p); }",
    b"class Pool { cudaStream_t cudaStream; };",
    b"class C { C(); int cudaX; };\nC::C() : cudaX(0) {}",
])
def test_might_declare_where_a_member_or_scoped_name_can_be(text):
    word = b"cudaMalloc cudaFree cudaStream cudaX".split()
    starts = [s for w in word for s in _starts(text, w)]
    assert might_declare(lexed(text), starts)


@pytest.mark.parametrize("text", [
    b"struct S { int a; };\nvoid f(float* p) { cudaFree(p); cudaMalloc(&p, 4); }",
    b"struct S { int a; };\ncudaError_t g(cudaStream_t s);",
    b"class P { cudaStream_t s; };",  # a type, not the name declared
    b"class Q { int v = cudaSuccess; };",  # a value
    b"struct S { int a; };\n#define CHECK(x) do { cudaGetLastError(); } while (0)\n",
    b"extern \"C\" { struct S { int a; }; void h() { cudaDeviceReset(); } }",
    b"struct V { std::vector<cudaSurfaceObject_t> list; };",  # a template argument
    b"struct V { int c; };\nsize_t o = offsetof(cudaVertex, c);",  # offsetof's type
    b"namespace c10::cuda {\nint v = cudaSuccess;\n}",  # a nested namespace's name
    b"struct S { int a; };\nauto e = at::cuda::getCurrentCUDAStream();",  # a qualified call
    # in a directive (a macro body, an #if condition), though the braces do not pair up
    b"struct S { int a; };\n#if !defined(__CUDACC__)\nvoid f() {\n#else\nvoid g() {\n#endif\n}\n",
])
def test_might_declare_not_where_no_declaration_can_be(text):
    lx = lexed(text)
    assert not might_declare(lx, [t.start for t in lx.identifiers])


def _c_sources():
    for folder in ("fixtures", "examples"):
        for p in sorted((ROOT / folder).rglob("*")):
            if p.is_file() and file_kind(p.name) in ("cuda", "cpp"):
                yield p


def test_might_declare_never_misses_a_declaration_the_tree_finds():
    """The pre-check is sound: on every fixture and example, each identifier the tree says the
    file declares itself (a member access aside, which the renamer skips anyway) is one the
    pre-check says may be declared."""
    missed = []
    for p in _c_sources():
        data = p.read_bytes()
        lx = lexed(data)
        for t in lx.identifiers:
            if t.start in user_declared(data, [t]) and not might_declare(lx, [t.start]) \
                    and _context(lx, t.start, t.end) != "member":
                missed.append(f"{p.relative_to(ROOT)}: {t.text.decode()}")
    assert not missed


@pytest.mark.parametrize("text, name", [
    (b"struct R { cudaGraphicsResource *cudaResource; void *cudaLinearMemory; };", b"cudaResource"),
    (b"typedef struct {\n  CUeglStreamConnection cudaConn;\n} Ctx;", b"cudaConn"),
    (b"class C : public B<int> {\n public:\n  int cudaDeviceID;\n  int a, b;\n};", b"cudaDeviceID"),
    (b"struct S { int a, cudaThing; };", b"cudaThing"),
    (b"struct S { std::vector<float> cudaThing[4]; };", b"cudaThing"),
    (b"struct S { unsigned cudaThing = 0; };", b"cudaThing"),
    (b"class K { void cudaImport(int device) { run(device); } };", b"cudaImport"),
    (b"class K {\n  K(int n);\n  void cudaWait(int n);\n};", b"cudaWait"),
    (b"class cudaNvSci { cudaNvSci(int n, float x); };", b"cudaNvSci("),  # a constructor
    (b"void f() { struct L { float cudaThing; }; }", b"cudaThing"),  # a local class
])
def test_certainly_a_member(text, name):
    """Each name is a member declaration's name, as the tree says too."""
    at = text.index(name, text.index(b"{"))
    lx = lexed(text)
    assert certainly_a_member(lx, at)
    assert at in user_declared(text, [t for t in lx.identifiers if t.start == at])


@pytest.mark.parametrize("text", [
    b"enum class E : int { cudaThing, B };",  # an enumerator
    b"struct S { friend class cudaThing; };",
    b"struct S { typedef int cudaThing; };",
    b"struct S { using cudaThing = int; };",
    b"struct S { int x : 3, cudaThing : 2; };",  # a bit-field: not read here
    b"struct S { S() : cudaThing(0) {} int cudaThing; };",  # the first: an initializer
    b"struct S { /* not; a */ cudaThing(); };",  # no type: a macro, maybe
    b"struct S { void f() { int cudaThing; } };",  # a local variable
    b"struct S { A::cudaThing; };",
    b"struct S { std::map<int, cudaThing> m; };",
    b"namespace n { int cudaThing; }",  # a scoped name, not a class's member: left to the tree
    b"struct S {\n#if X\n int cudaThing;\n#endif\n};",  # a directive in its statement's text
])
def test_not_certainly_a_member(text):
    assert not certainly_a_member(lexed(text), text.index(b"cudaThing"))


@pytest.mark.parametrize("text, told", [
    # offsetof's member is a field name to the tree; only plain offsetofs in a block are told
    (b"struct V { float cudaColor; };\nvoid f() { size_t o = offsetof(V, cudaColor); }", True),
    (b"struct V { float cudaColor; };\nvoid f() { size_t o = offsetof(struct V, cudaColor); }", True),
    (b"struct V { float cudaColor; };\nsize_t o = offsetof(V, cudaColor);", False),  # file scope
    (b"struct V { float cudaColor; };\nvoid f() { size_t o = offsetof(V, /* c */ cudaColor); }", False),
    (b"struct V { float cudaColor[2]; };\nvoid f() { size_t o = offsetof(V, cudaColor[1]); }", False),
])
def test_offsetof_members_are_told_where_plain(text, told):
    lx = lexed(text)
    starts = [t.start for t in lx.identifiers if t.text == b"cudaColor"]
    assert might_declare(lx, starts[1:])
    got = members_declared(lx, starts[1:])
    assert (got is not None) == told
    if told:
        assert got == user_declared(text, lx.identifiers).intersection(starts[1:]) == {starts[1]}


def test_members_told_from_the_text_are_the_trees():
    """On every fixture and example: each name the text calls a member is one the tree says
    the file declares, and where members_declared answers, it answers as the tree does for
    every name the renamer reads (a member access, which it skips anyway, aside)."""
    for p in _c_sources():
        data = p.read_bytes()
        lx = lexed(data)
        starts = [t.start for t in lx.identifiers if _context(lx, t.start, t.end) != "member"]
        tree = user_declared(data, lx.identifiers)
        for at in starts:
            if certainly_a_member(lx, at):
                assert at in tree, f"{p.relative_to(ROOT)}:{at}"
        told = members_declared(lx, starts)
        if told is not None:
            assert told == tree.intersection(starts), p.relative_to(ROOT)


def test_own_names_are_not_reported_unmapped_even_when_no_mapped_name_is_declared_nearby():
    """A namespace function and a struct member that spell CUDA-only APIs are the project's
    own: the renamer neither rewrites nor reports them, whatever other names the file uses."""
    path = ROOT / "fixtures/check/unsupported-api/unsupported_near_miss.cu"
    result = port_source(path.read_bytes(), path.name, "cuda", Settings()).result
    assert [u["name"] for u in result.unmapped] == []


def test_declared_names_pre_check_never_hides_a_declaration_the_tree_finds():
    """api_tables.declared_names skips the tree for names that only stand where no declarator
    can (after `(`, `=`, `return`, ...): on every fixture and example, that changes nothing."""
    from hipport.analysis import context_for
    from hipport.rules.api_tables import declared_names, tree_declared_names

    differ = []
    for p in _c_sources():
        data = p.read_bytes()
        ctx = context_for(data, p.name, file_kind(p.name), Settings())
        words = set(ctx.lexed.words)
        if declared_names(ctx, words) != tree_declared_names(ctx, words):
            differ.append(str(p.relative_to(ROOT)))
    assert not differ


@pytest.mark.parametrize("text, want", [
    (b"void f() { checkCudaErrors(cudaFoo(1)); x = cudaBar(2); return cudaBaz(3); }", False),
    (b"typedef enum { A } cudaFoo;", True),
    (b"int a, cudaFoo;", True),
    (b"static cudaError_t cudaFoo(int);", True),
    (b"#define X cudaFoo(1)\n", False),
    (b"void f() { g(1, cudaFoo); g(2, cudaFoo ); }", False),  # the last argument
    (b"typedef struct cudaFoo_st *handle_t;", False),  # a type before `*`
    (b"static cudaFoo<int> x; extern cudaFoo :: y z; const cudaFoo &r = a;", False),
    (b"void (*cudaFoo)(int);", True),  # `(*name)` declares it
    (b"int a, cudaFoo = 1;", True),
    (b"int cudaFoo __attribute__((unused));", True),
    # between commas inside a call's or a prototype's parentheses: an argument or a type
    (b"void f() { g(&v, cudaFoo, dev); h(a, (b), cudaFoo /* c */ , g(c)); }\nvoid p(int, cudaFoo, int);", False),
    # ... but a declaration list may stand inside a `for` or an `if` with an initializer
    # after a comma, before another name: a parameter's type (cuda-samples' graphConditionalNodes)
    (b"__global__ void k(char *p, cudaFoo handle) {}\nvoid g(int n, cudaFoo const* h);", False),
    (b"void f() { for (int a = 0, cudaFoo, b = 1; a < b; a++) {} }", True),
    (b"void f() { for (int a = 0, cudaFoo UNUSED = 1; a < 1; a++) {} }", True),
    (b"void f() { if (int a = 1, cudaFoo, b = 2; a) {} }", True),
    (b"void f() { g(a, [] { int b, cudaFoo, c; }); }", True),
    # a statement's first word before another name is a type (cuda-samples' EGLStream_CUDA_Interop)
    (b"cudaFoo a;\nvoid f() { cudaFoo p = {}; if (1) { cudaFoo const* q; } }", False),
    (b"struct S { int a; } cudaFoo;\nvoid f() { cudaFoo(1); }", True),
])
def test_may_be_declarator(text, want):
    from hipport.parse.declarations import may_be_declarator

    lx = lexed(text)
    starts = [t.start for t in lx.identifiers if t.text.startswith(b"cudaFoo") or t.text in (b"cudaBar", b"cudaBaz")]
    assert any(may_be_declarator(lx, s) for s in starts) == want


@pytest.mark.parametrize("text, want", [
    # cuda-samples' matrixMulDynlinkJIT: the driver API's names as the file's own pointers
    (b"typedef int tcuFoo(int);\ntcuFoo   *cudaFoo;\n", True),
    (b"static unsigned int cudaFoo(unsigned a, unsigned b) { return a; }", True),
    (b"__global__ void cudaFoo(float* p) {}", True),
    (b"extern \"C\" {\nint cudaFoo = 1;\n}\n", True),
    (b"int a;\n// the entry points\n#ifdef X\nT cudaFoo[4];\n#endif\n", True),
    (b"const T &cudaFoo(int), b;", True),
    # not told: the tree reads these otherwise, or may
    (b"CUresult CUDAAPI cudaFoo(int);", False),  # a macro before the name
    (b"__global__ void __launch_bounds__(128) k(int* p) {}", False),  # `__launch_bounds__` asked
    (b"struct cudaFoo;", False),
    (b"typedef struct S cudaFoo;", False),
    (b"namespace cudaFoo = other;", False),
    (b"int a, cudaFoo;", False),  # after a comma
    (b"ns::T cudaFoo;", False),
    (b"static\n#ifdef X\nconst\n#endif\nint cudaFoo;", False),  # a directive inside the head
    (b"int /* pointer */ *cudaFoo;", False),  # a comment inside the head
    (b"void f() { T *cudaFoo; }", False),  # in a body: `a * b;` may be an expression
    (b"namespace n { int cudaFoo; }", False),
    (b"T cudaFoo == x;", False),
])
def test_certainly_declares(text, want):
    """What api_tables.declared_names takes as declared without the tree; each True is a
    declarator the tree finds too."""
    from hipport.analysis import FileContext
    from hipport.parse.declarations import certainly_declares
    from hipport.rules.api_tables import tree_declared_names

    lx = lexed(text)
    start = next(t.start for t in lx.identifiers if t.text in (b"cudaFoo", b"__launch_bounds__"))
    assert certainly_declares(lx, start) == want
    if want:
        mappings, lexer = tools(Settings())
        ctx = FileContext("t.cu", "cuda", text, lexer, mappings, Settings())
        assert tree_declared_names(ctx, {"cudaFoo"}) == {"cudaFoo"}


def test_declared_names_needs_no_tree_where_each_name_is_certainly_declared():
    from hipport.analysis import context_for
    from hipport.rules.api_tables import declared_names

    text = (b"#include <cuda.h>\ntypedef CUresult tcuInit(unsigned);\n#ifdef WIN32\n"
            b"tcuInit *cuInit;\n#endif\nstatic int cuDriverGetVersion(int* v) { return 0; }\n"
            b"void f() { cuInit(0); }\n")
    ctx = context_for(text, "t.cpp", "cpp", Settings())
    assert declared_names(ctx, {"cuInit", "cuDriverGetVersion", "cuCtxCreate"}) == {"cuInit", "cuDriverGetVersion"}
    assert "tree" not in ctx.__dict__  # no parse
    ctx = context_for(text.replace(b"tcuInit *", b"tcuInit EXPORT *"), "t.cpp", "cpp", Settings())
    assert declared_names(ctx, {"cuInit"}) == {"cuInit"} and "tree" in ctx.__dict__  # asked


def test_a_plain_member_keeps_its_name_without_a_parse():
    """cuda-samples' simpleCallback: `int cudaDeviceID;` in a struct is the project's own
    member: kept (while the runtime call beside it is renamed), and no tree is parsed."""
    from hipport.rewrite.names import rename_identifiers
    text = (b"struct heavy_workload { int id; int cudaDeviceID; };\n"
            b"void f(heavy_workload* w) { cudaSetDevice(w->cudaDeviceID); }\n")
    mappings, lexer = tools(Settings())
    asked = []
    edits = rename_identifiers(lexer.lex(text), mappings, lambda: asked.append(1) or set()).edits
    assert asked == [] and [text[e.start:e.end] for e in edits] == [b"cudaSetDevice"]


@pytest.mark.parametrize("text, asks", [
    # Unpaired braces (alternative `#if` groups) leave the pre-check nothing to go by, so a name
    # that counts makes the renamer ask the tree ...
    (b"#if A\nstruct S {\n#else\nstruct T {\n#endif\nint cudaX; };\n", True),
    (b"#if A\nstruct S {\n#else\nstruct T {\n#endif\nint y = nvtx3::color{}; };\n", True),
    # ... but a word that is renamed or reported nowhere does not: `color` is a table row's
    # last word (`nvtx3::color`) that counts only when qualified; `min` is no CUDA name at all.
    (b"#if A\nstruct S {\n#else\nstruct T {\n#endif\nint color; int min; };\n", False),
    # A class's own member may carry a CUDA-looking name: told from the text where its
    # declaration is plain (certainly_a_member), else asked of the tree; a parameter of its
    # method is no member (cuda-samples' MonteCarloPi.h: `void initSimulation(int cudaDevice, ...);`).
    (b"struct S {\n  int cudaDevice;\n};\n", False),
    (b"struct S {\n  void (*cudaCallback)(int);\n};\n", True),
    (b"struct S {\n  void init(int cudaDevice, cudaStream_t s = 0);\n  void run(float* /* in */ cudaPtr);\n};\n",
     False),
])
def test_renamer_asks_for_declarations_only_for_names_that_count(text, asks):
    from hipport.rewrite.names import rename_identifiers
    mappings, lexer = tools(Settings())
    asked = []
    rename_identifiers(lexer.lex(text), mappings, lambda: asked.append(1) or set())
    assert bool(asked) == asks


def test_scope_of_steps_past_extern_c():
    text = b'extern "C" {\nint a;\nstruct S { int b; };\n}\n'
    lx = lexed(text)
    assert lx.braces.innermost(text.index(b"int a")) >= 0
    assert lx.braces.scope_of(text.index(b"int a")) == -1
    inner = lx.braces.scope_of(text.index(b"int b"))
    assert inner >= 0 and lx.braces.kind(inner) == SCOPE
