"""unsupported-api and deprecated-api: two generic rules that read the mapping tables.

Neither rule has an API list of its own: `Mappings.unsupported_reason()` says whether a CUDA name
has a HIP equivalent at the target version, and the table rows carry the CUDA and HIP
deprecation versions. What this module adds is *where* a name counts as a use (the same places
the renamer rewrites: code, not members, qualified names, token pastes, the file's own
declarations or macros) and which names another category reports instead (DEFERRED below), so
that one construct gets one finding.

The helpers at the top (directive lookup, identifier uses) are shared by the other rule modules
of this package that scan C/C++ sources.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator
from functools import lru_cache

from hipport import regexes
from hipport.mappings import Entry, Mappings, parse_version
from hipport.parse.declarations import certainly_declares, may_be_declarator, own_among
from hipport.parse.lexer import Lexed
from hipport.rewrite.calls import NAMESPACE_ONLY, UNTAG, Site, parse_call, ports_unmapped, transform_for
from hipport.rewrite.names import _context
from hipport.rules import Hit, rule
from hipport.rules import _syntax as sx

# ---------------------------------------------------------------------------------------------
# shared helpers for C/C++ sources

# Directives whose text is not code that runs or selects code: a name there is no use of an API.
PROSE_DIRECTIVES = frozenset({b"error", b"warning", b"pragma", b"line", b"ident", b"include",
                              b"include_next", b"import", b"undef"})


def relevant_at(ctx, offset: int, directives: "Directives") -> bool:
    """sx.relevant(), but a name on an #if/#elif line is judged by the code around the block,
    not by the branch that the directive itself opens (`#ifdef __NVCC__` is relevant even
    though hipcc never compiles the branch it opens)."""
    opener = directives.block_start(offset)
    if opener is None:
        return sx.relevant(ctx, offset)
    return not (sx.cuda_excluded(ctx, opener - 1) or sx.hip_excluded(ctx, opener - 1)) \
        if opener > 0 else True


class Directives:
    """The directives of one file by position: which one (if any) a byte offset sits in."""

    def __init__(self, lexed: Lexed):
        self.items = [(d.start, end, d.name) for d, end in zip(lexed.directives, lexed.directive_ends)]
        self._starts = [s for s, _, _ in self.items]
        self._lexed = lexed
        self._openers: dict[int, int] | None = None
        self._define_names: set[int] | None = None

    def block_start(self, offset: int) -> int | None:
        """For an offset on a conditional directive line (#if ... #else), the start of the
        `#if` that opens its block; None elsewhere."""
        i = bisect.bisect_right(self._starts, offset) - 1
        if i < 0 or offset > self.items[i][1] or self.items[i][2] not in sx.CONDITIONAL_DIRECTIVES:
            return None
        d = self._lexed.directives[i]
        if not d.branch:
            return None
        if self._openers is None:
            self._openers = {}
            for e in self._lexed.directives:
                if e.branch and e.branch[-1][1] == 0:
                    self._openers.setdefault(e.branch[-1][0], e.start)
        return self._openers.get(d.branch[-1][0])

    def at(self, offset: int) -> tuple[int, int, bytes] | None:
        i = bisect.bisect_right(self._starts, offset) - 1
        if i >= 0 and offset <= self.items[i][1]:
            return self.items[i]
        return None

    def defines_name_at(self, offset: int) -> bool:
        """Whether `offset` is the macro name of a `#define NAME ...`."""
        if self._define_names is None:
            self._define_names = {m.name_start for m in self._lexed.defines}
        return offset in self._define_names


def identifier_uses(ctx, names) -> Iterator[tuple[int, int, str]]:
    """(start, end, name) for each use in code of a candidate identifier in `names` (any
    container of str), skipping what the renamer skips (members, qualified names, pastes, the
    file's own declarations and macros), names in prose directives (#error, #pragma, ...) or
    being #defined, and code that hipcc never compiles (`#ifndef __HIP_PLATFORM_AMD__` branches,
    `#if 0`): there the project has already split the platforms."""
    lexed = ctx.lexed
    hits = [t for t, word in zip(lexed.identifiers, lexed.words) if word in names]
    if not hits:
        return
    own = own_among(lexed, [t.start for t in hits], lambda: ctx.declared)
    macros = lexed.defined_names
    directives = directives_of(ctx)
    for tok in hits:
        if tok.start in own or tok.text in macros or _context(lexed, tok.start, tok.end):
            continue
        d = directives.at(tok.start)
        if d is not None and (d[2] in PROSE_DIRECTIVES or directives.defines_name_at(tok.start)):
            continue
        if not relevant_at(ctx, tok.start, directives):
            continue
        yield tok.start, tok.end, tok.text.decode("ascii")


def table_words(ctx) -> list[str]:
    """The distinct candidate words of the file that the tables know (once per file)."""
    def compute(c):
        known = c.mappings.entries.keys()  # a view that tests membership in C, made once
        return [w for w in set(c.lexed.words) if w in known]
    return sx.memo(ctx, "api_tables.table_words", compute)


def table_name_uses(ctx, wanted: Callable[[Mappings, str, Entry], bool]) -> list[tuple[int, int, str, Entry]]:
    """identifier_uses() of the table names that `wanted(mappings, name, entry)` accepts (a
    module-level function; Mappings.wanted keeps its answers), with their entries. The names
    are chosen first, once per distinct word: most uses of table names are of names a rule
    has nothing to say about, and a use costs more to vet than a name."""
    mappings = ctx.mappings
    names = mappings.wanted(wanted, table_words(ctx))
    entries = mappings.entries
    return [(s, e, n, entries[n]) for s, e, n in identifier_uses(ctx, names)] if names else []


def directives_of(ctx) -> "Directives":
    """The file's Directives index (computed once per file)."""
    return sx.memo(ctx, "api_tables.directives", lambda c: Directives(c.lexed))


HIP_AWARE = regexes.compile(rb"\b(?:__HIP_PLATFORM_AMD__|__HIP_PLATFORM_HCC__|__HIPCC__|__HIP__"
                       rb"|__HIP_DEVICE_COMPILE__|USE_ROCM|HIP_VERSION|TORCH_HIP_VERSION"
                       rb"|ROCM_VERSION)\b")


def hip_aware_directive(data: bytes, directive: tuple[int, int, bytes] | None) -> bool:
    """Whether a directive already tests a HIP/ROCm macro (the project handles AMD there)."""
    return directive is not None and HIP_AWARE.search(data, directive[0], directive[1]) is not None


# Where a name is the declarator of the file's own function, variable, function pointer, array
# or typedef (at any scope): the parent node types, by the name's node type.
_DECLARED_IN = {
    "identifier": frozenset({"function_declarator", "init_declarator", "declaration",
                             "pointer_declarator", "array_declarator"}),
    "type_identifier": frozenset({"type_definition"}),
}


def declared_names(ctx, names) -> set[str]:
    """Those of `names` that the file declares itself, at any scope: there they are the
    project's own entities, not the CUDA API. Asked of the tree only where the names occur,
    only for names that stand somewhere a declarator may, and not for a name that a plain
    file-scope declaration certainly declares (certainly_declares)."""
    lexed = ctx.lexed
    certain: set[str] = set()
    ask: set[str] = set()  # names none of whose places so far is certainly a declarator
    for t, w in zip(lexed.identifiers, lexed.words):
        if w in names and w not in certain and may_be_declarator(lexed, t.start):
            if certainly_declares(lexed, t.start):
                certain.add(w)
            else:
                ask.add(w)
    return certain | tree_declared_names(ctx, ask - certain)


def tree_declared_names(ctx, names) -> set[str]:
    """declared_names() as the tree alone tells it (no pre-check)."""
    out = set()
    for node in sx.nodes_named(ctx, names, types=tuple(_DECLARED_IN)):
        parent = node.parent
        if parent is not None and parent.type in _DECLARED_IN[node.type] and any(
                d.id == node.id for d in parent.children_by_field_name("declarator")):
            out.add(sx.text(node))
    return out


# ---------------------------------------------------------------------------------------------
# names and headers that a more specific category reports

DEFERRED_NAMES: dict[str, frozenset[str]] = {
    # warp-mask / warp-size rules own the warp intrinsics, masked or not
    "warp-mask": frozenset(
        "__shfl __shfl_up __shfl_down __shfl_xor __shfl_sync __shfl_up_sync __shfl_down_sync "
        "__shfl_xor_sync __ballot __ballot_sync __any __any_sync __all __all_sync __activemask "
        "__syncwarp __match_any_sync __match_all_sync __reduce_add_sync __reduce_min_sync "
        "__reduce_max_sync __reduce_and_sync __reduce_or_sync __reduce_xor_sync".split()),
    # texture-reference rules own the legacy reference API
    "texture-reference": frozenset(
        "texture surface textureReference surfaceReference CUtexref CUsurfref cudaBindTexture "
        "cudaBindTexture2D "
        "cudaBindTextureToArray cudaBindTextureToMipmappedArray cudaUnbindTexture "
        "cudaGetTextureReference cudaGetTextureAlignmentOffset cudaBindSurfaceToArray "
        "cudaGetSurfaceReference cuModuleGetTexRef cuModuleGetSurfRef".split()),
    # dynamic-parallelism rules own the device runtime
    "dynamic-parallelism": frozenset(
        "cudaLaunchDevice cudaGetParameterBuffer cudaGetParameterBufferV2 "
        "cudaLaunchDeviceV2".split()),
}
DEFERRED_PREFIXES: dict[str, tuple[str, ...]] = {
    "texture-reference": ("cuTexRef", "cuSurfRef"),
    # generic <-> state-space address conversions exist to feed inline PTX (cp.async, ldmatrix)
    "inline-ptx": ("__cvta_",),
    # tensor-memory-accelerator descriptors (TMA) belong with the async-copy rules
    "async-copy": ("CUtensorMap", "cuTensorMap", "CU_TENSOR_MAP_", "__pipeline_"),
}
DEFERRED_SECTIONS: dict[str, tuple[str, ...]] = {
    "texture-reference": ("Texture Reference Management", "Surface Reference Management"),
}
DEFERRED_HEADERS: dict[str, tuple[str, ...]] = {
    "tensor-core": ("mma.h",),
    "async-copy": ("cuda_pipeline.h", "cuda_pipeline_primitives.h", "cuda_awbarrier.h",
                   "cuda_awbarrier_primitives.h", "cuda/"),
    "cooperative-groups": ("cooperative_groups/",),
}


GENERIC_CATEGORIES = frozenset({"unsupported-api", "deprecated-api"})
_RISK_CACHE: dict[int, tuple[object, dict[str, frozenset[str]]]] = {}


def risk_names(mappings, category: str) -> frozenset[str]:
    """The names whose mapping-table row names `category` in its risk column."""
    entries = mappings.entries
    cached = _RISK_CACHE.get(id(entries))
    if cached is None or cached[0] is not entries:
        by_risk: dict[str, set[str]] = {}
        for name, risk in entries.risks.items():
            by_risk.setdefault(risk, set()).add(name)
        cached = (entries, {k: frozenset(v) for k, v in by_risk.items()})
        _RISK_CACHE[id(entries)] = cached  # holds `entries`, so the id is not reused
    return cached[1].get(category, frozenset())


def deferred_category(name: str, entry: Entry | None) -> str | None:
    """The category whose rules report `name`, when it is not a generic table finding: the
    row's `risk` column when it names another category, else the tables above."""
    if entry is not None and entry.risk and entry.risk not in GENERIC_CATEGORIES:
        return entry.risk
    for category, names in DEFERRED_NAMES.items():
        if name in names:
            return category
    for category, prefixes in DEFERRED_PREFIXES.items():
        if name.startswith(prefixes):
            return category
    if entry is not None:
        for category, sections in DEFERRED_SECTIONS.items():
            if entry.section.startswith(sections):
                return category
    return None


@lru_cache(maxsize=1)
def _specific_rule_matchers():
    """Names this package's specific rules report although they map (library-semantics,
    unified-memory, arch-macro): deprecated-api leaves them to those rules."""
    # Imported here: those modules import the helpers above.
    from hipport.rules import arch_macro, library_semantics, unified_memory  # noqa: PLC0415

    exact = set(unified_memory.MANAGED_NAMES) | set(arch_macro.CAPABILITY_NAMES)
    return frozenset(exact), library_semantics.name_pattern()


def _device_runtime_call(ctx, offset: int, entry: Entry) -> bool:
    """A CUDA runtime/driver API used inside device code: dynamic-parallelism reports those."""
    return entry.library in ("runtime", "driver") and entry.kind == "function" and \
        sx.in_device_code(ctx, offset)


def reported_by_specific_rule(name: str) -> bool:
    exact, pattern = _specific_rule_matchers()
    return name in exact or pattern.fullmatch(name) is not None


# ---------------------------------------------------------------------------------------------
# unsupported-api

_LIBRARY_LABEL = {
    "runtime": "CUDA runtime", "driver": "CUDA driver", "device": "CUDA device", "complex":
    "cuComplex", "cublas": "cuBLAS", "curand": "cuRAND", "cufft": "cuFFT", "cusparse":
    "cuSPARSE", "cusolver": "cuSOLVER", "cudnn": "cuDNN", "cub": "CUB", "nvrtc": "NVRTC",
    "device_math": "CUDA device", "numeric_types": "CUDA numeric-type", "nccl": "NCCL",
    "nvtx": "NVTX", "cg": "cooperative-groups", "thrust": "Thrust", "macros": "CUDA macro",
    "warp": "CUDA warp", "torch_extra": "PyTorch CUDA",
}
_VERSION_LABEL = {"cudnn": "cuDNN"}  # the versions in the cuDNN table are cuDNN releases


def _fix_for(reason: str, entry: Entry) -> str:
    note = entry.note.strip() if entry.note.strip() != reason else ""
    if reason.startswith("added in"):
        fix = ("raise --target-hip to that release, or keep this call out of the HIP build "
               "(#if HIP_VERSION >= ...) and provide a fallback")
    elif reason.startswith("experimental"):
        fix = "pass --experimental to map it anyway, or rewrite without it"
    elif reason.startswith("removed in"):
        fix = "lower --target-hip, or rewrite with the API that replaced it"
    elif entry.library == "cudnn":
        fix = "rewrite this part against MIOpen's API (no MIOpen function takes its place)"
    else:
        fix = ("rewrite this part for HIP, or guard it with #if !defined(__HIP_PLATFORM_AMD__) "
               "and provide an AMD path")
    return f"{fix}; table note: {note}" if note else fix


@rule(code="HP501", name="api-without-hip-equivalent", category="unsupported-api",
      severity="error", effort="medium")
def api_without_hip_equivalent(ctx):
    """Reports a CUDA API that the mapping tables know but that has no HIP equivalent.

    What it does:
    Looks up every identifier in code in the mapping tables and reports those that do not map at
    the chosen settings: no HIP (or MIOpen) equivalent at all, added after the --target-hip
    version, removed at or before it, marked experimental without --experimental, or marked
    unsupported-api in the table's risk column. It skips the names the renamer skips (members,
    qualified names, token pastes, the file's own declarations and macros), names whose row
    assigns them to another category (risk column, or warp/texture/device-runtime names those
    rules own), runtime calls inside device code (dynamic parallelism), and code hipcc never
    compiles (#ifndef __HIP_PLATFORM_AMD__ branches). It also reports includes of CUDA headers
    that have no HIP header.

    Why it matters on AMD GPUs:
    hipport leaves such a name unchanged, so the ported file refers to a CUDA API that the HIP
    headers do not declare: it does not compile until the call is rewritten by hand.

    Example:
    cudaEventRecordWithFlags(ev, stream, cudaEventRecordExternal);   // no HIP equivalent

    Fix:
    Rewrite the code with APIs HIP has, choose a newer --target-hip when the API appeared in a
    later HIP release, or keep the CUDA-only path out of the HIP build behind a platform guard.
    """
    target = ctx.mappings.target_hip
    unsupported = []
    for start, end, name, entry in table_name_uses(ctx, _maybe_unsupported):
        reason = ctx.mappings.unsupported_reason(name)
        if not reason and entry.risk == "unsupported-api":
            reason = entry.note.strip() or "the tables mark it unsupported"
        if reason and not _device_runtime_call(ctx, start, entry) and not _ported_below_its_row(ctx, name, end):
            unsupported.append((start, end, name, entry, reason))
    own = declared_names(ctx, {u[2] for u in unsupported}) if unsupported else set()
    for start, end, name, entry, reason in unsupported:
        if name in own:
            continue  # the file defines its own function or variable of that name
        label = _LIBRARY_LABEL.get(entry.library, "CUDA")
        yield Hit(start, end, f"{label} API `{name}` cannot be ported: {reason}",
                  _fix_for(reason, entry))
    yield from _unsupported_includes(ctx, target)


def _maybe_unsupported(mappings: Mappings, name: str, entry: Entry) -> bool:
    """What unsupported-api may report, told from the name alone (another category's names
    are that category's rules')."""
    return (bool(mappings.unsupported_reason(name)) or entry.risk == "unsupported-api") \
        and deferred_category(name, entry) is None


def _ported_below_its_row(ctx, name: str, end: int) -> bool:
    """Whether the call of `name` is one its transform ports where the row has no HIP name at
    the target (cuGetErrorString below HIP 5.4): asked of the transform itself."""
    spec = ctx.mappings.transforms.get(name)
    if not spec or spec in (NAMESPACE_ONLY, UNTAG) or not ports_unmapped(spec):
        return False
    call = parse_call(ctx.data, end)
    return call is not None and transform_for(spec)(
        Site(ctx.data, name, "", call, ctx.mappings.target_hip)).name != name


def _unsupported_includes(ctx, target) -> Iterator[Hit]:
    m = ctx.mappings
    for d in ctx.lexed.includes:
        path = d.path(ctx.data).decode("utf-8", "replace")
        if path not in m.include_library or path in m.includes or sx.hip_excluded(ctx, d.start):
            continue
        if any(path == h or (h.endswith("/") and path.startswith(h))
               for hs in DEFERRED_HEADERS.values() for h in hs):
            continue
        lib = m.include_library[path]
        yield Hit(d.path_start, d.path_end,
                  f"CUDA header <{path}> has no HIP header at target HIP "
                  f"{target[0]}.{target[1]}",
                  f"remove the include and rewrite what the file uses from it ({lib}); "
                  "see mappings/includes.tsv for the note on this header")


# ---------------------------------------------------------------------------------------------
# deprecated-api


def _at_or_below(version: str, target: tuple[int, int]) -> bool:
    v = parse_version(version)
    return v is not None and (v[0], v[1] if len(v) > 1 else 0) <= target


# Libraries whose deprecated-but-present CUDA API is exactly what the ROCm library implements:
# cuDNN 9 deprecated much of its descriptor-based (legacy) API, which is the API MIOpen provides,
# so a cuDNN deprecation alone is no porting issue.
LEGACY_IS_PORT_TARGET = frozenset({"cudnn"})

# Replacement advice by name prefix; the first match wins.
DEPRECATION_ADVICE: tuple[tuple[str, str], ...] = (
    ("cuCtx", "HIP deprecates its context API: select the device with hipSetDevice and use the "
              "device's primary context implicitly"),
    ("cuDevicePrimaryCtx", "HIP deprecates its context API: select the device with "
                           "hipSetDevice and let the runtime manage the primary context"),
    ("cudaProfiler", "mark regions with roctx (roctxRangePush/Pop) and control collection from "
                     "the ROCm profiler instead"),
    ("cuProfiler", "mark regions with roctx (roctxRangePush/Pop) and control collection from "
                   "the ROCm profiler instead"),
    ("cudaThread", "use the cudaDevice* function of the same name (cudaThreadSynchronize -> "
                   "cudaDeviceSynchronize, ...)"),
    ("cudaDeviceSetSharedMemConfig", "drop it: the bank-size setting has no effect on current "
                                     "GPUs (CUDA deprecated the call)"),
    ("cudaDeviceGetSharedMemConfig", "drop it: the bank-size setting has no effect on current "
                                     "GPUs (CUDA deprecated the call)"),
    ("cudaFuncSetSharedMemConfig", "drop it: the bank-size setting has no effect on current "
                                   "GPUs (CUDA deprecated the call)"),
)


def _deprecations(mappings: Mappings, entry: Entry) -> tuple[str, str]:
    """The HIP deprecation that counts at the target, and the CUDA one that counts."""
    hip_dep = entry.hip_deprecated if _at_or_below(entry.hip_deprecated, mappings.target_hip) else ""
    return hip_dep, entry.cuda_deprecated if entry.library not in LEGACY_IS_PORT_TARGET else ""


def _maybe_deprecated(mappings: Mappings, name: str, entry: Entry) -> bool:
    """What deprecated-api may report, told from the name alone: a use is then dropped only
    where it is a device-runtime call."""
    if mappings.unsupported_reason(name):
        return False  # unsupported-api reports it
    hip_dep, cuda_dep = _deprecations(mappings, entry)
    if not (hip_dep or entry.cuda_removed or cuda_dep or entry.risk == "deprecated-api"):
        return False
    return not (deferred_category(name, entry) or reported_by_specific_rule(name))


def _deprecation_advice(name: str, hip_dep: str) -> str:
    for prefix, advice in DEPRECATION_ADVICE:
        if name.startswith(prefix):
            return advice
    if hip_dep:
        return "move to the API HIP recommends in place of it before HIP removes it"
    return "replace it with the current CUDA API before porting; HIP maps that one too"


@rule(code="HP551", name="deprecated-or-removed-api", category="deprecated-api",
      severity="warning", effort="low")
def deprecated_or_removed_api(ctx):
    """Reports a mapped API that CUDA deprecated or removed, or that HIP deprecated.

    What it does:
    For each identifier in code that the tables map to HIP, reads the CUDA row's deprecated and
    removed versions and the HIP name's deprecated version. A HIP deprecation at or below the
    --target-hip version, a CUDA removal, or a row whose risk column says deprecated-api is a
    warning; a CUDA deprecation alone is info (HIP still provides the call), and is not
    reported for cuDNN, whose deprecated legacy API is what MIOpen implements. Names that a
    specific rule reports (library semantics,
    managed memory, compute-capability queries, texture references, warp intrinsics) are left
    to that rule.

    Why it matters on AMD GPUs:
    hipport maps the call, but a HIP-deprecated API may disappear in the next ROCm release, and a
    CUDA-removed one usually means the code predates the current API and its HIP counterpart is
    kept only for compatibility.

    Example:
    cudaThreadSynchronize();   // deprecated since CUDA 10.0, becomes hipDeviceSynchronize

    Fix:
    Move to the API that replaced it (cudaDeviceSynchronize for cudaThreadSynchronize, the
    primary-context API for cuCtxCreate, ...) before or while porting.
    """
    for start, end, name, entry in table_name_uses(ctx, _maybe_deprecated):
        if _device_runtime_call(ctx, start, entry):
            continue
        hip_dep, cuda_dep = _deprecations(ctx.mappings, entry)
        marked = entry.risk == "deprecated-api"
        vendor = _VERSION_LABEL.get(entry.library, "CUDA")
        hip_name = ctx.mappings.names.get(name, entry.hip or name)
        if entry.cuda_removed:
            cuda_part = f"removed in {vendor} {entry.cuda_removed}"
        elif cuda_dep:
            cuda_part = f"deprecated since {vendor} {cuda_dep}"
        elif marked:
            cuda_part = "deprecated (" + (entry.note.strip() or "marked in the tables") + ")"
        else:
            cuda_part = ""
        if cuda_part and hip_dep:
            message = (f"`{name}` is {cuda_part}, and its HIP counterpart `{hip_name}` is "
                       f"deprecated since HIP {hip_dep}")
        elif hip_dep:
            message = f"`{name}` maps to `{hip_name}`, which is deprecated since HIP {hip_dep}"
        else:
            message = f"`{name}` is {cuda_part} (hipport maps it to `{hip_name}`)"
        severity = "" if (hip_dep or entry.cuda_removed or marked) else "info"
        suggestion = _deprecation_advice(name, hip_dep)
        if entry.note.strip() and not marked:
            suggestion += f"; table note: {entry.note.strip()}"
        yield Hit(start, end, message, suggestion, severity)


# ---------------------------------------------------------------------------------------------
# how a macro is used (shared by arch-macro, version-macro and pytorch-extension)

_DEFINED_BEFORE = regexes.compile(rb"\bdefined\s*\(?\s*\Z")
_OP_BEFORE = regexes.compile(rb"(?:[=!<>]=|[<>+*/%-])\s*\Z")
_OP_AFTER = regexes.compile(rb"\s*(?:[=!<>]=|[<>+*/%-])")
_CONDITIONAL = frozenset({b"if", b"elif"})
_DEFINED_TESTS = frozenset({b"ifdef", b"ifndef", b"elifdef", b"elifndef"})


def macro_use_kind(data: bytes, directives: Directives, start: int, end: int) -> str | None:
    """How the macro name at data[start:end] is used:

    - "defined": `#ifdef X`, `#ifndef X`, `defined(X)`: only whether it exists;
    - "truthy": `#if X` / `#if !X` / `#elif X && ...`: non-zero, which is `defined` for a macro
      that is either undefined or a positive number;
    - "value": compared, computed with, or used as a value in code or a #define body;
    - None: not a use (a prose directive such as #error, #undef, or the name being #defined).
    """
    d = directives.at(start)
    if d is not None:
        if d[2] in PROSE_DIRECTIVES or directives.defines_name_at(start):
            return None
        if d[2] in _DEFINED_TESTS:
            return "defined"
    before = data[max(0, start - 64) : start]
    if _DEFINED_BEFORE.search(before):
        return "defined"
    if _OP_AFTER.match(data, end) or _OP_BEFORE.search(before):
        return "value"
    if d is not None and d[2] in _CONDITIONAL:
        return "truthy"
    return "value"
