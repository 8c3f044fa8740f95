"""warp-size (32-lane assumptions) and warp-mask (32-bit lane masks) rules.

AMD CDNA GPUs (MI100/MI200/MI300) run 64-lane wavefronts; RDNA runs 32. HIP's `warpSize`
gives the device's value (not a compile-time constant in ROCm 7), and HIP's ballot/mask
functions use 64-bit masks."""

from __future__ import annotations

import bisect
import re

from hipport import regexes
from hipport.parse import IS_WORD_BYTE
from hipport.parse.braces import word_before
from hipport.parse.lexer import _scan
from hipport.patterns import any_case, leftmost_matches
from hipport.rewrite.calls import parse_call, split_top_level
from hipport.rules import Guarded, Hit, rule
from hipport.rules import _syntax as sx
from hipport.rules import _host_code  # certainly_host through the module: tests force its answer
from hipport.rules._host_code import in_statements

# Names of variables holding a thread's index (or lane) by convention.
_THREAD_NAMES = (r"lane(?:_?id|_?idx|_?index)?|l(?:ane)?id|tid[xyz]?|t_?idx|thread_?(?:id|idx|index)(?:_?x)?|"
                 r"local_?(?:id|idx|tid)|ltid|gtid|gid|global_?(?:id|idx|tid)")
_THREAD_NAME = regexes.compile(r"(?:" + _THREAD_NAMES + r")\Z", re.I)
# Names of compile-time block-size constants: BLOCK_SIZE / 32 is "warps per block".
_BLOCK_WORDS = ("block", "threads", "cta", "tpb")  # in any case (nthreads, num_threads, blockDim)
_BLOCK_NAME = regexes.compile("|".join(_BLOCK_WORDS), re.I)
_WARP_NAME = regexes.compile(r"warp|wavefront|wave_?size|lanes?_per|threads_per_warp", re.I)
_MASK_NAME = regexes.compile(r"mask", re.I)
# `lane` in a name, but not in `plane` (GL_CLIP_PLANE0, plane_index): a plane is no lane.
_LANE = r"(?<!p)lane"
_LANE_NAME = regexes.compile(_LANE, re.I)
_WARP_OR_LANE = regexes.compile(r"warp|wid|" + _LANE, re.I)

_SHFL = regexes.compile(r"__shfl(?:_up|_down|_xor)?(?:_sync)?\Z")
_SHFL_DOWN_OR_XOR = regexes.compile(r"__shfl_(?:down|xor)(?:_sync)?\Z")
_BALLOT_LIKE = frozenset({"__ballot", "__ballot_sync", "__activemask", "__match_any_sync",
                          "__match_all_sync", "__match_any", "__match_all"})
_BIT_32 = {"__popc": "__popcll", "__ffs": "__ffsll", "__clz": "__clzll", "__brev": "__brevll"}
_32_BIT_TYPES = frozenset({"unsigned", "unsigned int", "int", "signed", "signed int", "uint32_t",
                           "int32_t", "uint", "unsigned long int"})  # `long` is 64-bit on Linux
_FULL32 = 0xFFFFFFFF

_WARP_FIX = ("Use warpSize (64 on CDNA, 32 on RDNA; a runtime value in ROCm 7, so size arrays "
             "for the largest case, 64) or query hipDeviceAttributeWarpSize on the host.")


def _literal(ctx, node) -> int | None:
    """Value of a number written out (not through a named constant): 32, 0x1f, 32u, (32 - 1)."""
    if node is None:
        return None
    if node.type == "number_literal":
        return sx.eval_int(ctx, node)
    has_number = False
    for n in sx.walk(node):
        if n.type == "identifier":
            return None
        has_number = has_number or n.type == "number_literal"
    return sx.eval_int(ctx, node) if has_number else None


def _lowered(ctx) -> bytes:
    """The file's bytes lower-cased (ASCII letters only), once per file: several rules ask."""
    return sx.memo(ctx, "warp.lowered", lambda c: c.data.lower())


def _contains_any(ctx, *words: bytes) -> bool:
    """Whether the file contains one of the lower-case words, in any case: a file-wide pre-check
    for the re.I name patterns. (Faster than an re.I search. Sound for names in str only where
    the words' letters have no non-ASCII case variants, as those of warp, wave and lane have
    none.)"""
    lowered = _lowered(ctx)
    return any(w in lowered for w in words)


# --------------------------------------------------------------------------- thread indices

def _thread_names(ctx, f) -> set[str]:
    """Names in device function `f` that hold a thread index or lane. Computed per function on
    first use: only functions with a lane-arithmetic candidate ever need them."""
    cache = sx.memo(ctx, "warp_thread_vars", lambda c: {})
    names = cache.get(f.body_start)
    if names is None:
        names = cache[f.body_start] = _compute_thread_names(ctx, f)
    return names


def _compute_thread_names(ctx, f) -> set[str]:
    in_body = []  # the assignments whose innermost device function is f, in source order
    for node_type in ("init_declarator", "assignment_expression"):
        found = sx.nodes(ctx, node_type)
        lo = bisect.bisect_left(found, f.body_start, key=_start)
        hi = bisect.bisect_left(found, f.body_end, key=_start)
        in_body += found[lo:hi]
    in_body.sort(key=_start)
    assigns = []
    for node in in_body:
        if sx.device_function_at(ctx, node.start_byte).body_start != f.body_start:
            continue  # in a lambda nested in f
        if node.type == "init_declarator":
            target, value = node.child_by_field_name("declarator"), node.child_by_field_name("value")
        else:
            target, value = node.child_by_field_name("left"), node.child_by_field_name("right")
        if target is not None and target.type == "identifier" and value is not None:
            assigns.append((sx.text(target), value))
    assigns.sort(key=lambda a: a[1].start_byte)
    names: set[str] = set()
    for _ in range(2):  # twice: a name may be assigned from one computed later
        for name, value in assigns:
            if _mentions_thread(value, names):
                names.add(name)
    return names


def _start(node) -> int:
    return node.start_byte


def _index_parts(node):
    """Walk an expression, skipping loaded values (`a[i]`, `*p`, `f(x)`): data read with a thread
    index is not itself a thread index."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if n.type in ("subscript_expression", "pointer_expression", "call_expression"):
            continue
        stack.extend(n.children)


def _mentions_thread(node, names: set[str], blocks: bool = False) -> bool:
    for n in _index_parts(node):
        if n.type == "field_expression":
            arg = n.child_by_field_name("argument")
            base = sx.text(arg) if arg is not None else ""
            if base == "threadIdx" or (blocks and base == "blockDim"):
                return True
        elif n.type == "identifier":
            name = sx.text(n)
            if name in names or _THREAD_NAME.match(name):
                return True
            if blocks and _BLOCK_NAME.search(name) and not _WARP_NAME.search(name):
                return True
        elif n.type == "call_expression" and sx.call_name(n) in ("thread_rank", "__lane_id"):
            return True
    return False


def _names_in(ctx, offset: int) -> set[str]:
    f = sx.device_function_at(ctx, offset)
    return _thread_names(ctx, f) if f is not None else set()


_LANE_DIVISORS = {"%": 32, "/": 32, ">>": 5}
# How the expression must be written to count: the operator, then (after spaces and opening
# parentheses) the number's own digits, never arithmetic that only yields it (`16 * 2`); for
# `&` the number may come first. LANE_MATH_TRIGGERS match every such spelling, so
# lane-arithmetic-with-32 skips (and never parses) files without one and still flags the same.
# Each trigger opens with a literal byte: re scans for that far faster than it tries an
# alternation of differently-led branches at every byte.
_SPELLED = {31: regexes.compile(rb"3[12]|0[xX]0*1[fF]"), 32: regexes.compile(rb"32|0[xX]0*20")}
# The numbers as an operand next to the operator: a digit after them makes another number
# (`/ 32768`, `& 0x1ff`), which no trigger matches.
_32 = rb"(?:32(?![0-9])|0[xX]0*20(?![0-9A-Fa-f]))"
_DIVIDE_32 = regexes.compile(rb"[%/][\s(]*" + _32)
_AND_31 = regexes.compile(rb"&[\s(]*(?:3[12](?![0-9])|0[xX]0*1[fF](?![0-9A-Fa-f]))")
_31_AND = regexes.compile(rb"(?:31|0[xX]0*1[fF])[uUlL]*[\s)]*&")
_SHIFT_5 = regexes.compile(rb">>[\s(\\]*(?:5(?![0-9])|0[xX]0*5(?![0-9A-Fa-f]))")
# Each is searched only in files holding a literal every one of its matches holds (half of
# cuda-samples' sources have no 32, 31 or hex number, three in four no `>>`).
_HEX = (b"0x", b"0X")
LANE_MATH_TRIGGERS = tuple(Guarded(regexes.compile(p), words) for p, words in (
    (rb"%[\s(]*" + _32, (b"32", *_HEX)), (rb"/[\s(]*" + _32, (b"32", *_HEX)),
    (_AND_31.pattern, (b"31", b"32", *_HEX)), (rb"31[uUlL]*[\s)]*&", (b"31",)),
    (rb"0[xX]0*1[fF][uUlL]*[\s)]*&", _HEX), (_SHIFT_5.pattern, (b">>",))))
# Each trigger, and whether what it matches counts warps (`/ 32`, `>> 5`) rather than takes a lane
_LANE_MATH_KINDS = tuple(zip(LANE_MATH_TRIGGERS, (False, True, False, False, False, True)))


class _LaneMathScan:
    """LANE_MATH_TRIGGERS searched together in one pass, in C (_scan.lane_math): one by one,
    each started at every `%`, `/`, `&` or `0` of the file (printf formats, comments, hex
    tables), they took 35 ms of cuda-samples' 1.45 s port, the pass 18 ms."""

    @staticmethod
    def search(data: bytes) -> bool:
        return _scan.lane_math(data) >= 0


# HP402's trigger: the C pass where it is built, else the patterns themselves.
LANE_MATH_TRIGGER = (LANE_MATH_TRIGGERS if _scan is None else
                     (Guarded(_LaneMathScan(), tuple(dict.fromkeys(w for t in LANE_MATH_TRIGGERS for w in t.words))),))


def _written_as(ctx, operator, literal, value: int) -> bool:
    """Whether `literal` (an operand of `operator`) is `value` written as LANE_MATH_TRIGGERS
    expect: its digits, next to the operator."""
    if _literal(ctx, literal) != value:
        return False
    data, at = ctx.data, operator.start_byte
    if value == 5:
        return _SHIFT_5.match(data, at) is not None
    if literal.start_byte > at:  # `x & 31`, `x % 32`
        return (_AND_31 if value == 31 else _DIVIDE_32).match(data, at) is not None \
            and _SPELLED[value].search(literal.text) is not None
    m = _31_AND.search(data, literal.start_byte, operator.end_byte)  # `31 & x`
    return m is not None and m.end() == operator.end_byte


def _lane_math(ctx, node) -> str | None:
    """Describe `x % 32`, `x & 31`, `x / 32`, `x >> 5` on a thread index (or block size)."""
    if node.type != "binary_expression":
        return None
    operator = node.child_by_field_name("operator")
    op = sx.text(operator)
    if op != "&" and op not in _LANE_DIVISORS:
        return None
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    # The literal is checked first: the thread-index names are computed only for candidates.
    if op == "&":
        for a, b in ((left, right), (right, left)):
            if _written_as(ctx, operator, b, 31) and _is_thread_index(ctx, a, node.start_byte):
                return f"`& {sx.text(b)}` takes the lane within a 32-lane warp"
        return None
    if not _written_as(ctx, operator, right, _LANE_DIVISORS[op]):
        return None
    if op == "%" and _is_thread_index(ctx, left, node.start_byte):
        return f"`% {sx.text(right)}` takes the lane within a 32-lane warp"
    if op in ("/", ">>") and _is_thread_index(ctx, left, node.start_byte, blocks=True):
        return f"`{op} {sx.text(right)}` counts 32-lane warps"
    return None


def _is_thread_index(ctx, node, offset: int, blocks: bool = False) -> bool:
    """_mentions_thread with the names of the device function around offset; those are
    computed only when the expression's own words (threadIdx, tid, ...) do not settle it."""
    if _mentions_thread(node, frozenset(), blocks):
        return True
    names = _names_in(ctx, offset)
    return bool(names) and _mentions_thread(node, names, blocks)


def _lane_math_nodes(ctx):
    def compute(c):
        out = []
        if not _lane_math_may_count(c):
            return out  # no tree: most files with a trigger have it only in host code or prose
        for node in sx.nodes(c, "binary_expression"):
            # what the expression is first (cheap, and rarely a match), then where it is
            why = _lane_math(c, node)
            if not why or not sx.relevant(c, node.start_byte):
                continue
            in_device = sx.in_device_code(c, node.start_byte)
            at_file_scope = sx.device_function_at(c, node.start_byte) is None and _outside_functions(c, node)
            if not (in_device or at_file_scope):
                continue
            if sx.within(c, node, "array_declarator"):
                continue  # a shared array's size: warp-sized-shared-array reports it
            out.append((node, why))
        return out
    return sx.memo(ctx, "warp_lane_math", compute)


def _lane_math_may_count(ctx) -> bool:
    """Whether a flagged expression may exist, told without the tree. Each one's operator (or
    its `31 &`) is a LANE_MATH_TRIGGERS match, in device code or outside every function (a
    match in a function body, a brace pair of statements, that is certainly host code is
    neither), and its operand names a thread (_mentions_thread): `threadIdx`, a thread-named
    variable, `thread_rank()` or `__lane_id()`, or what is computed from one of them; or, when
    it counts warps (`/`, `>>`), a block size. CUTLASS's `Tile_N % 32 == 0` in device code
    names none."""
    braces = ctx.lexed.braces
    counted = [counts_warps for pattern, counts_warps in _LANE_MATH_KINDS
               if any(not (_host_code.certainly_host(ctx, at) and in_statements(braces, at))
                      for at in _code_matches(ctx, pattern))]
    if not counted:
        return False
    if _may_spell_oddly(ctx.data, _ODD_CASE_LETTERS):
        return True  # a name may match in str, not in the lower-cased bytes (`tıd`): left to the tree
    lowered = _lowered(ctx)
    if _THREAD_WORDS.search(lowered) is not None:
        return True
    return any(counted) and any(w.encode() in lowered for w in _BLOCK_WORDS)


# A thread's words in the lower-cased text (the names in any case); a block size's are
# _BLOCK_WORDS.
_THREAD_WORDS = regexes.compile((r"\b(?:threadidx|thread_rank|__lane_id|" + _THREAD_NAMES + r")\b").encode())


def _code_matches(ctx, pattern):
    """Where `pattern` matches in code outside directives (the tree reads a macro body as
    text): where an operator may be. The expression around an operator starts in the same
    brace pair as the operator, so certainly_host() answers for both."""
    plain = ctx.lexed.in_plain_code
    for m in pattern.finditer(ctx.data):
        if plain(m.start()):
            yield m.start()


_SHIFT = regexes.compile(rb"<<|>>")
_LANE_BYTES = regexes.compile(_LANE.encode(), re.I)  # _LANE_NAME's test on bytes (no non-ASCII case forms)


def _may_shift_by_lane(ctx) -> bool:
    return any(not _host_code.certainly_host(ctx, at) for at in _lane_shifts(ctx))


def _lane_shifts(ctx):
    """The shifts in code that may shift a literal by a lane: the operand before the operator
    may be a number literal (_may_shift_a_literal), and `lane` (any case) stands between the
    operator and the end of its statement, which holds the whole count (where a `{` comes
    first, a lambda or a braced list, the shift is kept: not read here)."""
    data = ctx.data
    for at in _code_matches(ctx, _SHIFT):
        if not _may_shift_a_literal(ctx, at):
            continue
        stop = ctx.lexed.statement_end(at + 2)
        if data[stop : stop + 1] == b"{" or _LANE_BYTES.search(data, at + 2, stop):
            yield at


# The bytes of a number literal or a name (digit separators, UCNs and `$` included).
_TOKEN_BYTES = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$\\.'"


def _may_shift_a_literal(ctx, at: int) -> bool:
    """Whether the operand before the shift operator at `at` may be one that lane-bit-shift
    flags: `1u`, `0xffffffff`, `~0u`, `-1`, in parentheses or after a cast, each ends with a
    number literal. So the last token before the operator, past closing parentheses (and
    spaces and comments, which the tree skips too), starts with a digit; a name there (`laneId
    << n`) or a bracket ends another operand. A directive line there: can't tell."""
    lexed, data = ctx.lexed, ctx.data
    end = lexed.previous_code(at)
    while data[end - 1 : end] == b")":
        end = lexed.previous_code(end - 1)
    if end and lexed.in_directive(end - 1):
        return True
    head = data[max(0, end - 64) : end]
    token = head[len(head.rstrip(_TOKEN_BYTES)):]
    return token[:1].isdigit() or token[:1] == b"."


def _outside_functions(ctx, node) -> bool:
    return not sx.within(ctx, node, "function_definition", "lambda_expression")


_MACRO_LANE_MATH = regexes.compile(
    rb"(?:threadIdx\s*\.\s*[xyz]|\b(?:lane_?id|laneId|tid|thread_?id)\b)\s*\)?\s*"
    rb"(?:%\s*32\b|&\s*(?:31|0x1[fF])\b|/\s*32\b|>>\s*5\b)"
    rb"|\b(?:blockDim\s*\.\s*[xyz]|\w*(?:BLOCK|THREADS|[Bb]lock|[Tt]hreads)\w*)\s*\)?\s*(?:/\s*32\b|>>\s*5\b)")


_LOG_NAME = regexes.compile(r"log|shift|bits", re.I)
# A name with warp/wave/lane in it, then (past spaces and comments) `=`, `(` or `{`: what every
# declarator, enumerator or default that warp-size-constant-32 reports looks like.
# Searched in the lower-cased text (same offsets; a case-blind alternation is tried at every
# byte, a plain one only where its first letters occur).
_WARP_DECLARATOR = regexes.compile(rb"(?:warp|wave|lane)\w*[\s\\]*(?:/\*(?:[^*]|\*(?!/))*\*/[\s\\]*)*[=({]")
# The same, one pattern per word, matched as the alternation (patterns.leftmost_matches): each
# then opens with a literal.
_WARP_DECLARATORS = tuple(regexes.compile(word + _WARP_DECLARATOR.pattern[len(rb"(?:warp|wave|lane)"):])
                          for word in (b"warp", b"wave", b"lane"))
_MASK_OR_LANE = regexes.compile(r"mask|" + _LANE, re.I)


_VALUE_END = regexes.compile(rb"[;,{}()]")
_NAME_START = regexes.compile(rb"\w*\Z")
_WORD = regexes.compile(rb"\w+")


def _initializer_text(ctx, start: int) -> bytes:
    """An initializer's text from `start` (just past `=` or `(`) to where it ends: `;`, `,` or
    `)` outside parentheses, or any brace, in code (not in a comment or literal). At worst a
    prefix of the initializer."""
    return ctx.data[start:_initializer_end(ctx, start)]


def _initializer_end(ctx, start: int) -> int:
    data, lexed = ctx.data, ctx.lexed
    depth = 0
    for d in _VALUE_END.finditer(data, start):
        at = d.start()
        if lexed.in_comment_or_string(at):
            continue
        c = data[at]
        if c == 0x28:  # (
            depth += 1
        elif c == 0x29 and depth > 0:  # )
            depth -= 1
        else:
            return at
    return len(data)


# A lone `<` before the `,` that ended an initializer's text: template arguments, whose comma
# ends it early. A lone `>` in the text may close a template's parameters: the text up to it
# is a value too. `using` before a name: an alias (`using WarpT = ...`), no variable.
_LESS = regexes.compile(rb"(?<!<)<(?![<=])")
_GREATER = regexes.compile(rb"(?<![->])>(?![>=])")
_USING = regexes.compile(rb"\busing\Z")


def _whole_initializer(data: bytes, m: re.Match, end: int, text: bytes) -> bool:
    """Whether `text`, ending at `end`, is the whole initializer of _WARP_DECLARATOR's match
    `m`, as the tree's value node holds it (past spaces): it ends at `;`, at `)` (closing the
    parentheses `m` opened or a parameter list), or at a `,` after `=` and no `<`."""
    stop = data[end : end + 1]
    if stop == b",":
        return data[m.end() - 1] == 0x3D and _LESS.search(text) is None  # `=`
    return stop in (b";", b")")


def _may_flag_declarator(ctx, m: re.Match) -> bool:
    """Whether a _WARP_DECLARATOR match may be a declarator warp-size-constant-32 flags: its
    name may be flagged and its value, read from the text, may be a warp constant. A prefix
    of the initializer with a name no constant resolves makes the whole one unknown too,
    unless `?:`, `&&` or `||` can decide without that name: where one follows, the text must
    be the whole initializer (`kIs2Sm ? 2 : 1;`), or the tree decides. The text of a
    template's last parameter runs on past its `>` (`int kWarpSize = 32> struct X`): the
    value up to that `>` counts too."""
    data = ctx.data
    if ctx.lexed.in_comment_or_string(m.start()) or data[m.end() - 1] == 0x7B:  # `{`: a list
        return False
    if data[m.end() - 1 : m.end() + 1] == b"==" or ctx.lexed.in_directive(m.start()):
        return False  # a comparison; or a directive's text (a macro body), where the tree has no declarator
    head = _NAME_START.search(data, max(0, m.start() - 64), m.start())
    name_start = head.start() if head else m.start()
    before = ctx.lexed.previous_code(name_start)
    if data[before - 1 : before] in (b"*", b"&", b"=") or _USING.search(data, max(0, before - 6), before):
        # `T *warp_ptr = ...`: a pointer or reference, which the rule never flags; `x = warp(...)`
        # or `x = warp = ...`: an expression; `using WarpT = ...`: a type; none is a declarator
        return False
    name = data[name_start : m.start()] + _WORD.match(data, m.start()).group()
    name = name.decode("latin-1")
    if not _warp_constant_name(name):
        return False
    end = _initializer_end(ctx, m.end())
    text = data[m.end() : end]
    if b"#" in text:
        return True  # a directive within it: the value the tree reads is not this text
    if not _whole_initializer(data, m, end, text):
        semi = ctx.lexed.find_in_code(b";", end)
        semi = len(data) if semi < 0 else semi
        if any(data.find(op, m.end(), semi) >= 0 for op in (b"?", b"&&", b"||")):
            return True
    closer = _GREATER.search(text)
    values = (text, text[: closer.start()]) if closer else (text,)
    return any(_warp_constant(name, sx.eval_int(ctx, value)) is not None for value in values)


# Every name _warp_constant_name accepts holds one of these (lower-cased).
_WARP_WORDS = regexes.compile(rb"warp|wave|lane")


def _warp_constant_name(name: str) -> bool:
    """Whether a constant of this name may be flagged at all (before its value is computed)."""
    return bool(_WARP_NAME.search(name) or _LANE_NAME.search(name))


_WARP_VALUES = frozenset({32, 5, 31})  # the only values _warp_constant flags


def _warp_constant(name: str, value: int | None) -> str | None:
    """Why the constant `name` = value hard-codes a 32-lane warp, if it does."""
    warpish, laneish = _WARP_NAME.search(name), _LANE_NAME.search(name)
    if value == 32 and warpish and not _MASK_NAME.search(name):
        return f"`{name}` = 32 hard-codes the warp size"
    if value == 5 and warpish and _LOG_NAME.search(name):
        return f"`{name}` = 5 is log2 of a 32-lane warp"
    if value == 31 and (warpish or laneish) and _MASK_OR_LANE.search(name):
        return f"`{name}` = 31 masks a lane within a 32-lane warp"
    return None


# --------------------------------------------------------------------------- warp-size rules

# Every name the rule flags holds warp, wave or lane in some case (the values may be spelled
# any way: 0x20, 1 << 5). Those letters have no non-ASCII case variants.
@rule(code="HP401", name="warp-size-constant-32", category="warp-size", severity="warning",
      effort="medium", triggers=any_case(b"warp", b"wave", b"lane"))
def warp_size_constant_32(ctx):
    """Flags constants that hard-code a 32-lane warp.

    What it does:
    Reports `#define WARP_SIZE 32`, `constexpr int kWarpSize = 32;`, `enum { WARP_THREADS = 32 }`,
    template defaults such as `int WARP_THREADS = 32`, and their relatives `LOG_WARP_SIZE 5`
    and `WARP_MASK 31` (names mentioning warp/lane). Definitions in `#if` branches that HIP
    builds do not compile (e.g. the `#else` of `#ifdef __HIP_PLATFORM_AMD__`) are not flagged.

    Why it matters on AMD GPUs:
    CDNA GPUs (MI100/MI200/MI300) execute 64-lane wavefronts. Code built on a 32-lane constant
    computes wrong lane ids and warp counts there, reduces only half a wavefront, or leaves
    half of each wavefront idle.

    Example:
    #define WARP_SIZE 32

    Fix:
    Use `warpSize` in device code (not a compile-time constant in ROCm 7), query
    hipDeviceAttributeWarpSize on the host, or select 64/32 per target at compile time (e.g.
    from `__GFX9__`/`__AMDGCN_WAVEFRONT_SIZE`, where the ROCm release still defines it).
    """
    if not _contains_any(ctx, b"warp", b"wave", b"lane"):
        return  # no name here could be flagged: every one mentions warp/wave/lane
    for m in ctx.lexed.defines_named(_WARP_WORDS, lowered=True):
        if m.params is not None:
            continue
        name = m.name.decode("latin-1")
        if not _warp_constant_name(name):
            continue
        consts = sx.int_constants(ctx)
        if not consts.may_be(name, _WARP_VALUES):
            continue
        why = _warp_constant(name, consts.get(name))
        if why and sx.relevant(ctx, m.start):  # the value first: most names are not warp sizes
            yield Hit(m.start, m.body_end, why, _WARP_FIX)
    if not any(_may_flag_declarator(ctx, m) for m in leftmost_matches(_WARP_DECLARATORS, _lowered(ctx))):
        return  # no warp/lane-named declarator whose value may be flagged: no tree needed
    pairs = []
    for node in sx.nodes(ctx, "init_declarator"):
        pairs.append((node.child_by_field_name("declarator"), node.child_by_field_name("value")))
    for node in sx.nodes(ctx, "field_declaration", "optional_parameter_declaration"):
        pairs.append((node.child_by_field_name("declarator"), node.child_by_field_name("default_value")))
    for node in sx.nodes(ctx, "enumerator"):
        pairs.append((node.child_by_field_name("name"), node.child_by_field_name("value")))
    for target, value in pairs:
        if target is None or value is None or target.type not in ("identifier", "field_identifier"):
            continue
        name = sx.text(target)
        if not _warp_constant_name(name) or not sx.relevant(ctx, target.start_byte):
            continue
        why = _warp_constant(name, sx.eval_int(ctx, value))
        if why:
            yield Hit(target.start_byte, value.end_byte, why, _WARP_FIX)


@rule(code="HP402", name="lane-arithmetic-with-32", category="warp-size", severity="warning",
      effort="medium",
      triggers=LANE_MATH_TRIGGER)
def lane_arithmetic_with_32(ctx):
    """Flags lane and warp-index arithmetic written with 32, 31 or 5.

    What it does:
    Reports `tid % 32`, `threadIdx.x & 31`, `threadIdx.x / 32`, `tid >> 5`, and
    `blockDim.x / 32` (warps per block), in device code or file-scope constants, where the
    operand is a thread index (`threadIdx`, a variable computed from it, or a lane/tid-named
    variable) or a block size. Also macro bodies such as `#define LANE (threadIdx.x & 31)`.
    The number must be written out (32 or 0x20, 31 or 0x1f, `>> 5`); arithmetic that only
    yields it (`16 * 2`) is not recognised. The same numbers in unrelated math, and block
    sizes of 32 in host launches, are not flagged; code written with `warpSize` is not flagged.

    Why it matters on AMD GPUs:
    On 64-lane wavefronts `tid % 32` is not the lane and `tid / 32` is not the wavefront:
    lanes 32..63 are treated as a second warp, so per-warp reductions and shared-memory slots
    go wrong.

    Example:
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

    Fix:
    Use `warpSize`: `threadIdx.x % warpSize`, `threadIdx.x / warpSize` (or `__lane_id()`),
    and `blockDim.x / warpSize` for the number of warps.
    """
    for node, why in _lane_math_nodes(ctx):
        yield Hit(node.start_byte, node.end_byte, f"`{sx.text(node)}`: {why}", _WARP_FIX)
    for m in sx.macro_bodies(ctx):
        if not sx.relevant(ctx, m.start):
            continue
        for hit in _MACRO_LANE_MATH.finditer(ctx.data, m.body_start, m.body_end):
            if ctx.in_code(hit.start()):
                yield Hit(hit.start(), hit.end(),
                          f"macro `{m.name.decode()}`: `{hit.group().decode()}` assumes 32-lane warps",
                          _WARP_FIX)


def _warp_indexed(ctx, name: str, start: int, end: int) -> str | None:
    """How the array is indexed per warp within [start, end), if it is."""
    starts, subs = sx.memo(ctx, "warp_subscripts_by_name", _subscripts_by_name).get(name, ((), ()))
    for sub in subs[bisect.bisect_left(starts, start):bisect.bisect_left(starts, end)]:
        idx = sub.child_by_field_name("indices") or sub.child_by_field_name("index")
        if idx is None:
            continue
        for n in sx.walk(idx):
            if n.type == "identifier" and _WARP_OR_LANE.search(sx.text(n)):
                return f"indexed by `{sx.text(n)}`"
            if n.type == "binary_expression" and _lane_math(ctx, n):
                return f"indexed by `{sx.text(n)}`"
    return None


def _subscripts_by_name(ctx) -> dict[str, tuple[list[int], list]]:
    """The file's subscripts by the text of what they index: (starts, nodes) in source order,
    so that each shared array reads its own (a nest of arrays scoped to the end of the
    kernel read every later array's subscripts, each)."""
    out: dict[str, tuple[list[int], list]] = {}
    for sub in sx.nodes(ctx, "subscript_expression"):
        arg = sub.child_by_field_name("argument")
        if arg is not None:
            starts, subs = out.setdefault(sx.text(arg), ([], []))
            starts.append(sub.start_byte)
            subs.append(sub)
    return out


def _may_be_warp_sized(ctx) -> bool:
    """Whether a shared array may be flagged, read from the text before the tree is asked: a
    dimension divides or shifts (`N / 32`, `N >> 5`), or the array has one dimension and it
    evaluates to 32 (a `[32][33]` tile is not flagged)."""
    declarators = sx.shared_declarator_texts(ctx)
    return declarators is None or any(
        any(b"/" in dim or b">>" in dim for dim in dims) or (len(dims) == 1 and sx.eval_int(ctx, dims[0]) == 32)
        for _, dims in declarators)


def _per_warp_dimension(ctx, dims) -> str | None:
    """Why one of the array's dimensions is `N / 32` or `N >> 5` (one slot per warp), if one is."""
    for size in dims:
        if size is not None and size.type == "binary_expression":
            op = sx.text(size.child_by_field_name("operator"))
            if op in ("/", ">>") and _literal(ctx, size.child_by_field_name("right")) == (
                    32 if op == "/" else 5):
                return f"dimension `{sx.text(size)}` is one slot per 32-lane warp"
    return None


@rule(code="HP403", name="warp-sized-shared-array", category="warp-size", severity="warning",
      effort="medium",
      triggers=(b'__shared__',))
def warp_sized_shared_array(ctx):
    """Flags shared-memory arrays sized for 32-lane warps.

    What it does:
    Reports `__shared__` arrays with a dimension of `blockDim/32`, `BLOCK / 32` or `N >> 5`
    (one slot per 32-lane warp), and 1-D `__shared__ T s[32]` arrays that the kernel indexes
    per warp or per lane (`s[warp_id]`, `s[lane]`, `s[threadIdx.x / 32]`). A `[32][33]` tile or
    a 32-bin histogram is not flagged.

    Why it matters on AMD GPUs:
    With 64-lane wavefronts the number of warps per block halves while lanes per warp double:
    a `[32]` per-lane array is too small for lanes 32..63, and per-warp slot counts derived
    from 32 no longer match the wavefronts actually running.

    Example:
    __shared__ float partial[32];  // one per warp
    if (lane == 0) partial[warp] = sum;

    Fix:
    Size per-warp arrays with the largest wavefront (64) or `blockDim.x / warpSize` rounded up
    to a compile-time maximum, and index them with `warpSize`-based lane/warp ids.
    """
    if not _may_be_warp_sized(ctx):
        return
    for shared in sx.shared_declarations(ctx):
        decl, name, dims = shared.decl, shared.name, shared.dims
        if not dims:
            continue
        # the sizes first (cheap, and rarely a match), then where the array is
        why = _per_warp_dimension(ctx, dims)
        if why is None and not (len(dims) == 1 and _literal(ctx, dims[0]) == 32):
            continue
        if not sx.relevant(ctx, decl.start_byte):
            continue
        f = sx.device_function_at(ctx, decl.start_byte)
        if f is None and not _outside_functions(ctx, decl):
            continue
        if why is None:  # a `[32]` array: flagged when it is indexed per warp or lane
            scope = (f.body_start, f.body_end) if f is not None else (0, len(ctx.data))
            how = _warp_indexed(ctx, name, *scope)
            if how:
                why = f"32 entries {how}: one per 32-lane warp or lane"
        if why:
            yield Hit(decl.start_byte, decl.end_byte,
                      f"shared array `{name}`: {why}", _WARP_FIX)


def _warp_loop(ctx, loop) -> str | None:
    """How a `for` loop's header spans 32 lanes: it starts at 16, or counts from 1 up to 16/32."""
    init = loop.child_by_field_name("initializer")
    cond = loop.child_by_field_name("condition")
    start = None
    if init is not None:
        vals = [n for n in sx.walk(init) if n.type in ("init_declarator", "assignment_expression")]
        if vals:
            v = vals[0].child_by_field_name("value") or vals[0].child_by_field_name("right")
            start = _literal(ctx, v)
    if start == 16:
        return "starts at offset 16"
    if start != 1:
        return None
    bound = None
    if cond is not None and cond.type == "binary_expression" and \
            sx.text(cond.child_by_field_name("operator")) in ("<", "<="):
        bound = _literal(ctx, cond.child_by_field_name("right"))
    return f"stops below {bound}" if bound in (32, 16) else None


_FOR = regexes.compile(rb"\bfor\b")
_SHFL_STEP = regexes.compile(rb"__shfl_(?:down|xor)(?:_sync)?\b")
_COMMENT_START = (b"/*", b"//")


def _may_reduce_from_16(ctx) -> bool:
    """Whether shuffle-reduction-from-16 may flag something, read from the text before the
    tree is asked: a `for` loop _warp_loop may describe (_may_be_warp_loop), or a
    `__shfl_down*`/`__shfl_xor*` call without a width whose offset may be 16. A value is
    evaluated from its text, constants resolved (more than _literal accepts); what the text
    does not show plainly (a comment in it, unpaired brackets, a template argument list) may."""
    data, lexed = ctx.data, ctx.lexed
    for m in _FOR.finditer(data):
        if not lexed.in_plain_code(m.start()):
            continue  # a macro body is text to the tree
        open_at = lexed.next_code(m.end())
        if data[open_at : open_at + 1] != b"(":
            return True
        if _may_be_warp_loop(ctx, open_at):
            return True
    for m in _SHFL_STEP.finditer(data):
        at = m.start()
        if (at and data[at - 1] in IS_WORD_BYTE) or not lexed.in_plain_code(at):
            continue
        call = parse_call(data, m.end())
        if call is None:
            return True
        first = 1 if m.group().endswith(b"_sync") else 0
        if len(call.args) != first + 2:
            continue  # an explicit width, or arguments the rule does not read
        offset = data[call.args[first + 1][0] : call.args[first + 1][1]]
        if any(c in offset for c in _COMMENT_START) or sx.eval_int(ctx, offset) == 16:
            return True
    return False


def _may_be_warp_loop(ctx, open_at: int) -> bool:
    """For the `for` whose `(` is at `open_at`: whether _warp_loop may describe it (a value its
    initializer sets, `= v`, `(v)` or `{v}`, may be 16; or it may be 1 and a `<`/`<=` bound
    16 or 32) and its body may call a `__shfl*` function (a name the tree reads in the body's
    text). A range-for (`)` before any `;`) is no for_statement to the tree."""
    data = ctx.data
    semi = ctx.lexed.find_in_code(b";", open_at + 1)
    if semi < 0:
        return True
    init = data[open_at + 1 : semi]
    if any(c in init for c in _COMMENT_START):
        return True
    cfg = split_top_level(init + b")", 0)
    if cfg is None:
        return True
    if cfg[1] != len(init):
        return False  # the header closes before its first `;`: a range-for
    starts = set()
    bounds = [-1, *cfg[0], len(init)]
    for a, b in zip(bounds, bounds[1:]):
        part = init[a + 1 : b].strip()
        if b"=" in part:
            value = part[part.find(b"=") + 1 :]
        elif part.endswith(b")") and b"(" in part:
            value = part[part.find(b"(") + 1 : -1]
        elif part.endswith(b"}") and b"{" in part:
            value = part[part.find(b"{") + 1 : -1]
        else:
            continue  # no value set
        starts.add(sx.eval_int(ctx, value.strip()))
    if 16 not in starts and 1 not in starts:
        return False
    semi2 = ctx.lexed.find_in_code(b";", semi + 1)
    if semi2 < 0:
        return True
    if 16 not in starts:
        cond = data[semi + 1 : semi2]
        if any(c in cond for c in _COMMENT_START):
            return True
        if not any(sx.eval_int(ctx, cond[m.end() :].strip()) in (16, 32) for m in _LESS.finditer(cond)):
            return False
    return _body_may_shuffle(ctx, semi2)


_LESS = regexes.compile(rb"(?<!<)<=?(?![<=])")


def _body_may_shuffle(ctx, semi2: int) -> bool:
    """Whether the body of the `for` whose second `;` is at `semi2` may call `__shfl*`: a
    braced body holding no `__shfl` calls none (the tree expands no macro)."""
    data, lexed = ctx.data, ctx.lexed
    cfg = split_top_level(data, semi2 + 1)
    if cfg is None:
        return True
    body = lexed.next_code(cfg[1] + 1)
    braces = lexed.braces
    i = bisect.bisect_left(braces.opens, body)
    if data[body : body + 1] != b"{" or not braces.balanced or i == len(braces.opens) or braces.opens[i] != body:
        return True  # a body without braces, or braces not read here
    return b"__shfl" in data[body : braces.closes[i]]


def _shfl_calls(node):
    return [n for n in sx.walk(node) if n.type == "call_expression" and _SHFL.match(sx.call_name(n))]


@rule(code="HP404", name="shuffle-reduction-from-16", category="warp-size", severity="warning",
      effort="medium",
      triggers=(b'__shfl',))
def shuffle_reduction_from_16(ctx):
    """Flags warp-shuffle reductions and scans that assume 32 lanes.

    What it does:
    Reports `for (int o = 16; o > 0; o >>= 1)` (or `o /= 2`) loops whose body calls
    `__shfl*`, scan loops `for (int o = 1; o < 32; o <<= 1)` calling `__shfl*`, and unrolled
    reductions whose first step is `__shfl_down_sync(mask, v, 16)` / `__shfl_xor(v, 16)`.
    Loops starting from `warpSize / 2` are not flagged.

    Why it matters on AMD GPUs:
    A butterfly starting at offset 16 only combines lanes within each half of a 64-lane
    wavefront: the "warp total" is two separate 32-lane totals, and lane 0 misses lanes 32..63.

    Example:
    for (int offset = 16; offset > 0; offset /= 2)
      sum += __shfl_down_sync(0xffffffff, sum, offset);

    Fix:
    Start from `warpSize / 2` (`for (int o = warpSize / 2; o > 0; o >>= 1)`), or use a
    library reduction (hipCUB WarpReduce) that knows the wavefront size.
    """
    if b"__shfl" not in ctx.data:
        return  # every finding is, or loops around, a call of a `__shfl*` function
    if not _may_reduce_from_16(ctx):
        return  # no loop starts at 16 or 1, no butterfly step is 16: no tree needed
    in_loops = set()
    for loop in sx.nodes(ctx, "for_statement"):
        # the loop's shape first (cheap, and rarely a match), then its calls, then where it is
        what = _warp_loop(ctx, loop)
        if what is None:
            continue
        body = loop.child_by_field_name("body")
        calls = _shfl_calls(body) if body is not None else []
        if not calls:
            continue
        if not sx.relevant(ctx, loop.start_byte) or not sx.in_device_code(ctx, loop.start_byte):
            continue
        in_loops.update(c.start_byte for c in calls)
        head_end = body.start_byte if body is not None else loop.end_byte
        yield Hit(loop.start_byte, head_end,
                  f"shuffle loop {what}: it only spans 32 lanes", _WARP_FIX)
    for call in sx.nodes(ctx, "call_expression"):
        name = sx.call_name(call)
        if not _SHFL_DOWN_OR_XOR.match(name) or call.start_byte in in_loops:
            continue
        args = sx.call_args(call)
        first = 1 if name.endswith("_sync") else 0
        if len(args) != first + 2:
            continue  # no arguments to read, or an explicit width (a deliberate sub-group)
        if _literal(ctx, args[first + 1]) != 16:
            continue
        if sx.relevant(ctx, call.start_byte) and sx.in_device_code(ctx, call.start_byte):
            yield Hit(call.start_byte, call.end_byte,
                      f"`{name}` with offset 16 starts a 32-lane butterfly", _WARP_FIX)


# --------------------------------------------------------------------------- warp-mask rules

_MASK_FIX = ("HIP's mask arguments and ballot results are 64-bit (unsigned long long): pass "
             "__activemask() or ~0ull (all lanes) and keep masks in 64-bit variables. The *_sync "
             "builtins exist from ROCm 6.2 and reject 32-bit mask types on wave64 targets.")


def _full32(ctx, node) -> str | None:
    """The spelling if node is a 32-bit all-ones literal: 0xffffffff, 0xFFFFFFFFu, ~0u, -1, ~0."""
    while node is not None and node.type in ("parenthesized_expression", "cast_expression"):
        if node.type == "cast_expression":
            t = sx.text(node.child_by_field_name("type"))
            if "long" in t:
                return None
            node = node.child_by_field_name("value")
        else:
            node = node.named_children[0] if node.named_child_count else None
    if node is None:
        return None
    t = sx.text(node)
    if node.type == "number_literal":
        v = sx.eval_int(ctx, node)
        return t if v == _FULL32 or (v == -1 and "l" not in t.lower()) else None
    if node.type == "unary_expression":
        op = sx.text(node.child_by_field_name("operator"))
        arg = node.child_by_field_name("argument")
        if arg is not None and arg.type == "number_literal" and "l" not in sx.text(arg).lower():
            v = sx.eval_int(ctx, arg)
            if (op == "~" and v == 0) or (op == "-" and v == 1):
                return t
    return None


_NOT_ZERO_32 = regexes.compile(r"\s*\(?\s*(?:~\s*0[uU]?|\(\s*unsigned(?:\s+int)?\s*\)\s*-\s*1)\s*\)?\s*(?://.*|/\*.*)?\Z")


_CONST = regexes.compile(rb"\b(?:const|constexpr)\b")


# Identifiers in ASCII text are made of these bytes (`\` for `\u` escapes).
_NAME_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_$\\")
_SYNC_END = regexes.compile(rb"_sync(?![\w$\\])")


def _may_call_sync(data: bytes) -> bool:
    """Whether the file may call a `__*_sync` function: a name that starts with `__` and ends
    with `_sync`, as _is_sync_call wants (non-ASCII files are assumed to)."""
    if not data.isascii():
        return True
    for m in _SYNC_END.finditer(data):
        start = m.start()
        while start > 0 and data[start - 1] in _NAME_BYTES:
            start -= 1
        if data.startswith(b"__", start):
            return True
    return False


# The non-ASCII letters a str pattern with re.I takes for an ASCII one, in UTF-8: U+017F for
# `s` and U+212A for `k` (a mask's letters), U+0130 and U+0131 for `i` (a thread's name's; no
# other ASCII letter has one): a name holding one matches where the lower-cased bytes do not
# show it.
_ODD_CASE_MASK_LETTERS = (b"\xc5\xbf", b"\xe2\x84\xaa")
_ODD_CASE_LETTERS = (*_ODD_CASE_MASK_LETTERS, b"\xc4\xb0", b"\xc4\xb1")


def _may_spell_oddly(data: bytes, letters: tuple[bytes, ...]) -> bool:
    return not data.isascii() and any(letter in data for letter in letters)


def _may_spell_mask_oddly(data: bytes) -> bool:
    """Whether a name in the file may match _MASK_NAME with U+017F or U+212A in it."""
    return _may_spell_oddly(data, _ODD_CASE_MASK_LETTERS)


def _may_name_mask(ctx) -> bool:
    """Whether a name in the file may match _MASK_NAME."""
    return _may_spell_mask_oddly(ctx.data) or _contains_any(ctx, b"mask")


_MASK_WORD = regexes.compile(rb"mask")


def _mask_defines(ctx, names: set[str]) -> list:
    """The #defines whose name holds `mask` in some case or is one of `names`. A file with
    names to find (it calls `*_sync` functions) is looked through a #define at a time: a
    pattern of its names would be compiled anew for each such file."""
    if not names:
        return ctx.lexed.defines_named(_MASK_WORD, lowered=True)  # ASCII: _MASK_NAME's test
    return [m for m in ctx.lexed.defines if b"mask" in m.name.lower() or m.name.decode("latin-1") in names]


_SYNC_NAME = regexes.compile(rb"__\w*_sync\b")
_IDENTIFIER = regexes.compile(rb"[A-Za-z_]\w*")
_NUMBER = regexes.compile(rb"\.?[0-9][0-9A-Za-z_.']*")


# After a name, these show it is not the function of a call (not even `(name)(...)`).
_NOT_CALLEE = frozenset(bytes([c]) for c in b";,=]}?:.")


def _sync_first_args(ctx) -> list[bytes] | None:
    """The first argument's text of every `__*_sync(...)` call in relevant code, as
    full-warp-mask-32-bit's tree walk would see them; None where the text does not show the
    calls plainly (a template call, unbalanced brackets, a comment in the argument)."""
    data, lexed = ctx.data, ctx.lexed
    out = []
    for m in _SYNC_NAME.finditer(data):
        at = m.start()
        if not _is_sync_call(m.group().decode()) or lexed.in_comment_or_string(at) or lexed.in_directive(at):
            continue
        open_at = m.end()
        while data[open_at : open_at + 1] in (b" ", b"\t"):
            open_at += 1
        after = data[open_at : open_at + 1]
        if after in _NOT_CALLEE:
            continue  # a variable or a qualifier that only looks like a sync function
        if not sx.relevant(ctx, at):  # after the cheap tests: its #if structure costs a pass
            continue
        if after != b"(":
            return None
        cfg = split_top_level(data, open_at + 1)
        if cfg is None:
            return None
        text = data[open_at + 1 : cfg[0][0] if cfg[0] else cfg[1]].strip()
        if b"/" in text:
            return None
        out.append(text)
    return out


def _may_be_full32(ctx, text: bytes) -> bool:
    """Whether a mask argument's text may be what _full32 reports: a `~` or `-`, or a number
    worth 0xffffffff."""
    return b"~" in text or b"-" in text or any(sx.eval_int(ctx, n) == _FULL32 for n in _NUMBER.findall(text))


_INITIALIZED = regexes.compile(rb"\w*[ \t\r\n]*(=(?!=)|\()")


def _may_flag_mask_constant(ctx, flagged_names: set[str]) -> bool:
    """Whether a mask-named variable (or one passed as a `__*_sync` mask) may be initialized
    to a full 32-bit mask, read from the text before the tree is asked: its initializer (after
    `=` or `(`; a braced list is never one) may be what _full32 reports, outside directives
    (the tree reads a macro's body as text: the macro test above reports it). Files that may
    spell a mask name with a non-ASCII letter are assumed to (see _may_spell_mask_oddly)."""
    data = ctx.data
    if _may_spell_mask_oddly(data):
        return True
    # Else `mask` in any case is `mask` in the lower-cased text, at the same offsets
    starts = {_NAME_START.search(data, max(0, at - 64), at).start() for at in sx.starts_of(_lowered(ctx), b"mask")}
    for name in flagged_names:
        starts.update(sx.word_starts(ctx, name.encode()))
    for at in starts:
        init = _INITIALIZED.match(data, at)
        if init is not None and ctx.lexed.in_plain_code(at) \
                and _may_be_full32(ctx, _initializer_text(ctx, init.end())) and _may_be_const(ctx, at):
            return True
    return False


def _may_be_const(ctx, at: int) -> bool:
    """Whether the statement holding `at` may be a const declaration (the only ones reported):
    `const` or `constexpr` in its text (`mask = -(g & 1);` has neither), or a brace around its
    text (a lambda or a list after the name, `struct {...}` before it: not read here)."""
    data, end, start = ctx.data, ctx.lexed.statement_end(at), ctx.lexed.statement_start(at)
    before = ctx.lexed.previous_code(start)
    return data[end : end + 1] != b";" or (data[before - 1 : before] == b"}" and not _ends_statements(ctx, before - 1)) \
        or _CONST.search(data, start, end) is not None


_STATEMENT_HEADS = frozenset({b"if", b"for", b"while", b"switch", b"catch"})


def _ends_statements(ctx, close: int) -> bool:
    """Whether the `}` at `close` ends a block of statements: the body of `if (...)`, `for
    (...)`, `else`, `do`, ... or a plain block. Then no type (`struct {...}`) ends there, and
    the statement after it starts afresh. Anything else (a function or lambda body, a class
    body, unpaired braces): can't tell, False."""
    lexed, data = ctx.lexed, ctx.data
    braces = lexed.braces
    if not braces.balanced:
        return False
    i = braces.innermost(close)
    if i < 0 or braces.closes[i] != close:
        return False
    end = lexed.code_before(braces.opens[i])
    before = data[end - 1 : end]
    if before in (b";", b"{", b"}"):
        return True
    if before == b")":
        paren = lexed.match_back(end - 1)
        return paren is not None and word_before(data, lexed.code_before(paren))[1] in _STATEMENT_HEADS
    return word_before(data, end)[1] in (b"else", b"do")


def _is_sync_call(name: str) -> bool:
    return name.startswith("__") and name.endswith("_sync") and name not in ("__syncthreads",)


# A finding needs a `__*_sync` call or a mask-named constant (a mask may be spelled ~0u or -1):
# `_sync`, or `mask` in some case. A str pattern with re.I also takes U+017F for `s` and
# U+212A for `k` (UTF-8 below), which the body allows for in every non-ASCII file.
@rule(code="HP451", name="full-warp-mask-32-bit", category="warp-mask", severity="warning",
      effort="medium", triggers=(b"_sync", *any_case(b"mask"), *_ODD_CASE_MASK_LETTERS))
def full_warp_mask_32_bit(ctx):
    """Flags 32-bit full masks passed to warp `*_sync` functions.

    What it does:
    Reports `0xffffffff`, `0xFFFFFFFFu`, `~0u`, `-1` (32-bit) as the mask argument of
    `__shfl_sync`, `__shfl_down_sync`, `__ballot_sync`, `__any_sync`, `__all_sync`,
    `__match_any_sync`, `__reduce_add_sync`, ..., and `#define`/`constexpr` mask constants with
    that value (`#define FULL_MASK 0xffffffff`).

    Why it matters on AMD GPUs:
    HIP's `*_sync` functions (ROCm 6.2+) take a 64-bit mask in which every participating lane
    has its bit set. On wave64 targets a 32-bit mask type fails HIP's static_assert, and a
    value such as `0xffffffffull` names only lanes 0..31, so lanes 32..63 take part without
    their bit (undefined; HIP's checks assert).

    Example:
    v += __shfl_down_sync(0xffffffff, v, offset);

    Fix:
    Pass a 64-bit mask: `__activemask()` or `~0ull` (all lanes), and keep masks in
    `unsigned long long`/`uint64_t`.
    """
    data = ctx.data
    flagged_names = set()
    calls = ()
    if _may_call_sync(data):
        first_args = _sync_first_args(ctx)
        if first_args is None or any(_may_be_full32(ctx, text) for text in first_args):
            calls = sx.nodes(ctx, "call_expression")
        else:  # the text tells which masks are names, and that none is a literal to report
            flagged_names = {text.decode() for text in first_args if _IDENTIFIER.fullmatch(text)}
    for call in calls:
        name = sx.call_name(call)
        if not _is_sync_call(name) or not sx.relevant(ctx, call.start_byte):
            continue
        args = sx.call_args(call)
        if not args:
            continue
        spelled = _full32(ctx, args[0])
        if spelled:
            yield Hit(args[0].start_byte, args[0].end_byte,
                      f"`{spelled}` passed as the lane mask of `{name}`: HIP wants a 64-bit mask "
                      "naming every participating lane; this one covers lanes 0..31 only", _MASK_FIX)
        elif args[0].type == "identifier":
            flagged_names.add(sx.text(args[0]))
    may_name_mask = _may_name_mask(ctx)
    for m in _mask_defines(ctx, flagged_names) if flagged_names or may_name_mask else ():
        if m.params is not None:
            continue
        name = m.name.decode("latin-1")
        body = ctx.data[m.body_start:m.body_end].decode("latin-1")
        consts = sx.int_constants(ctx)
        if ((consts.may_be(name, (_FULL32,)) and consts.get(name) == _FULL32) or _NOT_ZERO_32.match(body)) \
                and sx.relevant(ctx, m.start):
            yield Hit(m.start, m.body_end, f"`{name}` is a 32-bit full lane mask", _MASK_FIX)
    if b"const" not in data or not (flagged_names or may_name_mask) \
            or not _may_flag_mask_constant(ctx, flagged_names):
        return  # no const mask variable to report: the tree is not needed
    for node in sx.nodes(ctx, "init_declarator"):
        target, value = node.child_by_field_name("declarator"), node.child_by_field_name("value")
        if target is None or target.type != "identifier":
            continue
        name = sx.text(target)
        if not (_MASK_NAME.search(name) or name in flagged_names):
            continue
        if not sx.relevant(ctx, node.start_byte):
            continue
        decl = node.parent
        if decl is None or not _CONST.search(decl.text or b""):
            continue
        if _full32(ctx, value):
            if "long" in sx.text(decl.child_by_field_name("type")) or "64" in sx.text(decl.child_by_field_name("type")):
                continue
            yield Hit(target.start_byte, value.end_byte,
                      f"`{name}` is a 32-bit full lane mask", _MASK_FIX)


# Every _BALLOT_LIKE name starts with one of these: a node whose text has none holds no such call.
_BALLOT_TEXT = regexes.compile(rb"__(?:ballot|activemask|match_)")


def _ballot_calls(ctx, node) -> list:
    if not _BALLOT_TEXT.search(ctx.data, node.start_byte, node.end_byte):
        return []  # skips the walk for almost every node
    return [n for n in sx.walk(node) if n.type == "call_expression" and sx.call_name(n) in _BALLOT_LIKE]


def _type_text(decl) -> str:
    t = decl.child_by_field_name("type") if decl is not None else None
    return " ".join(sx.text(t).split()) if t is not None else ""


def _ballot_vars(ctx) -> set[str]:
    def compute(c):
        out = set()
        for node in sx.nodes(c, "init_declarator", "assignment_expression"):
            target = node.child_by_field_name("declarator") or node.child_by_field_name("left")
            value = node.child_by_field_name("value") or node.child_by_field_name("right")
            if target is not None and target.type == "identifier" and value is not None and _ballot_calls(c, value):
                out.add(sx.text(target))
        return out
    return sx.memo(ctx, "ballot_vars", compute)


def _declared_32_bit(ctx) -> set[str]:
    """Names of the variables and parameters declared with a 32-bit integer type."""
    out = set()
    for decl in sx.nodes(ctx, "declaration", "parameter_declaration"):
        if _type_text(decl).replace("const ", "") in _32_BIT_TYPES:
            for d in decl.children_by_field_name("declarator"):
                if d.type == "init_declarator":
                    d = d.child_by_field_name("declarator")
                if d is not None and d.type == "identifier":
                    out.add(sx.text(d))
    return out


@rule(code="HP452", name="ballot-stored-in-32-bit", category="warp-mask", severity="warning",
      effort="medium",
      triggers=(b'__ballot', b'__activemask', b'__match_'))
def ballot_stored_in_32_bit(ctx):
    """Flags ballot/active-mask results kept in 32-bit integers.

    What it does:
    Reports declarations such as `unsigned m = __ballot_sync(...)`, `int`/`uint32_t`/`unsigned
    int` variables initialised or assigned from `__ballot*`, `__activemask()` or
    `__match_*_sync`, and `return __ballot_sync(...)` from a function declared to return a
    32-bit type.

    Why it matters on AMD GPUs:
    HIP's `__ballot`, `__ballot_sync`, `__activemask` and `__match_*` return a 64-bit
    `unsigned long long` with one bit per lane of a 64-lane wavefront; a 32-bit variable keeps
    lanes 0..31 and silently drops the rest.

    Example:
    unsigned active = __ballot_sync(0xffffffff, x > 0);

    Fix:
    Store masks in `unsigned long long` (or `uint64_t`, or `auto`), and count/scan them with
    the 64-bit bit functions (`__popcll`, `__ffsll`, `__clzll`).
    """
    if not _BALLOT_TEXT.search(ctx.data):
        return  # every finding holds a ballot call
    for node in sx.nodes(ctx, "init_declarator"):
        value = node.child_by_field_name("value")
        target = node.child_by_field_name("declarator")
        if value is None or not _ballot_calls(ctx, value) or not sx.relevant(ctx, node.start_byte):
            continue
        t = _type_text(node.parent)
        if t.replace("const ", "") in _32_BIT_TYPES:
            call = sx.call_name(_ballot_calls(ctx, value)[0])
            yield Hit(node.start_byte, node.end_byte,
                      f"`{call}` result stored in 32-bit `{t}` `{sx.text(target)}`: HIP returns a "
                      "64-bit lane mask", _MASK_FIX)
    declared32 = None
    for node in sx.nodes(ctx, "assignment_expression"):
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None or left.type != "identifier" or not _ballot_calls(ctx, right):
            continue
        if declared32 is None:
            declared32 = _declared_32_bit(ctx)
        if sx.text(left) in declared32 and sx.relevant(ctx, node.start_byte):
            call = sx.call_name(_ballot_calls(ctx, right)[0])
            yield Hit(node.start_byte, node.end_byte,
                      f"`{call}` result assigned to 32-bit `{sx.text(left)}`: HIP returns a 64-bit "
                      "lane mask", _MASK_FIX)
    for ret in sx.nodes(ctx, "return_statement"):
        calls = _ballot_calls(ctx, ret)
        if not calls or not sx.relevant(ctx, ret.start_byte):
            continue
        fn = next(sx.enclosing(ctx, ret, "function_definition", "lambda_expression"), None)
        if fn is None or fn.type != "function_definition":
            continue
        t = _type_text(fn).replace("const ", "")
        if t in _32_BIT_TYPES and (ret.named_child_count and ret.named_children[0].type == "call_expression"):
            yield Hit(ret.start_byte, ret.end_byte,
                      f"`{sx.call_name(calls[0])}` returned as 32-bit `{t}`: HIP returns a 64-bit "
                      "lane mask", _MASK_FIX)


@rule(code="HP453", name="activemask-call", category="warp-mask", severity="info", effort="low",
      triggers=(b'activemask',))
def activemask_call(ctx):
    """Notes `__activemask()` calls.

    What it does:
    Reports each `__activemask()` in code compiled for CUDA.

    Why it matters on AMD GPUs:
    HIP's `__activemask()` returns a 64-bit `unsigned long long` (one bit per lane of a 64-lane
    wavefront), and ROCm releases before 6.2 do not provide it at all. Every use of the result
    (storage type, bit counts, comparisons with `0xffffffff`) needs checking.

    Example:
    unsigned long long active = __activemask();

    Fix:
    Keep the result 64-bit and compare with a 64-bit full mask; for HIP before 6.2 use
    `__ballot(1)` instead.
    """
    if b"__activemask" not in ctx.data:
        return
    for call in sx.nodes(ctx, "call_expression"):
        if sx.call_name(call) == "__activemask" and sx.relevant(ctx, call.start_byte):
            yield Hit(call.start_byte, call.end_byte,
                      "`__activemask()` returns a 64-bit lane mask in HIP (missing before ROCm 6.2)",
                      "Keep its result in `unsigned long long` and use 64-bit bit functions.")


@rule(code="HP454", name="32-bit-popc-on-ballot", category="warp-mask", severity="warning",
      effort="medium",
      triggers=(b'__ballot', b'__activemask', b'__match_'))
def popc_on_ballot(ctx):
    """Flags 32-bit bit counts and scans applied to ballot masks.

    What it does:
    Reports `__popc`, `__ffs`, `__clz`, `__brev` applied to a `__ballot*`/`__activemask`/
    `__match_*` result, directly or through a variable assigned from one.

    Why it matters on AMD GPUs:
    The mask is 64-bit in HIP; the 32-bit functions truncate it to lanes 0..31, so counts and
    leader elections ignore half of a 64-lane wavefront.

    Example:
    int votes = __popc(__ballot_sync(0xffffffff, pred));

    Fix:
    Use `__popcll`, `__ffsll`, `__clzll`, `__brevll` on the 64-bit mask.
    """
    if not _BALLOT_TEXT.search(ctx.data):
        return  # no ballot call, so no ballot mask either
    ballots = _ballot_vars(ctx)
    for call in sx.nodes(ctx, "call_expression"):
        name = sx.call_name(call)
        if name not in _BIT_32 or not sx.relevant(ctx, call.start_byte):
            continue
        args = sx.call_args(call)
        if not args:
            continue
        if any(sx.call_name(outer) in _BIT_32 for outer in sx.enclosing(ctx, call, "call_expression")):
            continue  # `__clz(__brev(mask))`: reported once, at the outer call
        arg = args[0]
        uses = bool(_ballot_calls(ctx, arg)) or any(
            n.type == "identifier" and sx.text(n) in ballots for n in sx.walk(arg))
        if uses:
            yield Hit(call.start_byte, call.end_byte,
                      f"`{name}` on a ballot mask sees only lanes 0..31; HIP masks are 64-bit",
                      f"Use `{_BIT_32[name]}`.")


@rule(code="HP455", name="syncwarp-32-bit-mask", category="warp-mask", severity="warning",
      effort="low",
      triggers=(b'syncwarp',))
def syncwarp_32_bit_mask(ctx):
    """Flags `__syncwarp` called with a 32-bit literal mask.

    What it does:
    Reports `__syncwarp(0xffffffff)`, `__syncwarp(~0u)` and other integer-literal masks.
    `__syncwarp()` without an argument is not flagged.

    Why it matters on AMD GPUs:
    HIP's `__syncwarp(mask)` (ROCm 6.2+) requires a 64-bit mask type on wave64 targets
    (static_assert) covering all participating lanes; a 32-bit literal names only lanes 0..31
    of a 64-lane wavefront. Older HIP has no `__syncwarp` at all.

    Example:
    __syncwarp(0xffffffff);

    Fix:
    Call `__syncwarp()` (all lanes) or pass a 64-bit mask such as `__activemask()`.
    """
    if b"__syncwarp" not in ctx.data:
        return
    for call in sx.nodes(ctx, "call_expression"):
        if sx.call_name(call) != "__syncwarp" or not sx.relevant(ctx, call.start_byte):
            continue
        args = sx.call_args(call)
        if not args:
            continue
        a = args[0]
        literal = _full32(ctx, a) or (sx.text(a) if a.type == "number_literal" and "l" not in sx.text(a).lower() else None)
        if literal:
            yield Hit(call.start_byte, call.end_byte,
                      f"`__syncwarp({literal})`: a 32-bit lane mask; HIP wants a 64-bit mask on "
                      "wave64 targets",
                      "Use `__syncwarp()` or a 64-bit mask (`__activemask()`, `~0ull`).")


_ONE_32 = frozenset({"1", "1u", "1U"})


@rule(code="HP456", name="32-bit-lane-bit-shift", category="warp-mask", severity="warning",
      effort="medium",
      triggers=any_case(b"lane"))
def lane_bit_shift_32(ctx):
    """Flags 32-bit lane-mask shifts such as `1u << lane`.

    What it does:
    Reports `1 << lane`, `1u << laneId`, `0xffffffff << lane` and `0xffffffff >> (32 - lane)`
    in device code, where the shift count is a lane index (a lane-named variable or
    `threadIdx.x % 32`-style expression) and the shifted value is a 32-bit literal.

    Why it matters on AMD GPUs:
    Lane numbers reach 63 on 64-lane wavefronts; shifting a 32-bit value by 32 or more is
    undefined behaviour, and the resulting mask cannot name lanes 32..63 of a 64-bit ballot.

    Example:
    unsigned lt_mask = (1u << lane) - 1;

    Fix:
    Shift a 64-bit value (`1ull << lane`), keep the mask in `unsigned long long`, or use
    `__lanemask_lt()` where available.
    """
    data = ctx.data
    if (b"<<" not in data and b">>" not in data) or not _contains_any(ctx, b"lane"):
        return  # a shift, and its count must name a lane
    if not _may_shift_by_lane(ctx):
        return  # no shift may count a lane, or each that may is certainly host code: no tree
    for node in sx.nodes(ctx, "binary_expression"):
        op = sx.text(node.child_by_field_name("operator"))
        if op not in ("<<", ">>"):
            continue
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        is_one = op == "<<" and sx.text(left).strip("()") in _ONE_32
        if not is_one and _full32(ctx, left) is None:
            continue
        if not any(n.type == "identifier" and _LANE_NAME.search(sx.text(n)) for n in sx.walk(right)):
            continue
        if not sx.relevant(ctx, node.start_byte) or not sx.in_device_code(ctx, node.start_byte):
            continue
        yield Hit(node.start_byte, node.end_byte,
                  f"`{sx.text(node)}` builds a 32-bit lane mask; lanes 32..63 of a 64-lane "
                  "wavefront overflow it", "Shift a 64-bit value (`1ull << lane`) and keep masks 64-bit.")
