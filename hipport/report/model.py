"""Build report.json's data from per-file results. Every rendering reads this one model.

`Report` takes the results one at a time (records, results.FileResult.record(), as the runner
and the cache carry them), as `port` gets them; `build()` is Report over results already in
memory (records or FileResults). The only file reads are the kernel scan of C/C++/CUDA files
whose result carries no kernels (cheap pre-check first), and, in the renderers, a few lines of
code around each finding. `Totals` is the part `port` prints: the totals without an entry per
file and finding.
"""

from __future__ import annotations

import marshal
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from operator import itemgetter
from pathlib import Path

from hipport import __version__
from hipport import estimate as est
from hipport import kernel_links as links
from hipport.config import Settings
from hipport.emit import write_text
from hipport.findings import CATEGORY, EFFORT, EFFORTS, SEVERITIES, SEVERITY
from hipport.hashing import blake2b
from hipport.results import FileResult, entry_of, entry_values
from hipport.tuples import NamedTuple
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


def _rules(findings: list[dict], cache_root: Path | None = None) -> dict[str, dict]:
    """The report's entry for each rule that found something (see rule_docs)."""
    codes = sorted({f["rule"] for f in findings})
    docs = rule_docs(cache_root) if codes else {}
    return {code: docs[code] for code in codes if code in docs}


def rule_docs(cache_root: Path | None = None) -> dict[str, dict]:
    """Every rule's name, category, severity, effort, and the summary and fix its doc gives,
    by code. Kept in the cache, as check.rule_rows keeps the rules' rows: a report or estimate
    whose files are all cached then imports no rule module (nor tree-sitter, nor inspect for the
    docs), a third of a cached estimate's time (kept only of hipport's own rules)."""
    from hipport.cache import open_cache
    from hipport.rules import all_rules, only_hipports

    def compute() -> dict[str, dict]:
        out = {}
        for r in all_rules():
            what = " ".join(r.section("What it does").split())
            end = what.find(". ")
            out[r.code] = {"name": r.name, "category": r.category, "severity": r.severity, "effort": r.effort,
                           "summary": what if end < 0 else what[: end + 1], "fix": r.section("Fix")}
        return out

    if cache_root is None or not only_hipports():
        return compute()
    return open_cache(cache_root, "rules", ()).memo("docs", compute)


_BROKEN_DOWN = itemgetter("category", "severity", "effort", "rule")


def _breakdown(findings: list[dict], estimate: dict) -> dict[str, dict]:
    # Counted in C by (category, severity, effort, rule), then folded per category: a big tree
    # has 100,000 findings.
    out: dict[str, dict] = {}
    for (category, severity, effort, rule), n in Counter(map(_BROKEN_DOWN, findings)).items():
        c = out.get(category)
        if c is None:
            c = out[category] = {"findings": 0, "by_severity": Counter(), "by_effort": Counter(), "rules": Counter()}
        c["findings"] += n
        c["by_severity"][severity] += n
        c["by_effort"][effort] += n
        c["rules"][rule] += n
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


class Totals:
    """What the summary, the estimate and the lists count, taken one record at a time: a port
    keeps none of its records (a tree of 51,000 files held 190 MB of them). `root`: where the
    files' relative paths start (for the kernel scan); `in_place`: the files there are already
    ported."""

    def __init__(self, settings: Settings, root: Path | None, in_place: bool, rates: est.Rates | None = None) -> None:
        self.settings, self.root, self.in_place, self.rates = settings, root, in_place, rates or est.DEFAULTS
        self.files = self.changed = 0
        self.by_status: Counter[str] = Counter()
        # A macro the project defines in one file (CUDA_CHECK in a header) is no CUDA API in
        # another: the names are counted as they come, and the project's macros left out at
        # the end.
        self.macros: set[str] = set()
        self.unmapped: Counter[str] = Counter()
        self.tally: Counter[tuple] = Counter()  # findings by (category, effort, severity)
        self.by_library: Counter[str] = Counter()
        # CUDA API references: C/C++/CUDA sources only (build files have their own rewrites).
        self.sources = self.converted = self.lines = self.lines_changed = 0
        self.build_replacements = 0
        self.build_files: list[str] = []
        self.scans: list[tuple[str, links.Scan]] = []  # kernels per file, from the records
        self.unscanned: list[tuple[str, str]] = []  # files whose record carries none

    def add(self, r: dict, stamp: tuple | None = None) -> None:
        """(`stamp`: as Report.add takes it; the totals go by the record alone.)"""
        self.files += 1
        self.by_status[r["status"]] += 1
        self.changed += bool(r["changed"])
        self.macros.update(r["defines"])
        for u in r["unmapped"]:
            self.unmapped[u["name"]] += u["count"]
        self.tally.update(map(_TALLIED, r["findings"]))  # counted in C: a big tree has tens of thousands
        for lib, n in r["by_library"].items():
            self.by_library[lib] += n
        kind = r["kind"]
        if kind in est.SOURCE_KINDS:
            self.sources += 1
            self.converted += sum(n for lib, n in r["by_library"].items() if lib not in _NOT_API)
            self.lines += r["lines"]
            self.lines_changed += r["lines_changed"]
            if r["status"] not in ("skipped", "failed"):
                carried = r["kernels"]
                if carried is not None:
                    if carried[0] or carried[1]:
                        self.scans.append((r["source"], links.Scan._make(carried)))
                elif self.root is not None:
                    self.unscanned.append((r["source"], str(source_path(self.root, r, self.in_place))))
        elif kind in est.BUILD_KINDS:
            self.build_replacements += r["replacements"]
            if (r["changed"] or r["findings"]) and r["status"] != "skipped":
                self.build_files.append(r["source"])

    def result(self, listed: bool = True) -> _Totals:
        """`listed`: the kernels as link() lists them too (else `kernels` is None)."""
        scans = self.scans + self._scanned()
        # The summary wants the numbers alone; the report, every kernel with its launches.
        kernels = links.link(scans) if listed else None
        n_kernels, n_launches = links.counts(scans)
        estimate = est.compute(est.Counts(self.converted, dict(self.tally), n_kernels, len(self.build_files)),
                               self.rates)
        by_category: Counter[str] = Counter()
        by_severity: Counter[str] = Counter()
        by_effort: Counter[str] = Counter()
        for (category, effort, severity), n in self.tally.items():
            by_category[category] += n
            by_severity[severity] += n
            by_effort[effort] += n
        macros = frozenset(self.macros)
        unmapped = {name: n for name, n in sorted(self.unmapped.items()) if name not in macros}
        unsupported = sum(unmapped.values())
        converted, lines, lines_changed = self.converted, self.lines, self.lines_changed
        summary = {
            "files": self.files,
            "changed": self.changed,
            "by_status": dict(sorted(self.by_status.items())),
            "replacements": sum(self.by_library.values()),
            "replacements_by_library": dict(sorted(self.by_library.items())),
            "unmapped": unmapped,
            "findings": sum(self.tally.values()),
            "by_category": dict(sorted(by_category.items())),
            "by_severity": dict(sorted(by_severity.items())),
            "by_effort": {e: by_effort[e] for e in EFFORTS if by_effort[e]},
            "api_references": converted + unsupported,
            "api_converted": converted,
            "api_unsupported": unsupported,
            "pct_converted": _pct(converted, converted + unsupported),
            "source_files": self.sources,
            "lines": lines,
            "lines_changed": lines_changed,
            "pct_lines_changed": _pct(lines_changed, lines),
            "kernels": n_kernels,
            "kernel_launches": n_launches,
            "build_files": len(self.build_files),
            "build_replacements": self.build_replacements,
            "estimate_hours": {k: estimate[k] for k in ("low", "likely", "high")},
        }
        return _Totals(summary, estimate, kernels, list(self.build_files), macros)

    def summary(self) -> dict:
        """The summary and estimate summary_lines() reads, from the records added so far: no
        entries per file and finding, no rule descriptions (so no rule module is imported)."""
        totals = self.result(listed=False)
        return {"summary": totals.summary, "estimate": totals.estimate}

    def _scanned(self) -> list[tuple[str, links.Scan]]:
        """Kernels of the files whose records carry none, scanned from the files (in worker
        processes for big trees)."""
        if not self.unscanned:
            return []
        from hipport import kernels as kern  # noqa: PLC0415 - its patterns: only for a scan
        from hipport import parallel  # noqa: PLC0415

        settings = self.settings
        jobs = [kern.FileJob(path, settings) for _, path in self.unscanned]
        workers = settings.jobs if len(jobs) >= PARALLEL_SCAN_FROM else 1
        return [(source, scan) for (source, _), scan in zip(self.unscanned, parallel.run(kern.scan_file, jobs, workers))
                if scan is not None]


class Report:
    """The report, taken one record at a time: what each file's entry is made of is kept as its
    record comes, and the record let go (a report of 51,000 files held both: 363 MB). `root`: where the
    files' relative paths start (for the kernel scan); `in_place`: the files there are already
    ported; `rates`: estimate rates (defaults)."""

    def __init__(self, settings: Settings, root: Path | None = None, in_place: bool = False,
                 rates: est.Rates | None = None, cache_root: Path | None = None) -> None:
        self.totals = Totals(settings, root, in_place, rates)
        # Each file's entry_values() (its findings as tuples), made its entry when the report
        # is: a report that its folder holds already (write_new) makes none.
        self.files: list = []
        self.cache_root = cache_root  # where the rules' docs and the written reports are kept
        self._made_of = blake2b(digest_size=32)  # see fingerprint; None: there is none

    def add(self, record: dict, stamp: tuple | None = None) -> None:
        """`stamp`: the file's stats that the runner vouches for (runner.Outcome.stamp), if any."""
        scans = len(self.totals.unscanned)
        self.totals.add(record)
        self.files.append(entry_values(record))
        made_of = self._made_of
        if made_of is None:
            return
        if stamp is not None:  # its record follows from its bytes, which its stats stand for
            made_of.update(marshal.dumps((record["source"], stamp), 2))
        elif record["findings"] or len(self.totals.unscanned) > scans:
            self._made_of = None  # the renderers read its lines (excerpts, kernels): no record says what they are
        else:  # (version 2: no references, whose use varies with how the values were made)
            made_of.update(marshal.dumps(record, 2))

    def fingerprint(self, target_hip: tuple[int, int]) -> bytes | None:
        """What this report is made of: every file's record, or the stats its record and its
        lines follow from, and the options that change the report (hipport's code and tables
        key the cache it is kept in). None when a file the renderers read has no stats to go by."""
        if self._made_of is None:
            return None
        t = self.totals
        made_of = self._made_of.copy()
        made_of.update(repr((target_hip, str(t.root), t.in_place, t.rates, t.settings.cache_key())).encode())
        return made_of.digest()

    def result(self, target_hip: tuple[int, int], project: str | None = None) -> dict:
        counted, settings, root = self.totals, self.totals.settings, self.totals.root
        totals = counted.result()
        per_file_kernels: dict[str, list[str]] = {}
        for k in totals.kernels:
            per_file_kernels.setdefault(k["path"], []).append(k["name"])
        files = self.files
        for i, values in enumerate(files):  # each entry in its values' place: never both whole
            files[i] = entry_of(values)
        for f in files:
            f["unmapped"] = [u for u in f["unmapped"] if u["name"] not in totals.project_macros]
            f["kernels"] = per_file_kernels.get(f["source"], [])
        findings = [x for f in files for x in f["findings"]]
        rules = _rules(findings, self.cache_root)
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
            "top_risks": _top_risks(findings, rules, counted.rates),
            "rules": rules,
            "kernels": totals.kernels,
            "build_files": totals.build_files,
            "estimate": totals.estimate,
        }


def build(results: Iterable[FileResult | dict], settings: Settings, target_hip: tuple[int, int], *,
          root: Path | None = None, in_place: bool = False, rates: est.Rates | None = None,
          project: str | None = None) -> dict:
    """The report of these results (see Report)."""
    report = Report(settings, root, in_place, rates)
    for r in results:
        report.add(r if isinstance(r, dict) else r.record())
    return report.result(target_hip, project)


def json_pieces(report: dict) -> Iterator[str]:
    """report.json's text in pieces (a big tree's report is tens of megabytes: see json_text)."""
    from hipport.report import json_text  # noqa: PLC0415 - a run that writes no report needs none

    return json_text.pieces(report)


REPORT_FILES = ("report.json", "report.md", "report.html")


def write_new(report: Report, folder: Path, target_hip: tuple[int, int]) -> tuple[Path, dict]:
    """Write the report into `folder` (see write) unless the folder holds it already: the files a
    run with the same fingerprint (Report.fingerprint) wrote there, with the stats that run left
    them with. A warm `port --report` of cuda-samples spent two thirds of its time writing the
    report it had written before. Returns report.json's path and what summary_lines reads."""
    from hipport.cache import open_cache

    made_of = report.fingerprint(target_hip) if report.cache_root is not None else None
    cache = open_cache(report.cache_root, "report", ()) if made_of is not None else None
    key = cache.key(b"", os.path.abspath(folder)) if cache is not None and cache.on else None
    if key is not None:
        stats = _stats(folder)
        if stats is not None and cache.get(key) == (made_of, stats):
            return folder / REPORT_FILES[0], report.totals.summary()
    totals = report.totals
    whole = report.result(target_hip)
    path = write(whole, folder, root=totals.root, in_place=totals.in_place)
    if key is not None:
        stats = _stats(folder)
        if stats is not None:
            cache.put(key, (made_of, stats))
    return path, whole


def _stats(folder: Path) -> tuple | None:
    """The report files' stat_values, or None when one is missing."""
    from hipport.cache import stat_values

    out = []
    for name in REPORT_FILES:
        try:
            out.append(stat_values(os.stat(os.path.join(folder, name), follow_symlinks=False)))
        except OSError:
            return None
    return tuple(out)


def write(report: dict, folder: Path, root: Path | None = None, in_place: bool = False) -> Path:
    """report.json, report.md and report.html in `folder`; returns report.json's path. `root`
    (with `in_place`) is where the renderers read the few lines around each finding."""
    from hipport.report import html, markdown

    excerpts = html.Excerpts(root, in_place) if root is not None else None
    json_name, md_name, html_name = REPORT_FILES
    path = folder / json_name
    for target, text in ((path, json_pieces(report)), (folder / md_name, markdown.render(report)),
                         (folder / html_name, html.render(report, excerpts))):
        write_text(target, text)
    return path


# --- commands --------------------------------------------------------------------------------


def from_paths(paths: list[Path], settings: Settings, rates: est.Rates | None = None,
               progress: bool = True, cache_root: Path | None = None) -> dict:
    """The port pipeline over PATH... in memory (nothing written), then the report (`estimate`).
    With `cache_root`, files `port` (or an earlier estimate) already did are served from its
    cache."""
    from hipport import runner

    root, jobs = runner.plan(paths, settings, runner.DRY_RUN, None, cache_root)
    report = Report(settings, root, rates=rates, cache_root=cache_root)  # each record let go as it comes, as port's
    tick, close = runner.stream_progress(len(jobs), progress)
    try:
        for outcome in runner.run(jobs, settings.jobs, tick):
            report.add(outcome.record)
    finally:
        close()
    return report.result(runner.target_hip(settings, cache_root))


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
