import pytest

from hipport.edits import Edit, OverlapError, apply_edits
from hipport.source import Source


def test_apply_keeps_untouched_bytes():
    data = b"a\r\n\tcudaFree(p);  \r\n\xe9"
    out = apply_edits(data, [Edit(4, 12, b"hipFree")])
    assert out == b"a\r\n\thipFree(p);  \r\n\xe9"


def test_insertions_at_one_offset_keep_order_and_overlaps_are_refused():
    assert apply_edits(b"xy", [Edit(1, 1, b"A"), Edit(1, 1, b"B")]) == b"xABy"
    with pytest.raises(OverlapError):
        apply_edits(b"abcdef", [Edit(0, 3, b""), Edit(2, 4, b"")])


def test_source_facts():
    s = Source(b"\xef\xbb\xbfline1\r\nline2\r\nlast")
    assert s.bom and s.newline == b"\r\n"
    assert s.line_col(s.data.index(b"line2") + 2) == (2, 3)
    assert s.line_text(3) == "last"
    assert Source(b"a\nb").newline == b"\n"
