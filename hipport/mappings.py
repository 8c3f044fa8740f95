"""Load and validate the mapping tables (mappings/*.tsv) into one lookup, filtered for a target
HIP version, a library family (hip* or roc*) and the experimental switch."""

from __future__ import annotations

import functools
import marshal
import operator
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import MappingProxyType

from hipport import TYPE_CHECKING, regexes
from hipport.errors import MappingError
from hipport.hashing import blake2b
from hipport.locations import Places, copy_places, read_copy, write_copy
from hipport.table_files import read_tsv, table_dir, tables_stamp
from hipport.tuples import NamedTuple

if TYPE_CHECKING:
    from typing import Any

# Generated tables in precedence order: when a CUDA name is in two of them, the earlier wins
# (unless only the later one maps it). Hand-written tables follow (by file name), then
# overrides.tsv, which replaces rows outright.
GENERATED: tuple[str, ...] = (
    "runtime", "driver", "device", "complex", "cublas", "curand", "cufft", "cusparse",
    "cusolver", "cudnn", "cub", "nvrtc",
)
ROC_LIBS = frozenset({"cublas", "curand", "cusparse", "cusolver"})
MIOPEN_LIBS = frozenset({"cudnn"})  # mapped through the roc column (MIOpen) only
INCLUDES = "includes"
OVERRIDES = "overrides"
NAME_REQUIRED = ("cuda", "hip")
INCLUDE_REQUIRED = ("cuda", "hip")
LIBS = ("hip", "roc")

# Names may be qualified (`thrust::cuda`): the renamer then matches the qualifier too.
_IDENT = regexes.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*\Z")
_VERSION = regexes.compile(r"[0-9]+(?:\.[0-9]+)*\Z")
_HEADER_PATH = regexes.compile(r"[A-Za-z0-9_./+-]+\Z")


class Entry(NamedTuple):
    cuda: str
    hip: str
    roc: str
    library: str  # the TSV file stem: "runtime", "cublas", ...
    kind: str
    section: str
    cuda_added: str
    cuda_deprecated: str
    cuda_removed: str
    hip_added: str
    hip_deprecated: str
    hip_removed: str
    experimental: bool
    risk: str
    note: str
    roc_added: str = ""
    transform: str = ""  # a named argument-aware rewrite (hipport/rewrite/calls.py)


class Mappings:
    """The tables resolved for one set of settings (see load)."""

    def __init__(self, entries: _Entries, names: Mapping[str, str], includes: Mapping[str, str],
                 include_library: Mapping[str, str], target_hip: tuple[int, int], libs: str = "hip",
                 experimental: bool = False, conflicts: tuple[str, ...] = (),
                 transforms: Mapping[str, str] = MappingProxyType({})):
        self.entries = entries  # name -> Entry, built on first use
        self.names = names
        self.includes = includes
        self.include_library = include_library
        self.target_hip = target_hip
        self.libs = libs
        self.experimental = experimental
        self.conflicts = conflicts  # how same-named rows of different tables were resolved
        self.transforms = transforms  # cuda name -> named call rewrite
        # unsupported_reason's answers: every file asks again for the same few hundred names
        self._reasons: dict[str, str | None] = {}
        # wanted()'s answers, per test: the table rules ask about the same names in every file
        self._wanted: dict[Callable, dict[str, bool]] = {}
        # what other modules work out from these tables once, each under its own key
        self.memo: dict[str, Any] = {}

    def lookup(self, name: str) -> Entry | None:
        return self.entries.get(name)

    def wanted(self, test: Callable[[Mappings, str, Entry], bool], names: Iterable[str]) -> set[str]:
        """The table names among `names` for which `test(self, name, entry)` holds, each answer
        computed once per process and test (a module-level function: its identity is the key)."""
        answers = self._wanted.get(test)
        if answers is None:
            answers = self._wanted[test] = {}
        out = set()
        for name in names:
            known = answers.get(name)
            if known is None:
                known = answers[name] = bool(test(self, name, self.entries[name]))
            if known:
                out.add(name)
        return out

    def unsupported_reason(self, name: str) -> str | None:
        """Why `name` is not rewritten at these settings; None when it is mapped (or maps to
        itself) and None for names no table knows."""
        try:
            return self._reasons[name]
        except KeyError:
            pass
        entry = self.entries.get(name)
        reason = None if entry is None else _resolve(entry, self.target_hip, self.libs, self.experimental)[1]
        self._reasons[name] = reason
        return reason


def parse_version(text: str) -> tuple[int, ...] | None:
    """`"5.2.0"` -> (5, 2, 0), `"11.3"` -> (11, 3); None for an empty or malformed cell."""
    text = text.strip()
    if not _VERSION.match(text):
        return None
    return tuple(int(part) for part in text.split("."))


@functools.lru_cache(maxsize=None)
def _major_minor(text: str) -> tuple[int, int] | None:
    v = parse_version(text)
    if v is None:
        return None
    return (v[0], v[1] if len(v) > 1 else 0)


def _fmt(v: tuple[int, int]) -> str:
    return f"{v[0]}.{v[1]}"


def _resolve_fields(library: str, hip: str, roc: str, hip_added: str, hip_removed: str,
                    roc_added: str, is_experimental: bool, target: tuple[int, int], libs: str,
                    experimental: bool) -> tuple[str, str | None]:
    """(replacement, None) when usable at these settings, else ("", reason)."""
    if library in MIOPEN_LIBS:
        name, added, removed, what = roc, roc_added, "", "MIOpen"
    elif libs == "roc" and roc and library in ROC_LIBS:
        name, added, removed, what = roc, roc_added, "", "HIP"
    else:
        name, added, removed, what = hip, hip_added, hip_removed, "HIP"
    if not name:
        return "", f"no {what} equivalent"
    if added:
        v = _major_minor(added)
        if v is not None and v > target:
            return "", f"added in {what} {_fmt(v)} (target {_fmt(target)})"
    if removed:
        v = _major_minor(removed)
        if v is not None and v <= target:
            return "", f"removed in {what} {_fmt(v)} (target {_fmt(target)})"
    if is_experimental and not experimental:
        return "", f"experimental in {what}"
    return name, None


def _resolve(e: Entry, target: tuple[int, int], libs: str, experimental: bool) -> tuple[str, str | None]:
    return _resolve_fields(e.library, e.hip, e.roc, e.hip_added, e.hip_removed, e.roc_added,
                           e.experimental, target, libs, experimental)


# A raw row: the Entry fields in order, `experimental` still the TSV text ("1" or "").
_F = {f: i for i, f in enumerate((
    "cuda", "hip", "roc", "library", "kind", "section", "cuda_added", "cuda_deprecated",
    "cuda_removed", "hip_added", "hip_deprecated", "hip_removed", "experimental", "risk", "note",
    "roc_added", "transform",
))}
_LIB, _HIP, _ROC, _HADD, _HREM, _EXP, _RADD, _XFORM, _RISK = (
    _F["library"], _F["hip"], _F["roc"], _F["hip_added"], _F["hip_removed"], _F["experimental"],
    _F["roc_added"], _F["transform"], _F["risk"],
)


def _resolve_raw(t: tuple, target: tuple[int, int], libs: str, experimental: bool) -> tuple[str, str | None]:
    return _resolve_fields(t[_LIB], t[_HIP], t[_ROC], t[_HADD], t[_HREM], t[_RADD],
                           t[_EXP] == "1", target, libs, experimental)


def _make_entry(t: tuple) -> Entry:
    return Entry(*t[:_EXP], t[_EXP] == "1", *t[_EXP + 1:])


def _raw_supported(t: tuple) -> bool:
    return bool(t[_ROC] if t[_LIB] in MIOPEN_LIBS else t[_HIP])


class _ByName(Mapping):
    """A read-only mapping whose names are the keys of `texts` (every row's text, by name):
    membership, order and size come from that dict, in C."""

    __slots__ = ("texts",)

    def __init__(self, texts: dict[str, str]):
        self.texts = texts

    def __contains__(self, name: object) -> bool:
        return name in self.texts

    def keys(self):
        """The names, as a view that tests membership in C (callers test every identifier)."""
        return self.texts.keys()

    def __iter__(self):
        return iter(self.texts)

    def __len__(self) -> int:
        return len(self.texts)


class _Rows(_ByName):
    """name -> raw row, over the rows kept as one text each (the fields joined by tabs, which
    no TSV cell holds): marshal loads 9,500 strings in half the time of 9,500 tuples of 17
    fields, and a port reads a few hundred rows. What every process asks of all the rows is
    worked out when the tables are parsed and kept beside them: the lexer's name heads, the
    names that have a risk, the newest HIP version."""

    __slots__ = ("heads", "risks", "newest")

    def __init__(self, texts: dict[str, str], heads: tuple[bytes, ...], risks: dict[str, str],
                 newest: tuple[int, int]):
        super().__init__(texts)
        self.heads = heads  # name_heads(the names)
        self.risks = risks  # name -> its row's risk, for the rows that have one
        self.newest = newest  # the newest HIP version a row was added in

    @classmethod
    def of(cls, rows: dict[str, tuple]) -> _Rows:
        """The parsed rows (name -> tuple of the fields), kept as texts."""
        return cls({name: "\t".join(t) for name, t in rows.items()}, name_heads(rows),
                   {name: t[_RISK] for name, t in rows.items() if t[_RISK]}, _newest_of(rows.values()))

    def __getitem__(self, name: str) -> tuple:
        return tuple(self.texts[name].split("\t"))


class _Entries(_ByName):
    """Read-only name -> Entry view over the raw rows; an Entry is built on first use."""

    __slots__ = ("_raw", "_made")

    def __init__(self, raw: _Rows):
        super().__init__(raw.texts)  # asked directly: every identifier of every file is looked up
        self._raw = raw
        self._made: dict[str, Entry] = {}

    @property
    def heads(self) -> tuple[bytes, ...]:
        """The lexer's prefixes (loaders.candidate_prefixes), kept with the rows."""
        return self._raw.heads

    @property
    def risks(self) -> dict[str, str]:
        """Name -> risk column, where it is filled (rules/api_tables), kept with the rows."""
        return self._raw.risks

    def __getitem__(self, name: str) -> Entry:
        e = self._made.get(name)
        if e is None:
            e = self._made[name] = _make_entry(self._raw[name])
        return e

    def get(self, name: str, default: Any = None) -> Any:
        e = self._made.get(name)
        if e is None:
            if name not in self.texts:
                return default
            e = self._made[name] = _make_entry(self._raw[name])
        return e

    def __repr__(self) -> str:
        return f"<{len(self.texts)} mapping entries>"


# ---------------------------------------------------------------------------------------------
# reading


_VERSION_FIELDS = (
    "cuda_added", "cuda_deprecated", "cuda_changed", "cuda_removed", "hip_added",
    "hip_deprecated", "hip_changed", "hip_removed", "roc_added",
)
_ONE = r"[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*"
_IDENTS = regexes.compile(rf"(?:{_ONE}\n)*{_ONE}")
_IDENTS_OR_EMPTY = regexes.compile(rf"(?:(?:{_ONE})?\n)*(?:{_ONE})?")


def _check_column(path: Any, what: str, column: tuple[str, ...], linenos: list[int],
                  empty_ok: bool) -> None:
    pattern = _IDENTS_OR_EMPTY if empty_ok else _IDENTS
    if pattern.fullmatch("\n".join(column)):
        return
    for value, lineno in zip(column, linenos):
        if not (_IDENT.match(value) or (empty_ok and not value)):
            raise MappingError(f"{path.name}:{lineno}: {what} {value!r} is not an identifier")


def _read_names(path: Any, library: str) -> dict[str, tuple]:
    """One name table as {cuda: raw row}, validated."""
    header, rows, linenos = read_tsv(path, NAME_REQUIRED)
    if not rows:
        return {}
    col = {c: i for i, c in enumerate(header)}
    lib_i, blank_i = len(header), len(header) + 1
    for cells in rows:
        cells.append(library)
        cells.append("")
    idx = [lib_i if f == "library" else col.get(f, blank_i) for f in _F]
    columns = list(zip(*rows))
    cuda = columns[col["cuda"]]
    _check_column(path, "CUDA name", cuda, linenos, empty_ok=False)
    _check_column(path, "HIP name", columns[col["hip"]], linenos, empty_ok=True)
    if "roc" in col:
        _check_column(path, "roc name", columns[col["roc"]], linenos, empty_ok=True)
    if len(set(cuda)) != len(cuda):
        seen: set[str] = set()
        for name, lineno in zip(cuda, linenos):
            if name in seen:
                raise MappingError(f"{path.name}:{lineno}: {name} is listed twice")
            seen.add(name)
    for f in _VERSION_FIELDS:
        if f in col:
            for v in set(columns[col[f]]) - {""}:
                if parse_version(v) is None:
                    lineno = linenos[columns[col[f]].index(v)]
                    raise MappingError(f"{path.name}:{lineno}: {f} {v!r} is not a version")
    if "experimental" in col:
        bad = set(columns[col["experimental"]]) - {"", "1"}
        if bad:
            v = sorted(bad)[0]
            lineno = linenos[columns[col["experimental"]].index(v)]
            raise MappingError(f"{path.name}:{lineno}: experimental must be 1 or empty, not {v!r}")
    getter = operator.itemgetter(*idx)
    return dict(zip(cuda, map(getter, rows)))


def _stems(directory: Any) -> list[str]:
    try:
        names = [p.name for p in directory.iterdir()]
    except OSError as exc:
        raise MappingError(f"cannot list the mapping tables in {directory}: {exc}") from exc
    return sorted(n[:-4] for n in names if n.endswith(".tsv"))


@functools.lru_cache(maxsize=4)
def _load_raw(directory: Any = None) -> tuple[_Rows, _Entries, tuple[str, ...], tuple, tuple]:
    """All name rows merged by the precedence rule, their Entry view, the conflicts, the
    include rows, and what load()'s defaults resolve them to (_resolved): read from the
    compiled copy when one matches the tables' bytes."""
    d = table_dir() if directory is None else directory
    digest = tables_digest(d)
    compiled = _compiled_places(d)
    raw = _read_compiled(compiled, digest)
    if raw is None:
        parsed, conflicts, includes = _parse_tables(d)
        rows = _Rows.of(parsed)
        raw = rows, conflicts, includes, _resolved(rows, includes, rows.newest, *_DEFAULTS)
        _write_compiled(compiled, digest, raw)
    rows, conflicts, includes, resolved = raw
    return rows, _Entries(rows), conflicts, includes, resolved


HEAD_WIDTH = 8  # bytes of a name's last word that the lexer's prefix trie holds


def name_heads(names: Iterable[str]) -> tuple[bytes, ...]:
    """The first HEAD_WIDTH bytes of every table name's last word (`thrust::cuda` is found by
    `cuda`), sorted: the lexer surfaces only words that start so. Worked out when the tables
    are parsed and kept in their compiled copy (4 ms a process otherwise)."""
    return tuple(sorted({n[n.rfind(":") + 1:][:HEAD_WIDTH].encode("ascii") for n in names}))


# The parsed tables are kept compiled as Python keeps bytecode (in a __pycache__, per Python
# version; in hipport's cache folder where that takes no file: hipport.locations):
# marshal loads them in half the time parsing and validating the TSVs takes, and every run that
# ports or checks a file loads them once.
# The copy is used only when the digest it was written with is that of the tables' names,
# sizes and modification times and of this module's (checked as Python checks bytecode
# against its source: reading and hashing the megabyte of tables cost every process 4 ms).
# After the digest comes a small summary (the newest HIP version), which a process that does
# not port reads without loading the rows: the digest, the summary's length (4 bytes), the
# summary, the rest.
_COMPILED_FORMAT = b"7"
_LENGTH = 4


def tables_digest(directory: Any = None) -> bytes:
    """A digest of every table's name, size and modification time (and of the code that
    reads them)."""
    st = os.stat(__file__)
    h = blake2b(_COMPILED_FORMAT + f"{st.st_size}:{st.st_mtime_ns}".encode(), digest_size=20)
    h.update(tables_stamp(directory))
    return h.digest()


def _compiled_places(directory: Any) -> Places:
    if not isinstance(directory, Path):
        return Places((), ())  # a table folder inside a zip
    return copy_places(str(directory), "tables")


def _read_compiled(places: Places, digest: bytes, summary_only: bool = False) -> Any:
    """The compiled copy's rows, conflicts, include rows and resolved defaults (or only its
    summary), or None when none is there, fresh and whole."""
    return read_copy(places, lambda place: _read_compiled_file(place, digest, summary_only))


def _read_compiled_file(path: str, digest: bytes, summary_only: bool) -> Any:
    try:
        with open(path, "rb") as f:
            head = f.read(len(digest) + _LENGTH)
            if head[:len(digest)] != digest:
                return None
            summary = marshal.loads(f.read(int.from_bytes(head[len(digest):], "little")))
            if not (isinstance(summary, dict) and "newest" in summary):
                return None
            if summary_only:
                return summary
            # marshal.loads(f.read()), not marshal.load(f), which reads in small steps
            texts, heads, risks, conflicts, includes, resolved = marshal.loads(f.read())
    except (OSError, TypeError, ValueError, EOFError):
        return None  # absent, unreadable or damaged: parse the tables
    return _Rows(texts, heads, risks, tuple(summary["newest"])), conflicts, includes, resolved


def _write_compiled(places: Places, digest: bytes, raw: tuple) -> None:
    rows, conflicts, includes, resolved = raw
    head = marshal.dumps({"newest": rows.newest})
    body = (rows.texts, rows.heads, rows.risks, conflicts, includes, resolved)
    write_copy(places, digest + len(head).to_bytes(_LENGTH, "little") + head + marshal.dumps(_shared(body)))


def _shared(value: Any, pool: dict | None = None) -> Any:
    """The rows with each distinct string made one object: marshal then writes a repeated
    string (a library, a risk, a resolved name) once and refers to it after."""
    pool = {} if pool is None else pool
    if isinstance(value, str):
        return pool.setdefault(value, value)
    if isinstance(value, tuple):
        return tuple(_shared(v, pool) for v in value)
    if isinstance(value, list):
        return [_shared(v, pool) for v in value]
    if isinstance(value, dict):
        return {_shared(k, pool): _shared(v, pool) for k, v in value.items()}
    return value


def _parse_tables(d: Any) -> tuple[dict[str, tuple], tuple[str, ...], tuple]:
    stems = _stems(d)
    missing = [s for s in GENERATED if s not in stems]
    if missing:
        raise MappingError(f"{d}: missing table(s) {', '.join(s + '.tsv' for s in missing)}")
    order = list(GENERATED) + [
        s for s in stems if s not in GENERATED and s not in (INCLUDES, OVERRIDES)
    ]
    entries: dict[str, tuple] = {}
    conflicts: list[str] = []
    for stem in order:
        table = _read_names(d.joinpath(stem + ".tsv"), stem)
        clash = entries.keys() & table.keys()
        if not clash:
            entries.update(table)
            continue
        for name, t in table.items():
            old = entries.get(name)
            if old is None:
                entries[name] = t
                continue
            old_ok, new_ok = _raw_supported(old), _raw_supported(t)
            if not old_ok and new_ok:
                entries[name] = t
                conflicts.append(f"{name}: {stem} maps it, {old[_LIB]} does not: {stem} wins")
            elif old_ok and new_ok and (old[_HIP], old[_ROC]) != (t[_HIP], t[_ROC]):
                conflicts.append(f"{name}: {old[_LIB]} ({old[_HIP] or old[_ROC]}) kept over "
                                 f"{stem} ({t[_HIP] or t[_ROC]})")
    if OVERRIDES in stems:
        for name, t in _read_names(d.joinpath(OVERRIDES + ".tsv"), OVERRIDES).items():
            old = entries.get(name)
            if old is not None:  # keep the library the row belongs to, for counts and cuDNN
                t = t[:_LIB] + (old[_LIB],) + t[_LIB + 1:]
            entries[name] = t
    includes = _read_includes(d) if INCLUDES in stems else ()
    return entries, tuple(sorted(conflicts)), includes


def _read_includes(d: Any) -> tuple[tuple[str, str, str, str, str], ...]:
    path = d.joinpath(INCLUDES + ".tsv")
    header, rows, linenos = read_tsv(path, INCLUDE_REQUIRED)
    col = {c: i for i, c in enumerate(header)}
    out = []
    seen: set[str] = set()
    for cells, lineno in zip(rows, linenos):
        get = lambda f: cells[col[f]] if f in col else ""  # noqa: E731
        cuda, hip, roc, lib, added = get("cuda"), get("hip"), get("roc"), get("library"), get("hip_added")
        for what, p in (("CUDA", cuda), ("HIP", hip), ("roc", roc)):
            if (p or what == "CUDA") and not _HEADER_PATH.match(p):
                raise MappingError(f"{path.name}:{lineno}: {what} header {p!r} is not a plain path")
        if cuda in seen:
            raise MappingError(f"{path.name}:{lineno}: {cuda} is listed twice")
        seen.add(cuda)
        if added and parse_version(added) is None:
            raise MappingError(f"{path.name}:{lineno}: hip_added {added!r} is not a version")
        out.append((cuda, hip, roc, lib or "include", added))
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# public API


def newest_hip_version() -> tuple[int, int]:
    """The newest HIP version any table row was added in (the default target). A process that
    has not loaded the rows reads it from the compiled copy's summary: `port -j N` leaves the
    loading to its workers."""
    if _load_raw.cache_info().currsize == 0:
        d = table_dir()
        summary = _read_compiled(_compiled_places(d), tables_digest(d), summary_only=True)
        if summary is not None:
            return tuple(summary["newest"])  # type: ignore[return-value]
    return _load_raw()[0].newest


def target_version(target_hip: Any = None) -> tuple[int, int]:
    """The HIP release the tables resolve to for a --target-hip (None: the newest they know)."""
    return newest_hip_version() if target_hip is None else _major_minor_of(target_hip)


def _newest_of(rows: Iterable[tuple]) -> tuple[int, int]:
    best = (0, 0)
    for added in {t[_HADD] for t in rows}:
        v = _major_minor(added) if added else None
        if v is not None and v > best:
            best = v
    return best


def _target(target_hip: Any, raw: tuple) -> tuple[int, int]:
    return raw[0].newest if target_hip is None else _major_minor_of(target_hip)


def _major_minor_of(target_hip: Any) -> tuple[int, int]:
    try:
        t = tuple(int(x) for x in target_hip)
    except (TypeError, ValueError) as exc:
        raise MappingError(f"target HIP version {target_hip!r} is not major.minor") from exc
    if len(t) < 2:
        t = t + (0,) * (2 - len(t))
    return (t[0], t[1])


# load()'s defaults: the newest target, hipBLAS-style libraries, no experimental APIs. What
# they resolve to is kept in the compiled copy (5 ms a process to work out from the rows).
_DEFAULT_LIBS, _DEFAULT_EXPERIMENTAL = "hip", False
_DEFAULTS = (_DEFAULT_LIBS, _DEFAULT_EXPERIMENTAL)


@functools.lru_cache(maxsize=16)
def load(target_hip: tuple[int, int] | None = None, libs: str = _DEFAULT_LIBS,
         experimental: bool = _DEFAULT_EXPERIMENTAL) -> Mappings:
    """The tables filtered for a target HIP version (default: the newest the tables know),
    `libs="hip"` (hipBLAS, ...) or `"roc"` (rocBLAS, ... where a roc name exists) and whether
    APIs HIP marks experimental are used."""
    return _build(_load_raw(), target_hip, libs, experimental)


def _resolved(entries: dict[str, tuple], include_rows: tuple, target: tuple[int, int], libs: str,
              experimental: bool) -> tuple[dict[str, str], dict[str, str], dict[str, str], dict[str, str]]:
    """The renames, transforms, includes and include libraries at these settings."""
    names: dict[str, str] = {}
    transforms: dict[str, str] = {}
    for cuda, t in entries.items():
        new = _resolve_raw(t, target, libs, experimental)[0]
        if new and new != cuda:
            names[cuda] = new
        if t[_XFORM]:
            transforms[cuda] = t[_XFORM]
    includes: dict[str, str] = {}
    include_library: dict[str, str] = {}
    for cuda, hip, roc, lib, added in include_rows:
        include_library[cuda] = lib
        new = roc if (libs == "roc" and lib in ROC_LIBS and roc) else hip
        if not new:
            continue
        v = _major_minor(added) if added else None
        if v is not None and v > target:
            continue
        includes[cuda] = new
    return names, transforms, includes, include_library


def _build(raw: tuple, target_hip: tuple[int, int] | None, libs: str,
           experimental: bool) -> Mappings:
    if libs not in LIBS:
        raise MappingError(f"libs must be one of {', '.join(LIBS)}, not {libs!r}")
    entries, view, conflicts, include_rows, resolved = raw
    target = _target(target_hip, raw)
    if target_hip is not None or (libs, experimental) != _DEFAULTS:
        resolved = _resolved(entries, include_rows, target, libs, experimental)
    names, transforms, includes, include_library = resolved
    return Mappings(
        entries=view,
        names=MappingProxyType(names),
        includes=MappingProxyType(includes),
        include_library=MappingProxyType(include_library),
        target_hip=target,
        libs=libs,
        experimental=experimental,
        conflicts=conflicts,
        transforms=MappingProxyType(transforms),
    )


def library_counts(m: Mappings) -> dict[str, dict[str, int]]:
    """Per library (table stem): how many rows are usable at m's settings and how many not."""
    out: dict[str, dict[str, int]] = {}
    if isinstance(m.entries, _Entries):
        rows = [(t[_LIB], _resolve_raw(t, m.target_hip, m.libs, m.experimental)[1])
                for t in m.entries._raw.values()]
    else:
        rows = [(e.library, _resolve(e, m.target_hip, m.libs, m.experimental)[1])
                for e in m.entries.values()]
    for library, reason in rows:
        c = out.setdefault(library, {"supported": 0, "unsupported": 0})
        c["unsupported" if reason else "supported"] += 1
    return out
