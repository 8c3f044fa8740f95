"""build-flags: nvcc options and NVIDIA architecture lists in build files.

Build files are not C++, so the C lexer is not used here: outside their comments
(FileContext.comments, from parse/hash_comments: CMake `#` and `#[[...]]` comments, quoted and
bracket arguments kept, since flags live in them; Makefile, requirements, Dockerfile and TOML
comments) is build text. In setup.py (Python) only string literals are scanned, found with
`tokenize` (the file is never executed), skipping `if`/ternary constructs whose condition tests
for ROCm (torch.version.hip, IS_HIP_EXTENSION, a HIP_BUILD flag): those are already split by
platform (rules/_python). build_matches serves cuda-only-library and pytorch-extension too.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterator

from hipport import regexes
from hipport.lazy import lazy_import
from hipport.parse.lexer import Substrings
from hipport.patterns import leftmost_matches, word_start
from hipport.rules import Guarded, Hit, rule
from hipport.rules import _syntax as sx
from hipport.rules._python import python_line_starts, python_string_tokens, rocm_split_lines
from hipport.tuples import NamedTuple

ast = lazy_import("ast")  # loaded by the first Python file (hipport.lazy)

BUILD_KINDS = ("cmake", "make", "setup.py", "pyproject", "docker")


def _python_build_strings(ctx) -> list[tuple[int, bytes]]:
    """The string literals that count as build text: those outside ROCm-split constructs."""
    split = rocm_split_lines(ctx)
    if not split:
        return python_string_tokens(ctx)
    starts = python_line_starts(ctx)  # lines as the tree's `lineno` counts them
    out = []
    for base, raw in python_string_tokens(ctx):
        line = bisect.bisect_right(starts, base)
        if not any(a <= line <= b for a, b in split):
            out.append((base, raw))  # else in an `if <ROCm test>:` construct: already split
    return out


def build_matches(ctx, pattern) -> Iterator[tuple[int, int, bytes]]:
    """(start, end, text) of each match of `pattern` in what counts as build text: outside
    comments for build files, inside string literals for Python. `pattern`: a compiled regex,
    or a tuple of them matched as their alternation (patterns.leftmost_matches)."""
    if isinstance(pattern, re.Pattern):
        find = pattern.finditer
    else:
        find = functools.partial(leftmost_matches, pattern)
    if ctx.kind in ("setup.py", "python"):
        for base, raw in sx.memo(ctx, "build_flags.build_strings", _python_build_strings):
            for m in find(raw):
                yield base + m.start(), base + m.end(), m.group()
        return
    in_comment = ctx.comment_index.covers
    for m in find(ctx.data):
        if not in_comment(m.start()):
            yield m.start(), m.end(), m.group()


# ---------------------------------------------------------------------------------------------
# the flag tables


class Flag(NamedTuple):
    regex: bytes
    what: str
    suggestion: str
    # Byte strings one of which is in every text the regex matches: a file holding none of
    # them is not searched for it (most build files name few of the flags).
    needs: tuple[bytes, ...]


def _option(*spellings: bytes) -> bytes:
    """A regex for an nvcc option spelled as one of `spellings` (regexes, each starting with '-')
    that starts after a space, quote, '=' or ';' (not after a word character or '-').

    Written `-(?<![\\w-]-)...`, the same as `(?<![\\w-])-...`: a pattern that starts with a
    literal lets the regex engine scan for it quickly instead of trying every position."""
    if not all(s.startswith(b"-") for s in spellings):
        raise ValueError(f"option spellings must start with '-': {spellings!r}")
    return rb"-(?<![\w-]-)(?:" + b"|".join(s[1:] for s in spellings) + rb")"


_E = rb"(?![\w-])"


def _word(word: bytes, after_define: bool = False) -> bytes:
    """`\\bword\\b` (or also right after `-D`), literal first (hipport.patterns)."""
    return word_start(word, after_define) + rb"\b"


ARCH_FLAGS = (
    Flag(_option(rb"-arch", rb"--gpu-architecture") + rb"(?:=|\s+)(?:sm|compute|lto)_\w+",
         "an nvcc option naming an NVIDIA architecture; hipcc does not take AMD targets from it",
         "hipcc/clang: --offload-arch=gfx90a (one per target GPU, e.g. gfx90a and gfx942)",
         (b"arch",)),
    Flag(word_start(b"arch=compute_") + rb"\w+(?:,code=(?:\\?\"[\w,]+\\?\"|\[[\w,]+\]|[\w,]+))?",
         "an nvcc -gencode architecture pair for NVIDIA GPUs; hipcc does not understand it",
         "hipcc/clang: --offload-arch=gfx90a (one per target GPU)",
         (b"arch=compute_",)),
    Flag(_option(rb"-code") + rb"(?:=|\s+)(?:sm|compute)_\w+",
         "an nvcc option naming NVIDIA code targets; hipcc does not understand it",
         "hipcc/clang: --offload-arch=gfx90a",
         (b"code",)),
    Flag(_word(b"CMAKE_CUDA_ARCHITECTURES", after_define=True),
         "CMake's NVIDIA architecture list; HIP targets do not read it",
         "CMAKE_HIP_ARCHITECTURES (e.g. \"gfx90a;gfx942\") with enable_language(HIP)",
         (b"CMAKE_CUDA_ARCHITECTURES",)),
    Flag(_word(b"CUDA_ARCHITECTURES", after_define=True),
         "a CUDA target property; HIP targets read HIP_ARCHITECTURES instead",
         "the HIP_ARCHITECTURES target property (e.g. \"gfx90a;gfx942\")",
         (b"CUDA_ARCHITECTURES",)),
    Flag(_word(b"TORCH_CUDA_ARCH_LIST"),
         "PyTorch's NVIDIA architecture list; ROCm builds of PyTorch read PYTORCH_ROCM_ARCH",
         "PYTORCH_ROCM_ARCH (e.g. \"gfx90a;gfx942\"), which PyTorch's ROCm build reads",
         (b"TORCH_CUDA_ARCH_LIST",)),
)

NVCC_ONLY_FLAGS = (
    Flag(_option(rb"-Xptxas", rb"--ptxas-options") + _E,
         "passes options to ptxas, NVIDIA's assembler",
         "drop it; for register and spill reports use -Rpass-analysis=kernel-resource-usage",
         (b"ptxas",)),
    Flag(_option(rb"--resource-usage") + _E, "prints NVIDIA kernel resource usage",
         "-Rpass-analysis=kernel-resource-usage",
         (b"resource-usage",)),
    Flag(_option(rb"-lineinfo", rb"--generate-line-info") + _E, "nvcc line-number information",
         "-gline-tables-only",
         (b"lineinfo", b"line-info")),
    Flag(_option(rb"--?use_fast_math") + _E, "nvcc fast-math mode",
         "-ffast-math (check accuracy: the set of relaxations differs)",
         (b"use_fast_math",)),
    Flag(_option(rb"-Xcompiler", rb"--compiler-options") + _E,
         "forwards options to the host compiler",
         "hipcc is clang: pass host options directly, without -Xcompiler",
         (b"Xcompiler", b"compiler-options")),
    Flag(_option(rb"--expt-relaxed-constexpr") + _E,
         "lets device code call constexpr host functions",
         "drop it: HIP-Clang allows constexpr functions in device code",
         (b"relaxed-constexpr",)),
    Flag(_option(rb"--(?:expt-)?extended-lambda") + _E, "enables __device__ lambdas in nvcc",
         "drop it: HIP-Clang accepts __device__ lambdas",
         (b"extended-lambda",)),
    Flag(_option(rb"--?ftz") + rb"(?:=|\s+)(?:true|false)" + _E, "nvcc denormal flushing",
         "-fgpu-flush-denormals-to-zero / -fno-gpu-flush-denormals-to-zero",
         (b"ftz",)),
    Flag(_option(rb"--?prec-(?:div|sqrt)") + rb"(?:=|\s+)(?:true|false)" + _E,
         "nvcc division/square-root precision",
         "-fhip-fp32-correctly-rounded-divide-sqrt (or its -fno- form)",
         (b"prec-",)),
    Flag(_option(rb"--?maxrregcount") + rb"(?:=|\s+)\d+", "caps NVIDIA registers per thread",
         "no flag equivalent: bound occupancy with __launch_bounds__ on the kernels",
         (b"maxrregcount",)),
    Flag(_option(rb"--?default-stream") + rb"(?:=|\s+)per-thread" + _E,
         "nvcc per-thread default stream",
         "-fgpu-default-stream=per-thread",
         (b"default-stream",)),
    Flag(_option(rb"-Xnvlink", rb"--nvlink-options") + _E, "passes options to nvlink",
         "drop it (no nvlink in the HIP toolchain)",
         (b"nvlink",)),
)

RDC_FLAGS = (
    Flag(_option(rb"-rdc", rb"--relocatable-device-code") + rb"(?:=|\s+)true" + _E,
         "relocatable device code", "-fgpu-rdc (both when compiling and when linking)",
         (b"rdc", b"relocatable-device-code")),
    Flag(_option(rb"-dlink", rb"--device-link") + _E, "an nvcc device-link step",
         "link with hipcc -fgpu-rdc instead of a separate device-link step",
         (b"dlink", b"device-link")),
    Flag(_word(b"CUDA_SEPARABLE_COMPILATION"), "CMake's relocatable-device-code switch for CUDA",
         "add -fgpu-rdc to the HIP target's compile and link options",
         (b"CUDA_SEPARABLE_COMPILATION",)),
)

DEVICE_RUNTIME = regexes.compile(rb"(?<![\w-])(?:-l|lib)?cudadevrt\b|\bCUDA::cudadevrt\b")


def _compile(flags: tuple[Flag, ...]) -> list[tuple[Guarded, Flag]]:
    return [(Guarded(regexes.compile(f.regex), f.needs), f) for f in flags]


_ARCH, _NVCC, _RDC = _compile(ARCH_FLAGS), _compile(NVCC_ONLY_FLAGS), _compile(RDC_FLAGS)
# Every flag's `needs`, found in one pass over a build file for the three rules.
_NEEDS = Substrings(sorted({w for f in ARCH_FLAGS + NVCC_ONLY_FLAGS + RDC_FLAGS for w in f.needs}))


def _needs_present(ctx) -> frozenset[bytes]:
    return sx.memo(ctx, "build_flags.needs", lambda c: frozenset(_NEEDS.words[i] for i in _NEEDS.found(c.data)))


def _flag_hits(ctx, table, suffix: str = "") -> Iterator[Hit]:
    present = _needs_present(ctx)
    covered: set[int] = set()  # the offsets of the flags reported (a flag is a few bytes)
    for guard, flag in table:
        if present.isdisjoint(guard.words):
            continue  # no text of the file can match
        for start, end, text in build_matches(ctx, guard.pattern):
            if start in covered:
                continue  # inside a flag an earlier row reported
            covered.update(range(start, end))
            shown = text.decode("utf-8", "replace")
            yield Hit(start, end, f"`{shown}`: {flag.what}{suffix}",
                      flag.suggestion)


@rule(code="HP1101", name="nvidia-architecture-flag", category="build-flags", severity="warning",
      effort="low", kinds=BUILD_KINDS)
def nvidia_architecture_flag(ctx):
    """Reports NVIDIA architecture selections in build files.

    What it does:
    Flags -arch=sm_XX / --gpu-architecture, -gencode arch=compute_XX,code=sm_XX, -code=sm_XX,
    CMAKE_CUDA_ARCHITECTURES, the CUDA_ARCHITECTURES property and TORCH_CUDA_ARCH_LIST in CMake
    files, Makefiles, setup.py string literals, pyproject.toml and Dockerfiles.

    Why it matters on AMD GPUs:
    AMD GPUs are selected by gfx names (gfx90a for MI200, gfx942 for MI300, ...). hipcc rejects
    the nvcc spellings, and PyTorch's ROCm build reads PYTORCH_ROCM_ARCH, not
    TORCH_CUDA_ARCH_LIST.

    Example:
    set(CMAKE_CUDA_ARCHITECTURES 80 86)

    Fix:
    Use --offload-arch=gfx90a (hipcc), CMAKE_HIP_ARCHITECTURES / HIP_ARCHITECTURES (CMake) or
    PYTORCH_ROCM_ARCH (PyTorch extensions), listing the AMD targets you ship for.
    """
    yield from _flag_hits(ctx, _ARCH)


@rule(code="HP1102", name="nvcc-only-flag", category="build-flags", severity="warning",
      effort="low", kinds=BUILD_KINDS)
def nvcc_only_flag(ctx):
    """Reports nvcc options that hipcc does not understand.

    What it does:
    Flags -Xptxas, --resource-usage, -lineinfo, --use_fast_math, -Xcompiler,
    --expt-relaxed-constexpr, --expt-extended-lambda, -ftz=, -prec-div=/-prec-sqrt=,
    -maxrregcount, --default-stream per-thread and -Xnvlink in build files.

    Why it matters on AMD GPUs:
    hipcc is a clang driver: nvcc-only options make the compile fail, and PyTorch's ROCm
    extension build passes them to hipcc unchanged.

    Example:
    NVCCFLAGS += -lineinfo --use_fast_math -Xptxas -v

    Fix:
    Replace each with its clang spelling (-gline-tables-only, -ffast-math,
    -Rpass-analysis=kernel-resource-usage, ...) or drop it where HIP-Clang needs none
    (--expt-relaxed-constexpr, --expt-extended-lambda).
    """
    yield from _flag_hits(ctx, _NVCC,
                          "; an nvcc-only option that hipcc (clang) does not understand")


@rule(code="HP1103", name="relocatable-device-code-flag", category="build-flags", severity="error",
      effort="medium", kinds=BUILD_KINDS)
def relocatable_device_code_flag(ctx):
    """Reports relocatable device code: -rdc=true, -dlink, CUDA_SEPARABLE_COMPILATION.

    What it does:
    Flags nvcc's relocatable-device-code options and CMake's CUDA_SEPARABLE_COMPILATION.

    Why it matters on AMD GPUs:
    hipcc rejects nvcc's spelling, so the build fails as written. HIP-Clang supports
    relocatable device code with -fgpu-rdc, but code often enables RDC for dynamic parallelism
    (kernels launching kernels), which HIP does not support at any version.

    Example:
    set_target_properties(solver PROPERTIES CUDA_SEPARABLE_COMPILATION ON)

    Fix:
    Use -fgpu-rdc on both compile and link lines; if the RDC was there for device-side launches,
    restructure those launches to the host first.
    """
    yield from _flag_hits(ctx, _RDC, "; hipcc spells it -fgpu-rdc, and if it serves dynamic "
                                     "parallelism, HIP has no device-side launch")


@rule(code="HP1104", name="cuda-device-runtime-link", category="build-flags", severity="error",
      effort="high", kinds=BUILD_KINDS, triggers=(b"cudadevrt",))
def cuda_device_runtime_link(ctx):
    """Reports linking CUDA's device runtime library, cudadevrt.

    What it does:
    Flags cudadevrt, -lcudadevrt, libcudadevrt and CUDA::cudadevrt in build files.

    Why it matters on AMD GPUs:
    cudadevrt exists for dynamic parallelism (kernel launches and runtime calls from device
    code). HIP has no device runtime and no device-side launch, so there is nothing to link
    and the code that needed it must change.

    Example:
    target_link_libraries(app PRIVATE CUDA::cudadevrt)

    Fix:
    Remove the library and move device-side launches to the host (launch follow-up kernels
    from the host, or merge them into one kernel).
    """
    for start, end, text in build_matches(ctx, DEVICE_RUNTIME):
        yield Hit(start, end,
                  f"`{text.decode()}` links CUDA's device runtime for dynamic parallelism; HIP "
                  "has no device-side launch or device runtime library",
                  "remove it and launch the follow-up kernels from the host")
