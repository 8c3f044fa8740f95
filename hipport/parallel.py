"""Run a function over many jobs: in this process for a few, a process pool for many."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from typing import Callable, Iterator, Sequence

from hipport.config import Settings
from hipport.loaders import tools

SERIAL_BELOW = 16  # a pool costs more than it saves on a handful of files


def _warm(settings: Settings) -> None:
    tools(settings)  # load the tables and compile the lexer once per worker


def run(func: Callable, jobs: Sequence, workers: int,
        on_done: Callable[[], None] | None = None) -> Iterator:
    """`func(job)` for every job, results in job order. Jobs carry `.settings`; `func` must be a
    module-level function (it crosses processes)."""
    workers = workers or os.cpu_count() or 1
    if workers <= 1 or len(jobs) < SERIAL_BELOW:
        for job in jobs:
            yield func(job)
            if on_done:
                on_done()
        return
    settings = jobs[0].settings
    chunk = max(1, min(64, len(jobs) // (workers * 8)))
    with ProcessPoolExecutor(max_workers=workers, initializer=_warm, initargs=(settings,)) as pool:
        for result in pool.map(func, jobs, chunksize=chunk):
            yield result
            if on_done:
                on_done()
