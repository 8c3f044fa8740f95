"""report.html: one self-contained page (inline CSS, JS and SVG; no network) from the report
model, rendered with jinja2 and autoescaping, so source text always arrives as text."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

import jinja2
from markupsafe import Markup, escape

from hipport import regexes
from hipport.estimate import fmt_hours, headline
from hipport.findings import CUT, EFFORTS, SEVERITIES, SNIPPET_MAX, snippet_of
from hipport.report import jinja

EXCERPT_CONTEXT = 2  # lines before and after the flagged one
EXCERPT_WIDTH = 160  # characters per line shown
MAX_EXCERPTS = 400  # per report: a huge tree keeps a page a browser opens
MAX_ROWS_PER_CATEGORY = 200
MAX_FILE_ROWS = 2000  # a huge tree lists its most eventful files; report.json has them all
_TICKS = regexes.compile(r"`([^`\n]+)`")
_READ_LIMIT = 4 * 1024 * 1024  # bytes read from one file for excerpts


class Excerpts:
    """A few lines around a finding, read lazily (one read per file) from where the file is."""

    def __init__(self, root: Path, in_place: bool = False):
        self.root = root
        self.in_place = in_place
        self._lines: dict[str, list[str] | None] = {}
        self._outputs: dict[str, str] = {}
        self.served = 0

    def know(self, files: list[Mapping]) -> None:
        self._outputs = {f["source"]: f["output"] for f in files}

    def _file_lines(self, path: str) -> list[str] | None:
        if path not in self._lines:
            rel = self._outputs.get(path, path) if self.in_place else path
            try:
                with open(self.root / rel, "rb") as fh:
                    data = fh.read(_READ_LIMIT)
                self._lines[path] = data.decode("utf-8", "replace").splitlines()
            except OSError:
                self._lines[path] = None
        return self._lines[path]

    def __call__(self, path: str, line: int, snippet: str = "", column: int = 1) -> list[dict] | None:
        if self.served >= MAX_EXCERPTS:
            return None
        lines = self._file_lines(path)
        if not lines or line < 1:
            return None
        at = line
        if snippet and not (at <= len(lines) and snippet_of(snippet, lines[at - 1])):
            at = _nearby(lines, line, snippet)
        if at > len(lines):
            return None
        self.served += 1
        first, last = max(1, at - EXCERPT_CONTEXT), min(len(lines), at + EXCERPT_CONTEXT)
        return [{"n": n, "text": _clip(lines[n - 1].expandtabs(4), column if n == at else 1), "hit": n == at}
                for n in range(first, last + 1)]


def _nearby(lines: list[str], line: int, snippet: str) -> int:
    """After --in-place the flagged line may have moved (an added #include) and changed (its
    CUDA names rewritten): the same text nearby, else the most similar nearby line."""
    near = range(max(1, line - 3), min(len(lines), line + 3) + 1)
    same = [n for n in near if snippet_of(snippet, lines[n - 1])]
    if same:
        return min(same, key=lambda n: abs(n - line))
    # (a long line's own start: difflib's time grows with the product of the lengths)
    scored = [(difflib.SequenceMatcher(None, lines[n - 1].strip()[:2 * SNIPPET_MAX], snippet).ratio(),
               -abs(n - line), n) for n in near]
    best = max(scored, default=None)
    return best[2] if best is not None and best[0] >= 0.6 else line


def _clip(text: str, column: int = 1) -> str:
    """The line as shown: a long one cut to EXCERPT_WIDTH, around `column` (the flagged
    line's finding, which a minified file has far past the line's start)."""
    if len(text) <= EXCERPT_WIDTH:
        return text
    start = max(0, min(column - 1 - EXCERPT_WIDTH // 4, len(text) - EXCERPT_WIDTH + 1))
    if start == 0:
        return text[: EXCERPT_WIDTH - 1] + CUT
    shown = text[start + 1 : start + EXCERPT_WIDTH - 1]
    return CUT + shown + (CUT if start + EXCERPT_WIDTH - 1 < len(text) else "")


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("hipport.report", "templates"), bytecode_cache=jinja.KEPT,
        autoescape=True, trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined,
    )
    env.filters["hours"] = fmt_hours
    env.filters["ticks"] = ticks
    env.filters["prose"] = prose
    env.filters["pct"] = lambda v: "n/a" if v is None else f"{v:g}%"
    return env


def prose(text: str) -> Markup:
    """A rule doc section: hard-wrapped lines joined, paragraphs and `- ` items kept apart."""
    paragraphs = [re.sub(r"[ \t]*\n[ \t]*+(?!- )", " ", p.strip()) for p in re.split(r"\n\s*\n", text) if p.strip()]
    return Markup("<br>".join(str(ticks(p)).replace("\n", "<br>") for p in paragraphs))


def ticks(text: str) -> Markup:
    """Escape, then show `code` spans as <code> (the rule docs are written that way)."""
    return Markup(_TICKS.sub(r"<code>\1</code>", str(escape(text))))


def chart(groups: Mapping[str, Mapping[str, float]], width: int = 640, bar: int = 22) -> dict:
    """Geometry of the bar chart (likely hours per group, a whisker from low to high)."""
    items = list(groups.items())
    label_w, value_w = 170, 90
    plot_w = width - label_w - value_w
    top = max([g["high"] for _, g in items] + [1e-9])
    rows = []
    for i, (name, g) in enumerate(items):
        y = 10 + i * (bar + 8)
        rows.append({
            "name": name, "y": y, "mid": y + bar / 2,
            "w": round(plot_w * g["likely"] / top, 1),
            "lo": round(label_w + plot_w * g["low"] / top, 1),
            "hi": round(label_w + plot_w * g["high"] / top, 1),
            "likely": g["likely"], "low": g["low"], "high": g["high"],
        })
    return {"width": width, "height": 20 + len(items) * (bar + 8), "bar": bar, "x0": label_w,
            "vx": width - value_w + 6, "rows": rows}


def file_rows(files: list, limit: int) -> tuple[list, int]:
    """All files in path order, or, past `limit`, the most eventful ones (findings, unmapped
    names, changes) and how many were left out."""
    if len(files) <= limit:
        return list(files), 0
    ranked = sorted(files, key=lambda f: (-len(f["findings"]), -len(f["unmapped"]), not f["changed"], f["source"]))
    return ranked[:limit], len(files) - limit


def render(report: Mapping, excerpts: Excerpts | None = None) -> str:
    if excerpts is not None:
        excerpts.know(report["files"])
    by_category: dict[str, list[Mapping]] = {}
    for f in report["findings"]:
        by_category.setdefault(f["category"], []).append(f)
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    for rows in by_category.values():
        rows.sort(key=lambda f: (-rank[f["severity"]], f["path"], f["line"], f["column"]))
    categories = sorted(by_category, key=lambda c: (-report["breakdown"][c]["hours"]["likely"], c))
    files, more = file_rows(report["files"], MAX_FILE_ROWS)
    return environment().get_template("report.html.j2").render(
        r=report, s=report["summary"], est=report["estimate"], headline=headline(report["estimate"]),
        by_category=by_category, categories=categories, chart=chart(report["estimate"]["by_group"]),
        excerpt=excerpts or (lambda *a: None), severities=list(reversed(SEVERITIES)), efforts=EFFORTS,
        max_rows=MAX_ROWS_PER_CATEGORY, file_rows=files, files_more=more, max_file_rows=MAX_FILE_ROWS,
    )
