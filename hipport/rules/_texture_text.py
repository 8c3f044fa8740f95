"""The texture rules' sites read from the text, where the lexer can be certain of them.

The texture rules report fetch calls (`tex2D<float>(obj, x, y)`), object creations
(`cudaCreateTextureObject(...)`) and object-handle declarations (`cudaTextureObject_t tex`).
In most files that use textures every such name stands in a plain form: a call after `(`, `=`
or `;`, a parameter or a variable declared with the handle type, a template argument
(`std::vector<cudaSurfaceObject_t>`), the return type of a function definition. read() reads
those forms and gives the same records the tree gives (texture.py), so the file needs no
parse; any other form (a name after `::`, `.` or a type word, a named template parameter, a
prototype, a comment or directive inside a call, ...) gives None, and the rules ask the tree
instead.
tests/test_texture_text.py checks that both readings agree wherever this one answers.
"""

from __future__ import annotations

import bisect

from hipport import regexes
from hipport.parse import IS_WORD_BYTE
from hipport.parse.braces import LINKAGE_HEAD, word_before
from hipport.rewrite.calls import parse_call, split_top_level
from hipport.tuples import NamedTuple


class FetchCall(NamedTuple):
    start: int
    end: int
    name: str
    template: bool  # `tex2D<float>(...)`
    plain: bool  # the callee is a bare identifier (no template arguments, no qualification)
    idents: tuple  # the first two arguments' identifiers (through parentheses); None: not one
    pointer_form: bool  # `tex2D(&v, obj, x, y)`: a pointer expression first, more after it


class Creation(NamedTuple):
    at: int  # the function's name
    start: int  # the call
    end: int
    name: str


class ObjectDecl(NamedTuple):
    start: int  # the declaration, its qualifiers included
    type_start: int
    type_name: str
    idents: tuple  # ((declared name, its end), ...)


class Sites(NamedTuple):
    calls: list
    creations: list
    decls: list
    own: frozenset = frozenset()  # fetch names the file defines itself (read() finds none)


class _Unsure(Exception):
    """A form this reading does not cover: the tree must answer."""


# What may stand before a call of a fetch function or a creation: an opening bracket, a
# separator or an operator that cannot end a declaration's type (`*` and `&` can).
_BEFORE_CALL = frozenset({b"(", b",", b";", b"{", b"}", b"=", b"+", b"-", b"/", b"%", b"?", b":",
                          b"!", b"|", b"^", b"[", b"return"})
_QUALIFIERS = frozenset({b"const", b"volatile", b"static", b"extern"})
# Words that may also stand before a function definition's return type (its declaration is
# no handle's: the tree's function_definition is none of _syntax.DECLARATIONS).
_FUNCTION_SPECIFIERS = frozenset({b"inline", b"__inline__", b"__forceinline__", b"__noinline__",
                                  b"__host__", b"__device__"})
# Words the tree does not read as an identifier, or that may be part of a declarator.
_NOT_NAMES = frozenset(
    b"this true false TRUE FALSE NULL nullptr const volatile restrict __restrict __restrict__ "
    b"static extern inline auto register mutable constexpr unsigned signed long short int char "
    b"float double void bool return sizeof new delete operator template typename class struct "
    b"union enum typedef alignas decltype noexcept".split())
_NAME = regexes.compile(rb"[A-Za-z_]\w*")
_OPERAND = regexes.compile(rb"[A-Za-z_]\w*(?:\s*(?:\.|->)\s*[A-Za-z_]\w*|\s*\[[^\[\]();{}]*\])*\Z")
_TEMPLATE_ARGS = regexes.compile(rb"<[\w\s:,*&<>]*?>")
_INITIALIZER_STOPS = regexes.compile(rb"[()\[\]{},;<\"'/#]")


def read(ctx, finder, fetches, creations, objects) -> Sites | None:
    """The file's texture sites, or None where some name is in a form not read here.
    `finder`: a words_finder of every name; the others: the names of each kind of site."""
    words = _words(ctx.lexed, finder, (fetches, creations, objects))
    try:
        return Sites([_fetch_call(ctx, s, e) for s, e, w in words if w in fetches],
                     [_creation(ctx, s, e) for s, e, w in words if w in creations],
                     [d for s, e, w in words if w in objects and (d := _declaration(ctx, s, e))])
    except _Unsure:
        return None


def _words(lexed, finder, name_sets) -> list[tuple[int, int, str]]:
    """(start, end, word) where a word of one of `name_sets` (found by `finder`) is a whole word
    in code (not in a comment, a literal or a directive line: the tree reads a macro body as
    text)."""
    data = lexed.data
    out = []
    for s, _ in finder.at(data):
        if s and data[s - 1] in IS_WORD_BYTE:
            continue
        e = _NAME.match(data, s).end()  # `tex1D` is found where `tex1Dfetch` is
        word = data[s:e].decode("ascii")
        if any(word in names for names in name_sets) and lexed.in_plain_code(s):
            out.append((s, e, word))
    return out


def _before(lexed, offset: int) -> tuple[int, bytes]:
    """The code token that ends before `offset` (comments and directive lines stepped over):
    its start and text; (0, b"") at the start of the file."""
    data = lexed.data
    end = lexed.code_before(offset)
    if end == 0:
        return 0, b""
    start, word = word_before(data, end)
    if word:
        return start, word
    pair = data[end - 2 : end]
    if pair in (b"::", b"->"):
        return end - 2, pair
    return end - 1, data[end - 1 : end]


def _after(lexed, offset: int) -> int:
    return lexed.braces.code_after(offset)


def _call(ctx, name_end: int):
    """The argument list after `name_end`, where nothing in it needs the tree's reading."""
    call = parse_call(ctx.data, name_end)
    if call is None or b"#" in ctx.data[call.open : call.close] \
            or _has_comment(ctx.lexed, call.open, call.close):
        raise _Unsure
    return call


def _has_comment(lexed, start: int, end: int) -> bool:
    i = bisect.bisect_right(lexed.comments, (start, len(lexed.data) + 1))  # the first after start
    return i < len(lexed.comments) and lexed.comments[i][0] < end


def _fetch_call(ctx, start: int, end: int) -> FetchCall:
    lexed, data = ctx.lexed, ctx.data
    before = _before(lexed, start)[1]
    if before not in _BEFORE_CALL:
        raise _Unsure  # a declaration or definition of the name, a member, a qualified name
    at = _after(lexed, end)
    template = data[at : at + 1] == b"<"
    if template:
        m = _TEMPLATE_ARGS.match(data, at)
        if m is None or m.group().count(b"<") != m.group().count(b">"):
            raise _Unsure
        at = m.end()
    call = _call(ctx, at)
    i = _after(lexed, call.close + 1)
    nxt = data[i : i + 2]
    if nxt[:1] == b"{" or (nxt and nxt[0] in IS_WORD_BYTE) \
            or (nxt[:1] == b":" and nxt != b"::" and before in (b";", b"{", b"}", b":")):
        raise _Unsure  # a definition: its body, trailing words, a constructor's initializers
    args = [data[s:e] for s, e in call.args]
    pointer = bool(args) and args[0][:1] in (b"&", b"*")
    if pointer and (args[0][1:2] in (b"&", b"*") or not _OPERAND.match(args[0][1:].lstrip())):
        raise _Unsure
    return FetchCall(start, call.close + 1, data[start:end].decode("ascii"), template, not template,
                     tuple(_identifier(a) for a in args[:2]), pointer and len(args) > 1)


def _identifier(arg: bytes) -> str | None:
    """The identifier an argument is (through parentheses around it), else None."""
    while arg[:1] == b"(":
        found = split_top_level(arg, 1)
        if found is None or found[1] != len(arg) - 1:
            break
        arg = arg[1:-1].strip(b" \t\r\n\\")
    if _NAME.fullmatch(arg) and arg not in _NOT_NAMES:
        return arg.decode("ascii")
    return None


def _creation(ctx, start: int, end: int) -> Creation:
    if _before(ctx.lexed, start)[1] not in _BEFORE_CALL:
        raise _Unsure
    call = _call(ctx, end)
    return Creation(start, start, call.close + 1, ctx.data[start:end].decode("ascii"))


def _declaration(ctx, start: int, end: int) -> ObjectDecl | None:
    """The declaration a handle type starts (None: the type is not declaring anything here,
    as in a cast, a `sizeof` or an unnamed parameter)."""
    lexed, data = ctx.lexed, ctx.data
    decl_start, qualifiers = start, set()
    while True:
        at, token = _before(lexed, decl_start)
        if token not in _QUALIFIERS and token not in _FUNCTION_SPECIFIERS:
            break
        decl_start = at
        qualifiers.add(token)
    if token == b"\"" and LINKAGE_HEAD.search(data, max(0, at - 32), at + 1):
        token = b";"  # `extern "C" cudaTextureObject_t t;`: the declaration starts after it
    if token == b"<":  # `std::vector<cudaSurfaceObject_t> v;`: a template argument's type
        at, ident = _declarator(lexed, _after(lexed, end))
        if ident is not None or data[at : at + 1] not in (b">", b","):
            raise _Unsure  # a named template parameter (`template <cudaTextureObject_t T>`), ...
        return None  # the declaration's type is the template's, no handle
    in_parens = token in (b"(", b",")
    if not in_parens and token not in (b";", b"{", b"}", b""):
        raise _Unsure
    if in_parens and not qualifiers <= {b"const"}:
        raise _Unsure
    name = data[start:end].decode("ascii")
    idents = []
    at = _after(lexed, end)
    while True:
        at, ident = _declarator(lexed, at)
        if ident is None:
            if idents or not in_parens or data[at : at + 1] not in (b")", b",", b">"):
                raise _Unsure
            # `(cudaTextureObject_t)x`, `sizeof(cudaTextureObject_t *)`, `f(T, int)`, `map<K, T>`
            return None
        idents.append(ident)
        c = data[at : at + 1]
        if c == b"(" and len(idents) == 1 and not in_parens:
            body = _after(lexed, _call(ctx, at).close + 1)
            if data[body : body + 1] != b"{":
                raise _Unsure  # a prototype, a constructor-style initializer, ...
            return None  # a function definition that returns a handle declares none
        if not qualifiers.isdisjoint(_FUNCTION_SPECIFIERS):
            raise _Unsure  # `__device__ cudaTextureObject_t t;`: not read here
        if in_parens:
            if c not in (b")", b","):
                raise _Unsure
            break
        if c in (b"=", b"{"):
            at = _after(lexed, _initializer_end(data, at))
            c = data[at : at + 1]
        if c == b";":
            break
        if c != b",":
            raise _Unsure
        at = _after(lexed, at + 1)
    return ObjectDecl(decl_start, start, name, tuple(idents))


def _declarator(lexed, at: int) -> tuple[int, tuple[str, int] | None]:
    """`*`s and `&`s, a name and array bounds from `at`: where they end and (name, its end)."""
    data = lexed.data
    while data[at : at + 1] in (b"*", b"&"):
        at = _after(lexed, at + 1)
    m = _NAME.match(data, at)
    if m is None:
        return at, None
    if m.group() in _NOT_NAMES:
        raise _Unsure
    ident = (m.group().decode("ascii"), m.end())
    at = _after(lexed, m.end())
    while data[at : at + 1] == b"[":
        found = split_top_level(data, at + 1, b"]")
        if found is None:
            raise _Unsure
        at = _after(lexed, found[1] + 1)
    return at, ident


def _initializer_end(data: bytes, at: int) -> int:
    """Where the initializer at `at` (`= value` or `{...}`) ends: its `,` or `;` at depth 0."""
    if data[at : at + 1] == b"{":
        found = split_top_level(data, at + 1, b"}")
        if found is None:
            raise _Unsure
        return found[1] + 1
    depth = 0
    for m in _INITIALIZER_STOPS.finditer(data, at + 1):
        c = m.group()
        if c in b"([{":
            depth += 1
        elif c in b")]}":
            depth -= 1
            if depth < 0:
                raise _Unsure
        elif c in b",;":
            if depth == 0:
                return m.start()
        else:
            raise _Unsure  # a template's commas, a literal, a comment: not read here
    raise _Unsure
