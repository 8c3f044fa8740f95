"""The effort estimate: counts from the report x configured rates -> hours with a range.

    hours = converted references x review time
          + sum over findings of effort-class hours x category multiplier
          + kernels x kernel hours + build files x build-file hours

Every rate is a (low, likely, high) triple; the range sums the low and the high ends. Rates
come from DEFAULTS (documented with their sources in the README), then `[tool.hipport.estimate]`,
then `--calibrate FILE` (a least-squares fit to past ports).
"""

from __future__ import annotations

import io
import itertools
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType

from hipport import TYPE_CHECKING
from hipport.errors import HipportError
from hipport.findings import CATEGORY_CODES, EFFORTS
from hipport.tuples import NamedTuple
from hipport.words import plural

if TYPE_CHECKING:
    from typing import Any

BUILD_KINDS = frozenset({"cmake", "make", "setup.py", "docker", "requirements", "pyproject", "shell"})
SOURCE_KINDS = frozenset({"cuda", "cpp"})


class Range(NamedTuple):
    low: float
    likely: float
    high: float

    def scaled(self, k: float) -> Range:
        return Range(self.low * k, self.likely * k, self.high * k)

    def __add__(self, other: Range) -> Range:
        return Range(self.low + other.low, self.likely + other.likely, self.high + other.high)

    def to_json(self, digits: int = 3) -> dict:
        return {"low": round(self.low, digits), "likely": round(self.likely, digits),
                "high": round(self.high, digits)}


ZERO = Range(0.0, 0.0, 0.0)


class Rates(NamedTuple):
    review_minutes: Range  # per converted CUDA API reference
    effort_hours: Mapping[str, Range]  # per finding, by effort class
    category_multiplier: Mapping[str, float]  # per finding category (1.0 when absent)
    kernel_hours: Range  # per kernel found
    build_file_hours: Range  # per build file the port changed or flagged
    source: str = "defaults"

    def multiplier(self, category: str) -> float:
        return self.category_multiplier.get(category, 1.0)

    def to_json(self) -> dict:
        return {
            "review_minutes_per_reference": self.review_minutes.to_json(4),
            "effort_hours": {e: self.effort_hours[e].to_json(4) for e in EFFORTS},
            "category_multiplier": dict(sorted(self.category_multiplier.items())),
            "kernel_hours": self.kernel_hours.to_json(4),
            "build_file_hours": self.build_file_hours.to_json(4),
            "source": self.source,
        }


# Our defaults; README "Migration report and estimate" gives the reasoning and sources.
DEFAULTS = Rates(
    review_minutes=Range(0.1, 0.25, 1.0),
    effort_hours={
        "trivial": Range(0.05, 0.1, 0.25),
        "low": Range(0.25, 0.5, 1.0),
        "medium": Range(1.0, 2.0, 4.0),
        "high": Range(4.0, 8.0, 16.0),
    },
    category_multiplier={
        "cuda-only-library": 2.0,
        "tensor-core": 1.5,
        "async-copy": 1.5,
        "dynamic-parallelism": 1.5,
        "inline-ptx": 1.25,
    },
    kernel_hours=Range(0.25, 0.5, 2.0),
    build_file_hours=Range(0.5, 1.0, 4.0),
)

ASSUMPTIONS = (
    "Hours of work for one developer who knows the code base, not calendar time.",
    "Review covers reading the automatic changes; each converted CUDA API reference costs the review rate.",
    "Each finding costs its rule's effort class rate times its category's multiplier; an unsupported "
    "API is counted once, as its unsupported-api finding.",
    "Each kernel costs the kernel rate: build, run and compare its results on an AMD GPU "
    "(64-lane wavefronts); deeper performance tuning is not included.",
    "Each build file the port changed or flagged costs the build-file rate.",
    "The range adds up every item's low and every item's high rate: a best and a worst case, "
    "not a confidence interval.",
)

# --- configuration ---------------------------------------------------------------------------

_TOP_KEYS = {"review-minutes", "effort-hours", "category-multiplier", "kernel-hours", "build-file-hours"}


def _range(value: Any, where: str) -> Range:
    """A number (low = likely = high) or [low, likely, high], non-negative and ordered."""
    if isinstance(value, bool):
        raise HipportError(f"{where}: want a number or [low, likely, high], not {value!r}")
    if isinstance(value, (int, float)):
        values = [float(value)] * 3
    elif isinstance(value, list) and len(value) == 3 and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        values = [float(v) for v in value]
    else:
        raise HipportError(f"{where}: want a number or [low, likely, high], not {value!r}")
    if any(v < 0 or not math.isfinite(v) for v in values) or not values[0] <= values[1] <= values[2]:
        raise HipportError(f"{where}: rates must be finite, non-negative and low <= likely <= high, not {value!r}")
    return Range(*values)


def rates_from_table(table: Mapping[str, Any], base: Rates = DEFAULTS, source: str = "") -> Rates:
    """`[tool.hipport.estimate]` over `base`. Unknown keys are errors (a typo must not be ignored)."""
    prefix = "[tool.hipport.estimate]"
    table = {str(k).replace("_", "-"): v for k, v in table.items()}
    unknown = sorted(set(table) - _TOP_KEYS)
    if unknown:
        raise HipportError(f"{prefix}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_TOP_KEYS))})")
    rates = base
    if "review-minutes" in table:
        rates = rates._replace(review_minutes=_range(table["review-minutes"], f"{prefix} review-minutes"))
    for key, attr in (("kernel-hours", "kernel_hours"), ("build-file-hours", "build_file_hours")):
        if key in table:
            rates = rates._replace(**{attr: _range(table[key], f"{prefix} {key}")})
    if "effort-hours" in table:
        sub = table["effort-hours"]
        if not isinstance(sub, dict):
            raise HipportError(f"{prefix} effort-hours: want a table of {', '.join(EFFORTS)}")
        efforts = dict(rates.effort_hours)
        for k, v in sub.items():
            if k not in EFFORTS:
                raise HipportError(f"{prefix} effort-hours: unknown effort class {k!r} (known: {', '.join(EFFORTS)})")
            efforts[k] = _range(v, f"{prefix} effort-hours.{k}")
        rates = rates._replace(effort_hours=efforts)
    if "category-multiplier" in table:
        sub = table["category-multiplier"]
        if not isinstance(sub, dict):
            raise HipportError(f"{prefix} category-multiplier: want a table of category = number")
        mult = dict(rates.category_multiplier)
        for k, v in sub.items():
            if k not in CATEGORY_CODES:
                raise HipportError(f"{prefix} category-multiplier: unknown category {k!r} (see `hipport rules`)")
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0 or not math.isfinite(v):
                raise HipportError(f"{prefix} category-multiplier.{k}: want a non-negative number, not {v!r}")
            mult[k] = float(v)
        rates = rates._replace(category_multiplier=mult)
    return rates._replace(source=source or rates.source)


def load_rates(paths: list[Path]) -> Rates:
    """DEFAULTS, then `[tool.hipport.estimate]` of the configuration nearest the first path."""
    from hipport.config import find_config

    found = find_config(paths[0]) if paths else None
    if not found:
        return DEFAULTS
    where, table = found
    sub = table.get("estimate")
    if sub is None:
        return DEFAULTS
    if not isinstance(sub, dict):
        raise HipportError(f"{where}: [tool.hipport.estimate] must be a table")
    return rates_from_table(sub, DEFAULTS, source=str(where))


# --- the estimate ----------------------------------------------------------------------------

class Counts(NamedTuple):
    """What the estimate multiplies: the report's numbers, nothing else."""
    references: int = 0  # CUDA API references converted automatically
    findings: Mapping[tuple[str, str, str], int] = MappingProxyType({})  # (category, effort, severity) -> n
    kernels: int = 0
    build_files: int = 0

    def by_effort(self) -> dict[str, int]:
        out = {e: 0 for e in EFFORTS}
        for (_, effort, _), n in self.findings.items():
            out[effort] += n
        return out


def counts_from(references: int, findings: Iterable[Mapping], kernels: int, build_files: int) -> Counts:
    tally: dict[tuple[str, str, str], int] = {}
    for f in findings:
        key = (f["category"], f["effort"], f["severity"])
        tally[key] = tally.get(key, 0) + 1
    return Counts(references, tally, kernels, build_files)


def fmt_hours(h: float) -> str:
    """Hours for people: 0.3 h, 2 h, 12.5 h."""
    if h == 0:
        return "0"
    if h < 10:
        text = f"{h:.2f}".rstrip("0").rstrip(".") if h < 1 else f"{h:.1f}".rstrip("0").rstrip(".")
        return text or "0"
    return f"{h:.0f}" if h >= 100 else f"{h:.1f}".rstrip("0").rstrip(".")


def _rate_text(r: Range, unit: str) -> str:
    if r.low == r.likely == r.high:
        return f"{fmt_hours(r.likely)} {unit}"
    return f"{fmt_hours(r.likely)} {unit} ({fmt_hours(r.low)}–{fmt_hours(r.high)})"


def compute(counts: Counts, rates: Rates) -> dict:
    """The estimate as the report stores it: items with their arithmetic, totals, rates."""
    items: list[dict] = []

    def add(kind: str, group: str, count: int, rate: Range, multiplier: float, unit_text: str,
            text: str, **extra) -> None:
        hours = rate.scaled(count * multiplier)
        items.append({"kind": kind, "group": group, "count": count, "rate": rate.to_json(4),
                      "multiplier": multiplier, "hours": hours.to_json(), "unit": unit_text,
                      "text": text, **extra, "fmt_hours": hours})

    if counts.references:
        minutes = rates.review_minutes
        add("review", "review", counts.references, minutes.scaled(1 / 60), 1.0, "hours per reference",
            f"{plural(counts.references, 'converted CUDA API reference')} × "
            f"{_rate_text(minutes, 'min')} review")
    grouped: dict[tuple[str, str], int] = {}
    severity_of: dict[tuple[str, str], str] = {}
    for (category, effort, severity), n in counts.findings.items():
        grouped[(category, effort)] = grouped.get((category, effort), 0) + n
        worst = severity_of.get((category, effort))
        if worst is None or _SEVERITY_RANK[severity] > _SEVERITY_RANK[worst]:
            severity_of[(category, effort)] = severity
    for (category, effort), n in sorted(grouped.items(), key=lambda kv: (kv[0][0], EFFORTS.index(kv[0][1]))):
        rate = rates.effort_hours[effort]
        mult = rates.multiplier(category)
        text = f"{plural(n, category + ' finding')} ({effort} effort) × {_rate_text(rate, 'h')}"
        if mult != 1.0:
            text += f" × {mult:g} for {category}"
        add("finding", category, n, rate, mult, "hours per finding", text, category=category,
            effort=effort, severity=severity_of[(category, effort)])
    if counts.kernels:
        add("kernel", "kernels", counts.kernels, rates.kernel_hours, 1.0, "hours per kernel",
            f"{plural(counts.kernels, 'kernel')} × {_rate_text(rates.kernel_hours, 'h')} "
            f"to build, run and check on an AMD GPU")
    if counts.build_files:
        add("build-file", "build files", counts.build_files, rates.build_file_hours, 1.0,
            "hours per build file",
            f"{plural(counts.build_files, 'build file')} × {_rate_text(rates.build_file_hours, 'h')}")
    total = ZERO
    by_group: dict[str, Range] = {}
    for it in items:
        total = total + it["fmt_hours"]
        by_group[it["group"]] = by_group.get(it["group"], ZERO) + it.pop("fmt_hours")
    by_effort = counts.by_effort()
    return {
        "unit": "hours",
        **total.to_json(),
        "items": items,
        "by_group": {g: r.to_json() for g, r in sorted(by_group.items(), key=lambda kv: -kv[1].likely)},
        "counts": {"references": counts.references, **by_effort, "kernels": counts.kernels,
                   "build_files": counts.build_files},
        "rates": rates.to_json(),
        "assumptions": list(ASSUMPTIONS),
    }


_SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


def headline(est: Mapping) -> str:
    """`6.5 h (range 2.9–18 h)`"""
    return f"{fmt_hours(est['likely'])} h (range {fmt_hours(est['low'])}–{fmt_hours(est['high'])} h)"


def format_text(report: Mapping) -> str:
    """The estimate explained line by line, then every rate and assumption."""
    est = report["estimate"]
    s = report["summary"]
    out = []
    name = report.get("project", {}).get("name") or "the project"
    out.append(f"Estimate for {name}: {headline(est)} of manual work")
    pct = s.get("pct_converted")
    refs = s.get("api_references", 0)
    out.append(f"{s['files']} files, {s['changed']} changed; "
               + (f"{pct:g}% of {refs} CUDA API references converted automatically; " if pct is not None
                  else "no CUDA API references; ")
               + f"{plural(s['findings'], 'finding')}; {plural(s.get('kernels', 0), 'kernel')}; "
               + f"{plural(s.get('build_files', 0), 'build file')}")
    out.append("")
    width = max([len(it["text"]) for it in est["items"]] + [20])
    for it in est["items"]:
        h = it["hours"]
        out.append(f"  {it['text']:<{width}}  = {fmt_hours(h['likely']):>5} h  ({fmt_hours(h['low'])}–{fmt_hours(h['high'])} h)")
    if not est["items"]:
        out.append("  nothing to do: no CUDA references, findings, kernels or build files")
    out.append(f"  {'total':<{width}}  = {fmt_hours(est['likely']):>5} h  ({fmt_hours(est['low'])}–{fmt_hours(est['high'])} h)")
    out.append("")
    r = est["rates"]
    out.append(f"Rates ({r['source']}; set them in [tool.hipport.estimate]):")
    out.append(f"  review-minutes        {_triple(r['review_minutes_per_reference'])}  per converted reference")
    for e in EFFORTS:
        out.append(f"  effort-hours.{e:<8} {_triple(r['effort_hours'][e])}  per finding")
    mult = r["category_multiplier"]
    if mult:
        out.append("  category-multiplier   " + ", ".join(f"{k} {v:g}" for k, v in mult.items())
                   + " (others 1)")
    out.append(f"  kernel-hours          {_triple(r['kernel_hours'])}  per kernel")
    out.append(f"  build-file-hours      {_triple(r['build_file_hours'])}  per build file")
    out.append("Assumptions:")
    out.extend(f"  - {a}" for a in est["assumptions"])
    return "\n".join(out) + "\n"


def _triple(r: Mapping) -> str:
    return f"[{r['low']:g}, {r['likely']:g}, {r['high']:g}]"


# --- calibration -----------------------------------------------------------------------------

CALIBRATION_COLUMNS = ("references",) + EFFORTS + ("kernels", "build_files")
_ALIASES = {"build-files": "build_files", "build files": "build_files", "refs": "references"}
_IGNORED = {"name", "project", "notes", "note", "source"}


class Calibration(NamedTuple):
    rates: Rates
    fitted: dict[str, float]  # column -> likely hours per unit
    rows: int
    rms: float  # root-mean-square error of the fit, hours
    kept: tuple[str, ...]  # columns absent or all zero: configured rates kept

    def lines(self) -> list[str]:
        out = [f"Calibrated on {plural(self.rows, 'past port')} (least squares, rates >= 0; "
               f"RMS error {fmt_hours(self.rms)} h):"]
        for col, v in self.fitted.items():
            shown = f"{v * 60:.3g} min" if col == "references" else f"{v:.3g} h"
            out.append(f"  {col:<12} {shown} per unit")
        if self.kept:
            out.append(f"  kept as configured (no data): {', '.join(self.kept)}")
        if any(c in self.fitted for c in EFFORTS):
            out.append("  category multipliers set to 1 (the fitted effort rates average over categories)")
        return out


def read_calibration_csv(text: str, where: str = "CSV") -> tuple[list[str], list[list[float]], list[float]]:
    """Columns used, count rows and actual hours from a CSV of past ports: a header with `hours`
    and any of CALIBRATION_COLUMNS (`name`/`project`/`notes` are ignored)."""
    import csv  # noqa: PLC0415 - calibration alone reads CSV

    reader = csv.reader(io.StringIO(text))
    rows = [r for r in reader if r and any(c.strip() for c in r) and not r[0].lstrip().startswith("#")]
    if not rows:
        raise HipportError(f"{where}: empty calibration file")
    header = [_ALIASES.get(h.strip().lower(), h.strip().lower()) for h in rows[0]]
    if "hours" not in header:
        raise HipportError(f"{where}: the header needs an `hours` column (actual hours of each past port)")
    for h in header:
        if h != "hours" and h not in CALIBRATION_COLUMNS and h not in _IGNORED:
            raise HipportError(f"{where}: unknown column {h!r} (known: hours, {', '.join(CALIBRATION_COLUMNS)})")
    cols = [c for c in CALIBRATION_COLUMNS if c in header]
    if not cols:
        raise HipportError(f"{where}: no count columns (want some of {', '.join(CALIBRATION_COLUMNS)})")
    matrix, hours = [], []
    for n, row in enumerate(rows[1:], start=2):
        cells = dict(zip(header, row))
        try:
            hours.append(float(cells.get("hours", "") or "nan"))
            matrix.append([float(cells.get(c, "") or 0) for c in cols])
        except ValueError as exc:
            raise HipportError(f"{where}: row {n}: {exc}") from None
        if not math.isfinite(hours[-1]) or hours[-1] < 0 or any(v < 0 or not math.isfinite(v) for v in matrix[-1]):
            raise HipportError(f"{where}: row {n}: hours and counts must be non-negative numbers")
    return cols, matrix, hours


def _solve(a: list[list[float]], b: list[float]) -> list[float] | None:
    """Gaussian elimination with partial pivoting; None when singular."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    scale = max((abs(x) for row in a for x in row), default=0.0) or 1.0
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        if abs(m[p][c]) <= 1e-12 * scale:
            return None
        m[c], m[p] = m[p], m[c]
        for r in range(c + 1, n):
            f = m[r][c] / m[c][c]
            if f:
                for k in range(c, n + 1):
                    m[r][k] -= f * m[c][k]
    x = [0.0] * n
    for c in range(n - 1, -1, -1):
        x[c] = (m[c][n] - sum(m[c][k] * x[k] for k in range(c + 1, n))) / m[c][c]
    return x


def nnls(a: list[list[float]], b: list[float]) -> list[float]:
    """min ||a x - b|| subject to x >= 0, exactly, for a handful of columns: the optimum is the
    unconstrained least-squares solution on some subset of columns (the others zero), so try
    every subset and keep the feasible one with the smallest residual."""
    n = len(a[0]) if a else 0
    best, best_res = [0.0] * n, sum(v * v for v in b)
    for size in range(1, n + 1):
        for subset in itertools.combinations(range(n), size):
            ata = [[sum(row[i] * row[j] for row in a) for j in subset] for i in subset]
            atb = [sum(row[i] * v for row, v in zip(a, b)) for i in subset]
            sol = _solve(ata, atb)
            if sol is None or any(v < -1e-9 for v in sol):
                continue
            x = [0.0] * n
            for i, v in zip(subset, sol):
                x[i] = max(v, 0.0)
            res = sum((sum(r * xi for r, xi in zip(row, x)) - v) ** 2 for row, v in zip(a, b))
            if res < best_res - 1e-9 * max(1.0, best_res):
                best, best_res = x, res
    return best


def calibrate(text: str, base: Rates, where: str = "CSV") -> Calibration:
    """Fit the likely rates to past ports by non-negative least squares. Low and high keep their
    configured ratio to likely; columns with no data keep their configured rates."""
    cols, matrix, hours = read_calibration_csv(text, where)
    used = [i for i, c in enumerate(cols) if any(row[i] for row in matrix)]
    kept = tuple(c for c in CALIBRATION_COLUMNS if c not in [cols[i] for i in used])
    if not used:
        raise HipportError(f"{where}: every count is zero; nothing to fit")
    if len(matrix) < len(used):
        raise HipportError(f"{where}: {plural(len(matrix), 'row')} cannot fit {len(used)} rates "
                           f"({', '.join(cols[i] for i in used)}); give at least {len(used)} past ports")
    a = [[row[i] for i in used] for row in matrix]
    x = nnls(a, hours)
    fitted = {cols[i]: v for i, v in zip(used, x)}
    rms = math.sqrt(sum((sum(r * v for r, v in zip(row, x)) - h) ** 2 for row, h in zip(a, hours)) / len(hours))

    def refit(old: Range, likely: float) -> Range:
        if old.likely > 0:
            return Range(old.low / old.likely * likely, likely, old.high / old.likely * likely)
        return Range(likely, likely, likely)

    rates = base
    if "references" in fitted:
        rates = rates._replace(review_minutes=refit(rates.review_minutes, fitted["references"] * 60))
    efforts = dict(rates.effort_hours)
    for e in EFFORTS:
        if e in fitted:
            efforts[e] = refit(efforts[e], fitted[e])
    rates = rates._replace(effort_hours=efforts)
    if any(e in fitted for e in EFFORTS):
        rates = rates._replace(category_multiplier={k: 1.0 for k in rates.category_multiplier})
    if "kernels" in fitted:
        rates = rates._replace(kernel_hours=refit(rates.kernel_hours, fitted["kernels"]))
    if "build_files" in fitted:
        rates = rates._replace(build_file_hours=refit(rates.build_file_hours, fitted["build_files"]))
    rates = rates._replace(source=f"calibrated on {where}")
    return Calibration(rates, fitted, len(matrix), rms, kept)


def toml_snippet(rates: Rates) -> str:
    """The `[tool.hipport.estimate]` table that reproduces these rates."""
    def t(r: Range) -> str:
        return f"[{r.low:.4g}, {r.likely:.4g}, {r.high:.4g}]"
    lines = ["[tool.hipport.estimate]", f"review-minutes = {t(rates.review_minutes)}",
             f"kernel-hours = {t(rates.kernel_hours)}", f"build-file-hours = {t(rates.build_file_hours)}",
             "", "[tool.hipport.estimate.effort-hours]"]
    lines += [f"{e} = {t(rates.effort_hours[e])}" for e in EFFORTS]
    lines += ["", "[tool.hipport.estimate.category-multiplier]"]
    # Every category with a default multiplier too: the table is read over the defaults.
    names = sorted(set(rates.category_multiplier) | set(DEFAULTS.category_multiplier))
    lines += [f"{k} = {rates.multiplier(k):g}" for k in names]
    return "\n".join(lines) + "\n"
