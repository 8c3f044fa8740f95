"""Rule triggers are a pre-check only: a rule skipped for lack of its trigger bytes would have
found nothing anyway. Checked on every fixture and example by running each rule with its
triggers and again with none."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hipport.analysis import analyze, context_for
from hipport.config import Settings
from hipport.files import file_kind
from hipport.rules import Hit, all_rules

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(p for base in ("fixtures", "examples") for p in (ROOT / base).rglob("*")
                 if p.is_file() and file_kind(p.name) != "other" and "broken" not in p.parts)


def ctx_of(text: bytes, name: str = "k.cu"):
    """A file's analysis context, by default a CUDA file's (`tree` is in its __dict__ once parsed)."""
    return context_for(text, name, file_kind(name), Settings())


def hits_without_tree(rule, text: bytes, name: str = "k.cu") -> list:
    """The rule's hits on `text`, which it must find without parsing the file."""
    ctx = ctx_of(text, name)
    hits = list(rule(ctx))
    assert "tree" not in ctx.__dict__, text
    return hits


def quoted(hits) -> list[str]:
    """What each hit's message quotes first (the flagged name or text)."""
    return [h.message.split("`")[1] for h in hits]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_triggers_hide_no_finding(path: Path):
    data = path.read_bytes()
    kind = file_kind(path.name)
    settings = Settings()
    with_triggers = analyze(context_for(data, path.name, kind, settings))
    untriggered = [r._replace(triggers=()) for r in all_rules()]
    assert with_triggers == analyze(context_for(data, path.name, kind, settings), untriggered)


# Lexer-level pre-checks inside rules: (module, function, the answer that makes the rule ask
# the tree). Forcing every one to that answer must change no finding.
PRE_CHECKS = [
    ("hipport.rules.warp", "_may_flag_declarator", True),
    ("hipport.rules.shared_memory", "_may_request_over_64k", True),
    ("hipport.rules.shared_memory", "_may_exceed_64k", True),
    ("hipport.rules.warp", "_may_be_warp_sized", True),
    ("hipport.rules.warp", "_sync_first_args", None),
    ("hipport.rules.warp", "_may_flag_mask_constant", True),
    ("hipport.rules.warp", "_lane_math_may_count", True),
    ("hipport.rules.warp", "_may_shift_by_lane", True),
    ("hipport.rules.dynamic_parallelism", "all_certainly_host", False),
    ("hipport.rules._host_code", "certainly_host", False),
    ("hipport.rules.texture", "read", None),
    ("hipport.rules.shared_memory", "_text_opt_ins", None),
    ("hipport.rules.warp", "_may_reduce_from_16", True),
]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_pre_checks_hide_no_finding(path: Path, monkeypatch):
    import importlib

    data = path.read_bytes()
    kind = file_kind(path.name)
    settings = Settings()
    checked = analyze(context_for(data, path.name, kind, settings))
    for module, name, ask_the_tree in PRE_CHECKS:
        monkeypatch.setattr(importlib.import_module(module), name,
                            lambda *args, answer=ask_the_tree, **kwargs: answer)
    assert checked == analyze(context_for(data, path.name, kind, settings))


def test_a_rule_runs_only_where_one_of_its_triggers_is():
    calls = []

    def probe(ctx):
        calls.append(ctx.path)
        yield Hit(0, 1, "probe")

    template = all_rules()[0]
    rule = template._replace(code="HP9999", check=probe, kinds=frozenset({"cuda"}),
                               triggers=(b"__shfl_xor", b"cudaGraphLaunch"))
    settings = Settings()
    for name, data in (("none.cu", b"__global__ void k() {}\n"),
                       ("one.cu", b"void f() { cudaGraphLaunch(g, s); }\n"),
                       ("other.cu", b"int x = __shfl_xor_sync(~0u, v, 1);\n"),
                       ("host.cpp", b"void f() { cudaGraphLaunch(g, s); }\n")):
        found = analyze(context_for(data, name, file_kind(name), settings), [rule])
        assert [f.rule for f in found] == (["HP9999"] if name in ("one.cu", "other.cu") else [])
    assert calls == ["one.cu", "other.cu"]


def test_a_pattern_trigger_is_not_searched_for_a_rule_already_enabled():
    """Once a word or an earlier pattern has enabled a rule, its other patterns are not
    searched (HP402's six lane-arithmetic patterns, each a pass over the file)."""
    searched = []

    class Counting:
        def __init__(self, pattern: bytes):
            self.pattern = re.compile(pattern)

        def search(self, data):
            searched.append(self.pattern.pattern)
            return self.pattern.search(data)

    def probe(ctx):
        yield Hit(0, 1, "probe")

    template = all_rules()[0]
    rule = template._replace(code="HP9998", check=probe, kinds=frozenset({"cuda"}),
                             triggers=(b"word", Counting(rb"a+b"), Counting(rb"c+d")))
    for data, expected_searches, hits in ((b"aab ccd\n", [rb"a+b"], 1), (b"word ccd\n", [], 1),
                                          (b"ccd\n", [rb"a+b", rb"c+d"], 1), (b"none\n", [rb"a+b", rb"c+d"], 0)):
        del searched[:]
        found = analyze(context_for(data, "p.cu", "cuda", Settings()), [rule])
        assert searched == expected_searches and len(found) == hits, data


def test_version_macro_trigger_covers_every_version_macro():
    from hipport.loaders import tools
    from hipport.rules import REGISTRY
    from hipport.rules.version_macro import version_macro_names

    mappings, _ = tools(Settings())
    triggers = REGISTRY["HP751"].triggers
    uncovered = [n for n in version_macro_names(mappings) if not any(t in n.encode() for t in triggers)]
    assert not uncovered, f"HP751 would skip files whose only version test is {uncovered}"


@pytest.mark.parametrize("text", [b"lane = tid % 32;", b"w = tid >> (5);", b"w = tid >>\\\n 5;",
                                  b"l = threadIdx.x & 0x1F;", b"w = tid / 0x20;", b"l = tid & (32 - 1);",
                                  b"l = 31u & threadIdx.x;", b"l = (0x1f) & tid;"])
def test_lane_math_trigger_finds_every_spelling_the_rule_accepts(text):
    from hipport.rules.warp import _31_AND, _AND_31, _DIVIDE_32, _SHIFT_5, LANE_MATH_TRIGGERS

    assert any(t.search(text) for t in LANE_MATH_TRIGGERS)
    # the triggers together accept exactly what the rule's own patterns accept
    rule_patterns = (_DIVIDE_32, _AND_31, _31_AND, _SHIFT_5)
    for i in range(len(text)):
        assert any(t.match(text, i) for t in LANE_MATH_TRIGGERS) == any(p.match(text, i) for p in rule_patterns)


_LANE_PIECES = st.sampled_from([b"%", b"/", b"&", b">>", b">", b"3", b"32", b"31", b"1", b"0x", b"0X", b"0", b"1f",
                                b"1F", b"20", b"5", b"u", b"L", b" ", b"(", b")", b"\\", b"x", b"\n",
                                b"\t", b"\x0b", b"\r", b"=", b"a"])


@settings(max_examples=3000, deadline=None)
@given(st.lists(_LANE_PIECES, max_size=16).map(b"".join))
def test_lane_math_guards_hold_every_match(text):
    """A Guarded trigger is skipped where none of its words is: each of its matches holds one."""
    from hipport.rules.warp import LANE_MATH_TRIGGERS

    for t in LANE_MATH_TRIGGERS:
        m = t.pattern.search(text)
        if m is not None:
            assert any(w in m.group() for w in t.words), (t.pattern.pattern, m.group())


@settings(max_examples=2000, deadline=None)
@given(st.lists(_LANE_PIECES, max_size=16).map(b"".join))
def test_lane_math_scan_finds_where_the_patterns_first_match(text):
    """HP402's one-pass trigger in C (_scan.lane_math) starts where the first match of its
    reference patterns does, and finds none where they find none."""
    from hipport.parse.lexer import _scan
    from hipport.rules.warp import LANE_MATH_TRIGGERS

    if _scan is None:
        pytest.skip("the C scanner is not built here")
    starts = [m.start() for m in (t.pattern.search(text) for t in LANE_MATH_TRIGGERS) if m is not None]
    assert _scan.lane_math(text) == min(starts, default=-1)


def test_lane_math_scan_is_the_trigger_where_it_is_built():
    from hipport.parse.lexer import _scan
    from hipport.rules import REGISTRY
    from hipport.rules.warp import LANE_MATH_TRIGGERS

    (trigger,) = REGISTRY["HP402"].triggers if _scan is not None else (None,)
    if _scan is None:
        assert REGISTRY["HP402"].triggers == LANE_MATH_TRIGGERS
        return
    assert {w for t in LANE_MATH_TRIGGERS for w in t.words} == set(trigger.words)
    for text in (b"int lane = threadIdx.x % 32;", b"int w = x / 32768; // 0x20 & y", b"x >>= 5;"):
        assert bool(trigger.pattern.search(text)) == any(t.search(text) for t in LANE_MATH_TRIGGERS), text


def test_a_guarded_pattern_is_searched_only_where_its_words_are():
    from hipport.analysis import plan_for
    from hipport.rules import REGISTRY, Guarded

    calls = []

    class Spy:
        def search(self, data):
            calls.append(data)
            return None

    rule = REGISTRY["HP402"]._replace(triggers=(Guarded(Spy(), (b"32",)),))
    for text in (b"int x = a % 31;", b"int x = a % 32;"):
        ctx = context_for(text, "g.cu", "cuda", Settings())
        analyze(ctx, [rule])
    assert calls == [b"int x = a % 32;"]  # one search, in the file that holds the word
    assert plan_for([rule], "cuda").substrings.words == (b"32",)


@pytest.mark.parametrize("text", [b"y = x / 32768;", b"m = tid & 0x1ff;", b"w = tid >> 50;",
                                  b"l = tid % 320;", b"w = tid / 0x200;", b"l = tid & 310;"])
def test_lane_math_triggers_skip_longer_numbers(text):
    from hipport.rules.warp import LANE_MATH_TRIGGERS

    assert not any(t.search(text) for t in LANE_MATH_TRIGGERS)


def test_lane_math_in_host_code_or_prose_costs_no_parse():
    from hipport.rules.warp import lane_arithmetic_with_32

    host = (b"// lane = tid % 32 in the kernel\n"
            b"int warps(int threads) { return threads / 32; }\n"
            b"int main() { int tid = 3; if (tid) { return (tid & 31) + warps(64); } return 0; }\n"
            b"#define HALF(n) ((n) >> 5)\n")
    assert hits_without_tree(lane_arithmetic_with_32, host) == []
    # in a kernel, at file scope, in a lambda of unknown kind: the tree decides, and flags
    for text in (b"__global__ void k(int* o) { o[0] = threadIdx.x % 32; }\n",
                 b"const int lane = tid % 32;\n",
                 b"struct S { int lane = tid & 31; };\n",
                 b"void h() { auto f = [] __device__ (int tid) { return tid / 32; }; }\n"):
        ctx = ctx_of(text)
        assert len(list(lane_arithmetic_with_32(ctx))) == 1, text


def test_lane_math_on_what_names_no_thread_costs_no_parse():
    """An operand counts only where it names a thread (a lane, for `%` and `&`) or a block
    (for `/` and `>>`, warps counted): CUTLASS's `Tile_N % 32 == 0` in device code needs no
    tree. A thread-named variable, threadIdx, or a block's size in the file leaves it to the
    tree; so does a name that may fold to a thread's in str (`tıd`)."""
    from hipport.rules.warp import lane_arithmetic_with_32

    for text in (b"template <int N> __device__ int f() { if constexpr (N % 32 == 0) { return 1; } return N & 31; }\n",
                 b"__device__ int g(int rows) { return rows / 32 + (rows >> 5); }\n"):
        assert hits_without_tree(lane_arithmetic_with_32, text) == [], text
    for text, flagged in ((b"__device__ int f(int lane_id) { return lane_id % 32; }\n", 1),
                          (b"__device__ int f(int x) { int t = threadIdx.x; return (t & 31) + x % 32; }\n", 1),
                          (b"__device__ int f(int nthreads) { return nthreads / 32; }\n", 1),
                          (b"__device__ int f(int rows) { return rows / 32; }\nint blocks;\n", 0),
                          ("__device__ int f(int t\u0131d) { return t\u0131d % 32; }\n".encode(), 1)):
        ctx = ctx_of(text)
        assert len(list(lane_arithmetic_with_32(ctx))) == flagged and "tree" in ctx.__dict__, text


def test_lane_shift_in_host_code_costs_no_parse():
    from hipport.rules.warp import lane_bit_shift_32

    host = (b"#define BIT(lane) (1u << (lane))\n"
            b"unsigned mask(int lane) { return 1u << lane; }  // 1u << lane in a kernel: flagged\n"
            b"int main() { std::cout << mask(3); return 0; }\n")
    assert hits_without_tree(lane_bit_shift_32, host) == []
    device = ctx_of(b"__device__ unsigned lt(int lane) { return (1u << lane) - 1; }\n")
    assert quoted(lane_bit_shift_32(device)) == ["1u << lane"]
    # device code whose shifts count no lane: `lane` elsewhere only (volumeRender's kernels)
    other = ctx_of(b"__device__ unsigned pack(float4 c) { return (unsigned(c.w) << 24) | (unsigned(c.z) << 16); }\n"
                   b"__device__ int lane_of(int t) { return t & 31; }\n")
    assert list(lane_bit_shift_32(other)) == [] and "tree" not in other.__dict__
    # the count's statement read to its end, past `;` in a literal; a `{` first leaves it to the tree
    for text, flagged in ((b'__device__ unsigned m(int lane) { return 1u << f(";", lane); }\n', ["1u << f(\";\", lane)"]),
                          (b"__device__ unsigned m(int lane) { return 1u << [&] { return lane; }(); }\n", None)):
        ctx = ctx_of(text)
        found = quoted(lane_bit_shift_32(ctx))
        assert "tree" in ctx.__dict__ and (flagged is None or found == flagged)


def test_a_shift_of_a_lane_not_by_one_costs_no_parse():
    """Only a number literal is shifted into a lane mask: shifting a lane-named value, or an
    expression in parentheses that ends with a name (the tensor-core GEMM samples' loads), asks
    no tree; literals in every spelling the rule flags still do, and are flagged."""
    from hipport.rules.warp import lane_bit_shift_32

    for text in (b"__device__ int f(int laneId, int s) { return g(laneId << s, laneId); }\n",
                 b"__device__ int f(int laneId, int s) { return (laneId % N_LANES) << s + laneId; }\n",
                 b"__device__ int f(int* a, int lane) { return a[0] << lane; }\n"):
        assert hits_without_tree(lane_bit_shift_32, text) == [], text
    for left in (b"1u", b"(1U)", b"~0u", b"-1", b"(unsigned)-1", b"0xffffffff", b"0xFFFFFFFFu",
                 b"1 /* one */", b"(unsigned)(1)", b"0xffff'ffffu"):
        text = b"__device__ unsigned f(int lane) { return " + left + b" << lane; }\n"
        ctx = ctx_of(text)
        found = quoted(lane_bit_shift_32(ctx))
        assert "tree" in ctx.__dict__, text
        assert found == [(left + b" << lane").decode()] or left in (b"(unsigned)(1)",), (text, found)


def test_a_dynamic_shared_memory_opt_in_is_read_from_the_text():
    """cudaFuncSetAttribute calls spelled plainly (the tensor-core GEMM samples') are found
    without a parse, with the very hits the tree gives; a spelling the text cannot be sure of
    (a qualified or templated name, a comment in the arguments, a declaration) asks the tree."""
    from hipport.rules import shared_memory as sm

    attr = b"cudaFuncAttributeMaxDynamicSharedMemorySize"
    plain = (b"#define SMEM (96 * 1024)\n"
             b"void f(int n) {\n"
             b"  checkCudaErrors(cudaFuncSetAttribute(k, " + attr + b", SMEM));\n"
             b"  cudaError_t e = cudaFuncSetAttribute(k, " + attr + b", n * 4);\n"
             b"  if (n) { cudaFuncSetAttribute(k, " + attr + b", 1024); }\n"
             b"  cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout, 100);\n"
             b"}\n"
             b"cudaError_t g() { return cudaFuncSetAttribute(k, " + attr + b", 128 << 10); }\n")
    ctx = ctx_of(plain)
    found = [h.severity for h in sm.dynamic_shared_memory_opt_in(ctx)]
    assert found == ["error", "", "error"] and "tree" not in ctx.__dict__  # "": the rule's warning
    assert sm._text_opt_ins(ctx) == sm._tree_opt_ins(ctx)
    for unsure in (b"void f() { ::cudaFuncSetAttribute(k, " + attr + b", 1 << 17); }\n",
                   b"void f() { cudaFuncSetAttribute<void>(k, " + attr + b", 1 << 17); }\n",
                   b"void f() { cudaFuncSetAttribute(k, /* big */ " + attr + b", 1 << 17); }\n",
                   b"cudaError_t cudaFuncSetAttribute(const void* f, int attr, int value);\n"):
        ctx = ctx_of(unsure)
        assert sm._text_opt_ins(ctx) is None, unsure
        assert [h.start for h in sm.dynamic_shared_memory_opt_in(ctx)] == [s for s, _, _ in sm._tree_opt_ins(ctx)]


def test_a_warp_comparison_or_macro_costs_no_parse():
    """A warp-named name before `==` (shfl_scan's `warp_id == 0 && ...`) or `(` in a macro body
    (histogram's `#define WARP_SIZE (1U << LOG2_WARP_SIZE)`) declares nothing: no tree. The
    macros are still flagged, as a declarator is."""
    from hipport.rules.warp import warp_size_constant_32

    for text, flagged in (
            (b"#define LOG2_WARP_SIZE 5U\n#define WARP_SIZE (1U << LOG2_WARP_SIZE)\n", ["LOG2_WARP_SIZE", "WARP_SIZE"]),
            (b"__global__ void k(int* o) { int warp_id = threadIdx.x / warpSize;\n"
             b"  if (warp_id == 0 && o) o[0] = 1; }\n", [])):
        assert quoted(hits_without_tree(warp_size_constant_32, text)) == flagged
    ctx = ctx_of(b"int main() { int devID, warp_size = 32; return devID + warp_size; }\n")
    assert quoted(warp_size_constant_32(ctx)) == ["warp_size"]


def test_a_warp_named_choice_read_whole_from_the_text_costs_no_parse():
    """A warp-named initializer with `?:`, `&&` or `||` is read from the text where the text is
    the whole of it (CUTLASS's `kWarpsInN = kIs2Sm ? 2 : 1;`), and a warp-named call on the
    right of `=` or a `using` alias is no declarator: no tree. Where a `,` after a `<` or a
    directive may leave the text short of the value, the tree decides."""
    from hipport.rules.warp import warp_size_constant_32

    for text in (b"template <bool kIs2Sm> struct S { static const int kWarpsInN = kIs2Sm ? 2 : 1; };\n",
                 b"constexpr int kLaneLayout = kM > 4 && kN > 4 ? 2 : 1, kWarpGroups = kA || kB;\n",
                 b"void f(int a, int b) { bool masked = warp_uniform(!((a > b) || (b < a))); }\n",
                 b"using WarpTileIterator = typename cond<(kN < 8), A, B>::type;\n"):
        assert hits_without_tree(warp_size_constant_32, text) == []
    for text in (b"template <int kWarpSize = B<1, 2>::v ? 1 : 2> struct T {};\n",
                 b"int kWarpSize = f<1, /* ; */ 2>(3) ? 1 : 2;\n",  # the choice past a `;` in a comment
                 b"constexpr int kWarpSize = c ?\n#if A\n 1\n#else\n 2\n#endif\n : 3;\n"):
        ctx = ctx_of(text)
        assert quoted(warp_size_constant_32(ctx)) == [] and "tree" in ctx.__dict__, text
    for text, flagged in ((b"constexpr int kWarpSize = kIsX ? 32 : 32;\n", ["kWarpSize"]),
                          (b"template <int kWarpSize = (N < 2) ? 32 : 32, int B = 1> struct T {};\n", ["kWarpSize"]),
                          (b"int lanes = c ? 2 : 1; /* ; */ int kWarpWidth = (c > 0) ? 1 : 1;\n", [])):
        assert quoted(warp_size_constant_32(ctx_of(text))) == flagged, text


def test_a_warp_constant_past_a_comment_or_before_a_templates_close_is_flagged():
    """The text of an initializer ends at a `;` or `,` in code, not in a comment, and a
    template's last parameter's value is read up to its `>` as well as past it: either hid
    these warp sizes from the pre-check, so no tree was asked."""
    from hipport.rules.warp import warp_size_constant_32

    for text in (b"constexpr int kWarpSize = 1 /* ; */ ? 32 : 64;\n",
                 b"constexpr int kWarpSize = 32 /* ; */, kLanes = 2;\n",
                 b"template <int kWarpSize = 32> struct X { int a; };\n",
                 b"template <int kWarpSize = 32>\n__global__ void k(int* p) { *p = 1; }\n"):
        assert quoted(warp_size_constant_32(ctx_of(text))) == ["kWarpSize"], text


def test_float_tiles_of_several_kernels_cost_no_parse():
    """The text bounds each array by the element sizes its declaration names: transpose's six
    float tiles (25 KiB if they all added up) need no tree; a double2 tile over 64 KiB, or a
    type written before `__shared__`, is still counted and asks the tree."""
    from hipport.rules.shared_memory import static_shared_memory_over_64k

    tiles = b"".join(b"__global__ void k%d(float* o) { __shared__ float tile[64][65]; o[0] = tile[0][0]; }\n" % i
                     for i in range(3))
    assert hits_without_tree(static_shared_memory_over_64k, tiles) == []
    for big in (b"__global__ void k(double2* o) { __shared__ double2 tile[64][65]; o[0] = tile[0][0]; }\n",
                b"__global__ void k(double2* o) { double2 __shared__ tile[64][65]; o[0] = tile[0][0]; }\n"):
        ctx = ctx_of(big)
        assert len(list(static_shared_memory_over_64k(ctx))) == 1 and "tree" in ctx.__dict__, big


def test_a_shuffle_without_16_costs_no_parse():
    """A `__shfl*` file whose loops start neither at 16 nor at 1 and whose butterfly steps are
    not 16 (cuda-samples' shfl_scan: `for (int i = 1; ...)` aside, offsets from warpSize) is
    told from the text; loops and steps spelled every way the rule flags still ask the tree."""
    from hipport.rules.warp import shuffle_reduction_from_16

    for text in (b"__device__ int f(int v) { for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_xor_sync(~0u, v, o); return v; }\n",
                 b"__device__ int f(int v, int w) { return __shfl_down_sync(~0u, v, w / 2); }\n",
                 b"__device__ int f(int v) { return __shfl_down_sync(~0u, v, 16, 16); }\n",  # a width
                 b"__device__ int f(int v, int w) { for (int i = 1; i <= w; i *= 2) { v += __shfl_up_sync(~0u, v, i); } return v; }\n",
                 b"__device__ int f(int v) { for (int i = 1; i < 32; i *= 2) { v += i; } return __shfl_sync(~0u, v, 0); }\n",
                 b"void h(std::vector<int>& xs) { for (int x : xs) g(x); }\n"
                 b"__device__ int f(int v) { return __shfl_sync(~0u, v, 0); }\n"):
        assert hits_without_tree(shuffle_reduction_from_16, text) == [], text
    for text in (b"__device__ int f(int v) { for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(~0u, v, o); return v; }\n",
                 b"__device__ int f(int v) { for (int o(8 * 2); o > 0; o >>= 1) v += __shfl_xor(v, o); return v; }\n",
                 b"__device__ int f(int v) { for (int o = 1; o < 32; o <<= 1) v += __shfl_up_sync(~0u, v, o); return v; }\n",
                 b"__device__ int f(int v) { for (int o = 1; o <= (16); o *= 2) { v += __shfl_up_sync(~0u, v, o); } return v; }\n",
                 b"__device__ int f(int v) { return __shfl_down_sync(~0u, v, (16)); }\n",
                 b"__device__ int f(int v) { return __shfl_xor(v, 0x10); }\n"):
        ctx = ctx_of(text)
        assert len(list(shuffle_reduction_from_16(ctx))) == 1 and "tree" in ctx.__dict__, text


def test_a_tile_of_32_by_33_costs_no_parse():
    """Only a one-dimensional `[32]` array may be flagged for its size alone: a transpose tile
    of 32 x 33 (cuda-samples' transpose) needs no tree; a `[32]` array indexed per lane does."""
    from hipport.rules.warp import warp_sized_shared_array

    tile = ctx_of(b"#define TILE 32\n__global__ void k(float* o) {\n  __shared__ float t[TILE][TILE + 1];\n"
                  b"  t[threadIdx.y][threadIdx.x] = o[0];\n  o[1] = t[threadIdx.x][threadIdx.y];\n}\n")
    assert list(warp_sized_shared_array(tile)) == [] and "tree" not in tile.__dict__
    per_lane = ctx_of(b"__global__ void k(float* o) {\n  __shared__ float s[32];\n"
                      b"  int lane = threadIdx.x % 32;\n  s[lane] = o[0];\n}\n")
    assert quoted(warp_sized_shared_array(per_lane)) == ["s"]


def test_a_mask_assignment_costs_no_parse():
    """Only a const declaration's mask is reported: an assignment (cuda-samples' sobol_gpu:
    `mask = -(g & 1);`) or a non-const variable needs no tree; `const` anywhere in the
    statement, or a brace before its end, leaves it to the tree."""
    from hipport.rules.warp import full_warp_mask_32_bit

    for text in (b"__global__ void k(int g, int* o) { int mask; mask = -(g & 1); o[0] = mask; }\n",
                 b"__global__ void k(int g, int* o) { unsigned mask = ~0u; /* const */ o[0] = mask & g; }\n",
                 # non-ASCII bytes elsewhere (a name in a comment) spell no mask name
                 "// \u00a9 J\u00fcrgen\nconst int n = 4;\nint f(int g) { int mask = -(g & 1); return mask + n; }\n".encode(),
                 # after a control statement's block (cuda-samples' EGL output sample)
                 b"const int n = 1;\nint f(int g) { int mask; if (g > n) { g = n; } mask = -(g & 1); return mask; }\n",
                 b"const int n = 1;\nint f(int g) { int mask; for (;;) { break; } mask = ~0u; return mask; }\n"):
        assert hits_without_tree(full_warp_mask_32_bit, text) == [], text
    for text in (b"__global__ void k(int* o) { const unsigned mask = ~0u; o[0] = mask; }\n",
                 b"__global__ void k(int* o) { constexpr unsigned mask = 0xffffffff; o[0] = mask; }\n"):
        ctx = ctx_of(text)
        assert quoted(full_warp_mask_32_bit(ctx)) == ["mask"], text
    ctx = ctx_of(b"__global__ void k(int* o) { const enum : unsigned { A } mask = (decltype(A))~0u; o[0] = mask; }\n")
    list(full_warp_mask_32_bit(ctx))
    assert "tree" in ctx.__dict__  # `}` before the name: the statement's start is not read


def test_a_mask_macro_costs_no_parse():
    """A directive is text to the tree (stb_image.h's `#define STBI__ZFAST_MASK ((1 << 9) - 1)`
    read as a mask initialized by `(`): the macro test reports a full mask macro, and no
    mask-named declaration outside directives leaves nothing to the tree."""
    from hipport.rules.warp import full_warp_mask_32_bit

    assert hits_without_tree(full_warp_mask_32_bit, b"#define ZFAST_MASK  ((1 << ZFAST_BITS) - 1)\n"
                             b"static const int bits = 9;\nint f(int c) { return c & ZFAST_MASK; }\n") == []
    ctx = ctx_of(b"#define FULL_MASK (0xffffffff)\nconst int n = 1;\n"
                 b"__global__ void k(int* o) { o[0] = __shfl_sync(FULL_MASK, o[1], 0) + n; }\n")
    assert quoted(full_warp_mask_32_bit(ctx)) == ["FULL_MASK"]


def test_a_sync_looking_variable_costs_no_parse():
    from hipport.rules.warp import _sync_first_args, full_warp_mask_32_bit

    # glew.h declares `GLboolean __GLEW_ARB_sync;`: not a call, so nothing for the tree to tell
    ctx = ctx_of(b"extern unsigned char __GLEW_ARB_sync;\nint f(int __x_sync, int y) { return __x_sync == y; }\n", "g.h")
    assert _sync_first_args(ctx) == []
    assert list(full_warp_mask_32_bit(ctx)) == [] and "tree" not in ctx.__dict__
    # a parenthesized callee is still a call: the text cannot settle it
    call = ctx_of(b"__device__ int g(int v) { return (__shfl_sync)(0xffffffff, v, 0); }\n", "g.h")
    assert _sync_first_args(call) is None
    assert quoted(full_warp_mask_32_bit(call)) == ["0xffffffff"]


NAMES = ["CUDA_VERSION", "CUDART_VERSION", "CUDA_VER", "NCCL_MAJOR", "__CUDACC_VER_MAJOR__", "T"]


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from([n.encode() for n in NAMES] + [b"x", b"_", b" ", b"1", b".", b"CU", b"\n"]),
                max_size=10))
def test_whole_word_patterns_match_as_one_alternation(parts):
    from hipport.rules._syntax import whole_word_patterns

    data = b"".join(parts)
    one = re.compile(rb"\b(?:" + b"|".join(re.escape(n.encode()) for n in sorted(NAMES, key=len, reverse=True))
                     + rb")\b")
    split = sorted((m.span(), m.group()) for p in whole_word_patterns(NAMES) for m in p.finditer(data))
    assert split == [(m.span(), m.group()) for m in one.finditer(data)]


def test_whole_word_patterns_are_the_same_in_any_order_of_the_names():
    """Rules pass sets, whose order changes with each process's hash seed: the same names make
    the same pattern texts, which the compiled-pattern store then knows from the runs before."""
    from hipport.rules._syntax import whole_word_patterns

    names = ["__CUDACC_VER_MAJOR__", "__CUDART_API_VERSION", "__CUDACC_VER_MINOR__", "CUDA_VERSION"]
    texts = {tuple(p.pattern for p in whole_word_patterns(order)) for order in itertools.permutations(names)}
    assert len(texts) == 1


@pytest.mark.parametrize(("code", "text"), [
    ("HP401", b"#define WaRp_SiZe 32\n"),
    ("HP401", b"constexpr int kWAVE_SIZE = 32;\n"),
    ("HP451", b"#define FULL_MaSk 0xffffffffu\n"),
    # U+017F and U+212A match `s` and `k` case-blind: still a mask name
    ("HP451", "const unsigned FULL_MA\u017fK = 0xffffffff;\n".encode()),
    ("HP451", "const unsigned FULL_MAS\u212a = 0xffffffff;\n".encode()),
    ("HP451", b"__device__ int f(int v) { return __shfl_sync(0xffffffff, v, 0); }\n"),
    ("HP456", b"__global__ void k(int *o) { int LANE = threadIdx.x & 31; o[0] = 1u << LANE; }\n"),
])
def test_case_blind_names_trigger_their_rules(code, text):
    """These rules test names case-blind: their triggers are every case of the words, and the
    triggered run finds what the untriggered one does."""
    settings = Settings()
    rules = [r for r in all_rules() if r.code == code]
    found = analyze(context_for(text, "t.cu", "cuda", settings), rules)
    assert [f.rule for f in found] == [code]
    untriggered = [r._replace(triggers=()) for r in rules]
    assert found == analyze(context_for(text, "t.cu", "cuda", settings), untriggered)


def test_any_case_spells_every_case():
    from hipport.patterns import any_case

    assert set(any_case(b"ab")) == {b"ab", b"aB", b"Ab", b"AB"}
    assert any_case(b"a_1", b"A_1") == (b"a_1", b"A_1")  # no repeats; non-letters kept
    assert len(any_case(b"warp", b"wave", b"lane")) == 48


@pytest.mark.parametrize(("code", "text"), [
    # The driver API's handle and creation: no `Texture` or `Surface` in the file (the
    # handle rule once had only those two words as triggers, and missed these).
    ("HP253", b"#include <cuda.h>\nvoid keep(CUtexObject t);\n"),
    ("HP253", b"#include <cuda.h>\nvoid keep(CUsurfObject s);\n"),
    ("HP251", b"#include <cuda.h>\nvoid make(CUDA_RESOURCE_DESC* r) { cuSurfObjectCreate(0, r); }\n"),
    ("HP252", b"__global__ void k(cudaTextureObject_t t, float* o) { o[0] = tex1Dfetch<float>(t, 0); }\n"),
])
def test_texture_rules_trigger_on_their_own_names(code, text):
    """The texture rules read only the sites of their names (fetch functions, creation calls,
    handle types): those names are their triggers, so prose with `texture`, `context` or
    `surface` in it runs none of them, and every spelling of a site does."""
    settings = Settings()
    rules = [r for r in all_rules() if r.code == code]
    found = analyze(context_for(text, "t.cu", "cuda", settings), rules)
    assert [f.rule for f in found] == [code]
    assert not analyze(context_for(b"// the texture's context, on the surface\nint x;\n", "t.cu", "cuda",
                                   settings), [r._replace(triggers=()) for r in rules])


def test_name_triggers_keep_the_names_that_hold_no_other():
    from hipport.patterns import name_triggers

    assert name_triggers({"tex1D", "tex1Dfetch", "tex2D", "surf1Dread"}) == (b"surf1Dread", b"tex1D", b"tex2D")


# Pieces of the build-flag spellings, cut where their `needs` words could be broken up.
_FLAG_PIECES = st.sampled_from([
    b"-", b"--", b"=", b" ", b"\t", b'"', b";", b"_", b"X", b"arch", b"gpu-", b"architecture", b"sm_80",
    b"compute_", b"lto_", b"code", b"CMAKE_", b"CUDA_", b"ARCHITECTURES", b"TORCH_", b"ARCH_LIST",
    b"ptxas", b"-options", b"resource-usage", b"line", b"info", b"generate-", b"use_fast_math",
    b"compiler", b"expt-", b"relaxed-constexpr", b"extended-lambda", b"ftz", b"true", b"prec-",
    b"div", b"sqrt", b"maxrregcount", b"32", b"default-stream", b"per-thread", b"nvlink", b"rdc",
    b"relocatable-device-code", b"dlink", b"device-link", b"SEPARABLE_COMPILATION", b"-D",
])


def _build_flags():
    from hipport.rules.build_flags import ARCH_FLAGS, NVCC_ONLY_FLAGS, RDC_FLAGS

    return [(re.compile(f.regex), f.needs) for f in ARCH_FLAGS + NVCC_ONLY_FLAGS + RDC_FLAGS]


@settings(max_examples=3000, deadline=None)
@given(st.lists(_FLAG_PIECES, max_size=12).map(b"".join))
def test_build_flag_needs_hold_every_match(text):
    """A build file holding none of a flag's `needs` words is not searched for it: each match
    holds one."""
    for pattern, needs in _build_flags():
        m = pattern.search(text)
        if m is not None:
            assert any(w in m.group() for w in needs), (pattern.pattern, m.group())


def test_each_build_flag_is_found_with_its_needs():
    """The property above is not vacuous: every flag matches one of these lines, and the rules
    report them all."""
    lines = [b"-arch=sm_80", b"-gencode arch=compute_80,code=sm_80", b"-code=sm_80",
             b"-DCMAKE_CUDA_ARCHITECTURES=80", b"CUDA_ARCHITECTURES 80", b"TORCH_CUDA_ARCH_LIST",
             b"-Xptxas", b"--resource-usage", b"-lineinfo", b"--use_fast_math", b"-Xcompiler",
             b"--expt-relaxed-constexpr", b"--extended-lambda", b"-ftz=true", b"-prec-div=false",
             b"-maxrregcount=32", b"--default-stream per-thread", b"-Xnvlink", b"-rdc=true",
             b"-dlink", b"CUDA_SEPARABLE_COMPILATION"]
    for pattern, needs in _build_flags():
        matches = [m.group() for line in lines if (m := pattern.search(b" " + line))]
        assert matches, pattern.pattern
        assert all(any(w in m for w in needs) for m in matches), (pattern.pattern, matches)
    text = b"set(FLAGS " + b" ".join(lines) + b")\n"
    found = analyze(context_for(text, "CMakeLists.txt", "cmake", Settings()))
    codes = [f.rule for f in found if f.rule in ("HP1101", "HP1102", "HP1103")]
    assert len(codes) == len(lines), found


def test_plain_launch_bounds_are_read_without_a_parse():
    """cuda-samples' BlackScholes: `__launch_bounds__(128)` and `(MAX, 4)` need no tree; a
    template argument's comma or a nested call still goes to the parser."""
    from hipport.rules.launch_bounds import launch_bounds

    text = (b"#define MAX 256\n__launch_bounds__(128) __global__ void a(float* p) {}\n"
            b"__global__ void __launch_bounds__( MAX , 4 ) b(float* p) {}\n")
    ctx = context_for(text, "k.cu", "cuda", Settings())
    assert [args for _, _, args in launch_bounds(ctx)] == [[b"128"], [b"MAX", b"4"]]
    assert "tree" not in ctx.__dict__
    text = b"template <int N> __global__ void __launch_bounds__(Pick<N, 2>::v, MIN(N, 4)) k(float* p) {}\n"
    ctx = context_for(text, "k.cu", "cuda", Settings())
    assert [args for _, _, args in launch_bounds(ctx)] == [[b"Pick<N, 2>::v", b"MIN(N, 4)"]]
    assert "tree" in ctx.__dict__
