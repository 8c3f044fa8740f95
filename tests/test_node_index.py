"""The rules' index of a parsed file's nodes by type (rules._syntax._of_type): walked with a
tree cursor, or found by the compiled query once a process has walked enough bytes. Either
way the rules see the same nodes and report the same findings."""

from __future__ import annotations

from pathlib import Path

import pytest

from hipport.analysis import analyze, context_for
from hipport.config import Settings
from hipport.files import file_kind
from hipport.rules import _syntax as sx

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(p for base in ("fixtures", "examples") for p in (ROOT / base).rglob("*")
                 if p.is_file() and file_kind(p.name) in ("cuda", "cpp") and "broken" not in p.parts)


def _ctx(path: Path):
    return context_for(path.read_bytes(), path.name, file_kind(path.name), Settings())


def _preorder(node, out: list) -> list:
    out.append(node)
    for child in node.children:
        _preorder(child, out)
    return out


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_walk_and_the_query_index_the_same_nodes(path: Path):
    ctx = _ctx(path)
    walked = sx._walk_index(ctx)
    expected: dict[str, list] = {}
    for node in _preorder(ctx.tree.root_node, []):
        expected.setdefault(node.type, []).append(node.id)
    assert {t: [n.id for n in nodes] for t, nodes in walked.items()} == expected
    queried = sx._query_index(ctx)
    for t in sx._COMMON_TYPES:
        assert {n.id for n in walked.get(t, [])} == {n.id for n in queried.get(t, [])}, t
        starts = [n.start_byte for n in walked.get(t, [])]
        assert starts == sorted(starts)


def test_a_process_walks_files_until_its_walked_bytes_would_have_paid_for_the_query(monkeypatch):
    """A file of more than a few KB is walked too while the process's budget lasts (before, any
    file over 16 KB compiled the query); past the budget the query answers, alike."""
    data = b"".join(b"void f%d(int* p) { p[0] = g(%d) + 2; }\n" % (i, i) for i in range(600))
    assert len(data) > 20_000
    monkeypatch.setattr(sx, "_walked", [0])
    walked = context_for(data, "big.cu", "cuda", Settings())
    calls = sx.nodes(walked, "call_expression")
    assert len(calls) == 600
    assert "node_index" in walked.memo and "query_index" not in walked.memo
    assert sx._walked[0] == len(data)
    monkeypatch.setattr(sx, "_walked", [sx._WALK_BYTES - len(data) + 1])
    queried = context_for(data, "big.cu", "cuda", Settings())
    assert [n.start_byte for n in sx.nodes(queried, "call_expression")] == [n.start_byte for n in calls]
    assert "query_index" in queried.memo and "node_index" not in queried.memo


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_findings_do_not_depend_on_how_the_nodes_were_found(path: Path, monkeypatch):
    monkeypatch.setattr(sx, "_walked", [0])
    walked = analyze(_ctx(path))
    monkeypatch.setattr(sx, "_walked", [sx._WALK_BYTES + 1])
    assert analyze(_ctx(path)) == walked
