"""The rule registry's invariants (DESIGN.md, Rules): every SPEC category has a rule, codes are
unique and inside their category's block, names are kebab-case and unique, every doc has the
four sections, and every rule has a positive fixture (`expect: CODE` in fixtures/check/)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hipport.findings import EFFORTS, SEVERITIES
from hipport.rules import CATEGORY_CODES, DOC_SECTIONS, all_rules

ROOT = Path(__file__).resolve().parents[1]
# SPEC.md's "Categories (stable; a rule belongs to exactly one)", in SPEC's order.
SPEC_CATEGORIES = (
    "dynamic-parallelism", "texture-reference", "texture-object", "inline-ptx", "warp-size",
    "warp-mask", "unsupported-api", "deprecated-api", "tensor-core", "shared-memory-limit",
    "arch-macro", "version-macro", "cooperative-groups", "async-copy", "cuda-only-library",
    "library-semantics", "unified-memory", "launch-bounds", "build-flags", "pytorch-extension",
)
OWN_CATEGORIES = ("suppression",)  # hipport's own, not a porting risk
# Porting risks hipport adds to SPEC's list (its contracts change only by adding).
ADDED_CATEGORIES = ("declaration-clash",)
KEBAB = re.compile(r"(?=.*[a-z])[a-z0-9]+(?:-[a-z0-9]+)*\Z")  # lower-case words (`32-bit-...` too)
CODE = re.compile(r"HP([0-9]+)\Z")
_EXPECT = re.compile(r"(?://|#)\s*expect:\s*([A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*)")


def _spec_text() -> str | None:
    for candidate in (ROOT.parent / "shared" / "SPEC.md", ROOT / "shared" / "SPEC.md", ROOT / "SPEC.md"):
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8")
    return None


def _block(category: str) -> range:
    base = CATEGORY_CODES[category]
    top = min([v for v in CATEGORY_CODES.values() if v > base], default=base + 100)
    return range(base, top)


def test_spec_categories_constant_matches_spec():
    text = _spec_text()
    if text is None:
        pytest.skip("SPEC.md is not beside this checkout")
    table = text.split("## Categories", 1)[1].split("\n## ", 1)[0]
    found = tuple(c for c in re.findall(r"^\| ([a-z][a-z-]+) \|", table, flags=re.M) if c != "category")
    assert found == SPEC_CATEGORIES


def test_category_codes_cover_spec_in_order():
    assert tuple(c for c in CATEGORY_CODES if c not in OWN_CATEGORIES + ADDED_CATEGORIES) == SPEC_CATEGORIES
    assert set(ADDED_CATEGORIES) <= set(CATEGORY_CODES) and not set(ADDED_CATEGORIES) & set(SPEC_CATEGORIES)
    bases = list(CATEGORY_CODES.values())
    assert bases == sorted(bases) and len(set(bases)) == len(bases)


@pytest.mark.parametrize("category", SPEC_CATEGORIES + ADDED_CATEGORIES)
def test_every_spec_category_has_a_rule(category):
    assert any(r.category == category for r in all_rules()), f"no rule in category {category}"


def test_codes_names_and_blocks():
    rules = all_rules()
    codes = [r.code for r in rules]
    names = [r.name for r in rules]
    assert len(codes) == len(set(codes)), "a code repeats"
    assert len(names) == len(set(names)), "a rule name repeats"
    problems = []
    for r in rules:
        m = CODE.match(r.code)
        if not m:
            problems.append(f"{r.code}: code is not HP<number>")
        elif int(m.group(1)) not in _block(r.category) or int(m.group(1)) == CATEGORY_CODES[r.category]:
            b = _block(r.category)
            problems.append(f"{r.code}: outside {r.category}'s block HP{b.start + 1}..HP{b.stop - 1}")
        if not KEBAB.match(r.name):
            problems.append(f"{r.code}: name {r.name!r} is not kebab-case")
        if r.severity not in SEVERITIES or r.effort not in EFFORTS:
            problems.append(f"{r.code}: severity {r.severity!r} / effort {r.effort!r}")
        if not r.kinds:
            problems.append(f"{r.code}: applies to no file kind")
    assert not problems, "\n".join(problems)


def test_every_doc_has_the_four_sections():
    problems = []
    for r in all_rules():
        for title in DOC_SECTIONS:
            if not r.section(title).strip():
                problems.append(f"{r.code} {r.name}: doc lacks '{title}:'")
    assert not problems, "\n".join(problems)


def test_every_rule_has_a_positive_fixture():
    """A rule's positive case is a line annotated `expect: CODE` under fixtures/check/ (the
    unused-suppression rule's cases are in fixtures/check/suppression/, as `checked:` notes)."""
    annotated: set[str] = set()
    checked: set[str] = set()
    for p in (ROOT / "fixtures" / "check").rglob("*"):
        if p.is_file():
            text = p.read_text(encoding="utf-8", errors="replace")
            for m in _EXPECT.finditer(text):
                annotated.update(c.strip() for c in m.group(1).split(","))
            checked.update(re.findall(r"checked:\s*(HP[0-9]+)", text))
    missing = [r.code for r in all_rules()
               if r.code not in (checked if r.category in OWN_CATEGORIES else annotated)]
    assert not missing, f"rules without a positive fixture: {missing}"
