"""Python sources, read with `ast` (never executed): a tree's nodes in one loop.

ast.walk is a generator over generators (each node's children, each node's fields): walking
a model file of a few thousand lines with it took longer than parsing the file, and several
rules and the setup.py rewriter each walked the whole tree.
"""

from __future__ import annotations

import ast
import re
from typing import Callable

from hipport.source import bom_length

_NEWLINE = re.compile(rb"\r\n|\r|\n")  # what Python's tokenizer takes for a line's end


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


_HOLDS_STATEMENTS = (ast.stmt, ast.excepthandler, ast.match_case)


def statements(tree: ast.AST) -> list[ast.AST]:
    """The module and every statement in it (with the except handlers and match cases that
    hold statements), outer ones first: where an import can be, without the expressions'
    nodes, most of a tree."""
    found = [tree]
    for node in found:  # the list grows as it is read
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                found.extend(item for item in value if isinstance(item, _HOLDS_STATEMENTS))
    return found


def spans(data: bytes) -> Callable[[ast.AST], tuple[int, int]]:
    """What gives a node of `data`'s tree its byte span: the tree counts lines as Python's
    tokenizer does (`\\r`, `\\n` or `\\r\\n` end one) and columns in UTF-8 bytes after a BOM."""
    starts = [bom_length(data)]
    starts += [m.end() for m in _NEWLINE.finditer(data)]

    def span(node: ast.AST) -> tuple[int, int]:
        return (starts[node.lineno - 1] + node.col_offset,
                starts[node.end_lineno - 1] + node.end_col_offset)

    return span
