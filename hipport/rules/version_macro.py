"""version-macro: code selected by CUDA toolkit or CUDA library version numbers.

A file that includes PyTorch headers (<torch/...>, <ATen/...>, <c10/...>) is an extension source:
there the same comparisons are reported by pytorch-extension (whose advice is USE_ROCM and
TORCH_HIP_VERSION), and this rule stays silent, so a guard is reported once.
"""

from __future__ import annotations

import re
from functools import lru_cache

from hipport.rules import Hit, rule
from hipport.rules import _syntax as sx
from hipport.rules.api_tables import (
    directives_of, hip_aware_directive, macro_use_kind, relevant_at, risk_names)

HIP_VERSION_FORMULA = ("HIP_VERSION = HIP_VERSION_MAJOR * 10000000 + HIP_VERSION_MINOR * 100000 "
                       "+ HIP_VERSION_PATCH (hip/hip_version.h), so HIP 6.2 is "
                       "`HIP_VERSION >= 60200000`")

# Version macro -> (what it measures, what to test on ROCm instead). HIP builds define none of
# these, except the NCCL ones (RCCL_DEFINED), which RCCL's nccl.h keeps.
VERSION_MACROS = {
    "CUDA_VERSION": ("the CUDA driver API version, e.g. 12040", HIP_VERSION_FORMULA),
    "CUDART_VERSION": ("the CUDA runtime version, e.g. 12040", HIP_VERSION_FORMULA),
    "__CUDACC_VER_MAJOR__": ("the nvcc major version", HIP_VERSION_FORMULA),
    "__CUDACC_VER_MINOR__": ("the nvcc minor version", HIP_VERSION_FORMULA),
    "__CUDACC_VER_BUILD__": ("the nvcc build number", HIP_VERSION_FORMULA),
    "CUDNN_VERSION": ("the cuDNN version",
                      "MIOPEN_VERSION_MAJOR/MINOR/PATCH from <miopen/version.h>"),
    "CUDNN_MAJOR": ("the cuDNN major version", "MIOPEN_VERSION_MAJOR from <miopen/version.h>"),
    "CUBLAS_VERSION": ("the cuBLAS version",
                       "hipblasVersionMajor/Minor from <hipblas/hipblas-version.h>"),
    "CUSPARSE_VERSION": ("the cuSPARSE version",
                         "hipsparseVersionMajor/Minor from <hipsparse/hipsparse-version.h>"),
    "CUFFT_VERSION": ("the cuFFT version",
                      "hipfftVersionMajor/Minor from <hipfft/hipfft-version.h>"),
    "CURAND_VERSION": ("the cuRAND version", "HIPRAND_VERSION from <hiprand/hiprand_version.h>"),
    "CUSOLVER_VERSION": ("the cuSOLVER version", "hipsolverVersionMajor/Minor from "
                         "<hipsolver/internal/hipsolver-version.h>"),
    "NCCL_VERSION_CODE": ("the NCCL version", "a test of the RCCL feature itself"),
    "NCCL_MAJOR": ("the NCCL major version", "a test of the RCCL feature itself"),
}
RCCL_DEFINED = frozenset({"NCCL_VERSION_CODE", "NCCL_MAJOR"})


@lru_cache(maxsize=8)
def _patterns(names: frozenset[str]) -> tuple[re.Pattern[bytes], ...]:
    return sx.whole_word_patterns(names)


def version_macro_names(mappings) -> frozenset[str]:
    """VERSION_MACROS plus the mapping-table rows marked risk=version-macro."""
    return risk_names(mappings, "version-macro") | frozenset(VERSION_MACROS)


def describe(name: str, mappings) -> tuple[str, str]:
    """(what the macro measures, what to test on ROCm instead)."""
    if name in VERSION_MACROS:
        return VERSION_MACROS[name]
    entry = mappings.lookup(name)
    note = entry.note.strip() if entry is not None else ""
    return ("a CUDA version macro", note or HIP_VERSION_FORMULA)


TORCH_HEADER_PREFIXES = ("torch/", "ATen/", "c10/")


_TORCH_HEADER_STARTS = tuple(p.encode() for p in TORCH_HEADER_PREFIXES)


def includes_torch(ctx) -> bool:
    """Whether the file includes PyTorch's C++ headers (an extension source). Once per file:
    two rules ask it of every file that says VERSION, which PyTorch's headers all do."""
    return sx.memo(ctx, "version_macro.includes_torch", lambda c: any(
        d.path(c.data).startswith(_TORCH_HEADER_STARTS) for d in c.lexed.includes))


def version_comparisons(ctx):
    """(start, end, macro, directive name or None) per value use of a version macro: comparisons and
    arithmetic in #if lines, #define bodies and code. Existence tests (#ifdef CUDA_VERSION,
    defined(...), a bare #if CUDART_VERSION) are platform checks and not included."""
    data = ctx.data
    matches = sx.code_word_matches(ctx, _patterns(version_macro_names(ctx.mappings)))
    if not matches:
        return  # most files: no directive index to build
    directives = directives_of(ctx)
    for m in matches:
        if macro_use_kind(data, directives, m.start(), m.end()) != "value":
            continue
        d = directives.at(m.start())
        if hip_aware_directive(data, d) or not relevant_at(ctx, m.start(), directives):
            continue  # the directive already handles ROCm, or hipcc never compiles this
        yield m.start(), m.end(), m.group().decode("ascii"), d[2] if d is not None else None


@rule(code="HP751", name="cuda-version-comparison", category="version-macro", severity="warning",
      effort="medium",
      # every name in version_macro_names() contains one of these (CUDNN_MAJOR and NCCL_MAJOR
      # neither VERSION nor _VER)
      triggers=(b'VERSION', b'_VER', b'CUDNN_MAJOR', b'NCCL_MAJOR'))
def cuda_version_comparison(ctx):
    """Reports code selected by a CUDA toolkit or library version: `#if CUDA_VERSION >= 11000`.

    What it does:
    Flags comparisons and value uses of CUDA_VERSION, CUDART_VERSION, __CUDACC_VER_*__,
    CUDNN_VERSION/CUDNN_MAJOR, the CUDA math-library version macros and the table rows marked
    version-macro, in #if lines, #define bodies and code; NCCL_VERSION_CODE/NCCL_MAJOR are
    info (RCCL defines them). Existence tests (#ifdef CUDA_VERSION) are not flagged. In files
    that include PyTorch headers pytorch-extension reports these instead.

    Why it matters on AMD GPUs:
    A HIP build does not define the CUDA macros, so `#if CUDA_VERSION >= 11000` sees 0 and takes
    the branch meant for old CUDA toolkits; ROCm's own version numbers are on another scale
    (HIP_VERSION = HIP_VERSION_MAJOR * 10000000 + HIP_VERSION_MINOR * 100000 +
    HIP_VERSION_PATCH), so renaming the macro is wrong too.

    Example:
    #if CUDART_VERSION >= 11000
      cudaStreamAttrValue attr;
    #endif

    Fix:
    Guard the platform first (#if defined(__HIP_PLATFORM_AMD__) or USE_ROCM), then compare
    HIP_VERSION on ROCm, e.g. `HIP_VERSION >= 60200000` for HIP 6.2; for libraries, test the
    ROCm library's own version macros.
    """
    if includes_torch(ctx):
        return
    for start, end, name, in_directive in version_comparisons(ctx):
        what, instead = describe(name, ctx.mappings)
        if name in RCCL_DEFINED:
            yield Hit(start, end,
                      f"`{name}` ({what}) selects code: RCCL's nccl.h defines it for the NCCL API "
                      "level RCCL implements, which does not guarantee that RCCL has the feature",
                      f"on ROCm, prefer {instead} (or RCCL's release notes) over the NCCL number",
                      "info")
            continue
        if in_directive == b"define":
            consequence = "the macro evaluates as 0 in #if and does not compile in code"
        elif in_directive is not None:
            consequence = "#if sees 0, selecting the branch for old toolkits"
        else:
            consequence = "this does not compile there"
        message = (f"`{name}` ({what}) selects code: a HIP build does not define it, so "
                   f"{consequence}; ROCm versions are on another scale")
        yield Hit(start, end, message,
                  "guard with #if defined(__HIP_PLATFORM_AMD__) (or USE_ROCM) first; on ROCm "
                  f"test {instead}")
