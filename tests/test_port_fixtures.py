"""Data-driven port cases: fixtures/port/<topic>/<case> must become tests/expected/port/<topic>/<case>
byte for byte; porting the result again changes nothing; CRLF and BOM variants keep both.

A topic folder may hold a `.hipport.toml` with the settings its cases are ported with.
`pytest --update-expected` rewrites the expected files (review the diff before committing).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hipport.config import load_settings
from hipport.files import file_kind
from hipport.pipeline import port_source

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures" / "port"
EXPECTED = ROOT / "tests" / "expected" / "port"
# C/C++/CUDA sources and the build files hipport rewrites (fixtures/port/build/).
PORTED_KINDS = ("cuda", "cpp", "cmake", "setup.py", "make", "docker", "requirements", "shell")
CASES = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and file_kind(p.name) in PORTED_KINDS)

# Porter bugs: the expected file holds the CORRECT output (edited by hand), so these cases fail
# until hipport is fixed; strict, so a fix that makes one pass must also remove its entry here.
KNOWN_GAPS: dict[str, str] = {}


def _case_params(cases):
    """Cases as pytest params; known gaps of `test_port_matches_expected` marked xfail(strict)."""
    out = []
    for case in cases:
        reason = KNOWN_GAPS.get(case.relative_to(FIXTURES).as_posix())
        marks = [pytest.mark.xfail(strict=True, reason=f"porter bug: {reason}")] if reason else []
        out.append(pytest.param(case, marks=marks, id=case.relative_to(FIXTURES).as_posix()))
    return out


def port(path: Path, data: bytes | None = None) -> bytes:
    settings = load_settings([path])
    rel = path.relative_to(FIXTURES).as_posix()
    ported = port_source(path.read_bytes() if data is None else data, rel, file_kind(path.name), settings)
    assert ported.result.status in ("ported", "unchanged"), ported.result
    return ported.data


def test_there_are_cases():
    assert len(CASES) >= 20


def test_known_gaps_exist():
    for rel in KNOWN_GAPS:
        assert (FIXTURES / rel).is_file(), f"KNOWN_GAPS names a missing fixture: {rel}"


@pytest.mark.parametrize("case", _case_params(CASES))
def test_port_matches_expected(case: Path, request):
    out = port(case)
    expected = EXPECTED / case.relative_to(FIXTURES)
    # A known gap's expected file is the hand-written correct output: never overwrite it.
    known_gap = case.relative_to(FIXTURES).as_posix() in KNOWN_GAPS
    if request.config.getoption("--update-expected") and not (known_gap and expected.exists()):
        expected.parent.mkdir(parents=True, exist_ok=True)
        expected.write_bytes(out)
    assert expected.exists(), f"no expected output for {case}; run pytest --update-expected"
    assert out == expected.read_bytes()
    assert port(case, out) == out, "porting twice must change nothing"


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_crlf_and_bom_survive(case: Path):
    data = case.read_bytes()
    plain = port(case, data)
    crlf = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    bom = b"\xef\xbb\xbf" + data
    assert port(case, crlf) == plain.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    out = port(case, bom)
    assert out.startswith(b"\xef\xbb\xbf") and not out.startswith(b"\xef\xbb\xbf" * 2)
    assert out[3:] == plain
