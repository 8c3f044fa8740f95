"""unsupported-api: cudaDeviceProp fields that hipDeviceProp_t lacks at the target.

The renamer leaves member names alone (`obj.cudaMalloc` is not CUDA's), so a field read of a
device-properties struct keeps its CUDA name (but for the two HIP spells with `Hip`, which
rewrite/members.py renames); this rule reports the ones HIP's struct does not have at the
target, from the data in mappings/structs/device_props.tsv.
"""

from __future__ import annotations

import functools

from hipport import regexes
from hipport.mappings import parse_version
from hipport.rules import Hit, rule
from hipport.rules import _syntax as sx
from hipport.table_files import data_table


@functools.lru_cache(maxsize=8)
def _missing(target: tuple[int, int]):
    """(patterns of `.field` and `->field` reads, field -> (message, suggestion)) for the fields
    the target's hipDeviceProp_t does not have as CUDA spells them."""
    found: dict[str, tuple[str, str]] = {}
    for r in data_table("structs", "device_props"):
        field, hip, added = r["field"], r["hip"], (parse_version(r["hip_added"]) or ())[:2]
        late = bool(added) and added > target
        when = f" from HIP {'.'.join(map(str, added))} (target {target[0]}.{target[1]})" if late else ""
        if not hip:
            found[field] = (f"`{field}`: {r['note']}",
                            "drop it for ROCm, or query hipDeviceGetAttribute where HIP has the attribute")
        elif late:  # (an earlier target's field spelled otherwise is renamed by the port)
            spelled = "this field" if hip == field else f"it as `{hip}`"
            found[field] = (f"`{field}`: hipDeviceProp_t has {spelled}{when}",
                            "target a newer HIP (--target-hip), or query hipDeviceGetAttribute "
                            "where the target has the attribute")
    if not found:
        return (), found
    names = b"|".join(sorted((f.encode() for f in found), key=len, reverse=True))
    # One pattern per operator: a pattern that starts with a literal is scanned for it in C,
    # where `(?:\.|->)` or `[.>]` is tried at every dot (four times the time).
    fields = rb"\s*(" + names + rb")\b"
    return (regexes.compile(rb"\." + fields), regexes.compile(rb"->" + fields)), found


@rule(code="HP502", name="device-property-not-in-hip", category="unsupported-api",
      severity="error", effort="low", triggers=(b"DeviceProp",))
def device_property_not_in_hip(ctx):
    """Reports reads of cudaDeviceProp fields that hipDeviceProp_t does not have.

    What it does:
    In files that use cudaDeviceProp, flags `.field` and `->field` reads of its fields that
    the target HIP's hipDeviceProp_t lacks: most of CUDA's newer fields (unifiedAddressing,
    asyncEngineCount, sharedMemPerBlockOptin, maxTexture1DLayered, uuid, ...) came to HIP
    only with 6.0, a few have no HIP field at all (mpsEnabled, hostNumaId, ...). Two HIP
    spells with Hip (sparseHipArraySupported, deferredMappingHipArraySupported): the port
    renames those where the target has them, and they are reported only below that.

    A field name that a struct of the file's own also declares is not reported: the read
    may be of that struct.

    Why it matters on AMD GPUs:
    The port renames cudaDeviceProp to hipDeviceProp_t but, rightly, not the members HIP has
    no counterpart for, so the read stays as written and hipcc stops with "no member named
    ... in 'hipDeviceProp_t'".

    Example:
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    if (prop.unifiedAddressing) { ... }

    Fix:
    Target HIP 6.0 or later where it has the field, or query
    hipDeviceGetAttribute (hipDeviceAttributeUnifiedAddressing, ...) where the target has the
    attribute; drop what has no ROCm meaning.
    """
    patterns, found = _missing(ctx.mappings.target_hip)
    own = None
    reads = sorted((m for p in patterns for m in ctx.code_matches(p)), key=lambda m: m.start())
    for m in reads:
        field = m.group(1).decode()
        if own is None:  # a struct of the file's own with a field so named may be the one read
            own = sx.own_field_names(ctx)
        if field not in own and sx.relevant(ctx, m.start(1)):
            message, suggestion = found[field]
            yield Hit(m.start(1), m.end(1), message, suggestion)
