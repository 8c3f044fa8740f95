"""The work on one file grows with the file, not with its square: a generated or vendored file
may hold hundreds of functions that share a name (overloads, members of many classes,
functors' `operator()`), hundreds of shared arrays or of names, blocks nested hundreds deep,
a build file of a thousand targets, or everything on one line. Counted, not timed: the Python
lines run (sys.settrace), the scans of the whole text and the reads of a line, for a file and
for the same file four times over."""

import re
import sys
from pathlib import Path

import pytest

from hipport import patterns
from hipport.analysis import context_for
from hipport.config import Settings
from hipport.files import file_kind
from hipport.pipeline import port_source
from hipport.rules import _syntax as sx
from hipport.findings import CUT, SNIPPET_MAX, snippet_of
from hipport.source import Source

ROOT = Path(__file__).resolve().parents[1]

# Each a piece of a file, repeated with %(i)d numbered; every piece brings work for the rules
# that tell host code from device code.
PIECES = {
    # one host function name defined again and again (overloads): each definition asks who calls it
    "overloads": b"__global__ void k(float* x, int v) { x[threadIdx.x] = v; }\n"
                 b"void launch(float* d, int v%(i)d) { k<<<1, 32>>>(d, v%(i)d); }\n",
    "namespaces": b"namespace n%(i)d { __global__ void k(float* x) { x[0] = 1; }\n"
                  b"void run(float* d) { k<<<1, 1>>>(d); } }\n",
    # functors: every `operator()` is called by that one name
    "functors": b"__global__ void kk%(i)d(float* x) { x[0] = %(i)d; }\n"
                b"struct L%(i)d { void operator()(float* d) const { kk%(i)d<<<1, 1>>>(d); } };\n"
                b"void call%(i)d(float* d) { L%(i)d()(d); L%(i)d l; l.operator()(d); }\n",
    # a warp-sized shared array per kernel: each is looked up among the file's subscripts
    "shared arrays": b"__global__ void s%(i)d(float* x) { __shared__ float t[32]; t[threadIdx.x & 31] = x[0];"
                     b" __syncthreads(); x[1] = t[0]; }\n"
                     b"void go%(i)d(float* d) { s%(i)d<<<1, 32, 70000>>>(d); }\n",
    # a suppression on each line that suppresses nothing: each is reported (HP1901), and each
    # report is asked whether a suppression of the suppression rule covers it
    "stale suppressions": b"__global__ void u%(i)d(int* p) { p[0] = 1; }  // hipport: ignore[HP101] stale\n",
}


# Blocks nested hundreds deep (generated code): each question from inside climbed them all,
# in the tree (each step up a walk down from the root) and in the brace structure. The piece
# opens two blocks; the file closes them all.
NESTED = b"{ if (threadIdx.x %% 32 == %(i)d) { float v%(i)d = __shfl_down_sync(0xffffffff, 1.0f, 16); int a%(i)d[32 / 2];\n"
NESTS = {  # name: (piece, head, tail)
    "nested blocks": (NESTED, b"__global__ void k() {\n", b"}\n"),
    "nested host blocks": (b"{ if (n > %(i)d) { k<<<1, 32>>>(p); int lane%(i)d = n %% 32;\n",
                           b"__global__ void k(float*) {}\nvoid h(float* p, int n) {\n",
                           b"}\nint main() { h(0, 1); }\n"),
    # the declarations around each grid group, the function around each return, the functions
    # around each runtime call: asked from deep down
    "nested grid groups": (b"{ if (x[%(i)d]) { cg::grid_group g%(i)d = cg::this_grid(); g%(i)d.sync();\n",
                           b"#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
                           b"__global__ void k(int* x) {\n", b"}\n"),
    "nested ballot returns": (b"{ if (x[%(i)d]) { if (x[1]) return __ballot_sync(0xffffffff, 1);\n",
                              b"__device__ unsigned k(int* x) {\n", b"return 0; }\n"),
    "nested runtime calls": (b"{ if (x[%(i)d]) { cudaError_t e%(i)d = cudaGetLastError(); x[0] = (int)e%(i)d;\n",
                             b"__global__ void k(int* x) {\n", b"}\n"),
    # each array's scope runs to the end of the kernel, past every later array's subscripts
    "nested shared arrays": (b"{ if (x[%(i)d]) { __shared__ int s%(i)d[32]; s%(i)d[threadIdx.x %% 32] = 1;\n",
                             b"__global__ void k(int* x) {\n", b"}\n"),
}

# Host functions without __device__, each called by the one before, the first by a kernel:
# all device code, found one link at a time.
def helper_chain(count: int) -> bytes:
    links = b"".join(b"void h%d(int* p) { p[0] += %d; h%d(p); }\n" % (i, i, i + 1) for i in range(count))
    return (b"__global__ void k(int* p) { h0(p); }\n" + links
            + b"void h%d(int* p) { int lane = threadIdx.x %% 32; p[1] = lane; }\n" % count)


CHAINS = {"helper chain": helper_chain}

# Build files: a flag reported by one row of the flag tables is not reported again by another,
# which was a look through every flag reported so far.
BUILD_PIECES = {
    "CMakeLists.txt": b"add_library(lib%(i)d SHARED k%(i)d.cu)\n"
                      b"target_compile_options(lib%(i)d PRIVATE -arch=sm_80 --use_fast_math -rdc=true)\n",
    "Makefile": b"k%(i)d.o: k%(i)d.cu\n\tnvcc -arch=sm_80 -O3 --use_fast_math -c $< -o $@\n",
}


def repeated(piece: bytes, count: int, head: bytes = b"#include <cuda_runtime.h>\n") -> bytes:
    return head + b"".join(piece % {b"i": i} for i in range(count))


def lines_run(data: bytes, rel: str = "t.cu") -> int:
    count = [0]

    def trace(frame, event, arg):
        count[0] += 1
        return trace

    sys.settrace(trace)
    try:
        port_source(data, rel, file_kind(rel), Settings())
    finally:
        sys.settrace(None)
    return count[0]


def nested(piece: bytes, count: int, head: bytes, tail: bytes) -> bytes:
    return head + b"".join(piece % {b"i": i} for i in range(count)) + b"}" * (2 * count) + tail


def file_of(rel: str, name: str, count: int) -> bytes:
    if name in CHAINS:
        return CHAINS[name](count)
    if name in NESTS:
        piece, head, tail = NESTS[name]
        return nested(piece, count, head, tail)
    if rel == "t.cu":
        return repeated(PIECES[name], count)
    return repeated(BUILD_PIECES[rel], count, b"")


@pytest.mark.parametrize("rel, name", [("t.cu", name) for name in [*PIECES, *NESTS, *CHAINS]]
                         + [(rel, rel) for rel in BUILD_PIECES])
def test_four_times_the_file_is_about_four_times_the_work(rel, name, monkeypatch):
    monkeypatch.setattr(sx, "_walked", [0])  # both files' trees indexed the same way (see sx._of_type)
    small, large = file_of(rel, name, 40), file_of(rel, name, 160)
    for data in (small, large):  # what a process learns once (tables, rules, answers kept for the next files)
        port_source(data, rel, file_kind(rel), Settings())
    small_work, large_work = lines_run(small, rel), lines_run(large, rel)
    assert large_work < 4.5 * small_work, (small_work, large_work)  # quadratic work: 5 to 15 times over


# 200 launching functions, each of its own name; each launcher called from a host function
# through its namespace: who calls each, whether each is declared __device__, whether the file
# opens each namespace are questions asked name by name (once one launch of the file is in
# device code, each launch is asked whether it is)
SCANNED = {
    "shared arrays": (PIECES["shared arrays"], b""),
    "scoped launchers": (b"__global__ void k%(i)d(float* x) { x[0] = %(i)d; }\n"
                         b"namespace q%(i)d { void go%(i)d(float* d) { k%(i)d<<<1, 1>>>(d); } }\n"
                         b"void run%(i)d(float* d) { q%(i)d::go%(i)d(d); }\n",
                         b"__global__ void child(float* x) {}\n__global__ void parent(float* x) { child<<<1, 1>>>(x); }\n"),
    # a macro per launch: each macro's calls are looked for
    "launch macros": (b"#define LAUNCH%(i)d(p) k%(i)d<<<1, 1>>>(p)\n__global__ void k%(i)d(int* p) { p[0] = %(i)d; }\n"
                      b"void r%(i)d(int* p) { LAUNCH%(i)d(p); }\n",
                      b"__global__ void child(float* x) {}\n__global__ void parent(float* x) { child<<<1, 1>>>(x); }\n"),
}


@pytest.mark.parametrize("name", SCANNED)
def test_a_file_is_scanned_for_a_bounded_number_of_names(name, monkeypatch):
    """Each host function's name is looked up in the text; past a few names, one pass indexes
    every word instead of a scan of the whole text per name (which made a 5 MB file take
    twice as long as its halves)."""
    piece, head = SCANNED[name]
    data = repeated(piece, 200, b"#include <cuda_runtime.h>\n" + head)
    scans = []

    def counting(real):
        def counted(text, word, *args, **kwargs):
            if len(text) == len(data):
                scans.append(word)
            return real(text, word, *args, **kwargs)
        return counted

    def counted_search(pattern, text, *args, **kwargs):
        if len(text) == len(data):
            scans.append(pattern)
        return real_search(pattern, text, *args, **kwargs)

    for scan in ("whole_word_starts", "starts_of"):
        reals = {getattr(patterns, scan), getattr(sx, scan)}  # the reference, and the C scanner's
        for module in list(sys.modules.values()):
            real = getattr(module, scan, None)
            if getattr(module, "__name__", "").startswith("hipport.") and real in reals:
                monkeypatch.setattr(module, scan, counting(real))
    real_search = re.search
    monkeypatch.setattr(re, "search", counted_search)
    port_source(data, "t.cu", "cuda", Settings())
    assert 0 < len(scans) <= sx._SCANS_BEFORE_INDEX + 8, scans[-10:]


@pytest.mark.parametrize("words", [
    [b"go%d" % i for i in range(60)] + [b"s1", b"t", b"x", b"absent", b"go", b"float", b"_", b"0x"],
    [b"threadIdx", b"__shared__", b"cuda_runtime", b"include", b"s199", b"d"],
])
def test_word_starts_finds_what_a_scan_finds(words):
    data = repeated(PIECES["shared arrays"], 200) + b"go7"  # a word at the very end too
    ctx = context_for(data, "t.cu", "cuda", Settings())
    for word in words * 2:  # asked again after the index is built
        assert sx.word_starts(ctx, word) == patterns.whole_word_starts(data, word), word


def test_nodes_between_are_the_nodes_that_start_in_the_span():
    data = repeated(PIECES["shared arrays"], 30)
    ctx = context_for(data, "t.cu", "cuda", Settings())
    everything = sx.nodes(ctx, "subscript_expression")
    assert len(everything) == 120  # four a piece
    for start, end in [(0, len(data)), (0, 0), (400, 1800), (everything[5].start_byte, everything[9].start_byte),
                       (everything[5].start_byte + 1, everything[9].start_byte + 1), (len(data), len(data) + 5)]:
        assert sx.nodes_between(ctx, "subscript_expression", start, end) == [
            n for n in everything if start <= n.start_byte < end]


def test_a_long_line_is_read_once_for_all_its_findings(monkeypatch):
    """A generated or minified file on one line: the line is read and stripped once, not once
    per finding, and each finding's snippet is a window of it around the finding (the whole
    line in each of hundreds of findings made gigabytes of JSON)."""
    read = []
    real = Source.line_text
    monkeypatch.setattr(Source, "line_text", lambda self, line: read.append(line) or real(self, line))
    piece = b"__global__ void k%(i)d(float* x){x[threadIdx.x%%32]=__shfl_down_sync(0xffffffff,x[0],16);} "
    data = repeated(piece, 100, b"")
    done = port_source(data, "t.cu", "cuda", Settings())
    findings = done.result.findings
    assert len(findings) >= 200 and {f.line for f in findings} == {1}
    assert read == [1]
    line = data.decode().strip()
    for f in findings:
        assert len(f.snippet) <= SNIPPET_MAX + 2 and snippet_of(f.snippet, line), f
        assert line[f.column - 1 : f.end_column - 1] in f.snippet  # what was flagged
    assert findings[0].snippet.startswith("__global__ void k0(") and findings[0].snippet.endswith(CUT)
    assert findings[-1].snippet.startswith(CUT) and line.endswith(findings[-1].snippet[1:])


def test_a_long_lines_snippet_is_cut_on_whole_characters():
    """A window of a long line never splits a UTF-8 character; a line up to SNIPPET_MAX long is
    its snippet whole, as are the lines of a file whose findings lie elsewhere."""
    text = ("é" * 150 + " __shfl_down_sync(0xffffffff, v, 1); " + "ü" * 300).encode()
    src = Source(b"int a;\n" + text + b"\n", "t.cu")
    at = src.data.index(b"__shfl")
    for offset in range(at - 3, at + 4):
        got = src.snippet(2, offset)
        assert "\ufffd" not in got and snippet_of(got, text.decode()) and len(got) <= SNIPPET_MAX + 2
        assert got.startswith(CUT) and got.endswith(CUT)
    assert src.snippet(1, 0) == "int a;"
    short = ("x" * (SNIPPET_MAX - 4) + " y;").encode()
    assert Source(b"  " + short + b"  \n").snippet(1, 250) == short.decode()
    assert not snippet_of("…abc…", "abc" * 5)  # a window comes from a long line only
    assert not snippet_of("…zzz…", "abc" * 200)


def test_check_of_a_minified_file_stays_small(tmp_path):
    """A thousand findings on one 45 KB line: the JSON carries a window of the line per
    finding, not the line (of a 237 KB line with 6,000 findings, 1.4 GB of JSON before)."""
    from hipport.check import Options, run_check
    from hipport.report.formats import format_json

    piece = b"__global__ void k%(i)d(int*p){ p[0]=__shfl_down_sync(0xffffffff, p[0], 16); } "
    (tmp_path / "one.cu").write_bytes(repeated(piece, 500, b"#include <cuda_runtime.h>\n") + b"\n")
    result = run_check([tmp_path / "one.cu"], Settings(), Options(), cache_root=None)
    assert len(result.findings) >= 1000
    assert len("".join(format_json(result))) < len(result.findings) * 2000


def test_device_property_objects_are_searched_a_pattern_per_leading_letters(monkeypatch):
    """HP703 looks for `obj.major` of each cudaDeviceProp object the file declares: a pattern
    per name made a file of thousands of them quadratic."""
    from hipport.rules import arch_macro

    made = []
    real = arch_macro._member_pattern

    def counted(*args):
        made.append(args)
        return real(*args)

    monkeypatch.setattr(arch_macro, "_member_pattern", counted)
    data = repeated(b"void q%(i)d() { cudaDeviceProp pr%(i)d; cudaGetDeviceProperties(&pr%(i)d, 0); "
                    b"if (pr%(i)d.major >= 7) {} }\n", 300)
    found = port_source(data, "t.cu", "cuda", Settings()).result.findings
    assert sum(f.rule == "HP703" for f in found) == 300
    assert len(made) == 1


def test_the_scopes_a_file_opens_are_those_a_search_per_name_finds():
    data = (b"namespace a::b { struct S : public Base<T> { }; }\nclass Fwd;\nnamespace al = a::b;\n"
            b"template <class T> struct Tpl {};\nenum class E { x };\nunion U {\n};\nstructure X {}\n"
            b"struct Init v = { 1 };\n// class InComment {\nclass Long\n  : Mid\n{\n};\n")
    ctx = context_for(data, "t.cu", "cuda", Settings())
    for name in ["a", "b", "S", "Base", "T", "Fwd", "al", "Tpl", "E", "U", "X", "structure", "Init", "v",
                 "InComment", "Long", "Mid", "public", "x", "namespace", "nowhere"]:
        searched = re.search(rb"\b(?:namespace|class|struct|union)\b[^;{}=]*\b" + name.encode()
                             + rb"\b[^;{}=]*\{", data) is not None
        assert sx.opens_scope(ctx, name) == searched, name


@pytest.mark.parametrize("types, of", [(("array_declarator",), "binary_expression"),
                                        (("function_definition", "lambda_expression"), "declaration"),
                                        (("function_definition", "lambda_expression"), "binary_expression")])
def test_within_is_what_a_climb_finds(types, of):
    def climb(node):
        parent = node.parent
        while parent is not None:
            if parent.type in types:
                return True
            parent = parent.parent
        return False

    checked = 0
    for path in sorted((ROOT / "fixtures").rglob("*.cu")):
        ctx = context_for(path.read_bytes(), path.name, "cuda", Settings())
        for node in sx.nodes(ctx, of):
            assert sx.within(ctx, node, *types) == climb(node), (path, node)
            checked += 1
    assert checked > 100


@pytest.mark.parametrize("types", [("function_definition", "lambda_expression"), ("call_expression",),
                                   ("declaration", "parameter_declaration", "field_declaration"),
                                   ("compound_statement",), ("ERROR",)])
def test_enclosing_is_what_a_climb_finds(types, monkeypatch):
    def climb(node):
        out, parent, depth = [], node.parent, 0
        while parent is not None:
            if parent.type in types:
                out.append(parent.id)
            parent, depth = parent.parent, depth + 1
        return out, depth

    texts = [path.read_bytes() for path in sorted((ROOT / "fixtures").rglob("*.cu"))[::3]]
    texts.append(nested(NESTED, 30, b"__global__ void k() {\n", b"}\n"))
    texts.append(b"void f() { int a[] = {1, 2,}; g(,); }\n")  # missing and error nodes
    texts.append(texts[-2].replace(b"float v20 =", b"float v20 = g(,) +"))  # and deep down
    texts.append(nested(b"{ if (x) { f(g(h%(i)d(1)), [=](int i) { return k(i); }) ", 20, b"void m() {\n", b"}\n"))
    checked = deep = 0
    for climbed in (sx._CLIMB, 2):  # as it is, and with the spans asked from two levels up
        monkeypatch.setattr(sx, "_CLIMB", climbed)
        for data in texts:
            ctx = context_for(data, "t.cu", "cuda", Settings())
            for node in list(sx.walk(ctx.tree.root_node))[::5]:
                found, depth = climb(node)
                assert [a.id for a in sx.enclosing(ctx, node, *types)] == found, node
                checked += 1
                deep += depth > climbed + 1  # the spans told the outer ones
    assert checked > 2000 and deep > 1000
