"""The `#` comments of Python and build files (CMake, Makefiles, Dockerfiles, requirements
files, TOML, shell scripts), for the rules, the build-file rewriters and inline suppressions
alike.

One compiled pattern per kind finds them, in C. Each pattern matches, left to right, either a
comment (group `c`) or what a `#` inside does not start a comment: a string literal, a shell
escape. CMake's are read with its commands by parse/cmake (the rewriter needs those anyway, and
a `#` in a quoted or bracket argument starts no comment). What counts as a comment, per kind:

    python, setup.py   `#` to the line's end, outside strings (triple-quoted ones too)
    cmake              `#` to the line's end and `#[[...]]` (any number of `=`), outside
                       quoted and bracket arguments
    make               `#` not escaped by a backslash, to the line's end; a backslash at the
                       end continues it (GNU make's rule)
    docker             a line whose first character other than a space or tab is `#`
    requirements       `#` at a line's start or after a space or tab (pip's rule: `a#b` is
                       a URL fragment)
    pyproject          `#` to the line's end, outside TOML's strings (a literal string,
                       `'...'` or `'''...'''`, has no escapes)
    shell              `#` where a word starts (the file's start, after a blank or one of
                       `;(&|`), outside quotes (`'...'` has no escapes) and not escaped by
                       a backslash

A span ends before the line's end (`\\r` and `\\n`); an unterminated string or bracket runs to
the end of the file.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable

_PYTHON = (rb"(?P<c>#[^\r\n]*)|'''[\s\S]*?(?:'''|\Z)|\"\"\"[\s\S]*?(?:\"\"\"|\Z)"
           rb"|'(?:\\.|[^'\\\r\n])*'?|\"(?:\\.|[^\"\\\r\n])*\"?")
_PATTERNS = {
    "python": _PYTHON,
    "setup.py": _PYTHON,
    "make": rb"(?P<c>(?<!\\)#(?:\\\r?\n|[^\r\n])*)",
    "docker": rb"(?m)^[ \t]*(?P<c>#[^\r\n]*)",
    "requirements": rb"(?m)(?P<c>(?:^|(?<=[ \t]))#[^\r\n]*)",
    "pyproject": rb"(?P<c>#[^\r\n]*)|'''[\s\S]*?(?:'''|\Z)|\"\"\"(?:\\[\s\S]|[^\\])*?(?:\"\"\"|\Z)"
                 rb"|'[^'\r\n]*'?|\"(?:\\.|[^\"\\\r\n])*\"?",
    "shell": rb"(?P<c>(?:\A|(?<=\A\xef\xbb\xbf)|(?<=[ \t\n;(&|]))#[^\r\n]*)"
             rb"|'[^']*'?|\"(?:\\[\s\S]|[^\"\\])*\"?|\\[\s\S]",
}


@functools.lru_cache(maxsize=None)
def _pattern(kind: str) -> re.Pattern | None:
    """Compiled when a file of the kind is first read: a run over C++ and CUDA needs none."""
    text = _PATTERNS.get(kind)
    return None if text is None else re.compile(text)


def comment_spans(kind: str, data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each comment of a file of `kind`, in order; none for another kind."""
    if kind == "cmake":
        from hipport.parse import cmake  # noqa: PLC0415 - as _pattern: a run over C++ and CUDA loads none

        return cmake.comment_spans(data)
    pattern = _pattern(kind)
    if pattern is None:
        return []
    return [m.span("c") for m in pattern.finditer(data) if m.group("c") is not None]


class Spans:
    """Sorted, disjoint (start, end) byte ranges (comments): where rewriters must not touch and
    rules must not look (FileContext.comment_index holds a file's comments so)."""

    def __init__(self, spans: Iterable[tuple[int, int]]):
        self.spans = sorted(spans)
        self.starts = [s for s, _ in self.spans]

    def covers(self, offset: int) -> bool:
        i = bisect.bisect_right(self.starts, offset) - 1
        return i >= 0 and offset < self.spans[i][1]
