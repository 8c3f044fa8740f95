"""The rule registry. A rule is a function over a FileContext that yields Hits; the engine
turns hits into Findings (positions, snippet), applies suppressions and selection centrally.

    @rule(code="HP101", name="device-side-launch", category="dynamic-parallelism",
          severity="error", effort="high")
    def device_side_launch(ctx):
        '''What it does ... / Why it matters on AMD GPUs ... / Example ... / Fix ...'''
        yield Hit(start, end, "message", "suggestion")

Codes are allocated per category (CATEGORY_CODES) and never reused. The docstring is the
rule's only documentation; it must have the four sections in DOC_SECTIONS.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Iterable, Iterator

from hipport.findings import CATEGORY_CODES, EFFORTS, SEVERITIES
from hipport.tuples import NamedTuple

DOC_SECTIONS = ("What it does", "Why it matters on AMD GPUs", "Example", "Fix")
UNUSED_SUPPRESSION = "HP1901"  # rules/suppression.py's rule, which the check engine runs itself


class Guarded(NamedTuple):
    """A pattern searched only in files that hold one of `words` (every match of the pattern
    holds one). As a rule's trigger: the plan's one pass over the byte-string triggers finds
    the words too, and most files then skip the pattern's whole-file search; build_flags
    guards each nvcc flag's pattern the same way."""
    pattern: re.Pattern[bytes]
    words: tuple[bytes, ...]

    # As the pattern's own methods; where none of the words is in `data`, without a search.
    def search(self, data: bytes, *pos: int) -> re.Match[bytes] | None:
        return self.pattern.search(data, *pos) if self._may_match(data) else None

    def match(self, data: bytes, *pos: int) -> re.Match[bytes] | None:
        return self.pattern.match(data, *pos) if self._may_match(data) else None

    def finditer(self, data: bytes) -> Iterator[re.Match[bytes]]:
        return self.pattern.finditer(data) if self._may_match(data) else iter(())

    def _may_match(self, data: bytes) -> bool:
        return any(w in data for w in self.words)


class Hit(NamedTuple):
    start: int  # byte offsets in the file
    end: int
    message: str
    suggestion: str = ""
    severity: str = ""  # overrides the rule's default where the same pattern varies


class Rule(NamedTuple):
    code: str
    name: str
    category: str
    severity: str
    effort: str
    check: Callable[..., Iterable[Hit]]
    kinds: frozenset[str]
    # The cheap pre-check: the rule runs only on files containing one of these byte strings,
    # or matching one of these compiled patterns (empty: always). A superset of what the rule
    # can flag, searched in C (analysis.analyze), so most files never pay for its parse and walk.
    triggers: tuple[bytes | re.Pattern[bytes] | Guarded, ...] = ()

    @property
    def doc(self) -> str:
        import inspect  # noqa: PLC0415 - for the docs alone (a cached check needs no inspect)

        return inspect.cleandoc(self.check.__doc__ or "")

    def section(self, title: str) -> str:
        """One section of the doc, e.g. section("Fix")."""
        return doc_sections(self.doc).get(title, "")


REGISTRY: dict[str, Rule] = {}


def rule(*, code: str, name: str, category: str, severity: str, effort: str,
         kinds: Iterable[str] = ("cuda", "cpp"), triggers: Iterable[bytes | re.Pattern[bytes] | Guarded] = ()):
    if category not in CATEGORY_CODES:
        raise ValueError(f"{code}: unknown category {category!r}")
    if severity not in SEVERITIES or effort not in EFFORTS:
        raise ValueError(f"{code}: bad severity {severity!r} or effort {effort!r}")

    def register(func):
        if code in REGISTRY:
            raise ValueError(f"rule code {code} registered twice")
        REGISTRY[code] = Rule(code, name, category, severity, effort, func, frozenset(kinds), tuple(triggers))
        return func

    return register


def doc_sections(doc: str) -> dict[str, str]:
    """Split a rule doc into its `Title:`-headed sections."""
    out: dict[str, list[str]] = {}
    current = None
    for line in doc.splitlines():
        head = line.strip().rstrip(":")
        if line.strip().endswith(":") and head in DOC_SECTIONS:
            current = head
            out[current] = []
        elif current:
            out[current].append(line)
    return {k: "\n".join(v).strip() for k, v in out.items()}


_by_code: tuple[tuple[Rule, ...], list[Rule]] = ((), [])


def all_rules() -> list[Rule]:
    """Every rule, by code (sorted again only when the registry changed: every file asks)."""
    global _by_code
    load_rule_modules()
    registered = tuple(REGISTRY.values())
    if _by_code[0] != registered:
        _by_code = (registered, sorted(registered, key=lambda r: r.code))
    return list(_by_code[1])


def only_hipports() -> bool:
    """Whether every rule registered so far is one of hipport's modules' (none yet counts): what
    the cache keeps of the rules' docs (report.model.rule_docs) is then theirs, not a test's
    throwaway rules."""
    return all(r.check.__module__.startswith(__name__ + ".") for r in REGISTRY.values())


def find(key: str) -> list[Rule]:
    """Rules by code (HP101), name, or category."""
    rules = all_rules()
    key_up = key.upper()
    return [r for r in rules if r.code == key_up or r.name == key or r.category == key]


_loaded = False


def load_rule_modules() -> None:
    """Import every module in hipport.rules so their @rule decorators run. The folder is
    listed, not walked with pkgutil (which imports inspect: 3 ms of every run)."""
    global _loaded
    if _loaded:
        return
    for name in sorted(os.listdir(__path__[0])):
        if name.endswith(".py") and name != "__init__.py":
            importlib.import_module(f"{__name__}.{name[:-3]}")
    _loaded = True
