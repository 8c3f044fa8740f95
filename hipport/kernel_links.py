"""The project's kernels, each with the places that launch it, joined from every file's scan.

Kept apart from the scanning (hipport.kernels), which builds its patterns as it loads: the
summary a warm `port` prints counts kernels from the records alone and needs neither. A scan's
kernels and launches may be these named tuples or the plain tuples a record carries; both are
read by position.
"""

from __future__ import annotations

from collections.abc import Iterable

from hipport.tuples import NamedTuple


class Kernel(NamedTuple):
    name: str
    line: int
    defined: bool  # a definition (with a body), not a declaration


class Launch(NamedTuple):
    name: str
    line: int
    syntax: str  # "<<<>>>" | "hipLaunchKernelGGL" | "launch-api"


class Scan(NamedTuple):
    kernels: tuple[Kernel, ...] = ()
    launches: tuple[Launch, ...] = ()


def _listed(scans: list[tuple[str, Scan]]) -> dict[tuple[str, str], tuple]:
    """The kernels link() lists: (path, name) -> the first kernel there. A kernel is listed once
    per file that defines it (a declaration counts where no file defines it)."""
    defined_somewhere = {name for _, s in scans for name, _, defined in s.kernels if defined}
    listed: dict[tuple[str, str], tuple] = {}
    for path, s in scans:
        for k in s.kernels:
            if k[2] or k[0] not in defined_somewhere:
                listed.setdefault((path, k[0]), k)
    return listed


def link(scans: Iterable[tuple[str, Scan]]) -> list[dict]:
    """The project's kernels, each with its launch sites. A launch goes to the kernel of that
    name in the same file, else to the first file that defines it (see _listed)."""
    scans = sorted(scans, key=lambda s: s[0])
    kernels = {key: {"name": name, "path": key[0], "line": line, "launches": []}
               for key, (name, line, _) in _listed(scans).items()}
    by_name: dict[str, list[dict]] = {}
    for entry in kernels.values():
        by_name.setdefault(entry["name"], []).append(entry)
    for path, s in scans:
        for name, line, syntax in s.launches:
            candidates = by_name.get(name)
            if not candidates:
                continue
            target = kernels.get((path, name)) or candidates[0]
            target["launches"].append({"path": path, "line": line, "syntax": syntax})
    return sorted(kernels.values(), key=lambda k: (k["path"], k["line"], k["name"]))


def counts(scans: Iterable[tuple[str, Scan]]) -> tuple[int, int]:
    """len(link(scans)) and the number of launches it places, without building the list."""
    scans = list(scans)
    listed = _listed(scans)  # (which kernels, not which of their records: any order will do)
    names = {name for _, name in listed}
    return len(listed), sum(1 for _, s in scans for launch in s.launches if launch[0] in names)
