"""shared-memory-limit: shared memory beyond the 64 KiB of LDS a workgroup gets on most AMD
GPUs (MI300 and earlier CDNA, RDNA); gfx950 (MI350 series) has 160 KiB."""

from __future__ import annotations

from hipport import regexes
from hipport.parse.braces import word_before
from hipport.rewrite.calls import parse_call, split_top_level
from hipport.rules import Hit, rule
from hipport.rules import _syntax as sx

LDS_LIMIT = 64 * 1024
_FIX_STATIC = ("Shrink the tiles (or use fewer pipeline stages) so a block stays within 64 KiB, "
               "or move part of the data to registers/global memory; query "
               "hipDeviceProp_t::sharedMemPerBlock (or maxSharedMemoryPerMultiProcessor) when "
               "targeting GPUs with more LDS such as gfx950.")
_FIX_DYNAMIC = ("Size the dynamic shared memory from hipDeviceProp_t::sharedMemPerBlock on the "
                "AMD device and fall back to smaller tiles when the request exceeds it (64 KiB on "
                "MI300 and earlier, 160 KiB on MI350-series).")
_DYNAMIC_ATTRS = ("cudaFuncAttributeMaxDynamicSharedMemorySize", "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES")


def _kib(n: int) -> str:
    return f"{n // 1024} KiB" if n % 1024 == 0 else f"{n} bytes ({n / 1024:.1f} KiB)"


def _array_bytes(ctx, shared: sx.SharedDecl) -> int | None:
    size = sx.TYPE_SIZES.get(shared.type_name)
    if size is None or shared.extern:
        return None
    for dim in shared.dims:
        if dim is None:
            return None
        n = sx.eval_int(ctx, dim)
        if n is None or n < 0:
            return None
        size *= n
    return size


def _may_exceed_64k(ctx) -> bool:
    """Whether the file's static shared arrays may add up to more than 64 KiB, read from the
    text before the tree is asked: every declarator counted at the largest element size its
    declaration's words may name (_element_bound), an array with a dimension that is not
    constant not at all (as _array_bytes does)."""
    declarators = sx.shared_declarator_texts(ctx)
    if declarators is None:
        return True
    total = 0
    for at, dims in declarators:
        size = _element_bound(ctx, at)
        for dim in dims:
            if not size:
                break
            n = sx.eval_int(ctx, dim)
            if n is None or n < 0:
                size = 0
                break
            size *= n
        total += size
    return total > LDS_LIMIT


def _element_bound(ctx, at: int) -> int:
    """At least the element size _array_bytes finds for the declaration whose `__shared__` is
    at `at`: the largest sx.TYPE_SIZES of a word of its statement. Its type name is such
    words (a name of several words is never larger than its largest word, `unsigned char`
    than `unsigned`); a type no word names (`T`, `Vector<int>`) has no size, and is not
    counted."""
    data = ctx.data
    words = _WORD.findall(data, ctx.lexed.statement_start(at), ctx.lexed.statement_end(at))
    return max((sx.TYPE_SIZES.get(w.decode(), 0) for w in words), default=0)


_WORD = regexes.compile(rb"[A-Za-z_]\w*")


def _identifiers_in(ctx, start: int, end: int) -> set[str]:
    return {sx.text(n) for n in sx.nodes_between(ctx, "identifier", start, end)}


@rule(code="HP651", name="static-shared-memory-over-64k", category="shared-memory-limit",
      severity="warning", effort="medium",
      triggers=(b'__shared__',))
def static_shared_memory_over_64k(ctx):
    """Flags kernels whose static `__shared__` arrays add up to more than 64 KiB.

    What it does:
    Sums, per `__global__`/`__device__` function, the sizes of its `__shared__` arrays and of
    the file-scope `__shared__` arrays it uses, where element type (char, short, int, float,
    double, half, float4, ...) and dimensions are constant (`#define`/`constexpr` values are
    resolved). When the total exceeds 64 KiB it reports the declaration that crosses the
    limit. Arrays with template-dependent or unknown sizes, and `extern __shared__`, are
    skipped.

    Why it matters on AMD GPUs:
    A workgroup can use at most 64 KiB of LDS (shared memory) on MI300 and earlier Instinct
    GPUs and on RDNA; only the MI350 series (gfx950) has 160 KiB. Larger static allocations
    fail to compile or launch there.

    Example:
    __shared__ float a_tile[128][64];  // 32 KiB
    __shared__ float b_tile[128][96];  // 48 KiB: 80 KiB in total

    Fix:
    Reduce the tile sizes or pipeline stages so a block fits in 64 KiB (or select sizes per
    target), keep some data in registers, or query hipDeviceProp_t::sharedMemPerBlock.
    """
    if not _may_exceed_64k(ctx):
        return
    shared = [s for s in sx.shared_declarations(ctx) if sx.relevant(ctx, s.decl.start_byte)]
    sizes = {s.name_start: _array_bytes(ctx, s) for s in shared}
    if sum(n for n in sizes.values() if n is not None) <= LDS_LIMIT:
        return  # no function's arrays can add up to more than all of the file's
    file_scope = []
    by_function: dict[int, list] = {}
    for s in shared:
        f = sx.device_function_at(ctx, s.decl.start_byte)
        if f is None:
            file_scope.append(s)
        else:
            by_function.setdefault(f.body_start, []).append(s)
    reported = set()
    for f in sx.device_functions(ctx):
        if f.kind == "lambda":
            continue
        own = by_function.get(f.body_start, [])
        used = _identifiers_in(ctx, f.body_start, f.body_end) if file_scope else set()
        decls = sorted(own + [s for s in file_scope if s.name in used], key=lambda s: s.decl.start_byte)
        total = 0
        for s in decls:
            size = sizes[s.name_start]
            if size is None:
                continue
            before = total
            total += size
            if before <= LDS_LIMIT < total:
                if s.decl.start_byte in reported:
                    break
                reported.add(s.decl.start_byte)
                what = f"`{s.name}` ({_kib(size)})"
                yield Hit(s.decl.start_byte, s.decl.end_byte,
                          f"static shared memory in `{f.name or 'lambda'}` reaches {_kib(total)} "
                          f"with {what}: more than the 64 KiB of LDS per workgroup on most AMD GPUs",
                          _FIX_STATIC)
                break


@rule(code="HP652", name="dynamic-shared-memory-opt-in-over-64k", category="shared-memory-limit",
      severity="warning", effort="medium",
      triggers=(b'FuncSetAttribute',))
def dynamic_shared_memory_opt_in(ctx):
    """Flags opting a kernel into more than 64 KiB of dynamic shared memory.

    What it does:
    Reports `cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, N)`
    (and the driver API's `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`): as an error when
    N is a constant above 64 KiB, as a warning when N is not a constant. Constants up to
    64 KiB are not flagged.

    Why it matters on AMD GPUs:
    NVIDIA GPUs since Volta let a block opt into up to 96-227 KiB of shared memory; an AMD
    workgroup gets at most 64 KiB of LDS (160 KiB on the MI350 series), so kernels sized for
    the larger NVIDIA carve-out fail to launch.

    Example:
    cudaFuncSetAttribute(gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, 96 * 1024);

    Fix:
    Choose tile sizes from hipDeviceProp_t::sharedMemPerBlock at run time (or per target at
    compile time) so the dynamic allocation stays within the AMD device's LDS.
    """
    if b"FuncSetAttribute" not in ctx.data:
        return  # no call to report
    opt_ins = _text_opt_ins(ctx)
    for start, end, size in _tree_opt_ins(ctx) if opt_ins is None else opt_ins:
        value = sx.eval_int(ctx, size)
        if value is None:
            yield Hit(start, end,
                      f"dynamic shared memory limit `{size.decode('utf-8', 'replace')}` set at run time: "
                      "check it stays within the AMD device's LDS (64 KiB on most GPUs)", _FIX_DYNAMIC)
        elif value > LDS_LIMIT:
            yield Hit(start, end,
                      f"kernel opted into {_kib(value)} of dynamic shared memory: more than the "
                      "64 KiB of LDS per workgroup on most AMD GPUs", _FIX_DYNAMIC, "error")


_OPT_IN_NAMES = ("cudaFuncSetAttribute", "cuFuncSetAttribute")
# What comes right before a call of a plain name in a statement: never a declaration's type,
# a member access or a qualifier.
_CALL_LEADS = frozenset({b"(", b",", b";", b"{", b"}", b"="})


def _tree_opt_ins(ctx) -> list[tuple[int, int, bytes]]:
    """(start, end, the size argument's text) of each call that sets the dynamic shared
    memory limit, in code hipcc compiles."""
    out = []
    for call in sx.nodes(ctx, "call_expression"):
        if sx.call_name(call) not in _OPT_IN_NAMES or not sx.relevant(ctx, call.start_byte):
            continue
        args = sx.call_args(call)
        if len(args) >= 3 and any(a in sx.text(args[1]) for a in _DYNAMIC_ATTRS):
            out.append((call.start_byte, call.end_byte, args[2].text))
    return out


def _text_opt_ins(ctx) -> list[tuple[int, int, bytes]] | None:
    """_tree_opt_ins() read from the text, without a parse, where the lexer is certain of every
    use of the names in code: a plain name after `(`, `,`, `;`, `{`, `}`, `=` or `return`, then
    an argument list with neither comments nor directives, no argument empty. None: a use is
    not certain, and the tree is asked."""
    data, lexed = ctx.data, ctx.lexed
    out = []
    for name in _OPT_IN_NAMES:
        word = name.encode()
        for start in sx.whole_word_starts(data, word):
            end = start + len(word)
            if not lexed.in_plain_code(start):
                continue  # in a comment, a literal or a macro body
            before = lexed.previous_code(start)
            if not (before == 0 or data[before - 1 : before] in _CALL_LEADS
                    or word_before(data, before)[1] == b"return"):
                return None
            call = parse_call(data, end)
            if call is None or any(s == e for s, e in call.args):
                return None
            inside = data[call.open : call.close]
            if b"#" in inside or b"/*" in inside or b"//" in inside:
                return None
            if len(call.args) < 3 or not sx.relevant(ctx, start):
                continue
            attr = data[call.args[1][0] : call.args[1][1]].decode("utf-8", "replace")
            if any(a in attr for a in _DYNAMIC_ATTRS):
                out.append((start, call.close + 1, data[call.args[2][0] : call.args[2][1]]))
    return sorted(out)


@rule(code="HP653", name="launch-dynamic-shared-memory-over-64k", category="shared-memory-limit",
      severity="error", effort="medium",
      triggers=(b'<<<',))
def launch_dynamic_shared_memory(ctx):
    """Flags launches that request more than 64 KiB of dynamic shared memory.

    What it does:
    Reports `kernel<<<grid, block, bytes>>>` launches whose third argument is a constant
    above 64 KiB.

    Why it matters on AMD GPUs:
    An AMD workgroup gets at most 64 KiB of LDS (160 KiB on the MI350 series); the launch
    fails when the request exceeds what the device has.

    Example:
    gemm<<<grid, 256, 128 * 1024>>>(a, b, c);

    Fix:
    Compute the request from smaller tiles, bounded by hipDeviceProp_t::sharedMemPerBlock.
    """
    if not _may_request_over_64k(ctx):
        return
    for launch in sx.nodes(ctx, "kernel_call_syntax"):
        args = [c for c in launch.named_children if c.type != "comment"]
        if len(args) < 3:
            continue
        value = sx.eval_int(ctx, args[2])
        if value is not None and value > LDS_LIMIT and sx.relevant(ctx, launch.start_byte):
            yield Hit(launch.start_byte, launch.end_byte,
                      f"launch requests {_kib(value)} of dynamic shared memory: more than the "
                      "64 KiB of LDS per workgroup on most AMD GPUs", _FIX_DYNAMIC)


def _may_request_over_64k(ctx) -> bool:
    """Whether a launch may request more than 64 KiB, read from the text before the tree is
    asked: its third configuration argument is a constant over the limit, or the launch is
    spelled in a way the text alone does not split (`< < <`, unbalanced brackets)."""
    data, lexed = ctx.data, ctx.lexed
    for m in sx.LAUNCH_OPEN.finditer(data):
        if lexed.in_comment_or_string(m.start()):
            continue
        if m.group() != b"<<<":
            return True
        cfg = split_top_level(data, m.end(), b">>>")
        if cfg is None:
            return True
        commas, close = cfg
        if len(commas) < 2:
            continue
        value = sx.eval_int(ctx, data[commas[1] + 1 : commas[2] if len(commas) > 2 else close].strip())
        if value is not None and value > LDS_LIMIT:
            return True
    return False
