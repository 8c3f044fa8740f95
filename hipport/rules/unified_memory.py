"""unified-memory: managed allocations and the hints that steer page migration."""

from __future__ import annotations

from hipport.rules import Hit, rule
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

    Example:
    cudaMemAdvise(data, bytes, cudaMemAdviseSetReadMostly, loc);

    Fix:
    Keep the hints, but run with HSA_XNACK=1 where supported and re-measure; where the
    hints were a performance workaround, consider explicit allocations and copies.
    """
    for start, end, name, what in _uses(ctx, MANAGED_HINTS):
        yield Hit(start, end, f"`{name}`: managed-memory {what}; {XNACK}",
                  "run with HSA_XNACK=1 where supported and re-measure the effect of the hint")
