"""Inline suppressions, the unused-suppression check, and baselines.

Suppression comments (only real comments count, never text in a string literal):

    x = y % 32;  // hipport: ignore[warp-size] reason        this line
    // hipport: ignore[HP450,warp-size] reason                 this line and the next code line
    // hipport: ignore-file[inline-ptx] reason                 the whole file, from anywhere in it
    # hipport: ignore[build-flags] reason                      CMake, Makefiles, Python, ...

Brackets hold categories, rule codes or rule names, comma-separated. Without brackets
(`hipport: ignore`, `hipport: ignore-file`) a suppression covers every rule, like a bare
`# noqa` in ruff; prefer naming what is ignored. A comment that shares its line with code
covers that line; a comment alone on its line covers its line and the next line that is not
itself only a comment (so suppressions can be stacked above the code they are about).

Every name is judged separately. After the file's findings are filtered, a name that matched
nothing (among the rules selected for the run) or that names no rule or category is reported
by HP1901 `unused-suppression`. Names of the `suppression` category itself (HP1901,
`unused-suppression`, `suppression`) silence those reports and are never reported unused.

Baselines: a JSON file of finding keys (rule, path, normalized line text) with counts, so a
finding keeps matching when lines above it move. `check --baseline FILE` reports only findings
beyond those counts.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence

from hipport import __version__
from hipport.errors import HipportError
from hipport.findings import Finding
from hipport.rules import CATEGORY_CODES, Hit, Rule

SUPPRESSION_CATEGORY = "suppression"
BASELINE_VERSION = 1

# re, not hipport.regexes: a run served from the cache reads suppressions, and loading the
# stored patterns for these few would cost it more than compiling them.
_MARKER = re.compile(
    rb"hipport:[ \t]*ignore(?P<file>-file)?(?![\w-])"
    rb"(?:[ \t]*\[(?P<names>[^\]\r\n]*)(?P<close>\])?)?"
)

class Suppression:
    def __init__(self, start: int, end: int, line: int, file_level: bool, names: tuple[str, ...],
                 malformed: bool = False):
        self.start, self.end = start, end  # byte span of the marker (`hipport: ignore[...]`)
        self.line = line
        self.file_level = file_level
        self.names = names  # as written; () covers everything
        self.covers: tuple[int, ...] = ()  # lines covered (line suppressions)
        self.malformed = malformed
        self.used: set[str] = set()  # names that matched a finding ("*" for bare)

    @property
    def bare(self) -> bool:
        return not self.names and not self.malformed


class _Lines:
    def __init__(self, data: bytes, comments: list[tuple[int, int]]):
        self.data = data
        self.starts = [0] + [m.end() for m in re.finditer(rb"\n", data)]
        self.comments = comments
        self.comment_starts = [s for s, _ in comments]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def span(self, line: int) -> tuple[int, int]:
        start = self.starts[line - 1]
        end = self.starts[line] if line < len(self.starts) else len(self.data)
        return start, end

    def has_code(self, line: int) -> bool:
        """True when the line has a non-blank byte outside every comment."""
        start, end = self.span(line)
        i = max(0, bisect.bisect_right(self.comment_starts, start) - 1)
        pos = start
        while pos < end:
            while i < len(self.comments) and self.comments[i][1] <= pos:
                i += 1
            if i < len(self.comments) and self.comments[i][0] <= pos:
                pos = self.comments[i][1]
                continue
            stop = min(end, self.comments[i][0]) if i < len(self.comments) else end
            if self.data[pos:stop].strip():
                return True
            pos = stop
        return False

    def blank(self, line: int) -> bool:
        start, end = self.span(line)
        return not self.data[start:end].strip()

    @property
    def count(self) -> int:
        return len(self.starts)


def find_suppressions(data: bytes, comments: Callable[[], Sequence[tuple[int, int]]]) -> list[Suppression]:
    """Every suppression comment in a file, with the lines each one covers. `comments()`: the
    file's comment spans, in order (analysis.FileContext.comments), asked only of a file that
    says `hipport:`."""
    if b"hipport:" not in data:
        return []
    spans = comments()
    lines = _Lines(data, spans)
    out = []
    for cs, ce in spans:
        for m in _MARKER.finditer(data, cs, ce):
            raw = m.group("names")
            malformed = raw is not None and m.group("close") is None
            names = tuple(n.strip().decode("utf-8", "replace") for n in (raw or b"").split(b",") if n.strip())
            if raw is not None and not names:
                malformed = True  # `ignore[]`: say so rather than treat it as everything
            line = lines.line_of(m.start())
            s = Suppression(m.start(), m.end(), line, bool(m.group("file")), names, malformed=malformed)
            if not s.file_level:
                covers = [line]
                if not lines.has_code(line):
                    nxt = line + 1
                    while nxt <= lines.count and not lines.has_code(nxt) and not lines.blank(nxt):
                        nxt += 1  # step over comment-only lines (stacked suppressions)
                    if nxt <= lines.count:
                        covers.append(nxt)
                s.covers = tuple(covers)
            out.append(s)
    return out


class Names:
    """What a suppression name can mean: a rule code, a rule name, or a category."""

    def __init__(self, rules: Iterable[Rule]):
        self.by_code = {}
        self.by_name = {}
        for r in rules:
            self.by_code[r.code] = r
            self.by_name[r.name] = r

    def known(self, name: str) -> bool:
        return name.upper() in self.by_code or name in self.by_name or name in CATEGORY_CODES

    def matches(self, name: str, rule: Rule) -> bool:
        return name.upper() == rule.code or name == rule.category or name == rule.name

    def matches_finding(self, name: str, f: Finding) -> bool:
        if name.upper() == f.rule or name == f.category:
            return True
        r = self.by_name.get(name)
        return r is not None and r.code == f.rule

    def is_self(self, name: str) -> bool:
        """Names of the suppression category: they govern unused-suppression reports."""
        r = self.by_code.get(name.upper()) or self.by_name.get(name)
        return name == SUPPRESSION_CATEGORY or (r is not None and r.category == SUPPRESSION_CATEGORY)


def _covering(pairs: Iterable[tuple[Suppression, Sequence[str]]]) -> Callable[[int], list] | None:
    """The (suppression, names) pairs that cover a line: its line suppressions', by line, then
    the file-level ones (a finding is asked of those on its line, not of every suppression);
    None when there are none."""
    by_line: dict[int, list] = {}
    file_level = []
    for pair in pairs:
        s = pair[0]
        if s.file_level:
            file_level.append(pair)
        for line in s.covers:
            by_line.setdefault(line, []).append(pair)
    if not by_line and not file_level:
        return None
    return lambda line: by_line.get(line, []) + file_level


def apply(findings: Iterable[Finding], suppressions: list[Suppression], names: Names) -> tuple[list[Finding], int]:
    """Drop suppressed findings; mark the names that were used. Returns (kept, suppressed)."""
    covering = _covering((s, s.names) for s in suppressions if not s.malformed)
    if covering is None:
        return list(findings), 0
    kept, dropped = [], 0
    for f in findings:
        hit = False
        for s, named in covering(f.line):
            if s.bare:
                s.used.add("*")
                hit = True
                continue
            for n in named:
                if names.matches_finding(n, f):
                    s.used.add(n)
                    hit = True
        if hit:
            dropped += 1
        else:
            kept.append(f)
    return kept, dropped


def unused_hits(suppressions: list[Suppression], names: Names, judged: Sequence[Rule]) -> list[tuple[Suppression, Hit]]:
    """HP1901 hits for the suppressions (or names in them) that matched nothing.

    `judged`: the rules that ran on this file (a suppression for a rule that was not selected,
    or that does not look at this kind of file, is not judged)."""
    out = []
    judged = [r for r in judged if r.category != SUPPRESSION_CATEGORY]
    for s in suppressions:
        if s.malformed:
            out.append((s, Hit(s.start, s.end, "malformed suppression comment: write "
                               "`hipport: ignore[CATEGORY-or-CODE,...] reason`",
                               "close the brackets and name at least one category or rule code")))
            continue
        if s.bare:
            if judged and "*" not in s.used:
                what = "ignore-file" if s.file_level else "ignore"
                out.append((s, Hit(s.start, s.end, f"unused suppression: bare `{what}` matched no finding",
                                   "remove the comment")))
            continue
        unknown = [n for n in s.names if not names.known(n)]
        unused = [n for n in s.names if names.known(n) and not names.is_self(n) and n not in s.used
                  and any(names.matches(n, r) for r in judged)]
        parts = []
        if unused:
            parts.append("unused suppression: " + ", ".join(unused)
                         + (" (no such finding in this file)" if s.file_level else " (no such finding on this line)"))
        if unknown:
            parts.append("unknown rule or category in suppression: " + ", ".join(unknown))
        if parts:
            fix = "remove the comment" if len(unused) + len(unknown) == len(s.names) else \
                "remove " + ", ".join(unused + unknown) + " from the brackets"
            out.append((s, Hit(s.start, s.end, "; ".join(parts), fix)))
    return out


def silence_self(findings: list[Finding], suppressions: list[Suppression], names: Names) -> list[Finding]:
    """Apply the suppressions that name the suppression category to its own findings (by line,
    as apply(): a file with a stale suppression on each line has a finding per line)."""
    own = ((s, [n for n in s.names if names.is_self(n)]) for s in suppressions if not (s.malformed or s.bare))
    covering = _covering((s, named) for s, named in own if named)
    if covering is None:
        return list(findings)
    kept = []
    for f in findings:
        hit = False
        for s, named in covering(f.line):
            for n in named:
                if names.matches_finding(n, f):
                    s.used.add(n)
                    hit = True
        if not hit:
            kept.append(f)
    return kept


# --- baseline --------------------------------------------------------------------------------

def normalize(text: str) -> str:
    """A line's text with runs of whitespace collapsed: what a baseline matches on."""
    return " ".join(text.split())


def baseline_key(f: Finding) -> tuple[str, str, str]:
    return f.rule, f.path, normalize(f.snippet)


def baseline_document(findings: Iterable[Finding]) -> dict:
    counts = Counter(baseline_key(f) for f in findings)
    return {
        "version": BASELINE_VERSION,
        "tool": {"name": "hipport", "version": __version__},
        "findings": [{"rule": r, "path": p, "text": t, "count": n}
                     for (r, p, t), n in sorted(counts.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2]))],
    }


def dump_baseline(findings: Iterable[Finding]) -> Iterator[str]:
    """The baseline file's text in pieces (cli.put writes them without joining them whole)."""
    from hipport.report import json_text  # noqa: PLC0415 - baselines alone need it here

    return json_text.pieces(baseline_document(findings))


def load_baseline(data: bytes, where: str = "baseline") -> Counter:
    """The counts in a baseline file; a malformed one is a configuration error (exit 2)."""
    import json  # noqa: PLC0415 - baselines alone need it here

    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HipportError(f"{where}: not a hipport baseline (invalid JSON: {exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("findings"), list):
        raise HipportError(f"{where}: not a hipport baseline (no findings list)")
    if doc.get("version", BASELINE_VERSION) != BASELINE_VERSION:
        raise HipportError(f"{where}: baseline version {doc.get('version')!r} is not supported")
    counts: Counter = Counter()
    for i, item in enumerate(doc["findings"]):
        try:
            key = (str(item["rule"]).upper(), str(item["path"]), normalize(str(item["text"])))
            n = int(item.get("count", 1))
        except (TypeError, KeyError, ValueError, AttributeError):
            raise HipportError(f"{where}: finding #{i + 1} needs rule, path, text and count") from None
        counts[key] += max(n, 0)
    return counts


class Baseline:
    """What a baseline leaves to report, finding by finding: earlier findings consume its
    counts first."""

    def __init__(self, counts: Counter) -> None:
        self.left = Counter(counts)
        self.matched = 0

    def holds(self, f: Finding) -> bool:
        """Whether the baseline counts `f` (then it is not reported)."""
        key = baseline_key(f)
        if self.left[key] > 0:
            self.left[key] -= 1
            self.matched += 1
            return True
        return False
