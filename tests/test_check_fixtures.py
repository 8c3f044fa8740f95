"""Check cases: fixtures/check/<category>/<case>. A flagged line carries its expected codes as
`// expect: HP101` (or `# expect: HP1101` in build files and Python); an extra or a missing
finding fails. Lines without the annotation are the near misses.

Suppressions are not applied here: these test the rules themselves.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from hipport.analysis import analyze, context_for
from hipport.config import load_settings
from hipport.files import file_kind

ROOT = Path(__file__).resolve().parents[1]
CHECK = ROOT / "fixtures" / "check"
CASES = sorted(p for p in CHECK.rglob("*") if p.is_file() and p.name != "README.md"
               and not p.name.startswith(".") and file_kind(p.name) != "other")
_EXPECT = re.compile(rb"(?://|#)\s*expect:\s*([A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*)")


def expected(data: bytes) -> Counter:
    out: Counter = Counter()
    for lineno, line in enumerate(data.splitlines(), 1):
        m = _EXPECT.search(line)
        if m:
            for code in re.split(rb"\s*,\s*", m.group(1)):
                out[(lineno, code.decode())] += 1
    return out


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.relative_to(CHECK).as_posix())
def test_findings_match_annotations(case: Path):
    data = case.read_bytes()
    ctx = context_for(data, case.relative_to(CHECK).as_posix(), file_kind(case.name), load_settings([case]))
    got = Counter((f.line, f.rule) for f in analyze(ctx) if f.category != "suppression")
    want = expected(data)
    missing = sorted((want - got).elements())
    extra = sorted((got - want).elements())
    assert not missing and not extra, f"missing {missing}, unexpected {extra}"
