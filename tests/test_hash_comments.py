"""parse/hash_comments: the `#` comments of Python and build files, one scanner for the rules,
the build-file rewriters and inline suppressions."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hipport.analysis import context_for
from hipport.check import check_source
from hipport.config import Settings
from hipport.parse.hash_comments import comment_spans
from hipport.rules import all_rules
from hipport.suppress import find_suppressions


def comments(kind: str, text: bytes) -> list[bytes]:
    return [text[a:b] for a, b in comment_spans(kind, text)]


def test_python_comments_skip_strings():
    text = b"a = '#x'  # one\nb = \"\"\"\n# not\n\"\"\"  # two\r\nc = 'it\\'s # in'\n"
    assert comments("python", text) == [b"# one", b"# two"]
    assert comments("setup.py", text) == comments("python", text)


def test_cmake_comments_skip_quoted_and_bracket_arguments():
    text = (b'set(A "-arch=sm_80 # kept")  # one\n'
            b"#[==[ two\nlines ]==]\n"
            b"set(B [=[ # in a bracket ]=])\n"
            b'set(C "a\\"#b")\n')
    assert comments("cmake", text) == [b"# one", b"#[==[ two\nlines ]==]"]


def test_cmake_comments_end_before_the_line_end():
    """The CMake parser's comments (parse/cmake) end at the `\n`; as every kind's, a `#`
    comment here ends before `\r` too, and a bracket comment keeps what it holds."""
    text = b"# one\r\nset(A x) # two\r\n#[[ three\r\n ]]\r\n# four\rfive\n# six\r"
    assert comments("cmake", text) == [b"# one", b"# two", b"#[[ three\r\n ]]", b"# four", b"# six"]


def test_cmake_comments_are_the_parsers():
    """The rules and suppressions read the comments the rewriter reads: those of the CMake
    parser (its reading of the file is the one kept for both)."""
    from hipport.parse import cmake

    text = b'project(p CUDA) # a\nset(B "# not" [=[ # not ]=]) #[[ b ]]\n'
    assert comment_spans("cmake", text) == cmake.parse(text)[1]
    assert comments("cmake", text) == [b"# a", b"#[[ b ]]"]


def test_a_makefile_comment_goes_on_past_a_backslash_at_the_line_end():
    text = b"A = 1 # one \\\nB = 2\nC = 3 \\# no\nD = 4#three\n"
    assert comments("make", text) == [b"# one \\\nB = 2", b"#three"]


def test_the_makefile_scanner_agrees_with_make(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("no make on this machine")
    makefile = tmp_path / "Makefile"
    makefile.write_bytes(b"# a comment \\\nX := 1\nY := 2 # \\\nZ := 3\nall: ; @echo '[$(X)][$(Y)][$(Z)]'\n")
    out = subprocess.run(["make", "-s", "-f", str(makefile)], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[][2 ][]"  # both continued lines are comment
    data = makefile.read_bytes()
    starts = [0] + [i + 1 for i, c in enumerate(data) if c == ord("\n")]
    continued = {n for n, s in enumerate(starts) for a, b in comment_spans("make", data) if a < s < b}
    assert continued == {1, 3}  # the lines that begin inside a comment: X's and Z's


def test_dockerfile_comments_are_whole_lines():
    text = b"# one\nFROM nvidia/cuda:12.1 AS base\n  # two\nRUN echo '#not'\n"
    assert comments("docker", text) == [b"# one", b"# two"]
    assert comment_spans("docker", text)[1][0] == text.index(b"# two")


def test_requirements_comments_start_a_line_or_follow_a_space():
    text = b"# one\ntorch==2.3 # two\nhttps://example.com/x#egg=y\n\tapex\t# three\n"
    assert comments("requirements", text) == [b"# one", b"# two", b"# three"]


def test_toml_literal_strings_have_no_escapes():
    text = (b"path = 'C:\\dir\\' # one\n"
            b'name = "a \\" # in" # two\n'
            b"doc = '''\n# not\n''' # three\n"
            b'more = """ \\""" # in """ # four\n')
    assert comments("pyproject", text) == [b"# one", b"# two", b"# three", b"# four"]


def test_unterminated_strings_and_brackets_run_to_the_end():
    assert comments("python", b"x = '''# in\n# still") == []
    assert comments("cmake", b"#[[ open\n# still") == [b"#[[ open\n# still"]
    assert comments("cmake", b"set(A [[ # in") == []


def test_other_kinds_have_no_hash_comments():
    assert comment_spans("cuda", b"#include <x>\n") == comment_spans("cpp", b"# x\n") == []


def test_suppressions_and_rules_read_the_same_comments():
    """A suppression after a TOML literal string ending in a backslash is read (before, the
    string ran on through the comment, read with Python's escapes)."""
    text = b"[tool.x]\npath = 'C:\\dir\\' # hipport: ignore[build-flags]\n"
    ctx = context_for(text, "pyproject.toml", "pyproject", Settings())
    assert ctx.comments == comment_spans("pyproject", text)
    assert [text[a:b] for a, b in ctx.comments] == [b"# hipport: ignore[build-flags]"]
    [found] = find_suppressions(text, lambda: ctx.comments)
    assert found.names == ("build-flags",) and found.line == 2


def test_a_flag_on_a_continued_makefile_comment_is_not_reported():
    data = b"NVCC = nvcc\n# the old targets: \\\nNVCC_FLAGS += -arch=sm_70\nNVCC_FLAGS += -arch=sm_80\n"
    checked = check_source(data, "Makefile", "make", Settings(), all_rules())
    findings = [f for f in checked.findings if f.rule == "HP1101"]
    assert [f.line for f in findings] == [4]


@pytest.mark.parametrize(("rel", "kind", "text"), [
    ("Makefile", "make", b"# hipport: ignore[build-flags]\nNVCC = nvcc -arch=sm_80  # the GPU\nLIBS = -lcudart\n"),
    ("requirements.txt", "requirements", b"# hipport: ignore\ntorch==2.3.0+cu121  # pinned\ncupy-cuda12x\n"),
    ("Dockerfile", "docker", b"# hipport: ignore\nFROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n# nvcc -arch=sm_80\nRUN nvcc -arch=sm_80 x.cu\n"),
])
def test_a_build_file_s_comments_are_found_once_for_rules_suppressions_and_rewriter(rel, kind, text, monkeypatch):
    """The file's context holds its comments (analysis.FileContext.comments) and their index
    (comment_index): the rewriter and the suppressions read what the rules found, where each
    scanned the file again, and rules and rewriter ask one index."""
    from hipport import analysis
    from hipport.parse import hash_comments
    from hipport.pipeline import port_source

    scanned, indexed = [], []

    def counted(kind_, data):
        scanned.append(kind_)
        return comment_spans(kind_, data)

    class CountedSpans(hash_comments.Spans):
        def __init__(self, spans):
            indexed.append(1)
            super().__init__(spans)

    monkeypatch.setattr(hash_comments, "comment_spans", counted)
    monkeypatch.setattr(analysis, "comment_spans", counted, raising=False)
    monkeypatch.setattr(analysis, "Spans", CountedSpans)
    done = port_source(text, rel, kind, Settings())
    assert scanned == [kind] and len(indexed) == 1
    assert done.result.changed  # the rewriter ran, and left the comments as they were
    assert all(text[a:b] in done.data for a, b in comment_spans(kind, text))


def _shell_reference(data: bytes) -> list[tuple[int, int]]:
    """Shell comments from first principles, a byte at a time: a `#` that starts a word
    outside quotes, to the line's end (the rewriter's scanner before parse/hash_comments)."""
    start = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    out, i, quote = [], start, b""
    while i < len(data):
        c = data[i:i + 1]
        if quote:
            if c == b"\\" and quote == b'"':
                i += 2
                continue
            if c == quote:
                quote = b""
        elif c in (b"'", b'"'):
            quote = c
        elif c == b"\\":
            i += 2
            continue
        elif c == b"#" and (i == start or data[i - 1:i] in (b" ", b"\t", b"\n", b";", b"(", b"&", b"|")):
            e = data.find(b"\n", i)
            e = len(data) if e < 0 else e
            out.append((i, e - (data[e - 1:e] == b"\r")))
            i = e
            continue
        i += 1
    return out


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from([b"#", b" ", b"\t", b"\n", b"\r\n", b"'", b'"', b"\\", b";", b"(", b"&", b"|",
                                 b"$", b"x", b"echo", b"\xef\xbb\xbf"]), max_size=30).map(b"".join))
def test_shell_comments_as_a_shell_reads_them(data):
    assert comment_spans("shell", data) == _shell_reference(data)


def test_shell_comments_start_words_only():
    text = b"\xef\xbb\xbf# top\necho a#b '#' \"#\" \\# $# ${#x} x;# end\r\n"
    assert comments("shell", text) == [b"# top", b"# end"]


def test_a_source_s_comments_come_in_order():
    """FileContext.comments gives the lexer's spans as they are: in order, as Spans and the
    suppressions want them (the lexer's own previous_code bisects them too)."""
    from pathlib import Path

    from hipport.analysis import context_for
    from hipport.files import file_kind

    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    seen = 0
    for path in sorted(fixtures.rglob("*")):
        kind = file_kind(path.name) if path.is_file() else None
        if kind in ("cuda", "cpp"):
            ctx = context_for(path.read_bytes(), path.name, kind, Settings())
            assert ctx.comments == sorted(ctx.comments), path
            seen += len(ctx.comments)
    assert seen > 100
