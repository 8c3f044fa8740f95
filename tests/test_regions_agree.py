"""The lexer is the authority on regions; on files tree-sitter parses cleanly, both must agree
on every comment and literal tree-sitter sees (the lexer also sees those inside macro bodies)."""

from pathlib import Path

import pytest

from hipport.config import Settings
from hipport.parse import tree
from hipport.loaders import tools

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(p for d in ("fixtures/port", "examples") for p in (ROOT / d).rglob("*")
                 if p.suffix in (".cu", ".cuh", ".cpp", ".h"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_lexer_and_tree_sitter_agree(path: Path):
    data = path.read_bytes()
    parsed = tree.parse(data)
    if parsed.root_node.has_error:
        pytest.skip("tree-sitter does not parse this file cleanly")
    lexed = tools(Settings())[1].lex(data)
    found = tree.captures("regions", parsed.root_node)
    ts_comments = {(n.start_byte, n.end_byte) for n in found.get("comment", ())}
    ts_strings = {(n.start_byte, n.end_byte) for n in found.get("string", ())}
    ts_includes = {(n.start_byte, n.end_byte) for n in found.get("include", ())}
    assert ts_comments <= set(lexed.comments)
    assert ts_strings - ts_includes <= set(lexed.strings)
    assert ts_includes == {(d.path_start, d.path_end) for d in lexed.includes}
    macros = [(n.start_byte, n.end_byte) for n in found.get("macro", ())]

    def in_macro(span):
        return any(s <= span[0] and span[1] <= e for s, e in macros)

    # What only the lexer sees is inside macro bodies, which tree-sitter keeps as raw text.
    assert all(in_macro(c) for c in set(lexed.comments) - ts_comments)
    assert all(in_macro(c) for c in set(lexed.strings) - ts_strings)
