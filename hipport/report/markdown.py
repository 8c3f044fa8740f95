"""report.md: the report for pull requests and wikis (GitHub-flavoured Markdown), from the model."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

import jinja2

from hipport import regexes
from hipport.estimate import fmt_hours, headline
from hipport.findings import SEVERITIES
from hipport.report import jinja

MAX_FINDINGS = 100  # rows in the findings table; report.json and report.html have them all
MAX_FILES = 200  # rows in the files table
MAX_ROWS = 100  # rows in the unsupported-API and kernel tables
_TEXT_SPECIAL = regexes.compile(r"[|\\*\[\]<>]")
_CODE_SPAN = regexes.compile(r"(`[^`]+`)")


def _escape_text(text: str) -> str:
    return _TEXT_SPECIAL.sub(lambda m: {"<": "&lt;", ">": "&gt;"}.get(m.group(), "\\" + m.group()), text)


def cell(text) -> str:
    """Text for a table cell or list item: one line; `code` spans kept (only `|` escaped in
    them), Markdown and HTML specials escaped elsewhere."""
    text = " ".join(str(text).split())
    parts = _CODE_SPAN.split(text)
    return "".join(p.replace("|", "\\|") if i % 2 else _escape_text(p).replace("`", "\\`")
                   for i, p in enumerate(parts))


def code(text) -> str:
    """Inline code that survives backticks and pipes inside it (for table cells too)."""
    text = " ".join(str(text).split()).replace("|", "\\|")
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("hipport.report", "templates"), bytecode_cache=jinja.KEPT,
        autoescape=False, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters.update(hours=fmt_hours, cell=cell, code=code,
                       pct=lambda v: "n/a" if v is None else f"{v:g}%")
    return env


def render(report: Mapping) -> str:
    from hipport.report.html import file_rows

    files, files_more = file_rows(report["files"], MAX_FILES)
    findings = sorted(report["findings"], key=lambda f: (-SEVERITIES.index(f["severity"]), f["path"], f["line"]))
    text = environment().get_template("report.md.j2").render(
        r=report, s=report["summary"], est=report["estimate"], headline=headline(report["estimate"]),
        severities=list(reversed(SEVERITIES)), findings=findings[:MAX_FINDINGS],
        more=max(0, len(findings) - MAX_FINDINGS), file_rows=files, files_more=files_more,
        max_rows=MAX_ROWS,
    )
    return re.sub(r"\n{3,}", "\n\n", text).rstrip("\n") + "\n"
