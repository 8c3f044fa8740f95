"""Which identifiers name the user's own entities: struct members, and functions or variables
declared inside a namespace or class. Those keep their names even when they spell a CUDA API
(`struct Hooks { void* (*cudaMalloc)(size_t); }`, `namespace mylib { void cudaFree(void*); }`)."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Collection, Iterable

from hipport import regexes
from hipport.parse import IS_WORD_BYTE, WORD_BYTES, tree
from hipport.parse.braces import BLOCK, SCOPE, word_before
from hipport.parse.lexer import Lexed, Substrings, Token
from hipport.patterns import word_start
from hipport.source import bom_length
from hipport.tuples import NamedTuple

_SCOPES = frozenset({"namespace_definition", "field_declaration_list", "class_specifier", "struct_specifier"})
# Nodes whose `declarator` field, when a plain identifier, declares that name.
_DECLARATORS = frozenset({"function_declarator", "init_declarator", "declaration"})
# A file that opens no namespace or class declares no member or scoped name.
_SCOPE_WORDS = (b"namespace", b"struct", b"class", b"union")
_FILE_WORDS = Substrings((*_SCOPE_WORDS, b"offsetof", b"template"))


def might_declare(lexed: Lexed, starts: list[int]) -> bool:
    """Whether user_declared() may hold one of the identifiers starting at `starts`; False
    spares the parse. Told from the lexer's brace structure: such a name sits in a brace pair
    that may be a namespace or class body and is not followed by what only follows a type;
    anywhere else it is a field name only after `template` (`x.template f<T>()`), as the
    member an `offsetof(...)` names, or, at file scope, in a constructor's initializer list
    (`: name(...)`, `, name(...)`). Never right after a `<`."""
    data = lexed.data
    if not starts:
        return False
    says = lexed.memo.get("declarations.words")
    if says is None:  # one pass in C for the words, once per file (the renamer and rules ask)
        says = lexed.memo["declarations.words"] = frozenset(_FILE_WORDS.words[i] for i in _FILE_WORDS.found(data))
    if says.isdisjoint(_SCOPE_WORDS):
        return False
    starts = [s for s in starts if not lexed.in_directive(s)]  # a macro body or #if: text to the parser
    if not starts:
        return False
    braces = lexed.braces
    if not braces.balanced:
        return True
    offsetofs = _offsetofs(lexed) if b"offsetof" in says else _NO_OFFSETOF
    if offsetofs is None:
        return True  # an offsetof not read here
    says_template = b"template" in says
    for s in starts:
        if offsetofs.opens and (where := offsetofs.holds(s)) is not None:
            if where:
                return True  # the member an offsetof names: a field name to the tree
            continue  # its type's names: a type's, never declared
        i = braces.scope_of(s)
        in_block = i >= 0 and braces.kind(i) == BLOCK
        if in_block and not says_template:
            continue  # most names: a use in a body
        end = lexed.previous_code(s)
        if says_template and data[max(0, end - 8) : end].endswith(b"template"):
            return True
        if in_block or data[end - 1 : end] == b"<":
            continue  # after `<`: a template argument or an operand (`std::vector<cudaFoo> v;`)
        if i < 0:
            # `: name(` or `, name{`, not `ns::name {` (`namespace c10::cuda {`, a call)
            if data[end - 1 : end] in (b":", b",") and data[end - 2 : end] != b"::" and _INITIALIZES.match(data, s):
                return True
        elif data[end - 1 : end] != b"=" and not _TYPE_USE.match(data, s) \
                and not _after_a_word_in_parentheses(lexed, s):
            return True
    return False


class _Offsetofs(NamedTuple):
    """The file's `offsetof(TYPE, MEMBER)` argument lists, by the offsets of their `(` and `)`,
    and the MEMBERs' starts. The tree reads MEMBER as a field name (user_declared holds it)
    and the names of TYPE as a type's."""
    opens: list[int]
    closes: list[int]
    members: frozenset[int]

    def holds(self, offset: int) -> bool | None:
        """True: `offset` is a MEMBER's start; False: it is elsewhere inside an argument list;
        None: outside every one."""
        i = bisect.bisect_right(self.opens, offset) - 1
        if i < 0 or offset >= self.closes[i]:
            return None
        return offset in self.members


_NO_OFFSETOF = _Offsetofs([], [], frozenset())
_OFFSETOF = regexes.compile(word_start(b"offsetof") + rb"\b")
# What TYPE may be written with to be read here: names, `::`, template arguments, `*`, `&`.
_OFFSETOF_TYPE_BYTES = WORD_BYTES + b" \t\r\n:<>,*&"
_MEMBER = regexes.compile(rb"[A-Za-z_]\w*")


def _offsetofs(lexed: Lexed) -> _Offsetofs | None:
    """The file's offsetofs (once per file); None where one is not plainly `offsetof(TYPE,
    MEMBER)` with MEMBER a name and no comment, literal, bracket or directive inside."""
    if "declarations.offsetofs" not in lexed.memo:
        lexed.memo["declarations.offsetofs"] = _read_offsetofs(lexed)
    return lexed.memo["declarations.offsetofs"]


def _read_offsetofs(lexed: Lexed) -> _Offsetofs | None:
    data = lexed.data
    opens, closes, members = [], [], set()
    for m in _OFFSETOF.finditer(data):
        if not lexed.in_plain_code(m.start()):
            continue  # a macro body is text to the tree; a comment is nothing
        if m.start() and (data[m.start() - 1] == 0x24 or data[m.start() - 1] >= 0x80):
            return None  # `$offsetof`, `éoffsetof`: a name the tree may read whole
        open_at = lexed.next_code(m.end())
        close = data.find(b")", open_at)
        if data[open_at : open_at + 1] != b"(" or close < 0:
            return None
        comma = data.rfind(b",", open_at, close)
        kind, member = data[open_at + 1 : comma], data[comma + 1 : close].strip(b" \t\r\n")
        if comma < 0 or not kind.strip() or kind.translate(None, _OFFSETOF_TYPE_BYTES) \
                or not _MEMBER.fullmatch(member):
            return None
        opens.append(open_at)
        closes.append(close)
        members.add(data.index(member, comma))
    return _Offsetofs(opens, closes, frozenset(members))


def own_among(lexed: Lexed, starts: list[int], declared: Callable[[], Collection[int]]) -> Collection[int]:
    """What of `starts` user_declared() holds, asking `declared()` (the file's user_declared
    set, from its tree) only where the text cannot tell: nothing where might_declare rules
    every one out, else members_declared's answer where it has one."""
    if not might_declare(lexed, starts):
        return ()
    told = members_declared(lexed, starts)
    return told if told is not None else declared()


def members_declared(lexed: Lexed, starts: list[int]) -> set[int] | None:
    """user_declared() of the identifiers at `starts`, told without a parse where the text
    is certain of each: might_declare() rules it out, or it is certainly the name a member
    declaration of a class body declares (certainly_a_member). None: one is neither, and
    the tree is asked."""
    out = set()
    for s in starts:
        if not might_declare(lexed, [s]):
            continue
        if not (certainly_a_member(lexed, s) or _certainly_an_offsetof_member(lexed, s)):
            return None
        out.add(s)
    return out


def _certainly_an_offsetof_member(lexed: Lexed, start: int) -> bool:
    """Whether the identifier at `start` is the MEMBER of an offsetof in a block (a function
    body, an initializer): a field name that no class or namespace scope comes between, which
    user_declared() always holds."""
    offsetofs = _offsetofs(lexed)
    if offsetofs is None or not offsetofs.holds(start):
        return False
    i = lexed.braces.scope_of(start)
    return i >= 0 and lexed.braces.kind(i) == BLOCK


# A class body's head (the code from the last `;`, `{` or `}` to its `{`): `struct` or `union`
# alone (`typedef struct {`), or `class`/`struct`/`union`, a name, and a base clause without
# brackets. The keyword must stand alone, as _keyword_stands_alone wants.
_CLASS_HEAD = regexes.compile(
    rb"(?<![\w$\x80-\xff])(?:(?:class|struct|union)[ \t\r\n]+(?P<name>[A-Za-z_]\w*)[ \t\r\n]*(?:final[ \t\r\n]*)?"
    rb"(?::[^{};()\[\]\"'#/]*)?|(?:struct|union)[ \t\r\n]*)\Z")
# Words of a statement that declares no member variable or function by the name after them
# (`friend class X;`, `typedef int X;`, `using X = ...;`) or that the tree reads otherwise.
_NOT_A_MEMBER = regexes.compile(rb"\b(?:friend|class|struct|union|enum|typename|using|typedef|template"
                                rb"|operator|static_assert|return|decltype|sizeof|alignas)\b")
_ACCESS_LABEL = regexes.compile(rb"(?:public|private|protected)[ \t\r\n]*:(?!:)")
# What a member's type is written with: names, `::`, `*`, `&`, template arguments, commas
# between declarators (no brackets, operators or literals).
_TYPE_BYTES = WORD_BYTES + b" \t\r\n*&:<>,"
# What may follow the name a member declaration declares: the end, the next declarator, an
# array's size, a default member initializer, a method's parameters.
_AFTER_A_MEMBER = frozenset(b";,[={(")


def certainly_a_member(lexed: Lexed, start: int) -> bool:
    """Whether the identifier at `start` is certainly the name that a member declaration
    directly in a class body declares (`cudaGraphicsResource *cudaResource;`, `int
    cudaDeviceID;`, `void cudaImport(...);`), which user_declared() counts: a type before it
    (or, for a constructor, the class's own name), one of _AFTER_A_MEMBER after it, nothing
    else in its statement. False: not told here."""
    braces, data = lexed.braces, lexed.data
    if not braces.balanced or lexed.in_directive(start):
        return False
    i = braces.innermost(start)
    if i < 0 or braces.kind(i) != SCOPE:
        return False
    open_at = braces.opens[i]
    head_end = lexed.code_before(open_at)
    head = data[lexed.statement_start(head_end) : head_end]
    m = _CLASS_HEAD.search(head)
    if m is None or word_before(head, m.start())[1] == b"enum" or b"#" in head:
        return False
    statement = data[lexed.statement_start(start) : start]
    label = _ACCESS_LABEL.match(statement.lstrip())
    if label is not None:
        statement = statement.lstrip()[label.end():]
    if statement.translate(None, _TYPE_BYTES) or b":" in statement.replace(b"::", b"") \
            or _NOT_A_MEMBER.search(statement):
        return False  # a bracket, operator, literal, comment or directive; a type's own name
    end = start
    while end < len(data) and data[end] in IS_WORD_BYTE:
        end += 1
    after = lexed.next_code(end)
    follow = data[after : after + 1]
    if not follow or follow[0] not in _AFTER_A_MEMBER or data[after : after + 2] == b"==":
        return False
    typed = statement.rstrip(b" \t\r\n")
    if typed:
        # a type (or an earlier declarator and its comma) right before the name, not a scope
        return typed[-1:] in (b"*", b"&", b">", b",") or (typed[-1] in IS_WORD_BYTE and not typed.endswith(b"::"))
    # No type: only a constructor of the class (its own name, then its parameters) is certain.
    return follow == b"(" and m.group("name") == data[start:end]


# What a file-scope declaration's head may hold before the name it declares, for
# certainly_declares: ASCII words of a type and its specifiers, `*` and `&` (no `::`,
# brackets, literals, comments or directives).
_HEAD_BYTES = b"".join(bytes([c]) for c in range(128) if chr(c).isalnum() or chr(c) in "_ \t\r\n*&")
# The words of such a head besides its one type name: no other word may stand there (a macro
# before the type, `CUDAAPI`, makes the tree's reading uncertain).
_SPECIFIERS = frozenset(b"""const volatile static extern inline register constexpr thread_local
    unsigned signed long short int char float double void bool
    __device__ __host__ __global__ __constant__ __shared__ __managed__ __forceinline__
    __noinline__""".split())
_HEAD_WORDS = regexes.compile(rb"\w+")
# What follows the declared name: the end, the next declarator, an initializer, an array's
# size, a function's parameters or a constructor's arguments.
_AFTER_A_DECLARATOR = frozenset(b";,=[(")
# Heads that declare no variable or function by the next name (`namespace n = m;`, `struct
# S;`) or that the tree reads otherwise, besides those _NOT_A_MEMBER names.
_NOT_A_DECLARATION = frozenset({b"namespace", b"asm", b"__asm__", b"concept", b"goto"})


def certainly_declares(lexed: Lexed, start: int) -> bool:
    """Whether the identifier at `start` is certainly a name that a declaration at file scope
    (or in `extern "C" {`) declares as the tree reads it, where api_tables.declared_names
    looks: `tcuInit *cuInit;`, `static uint umin(uint a, uint b) {`, `int cudaX = 1;`. The
    statement before it is specifiers and at most one type name, with `*`/`&`; after it comes
    one of _AFTER_A_DECLARATOR. False: not told here."""
    braces, data = lexed.braces, lexed.data
    if data.startswith(b"__", start) or not braces.balanced or lexed.in_directive(start):
        return False  # `__launch_bounds__(...)`, `__attribute__(...)`: the tree's specifiers
    if braces.scope_of(start) >= 0:
        return False
    head = data[_past_directives(lexed, lexed.statement_start(start)) : start]
    if not head.strip() or head.translate(None, _HEAD_BYTES):
        return False
    words = _HEAD_WORDS.findall(head)
    if sum(w not in _SPECIFIERS for w in words) > 1 or not _NOT_A_DECLARATION.isdisjoint(words) \
            or _NOT_A_MEMBER.search(head):
        return False
    after = lexed.next_code(_WORD.match(data, start).end())
    follow = data[after : after + 2]
    return bool(follow) and follow[0] in _AFTER_A_DECLARATOR and follow != b"=="


def _past_directives(lexed: Lexed, at: int) -> int:
    """Past the spaces, comments and whole directive lines at `at` (`#ifdef X` before a
    declaration): the tree reads the declaration after them alone."""
    while True:
        at = lexed.next_code(at)
        i = lexed.directive_at(at)
        if i < 0:
            return at
        at = lexed.directive_ends[i]


# `name(` or `name{` after `:` or `,` at file scope: a member in a constructor's initializer list.
_INITIALIZES = regexes.compile(rb"\w+\b[ \t\r\n]*[({]")
# A name followed by another word, `*`, `&`, `<` or `::` is a type or a qualifier, never the
# name a declaration declares.
_TYPE_USE = regexes.compile(rb"\w+\b[ \t\r\n]*(?:[A-Za-z_*&<]|::)")


def user_declared(data: bytes, tokens: Iterable[Token], parsed=None) -> set[int]:
    """Start offsets of the `tokens` (the lexer's candidate identifiers) that declare the file's
    own members and scoped names: a field name anywhere, or the declarator name of a function
    or variable whose nearest enclosing scope is a namespace or class (not a block or a
    parameter list). `parsed`: the file's tree when the caller has one already.

    The tree is asked only at the tokens: a query over the whole tree would visit every node
    of the file for the few names that matter."""
    root = (parsed if parsed is not None else tree.parse(data)).root_node
    out = set()
    for tok in tokens:
        node = root.descendant_for_byte_range(tok.start, tok.end)
        if node is None or node.start_byte != tok.start:
            continue
        if node.type == "field_identifier":  # a member, declared or used
            scope = _scope(node)
            if scope is None or _keyword_stands_alone(data, scope):
                out.add(tok.start)
        elif node.type == "identifier" and _declares(node):
            scope = _scope(node)
            if scope is not None and _keyword_stands_alone(data, scope):
                out.add(tok.start)
    return out


def _declares(node) -> bool:
    parent = node.parent
    return parent is not None and parent.type in _DECLARATORS and any(
        d.id == node.id for d in parent.children_by_field_name("declarator"))


def _scope(node):
    """The namespace or class whose member `node` names: its nearest scope, unless a block or
    a parameter list comes first (a local variable or a parameter: an ordinary use)."""
    parent = node.parent
    while parent is not None and parent.type not in _SCOPES:
        if parent.type in ("compound_statement", "parameter_list"):
            return None
        parent = parent.parent
    return parent


def _keyword_stands_alone(data: bytes, scope) -> bool:
    """Whether the scope's `struct`/`namespace`/... is a word of its own. Glued to a number or
    a name before it (`0struct`), it is one token to a C++ compiler, and tree-sitter reads it
    as a keyword or not depending on what came much earlier: a port's inserted include line
    could change the verdict, and a second port would rename what the first kept."""
    if scope.type == "field_declaration_list":
        scope = scope.parent
    start = scope.start_byte if scope is not None else 0
    if start in (0, bom_length(data)):
        return True
    before = data[start - 1]
    return before not in IS_WORD_BYTE and before < 0x80  # a UTF-8 letter glues as a name's would


# What may stand before the name a declaration declares is a type, a `*`/`&`, `,` (`int a, b`),
# `>` (`vector<int> v`) or `}` (`struct {...} s`): never an operator, an opening bracket, or a
# keyword that starts an expression.
_NOT_BEFORE_A_DECLARATOR = frozenset(b"(=!+-/%|^?:;{[.<~")
# Words after which an expression starts: a name right after one is used, not declared (and
# may be called); right after any other word it is declared (`void f(...)`, `T x(1)`).
EXPRESSION_KEYWORDS = frozenset({b"return", b"case", b"sizeof", b"new", b"delete", b"throw",
                                 b"else", b"do", b"co_return", b"co_yield", b"co_await",
                                 b"and", b"or", b"not", b"xor", b"bitand", b"bitor", b"compl",
                                 b"and_eq", b"or_eq", b"xor_eq", b"not_eq"})


def may_be_declarator(lexed: Lexed, start: int) -> bool:
    """Whether the identifier at `start` may be the name that a declaration at any scope
    declares (False: certainly a use). A name on a directive line is text to the parser."""
    if lexed.in_directive(start):
        return False
    data = lexed.data
    end = lexed.code_before(start)
    before = data[end - 1 : end]
    if before and before[0] in _NOT_BEFORE_A_DECLARATOR:
        return False
    if _OPERAND.match(data, start) or (before == b"," and _LAST_ARGUMENT.match(data, start)):
        return False
    if before == b"," and _followed_by(lexed, start) in (b",", b"word") and _in_arguments(lexed, end - 1):
        return False  # an argument, or a parameter's type (`void f(char* p, cudaFoo handle)`)
    if before in (b";", b"{", b"}", b"") and _followed_by(lexed, start) == b"word":
        return False  # a statement's first word before another name: its type (`cudaFoo x;`)
    return word_before(data, end, 16)[1] not in EXPRESSION_KEYWORDS


# Between commas inside parentheses, or after a comma there and before another name, a name
# is an argument or a parameter's type, never a declarator, unless the parentheses hold a
# declaration list: a `for` or an `if`/`switch` with an initializer (`for (int a = 0, name,
# b = 1; ...)`).
_WORD = regexes.compile(rb"\w+")
_PAREN_OR_STOP = regexes.compile(rb"[(){};]")
_DECLARING_HEADS = frozenset({b"for", b"if", b"switch", b"while"})


def _followed_by(lexed: Lexed, start: int) -> bytes:
    """The code byte after the name at `start`; b"word" where another name follows."""
    at = lexed.next_code(_WORD.match(lexed.data, start).end())
    follow = lexed.data[at : at + 1]
    return b"word" if follow and follow[0] in _WORD_START_BYTES else follow


def _in_arguments(lexed: Lexed, offset: int) -> bool:
    """Whether `offset` is inside parentheses that open no statement with a declaration list."""
    paren = _open_paren(lexed, offset)
    return paren >= 0 and word_before(lexed.data, lexed.previous_code(paren), 16)[1] not in _DECLARING_HEADS


def _open_paren(lexed: Lexed, offset: int) -> int:
    """The `(` in code, at most 4 KiB back, that `offset` is inside of; -1 where there is none,
    or a `;`, `{` or `}` comes first (a statement, a body, a lambda or a braced list between:
    not read here)."""
    data, depth = lexed.data, 0
    for m in reversed(list(_PAREN_OR_STOP.finditer(data, max(0, offset - 4096), offset))):
        at = m.start()
        if not lexed.in_plain_code(at):
            continue
        c = data[at]
        if c == 0x29:  # )
            depth += 1
        elif c != 0x28:  # ; { }
            return -1
        elif depth:
            depth -= 1
        else:
            return at
    return -1


def _after_a_word_in_parentheses(lexed: Lexed, offset: int) -> bool:
    """Whether the name at `offset` is inside parentheses that hold a word before it: a
    parameter after its type (`void f(int cudaDev);` in a class) or an argument, never the
    member a class or namespace declares (`void (*name)(int);` has no word before it)."""
    paren = _open_paren(lexed, offset)
    if paren < 0:
        return False
    first = lexed.next_code(paren + 1)
    return first < offset and lexed.data[first] in _WORD_START_BYTES


_WORD_START_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")


# After a declared name comes `;`, `,`, `=`, `(`, `[`, `{`, `)` (`(*name)`), an attribute or a
# macro: never `*`, `&`, `<` or `::` (the name is a type, a qualifier or an operand), nor `)`
# right after a `,` (`f(a, name)`: no declarator list ends so).
_OPERAND = regexes.compile(rb"\w+\b[ \t\r\n]*(?:[*&<]|::)")
_LAST_ARGUMENT = regexes.compile(rb"\w+\b[ \t\r\n]*\)")

