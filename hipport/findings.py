"""Finding: one flagged construct, with SPEC's JSON keys spelled once here."""

from __future__ import annotations

from dataclasses import dataclass

SEVERITIES = ("info", "warning", "error")  # ascending
EFFORTS = ("trivial", "low", "medium", "high")


@dataclass(frozen=True, order=True)
class Finding:
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
        # Spelled out: dataclasses.asdict deep-copies and is ~10x slower on large reports.
        return {"path": self.path, "line": self.line, "column": self.column, "end_line": self.end_line,
                "end_column": self.end_column, "rule": self.rule, "category": self.category,
                "severity": self.severity, "effort": self.effort, "message": self.message,
                "suggestion": self.suggestion, "snippet": self.snippet}


def severity_at_least(severity: str, floor: str) -> bool:
    return SEVERITIES.index(severity) >= SEVERITIES.index(floor)

