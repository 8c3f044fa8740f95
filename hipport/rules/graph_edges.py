"""unsupported-api: CUDA 13's graph edge data, passed where HIP's function has no parameter for it.

CUDA 13 gave the graph-dependency calls an edge-data parameter (cudaGraphAddDependencies,
cudaStreamGetCaptureInfo, ...); HIP's functions kept the older lists. The tables' transform
`drop_null(i, n)` drops the argument where it is null; this rule reports the calls where it is
not, from the same cells (rewrite/calls.kept_argument), so no list of functions lives here.
"""

from __future__ import annotations

from hipport.mappings import Entry, Mappings
from hipport.rewrite.calls import Site, kept_argument, parse_call
from hipport.rules import Hit, rule
from hipport.rules.api_tables import table_name_uses


def _drops_edge_data(mappings: Mappings, name: str, entry: Entry) -> bool:
    return "drop_null" in mappings.transforms.get(name, "")


# Every function concerned has `Graph` or `Capture` in its name.
@rule(code="HP503", name="graph-edge-data-not-in-hip", category="unsupported-api",
      severity="error", effort="medium", triggers=(b"Graph", b"Capture"))
def graph_edge_data_not_in_hip(ctx):
    """Reports graph edge data passed to a call whose HIP form takes none.

    What it does:
    Flags calls in CUDA 13's form (cudaGraphAddDependencies, cudaGraphRemoveDependencies,
    cudaGraphGetEdges, cudaGraphNodeGetDependencies/DependentNodes, cudaGraphAddNode,
    cudaStreamGetCaptureInfo, cudaStreamUpdateCaptureDependencies and their cu* twins) whose
    edge-data argument is not a null pointer. Where it is null, the port drops it and there
    is nothing to report.

    Why it matters on AMD GPUs:
    HIP's functions have no edge-data parameter (HIP 5.2 to 6.2): graph edges there are plain
    dependencies, with none of CUDA's port or programmatic-launch edge types. The ported call
    keeps an argument that HIP has nowhere to put, and hipcc rejects it.

    Example:
    cudaGraphEdgeData edge = {};
    edge.type = cudaGraphDependencyTypeProgrammatic;
    cudaGraphAddDependencies(graph, &from, &to, &edge, 1);

    Fix:
    Pass NULL where the edges are default ones (the port then drops the argument), or keep the
    path that needs edge types CUDA-only behind #if !defined(__HIP_PLATFORM_AMD__).
    """
    mappings = ctx.mappings
    for start, end, name, _ in table_name_uses(ctx, _drops_edge_data):
        call = parse_call(ctx.data, end)
        if call is None:
            continue
        spec = mappings.transforms[name]
        index = kept_argument(spec, Site(ctx.data, name, mappings.names.get(name, ""), call, mappings.target_hip))
        if index is not None:
            s, e = call.args[index]
            hip = mappings.names.get(name, name)
            yield Hit(s, e, f"`{name}`: argument {index + 1} is graph edge data, and HIP's `{hip}` "
                            "has no parameter for it",
                      "pass NULL where the edges are default ones (the port then drops it), or keep "
                      "this path CUDA-only behind #if !defined(__HIP_PLATFORM_AMD__)")
