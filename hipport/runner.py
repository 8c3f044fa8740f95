"""The port over many files: plan the jobs, serve what the cache holds, port the rest (in
this process and worker processes for many files), write the outputs, summarize.

Results travel as records (results.FileResult.record()): plain values that load from the cache
without building an object per finding.
"""

from __future__ import annotations

import fnmatch
import itertools
import marshal
import os
import posixpath
import stat
import sys
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from hipport import TYPE_CHECKING, parallel, results
from hipport.cache import Cache, Lookups, open_cache, settled, settled_before, stat_values
from hipport.config import NEVER_COPIED, Settings
from hipport.edits import splice
from hipport.emit import copy_large, mirror_link, read_with_stat, unified_diff, write_atomic, write_copy
from hipport.errors import UsageError
from hipport.files import BINARY_SNIFF, InputFile, collect
from hipport.hashing import blake2b
from hipport.results import FileResult, output_name
from hipport.tuples import NamedTuple

if TYPE_CHECKING:
    from hipport.pool import Pool

OUT, IN_PLACE, STDOUT, DIFF = "out", "in-place", "stdout", "diff"
DRY_RUN = "dry-run"  # port in memory, write nothing (estimate, reports without output)
BATCH = parallel.LARGEST  # files per cache query and per task (fewer when processes share them)
# Bytes of files read and not yet ported that a pooled run holds before it ports here: below
# it, this process reads and hands out every batch before it ports one, so the workers never
# wait for a batch while it ports. (Bounded by batches instead, a worker ran out of them
# while this process ported one of a few large headers: 170 ms of 580 idle on flash-attention.)
READ_AHEAD = 64 << 20
# Batches handed out and not yet yielded, past which this process ports queued tasks before it
# hands out more (see _run): the pool takes the largest task first, so batches are done out
# of order, and the outcomes of those done wait for the oldest. A cold run of 51,000 small
# files, which reads nothing ahead, held nearly all its records: 220 MB.
AHEAD = 64
# Bytes of source in a pooled task at most: bounded by files alone, one task of a few large
# headers ran 300 ms after the other process was done; taken largest first (pool._Tasks),
# the tasks left at the end are the small ones. Smaller bounds cost each task a cache
# transaction and a trip through a pipe (128 KB split cuda-samples' 16 batches into 90).
TASK_BYTES = 512 << 10
GIVE_UP_AFTER = 2 * BATCH  # files looked up in vain before a run stops looking (cache.Lookups)


class Renamed(frozenset):
    """The files --rename renames (relative paths), made once per run and held by every job.
    Its `digest` keys the cache: a set's order (and so its repr) follows the hash seed, which
    each process draws anew, so a key made from the set itself never matched a later run's.
    It crosses to a `-j` worker, which was forked after it was made, as its number: pickled
    whole, every batch of a 50,000-file tree carried 20,000 paths, and a run took 65 % longer."""
    __slots__ = ("digest", "number")

    def __new__(cls, paths: Iterable[str]) -> Renamed:
        self = super().__new__(cls, paths)
        self.digest = blake2b("\0".join(sorted(self)).encode("utf-8", "surrogateescape"), digest_size=16).digest()
        self.number = next(_NUMBERS)
        _MADE[self.number] = self
        return self

    def __reduce__(self):
        return _made, (self.number,)


def _made(number: int) -> Renamed:
    return _MADE[number]


_NUMBERS = itertools.count()
_MADE: weakref.WeakValueDictionary[int, Renamed] = weakref.WeakValueDictionary()


class Job(NamedTuple):
    file: InputFile
    mode: str
    out_root: Path | None
    settings: Settings
    renamed: frozenset[str]  # a Renamed, or an empty set
    cache_root: Path | None = None


class Outcome(NamedTuple):
    record: dict  # FileResult.record()
    data: bytes | None = None  # the ported bytes, for --stdout
    diff: str = ""  # for --diff
    # (the input's stat, the output's stat or None) when the input's stat is settled: what
    # the run's entries keep (see _Tree)
    stamp: tuple | None = None


class _Read(NamedTuple):
    """A file read, and its cache key, on its way to the pipeline."""
    job: Job
    data: bytes | None  # None: not read yet (see Lookups)
    mode: int  # permission bits
    key: bytes  # the content key
    stat_key: bytes | None  # when the file's stat is settled (cache.Cache.stat_key)
    stat: tuple | None = None  # then its stat_values
    stamped: tuple | None = None  # the stamp the cache holds under stat_key (see _stamp)


def check_output_dir(inputs: list[Path], out: Path) -> None:
    """OUT must be neither inside an input nor around one: a mirror would overwrite sources.
    Inside a folder that is never walked (`build/`, `.git/`, ...) is fine, and so is the folder
    around the inputs (beside a file given alone: only the inputs are read)."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"output {out} exists and is not a folder")
    out_real = out.resolve()
    for p in inputs:
        real = p.resolve()
        if real in out_real.parents and any(
                fnmatch.fnmatchcase(part, pat) for part in out_real.relative_to(real).parts for pat in NEVER_COPIED):
            continue
        if out_real == real or real in out_real.parents:
            raise UsageError(f"output folder {out} is inside the input {p}; choose a folder outside it")
        if out_real in real.parents:
            raise UsageError(f"output folder {out} contains the input {p}; choose a folder beside it")


def plan(paths: list[Path], settings: Settings, mode: str, out: Path | None,
         cache_root: Path | None = None) -> tuple[Path, list[Job]]:
    root, files = collect(paths, settings)
    if mode == OUT:
        assert out is not None
        check_output_dir(paths, out)
    if mode == STDOUT and len(files) != 1:
        raise UsageError(f"--stdout takes exactly one file ({len(files)} found)")
    renamed: frozenset[str] = frozenset()
    if settings.rename:
        renamed = Renamed(f.rel for f in files if output_name(f.rel, settings) != f.rel)
    if renamed:
        _refuse_rename_collisions(root, files, renamed, settings)
    return root, [Job(f, mode, out, settings, renamed, cache_root) for f in files]


def _refuse_rename_collisions(root: Path, files: list[InputFile], renamed: frozenset[str],
                              settings: Settings) -> None:
    """`x.cu` -> `x.hip` must not land on an `x.hip` that exists beside it."""
    existing = {f.rel for f in files}
    clashes = sorted(r for r in renamed
                     if output_name(r, settings) in existing or (root / output_name(r, settings)).exists())
    if clashes:
        shown = ", ".join(f"{c} -> {output_name(c, settings)}" for c in clashes[:5])
        raise UsageError(f"--rename would overwrite existing files: {shown}"
                         + (f" and {len(clashes) - 5} more" if len(clashes) > 5 else ""))


def run(jobs: list[Job], workers: int, on_done: Callable[[], None] | None = None) -> Iterator[Outcome]:
    """Every job's outcome, in job order. While the run's files have the stats the run before
    left them with, a few cache entries answer for them (_Tree), a part of the tree at a time;
    from the first file that differs on, this process reads the files and serves those the
    cache holds (one query per batch), so a warm run starts no worker; the files the cache
    lacks are ported here, or by `workers` processes when there are many files. Only a part's
    outcomes are held at a time."""
    tree = _Tree.of(jobs)
    if tree is None:
        yield from _run(jobs, workers, on_done)
        return
    for outcome in tree.serve():
        yield outcome
        if on_done:
            on_done()
    start = tree.resume  # the first job the entries did not answer
    for i, outcome in enumerate(_run(jobs[start:], workers, on_done), start):
        tree.take(i, outcome)
        yield outcome


def _run(jobs: list[Job], workers: int, on_done: Callable[[], None] | None) -> Iterator[Outcome]:
    workers = parallel.processes(workers)
    pooled = parallel.pooled(workers, len(jobs))
    spans = parallel.bounds(len(jobs), workers if pooled else 1, BATCH)
    queue: deque = deque()  # (outcomes, [(misses, future)], bytes held) per batch, in job order
    held = 0  # bytes read in the queued batches

    def oldest() -> Iterator[Outcome]:
        nonlocal held
        batch = queue.popleft()
        held -= batch[2]
        return _done(batch, pool, on_done)

    def ready() -> Iterator[Outcome]:
        """The batches done, oldest first, up to the first that is not (outcomes in order)."""
        while queue and all(future.done() for _, future in queue[0][1]):
            yield from oldest()

    pool = None
    lookups = Lookups(GIVE_UP_AFTER, _cache(jobs[0]).known_empty if jobs else False)
    try:
        for start, stop in spans:
            outcomes, misses = _serve(jobs[start:stop], lookups)
            tasks, size = [], 0
            if misses and pooled and pool is None:
                pool = parallel.pool(workers, jobs[0].settings)
                pooled = pool is not None  # None: the OS refused the fork; ported here then
            if misses and pooled:
                for part, weight in _parts(misses):
                    tasks.append((part, pool.submit(port_reads, [r for _, r in part], weight)))
                size = sum(len(r.data) for _, r in misses if r.data is not None)
            elif misses:
                _fill(outcomes, misses, port_reads([r for _, r in misses]))
            queue.append((outcomes, tasks, size))
            held += size
            yield from ready()
            # Past AHEAD batches, port queued tasks here until the oldest batch is done; with
            # none queued (a worker has the oldest's), hand out the next batch rather than wait,
            # up to twice as many. Past those, or READ_AHEAD bytes, wait for the oldest.
            while AHEAD < len(queue) <= 2 * AHEAD and held <= READ_AHEAD and pool is not None and pool.run_one():
                yield from ready()
            while held > READ_AHEAD or len(queue) > 2 * AHEAD:  # porting queued ones meanwhile
                yield from oldest()
        while queue:
            yield from oldest()
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)


def _parts(misses: list[tuple[int, _Read]]) -> Iterator[tuple[list[tuple[int, _Read]], int]]:
    """A batch's files to port in tasks of at most TASK_BYTES (a file larger goes alone), with
    their bytes: the pool hands out the largest first. A file the porting reads itself is
    sized by its stat."""
    part: list[tuple[int, _Read]] = []
    total = 0
    for miss in misses:
        size = _size(miss[1])
        if part and total + size > TASK_BYTES:
            yield part, total
            part, total = [], 0
        part.append(miss)
        total += size
    if part:
        yield part, total


def _size(r: _Read) -> int:
    if r.data is not None:
        return len(r.data)
    try:
        return os.stat(r.job.file.where).st_size
    except OSError:
        return 0  # the porting reports it


def _done(batch: tuple, pool: Pool | None, on_done: Callable[[], None] | None) -> Iterator[Outcome]:
    outcomes, tasks, _ = batch
    for misses, future in tasks:
        assert pool is not None
        _fill(outcomes, misses, pool.result(future))  # ports queued tasks here meanwhile
    for outcome in outcomes:
        yield outcome
        if on_done:
            on_done()


def _fill(outcomes: list, misses: list[tuple[int, _Read]], ported: list[Outcome]) -> None:
    for (i, _), outcome in zip(misses, ported):
        outcomes[i] = outcome


def _cache(job: Job) -> Cache:
    settings = job.settings
    renamed = job.renamed
    return open_cache(job.cache_root, "port", (settings.cache_key(), renamed.digest if renamed else b""))


def _serve(batch: list[Job], lookups: Lookups) -> tuple[list[Outcome | None], list[tuple[int, _Read]]]:
    """The batch's outcomes that need no pipeline (links, copies, cache hits) and the files
    left to port, by position (read here, or left to the porting to read). A file the cache
    knows by its stat (see _stamp) is served without being read when its output needs no
    bytes: a dry run, an in-place file the port leaves alone, or an output file whose stat is
    the one the cache noted."""
    cache = _cache(batch[0])  # one run's jobs share the settings and the renamed files
    before = settled_before() if cache.on else None
    outcomes = [_unported(job) for job in batch]
    if before is None or not lookups.entries_worth():
        return outcomes, [(i, _unread(job)) for i, job in enumerate(batch) if outcomes[i] is None]
    stat_keys, hits = _serve_by_stat(cache, batch, outcomes, before, lookups) if lookups.stamps_worth() else ({}, {})
    rows: list[tuple[bytes, bytes]] = []  # stamps for the next run
    reads: list[tuple[int, _Read]] = []
    for i, job in enumerate(batch):
        if outcomes[i] is None:
            got = _read(job, cache, before, stat_keys.get(i))
            if isinstance(got, Outcome):
                outcomes[i] = got
            else:
                reads.append((i, got))
    hits.update(cache.get_many([r.key for _, r in reads if r.key not in hits], results.loads))
    lookups.entries[0] += len(reads)
    lookups.entries[1] += sum(r.key in hits for _, r in reads)
    misses = []
    for i, r in reads:
        hit = hits.get(r.key)
        if hit is None:
            misses.append((i, r))
        else:
            spliced, record = hit
            outcomes[i], row = _finish(r, splice(r.data, spliced) if spliced else r.data, record, before, spliced)
            if row:
                rows.append(row)
    cache.put_many(rows, bytes)
    return outcomes, misses


def _serve_by_stat(cache: Cache, batch: list[Job], outcomes: list[Outcome | None], before: int,
                   lookups: Lookups) -> tuple[dict[int, tuple], dict[bytes, tuple]]:
    """Fill in the outcomes of the files whose stamps (see _stamp) say they need no reading.
    For _read, the others' stat, stat key and stamp by position; and the cache entries the
    stamps named, by content key (a file still read for its bytes, for --diff or an output
    to write, is not looked up again)."""
    statted = []
    for i, job in enumerate(batch):
        if outcomes[i] is None:
            st = _stat(job.file.where)
            if st is not None and settled(st, before):
                statted.append((i, job, st, cache.stat_key(st, job.file.rel)))
    if not statted:
        return {}, {}
    stamps = cache.get_many([key for *_, key in statted], marshal.loads)
    lookups.stamps[0] += len(statted)
    lookups.stamps[1] += len(stamps)
    known = cache.get_many(sorted({stamp[0] for stamp in stamps.values()}), results.loads)
    stat_keys = {}
    for i, job, st, key in statted:
        stamp = stamps.get(key)
        hit = known.get(stamp[0]) if stamp else None
        if hit is not None and _needs_no_bytes(job, st, hit[1], stamp[1]):
            outcomes[i] = Outcome(hit[1], stamp=(stat_values(st), stamp[1]))
        else:
            stat_keys[i] = (st, key, stamp if hit is not None else None)
    return stat_keys, known


def _needs_no_bytes(job: Job, st: os.stat_result, record: dict, output: tuple | None) -> bool:
    """Whether a file known by its stat can be answered from its record alone: nothing to write,
    or an output that has the stat this port left it with (and the input's permission bits)."""
    if job.mode == DRY_RUN:
        return True
    if job.mode == IN_PLACE:
        return not record["changed"] and record["output"] == job.file.rel
    if job.mode != OUT or output is None:
        return False
    out = _stat(os.path.join(job.out_root, record["output"]), follow=False)
    return out is not None and stat_values(out) == output and stat.S_IMODE(out.st_mode) == stat.S_IMODE(st.st_mode)


def _stat(path: str, follow: bool = True) -> os.stat_result | None:
    try:
        return os.stat(path, follow_symlinks=follow)
    except OSError:
        return None  # reading it says why (an input), or nothing there yet (an output)


def _passed_over(f: InputFile) -> bool:
    """Whether a file is not ported (see _unported)."""
    return bool(f.skip) or f.link is not None or f.verbatim


def _unported(job: Job) -> Outcome | None:
    """The outcome of a file that is not ported (skipped, a link, a copy), else None."""
    f = job.file
    if not _passed_over(f):
        return None
    if f.skip:
        return Outcome(_record(f, output_name(f.rel, job.settings), "skipped", f.skip))
    if f.link is not None:
        return _link(job, output_name(f.rel, job.settings))
    if job.mode == OUT:  # what is left: a file of an excluded folder (f.verbatim)
        most, target = job.settings.max_file_bytes, os.path.join(job.out_root, f.rel)
        try:
            data, st, whole = read_with_stat(f.where, most)
            if not whole:
                copy_large(f.where, target, st)
            else:
                write_copy(target, data, stat.S_IMODE(st.st_mode))
        except OSError as exc:
            return Outcome(_record(f, f.rel, "failed", f"cannot copy: {exc}"))
    return Outcome(_record(f, f.rel, "unchanged", "excluded folder: copied as is"))


def _unread(job: Job) -> _Read:
    """A file for the porting to read (port_reads)."""
    return _Read(job, None, 0, b"", None)


def _read(job: Job, cache: Cache, before: int | None,
          statted: tuple[os.stat_result, bytes, tuple | None] | None = None) -> Outcome | _Read:
    """A file's bytes and keys (none when the cache is off: `before` None), or its outcome
    when it cannot be read. `statted`: the file's stat, stat key and stamp (None: none that
    names a cache entry) taken before, kept when the file still has that stat; the stamp's
    content key is then the file's, as it is for a file served by its stat unread."""
    f = job.file
    most = None if job.mode == STDOUT else job.settings.max_file_bytes  # STDOUT prints the bytes
    try:
        data, st, whole = read_with_stat(f.where, most, BINARY_SNIFF)
    except OSError as exc:
        return Outcome(_record(f, output_name(f.rel, job.settings), "failed", f"cannot read: {exc.strerror or exc}"))
    if not whole:
        return _large(job, data, st, before)
    if before is None:
        return _Read(job, data, stat.S_IMODE(st.st_mode), b"", None)
    values, stamped = stat_values(st), None
    if statted is not None and values == stat_values(statted[0]):
        stat_key, stamped = statted[1], statted[2]
    else:
        stat_key = cache.stat_key(st, f.rel) if settled(st, before) else None
    key = stamped[0] if stamped is not None else cache.key(data, f.rel)
    return _Read(job, data, stat.S_IMODE(st.st_mode), key, stat_key, None if stat_key is None else values, stamped)


def _large(job: Job, head: bytes, st: os.stat_result, before: int | None) -> Outcome:
    """A file too large to port (`head`: its first bytes): skipped, and with -o copied as it
    is without being read into memory (emit.copy_large). Its stamp lets the next run's
    whole-tree entries (_Tree) answer for it without opening it."""
    from hipport.pipeline import unread_result

    f = job.file
    result = unread_result(head, f.rel, f.kind, job.settings, st.st_size)
    assert result is not None  # larger than the settings allow
    record, written = result.record(), None
    if job.mode == OUT:
        try:
            out, wrote = copy_large(f.where, os.path.join(job.out_root, record["output"]), st)
        except OSError as exc:
            return Outcome(_record(f, record["output"], "failed", f"cannot copy: {exc.strerror or exc}"))
        if before is not None:
            written = _output_values(out, wrote, before)
    settled_input = before is not None and settled(st, before)
    stamp = (stat_values(st), written) if settled_input and (job.mode != OUT or written) else None
    return Outcome(record, stamp=stamp)


def _record(f: InputFile, output: str, status: str, reason: str) -> dict:
    return FileResult(f.rel, output, f.kind, status, reason=reason).record()


def port_reads(reads: list[_Read]) -> list[Outcome]:
    """Port files the cache lacks, store them, write their outputs (in a worker for many)."""
    from hipport import pipeline
    from hipport.loaders import prepare

    if not reads:
        return []
    prepare(reads[0].job.settings)
    cache = _cache(reads[0].job)
    keep = cache.on
    before = settled_before()
    outcomes: list[Outcome | None] = [None] * len(reads)
    for n, r in enumerate(reads):
        if r.data is None:  # left to be read here (see Lookups)
            got = _read(r.job, cache, before if keep else None)
            if isinstance(got, Outcome):
                outcomes[n] = got
            else:
                reads[n] = got
    # The whole batch is read, then ported, then written: writing after each file made a port
    # of the generated corpus (10,000 small files) 5 % slower, the porting itself included (the
    # system calls leave the next file's port with cold caches).
    done = []
    for n, r in enumerate(reads):
        if outcomes[n] is None:
            ported = pipeline.port_source(r.data, r.job.file.rel, r.job.file.kind, r.job.settings, r.job.renamed)
            done.append((n, r, ported, ported.result.record()))
    rows = []
    for n, r, ported, record in done:
        if keep:  # the input's bytes are the key's: the entry keeps only what changes them
            rows.append((r.key, results.dumps((ported.splices, record))))
        outcomes[n], row = _finish(r, ported.data, record, before, ported.splices)
        if row:
            rows.append(row)
    cache.put_many(rows, bytes)  # one transaction
    return outcomes


def _finish(r: _Read, ported: bytes, record: dict, before: int,
            spliced: tuple) -> tuple[Outcome, tuple[bytes, bytes] | None]:
    """Write a file's result (`ported`: the input with `spliced` in place) where the mode says;
    and the file's stamp for the next run, when its stat is settled (see _stamp)."""
    job, f, output = r.job, r.job.file, record["output"]
    written = None
    try:
        if job.mode == OUT:
            st, wrote = write_copy(os.path.join(job.out_root, output), ported, r.mode,
                                   want_stat=r.stat_key is not None)
            if st is not None:
                written = _output_values(st, wrote, before)
        elif job.mode == IN_PLACE and (record["changed"] or output != f.rel):
            target = f.path.with_name(Path(output).name)
            write_atomic(target, ported, like=f.path, durable=True)
            if target != f.path:
                f.path.unlink()
    except OSError as exc:
        return Outcome(_record(f, output, "failed", f"cannot write: {exc}")), None
    if r.stat_key is None:
        row = stamp = None
    else:
        row, stamp = _stamp(r, written), (r.stat, written)
        if r.stamped is not None and written in (None, r.stamped[1]):
            row = None  # the cache holds it already (a run that writes nothing keeps -o's output stat)
    if job.mode == STDOUT:
        return Outcome(record, data=ported, stamp=stamp), row
    if job.mode == DIFF and record["changed"]:
        return Outcome(record, diff=unified_diff(f.rel, output, r.data, spliced), stamp=stamp), row
    return Outcome(record, stamp=stamp), row


def _output_values(st: os.stat_result, wrote: bool, before: int) -> tuple | None:
    """An output file's stat for the stamp: when this run wrote it, or found it settled
    holding the port already (an unsettled file may change within its timestamp tick)."""
    return stat_values(st) if wrote or settled(st, before) else None


def _stamp(r: _Read, output: tuple | None) -> tuple[bytes, bytes]:
    """The cache row that lets the next run skip reading a file: under the input's stat key,
    its content key, and with -o the stat its output file had when this run wrote it, or found
    it holding the port already (then only when settled, as inputs are). Another output folder
    holds other files (device, inode), so a run into it reads and writes again."""
    return r.stat_key, marshal.dumps((r.key, output))


class _Tree:
    """The cache entries of a whole run, PART files each: every ported file's input stat,
    output stat and record, under keys of the run's files and where they go. Where a part's
    inputs and outputs all have those stats (and are settled), its files are answered by one
    lookup, with the checks of _needs_no_bytes; from the first part with a file that differs,
    the run goes through the per-file stamps and entries, after which those parts' entries are
    written anew, each as its last file is done. Per file, serving from stamps costs two
    lookups and loads the file's splices, which a run that writes nothing has no use for.
    Each file is checked against its own stats, so parts written by different runs serve
    nothing stale."""
    MODES = (OUT, IN_PLACE, DRY_RUN)  # where a file known by its stat may need no bytes
    # Files an entry holds at most: one entry for a tree of 51,000 files was 45 MB, held three
    # times over while it was written (its values, marshal's bytes, the sealed copy). A part is
    # written as the run goes, as its last file is done: only the last one after the porting
    # (an entry of all of cuda-samples' 940 files took 12 ms to write at the end of a run).
    PART = 256

    def __init__(self, cache: Cache, jobs: list[Job]) -> None:
        self.cache, self.jobs = cache, jobs
        self.ported = [i for i, job in enumerate(jobs) if not _passed_over(job.file)]
        first = jobs[0]
        files = [(jobs[i].file.where, jobs[i].file.rel) for i in self.ported]
        tree = marshal.dumps((first.mode, str(first.out_root), files))
        self.keys = [cache.key(tree, f"\0tree {start}") for start in range(0, len(self.ported), self.PART)]
        self.resume = 0  # the first job serve() left to the run
        self.taken: list[Outcome] = []  # outcomes of the part being ported, so far
        self.next = 0  # the position in `ported` of the next ported job's outcome

    @classmethod
    def of(cls, jobs: list[Job]) -> _Tree | None:
        if not jobs or jobs[0].mode not in cls.MODES:
            return None
        cache = _cache(jobs[0])
        return cls(cache, jobs) if cache.on else None

    def serve(self) -> Iterator[Outcome]:
        """The jobs' outcomes in order, part by part while the entries hold for every ported
        file of the part; then `resume` is the first job left to the run."""
        if self.cache.known_empty or not self.keys:
            return
        before = settled_before()
        for n, key in enumerate(self.keys):
            part = self.ported[n * self.PART:(n + 1) * self.PART]
            outcomes = self._served(key, part, before)
            if outcomes is None:
                self.next = n * self.PART
                return
            for i, outcome in zip(part, outcomes):
                for j in range(self.resume, i):  # files not ported before it (links, copies)
                    yield _unported(self.jobs[j])
                yield outcome
                self.resume = i + 1
        for j in range(self.resume, len(self.jobs)):
            yield _unported(self.jobs[j])
        self.resume, self.next = len(self.jobs), len(self.ported)

    def _served(self, key: bytes, part: list[int], before: int) -> list[Outcome] | None:
        """The part's outcomes from its entry, or None where any file differs from it."""
        try:
            inputs, outputs, packed = self.cache.get(key)
            if not len(inputs) == len(outputs) == len(packed) == len(part):
                return None
            outcomes = []
            for i, known, output, values in zip(part, inputs, outputs, packed):
                job = self.jobs[i]
                st = _stat(job.file.where)
                if st is None or not settled(st, before) or stat_values(st) != known:
                    return None
                record = results.unpack(values)
                if not _needs_no_bytes(job, st, record, output):
                    return None
                outcomes.append(Outcome(record, stamp=(known, output)))
            return outcomes
        except (TypeError, ValueError, KeyError):  # none, or not this shape: a miss
            return None

    def take(self, i: int, outcome: Outcome) -> None:
        """Job i's outcome from the run (jobs in order, from `resume` on): a part's entry is
        written when its last file is done, and only when every file of it left a stamp."""
        if self.next >= len(self.ported) or self.ported[self.next] != i:
            return  # not ported
        self.taken.append(outcome)
        self.next += 1
        if self.next % self.PART and self.next < len(self.ported):
            return
        n = (self.next - 1) // self.PART
        stamps = [o.stamp for o in self.taken]
        if all(s is not None for s in stamps):
            self.cache.put(self.keys[n], (tuple(s[0] for s in stamps), tuple(s[1] for s in stamps),
                                          tuple(results.pack(o.record) for o in self.taken)))
        self.taken = []


def target_hip(settings: Settings, cache_root: Path | None) -> tuple[int, int]:
    """The HIP release the tables resolve the settings to. Kept in the cache: reading it from
    the tables would cost a run served from the cache a few milliseconds (their digest)."""
    def resolve() -> tuple[int, int]:
        from hipport.mappings import target_version

        return target_version(settings.target_hip)

    if cache_root is None:
        return resolve()
    return open_cache(cache_root, "port", (settings.cache_key(),)).memo("target-hip", resolve)


def _link(job: Job, out_rel: str) -> Outcome:
    """A link inside the tree stays a link; with --rename, one to a renamed file follows it."""
    f = job.file
    target = f.link
    pointee = posixpath.normpath(posixpath.join(posixpath.dirname(f.rel), target))
    if pointee in job.renamed:
        target = target[: -len(".cu")] + ".hip"
    try:
        if job.mode == OUT:
            mirror_link(job.out_root / out_rel, target)
        elif job.mode == IN_PLACE and (target != f.link or out_rel != f.rel):
            mirror_link(f.path.with_name(Path(out_rel).name), target)
            if out_rel != f.rel:
                f.path.unlink()
    except OSError as exc:
        return Outcome(_record(f, out_rel, "failed", f"cannot create link: {exc}"))
    return Outcome(_record(f, out_rel, "unchanged", "symlink (kept as a link)"))


def stream_progress(total: int, enabled: bool) -> tuple[Callable[[], None] | None, Callable[[], None]]:
    """A one-line progress bar on stderr when it is a terminal."""
    if not enabled or total < 2 or not sys.stderr.isatty():
        return None, lambda: None
    done = [0]
    width = 30

    def tick() -> None:
        done[0] += 1
        filled = width * done[0] // total
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done[0]}/{total} files")
        sys.stderr.flush()

    def close() -> None:
        sys.stderr.write("\r" + " " * (width + 30) + "\r")
        sys.stderr.flush()

    return tick, close
