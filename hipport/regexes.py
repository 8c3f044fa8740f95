"""re.compile for the patterns hipport builds as it loads, kept compiled between runs.

Loading the rules and tables compiles some 230 regular expressions: a quarter of a pre-commit
check's time, and the same again in every `-j` worker. Python parses each pattern and emits its
matching code afresh in every process; here the code of each pattern made through compile() is
kept with hipport's bytecode (in the __pycache__ beside its package folder, per Python build; in
hipport's cache folder where that takes no file: hipport.locations), and a later process builds
the pattern from that code without parsing it again.

The code is the regular-expression engine's own (what `re` hands to `_sre.compile`); an entry is
kept only after the pattern built from it compared equal to re.compile's (a Pattern equals
another with the same pattern, flags and code), and a file written by another Python build is
never read. Anything unexpected (a damaged file, an engine whose internals differ) falls back to
re.compile. Only the module-level and table-made patterns go through compile(): those made from
a file's own names use re.compile, so the stored set stays the same from run to run.
"""

from __future__ import annotations

import marshal
import os
import re
import sys

from hipport import TYPE_CHECKING
from hipport.locations import Places, copy_places, read_copy, write_copy

if TYPE_CHECKING:
    from typing import Any

try:  # the engine's internals; absent or different, every pattern is compiled as usual
    import _sre
    from re import _compiler, _parser
except ImportError:  # pragma: no cover - another Python implementation
    _sre = None

_FORMAT = b"hipport-regexes-1"
_MAX_ENTRIES = 4096  # a bound on what stale patterns (of older hipport builds) may add up to


def _stamp() -> bytes:
    """What the stored code is valid for: this Python build and its engine."""
    magic = getattr(_sre, "MAGIC", None), getattr(_sre, "CODESIZE", None)
    return _FORMAT + repr((sys.version, sys.implementation.cache_tag, magic)).encode()


def _places() -> Places:
    """Beside this module's bytecode, or in the cache folder (asked at most twice a process:
    by the first compile() and by a save() with something new)."""
    return copy_places(os.path.dirname(os.path.realpath(__file__)), "regexes")


class _Store:
    def __init__(self) -> None:
        self.entries: dict[tuple, tuple] | None = None  # (pattern, flags) -> how to build it
        self.used: set[tuple] = set()  # the keys this process asked for
        self.added = 0  # entries compiled here and not yet written

    def load(self) -> dict[tuple, tuple]:
        if self.entries is None:
            self.entries = {}
            found = read_copy(_places(), _read_entries)
            if found is not None:
                self.entries = found
        return self.entries


def _read_entries(path: str) -> dict[tuple, tuple] | None:
    """A stored file's entries, or None when it is absent, unreadable, damaged or written by
    another Python build or engine: then patterns are compiled as usual, and written anew."""
    try:
        with open(path, "rb") as f:
            stamp, entries = marshal.loads(f.read())
    except (OSError, TypeError, ValueError, EOFError):
        return None
    return entries if stamp == _stamp() and isinstance(entries, dict) else None


_store = _Store()


def compile(pattern: Any, flags: int = 0) -> re.Pattern:  # noqa: A001 - re.compile's name
    """re.compile(pattern, flags), built from the stored code where there is some."""
    if _sre is None or not isinstance(pattern, (str, bytes)):
        return re.compile(pattern, flags)
    key = (pattern, int(flags))
    entries = _store.load()
    _store.used.add(key)
    built = entries.get(key)
    if built is not None:
        try:
            return _sre.compile(pattern, *built)
        except Exception:  # noqa: BLE001 - an entry this engine cannot take: compile it instead
            del entries[key]
    compiled = re.compile(pattern, flags)
    built = _code_of(pattern, int(flags), compiled)
    if built is not None:
        entries[key] = built
        _store.added += 1
    return compiled


def _code_of(pattern: str | bytes, flags: int, compiled: re.Pattern) -> tuple | None:
    """What _sre.compile takes after the pattern itself, as re's compiler makes it; None when
    the pattern built from it would not be re.compile's own (an engine whose steps differ)."""
    try:
        parsed = _parser.parse(pattern, flags)
        code = [int(op) for op in _compiler._code(parsed, flags)]  # its opcodes are int subclasses
        groupindex = dict(parsed.state.groupdict)
        indexgroup = [None] * parsed.state.groups
        for name, index in groupindex.items():
            indexgroup[index] = name
        built = (flags | parsed.state.flags, code, parsed.state.groups - 1, groupindex, tuple(indexgroup))
        return built if _sre.compile(pattern, *built) == compiled else None
    except Exception:  # noqa: BLE001 - any surprise: this pattern is simply not kept
        return None


def save() -> None:
    """Write the entries when this process compiled new ones (atomically: a temporary file,
    then a rename, so a parallel process never reads half a file). Called once the rules and
    tables are loaded (loaders.prepare) and as a command ends (for modules imported later)."""
    if not _store.added or _store.entries is None:
        return  # the common case, asked as every batch of files is loaded: nothing new
    entries = _store.entries
    _store.added = 0
    if len(entries) > _MAX_ENTRIES:  # mostly patterns of older builds: keep this run's
        entries = {key: entries[key] for key in _store.used if key in entries}
    write_copy(_places(), marshal.dumps((_stamp(), entries)))  # none takes it: compiled again
