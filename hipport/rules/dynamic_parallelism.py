"""dynamic-parallelism: kernel launches and CUDA device-runtime calls made from device code.

Build-file parts (`-rdc=true`, `cudadevrt`) belong to the build-flags rules."""

from __future__ import annotations

import bisect
import re

from hipport.rules import Hit, rule
from hipport.rules import _syntax as sx

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


_ALL = LAUNCH_APIS | RUNTIME_APIS
_WORD = re.compile(rb"[A-Za-z_]\w*")


def _macros_expanding_to(ctx) -> dict[str, str]:
    """Function-like or object-like macros whose body launches a kernel or calls the runtime:
    name -> what it expands to ("launch" or an API name)."""
    return sx.memo(ctx, "dp_macros", _compute_macros)


def _compute_macros(ctx) -> dict[str, str]:
    out: dict[str, str] = {}
    launches = ctx.lexed.find_launches()
    for m in sx.macro_bodies(ctx):
        if sx.cuda_excluded(ctx, m.start):
            continue
        i = bisect.bisect_left(launches, m.body_start)
        if i < len(launches) and launches[i] < m.body_end:
            out[m.name.decode()] = "launch"
            continue
        for w in _WORD.finditer(ctx.data, m.body_start, m.body_end):
            word = w.group().decode()
            if word in _ALL and ctx.in_code(w.start()):
                out[m.name.decode()] = word
                break
    return out


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


def _device_calls(ctx):
    for call in sx.nodes(ctx, "call_expression"):
        start = call.start_byte
        if sx.relevant(ctx, start) and sx.in_device_code(ctx, start):
            yield call


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
    for call in _device_calls(ctx):
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
    macros = _macros_expanding_to(ctx)
    for call in _device_calls(ctx):
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
