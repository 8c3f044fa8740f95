"""Struct members HIP spells differently: `prop.requestedHandleTypes` becomes
`prop.requestedHandleType`, `prop.sparseCudaArraySupported` `prop.sparseHipArraySupported`.

The renamer leaves members alone (`obj.cudaMalloc` is not CUDA's); these few are CUDA's own
names, renamed after `.` or `->` where the target has HIP's member and the file declares no
member of that name itself. Data: the rows of mappings/structs/*.tsv whose `hip` differs.
"""

from __future__ import annotations

import functools
import re

from hipport.edits import Edit
from hipport.mappings import parse_version
from hipport.table_files import data_table

# The struct tables and the struct their rows are of (`members` names its own per row).
STRUCT_TABLES = (("device_props", "cudaDeviceProp"), ("members", ""))


@functools.lru_cache(maxsize=8)
def renames(target: tuple[int, int]) -> dict[bytes, tuple[bytes, str, str]]:
    """CUDA member -> (HIP member, library, CUDA struct), for the members the target spells
    differently. The library follows the struct's name: `CU…` driver, else runtime."""
    out = {}
    for table, struct in STRUCT_TABLES:
        for r in data_table("structs", table):
            hip, added = r["hip"], (parse_version(r["hip_added"]) or ())[:2]
            if hip and hip != r["field"] and not (added and added > target):
                of = struct or r["struct"]
                out[r["field"].encode("ascii")] = (hip.encode("ascii"), "driver" if of.startswith("CU") else "runtime", of)
    return out


@functools.lru_cache(maxsize=8)
def _structs(target: tuple[int, int]) -> frozenset[str]:
    return frozenset(struct for _, _, struct in renames(target).values())


def member_edits(ctx, words, own_fields) -> list[Edit]:
    """The renames of CUDA-spelled members in code, in files whose CUDA words (`words`, the
    analysis' own list) name the member's struct; `own_fields()`: the member names the file
    declares itself (asked only where a candidate is found)."""
    table = renames(ctx.mappings.target_hip)
    structs = _structs(ctx.mappings.target_hip)
    if structs.isdisjoint(words):  # most files: one pass over their words, in C
        return []
    present = [m for m, (_, _, struct) in table.items() if struct in words and m in ctx.data]
    if not present:
        return []
    names = b"|".join(re.escape(m) for m in sorted(present, key=len, reverse=True))
    found = sorted((m for op in (rb"\.", rb"->") for m in ctx.code_matches(
        re.compile(op + rb"\s*(" + names + rb")(?!\w)"))), key=lambda m: m.start(1))
    if not found:
        return []
    # A member the file declares itself stands in code somewhere not after `.` or `->`: only
    # then is the tree asked (its query for member declarations costs a compile per process).
    accessed = {m.group(1) for m in found}
    own = own_fields() if any(
        sum(1 for _ in ctx.code_matches(re.compile(re.escape(n) + rb"(?!\w)"))) > sum(m.group(1) == n for m in found)
        for n in accessed) else ()
    out = []
    for m in found:
        member = m.group(1)
        if member.decode("ascii") not in own:
            hip, library, _ = table[member]
            out.append(Edit(m.start(1), m.end(1), hip, library, member.decode("ascii")))
    return out
