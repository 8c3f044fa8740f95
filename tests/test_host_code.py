"""rules._host_code: host code told from the lexer, never claiming what the tree denies."""

import bisect
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hipport.analysis import context_for
from hipport.config import Settings
from hipport.files import file_kind
from hipport.rules import _syntax as sx
from hipport.rules._host_code import certainly_host

ROOT = Path(__file__).resolve().parent.parent


def host_at_mark(text: bytes) -> bool:
    ctx = context_for(text, "t.cu", "cuda", Settings())
    return certainly_host(ctx, text.index(b"MARK"))


@pytest.mark.parametrize("text", [
    b"__global__ void k(int* p) {}\nint main() { k<<<1, 1>>>(0); MARK; }",
    b"__global__ void k() {}\nvoid launch() { k<<<1, 1>>>(); MARK; }",  # never called here
    b"__global__ void k() {}\nvoid run() { MARK; }\nint main() { run(); }",
    b"void run() { if (1) { for (;;) { MARK; } } }",
    b"namespace n { void g() const { MARK; } }",
    b"extern \"C\" { void h() { MARK; } }",
    b"void f() { auto l = [&](int i) { MARK; }; }",
    # Named, but never called: in a comment, a string, or passed as a pointer.
    b"__global__ void k() {}\nvoid run() { MARK; }\n// run() launches k\n",
    b"void run() { MARK; }\n__global__ void k() { printf(\"run()\"); }",
    b"void run(void*) { MARK; }\n__global__ void k() {}\nint main() { start(run, 0); }",
    b"void display() { MARK; }\n__global__ void k() {}\nint main() { glutDisplayFunc( display ) ; }",
    # A library's function of the same name, and declarations that only look like calls.
    b"#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
    b"template <class T> void reduce(T* p) { MARK; }\n"
    b"__global__ void k(int* o) { o[0] = cg::reduce(t, o[1], cg::plus<int>()); }",
    b"template <class T> void reduce(T* p) { MARK; }\ntemplate void reduce<int>(int* p);\n"
    b"__global__ void k(int* o) { int reduce(int); }",
    # A member function defined outside its class, called on an object from host code.
    b"struct Sim { void step(float t); };\n__global__ void k(float t) {}\n"
    b"void Sim::step(float t) { k<<<1, 1>>>(t); MARK; }\nint main() { Sim s; s.step(0); }",
    b"template <class R> struct E { R run(); };\n"
    b"template <class R> R E<R>::run() { MARK; return R(); }\nint main() { E<int>* e = 0; e->run(); }",
    # Called with template arguments from host code (cuda-samples' simpleTemplates, alignedTypes).
    b"template <class T> void runTest(int n) { MARK; }\nint main() { runTest<float>(1); }",
    b"template <class T> void run(int n) { MARK; }\nint main() { run<std::vector<int*>, 2> (1); }",
    # Callers of callers: main -> a -> b -> here.
    b"void b() { MARK; }\nvoid a() { b(); }\nint main() { a(); }",
    # A try statement's block; a comment before a host function that names __device__.
    b"__global__ void k() {}\nint main() { try { k<<<1, 1>>>(); MARK; } catch (...) {} }",
    b"void run() {}\nvoid b() { if (1) {} else { try { MARK; } catch (int) {} } }",
    b"__global__ void k() {}\n// Launches k; its __device__ helpers are below.\nvoid run() { MARK; }\n",
    # operator() and operator[] bodies, defined in the class or out of it (cuda-samples' MC_*)
    b"template <class R> struct P { R operator()(); };\n"
    b"template <class R> R P<R>::operator()() { MARK; return R(); }",
    b"struct F { void operator ( ) (int i) const { MARK; } };\nint main() { F f; f(1); }",
    b"struct V { float d[4]; float& operator[](int i) { return d[MARK]; } };",
    # destructors (cuda-samples' MonteCarloPi: a host class frees its buffers in one)
    b"struct S { S(); ~S(); int* p; };\nS::~S() { MARK; }",
    b"struct S { int* p; public:\n  virtual ~S() { MARK; } };\nint main() { S* s = new S; delete s; }",
    # callers that return its value, or call it after a case label
    b"__global__ void k() {}\nint run(int n) { MARK; return n; }\nint main() { return run(1); }",
    b"void bench(int n) { MARK; }\nvoid key(char c) { switch (c) { case 'b': bench(5); break; } }",
    # No word in the file may mean __device__ or __global__ (a host library's header): no
    # device code at all, whatever the braces, heads and callers say.
    b"void f() {\n#if A\n{\n#endif\n MARK; }",
    b"auto f() -> int { MARK; return 0; }",
    b"int h(int v) { return (v >> 10u) & 0x1Fu; }\nint g() { return h(MARK); }",
    b"#if defined(__CUDACC__)\n#define HD __host__\n#endif\nHD int f() { MARK; return 0; }",
])
def test_certainly_host(text):
    assert host_at_mark(text)


@pytest.mark.parametrize("text", [
    b"__global__ void k() { MARK; }",
    b"__host__ __device__ int f() { MARK; return 0; }",
    b"#define DEV __device__\nDEV void f() { MARK; }",
    b"void helper() { MARK; }\n__global__ void k() { helper(); }",  # only called from device code
    b"void helper() { MARK; }\n__global__ void k() { helper /* here */ (); }",
    b"void helper() { MARK; }\n__global__ void k() { (helper)(); }",
    b"void helper() { MARK; }\n__global__ void k() { ((helper) /* twice */ ) (); }",
    b"void helper() { MARK; }\n__global__ void k() { helper\n(); }",
    b"template <class T> void helper() { MARK; }\n__global__ void k() { helper<int>(); }",
    b"template <class T> void helper() { MARK; }\n__global__ void k() { helper<A<B<C<D>>>>(); }",
    # Template arguments the lexer does not read: the only host call may not be one.
    b"template <int N> void run() { MARK; }\n__global__ void k() { run<1>(); }\n"
    b"int main() { run<(2 > 1)>(); }",
    b"template <int N> void run() { MARK; }\n__global__ void k() { run<1>(); }\n"
    b"int main() { run</* two */ 2>(); }",
    b"void helper() { MARK; }\n__global__ void k() { return helper(); }",  # a keyword, then a call
    b"namespace ns { void helper() { MARK; } }\n__global__ void k() { ns::helper(); }",  # its own scope
    b"struct Sim { void step(); };\nvoid Sim::step() { MARK; }\n__global__ void k(Sim* s) { s->step(); }",
    b"struct Sim { __device__ void step(); };\nvoid Sim::step() { MARK; }\n",  # declared __device__
    b"__device__ void helper();\nvoid helper() { MARK; }",  # declared __device__ elsewhere
    b"void f() { auto l = [=] __device__ (int i) { MARK; }; }",
    b"__global__ void k() {}\nvoid f() {\n#if A\n{\n#endif\n MARK; }",  # braces that do not pair up
    b"__global__ void k() {}\nint g() try { MARK; return 0; } catch (...) { return 1; }",
    b"__global__ void k() {}\n/* a kernel's helper */ __device__ void f() { MARK; }",
    b"__global__ void k() {}\nauto f() -> int { MARK; return 0; }",  # a head this pre-check does not read
    # an operator's head, a declaration of it, or a call by its name may make it device code
    b"struct V { float d[4]; __device__ float operator[](int i) { return d[MARK]; } };",
    b"struct P { __device__ int operator()(); };\nint P::operator()() { MARK; return 0; }",
    b"struct F { void operator()(int) { MARK; } };\n__global__ void k(F f) { f.operator()(1); }",
    b"struct S { __device__ ~S(); };\nS::~S() { MARK; }",
    b"struct S { ~S() { MARK; } };\n__global__ void k(S* s) { s->~S(); }",
    b"void helper() { MARK; }\n__global__ void k(int c) { switch (c) { case 1: helper(); } }",
    b"int helper() { MARK; return 0; }\n__device__ int k() { return helper(); }",
])
def test_not_certainly_host(text):
    assert not host_at_mark(text)


def _c_sources():
    for folder in ("fixtures", "examples"):
        for p in sorted((ROOT / folder).rglob("*")):
            if p.is_file() and file_kind(p.name) in ("cuda", "cpp") and "broken" not in p.parts:
                yield p


def test_a_host_library_header_is_read_without_a_tree(monkeypatch):
    """A C++ header without a word that may mean __device__ (nlohmann's json.hpp, catch.hpp,
    stb_image.h in a vendored folder), its lane-math-like bit twiddling in functions whose
    callers cannot be traced: no rule needs its syntax tree to tell it is host code (json.hpp
    alone took 450 ms). With a __device__ function in it, the same text is read by the tree."""
    from hipport.parse import tree
    from hipport.pipeline import port_source

    parsed = []
    parse = tree.parse
    monkeypatch.setattr(tree, "parse", lambda *a, **k: parsed.append(1) or parse(*a, **k))
    body = b"template <class T> int f0(T h) { const int exp = (h >> 10u) & 0x1Fu; return exp % 32; }\n"
    body += b"".join(b"int f%d(int v) { return f%d(v) + 1; }\n" % (i + 1, i) for i in range(6))  # callers past the depth looked up
    assert not port_source(body, "json.hpp", "cpp", Settings()).result.findings
    assert parsed == []
    device = body + b"__device__ int lane() { return threadIdx.x % 32; }\n"
    found = port_source(device, "json.hpp", "cpp", Settings()).result.findings
    assert [f.rule for f in found] == ["HP402"] and parsed


def test_certainly_host_is_never_device_code_by_the_tree():
    """At every candidate name and launch of every fixture and example: where the lexer says
    host code, the tree's device-function index agrees (sx.in_device_code asks the lexer
    first, so the index is asked directly)."""
    wrong = []
    for p in _c_sources():
        data = p.read_bytes()
        ctx = context_for(data, p.name, file_kind(p.name), Settings())
        for at in [t.start for t in ctx.lexed.identifiers] + ctx.lexed.find_launches():
            if certainly_host(ctx, at) and sx.device_function_at(ctx, at) is not None \
                    and not sx.host_pass_only(ctx, at):
                wrong.append(f"{p.relative_to(ROOT)}:{at}")
    assert not wrong


@pytest.mark.parametrize("text, device", [
    # cuda-samples' reduction: `cg::reduce` in a kernel is cooperative groups', not this host `reduce`
    (b"namespace cg = cooperative_groups;\n__global__ void k(int* p) { p[0] = cg::reduce(t, 1, op); }\n"
     b"template <class T> void reduce(T* p) { MARK; }", False),
    (b"__global__ void k(int* p) { thrust::reduce(a, b); }\nvoid reduce(int* p) { MARK; }", False),
    # called from device code, plainly or through this file's own namespace or class
    (b"__global__ void k(int* p) { reduce(p); }\nvoid reduce(int* p) { MARK; }", True),
    (b"namespace mine { void reduce(int* p) { MARK; } }\n__global__ void k(int* p) { mine::reduce(p); }", True),
    (b"struct S { static void go() { MARK; } };\n__global__ void k() { S::go(); }", True),
    (b"struct __align__(8) S : B { static void go() { MARK; } };\n__global__ void k() { S::go(); }", True),
])
def test_only_calls_of_this_files_function_make_it_device_code(text, device):
    ctx = context_for(text, "t.cu", "cuda", Settings())
    assert (sx.device_function_at(ctx, text.index(b"MARK")) is not None) is device


def test_a_host_method_four_callers_below_main_needs_no_tree():
    """A launch in a class's method that main reaches through run, mainLoop and drawFrame (as
    in cuda-samples' Vulkan interop samples): the callers are read up to four levels."""
    text = (b"__global__ void k() {}\nclass App {\n public:\n  void run() { mainLoop(); }\n"
            b"  void mainLoop() { while (1) { drawFrame(); } }\n  void drawFrame() { update(); }\n"
            b"  void update() { k<<<1, 1>>>(); MARK; }\n};\nint main() { App a; a.run(); }\n")
    ctx = context_for(text, "t.cu", "cuda", Settings())
    assert certainly_host(ctx, text.index(b"MARK")) and "tree" not in ctx.__dict__
    assert not sx.in_device_code(ctx, text.index(b"MARK"))


# --- functions this file calls only from device code ------------------------------------------

@st.composite
def _programs(draw) -> bytes:
    """Functions of a few shared names (overloads), each of some execution space, calling
    others, some calls in code of the host pass alone."""
    parts = []
    for _ in range(draw(st.integers(1, 9))):
        space = draw(st.sampled_from(["__global__ ", "__device__ ", "", "", "", "__host__ "]))
        name = draw(st.sampled_from("abcde"))
        params = draw(st.sampled_from(["int* p", "int* p, int q"]))
        body = ""
        for callee, host_pass in draw(st.lists(st.tuples(st.sampled_from("abcde"), st.booleans()), max_size=4)):
            body += f"\n#ifndef __CUDA_ARCH__\n{callee}(p);\n#endif\n" if host_pass else f" {callee}(p);"
        parts.append(f"{space}void {name}({params}) {{{body} }}")
    return "\n".join(parts).encode() + b"\n"


def _by_passes(ctx, found, host_defs, calls):
    """The fixpoint as it was first found: a pass over every definition left per round, until
    a round finds none."""
    found, left, out = list(found), list(host_defs), []
    changed = True
    while changed:
        changed = False
        seg = sx._segments(found)
        for item in list(left):
            name, fn, body = item
            named = calls.get(name, [])
            lo, hi = bisect.bisect_left(named, body.start_byte), bisect.bisect_left(named, body.end_byte)
            if (lo or hi < len(named)) and all(sx._in_device(ctx, seg, s) for s in named[:lo] + named[hi:]):
                f = sx.DeviceFunction(name, "called-from-device", sx._definition_start(fn), body.start_byte,
                                      body.end_byte)
                found.append(f)
                out.append(f)
                left.remove(item)
                changed = True
    return out


@settings(max_examples=400, deadline=None)
@given(_programs())
@example(b"__global__ void k(int* p) { g(p); }\nvoid g(int* p) {\n#ifndef __CUDA_ARCH__\nh(p);\n#endif\n}\n"
         b"void h(int* p) { }\nvoid e(int* p) { e(p); }\nvoid d(int* p) { d(p); }\n__device__ void c(int* p) { d(p); }\n")
def test_functions_called_from_device_are_the_fixpoint_of_passes(text):
    worked_off = sx.device_functions(context_for(text, "t.cu", "cuda", Settings()))
    real = sx._called_from_device
    sx._called_from_device = _by_passes
    try:
        by_passes = sx.device_functions(context_for(text, "t.cu", "cuda", Settings()))
    finally:
        sx._called_from_device = real
    assert worked_off == by_passes
