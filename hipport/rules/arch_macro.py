"""arch-macro: code selected by NVIDIA architecture (`__CUDA_ARCH__`, compute capability)."""

from __future__ import annotations

import re
from functools import lru_cache

from hipport import regexes
from hipport.patterns import by_common_start, leftmost_matches, word_starts
from hipport.rules import Hit, rule
from hipport.rules import _syntax as sx
from hipport.rules.api_tables import (
    PROSE_DIRECTIVES, directives_of, hip_aware_directive, identifier_uses, macro_use_kind,
    relevant_at, risk_names)

# NVIDIA architecture macros: what a test of each one means.
ARCH_MACROS = {
    "__CUDA_ARCH__": "the NVIDIA compute capability of the device pass (e.g. 800 for sm_80)",
    "__CUDA_ARCH_LIST__": "the list of NVIDIA architectures being compiled",
    "__CUDA_ARCH_SPECIFIC__": "an architecture-specific NVIDIA target (sm_XXa)",
    "__CUDA_ARCH_FAMILY_SPECIFIC__": "a family-specific NVIDIA target (sm_XXf)",
    "__CUDA_ARCH_HAS_FEATURE__": "an NVIDIA architecture feature set",
    "__CUDA_ARCH_FEAT_*": "an NVIDIA architecture feature set (e.g. SM90_ALL for Hopper)",
}
_ARCH_MACRO = (sx.word_start(b"__CUDA_ARCH") + rb"(?:__|_LIST__|_SPECIFIC__|_FAMILY_SPECIFIC__|_HAS_FEATURE__"
               rb"|_FEAT_\w+)")
# Compiler-identity macros: tested to pick nvcc-specific code (reported as info).
COMPILER_MACROS = {"__NVCC__": "nvcc"}

# Compute-capability queries: the attribute enums and the driver call (read as names in code).
CAPABILITY_NAMES = {
    "cudaDevAttrComputeCapabilityMajor": "attribute",
    "cudaDevAttrComputeCapabilityMinor": "attribute",
    "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR": "attribute",
    "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR": "attribute",
    "cuDeviceComputeCapability": "query",
}
# Device-property objects: declared with one of these types, or returned by these calls.
_PROP_TYPES = (b"cudaDeviceProp", b"hipDeviceProp_t", b"CUdevprop")
# One pattern per type, each opening with it (see patterns.leftmost_matches).
_PROP_DECLS = tuple(regexes.compile(re.escape(t) + rb"\s*(?:const\s*)?[*&]*\s*(?:const\s*)?([A-Za-z_]\w*)\s*[;,=)\[{(]")
                    for t in _PROP_TYPES)
_PROP_AUTO = regexes.compile(
    sx.word_start(b"auto") + rb"\s*[*&]*\s*([A-Za-z_]\w*)\s*=\s*[\w:]*get(?:Current)?DeviceProperties\s*\(")
_PROP_CALL_MEMBER = regexes.compile(
    sx.word_start(b"get") + rb"(?:Current)?DeviceProperties\s*\([^()]*\)\s*->\s*(major|minor)\b")
_MEMBER_TAIL = rb"\s*(?:\[[^\]\n]*\])?\s*(?:\.|->)\s*"
_OBJECT_BEFORE = regexes.compile(rb"[A-Za-z_]\w*" + _MEMBER_TAIL + rb"\Z")
_CMP_AFTER = regexes.compile(rb"\s*(?:[=!<>]=|>(?!>)|<(?!<)|\*\s*10{1,2}\b)")
_CMP_BEFORE = regexes.compile(rb"(?:[=!<>]=|(?<![-<>])>|(?<!<)<)\s*\Z")


@lru_cache(maxsize=8)
def _arch_pattern(extra: frozenset[str]) -> re.Pattern[bytes]:
    names = [n.encode() for n in sorted(extra, key=len, reverse=True)]
    return re.compile(_ARCH_MACRO + (b"|" + word_starts(names) + rb"\b" if names else b""))


_HIP_ARCH_HINT = ("test what the code needs instead: __HIP_DEVICE_COMPILE__ for the device pass, "
                  "target macros such as __gfx90a__ or __HIP_ARCH_HAS_* feature macros for AMD "
                  "paths, and keep NVIDIA comparisons under #if defined(__CUDA_ARCH__)")


def _arch_uses(ctx):
    """(start, end, macro, kind, directive) per use of an architecture macro; in a directive
    that compares __CUDA_ARCH__, its defined() tests are dropped (the comparison is the
    finding). Computed once per file: two rules read it."""
    return sx.memo(ctx, "arch_macro.uses", _compute_arch_uses)


def _compute_arch_uses(ctx) -> list:
    data = ctx.data
    directives = directives_of(ctx)
    uses = []
    extra = risk_names(ctx.mappings, "arch-macro") - frozenset(COMPILER_MACROS)
    for m in ctx.code_matches(_arch_pattern(extra)):
        kind = macro_use_kind(data, directives, m.start(), m.end())
        d = directives.at(m.start())
        if (kind is None or hip_aware_directive(data, d)
                or not relevant_at(ctx, m.start(), directives)):
            continue
        if d is None and sx.device_pass_only(ctx, m.start()):
            continue  # inside `#ifdef __CUDA_ARCH__`: that test is the finding
        uses.append((m.start(), m.end(), m.group().decode("ascii"), kind, d))
    compared = {d[0] for _, _, name, kind, d in uses if d and name == "__CUDA_ARCH__"
                and kind == "value"}
    return [(start, end, name, kind, d) for start, end, name, kind, d in uses
            if not (d and d[0] in compared and name == "__CUDA_ARCH__" and kind != "value")]


@rule(code="HP701", name="cuda-arch-value-test", category="arch-macro", severity="warning",
      effort="medium",
      triggers=(b'__CUDA_ARCH',))
def cuda_arch_value_test(ctx):
    """Reports code selected by an NVIDIA architecture value: `__CUDA_ARCH__ >= 800` and friends.

    What it does:
    Flags comparisons and other value uses of __CUDA_ARCH__, and any test of the NVIDIA-only
    architecture macros (__CUDA_ARCH_LIST__, __CUDA_ARCH_FEAT_*, __CUDA_ARCH_SPECIFIC__,
    __CUDA_ARCH_FAMILY_SPECIFIC__, __CUDA_ARCH_HAS_FEATURE__), in #if lines, #define bodies and
    code.

    Why it matters on AMD GPUs:
    HIP-Clang never defines these macros. In #if they evaluate as 0, so `#if __CUDA_ARCH__ >=
    800` silently selects the code for the oldest GPUs (or none) on every AMD GPU; used as a
    value in code they do not compile.

    Example:
    #if __CUDA_ARCH__ >= 800
      // cp.async / bf16 path
    #endif

    Fix:
    Test features rather than NVIDIA generations: __HIP_DEVICE_COMPILE__ for the device pass,
    __gfx90a__-style target macros or __HIP_ARCH_HAS_* feature macros for AMD-specific paths,
    and keep the NVIDIA comparison under #if defined(__CUDA_ARCH__).
    """
    for start, end, name, kind, d in _arch_uses(ctx):
        if name == "__CUDA_ARCH__" and kind != "value":
            continue  # a device-pass test: HP702
        what = ARCH_MACROS.get(name) or (ARCH_MACROS["__CUDA_ARCH_FEAT_*"] if name.startswith(
            "__CUDA_ARCH_FEAT_") else "an NVIDIA architecture macro")
        if d is None:
            message = (f"`{name}` ({what}) used as a value in code: HIP-Clang does not define it, "
                       "so this does not compile for AMD GPUs")
        else:
            message = (f"`{name}` ({what}) selects code by NVIDIA architecture: HIP-Clang never "
                       "defines it, so on AMD GPUs the test sees 0 / undefined and picks the "
                       "fallback branch")
        yield Hit(start, end, message, _HIP_ARCH_HINT)


@rule(code="HP702", name="cuda-arch-device-pass-test", category="arch-macro", severity="info",
      effort="low",
      triggers=(b'__CUDA_ARCH__',))
def cuda_arch_device_pass_test(ctx):
    """Reports `#ifdef __CUDA_ARCH__`-style tests for the device compilation pass.

    What it does:
    Flags #ifdef/#ifndef __CUDA_ARCH__, defined(__CUDA_ARCH__) and a bare `#if __CUDA_ARCH__`,
    unless the same directive also compares __CUDA_ARCH__ (then cuda-arch-value-test reports
    it).

    Why it matters on AMD GPUs:
    These only ask "is this the device pass?", which is fine in intent, but HIP-Clang does not
    define __CUDA_ARCH__: its device pass defines __HIP_DEVICE_COMPILE__. Unchanged, the device
    branch is never compiled on AMD GPUs and device code gets the host branch.

    Example:
    #ifdef __CUDA_ARCH__
      return __ldg(p);
    #else
      return *p;
    #endif

    Fix:
    Test `defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)`, or
    __HIP_DEVICE_COMPILE__ alone in HIP-only code.
    """
    for start, end, name, kind, _d in _arch_uses(ctx):
        if name == "__CUDA_ARCH__" and kind in ("defined", "truthy"):
            yield Hit(start, end,
                      "`__CUDA_ARCH__` tested as a device-pass check: HIP-Clang does not define "
                      "it; the HIP device pass defines __HIP_DEVICE_COMPILE__, so this branch is "
                      "never taken on AMD GPUs",
                      "use `defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)`")


@rule(code="HP703", name="compute-capability-check", category="arch-macro", severity="warning",
      effort="medium",
      # every finding is a `major`/`minor` member or a name in CAPABILITY_NAMES
      triggers=(b"major", b"minor", b"ComputeCapability", b"COMPUTE_CAPABILITY"))
def compute_capability_check(ctx):
    """Reports run-time compute-capability checks: `prop.major >= 7`, capability attributes.

    What it does:
    Flags comparisons (or `major * 10 + minor` arithmetic) on the major/minor fields of a
    cudaDeviceProp (a variable of that type, or the result of getCurrentDeviceProperties()), the
    compute-capability device attributes and cuDeviceComputeCapability. At most one finding per
    line.

    Why it matters on AMD GPUs:
    On AMD GPUs hipDeviceProp_t major/minor hold the gfx architecture version (9.x for CDNA,
    10.x/11.x for RDNA), not an NVIDIA compute capability: a threshold like `major >= 7`
    ("Volta or newer") is true on every current AMD GPU whether or not the feature it stands for
    exists there.

    Example:
    if (prop.major >= 8) launch_bf16_kernel(...);

    Fix:
    Query the property the code depends on (warpSize, sharedMemPerBlock, managed memory, ...),
    or branch on gcnArchName for AMD-specific paths.
    """
    data = ctx.data
    flagged_lines: set[int] = set()

    def line_of(offset: int) -> int:  # from the file's line index: a count from the top per hit grew with the file
        return ctx.source.line_col(offset)[0]

    hits: list[tuple[int, int, str]] = []
    props = sorted(name.decode("ascii") for name in _prop_objects(data))
    # A pattern per two leading letters of the names, opening with them (re searches that
    # fast; one per name made a file of thousands of property objects quadratic); as one
    # alternation would, a match inside an earlier one's text does not count.
    matches = sorted((m for head, rest in by_common_start(props) for m in ctx.code_matches(_member_pattern(head, rest))),
                     key=lambda m: m.start())
    end = 0
    for m in matches:
        if m.start() >= end:
            hits.append((m.start(1), m.end(1), "member"))
            end = m.end()
    if b"DeviceProperties" in data:
        for m in ctx.code_matches(_PROP_CALL_MEMBER):
            hits.append((m.start(1), m.end(1), "member"))
    for start, end, name in identifier_uses(ctx, CAPABILITY_NAMES):
        hits.append((start, end, name))
    directives = directives_of(ctx)
    for start, end, what in sorted(hits):
        d = directives.at(start)
        if d is not None and d[2] in PROSE_DIRECTIVES or not sx.relevant(ctx, start):
            continue
        if what == "member":
            line_start = data.rfind(b"\n", 0, start) + 1
            if not (_CMP_AFTER.match(data, end)
                    or _CMP_BEFORE.search(_before_member(data, line_start, start))):
                continue
            field = data[start:end].decode()
            message = (f"compares the device's compute capability (`{field}`): on AMD GPUs "
                       "major/minor are the gfx architecture version, so NVIDIA thresholds do "
                       "not describe AMD features")
        else:
            message = (f"`{what}` queries the NVIDIA compute capability: on AMD GPUs it reports "
                       "the gfx architecture version, so NVIDIA thresholds do not describe AMD "
                       "features")
        line = line_of(start)
        if line in flagged_lines:
            continue
        flagged_lines.add(line)
        yield Hit(start, end, message,
                  "check the specific property the code relies on, or use gcnArchName for "
                  "AMD-specific paths")


@lru_cache(maxsize=256)
def _member_pattern(head: bytes, rest: bytes) -> re.Pattern[bytes]:
    """`name.major`, `name->minor`, `name[i].major` for the names `head` followed by one of the
    alternation `rest` (patterns.by_common_start): the object's name a whole word."""
    return re.compile(sx.word_start(head) + rb"(?:" + rest + rb")\b" + _MEMBER_TAIL + rb"(major|minor)\b")


def _prop_objects(data: bytes) -> set[bytes]:
    """Names of the device-property objects the file declares (a substring test spares
    most files _PROP_AUTO's search)."""
    props = {m.group(1) for m in leftmost_matches(_PROP_DECLS, data)}
    if b"DeviceProperties" in data:
        props.update(m.group(1) for m in _PROP_AUTO.finditer(data))
    props.discard(b"const")
    return props


def _before_member(data: bytes, line_start: int, member_start: int) -> bytes:
    """The text before `obj.major` / `obj->major` on its line (without the object)."""
    m = _OBJECT_BEFORE.search(data[line_start:member_start])
    return data[line_start : line_start + m.start()] if m else data[line_start:member_start]


_COMPILER_MACRO = regexes.compile(sx.word_start(b"__NVCC__") + rb"\b")


@rule(code="HP704", name="nvcc-compiler-test", category="arch-macro", severity="info",
      effort="low",
      triggers=(b'__NVCC__',))
def nvcc_compiler_test(ctx):
    """Reports tests of `__NVCC__`, the macro that identifies the nvcc compiler driver.

    What it does:
    Flags #ifdef/#ifndef __NVCC__, defined(__NVCC__) and other uses of __NVCC__, unless the
    same directive also tests a HIP macro.

    Why it matters on AMD GPUs:
    hipcc (HIP-Clang) does not define __NVCC__; it defines __HIPCC__ and __HIP__. Code under
    `#ifdef __NVCC__` is skipped on AMD GPUs and its #else branch is compiled instead, which is
    often the intent (nvcc workarounds) but sometimes hides the GPU path.

    Example:
    #ifdef __NVCC__
      #pragma nv_diag_suppress 177
    #endif

    Fix:
    Check both branches: keep nvcc-only workarounds under __NVCC__, and test
    `defined(__NVCC__) || defined(__HIPCC__)` where the branch means "a GPU compiler".
    """
    data = ctx.data
    directives = directives_of(ctx)
    for m in ctx.code_matches(_COMPILER_MACRO):
        kind = macro_use_kind(data, directives, m.start(), m.end())
        d = directives.at(m.start())
        if (kind is None or hip_aware_directive(data, d)
                or not relevant_at(ctx, m.start(), directives)):
            continue
        yield Hit(m.start(), m.end(),
                  "`__NVCC__` selects code for the nvcc driver: hipcc does not define it "
                  "(it defines __HIPCC__), so on AMD GPUs the other branch is compiled",
                  "keep nvcc-only workarounds here; test `defined(__NVCC__) || "
                  "defined(__HIPCC__)` where any GPU compiler is meant")
