"""cooperative-groups: features beyond HIP's cooperative-groups subset, cluster groups, and
grid-wide syncs in files that never launch a kernel cooperatively."""

from __future__ import annotations

import re
from collections.abc import Iterator

from hipport import regexes
from hipport.parse import IS_SPACE_BYTE
from hipport.rules import Hit, rule
from hipport.rules import _syntax as sx

# Not provided by HIP's cooperative groups (HIP documents these as unsupported).
MISSING = {
    "wait": "cg::wait (pairs with CUDA's asynchronous memcpy_async)",
    "wait_prior": "cg::wait_prior",
    "invoke_one": "cg::invoke_one", "invoke_one_broadcast": "cg::invoke_one_broadcast",
    "reduce_update_async": "cg::reduce_update_async", "reduce_store_async": "cg::reduce_store_async",
    "synchronize": "cg::synchronize", "labeled_partition": "cg::labeled_partition",
    "block_tile_memory": "cg::block_tile_memory (tiles larger than a warp)",
}
# In recent ROCm only (absent from older HIP such as 5.2), or with different behaviour.
RECENT = {
    "memcpy_async": "HIP's cooperative_groups::memcpy_async is recent and completes "
                    "synchronously (no copy/compute overlap)",
    "reduce": "cooperative_groups::reduce exists only in recent HIP (hip/cooperative_groups "
              "reduce header)",
    "inclusive_scan": "cooperative_groups scans exist only in recent HIP",
    "exclusive_scan": "cooperative_groups scans exist only in recent HIP",
    "meta_group_rank": "meta_group_rank() is missing from older HIP releases (e.g. 5.2)",
    "meta_group_size": "meta_group_size() is missing from older HIP releases (e.g. 5.2)",
    "binary_partition": "binary_partition is missing from older HIP releases and needs the "
                        "warp-sync builtins (HIP 6.2+)",
}
RECENT_HEADERS = {b"cooperative_groups/reduce.h", b"cooperative_groups/scan.h",
                  b"cooperative_groups/memcpy_async.h"}
CLUSTER = {"this_cluster", "cluster_group", "__cluster_dims__", "cudaLaunchAttributeClusterDimension",
           "cudaFuncAttributeRequiredClusterWidth", "cudaFuncAttributeNonPortableClusterSizeAllowed",
           "cudaOccupancyMaxActiveClusters", "cudaOccupancyMaxPotentialClusterSize",
           "CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION"}
COOPERATIVE_LAUNCH = regexes.compile(
    rb"\b(?:cudaLaunchCooperativeKernel(?:MultiDevice)?|cudaLaunchAttributeCooperative|"
    rb"cuLaunchCooperativeKernel(?:MultiDevice)?|CU_LAUNCH_ATTRIBUTE_COOPERATIVE|"
    rb"hipLaunchCooperativeKernel(?:MultiDevice)?|hipModuleLaunchCooperativeKernel\w*|"
    rb"hipLaunchAttributeCooperative)\b")

_ALIAS = regexes.compile(sx.word_start(b"namespace") + rb"\s+(\w+)\s*=\s*(?:::\s*)?cooperative_groups\s*;")
_USING = regexes.compile(sx.word_start(b"using") + rb"\s+namespace\s+(?:::\s*)?cooperative_groups\s*;")
# `.meta_group_rank(` / `->meta_group_size (`: the name first (re searches a leading literal
# fast), the `.` or `->` before it checked by _member_calls.
_MEMBER = regexes.compile(rb"(meta_group_(?:rank|size))\s*\(")
_CG_USED = regexes.compile(rb"cooperative_groups")
_SYNC = frozenset({"sync"})
_SYNC_WORDS = sx.words_finder(_SYNC)
_THIS_GRID = frozenset({"this_grid", "this_multi_grid"})
_THIS_GRID_WORDS = sx.words_finder(_THIS_GRID)


def _namespaces(ctx) -> tuple[set[bytes], bool]:
    return sx.memo(ctx, "cg_namespaces", _compute_namespaces)


def _compute_namespaces(ctx) -> tuple[set[bytes], bool]:
    names = {b"cooperative_groups"}
    names |= {m.group(1) for m in ctx.code_matches(_ALIAS)}
    using = any(sx.relevant(ctx, m.start()) for m in ctx.code_matches(_USING))
    return names, using


def _alternation(words) -> bytes:
    return b"|".join(re.escape(w.encode()) for w in sorted(words, key=len, reverse=True))


# HP801/HP802's pre-check: every name they flag is written `cooperative_groups::name`, with
# an alias of the namespace, after `using namespace cooperative_groups`, or as a member in a
# file that names it; and the headers are `cooperative_groups/...`.
_CG_TRIGGERS = (b"cooperative_groups",)
_MISSING_WORDS = _alternation(MISSING)
_RECENT_WORDS = _alternation(RECENT)
_CLUSTER = sx.whole_word_patterns(CLUSTER)


def _cg_names(ctx, table, words: bytes) -> list[tuple[int, int, str]]:
    """(start, end, name) of table names written as ns::name (a CG namespace), bare after
    `using namespace cooperative_groups`, or as a member call for meta_group_*.
    `words`: _alternation(table)."""
    names, using = _namespaces(ctx)
    out = []
    for n in sorted(names):  # `ns::name`, one pattern per namespace name (sx.word_start)
        qualified = re.compile(sx.word_start(n) + rb"\s*::\s*(" + words + rb")\b")
        for m in ctx.code_matches(qualified):
            out.append((m.start(), m.end(), m.group(1).decode()))
    if using:
        bare = re.compile(rb"(?<![\w:.>])(" + words + rb")\s*[<(]")
        for m in ctx.code_matches(bare):
            out.append((m.start(), m.start() + len(m.group(1)), m.group(1).decode()))
    if _CG_USED.search(ctx.data):
        for m in _member_calls(ctx):
            if m.group(1).decode() in table:
                out.append((m.start(1), m.end(1), m.group(1).decode()))
    return sorted(o for o in out if sx.relevant(ctx, o[0]))


def _member_calls(ctx) -> Iterator[re.Match[bytes]]:
    """_MEMBER's matches in code that a `.` or `->` (spaces between) comes right before."""
    data = ctx.data
    for m in ctx.code_matches(_MEMBER):
        i = m.start()
        while i > 0 and data[i - 1] in IS_SPACE_BYTE:
            i -= 1
        if data[i - 1 : i] == b"." or data[max(0, i - 2) : i] == b"->":
            yield m



@rule(code="HP801", name="cooperative-groups-api-not-in-hip", category="cooperative-groups",
      severity="error", effort="medium",
      triggers=_CG_TRIGGERS)
def cg_api_not_in_hip(ctx):
    """Flags cooperative-groups functions that HIP does not provide.

    What it does:
    Reports `cg::wait`, `cg::wait_prior`, `cg::invoke_one`, `cg::invoke_one_broadcast`,
    `cg::reduce_update_async`, `cg::reduce_store_async`, `cg::synchronize`,
    `cg::labeled_partition` and `cg::block_tile_memory`, written with `cooperative_groups::`,
    a namespace alias of it, or bare after `using namespace cooperative_groups`.

    Why it matters on AMD GPUs:
    HIP implements a subset of CUDA's cooperative groups; its documentation lists the
    asynchronous wait functions, `invoke_one*` and the asynchronous reduce-update/store
    functions as unsupported, and its headers have no `labeled_partition` or
    `block_tile_memory`. The code does not compile with hipcc.

    Example:
    cg::memcpy_async(block, smem, gmem, bytes);
    cg::wait(block);

    Fix:
    `cg::wait` after HIP's (synchronous) `memcpy_async` is unnecessary: use `block.sync()`;
    replace `invoke_one` with `if (g.thread_rank() == 0)` plus a shuffle broadcast,
    `labeled_partition` with `__match_any` masks, and keep tiles within the wavefront size.
    """
    for start, end, name in _cg_names(ctx, MISSING, _MISSING_WORDS):
        yield Hit(start, end, f"`{MISSING[name]}`: not provided by HIP's cooperative groups",
                  "Rewrite with the HIP subset: block.sync() instead of cg::wait, an explicit "
                  "thread_rank() == 0 branch plus shfl for invoke_one, __match_any masks for "
                  "labeled_partition.")


@rule(code="HP802", name="cooperative-groups-api-recent-hip-only", category="cooperative-groups",
      severity="warning", effort="medium",
      triggers=_CG_TRIGGERS)
def cg_api_recent_hip_only(ctx):
    """Flags cooperative-groups features HIP added only recently or implements differently.

    What it does:
    Reports `cg::memcpy_async`, `cg::reduce`, `cg::inclusive_scan`/`exclusive_scan`,
    `meta_group_rank()`/`meta_group_size()`, `cg::binary_partition`, and includes of
    `<cooperative_groups/reduce.h>`, `<cooperative_groups/scan.h>`,
    `<cooperative_groups/memcpy_async.h>`.

    Why it matters on AMD GPUs:
    Older HIP releases (e.g. HIP 5.2 as packaged by Debian) lack these; recent ROCm ships
    them under HIP's own header names (`hip/cooperative_groups/...`), and HIP's
    `memcpy_async` returns after the copy is done, so code relying on copy/compute overlap
    loses it.

    Example:
    #include <cooperative_groups/reduce.h>
    int sum = cg::reduce(tile, v, cg::plus<int>());

    Fix:
    Require a ROCm release that has them and include the HIP headers, or write the reduction
    with `tile.shfl_down`/`__shfl_xor` and compute the meta rank as
    `block.thread_rank() / tile.size()`.
    """
    for d, path in sx.live_includes(ctx):
        if path.strip() in RECENT_HEADERS and sx.relevant(ctx, d.start):
            yield Hit(d.start, d.path_end,
                      f"`#include <{path.decode()}>`: only recent HIP has this, under "
                      "hip/cooperative_groups/...", "Include the HIP header for the target ROCm "
                      "release, or implement the operation with tile shuffles.")
    for start, end, name in _cg_names(ctx, RECENT, _RECENT_WORDS):
        yield Hit(start, end, f"`{name}`: {RECENT[name]}",
                  "Check the target ROCm release provides it, or implement it with tile "
                  "shuffles / thread_rank() arithmetic.")


@rule(code="HP803", name="thread-block-cluster", category="cooperative-groups", severity="error",
      effort="high",
      triggers=tuple(n.encode() for n in CLUSTER))
def thread_block_cluster(ctx):
    """Flags thread-block clusters: `this_cluster()`, `cluster_group`, `__cluster_dims__`.

    What it does:
    Reports cluster groups (`cg::this_cluster()`, `cg::cluster_group`), the
    `__cluster_dims__` kernel attribute and the runtime's cluster launch attributes
    (`cudaLaunchAttributeClusterDimension`, `cudaFuncAttributeRequiredClusterWidth`,
    `cudaOccupancyMaxActiveClusters`), once per line.

    Why it matters on AMD GPUs:
    Clusters (distributed shared memory across blocks) are an sm_90 feature. Most HIP
    releases have no cluster API, and AMD's Instinct (CDNA) GPUs have no clusters; only the
    newest HIP has a `cluster_group`, for devices that report `hipDeviceProp_t::clusterLaunch`.

    Example:
    auto cluster = cg::this_cluster();
    float* peer = cluster.map_shared_rank(smem, 1);

    Fix:
    Restructure so blocks do not share shared memory: exchange data through global memory
    (with a grid sync or a second kernel), or enlarge the block to cover the cluster's work.
    """
    seen = set()
    scope = None  # `ns::` just before a name, for this file's CG namespaces
    for m in sx.code_word_matches(ctx, _CLUSTER):
        if not sx.relevant(ctx, m.start()):
            continue
        name = m.group().decode()
        if name in ("this_cluster", "cluster_group"):
            names, using = _namespaces(ctx)
            if scope is None:
                scope = re.compile(rb"(?:" + b"|".join(re.escape(n) for n in names) + rb")\s*::\s*\Z")
            before = ctx.data[max(0, m.start() - 40):m.start()]
            if not (scope.search(before) or using):
                continue
        line = ctx.source.line_col(m.start())[0]
        if line in seen:
            continue
        seen.add(line)
        yield Hit(m.start(), m.end(),
                  f"`{name}`: thread-block clusters are not available on most AMD GPUs/HIP "
                  "releases", "Share data between blocks through global memory instead of "
                  "cluster shared memory.")


_GRID_TYPE = regexes.compile(r"\b(?:multi_)?grid_group\b")


def _grid_vars(ctx) -> set[str]:
    """Names declared as a grid_group or from this_grid() (computed once, when first asked)."""
    return sx.memo(ctx, "cg_grid_vars", _compute_grid_vars)


def _grid_declarations(ctx) -> list:
    """The declarations that may declare a grid: those around a `grid_group` in the text or a
    this_grid() call, the only things _compute_grid_vars goes by."""
    found = {}
    for node in [*sx.nodes_at(ctx, ("grid_group",)), *sx.calls_named(ctx, _THIS_GRID, _THIS_GRID_WORDS)]:
        for decl in sx.enclosing(ctx, node, "declaration", "parameter_declaration"):
            found[decl.id] = decl
    return list(found.values())


def _compute_grid_vars(ctx) -> set[str]:
    out = set()
    for decl in _grid_declarations(ctx):
        t = sx.text(decl.child_by_field_name("type"))
        for d in decl.children_by_field_name("declarator"):
            value = None
            if d.type == "init_declarator":
                value = d.child_by_field_name("value")
                d = d.child_by_field_name("declarator")
            while d is not None and d.type in ("reference_declarator", "pointer_declarator"):
                d = d.named_children[-1] if d.named_child_count else None
            if d is None or d.type != "identifier":
                continue
            grid_typed = _GRID_TYPE.search(t)
            grid_valued = value is not None and any(
                n.type == "call_expression" and sx.call_name(n) in _THIS_GRID for n in sx.walk(value))
            if grid_typed or grid_valued:
                out.add(sx.text(d))
    return out




@rule(code="HP804", name="grid-sync-without-cooperative-launch", category="cooperative-groups",
      severity="warning", effort="medium",
      # a grid sync is on a grid_group variable or on this_grid() itself
      triggers=(b"grid_group", b"this_grid", b"this_multi_grid"))
def grid_sync_without_cooperative_launch(ctx):
    """Flags grid-wide syncs in a file that never launches a kernel cooperatively.

    What it does:
    Reports `grid.sync()` on a `grid_group` (from `this_grid()`), `cg::this_grid().sync()`,
    `cg::sync(grid)` and multi-grid syncs, when the file contains no
    `cudaLaunchCooperativeKernel`/`cudaLaunchAttributeCooperative` (or HIP's cooperative
    launch).

    Why it matters on AMD GPUs:
    A grid sync is only valid in a kernel launched cooperatively (hipLaunchCooperativeKernel),
    which also limits the grid to blocks that can be co-resident. With an ordinary `<<<>>>`
    launch the grid group is not valid and the sync is undefined (typically a hang); grids
    sized for NVIDIA's SM count also rarely match an AMD GPU's co-residency limit.

    Example:
    cg::grid_group grid = cg::this_grid();
    grid.sync();

    Fix:
    Launch the kernel with hipLaunchCooperativeKernel and a grid sized from
    hipOccupancyMaxActiveBlocksPerMultiprocessor x multiProcessorCount, checking
    hipDeviceAttributeCooperativeLaunch; or split the kernel at the sync point into two
    launches.
    """
    if b"sync" not in ctx.data:
        return  # no sync call at all
    if any(sx.relevant(ctx, m.start()) for m in ctx.code_matches(COOPERATIVE_LAUNCH)):
        return
    for call in sx.calls_named(ctx, _SYNC, _SYNC_WORDS):  # call_name "sync": `g.sync()`, `cg::sync(g)`
        fn = call.child_by_field_name("function")
        if fn is None or not sx.relevant(ctx, call.start_byte):
            continue
        target = None
        if fn.type == "field_expression" and sx.text(fn.child_by_field_name("field")) == "sync":
            arg = fn.child_by_field_name("argument")
            if arg is not None and arg.type == "identifier" and sx.text(arg) in _grid_vars(ctx):
                target = sx.text(arg)
            elif arg is not None and arg.type == "call_expression" and \
                    sx.call_name(arg) in _THIS_GRID:
                target = sx.text(arg)
        elif sx.call_name(call) == "sync" and fn.type in ("qualified_identifier", "identifier"):
            args = sx.call_args(call)
            if args and args[0].type == "identifier" and sx.text(args[0]) in _grid_vars(ctx):
                target = sx.text(args[0])
        if target:
            yield Hit(call.start_byte, call.end_byte,
                      f"grid-wide sync on `{target}` but no cooperative launch in this file: it "
                      "needs hipLaunchCooperativeKernel", "Launch with hipLaunchCooperativeKernel "
                      "(grid sized to co-resident blocks), or split the kernel at the sync.")
