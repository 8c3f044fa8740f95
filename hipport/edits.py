"""Byte-range edits against the original buffer, applied in one pass."""

from __future__ import annotations

from collections.abc import Iterable

from hipport.tuples import NamedTuple


class Edit(NamedTuple):
    start: int
    end: int
    text: bytes
    # What produced the edit, for the report: e.g. "runtime", "include", "launch".
    library: str = ""
    cuda: str = ""


class OverlapError(ValueError):
    pass


Splice = tuple[int, int, bytes]  # (start, end, new bytes)


def apply_edits(data: bytes, edits: Iterable[Edit]) -> bytes:
    """Splice sorted, non-overlapping edits into data; untouched bytes are copied as they are.

    Insertions (start == end) at the same offset keep their given order.
    """
    return splice(data, splices(edits))


def splices(edits: Iterable[Edit]) -> tuple[Splice, ...]:
    """The edits as (start, end, text), in the order apply_edits splices them; OverlapError
    where two overlap. Far smaller than a ported file: what the port cache keeps."""
    out = []
    pos = 0
    for e in sorted(edits, key=lambda e: (e.start, e.end)):
        if e.start < pos:
            raise OverlapError(f"edit at {e.start}..{e.end} overlaps an earlier edit ending at {pos}")
        out.append((e.start, e.end, e.text))
        pos = e.end
    return tuple(out)


def splice(data: bytes, spliced: Iterable[Splice]) -> bytes:
    """`data` with each (start, end, text) of splices() put in place of its range."""
    out: list[bytes] = []
    pos = 0
    for start, end, text in spliced:
        out.append(data[pos:start])
        out.append(text)
        pos = end
    out.append(data[pos:])
    return b"".join(out)
