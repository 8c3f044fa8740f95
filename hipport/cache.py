"""Content-hash cache: a file whose bytes, name and settings were seen before is not parsed
again. Entries are keyed by everything that can change a result (the file's bytes and path,
the settings, hipport's own code and the mapping tables), so an upgrade invalidates them.

Where: $HIPPORT_CACHE_DIR, else $XDG_CACHE_HOME/hipport, else ~/.cache/hipport; one SQLite
file there, kept under MAX_BYTES of entries. `--no-cache` (or HIPPORT_CACHE_DIR=off) turns it
off. A broken entry or cache file is a miss, never an error: every value carries a CRC-32 of its
bytes.
"""

from __future__ import annotations

import marshal
import os
import sys
import time
import zlib
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from hipport import TYPE_CHECKING, __version__
from hipport.hashing import blake2b
from hipport.table_files import tables_stamp

try:  # the C module that the sqlite3 package wraps: the package's own module imports datetime for
    import _sqlite3 as sqlite3  # adapters the cache never uses, 2 ms of every run's start
except ImportError:  # pragma: no cover - a Python whose sqlite3 lacks it
    import sqlite3

if TYPE_CHECKING:
    from typing import Any

_PACKAGE = os.path.dirname(os.path.abspath(__file__))
_SOURCES = (".py", ".scm", ".j2", ".json", ".c", ".so", ".pyd")  # .c/.so/.pyd: the C scanner
_FORMAT = b"7"  # bump when the stored values change shape


@lru_cache(maxsize=1)
def code_fingerprint() -> bytes:
    """hipport's version, the Python that writes the values (marshal's format is its own), its
    source files and the mapping tables (size and mtime)."""
    h = blake2b(__version__.encode() + _FORMAT + f"{sys.version}:{marshal.version}".encode())
    start = len(_PACKAGE) + 1  # a path's part inside the package

    def walk(folder: str) -> None:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
        for e in entries:
            if e.is_dir(follow_symlinks=False):
                if e.name != "__pycache__":  # derived from the sources (and large): not listed
                    walk(e.path)
            elif e.name.endswith(_SOURCES):
                st = e.stat()
                h.update(f"{e.path[start:]}:{st.st_size}:{st.st_mtime_ns}".encode())

    walk(_PACKAGE)
    h.update(tables_stamp())
    return h.digest()


# A file whose modification and change times are older than this is known by its stat (see
# Cache.stat_key); a younger one is read: an edit within the same timestamp tick keeps the times.
_SETTLED_NS = 2_000_000_000


def settled_before() -> int:
    """Files whose times are all before this are settled: their stat may stand for their bytes."""
    return time.time_ns() - _SETTLED_NS


def settled(st: os.stat_result, before: int) -> bool:
    return max(st.st_mtime_ns, st.st_ctime_ns) < before


def stat_values(st: os.stat_result) -> tuple[int, int, int, int, int, int]:
    """What a file's stat says of its bytes: device, inode, size, permission bits,
    modification and change times (the change time moves with every write and chmod, and no
    tool sets it back)."""
    return st.st_dev, st.st_ino, st.st_size, st.st_mode, st.st_mtime_ns, st.st_ctime_ns


_DB_NAME = "cache.sqlite3"
# An edited file leaves its old entries behind (its new bytes and stat make new keys), so a
# cache used on every commit would grow for ever. Past MAX_BYTES of entries, a process that
# opens the store drops the oldest ones (by when they were written) until they take under
# KEEP of it; SQLite reuses their pages, so the file stays near the bound. An entry dropped and
# needed again is a miss: the file is ported again and its entry written anew.
MAX_BYTES = 1 << 30
KEEP = 0.75
# A rowid table: its key index is small and dense, so looking up a warm run's keys costs half
# what it does in a WITHOUT ROWID table, whose leaves hold the values (kilobytes each).
_ENTRIES = "CREATE TABLE entries (key BLOB PRIMARY KEY, value BLOB)"


def _stored_code(db: sqlite3.Connection) -> bytes | None:
    row = db.execute("SELECT value FROM meta WHERE name = 'code'").fetchone()
    return None if row is None else row[0]


@lru_cache(maxsize=8)
def open_cache(root: Path | None, namespace: str, context: Any) -> "Cache":
    """One Cache per process and run: the salt is hashed once."""
    return Cache(root, namespace, context)


_stores: dict[tuple[Path, int], "_Store | None"] = {}


def _open_store(root: Path) -> "_Store | None":
    """One connection per process (a forked worker must not reuse its parent's) and cache
    folder; None when the folder is unusable."""
    key = (root, os.getpid())
    if key not in _stores:
        try:
            _stores[key] = _Store(root)
        except (OSError, sqlite3.Error):
            _stores[key] = None
    return _stores[key]


def close_stores() -> None:
    """Close this process's connections; the next use opens them again. Called before a fork:
    an SQLite connection must not cross one, even unused."""
    for (_, pid), store in _stores.items():
        if store is not None and pid == os.getpid():
            store.db.close()
    _stores.clear()


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
            self.db, self.fresh = self._connect(path)
        except sqlite3.DatabaseError:  # not a database (truncated, overwritten): start again
            path.unlink(missing_ok=True)
            self.db, self.fresh = self._connect(path)
        if not self.fresh and self._used() > MAX_BYTES:
            try:
                self._prune()
            except sqlite3.Error:  # read-only, or locked for long: the run goes on unpruned
                pass

    @staticmethod
    def _connect(path: Path) -> tuple[sqlite3.Connection, bool]:
        """The connection, and whether it made the entries table (a new file, or one of
        another build): then this process knows there is no entry yet, until it stores one."""
        db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        # A lost entry is a miss, so durability is not worth an fsync per insert.
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=OFF")
        db.execute("PRAGMA mmap_size=268435456")  # reads through the page cache: half the time
        db.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value BLOB)")
        made = False
        if _stored_code(db) != code_fingerprint():
            with _writing(db):
                if _stored_code(db) != code_fingerprint():  # not done by another process meanwhile
                    db.execute("DROP TABLE IF EXISTS entries")  # the schema may be an older one too
                    db.execute(_ENTRIES)
                    db.execute("INSERT OR REPLACE INTO meta VALUES ('code', ?)", (code_fingerprint(),))
                    made = True
        return db, made

    def _used(self) -> int:
        """Bytes in the pages that hold something (free pages are reused before the file grows)."""
        pages, free, size = (self.db.execute(f"PRAGMA {p}").fetchone()[0]
                             for p in ("page_count", "freelist_count", "page_size"))
        return (pages - free) * size

    def _prune(self) -> None:
        """Drop the oldest entries until they take under KEEP of MAX_BYTES: a quarter of them at
        a time, oldest first (a rowid grows with each write, a rewrite included)."""
        with _writing(self.db):  # one process prunes; another waits, then finds less
            while self._used() > MAX_BYTES * KEEP:
                count = self.db.execute("SELECT count(*) FROM entries").fetchone()[0]
                if not count:
                    break
                self.db.execute("DELETE FROM entries WHERE rowid <= (SELECT rowid FROM entries "
                                "ORDER BY rowid LIMIT 1 OFFSET ?)", (max(1, count // 4) - 1,))

    def get_many(self, keys: list[bytes]) -> dict[bytes, bytes]:
        found: dict[bytes, bytes] = {}
        for i in range(0, len(keys), _PER_QUERY):
            part = keys[i:i + _PER_QUERY]
            found.update(self.db.execute(
                f"SELECT key, value FROM entries WHERE key IN ({','.join('?' * len(part))})", part))
        return found

    def put_many(self, items: list[tuple[bytes, bytes]], files: bool = True) -> None:
        """One transaction: a commit per row would cost a WAL frame and a lock each. `files`:
        whether the rows may be files' entries (a memo's value is none: no file's lookup can
        find it, so the store stays known empty of them)."""
        if files:
            self.fresh = False
        with _writing(self.db):
            self.db.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?)", items)


_PER_QUERY = 500  # under SQLite's oldest limit on parameters (999)


@contextmanager
def _writing(db: sqlite3.Connection):
    """One write transaction, its lock taken at the start (BEGIN IMMEDIATE: a reader that
    turns writer midway could deadlock with another), committed at the end, rolled back if the
    block raises."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
        db.execute("COMMIT")
    finally:
        if db.in_transaction:
            db.execute("ROLLBACK")


def _seal(payload: bytes) -> bytes:
    return zlib.crc32(payload).to_bytes(4, "little") + payload


def _unseal(value: bytes) -> memoryview | None:
    """The payload when its CRC matches, else None (a torn or overwritten value)."""
    payload = memoryview(value)[4:]
    return payload if zlib.crc32(payload) == int.from_bytes(value[:4], "little") else None


class Cache:
    """One command's view of the cache: `namespace` separates port results from check results;
    `context` is hashed into every key (settings, the set of renamed files, ...)."""

    def __init__(self, root: Path | None, namespace: str, context: Any):
        self.root = root
        salt = blake2b(code_fingerprint() + namespace.encode() + repr(context).encode()).digest()
        self._salted = blake2b(salt, digest_size=32)

    def _store(self) -> "_Store | None":
        return _open_store(self.root) if self.root is not None else None

    @property
    def on(self) -> bool:
        """Whether entries are kept (no --no-cache, and the folder is usable): without, a
        caller skips making keys and values nobody will read."""
        return self._store() is not None

    @property
    def known_empty(self) -> bool:
        """Whether this process made the cache file's entries table and has stored no file's
        entry since (a first run, or the first after an upgrade): a lookup can find nothing, so a
        run need not read and hash files to look them up. Other processes (`-j` workers) may
        have stored entries meanwhile, but only of files this run hands them."""
        store = self._store()
        return store is not None and store.fresh

    def key(self, data: bytes, rel: str) -> bytes:
        h = self._salted.copy()  # the salt hashed once; the file's bytes hashed where they lie
        h.update(rel.encode("utf-8", "surrogateescape") + b"\0")
        h.update(data)
        return h.digest()

    def stat_key(self, st: os.stat_result, name: str) -> bytes:
        """The key of a file as its stat shows it (stat_values), under which a run keeps what
        it learned from the file's bytes: a later run that finds the same stat neither reads
        nor hashes the file (as git's index and ruff's cache do). `name` says which file and
        what for."""
        text = ":".join(map(str, stat_values(st))).encode()
        return self.key(text, name + "\0stat")  # no path holds a NUL

    def get_many(self, keys: list[bytes], loads: Callable[[Any], Any] = marshal.loads) -> dict[bytes, Any]:
        """The entries found for `keys`, each value `loads(payload)`, with one query per few
        hundred keys; an entry that does not load is left out (a miss)."""
        store = self._store()
        if store is None or not keys:
            return {}
        try:
            rows = store.get_many(keys)
        except sqlite3.Error:
            return {}
        found = {}
        for key, value in rows.items():
            try:
                payload = _unseal(value)
                if payload is not None:
                    found[key] = loads(payload)
            except Exception:  # unreadable, or written by an incompatible build: a miss
                pass
        return found

    def put_many(self, items: Iterable[tuple[bytes, Any]], dumps: Callable[[Any], bytes] = marshal.dumps,
                 files: bool = True) -> None:
        """Store the items, each value `dumps(value)`; `files`: see _Store.put_many."""
        store = self._store()
        if store is None:
            return
        try:
            rows = [(key, _seal(dumps(value))) for key, value in items]
            if rows:
                store.put_many(rows, files)
        except (sqlite3.Error, ValueError):  # marshal: ValueError for what it cannot write
            pass  # a read-only, full or locked cache costs speed, never the run

    def get(self, key: bytes) -> Any | None:
        return self.get_many([key]).get(key)

    def put(self, key: bytes, value: Any) -> None:
        self.put_many([(key, value)])

    def memo(self, name: str, compute: Callable[[], Any]) -> Any:
        """compute() (never None), kept under `name`: for values that follow from the settings,
        hipport's code and the tables alone, which every key includes."""
        key = self.key(b"", "\0" + name)  # no file's path holds a NUL
        value = self.get(key)
        if value is None:
            value = compute()
            self.put_many([(key, value)], files=False)
        return value


class Lookups:
    """Whether looking a run's files up still pays. A tree the cache knows nothing of (never
    seen with these settings) gets no hit from its first files: then the rest are no longer
    statted to look up their stamps, nor read and hashed by the run to look up their entries;
    whoever analyzes them reads them (a `-j` worker, at the same time) and the run still
    stores what the next one looks up."""

    def __init__(self, give_up_after: int, known_empty: bool = False) -> None:
        """`give_up_after`: files looked up without a hit before giving up; `known_empty`: the
        cache holds no entry (Cache.known_empty), so the run gives up from the start."""
        self.give_up_after = give_up_after
        looked_up = give_up_after if known_empty else 0
        self.stamps = [looked_up, 0]  # stamps looked up, found
        self.entries = [looked_up, 0]  # entries looked up, found

    def _worth(self, counts: list[int]) -> bool:
        return counts[1] > 0 or counts[0] < self.give_up_after

    def stamps_worth(self) -> bool:
        return self._worth(self.stamps)

    def entries_worth(self) -> bool:
        return self._worth(self.stamps) or self._worth(self.entries)
