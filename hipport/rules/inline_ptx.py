"""inline-ptx: `asm`/`__asm__` statements whose template is PTX.

Inline `mma.sync`/`ldmatrix`/`wgmma` (tensor cores) and `cp.async`/`cp.async.bulk` (async
copies, TMA) are reported here only, as HP301, with a note naming the other category; the
tensor-core and async-copy rules do not report asm."""

from __future__ import annotations

import bisect
import functools
import re

from hipport import regexes
from hipport.parse import IS_WORD_BYTE
from hipport.rules import Hit, rule
from hipport.rules import _syntax as sx

_QUALIFIER = regexes.compile(rb"(?:volatile|__volatile__|__volatile|inline|__inline__|goto)\b")
_SPACE = regexes.compile(rb"(?:\s|\\\r?\n)+")
_SPACE_BYTES = b" \t\n\r\f\v"  # \s of _SPACE (which also takes a backslash before a newline)
_PUNCT = regexes.compile(rb"[():;]")  # what _asm_statement looks at

# PTX opcodes (the part before the first '.'); written with at least one `.suffix` in PTX.
PTX_OPCODES = frozenset("""
abs activemask add addc alloca and applypriority atom bar barrier bfe bfi bfind bmsk bra brev
brx call clusterlaunchcontrol clz cnot copysign cos cp createpolicy cvt cvta discard div dp2a
dp4a elect ex2 fence fma fns getctarank griddepcontrol isspacep istypep ld ldmatrix ldu lg2 lop3
mad mad24 madc mapa match max mbarrier membar min mma mov movmatrix mul mul24 multimem nanosleep
neg not or pmevent popc prefetch prefetchu prmt rcp red redux rem rsqrt sad selp set setmaxnreg
setp shf shfl shl shr sin slct sqrt st stackrestore stacksave stmatrix sub subc suld suq sured
sust szext tanh tcgen05 tensormap testp tex tld4 txq vabsdiff vadd vmad vote wgmma wmma xor
""".split())
_BARE_PTX = frozenset({"trap", "brkpt", "exit"})  # PTX instructions without a suffix
SPECIAL_REGISTERS = regexes.compile(
    r"%(laneid|warpid|nwarpid|smid|nsmid|gridid|clock64|clock_hi|clock|globaltimer_lo|"
    r"globaltimer_hi|globaltimer|lanemask_eq|lanemask_le|lanemask_lt|lanemask_ge|lanemask_gt|"
    r"tid|ntid|ctaid|nctaid|dynamic_smem_size|total_smem_size|aggr_smem_size|cluster_ctarank|"
    r"clusterid|nclusterid|cluster_ctaid|cluster_nctaid|is_explicit_cluster|pm[0-7]|envreg\d+)\b")
_INSTRUCTION = regexes.compile(r"([a-z][a-z0-9_]*)((?:\.[a-z0-9_:]+)*)")

TENSOR_CORE = ("mma", "wmma", "ldmatrix", "stmatrix", "movmatrix", "wgmma", "tcgen05")
ASYNC_COPY = ("cp.async", "cp.reduce.async", "mbarrier", "tensormap", "st.async", "red.async")

# (prefix of an opcode, or a special register) -> the HIP way; first match wins.
SUGGESTIONS: list[tuple[str, str]] = [
    ("%laneid", "__lane_id()"),
    ("%warpid", "threadIdx.x / warpSize (the hardware wave slot has no portable equivalent)"),
    ("%nwarpid", "no equivalent; derive from blockDim and warpSize"),
    ("%smid", "__smid() (the compute unit id on AMD)"),
    ("%nsmid", "hipDeviceProp_t::multiProcessorCount, queried on the host"),
    ("%clock", "clock64() (shader clock) or wall_clock64() (constant rate)"),
    ("%globaltimer", "wall_clock64() (its rate is hipDeviceAttributeWallClockRate)"),
    ("%lanemask_lt", "__lanemask_lt() (64-bit on wave64)"),
    ("%lanemask", "a 64-bit mask built from __lane_id()"),
    ("%tid", "threadIdx"), ("%ntid", "blockDim"), ("%ctaid", "blockIdx"), ("%nctaid", "gridDim"),
    ("%dynamic_smem_size", "pass the dynamic shared-memory size as a kernel argument"),
    ("%cluster", "no equivalent (thread-block clusters)"),
    ("ld.global.nc", "__ldg(p) (on AMD an ordinary load: all loads go through the vector L1)"),
    ("ldu", "__ldg(p) or a plain load"),
    ("ld.global.cs", "__builtin_nontemporal_load(p)"), ("ld.global.lu", "__builtin_nontemporal_load(p)"),
    ("st.global.cs", "__builtin_nontemporal_store(v, p)"),
    ("ld.volatile", "a volatile access, or __hip_atomic_load(p, __ATOMIC_RELAXED, scope)"),
    ("st.volatile", "a volatile access, or __hip_atomic_store(p, v, __ATOMIC_RELAXED, scope)"),
    ("ld.acquire", "__hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT)"),
    ("ld.relaxed", "__hip_atomic_load(p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT)"),
    ("st.release", "__hip_atomic_store(p, v, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT)"),
    ("st.relaxed", "__hip_atomic_store(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT)"),
    ("ld", "a plain C++ load"), ("st", "a plain C++ store"),
    ("shfl", "__shfl / __shfl_up / __shfl_down / __shfl_xor (width defaults to warpSize, 64 on CDNA)"),
    ("vote", "__ballot / __any / __all (the ballot is 64-bit on wave64)"),
    ("activemask", "__activemask() (64-bit)"),
    ("match", "__match_any / __match_all (64-bit masks)"),
    ("redux", "a __shfl_xor reduction (or __reduce_*_sync in recent HIP)"),
    ("prmt", "__byte_perm(x, y, selector)"),
    ("bar.warp.sync", "__syncwarp() (a wavefront executes in lockstep on AMD)"),
    ("bar.arrive", "__syncthreads() (named/partial barriers have no HIP equivalent)"),
    ("bar", "__syncthreads() (named barriers have no HIP equivalent)"),
    ("barrier", "__syncthreads() (named barriers have no HIP equivalent)"),
    ("membar.cta", "__threadfence_block()"), ("fence.cta", "__threadfence_block()"),
    ("membar.sys", "__threadfence_system()"), ("fence.sys", "__threadfence_system()"),
    ("membar", "__threadfence()"), ("fence.proxy", "__syncthreads() around ordinary copies"),
    ("fence", "__threadfence() (or __atomic_thread_fence with a HIP memory scope)"),
    ("atom", "atomicAdd / atomicCAS / ... (or __hip_atomic_fetch_* with an explicit scope)"),
    ("red", "atomicAdd / atomicOr / ... with the result unused"),
    ("lop3", "plain C bitwise operators (the compiler picks AMD's three-input bit instructions)"),
    ("bfe", "shifts and masks"), ("bfi", "shifts and masks"),
    ("brev", "__brev() / __brevll()"), ("popc", "__popc() / __popcll()"),
    ("clz", "__clz() / __clzll()"), ("bfind", "31 - __clz(x) (or 63 - __clzll(x))"),
    ("fns", "__fns64()"), ("shf", "__funnelshift_l() / __funnelshift_r()"),
    ("dp4a", "plain integer arithmetic (the compiler uses dot instructions where the GPU has them)"),
    ("dp2a", "plain integer arithmetic"),
    ("cvt", "the matching conversion intrinsic (__float2half_rn, __float2int_rz, ...) or a cast"),
    ("mov", "plain C++ (assignment; shifts, a union or __builtin_bit_cast to pack/unpack)"),
    ("nanosleep", "__builtin_amdgcn_s_sleep(n)"), ("trap", "__builtin_trap() or abort()"),
    ("brkpt", "__builtin_trap()"), ("exit", "return from the kernel"),
    ("prefetch", "drop it (no portable prefetch hint)"),
    ("griddepcontrol", "drop it (programmatic dependent launch has no HIP equivalent)"),
    ("elect", "a first-active-lane test: __lane_id() == __ffsll(__activemask()) - 1"),
    ("createpolicy", "drop it (L2 cache policies have no HIP equivalent)"),
    ("applypriority", "drop it"), ("discard", "drop it"),
    ("setmaxnreg", "__launch_bounds__ to steer register allocation"),
    ("mma", "rocWMMA, or the MFMA/WMMA builtins (__builtin_amdgcn_mfma_*) on AMD matrix cores"),
    ("wmma", "rocWMMA"), ("wgmma", "rocWMMA or MFMA builtins"), ("tcgen05", "rocWMMA or MFMA builtins"),
    ("ldmatrix", "ordinary shared-memory loads into the rocWMMA/MFMA fragment layout"),
    ("stmatrix", "ordinary shared-memory stores"), ("movmatrix", "register shuffles (__shfl)"),
    ("cp.async", "ordinary global loads stored to shared memory, then __syncthreads() "
                 "(double-buffer for overlap)"),
    ("cp.reduce.async", "atomics or ordinary loads/stores"),
    ("mbarrier", "__syncthreads() (or an atomic counter in shared memory)"),
    ("tensormap", "no equivalent (TMA)"),
]


_ESCAPE = regexes.compile(r"\\(.)", re.S)
_ESCAPED = {"n": "\n", "t": "\t", "r": "\r"}


def _unescape(body: str) -> str:
    """`\\n`, `\\t`, `\\r` as the characters, any other escaped character as itself."""
    return _ESCAPE.sub(lambda m: _ESCAPED.get(m.group(1), m.group(1)), body)


def _literal_text(raw: bytes) -> str:
    s = raw.decode("latin-1")
    q = s.find('"')
    if q < 0:
        return ""
    if q > 0 and s[q - 1] == "R":  # raw string R"delim( ... )delim"
        open_paren = s.find("(", q)
        close_paren = s.rfind(")")
        return s[open_paren + 1:close_paren] if 0 <= open_paren < close_paren else ""
    return _unescape(s[q + 1:-1] if s.endswith('"') else s[q + 1:])


def _string_index(ctx):
    spans = sorted(ctx.lexed.strings)
    return [s for s, _ in spans], [e for _, e in spans]


def _skip_space(ctx, pos: int) -> int:
    data = ctx.data
    while pos < len(data):
        m = _SPACE.match(data, pos)
        if m:
            pos = m.end()
            continue
        if data.startswith(b"/*", pos) or data.startswith(b"//", pos):
            comment_starts = sx.memo(ctx, "ptx_comment_starts",
                                     lambda c: [s for s, _ in c.lexed.comments])
            i = bisect.bisect_right(comment_starts, pos) - 1
            if i >= 0 and ctx.lexed.comments[i][0] == pos:
                pos = ctx.lexed.comments[i][1]
                continue
        break
    return pos


def _asm_statement(ctx, keyword_end: int):
    """(template text, end offset) of the asm statement whose keyword ends at keyword_end.
    Past the qualifiers and `(`, only the parentheses, the first `:` and a `;` outside
    literals and comments matter: they are found with one search each, not a step per token
    (CUTLASS's wgmma statements bind hundreds of operands: 1.6 ms a statement that way)."""
    data = ctx.data
    pos = _skip_space(ctx, keyword_end)
    while True:
        m = _QUALIFIER.match(data, pos)
        if not m:
            break
        pos = _skip_space(ctx, m.end())
    if data[pos:pos + 1] != b"(":
        return None
    opened = pos + 1
    hidden = ctx.lexed.in_comment_or_string
    depth, template_end, end = 1, None, None
    for m in _PUNCT.finditer(data, opened):
        at = m.start()
        if hidden(at):
            continue
        c = data[at]
        if c == 0x28:  # (
            depth += 1
        elif c == 0x29:  # )
            depth -= 1
            if depth == 0:
                end = at + 1
                break
        elif depth == 1 and c == 0x3A:  # : ends the template
            if template_end is None:
                template_end = at
        elif depth == 1 and c == 0x3B:  # ;
            end = at
            break
    read_to = end  # the template's literals are those before the first `:`, or before this
    if end is None:  # the file ends inside the statement: it ends at its last code byte
        read_to, end = len(data), _last_code_end(ctx, opened)
    starts, ends = sx.memo(ctx, "ptx_strings", _string_index)
    first = bisect.bisect_left(starts, opened)
    last = bisect.bisect_left(starts, read_to if template_end is None else template_end)
    return "".join(_literal_text(data[starts[i]:ends[i]]) for i in range(first, last)), end


def _last_code_end(ctx, start: int) -> int:
    """The end of the last byte from `start` on outside spaces, line continuations, comments
    and literals (where a statement the file ends inside ends, as read token by token)."""
    data, end = ctx.data, len(ctx.data)
    spans = sorted(ctx.lexed.comments + ctx.lexed.strings)  # once a file at most: it ends here
    starts = [s for s, _ in spans]
    while end > start:
        i = bisect.bisect_right(starts, end - 1) - 1
        if i >= 0 and end <= spans[i][1] and spans[i][0] >= start:
            end = spans[i][0]  # a comment or a literal: before it
        elif data[end - 1] in _SPACE_BYTES or (data[end - 1] == 0x5C and data[end:end + 1] in (b"\n", b"\r")):
            end -= 1  # a space, or a backslash that continues the line
        else:
            break
    return end


_STATEMENT_END = regexes.compile(r"[;\n]")
_LABEL = regexes.compile(r"^[A-Za-z_$][\w$]*:\s*")  # a label
_GUARD = regexes.compile(r"^@!?%?[\w$]+\s+")  # a predicate guard


def ptx_instructions(template: str) -> list[str]:
    """PTX opcodes (with suffixes) and special registers in an asm template; [] if not PTX."""
    found: list[str] = []
    is_ptx = False
    for piece in _STATEMENT_END.split(template):
        piece = piece.strip().strip("{}").strip()
        piece = _LABEL.sub("", piece)
        piece = _GUARD.sub("", piece)
        if piece.startswith((".reg", ".pred", ".shared", ".local", ".param")):
            is_ptx = True
            continue
        m = _INSTRUCTION.match(piece)
        if not m:
            continue
        base, suffix = m.group(1), m.group(2)
        if (base in PTX_OPCODES and suffix) or (base in _BARE_PTX and piece == base):
            is_ptx = True
            found.append(base + suffix)
    registers = ["%" + m.group(1) for m in SPECIAL_REGISTERS.finditer(template.replace("%%", "%"))]
    if registers:
        # `mov` only reads the register: name the register, not the move
        found = [f for f in found if not f.startswith("mov.")]
    if not (is_ptx or registers):
        return []
    out = []
    for f in registers + found:
        if f not in out:
            out.append(f)
    return out or ["PTX"]


@functools.lru_cache(maxsize=4096)
def _suggest(instr: str) -> str | None:
    for prefix, hint in SUGGESTIONS:
        if instr == prefix or instr.startswith(prefix + ".") or (
                prefix.startswith("%") and instr.startswith(prefix)):
            return hint
    return None


def asm_keywords(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each `asm`, `__asm` or `__asm__` standing as a word: where `asm` occurs
    (bytes.find), the underscores around it read there. A pattern of the three spellings
    tries every `_` and `a` of the file (a fifth of HP301's time on CUTLASS)."""
    out, size = [], len(data)

    def word_at(i: int) -> bool:
        return i < size and data[i] in IS_WORD_BYTE

    for at in sx.starts_of(data, b"asm"):
        start = at - 2 if at >= 2 and data[at - 2:at] == b"__" else at
        if start and data[start - 1] in IS_WORD_BYTE:
            continue  # part of a longer name (`wasm`, `_asm`, `x__asm`)
        end = at + 3
        if start < at and data[end:end + 2] == b"__" and not word_at(end + 2):
            end += 2  # `__asm__`
        elif word_at(end):
            continue
        out.append((start, end))
    return out


def asm_statements(ctx):
    """(start, end, template) of each asm statement in relevant code (macro bodies included)."""
    def compute(c):
        out = []
        for start, end in asm_keywords(c.data):
            if not sx.relevant(c, start):
                continue
            parsed = _asm_statement(c, end)
            if parsed is not None:
                out.append((start, parsed[1], parsed[0]))
        return out
    return sx.memo(ctx, "asm_statements", compute)


@rule(code="HP301", name="inline-ptx-asm", category="inline-ptx", severity="error", effort="high",
      triggers=(b'asm',))
def inline_ptx_asm(ctx):
    """Flags inline assembly whose template is PTX.

    What it does:
    Reports `asm(...)`, `asm volatile(...)`, `__asm__ __volatile__(...)` statements (also in
    macro bodies) whose template contains PTX instructions (`mov.u32`, `ld.global.nc`,
    `shfl.sync`, `vote.ballot`, `prmt`, `lop3`, `bar.sync`, `atom.`/`red.`, `cp.async`,
    `mma.sync`, `ldmatrix`, ...) or PTX special registers (`%laneid`, `%smid`, `%clock64`,
    ...), naming the instructions and the HIP builtin that replaces each where one exists.
    Inline tensor-core (`mma`, `ldmatrix`, `wgmma`) and async-copy (`cp.async`, `mbarrier`)
    instructions are reported only here, with a note. GCN/CDNA assembly (`s_nop`,
    `v_mov_b32`), host x86 assembly and empty compiler barriers are not flagged, nor is asm in
    comments, strings or `#if` branches that CUDA or HIP builds exclude.

    Why it matters on AMD GPUs:
    PTX is NVIDIA's virtual ISA; hipcc compiles device code to AMD GCN/CDNA/RDNA machine code
    and rejects PTX in inline asm ("invalid instruction"). Most PTX idioms have a HIP builtin;
    the rest need a C++ rewrite.

    Example:
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));

    Fix:
    Replace the asm with the HIP builtin or plain C++: `%laneid` -> `__lane_id()`,
    `ld.global.nc` -> `__ldg()`, `shfl.sync` -> `__shfl_xor()`..., `prmt` -> `__byte_perm()`,
    `bar.sync` -> `__syncthreads()`, `%clock64` -> `clock64()`/`wall_clock64()`; keep the PTX
    only under `#ifdef __CUDA_ARCH__`-style NVIDIA guards if both platforms must build.
    """
    for start, end, template in asm_statements(ctx):
        instrs = ptx_instructions(template)
        if not instrs:
            continue
        shown = ", ".join(f"`{i}`" for i in instrs[:4]) + (", ..." if len(instrs) > 4 else "")
        notes = []
        if any(i.split(".")[0] in TENSOR_CORE for i in instrs):
            notes.append("tensor-core instruction: reported here only, not as tensor-core")
        if any(i.startswith(ASYNC_COPY) for i in instrs):
            notes.append("asynchronous copy: reported here only, not as async-copy")
        message = f"inline PTX asm ({shown}): hipcc does not accept PTX"
        if notes:
            message += " (" + "; ".join(notes) + ")"
        hints = []
        for i in instrs:
            hint = _suggest(i)
            if hint and f"`{i}` -> {hint}" not in hints:
                hints.append(f"`{i}` -> {hint}")
        suggestion = "; ".join(hints[:4]) if hints else "Rewrite in C++ with HIP builtins."
        yield Hit(start, end, message, suggestion)


_PTX_HEADER = {b"cuda/ptx"}
_PTX_ALIAS = regexes.compile(sx.word_start(b"namespace") + rb"\s+(\w+)\s*=\s*(?:::\s*)?cuda\s*::\s*ptx\s*;")
# cuda::ptx wrappers for async copies and TMA are async-copy findings (HP852/HP853).
_ASYNC_WRAPPERS = regexes.compile(r"(?:mbarrier|cp_async|cp_reduce_async|fence_proxy_async|tensormap)")


def _wrapper_hint(name: str) -> str:
    if name.startswith("get_sreg_"):
        hint = _suggest("%" + name[len("get_sreg_"):])
        if hint:
            return hint
    base = name.split("_")[0]
    return _suggest(base + ".x") or "the HIP builtin or plain C++ for that instruction"


@rule(code="HP302", name="ptx-wrapper-api", category="inline-ptx", severity="error", effort="high",
      triggers=(b'ptx',))
def ptx_wrapper_api(ctx):
    """Flags libcu++'s PTX instruction wrappers (`<cuda/ptx>`, `cuda::ptx::...`).

    What it does:
    Reports `#include <cuda/ptx>` and, once per line, calls such as
    `cuda::ptx::get_sreg_laneid()`, `cuda::ptx::elect_sync(...)` (also through a namespace
    alias of `cuda::ptx`). The wrappers for asynchronous copies and TMA (`mbarrier_*`,
    `cp_async_*`, `fence_proxy_async*`, `tensormap_*`) are reported by async-copy instead.

    Why it matters on AMD GPUs:
    Each wrapper emits one PTX instruction through inline asm; HIP has no `<cuda/ptx>`, and
    the instructions do not exist on AMD GPUs.

    Example:
    unsigned lane = ::cuda::ptx::get_sreg_laneid();

    Fix:
    Use the HIP builtin for the instruction: `get_sreg_laneid()` -> `__lane_id()`,
    `get_sreg_smid()` -> `__smid()`, `get_sreg_clock64()` -> `clock64()`; otherwise plain C++.
    """
    for d, path in sx.live_includes(ctx):
        if path.strip() in _PTX_HEADER and sx.relevant(ctx, d.start):
            yield Hit(d.start, d.path_end, "`#include <cuda/ptx>`: libcu++'s PTX wrappers do not exist in HIP",
                      "Remove it and replace each cuda::ptx call with a HIP builtin or plain C++.")
    aliases = [m.group(1) for m in ctx.code_matches(_PTX_ALIAS)]
    scopes = rb"cuda\s*::\s*ptx" + b"".join(rb"|(?<![\w:])" + re.escape(a) for a in aliases)
    pattern = re.compile(rb"(?:" + scopes + rb")\s*::\s*(\w+)")
    seen = set()
    for m in ctx.code_matches(pattern):
        name = m.group(1).decode()
        if _ASYNC_WRAPPERS.match(name) or name.startswith("space_") or name.startswith("sem_") \
                or name.startswith("scope_") or not sx.relevant(ctx, m.start()):
            continue
        line = ctx.source.line_col(m.start())[0]
        if line in seen:
            continue
        seen.add(line)
        yield Hit(m.start(), m.end(), f"`cuda::ptx::{name}`: a PTX instruction wrapper, not available in HIP",
                  f"Use {_wrapper_hint(name)}.")
