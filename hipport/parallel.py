"""Run a function over many jobs: in this process for a few; for many, in this process and
forked worker processes (hipport.pool)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence

from hipport import TYPE_CHECKING
from hipport.cache import close_stores
from hipport.config import Settings

if TYPE_CHECKING:
    from hipport.pool import Pool

SERIAL_BELOW = 16  # a pool costs more than it saves on a handful of files
CGROUP = "/sys/fs/cgroup"  # where a container sees its own CPU quota
LARGEST = 64  # jobs in a task at most
SMALLEST = 4  # jobs in the last tasks of a pooled run


def bounds(count: int, workers: int, largest: int = LARGEST) -> list[tuple[int, int]]:
    """(start, stop) of each task when `count` jobs go to `workers` processes: at most
    `largest` jobs and an eighth of a process's share, then smaller and smaller toward the end
    (a quarter of what is left over the processes, down to SMALLEST), so that the processes
    finish together: with equal tasks, one process ran up to a whole task after the others
    were done, and the last files are not the cheapest. One process: `largest` at a time."""
    if workers <= 1:
        return [(start, min(count, start + largest)) for start in range(0, count, largest)]
    first = max(1, min(largest, count // (workers * 8)))
    spans, start = [], 0
    while start < count:
        stop = min(count, start + max(SMALLEST, min(first, (count - start) // (workers * 4))))
        spans.append((start, stop))
        start = stop
    return spans


def processes(asked: int) -> int:
    """Processes for `-j asked`: as asked, or for 0, one per CPU this process may use."""
    return asked or usable_cpus()


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity), no more than its cgroup's CPU quota
    allows (a container's --cpus, a pod's limit). os.cpu_count() sees neither: on a 64-core
    host that gives a container 2 CPUs, one process per core was 64 processes sharing 2."""
    try:
        count = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        count = os.cpu_count() or 1
    quota = _quota(CGROUP)
    return max(1, min(count, quota)) if quota else count


def _quota(cgroup: str) -> int | None:
    """CPUs the cgroup's quota amounts to, rounded up; None without one (cgroup v2's cpu.max
    `QUOTA PERIOD` or `max PERIOD`; v1's cfs_quota_us, -1 for none, over cfs_period_us)."""
    for quota_file, period_file in (("cpu.max", None), ("cpu/cpu.cfs_quota_us", "cpu/cpu.cfs_period_us"),
                                    ("cpu,cpuacct/cpu.cfs_quota_us", "cpu,cpuacct/cpu.cfs_period_us")):
        try:
            with open(os.path.join(cgroup, quota_file)) as f:
                words = f.read().split()
            if period_file is not None:
                with open(os.path.join(cgroup, period_file)) as f:
                    words += f.read().split()
            quota, period = int(words[0]), int(words[1])
        except (OSError, ValueError, IndexError):
            continue  # no such file, or `max`: no quota here
        return -(-quota // period) if quota > 0 and period > 0 else None
    return None


def pooled(workers: int, jobs: int) -> bool:
    """Whether `jobs` jobs go to `workers` worker processes. Where the OS cannot fork
    (Windows), every job runs in this process: the workers are forked copies of it."""
    return workers > 1 and jobs >= SERIAL_BELOW and hasattr(os, "fork")


def _warm(settings: Settings) -> None:
    from hipport.loaders import prepare

    prepare(settings)  # the tables, the lexer and the rules, once per worker


def pool(workers: int, settings: Settings) -> Pool | None:
    """`workers` processes: this one, which runs tasks while it waits for results
    (Pool.result), and `workers - 1` forked now. Each loads the tables, the lexer and the
    rules itself (at the same time: loading them before the fork made every worker wait for
    it). None when the OS refuses to fork (a container's process limit): the caller runs the
    jobs itself. An SQLite connection must not cross a fork, even unused, so this process's
    are closed first (the next query opens them again)."""
    from hipport.pool import Pool  # here: a run without workers needs no pickle or threads

    close_stores()
    try:
        return Pool(workers - 1, _warm, (settings,))
    except OSError:
        return None


class Runs:
    """run() over several lists of jobs in turn, with one pool: forked for the first list that
    is pooled, shut down at the end (a pool per list would fork, and load the tables, per list).
    A run that streams its files a window at a time holds one window's results."""

    def __init__(self, workers: int) -> None:
        self.workers = processes(workers)
        self.pool: Pool | None = None
        self.refused = False  # the OS would not fork: every list runs here

    def run(self, func: Callable, jobs: Sequence, on_done: Callable[[], None] | None = None) -> Iterator:
        """`func(job)` for every job, results in job order: by the pool once a list had enough
        jobs for one. Jobs carry `.settings`; `func` must be a module-level function (it
        crosses processes)."""
        if self.pool is None and not self.refused and pooled(self.workers, len(jobs)):
            self.pool = pool(self.workers, jobs[0].settings)
            self.refused = self.pool is None
        if self.pool is None:
            for job in jobs:
                yield func(job)
                if on_done:
                    on_done()
            return
        for result in self.pool.map(func, jobs, bounds(len(jobs), self.workers)):
            yield result
            if on_done:
                on_done()

    def __enter__(self) -> Runs:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=exc[0] is not None)


def run(func: Callable, jobs: Sequence, workers: int,
        on_done: Callable[[], None] | None = None) -> Iterator:
    """`func(job)` for every job, results in job order (see Runs.run)."""
    with Runs(workers) as runs:
        yield from runs.run(func, jobs, on_done)
