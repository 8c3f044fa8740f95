"""The port over many files: plan the jobs, process one file (I/O included), summarize."""

from __future__ import annotations

import fnmatch
import os
import posixpath
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from hipport.cache import open_cache
from hipport.config import NEVER_COPIED, Settings
from hipport.emit import mirror_link, read_with_mode, unified_diff, write_atomic, write_copy
from hipport.errors import UsageError
from hipport.files import InputFile, collect
from hipport.pipeline import FileResult, Ported, output_name, port_source

OUT, IN_PLACE, STDOUT, DIFF = "out", "in-place", "stdout", "diff"
DRY_RUN = "dry-run"  # port in memory, write nothing (estimate, reports without output)


@dataclass(frozen=True)
class Job:
    file: InputFile
    mode: str
    out_root: Path | None
    settings: Settings
    renamed: frozenset[str]
    cache_root: Path | None = None


@dataclass(frozen=True)
class Outcome:
    result: FileResult
    data: bytes | None = None  # the ported bytes, for --stdout
    diff: str = ""  # for --diff


def check_output_dir(root: Path, inputs: list[Path], out: Path) -> None:
    """OUT must be neither inside an input nor around one: a mirror would overwrite sources.
    Inside a folder that is never walked (`build/`, `.git/`, ...) is fine."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"output {out} exists and is not a folder")
    out_real = out.resolve()
    for p in [root, *inputs]:
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
        check_output_dir(root, paths, out)
    if mode == STDOUT and len(files) != 1:
        raise UsageError(f"--stdout takes exactly one file ({len(files)} found)")
    renamed = frozenset(f.rel for f in files if settings.rename and output_name(f.rel, settings) != f.rel)
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


def process(job: Job) -> Outcome:
    """Everything for one file, I/O included; a problem becomes the file's status."""
    f, settings = job.file, job.settings
    out_rel = output_name(f.rel, settings)
    if f.skip:
        return Outcome(FileResult(f.rel, out_rel, f.kind, "skipped", reason=f.skip))
    if f.link is not None:
        return _link(job, out_rel)
    if f.verbatim:
        if job.mode == OUT:
            try:
                write_copy(os.path.join(job.out_root, f.rel), *read_with_mode(f.path))
            except OSError as exc:
                return Outcome(FileResult(f.rel, f.rel, f.kind, "failed", reason=f"cannot copy: {exc}"))
        return Outcome(FileResult(f.rel, f.rel, f.kind, "unchanged", reason="excluded folder: copied as is"))
    try:
        data, mode = read_with_mode(f.path)
    except OSError as exc:
        return Outcome(FileResult(f.rel, out_rel, f.kind, "failed", reason=f"cannot read: {exc.strerror or exc}"))
    cache = open_cache(job.cache_root, "port", (settings.cache_key(), settings.max_file_bytes, job.renamed))
    key = cache.key(data, f.rel)
    ported: Ported | None = cache.get(key)
    if ported is None:
        ported = port_source(data, f.rel, f.kind, settings, job.renamed)
        cache.put(key, ported)
    result = ported.result
    try:
        if job.mode == OUT:
            write_copy(os.path.join(job.out_root, result.output), ported.data, mode)
        elif job.mode == IN_PLACE and (result.changed or result.output != f.rel):
            target = f.path.with_name(Path(result.output).name)
            write_atomic(target, ported.data, like=f.path, durable=True)
            if target != f.path:
                f.path.unlink()
    except OSError as exc:
        return Outcome(FileResult(f.rel, result.output, f.kind, "failed", reason=f"cannot write: {exc}"))
    if job.mode == STDOUT:
        return Outcome(result, data=ported.data)
    if job.mode == DIFF and result.changed:
        return Outcome(result, diff=unified_diff(f.rel, result.output, data, ported.data))
    return Outcome(result)


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
        return Outcome(FileResult(f.rel, out_rel, f.kind, "failed", reason=f"cannot create link: {exc}"))
    return Outcome(FileResult(f.rel, out_rel, f.kind, "unchanged", reason="symlink (kept as a link)"))


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


def summarize(results: Iterable[FileResult]) -> dict[str, int]:
    counts = {"files": 0, "changed": 0, "replacements": 0, "ported": 0, "unchanged": 0, "skipped": 0, "failed": 0}
    for r in results:
        counts["files"] += 1
        counts[r.status] += 1
        counts["changed"] += r.changed
        counts["replacements"] += r.replacements
    return counts
