"""Write results: atomic file writes, mirrored links, unified diffs."""

from __future__ import annotations

import os
import stat
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
    import tempfile  # noqa: PLC0415 - in-place writes alone need it (with what it imports, 2 ms a run)

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


def read_with_stat(path: str | Path) -> tuple[bytes, os.stat_result]:
    """A file's bytes and its stat, from one open (no separate stat of the path)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        st = os.fstat(fd)
        return _read_to_end(fd, st.st_size), st
    finally:
        os.close(fd)


def read_with_mode(path: str | Path) -> tuple[bytes, int]:
    """A file's bytes and permission bits."""
    data, st = read_with_stat(path)
    return data, stat.S_IMODE(st.st_mode)


def _read_to_end(fd: int, size: int) -> bytes:
    """All of an open file whose size fstat gave. os calls, not a file object: a warm run
    reads every input and every output, tens of thousands of files."""
    data = os.read(fd, size + 1)
    parts = [data]
    while data:  # until EOF: the file may have grown, or be larger than one read returns
        data = os.read(fd, 1 << 20)
        parts.append(data)
    return b"".join(parts) if len(parts) > 2 else parts[0]


def write_copy(path: str, data: bytes, mode: int, want_stat: bool = False) -> tuple[os.stat_result | None, bool]:
    """Write a file of the output tree (-o OUT) with permission bits `mode`. Not atomic: the
    source is untouched, so an interrupted run loses nothing and the next run writes it again.
    A file that already holds exactly these bytes and mode is left alone: a re-run into the same
    OUT rewrites only what changed, and build tools see unchanged files as unchanged. Returns
    the file's stat once it holds them (`want_stat`; else None), and whether this call wrote
    it."""
    try:
        # O_NOFOLLOW: a link fails to open; O_NONBLOCK: a FIFO does not wait for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        pass
    except OSError:
        if os.path.islink(path):
            os.unlink(path)  # never write through a link left in OUT by an earlier run
    else:
        try:
            st = os.fstat(fd)
            if _holds(fd, st, data, mode):
                return st, False
        finally:
            os.close(fd)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    try:
        fd = os.open(path, flags, 0o600)
    except FileNotFoundError:  # the first file of its folder: a re-run finds the folders made
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, flags, 0o600)
    try:  # os calls, not a file object: a cold run writes tens of thousands of files
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fchmod(fd, mode)
        return (os.fstat(fd) if want_stat else None), True
    finally:
        os.close(fd)


def _holds(fd: int, st: os.stat_result, data: bytes, mode: int) -> bool:
    """The open file (of stat `st`) is a regular file with exactly these bytes and permission
    bits."""
    if not stat.S_ISREG(st.st_mode) or st.st_size != len(data) or stat.S_IMODE(st.st_mode) != mode:
        return False
    try:
        return _read_to_end(fd, st.st_size) == data
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

    import difflib  # noqa: PLC0415 - --diff alone needs it

    out = []
    for line in difflib.unified_diff(lines(old), lines(new), f"a/{old_name}", f"b/{new_name}"):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
