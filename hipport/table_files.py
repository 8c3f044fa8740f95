"""Where the mapping tables are and what they hold, without parsing them: their folder, their
files, their bytes and a stamp of them (the content cache's fingerprint, which a warm run
computes without importing hipport.mappings)."""

from __future__ import annotations

import functools
from pathlib import Path

from hipport import TYPE_CHECKING
from hipport.errors import MappingError
from hipport.hashing import blake2b

if TYPE_CHECKING:
    from typing import Any


def table_dir() -> Any:
    """The tables: the installed package's `hipport/tables`, else `<repo>/mappings`; from a
    zip, `hipport.tables` as importlib.resources finds it. (Paths first: importing
    importlib.resources costs 14 ms, which every run, a cached pre-commit check included,
    would pay.)"""
    here = Path(__file__).resolve().parent
    for d in (here / "tables", here.parent / "mappings"):
        if (d / "runtime.tsv").is_file():
            return d
    import importlib.resources  # noqa: PLC0415

    try:
        d = importlib.resources.files("hipport.tables")
        if d.joinpath("runtime.tsv").is_file():
            return d
    except (ModuleNotFoundError, TypeError):
        pass
    return here.parent / "mappings"


# Folders of data tables that are not name tables: build_files (build-file rewrites),
# structs (CUDA struct fields and their HIP counterparts). Read with data_table().
DATA_FOLDERS = ("build_files", "structs")


def table_paths(directory: Any) -> list[tuple[str, Any]]:
    """(name relative to the table folder, path) of every table, build-file tables included,
    in name order."""
    out = []
    try:
        for entry in sorted(directory.iterdir(), key=lambda p: p.name):
            if entry.name.endswith(".tsv") and entry.is_file():
                out.append((entry.name, entry))
            elif entry.is_dir() and entry.name in DATA_FOLDERS:
                out += [(f"{entry.name}/{sub.name}", sub)
                        for sub in sorted(entry.iterdir(), key=lambda p: p.name) if sub.name.endswith(".tsv")]
    except OSError as exc:
        raise MappingError(f"cannot read the mapping tables in {directory}: {exc}") from exc
    return out


def table_files(directory: Any) -> list[tuple[str, bytes]]:
    """(name relative to the table folder, bytes) of every table, in name order."""
    try:
        return [(name, path.read_bytes()) for name, path in table_paths(directory)]
    except OSError as exc:
        raise MappingError(f"cannot read the mapping tables in {directory}: {exc}") from exc


def tables_stamp(directory: Any = None) -> bytes:
    """Every table's name, size and modification time (no table is read, but one inside a
    zip, whose bytes stand in): what the content cache's fingerprint takes of the tables, as
    of hipport's own code, and what the compiled copy of the tables is checked against."""
    parts = []
    for name, path in table_paths(table_dir() if directory is None else directory):
        try:
            st = path.stat()
            parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
        except (OSError, AttributeError, NotImplementedError):  # a table inside a zip
            parts.append(f"{name}:{blake2b(path.read_bytes(), digest_size=16).hexdigest()}")
    return "\n".join(parts).encode()


def read_tsv(path: Any, required: tuple[str, ...] = (), name: str = "") -> tuple[list[str], list[list[str]], list[int]]:
    """Header, rows (padded to the header's width) and their line numbers of one table; `#`
    lines are comments. Every table, name table or data table, is read here. `name`: how
    errors call the file (its name by default)."""
    name = name or path.name
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MappingError(f"{name}: cannot read: {exc}") from exc
    header: list[str] | None = None
    rows: list[list[str]] = []
    linenos: list[int] = []
    width = 0
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line or line[0] == "#":
            continue
        if line[-1] == "\r":
            line = line[:-1]
        cells = line.split("\t")
        if header is None:
            header = cells
            width = len(header)
            missing = [c for c in required if c not in header]
            if missing:
                raise MappingError(f"{name}:{lineno}: header lacks column(s) {', '.join(missing)}")
            if len(set(header)) != width or "" in header:
                raise MappingError(f"{name}:{lineno}: empty or repeated column name in header")
            continue
        if len(cells) != width:
            if len(cells) > width:
                raise MappingError(f"{name}:{lineno}: {len(cells)} cells, header has {width}")
            cells += [""] * (width - len(cells))
        rows.append(cells)
        linenos.append(lineno)
    if header is None:
        raise MappingError(f"{name}: no header row")
    return header, rows, linenos


@functools.lru_cache(maxsize=None)
def data_table(folder: str, name: str) -> tuple[dict[str, str], ...]:
    """Rows of FOLDER/NAME.tsv (a DATA_FOLDERS table) as dicts keyed by the header."""
    header, rows, _ = read_tsv(table_dir().joinpath(folder).joinpath(name + ".tsv"), name=f"{folder}/{name}.tsv")
    return tuple(dict(zip(header, cells)) for cells in rows)
