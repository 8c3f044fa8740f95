"""Write results: atomic file writes, mirrored links, unified diffs."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from hipport.tuples import NamedTuple


def text_bytes(text: str) -> bytes:
    """A report's, a check's or a baseline's text as UTF-8. A file name that is no UTF-8 (Linux
    takes any bytes) reaches the text as surrogates (os.fsdecode's), which UTF-8 cannot hold:
    each is written as its escape, `\\udcff`, which a JSON reader reads back as the same name."""
    return text.encode("utf-8", "backslashreplace")


def batches(pieces: str | Iterable[str], size: int = 1 << 20) -> Iterator[str]:
    """The text of `pieces` (a text whole, or its pieces in order) in strings of about `size`
    characters: a document made in pieces is written without ever being whole in memory, yet
    with one write per megabyte, not per piece."""
    if isinstance(pieces, str):
        yield pieces
        return
    batch: list[str] = []
    held = 0
    for piece in pieces:
        batch.append(piece)
        held += len(piece)
        if held >= size:
            yield "".join(batch)
            batch, held = [], 0
    if batch:
        yield "".join(batch)


def write_text(path: Path, text: str | Iterable[str]) -> None:
    """A text, or its pieces in order, to `path` atomically (write_atomic), encoded in batches:
    a document made in pieces is never whole in memory."""
    write_atomic(path, map(text_bytes, batches(text)))


def make_folders(folder: str | Path) -> None:
    """os.makedirs(folder, exist_ok=True) without its recursion, one level of which a missing
    folder costs: an output tree mirrors an input that may nest deeper than Python's stack."""
    missing = []
    folder = os.fspath(folder)
    while folder and not os.path.isdir(folder):
        missing.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    for path in reversed(missing):
        try:
            os.mkdir(path)
        except FileExistsError:
            if not os.path.isdir(path):
                raise


def write_atomic(path: Path, data: bytes | Iterable[bytes], like: Path | None = None,
                 durable: bool = False) -> None:
    """Write `data` (bytes, or chunks of them in order) via a temporary file in the same folder
    and rename it over `path`, so a crash leaves either the old file or the new one, never half
    of one. Keeps `like`'s mode, else the mode of the file it replaces; a new file gets the
    mode open() gives one (the temporary file is private). `durable` also flushes to disk
    before the rename: for files rewritten in place."""
    make_folders(path.parent)
    mode = None
    for candidate in (like, path):
        if candidate is not None:
            try:
                mode = stat.S_IMODE(os.stat(candidate).st_mode)  # one stat, not exists() and stat()
                break
            except (FileNotFoundError, NotADirectoryError):  # what exists() took for absent
                pass
    if mode is None:
        mode = 0o666 & ~_umask()
    import tempfile  # noqa: PLC0415 - in-place writes alone need it (with what it imports, 2 ms a run)

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".hipport-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            if isinstance(data, bytes):
                f.write(data)
            else:
                f.writelines(data)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _umask() -> int:
    """The process's umask: read from /proc where Linux shows it, for setting it to read it
    (the one portable way) would give a file another thread makes meanwhile mode 0666."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0)
    os.umask(mask)
    return mask


def read_with_stat(path: str | Path, most: int | None = None, head: int = 0) -> tuple[bytes, os.stat_result, bool]:
    """A file's bytes, its stat (from the same open: no separate stat of the path), and whether
    the bytes are the whole file. A file of more than `most` bytes is not read whole: its first
    `head` bytes come back, so a tree holding a checkpoint of gigabytes is not read into
    memory to be copied."""
    fd = os.open(path, os.O_RDONLY)
    try:
        st = os.fstat(fd)
        if most is not None and st.st_size > most:
            return os.read(fd, head), st, False
        return _read_to_end(fd, st.st_size), st, True
    finally:
        os.close(fd)


def copy_large(source: str, path: str, st: os.stat_result) -> tuple[os.stat_result, bool]:
    """Copy a file too large to read whole (`st`: its stat) to `path` in the output tree, by
    the kernel (no copy in this process's memory), with its permission bits and modification
    time: a re-run finds the copy by its size and time, as rsync's quick check does, where
    comparing bytes would read both files again on every run. Returns the copy's stat and
    whether this call wrote it."""
    import shutil  # noqa: PLC0415 - large files alone need it

    mode = stat.S_IMODE(st.st_mode)
    try:
        out = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        make_folders(os.path.dirname(path))
    else:
        if stat.S_ISREG(out.st_mode) and (out.st_size, out.st_mtime_ns, stat.S_IMODE(out.st_mode)) == (
                st.st_size, st.st_mtime_ns, mode):
            return out, False
        if not stat.S_ISREG(out.st_mode):
            os.unlink(path)  # never write through a link left in OUT by an earlier run
    shutil.copyfile(source, path)  # sendfile(2) on Linux
    os.chmod(path, mode)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    return os.stat(path), True


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
        make_folders(os.path.dirname(path))
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
    make_folders(path.parent)
    if path.is_symlink() or path.exists():
        path.unlink()
    os.symlink(target, path)


_CONTEXT = 3  # lines around a change, as diff -u and git diff show


def unified_diff(old_name: str, new_name: str, old: bytes, spliced: Sequence[tuple[int, int, bytes]]) -> str:
    """The port of `old` by its splices (edits.splices) as a unified diff, as `diff -u` prints
    it: made from the splices, which say what changed, rather than by comparing the two texts
    (difflib's matching was three quarters of a `--diff` run served from the cache). Lines end
    at `\n` alone, as patch(1) reads them (difflib's also ended at a form feed, a lone `\r` and
    other Unicode breaks, which made hunks patch could not apply)."""
    changes = _changes(old, spliced)
    if not changes:
        return ""
    old_lines = old.count(b"\n") + (1 if old and not old.endswith(b"\n") else 0)
    out = [f"--- a/{old_name}\n+++ b/{new_name}\n"]
    hunk: list[_Change] = []
    for change in changes:
        if hunk and change.old_at - hunk[-1].old_end > 2 * _CONTEXT:
            out.append(_hunk(old, hunk, old_lines))
            hunk = []
        hunk.append(change)
    out.append(_hunk(old, hunk, old_lines))
    return "".join(out)


class _Change(NamedTuple):
    """Whole lines of the old text, bytes [lo, hi) (line numbers [old_at, old_end), from 0),
    replaced by the bytes `new` (whole lines too, from the new text's line `new_at`)."""
    old_at: int
    old_end: int
    lo: int
    hi: int
    new: bytes
    new_at: int


def _changes(old: bytes, spliced: Sequence[tuple[int, int, bytes]]) -> list[_Change]:
    """The splices grown to the lines they touch, touching ones joined, and lines that the
    change leaves as they were at either end given back as context."""
    spans: list[list] = []  # [lo, hi, splices], byte ranges of whole lines
    for s, e, text in spliced:
        lo = old.rfind(b"\n", 0, s) + 1
        if e == s == lo and text.endswith(b"\n"):
            hi = s  # whole lines put before this one
        else:
            nl = old.find(b"\n", e - 1 if e > s else s)
            hi = len(old) if nl < 0 else nl + 1
        if spans and lo <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], hi)
            spans[-1][2].append((s, e, text))
        else:
            spans.append([lo, hi, [(s, e, text)]])
    changes: list[_Change] = []
    line = at = 0  # the old text's line number at byte `at`
    shift = 0  # new lines less old lines, over the changes so far
    for lo, hi, parts in spans:
        pieces, pos = [], lo
        for s, e, text in parts:
            pieces += (old[pos:s], text)
            pos = e
        pieces.append(old[pos:hi])
        new = b"".join(pieces)
        line += old.count(b"\n", at, lo)
        at = lo
        removed, added = _count_lines(old, lo, hi), _count_lines(new, 0, len(new))
        if removed > 1 or added > 1:  # lines equal at either end are context, not change
            lo, hi, new, skipped = _trimmed(old, lo, hi, new)
            line += skipped
            at = lo
            removed, added = _count_lines(old, lo, hi), _count_lines(new, 0, len(new))
        if old[lo:hi] == new:
            continue  # nothing changed after all
        changes.append(_Change(line, line + removed, lo, hi, new, line + shift))
        shift += added - removed
    return changes


def _count_lines(text: bytes, lo: int, hi: int) -> int:
    return text.count(b"\n", lo, hi) + (hi > lo and text[hi - 1] != 0x0A)


def _trimmed(old: bytes, lo: int, hi: int, new: bytes) -> tuple[int, int, bytes, int]:
    """[lo, hi) and `new` less the whole lines they start and end with alike, and how many
    lines that took off the start."""
    before, after = _lines(old[lo:hi]), _lines(new)
    head = 0
    while head < min(len(before), len(after)) and before[head] == after[head]:
        head += 1
    tail = 0
    while tail < min(len(before), len(after)) - head and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    lo += sum(map(len, before[:head]))
    hi -= sum(map(len, before[len(before) - tail:]))
    return lo, hi, b"".join(after[head:len(after) - tail]), head


def _lines(text: bytes) -> list[bytes]:
    """The lines of `text`, each with its `\n` (the last one may have none)."""
    lines = text.split(b"\n")
    last = lines.pop()
    return [x + b"\n" for x in lines] + ([last] if last else [])


def _marked(text: bytes, mark: bytes) -> bytes:
    """Whole lines, each after `mark`; a last line with no `\n` is said to have none, as diff
    says it."""
    if not text:
        return b""
    out = mark + text.replace(b"\n", b"\n" + mark)
    return out[: -len(mark)] if text.endswith(b"\n") else out + b"\n\\ No newline at end of file\n"


def _hunk(old: bytes, changes: list[_Change], old_lines: int) -> str:
    first, last = changes[0], changes[-1]
    start = max(0, first.old_at - _CONTEXT)
    stop = min(old_lines, last.old_end + _CONTEXT)
    lo = first.lo
    for _ in range(first.old_at - start):
        lo = old.rfind(b"\n", 0, lo - 1) + 1
    hi = last.hi
    for _ in range(stop - last.old_end):
        nl = old.find(b"\n", hi)
        hi = len(old) if nl < 0 else nl + 1
    body = [_marked(old[lo:first.lo], b" ")]
    for n, change in enumerate(changes):
        if n:
            body.append(_marked(old[changes[n - 1].hi:change.lo], b" "))
        body += (_marked(old[change.lo:change.hi], b"-"), _marked(change.new, b"+"))
    body.append(_marked(old[last.hi:hi], b" "))
    new_start = first.new_at - (first.old_at - start)
    new_stop = last.new_at + _count_lines(last.new, 0, len(last.new)) + (stop - last.old_end)
    return (f"@@ -{_range(start, stop)} +{_range(new_start, new_stop)} @@\n"
            + b"".join(body).decode("utf-8", "surrogateescape"))


def _range(start: int, stop: int) -> str:
    """A hunk's line range as diff -u writes it: `first,count`, `first` alone for one line,
    and the line before for none."""
    count = stop - start
    if count == 1:
        return str(start + 1)
    return f"{start + 1 if count else start},{count}"
