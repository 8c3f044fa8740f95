"""One file's port result, as the pipeline makes it (FileResult) and as the cache, the run and
the report carry it (a record: a dict of plain values).

A warm run loads tens of thousands of results: a record of str, int, tuple and dict loads with
`marshal` several times faster than the same result as dataclasses, and its finding tuples and
kernel tuples become report entries only when a report is written. This module imports nothing
heavy, so a run served from the cache never loads the porting and analysis code.
"""

from __future__ import annotations

import marshal
from collections.abc import Mapping
from operator import itemgetter
from types import MappingProxyType

from hipport import TYPE_CHECKING
from hipport.findings import Finding, json_of
from hipport.tuples import NamedTuple

if TYPE_CHECKING:
    from hipport.config import Settings
    from hipport.kernel_links import Scan


class FileResult(NamedTuple):
    source: str
    output: str
    kind: str
    status: str  # ported | unchanged | skipped | failed
    reason: str = ""
    changed: bool = False
    replacements: int = 0
    by_library: Mapping[str, int] = MappingProxyType({})  # read-only: the default is shared
    unmapped: tuple[dict, ...] = ()
    notes: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()  # CUDA-looking macros the file defines: not unmapped elsewhere
    lines: int = 0
    lines_changed: int = 0
    encoding: str = "utf-8"
    findings: tuple[Finding, ...] = ()  # the risk analysis of the original text
    kernels: Scan | None = None  # kernels defined and launched (C/C++/CUDA); the report links them

    def record(self) -> dict:
        """This result as plain values: findings as Finding.to_tuple(), kernels as
        ((name, line, defined), ...), ((name, line, syntax), ...) or None."""
        k = self.kernels
        return {
            "source": self.source, "output": self.output, "kind": self.kind, "status": self.status,
            "reason": self.reason, "changed": self.changed, "replacements": self.replacements,
            "by_library": dict(self.by_library), "unmapped": tuple(dict(u) for u in self.unmapped),
            "notes": tuple(self.notes), "defines": tuple(self.defines), "lines": self.lines,
            "lines_changed": self.lines_changed, "encoding": self.encoding,
            "findings": tuple(f.to_tuple() for f in self.findings),
            "kernels": None if k is None else (tuple(map(tuple, k.kernels)), tuple(map(tuple, k.launches))),
        }

    def to_json(self) -> dict:
        return json_entry(self.record())


RECORD_KEYS = frozenset(FileResult("", "", "", "").record())
# A record's values in this order are what the cache stores: marshal loads a tuple and zips it
# into a dict in half the time it takes to load the dict itself.
_RECORD_ORDER = tuple(sorted(RECORD_KEYS))


# What a file's report entry is made of (json_entry), in this order: a report holds these
# values of each record until it is written, not the record (see report.model.Report).
_ENTRY_KEYS = ("source", "output", "kind", "status", "changed", "replacements", "by_library", "lines",
               "lines_changed", "encoding", "unmapped", "notes", "findings", "reason")
entry_values = itemgetter(*_ENTRY_KEYS)


def json_entry(record: dict) -> dict:
    """A file's entry in report.json (without its kernels, which the report links)."""
    return entry_of(entry_values(record))


def entry_of(values: tuple) -> dict:
    """json_entry() of the record whose entry_values() are `values`."""
    (source, output, kind, status, changed, replacements, by_library, lines, lines_changed, encoding,
     unmapped, notes, findings, reason) = values
    d = {
        "source": source, "output": output, "kind": kind, "status": status, "changed": changed,
        "replacements": replacements, "by_library": dict(sorted(by_library.items())), "lines": lines,
        "lines_changed": lines_changed, "encoding": encoding, "unmapped": list(unmapped), "notes": list(notes),
        "findings": [json_of(f) for f in findings],
    }
    if reason:
        d["reason"] = reason
    if source != output:
        d["renamed_from"] = source
    return d


class Ported(NamedTuple):
    data: bytes
    result: FileResult
    # What turns the input into `data` (edits.splice): () where nothing changed
    splices: tuple[tuple[int, int, bytes], ...] = ()


def pack(record: dict) -> tuple:
    """A record's values, as the cache stores them."""
    return tuple([record[k] for k in _RECORD_ORDER])


def unpack(values: object) -> dict:
    """pack() undone; ValueError for anything else."""
    if not (type(values) is tuple and len(values) == len(_RECORD_ORDER)):
        raise ValueError("not a port record")
    return dict(zip(_RECORD_ORDER, values))


def dumps(entry: tuple[tuple, dict]) -> bytes:
    """A cache entry: the splices that port the input (edits.splices; the input's bytes are
    the key's) and the record's values. marshal's format belongs to the Python version, which
    the cache's code fingerprint includes."""
    spliced, record = entry
    return marshal.dumps((spliced, pack(record)))


def loads(raw: bytes) -> tuple[tuple, dict]:
    """dumps() undone; ValueError (or marshal's own errors) for anything else."""
    entry = marshal.loads(raw)
    if not (type(entry) is tuple and len(entry) == 2 and type(entry[0]) is tuple):
        raise ValueError("not a port result")
    return entry[0], unpack(entry[1])


def output_name(rel: str, settings: Settings) -> str:
    if settings.rename and rel.endswith(".cu"):
        return rel[:-3] + ".hip"
    return rel
