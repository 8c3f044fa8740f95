"""Build report.json's data from per-file results. Every rendering reads this one model."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Iterable

from hipport import __version__
from hipport.config import Settings
from hipport.emit import write_atomic
from hipport.pipeline import FileResult

REPORT_VERSION = 1


def build(results: Iterable[FileResult], settings: Settings, target_hip: tuple[int, int]) -> dict:
    results = list(results)
    # A macro the project defines in one file (CUDA_CHECK in a header) is no CUDA API in another.
    project_macros = {name for r in results for name in r.defines}
    files = [r.to_json() for r in results]
    for f in files:
        f["unmapped"] = [u for u in f["unmapped"] if u["name"] not in project_macros]
    findings = [x for f in files for x in f["findings"]]
    by_status = Counter(f["status"] for f in files)
    by_library: Counter[str] = Counter()
    unmapped: Counter[str] = Counter()
    for f in files:
        by_library.update(f["by_library"])
        for u in f["unmapped"]:
            unmapped[u["name"]] += u["count"]
    return {
        "version": REPORT_VERSION,
        "tool": {"name": "hipport", "version": __version__},
        "settings": {
            "target_hip": "%d.%d" % target_hip, "libs": settings.libs,
            "launch_syntax": settings.launch_syntax, "rename": settings.rename,
            "experimental": settings.experimental,
        },
        "files": files,
        "findings": findings,
        "summary": {
            "files": len(files),
            "changed": sum(1 for f in files if f["changed"]),
            "by_status": dict(sorted(by_status.items())),
            "replacements": sum(by_library.values()),
            "replacements_by_library": dict(sorted(by_library.items())),
            "unmapped": dict(sorted(unmapped.items())),
            "findings": len(findings),
            "by_category": dict(sorted(Counter(x["category"] for x in findings).items())),
            "by_severity": dict(sorted(Counter(x["severity"] for x in findings).items())),
        },
    }


def write(report: dict, folder: Path) -> Path:
    path = folder / "report.json"
    write_atomic(path, (json.dumps(report, indent=2, sort_keys=False) + "\n").encode("utf-8"))
    return path
