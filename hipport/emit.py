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


_made: set[str] = set()


def _parent(path: str) -> None:
    """mkdir -p once per folder and process: a tree of thousands of files has few folders."""
    folder = os.path.dirname(path)
    if folder not in _made:
        os.makedirs(folder, exist_ok=True)
        _made.add(folder)


def read_with_mode(path: Path) -> tuple[bytes, int]:
    """A file's bytes and permission bits, from one open (no separate stat of the path)."""
    with open(path, "rb") as f:
        return f.read(), stat.S_IMODE(os.fstat(f.fileno()).st_mode)


def write_copy(path: str, data: bytes, mode: int) -> None:
    """Write a file of the output tree (-o OUT) with permission bits `mode`. Not atomic: the
    source is untouched, so an interrupted run loses nothing and the next run writes it again.
    A file that already holds exactly these bytes and mode is left alone: a re-run into the same
    OUT rewrites only what changed, and build tools see unchanged files as unchanged."""
    _parent(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None:
        if stat.S_ISLNK(st.st_mode):
            os.unlink(path)  # never write through a link left in OUT by an earlier run
        elif (stat.S_ISREG(st.st_mode) and st.st_size == len(data)
              and stat.S_IMODE(st.st_mode) == mode and _holds(path, data)):
            return
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    try:
        fd = os.open(path, flags, 0o600)
    except FileNotFoundError:  # its folder was removed since _parent() saw it
        _made.discard(os.path.dirname(path))
        _parent(path)
        fd = os.open(path, flags, 0o600)
    with open(fd, "wb") as f:
        f.write(data)
        os.fchmod(fd, mode)


def _holds(path: str, data: bytes) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read() == data
    except OSError:
        return False


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
