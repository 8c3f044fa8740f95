"""dynamic-parallelism: kernel launches and CUDA device-runtime calls made from device code.

Build-file parts (`-rdc=true`, `cudadevrt`) belong to the build-flags rules."""

from __future__ import annotations

import bisect

from hipport import regexes
from hipport.rules import Hit, rule
from hipport.rules import _syntax as sx
from hipport.rules._host_code import MAX_CALLERS_DEPTH, all_certainly_host, may_name_device

# Device-side launch entry points of the CUDA device runtime (and runtime launch APIs that,
# called from device code, are device-side launches).
LAUNCH_APIS = frozenset({
    "cudaLaunchDevice", "cudaLaunchDeviceV2", "cudaGetParameterBuffer",
    "cudaGetParameterBufferV2", "cudaGraphLaunch", "cudaLaunchKernel", "cudaLaunchKernelEx",
    "cudaLaunchCooperativeKernel",
})
# The rest of the CUDA device runtime API (callable from __global__/__device__ code with -rdc).
RUNTIME_APIS = frozenset({
    "cudaDeviceSynchronize", "cudaDeviceGetAttribute", "cudaDeviceGetLimit",
    "cudaDeviceGetCacheConfig", "cudaDeviceGetSharedMemConfig", "cudaGetLastError",
    "cudaPeekAtLastError", "cudaGetErrorString", "cudaGetErrorName", "cudaGetDevice",
    "cudaGetDeviceCount", "cudaStreamCreateWithFlags", "cudaStreamDestroy",
    "cudaStreamWaitEvent", "cudaEventCreateWithFlags", "cudaEventRecord",
    "cudaEventRecordWithFlags", "cudaEventDestroy", "cudaFuncGetAttributes", "cudaMemcpyAsync",
    "cudaMemcpy2DAsync", "cudaMemcpy3DAsync", "cudaMemsetAsync", "cudaMemset2DAsync",
    "cudaMemset3DAsync", "cudaMalloc", "cudaFree", "cudaRuntimeGetVersion",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", "cudaGetTextureObjectResourceDesc",
    "cudaGetSurfaceObjectResourceDesc", "cudaDeviceGetP2PAttribute",
})

_LAUNCH_FIX = ("HIP has no dynamic parallelism: launch the child work from the host (a follow-up "
               "kernel or a graph), or do it inside the parent kernel (a loop or a __device__ "
               "function over the child's index space).")
_SYNC_FIX = ("HIP has no device-side runtime: return to the host to wait for work (end the kernel "
             "and launch the next one), or use a cooperative grid sync inside one kernel.")
_ERROR_FIX = ("HIP has no device-side runtime API: report errors through a flag in device memory "
              "and check hipGetLastError() on the host.")
_MALLOC_FIX = "use device-side malloc()/free() (HIP supports them in device code), or preallocate on the host."
_STREAM_FIX = "create streams and events on the host; a kernel cannot create or wait on them in HIP."


def _runtime_fix(name: str) -> str:
    if name == "cudaDeviceSynchronize":
        return _SYNC_FIX
    if name in ("cudaGetLastError", "cudaPeekAtLastError", "cudaGetErrorString", "cudaGetErrorName"):
        return _ERROR_FIX
    if name in ("cudaMalloc", "cudaFree"):
        return _MALLOC_FIX
    if "Stream" in name or "Event" in name:
        return _STREAM_FIX
    if name.startswith("cudaMem"):
        return "copy with plain loads/stores in the kernel, or issue the copy from the host."
    return "query this on the host before the launch and pass the value to the kernel."


def _found(finder, data: bytes, start: int = 0, end: int | None = None) -> bool:
    """Whether one of a words_finder's words is in data[start:end]."""
    return finder.any(data if start == 0 and end is None else data[start:end])


def _merged(*calls: list) -> list:
    """Lists of nodes as one, each node once, in source order."""
    return sorted({c.id: c for group in calls for c in group}.values(), key=lambda n: n.start_byte)


# ------------------------------------------------------------------ what the rules look for

_ALL = LAUNCH_APIS | RUNTIME_APIS
_ALL_WORDS = sx.words_finder(_ALL)
_LAUNCH_WORDS = sx.words_finder(LAUNCH_APIS)
_RUNTIME_WORDS = sx.words_finder(RUNTIME_APIS)
_WORD = regexes.compile(rb"[A-Za-z_]\w*")


def _macros_expanding_to(ctx) -> dict[str, str]:
    """Function-like or object-like macros whose body launches a kernel or calls the runtime:
    name -> what it expands to ("launch" or an API name)."""
    return sx.memo(ctx, "dp_macros", _compute_macros)


def _compute_macros(ctx) -> dict[str, str]:
    out: dict[str, str] = {}
    launches = ctx.lexed.find_launches()
    data = ctx.data
    any_api = _found(_ALL_WORDS, data)
    if not launches and not any_api:
        return out
    for m in sx.macro_bodies(ctx):
        # What the body expands to first, whether CUDA compiles it last: most bodies hold
        # neither a launch nor an API name, and the #if branches are then never worked out.
        i = bisect.bisect_left(launches, m.body_start)
        if i < len(launches) and launches[i] < m.body_end:
            what = "launch"
        elif not any_api or not _found(_ALL_WORDS, data, m.body_start, m.body_end):
            continue  # no API name in the body: skip the word scan
        else:
            what = None
            for w in _WORD.finditer(data, m.body_start, m.body_end):
                word = w.group().decode()
                if word in _ALL and ctx.in_code(w.start()):
                    what = word
                    break
        if what is not None and not sx.cuda_excluded(ctx, m.start):
            out[m.name.decode()] = what
    return out


def _kernel_launches(ctx) -> list:
    """Calls with a `<<<...>>>` (a kernel_call_syntax child), found from the `<<<` tokens in
    the text rather than from an index of the whole tree."""
    found = {}
    for token in sx.nodes_at(ctx, (), (sx.LAUNCH_OPEN,)):
        node = token if token.type == "kernel_call_syntax" else next(
            sx.enclosing(ctx, token, "kernel_call_syntax"), None)
        call = node.parent if node is not None else None
        if call is not None and call.type == "call_expression":
            found[call.id] = call
    return list(found.values())


def _all_host(ctx, *groups) -> bool:
    """Whether every place where a group's words (str) or pattern matches, in code, is
    certainly host code: then no candidate call of the group is in device code, and the rule
    needs no tree."""
    lexed = ctx.lexed
    offsets = []
    for words, patterns in groups:
        offsets += [at for at, _ in sx.places(ctx, words, patterns)
                    if not lexed.in_comment_or_string(at)]
    return all_certainly_host(ctx, offsets)


def _launch_candidates(ctx, macros: dict[str, str]) -> list:
    """The calls HP101 may flag: `<<<>>>` launches, launch APIs, macros that launch."""
    launch_macros = {m for m, what in macros.items() if what == "launch"}
    return _merged(_kernel_launches(ctx), sx.calls_named(ctx, LAUNCH_APIS, _LAUNCH_WORDS),
                   sx.calls_named(ctx, launch_macros))


def _device_calls(ctx, calls):
    """The calls in relevant device code (the test that needs no whole-file index first)."""
    for call in calls:
        start = call.start_byte
        if sx.relevant(ctx, start) and not _plainly_host(ctx, call) and sx.in_device_code(ctx, start):
            yield call


# ------------------------------------------------------------------ device code
# sx.in_device_code indexes every function, declaration and call of the file. Most launches and
# runtime calls sit in host functions that are plain to see from the few nodes around them;
# only when that fails does a file pay for the index. _plainly_host(...) True means "certainly
# not device code" by sx.device_functions' own criteria, False means "can't tell" (the lexer's
# version of the same test, _host_code, comes first and spares the tree where it can).


def _plainly_host(ctx, node, depth: int = 0) -> bool:
    """Whether `node` is certainly outside device code: each function definition or lambda
    whose body holds it is certainly not one of sx.device_functions."""
    offset = node.start_byte
    verdicts = sx.memo(ctx, "dp_plain_host_functions", lambda _: {})
    for fn in sx.enclosing(ctx, node, "function_definition", "lambda_expression"):  # the innermost first
        body = fn.child_by_field_name("body")
        if body is not None and body.start_byte <= offset < body.end_byte:
            plain = verdicts.get((fn.id, depth))
            if plain is None:
                plain = verdicts[fn.id, depth] = _plain_host_function(ctx, fn, body, depth)
            if not plain:
                return False
    return True


def _plain_host_function(ctx, fn, body, depth: int) -> bool:
    """Whether `fn` is certainly not a device function: no word in its head can mean
    __device__/__global__, and, for a named function, no declaration of its name says so and
    it is not a function called only from device code (main, or a function with a caller
    that is certainly host code, or with none in this file)."""
    if fn.type == "lambda_expression":
        decl = fn.child_by_field_name("declarator")
        return not may_name_device(ctx, fn.start_byte,
                                    decl.start_byte if decl is not None else body.start_byte)
    fdecl = sx.function_declarator(fn)
    if fdecl is None:
        return True  # not a function sx.device_functions considers
    name = fdecl.child_by_field_name("declarator")
    if may_name_device(ctx, fn.start_byte, fdecl.start_byte) or name is None \
            or name.type not in ("identifier", "field_identifier") or not name.text.isascii():
        return False
    word = name.text
    if _maybe_declared_device(ctx, word):
        return False
    if word == b"main":
        return True  # never taken for a function called only from device code
    if depth >= MAX_CALLERS_DEPTH:
        return False
    callers = [c for c in sx.calls_named(ctx, {word.decode()})
               if not body.start_byte <= c.start_byte < body.end_byte and sx.live(ctx, c.start_byte)]
    return not callers or any(sx.host_pass_only(ctx, c.start_byte) or _plainly_host(ctx, c, depth + 1)
                              for c in callers)


def _maybe_declared_device(ctx, word: bytes) -> bool:
    """Whether a declaration of `word` (a prototype, a member) may carry __device__ or
    __global__: a declaration around some occurrence of it has such a word before it."""
    for node in sx.nodes_at(ctx, (word.decode(),), sx.WHOLE_WORDS):
        start = node.start_byte
        for decl in sx.enclosing(ctx, node, "declaration", "field_declaration"):
            if may_name_device(ctx, decl.start_byte, start):
                return True
    return False


def _where(ctx, offset: int) -> str:
    f = sx.device_function_at(ctx, offset)
    if f is None:
        return "device code"
    if f.kind == "lambda":
        return "a __device__ lambda"
    if f.kind == "called-from-device":
        return f"`{f.name}` (only called from device code)"
    return {"global": "kernel", "device": "__device__ function",
            "host-device": "__host__ __device__ function"}[f.kind] + f" `{f.name}`"


def _has_direct_runtime_call(call) -> bool:
    stack = list(sx.call_args(call))
    while stack:
        node = stack.pop()
        if node.type == "call_expression" and sx.call_name(node) in _ALL:
            return True
        stack.extend(node.children)
    return False


@rule(code="HP101", name="device-side-kernel-launch", category="dynamic-parallelism",
      severity="error", effort="high",
      triggers=(b'<<<',))
def device_side_kernel_launch(ctx):
    """Flags kernel launches made from device code.

    What it does:
    Reports a `<<<...>>>` launch, `cudaLaunchDevice`/`cudaGetParameterBuffer`, or a runtime
    launch API (`cudaLaunchKernel`, `cudaGraphLaunch`) inside a `__global__` or `__device__`
    function, a `__device__` lambda, or a function this file only calls from device code; also
    a call, in device code, of a macro of this file that expands to such a launch. Launches in
    host code, and device-pass code disabled by `#ifndef __CUDA_ARCH__`, are not flagged.

    Why it matters on AMD GPUs:
    This is CUDA dynamic parallelism (it needs `-rdc=true` and `cudadevrt`). HIP has no
    equivalent in any version: hipcc rejects a kernel launch inside device code.

    Example:
    __global__ void parent(float* d, int n) {
      if (threadIdx.x == 0) child<<<n / 256, 256>>>(d, n);
    }

    Fix:
    Move the launch to the host: end the parent kernel and launch the child from the host
    (possibly as a graph node), or fold the child's work into the parent (a loop over the
    child's index space, or a `__device__` function).
    """
    macros = _macros_expanding_to(ctx)
    launch_macros = {m for m, what in macros.items() if what == "launch"}
    if _all_host(ctx, ((), (sx.LAUNCH_OPEN,)), (LAUNCH_APIS, _LAUNCH_WORDS), (launch_macros, sx.WHOLE_WORDS)):
        return
    for call in _device_calls(ctx, _launch_candidates(ctx, macros)):
        fn = call.child_by_field_name("function")
        launch = next((c for c in call.children if c.type == "kernel_call_syntax"), None)
        name = sx.call_name(call)
        if launch is not None:
            yield Hit(call.start_byte, launch.end_byte,
                      f"kernel launch `{sx.text(fn)}<<<...>>>` inside {_where(ctx, call.start_byte)} "
                      "(dynamic parallelism): HIP cannot launch kernels from device code",
                      _LAUNCH_FIX)
        elif name in LAUNCH_APIS:
            yield Hit(call.start_byte, call.end_byte,
                      f"device-side launch API `{name}` in {_where(ctx, call.start_byte)}: HIP has no "
                      "dynamic parallelism", _LAUNCH_FIX)
        elif macros.get(name) == "launch" and fn is not None and fn.type == "identifier":
            yield Hit(call.start_byte, call.end_byte,
                      f"macro `{name}` expands to a kernel launch, here inside "
                      f"{_where(ctx, call.start_byte)}: HIP cannot launch kernels from device code",
                      _LAUNCH_FIX)


@rule(code="HP102", name="device-runtime-api-call", category="dynamic-parallelism",
      severity="error", effort="high",
      triggers=(b'__global__', b'__device__'))
def device_runtime_api_call(ctx):
    """Flags CUDA device-runtime API calls (cudaDeviceSynchronize, ...) in device code.

    What it does:
    Reports calls of CUDA runtime functions that only the device runtime (`cudadevrt`) makes
    callable from device code: `cudaDeviceSynchronize`, `cudaGetLastError`,
    `cudaStreamCreateWithFlags`, `cudaMemcpyAsync`, `cudaMalloc`, `cudaDeviceGetAttribute`, ...
    when they sit in `__global__`/`__device__` code (including `__device__` lambdas, functions
    only called from device code, and calls of a macro of this file that expands to one). In a
    `__host__ __device__` function, calls under `#ifndef __CUDA_ARCH__` are host code and not
    flagged.

    Why it matters on AMD GPUs:
    HIP has no device-side runtime API: hipcc cannot compile these calls in device code.
    (Device-side `cudaDeviceSynchronize` was also removed from CUDA 12.)

    Example:
    __global__ void parent(float* d) {
      child<<<1, 64>>>(d);
      cudaDeviceSynchronize();
    }

    Fix:
    Do the runtime work on the host: synchronize by ending the kernel, create streams and
    events before the launch, query attributes before the launch and pass them as arguments,
    report errors through a device-memory flag. Device-side `malloc`/`free` replace
    `cudaMalloc`/`cudaFree`.
    """
    if not _found(_RUNTIME_WORDS, ctx.data):
        return  # neither a runtime call nor a macro expanding to one (its body would name it)
    macros = _macros_expanding_to(ctx)
    runtime_macros = {m for m, what in macros.items() if what in RUNTIME_APIS}
    if _all_host(ctx, (RUNTIME_APIS, _RUNTIME_WORDS), (runtime_macros, sx.WHOLE_WORDS)):
        return
    calls = _merged(sx.calls_named(ctx, RUNTIME_APIS, _RUNTIME_WORDS), sx.calls_named(ctx, runtime_macros))
    for call in _device_calls(ctx, calls):
        name = sx.call_name(call)
        fn = call.child_by_field_name("function")
        if name in RUNTIME_APIS:
            yield Hit(call.start_byte, call.end_byte,
                      f"`{name}` called from {_where(ctx, call.start_byte)}: a CUDA device-runtime "
                      "call, which HIP does not have", _runtime_fix(name))
        elif (macros.get(name) in RUNTIME_APIS and fn is not None and fn.type == "identifier"
              and not _has_direct_runtime_call(call)):
            api = macros[name]
            yield Hit(call.start_byte, call.end_byte,
                      f"macro `{name}` expands to `{api}`, here called from "
                      f"{_where(ctx, call.start_byte)}: a CUDA device-runtime call, which HIP "
                      "does not have", _runtime_fix(api))
