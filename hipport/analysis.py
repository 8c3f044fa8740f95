"""FileContext (what a rule sees) and running the rules over one file."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from functools import cached_property

from hipport import TYPE_CHECKING
from hipport.config import Settings
from hipport.files import is_source
from hipport.findings import Finding
from hipport.loaders import tools
from hipport.mappings import Mappings
from hipport.parse import tree as ts
from hipport.parse.declarations import user_declared
from hipport.parse.hash_comments import Spans, comment_spans
from hipport.parse.lexer import Lexed, Lexer, Substrings
from hipport.rules import Guarded, Hit, Rule, all_rules
from hipport.source import Source

if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")


class FileContext:
    def __init__(self, path: str, kind: str, data: bytes, lexer: Lexer, mappings: Mappings,
                 settings: Settings):
        self.path = path  # relative, with `/`
        self.kind = kind  # files.file_kind
        self.data = data
        self.lexer = lexer
        self.mappings = mappings
        self.settings = settings
        self.source = Source(data, path)
        self.memo: dict = {}  # rules._syntax.memo's

    @cached_property
    def lexed(self) -> Lexed:
        """The C lexer's tokens, on first use: the build-file rules have their own scanners,
        and a CMake or Python file full of `#` comment lines is slow to lex as C."""
        return self.lexer.lex(self.data)

    @cached_property
    def comments(self) -> list[tuple[int, int]]:
        """The file's comment spans, in order: the lexer's for C/C++/CUDA, parse/hash_comments'
        for Python and build files (none for a kind without `#` comments). Found once for the
        rules, the suppressions and the build-file rewriters."""
        if is_source(self.kind):
            return self.lexed.comments  # in order, as the lexer keeps them
        return comment_spans(self.kind, self.data)

    @cached_property
    def comment_index(self) -> Spans:
        """The comments, indexed to tell whether an offset is in one (rules and rewriters)."""
        return Spans(self.comments)

    @cached_property
    def tree(self):
        """The tree-sitter syntax tree, parsed on first use."""
        return ts.parse(self.data)

    @cached_property
    def declared(self) -> set[int]:
        """Offsets of the identifiers that declare the file's own members and scoped names
        (parse.declarations): the renamer and the rules both skip them."""
        return user_declared(self.data, self.lexed.identifiers, self.tree)

    def in_code(self, offset: int) -> bool:
        return not self.lexed.in_comment_or_string(offset)

    def code_matches(self, pattern: re.Pattern[bytes]) -> Iterator[re.Match[bytes]]:
        """Matches of a bytes pattern that start in code (not in a comment or literal)."""
        for m in pattern.finditer(self.data):
            if self.in_code(m.start()):
                yield m


def to_finding(ctx: FileContext, rule: Rule, hit: Hit) -> Finding:
    src = ctx.source
    line, col = src.line_col(hit.start)
    end_line, end_col = src.line_col(max(hit.start, hit.end))
    # Finding's fields in order, without the NamedTuple's Python-level __new__ (a finding each)
    return tuple.__new__(Finding, (
        ctx.path, line, col, end_line, end_col, rule.code, rule.category,
        hit.severity or rule.severity, rule.effort, hit.message, hit.suggestion,
        src.snippet(line, hit.start),
    ))


class _Plan:
    """For one list of rules and one file kind: the rules that apply, and which run when a
    trigger occurs. Made once per process, not once per file."""

    def __init__(self, rules: list[Rule], kind: str):
        self.rules = tuple(r for r in rules if kind in r.kinds)
        self.always = [i for i, r in enumerate(self.rules) if not r.triggers]
        self.by_trigger: dict = {}  # each distinct trigger -> indices of the rules it enables
        for i, r in enumerate(self.rules):
            for t in r.triggers:
                self.by_trigger.setdefault(t, []).append(i)
        self.words = [t for t in self.by_trigger if isinstance(t, bytes)]
        self.patterns = [t for t in self.by_trigger if not isinstance(t, bytes)]
        # All byte-string triggers in one table, and after them the words that Guarded
        # patterns need: one pass over a file finds every one of them, where `in` would take a
        # pass per trigger. Per pattern: its search, and the indices of its guard words (None:
        # unguarded).
        guards = sorted({w for t in self.patterns if isinstance(t, Guarded) for w in t.words} - set(self.words))
        table = self.words + guards
        index = {w: i for i, w in enumerate(table)}
        self.searches = [(t, t.pattern.search, frozenset(index[w] for w in t.words)) if isinstance(t, Guarded)
                         else (t, t.search, None) for t in self.patterns]
        self.substrings = Substrings(table)


_plans: dict[tuple, tuple] = {}


def per_rule_set(cache: dict, rules: list[Rule], kind: str, make: Callable[[], T]) -> T:
    """`make()`, kept in `cache` per file kind and set of rules (by identity): chosen once per
    process, not once per file. The rules are kept with it, so that their ids stay theirs."""
    key = (kind, *map(id, rules))
    got = cache.get(key)
    if got is None:
        if len(cache) > 64:
            cache.clear()
        got = cache[key] = (tuple(rules), make())
    return got[1]


def plan_for(rules: list[Rule], kind: str) -> _Plan:
    """The plan for `rules` on files of `kind`."""
    return per_rule_set(_plans, rules, kind, lambda: _Plan(rules, kind))


def analyze(ctx: FileContext, rules: Iterable[Rule] | None = None) -> list[Finding]:
    """Every rule's findings for one file, sorted by position; no suppression applied here."""
    return run_plan(ctx, plan_for(all_rules() if rules is None else list(rules), ctx.kind))


def run_plan(ctx: FileContext, plan: _Plan) -> list[Finding]:
    """analyze() with the plan for the file's kind already chosen (check_context keeps it)."""
    # One pass finds every byte-string trigger; each pattern trigger is one search.
    data, by_trigger = ctx.data, plan.by_trigger
    run = set(plan.always)
    words, n = plan.words, len(plan.words)
    found = plan.substrings.found(data)
    for i in found:
        if i < n:
            run.update(by_trigger[words[i]])
    for t, search, guard in plan.searches:
        enables = by_trigger[t]
        if (guard is None or not guard.isdisjoint(found)) and not run.issuperset(enables) and search(data):
            run.update(enables)  # (a rule another trigger enabled already needs no search)
    out: list[Finding] = []
    for i in sorted(run):
        r = plan.rules[i]
        out.extend(to_finding(ctx, r, hit) for hit in r.check(ctx))
    return sorted(set(out), key=lambda f: (f.line, f.column, f.rule, f.message))


def context_for(data: bytes, path: str, kind: str, settings: Settings) -> FileContext:
    mappings, lexer = tools(settings)
    ctx = FileContext(path, kind, data, lexer, mappings, settings)
    if is_source(kind):
        ctx.lexed  # noqa: B018 - lexed here, where a failure costs the file, not a rule
    return ctx
