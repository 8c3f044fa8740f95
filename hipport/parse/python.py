"""Python sources, read with `ast` (never executed): a tree's nodes in one loop.

ast.walk is a generator over generators (each node's children, each node's fields): walking
a model file of a few thousand lines with it took longer than parsing the file, and several
rules and the setup.py rewriter each walked the whole tree.
"""

from __future__ import annotations

import bisect
import re
import warnings
from collections.abc import Callable

from hipport import regexes
from hipport.lazy import lazy_import
from hipport.source import bom_length, newline_starts

ast = lazy_import("ast")  # loaded by the first Python file (hipport.lazy)

_NEWLINE = regexes.compile(rb"\r\n|\r|\n")  # what Python's tokenizer takes for a line's end


def nodes(tree: ast.AST, parents: dict | None = None) -> list[ast.AST]:
    """Every node of `tree`, in ast.walk's order (breadth first, children in field order);
    `parents`, when given, gets each node's parent."""
    found, node_type = [tree], ast.AST
    for node in found:  # the list grows as it is read
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, node_type):
                        found.append(item)
                        if parents is not None:
                            parents[item] = node
            elif isinstance(value, node_type):
                found.append(value)
                if parents is not None:
                    parents[value] = node
    return found


def statements(tree: ast.AST) -> list[ast.AST]:
    """The module and every statement in it (with the except handlers and match cases that
    hold statements), outer ones first: where an import can be, without the expressions'
    nodes, most of a tree."""
    found, holds = [tree], (ast.stmt, ast.excepthandler, ast.match_case)
    for node in found:  # the list grows as it is read
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                found.extend(item for item in value if isinstance(item, holds))
    return found


def line_starts(data: bytes) -> list[int]:
    """Where each line of `data` starts, as Python counts lines (`\\r`, `\\n` or `\\r\\n` end
    one), the first after a BOM: the tree's columns count from there."""
    if b"\r" in data:
        return [bom_length(data), *(m.end() for m in _NEWLINE.finditer(data))]
    starts = newline_starts(data)  # the C scanner's, where `\n` alone ends a line
    starts[0] = bom_length(data)
    return starts


def spans(data: bytes, starts: list[int] | None = None) -> Callable[[ast.AST], tuple[int, int]]:
    """What gives a node of `data`'s tree its byte span: the tree counts lines as Python's
    tokenizer does and columns in UTF-8 bytes (line_starts, unless `starts` are they)."""
    if starts is None:
        starts = line_starts(data)

    def span(node: ast.AST) -> tuple[int, int]:
        return (starts[node.lineno - 1] + node.col_offset,
                starts[node.end_lineno - 1] + node.end_col_offset)

    return span


# Import statements read one at a time, each found from its `import` keyword (every import
# statement has one, and in code the word is nothing else). One possessive match runs from
# code to the next keyword in code, over comments, string literals (a prefix changes no
# literal's extent; an unclosed quote is passed over alone) and every `i` that does not start
# the word, so nothing is tried twice; the statement then starts at a `from` before the
# keyword with only a module path between, and ends where its line does outside brackets.
_BREAK = rb"\\(?:\r\n|\r|\n)"  # a backslash continuing the line
_STRING = (rb"'''(?:[^'\\]++|\\.|'(?!''))*+'''|\"\"\"(?:[^\"\\]++|\\.|\"(?!\"\"))*+\"\"\""
           rb"|'(?!'')(?:[^'\\\r\n]++|\\(?:\r\n|.))*+'|\"(?!\"\")(?:[^\"\\\r\n]++|\\(?:\r\n|.))*+\"")
_NEXT_IMPORT = regexes.compile(rb"(?:[^#'\"i\\]++|\\.|#[^\r\n]*+|" + _STRING + rb"|['\"]|\Bi|i(?!mport\b))*+import\b", re.S)
_FROM = regexes.compile(rb"(?<![\w\x80-\xff])from(?:[ \t\f]|" + _BREAK + rb")++(?:[\w.\x80-\xff \t\f]|" + _BREAK + rb")*+\Z")
_IMPORT_END = regexes.compile(rb"import(?:[ \t\f]|" + _BREAK + rb")*+(?:\((?:[^)#]++|#[^\r\n]*+)*+\)|(?:[^\r\n\\;#]++|"
                         + _BREAK + rb")*+)")
_MODULE_PATH = 1024  # bytes a `from` may stand before its `import`, at most


def imports(data: bytes) -> list[ast.stmt] | None:
    """The import statements of a Python file, in the order they appear, each parsed alone
    (ast on the whole file costs about 150 bytes of memory and 0.5-2 µs a byte of source;
    a statement's own text, microseconds): their positions are the file's, as a parse of
    the whole file gives them. A file with a syntax error elsewhere has its imports read
    all the same. None where a statement found so is not one import when parsed (text
    this reading takes for code that Python does not): the caller parses the file whole."""
    found: list[ast.stmt] = []
    starts: list[int] | None = None
    pos = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while (m := _NEXT_IMPORT.match(data, pos)) is not None:
            pos = m.end()
            keyword = pos - len(b"import")
            before = _FROM.search(data, max(0, keyword - _MODULE_PATH), keyword)
            start = keyword if before is None else before.start()
            end = _IMPORT_END.match(data, keyword).end()
            try:
                body = ast.parse(data[start:end]).body
            except (SyntaxError, ValueError):
                return None
            if len(body) != 1 or not isinstance(body[0], (ast.Import, ast.ImportFrom)):
                return None
            if starts is None:
                starts = line_starts(data)
            line = bisect.bisect_right(starts, start) - 1
            _move(body[0], line, start - starts[line])
            found.append(body[0])
    return found


def _move(statement: ast.stmt, lines: int, columns: int) -> None:
    """Give a statement parsed alone the position it has in its file: `lines` lines down, its
    first line `columns` bytes in."""
    for node in ast.walk(statement):
        if node.lineno == 1:
            node.col_offset += columns
        if node.end_lineno == 1:
            node.end_col_offset += columns
        node.lineno += lines
        node.end_lineno += lines


# String literal tokens, as Python's tokenizer reads them: a prefix is a literal's only where
# no name goes on into it (`rb"x"`, not `xrb"x"`), and a name that ends at a quote is passed
# whole (`if"x"`). A quote that opens no literal on its line is passed over, as the tokenizer
# does; three that open none stop the reading, as they stop the tokenizer.
_PREFIX = rb"(?:[rR][bBfF]?|[bBfF][rR]?|[uU])"
_NEXT_STRING = regexes.compile(
    rb"(?:[^#'\"\w\x80-\xff]++|#[^\r\n]*+|(?!" + _PREFIX + rb"(?:" + _STRING + rb"))[\w\x80-\xff]++"
    rb"|(?!'''|\"\"\"|" + _STRING + rb")['\"])*+(" + _PREFIX + rb"?(?:" + _STRING + rb"))", re.S)


def strings(data: bytes) -> list[tuple[int, bytes]]:
    """(byte offset, source bytes) of every string literal token of a Python file, prefix and
    quotes included (an f-string whole): what the tokenize module finds (up to a triple quote
    left open), some twenty times faster."""
    out = []
    pos = 0
    while (m := _NEXT_STRING.match(data, pos)) is not None:
        out.append((m.start(1), m.group(1)))
        pos = m.end()
    return out
