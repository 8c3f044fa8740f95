"""tree-sitter-cuda front end: the syntax tree for the questions a lexer cannot answer.

The bindings load with the first tree: most files need none (the lexer answers), and
importing them (`tree_sitter` imports `typing`) took every process about 3 ms, a pre-commit
check of one file included.
"""

from __future__ import annotations

from functools import lru_cache

from hipport.lazy import lazy_import

tree_sitter = lazy_import("tree_sitter")
tree_sitter_cuda = lazy_import("tree_sitter_cuda")


@lru_cache(maxsize=1)
def language() -> tree_sitter.Language:
    return tree_sitter.Language(tree_sitter_cuda.language())


def parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(language())


def parse(data: bytes) -> tree_sitter.Tree:
    return parser().parse(data)


@lru_cache(maxsize=None)
def query(name: str) -> tree_sitter.Query:
    """A query from parse/queries/NAME.scm, compiled once."""
    from importlib import resources  # noqa: PLC0415 - lazy: its imports cost ~5 ms at start-up

    text = resources.files("hipport.parse.queries").joinpath(f"{name}.scm").read_text(encoding="utf-8")
    return tree_sitter.Query(language(), text)


def captures(name: str, node: tree_sitter.Node) -> dict[str, list[tree_sitter.Node]]:
    return tree_sitter.QueryCursor(query(name)).captures(node)
