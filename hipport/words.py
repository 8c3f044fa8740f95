"""Counted nouns for messages: `1 file`, `2 files`."""

from __future__ import annotations

_UNCOUNTABLE = frozenset({"info"})  # a severity: "3 info", never "3 infos"


def plural(n: int, one: str, many: str | None = None) -> str:
    """`n` and the noun, plural unless n is 1 (`many` for an irregular plural)."""
    if n == 1 or one in _UNCOUNTABLE:
        return f"{n} {one}"
    return f"{n} {many or one + 's'}"
