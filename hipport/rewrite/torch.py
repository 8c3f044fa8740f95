"""PyTorch C++ extension idioms, following ROCm PyTorch (mappings/build_files/torch_*.tsv).

`--torch-hipify v2` (default; torch >= 2.11, torch.utils.hipify 2.0.0): PyTorch's own API keeps
its CUDA spelling (`at::cuda::getCurrentCUDAStream`, `c10::cuda::CUDAGuard`, `C10_CUDA_*`,
`at::kCUDA`, `TORCH_LIBRARY_IMPL(ns, CUDA, m)`); header paths move (`ATen/cuda/...` ->
`ATen/hip/...`, `c10/cuda/CUDAGuard.h` -> `c10/hip/HIPGuard.h`) and `USE_CUDA` becomes
`USE_ROCM`. `v1` (torch <= 2.10) writes the older "Masquerading" spellings and headers.

Only files that include torch/ATen/c10 headers (or name `at::cuda::`/`c10::cuda::`) are
touched; CUDA library names (cudaStream_t, cublasHandle_t, ...) are the generic renamer's.
"""

from __future__ import annotations

import functools
import re

from hipport import regexes
from hipport.edits import Edit
from hipport.parse import IS_WORD_BYTE
from hipport.parse.lexer import Lexed
from hipport.patterns import word_starts
from hipport.rewrite.shell import table

VARIANTS = ("v1", "v2")
_TORCH_INCLUDE = (b"torch/", b"ATen/", b"c10/")
_SPACE = b" \t\n\r\f\v"  # what `\s` matches in a bytes pattern
_QUALIFIER = regexes.compile(rb"(\w+)\s*::\s*\Z")
_TORCH_NAMESPACES = frozenset({b"at", b"c10", b"cuda", b"hip", b"torch"})


@functools.lru_cache(maxsize=None)
def _headers(variant: str) -> tuple[dict[str, str], tuple[tuple[str, str], ...]]:
    exact, prefixes = {}, []
    for r in table("torch_headers"):
        new = r["v1"] if variant == "v1" and r["v1"] else r["v2"]
        if r["match"] == "prefix":
            prefixes.append((r["cuda"], new))
        else:
            exact[r["cuda"]] = new
    return exact, tuple(sorted(prefixes, key=lambda p: len(p[0]), reverse=True))


@functools.lru_cache(maxsize=4096)  # a pure function of the path; PyTorch's headers recur in every file
def header(path: str, variant: str = "v2") -> str | None:
    """The ROCm PyTorch header for a CUDA one, or None when the path is not PyTorch's CUDA header."""
    exact, prefixes = _headers(variant)
    if path in exact:
        return exact[path]
    for old, new in prefixes:
        if path.startswith(old):
            rest = path[len(old):]
            folder, _, name = rest.rpartition("/")
            stem, dot, ext = name.rpartition(".") if "." in name else (name, "", "")
            stem = stem.replace("cuda", "hip").replace("CUDA", "HIP")
            folder = folder.replace("cuda", "hip").replace("CUDA", "HIP")
            return new + (folder + "/" if folder else "") + stem + dot + ext
    return None


@functools.lru_cache(maxsize=None)
def _names(variant: str) -> tuple[dict[str, str], re.Pattern[bytes] | None]:
    names = {r["cuda"]: r[variant] for r in table("torch_names") if r[variant]}
    if not names:
        return {}, None
    # Literal first (hipport.patterns): led by a lookbehind, the search tried every byte of
    # every PyTorch source (a second for torch's own 9,400 headers, against 20 ms).
    longest_first = sorted((n.encode() for n in names), key=len, reverse=True)
    return names, regexes.compile(word_starts(longest_first) + rb"(?!\w)")


def is_torch_source(lexed: Lexed) -> bool:
    data = lexed.data
    if any(d.path(data).startswith(_TORCH_INCLUDE) for d in lexed.includes):
        return True
    # `at::cuda::` / `c10::cuda::`: told at the lexer's `cuda` words (a candidate prefix), not
    # by a search of the whole file
    words, n, i = lexed.words, len(data), -1
    while True:
        try:
            i = words.index("cuda", i + 1)
        except ValueError:
            return False
        tok = lexed.identifiers[i]
        after = tok.end
        while after < n and data[after] in _SPACE:
            after += 1
        end = tok.start
        while end > 0 and data[end - 1] in _SPACE:
            end -= 1
        if data[after : after + 2] != b"::" or data[end - 2 : end] != b"::":
            continue
        end -= 2
        while end > 0 and data[end - 1] in _SPACE:
            end -= 1
        for scope in (b"at", b"c10"):
            start = end - len(scope)
            if start >= 0 and data[start:end] == scope and (start == 0 or data[start - 1] not in IS_WORD_BYTE) \
                    and not lexed.in_comment_or_string(start):
                return True


def torch_edits(lexed: Lexed, variant: str, taken: list[Edit]) -> list[Edit]:
    """Edits for PyTorch header paths and names; never overlapping an edit in `taken`."""
    if variant not in VARIANTS:
        raise ValueError(f"torch-hipify must be one of {', '.join(VARIANTS)}, not {variant!r}")
    data = lexed.data
    if not is_torch_source(lexed):
        return []
    spans = sorted((e.start, e.end) for e in taken)
    edits: list[Edit] = []

    def free(s: int, e: int) -> bool:
        return not any(a < e and s < b or (a == b == s) for a, b in spans)

    for d in lexed.includes:
        path = d.path(data).decode("utf-8", "surrogateescape")
        new = header(path, variant)
        if new is None or new == path or not free(d.path_start, d.path_end):
            continue
        edits.append(Edit(d.path_start + 1, d.path_end - 1, new.encode(), "torch", path))
    names, pattern = _names(variant)
    if pattern is not None:
        directives = [(d.start, d.end) for d in lexed.includes]
        for m in pattern.finditer(data):
            if (lexed.in_comment_or_string(m.start()) or not free(m.start(), m.end())
                    or any(a <= m.start() < b for a, b in directives)):
                continue
            old = m.group().decode()
            q = _QUALIFIER.search(data, max(0, m.start() - 64), m.start())
            if q is not None and q.group(1) not in _TORCH_NAMESPACES:
                continue  # the project's own name (myns::CUDAStream), not PyTorch's
            edits.append(Edit(m.start(), m.end(), names[old].encode(), "torch", old))
    return edits
