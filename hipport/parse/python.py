"""Python sources, read with `ast` (never executed): a tree's nodes in one loop.

ast.walk is a generator over generators (each node's children, each node's fields): walking
a model file of a few thousand lines with it took longer than parsing the file, and several
rules and the setup.py rewriter each walked the whole tree.
"""

from __future__ import annotations

import ast


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
