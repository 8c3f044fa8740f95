"""Where hipport keeps what it writes for later runs: its cache folder, and the compiled copies
of the mapping tables and the rules' patterns.

A compiled copy lives in the `__pycache__` folder beside hipport's package folder, where
Python keeps the bytecode of the modules next to it, so it goes with the install and needs no
cache folder. Not inside the package folder: pip's uninstall removes the files it installed and
their bytecode, nothing else, and a copy left there kept the folder (`site-packages/hipport`)
after hipport was gone; `pip install -e .` of the project then found that folder before its
own finder and imported it as a namespace package with none of hipport's code, which broke
every `hipport` command. Where that folder takes no file (Python told to write no bytecode, as
container images often are with PYTHONDONTWRITEBYTECODE, or an install the user cannot write
to), the copy goes in hipport's cache folder instead: without one, every run parses the tables
and compiles the patterns again, which triples the time of a pre-commit `check` of one file.
Light imports only: every run imports this.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from hipport import TYPE_CHECKING
from hipport.hashing import blake2b
from hipport.tuples import NamedTuple

if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")

_OFF = ("", "0", "off", "no", "false")


def cache_dir() -> Path | None:
    """$HIPPORT_CACHE_DIR (None when it says off), else $XDG_CACHE_HOME/hipport, else
    ~/.cache/hipport."""
    env = os.environ.get("HIPPORT_CACHE_DIR")
    if env is not None:
        return None if env.lower() in _OFF else Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hipport"


class Places(NamedTuple):
    """Where a compiled copy may be read, and where it may be written, in order."""
    read: tuple[str, ...]
    write: tuple[str, ...]
    shared: str = ""  # the cache folder's folder of copies, where write_copy prunes
    legacy: str = ""  # a __pycache__ inside hipport's folder, where builds before kept copies


# Copies in the cache folder are named for the install they belong to, so an install that is
# gone (an old virtual environment, a build tree) leaves its own; past this many, the oldest
# written go. One still in use is simply made again by its next run.
KEPT_COPIES = 32

_PACKAGE = os.path.dirname(os.path.realpath(__file__))  # hipport's own folder


def beside(folder: str, real: str, name: str, tag: str) -> tuple[str, str]:
    """Where the compiled copy `name` of what lies in `folder` (`real`: its real path) is kept
    beside the bytecode, and the folder where builds before kept it, to be swept ("" if the
    same). For hipport's own folders, the `__pycache__` next to the package folder, the copy
    named for the folder (`hipport.tables.tables.cpython-311.marshal`); for any other (a
    table folder of the user's), its own `__pycache__`."""
    own = os.path.join(folder, "__pycache__")
    if real != _PACKAGE and not real.startswith(_PACKAGE + os.sep):
        return os.path.join(own, f"{name}.{tag}.marshal"), ""
    top = os.path.dirname(_PACKAGE)
    dotted = os.path.relpath(real, top).replace(os.sep, ".")
    return os.path.join(top, "__pycache__", f"{dotted}.{name}.{tag}.marshal"), own


def copy_places(folder: str, name: str) -> Places:
    """Where the compiled copy `name` of what lies in `folder` is kept: beside the bytecode
    (see beside), then in the cache folder (named for `folder` too, so that two installs keep
    two copies).
    Where Python writes no bytecode, the cache folder is read first and is the only place
    written. None at all on a Python that keeps no bytecode."""
    tag = sys.implementation.cache_tag
    if tag is None:
        return Places((), ())
    real = os.path.realpath(folder)
    next_to_bytecode, legacy = beside(folder, real, name, tag)
    cache = cache_dir()
    if cache is None:
        cached, shared = (), ""
    else:
        key = blake2b(os.fsencode(real), digest_size=6).hexdigest()
        shared = os.path.join(cache, "compiled")
        cached = (os.path.join(shared, f"{name}.{tag}.{key}.marshal"),)
    if sys.dont_write_bytecode:
        return Places((*cached, next_to_bytecode), cached, shared, legacy)
    return Places((next_to_bytecode, *cached), (next_to_bytecode, *cached), shared, legacy)


def read_copy(places: Places, read: Callable[[str], T | None]) -> T | None:
    """The first copy that `read` takes (it returns None for an absent, stale or damaged one)."""
    for place in places.read:
        found = read(place)
        if found is not None:
            return found
    return None


def write_copy(places: Places, data: bytes) -> bool:
    """Write `data` to the first place that takes it (emit.write_atomic: a parallel process
    never reads half a copy). False when none did (a read-only install and no cache folder):
    the next run builds it again."""
    from hipport.emit import write_atomic  # noqa: PLC0415 - only a run that builds a copy writes

    for place in places.write:
        try:
            write_atomic(Path(place), data)
        except (OSError, ValueError):  # read-only, or a file where a folder would go
            continue
        if places.shared and os.path.dirname(place) == places.shared:
            _prune(places.shared)
        if places.legacy:
            _sweep(places.legacy)
        return True
    return False


def _sweep(folder: str) -> None:
    """Remove the copies that builds before this one kept inside hipport's folder (see
    beside): left there, they would outlive an uninstall. Asked as a copy is written, which is
    once after an upgrade; Python writes no `.marshal` file."""
    try:
        with os.scandir(folder) as it:
            old = [e.path for e in it if e.name.endswith(".marshal")]
    except OSError:
        return  # no such folder: nothing to sweep
    for path in old:
        try:
            os.unlink(path)
        except OSError:
            pass  # another process swept it first, or the install is read-only


def _prune(folder: str) -> None:
    """Keep the KEPT_COPIES newest copies in the cache folder (another process may be pruning
    too, or reading one: a copy that is gone is read as absent)."""
    try:
        with os.scandir(folder) as it:
            copies = [(e.stat().st_mtime_ns, e.path) for e in it if e.name.endswith(".marshal")]
        for _, path in sorted(copies, reverse=True)[KEPT_COPIES:]:
            os.unlink(path)
    except OSError:
        pass
