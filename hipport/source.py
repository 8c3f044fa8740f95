"""Source: a file's bytes plus the facts read once from them (BOM, newline style, line starts)."""

from __future__ import annotations

import bisect

from hipport.parse.lexer import _scan

UTF8_BOM = b"\xef\xbb\xbf"


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


_line_starts = _scan.line_starts if _scan is not None else python_line_starts


class Source:
    def __init__(self, data: bytes, path: str = "<stdin>"):
        self.data = data
        self.path = path
        self._line_starts: list[int] = []
        self._snippets: dict[int, str] = {}

    @property
    def bom(self) -> bytes:
        return UTF8_BOM if self.data.startswith(UTF8_BOM) else b""

    @property
    def newline(self) -> bytes:
        """The file's own line ending, reused for any line we insert."""
        i = self.data.find(b"\n")
        if i > 0 and self.data[i - 1 : i] == b"\r":
            return b"\r\n"
        return b"\n"

    def line_starts(self) -> list[int]:
        if not self._line_starts:
            self._line_starts.extend(_line_starts(self.data))
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

    def snippet(self, line: int) -> str:
        """The line's text without the spaces around it (a finding's snippet), read once per
        line: one long line (generated, minified) may hold thousands of findings."""
        got = self._snippets.get(line)
        if got is None:
            got = self._snippets[line] = self.line_text(line).strip()
        return got
