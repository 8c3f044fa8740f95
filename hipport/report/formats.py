"""Output formats for `check`: one table of formatters, each a function of the CheckResult (or
CheckRun) giving the text in pieces, as the findings come: what they add up to (the summary,
SARIF's notifications) is read after them.

    text    path:line:col: severity: message [CODE category], then a summary line
    json    SPEC's shape: version, tool, findings, summary
    sarif   SARIF 2.1.0, for code-scanning uploads
    github  GitHub Actions workflow commands (::error file=...::message), one per finding
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator

from hipport import TYPE_CHECKING, __version__
from hipport.findings import SEVERITIES, Finding
from hipport.lazy import lazy_import
from hipport.rules import DOC_SECTIONS, Rule
from hipport.suppress import normalize
from hipport.words import plural

json_text = lazy_import("hipport.report.json_text")  # and json: loaded for JSON and SARIF only

if TYPE_CHECKING:
    from hipport.check import CheckResult, CheckRun

JSON_VERSION = 1
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
FINGERPRINT_KEY = "hipport/v1"
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def summary_line(result: CheckResult | CheckRun) -> str:
    by, files = result.severities, plural(result.checked, "file")
    n = sum(by.values())
    if n:
        parts = ", ".join(plural(by[s], s) for s in reversed(SEVERITIES) if by[s])
        line = f"Found {plural(n, 'finding')} ({parts}) in {files}"
    else:
        line = f"No findings in {files}"
    extra = []
    if result.suppressed:
        extra.append(f"{result.suppressed} suppressed")
    if result.baselined:
        extra.append(f"{result.baselined} in the baseline")
    failed = len(result.failed)
    if failed:
        extra.append(f"{plural(failed, 'file')} failed")
    skipped = sum(1 for f in result.troubles if f.status == "skipped")
    if skipped:  # binary, not UTF-8, too large, a link out of the tree: each named on stderr
        extra.append(f"{plural(skipped, 'file')} skipped")
    return line + (f" ({'; '.join(extra)})" if extra else "") + "."


def _one_line(text: str) -> str:
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


def format_text(result: CheckResult | CheckRun) -> Iterator[str]:
    for f in result.findings:
        yield f"{f.path}:{f.line}:{f.column}: {f.severity}: {_one_line(f.message)} [{f.rule} {f.category}]\n"
    yield summary_line(result) + "\n"


def json_document(result: CheckResult | CheckRun) -> dict:
    """SPEC's document; its findings are written as they come (json_text.Items)."""
    def summary() -> dict:
        by_severity = result.severities
        return {
            "files": result.checked,
            "findings": sum(by_severity.values()),
            "by_category": dict(sorted(result.categories.items())),
            "by_severity": {s: by_severity[s] for s in reversed(SEVERITIES) if by_severity[s]},
        }

    return {
        "version": JSON_VERSION,
        "tool": {"name": "hipport", "version": __version__},
        "findings": json_text.Items(f.to_json() for f in result.findings),
        "summary": json_text.Later(summary),
    }


def format_json(result: CheckResult | CheckRun) -> Iterator[str]:
    """The JSON text in pieces (json_text: a big tree's document is never whole as text)."""
    return json_text.pieces(json_document(result))


# --- SARIF -----------------------------------------------------------------------------------

def fingerprint(f: Finding) -> str:
    """Stable across line moves: rule + path + whitespace-normalized line text."""
    import hashlib  # noqa: PLC0415 - SARIF alone needs it; its import costs every check 4 ms

    key = "\0".join((f.rule, f.path, normalize(f.snippet)))
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def _short(rule: Rule) -> str:
    what = " ".join(rule.section("What it does").split())
    if not what:
        return rule.name.replace("-", " ")
    end = what.find(". ")
    return what if end < 0 else what[: end + 1]


def _help_markdown(rule: Rule) -> str:
    parts = []
    for title in DOC_SECTIONS:
        body = rule.section(title)
        if not body:
            continue
        if title == "Example":
            body = "```cuda\n" + body + "\n```"
        parts.append(f"## {title}\n\n{body}")
    return "\n\n".join(parts) or rule.doc


def sarif_rule(rule: Rule) -> dict:
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": _short(rule)},
        "fullDescription": {"text": " ".join(rule.section("What it does").split()) or _short(rule)},
        "help": {"text": rule.doc or _short(rule), "markdown": _help_markdown(rule)},
        "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
        "properties": {"category": rule.category, "effort": rule.effort, "tags": [rule.category]},
    }


def sarif_document(result: CheckResult | CheckRun) -> dict:
    """The SARIF log; its results are written as they come (json_text.Items), and the run's
    invocation, which says the files skipped or failed, after them."""
    rules = sorted({r.code: r for r in result.rules}.values(), key=lambda r: r.code)
    index = {r.code: i for i, r in enumerate(rules)}

    def results() -> Iterator[dict]:
        seen: Counter = Counter()
        for f in result.findings:
            fp = fingerprint(f)
            seen[fp] += 1
            region = {"startLine": f.line, "startColumn": f.column}
            if (f.end_line, f.end_column) >= (f.line, f.column):
                region.update(endLine=f.end_line, endColumn=f.end_column)
            if f.snippet:
                region["snippet"] = {"text": f.snippet}
            item = {
                "ruleId": f.rule,
                "level": _SARIF_LEVEL[f.severity],
                "message": {"text": f.message},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": f.path, "uriBaseId": "%SRCROOT%"},
                    "region": region,
                }}],
                "partialFingerprints": {FINGERPRINT_KEY: f"{fp}:{seen[fp]}"},
                "properties": {"category": f.category, "effort": f.effort, "severity": f.severity},
            }
            if f.rule in index:
                item["ruleIndex"] = index[f.rule]
            if f.suggestion:
                item["properties"]["suggestion"] = f.suggestion
            yield item

    def invocations() -> list[dict]:
        notifications = [{"level": "error" if r.status == "failed" else "note",
                          "message": {"text": f"{r.status}: {r.reason}"},
                          "locations": [{"physicalLocation": {"artifactLocation": {"uri": r.path,
                                                                                   "uriBaseId": "%SRCROOT%"}}}]}
                         for r in result.troubles]
        invocation: dict = {"executionSuccessful": not result.failed}
        if notifications:
            invocation["toolExecutionNotifications"] = notifications
        return [invocation]

    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "hipport",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": [sarif_rule(r) for r in rules],
            }},
            "columnKind": "unicodeCodePoints",
            "results": json_text.Items(results()),
            "invocations": json_text.Later(invocations),
        }],
    }


def format_sarif(result: CheckResult | CheckRun) -> Iterator[str]:
    """The SARIF text in pieces, as format_json's."""
    return json_text.pieces(sarif_document(result))


# --- GitHub Actions --------------------------------------------------------------------------

def escape_data(text: str) -> str:
    """A workflow command's message: `%`, CR and LF are encoded."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: also `:` and `,`."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_github(result: CheckResult | CheckRun) -> Iterator[str]:
    for f in result.findings:
        props = [("file", f.path), ("line", str(f.line)), ("col", str(f.column))]
        if (f.end_line, f.end_column) >= (f.line, f.column):
            props += [("endLine", str(f.end_line)), ("endColumn", str(f.end_column))]
        props.append(("title", f.rule))
        message = f.message + (f"\n{f.suggestion}" if f.suggestion else "")
        yield (f"::{_GITHUB_COMMAND[f.severity]} " + ",".join(f"{k}={escape_property(v)}" for k, v in props)
               + f"::{escape_data(message)}\n")


FORMATTERS: dict[str, Callable[[CheckResult | CheckRun], Iterator[str]]] = {  # the text's pieces
    "text": format_text,
    "json": format_json,
    "sarif": format_sarif,
    "github": format_github,
}
