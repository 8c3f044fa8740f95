"""Shared syntax helpers for rule authors. Everything here is computed once per FileContext
and cached on it, so rules can call these freely.

Stable API (other rule modules import these; add, never rename):

Caching
    memo(ctx, key, compute)         -> compute(ctx), computed once per context and key (stored
                                       on the context; use a module-specific key)

Preprocessor branches (nvcc's view: host pass, device pass)
    cuda_excluded(ctx, offset)      -> bool  offset sits in an `#if` branch nvcc never compiles
                                             (`#ifdef __HIP_PLATFORM_AMD__`, `#if defined(USE_ROCM)`,
                                             `#ifndef __CUDACC__`, `#if 0`, the `#else` of
                                             `#ifdef __CUDACC__`, ...)
    host_pass_only(ctx, offset)     -> bool  compiled only without __CUDA_ARCH__ (`#ifndef
                                             __CUDA_ARCH__`), or excluded altogether
    device_pass_only(ctx, offset)   -> bool  compiled only with __CUDA_ARCH__ defined
    live(ctx, offset)               -> bool  in code (not comment/string) and not cuda_excluded
    hip_excluded(ctx, offset)       -> bool  in a branch hipcc never compiles (`#ifndef
                                             __HIP_PLATFORM_AMD__`, `#else` of `#ifdef __HIPCC__`,
                                             `#if !defined(USE_ROCM)`): already platform-split
    relevant(ctx, offset)           -> bool  live and not hip_excluded: where a porting finding
                                             makes sense (most rules want this one)

Device code
    device_functions(ctx)           -> tuple[DeviceFunction, ...]  `__global__`/`__device__`
                                       (incl. `__host__ __device__`) function bodies, device
                                       lambdas (`[=] __device__ (...) {...}`), and functions of
                                       this file that are only called from device code
    device_function_at(ctx, offset) -> DeviceFunction | None  innermost one around offset
    in_device_code(ctx, offset)     -> bool  inside one of those bodies and compiled in the
                                             device pass (so `#ifndef __CUDA_ARCH__` code in a
                                             `__host__ __device__` function is host code)
    qualifier_macros(ctx)           -> dict[bytes, frozenset[bytes]]  `#define HD __host__
                                       __device__` style macros (plus well-known library ones)

Tree access (tree-sitter-cuda)
    nodes(ctx, *types)              -> list of nodes of those types, in source order
    enclosing(ctx, node, *types)    -> node's ancestors of those types, the innermost first
    live_nodes(ctx, *types)         -> the same, only those for which live(start) holds
    relevant_nodes(ctx, *types)     -> the same, only those for which relevant(start) holds
    call_name(call) -> str          callee's last name: `f`, `ns::f`, `f<T>`, `obj.f` -> "f"
    call_qualified_name(call) -> str  callee as written without template args ("cuda::memcpy_async")
    is_template_call(call) -> bool  `f<T>(...)`
    call_args(call) -> list[Node]   argument nodes
    text(node) -> str               node's source text (utf-8, errors replaced)

Nodes by name (the text is searched first; the file is parsed only when a name occurs)
    words_finder(words)             -> what finds wherever one of `words` starts
    nodes_at(ctx, words, patterns)  -> the smallest node around each occurrence (WHOLE_WORDS:
                                       of each identifier in `words` as a whole word)
    calls_named(ctx, names, ...)    -> call expressions whose call_name() is in `names`
    nodes_named(ctx, names, ...)    -> leaf nodes (of given types) whose text is in `names`

Constants
    int_constants(ctx).get(name)    -> int | None  simple `#define N 128`, `constexpr int N =
                                       4 * 32;`, `const unsigned N = ...;` integer constants
    eval_int(ctx, expr)             -> int | None  an integer constant expression (bytes, str
                                       or node): literals, + - * / % << >> & | ^ ~ ! ( ),
                                       comparisons, `sizeof(T)` for known T, names from
                                       int_constants, casts to integral types
    TYPE_SIZES                      -> dict[str, int]  byte sizes of builtin/vector types

Shared memory
    shared_declarations(ctx)        -> list[SharedDecl]  each `__shared__` variable: declaration
                                       node, name, dimension size nodes (outermost first, None
                                       for `[]`), element type text, extern or not

Macros and directives
    macro_bodies(ctx)               -> list[MacroDef]  each `#define`: name, params, body span
    live_includes(ctx)              -> list[(Directive, bytes path)]  includes nvcc compiles
"""

from __future__ import annotations

import bisect
import functools
import weakref
import re
from collections.abc import Callable, Hashable, Iterable, Iterator

from hipport import patterns, regexes
from hipport.parse import tree as ts
from hipport.parse.tree import tree_sitter  # loaded with the first tree
from hipport.parse.lexer import MacroDef, Substrings, _scan, logical_end
from hipport.patterns import by_common_start, word_start
from hipport.rewrite.calls import split_top_level
from hipport.tuples import NamedTuple

__all__ = [
    "DeviceFunction", "MacroDef", "TYPE_SIZES", "call_args", "call_name", "call_qualified_name",
    "cuda_excluded", "device_function_at", "device_functions", "device_pass_only", "eval_int",
    "hip_excluded", "host_pass_only", "in_device_code", "int_constants", "is_template_call", "live",
    "live_includes", "live_nodes", "macro_bodies", "memo", "nodes", "qualifier_macros", "relevant",
    "relevant_nodes", "SharedDecl", "shared_declarations", "text", "walk", "words_finder",
    "nodes_at", "calls_named", "nodes_named", "occurrences", "LAUNCH_OPEN",
    "shared_declarator_texts",
]


# --------------------------------------------------------------------------- caching

def memo(ctx, key: Hashable, compute: Callable):
    """compute(ctx), once per context and key. The cache lives on the context object."""
    cache = ctx.memo
    try:
        return cache[key]
    except KeyError:
        value = cache[key] = compute(ctx)
        return value


def text(node) -> str:
    return node.text.decode("utf-8", "replace") if node is not None else ""


# --------------------------------------------------------------------------- preprocessor

# Macros nvcc never defines (HIP/ROCm toolchains do), and macros it always defines.
_HIP_ONLY = frozenset("""
__HIP_PLATFORM_AMD__ __HIP_PLATFORM_HCC__ __HIPCC__ __HIP__ __HIP_DEVICE_COMPILE__ __HIPCC_RTC__
__HIP_ROCclr__ __HIP_CLANG_ONLY__ __AMDGCN__ __AMDGPU__ __amdgcn__ __AMDGCN_WAVEFRONT_SIZE
__AMDGCN_WAVEFRONT_SIZE__ USE_ROCM USE_HIP WITH_ROCM WITH_HIP HIP_PLATFORM_AMD __HIP_PLATFORM_AMD
ROCM_VERSION TORCH_HIP_VERSION HIP_VERSION HIP_VERSION_MAJOR HIP_VERSION_MINOR HIP_VERSION_PATCH
__HIP_NO_HALF_CONVERSIONS__ __HIP_ARCH_GFX90A__ __HIP_ARCH_GFX942__ HIPRT
""".split())
_HIP_ONLY_RE = regexes.compile(r"__gfx\w+__|__HIP_ARCH_\w+__|__GFX\d+__\Z")
_CUDA_DEFINED = {"__CUDACC__": 1, "__NVCC__": 1, "__CUDA__": None}

_LO, _HI = -(1 << 62), 1 << 62


class _Val:
    """An integer known only as an interval (exact values have lo == hi)."""

    __slots__ = ("lo", "hi")

    def __init__(self, lo: int, hi: int):
        self.lo, self.hi = lo, hi

    @property
    def exact(self) -> int | None:
        return self.lo if self.lo == self.hi else None

    def truth(self) -> bool | None:
        if self.lo == self.hi == 0:
            return False
        if self.lo > 0 or self.hi < 0:
            return True
        return None


_UNKNOWN = _Val(_LO, _HI)


def _exact(v: int) -> _Val:
    return _Val(v, v)


def _from_truth(t: bool | None) -> _Val:
    return _UNKNOWN if t is None else _exact(int(t))


_PP_TOKEN = regexes.compile(
    r"\s*(?:(?P<num>0[xX][0-9a-fA-F']+|0[bB][01']+|[0-9][0-9']*)[uUlL]*"
    r"|(?P<id>[A-Za-z_]\w*)|(?P<op>&&|\|\||==|!=|<=|>=|<<|>>|[-+*/%()!~<>&|^?:,]))"
)


def _pp_tokens(expr: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    expr = expr.strip()
    while pos < len(expr):
        m = _PP_TOKEN.match(expr, pos)
        if not m or m.end() == pos:
            out.append(("bad", expr[pos]))
            pos += 1
            continue
        pos = m.end()
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
    return out


def _int_literal(tok: str) -> int | None:
    tok = tok.replace("'", "").rstrip("uUlLzZ")
    try:
        if tok[:2] in ("0x", "0X"):
            return int(tok, 16)
        if tok[:2] in ("0b", "0B"):
            return int(tok[2:], 2)
        if len(tok) > 1 and tok[0] == "0":
            return int(tok, 8)
        return int(tok)
    except ValueError:
        return None


class _PPEval:
    """Evaluates an #if expression to a _Val, given a lookup for names and defined()."""

    _PREC = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, ">": 7,
             "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10}

    def __init__(self, tokens, value_of, defined_of):
        self.toks, self.i = tokens, 0
        self.value_of, self.defined_of = value_of, defined_of

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else ("end", "")

    def take(self):
        tok = self.peek()
        self.i += 1
        return tok

    def parse(self) -> _Val:
        try:
            v = self.ternary()
        except (IndexError, ValueError, ZeroDivisionError, RecursionError):  # (parentheses thousands deep)
            return _UNKNOWN
        return v if self.peek()[0] == "end" else _UNKNOWN

    def ternary(self) -> _Val:
        cond = self.binary(1)
        if self.peek() == ("op", "?"):
            self.take()
            a = self.ternary()
            if self.take() != ("op", ":"):
                raise ValueError
            b = self.ternary()
            t = cond.truth()
            if t is None:
                return a if (a.lo, a.hi) == (b.lo, b.hi) else _UNKNOWN
            return a if t else b
        return cond

    def binary(self, min_prec: int) -> _Val:
        left = self.unary()
        while True:
            kind, op = self.peek()
            prec = self._PREC.get(op) if kind == "op" else None
            if prec is None or prec < min_prec:
                return left
            self.take()
            right = self.binary(prec + 1)
            left = self.apply(op, left, right)

    def apply(self, op: str, a: _Val, b: _Val) -> _Val:
        if op == "&&":
            ta, tb = a.truth(), b.truth()
            if ta is False or tb is False:
                return _exact(0)
            return _exact(1) if ta and tb else _UNKNOWN
        if op == "||":
            ta, tb = a.truth(), b.truth()
            if ta or tb:
                return _exact(1)
            return _exact(0) if ta is False and tb is False else _UNKNOWN
        if op in ("<", ">", "<=", ">=", "==", "!="):
            return _from_truth(self.compare(op, a, b))
        x, y = a.exact, b.exact
        if x is None or y is None:
            return _UNKNOWN
        return _exact(_arith(op, x, y))

    @staticmethod
    def compare(op: str, a: _Val, b: _Val) -> bool | None:
        if op == ">":
            op, a, b = "<", b, a
        elif op == ">=":
            op, a, b = "<=", b, a
        if op == "<":
            return True if a.hi < b.lo else False if a.lo >= b.hi else None
        if op == "<=":
            return True if a.hi <= b.lo else False if a.lo > b.hi else None
        eq = True if a.exact is not None and a.exact == b.exact else (
            False if a.hi < b.lo or b.hi < a.lo else None)
        if op == "==":
            return eq
        return None if eq is None else not eq

    def unary(self) -> _Val:
        kind, tok = self.take()
        if kind == "op" and tok == "(":
            v = self.ternary()
            if self.take() != ("op", ")"):
                raise ValueError
            return v
        if kind == "op" and tok == "!":
            t = self.unary().truth()
            return _from_truth(None if t is None else not t)
        if kind == "op" and tok in "-+~":
            v = self.unary()
            if v.exact is None:
                return _UNKNOWN
            return _exact(-v.exact if tok == "-" else v.exact if tok == "+" else ~v.exact)
        if kind == "num":
            n = _int_literal(tok)
            return _UNKNOWN if n is None else _exact(n)
        if kind == "id":
            if tok == "defined":
                paren = self.peek() == ("op", "(")
                if paren:
                    self.take()
                _, name = self.take()
                if paren and self.take() != ("op", ")"):
                    raise ValueError
                return _from_truth(self.defined_of(name))
            if self.peek() == ("op", "("):  # a function-like macro or __has_include(...)
                depth = 0
                while True:
                    k, t = self.take()
                    if k == "end":
                        raise ValueError
                    depth += t == "(" and k == "op"
                    depth -= t == ")" and k == "op"
                    if depth == 0:
                        return _UNKNOWN
            if tok in ("true", "false"):
                return _exact(int(tok == "true"))
            return self.value_of(tok)
        raise ValueError


def _arith(op: str, x: int, y: int) -> int:
    if op == "+":
        return x + y
    if op == "-":
        return x - y
    if op == "*":
        return x * y
    if op == "/":
        return int(x / y)
    if op == "%":
        return x - int(x / y) * y
    if op == "<<":
        if y < 0 or y > 128:
            raise ValueError
        return x << y
    if op == ">>":
        if y < 0:
            raise ValueError
        return x >> y
    if op == "&":
        return x & y
    if op == "|":
        return x | y
    if op == "^":
        return x ^ y
    raise ValueError


def _env(device: bool):
    def defined_of(name: str) -> bool | None:
        if name == "__CUDA_ARCH__":
            return device
        if name in _HIP_ONLY or _HIP_ONLY_RE.match(name):
            return False
        if name in _CUDA_DEFINED:
            return True
        return None

    def value_of(name: str) -> _Val:
        if name == "__CUDA_ARCH__":
            return _Val(300, 1300) if device else _exact(0)
        if name in _HIP_ONLY or _HIP_ONLY_RE.match(name):
            return _exact(0)
        v = _CUDA_DEFINED.get(name, "unknown")
        if v == "unknown" or v is None:
            return _UNKNOWN
        return _exact(v)

    return value_of, defined_of


_HOST_ENV, _DEVICE_ENV = _env(False), _env(True)

# hipcc on AMD: HIP's own macros are known; CUDA's (__CUDACC__, __CUDA_ARCH__, CUDA_VERSION) are
# left unknown, since the porter rewrites them and the arch-macro rules report them.
_HIP_DEFINED = {"__HIP_PLATFORM_AMD__": 1, "__HIP_PLATFORM_HCC__": 1, "__HIPCC__": 1, "__HIP__": 1,
                "USE_ROCM": 1, "__HIP_ROCclr__": 1, "__AMDGCN__": None, "__HIP_DEVICE_COMPILE__": None}
_HIP_UNDEFINED = frozenset({"__HIP_PLATFORM_NVIDIA__", "__HIP_PLATFORM_NVCC__"})


def _hip_env():
    def defined_of(name: str) -> bool | None:
        if name in _HIP_DEFINED:
            return True
        if name in _HIP_UNDEFINED:
            return False
        return None

    def value_of(name: str) -> _Val:
        if name in _HIP_UNDEFINED:
            return _exact(0)
        v = _HIP_DEFINED.get(name)
        return _UNKNOWN if v is None else _exact(v)

    return value_of, defined_of


_HIP_ENV = _hip_env()
_DIRECTIVE_HEAD = regexes.compile(r"^\s*#\s*(\w+)")
_COMMENT = regexes.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def _logical_line(data: bytes, start: int) -> tuple[str, int]:
    """The directive's text from `start` through backslash continuations; and its end."""
    end = logical_end(data, start, at_newline=True)
    raw = data[start:end].replace(b"\\\r\n", b" ").replace(b"\\\n", b" ")
    return _COMMENT.sub(" ", raw.decode("latin-1")), end


def _condition(directive_text: str, name: str) -> str | None:
    body = _DIRECTIVE_HEAD.sub("", directive_text, count=1).strip()
    if name in ("ifdef", "elifdef"):
        return f"defined({body.split()[0]})" if body.split() else None
    if name in ("ifndef", "elifndef"):
        return f"!defined({body.split()[0]})" if body.split() else None
    if name in ("if", "elif"):
        return body
    return "1"  # else


# What _condition makes of `#ifdef NAME` / `#ifndef NAME`: told without the evaluator, since
# every header's include guard is one of its own.
_DEFINED_TEST = regexes.compile(r"(!?)defined\(([A-Za-z_]\w*)\)\Z")


@functools.lru_cache(maxsize=4096)
def _truths(cond: str | None) -> tuple[bool | None, bool | None, bool | None]:
    """The condition's truth in nvcc's host pass, its device pass, and hipcc. Cached: the same
    conditions (`__CUDACC__`, version tests) recur across a tree's files."""
    if cond is None:
        return None, None, None
    m = _DEFINED_TEST.match(cond)
    if m:
        negate, name = m.group(1), m.group(2)
        truths = [env[1](name) for env in (_HOST_ENV, _DEVICE_ENV, _HIP_ENV)]
        return tuple(t if t is None or not negate else not t for t in truths)
    tokens = _pp_tokens(cond)
    if not any(kind == "id" and _tells_passes_apart(tok) for kind, tok in tokens):
        truth = _PPEval(tokens, *_HOST_ENV).parse().truth()  # (`#if defined(_WIN32)`, `#if 0`)
        return truth, truth, truth
    return tuple(_PPEval(tokens, *env).parse().truth() for env in (_HOST_ENV, _DEVICE_ENV, _HIP_ENV))


def _tells_passes_apart(name: str) -> bool:
    """Whether the three passes' environments (_env, _hip_env) answer differently for `name`:
    a condition without such a name has one truth in all three."""
    return name == "__CUDA_ARCH__" or name in _HIP_ONLY or _HIP_ONLY_RE.match(name) is not None \
        or name in _CUDA_DEFINED or name in _HIP_DEFINED or name in _HIP_UNDEFINED


class _Branches(NamedTuple):
    starts: list[int]  # conditional directives' (#if ... #endif) start offsets, sorted
    # per directive: (never in nvcc's host pass, never in its device pass, never compiled by
    # hipcc) for the code after it, up to the next conditional directive
    passes: list[tuple[bool, bool, bool]]


_NO_PASS_EXCLUDED = (False, False, False)


# The directives that open or continue an #if block's branch.
CONDITIONAL_DIRECTIVES = frozenset({b"if", b"ifdef", b"ifndef", b"elif", b"elifdef", b"elifndef",
                                    b"else"})


# `#ifdef NAME` alone on its line (most are include guards): its condition read without
# joining continuations, dropping comments or splitting the text as _condition does.
_PLAIN_DEFINED_TEST = regexes.compile(rb"[ \t]*#[ \t]*(?:el)?if(n?)def[ \t]+([A-Za-z_]\w*)[ \t\r]*\Z")


def _directive_condition(data: bytes, d) -> str | None:
    """_condition() of a conditional directive's logical line."""
    if d.name == b"else":
        return "1"
    if d.name != b"if" and d.name != b"elif":
        m = _PLAIN_DEFINED_TEST.match(data, d.start, d.end)
        if m is not None:
            return ("!defined(" if m.group(1) else "defined(") + m.group(2).decode("ascii") + ")"
    return _condition(_logical_line(data, d.start)[0], d.name.decode("latin-1"))


def _branches(ctx) -> _Branches:
    data = ctx.data
    starts, passes, state = [], [], {}
    # block id -> per pass (host, device, hip): whether some earlier branch's condition surely
    # held, and whether every earlier one's surely failed (chains of hundreds of #elif exist)
    earlier: dict[int, list[list[bool]]] = {}
    for d in ctx.lexed.directives:
        name = d.name
        if name not in CONDITIONAL_DIRECTIVES and name != b"endif":
            continue  # the code after any other directive is in the branch the code before is
        if name != b"endif" and d.branch:
            block, n = d.branch[-1]
            truths = _truths(_directive_condition(data, d))
            prior = earlier.setdefault(block, [[False, True], [False, True], [False, True]])
            state[(block, n)] = tuple(_active(t, p) for t, p in zip(truths, prior))
            for t, p in zip(truths, prior):
                p[0] |= t is True
                p[1] &= t is False
        path = d.branch[:-1] if name == b"endif" else d.branch
        starts.append(d.start)
        passes.append(_excluded_passes(path, state))
    return _Branches(starts, passes)


def _excluded_passes(path: tuple, state: dict) -> tuple[bool, bool, bool]:
    no_host = no_dev = no_hip = False
    for key in path:
        host, dev, hip = state.get(key, (None, None, None))
        no_host |= host is False
        no_dev |= dev is False
        no_hip |= hip is False
    return (no_host, no_dev, no_hip) if no_host or no_dev or no_hip else _NO_PASS_EXCLUDED


def _active(cond: bool | None, prior: list[bool]) -> bool | None:
    """A branch is taken when its condition holds and no earlier branch's did. `prior`: [some
    earlier condition surely held, every earlier one surely failed]."""
    if cond is False or prior[0]:
        return False
    if cond is True and prior[1]:
        return True
    return None


def _pass_states(ctx, offset: int) -> tuple[bool, bool, bool]:
    """(never in nvcc's host pass, never in its device pass, never compiled by hipcc)."""
    br = memo(ctx, "branches", _branches)
    i = bisect.bisect_right(br.starts, offset) - 1
    return br.passes[i] if i >= 0 else _NO_PASS_EXCLUDED


def cuda_excluded(ctx, offset: int) -> bool:
    no_host, no_dev, _ = _pass_states(ctx, offset)
    return no_host and no_dev


def hip_excluded(ctx, offset: int) -> bool:
    return _pass_states(ctx, offset)[2]


def host_pass_only(ctx, offset: int) -> bool:
    return _pass_states(ctx, offset)[1]


def device_pass_only(ctx, offset: int) -> bool:
    return _pass_states(ctx, offset)[0]


def live(ctx, offset: int) -> bool:
    if ctx.lexed.in_comment_or_string(offset):
        return False
    no_host, no_dev, _ = _pass_states(ctx, offset)
    return not (no_host and no_dev)


def relevant(ctx, offset: int) -> bool:
    if ctx.lexed.in_comment_or_string(offset):
        return False
    no_host, no_dev, no_hip = _pass_states(ctx, offset)
    return not (no_host and no_dev) and not no_hip


# --------------------------------------------------------------------------- tree access

@functools.lru_cache(maxsize=None)
def _type_query(node_type: str):
    """`(TYPE) @n`, compiled once; None for a type the grammar does not have."""
    try:
        return tree_sitter.Query(ts.language(), f"({node_type}) @n")
    except Exception:
        return None


# A query costs some 30 ms to compile, once per process whatever it asks for (the library
# analyses the grammar); a walk with a tree cursor indexes a file's nodes at about 0.3 ms per
# KB, the query's captures at about 0.2. So a process walks the files whose nodes are asked
# for until it has walked as many bytes as would have paid for the compile, then compiles the
# query and lets C find the nodes: a pre-commit run on a few files, or a tree such as
# cuda-samples (0.15 MB of files asked), never compiles it; a run over many more never walks
# more than twice what the better choice would have cost.
_WALK_BYTES = 500_000
_walked = [0]  # bytes walked in this process


def walk(node):
    """Every node under `node` (itself included), depth first."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)


def _walk_index(ctx) -> dict[str, list]:
    """Every node by type, in source order (a node before those inside it): one cursor step
    per node, where building each node's list of children cost twice as much."""
    by_type: dict[str, list] = {}
    cursor = ctx.tree.walk()
    while True:
        node = cursor.node
        by_type.setdefault(node.type, []).append(node)
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return by_type


# The node types the rules ask for: one combined query finds them all in a single pass over
# the tree (a query per type would walk the tree once per type).
# Leaves (identifiers) are left out: they are most of a tree's nodes, and a Python object for
# each costs more than the rest of the query; the rules find them by name (nodes_named).
_COMMON_TYPES = (
    "assignment_expression", "binary_expression", "call_expression", "declaration",
    "enumerator", "field_declaration", "for_statement", "function_definition", "init_declarator",
    "kernel_call_syntax", "lambda_expression", "optional_parameter_declaration",
    "parameter_declaration", "return_statement", "subscript_expression",
)


@functools.lru_cache(maxsize=1)
def _common_query():
    return tree_sitter.Query(ts.language(), " ".join(f"({t}) @{t}" for t in _COMMON_TYPES))


def _query_index(ctx) -> dict[str, list]:
    found = tree_sitter.QueryCursor(_common_query()).captures(ctx.tree.root_node)
    return {t: sorted(nodes, key=lambda n: n.start_byte) for t, nodes in found.items()}


def _of_type(ctx, node_type: str) -> list:
    """Every node of one type, in source order."""
    cache = memo(ctx, "nodes_by_type", lambda _ctx: {})
    found = cache.get(node_type)
    if found is not None:
        return found
    walked = "node_index" in ctx.memo
    if walked or _walked[0] + len(ctx.data) <= _WALK_BYTES:
        if not walked:
            _walked[0] += len(ctx.data)
        found = memo(ctx, "node_index", _walk_index).get(node_type, [])
    elif node_type in _COMMON_TYPES:
        found = memo(ctx, "query_index", _query_index).get(node_type, [])
    else:
        query = _type_query(node_type)
        found = [] if query is None else sorted(
            tree_sitter.QueryCursor(query).captures(ctx.tree.root_node).get("n", []), key=lambda n: n.start_byte)
    cache[node_type] = found
    return found


def nodes(ctx, *types: str) -> list:
    if len(types) == 1:
        return _of_type(ctx, types[0])
    out = [n for t in types for n in _of_type(ctx, t)]
    out.sort(key=lambda n: n.start_byte)
    return out


def nodes_between(ctx, node_type: str, start: int, end: int) -> list:
    """The nodes of one type that start in [start, end), in source order: found by bisection
    (a rule asking once per function or array would otherwise read the whole list each time)."""
    found = _of_type(ctx, node_type)
    starts = memo(ctx, ("node_starts", node_type), lambda _: [n.start_byte for n in found])
    return found[bisect.bisect_left(starts, start) : bisect.bisect_left(starts, end)]


_CLIMB = 24  # parents climbed before enclosing() asks the nodes' spans instead


def enclosing(ctx, node, *types: str) -> Iterator:
    """`node`'s ancestors of one of `types`, the innermost first. Most nodes are a few levels
    deep: their parents are climbed. Past _CLIMB levels the rest come from the spans of the
    file's nodes of those types (a _Nest): in tree-sitter each step to a parent walks down
    from the root, so a climb costs the square of the depth, and a generated file nests
    hundreds of blocks."""
    parent = node.parent
    for _ in range(_CLIMB):
        if parent is None:
            return
        if parent.type in types:
            yield parent
        parent = parent.parent
    if parent is not None:
        if parent.type in types:
            yield parent
        yield from memo(ctx, ("nest", types), lambda c: _Nest(nodes(c, *types))).around(parent)


class _Nest:
    """Nodes of a few types by their spans, each with the nearest one that holds it: tree
    nodes nest or keep apart, so the ones holding a node are a chain."""

    def __init__(self, found: list) -> None:
        self.nodes = sorted(found, key=lambda n: (n.start_byte, -n.end_byte))  # outer first
        self.starts = [n.start_byte for n in self.nodes]
        self.up: list[int] = []  # per node, the position of the nearest one holding it, or -1
        open_: list[int] = []
        for i, n in enumerate(self.nodes):
            while open_ and self.nodes[open_[-1]].end_byte < n.end_byte:
                open_.pop()  # ended before this one starts
            self.up.append(open_[-1] if open_ else -1)
            open_.append(i)

    def around(self, node) -> Iterator:
        """The nodes holding `node`, innermost first; one with `node`'s very span only when it is
        an ancestor (a child can have its parent's span)."""
        start, end = node.start_byte, node.end_byte
        same = None  # the ancestors with node's span, once one of those types has it too
        i = bisect.bisect_right(self.starts, start) - 1
        while i >= 0:  # the last one to start by `start`, then the ones holding it
            n = self.nodes[i]
            if n.end_byte >= end and n.id != node.id:
                if n.start_byte == start and n.end_byte == end:
                    same = _same_span_above(node) if same is None else same
                    if n.id in same:
                        yield n
                else:
                    yield n
            i = self.up[i]


# The nodes that declare names with a type: `T a, *b;`, a parameter, a member.
DECLARATIONS = ("declaration", "parameter_declaration", "field_declaration")


def declared_identifiers(ctx, type_node) -> list:
    """Identifiers declared with the declaration that owns this type node."""
    decl = type_node if type_node.type in DECLARATIONS else next(
        enclosing(ctx, type_node, *DECLARATIONS), None)
    if decl is None:
        return []
    out = []
    for d in decl.children_by_field_name("declarator"):
        while d is not None and d.type not in ("identifier", "field_identifier"):
            if d.type == "reference_declarator":  # `T &name`: no field names its declarator
                d = d.named_children[-1] if d.named_child_count else None
            else:
                d = d.child_by_field_name("declarator")
        if d is not None:
            out.append(d)
    return out


def own_field_names(ctx) -> set[str]:
    """The member names the file's own structs and classes declare (found once per file)."""
    def compute(c):
        out = set()
        for decl in nodes(c, "field_declaration"):
            for node in walk(decl):
                if node.type == "field_identifier":
                    out.add(text(node))
        return out
    return memo(ctx, "own_field_names", compute)


def _same_span_above(node) -> set[int]:
    """The ids of the ancestors with `node`'s span: a short climb (a node's own span)."""
    ids, parent = set(), node.parent
    while parent is not None and parent.start_byte == node.start_byte and parent.end_byte == node.end_byte:
        ids.add(parent.id)
        parent = parent.parent
    return ids


def within(ctx, node, *types: str) -> bool:
    """Whether a node of one of `types` (not `node`'s own type) holds `node`: has it inside its
    span, as an ancestor does. Told without climbing: in tree-sitter a step to a node's parent
    walks down from the root, so a climb costs the square of the depth (a generated file nests
    hundreds of blocks)."""
    assert node.type not in types
    starts, reach = memo(ctx, ("spans", types), lambda c: _reach(nodes(c, *types)))
    i = bisect.bisect_right(starts, node.start_byte) - 1
    return i >= 0 and reach[i] >= node.end_byte


def _reach(found: list) -> tuple[list[int], list[int]]:
    """The nodes' starts (in order) and, for each, the furthest end of the nodes up to it."""
    starts, reach, furthest = [], [], -1
    for n in found:
        furthest = max(furthest, n.end_byte)
        starts.append(n.start_byte)
        reach.append(furthest)
    return starts, reach


def live_nodes(ctx, *types: str) -> list:
    return [n for n in nodes(ctx, *types) if live(ctx, n.start_byte)]


def relevant_nodes(ctx, *types: str) -> list:
    return [n for n in nodes(ctx, *types) if relevant(ctx, n.start_byte)]


def _callee(call):
    fn = call.child_by_field_name("function")
    while fn is not None and fn.type == "parenthesized_expression" and fn.named_child_count:
        fn = fn.named_children[0]
    return fn


def _last_name(node) -> str:
    while node is not None:
        if node.type in ("identifier", "field_identifier", "type_identifier",
                         "namespace_identifier", "destructor_name", "operator_name"):
            return text(node)
        if node.type == "qualified_identifier":
            node = node.child_by_field_name("name")
        elif node.type in ("template_function", "template_method", "template_type"):
            node = node.child_by_field_name("name")
        elif node.type == "field_expression":
            node = node.child_by_field_name("field")
        else:
            return ""
    return ""


def call_name(call) -> str:
    """The called function's own name: `f`, `ns::f`, `f<T>`, `obj.f`, `p->f` all give "f"."""
    return _last_name(_callee(call))


def call_qualified_name(call) -> str:
    """The callee as written, template arguments dropped: "cuda::memcpy_async", "cg::wait"."""
    fn = _callee(call)
    if fn is None:
        return ""
    parts = []
    node = fn
    while node is not None and node.type == "qualified_identifier":
        scope = node.child_by_field_name("scope")
        parts.append(_last_name(scope) if scope is not None else "")
        node = node.child_by_field_name("name")
    parts.append(_last_name(node))
    return "::".join(parts)


def is_template_call(call) -> bool:
    fn = _callee(call)
    while fn is not None and fn.type == "qualified_identifier":
        fn = fn.child_by_field_name("name")
    return fn is not None and fn.type in ("template_function", "template_method")


def call_args(call) -> list:
    args = call.child_by_field_name("arguments")
    if args is None:
        return []
    return [c for c in args.named_children if c.type != "comment"]


# --------------------------------------------------------------------------- macros

def macro_bodies(ctx) -> list[MacroDef]:
    return ctx.lexed.defines


def live_includes(ctx) -> list:
    out = []
    for d in ctx.lexed.includes:
        if not cuda_excluded(ctx, d.start):
            out.append((d, d.path(ctx.data)))
    return out


# --------------------------------------------------------------------------- device code

_QUALIFIER_WORDS = frozenset(
    b"__host__ __device__ __global__ __forceinline__ __noinline__ inline __inline__ static "
    b"constexpr extern __attribute__ __always_inline__ __inline".split()
)
# Library macros that commonly carry execution-space qualifiers.
_KNOWN_QUALIFIER_MACROS = {
    b"C10_HOST_DEVICE": frozenset({b"__host__", b"__device__"}),
    b"C10_DEVICE": frozenset({b"__device__"}),
    b"CUTLASS_HOST_DEVICE": frozenset({b"__host__", b"__device__"}),
    b"CUTLASS_DEVICE": frozenset({b"__device__"}),
    b"CUTLASS_GLOBAL": frozenset({b"__global__"}),
    b"CUTE_HOST_DEVICE": frozenset({b"__host__", b"__device__"}),
    b"CUTE_DEVICE": frozenset({b"__device__"}),
    b"__host__": frozenset({b"__host__"}),
    b"__device__": frozenset({b"__device__"}),
    b"__global__": frozenset({b"__global__"}),
}
_SPACE = frozenset({b"__host__", b"__device__", b"__global__"})
_WORD = regexes.compile(rb"[A-Za-z_]\w*")


def _qualifier_macros(ctx) -> dict[bytes, frozenset[bytes]]:
    table = dict(_KNOWN_QUALIFIER_MACROS)
    pending = [m for m in macro_bodies(ctx) if m.params is None]
    changed = True
    while changed:
        changed = False
        for m in pending:
            if m.name in table and m.name not in _KNOWN_QUALIFIER_MACROS:
                continue
            body = _COMMENT.sub(" ", ctx.data[m.body_start:m.body_end].decode("latin-1")).encode()
            words = _WORD.findall(body)
            if not words:
                continue
            spaces: set[bytes] = set()
            ok = True
            for w in words:
                if w in table:
                    spaces |= table[w]
                elif w not in _QUALIFIER_WORDS:
                    ok = False
                    break
            if ok and spaces & _SPACE and table.get(m.name) != frozenset(spaces):
                table[m.name] = frozenset(spaces)
                changed = True
    return table


def qualifier_macros(ctx) -> dict[bytes, frozenset[bytes]]:
    return memo(ctx, "qualifier_macros", _qualifier_macros)


class DeviceFunction(NamedTuple):
    name: str  # "" for a lambda
    kind: str  # "global" | "device" | "host-device" | "lambda" | "called-from-device"
    start: int  # start of the definition
    body_start: int  # the body's `{`
    body_end: int  # just past the body's `}`


def _spaces_before(ctx, start: int, end: int) -> set[bytes]:
    """Execution-space qualifiers written between start and end (macros expanded)."""
    table = qualifier_macros(ctx)
    out: set[bytes] = set()
    for m in _WORD.finditer(ctx.data, start, end):
        if ctx.in_code(m.start()) and m.group() in table:
            out |= table[m.group()]
    return out


def function_declarator(node):
    """The function_declarator of a definition or declaration (through `*`, `&`, `&&` and
    parentheses around it), or None."""
    d = node.child_by_field_name("declarator")
    while d is not None and d.type != "function_declarator":
        if d.type == "reference_declarator":  # `T& f()`: no field names what it declares
            d = d.named_children[-1] if d.named_child_count else None
        else:
            d = d.child_by_field_name("declarator")
    return d


def _function_name(fdecl) -> str:
    return _last_name(fdecl.child_by_field_name("declarator")) if fdecl is not None else ""


def _kind(spaces: set[bytes]) -> str | None:
    if b"__global__" in spaces:
        return "global"
    if b"__device__" in spaces:
        return "host-device" if b"__host__" in spaces else "device"
    return None


def _definition_start(node) -> int:
    parent = node.parent
    while parent is not None and parent.type in ("template_declaration", "linkage_specification"):
        node = parent
        parent = node.parent
    return node.start_byte


def _device_functions(ctx) -> tuple[DeviceFunction, ...]:
    found: list[DeviceFunction] = []
    host_defs = []  # (name, node, body) of functions with no execution space written
    device_declared: set[str] = set()

    for decl in nodes(ctx, "declaration", "field_declaration"):
        fdecl = function_declarator(decl)
        if fdecl is None or cuda_excluded(ctx, decl.start_byte):
            continue
        spaces = _spaces_before(ctx, decl.start_byte, fdecl.start_byte)
        if _kind(spaces) in ("device", "global"):
            device_declared.add(_function_name(fdecl))

    for fn in nodes(ctx, "function_definition"):
        body = fn.child_by_field_name("body")
        fdecl = function_declarator(fn)
        if body is None or fdecl is None or cuda_excluded(ctx, fn.start_byte):
            continue
        name = _function_name(fdecl)
        spaces = _spaces_before(ctx, fn.start_byte, fdecl.start_byte)
        # `__launch_bounds__(...)` and attributes may also sit after the declarator's name
        kind = _kind(spaces)
        if kind is None and name in device_declared:
            kind = "device"
        if kind:
            found.append(DeviceFunction(name, kind, _definition_start(fn), body.start_byte, body.end_byte))
        elif b"__host__" not in spaces and name != "main":
            host_defs.append((name, fn, body))

    for lam in nodes(ctx, "lambda_expression"):
        body = lam.child_by_field_name("body")
        if body is None or cuda_excluded(ctx, lam.start_byte):
            continue
        head_end = body.start_byte
        decl = lam.child_by_field_name("declarator")
        if decl is not None:
            head_end = decl.start_byte
        spaces = _spaces_before(ctx, lam.start_byte, head_end)
        if b"__device__" in spaces or b"__global__" in spaces:
            found.append(DeviceFunction("", "lambda", lam.start_byte, body.start_byte, body.end_byte))

    # Functions with no qualifier that this file only ever calls from device code (a name that
    # also has a device overload here is left alone: its calls cannot be told apart).
    device_names = {f.name for f in found} | device_declared
    host_defs = [h for h in host_defs if h[0] not in device_names]
    if host_defs:
        calls: dict[str, list[int]] = {}
        for call in nodes(ctx, "call_expression"):
            if live(ctx, call.start_byte) and not _names_another_scope(ctx, call):
                calls.setdefault(call_name(call), []).append(call.start_byte)
        found += _called_from_device(ctx, found, host_defs, calls)
    found.sort(key=lambda f: (f.body_start, -f.body_end))
    return tuple(found)


def _called_from_device(ctx, found: list[DeviceFunction], host_defs: list[tuple], calls: dict[str, list[int]]
                        ) -> list[DeviceFunction]:
    """Of `host_defs` ((name, node, body)), those the file calls only from device code: with a
    call of the name outside the body, and every such call in a device function's body (one
    of `found`, or one of these) and not in code of the host pass alone. Worked off as each
    function turns out to be device code, so each call is judged once: a pass over every
    definition per function found took a chain of helpers, each called by the one before,
    the square of its length. Definitions may share a name (`operator()`): each keeps how many
    of the name's calls not yet in device code lie in its own body, and it is called only
    from device code when all of the name's such calls do."""
    sites = sorted((s, name) for name in {h[0] for h in host_defs} for s in calls.get(name, ()))
    offsets = [s for s, _ in sites]
    seg = _segments(found)
    device = [_in_device(ctx, seg, s) for s in offsets]
    waiting = dict.fromkeys((h[0] for h in host_defs), 0)  # per name: its calls not in device code
    for (_, name), known in zip(sites, device):
        waiting[name] += not known
    spans, held, within = [], [], {}  # per definition: its calls, and its name's waiting ones it holds
    for k, (name, _, body) in enumerate(host_defs):
        lo, hi = bisect.bisect_left(offsets, body.start_byte), bisect.bisect_left(offsets, body.end_byte)
        own = [i for i in range(lo, hi) if sites[i][1] == name]
        spans.append((lo, hi) if len(own) < len(calls.get(name, ())) else None)  # None: no call from outside
        held.append(sum(not device[i] for i in own))
        for i in own:
            within.setdefault(i, []).append(k)
    ready: dict[str, dict[int, set[int]]] = {}  # name -> held -> definitions left (with a call from outside)
    for k, (name, _, _) in enumerate(host_defs):
        if spans[k] is not None:
            ready.setdefault(name, {}).setdefault(held[k], set()).add(k)
    out: list[DeviceFunction] = []
    queue = [k for name, by_held in ready.items() for k in by_held.get(waiting[name], ())]
    while queue:
        k = queue.pop()
        name, fn, body = host_defs[k]
        if held[k] != waiting[name] or k not in ready[name].get(held[k], ()):
            continue  # found already
        ready[name][held[k]].discard(k)
        out.append(DeviceFunction(name, "called-from-device", _definition_start(fn), body.start_byte, body.end_byte))
        lo, hi = spans[k]
        for i in range(lo, hi):  # the calls in its body: device code now
            if device[i] or host_pass_only(ctx, offsets[i]):
                continue
            device[i] = True
            callee = sites[i][1]
            waiting[callee] -= 1
            for j in within.get(i, ()):
                by_held = ready.get(callee, {})
                if j in by_held.get(held[j], ()):
                    by_held[held[j]].discard(j)
                    by_held.setdefault(held[j] - 1, set()).add(j)
                held[j] -= 1
            queue.extend(ready.get(callee, {}).get(waiting[callee], ()))
    return out


def _names_another_scope(ctx, call) -> bool:
    """Whether the callee is qualified by a scope this file never opens as a namespace, class,
    struct or union body (`cg::reduce`, `thrust::reduce`; an alias `namespace cg = ...;` opens
    none): a function of that library, never this file's function of that name."""
    fn = _callee(call)
    if fn is None or fn.type != "qualified_identifier":
        return False
    scope = fn.child_by_field_name("scope")
    if scope is None:
        return False  # `::f`: the global one, which may be this file's
    return not opens_scope(ctx, _last_name(scope))


def opens_scope(ctx, name: str) -> bool:
    """Whether the file opens `name` as a namespace, class, struct or union body (an alias
    `namespace cg = ...;` opens none)."""
    return name.encode() in memo(ctx, "own_scopes", _own_scopes)


# A scope's head: the keyword, then what comes before the `{` (`struct A : B {` opens A; B, a
# template's `class T`, and so on are taken too, as a search for each name once took them).
_SCOPE_HEAD = regexes.compile(rb"\b(?:namespace|class|struct|union)\b([^;{}=]*)\{")


def _own_scopes(ctx) -> frozenset[bytes]:
    """Every word in the head of a scope the file opens: one pass over the file, where a
    search per name asked grew with the file's size times its functions."""
    return frozenset(w for m in _SCOPE_HEAD.finditer(ctx.data) for w in _ANY_WORD.findall(m.group(1)))


def device_functions(ctx) -> tuple[DeviceFunction, ...]:
    return memo(ctx, "device_functions", _device_functions)


class _Segments(NamedTuple):
    starts: list[int]
    ends: list[int]
    funcs: list


def _segments(funcs: Iterable[DeviceFunction]) -> _Segments:
    """Flatten nested body ranges into disjoint segments, each tagged with its innermost
    function."""
    events = sorted(funcs, key=lambda f: (f.body_start, -f.body_end))
    starts, ends, owners = [], [], []
    stack: list[DeviceFunction] = []
    pos = 0

    def emit(upto: int):
        nonlocal pos
        if stack and upto > pos:
            starts.append(pos)
            ends.append(upto)
            owners.append(stack[-1])
        pos = max(pos, upto)

    for f in events:
        while stack and stack[-1].body_end <= f.body_start:
            emit(stack[-1].body_end)
            stack.pop()
        emit(f.body_start)
        pos = f.body_start
        stack.append(f)
    while stack:
        emit(stack[-1].body_end)
        stack.pop()
    return _Segments(starts, ends, owners)


def _owner(seg: _Segments, offset: int):
    i = bisect.bisect_right(seg.starts, offset) - 1
    if i >= 0 and offset < seg.ends[i]:
        return seg.funcs[i]
    return None


def _in_device(ctx, seg: _Segments, offset: int) -> bool:
    return _owner(seg, offset) is not None and not host_pass_only(ctx, offset)


def device_function_at(ctx, offset: int) -> DeviceFunction | None:
    seg = memo(ctx, "device_segments", lambda c: _segments(device_functions(c)))
    return _owner(seg, offset)


def in_device_code(ctx, offset: int) -> bool:
    # The lexer settles most offsets (plain host functions) without the tree's index.
    from hipport.rules._host_code import certainly_host  # noqa: PLC0415 - it builds on this module

    if certainly_host(ctx, offset):
        return False
    return device_function_at(ctx, offset) is not None and not host_pass_only(ctx, offset)


# --------------------------------------------------------------------------- nodes by name
# Most rules look for a few names. Searching the bytes for them and asking the tree for the
# node at each hit is much cheaper than indexing every call or identifier of the file, and a
# file without the names is never parsed.

# tree-sitter-cuda's `<<<` token: three '<' with whitespace allowed between them (here any
# byte that may belong to a Unicode space; the tree decides).
LAUNCH_OPEN = regexes.compile(rb"<[\s\x00-\x1f\x7f-\xff]*<[\s\x00-\x1f\x7f-\xff]*<")


# A file's first few names are looked up by scanning its text for each; past that, one pass
# indexes every word (a file of hundreds of functions asks for each one's name, and a scan
# per name made the whole quadratic in the file's size).
_SCANS_BEFORE_INDEX = 32
_ANY_WORD = regexes.compile(rb"\w+")  # IS_WORD_BYTE's runs: bytes patterns' \w is ASCII

# The C scanner's answers where it was built (patterns' functions are the references): a port of
# cuda-samples asks for a few hundred words' places, each a loop of bytes.find in Python.
if _scan is not None:
    starts_of, whole_word_starts, word_index = _scan.starts_of, _scan.whole_word_starts, _scan.word_index
else:
    starts_of, whole_word_starts = patterns.starts_of, patterns.whole_word_starts
    word_index = patterns.python_word_index


class _WordStarts:
    def __init__(self, data: bytes):
        self.data = data
        self.scanned: dict[bytes, list[int]] = {}
        self.index: dict[bytes, list[int]] | None = None

    def __call__(self, word: bytes) -> list[int]:
        if self.index is None:
            got = self.scanned.get(word)
            if got is not None:
                return got
            if len(self.scanned) < _SCANS_BEFORE_INDEX:
                got = self.scanned[word] = whole_word_starts(self.data, word)
                return got
            self.index = word_index(self.data)
        return self.index.get(word, [])


def word_starts(ctx, word: bytes) -> list[int]:
    """patterns.whole_word_starts(ctx.data, word), kept per file (not to be changed)."""
    return memo(ctx, "word_starts", lambda c: _WordStarts(c.data))(word)


def words_finder(words) -> Substrings:
    """What finds wherever one of `words` (str) starts, in one pass in C (see occurrences)."""
    return Substrings(w.encode() for w in sorted(words))


def whole_word_patterns(names) -> tuple[re.Pattern[bytes], ...]:
    r"""`\b(?:names)\b` for identifier `names` (str), as patterns that each open with a literal
    (the names' common start, per two leading characters; see word_start). Matches of whole
    words never overlap, so those of all the patterns, sorted, are the one pattern's. The
    names are tables' (the same every run), so the patterns are kept compiled (regexes): names
    of one length go by name, not in the order a set gives, which changes with the hash seed of
    each process (a new pattern text each time, compiled and written to the store again)."""
    return tuple(regexes.compile(word_start(head) + rb"(?:" + rest + rb")\b")
                 for head, rest in by_common_start(sorted(names, key=lambda n: (-len(n), n))))


def code_word_matches(ctx, patterns) -> list[re.Match[bytes]]:
    """Matches in code of whole_word_patterns(), in order."""
    return sorted((m for p in patterns for m in ctx.code_matches(p)), key=lambda m: m.start())


def occurrences(data: bytes, words, patterns):
    """(start, end) of every place where one of `words` starts (overlaps included), found
    with `patterns`: words_finder(words), or regexes (each place a match starts, with the end
    of the match there); or, for a few words, one by one."""
    if isinstance(patterns, Substrings):
        yield from patterns.at(data)
        return
    for pattern in patterns or ():
        m = pattern.search(data)
        while m is not None:
            yield m.start(), m.end()
            m = pattern.search(data, m.start() + 1)
    if patterns:
        return
    for word in words:
        w = word.encode()
        for at in starts_of(data, w):
            yield at, at + len(w)


# `patterns` for identifier words to be found whole, from the file's word index (word_starts):
# for a rule that asks after each function or macro of the file in turn, where a pass over the
# file per name made the rule quadratic in the file's size. calls_named and nodes_named take it
# when given no patterns.
WHOLE_WORDS = "whole words"


def places(ctx, words, patterns=None):
    """occurrences() in the file; with WHOLE_WORDS, where each of `words` stands whole (a word
    that is no ASCII identifier, which the word index does not hold: wherever it starts)."""
    if patterns is not WHOLE_WORDS:
        yield from occurrences(ctx.data, words, patterns)
        return
    others = []
    for word in words:
        if word.isascii() and word.isidentifier():
            w = word.encode()
            yield from ((at, at + len(w)) for at in word_starts(ctx, w))
        else:
            others.append(word)
    yield from occurrences(ctx.data, others, None)


def nodes_at(ctx, words, patterns=None, code_only: bool = False):
    """The smallest node around each place where one of `words` starts (see occurrences; or,
    with WHOLE_WORDS, stands as a whole word); the file is parsed only if there is one.
    `code_only`: places in comments and literals are left out (a caller that wants a call or
    a name node finds none there)."""
    root = None
    skip = ctx.lexed.in_comment_or_string
    for start, end in places(ctx, words, patterns):
        if code_only and skip(start):
            continue
        if root is None:
            root = ctx.tree.root_node
        yield root.descendant_for_byte_range(start, end)


def calls_named(ctx, names, patterns=None) -> list:
    """Call expressions whose callee's own name (sx.call_name) is in `names`, in source order.

    Found from where the names occur in the text, not by walking every call of the file: a
    callee's name is a token spelled out in the file, and the nearest call around that
    token is the call it names (a callee never sits inside another call). Without
    `patterns`, where each name stands as a whole word (WHOLE_WORDS): a callee's name does."""
    found = {}
    for node in nodes_at(ctx, names, WHOLE_WORDS if patterns is None else patterns, code_only=True):
        if node.type != "call_expression":
            node = next(enclosing(ctx, node, "call_expression"), None)
        if node is not None and node.id not in found and call_name(node) in names:
            found[node.id] = node
    return sorted(found.values(), key=lambda n: n.start_byte)


def nodes_named(ctx, names, patterns=None, types=()) -> list:
    """Leaf nodes (of one of `types`, any if empty) whose text is in `names`, in source order,
    found where the names occur in the text (without `patterns`, as whole words: a leaf whose
    text is a name stands whole)."""
    found = {}
    for node in nodes_at(ctx, names, WHOLE_WORDS if patterns is None else patterns, code_only=True):
        if node.id not in found and (not types or node.type in types) and text(node) in names:
            found[node.id] = node
    return sorted(found.values(), key=lambda n: n.start_byte)


# --------------------------------------------------------------------------- constants

TYPE_SIZES: dict[str, int] = {
    "char": 1, "signed char": 1, "unsigned char": 1, "bool": 1, "int8_t": 1, "uint8_t": 1,
    "char1": 1, "uchar1": 1, "__nv_fp8_e4m3": 1, "__nv_fp8_e5m2": 1,
    "short": 2, "unsigned short": 2, "short int": 2, "int16_t": 2, "uint16_t": 2,
    "half": 2, "__half": 2, "__nv_bfloat16": 2, "nv_bfloat16": 2, "char2": 2, "uchar2": 2,
    "short1": 2, "ushort1": 2,
    "int": 4, "unsigned": 4, "unsigned int": 4, "signed": 4, "signed int": 4, "int32_t": 4,
    "uint32_t": 4, "float": 4, "half2": 4, "__half2": 4, "__nv_bfloat162": 4,
    "nv_bfloat162": 4, "char4": 4, "uchar4": 4, "short2": 4, "ushort2": 4, "int1": 4,
    "uint1": 4, "float1": 4,
    "long long": 8, "unsigned long long": 8, "long long int": 8, "unsigned long long int": 8,
    "long": 8, "unsigned long": 8, "int64_t": 8, "uint64_t": 8, "size_t": 8, "ptrdiff_t": 8,
    "double": 8, "float2": 8, "int2": 8, "uint2": 8, "short4": 8, "ushort4": 8,
    "double1": 8, "longlong1": 8, "ulonglong1": 8, "long1": 8, "ulong1": 8,
    "float3": 12, "int3": 12, "uint3": 12,
    "float4": 16, "int4": 16, "uint4": 16, "double2": 16, "longlong2": 16, "ulonglong2": 16,
    "long2": 16, "ulong2": 16,
    "double3": 24, "double4": 32, "longlong4": 32, "ulonglong4": 32,
}

# From `const` on (see word_start): a `static` or `inline` before it changes neither the
# name, the value nor whether the place is compiled.
_CONST_DECL = regexes.compile(
    word_start(b"const") + rb"(?:expr)?\s+(?:static\s+|inline\s+)*"
    rb"((?:unsigned\s+|signed\s+)?(?:long\s+long|long|int|short|char|size_t|u?int(?:8|16|32|64)_t|"
    rb"unsigned|signed|auto)(?:\s+int)?)\s+([A-Za-z_]\w*)\s*(?:=\s*([^;{}]+?)|\{([^;{}]*)\})\s*;")
_SIZEOF = regexes.compile(r"\bsizeof\s*\(\s*([A-Za-z_][\w\s:]*?)\s*\)")
_CAST = regexes.compile(
    r"\(\s*(?:(?:unsigned|signed|long|short|const)\s+)*(?:int|unsigned|long|size_t|short|char|"
    r"u?int(?:8|16|32|64)_t)\s*\)")
_STATIC_CAST = regexes.compile(r"\bstatic_cast\s*<\s*[\w\s:]+>\s*")


def _raw_constants(ctx) -> dict[str, list[tuple[int, int, int, bool]]]:
    """Where each name is given a value: (start, value start, value end, is a macro). Whether
    that place is compiled, and its text, are read when the name is asked for."""
    raw: dict[str, list[tuple[int, int, int, bool]]] = {}
    for m in macro_bodies(ctx):
        if m.params is None:
            raw.setdefault(m.name.decode("latin-1"), []).append((m.start, m.body_start, m.body_end, True))
    for m in _CONST_DECL.finditer(ctx.data):
        value = 3 if m.group(3) is not None else 4
        raw.setdefault(m.group(2).decode("latin-1"), []).append((m.start(), *m.span(value), False))
    return raw


class _Constants:
    """The file's integer constants (object-like macros, const/constexpr integers), each
    resolved on first ask: a header may define thousands, and a rule asks for a few."""

    def __init__(self, ctx, raw: dict[str, list[tuple[int, int, int, bool]]]):
        # A weak reference: ctx.memo holds this object, and a cycle would keep the file's
        # whole state (tokens, directives, macros) alive until the garbage collector's pass.
        self._ctx = weakref.proxy(ctx)
        self._raw = raw
        self._done: dict[str, int | None] = {}  # a None here failed with no cycle in the way
        self._resolving: set[str] = set()

    def _values(self, name: str) -> list[str]:
        """The texts `name` is given in code that CUDA compiles (a macro's body without
        comments; an empty one gives no value)."""
        ctx, out = self._ctx, []
        for start, value_start, value_end, is_macro in self._raw.get(name, ()):
            text = ctx.data[value_start:value_end].decode("latin-1")
            if is_macro and not cuda_excluded(ctx, start):
                text = _COMMENT.sub(" ", text).strip()
                if text:
                    out.append(text)
            elif not is_macro and live(ctx, start):
                out.append(text.strip())
        return out

    def may_be(self, name: str, values) -> bool:
        """Whether get(name) may be one of `values` (ints): False without resolving anything
        when every place that gives `name` a value gives a plain number not among them (a
        header's thousands of `#define GL_X 0x3005`); True where that cannot be told so."""
        data = self._ctx.data
        for _start, value_start, value_end, _is_macro in self._raw.get(name, ()):
            m = _PLAIN_NUMBER.match(data[value_start:value_end].strip())
            if m is None or _plain_number(m) in values:
                return True
        return False

    def get(self, name: str) -> int | None:
        if name in self._done:
            return self._done[name]
        if name in self._resolving:
            return None
        exprs = self._values(name)
        if not exprs:
            return None
        outermost = not self._resolving
        self._resolving.add(name)
        values = {_eval_text(expr, self.get) for expr in exprs}
        self._resolving.discard(name)
        value = values.pop() if len(values) == 1 and None not in values else None
        if value is not None or outermost:  # a failure inside a cycle may not be final
            self._done[name] = value
        return value


def int_constants(ctx) -> _Constants:
    return memo(ctx, "int_constants", lambda c: _Constants(c, _raw_constants(c)))


def _eval_text(expr: str, lookup: Callable[[str], int | None]) -> int | None:
    expr = _COMMENT.sub(" ", expr)
    expr = _STATIC_CAST.sub("", expr)
    expr = _CAST.sub(" ", expr)

    def size_of(m: re.Match) -> str:
        name = " ".join(m.group(1).replace("std::", "").split())
        size = TYPE_SIZES.get(name)
        return str(size) if size is not None else " __unknown_sizeof__ "

    expr = _SIZEOF.sub(size_of, expr)

    def value_of(name: str) -> _Val:
        v = lookup(name)
        return _UNKNOWN if v is None else _exact(v)

    toks = _pp_tokens(expr)
    if not toks or any(k == "bad" for k, _ in toks):
        return None
    result = _PPEval(toks, value_of, lambda name: None).parse()
    return result.exact


# A decimal or hex integer literal: read directly, so a file whose checks only meet numbers
# written out never computes int_constants.
_PLAIN_NUMBER = regexes.compile(rb"(?:0[xX]([0-9a-fA-F]+)|([1-9][0-9]*|0))[uUlL]*\Z")


def _plain_number(m: re.Match) -> int:
    return int(m.group(1), 16) if m.group(1) is not None else int(m.group(2))


def eval_int(ctx, expr) -> int | None:
    """Value of an integer constant expression, or None when any part is not constant."""
    if expr is None:
        return None
    if hasattr(expr, "text"):
        expr = expr.text
    if isinstance(expr, bytes):
        m = _PLAIN_NUMBER.match(expr)
        if m is not None:
            return _plain_number(m)
        expr = expr.decode("latin-1")
    consts = int_constants(ctx)
    return _eval_text(expr, consts.get)


# --------------------------------------------------------------------------- shared memory

class SharedDecl(NamedTuple):
    decl: object  # the declaration node
    name: str
    name_start: int
    dims: tuple  # size nodes, outermost first; None for `[]`; () for a scalar
    type_name: str  # element type as written, qualifiers dropped ("float", "float4", "T")
    extern: bool


_TYPE_NOISE = regexes.compile(r"\b(?:const|volatile|static|extern|__shared__|__device__|typename|"
                         r"struct|class|alignas\s*\([^)]*\)|__align__\s*\([^)]*\)|alignas|__align__)\s*")


def _shared_declarations(ctx) -> list[SharedDecl]:
    out = []
    for decl in nodes(ctx, "declaration"):
        head = decl.text.split(b"=")[0] if decl.text else b""
        if b"__shared__" not in head:
            continue
        if not any(ch.type == "type_qualifier" and text(ch) == "__shared__" for ch in decl.children) \
                and not re.search(rb"\b__shared__\b", head):
            continue
        type_node = decl.child_by_field_name("type")
        type_name = " ".join(_TYPE_NOISE.sub(" ", text(type_node)).split())
        extern = any(ch.type == "storage_class_specifier" and text(ch) == "extern" for ch in decl.children)
        for d in decl.children_by_field_name("declarator"):
            if d.type == "init_declarator":
                d = d.child_by_field_name("declarator")
            if d is not None and d.type == "parenthesized_declarator":
                # `__shared__ __align__(16) float s[N]` parses as a declarator in parentheses
                inner = [c for c in d.named_children if c.type in ("array_declarator", "identifier")]
                d = inner[-1] if inner else None
                if d is not None:
                    prefix = decl.text[:d.start_byte - decl.start_byte].decode("latin-1")
                    type_name = " ".join(_TYPE_NOISE.sub(" ", re.sub(r"[()]|\b\d+\b", " ", prefix)).split())
            dims = []
            while d is not None and d.type == "array_declarator":
                dims.append(d.child_by_field_name("size"))
                d = d.child_by_field_name("declarator")
            dims.reverse()
            while d is not None and d.type not in ("identifier",):
                d = d.child_by_field_name("declarator")
            if d is None:
                continue
            out.append(SharedDecl(decl, text(d), d.start_byte, tuple(dims), type_name, extern))
    return out


def shared_declarations(ctx) -> list[SharedDecl]:
    return memo(ctx, "shared_declarations", _shared_declarations)


# For pre-checks that spare the tree: each `__shared__` declaration as text, split into its
# declarators, each with its array dimensions' texts.
_SHARED_WORD = regexes.compile(word_start(b"__shared__") + rb"\b")
_DIMENSION = regexes.compile(rb"\[([^\[\]]*)\]")


def shared_declarator_texts(ctx) -> list[tuple[int, list[bytes]]] | None:
    """Per declarator of every `__shared__` declaration in code (the text from `__shared__`
    to its `;`, split at commas outside brackets): where its `__shared__` is, and the texts
    of its `[...]` dimensions. None when the text cannot be read so (no `;`, or brackets
    inside a dimension)."""
    return memo(ctx, "shared_declarator_texts", _shared_declarator_texts)


def _shared_declarator_texts(ctx) -> list[tuple[int, list[bytes]]] | None:
    data, lexed = ctx.data, ctx.lexed
    out = []
    for m in _SHARED_WORD.finditer(data):
        if lexed.in_comment_or_string(m.start()):
            continue
        end = lexed.find_in_code(b";", m.end())
        if end < 0:
            return None
        cfg = split_top_level(data[m.end() : end] + b")", 0)
        if cfg is None:
            return None
        cuts = [m.end() + c for c in cfg[0]] + [end]
        start = m.end()
        for cut in cuts:
            text = data[start:cut]
            dims = _DIMENSION.findall(text)
            if text.count(b"[") != len(dims):
                return None
            out.append((m.start(), dims))
            start = cut + 1
    return out
