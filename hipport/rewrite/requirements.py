"""requirements*.txt: PyTorch's CUDA wheel index -> its ROCm index, and `+cuXYZ` local version
labels dropped so that a pin matches the ROCm build of the same version.

CUDA-only packages (apex, TensorRT, DALI, cupy-cuda12x, nvidia-* wheels, ...) are not
rewritten: the cuda-only-library rule reports them with their ROCm alternative.
"""

from __future__ import annotations

import functools
import re

from hipport import regexes
from hipport.edits import Edit
from hipport.parse.hash_comments import Spans
from hipport.rewrite.shell import Rewritten, rocm_release, table


@functools.lru_cache(maxsize=None)
def _rows() -> dict[str, tuple[dict[str, str], ...]]:
    out: dict[str, list[dict[str, str]]] = {}
    for r in table("wheels"):
        out.setdefault(r["kind"], []).append(r)
    return {k: tuple(v) for k, v in out.items()}


@functools.lru_cache(maxsize=None)
def _index_re() -> re.Pattern[bytes]:
    # Longest prefix first, so the nightly index is not read as the stable one.
    prefixes = sorted((r["cuda"] for r in _rows()["index"]), key=len, reverse=True)
    alts = "|".join(re.escape(p) for p in prefixes)
    return regexes.compile(rf"({alts})(\d+)(?![\w.])".encode())


def index_edits(data: bytes, comments: Spans, target: tuple[int, int], start: int = 0,
                end: int | None = None) -> Rewritten:
    """PyTorch's CUDA wheel indexes (download.pytorch.org/whl/cu121) -> the ROCm index for the
    target release, anywhere outside comments (requirements, pip commands, Dockerfiles)."""
    end = len(data) if end is None else end
    out = Rewritten()
    rows = {r["cuda"]: r for r in _rows()["index"]}
    for m in _index_re().finditer(data, start, end):
        if comments.covers(m.start()):
            continue
        row = rows[m.group(1).decode()]
        new = row["rocm"].replace("{rocm}", rocm_release(target))
        old = m.group().decode()
        out.edits.append(Edit(m.start(), m.end(), new.encode(), "wheel-index", old))
        out.note(m.start(), f"`{old}` -> `{new}`: {row['note']}")
    return out


# A requirement pinned to a CUDA build: name, then a specifier whose version has +cuXYZ.
_LOCAL = regexes.compile(rb"(?m)(?:^|(?<=\A\xef\xbb\xbf))[ \t]*([A-Za-z0-9][\w.-]*)(?:\[[^\]\n]*\])?[ \t]*(?:===?|~=|!=|<=|>=|<|>)[ \t]*[\w.*!]+(\+cu\d+)(?![\w.])")


def rewrite(ctx, renamed: frozenset[str]) -> Rewritten:
    data, comments = ctx.data, ctx.comment_index
    out = index_edits(data, comments, ctx.mappings.target_hip)
    label = _rows()["local-version"][0]
    for m in _LOCAL.finditer(data):
        if comments.covers(m.start(2)):
            continue
        out.edits.append(Edit(m.start(2), m.end(2), b"", "wheel-index", m.group(2).decode()))
        out.note(m.start(2), f"`{m.group(1).decode()}`: `{m.group(2).decode()}` removed: {label['note']}")
    return out
