"""Build report.json's data from per-file results. Every rendering reads this one model.

`build()` runs once per command over the results already in memory: records
(results.FileResult.record(), as the runner and the cache carry them) or FileResults. The only
file reads are the kernel scan of C/C++/CUDA files whose result carries no kernels (cheap
pre-check first), and, in the renderers, a few lines of code around each finding. `summary()`
is the part `port` prints: the totals without an entry per file and finding.
"""

from __future__ import annotations

from collections import Counter
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import Iterable, Iterator, NamedTuple

from hipport import __version__
from hipport import estimate as est
from hipport import kernel_links as links
from hipport.config import Settings
from hipport.emit import write_text
from hipport.findings import CATEGORY, EFFORT, EFFORTS, SEVERITIES, SEVERITY
from hipport.results import FileResult, json_entry
from hipport.words import plural

REPORT_VERSION = 1
TOP_RISKS = 5

# Mapping-table library (the edit's library: a TSV stem or an include row's library) -> the
# ROCm library the port now depends on: (name with --libs hip, name with --libs roc, the CUDA
# library it replaces, ROCm apt package with --libs hip, with --libs roc).
_HIP_RUNTIME = ("HIP runtime", "HIP runtime", "CUDA runtime", "hip-dev", "hip-dev")
LIBRARIES: dict[str, tuple[str, str, str, str, str]] = {
    "runtime": _HIP_RUNTIME,
    "driver": ("HIP runtime", "HIP runtime", "CUDA driver API", "hip-dev", "hip-dev"),
    "device": ("HIP runtime", "HIP runtime", "CUDA device functions", "hip-dev", "hip-dev"),
    "device_math": ("HIP runtime", "HIP runtime", "CUDA device functions", "hip-dev", "hip-dev"),
    "warp": ("HIP runtime", "HIP runtime", "CUDA warp intrinsics", "hip-dev", "hip-dev"),
    "transform": _HIP_RUNTIME,
    "include": _HIP_RUNTIME,
    "macros": _HIP_RUNTIME,
    "numeric_types": ("HIP runtime", "HIP runtime", "cuda_fp16/bf16/fp8", "hip-dev", "hip-dev"),
    "complex": ("HIP runtime", "HIP runtime", "cuComplex", "hip-dev", "hip-dev"),
    "cg": ("HIP runtime", "HIP runtime", "cooperative groups", "hip-dev", "hip-dev"),
    "nvrtc": ("hipRTC", "hipRTC", "NVRTC", "hip-dev", "hip-dev"),
    "cublas": ("hipBLAS", "rocBLAS", "cuBLAS", "hipblas-dev", "rocblas-dev"),
    "curand": ("hipRAND", "rocRAND", "cuRAND", "hiprand-dev", "rocrand-dev"),
    "cusparse": ("hipSPARSE", "rocSPARSE", "cuSPARSE", "hipsparse-dev", "rocsparse-dev"),
    "cusolver": ("hipSOLVER", "rocSOLVER", "cuSOLVER", "hipsolver-dev", "rocsolver-dev"),
    "cufft": ("hipFFT", "hipFFT", "cuFFT", "hipfft-dev", "hipfft-dev"),
    "cudnn": ("MIOpen", "MIOpen", "cuDNN", "miopen-hip-dev", "miopen-hip-dev"),
    "cub": ("hipCUB", "hipCUB", "CUB", "hipcub-dev", "hipcub-dev"),
    "thrust": ("rocThrust", "rocThrust", "Thrust", "rocthrust-dev", "rocthrust-dev"),
    "nccl": ("RCCL", "RCCL", "NCCL", "rccl-dev", "rccl-dev"),
    "nvtx": ("roctx", "roctx", "NVTX", "roctracer-dev", "roctracer-dev"),
    "torch": ("PyTorch for ROCm", "PyTorch for ROCm", "PyTorch CUDA", "torch (ROCm wheel)", "torch (ROCm wheel)"),
}
# Edits that are no CUDA API reference (a launch rewritten to hipLaunchKernelGGL).
_NOT_API = frozenset({"launch", "rename"})
_SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}
_TALLIED = itemgetter(CATEGORY, EFFORT, SEVERITY)  # a finding tuple's (category, effort, severity)


def source_path(root: Path, entry: dict, in_place: bool) -> Path:
    """Where a file's text is now: the output after --in-place, else the input."""
    return root / (entry["output"] if in_place else entry["source"])


PARALLEL_SCAN_FROM = 400  # files to scan before worker processes pay off


def _records(results: Iterable[FileResult | dict]) -> list[dict]:
    return [r if isinstance(r, dict) else r.record() for r in results]


def _kernel_scans(records: list[dict], settings: Settings, root: Path | None,
                  in_place: bool) -> list[tuple[str, links.Scan]]:
    """Kernels per C/C++/CUDA file: from the record when it carries them (its plain tuples as
    they are), else scanned from the file (in worker processes for big trees)."""
    scans: list[tuple[str, links.Scan]] = []
    todo: list[tuple[str, str]] = []
    for r in records:
        if r["kind"] not in est.SOURCE_KINDS or r["status"] in ("skipped", "failed"):
            continue
        carried = r["kernels"]
        if carried is not None:
            if carried[0] or carried[1]:
                scans.append((r["source"], links.Scan._make(carried)))
        elif root is not None:
            todo.append((r["source"], str(source_path(root, r, in_place))))
    if todo:
        from hipport import kernels as kern  # noqa: PLC0415 - its patterns: only for a scan
        from hipport import parallel  # noqa: PLC0415

        jobs = [kern.FileJob(path, settings) for _, path in todo]
        workers = settings.jobs if len(todo) >= PARALLEL_SCAN_FROM else 1
        for (source, _), scan in zip(todo, parallel.run(kern.scan_file, jobs, workers)):
            if scan is not None:
                scans.append((source, scan))
    return scans


def _dependencies(files: list[dict], libs: str) -> list[dict]:
    deps: dict[str, dict] = {}
    for f in files:
        for table, n in f["by_library"].items():
            if table in _NOT_API or not n:
                continue
            hip_name, roc_name, cuda_name, hip_pkg, roc_pkg = LIBRARIES.get(table, (table, table, table, "", ""))
            name, package = (roc_name, roc_pkg) if libs == "roc" else (hip_name, hip_pkg)
            d = deps.setdefault(name, {"library": name, "replaces": set(), "package": package,
                                       "references": 0, "files": set()})
            d["replaces"].add(cuda_name)
            d["references"] += n
            d["files"].add(f["source"])
    out = sorted(deps.values(), key=lambda d: (d["library"] != "HIP runtime", -d["references"], d["library"]))
    for d in out:
        d["replaces"] = sorted(d["replaces"])
        d["files"] = sorted(d["files"])
    return out


def _unsupported(files: list[dict]) -> list[dict]:
    by_name: dict[str, dict] = {}
    for f in files:
        for u in f["unmapped"]:
            e = by_name.setdefault(u["name"], {"name": u["name"], "count": 0, "reason": u["reason"],
                                               "locations": []})
            e["count"] += u["count"]
            e["locations"].append({"path": f["source"], "line": u["line"], "count": u["count"]})
    return sorted(by_name.values(), key=lambda e: (-e["count"], e["name"]))


def _rules(findings: list[dict]) -> dict[str, dict]:
    from hipport.rules import REGISTRY, all_rules

    all_rules()
    out = {}
    for code in sorted({f["rule"] for f in findings}):
        r = REGISTRY.get(code)
        if r is None:
            continue
        what = " ".join(r.section("What it does").split())
        end = what.find(". ")
        out[code] = {"name": r.name, "category": r.category, "severity": r.severity, "effort": r.effort,
                     "summary": what if end < 0 else what[: end + 1], "fix": r.section("Fix")}
    return out


def _breakdown(findings: list[dict], estimate: dict) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for f in findings:
        c = out.setdefault(f["category"], {"findings": 0, "by_severity": Counter(), "by_effort": Counter(),
                                           "rules": Counter()})
        c["findings"] += 1
        c["by_severity"][f["severity"]] += 1
        c["by_effort"][f["effort"]] += 1
        c["rules"][f["rule"]] += 1
    zero = {"low": 0.0, "likely": 0.0, "high": 0.0}
    return {cat: {"findings": c["findings"],
                  "by_severity": {s: c["by_severity"][s] for s in reversed(SEVERITIES) if c["by_severity"][s]},
                  "by_effort": {e: c["by_effort"][e] for e in EFFORTS if c["by_effort"][e]},
                  "rules": dict(sorted(c["rules"].items())),
                  "hours": estimate["by_group"].get(cat, zero)}
            for cat, c in sorted(out.items())}


def _top_risks(findings: list[dict], rules: dict[str, dict], rates: est.Rates) -> list[dict]:
    groups: dict[str, dict] = {}
    for f in findings:
        g = groups.get(f["rule"])
        if g is None:
            g = groups[f["rule"]] = {"rule": f["rule"], "name": rules.get(f["rule"], {}).get("name", ""),
                                     "category": f["category"], "severity": f["severity"],
                                     "effort": f["effort"], "count": 0, "hours": 0.0,
                                     "first": {"path": f["path"], "line": f["line"]},
                                     "message": f["message"],
                                     "fix": rules.get(f["rule"], {}).get("fix", "")}
        g["count"] += 1
        if _SEVERITY_RANK[f["severity"]] > _SEVERITY_RANK[g["severity"]]:
            g["severity"] = f["severity"]
        g["hours"] += rates.effort_hours[f["effort"]].likely * rates.multiplier(f["category"])
    ranked = sorted(groups.values(), key=lambda g: (-_SEVERITY_RANK[g["severity"]], -g["hours"],
                                                   -g["count"], g["rule"]))
    for g in ranked:
        g["hours"] = round(g["hours"], 3)
    return ranked[:TOP_RISKS]


def _pct(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 1) if whole else None


class _Totals(NamedTuple):
    """What the summary, the estimate and the lists share, from the records."""
    summary: dict
    estimate: dict
    kernels: list[dict] | None  # None when not asked for (see _totals' `listed`)
    build_files: list[str]
    project_macros: frozenset[str]


def _totals(records: list[dict], settings: Settings, root: Path | None, in_place: bool,
            rates: est.Rates, listed: bool = True) -> _Totals:
    """`listed`: the kernels as link() lists them too (else `kernels` is None)."""
    # A macro the project defines in one file (CUDA_CHECK in a header) is no CUDA API in another.
    macros = frozenset(chain.from_iterable(map(itemgetter("defines"), records)))
    by_status = Counter(map(itemgetter("status"), records))
    changed = sum(1 for r in records if r["changed"])
    # Findings by (category, effort, severity); counted in C, as a big tree has tens of thousands.
    tally = Counter(map(_TALLIED, chain.from_iterable(map(itemgetter("findings"), records))))
    by_library: Counter[str] = Counter()
    unmapped: Counter[str] = Counter()
    for r in records:
        for lib, n in r["by_library"].items():
            by_library[lib] += n
        for u in r["unmapped"]:
            if u["name"] not in macros:
                unmapped[u["name"]] += u["count"]
    # CUDA API references: C/C++/CUDA sources only (build files have their own rewrites).
    sources = [r for r in records if r["kind"] in est.SOURCE_KINDS]
    converted = sum(n for r in sources for lib, n in r["by_library"].items() if lib not in _NOT_API)
    lines = sum(map(itemgetter("lines"), sources))
    lines_changed = sum(map(itemgetter("lines_changed"), sources))
    builds = [r for r in records if r["kind"] in est.BUILD_KINDS]
    build_replacements = sum(map(itemgetter("replacements"), builds))
    build_files = [r["source"] for r in builds if (r["changed"] or r["findings"]) and r["status"] != "skipped"]
    scans = _kernel_scans(records, settings, root, in_place)
    # The summary wants the numbers alone; the report, every kernel with its launches.
    kernels = links.link(scans) if listed else None
    n_kernels, n_launches = links.counts(scans)
    estimate = est.compute(est.Counts(converted, dict(tally), n_kernels, len(build_files)), rates)
    by_category: Counter[str] = Counter()
    by_severity: Counter[str] = Counter()
    by_effort: Counter[str] = Counter()
    for (category, effort, severity), n in tally.items():
        by_category[category] += n
        by_severity[severity] += n
        by_effort[effort] += n
    unsupported = sum(unmapped.values())
    summary = {
        "files": len(records),
        "changed": changed,
        "by_status": dict(sorted(by_status.items())),
        "replacements": sum(by_library.values()),
        "replacements_by_library": dict(sorted(by_library.items())),
        "unmapped": dict(sorted(unmapped.items())),
        "findings": sum(tally.values()),
        "by_category": dict(sorted(by_category.items())),
        "by_severity": dict(sorted(by_severity.items())),
        "by_effort": {e: by_effort[e] for e in EFFORTS if by_effort[e]},
        "api_references": converted + unsupported,
        "api_converted": converted,
        "api_unsupported": unsupported,
        "pct_converted": _pct(converted, converted + unsupported),
        "source_files": len(sources),
        "lines": lines,
        "lines_changed": lines_changed,
        "pct_lines_changed": _pct(lines_changed, lines),
        "kernels": n_kernels,
        "kernel_launches": n_launches,
        "build_files": len(build_files),
        "build_replacements": build_replacements,
        "estimate_hours": {k: estimate[k] for k in ("low", "likely", "high")},
    }
    return _Totals(summary, estimate, kernels, build_files, macros)


def summary(results: Iterable[FileResult | dict], settings: Settings, *, root: Path | None = None,
            in_place: bool = False, rates: est.Rates | None = None) -> dict:
    """build()'s "summary" and "estimate" alone, as summary_lines() reads them: no entries per
    file and finding, no rule descriptions (so no rule module is imported)."""
    totals = _totals(_records(results), settings, root, in_place, rates or est.DEFAULTS, listed=False)
    return {"summary": totals.summary, "estimate": totals.estimate}


def build(results: Iterable[FileResult | dict], settings: Settings, target_hip: tuple[int, int], *,
          root: Path | None = None, in_place: bool = False, rates: est.Rates | None = None,
          project: str | None = None) -> dict:
    """The report. `root`: where the files' relative paths start (for the kernel scan);
    `in_place`: the files there are already ported; `rates`: estimate rates (defaults)."""
    records = _records(results)
    rates = rates or est.DEFAULTS
    totals = _totals(records, settings, root, in_place, rates)
    per_file_kernels: dict[str, list[str]] = {}
    for k in totals.kernels:
        per_file_kernels.setdefault(k["path"], []).append(k["name"])
    files = []
    for r in records:
        f = json_entry(r)
        f["unmapped"] = [u for u in f["unmapped"] if u["name"] not in totals.project_macros]
        f["kernels"] = per_file_kernels.get(f["source"], [])
        files.append(f)
    findings = [x for f in files for x in f["findings"]]
    rules = _rules(findings)
    name = project if project is not None else (root.name if root is not None else "")
    return {
        "version": REPORT_VERSION,
        "tool": {"name": "hipport", "version": __version__},
        "project": {"name": name},
        "settings": {
            "target_hip": "%d.%d" % target_hip, "libs": settings.libs,
            "launch_syntax": settings.launch_syntax, "rename": settings.rename,
            "experimental": settings.experimental,
        },
        "files": files,
        "findings": findings,
        "summary": totals.summary,
        "dependencies": _dependencies([f for f in files if f["kind"] in est.SOURCE_KINDS], settings.libs),
        "unsupported": _unsupported(files),
        "breakdown": _breakdown(findings, totals.estimate),
        "top_risks": _top_risks(findings, rules, rates),
        "rules": rules,
        "kernels": totals.kernels,
        "build_files": totals.build_files,
        "estimate": totals.estimate,
    }


def json_pieces(report: dict) -> Iterator[str]:
    """report.json's text in pieces (a big tree's report is tens of megabytes: see json_text)."""
    from hipport.report import json_text  # noqa: PLC0415 - a run that writes no report needs none

    return json_text.pieces(report)


def write(report: dict, folder: Path, root: Path | None = None, in_place: bool = False) -> Path:
    """report.json, report.md and report.html in `folder`; returns report.json's path. `root`
    (with `in_place`) is where the renderers read the few lines around each finding."""
    from hipport.report import html, markdown

    excerpts = html.Excerpts(root, in_place) if root is not None else None
    path = folder / "report.json"
    for target, text in ((path, json_pieces(report)), (folder / "report.md", markdown.render(report)),
                         (folder / "report.html", html.render(report, excerpts))):
        write_text(target, text)
    return path


# --- commands --------------------------------------------------------------------------------



def from_paths(paths: list[Path], settings: Settings, rates: est.Rates | None = None,
               progress: bool = True, cache_root: Path | None = None) -> dict:
    """The port pipeline over PATH... in memory (nothing written), then the report (`estimate`).
    With `cache_root`, files `port` (or an earlier estimate) already did are served from its
    cache."""
    from hipport import runner
    from hipport.loaders import tools

    root, jobs = runner.plan(paths, settings, runner.DRY_RUN, None, cache_root)
    tick, close = runner.stream_progress(len(jobs), progress)
    try:
        records = [o.record for o in runner.run(jobs, settings.jobs, tick)]
    finally:
        close()
    return build(records, settings, tools(settings)[0].target_hip, root=root, rates=rates)


def summary_lines(report: dict) -> list[str]:
    """What `port` prints after its counts line: findings by severity and the estimate."""
    s = report["summary"]
    by = s["by_severity"]
    parts = [plural(by[sev], sev) for sev in reversed(SEVERITIES) if by.get(sev)]
    findings = f"findings: {', '.join(parts)}" if parts else "findings: none"
    pct = s["pct_converted"]
    converted = (f"{pct:g}% of {s['api_references']} CUDA API references converted automatically"
                 if pct is not None else "no CUDA API references")
    return [f"{converted}; {findings}",
            f"estimated manual work: {est.headline(report['estimate'])} (`hipport estimate` explains it)"]
