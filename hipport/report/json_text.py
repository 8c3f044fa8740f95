"""JSON text of the documents hipport writes (check's JSON and SARIF, report.json, baselines):
indented for reading, except that a long list puts each entry on one line of its own, compact.

json.dumps with `indent` runs the encoder written in Python; only without it does the C
encoder run. A check of a tree with 20,000 findings spent two seconds writing its SARIF
indented, three times as long as the check took when its results came from the cache.

The text comes in pieces, a long list's entries one at a time, for the writer to pass on as
they come: the report of 51,000 files is 163 MB of JSON, and joining it whole took four copies
of it at once (a peak of 1 GB where the report itself held 340 MB).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from itertools import chain, islice

from hipport import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

LONG = 8  # a list of more entries than this: one compact entry per line
_encode_compact = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps makes one per call


class Items:
    """A list written from its entries as they come, none held after it is written: a check of
    a big tree streams its findings. Read once."""

    def __init__(self, entries: Iterable[Any]) -> None:
        self.entries = entries


class Later:
    """A value made when the text reaches it: what the entries of an Items before it add up to."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


def dumps(value: Any) -> str:
    """`value` as json.dumps(value, indent=2, ensure_ascii=False) writes it, but for lists of
    more than LONG entries, each written compact on a line of its own; a newline at the end."""
    return "".join(pieces(value))


def pieces(value: Any) -> Iterator[str]:
    """dumps(value)'s text in order, in pieces no bigger than one compact entry of a long list."""
    yield from _pieces(value, "")
    yield "\n"


def _pieces(value: Any, pad: str) -> Iterator[str]:
    inner = pad + "  "
    if isinstance(value, Later):
        value = value.make()
    if isinstance(value, Items):  # a list: its first LONG + 1 entries say whether it is long
        entries = iter(value.entries)
        value = list(islice(entries, LONG + 1))
        if len(value) > LONG:
            yield from _long(chain(value, entries), pad)
            return
    if isinstance(value, dict) and value:
        head = "{\n"
        for k, v in value.items():
            yield f"{head}{inner}{_key(k)}: "
            yield from _pieces(v, inner)
            head = ",\n"
        yield "\n" + pad + "}"
    elif isinstance(value, (list, tuple)) and len(value) > LONG:
        yield from _long(value, pad)
    elif isinstance(value, (list, tuple)) and value:
        head = "[\n" + inner
        for v in value:
            yield head
            yield from _pieces(v, inner)
            head = ",\n" + inner
        yield "\n" + pad + "]"
    else:
        yield _encode_compact(value)


def _long(entries: Iterable[Any], pad: str) -> Iterator[str]:
    """A long list: each entry compact, on a line of its own."""
    head = "[\n" + pad + "  "
    for v in entries:
        yield head + _encode_compact(v)
        head = ",\n" + pad + "  "
    yield "\n" + pad + "]"


def _key(key: Any) -> str:
    """A dict key as json writes it (a key other than a string becomes one)."""
    if isinstance(key, str):
        return _encode_compact(key)
    return _encode_compact({key: 0})[1:-4]  # `{"1": 0}`: as json turns a number, a bool or None into a key
