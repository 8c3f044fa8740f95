"""launch-bounds: `__launch_bounds__` arguments whose meaning or cost differs on AMD GPUs."""

from __future__ import annotations

from hipport import regexes
from hipport.rules import Hit, rule
from hipport.rules import _syntax as sx

_TOKEN = regexes.compile(sx.word_start(b"__launch_bounds__") + rb"\b")
_SPACE = regexes.compile(rb"(?:\s|\\\r?\n)*")


def launch_bounds(ctx) -> list[tuple[int, int, list[bytes]]]:
    """(start, end, argument texts) of each `__launch_bounds__(...)` in relevant code,
    including macro bodies."""
    def compute(c):
        out = []
        data = c.data
        for m in c.code_matches(_TOKEN):
            if not sx.relevant(c, m.start()):
                continue
            parsed = _plain(data, m.end()) or _parsed(c, m.start(), m.end())
            if parsed:  # plain ones, or as the parser split them (template commas included)
                end, args = parsed
                out.append((m.start(), end, args))
                continue
            pos = _SPACE.match(data, m.end()).end()
            if data[pos:pos + 1] != b"(":
                continue
            depth, i, args, arg_start = 0, pos, [], pos + 1
            while i < len(data):
                ch = data[i:i + 1]
                if not c.in_code(i):
                    i += 1
                    continue
                if ch in b"([{":
                    depth += 1
                elif ch in b")]}":
                    depth -= 1
                    if depth == 0:
                        args.append(data[arg_start:i])
                        break
                elif ch == b"," and depth == 1:
                    args.append(data[arg_start:i])
                    arg_start = i + 1
                i += 1
            else:
                continue
            out.append((m.start(), i + 1, [a.strip() for a in args]))
        return out
    return sx.memo(ctx, "launch_bounds", compute)


# Arguments the parser would split the same way: no brackets, template arguments, comments,
# literals, directives or continuations.
_NOT_PLAIN = regexes.compile(rb"[^()\[\]{}<>/\\\"'#;]*")


def _plain(data: bytes, after: int) -> tuple[int, list[bytes]] | None:
    """(end, argument texts) of plain arguments such as `(128)` or `(MAX_THREADS, 4)`, read
    from the text (no parse): the parser's node holds the same (or, with errors, the text is
    read anyway). None where they hold more."""
    pos = _SPACE.match(data, after).end()
    if data[pos : pos + 1] != b"(":
        return None
    close = _NOT_PLAIN.match(data, pos + 1).end()
    if data[close : close + 1] != b")":
        return None
    args = [a.strip() for a in data[pos + 1 : close].split(b",")]
    return (close + 1, args) if all(args) else None


def _parsed(ctx, start: int, end: int) -> tuple[int, list[bytes]] | None:
    """(end, argument texts) of the parser's `launch_bounds` node whose keyword is at
    [start, end), if it has one without errors. Found from the keyword up, in C: no walk or
    query over the whole tree."""
    node = ctx.tree.root_node.descendant_for_byte_range(start, end)
    while node is not None and node.start_byte == start:
        if node.type == "launch_bounds":
            args = [a for a in node.named_children if a.type != "comment"]
            if node.has_error or not args:
                return None
            return node.end_byte, [a.text.strip() for a in args]
        node = node.parent
    return None


@rule(code="HP1051", name="launch-bounds-min-blocks", category="launch-bounds", severity="warning",
      effort="low",
      triggers=(b'launch_bounds',))
def launch_bounds_min_blocks(ctx):
    """Flags `__launch_bounds__` with a minimum-blocks (second) argument.

    What it does:
    Reports `__launch_bounds__(MAX_THREADS, MIN_BLOCKS)` and the three-argument CUDA 12 form
    (`..., MAX_BLOCKS_PER_CLUSTER`), also inside macro definitions. A constant second argument
    of 1 is not reported (HIP's default is 1 as well).

    Why it matters on AMD GPUs:
    CUDA reads the second argument as the minimum number of resident blocks per
    multiprocessor. HIP defines it as MIN_WARPS_PER_EXECUTION_UNIT: hipcc passes it to the
    `amdgpu_waves_per_eu` attribute, i.e. the minimum number of waves per SIMD. The same
    number therefore asks for a different occupancy and register budget (often too few
    registers, causing spills). The third, cluster argument has no HIP meaning.

    Example:
    __global__ void __launch_bounds__(256, 4) scan(float* data);

    Fix:
    Convert the value for AMD (waves per EU = blocks x wavefronts per block / SIMDs per CU,
    e.g. 4 blocks of 256 threads on wave64 with 4 SIMDs -> 4), or keep only the first argument
    on AMD (`#ifdef __HIP_PLATFORM_AMD__`) and tune from measurements.
    """
    for start, end, args in launch_bounds(ctx):
        if len(args) < 2:
            continue
        if len(args) == 2 and sx.eval_int(ctx, args[1]) == 1:
            continue  # 1 is HIP's default too: no change in meaning that matters
        second = args[1].decode("latin-1")
        msg = (f"`__launch_bounds__` second argument `{second}` means minimum blocks per "
               "multiprocessor in CUDA but minimum waves per execution unit (SIMD) in HIP")
        if len(args) > 2:
            msg += "; the third (max blocks per cluster) has no HIP meaning"
        yield Hit(start, end, msg,
                  "Recompute it as waves per SIMD for the AMD target or drop it on AMD "
                  "(#ifdef __HIP_PLATFORM_AMD__), then tune by measurement.")


@rule(code="HP1052", name="launch-bounds-over-256", category="launch-bounds", severity="warning",
      effort="low",
      triggers=(b'launch_bounds',))
def launch_bounds_over_256(ctx):
    """Flags `__launch_bounds__` maximum block sizes above 256 threads.

    What it does:
    Reports `__launch_bounds__(N)` / `__launch_bounds__(N, ...)` where N is a constant greater
    than 256 (512, 1024, a `#define` resolving to such a value).

    Why it matters on AMD GPUs:
    hipcc assumes kernels may be launched with up to 1024 threads per block unless launch
    bounds say otherwise (some older ROCm releases assumed 256), and it budgets registers so
    a whole block of N threads fits on one compute unit. A large N caps the registers per
    thread (at 1024 threads on CDNA3, 128 VGPRs), so register-heavy kernels tuned with big
    NVIDIA blocks can spill on AMD; launches with more than N threads are rejected.

    Example:
    __global__ void __launch_bounds__(1024) softmax(float* x, int n);

    Fix:
    Keep N equal to the block size really launched; if the kernel is register-heavy, try 256
    threads per block on AMD and a matching `__launch_bounds__(256)`, and check spills with
    `-Rpass-analysis=kernel-resource-usage`.
    """
    for start, end, args in launch_bounds(ctx):
        if not args or not args[0]:
            continue
        n = sx.eval_int(ctx, args[0])
        if n is not None and n > 256:
            yield Hit(start, end,
                      f"`__launch_bounds__({args[0].decode('latin-1')})` allows {n} threads per "
                      "block: on AMD the compiler then caps registers per thread so the whole "
                      "block fits on one compute unit",
                      "Match the bound to the launched block size; consider 256 threads per "
                      "block on AMD for register-heavy kernels.")
