"""tensor-core: NVIDIA's WMMA API (`<mma.h>`, `nvcuda::wmma`).

Inline PTX tensor-core instructions (`mma.sync`, `ldmatrix`, `wgmma`) are reported once, by
the inline-ptx rule HP301, whose message names them as tensor-core instructions."""

from __future__ import annotations

import re

from hipport import regexes
from hipport.patterns import word_starts
from hipport.rules import Hit, rule
from hipport.rules import _syntax as sx

_FIX = ("Port to rocWMMA (`#include <rocwmma/rocwmma.hpp>`): rocwmma::fragment, "
        "load_matrix_sync, mma_sync, store_matrix_sync and fill_fragment mirror the WMMA API; "
        "check which fragment shapes and types the target supports (wave64 on CDNA) and that "
        "rocWMMA is installed. Alternatives: hipBLASLt/rocBLAS for plain GEMMs, or the MFMA "
        "compiler builtins.")
_WMMA_HEADERS = {b"mma.h", b"crt/mma.h"}
_NVCUDA = regexes.compile(sx.word_start(b"nvcuda") + rb"\b(?:\s*::\s*wmma\b)?(?:\s*::\s*\w+)?")
_ALIAS = regexes.compile(sx.word_start(b"namespace") + rb"\s+(\w+)\s*=\s*(?:::\s*)?nvcuda\s*::\s*wmma\b")
_BARE = regexes.compile(word_starts((b"fragment", b"load_matrix_sync", b"store_matrix_sync", b"mma_sync",
                                      b"fill_fragment", b"bmma_sync")) + rb"\b")
_USING_WMMA = regexes.compile(sx.word_start(b"using") +
                              rb"\s+namespace\s+(?:(?:::\s*)?nvcuda\s*::\s*wmma|wmma)\b")
_ROCWMMA_ALIAS = regexes.compile(sx.word_start(b"namespace") + rb"\s+wmma\s*=\s*(?:::\s*)?rocwmma\b")


@rule(code="HP601", name="wmma-header-include", category="tensor-core", severity="error",
      effort="high",
      triggers=(b'mma',))
def wmma_header_include(ctx):
    """Flags `#include <mma.h>`, NVIDIA's WMMA header.

    What it does:
    Reports includes of `<mma.h>` (and `<crt/mma.h>`) that CUDA and HIP builds both compile.

    Why it matters on AMD GPUs:
    HIP has no `<mma.h>`: NVIDIA's warp matrix (tensor-core) API is not part of HIP. AMD's
    matrix cores are programmed through the separate rocWMMA library (or MFMA builtins).

    Example:
    #include <mma.h>

    Fix:
    Include `<rocwmma/rocwmma.hpp>` instead and port the `nvcuda::wmma` code to `rocwmma`.
    """
    for d, path in sx.live_includes(ctx):
        if path.strip() in _WMMA_HEADERS and sx.relevant(ctx, d.start):
            yield Hit(d.start, d.path_end, f"`#include <{path.decode()}>`: HIP has no WMMA header", _FIX)


@rule(code="HP602", name="wmma-api-use", category="tensor-core", severity="error", effort="high",
      triggers=(b'wmma', b'nvcuda'))
def wmma_api_use(ctx):
    """Flags uses of the `nvcuda::wmma` tensor-core API.

    What it does:
    Reports, once per line, `nvcuda::wmma` / `wmma::` names (`wmma::fragment<...>`,
    `wmma::load_matrix_sync`, `wmma::mma_sync`, `wmma::store_matrix_sync`,
    `wmma::fill_fragment`, `using namespace nvcuda;`, `namespace wmma = nvcuda::wmma;`), and
    the bare names after `using namespace nvcuda::wmma`. A `wmma` alias of `rocwmma` is not
    flagged. Inline PTX `mma.sync`/`ldmatrix`/`wgmma` is reported by inline-ptx (HP301), not
    here.

    Why it matters on AMD GPUs:
    HIP does not provide `nvcuda::wmma`. AMD matrix cores (MFMA on CDNA, WMMA on RDNA3+) are
    reached through rocWMMA, whose API mirrors WMMA but whose supported shapes, types and
    fragment layouts follow the AMD hardware (64-lane wavefronts on CDNA).

    Example:
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
    wmma::mma_sync(acc, a, b, acc);

    Fix:
    Port to rocWMMA (`rocwmma::fragment`, `rocwmma::load_matrix_sync`, `rocwmma::mma_sync`,
    `rocwmma::store_matrix_sync`), checking supported block sizes and data types for the
    target GPU; or call hipBLASLt/rocBLAS for whole GEMMs.
    """
    rocwmma_alias = any(ctx.in_code(m.start()) for m in _ROCWMMA_ALIAS.finditer(ctx.data))
    bare_ok = any(sx.relevant(ctx, m.start()) for m in _USING_WMMA.finditer(ctx.data))
    aliases = {m.group(1) for m in ctx.code_matches(_ALIAS) if sx.relevant(ctx, m.start())}
    if not rocwmma_alias:
        aliases.add(b"wmma")
    seen_lines = set()
    hits = [(m.start(), m.end(), m.group()) for m in ctx.code_matches(_NVCUDA)]
    if aliases:
        qualified = re.compile(word_starts(sorted(aliases)) + rb"\s*::\s*\w+")
        for m in ctx.code_matches(qualified):
            before = ctx.data[max(0, m.start() - 2):m.start()]
            if before == b"::":
                continue  # nvcuda::wmma::x, already matched from `nvcuda`
            hits.append((m.start(), m.end(), m.group()))
    if bare_ok:
        for m in ctx.code_matches(_BARE):
            before = ctx.data[max(0, m.start() - 2):m.start()]
            if before in (b"::", b"->") or before.endswith(b"."):
                continue
            hits.append((m.start(), m.end(), m.group()))
    for start, end, word in sorted(hits):
        if not sx.relevant(ctx, start):
            continue
        line = ctx.source.line_col(start)[0]
        if line in seen_lines:
            continue
        seen_lines.add(line)
        name = " ".join(word.decode("latin-1").split()).replace(" ::", "::").replace(":: ", "::")
        yield Hit(start, end,
                  f"`{name}`: NVIDIA's WMMA tensor-core API is not part of HIP (use rocWMMA)", _FIX)
