"""A Python file's syntax for the rules and the setup.py rewriter: parsed once and walked once
per file, kept on the file's context (rules._syntax.memo), never executed. build-flags,
cuda-only-library and pytorch-extension read setup.py and other Python files through it, and
the pipeline hands the setup.py rewriter the same tree (parse/python.py says why one walk)."""

from __future__ import annotations

import warnings

from hipport import regexes
from hipport.lazy import lazy_import
from hipport.parse import python as pyast
from hipport.rules import _syntax as sx

ast = lazy_import("ast")  # loaded by the first Python file (hipport.lazy)


def parse_python(data: bytes) -> ast.AST | None:
    """The module's syntax tree (never executed), or None when it does not parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(data)
    except (SyntaxError, ValueError, UnicodeDecodeError, LookupError, RecursionError,
            MemoryError):
        return None


_NAME_PARTS = regexes.compile(r"_|(?<=[a-z0-9])(?=[A-Z])")


def _rocm_name(name: str) -> bool:
    """`HIP_BUILD`, `IS_HIP_EXTENSION`, `ROCM_HOME`, `use_rocm`, `isROCm`, `version.hip`."""
    return any(part.lower() in ("hip", "rocm") for part in _NAME_PARTS.split(name))


def tests_rocm(expr: ast.AST) -> bool:
    """Whether a Python expression refers to a HIP/ROCm switch (a name or attribute such as
    torch.version.hip, IS_HIP_EXTENSION, ROCM_HOME, HIP_BUILD)."""
    for sub in ast.walk(expr):
        if isinstance(sub, ast.Name) and _rocm_name(sub.id):
            return True
        if isinstance(sub, ast.Attribute) and _rocm_name(sub.attr):
            return True
    return False


def rocm_split_lines(ctx) -> list[tuple[int, int]]:
    """Line ranges of Python `if`/ternary constructs whose condition tests for ROCm: both of
    their branches are already platform-specific, so neither is a porting finding."""
    return [(node.lineno, node.end_lineno) for node in python_nodes(ctx, ast.If, ast.IfExp)
            if tests_rocm(node.test)]


def python_tree(ctx) -> ast.AST | None:
    """parse_python(ctx.data), once per file (callers must not modify the tree)."""
    return sx.memo(ctx, "python.tree", lambda c: parse_python(c.data))


def python_syntax(ctx) -> tuple:
    """(tree, its nodes in ast.walk's order, each node's parent, python_span) of the file, from
    one parse and one walk (parse/python.py says why): the rules and the setup.py rewriter
    share them (callers must not modify them). No tree and no nodes where it does not parse."""
    def compute(c):
        tree, parents = python_tree(c), {}
        return tree, _walk(tree, parents), parents, python_span(c)
    return sx.memo(ctx, "python.syntax", compute)


def python_nodes(ctx, *types: type) -> list:
    """The file's syntax-tree nodes (of those types, if given), in ast.walk's order
    (python_syntax); none when it does not parse."""
    every = python_syntax(ctx)[1]
    if not types:
        return every
    return sx.memo(ctx, ("python.nodes", types),
                   lambda _: [node for node in every if isinstance(node, types)])


def python_imports(ctx) -> list:
    """The file's import statements, in the order they appear: each parsed alone (parse/
    python.imports), so a rule that reads only imports spares the parse of the whole file;
    else from a walk of the file's statements (an import is never inside an expression)."""
    def compute(c):
        found = pyast.imports(c.data)
        if found is not None:
            return found
        tree = python_tree(c)
        return [] if tree is None else [n for n in pyast.statements(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    return sx.memo(ctx, "python.imports", compute)


def python_line_starts(ctx) -> list[int]:
    """Where each line of the file starts, as Python counts lines (parse/python.line_starts),
    once per file."""
    return sx.memo(ctx, "python.line_starts", lambda c: pyast.line_starts(c.data))


def python_span(ctx):
    """What gives a node of the file's syntax tree its byte span (parse/python.spans), once per
    file."""
    return sx.memo(ctx, "python.span", lambda c: pyast.spans(c.data, python_line_starts(c)))


def python_parents(ctx) -> dict:
    """Each node of the file's syntax tree -> the node holding it (python_syntax)."""
    return python_syntax(ctx)[2]


def _walk(tree: ast.AST | None, parents: dict | None = None) -> list:
    return [] if tree is None else pyast.nodes(tree, parents)


def python_string_tokens(ctx) -> list[tuple[int, bytes]]:
    """The file's string literal tokens (parse/python.strings), once per file."""
    return sx.memo(ctx, "python.strings", lambda c: pyast.strings(c.data))
