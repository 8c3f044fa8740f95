"""Finding: one flagged construct, with SPEC's JSON keys spelled once here."""

from __future__ import annotations

from dataclasses import asdict, dataclass

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
        return asdict(self)


def severity_at_least(severity: str, floor: str) -> bool:
    return SEVERITIES.index(severity) >= SEVERITIES.index(floor)
