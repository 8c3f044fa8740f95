"""The regions pass: one scan splits a C/C++/CUDA buffer into what may be rewritten. The scan
is C (parse/_scan.c) where that was built, else one compiled regex with the same tokens.

It reports comments, string/char literals, preprocessor directives (with `#include` paths and
the `#if` branch each directive sits in) and the *candidate* identifiers: the words whose
spelling could be a CUDA name. Everything else (ordinary words, numbers, punctuation, spaces)
is consumed inside the scan, so Python only sees the few tokens that matter.

Why a lexer and not tree-sitter for this: comment/string/identifier boundaries are lexical
facts, and the lexer gets them right on any bytes (macro bodies, unbalanced braces, an
unterminated comment, Latin-1 text), where a parser's error recovery may not. tree-sitter
(`hipport.parse.tree`) answers the syntactic questions; a test checks both agree on fixtures.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from functools import cached_property

from hipport import regexes
from hipport.tuples import NamedTuple

# What hipport calls in the C scanner: one built from an older _scan.c (an editable install
# not built again since) lacks some, and is then not used at all, as if none were built.
SCANNER_FUNCTIONS = ("scan", "line_starts", "directive_records", "words_table", "words_found",
                     "words_at", "define_records", "lane_math", "cmake_parse", "Regions", "brace_pairs",
                     "word_before", "starts_of", "whole_word_starts", "word_index")
# Lexed's questions about where an offset sits, which _scan.Regions answers in C: bound on each
# Lexed the scanner makes, in place of the Python methods (the reference).
REGION_METHODS = ("previous_code", "next_code", "directive_at", "in_directive", "in_comment_or_string",
                  "in_plain_code", "code_before", "match_back")


def complete_scanner(module):
    """`module` if it has every one of SCANNER_FUNCTIONS, else None."""
    return module if all(hasattr(module, name) for name in SCANNER_FUNCTIONS) else None


try:
    from hipport.parse import _scan  # the C scanner, built by setup.py where a compiler exists
except ImportError:  # pragma: no cover - a pure-Python install
    _scan = None
_built = _scan
_scan = complete_scanner(_scan)
_STALE = _built is not None and _scan is None  # for scanner_state(): why it is not used


def scanner_state() -> str:
    """Whether the C scanner does the token work, for `hipport --version`: pip builds it only
    where a C compiler and the Python headers are installed, says little when it cannot, and
    the Python fallback takes about three times as long to port a tree."""
    if _scan is not None:
        return "C scanner: yes"
    if _STALE:
        return "C scanner: no, built from an older _scan.c; install hipport again to rebuild it"
    return ("C scanner: no, not built at install, which needs a C compiler and the Python "
            "headers; scanning in Python is slower")

# Device-code markers: nvcc includes cuda_runtime.h implicitly where these appear; hipcc does not.
DEVICE_MARKERS = frozenset(
    b"__global__ __device__ __shared__ __constant__ __managed__ __launch_bounds__ "
    b"__syncthreads threadIdx blockIdx blockDim gridDim warpSize".split()
)


_DEVICE_WORDS = frozenset(w.decode() for w in DEVICE_MARKERS)
_WORD_CHARS = regexes.compile(rb"\w+")  # ASCII in a bytes pattern
_BRACE = regexes.compile(rb"[{}]")
_SPACES = regexes.compile(rb"[ \t\r\n\\]*")  # what previous_code and next_code step over, with comments
_STATEMENT_END = regexes.compile(rb"[;{}]")
_NUMBER = rb"\.?[0-9](?:[0-9A-Za-z_.]|'(?=[0-9A-Za-z])|[eEpP][+-])*"
_STRING_PREFIX = rb"(?:u8|[uUL])?"


class Token(NamedTuple):  # a tuple: the lexer makes hundreds of thousands
    start: int
    end: int
    text: bytes


class Directive(NamedTuple):  # a tuple: a header may hold thousands (glew.h: 6,700)
    start: int  # offset of '#' line start (after any leading newline)
    end: int  # end of the directive's first physical line, without the newline
    name: bytes  # b"include", b"define", b"if", ... (b"" for a null directive)
    branch: tuple  # the #if branch path it sits in: () at top level
    path_start: int = -1  # for #include: the span of <...> or "..." including delimiters
    path_end: int = -1

    @property
    def is_include(self) -> bool:
        return self.path_start >= 0

    def path(self, data: bytes) -> bytes:
        return data[self.path_start + 1 : self.path_end - 1]


class MacroDef(NamedTuple):  # a tuple: a header may define thousands (glew.h: 6,300)
    name: bytes
    params: tuple[bytes, ...] | None  # None for an object-like macro
    start: int  # the directive's start
    body_start: int
    body_end: int  # end of the logical line (continuations included)
    name_start: int


_DEFINE = regexes.compile(rb"[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(\([^)]*\))?")


class Lexed:
    def __init__(self, data: bytes, identifiers: list[Token] | None = None,
                 comments: list[tuple[int, int]] | None = None, strings: list[tuple[int, int]] | None = None,
                 directives: list[Directive] | None = None, contexts: dict[int, str] | None = None,
                 brace_offsets: list[int] | None = None):
        self.data = data
        self.identifiers = [] if identifiers is None else identifiers  # candidate words in code
        self.comments = [] if comments is None else comments
        self.strings = [] if strings is None else strings
        self.directives = [] if directives is None else directives
        self.contexts = {} if contexts is None else contexts  # names._context
        self.brace_offsets = brace_offsets  # code_braces()
        self.memo: dict[str, object] = {}  # what other modules work out from the file once, each under its own key
        self._launches: list[int] | None = None  # find_launches()
        self._comment_starts: list[int] = []
        self._skip_starts: list[int] = []
        self._skip_ends: list[int] = []

    @cached_property
    def directive_ends(self) -> list[int]:
        """Where each directive ends, through backslash continuations (most have none)."""
        data = self.data
        return [d.end if data[d.end - 1 : d.end] != b"\\" else logical_end(data, d.start)
                for d in self.directives]

    @cached_property
    def _directive_starts(self) -> list[int]:
        return [d.start for d in self.directives]

    def directive_at(self, offset: int) -> int:
        """Index of the directive whose line (continuations included) holds `offset`; -1 if
        none (a macro body, an #if condition and the like are directive lines)."""
        i = bisect.bisect_right(self._directive_starts, offset) - 1
        return i if i >= 0 and offset <= self.directive_ends[i] else -1

    def in_directive(self, offset: int) -> bool:
        return self.directive_at(offset) >= 0

    def code_braces(self) -> list[int]:
        """Offsets of the `{` and `}` of code: not in a comment, a literal or a directive line
        (the C scanner collects them as it goes; else they are found here, once)."""
        if self.brace_offsets is None:
            plain = self.in_plain_code
            self.brace_offsets = [m.start() for m in _BRACE.finditer(self.data) if plain(m.start())]
        return self.brace_offsets

    @cached_property
    def defines(self) -> list[MacroDef]:
        """Each `#define`: its name, parameters and body span (read once: the renamer and
        several rules ask); by the C scanner where it was built (a header may define
        thousands), else by python_defines."""
        if _scan is not None:
            return _scan.define_records(self.data, self.directives, MacroDef)
        return self.python_defines()

    def python_defines(self) -> list[MacroDef]:
        """`defines` by _DEFINE: the reference the C scanner is tested against."""
        out = []
        data = self.data
        match, new = _DEFINE.match, tuple.__new__  # a header may define thousands: no per-define call
        for d in self.directives:
            if d.name != b"define":
                continue
            m = match(data, d.start)
            if not m:
                continue
            end = d.end  # the first line's end, before its `\r`: the body ends at the `\n`
            if data[end - 1 : end] == b"\\":
                end = logical_end(data, d.start, at_newline=True)
            elif data[end : end + 1] == b"\r":
                end += 1
            params = m.group(2)
            if params is not None:
                params = tuple(p.strip() for p in params[1:-1].split(b",") if p.strip())
            out.append(new(MacroDef, (m.group(1), params, d.start, m.end(), end, m.start(1))))
        return out

    @cached_property
    def _define_name_lines(self) -> bytes:
        """The names of `defines`, in order, a line each: what defines_named searches."""
        return b"\n".join([m.name for m in self.defines])

    @cached_property
    def _lowered_define_name_lines(self) -> bytes:
        return self._define_name_lines.lower()

    def defines_named(self, pattern: re.Pattern[bytes], lowered: bool = False) -> list[MacroDef]:
        """The `defines` in whose name (lower-cased with `lowered`) `pattern` finds a match, in
        order: searched in C over all the names at once, a line each, not tested a #define at
        a time (glew.h defines 6,300 names, and a rule wants the few that mention a mask or a
        warp). Each match must hold a byte of the name and no newline. A pattern that opens
        with a literal is searched fastest: `lowered` rather than re.I, which searches without
        that shortcut (and names are ASCII)."""
        text = self._lowered_define_name_lines if lowered else self._define_name_lines
        defines = self.defines
        out: list[MacroDef] = []
        line = pos = 0  # the name at `pos` is defines[line]
        search, count, find = pattern.search, text.count, text.find
        while (m := search(text, pos)) is not None:
            line += count(b"\n", pos, m.start())
            out.append(defines[line])
            pos = find(b"\n", m.start()) + 1  # on to the next name (0: that was the last)
            if not pos:
                break
            line += 1
        return out

    @cached_property
    def defined_names(self) -> frozenset[bytes]:
        """The names the file #defines (anywhere, in any #if branch): from `defines` where that
        was read, else from the names alone (what every ported file needs, at half the cost)."""
        if "defines" in self.__dict__:
            return frozenset(m.name for m in self.defines)
        if _scan is not None:
            return frozenset(_scan.define_records(self.data, self.directives, MacroDef, True))
        match, data = _DEFINE.match, self.data
        return frozenset(m.group(1) for d in self.directives
                         if d.name == b"define" and (m := match(data, d.start)) is not None)

    @cached_property
    def braces(self):
        """The brace structure (parse.braces.Braces), built on first use."""
        from hipport.parse.braces import Braces  # noqa: PLC0415 - that module builds on this one

        return Braces(self)

    @cached_property
    def words(self) -> list[str]:
        """The identifiers' text as str (ASCII: the lexer's words are), one per identifier."""
        return [t.text.decode("ascii") for t in self.identifiers]

    def _comment_start_list(self) -> list[int]:
        """The comments' starts (made again if the list of comments has grown since)."""
        if len(self._comment_starts) != len(self.comments):
            self._comment_starts = [s for s, _ in self.comments]
        return self._comment_starts

    def previous_code(self, offset: int) -> int:
        """End of the last code byte before `offset`, stepping over spaces and comments."""
        data, ws, starts = self.data, b" \t\r\n\\", self._comment_start_list()
        while True:
            while offset > 0 and data[offset - 1] in ws:
                offset -= 1
            i = bisect.bisect_right(starts, offset - 1) - 1
            if offset == 0 or i < 0 or self.comments[i][1] < offset:
                return offset
            offset = self.comments[i][0]

    def next_code(self, offset: int) -> int:
        """Start of the first code byte at or after `offset`, stepping over spaces and comments."""
        starts, spaces = self._comment_start_list(), _SPACES.match
        while True:
            offset = spaces(self.data, offset).end()
            i = bisect.bisect_left(starts, offset)
            if i == len(starts) or starts[i] != offset:
                return offset
            offset = self.comments[i][1]

    def code_before(self, offset: int) -> int:
        """End of the last code byte before `offset`, stepping over comments and directive
        lines (`#pragma omp parallel` before a block)."""
        end = self.previous_code(offset)
        while end > 0 and (i := self.directive_at(end - 1)) >= 0:
            end = self.previous_code(self.directives[i].start)
        return end

    def match_back(self, close: int, opener: bytes = b"(", closer: bytes = b")") -> int | None:
        """Offset of the `opener` matching the `closer` at `close`, looking back at most 4 KiB
        and skipping brackets in comments and literals; None if unmatched there."""
        data, depth, at = self.data, 0, close + 1
        floor = max(0, close - 4096)
        while True:
            at = max(data.rfind(opener, floor, at), data.rfind(closer, floor, at))
            if at < 0:
                return None
            if self.in_comment_or_string(at):
                continue
            depth += 1 if data[at : at + 1] == closer else -1
            if depth == 0:
                return at

    def find_in_code(self, byte: bytes, start: int) -> int:
        """The first `byte` at or after `start` that is not in a comment or a literal; -1."""
        data = self.data
        at = data.find(byte, start)
        while at >= 0 and self.in_comment_or_string(at):
            at = data.find(byte, at + 1)
        return at

    def statement_start(self, offset: int) -> int:
        """Just past the last `;`, `{` or `}` in code before `offset`, and past the spaces and
        comments after it: where the declaration or statement holding `offset` starts, at the
        latest (a comment before a definition is no part of its head)."""
        data, at = self.data, offset
        while True:
            at = max(data.rfind(b";", 0, at), data.rfind(b"{", 0, at), data.rfind(b"}", 0, at))
            if at < 0 or self.in_plain_code(at):
                return min(self.next_code(at + 1), offset)

    def statement_end(self, offset: int) -> int:
        """The first `;`, `{` or `}` in code from `offset` (the data's length if none):
        statement_start's other end, at the earliest."""
        plain = self.in_plain_code
        return next((m.start() for m in _STATEMENT_END.finditer(self.data, offset) if plain(m.start())),
                    len(self.data))

    def in_plain_code(self, offset: int) -> bool:
        """Whether `offset` is code outside directive lines: no comment, literal, macro body
        or `#if` condition (text to the parser too, not code it reads)."""
        return not (self.in_comment_or_string(offset) or self.in_directive(offset))

    def in_comment_or_string(self, offset: int) -> bool:
        if not self._skip_starts:
            spans = sorted(self.comments + self.strings)
            self._skip_starts = [s for s, _ in spans]
            self._skip_ends = [e for _, e in spans]
        i = bisect.bisect_right(self._skip_starts, offset) - 1
        return i >= 0 and offset < self._skip_ends[i]

    @cached_property
    def includes(self) -> list[Directive]:
        return [d for d in self.directives if d.path_start >= 0]  # is_include, without a call each

    def has_device_code(self) -> bool:
        return not _DEVICE_WORDS.isdisjoint(self.words) or self.find_launches() != []

    def find_launches(self) -> list[int]:
        """Offsets of `<<<` in code: found once (the renamer, the kernel scan and two rules ask),
        so the list is shared and not to be changed."""
        if self._launches is None:
            out, find, i = [], self.data.find, self.data.find(b"<<<")
            while i >= 0:
                if not self.in_comment_or_string(i):
                    out.append(i)
                i = find(b"<<<", i + 3)
            self._launches = out
        return self._launches


def logical_end(data: bytes, start: int, at_newline: bool = False) -> int:
    """End of the logical line that starts at `start` (backslash-newlines continue it): where
    its text ends (before a `\r`), or with `at_newline` the offset of its `\n`; the data's
    length when the data ends first."""
    pos = start
    while True:
        nl = data.find(b"\n", pos)
        if nl < 0:
            return len(data)
        body_end = nl - 1 if nl > 0 and data[nl - 1 : nl] == b"\r" else nl
        if body_end > 0 and data[body_end - 1 : body_end] == b"\\":
            pos = nl + 1
            continue
        return nl if at_newline else body_end


def trie_pattern(words: Iterable[bytes]) -> bytes:
    """One regex alternation for a set of literal prefixes, factored as a trie so matching costs
    the length of a word, not the number of prefixes. A prefix that is also the start of a
    longer one needs no branch of its own (any word starting with it already matches)."""
    trie: dict = {}
    for w in sorted(set(words), key=len):
        node = trie
        for c in w:
            if node.get(b"") is True:
                break  # a shorter prefix already covers this one
            node = node.setdefault(c, {})
        else:
            node.clear()
            node[b""] = True
    return _trie_regex(trie)


def _trie_regex(node: dict) -> bytes:
    # A module-level function: a nested one calling itself is a reference cycle.
    if node.get(b""):
        return b""
    branches = [re.escape(bytes([c])) + _trie_regex(child) for c, child in sorted(node.items())]
    return branches[0] if len(branches) == 1 else b"(?:" + b"|".join(branches) + b")"


class Substrings:
    """Which of some byte strings occur anywhere in a buffer (comments included): one pass in C
    (parse/_scan.c) where that was built, else an `in` test each (and one regex for where)."""

    def __init__(self, words: Iterable[bytes]):
        self.words = tuple(words)
        self._table = _scan.words_table(self.words) if _scan is not None and self.words else None
        self._starts: re.Pattern[bytes] | None = None  # at()'s without the C scanner

    def found(self, data: bytes) -> list[int]:
        """The indices, in `words`, of those that occur in `data`."""
        if self._table is not None:
            return _scan.words_found(data, self._table)
        return [i for i, w in enumerate(self.words) if w in data]

    def any(self, data: bytes) -> bool:
        """Whether one of the words occurs in `data` (the pass stops at the first)."""
        if self._table is not None:
            return bool(_scan.words_found(data, self._table, True))
        return any(w in data for w in self.words)

    def at(self, data: bytes) -> list[tuple[int, int]]:
        """(start, end) of every place where one of the words starts, overlapping places
        included, in order; the end is that of the first word (in `words`) found there."""
        if self._table is not None:
            return _scan.words_at(data, self._table)
        if not self.words:
            return []
        if self._starts is None:  # a lookahead matches at every start, overlaps included;
            # the alternation tries the words in order, so group 1 is the first word found there
            self._starts = re.compile(b"(?=(" + b"|".join(re.escape(w) for w in self.words) + b"))")
        return [(m.start(), m.end(1)) for m in self._starts.finditer(data)]


class Lexer:
    """Built once per set of candidate prefixes (they come from the mapping tables)."""

    def __init__(self, prefixes: Iterable[bytes]):
        words = self._words = set(prefixes) | DEVICE_MARKERS
        # The C scanner (parse/_scan.c) takes prefixes made of word characters, as a table of
        # their trie; where it is not built, or they are not, the regex does the work. A
        # prefix that starts with another adds nothing, so only the shortest are kept.
        self._prefixes = None
        if _scan is not None and all(_WORD_CHARS.fullmatch(w) for w in words):
            kept: list[bytes] = []
            for w in sorted(words):  # a word sorts right after any of its own prefixes
                if not (kept and w.startswith(kept[-1])):
                    kept.append(w)
            self._prefixes = tuple(kept)
            self._prefix_table = _scan.words_table(self._prefixes)

    @cached_property
    def _pattern(self) -> re.Pattern[bytes]:
        """The regex lexer, written and compiled on first use (tens of milliseconds): the C
        scanner needs neither, nor does a run served from the cache."""
        alt = trie_pattern(self._words)
        # Consumed silently: spaces and punctuation, newlines not opening a directive, numbers,
        # and words that neither start with a candidate prefix nor open a prefixed literal.
        # At the start of the data, a directive line (after a BOM, and maybe indented) is
        # not skipped: the skip takes just the BOM and leaves `[ \t]*#` to `pp`.
        skip = (
            rb"(?:(?=\A(?:\xef\xbb\xbf)?[ \t]*\#)(?:\xef\xbb\xbf)?"
            rb"|(?:[^/\"'A-Za-z_0-9\n.#]+|\n(?![ \t]*\#)|\.(?![0-9])|/(?![/*])|" + _NUMBER
            + rb"|(?!(?:" + alt + rb")|" + _STRING_PREFIX + rb"R?['\"])[A-Za-z_]\w*)*+)"
        )
        token = (
            rb"(?P<lc>//(?:\\\r?\n|[^\n])*)"
            rb"|(?P<bc>/\*.*?(?:\*/|\Z))"
            rb"|(?P<rs>" + _STRING_PREFIX + rb"R\"(?P<rsd>[^()\\\s]{0,16})\(.*?\)(?P=rsd)\")"
            rb"|(?P<st>" + _STRING_PREFIX + rb"\"(?:\\\r?\n|\\.|[^\"\\\n])*\"?)"
            rb"|(?P<ch>" + _STRING_PREFIX + rb"'(?:\\\r?\n|\\.|[^'\\\n])*'?)"
            rb"|(?P<pp>(?:\A|(?<=\A\xef\xbb\xbf)|\n)[ \t]*\#[ \t]*(?P<dir>[A-Za-z_]\w*)?"
            rb"(?P<inc>[ \t]*(?:<[^>\n]*>|\"[^\"\n]*\"))?)"
            rb"|(?P<id>(?:" + alt + rb")\w*)"
            rb"|(?P<other>[\s\S])"
            # The skip may run to the end of the data: this ends the scan there, where a failed
            # match would make finditer retry from inside the words just skipped.
            rb"|(?P<end>\Z)"
        )
        return regexes.compile(skip + rb"(?:" + token + rb")", re.S)

    def lex(self, data: bytes) -> Lexed:
        if self._prefixes is None:
            ids, comments, strings, raw = self.regex_scan(data)
            return Lexed(data, ids, comments, strings, _directives(data, raw))
        ids, comments, strings, raw, braces, words, contexts = _scan.scan(data, self._prefix_table, Token)
        directives = _scan.directive_records(data, raw, Directive)  # _directives, in C
        out = Lexed(data, ids, comments, strings, directives, contexts, brace_offsets=braces)
        known = out.__dict__
        known["words"] = words  # the cached_property's value, made by the scanner
        _scan.Regions(data, comments, strings, directives).bind(known)  # REGION_METHODS, in C
        return out

    def regex_scan(self, data: bytes) -> tuple[list, list, list, list]:
        """The token stream by the compiled regex: what `_scan.scan` returns (see there),
        and the reference it is tested against."""
        ids: list[Token] = []
        comments: list[tuple[int, int]] = []
        strings: list[tuple[int, int]] = []
        raw: list[tuple[int, int, int, int, int]] = []
        # Group numbers, not names: the loop runs once per token of every file.
        groups = self._pattern.groupindex
        ident, end, pp = groups["id"], groups["end"], groups["pp"]
        comment_groups = (groups["lc"], groups["bc"])
        string_groups = (groups["st"], groups["ch"], groups["rs"])
        new_token = tuple.__new__
        for m in self._pattern.finditer(data):
            kind = m.lastindex
            if kind == ident:
                s, e = m.span(kind)
                ids.append(new_token(Token, (s, e, data[s:e])))
            elif kind == end:
                break
            elif kind in comment_groups:
                comments.append(m.span(kind))
            elif kind in string_groups:
                strings.append(m.span(kind))
            elif kind == pp:
                inc = m.group("inc")
                if m.group("dir") is not None:
                    ns, ne = m.span("dir")
                else:  # no name: an empty one where the scanner puts it, after `#` and spaces
                    ns = ne = m.start("inc") if inc is not None else m.end(kind)
                ps = pe = -1
                if inc is not None and data[ns:ne] in _INCLUDES:
                    pe = m.end("inc")
                    ps = pe - len(inc.lstrip(b" \t"))
                elif inc is not None:
                    strings.append(m.span("inc"))
                raw.append((m.start(kind), ns, ne, ps, pe))
        return ids, comments, strings, raw


_INCLUDES = (b"include", b"include_next", b"import")


def _directives(data: bytes, raw: list[tuple[int, int, int, int, int]]) -> list[Directive]:
    """Directive records from the scanner's (anchor, name start, name end, path start, path
    end) tuples, each with the `#if` branch it sits in."""
    out: list[Directive] = []
    stack: list[list[int]] = []  # open #if blocks: [block id, branch number]
    next_block = 0
    branch: tuple = ()  # the stack as a tuple, made again only when it changes
    for s, ns, ne, ps, pe in raw:
        if data[s : s + 1] == b"\n":
            s += 1
        name = data[ns:ne]
        if name in (b"if", b"ifdef", b"ifndef"):
            stack.append([next_block, 0])
            next_block += 1
            branch = tuple(map(tuple, stack))
        elif name in (b"elif", b"else", b"elifdef", b"elifndef") and stack:
            stack[-1][1] += 1
            branch = tuple(map(tuple, stack))
        elif name == b"endif" and stack:
            stack.pop()
            out.append(tuple.__new__(Directive, (s, _line_end(data, s), name, branch, ps, pe)))
            branch = tuple(map(tuple, stack))
            continue
        out.append(tuple.__new__(Directive, (s, _line_end(data, s), name, branch, ps, pe)))
    return out


def _line_end(data: bytes, start: int) -> int:
    """Where the physical line from `start` ends, before its `\r\n` or `\n`."""
    end = data.find(b"\n", start)
    end = len(data) if end < 0 else end
    return end - 1 if data[end - 1 : end] == b"\r" else end


# Python's `\w` in a bytes pattern is ASCII-only, which is what C identifiers need.
IDENTIFIER = regexes.compile(rb"[A-Za-z_][A-Za-z0-9_]*\Z")
