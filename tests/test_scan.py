"""The C scanner (parse/_scan.c) against the lexer's regex, its reference: the same tokens (and
the same words, braces of code and name contexts as the Python code finds) on every file in
the repository and on generated input full of the lexer's edge cases."""

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hipport.config import Settings
from hipport.loaders import tools
from hipport.parse import braces, lexer
from hipport.parse.lexer import Lexed, Lexer, Token
from hipport.pipeline import port_source
from hipport.rewrite.names import CUDA_LOOKING, _find_context, cuda_looking_defines

ROOT = Path(__file__).resolve().parents[1]
LEXER = tools(Settings())[1]
SMALL = Lexer([b"cuda", b"cu", b"CU", b"cublas"])

needs_scanner = pytest.mark.skipif(lexer._scan is None, reason="the C scanner is not built")


def scanned(lex: Lexer, data: bytes):
    return lexer._scan.scan(data, lex._prefix_table, Token)


def same_as_reference(lex: Lexer, data: bytes) -> bool:
    """The C scanner's tokens are the regex's; its braces, and each name's context, are what
    Lexed and the renamer find themselves."""
    ids, comments, strings, raw, braces, words, contexts = scanned(lex, data)
    if (ids, comments, strings, raw) != lex.regex_scan(data) or words != [t.text.decode() for t in ids]:
        return False
    records = lexer._scan.directive_records(data, raw, lexer.Directive)
    if records != lexer._directives(data, raw) or any(type(r) is not lexer.Directive for r in records):
        return False  # the records made in C are those lexer._directives makes
    reference = Lexed(data, ids, comments, strings, lex.lex(data).directives)  # nothing precomputed
    return braces == reference.code_braces() and contexts == {
        t.start: _find_context(reference, t.start, t.end) for t in ids}


def test_table_prefixes_use_the_scanner_when_built():
    # Every candidate prefix is a word, so the C scanner takes them wherever it is built.
    assert (LEXER._prefixes is not None) == (lexer._scan is not None)


def test_prefixes_are_sorted_and_prefix_free():
    kept = Lexer([b"cu", b"cuda", b"cudaMalloc", b"cv", b"__shfl"])._prefixes
    if kept is None:
        pytest.skip("the C scanner is not built")
    assert list(kept) == sorted(kept)
    assert b"cu" in kept and b"cuda" not in kept and b"cudaMalloc" not in kept
    assert not any(a != b and b.startswith(a) for a in kept for b in kept)


def test_a_prefix_that_is_not_a_word_falls_back_to_the_regex():
    odd = Lexer([b"cuda", b"operator+"])
    assert odd._prefixes is None
    assert [t.text for t in odd.lex(b"cudaFree(p); // cudaMalloc\n").identifiers] == [b"cudaFree"]


REPO_FILES = sorted(p for d in ("fixtures", "examples", "tests/expected") for p in (ROOT / d).rglob("*")
                    if p.is_file())


@needs_scanner
def test_same_tokens_on_every_repository_file():
    differ = [p.relative_to(ROOT).as_posix() for p in REPO_FILES
              if not same_as_reference(LEXER, p.read_bytes())]
    assert len(REPO_FILES) > 200
    assert differ == []


# The spellings the lexer must tell apart: comment and literal openers, prefixes of raw and
# encoded literals, escapes, line splices, CRLF, directive anchors, numbers with separators
# and exponents, candidate words and near-misses, a BOM, bytes outside ASCII.
PIECES = [b"/", b"*", b'"', b"'", b"\\", b"\n", b"\r", b"#", b"R", b"u", b"8", b"L", b"U", b"(",
          b")", b"<", b">", b".", b"0", b"1", b"e", b"+", b"cuda", b"cu", b"x", b"_", b" ", b"\t",
          b"\xef\xbb\xbf", b"\xff", b"\x00", b"include", b"define", b"if", b"endif", b"cudaMalloc",
          b"__global__", b"threadIdx", b"CU", b"cublas", b"R\"x(", b")x\"", b"\v", b"a" * 17,
          b"//", b"/*", b"*/", b"\\\n", b"\\\r\n", b"\r\n", b"u8\"", b"R\"(", b")\"", b"\n#", b"1'0",
          b"{", b"}", b"#define", b"->", b"::", b"##", b">", b"-", b"cudaFree", b" " * 90,
          b"\n#if X\n", b"\n#ifdef Y\n", b"\n#elif Z\n", b"\n#else\n", b"\n#endif\n", b"\r\n# ifndef W\r\n"]


@needs_scanner
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=40), st.sampled_from([LEXER, SMALL]))
def test_same_tokens_on_generated_input(parts, lex):
    assert same_as_reference(lex, b"".join(parts))


@needs_scanner
def test_tokens_are_the_lexers_token_type():
    ids = scanned(SMALL, b"int x = cudaSuccess;\n")[0]
    assert ids == [Token(8, 19, b"cudaSuccess")] and type(ids[0]) is Token
    assert ids[0].text == b"cudaSuccess"


@pytest.mark.parametrize("lex", [LEXER, SMALL], ids=["tables", "small"])
@pytest.mark.parametrize("lead", [b"", b"  ", b"\t ", b"\xef\xbb\xbf", b"\xef\xbb\xbf "], ids=repr)
def test_a_directive_on_the_first_line_may_be_indented(lex, lead):
    data = lead + b'#include <cuda_runtime.h>\n  #include "cublas_v2.h"\n'
    for raw in [lex.regex_scan(data)] + ([scanned(lex, data)] if lexer._scan else []):
        assert [data[ps + 1 : pe - 1] for _, _, _, ps, pe in raw[3]] == [b"cuda_runtime.h", b"cublas_v2.h"]
    first = lex.lex(data).directives[0]
    assert first.start == (3 if lead.startswith(b"\xef") else 0) and first.name == b"include"


def test_an_indented_include_on_the_first_line_is_ported():
    for lead in (b"  ", b"\xef\xbb\xbf\t"):
        out = port_source(lead + b"#include <cuda_runtime.h>\n", "a.cu", "cuda", Settings()).data
        assert out == lead + b"#include <hip/hip_runtime.h>\n"


@pytest.mark.parametrize("text, context", [
    (b"x = cudaFree(p);", ""),
    (b"obj.cudaFree(p);", "member"),
    (b"obj . /* c */ cudaFree(p);", "member"),
    (b"ptr->\\\n  cudaFree(p);", "member"),
    (b"mylib::cudaFree(p);", "qualified"),
    (b"mylib\t\n ::cudaFree(p);", "qualified"),
    (b"T<int>::cudaFree(p);", "qualified"),
    (b"::cudaFree(p);", ""),
    (b"f(a, ::cudaFree);", ""),
    (b"#define P(x) x##cudaFree\n", "pasted"),
    (b"#define P(x) cudaFree ## x\n", "pasted"),
    (b"a // note\n  .cudaFree;", "member"),
])
def test_name_contexts(text, context):
    at = text.index(b"cudaFree")
    lexed = LEXER.lex(text)
    assert _find_context(Lexed(text, lexed.identifiers, lexed.comments, lexed.strings, lexed.directives),
                         at, at + 8) == context
    if lexer._scan is not None:
        assert scanned(LEXER, text)[6][at] == context


@needs_scanner
@given(st.binary(max_size=200) | st.lists(st.sampled_from([b"\n", b"\r\n", b"x", b"\r"]), max_size=30).map(b"".join))
def test_line_starts_in_c(data):
    from hipport.source import python_line_starts

    assert lexer._scan.line_starts(data) == python_line_starts(data)


def _in_each(words, data):
    return [i for i, w in enumerate(words) if w in data]


@needs_scanner
def test_rule_triggers_found_in_c_as_by_in_on_every_repository_file():
    """Every file kind's rule triggers, found in one pass, are those an `in` test finds."""
    from hipport.analysis import plan_for
    from hipport.files import file_kind
    from hipport.rules import all_rules

    differ, hits = [], 0
    for p in REPO_FILES:
        plan, data = plan_for(all_rules(), file_kind(p.name)), p.read_bytes()
        found = plan.substrings.found(data)
        hits += len(found)
        if found != _in_each(plan.substrings.words, data):  # the triggers, then Guarded's words
            differ.append(p.relative_to(ROOT).as_posix())
    assert hits > 500 and differ == []


# Words that share first bytes, are prefixes of one another, are one byte long or end in a NUL
# (the filter pads the last byte's pair with one).
WORDS = (b"tex", b"texture", b"te", b"<<", b"<<<", b"a", b"ab", b"b\x00", b"\x00", b"\xff\xfe", b"xyz")


@needs_scanner
@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from([b"t", b"e", b"x", b"<", b"a", b"b", b"\x00", b"\xff", b"\xfe", b"y",
                                 b"z", b"texture", b" "]), max_size=30).map(b"".join))
def test_substrings_in_c_as_by_in(data):
    found = lexer.Substrings(WORDS).found(data)
    assert found == _in_each(WORDS, data)
    assert lexer.Substrings(WORDS).any(data) == bool(found)
    first = lexer._scan.words_found(data, lexer.Substrings(WORDS)._table, True)
    assert len(first) == min(1, len(found)) and set(first) <= set(found)


@needs_scanner
@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"t", b"e", b"x", b"<", b"a", b"b", b"\x00", b"\xff", b"\xfe", b"y",
                                 b"z", b"texture", b" "]), max_size=30).map(b"".join),
       st.lists(st.sampled_from([b"t", b"e", b"x", b"<", b"a", b"b", b"\x00", b"\xfe", b"texture", b" "]),
                max_size=30).map(b"".join),
       st.integers(0, 3))
def test_substrings_in_c_as_by_in_on_long_data(head, tail, gap):
    """Long data, words far apart (the pass tests four positions at a time, the last bytes one
    by one): still what `in` and startswith find."""
    data = head + b" " * (4096 + gap) + tail
    assert lexer.Substrings(WORDS).found(data) == _in_each(WORDS, data)
    assert lexer.Substrings(WORDS).at(data) == _places(WORDS, data)


def test_substrings_without_the_scanner(monkeypatch):
    monkeypatch.setattr(lexer, "_scan", None)
    assert lexer.Substrings(WORDS).found(b"x texture <<< a") == [0, 1, 2, 3, 4, 5]
    assert lexer.Substrings(()).found(b"tex") == []
    assert lexer.Substrings(WORDS).any(b"x texture") and not lexer.Substrings(WORDS).any(b"q")
    # each place once, with the first word (in the table's order) that starts there
    assert lexer.Substrings(WORDS).at(b"x texture <<< ab") == [(2, 5), (10, 12), (11, 13), (14, 15)]


def _places(words, data):
    """Substrings.at's answer, from first principles: per start, the first word there."""
    out = []
    for i in range(len(data)):
        for w in words:
            if data.startswith(w, i):
                out.append((i, i + len(w)))
                break
    return out


@needs_scanner
@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from([b"t", b"e", b"x", b"<", b"a", b"b", b"\x00", b"\xff", b"\xfe", b"y",
                                 b"z", b"texture", b" "]), max_size=30).map(b"".join))
def test_substring_places_in_c_as_by_startswith(data):
    assert lexer.Substrings(WORDS).at(data) == _places(WORDS, data)


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from([b"t", b"e", b"x", b"<", b"a", b"b", b"\x00", b"\xff", b"\xfe", b"y",
                                 b"z", b"texture", b" "]), max_size=30).map(b"".join))
def test_substring_places_without_the_scanner_as_by_startswith(data):
    """Without the C scanner, one regex finds the places (a scan of the text per word made a
    file's scans grow with the rules' word lists)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(lexer, "_scan", None)
        assert lexer.Substrings(WORDS).at(data) == _places(WORDS, data)
        assert lexer.Substrings(()).at(data) == []


_BYTES = st.sampled_from(b"ab_\x00\xff").map(lambda c: bytes([c]))


@needs_scanner
@settings(max_examples=2000, deadline=None)
@given(st.lists(st.lists(_BYTES, min_size=1, max_size=4).map(b"".join), min_size=1, max_size=12),
       st.lists(_BYTES, max_size=40).map(b"".join))
def test_any_table_finds_as_by_in_and_startswith(words, data):
    """Tables of any order: one-byte words before or after longer ones with the same start,
    duplicates, many words per pair (the C table sorts them by pair and keeps the index order
    within)."""
    table = lexer.Substrings(words)
    assert table.found(data) == _in_each(words, data)
    assert table.at(data) == _places(words, data)


@given(st.lists(st.sampled_from([b"t", b"e", b"x", b"<", b"a", b"b", b"\x00", b"y", b"texture", b" "]),
                max_size=30).map(b"".join))
def test_substring_places_without_the_scanner(data):
    import unittest.mock

    with unittest.mock.patch.object(lexer, "_scan", None):
        assert lexer.Substrings(WORDS).at(data) == _places(WORDS, data)


@needs_scanner
@pytest.mark.parametrize("words", [(b"",), (b"ok", "str")])
def test_substrings_table_takes_non_empty_bytes(words):
    with pytest.raises((ValueError, TypeError)):
        lexer.Substrings(words)


@needs_scanner
def test_directive_records_refuse_what_scan_never_makes():
    with pytest.raises(TypeError):
        lexer._scan.directive_records(b"#if X\n", [(0, 1, 3)], lexer.Directive)
    with pytest.raises(ValueError):
        lexer._scan.directive_records(b"#if X\n", [(0, 1, 99, -1, -1)], lexer.Directive)
    with pytest.raises(TypeError):
        lexer._scan.directive_records(b"#if X\n", [(0, 1, 3, -1, -1)], int)
    records = lexer._scan.directive_records(b"#if X\n#else\n#endif\n#x\n", [(0, 1, 3, -1, -1), (5, 7, 11, -1, -1),
                                                                         (11, 13, 18, -1, -1), (18, 20, 21, -1, -1)],
                                            lexer.Directive)
    assert [(r.start, r.end, r.name, r.branch) for r in records] == [
        (0, 5, b"if", ((0, 0),)), (6, 11, b"else", ((0, 1),)), (12, 18, b"endif", ((0, 1),)), (19, 21, b"x", ())]


# CMake: the C parse against cmake.python_parse, on every CMake file here and on generated
# input made of what its steps tell apart (comments, bracket and quoted arguments, escapes,
# nesting, unterminated ends, bytes no step takes).
CMAKE_FILES = sorted(p for p in REPO_FILES if p.name == "CMakeLists.txt" or p.suffix == ".cmake")
CMAKE_PIECES = [b"add_library", b"set", b"PROJECT", b"_x9", b"9", b"(", b")", b" ", b"\t", b"\n", b"\r\n",
                b"\f", b"\v", b"#", b"#[[", b"#[=[", b"]]", b"]=]", b"]", b"[", b"[[", b"[==[", b"]==]", b"=",
                b'"', b"\\", b"\\\n", b'\\"', b"${CUDA}", b"$<", b">", b"a.cu", b";", b"\xff", b"\x00"]


@needs_scanner
def test_cmake_parse_in_c_on_every_repository_cmake_file():
    from hipport.parse import cmake

    assert len(CMAKE_FILES) > 10
    differ = [p.relative_to(ROOT).as_posix() for p in CMAKE_FILES
              if lexer._scan.cmake_parse(p.read_bytes(), cmake.Command, cmake.Arg) != cmake.python_parse(p.read_bytes())]
    assert differ == []


@needs_scanner
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(CMAKE_PIECES), max_size=40))
def test_cmake_parse_in_c_on_generated_input(parts):
    from hipport.parse import cmake

    data = b"".join(parts)
    commands, comments = lexer._scan.cmake_parse(data, cmake.Command, cmake.Arg)
    assert (commands, comments) == cmake.python_parse(data)
    assert all(type(c) is cmake.Command and all(type(a) is cmake.Arg for a in c.args) for c in commands)


def test_cmake_parse_without_the_scanner(monkeypatch):
    from hipport.parse import cmake

    data = b'project(x CUDA) # [[\nset(A "b\\"c" [=[d]=])\n'
    with_scanner = cmake.parse(data)
    monkeypatch.setattr(cmake, "_scan", None)
    cmake.parse.cache_clear()  # it keeps the last file's reading
    assert cmake.parse(data) == with_scanner == cmake.python_parse(data)
    assert [c.name for c in with_scanner[0]] == ["project", "set"]


# #define records: the C reading against Lexed.python_defines, on every file here and on
# generated directives (parameter lists, continuations, CRLF, names glued to what follows).
DEFINE_PIECES = [b"#", b"define", b" ", b"\t", b"\n", b"\r\n", b"\\\n", b"\\\r\n", b"X", b"_y1", b"9", b"(",
                 b")", b",", b" a ", b"\v", b"\f", b"\n#define ", b"\n  #  define\t", b"\n#undef ", b"//", b"/*",
                 b"*/", b'"', b"\xff"]


def _defines_agree(data: bytes) -> bool:
    lexed = LEXER.lex(data)
    records = lexer._scan.define_records(data, lexed.directives, lexer.MacroDef)
    names = lexer._scan.define_records(data, lexed.directives, lexer.MacroDef, True)
    reference = lexed.python_defines()
    return records == reference and names == [m.name for m in reference] \
        and all(type(m) is lexer.MacroDef for m in records)


@needs_scanner
def test_define_records_in_c_on_every_repository_file():
    assert [p.relative_to(ROOT).as_posix() for p in REPO_FILES if not _defines_agree(p.read_bytes())] == []


@needs_scanner
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(DEFINE_PIECES), max_size=40))
def test_define_records_in_c_on_generated_input(parts):
    assert _defines_agree(b"".join(parts))


def test_defines_without_the_scanner(monkeypatch):
    data = b"#define A(x, y) x\n#define B \\\r\n 2\r\n# define C\n"
    with_scanner = LEXER.lex(data)
    monkeypatch.setattr(lexer, "_scan", None)
    without = Lexer([b"cuda"]).lex(data)
    assert without.defines == with_scanner.defines == with_scanner.python_defines()
    assert without.defined_names == {b"A", b"B", b"C"}
    assert [m.params for m in without.defines] == [(b"x", b"y"), None, None]


def test_a_scanner_built_from_an_older_source_is_not_used():
    """An editable install not built again since _scan.c gained a function would fail where
    hipport calls it; such a scanner is left unused, as if none were built (same results)."""
    import re
    import types

    source = (Path(lexer.__file__).parent / "_scan.c").read_text()
    table = source[source.index("static PyMethodDef methods[] = {"):]
    functions = set(re.findall(r'\{"(\w+)", [^{}]*?METH_', table[: table.index("};")]))
    types_ = set(re.findall(r'PyModule_AddObject\(m, "(\w+)"', source))  # Regions
    assert functions | types_ == set(lexer.SCANNER_FUNCTIONS)
    full = types.SimpleNamespace(**{name: len for name in lexer.SCANNER_FUNCTIONS})
    assert lexer.complete_scanner(full) is full
    older = types.SimpleNamespace(**{name: len for name in lexer.SCANNER_FUNCTIONS if name != "lane_math"})
    assert lexer.complete_scanner(older) is None
    assert lexer.complete_scanner(None) is None


def test_the_version_line_says_whether_the_c_scanner_scans(monkeypatch, capsys):
    """pip builds the scanner only where a C compiler and the Python headers are, and a failed
    optional build is easy to miss in its output: `hipport --version` tells which scan runs
    (the Python one takes about three times as long), and why not the C one."""
    from hipport import __version__, cli

    def version() -> str:
        with pytest.raises(SystemExit) as stop:
            cli.main(["--version"])
        assert stop.value.code in (0, None)
        return capsys.readouterr().out

    monkeypatch.setattr(lexer, "_scan", object())
    assert version() == f"hipport, version {__version__} (C scanner: yes)\n"
    monkeypatch.setattr(lexer, "_scan", None)
    monkeypatch.setattr(lexer, "_STALE", False)
    missing = version()
    assert missing.startswith(f"hipport, version {__version__} (C scanner: no, not built at install")
    assert "C compiler" in missing and "slower" in missing
    monkeypatch.setattr(lexer, "_STALE", True)
    assert "older _scan.c" in version()


# cuda_looking_defines searches all of a file's #defined names at once: the names whose start
# CUDA_LOOKING matches, sorted, as a test of each name finds them.
@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["cuda", "Cuda", "cu", "CU", "_", "X", "x", "CUDA_", "nccl",
                                          "NVTX_", "my", "9"]), min_size=1, max_size=4), max_size=10))
def test_cuda_looking_defines_as_by_a_test_per_name(names):
    data = "".join(f"#define {'_' if n[0].isdigit() else ''}{n} 1\n"
                   for n in ("".join(parts) for parts in names)).encode()
    lexed = LEXER.lex(data)
    expected = sorted(n.decode() for n in lexed.defined_names if CUDA_LOOKING.match(n))
    assert list(cuda_looking_defines(lexed)) == expected


def _outcome(method, offset):
    try:
        return method(offset)
    except IndexError:
        return IndexError


def _regions_agree(data: bytes, offsets) -> bool:
    """Where an offset sits, asked of the C Regions a scanned Lexed has bound and of Lexed's
    own Python methods: the same answers (and the same IndexError past the data's end)."""
    fast = LEXER.lex(data)
    slow = Lexed(data, fast.identifiers, fast.comments, fast.strings, fast.directives)
    brackets = [lambda lexed, at: lexed.match_back(at, b"[", b"]"), lambda lexed, at: lexed.match_back(at, b"{", b"}")]
    return all(_outcome(getattr(fast, name), at) == _outcome(getattr(slow, name), at)
               for name in lexer.REGION_METHODS for at in offsets) and \
        all(ask(fast, at) == ask(slow, at) for ask in brackets for at in offsets)


@needs_scanner
def test_a_scanned_lexed_asks_regions_in_c():
    lexed = LEXER.lex(b"int x; // c\n")
    for name in lexer.REGION_METHODS:
        assert type(getattr(lexed, name)).__name__ == "builtin_function_or_method", name
        assert getattr(Lexed, name).__module__ == "hipport.parse.lexer"  # the reference stays
    assert lexed.previous_code(12) == 6 and lexed.next_code(6) == 12
    assert lexed.in_comment_or_string(8) and not lexed.in_plain_code(8) and lexed.in_plain_code(4)


def _region_edges(lexed):
    """The offsets where the answers change, and those next to them."""
    edges = {0, len(lexed.data)}
    for spans in (lexed.comments, lexed.strings, [(d.start, d.end) for d in lexed.directives],
                  [(t.start, t.end) for t in lexed.identifiers]):
        for s, e in spans:
            edges.update((s, e))
    return sorted({at + step for at in edges for step in (-2, -1, 0, 1, 2)})


@needs_scanner
def test_regions_in_c_as_lexed_on_every_repository_file():
    differ = [p.relative_to(ROOT).as_posix() for p in REPO_FILES
              if not _regions_agree(data := p.read_bytes(), _region_edges(LEXER.lex(data)))]
    assert differ == []


@needs_scanner
@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=40))
def test_regions_in_c_as_lexed_at_every_offset_of_generated_input(parts):
    data = b"".join(parts)
    assert _regions_agree(data, range(-3, len(data) + 4))


@needs_scanner
def test_regions_refuse_what_the_scanner_never_makes():
    with pytest.raises(TypeError):
        lexer._scan.Regions(b"x", [[0, 1]], [], [])  # a list where a (start, end) tuple goes
    with pytest.raises(TypeError):
        lexer._scan.Regions(b"x", [], [], ())
    regions = lexer._scan.Regions(b"x", [], [], [])
    with pytest.raises(TypeError):
        regions.next_code("1")
    with pytest.raises(TypeError):
        regions.bind([])


@needs_scanner
def test_regions_bind_lexeds_methods_by_name():
    namespace = {}
    lexer._scan.Regions(b"x", [], [], []).bind(namespace)
    assert sorted(namespace) == sorted(lexer.REGION_METHODS)
    assert namespace["next_code"](0) == 0


@needs_scanner
def test_regions_sort_spans_given_out_of_order_as_lexed_does():
    data = b"a 'x' /*c*/ \"y\" // d\n#define Q 1\n"
    comments, strings = [(6, 11), (18, 22)], [(12, 15), (2, 5)]
    slow = Lexed(data, [], comments, strings, LEXER.lex(data).directives)
    fast = Lexed(data, [], comments, strings, slow.directives)
    lexer._scan.Regions(data, comments, strings, slow.directives).bind(fast.__dict__)
    for name in lexer.REGION_METHODS:
        assert [_outcome(getattr(fast, name), at) for at in range(-2, len(data) + 3)] == \
            [_outcome(getattr(slow, name), at) for at in range(-2, len(data) + 3)], name


@needs_scanner
@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from([b"{", b"}", b"x", b"{{", b"}}"]), max_size=40).map(b"".join), st.data())
def test_brace_pairs_in_c_as_in_python(data, draw):
    offsets = [i for i, c in enumerate(data) if c in b"{}"]
    offsets = draw.draw(st.sampled_from([offsets, offsets[::2], offsets[1:]]))
    *pairs, innermost = lexer._scan.brace_pairs(data, offsets)
    assert tuple(pairs) == braces.pair_braces(data, offsets)
    reference = braces.Braces.__new__(braces.Braces)  # innermost() reads nothing else
    reference.opens, reference.closes, reference.parents, _ = pairs
    assert [innermost(at) for at in range(-1, len(data) + 2)] == \
        [braces.Braces.innermost(reference, at) for at in range(-1, len(data) + 2)]


@needs_scanner
def test_brace_pairs_refuse_an_offset_outside_the_data():
    with pytest.raises(IndexError):
        lexer._scan.brace_pairs(b"{}", [0, 2])
    *pairs, innermost = lexer._scan.brace_pairs(b"{x{}", [0, 2, 3])
    assert pairs == [[0, 2], [4, 3], [-1, 0], False]
    assert [innermost(at) for at in range(5)] == [0, 0, 1, 1, 0]
    with pytest.raises(TypeError):
        innermost(None)


@needs_scanner
@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from([b" ", b"\t", b"\n", b"\r", b"a", b"_", b"1", b"(", b"\xff", b"$", b"ab c"]),
                max_size=30).map(b"".join), st.integers(-4, 40), st.sampled_from([0, 1, 3, 8, 64, 100]))
def test_word_before_in_c_as_in_python(data, end, span):
    assert lexer._scan.word_before(data, end, span) == braces.python_word_before(data, end, span)
    assert lexer._scan.word_before(data, end) == braces.python_word_before(data, end)


@needs_scanner
def test_match_back_takes_single_bytes():
    lexed = LEXER.lex(b"f(a[1]) // )\n")
    assert lexed.match_back(6) == 1 and lexed.match_back(5, b"[", b"]") == 3
    assert lexed.match_back(11) == 1 and lexed.match_back(0) is None  # the comment's `)` is passed over
    with pytest.raises(ValueError):
        lexed.match_back(6, b"((", b")")
    with pytest.raises(TypeError):
        lexed.match_back()


def test_braces_without_the_scanner_pair_as_with_it(monkeypatch):
    data = b"namespace a { void f() { if (x) { } } }\n} int g() { return 1; }\n"
    lexed = LEXER.lex(data)
    built = braces.Braces(lexed)
    monkeypatch.setattr(braces, "_scan", None)
    python = braces.Braces(lexed)
    assert (python.opens, python.closes, python.parents, python.balanced) == \
        (built.opens, built.closes, built.parents, built.balanced) == ([12, 23, 32], [38, 36, 34], [-1, 0, 1], False)
    assert [python.innermost(at) for at in range(len(data) + 1)] == [built.innermost(at) for at in range(len(data) + 1)]


_WORDISH = st.sampled_from([b"a", b"b", b"ab", b"_", b"0", b" ", b".", b"\xff", b"\x00", b"\n"])


@needs_scanner
@given(st.lists(_WORDISH, max_size=40).map(b"".join), st.lists(_WORDISH, max_size=3).map(b"".join))
def test_word_places_in_c_as_in_python(data, word):
    """starts_of, whole_word_starts and the word index: the C scanner's answers are the Python
    references' (overlapping places, boundaries at either end, the empty word, non-ASCII bytes)."""
    from hipport import patterns

    assert lexer._scan.starts_of(data, word) == patterns.starts_of(data, word)
    assert lexer._scan.whole_word_starts(data, word) == patterns.whole_word_starts(data, word)
    index = lexer._scan.word_index(data)
    assert index == patterns.python_word_index(data)
    for w, starts in index.items():  # each run of word bytes is a whole word, found where it stands
        assert starts == patterns.whole_word_starts(data, w)


@needs_scanner
def test_word_places_in_c_on_every_repository_file():
    from hipport import patterns

    for path in sorted(ROOT.glob("fixtures/**/*.cu*")) + sorted(ROOT.glob("hipport/parse/*.c")):
        data = path.read_bytes()
        index = lexer._scan.word_index(data)
        assert index == patterns.python_word_index(data), path
        for w in list(index)[:50] + [b"cuda", b"e", b"x"]:
            assert lexer._scan.whole_word_starts(data, w) == patterns.whole_word_starts(data, w), (path, w)
            assert lexer._scan.starts_of(data, w) == patterns.starts_of(data, w), (path, w)


@needs_scanner
def test_word_places_take_bytes_only():
    for call in (lambda: lexer._scan.starts_of("text", b"t"), lambda: lexer._scan.whole_word_starts(b"t", "t"),
                 lambda: lexer._scan.word_index(bytearray(b"x")), lambda: lexer._scan.starts_of(b"x")):
        with pytest.raises(TypeError):
            call()


def test_word_starts_answer_the_same_with_and_without_the_scanner(monkeypatch):
    """The rules' word places (the scan per word, then the index past _SCANS_BEFORE_INDEX
    words) are the same from the C functions and from the Python references."""
    from hipport import patterns
    from hipport.rules import _syntax as sx

    data = max(ROOT.glob("fixtures/**/*.cu"), key=lambda p: p.stat().st_size).read_bytes()
    words = sorted(patterns.python_word_index(data))[: sx._SCANS_BEFORE_INDEX + 10] + [b"absent_word"]
    expected = [patterns.whole_word_starts(data, w) for w in words]
    assert [sx._WordStarts(data)(w) for w in words] == expected
    monkeypatch.setattr(sx, "whole_word_starts", patterns.whole_word_starts)
    monkeypatch.setattr(sx, "word_index", patterns.python_word_index)
    assert [sx._WordStarts(data)(w) for w in words] == expected
