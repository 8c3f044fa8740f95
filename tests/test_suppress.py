"""Suppressions (line, line above, file-level, by category / code / name, bare, unused ->
HP1901, only in real comments) and baselines (matched by line text, with counts).

The rules here are small test rules registered for the test and removed after, so the tests do
not depend on what the real rule modules flag."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hipport import suppress
from hipport.check import check_source
from hipport.config import Settings
from hipport.errors import HipportError
from hipport.files import file_kind
from hipport.rules import REGISTRY, Hit, load_rule_modules, rule
from clitools import TEST_RULE_DOC, free_code

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = Settings()
DOC = TEST_RULE_DOC




@pytest.fixture(scope="module")
def rules():
    """Three test rules: `% 32` (warp-size, warning), `asm(` (inline-ptx, error) and
    `-arch=sm_NN` in CMake/Makefiles/Python (build-flags, warning)."""
    load_rule_modules()
    mod32, asm, arch = re.compile(rb"%\s*32\b"), re.compile(rb"\basm\s*\("), re.compile(rb"-arch=sm_\d+")

    def lane_mod_32(ctx):
        for m in ctx.code_matches(mod32):
            yield Hit(m.start(), m.end(), "lane math assumes 32 lanes", "use warpSize")

    def asm_call(ctx):
        for m in ctx.code_matches(asm):
            yield Hit(m.start(), m.end(), "inline assembly")

    def arch_flag(ctx):
        for m in arch.finditer(ctx.data):  # build files: a plain search, comments included
            yield Hit(m.start(), m.end(), "nvcc architecture flag")

    made = {}
    for func, name, category, severity, kinds in (
        (lane_mod_32, "test-lane-mod-32", "warp-size", "warning", ("cuda", "cpp")),
        (asm_call, "test-asm-call", "inline-ptx", "error", ("cuda", "cpp")),
        (arch_flag, "test-arch-flag", "build-flags", "warning", ("cmake", "make", "python", "setup.py")),
    ):
        func.__doc__ = DOC
        code = free_code(category)
        rule(code=code, name=name, category=category, severity=severity, effort="low", kinds=kinds)(func)
        made[name] = REGISTRY[code]
    yield made
    for r in made.values():
        REGISTRY.pop(r.code)


def run(rules, text: str | bytes, path: str = "k.cu", extra=()):
    data = text.encode() if isinstance(text, str) else text
    selected = list(rules.values()) + [REGISTRY["HP1901"], *extra]
    return check_source(data, path, file_kind(path.rsplit("/", 1)[-1]), SETTINGS, selected)


def codes(result):
    return [(f.line, f.rule) for f in result.findings]


def test_without_suppression_the_rules_flag(rules):
    res = run(rules, "int a = i % 32;\nasm(\"nop\");\n")
    assert codes(res) == [(1, rules["test-lane-mod-32"].code), (2, rules["test-asm-call"].code)]
    assert res.status == "checked" and res.suppressed == 0


@pytest.mark.parametrize("name", ["warp-size", "test-lane-mod-32", "CODE", "code-lowercase"])
def test_same_line_by_category_code_or_name(rules, name):
    code = rules["test-lane-mod-32"].code
    name = {"CODE": code, "code-lowercase": code.lower()}.get(name, name)
    res = run(rules, f"int a = i % 32;  // hipport: ignore[{name}] lane math checked\n")
    assert codes(res) == [] and res.suppressed == 1


def test_line_above(rules):
    res = run(rules, "// hipport: ignore[warp-size] reviewed\nint a = i % 32;\nint b = i % 32;\n")
    assert codes(res) == [(3, rules["test-lane-mod-32"].code)]


def test_stacked_comments_above(rules):
    text = ("// hipport: ignore[warp-size] reviewed\n"
            "// hipport: ignore[inline-ptx] reviewed\n"
            "   // a note between\n"
            "int a = i % 32; asm(\"nop\");\n")
    assert codes(run(rules, text)) == []


def test_blank_line_breaks_line_above(rules):
    res = run(rules, "// hipport: ignore[warp-size] reviewed\n\nint a = i % 32;\n")
    assert codes(res) == [(1, "HP1901"), (3, rules["test-lane-mod-32"].code)]


def test_trailing_comment_covers_only_its_line(rules):
    res = run(rules, "int a = i % 32;  // hipport: ignore[warp-size]\nint b = i % 32;\n")
    assert codes(res) == [(2, rules["test-lane-mod-32"].code)]


def test_block_comment_before_code(rules):
    assert codes(run(rules, "/* hipport: ignore[warp-size] */ int a = i % 32;\n")) == []


def test_only_named_category_is_suppressed(rules):
    res = run(rules, "int a = i % 32; asm(\"nop\"); // hipport: ignore[warp-size]\n")
    assert codes(res) == [(1, rules["test-asm-call"].code)]


def test_several_names(rules):
    ptx = rules["test-asm-call"].code
    res = run(rules, f"int a = i % 32; asm(\"nop\"); // hipport: ignore[warp-size, {ptx}] both ok\n")
    assert codes(res) == [] and res.suppressed == 2


def test_file_level_anywhere(rules):
    text = "int a = i % 32;\nasm(\"nop\");\nint b = i % 32;\n// hipport: ignore-file[warp-size] whole file\n"
    res = run(rules, text)
    assert codes(res) == [(2, rules["test-asm-call"].code)] and res.suppressed == 2


def test_bare_ignore_covers_every_rule(rules):
    assert codes(run(rules, "int a = i % 32; asm(\"nop\"); // hipport: ignore\n")) == []
    assert codes(run(rules, "int a = i % 32;\n/* hipport: ignore-file */\nasm(\"x\");\n")) == []


def test_unused_suppression_is_reported(rules):
    res = run(rules, "int a = 0;  // hipport: ignore[warp-size] stale\n")
    (f,) = res.findings
    assert (f.line, f.rule, f.category, f.severity) == (1, "HP1901", "suppression", "info")
    assert "warp-size" in f.message and f.column == 16  # the marker's column
    assert f.snippet == "int a = 0;  // hipport: ignore[warp-size] stale"


def test_partly_unused_suppression_names_the_unused_part(rules):
    res = run(rules, "int a = i % 32;  // hipport: ignore[warp-size,inline-ptx]\n")
    (f,) = res.findings
    assert f.rule == "HP1901" and "inline-ptx" in f.message and "warp-size" not in f.message
    assert "remove inline-ptx" in f.suggestion


def test_unused_bare_and_file_level(rules):
    assert codes(run(rules, "int a = 0; // hipport: ignore\n")) == [(1, "HP1901")]
    assert codes(run(rules, "int a = 0;\n// hipport: ignore-file[inline-ptx]\n")) == [(2, "HP1901")]


def test_unknown_name_is_reported(rules):
    res = run(rules, "int a = i % 32;  // hipport: ignore[warpsize]\n")
    assert codes(res) == [(1, rules["test-lane-mod-32"].code), (1, "HP1901")]
    assert "unknown rule or category in suppression: warpsize" in res.findings[1].message


def test_malformed_is_reported_and_suppresses_nothing(rules):
    res = run(rules, "int a = i % 32;  // hipport: ignore[warp-size\n")
    assert codes(res) == [(1, rules["test-lane-mod-32"].code), (1, "HP1901")]
    assert "malformed" in res.findings[1].message
    assert codes(run(rules, "int a = 0;  // hipport: ignore[]\n")) == [(1, "HP1901")]


def test_not_a_marker(rules):
    text = "int a = 0;  // hipport: ignored this\nint b = 0; // hipport: ignore-files[x]\n"
    assert codes(run(rules, text)) == []


def test_suppression_in_string_literal_does_nothing(rules):
    text = ('const char* s = "// hipport: ignore[warp-size]"; int a = i % 32;\n'
            'const char* t = "/* hipport: ignore-file */";\n'
            "const char c = '/'; int b = i % 32; // real comment without marker\n")
    res = run(rules, text)
    assert codes(res) == [(1, rules["test-lane-mod-32"].code), (3, rules["test-lane-mod-32"].code)]


def test_unselected_rules_are_not_judged(rules):
    """A suppression for a rule that did not run is not 'unused'."""
    text = "int a = 0;  // hipport: ignore[warp-size]\n"
    only_ptx = {"x": rules["test-asm-call"]}
    assert codes(run(only_ptx, text)) == []
    # ... nor is one in a file the named rule does not look at.
    assert codes(run(rules, "set(X 1)  # hipport: ignore[warp-size]\n", path="CMakeLists.txt")) == []


def test_hp1901_not_selected_reports_nothing(rules):
    data = b"int a = 0;  // hipport: ignore[warp-size]\n"
    res = check_source(data, "k.cu", "cuda", SETTINGS, list(rules.values()))
    assert res.findings == ()


def test_suppression_of_unused_report(rules):
    assert codes(run(rules, "int a = 0;  // hipport: ignore[warp-size, HP1901] kept for later\n")) == []
    assert codes(run(rules, "// hipport: ignore-file[suppression]\nint a = 0; // hipport: ignore[warp-size]\n")) == []
    # a line's own suppression of the report silences that line's report only
    assert codes(run(rules, "int a = 0;  // hipport: ignore[warp-size]\n"
                            "int b = 0;  // hipport: ignore[warp-size, HP1901]\n")) == [(1, "HP1901")]


def test_cmake_and_python_hash_comments(rules):
    code = rules["test-arch-flag"].code
    cmake = ('set(FLAGS "-arch=sm_80") # hipport: ignore[build-flags] CUDA build only\n'
             'set(MSG "# hipport: ignore[build-flags]") set(F2 -arch=sm_70)\n'
             "#[[ hipport: ignore[build-flags] block ]]\n"
             "set(F3 -arch=sm_90)\n")
    assert codes(run(rules, cmake, path="CMakeLists.txt")) == [(2, code)]
    python = ('flags = ["-arch=sm_80"]  # hipport: ignore[build-flags]\n'
              'doc = """\n# hipport: ignore-file\n"""\n'
              "x = '-arch=sm_75'  # not a marker\n")
    assert codes(run(rules, python, path="setup.py")) == [(5, code)]
    make = "NVFLAGS += -arch=sm_80  # hipport: ignore[build-flags]\nOTHER = \\# -arch=sm_70\n"
    assert codes(run(rules, make, path="Makefile")) == [(2, code)]


def test_crlf_and_latin1(rules):
    text = b"// hipport: ignore[warp-size] caf\xe9\r\nint a = i % 32;\r\nint b = i % 32; // \xff\r\n"
    assert codes(run(rules, text)) == [(3, rules["test-lane-mod-32"].code)]


def test_binary_is_skipped(rules):
    res = run(rules, b"\x7fELF\0\0\0 % 32")
    assert res.status == "skipped" and "binary" in res.reason and res.findings == ()


# --- the fixtures ----------------------------------------------------------------------------

SUPPRESSION_FIXTURES = sorted((ROOT / "fixtures" / "check" / "suppression").glob("*.*"))
_CHECKED = re.compile(rb"checked:\s*([A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*)")


@pytest.mark.parametrize("case", SUPPRESSION_FIXTURES, ids=lambda p: p.name)
def test_suppression_fixtures(case: Path):
    """Fixture lines carry `checked: CODE` for the findings `check` reports once suppressions
    are applied with the real rules (test_check_fixtures checks the same files without)."""
    from hipport.rules import all_rules

    data = case.read_bytes()
    real = [r for r in all_rules() if not r.name.startswith("test-")]
    res = check_source(data, case.name, file_kind(case.name), SETTINGS, real)
    want = sorted((n, c.decode()) for n, line in enumerate(data.splitlines(), 1)
                  for m in [_CHECKED.search(line)] if m for c in re.split(rb"\s*,\s*", m.group(1)))
    assert codes(res) == want


# --- baseline --------------------------------------------------------------------------------

def dumped(findings) -> bytes:
    return "".join(suppress.dump_baseline(findings)).encode()


def test_baseline_is_written_in_pieces(rules):
    """A baseline of many findings comes in pieces (one per entry of its findings list), so
    the file is written without its text ever being whole; joined, they are the document."""
    from hipport.report import json_text

    findings = run(rules, "".join(f"int a{i} = i % 32;\n" for i in range(300))).findings
    pieces = list(suppress.dump_baseline(findings))
    assert len(pieces) > 300
    assert "".join(pieces) == json_text.dumps(suppress.baseline_document(findings))

def beyond(findings, counts) -> tuple[list, int]:
    """The findings the baseline does not hold, and how many it held (as a check reads them)."""
    held = suppress.Baseline(counts)
    return [f for f in findings if not held.holds(f)], held.matched


def test_baseline_survives_line_shifts_and_whitespace(rules):
    before = run(rules, "int a = i % 32;\nasm(\"nop\");\n").findings
    counts = suppress.load_baseline(dumped(before))
    after = run(rules, "// a new comment\n\n   int  a = i %   32;\n\tasm(\"nop\");\n").findings
    new, matched = beyond(after, counts)
    assert new == [] and matched == 2


def test_baseline_reports_new_findings(rules):
    counts = suppress.load_baseline(dumped(run(rules, "int a = i % 32;\n").findings))
    after = run(rules, "int a = i % 32;\nint b = i % 32;\n").findings
    new, matched = beyond(after, counts)
    assert [(f.line, f.snippet) for f in new] == [(2, "int b = i % 32;")] and matched == 1


def test_baseline_counts_identical_lines(rules):
    counts = suppress.load_baseline(dumped(run(rules, "x = i % 32;\n").findings))
    new, matched = beyond(run(rules, "x = i % 32;\nx = i % 32;\n").findings, counts)
    assert [f.line for f in new] == [2] and matched == 1
    doc = suppress.baseline_document(run(rules, "x = i % 32;\nx = i % 32;\n").findings)
    assert [item["count"] for item in doc["findings"]] == [2]


def test_baseline_is_per_path_and_rule(rules):
    counts = suppress.load_baseline(dumped(run(rules, "x = i % 32;\n", path="a.cu").findings))
    new, _ = beyond(run(rules, "x = i % 32;\n", path="b.cu").findings, counts)
    assert len(new) == 1


def test_baseline_document_shape(rules):
    doc = suppress.baseline_document(run(rules, "int a = i % 32;\n", path="src/k.cu").findings)
    assert doc["version"] == 1 and doc["tool"]["name"] == "hipport"
    assert doc["findings"] == [{"rule": rules["test-lane-mod-32"].code, "path": "src/k.cu",
                                "text": "int a = i % 32;", "count": 1}]


@pytest.mark.parametrize("data", [b"not json", b"[]", b'{"findings": [{"rule": "HP1"}]}', b'{"version": 9, "findings": []}',
                                  b"\xff\xfe"])
def test_bad_baseline_is_a_usage_error(data):
    with pytest.raises(HipportError):
        suppress.load_baseline(data)
