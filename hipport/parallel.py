"""Run a function over many jobs: in this process for a few, in forked worker processes
(hipport.pool) for many."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable, Iterator, Sequence

from hipport.cache import close_stores
from hipport.config import Settings

if TYPE_CHECKING:
    from hipport.pool import Pool

SERIAL_BELOW = 16  # a pool costs more than it saves on a handful of files


def pooled(workers: int, jobs: int) -> bool:
    """Whether `jobs` jobs go to `workers` worker processes. Where the OS cannot fork
    (Windows), every job runs in this process: the workers are forked copies of it."""
    return workers > 1 and jobs >= SERIAL_BELOW and hasattr(os, "fork")


def _warm(settings: Settings) -> None:
    from hipport.loaders import prepare

    prepare(settings)  # the tables, the lexer and the rules, once per worker


def pool(workers: int, settings: Settings) -> Pool | None:
    """Worker processes, forked now; each loads the tables, the lexer and the rules itself
    (all at once, while the caller goes on: loading them before the fork made every worker
    wait for it). None when the OS refuses to fork (a container's process limit): the caller
    runs the jobs itself. An SQLite connection must not cross a fork, even unused, so this
    process's are closed first (the next query opens them again)."""
    from hipport.pool import Pool  # here: a run without workers needs no pickle or threads

    close_stores()
    try:
        return Pool(workers, _warm, (settings,))
    except OSError:
        return None


def run(func: Callable, jobs: Sequence, workers: int,
        on_done: Callable[[], None] | None = None) -> Iterator:
    """`func(job)` for every job, results in job order. Jobs carry `.settings`; `func` must be a
    module-level function (it crosses processes)."""
    workers = workers or os.cpu_count() or 1
    if not pooled(workers, len(jobs)):
        for job in jobs:
            yield func(job)
            if on_done:
                on_done()
        return
    chunk = max(1, min(64, len(jobs) // (workers * 8)))
    started = pool(workers, jobs[0].settings)
    if started is None:
        yield from run(func, jobs, 1, on_done)
        return
    with started:
        for result in started.map(func, jobs, chunksize=chunk):
            yield result
            if on_done:
                on_done()
