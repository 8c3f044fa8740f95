"""Which identifiers name the user's own entities: struct members, and functions or variables
declared inside a namespace or class. Those keep their names even when they spell a CUDA API
(`struct Hooks { void* (*cudaMalloc)(size_t); }`, `namespace mylib { void cudaFree(void*); }`)."""

from __future__ import annotations

import re

from hipport.parse import tree

_SCOPES = frozenset({"namespace_definition", "field_declaration_list", "class_specifier", "struct_specifier"})
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


def user_declared(data: bytes, parsed=None) -> set[int]:
    """Start offsets of identifiers that declare the file's own members and scoped names.
    `parsed`: the file's tree when the caller has one already."""
    root = (parsed if parsed is not None else tree.parse(data)).root_node
    found = tree.captures("declarations", root)
    out = {n.start_byte for n in found.get("member", ())}
    for node in found.get("declared", ()):
        parent = node.parent
        while parent is not None and parent.type not in _SCOPES:
            if parent.type in ("compound_statement", "parameter_list"):
                break  # a local variable or a parameter: an ordinary use of the name
            parent = parent.parent
        if parent is not None and parent.type in _SCOPES:
            out.add(node.start_byte)
    return out
