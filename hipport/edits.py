"""Byte-range edits against the original buffer, applied in one pass."""

from __future__ import annotations

from typing import Iterable, NamedTuple


class Edit(NamedTuple):
    start: int
    end: int
    text: bytes
    # What produced the edit, for the report: e.g. "runtime", "include", "launch".
    library: str = ""
    cuda: str = ""


class OverlapError(ValueError):
    pass


def apply_edits(data: bytes, edits: Iterable[Edit]) -> bytes:
    """Splice sorted, non-overlapping edits into data; untouched bytes are copied as they are.

    Insertions (start == end) at the same offset keep their given order.
    """
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    out: list[bytes] = []
    pos = 0
    for e in ordered:
        if e.start < pos:
            raise OverlapError(f"edit at {e.start}..{e.end} overlaps an earlier edit ending at {pos}")
        out.append(data[pos : e.start])
        out.append(e.text)
        pos = e.end
    out.append(data[pos:])
    return b"".join(out)
