"""Content-hash cache: a file whose bytes, name and settings were seen before is not parsed
again. Entries are keyed by everything that can change a result (the file's bytes and path,
the settings, hipport's own code and the mapping tables), so an upgrade invalidates them.

Where: $HIPPORT_CACHE_DIR, else $XDG_CACHE_HOME/hipport, else ~/.cache/hipport; one SQLite
file there. `--no-cache` (or HIPPORT_CACHE_DIR=off) turns it off. A broken entry or cache file
is a miss, never an error.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sqlite3
from functools import lru_cache
from pathlib import Path
from typing import Any

from hipport import __version__
from hipport.mappings import table_dir

_PACKAGE = Path(__file__).resolve().parent
_FORMAT = b"1"  # bump when the pickled values change shape


def cache_dir() -> Path | None:
    env = os.environ.get("HIPPORT_CACHE_DIR")
    if env is not None:
        return None if env.lower() in ("", "0", "off", "no", "false") else Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hipport"


@lru_cache(maxsize=1)
def code_fingerprint() -> bytes:
    """hipport's version, its source files (size and mtime) and the mapping tables (content)."""
    h = hashlib.sha256(__version__.encode() + _FORMAT)
    for path in sorted(_PACKAGE.rglob("*")):
        if path.suffix in (".py", ".scm", ".j2", ".json") and path.is_file():
            st = path.stat()
            h.update(f"{path.relative_to(_PACKAGE)}:{st.st_size}:{st.st_mtime_ns}".encode())
    tables = table_dir()
    for entry in sorted(tables.iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".tsv") or entry.is_dir():
            h.update(entry.name.encode())
            if entry.is_file():
                h.update(entry.read_bytes())
            else:
                for sub in sorted(entry.iterdir(), key=lambda p: p.name):
                    if sub.name.endswith(".tsv"):
                        h.update(sub.name.encode() + sub.read_bytes())
    return h.digest()


_DB_NAME = "cache.sqlite3"


@lru_cache(maxsize=8)
def open_cache(root: Path | None, namespace: str, context: Any) -> "Cache":
    """One Cache per process and run: the salt is hashed once."""
    return Cache(root, namespace, context)


@lru_cache(maxsize=4)
def _open_store(root: Path, pid: int) -> "_Store | None":
    """One connection per process (a forked worker must not reuse its parent's) and cache
    folder; None when the folder is unusable."""
    try:
        return _Store(root)
    except (OSError, sqlite3.Error):
        return None


class _Store:
    """All entries of a cache folder in one SQLite file: one insert costs tens of microseconds
    where a file per entry costs a file creation (the larger part of a cold run's system time),
    and a warm run reads its entries without opening a file each. Several processes (`-j N`
    workers, parallel pre-commit hooks) share it through SQLite's locking. Entries of another
    hipport build or other tables can never be hit again, so they are dropped when one first
    opens the store: the file does not grow across upgrades."""

    def __init__(self, root: Path):
        root.mkdir(parents=True, exist_ok=True)
        path = root / _DB_NAME
        try:
            self.db = self._connect(path)
        except sqlite3.DatabaseError:  # not a database (truncated, overwritten): start again
            path.unlink(missing_ok=True)
            self.db = self._connect(path)

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        # A lost entry is a miss, so durability is not worth an fsync per insert.
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=OFF")
        db.execute("PRAGMA mmap_size=268435456")  # reads through the page cache: half the time
        db.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value BLOB)")
        db.execute("CREATE TABLE IF NOT EXISTS entries (key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID")
        row = db.execute("SELECT value FROM meta WHERE name = 'code'").fetchone()
        if row is None or row[0] != code_fingerprint():
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM entries")
            db.execute("INSERT OR REPLACE INTO meta VALUES ('code', ?)", (code_fingerprint(),))
            db.execute("COMMIT")
        return db

    def get(self, key: bytes) -> bytes | None:
        row = self.db.execute("SELECT value FROM entries WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def put(self, key: bytes, value: bytes) -> None:
        self.db.execute("INSERT OR REPLACE INTO entries VALUES (?, ?)", (key, value))


class Cache:
    """One command's view of the cache: `namespace` separates port results from check results;
    `context` is hashed into every key (settings, the set of renamed files, ...)."""

    def __init__(self, root: Path | None, namespace: str, context: Any):
        self.root = root
        self._salt = hashlib.sha256(code_fingerprint() + namespace.encode() + repr(context).encode()).digest()
        self._opened: tuple[int, _Store | None] | None = None  # (pid, store)

    def _store(self) -> "_Store | None":
        pid = os.getpid()
        if self._opened is None or self._opened[0] != pid:
            self._opened = (pid, _open_store(self.root, pid) if self.root is not None else None)
        return self._opened[1]

    def key(self, data: bytes, rel: str) -> bytes:
        return hashlib.sha256(self._salt + rel.encode("utf-8", "surrogateescape") + b"\0" + data).digest()

    def get(self, key: bytes) -> Any | None:
        store = self._store()
        if store is None:
            return None
        try:
            raw = store.get(key)
            return None if raw is None else pickle.loads(raw)
        except Exception:  # unreadable, or pickled by an incompatible build: a miss
            return None

    def put(self, key: bytes, value: Any) -> None:
        store = self._store()
        if store is None:
            return
        try:
            store.put(key, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        except (sqlite3.Error, pickle.PicklingError):
            pass  # a read-only, full or locked cache costs speed, never the run
