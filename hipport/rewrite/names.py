"""Rename CUDA identifiers found in code (and macro bodies) through the mapping tables."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from hipport.edits import Edit
from hipport.mappings import Mappings
from hipport.parse.declarations import might_declare, user_declared
from hipport.parse.lexer import Lexed

# What a leftover CUDA API name looks like: reported as `unmapped` so nothing stays CUDA silently.
CUDA_LOOKING = re.compile(
    rb"(?:cuda[A-Z_]|cu[A-Z]|CU_|CUDA_|CUDART_|cublas|CUBLAS_|curand|CURAND_|cufft|CUFFT_|"
    rb"cusparse|CUSPARSE_|cusolver|CUSOLVER_|cudnn|CUDNN_|nccl|NCCL_|nvrtc|NVRTC_|nvtx|NVTX_)"
)
_TRAILING_WORD = re.compile(rb"(\w+)\s*\Z")
_DEFINE_NAME = re.compile(rb"[ \t]*#[ \t]*define[ \t]+(\w+)")
_LOOKBEHIND = 96  # bytes of context enough to see `obj.`, `a->`, `ns ::`, `##`


@dataclass(frozen=True)
class Unmapped:
    name: str
    count: int
    line_offset: int  # first occurrence
    reason: str


def _context(lexed: Lexed, start: int, end: int) -> str:
    """'member', 'qualified', 'pasted' or '' for an identifier at data[start:end]."""
    data = lexed.data
    stop = lexed.previous_code(start)
    before = data[max(0, stop - _LOOKBEHIND) : stop]
    if before.endswith(b"##") or data[end : end + 8].lstrip().startswith(b"##"):
        return "pasted"
    if before.endswith(b".") or before.endswith(b"->"):
        return "member"
    if before.endswith(b"::"):
        q = before[:-2].rstrip()
        # `::cudaFree` (global scope) is the CUDA function; `mylib::cudaFree` or `T<U>::x` is not.
        if q.endswith(b">") or _TRAILING_WORD.search(q):
            return "qualified"
    return ""


def defined_macros(lexed: Lexed) -> set[bytes]:
    data = lexed.data
    out = set()
    for d in lexed.directives:
        if d.name == b"define":
            m = _DEFINE_NAME.match(data, d.start)
            if m:
                out.add(m.group(1))
    return out


def rename_identifiers(lexed: Lexed, mappings: Mappings) -> tuple[list[Edit], list[Unmapped]]:
    data = lexed.data
    names = mappings.names
    edits: list[Edit] = []
    leftovers: Counter[bytes] = Counter()
    first: dict[bytes, int] = {}
    mapped = [t.start for t in lexed.identifiers if t.text.decode("ascii") in names]
    own = user_declared(data) if might_declare(data, mapped) else ()
    for tok in lexed.identifiers:
        word = tok.text.decode("ascii")
        new = names.get(word)
        if new is None:
            if CUDA_LOOKING.match(tok.text) and not _context(lexed, tok.start, tok.end):
                leftovers[tok.text] += 1
                first.setdefault(tok.text, tok.start)
            continue
        if tok.start in own or _context(lexed, tok.start, tok.end):
            continue
        entry = mappings.lookup(word)
        edits.append(Edit(tok.start, tok.end, new.encode("ascii"), entry.library if entry else "", word))
    macros = defined_macros(lexed) if leftovers else set()
    unmapped = []
    for name, count in sorted(leftovers.items()):
        if name in macros:
            continue  # the project's own macro (CUDA_CHECK, ...), not a CUDA API
        text = name.decode("ascii")
        reason = mappings.unsupported_reason(text) or "unknown to the mapping tables"
        unmapped.append(Unmapped(text, count, first[name], reason))
    return edits, unmapped


def cuda_looking_defines(lexed: Lexed) -> tuple[str, ...]:
    return tuple(sorted(n.decode("ascii") for n in defined_macros(lexed) if CUDA_LOOKING.match(n)))
