"""Source: a file's bytes plus the facts read once from them (BOM, newline style, line starts)."""

from __future__ import annotations

import bisect

from hipport.findings import CUT, SNIPPET_MAX
from hipport.parse.lexer import _scan

UTF8_BOM = b"\xef\xbb\xbf"


def bom_length(data: bytes) -> int:
    """Bytes of the UTF-8 BOM `data` starts with (0 or 3): where its text starts."""
    return len(UTF8_BOM) if data.startswith(UTF8_BOM) else 0


_SNIPPET_BEFORE = 100  # bytes of a long line kept before the finding in its snippet
_SPACE = b" \t\r\n\f\v"


def python_line_starts(data: bytes) -> list[int]:
    """Offsets where the lines start: 0, and just past each newline (the C scanner's
    line_starts where it is built)."""
    starts = [0]
    find = data.find
    i = find(b"\n")
    while i >= 0:
        starts.append(i + 1)
        i = find(b"\n", i + 1)
    return starts


newline_starts = _scan.line_starts if _scan is not None else python_line_starts


class Source:
    def __init__(self, data: bytes, path: str = "<stdin>"):
        self.data = data
        self.path = path
        self._line_starts: list[int] = []
        self._snippets: dict[int, str] = {}
        self._bounds: dict[int, tuple[int, int]] = {}  # a long line's text, for its snippets

    @property
    def bom(self) -> bytes:
        return self.data[:bom_length(self.data)]

    @property
    def newline(self) -> bytes:
        """The file's own line ending, reused for any line we insert."""
        i = self.data.find(b"\n")
        if i > 0 and self.data[i - 1 : i] == b"\r":
            return b"\r\n"
        return b"\n"

    def line_starts(self) -> list[int]:
        if not self._line_starts:
            self._line_starts.extend(newline_starts(self.data))
        return self._line_starts

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column (column counted in bytes) of a byte offset."""
        starts = self.line_starts()
        line = bisect.bisect_right(starts, offset) - 1
        return line + 1, offset - starts[line] + 1

    def line_text(self, line: int) -> str:
        starts = self.line_starts()
        start = starts[line - 1]
        end = starts[line] if line < len(starts) else len(self.data)
        return self.data[start:end].rstrip(b"\r\n").decode("utf-8", "replace")

    def snippet(self, line: int, offset: int | None = None) -> str:
        """The line's text without the spaces around it (a finding's snippet), read once per
        line: one long line (generated, minified) may hold thousands of findings. Of a line
        longer than SNIPPET_MAX, a window of it around `offset`, cut ends marked with CUT."""
        got = self._snippets.get(line)
        if got is None:
            got = self._snippets[line] = self.line_text(line).strip()
        if offset is None or len(got) <= SNIPPET_MAX:
            return got
        first, end = self._text_bounds(line)
        data = self.data
        lo = min(max(first, offset - _SNIPPET_BEFORE), max(first, end - SNIPPET_MAX))
        hi = min(end, lo + SNIPPET_MAX)
        while lo < hi and data[lo] & 0xC0 == 0x80:  # a window starts and ends on whole characters
            lo += 1
        while hi < end and hi > lo and data[hi] & 0xC0 == 0x80:
            hi -= 1
        text = data[lo:hi].decode("utf-8", "replace")
        return (CUT if lo > first else "") + text + (CUT if hi < end else "")

    def _text_bounds(self, line: int) -> tuple[int, int]:
        """Where a line's text starts and ends, without the spaces around it (once per line)."""
        got = self._bounds.get(line)
        if got is None:
            starts = self.line_starts()
            first, end = starts[line - 1], starts[line] if line < len(starts) else len(self.data)
            raw = self.data[first:end]
            got = self._bounds[line] = (first + len(raw) - len(raw.lstrip(_SPACE)),
                                        end - (len(raw) - len(raw.rstrip(_SPACE))))
        return got
