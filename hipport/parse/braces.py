"""The brace structure of a C/C++/CUDA buffer, from the lexer alone: which `{...}` holds an
offset, and what that brace pair certainly is (told from the code just before the `{`). A
pre-check that spares a parse: a name directly inside a function body, a statement block or an
initializer cannot declare a member or a scoped name.

Braces in comments, literals and directive lines (macro bodies) do not count. Where the braces
do not pair up (an `#if` with two openings of one function, a truncated file), nothing is
certain: `balanced` is False and callers fall back to the tree.
"""

from __future__ import annotations

import bisect
import weakref

from hipport import regexes
from hipport.parse import WORD_BYTES
from hipport.parse.lexer import Lexed, _scan

BLOCK, LINKAGE, SCOPE = "block", "linkage", "scope"

# Before `{`: a keyword that opens a statement block.
_BLOCK_KEYWORDS = frozenset({b"else", b"do", b"try"})
# Between a function's `)` and its body.
TRAILING_QUALIFIERS = frozenset({b"const", b"volatile", b"override", b"final", b"noexcept",
                                  b"mutable"})
# `extern "C"` right before a `{` or a declaration (searched in the bytes just before it).
LINKAGE_HEAD = regexes.compile(rb"\bextern[ \t\r\n]*\"[^\"\n]*\"\Z")
# `enum {`, `enum class E : int {`: the head back to the last `;`, `{` or `}` names enum.
_ENUM = regexes.compile(rb"\benum\b")
# `name(...) {` is a function body or a control statement, unless `name(...)` is an attribute
# or a type computation that may sit in a class head (`struct __align__(16) {`).
_NOT_A_CALLEE = frozenset({b"__align__", b"__attribute__", b"alignas", b"__declspec", b"decltype",
                           b"__launch_bounds__", b"__cluster_dims__", b"_Alignas"})


class Braces:
    """Built once per file (Lexed.braces)."""

    def __init__(self, lexed: Lexed):
        # A weak reference: the Lexed keeps this object (Lexed.braces), and a cycle would keep
        # the file's tokens alive until the garbage collector's pass.
        self._lexed = weakref.proxy(lexed)
        self._kinds: dict[int, str] = {}
        if _scan is not None:  # innermost() too, in C (asked tens of thousands of times a run)
            self.opens, self.closes, self.parents, self.balanced, self.innermost = _scan.brace_pairs(
                lexed.data, lexed.code_braces())
        else:
            self.opens, self.closes, self.parents, self.balanced = pair_braces(lexed.data, lexed.code_braces())

    def innermost(self, offset: int) -> int:
        """Index of the innermost brace pair holding `offset`; -1 at file scope."""
        i = bisect.bisect_right(self.opens, offset) - 1
        while i >= 0 and self.closes[i] < offset:
            i = self.parents[i]
        return i

    def scope_of(self, offset: int) -> int:
        """innermost(), past `extern "C" {` pairs (their inside is the scope around them)."""
        i = self.innermost(offset)
        while i >= 0 and self.kind(i) == LINKAGE:
            i = self.parents[i]
        return i

    def kind(self, i: int) -> str:
        """What brace pair `i` certainly is, told from the code before its `{`: BLOCK (a
        function or lambda body, a statement block, an initializer, an enumerator list: no
        member or scoped name is declared directly inside), LINKAGE (`extern "C" {`: its
        inside is file scope), else SCOPE (a namespace or class body, or not known)."""
        known = self._kinds.get(i)
        if known is not None:
            return known
        # A statement block is what the pair around it is: the chain of such pairs is judged
        # from the outermost down, not by recursion (generated code nests thousands deep).
        chain, j = [], i
        while j >= 0 and j not in self._kinds:
            verdict = self._judge(j)
            if verdict is not None:
                self._kinds[j] = verdict
                break
            chain.append(j)
            j = self.parents[j]
        for j in reversed(chain):
            parent = self.parents[j]
            self._kinds[j] = BLOCK if parent >= 0 and self._kinds[parent] == BLOCK else SCOPE
        return self._kinds[i]

    def _judge(self, i: int) -> str | None:
        """kind(i) as the code before the `{` tells it; None for a statement block, which is
        what the pair around it is."""
        lexed = self._lexed
        data = lexed.data
        end = lexed.code_before(self.opens[i])
        before = data[end - 1 : end]
        while before.isalnum() or before == b"_":  # `) const {`, `) override {`
            at, word = word_before(data, end)
            if word not in TRAILING_QUALIFIERS:
                break
            end = lexed.code_before(at)
            before = data[end - 1 : end]
        if before in (b"=", b"]"):
            return BLOCK  # an initializer, a lambda without parameters
        if before in (b";", b"}", b"{", b":"):  # a statement block or a case label's block
            return None
        if before == b"\"":
            return LINKAGE if LINKAGE_HEAD.search(data, max(0, end - 32), end) else SCOPE
        if before == b")":
            start = lexed.match_back(end - 1)
            if start is None:
                return SCOPE
            stop = lexed.code_before(start)
            if data[stop - 1 : stop] in (b"]", b">", b")"):
                return BLOCK  # a lambda, a template function, a function pointer's own head
            word = word_before(data, stop)[1]
            return BLOCK if word and word not in _NOT_A_CALLEE else SCOPE
        if word_before(data, end, 8)[1] in _BLOCK_KEYWORDS:
            return BLOCK
        head = tail_after(data, end, 160, b";{}")
        return BLOCK if b"enum" in head and _ENUM.search(head) else SCOPE

    def code_after(self, offset: int) -> int:
        """Start of the first code byte at or after `offset`, stepping over comments and
        directive lines: Lexed.code_before's other direction."""
        lexed = self._lexed
        while True:
            at = lexed.next_code(offset)
            i = lexed.directive_at(at)
            if i < 0 or at >= len(lexed.data):
                return at
            offset = lexed.directive_ends[i] + 1


def pair_braces(data: bytes, offsets: list[int]) -> tuple[list[int], list[int], list[int], bool]:
    """(opens, closes, parents, balanced) of the braces at `offsets`: pair i opens at opens[i],
    closes at closes[i] (the data's end if never) and sits in pair parents[i] (-1: none).
    Pairing stops at a `}` that closes nothing. _scan.brace_pairs is the same in C."""
    opens: list[int] = []
    closes: list[int] = []
    parents: list[int] = []
    stack: list[int] = []
    for at in offsets:
        if data[at] == 0x7B:  # {
            parents.append(stack[-1] if stack else -1)
            stack.append(len(opens))
            opens.append(at)
            closes.append(len(data))
        elif stack:
            closes[stack.pop()] = at
        else:
            return opens, closes, parents, False
    return opens, closes, parents, not stack


def python_word_before(data: bytes, end: int, span: int = 64) -> tuple[int, bytes]:
    """The word (`\\w+`) ending at `end` once spaces before `end` are skipped, and its start;
    b"" when none. Looks back `span` bytes at most."""
    start = max(0, end - span)
    seg = data[start:end].rstrip(b" \t\r\n")
    word = seg[len(seg.rstrip(WORD_BYTES)):]
    return start + len(seg) - len(word), word


word_before = _scan.word_before if _scan is not None else python_word_before  # C: 5,700 calls a port


def tail_after(data: bytes, end: int, span: int, stops: bytes) -> bytes:
    """The text before `end` (at most `span` bytes) after the last of the `stops` bytes."""
    seg = data[max(0, end - span) : end]
    return seg[max(seg.rfind(c) for c in stops) + 1 :]
