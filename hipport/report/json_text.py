"""JSON text of the documents hipport writes (check's JSON and SARIF, report.json, baselines):
indented for reading, except that a long list puts each entry on one line of its own, compact.

json.dumps with `indent` runs the encoder written in Python; only without it does the C
encoder run. A check of a tree with 20,000 findings spent two seconds writing its SARIF
indented, three times as long as the check took when its results came from the cache.
"""

from __future__ import annotations

import json
from typing import Any

LONG = 8  # a list of more entries than this: one compact entry per line
_encode_compact = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps makes one per call


def dumps(value: Any) -> str:
    """`value` as json.dumps(value, indent=2, ensure_ascii=False) writes it, but for lists of
    more than LONG entries, each written compact on a line of its own; a newline at the end."""
    return _encode(value, "") + "\n"


def _encode(value: Any, pad: str) -> str:
    inner = pad + "  "
    if isinstance(value, dict) and value:
        return "{\n" + ",\n".join(f"{inner}{_key(k)}: {_encode(v, inner)}" for k, v in value.items()) \
            + "\n" + pad + "}"
    if isinstance(value, (list, tuple)) and value:
        if len(value) > LONG:
            items = map(_encode_compact, value)
        else:
            items = (_encode(v, inner) for v in value)
        return "[\n" + ",\n".join(inner + item for item in items) + "\n" + pad + "]"
    return _encode_compact(value)


def _key(key: Any) -> str:
    """A dict key as json writes it (a key other than a string becomes one)."""
    if isinstance(key, str):
        return _encode_compact(key)
    return _encode_compact({key: 0})[1:-4]  # `{"1": 0}`: as json turns a number, a bool or None into a key
