"""Content-hash cache: a file whose bytes, name and settings were seen before is not parsed
again. Entries are keyed by everything that can change a result (the file's bytes and path,
the settings, hipport's own code and the mapping tables), so an upgrade invalidates them.

Where: $HIPPORT_CACHE_DIR, else $XDG_CACHE_HOME/hipport, else ~/.cache/hipport.
`--no-cache` (or HIPPORT_CACHE_DIR=off) turns it off. A broken entry is a miss, never an error.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
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


@lru_cache(maxsize=8)
def open_cache(root: Path | None, namespace: str, context: Any) -> "Cache":
    """One Cache per process and run: the salt is hashed once."""
    return Cache(root, namespace, context)


class Cache:
    """One command's view of the cache: `namespace` separates port results from check results;
    `context` is hashed into every key (settings, the set of renamed files, ...)."""

    def __init__(self, root: Path | None, namespace: str, context: Any):
        self.root = root
        self._salt = hashlib.sha256(code_fingerprint() + namespace.encode() + repr(context).encode()).digest()

    def key(self, data: bytes, rel: str) -> str:
        return hashlib.sha256(self._salt + rel.encode("utf-8", "surrogateescape") + b"\0" + data).hexdigest()

    def get(self, key: str) -> Any | None:
        if self.root is None:
            return None
        try:
            with open(self.root / key[:2] / key, "rb") as f:
                return pickle.load(f)
        except Exception:  # missing, truncated or from an incompatible build: a miss
            return None

    def put(self, key: str, value: Any) -> None:
        if self.root is None:
            return
        folder = self.root / key[:2]
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
            with os.fdopen(fd, "wb") as f:
                pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, folder / key)
        except OSError:
            pass  # a read-only or full cache folder costs speed, never the run
