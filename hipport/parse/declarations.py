"""Which identifiers name the user's own entities: struct members, and functions or variables
declared inside a namespace or class. Those keep their names even when they spell a CUDA API
(`struct Hooks { void* (*cudaMalloc)(size_t); }`, `namespace mylib { void cudaFree(void*); }`)."""

from __future__ import annotations

import re
from typing import Iterable

from hipport.parse import tree
from hipport.parse.lexer import Token

_SCOPES = frozenset({"namespace_definition", "field_declaration_list", "class_specifier", "struct_specifier"})
# Nodes whose `declarator` field, when a plain identifier, declares that name.
_DECLARATORS = frozenset({"function_declarator", "init_declarator", "declaration"})
# Only a name after a type-ish token, `*`, `&` or `(*` can be a declarator: the parse is needed
# only when some mapped name sits there and the file opens a namespace or a class.
_SCOPE_WORD = re.compile(rb"\b(?:namespace|struct|class|union)\b")


def might_declare(data: bytes, starts: list[int]) -> bool:
    if not starts or not _SCOPE_WORD.search(data):
        return False
    for s in starts:
        prev = data[max(0, s - 2) : s].rstrip()
        if prev[-1:] in (b"*", b"&", b"(") or prev[-1:].isalnum() or prev[-1:] == b"_":
            return True
    return False


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
        if node.type == "field_identifier":
            out.add(tok.start)
        elif node.type == "identifier" and _declares(node) and _in_scope(node):
            out.add(tok.start)
    return out


def _declares(node) -> bool:
    parent = node.parent
    return parent is not None and parent.type in _DECLARATORS and any(
        d.id == node.id for d in parent.children_by_field_name("declarator"))


def _in_scope(node) -> bool:
    parent = node.parent
    while parent is not None and parent.type not in _SCOPES:
        if parent.type in ("compound_statement", "parameter_list"):
            return False  # a local variable or a parameter: an ordinary use of the name
        parent = parent.parent
    return parent is not None
