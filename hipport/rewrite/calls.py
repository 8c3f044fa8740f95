"""Argument-aware rewrites: the few CUDA calls whose HIP form depends on their arguments.

Each transform is named in a mapping table's `transform` column and gets the parsed call; it
returns the function's new name and any edits inside the argument list. Arguments keep their
own rename edits: a transform only wraps, inserts or removes whole arguments.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from hipport import regexes
from hipport.edits import Edit
from hipport.tuples import NamedTuple

# Brackets, commas, a launch close, and literals/comments to step over.
_BALANCE = regexes.compile(
    rb">>>|[()\[\]{},;]|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|//[^\n]*|/\*.*?(?:\*/|\Z)", re.S
)
WS = b" \t\r\n\\"


def split_top_level(data: bytes, start: int, closer: bytes = b")") -> tuple[list[int], int] | None:
    """Scan from `start` (just inside an opening bracket) to the `closer` at depth 0: the
    offsets of top-level commas and of the closer. None when a `;` or an unbalanced bracket
    comes first."""
    depth, commas = 0, []
    for m in _BALANCE.finditer(data, start):
        tok = m.group()
        if len(tok) != 1:
            if tok == b">>>" and depth == 0 and closer == b">>>":
                return commas, m.start()
            continue  # a literal or a comment
        if tok in b"([{":
            depth += 1
        elif tok in b")]}":
            if depth == 0:
                return (commas, m.start()) if tok == closer else None
            depth -= 1
        elif tok == b"," and depth == 0:
            commas.append(m.start())
        elif tok == b";":
            return None
    return None


class Call(NamedTuple):
    open: int  # offset of `(`
    close: int  # offset of `)`
    args: list[tuple[int, int]]  # each argument's span, surrounding spaces excluded


def parse_call(data: bytes, name_end: int) -> Call | None:
    """The argument list following a function name, or None when no call follows."""
    i = name_end
    while i < len(data) and data[i] in WS:
        i += 1
    if data[i : i + 1] != b"(":
        return None
    found = split_top_level(data, i + 1)
    if found is None:
        return None
    commas, close = found
    bounds = [i, *commas, close]
    args = []
    for a, b in zip(bounds, bounds[1:]):
        s, e = a + 1, b
        while s < e and data[s] in WS:
            s += 1
        while e > s and data[e - 1] in WS:
            e -= 1
        args.append((s, e))
    if args == [(close, close)]:
        args = []  # `f()` has no argument
    return Call(i, close, args)


class Rewrite(NamedTuple):
    name: str  # the function's new name
    edits: tuple[Edit, ...] | list[Edit] = ()
    notes: tuple[str, ...] | list[str] = ()


class Site(NamedTuple):
    data: bytes
    cuda: str  # the name as written
    mapped: str  # the table's HIP name ("" when not mapped at this target)
    call: Call
    target: tuple[int, int]


# HIP 6.2 added the mask-taking warp builtins (64-bit masks, behind HIP_ENABLE_WARP_SYNC_BUILTINS).
WARP_SYNC_HIP = (6, 2)
_FULL_MASK = regexes.compile(rb"(?:0[xX][fF]{8}[uUlL]{0,3}|~0[uUlL]{0,3}|~0x0[uUlL]{0,3})\Z")
# An argument already cast (to `void *`, `void **`, `const void *`, or by a C++ cast): left as written.
_CAST = regexes.compile(rb"\(\s*(?:const\s+)?void\s*\*[\s*]*\)|reinterpret_cast\s*<|static_cast\s*<|\(\s*const\s+void\s*\*")


def _arg(site: Site, i: int) -> bytes | None:
    if i >= len(site.call.args):
        return None
    s, e = site.call.args[i]
    return site.data[s:e]


def _wrap(site: Site, i: int, before: bytes, after: bytes, skip: re.Pattern[bytes]) -> list[Edit]:
    text = _arg(site, i)
    if text is None or skip.match(text):
        return []
    s, e = site.call.args[i]
    return [Edit(s, s, before, "transform", site.cuda), Edit(e, e, after, "transform", "")]


def _name(site: Site) -> str:
    return site.mapped or site.cuda


def event_create_flags(site: Site) -> Rewrite:
    """cudaEventCreate(&e, flags) is CUDA's C++ overload; HIP spells it hipEventCreateWithFlags."""
    return Rewrite("hipEventCreateWithFlags" if len(site.call.args) == 2 else _name(site))


def _defaults(count: int, *values: bytes) -> Callable[[Site], Rewrite]:
    """A call with `count` or more arguments, but fewer than `count + len(values)`, gets the
    missing ones from `values`: the defaults CUDA's C++ API declares and HIP's function lacks."""
    def transform(site: Site) -> Rewrite:
        n = len(site.call.args)
        if not count <= n < count + len(values):
            return Rewrite(_name(site))
        end = site.call.args[-1][1]
        return Rewrite(_name(site), [Edit(end, end, b"".join(b", " + v for v in values[n - count:]),
                                          "transform", "")])

    return transform


_HIP_SYMBOL = regexes.compile(rb"HIP_SYMBOL\s*\(")


def _symbol(index: int) -> Callable[[Site], Rewrite]:
    def transform(site: Site) -> Rewrite:
        return Rewrite(_name(site), _wrap(site, index, b"HIP_SYMBOL(", b")", _HIP_SYMBOL))

    transform.__doc__ = f"Wrap argument {index} (a __device__ symbol) in HIP_SYMBOL()."
    return transform


def _function(index: int) -> Callable[[Site], Rewrite]:
    def transform(site: Site) -> Rewrite:
        return Rewrite(_name(site), _wrap(site, index, b"reinterpret_cast<const void*>(", b")", _CAST))

    transform.__doc__ = f"Argument {index} is a kernel: HIP takes it as `const void*`."
    return transform


# A postfix expression a cast may precede without parentheses: `&p`, `&s.p`, `&a[i]`, `p`.
_POSTFIX = regexes.compile(rb"&?\s*[A-Za-z_][\w.]*(?:(?:->|\.)\w+|\[[^\[\]]*\])*\Z")


def _cast_argument(site: Site, index: int, cast: bytes, skip: Callable[[bytes], object]) -> Rewrite:
    """Argument `index` behind `cast`, parenthesised unless it is a plain (address of a) name,
    member or element; left as written where `skip(text)` says it needs none."""
    text = _arg(site, index)
    if text is None or skip(text):
        return Rewrite(_name(site))
    s, e = site.call.args[index]
    if _POSTFIX.match(text):  # `&p`: the cast needs no parentheses
        return Rewrite(_name(site), [Edit(s, s, cast, "transform", site.cuda)])
    return Rewrite(_name(site), [Edit(s, s, cast + b"(", "transform", site.cuda), Edit(e, e, b")", "transform", "")])


def _void_pp(index: int) -> Callable[[Site], Rewrite]:
    def transform(site: Site) -> Rewrite:
        return _cast_argument(site, index, b"(void **)", _CAST.match)

    return transform


_CXX_CAST = regexes.compile(rb"(?:reinterpret|static|const)_cast\s*<")
_SPACES = regexes.compile(rb"\s+")
_NAME = regexes.compile(rb"[A-Za-z_]\w*\Z")
_STAR = rb"\s*\*\s*"  # no `const` after it: `const char *const *` does not convert to `const char **`


def _cast(index: int, ctype: str) -> Callable[[Site], Rewrite]:
    """Argument `index` cast to `ctype`, where CUDA's parameter takes more than HIP's: NVRTC's
    `const char * const *` takes a `char **`, hipRTC's `const char **` does not. A null
    pointer, an argument already cast so (or by a C++ cast), and a name the file declares with
    the type already (`const char *opts[]`, `const char **opts`) are left as written."""
    cast = f"({ctype})".encode("ascii")
    squeezed = _SPACES.sub(b"", cast)
    base, stars = ctype.rstrip("* ").encode("ascii"), ctype.count("*")
    declared_with = re.escape(base).replace(b"\\ ", rb"\s+") + _STAR * (stars - 1)

    def skip(text: bytes) -> bool:
        return bool(_NULL_POINTER.match(text) or _CXX_CAST.match(text)
                    or _SPACES.sub(b"", text[: len(cast) + 8]).startswith(squeezed))

    def transform(site: Site) -> Rewrite:
        text = _arg(site, index)
        if text is not None and _NAME.match(text) and stars and re.search(
                declared_with + rb"(?:" + _STAR + re.escape(text) + rb"\b|\s*" + re.escape(text) + rb"\s*\[)",
                site.data):  # (begins with the type's literal, which is searched for in C)
            return Rewrite(_name(site))
        return _cast_argument(site, index, cast, skip)

    return transform


# A null pointer as CUDA code spells it, perhaps with a comment naming the parameter (the
# comment goes with the argument).
_COMMENTS = rb"(?:\s|/\*.*?\*/|//[^\n]*(?:\n|\Z))*"
_NULL_POINTER = regexes.compile(_COMMENTS + rb"(?:NULL|nullptr|0)" + _COMMENTS + rb"\Z", re.S)
# Only as a pointer is spelled: `0` may be a count.
_NULL_WORD = regexes.compile(_COMMENTS + rb"(?:NULL|nullptr)" + _COMMENTS + rb"\Z", re.S)


def _drop_null(index: int, *counts: int, pointer_only: bool = False) -> Callable[[Site], Rewrite]:
    """A call with one of `counts` arguments loses argument `index` where it is a null pointer:
    a parameter CUDA added (CUDA 13's graph edge data) that HIP's function lacks. A non-null
    one is left, with a note: HIP has nothing to pass it to (rules/graph_edges.py reports it).
    `pointer_only` (`drop_null_pointer`): for a count at which the older form has a number in
    that place, so that only `NULL` or `nullptr` tells the newer form; nothing else is noted."""
    if not counts or min(counts) <= max(index, 1):
        raise ValueError("drop_null(index, count, ...) needs counts above the index and above 1")
    null = _NULL_WORD if pointer_only else _NULL_POINTER

    def transform(site: Site) -> Rewrite:
        args = site.call.args
        if len(args) not in counts:
            return Rewrite(_name(site))
        if not null.match(_arg(site, index)):
            return Rewrite(_name(site), [], [] if pointer_only else [
                f"{site.cuda}: argument {index + 1} is not null, and HIP's {_name(site)} has no such parameter"])
        # From the argument to the next one (or, for the last, from the previous one's end).
        start, end = (args[index][0], args[index + 1][0]) if index + 1 < len(args) else (args[index - 1][1], args[index][1])
        return Rewrite(_name(site), [Edit(start, end, b"", "transform", site.cuda)])

    if not pointer_only:
        transform.drops = (index, counts)
    return transform


def kept_argument(spec: str, site: Site) -> int | None:
    """The argument a `drop_null` in the cell `spec` has to keep at this call (it is not null),
    or None: the call that will not port as the cell wants."""
    if not site.mapped:
        return None  # not ported at this target: the call is unsupported-api's
    for part in spec.split("+"):
        drops = getattr(_one(part), "drops", None)
        if drops and len(site.call.args) in drops[1] and not _NULL_POINTER.match(_arg(site, drops[0])):
            return drops[0]
    return None


# An out-argument the comma form below may copy: `&s`, `&p->s`, `out` (no index, which may hold
# names the renamer edits).
_PLAIN_OUT = regexes.compile(rb"&?\s*[A-Za-z_]\w*(?:\s*(?:\.|->)\s*[A-Za-z_]\w*)*\Z")


def _returned_through(index: int, function: str) -> Callable[[Site], Rewrite]:
    """Where the row has no HIP name at the target, a call whose last argument `index` is an
    out-pointer becomes `(*(out) = function(the other arguments), hipSuccess)`, which C and
    C++ accept alike: cuGetErrorString(e, &s) below HIP 5.4, where the runtime's
    hipGetErrorString(e) gives the same text (one error type for both APIs in HIP). Where the
    row maps, the plain rename. The one parametrised transform that ports an unmapped call."""
    def transform(site: Site) -> Rewrite:
        if site.mapped:
            return Rewrite(site.mapped)
        args = site.call.args
        out = _arg(site, index) if len(args) == index + 1 and index > 0 else None
        if out is None or not _PLAIN_OUT.match(out):
            return Rewrite(site.cuda)
        after = site.call.close + 1
        return Rewrite(f"(*({out.decode('ascii')}) = {function}",
                       [Edit(args[index - 1][1], args[index][1], b"", "transform", site.cuda),
                        Edit(after, after, b", hipSuccess)", "transform", "")])

    transform.ports_unmapped = True
    return transform


def ports_unmapped(spec: str) -> bool:
    """Whether the cell `spec` may port a call where its row has no HIP name at the target
    (unsupported-api then asks the transform before it reports the call)."""
    return any(getattr(_one(part), "ports_unmapped", False) for part in spec.split("+"))


def graph_instantiate_flags(site: Site) -> Rewrite:
    """CUDA 12's cudaGraphInstantiate(&exec, graph[, flags]) is hipGraphInstantiateWithFlags
    (HIP's hipGraphInstantiate keeps CUDA 11's five arguments, with no defaults)."""
    n = len(site.call.args)
    if n == 2:
        end = site.call.args[-1][1]
        return Rewrite("hipGraphInstantiateWithFlags", [Edit(end, end, b", 0", "transform", "")])
    return Rewrite("hipGraphInstantiateWithFlags" if n == 3 else _name(site))


def ctx_create_params(site: Site) -> Rewrite:
    """CUDA 13's cuCtxCreate(&ctx, params, flags, dev): HIP's takes (&ctx, flags, dev). A null
    params argument is dropped; real creation parameters have no HIP form (left, with a note)."""
    if len(site.call.args) != 4:
        return Rewrite(_name(site))
    params = _arg(site, 1)
    if params.strip() not in (b"nullptr", b"NULL", b"0"):
        return Rewrite(_name(site), [], [f"{site.cuda}: creation parameters have no HIP equivalent"])
    start, end = site.call.args[1][0], site.call.args[2][0]
    return Rewrite(_name(site), [Edit(start, end, b"", "transform", site.cuda)])


def warp_sync(site: Site) -> Rewrite:
    """__shfl*_sync / __ballot_sync / __any_sync / __all_sync by target: from HIP 6.2 the names
    stay and a 32-bit full-mask literal becomes a 64-bit one; before, the maskless forms."""
    mask = _arg(site, 0)
    if mask is None:
        return Rewrite(site.cuda)
    line_note = f"{site.cuda}: 32-lane mask semantics; a wavefront has 64 lanes on CDNA"
    if site.target >= WARP_SYNC_HIP:
        notes = [line_note, "build with -DHIP_ENABLE_WARP_SYNC_BUILTINS (warp *_sync builtins)"]
        if _FULL_MASK.match(mask):
            s, e = site.call.args[0]
            return Rewrite(site.cuda, [Edit(s, e, b"0xffffffffffffffffULL", "transform", site.cuda)], notes)
        return Rewrite(site.cuda, [], notes + [f"{site.cuda}: the mask must be a 64-bit integer in HIP"])
    # Drop the mask argument: from `(` through the first comma and the spaces after it.
    start = site.call.open + 1
    end = site.call.args[1][0] if len(site.call.args) > 1 else site.call.close
    return Rewrite(site.cuda[: -len("_sync")], [Edit(start, end, b"", "transform", site.cuda)], [line_note])


def activemask(site: Site) -> Rewrite:
    """__activemask(): HIP >= 6.2 has it (64-bit result); before, __ballot(1) is the same value."""
    if site.target >= WARP_SYNC_HIP:
        return Rewrite(site.cuda, [], ["__activemask returns a 64-bit mask in HIP",
                                        "build with -DHIP_ENABLE_WARP_SYNC_BUILTINS (warp *_sync builtins)"])
    inner = site.call.open + 1
    return Rewrite("__ballot", [Edit(inner, site.call.close, b"1", "transform", site.cuda)],
                   ["__activemask -> __ballot(1): a 64-bit mask"])


def syncwarp(site: Site) -> Rewrite:
    """__syncwarp(mask): a wavefront runs in lockstep; only a compiler barrier is needed."""
    inner = site.call.open + 1
    edits = [Edit(inner, site.call.close, b"", "transform", site.cuda)] if site.call.args else []
    return Rewrite("__builtin_amdgcn_wave_barrier", edits,
                   ["__syncwarp -> __builtin_amdgcn_wave_barrier(): lanes of a wavefront run in lockstep"])


# Not a call rewrite: the name is renamed only where it qualifies another (`cub::`), applied
# by the renamer itself.
NAMESPACE_ONLY = "namespace_only"
# Not a call rewrite either: a CUDA struct tag whose HIP name is a typedef (of an untagged or
# differently tagged struct), so `struct cudaGraphicsResource *r` must lose its `struct`.
UNTAG = "untag"

# The transforms a table's `transform` cell names as they are.
_NAMED: dict[str, Callable[[Site], Rewrite]] = {
    "event_create_flags": event_create_flags,
    "graph_instantiate_flags": graph_instantiate_flags,
    "ctx_create_params": ctx_create_params,
    "warp_sync": warp_sync,
    "activemask": activemask,
    "syncwarp": syncwarp,
}

# The ones a cell parametrises: `defaults(2, 0)`, `symbol(1)`, `function(0)`, `void_pp(0)`,
# `cast(2, const char **)`, `returned_through(1, hipGetErrorString)`, `drop_null(3, 5)`,
# `drop_null_pointer(2, 4)`.
_FACTORIES: dict[str, Callable[..., Callable[[Site], Rewrite]]] = {
    "defaults": lambda count, *values: _defaults(int(count), *(v.encode("ascii") for v in values)),
    "symbol": lambda index: _symbol(int(index)),
    "function": lambda index: _function(int(index)),
    "void_pp": lambda index: _void_pp(int(index)),
    "cast": lambda index, ctype: _cast(int(index), ctype),
    "returned_through": lambda index, function: _returned_through(int(index), function),
    "drop_null": lambda index, *counts: _drop_null(int(index), *(int(c) for c in counts)),
    "drop_null_pointer": lambda index, *counts: _drop_null(int(index), *(int(c) for c in counts),
                                                           pointer_only=True),
}

_SPEC = regexes.compile(r"\s*(\w+)\s*(?:\(([^()]*)\))?\s*\Z")


@functools.cache
def _one(spec: str) -> Callable[[Site], Rewrite]:
    m = _SPEC.match(spec)
    if m is None:
        raise ValueError(f"not a transform: {spec!r}")
    name, params = m.groups()
    if params is None:
        if name not in _NAMED:
            raise ValueError(f"unknown transform {name!r} (known: {', '.join(sorted(_NAMED))})")
        return _NAMED[name]
    if name not in _FACTORIES:
        raise ValueError(f"unknown transform {name}(...) (known: {', '.join(sorted(_FACTORIES))})")
    try:
        made = _FACTORIES[name](*(p.strip() for p in params.split(",")))
    except (TypeError, ValueError) as e:
        raise ValueError(f"bad arguments in transform {spec!r}: {e}") from None

    if getattr(made, "ports_unmapped", False):
        return made  # it decides itself what a call without the row's HIP name becomes

    def where_mapped(site: Site) -> Rewrite:
        # A call the target has no HIP name for is left whole (unsupported-api reports it):
        # its arguments are CUDA's until someone ports it.
        return made(site) if site.mapped else Rewrite(site.cuda)

    where_mapped.__doc__ = made.__doc__
    where_mapped.drops = getattr(made, "drops", None)
    return where_mapped


@functools.cache
def transform_for(spec: str) -> Callable[[Site], Rewrite]:
    """The rewrite a table's `transform` cell names: `name`, `name(arg, ...)` (which applies only
    where the row maps at the target), or several joined by `+`, applied to the same call in
    turn (each edits its own arguments; the first new name wins). ValueError for a cell that
    names none."""
    parts = [_one(p) for p in spec.split("+")]
    if len(parts) == 1:
        return parts[0]

    def chained(site: Site) -> Rewrite:
        done = [t(site) for t in parts]
        name = next((d.name for d in done if d.name != _name(site)), _name(site))
        return Rewrite(name, [e for d in done for e in d.edits], [n for d in done for n in d.notes])

    return chained
