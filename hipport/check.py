"""The check command's engine: collect files, run the selected rules on each (in parallel for
many), apply suppressions and the baseline centrally, and decide the exit code."""

from __future__ import annotations

import marshal
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from hipport import TYPE_CHECKING, parallel
from hipport.cache import Cache, Lookups, open_cache, settled, settled_before
from hipport.config import Settings, find_config
from hipport.emit import read_with_stat
from hipport.errors import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, HipportError
from hipport.files import BINARY_SNIFF, InputFile, collect, unreadable_reason
from hipport.findings import SEVERITIES, Finding, finding_of, severity_at_least
from hipport.rules import CATEGORY_CODES, REGISTRY, UNUSED_SUPPRESSION, Rule, all_rules
from hipport import suppress
from hipport.tuples import NamedTuple

if TYPE_CHECKING:
    from hipport.analysis import FileContext

# Default fail level: warnings and errors fail a check, info findings do not (they are notes on
# code that works on HIP but deserves a look, and unused suppressions).
DEFAULT_FAIL_ON = "warning"


class Options(NamedTuple):
    """What `check` does beyond the port Settings: rule selection and how it fails."""
    select: tuple[str, ...] = ()  # empty: every rule
    ignore: tuple[str, ...] = ()
    fail_on: str = DEFAULT_FAIL_ON
    exit_zero: bool = False


class FileJob(NamedTuple):
    file: InputFile
    path: str  # as reported: relative to the current folder where the file is under it
    settings: Settings
    rules: tuple[str, ...]  # codes of the selected rules
    cache_root: Path | None = None  # None: no cache
    data: bytes | None = None  # the file's bytes when the run read them (to look them up)


class FileCheck(NamedTuple):
    """One file's outcome; it crosses process boundaries, so it is a small frozen value."""
    path: str
    kind: str
    status: str  # checked | skipped | failed
    reason: str = ""
    findings: tuple[Finding, ...] = ()
    suppressed: int = 0


class _Checked:
    """What a whole check and a running one both give: the selected rules, and the files skipped
    or failed (`troubles`) with what is said of them."""
    codes: tuple[str, ...]  # the selected rules' codes
    troubles: list[FileCheck]

    @property
    def rules(self) -> list[Rule]:
        """The selected rules themselves (their docs: SARIF's rule metadata)."""
        all_rules()
        return [REGISTRY[c] for c in self.codes]

    @property
    def failed(self) -> list[FileCheck]:
        return [f for f in self.troubles if f.status == "failed"]

    @property
    def notes(self) -> list[str]:
        """What is said on stderr of each file skipped or failed."""
        return [f"{r.path}: {r.status}: {r.reason}" for r in self.troubles]


class CheckResult(_Checked):
    """A check's outcome, whole: every file's FileCheck, and the findings left after
    suppressions, selection and the baseline, in path order (run_check; CheckRun streams them)."""

    def __init__(self, files: list[FileCheck], findings: list[Finding], codes: tuple[str, ...],
                 suppressed: int = 0, baselined: int = 0):
        self.files = files
        self.findings = findings
        self.codes = codes
        self.suppressed = suppressed
        self.baselined = baselined

    @property
    def checked(self) -> int:
        return sum(1 for f in self.files if f.status == "checked")

    @property
    def troubles(self) -> list[FileCheck]:  # type: ignore[override] - made from the files
        return [f for f in self.files if f.status != "checked"]

    @property
    def severities(self) -> Counter:
        return Counter(f.severity for f in self.findings)

    @property
    def categories(self) -> Counter:
        return Counter(f.category for f in self.findings)


class CheckRun(_Checked):
    """A check as it runs: `findings` come as the files are checked, in path order, and are
    read once; a run holds a window of files' outcomes at a time. What the findings add up to
    (the counts, the files skipped or failed) is whole once they have been read."""

    def __init__(self, checks: Iterator[FileCheck], codes: tuple[str, ...], baseline: Counter | None = None):
        self.codes = codes
        self.checked = self.suppressed = 0
        self.severities: Counter = Counter()
        self.categories: Counter = Counter()
        self.troubles = []  # without their findings, which are counted
        self._held = None if baseline is None else suppress.Baseline(baseline)
        self.findings = self._findings(checks)

    def _findings(self, checks: Iterator[FileCheck]) -> Iterator[Finding]:
        held = self._held
        for check in checks:
            if check.status == "checked":
                self.checked += 1
            else:
                self.troubles.append(check._replace(findings=()))
            self.suppressed += check.suppressed
            for f in check.findings:
                if held is not None and held.holds(f):
                    continue
                self.severities[f.severity] += 1
                self.categories[f.category] += 1
                yield f

    @property
    def baselined(self) -> int:
        return 0 if self._held is None else self._held.matched


# --- selection -------------------------------------------------------------------------------

def split_names(values: Iterable[str] | str | None) -> tuple[str, ...]:
    """`--select a,b --select c` and TOML lists or comma strings, flattened."""
    if values is None:
        return ()
    if isinstance(values, str):
        values = [values]
    out = []
    for v in values:
        out.extend(p.strip() for p in str(v).split(",") if p.strip())
    return tuple(out)


def _matches(name: str, r: Rule) -> bool:
    return name.upper() == r.code or name == r.category or name == r.name


class RuleRow(NamedTuple):
    """What choosing a run's rules needs of each (a Rule has the same fields)."""
    code: str
    name: str
    category: str
    kinds: tuple[str, ...]


def rule_rows(cache_root: Path | None = None) -> list[RuleRow]:
    """Every rule's code, name, category and file kinds. Kept in the cache, whose fingerprint
    covers the rule modules: a run whose files are all cached then never imports them (their
    patterns' compiling is a third of a cached one-file check). Only a process that has
    registered no rule yet reads or writes that entry: there the rules are the modules' own."""
    def compute():
        return [(r.code, r.name, r.category, tuple(sorted(r.kinds))) for r in all_rules()]

    fresh = cache_root is not None and not REGISTRY
    rows = open_cache(cache_root, "rules", ()).memo("rows", compute) if fresh else compute()
    return [RuleRow(*row) for row in rows]


def select_rules(select: Iterable[str] = (), ignore: Iterable[str] = (), rules=None) -> list:
    """The rules a run uses: those matching `select` (all when empty) minus `ignore`, from
    `rules` (Rule or RuleRow; every Rule when None). Names are rule codes, rule names or
    categories; an unknown one is a usage error."""
    rules = all_rules() if rules is None else rules
    select, ignore = tuple(select), tuple(ignore)
    for name in select + ignore:
        if not (name in CATEGORY_CODES or any(_matches(name, r) for r in rules)):
            raise HipportError(f"unknown rule or category {name!r} (see `hipport rules`)")
    chosen = [r for r in rules if not select or any(_matches(n, r) for n in select)]
    return [r for r in chosen if not any(_matches(n, r) for n in ignore)]


def load_options(paths: list[Path], select=None, ignore=None, fail_on=None, exit_zero=False) -> Options:
    """Options from `[tool.hipport]` (select, ignore, fail-on), then the command line, which wins."""
    table = {}
    found = find_config(paths[0]) if paths else None
    if found:
        _, table = found
    cfg = {k.replace("_", "-"): v for k, v in table.items()}
    sel = split_names(select) if select else split_names(cfg.get("select"))
    ign = split_names(ignore) if ignore else split_names(cfg.get("ignore"))
    level = fail_on or cfg.get("fail-on") or DEFAULT_FAIL_ON
    if level not in SEVERITIES:
        raise HipportError(f"fail-on must be one of {', '.join(SEVERITIES)}, not {level!r}")
    return Options(select=sel, ignore=ign, fail_on=level, exit_zero=bool(exit_zero))


# --- one file --------------------------------------------------------------------------------

def check_source(data: bytes, path: str, kind: str, settings: Settings, rules: Iterable[Rule]) -> FileCheck:
    """Findings for one buffer with suppressions applied. Never raises for the file's content;
    a rule that raises costs its own findings and marks the file failed."""
    from hipport.analysis import context_for  # noqa: PLC0415 - a cached run needs no analysis

    reason = unreadable_reason(data, settings)
    if reason:
        return FileCheck(path, kind, "skipped", reason=reason)
    try:
        ctx = context_for(data, path, kind, settings)
    except Exception as exc:  # the lexer or table loading: cost one file, never the run
        return FileCheck(path, kind, "failed", reason=f"{type(exc).__name__}: {exc}")
    return check_context(ctx, rules)


def check_context(ctx: FileContext, rules: Iterable[Rule]) -> FileCheck:
    """Findings for a file already lexed (the port shares its FileContext), suppressions applied."""
    from hipport.analysis import to_finding  # noqa: PLC0415 - as in check_source

    data, path, kind = ctx.data, ctx.path, ctx.kind
    run_here, plan, unused_rule = _for_kind(list(rules), kind)
    found, errors = _analyze(ctx, run_here, plan)
    sups = suppress.find_suppressions(data, lambda: ctx.comments)
    suppressed = 0
    if sups:
        names = suppress.Names(all_rules())
        found, suppressed = suppress.apply(found, sups, names)
        if unused_rule is not None:
            extra = [to_finding(ctx, unused_rule, hit) for _, hit in suppress.unused_hits(sups, names, run_here)]
            found = sorted(found + suppress.silence_self(extra, sups, names),
                           key=lambda f: (f.line, f.column, f.rule, f.message))
    if errors:
        return FileCheck(path, kind, "failed", reason="; ".join(errors), findings=tuple(found), suppressed=suppressed)
    return FileCheck(path, kind, "checked", findings=tuple(found), suppressed=suppressed)


_KINDS: dict[tuple, tuple] = {}


def _for_kind(rules: list[Rule], kind: str) -> tuple[list[Rule], object, Rule | None]:
    """The rules that run on files of `kind`, their plan, and the unused-suppression rule when
    selected."""
    from hipport.analysis import per_rule_set, plan_for  # noqa: PLC0415 - as in check_source

    def choose():
        run_here = [r for r in rules if kind in r.kinds and r.code != UNUSED_SUPPRESSION]
        unused = next((r for r in rules if r.code == UNUSED_SUPPRESSION), None)
        return run_here, plan_for(run_here, kind), unused

    return per_rule_set(_KINDS, rules, kind, choose)


def _analyze(ctx, rules: list[Rule], plan=None) -> tuple[list[Finding], list[str]]:
    from hipport.analysis import analyze, run_plan  # noqa: PLC0415 - as in check_source

    try:
        return (run_plan(ctx, plan) if plan is not None else analyze(ctx, rules)), []
    except Exception:
        pass
    found, errors = [], []  # find the rule that failed; keep the others' findings
    for r in rules:
        try:
            found.extend(analyze(ctx, [r]))
        except Exception as exc:
            errors.append(f"rule {r.code} {r.name} failed: {type(exc).__name__}: {exc}")
    return sorted(found, key=lambda f: (f.line, f.column, f.rule, f.message)), errors


def _dump_check(result: FileCheck) -> bytes:
    """A cache entry: the FileCheck as plain tuples (marshal; the cache's code fingerprint
    covers the Python version that owns its format)."""
    return marshal.dumps((result.path, result.kind, result.status, result.reason, result.suppressed,
                          tuple(f.to_tuple() for f in result.findings)))


def _load_check(raw: bytes) -> FileCheck:
    """_dump_check() undone; ValueError (or marshal's own errors) for anything else."""
    path, kind, status, reason, suppressed, rows = marshal.loads(raw)
    return FileCheck(path, kind, status, reason, tuple(map(finding_of, rows)), suppressed)


def _cache(cache_root: Path | None, settings: Settings, codes: tuple[str, ...]) -> Cache:
    return open_cache(cache_root, "check", (settings.cache_key(), codes))


def _read_job(job: FileJob) -> tuple[bytes, os.stat_result] | FileCheck:
    """The file's bytes and stat; else its FileCheck: it cannot be read, or is too large to
    read whole (skipped as check_source skips such bytes, told from its first bytes and size,
    so a tree's checkpoint of gigabytes is not read into memory)."""
    most = job.settings.max_file_bytes
    try:
        data, st, whole = read_with_stat(job.file.where, most, BINARY_SNIFF)
    except OSError as exc:
        return _unreadable(job, exc)
    if not whole:
        return FileCheck(job.path, job.file.kind, "skipped", reason=unreadable_reason(data, job.settings, st.st_size))
    return data, st


def _unreadable(job: FileJob, exc: OSError) -> FileCheck:
    return FileCheck(job.path, job.file.kind, "failed", reason=f"cannot read: {exc.strerror or exc}")


def _entry_name(job: FileJob) -> str:
    """What a file's keys hold besides its bytes or stat: the path it is reported under (its
    FileCheck's) and its kind."""
    return job.path + "\0" + job.file.kind


def check_file(job: FileJob) -> tuple[FileCheck, bytes | None, bytes | None]:
    """One file's analysis (in a worker process for big runs), reading the file unless the run
    did; with the keys the run stores the result under when it was read here: the bytes' key,
    and the stat's when settled (None with the cache off)."""
    from hipport.loaders import prepare  # noqa: PLC0415 - a fully cached check never gets here

    prepare(job.settings)  # a fresh worker process loads the tables and the rule modules here
    f, data, st = job.file, job.data, None
    if data is None:
        read = _read_job(job)
        if isinstance(read, FileCheck):
            return read, None, None
        data, st = read
    result = check_source(data, job.path, f.kind, job.settings, [REGISTRY[c] for c in job.rules])
    if st is None or job.cache_root is None:
        return result, None, None
    cache, name = _cache(job.cache_root, job.settings, job.rules), _entry_name(job)
    return result, cache.key(data, name), cache.stat_key(st, name) if settled(st, settled_before()) else None


_BATCH = 256  # files read and looked up in the cache at a time
_WINDOW = 4096  # files whose outcomes a run holds at a time


def _checks(jobs: list[FileJob], settings: Settings, codes: tuple[str, ...],
            cache_root: Path | None, on_done: Callable[[], None] | None) -> Iterator[FileCheck]:
    """Every job's FileCheck, in job order, a window of files at a time, by one pool (a tree of
    51,000 files held all 100,000 findings until the end)."""
    cache = _cache(cache_root, settings, codes)
    lookups = Lookups(_BATCH, cache.known_empty)
    with parallel.Runs(settings.jobs) as runs:
        for start in range(0, len(jobs), _WINDOW):
            yield from _window(jobs[start:start + _WINDOW], cache, lookups, runs, on_done)


def _window(jobs: list[FileJob], cache: Cache, lookups: Lookups, runs: parallel.Runs,
            on_done: Callable[[], None] | None) -> list[FileCheck]:
    """The jobs' FileChecks, in job order. Cache hits are answered here, a few hundred keys per
    query, most of them from the files' stat alone; only the misses are analyzed (by workers
    when there are many), and their results are stored a batch per transaction. Where looking
    up does not pay (cache.Lookups), the files go to the analysis unread."""
    results: list[FileCheck | None] = [None] * len(jobs)
    # (index, content key, stat key, bytes) of each file to analyze; no bytes: read by the analysis
    misses: list[tuple[int, bytes | None, bytes | None, bytes | None]] = []
    known_stats: list[tuple[bytes, bytes]] = []  # (stat key, content key) of settled files
    before = settled_before()
    for start in range(0, len(jobs), _BATCH):
        todo = []
        for i in range(start, min(start + _BATCH, len(jobs))):
            f = jobs[i].file
            if f.skip:
                results[i] = FileCheck(jobs[i].path, f.kind, "skipped", reason=f.skip)
            else:
                todo.append(i)
        if not cache.on or not lookups.entries_worth():
            misses += [(i, None, None, None) for i in todo]
            continue
        statted = [(i, _stat_key(cache, jobs[i], before)) for i in todo] if lookups.stamps_worth() \
            else [(i, None) for i in todo]
        by_stat = cache.get_many([key for _, key in statted if key], bytes)
        lookups.stamps[0] += sum(1 for _, key in statted if key)
        lookups.stamps[1] += len(by_stat)
        found = cache.get_many(sorted(set(by_stat.values())), _load_check)
        batch = []
        for i, stat_key in statted:
            hit = found.get(by_stat.get(stat_key, b""))
            if hit is not None:
                results[i] = hit
                continue
            job = jobs[i]
            read = _read_job(job)
            if isinstance(read, FileCheck):
                results[i] = read
                continue
            data = read[0]
            batch.append((i, cache.key(data, _entry_name(job)), stat_key, data))
        found = cache.get_many([key for _, key, _, _ in batch], _load_check)
        lookups.entries[0] += len(batch)
        lookups.entries[1] += len(found)
        for i, key, stat_key, data in batch:
            if stat_key is not None:
                known_stats.append((stat_key, key))
            results[i] = found.get(key)
            if results[i] is None:
                misses.append((i, key, stat_key, data))
    cache.put_many(known_stats, bytes)
    if on_done:
        for _ in range(len(jobs) - len(misses)):
            on_done()
    rows: list[tuple[bytes, bytes]] = []
    work = [jobs[i] if data is None else jobs[i]._replace(data=data) for i, _, _, data in misses]
    checked = runs.run(check_file, work, on_done)
    for (i, key, _, _), (result, read_key, read_stat_key) in zip(misses, checked):
        results[i] = result
        if key is None:  # read by the analysis, which made the keys
            key = read_key
            if read_stat_key is not None and key is not None:
                rows.append((read_stat_key, key))
        if key is not None and result.status != "failed":
            rows.append((key, _dump_check(result)))
        if len(rows) >= _BATCH:
            cache.put_many(rows, bytes)
            rows = []
    cache.put_many(rows, bytes)
    return results


def _stat_key(cache: Cache, job: FileJob, before: int) -> bytes | None:
    """The file's stat key when its stat is settled; None when not, or when it cannot be
    statted (reading it says why)."""
    try:
        st = os.stat(job.file.where)
    except OSError:
        return None
    return cache.stat_key(st, _entry_name(job)) if settled(st, before) else None


# --- the run ---------------------------------------------------------------------------------

def display_path(f: InputFile, cwd: str) -> str:
    """Relative to the current folder when the file is under it (as editors and CI annotations
    want), else relative to the root of the paths given. (On strings: a Path per file costs a
    tree's worth of parsing.)"""
    prefix = os.path.join(cwd, "")
    if f.where.startswith(prefix):
        return f.where[len(prefix):].replace(os.sep, "/")
    return f.rel


def stream_check(paths: list[Path], settings: Settings, options: Options,
                 baseline: Path | None = None, on_done: Callable[[], None] | None = None,
                 cache_root: Path | None = None) -> CheckRun:
    """The check of the files under `paths`, as it runs (see CheckRun)."""
    return CheckRun(*_start(paths, settings, options, baseline, on_done, cache_root))


def run_check(paths: list[Path], settings: Settings, options: Options,
              baseline: Path | None = None, on_done: Callable[[], None] | None = None,
              cache_root: Path | None = None) -> CheckResult:
    """The check of the files under `paths`, whole: every file's FileCheck kept."""
    checks, codes, counts = _start(paths, settings, options, baseline, on_done, cache_root)
    files = list(checks)
    run = CheckRun(iter(files), codes, counts)
    findings = list(run.findings)
    return CheckResult(files, findings, codes, suppressed=run.suppressed, baselined=run.baselined)


def _start(paths: list[Path], settings: Settings, options: Options, baseline: Path | None,
           on_done: Callable[[], None] | None,
           cache_root: Path | None) -> tuple[Iterator[FileCheck], tuple[str, ...], Counter | None]:
    """The files' FileChecks as they come, in the order their findings are reported (by the
    path shown); the selected rules' codes; the baseline's counts."""
    rules = select_rules(options.select, options.ignore, rule_rows(cache_root))
    counts = suppress.load_baseline(_read(baseline), str(baseline)) if baseline is not None else None
    kinds = {k for r in rules if r.code != UNUSED_SUPPRESSION for k in r.kinds}
    _, files = collect(paths, settings)
    cwd = os.getcwd()
    codes = tuple(r.code for r in rules)
    # A link inside the tree is not followed: its target is checked where it lies. What cannot
    # be read (a folder that cannot be listed, of no kind) is said, as skipped.
    jobs = sorted((FileJob(f, display_path(f, cwd), settings, codes, cache_root) for f in files
                   if (f.kind in kinds or f.skip) and f.link is None and not f.verbatim), key=lambda j: j.path)
    return _checks(jobs, settings, codes, cache_root, on_done), codes, counts


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise HipportError(f"{path}: cannot read baseline: {exc.strerror or exc}") from None


def exit_code(result: CheckResult | CheckRun, options: Options) -> int:
    """0: nothing at or above the fail level (or --exit-zero); 1: findings at or above it;
    2: a file could not be read or a rule failed on it. (A run's, once its findings are read.)"""
    if result.failed:
        return EXIT_USAGE
    if options.exit_zero:
        return EXIT_OK
    if any(n and severity_at_least(s, options.fail_on) for s, n in result.severities.items()):
        return EXIT_FINDINGS
    return EXIT_OK
