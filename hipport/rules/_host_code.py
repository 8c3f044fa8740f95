"""Host code told from the lexer: whether an offset is certainly outside device code, by the
same criteria as _syntax.device_functions, without a parse.

Most kernel launches and runtime calls sit in plain host functions. Where the brace structure
(parse.braces) shows every function and lambda around an offset, and each one's head has no
word that may mean __device__/__global__, no declaration of its name has one, and it is `main`,
never called in the file, or called from code that is itself certainly host code, the offset
is host code and the rules asking need no tree. Anything else (a head the lexer cannot read,
unpaired braces, a brace pair it cannot name) is "can't tell": the rule asks the tree.
"""

from __future__ import annotations

from hipport import regexes
from hipport.parse.braces import BLOCK, LINKAGE, TRAILING_QUALIFIERS, tail_after, word_before
from hipport.parse.declarations import EXPRESSION_KEYWORDS
from hipport.parse import IS_SPACE_BYTE, IS_WORD_BYTE
from hipport.rules import _syntax as sx

_DEVICE_SPACES = frozenset({b"__device__", b"__global__"})
MAX_CALLERS_DEPTH = 4  # how far up the callers of a host function to look
_CONTROL = frozenset({b"if", b"for", b"while", b"switch", b"catch"})
_STATEMENT_KEYWORDS = frozenset({b"else", b"do"})  # not `try`: `f() try {` is a function body
# Words before `(` that are not the function's name.
_NOT_A_NAME = frozenset({b"noexcept", b"throw", b"decltype", b"alignas", b"__attribute__",
                         b"__declspec", b"requires", b"__launch_bounds__", b"sizeof", b"return"})
# A namespace or class head: the keyword after the last `;`, `{`, `}`, `(` or `)`.
_SCOPE_WORD = regexes.compile(rb"\b(?:namespace|class|struct|union)\b")
_WORD = regexes.compile(rb"[A-Za-z_]\w*")


def all_certainly_host(ctx, offsets) -> bool:
    """Whether every one of `offsets` is certainly host code (see certainly_host)."""
    return all(certainly_host(ctx, at) for at in offsets)


def certainly_host(ctx, offset: int, depth: int = 0) -> bool:
    """True: `offset` is certainly not in device code (sx.in_device_code would say False);
    False: can't tell."""
    if not may_have_device_code(ctx):
        return True
    braces = ctx.lexed.braces
    if not braces.balanced:
        return False
    # A brace pair found plain is plain however deep the question came; one that could not be
    # told at some depth cannot be told from any deeper (fewer callers left to look up).
    unsure = sx.memo(ctx, "host_code_unsure", lambda _: {})  # brace -> the least such depth
    # plain brace -> a pair around it such that every pair between is plain (-1: file scope):
    # a climb jumps there, so blocks nested hundreds deep are not climbed again for each
    # question from inside them
    past = sx.memo(ctx, "host_code_past_plain", lambda _: {})
    i = braces.innermost(offset)
    passed = []
    while i >= 0:
        up = past.get(i)
        if up is None:
            if unsure.get(i, MAX_CALLERS_DEPTH + 1) <= depth or not _plain_brace(ctx, i, depth):
                unsure[i] = min(depth, unsure.get(i, depth))
                break
            up = past[i] = braces.parents[i]
        passed.append(i)
        i = up
    for p in passed:
        past[p] = i
    return i < 0


def may_have_device_code(ctx) -> bool:
    """Whether a word that may expand to __device__ or __global__ (sx.qualifier_macros) is in
    the file at all. Device code starts from one (sx.device_functions): a file without any, a
    host library's header, has none, and no caller of its functions need be looked up."""
    def compute(c):
        data = c.data
        return any(word in data for word, spaces in sx.qualifier_macros(c).items() if spaces & _DEVICE_SPACES)
    return sx.memo(ctx, "host_code_device_words", compute)


def in_statements(braces, offset: int) -> bool:
    """Whether a brace pair around `offset` is a BLOCK. Where certainly_host(offset) holds,
    every such pair is a function, lambda or statement body (it cannot tell an initializer's
    braces), so `offset` is inside a function or lambda, not at namespace or class scope."""
    i = braces.innermost(offset)
    while i >= 0:
        if braces.kind(i) == BLOCK:
            return True
        i = braces.parents[i]
    return False


def _plain_brace(ctx, i: int, depth: int) -> bool:
    """Whether brace pair `i` is certainly not the body of a device function or lambda: a
    statement block, a namespace/class body, `extern "C"`, or a plain host function's body."""
    braces, data = ctx.lexed.braces, ctx.data
    kind = braces.kind(i)
    open_at = braces.opens[i]
    end = ctx.lexed.code_before(open_at)
    if kind == LINKAGE:
        return True
    if kind != BLOCK:
        # a namespace or class body, if its head says so; anything else may be a function
        return _SCOPE_WORD.search(tail_after(data, end, 256, b";{}()")) is not None
    before = data[end - 1 : end]
    if before in (b";", b"{", b"}", b":"):
        return True  # a statement block (kind() saw its parent is a block)
    at, word = word_before(data, end, 16)
    if word in _STATEMENT_KEYWORDS:
        return True
    if word == b"try":
        stop = ctx.lexed.code_before(at)
        if data[stop - 1 : stop] in (b";", b"{", b"}", b":"):
            return True  # a try statement (a function's try block follows its head's `)`)
    if before == b"]":
        return _plain_lambda(ctx, end - 1, open_at)
    close = end
    while True:  # past `const`, `override`, ... to the `)`
        at, word = word_before(data, close)
        if word not in TRAILING_QUALIFIERS:
            break
        close = at
    close = word_before(data, close)[0] - 1  # the last byte before the spaces (no word there)
    if data[close : close + 1] != b")":
        return False  # an initializer, an enumerator list, or a head not read here
    paren = ctx.lexed.match_back(close)
    if paren is None:
        return False
    stop = ctx.lexed.code_before(paren)
    operator = _OPERATOR_HEAD.search(data, max(0, stop - 32), stop)
    if operator is not None:  # before the lambda test: `operator[](int i)` ends with `]` too
        return _plain_special(ctx, ctx.lexed.statement_start(operator.start()), stop, i, b"operator")
    if data[stop - 1 : stop] == b"]":
        return _plain_lambda(ctx, stop - 1, open_at)
    name_start, name = word_before(data, stop)
    if not name or name in _NOT_A_NAME:
        return False  # `operator+(...)`, a function pointer's head, a template's `>`, ...
    if name in _CONTROL:
        return True
    if data[name_start - 1 : name_start] == b"~":  # a destructor (its `~` right before the name)
        return _plain_special(ctx, ctx.lexed.statement_start(name_start), stop, i, name, destructor=True)
    if data[max(0, name_start - 2) : name_start] == b"->" or data[name_start - 1 : name_start] == b".":
        return False  # not a definition's name: sx.device_functions names it otherwise
    # (`A::f`, `T<U>::f`: the tree's index knows a definition by its last name, as here)
    return _plain_function(ctx, name, ctx.lexed.statement_start(name_start), name_start + len(name), i, depth)


# The name of an `operator()` or `operator[]` definition, right before its parameters.
_OPERATOR_HEAD = regexes.compile(rb"(?<![\w$])operator[ \t\r\n]*(?:\([ \t\r\n]*\)|\[[ \t\r\n]*\])\Z")


def _plain_special(ctx, head_start: int, head_end: int, i: int, word: bytes, destructor: bool = False) -> bool:
    """The body of an `operator()`/`operator[]` or a destructor (`word`: b"operator", or the
    class's name), which sx.device_functions names "operator()", "~T": the file calls them by
    that name only explicitly (`v.operator()(x)`, `p->~T()`), never as `v(x)` or `delete p`.
    Plain where the head has no word that may mean __device__/__global__ and every other use of
    the name is plainly neither a declaration that may say so nor such a call: then no caller
    needs looking up."""
    if may_name_device(ctx, head_start, head_end):
        return False
    return not _any_outside(_special_doubts(ctx, word, destructor), head_start, ctx.lexed.braces.closes[i])


def _special_doubts(ctx, word: bytes, destructor: bool) -> list[int]:
    """The uses of a special member's name (every `operator`; a destructor's `~T`) that may
    declare it __device__ or call it, in order; once per file and name: a file of functors has
    hundreds of `operator()`."""
    may_call = _may_call_destructor if destructor else _may_call_operator

    def compute(c):
        data = c.data
        uses = sx.word_starts(c, word)
        if destructor:
            uses = [at for at in uses if data[at - 1 : at] == b"~"]
        return [at for at in uses
                if may_name_device(c, c.lexed.statement_start(at), at) or (c.in_code(at) and may_call(c, at))]
    return sx.memo(ctx, ("host_code_special_doubts", word, destructor), compute)


def _may_call_operator(ctx, at: int) -> bool:
    """Whether the `operator` at `at` may be called by name: `(` or `[` follows, and no type's
    word comes right before it (`float& operator[](int i)` declares one)."""
    data, lexed = ctx.data, ctx.lexed
    after = lexed.next_code(at + len(b"operator"))
    if data[after : after + 1] not in (b"(", b"["):
        return False
    stop = lexed.previous_code(at)
    return not (stop and data[stop - 1] in IS_WORD_BYTE and word_before(data, stop)[1] not in EXPRESSION_KEYWORDS)


def _may_call_destructor(ctx, at: int) -> bool:
    """Whether the `~T` whose name is at `at` may be a call of the destructor (or another
    definition of it): a member access or a scope before the `~`. After anything else it
    declares the destructor (`virtual ~T();`) or is not one (`~T()` negates a temporary)."""
    data = ctx.data
    stop = ctx.lexed.previous_code(at - 1)
    return data[stop - 1 : stop] == b"." or data[stop - 2 : stop] in (b"::", b"->")


def _plain_lambda(ctx, close_bracket: int, open_at: int) -> bool:
    start = ctx.lexed.match_back(close_bracket, b"[", b"]")
    return start is not None and not may_name_device(ctx, start, open_at)


def _plain_function(ctx, name: bytes, head_start: int, name_end: int, i: int, depth: int) -> bool:
    """The name itself counts as a head word: before a lambda's `(`, `__device__` stands where
    a function's name would."""
    if may_name_device(ctx, head_start, name_end):
        return False
    body_end = ctx.lexed.braces.closes[i]
    # The occurrences outside this definition, comments included (more than the tree's calls
    # and declarations); what each is, told once per name: a file may define a name many times
    # (overloads, members of several classes).
    doubts, sites = _name_uses(ctx, name)
    if _any_outside(doubts, head_start, body_end):
        return False  # a prototype or member declaration of the name may say __device__
    if name == b"main":
        return True
    if not _any_outside(sites, head_start, body_end):
        return True  # the tree has no call of it (a name in a comment, `&name`, `cg::name(...)`)
    if depth >= MAX_CALLERS_DEPTH:
        return False
    return _called_from_host(ctx, name, sites, depth, head_start, body_end)


def _any_outside(offsets: list[int], start: int, end: int) -> bool:
    """Whether one of the sorted `offsets` is outside start..end (both included)."""
    return bool(offsets) and (offsets[0] < start or offsets[-1] > end)


def _name_uses(ctx, name: bytes) -> tuple[list[int], list[int]]:
    """Where `name` stands as a whole word, in order: where a declaration before it may say
    __device__, and where it may be called (_may_be_called, in code)."""
    def compute(c):
        uses = sx.word_starts(c, name)
        return ([at for at in uses if may_name_device(c, c.lexed.statement_start(at), at)],
                [at for at in uses if c.in_code(at) and _may_be_called(c, at, at + len(name))])
    return sx.memo(ctx, ("host_code_uses", name), compute)


class _Callers:
    """The sites of a name's calls, judged in order as its definitions ask: whether a site
    certainly calls the name from host code (looking up to MAX_CALLERS_DEPTH callers up) is a
    fact about the site, whichever definition asks, so each is judged once; and a definition
    stops at the first such site outside its own span, as most have one."""

    def __init__(self, sites: list[int]):
        self.sites, self.judged, self.host = sites, 0, []  # host: the sites judged so, in order


def _called_from_host(ctx, name: bytes, sites: list[int], depth: int, start: int, end: int) -> bool:
    """Whether one of `sites` outside start..end certainly calls `name` from host code."""
    callers = sx.memo(ctx, ("host_code_callers", name, depth), lambda _: _Callers(sites))
    if _any_outside(callers.host, start, end):
        return True
    while callers.judged < len(sites):
        at = sites[callers.judged]
        callers.judged += 1
        if _is_call(ctx, at, name) and sx.live(ctx, at) \
                and (sx.host_pass_only(ctx, at) or certainly_host(ctx, at, depth + 1)):
            callers.host.append(at)
            if not start <= at <= end:
                return True
    return False


# What may follow a callee's name: its arguments, template arguments, the `)` of `(f)(x)`,
# or a comment or line splice before one of them. Any other byte ends every call of it.
_MAY_FOLLOW_A_CALLEE = frozenset(b"(<)/\\")


def _may_be_called(ctx, start: int, end: int) -> bool:
    """Whether the name at data[start:end] may be the callee of a call that sx.device_functions
    counts: one of its arguments may follow; no word but an expression keyword comes right
    before it (`template void f<int>(...)`, `T f(...)` declare it); and it is not qualified by
    a scope the file never opens (`cg::reduce(...)` is the library's, not the file's)."""
    data = ctx.data
    while end < len(data) and data[end] in IS_SPACE_BYTE:
        end += 1
    if end == len(data) or data[end] not in _MAY_FOLLOW_A_CALLEE:
        return False
    if data[end] == 0x29:  # `)`: a callee only in `(f)(x)`, `((f))(x)`; else an argument
        while data[end : end + 1] == b")":
            end = ctx.lexed.next_code(end + 1)
        if data[end : end + 1] not in (b"(", b"#"):  # (a directive between: can't tell)
            return False
    stop = ctx.lexed.previous_code(start)
    if stop and data[stop - 1] in IS_WORD_BYTE:
        return word_before(data, stop)[1] in EXPRESSION_KEYWORDS
    if data[stop - 2 : stop] != b"::":
        return True
    # `::name` (the global one) and `T<U>::name` may be the file's own: no word right before
    scope = _scope_before(ctx, stop - 2)
    return not scope or sx.opens_scope(ctx, scope)


def _scope_before(ctx, colons: int) -> str:
    """The word right before the `::` at `colons` (spaces and comments between): the scope a
    name is qualified by; "" when no word stands there (`::f`, `T<U>::f`)."""
    end = ctx.lexed.previous_code(colons)
    start, word = word_before(ctx.data, end)
    return word.decode("latin-1") if word and start + len(word) == end else ""


def _is_call(ctx, at: int, name: bytes) -> bool:
    """Whether the name at `at` is certainly the callee of a call in a function body that
    sx.device_functions counts as one of `name`'s (it goes by the callee's last name): `(`
    follows, and what precedes is no word but `return` or `throw`, and no `&`, `*`, `>` or
    `~`; or `.`/`->` (a member call); or `::` after a scope the file opens."""
    data, braces = ctx.data, ctx.lexed.braces
    i = braces.innermost(at)
    if i < 0 or braces.kind(i) != BLOCK or not ctx.in_code(at):
        return False
    after = _spaces_end(data, at + len(name))
    if data[after : after + 1] == b"<":  # `f<float>(x)`: the tree's template_function call
        m = _PLAIN_TEMPLATE_ARGS.match(data, after)
        after = _spaces_end(data, m.end()) if m else after
    if data[after : after + 1] != b"(":
        return False
    end = ctx.lexed.previous_code(at)
    before = data[end - 1 : end]
    if data[end - 2 : end] == b"->":
        return True
    if before == b".":
        return data[end - 2 : end] != b".."  # `obj.f(`, not a pack's `...`
    if data[end - 2 : end] == b"::":
        scope = _scope_before(ctx, end - 2)
        return bool(scope) and sx.opens_scope(ctx, scope)
    if before == b":":  # in a block: after a label, `case x:`, a ternary's `:`, a range-for's
        return True
    if before.isalnum() or before == b"_":
        return word_before(data, end)[1] in _CALL_AFTER  # `return f(x)`; `T f(x)` declares f
    return before not in (b">", b"~", b"&", b"*")


# Words after which `name(` is a call: never a declaration, a `new` or a cast.
_CALL_AFTER = frozenset({b"return", b"co_return", b"throw"})


# Template arguments of words, numbers, `::`, `*`, `&` and commas, nested three deep: where
# `(` follows them, tree-sitter reads a call of a template_function (a comparison `a < b > (c)`
# too, as C++ does when `a` names a template). Anything else (parentheses, operators, a
# comment) leaves the call unsure.
_ARG_BYTES = rb"[\w \t,:*&]"
_PLAIN_TEMPLATE_ARGS = regexes.compile(  # possessive: no backtracking on a `<` that never closes
    rb"<(?:" + _ARG_BYTES + rb"++|<(?:" + _ARG_BYTES + rb"++|<" + _ARG_BYTES + rb"*+>)*+>)*+>")


def _spaces_end(data: bytes, at: int) -> int:
    while data[at : at + 1] in (b" ", b"\t"):
        at += 1
    return at


def may_name_device(ctx, start: int, end: int) -> bool:
    """Whether a word in data[start:end] (comments too: more than the tree reads) may expand to
    __device__ or __global__."""
    table = sx.qualifier_macros(ctx)
    for m in _WORD.finditer(ctx.data, start, end):
        spaces = table.get(m.group())
        if spaces and spaces & _DEVICE_SPACES:
            return True
    return False
