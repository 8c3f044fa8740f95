"""Finding: one flagged construct, with SPEC's JSON keys spelled once here."""

from __future__ import annotations

from hipport.tuples import NamedTuple

SEVERITIES = ("info", "warning", "error")  # ascending
EFFORTS = ("trivial", "low", "medium", "high")
# SPEC's categories, in SPEC's order, each with its block of rule codes (hipport.rules
# allocates them; the estimate reads them without importing the rule machinery).
CATEGORY_CODES = {
    "dynamic-parallelism": 100, "texture-reference": 200, "texture-object": 250,
    "inline-ptx": 300, "warp-size": 400, "warp-mask": 450, "unsupported-api": 500,
    "deprecated-api": 550, "tensor-core": 600, "shared-memory-limit": 650, "arch-macro": 700,
    "version-macro": 750, "cooperative-groups": 800, "async-copy": 850,
    "cuda-only-library": 900, "library-semantics": 950, "unified-memory": 1000,
    "launch-bounds": 1050, "build-flags": 1100, "pytorch-extension": 1150, "declaration-clash": 1200,
    "suppression": 1900,  # hipport's own: unused suppressions
}


# A finding's snippet is its line's text, but of a line longer than this (in characters, once
# stripped) only a window around the finding (source.Source.snippet): a minified or generated
# file on one line would otherwise repeat its whole text in every finding (thousands of them:
# gigabytes of JSON).
SNIPPET_MAX = 300
CUT = "…"  # marks where such a window cut its line


class Finding(NamedTuple):
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    rule: str
    category: str
    severity: str
    effort: str
    message: str
    suggestion: str = ""
    snippet: str = ""

    def to_json(self) -> dict:
        return {"path": self.path, "line": self.line, "column": self.column, "end_line": self.end_line,
                "end_column": self.end_column, "rule": self.rule, "category": self.category,
                "severity": self.severity, "effort": self.effort, "message": self.message,
                "suggestion": self.suggestion, "snippet": self.snippet}

    def to_tuple(self) -> tuple:
        """The fields in FIELDS order, as a plain tuple: how a cached result holds a finding
        (marshal writes plain tuples only)."""
        return tuple(self)


FIELDS = Finding._fields  # to_json's keys, in to_tuple's order
CATEGORY, SEVERITY, EFFORT = (FIELDS.index(name) for name in ("category", "severity", "effort"))


def finding_of(values: tuple) -> Finding:
    """The Finding whose to_tuple() is `values`."""
    if len(values) != len(FIELDS):
        raise ValueError("not a finding's fields")
    return tuple.__new__(Finding, values)


def json_of(values: tuple) -> dict:
    """to_json() of the finding whose to_tuple() is `values`."""
    return dict(zip(FIELDS, values))


def severity_at_least(severity: str, floor: str) -> bool:
    return SEVERITIES.index(severity) >= SEVERITIES.index(floor)


def snippet_of(snippet: str, text: str) -> bool:
    """Whether `snippet` was taken from the line `text`: its whole text without the spaces
    around it, or, from a line longer than SNIPPET_MAX, a window of it (cut ends marked)."""
    stripped = text.strip()
    if stripped == snippet:
        return True
    inner = snippet.removeprefix(CUT).removesuffix(CUT)
    return inner != snippet and len(stripped) > SNIPPET_MAX and inner in stripped
