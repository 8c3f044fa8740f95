"""unified-memory: managed allocations and the hints that steer page migration."""

from __future__ import annotations

from hipport import regexes
from hipport.rewrite.calls import parse_call
from hipport.rules import Hit, rule
from hipport.rules import _syntax as sx
from hipport.rules.api_tables import identifier_uses

XNACK = ("on AMD GPUs, pages migrate on GPU page faults only where the GPU and driver support "
         "retrying faults (XNACK, e.g. MI200/MI300) and the process runs with HSA_XNACK=1; "
         "otherwise the memory stays where it was first placed and is accessed remotely, "
         "so performance can differ greatly from CUDA")

# What each name is; the rule reads this table, and deprecated-api/unsupported-api defer to it.
MANAGED_ALLOCATIONS = {
    "cudaMallocManaged": "managed allocation",
    "cuMemAllocManaged": "managed allocation",
    "__managed__": "managed variable",
}
MANAGED_HINTS = {
    "cudaMemPrefetchAsync": "prefetch", "cudaMemPrefetchAsync_v2": "prefetch",
    "cuMemPrefetchAsync": "prefetch", "cuMemPrefetchAsync_v2": "prefetch",
    "cudaMemAdvise": "memory advice", "cudaMemAdvise_v2": "memory advice",
    "cuMemAdvise": "memory advice", "cuMemAdvise_v2": "memory advice",
    "cudaStreamAttachMemAsync": "stream attachment", "cuStreamAttachMemAsync": "stream attachment",
}
MANAGED_NAMES = frozenset(MANAGED_ALLOCATIONS) | frozenset(MANAGED_HINTS)

# CUDA 12.2's _v2 forms, CUDA 13's plain ones: a cudaMemLocation where HIP (5.2 to 6.2) takes a
# device ordinal. Per name: the location's argument index, and the argument count only that
# form has (prefetch: `(ptr, n, location, flags[, stream])` against `(ptr, n, device[, stream])`).
LOCATION_ARGUMENT = {"cudaMemPrefetchAsync": (2, 5), "cuMemPrefetchAsync": (2, 5),
                     "cudaMemAdvise": (3, None), "cuMemAdvise": (3, None)}
# A declaration's declarators, to the end of the statement or of a parameter list; each one's
# name is its first word once brace initializers are dropped.
_LOCATION_DECLARATION = regexes.compile(rb"(?:cudaMemLocation|CUmemLocation)\s+([^;)]*)")
_BRACED = regexes.compile(rb"\{[^{}]*\}")
_DECLARED_NAME = regexes.compile(rb"[\s*&]*(?:const\s+)?([A-Za-z_]\w*)")
# A location written in place: `{cudaMemLocationTypeDevice, dev}`, `cudaMemLocation{...}`.
_LOCATION_IN_PLACE = regexes.compile(rb"\{|(?:cudaMemLocation|CUmemLocation)\b")


def _location_form(ctx, name: str, end: int) -> bool:
    """Whether the call of `name` ending its name at `end` is the form that takes a location."""
    where = LOCATION_ARGUMENT.get(name)
    call = parse_call(ctx.data, end) if where else None
    if call is None or len(call.args) <= where[0]:
        return False
    if len(call.args) == where[1]:
        return True
    s, e = call.args[where[0]]
    text = ctx.data[s:e]
    if _LOCATION_IN_PLACE.match(text):
        return True
    return text in sx.memo(ctx, "unified_memory.locations", _declared_locations)


def _declared_locations(ctx) -> set[bytes]:
    """The names declared as memory locations (`cudaMemLocation a, *b;`, a parameter), read
    from the text: a file with these calls is seldom otherwise parsed."""
    out = set()
    for m in _LOCATION_DECLARATION.finditer(ctx.data):
        for part in _BRACED.sub(b"", m.group(1)).split(b","):  # `a = {t, id}, b`: a and b
            name = _DECLARED_NAME.match(part)
            if name is not None:
                out.add(name.group(1))
    return out


def _uses(ctx, table: dict[str, str]):
    for start, end, name in identifier_uses(ctx, table):
        if ctx.mappings.unsupported_reason(name):
            continue  # no HIP equivalent at all: unsupported-api reports it
        yield start, end, name, table[name]


@rule(code="HP1001", name="managed-memory-allocation", category="unified-memory",
      severity="warning", effort="medium",
      triggers=tuple(n.encode() for n in MANAGED_ALLOCATIONS))
def managed_memory_allocation(ctx):
    """Reports managed (unified) memory: cudaMallocManaged, cuMemAllocManaged, __managed__.

    What it does:
    Flags managed allocations and __managed__ variables in code.

    Why it matters on AMD GPUs:
    HIP provides hipMallocManaged and __managed__, but on-demand page migration needs GPU
    page-fault retry (XNACK), available on e.g. MI200/MI300 and enabled with HSA_XNACK=1.
    Without it pages are not migrated on GPU access (and without HMM support hipMallocManaged
    returns pinned host memory), so programs that rely on oversubscription or on the CPU and
    GPU touching the same pages run much slower or fail.

    Example:
    cudaMallocManaged(&data, n * sizeof(float));

    Fix:
    Run with HSA_XNACK=1 on a GPU that supports it and check the hipDeviceAttributeManagedMemory
    and ConcurrentManagedAccess attributes, or switch hot buffers to explicit hipMalloc plus
    copies.
    """
    for start, end, name, what in _uses(ctx, MANAGED_ALLOCATIONS):
        yield Hit(start, end, f"`{name}`: {what}; {XNACK}",
                  "run with HSA_XNACK=1 on an XNACK-capable GPU and measure, or use explicit "
                  "device allocations and copies for performance-critical buffers")


@rule(code="HP1002", name="managed-memory-hint", category="unified-memory",
      severity="warning", effort="medium",
      triggers=tuple(n.encode() for n in MANAGED_HINTS))
def managed_memory_hint(ctx):
    """Reports prefetch, advice and stream-attach hints on managed memory.

    What it does:
    Flags cudaMemPrefetchAsync, cudaMemAdvise, cudaStreamAttachMemAsync and their driver-API
    forms.

    Why it matters on AMD GPUs:
    The calls map to hipMemPrefetchAsync, hipMemAdvise and hipStreamAttachMemAsync, but their
    effect depends on HMM and XNACK support: migration on page faults needs HSA_XNACK=1 on a
    GPU that supports it (e.g. MI200/MI300), and advice tuned for NVIDIA's driver may not give
    the same placement or speed.

    A call in CUDA 13's form (CUDA 12.2's _v2), which takes a cudaMemLocation (and, for a
    prefetch, flags) where HIP's functions take a device ordinal, is an error: it does not
    compile until the location is turned into a device.

    Example:
    cudaMemAdvise(data, bytes, cudaMemAdviseSetReadMostly, device);
    cudaMemPrefetchAsync(data, bytes, location, 0, stream);   // CUDA 13's form: an error

    Fix:
    Keep the hints, but run with HSA_XNACK=1 where supported and re-measure; where the
    hints were a performance workaround, consider explicit allocations and copies. For CUDA
    13's form, pass the location's device (`loc.id`, or hipCpuDeviceId for the host) and drop
    the prefetch's flags argument (CUDA requires it to be 0).
    """
    for start, end, name, what in _uses(ctx, MANAGED_HINTS):
        if name in LOCATION_ARGUMENT and _location_form(ctx, name, end):
            index = LOCATION_ARGUMENT[name][0] + 1
            yield Hit(start, end, f"`{name}`: CUDA 13's form passes a memory location (argument {index}); "
                                  f"HIP's function takes a device ordinal there; {XNACK}",
                      "pass the location's device (`loc.id`, or hipCpuDeviceId for the host)"
                      + (" and drop the flags argument (CUDA requires 0)" if "Prefetch" in name else ""),
                      severity="error")
            continue
        yield Hit(start, end, f"`{name}`: managed-memory {what}; {XNACK}",
                  "run with HSA_XNACK=1 where supported and re-measure the effect of the hint")
