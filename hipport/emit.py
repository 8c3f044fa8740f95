"""Write results: atomic file writes, mirrored links, unified diffs."""

from __future__ import annotations

import difflib
import os
import stat
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: bytes, like: Path | None = None, durable: bool = False) -> None:
    """Write via a temporary file in the same folder and rename it over `path`, so a crash
    leaves either the old file or the new one, never half of one. Keeps `like`'s mode.
    `durable` also flushes to disk before the rename: for files rewritten in place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = None
    for candidate in (like, path):
        if candidate is not None and candidate.exists():
            mode = stat.S_IMODE(candidate.stat().st_mode)
            break
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".hipport-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


_made: set[Path] = set()


def _parent(path: Path) -> None:
    """mkdir -p once per folder and process: a tree of thousands of files has few folders."""
    folder = path.parent
    if folder not in _made:
        folder.mkdir(parents=True, exist_ok=True)
        _made.add(folder)


def write_copy(path: Path, data: bytes, like: Path) -> None:
    """Write a file of the output tree (-o OUT) with `like`'s mode. Not atomic: the source is
    untouched, so an interrupted run loses nothing and the next run writes it again."""
    _parent(path)
    if path.is_symlink():
        path.unlink()  # never write through a link left in OUT by an earlier run
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, stat.S_IMODE(like.stat().st_mode))


def mirror_link(path: Path, target: str) -> None:
    """Recreate a symlink (one that stays inside the tree) in the output tree."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.exists():
        path.unlink()
    os.symlink(target, path)


def unified_diff(old_name: str, new_name: str, old: bytes, new: bytes) -> str:
    def lines(data: bytes) -> list[str]:
        return data.decode("utf-8", "surrogateescape").splitlines(keepends=True)

    out = []
    for line in difflib.unified_diff(lines(old), lines(new), f"a/{old_name}", f"b/{new_name}"):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
