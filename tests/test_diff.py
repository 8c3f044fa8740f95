"""`port --diff`'s unified diff, made from the splices that port a file: the hunks diff -u
prints (difflib's where its matching finds the changed lines), lines ended by `\\n` alone, and
a diff that patch(1) applies to give the port."""

from __future__ import annotations

import difflib
import shutil
import subprocess
from pathlib import Path

import pytest

from hipport.edits import splice
from hipport.emit import unified_diff

ROOT = Path(__file__).resolve().parents[1]


def difflib_diff(old: bytes, new: bytes) -> str:
    def lines(data: bytes) -> list[str]:
        return data.decode("utf-8", "surrogateescape").splitlines(keepends=True)

    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in difflib.unified_diff(lines(old), lines(new), "a/f.cu", "b/f.cu"))


def at(data: bytes, word: bytes, text: bytes, nth: int = 0) -> tuple[int, int, bytes]:
    start = -1
    for _ in range(nth + 1):
        start = data.index(word, start + 1)
    return start, start + len(word), text


BODY = b"".join(b"int v%d = %d;\n" % (i, i) for i in range(40))


@pytest.mark.parametrize("name, data, edits", [
    ("one word", BODY, lambda d: [at(d, b"v3 ", b"w3 ")]),
    ("two near", BODY, lambda d: [at(d, b"v3 ", b"w3 "), at(d, b"v8 ", b"w8 ")]),
    ("two far", BODY, lambda d: [at(d, b"v3 ", b"w3 "), at(d, b"v30", b"w30")]),
    ("a line put first", BODY, lambda d: [(0, 0, b"#include <hip/hip_runtime.h>\n")]),
    ("a line put in", BODY, lambda d: [at(d, b"int v5", b"int extra;\nint v5")]),
    ("a line gone", BODY, lambda d: [(d.index(b"int v7"), d.index(b"int v8"), b"")]),
    ("two lines in one edit", BODY, lambda d: [(d.index(b"v3 "), d.index(b"v4 ") + 2, b"a3 = 3;\nint a4")]),
    ("at the end, no newline", BODY + b"int last = 1;", lambda d: [at(d, b"last", b"end")]),
    ("crlf", BODY.replace(b"\n", b"\r\n"), lambda d: [at(d, b"v9 ", b"w9 ")]),
    ("first and last line", BODY, lambda d: [at(d, b"v0 ", b"w0 "), at(d, b"v39", b"w39")]),
])
def test_the_diff_is_difflibs_where_difflib_finds_the_changed_lines(name, data, edits):
    spliced = tuple(edits(data))
    assert unified_diff("f.cu", "f.cu", data, spliced) == difflib_diff(data, splice(data, spliced)), name


def test_nothing_changed_is_no_diff():
    assert unified_diff("f.cu", "f.cu", BODY, ()) == ""
    assert unified_diff("f.cu", "f.cu", BODY, (at(BODY, b"v3 ", b"v3 "),)) == ""


def test_lines_an_edit_leaves_alike_at_either_end_are_context():
    data = b"f(\n  x,\n  y);\nint k;\n"
    got = unified_diff("f.cu", "f.cu", data, ((0, data.index(b";"), b"f(\n  x,\n  z)"),))
    assert got.splitlines()[2:] == ["@@ -1,4 +1,4 @@", " f(", "   x,", "-  y);", "+  z);", " int k;"]
    assert got == difflib_diff(data, b"f(\n  x,\n  z);\nint k;\n")


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs patch(1)")
def test_lines_end_at_newline_alone(tmp_path):
    """A form feed, a lone carriage return or a Unicode line separator is inside a line for
    patch(1); difflib's lines ended there too, so its hunks did not apply."""
    data = b"a\x0cb\nc\rd\ne\xe2\x80\xa8f\n" + BODY
    spliced = (at(data, b"v0 ", b"w0 "),)
    diff = unified_diff("f.cu", "f.cu", data, spliced)
    assert "a\x0cb\n" in diff
    (tmp_path / "f.cu").write_bytes(data)
    subprocess.run(["patch", "-s", "-p1"], cwd=tmp_path, input=diff.encode("utf-8", "surrogateescape"), check=True)
    assert (tmp_path / "f.cu").read_bytes() == splice(data, spliced)
    with pytest.raises(subprocess.CalledProcessError):  # the diff difflib made
        (tmp_path / "f.cu").write_bytes(data)
        subprocess.run(["patch", "-s", "-p1", "--dry-run"], cwd=tmp_path, capture_output=True, check=True,
                       input=difflib_diff(data, splice(data, spliced)).encode("utf-8", "surrogateescape"))
