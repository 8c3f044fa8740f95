"""async-copy: libcu++ pipelines and barriers, the `__pipeline_*` primitives, TMA.

`cp.async`/`cp.async.bulk` written as inline PTX is reported once, by the inline-ptx rule
HP301 (its message says it is an asynchronous copy). `cooperative_groups::memcpy_async` is a
cooperative-groups finding."""

from __future__ import annotations

from hipport import regexes
from hipport.rules import Hit, rule
from hipport.rules import _syntax as sx

_HEADERS = {
    b"cuda/pipeline": "cuda::pipeline / cuda::memcpy_async",
    b"cuda/barrier": "cuda::barrier (and its memcpy_async)",
    b"cuda/annotated_ptr": "cuda::annotated_ptr access properties",
    b"cuda_pipeline.h": "the __pipeline_* primitives",
    b"cuda_pipeline_primitives.h": "the __pipeline_* primitives",
    b"cuda_awbarrier.h": "the arrive/wait barrier primitives",
    b"cuda_awbarrier_primitives.h": "the arrive/wait barrier primitives",
}
# Three patterns, each opening with its literal (re searches those fast); their matches never
# overlap, so together, in order, they are the one alternation's.
_API = (
    regexes.compile(sx.word_start(b"cuda") + rb"\s*::\s*(?:memcpy_async|pipeline_shared_state|pipeline_role|"
               rb"pipeline|make_pipeline|barrier|aligned_size_t|pipeline_consumer_wait_prior|"
               rb"pipeline_producer_commit|device\s*::\s*barrier_native_handle|"
               rb"ptx\s*::\s*(?:mbarrier\w*|cp_async(?!_bulk)\w*))\b"),
    regexes.compile(sx.word_start(b"__pipeline_") + rb"(?:memcpy_async|commit|wait_prior|arrive_on)\b"),
    regexes.compile(sx.word_start(b"__awbarrier_") + rb"\w+"),
)
_TMA = regexes.compile(
    rb"\bcuTensorMap\w+|\bCUtensorMap\w*|\bcudaTensorMap\w*|\bcp_async_bulk\w*|\bmemcpy_async_tx\b|"
    rb"\bbarrier_arrive_tx\b|\bfence_proxy_async\w*|\bcp_reduce_async_bulk\w*|"
    rb"\bptx\s*::\s*tensormap\w*")

_FIX = ("HIP has no asynchronous global-to-shared copy API: load into registers and store to "
        "shared memory, then __syncthreads() (software double-buffering keeps loads in flight). "
        "HIP cooperative groups' memcpy_async (recent ROCm only) copies synchronously.")
_TMA_FIX = ("No TMA on AMD GPUs: replace the tensor-map copies with ordinary (vectorized) loads "
            "of the tile into shared memory and a block barrier; drop cuTensorMapEncode* and the "
            "mbarrier transaction counts.")


def _per_line(ctx, matches):
    seen = set()
    for start, end, word in sorted(matches):
        if not sx.relevant(ctx, start):
            continue
        line = ctx.source.line_col(start)[0]
        if line in seen:
            continue
        seen.add(line)
        yield start, end, " ".join(word.decode("latin-1").split()).replace(" ::", "::").replace(":: ", "::")


@rule(code="HP851", name="async-copy-header", category="async-copy", severity="error",
      effort="high",
      triggers=(b'pipeline', b'barrier'))
def async_copy_header(ctx):
    """Flags includes of CUDA's asynchronous-copy headers.

    What it does:
    Reports `#include <cuda/pipeline>`, `<cuda/barrier>`, `<cuda/annotated_ptr>`,
    `<cuda_pipeline.h>`, `<cuda_pipeline_primitives.h>`, `<cuda_awbarrier.h>` compiled by both
    CUDA and HIP builds. (`<cuda/ptx>` is an inline-ptx finding.)

    Why it matters on AMD GPUs:
    These are libcu++/CUDA headers for the sm_80+ asynchronous copy and barrier hardware
    (`cp.async`, mbarrier, TMA). HIP has no equivalent headers, so the include fails and the
    code behind it must be restructured.

    Example:
    #include <cuda/pipeline>

    Fix:
    Remove the include together with the pipeline/barrier code; stage data through registers
    into shared memory and synchronize with __syncthreads().
    """
    for d, path in sx.live_includes(ctx):
        what = _HEADERS.get(path.strip())
        if what and sx.relevant(ctx, d.start):
            yield Hit(d.start, d.path_end,
                      f"`#include <{path.decode()}>` ({what}): no HIP equivalent", _FIX)


@rule(code="HP852", name="async-copy-pipeline-api", category="async-copy", severity="error",
      effort="high",
      triggers=(b'memcpy_async', b'pipeline', b'barrier'))
def async_copy_pipeline_api(ctx):
    """Flags `cuda::memcpy_async`, `cuda::pipeline`, `cuda::barrier` and `__pipeline_*`.

    What it does:
    Reports, once per line, uses of libcu++'s asynchronous-copy API (`cuda::memcpy_async`,
    `cuda::pipeline`, `cuda::make_pipeline`, `cuda::pipeline_shared_state`, `cuda::barrier`,
    `cuda::aligned_size_t`, the `cuda::ptx::mbarrier_*`/`cp_async_*` wrappers) and the CUDA
    primitives
    `__pipeline_memcpy_async`, `__pipeline_commit`, `__pipeline_wait_prior`,
    `__pipeline_arrive_on`. Inline `cp.async` asm is reported by inline-ptx (HP301) instead,
    and `cooperative_groups::memcpy_async` by cooperative-groups.

    Why it matters on AMD GPUs:
    They drive NVIDIA's sm_80+ `cp.async` copy engine and split arrive/wait barriers. HIP does
    not provide them; the copy/compute overlap they give has to be rebuilt by hand.

    Example:
    cuda::memcpy_async(block, smem, gmem + off, cuda::aligned_size_t<16>(bytes), pipe);
    pipe.producer_commit();

    Fix:
    Copy with ordinary (vectorized) loads into shared memory followed by __syncthreads();
    double-buffer the shared tiles and issue the next tile's loads before computing on the
    current one to keep memory traffic overlapped.
    """
    matches = [(m.start(), m.end(), m.group()) for m in sx.code_word_matches(ctx, _API)]
    for start, end, name in _per_line(ctx, matches):
        yield Hit(start, end, f"`{name}`: CUDA asynchronous-copy API with no HIP equivalent", _FIX)


@rule(code="HP853", name="tma-tensor-map", category="async-copy", severity="error", effort="high",
      triggers=(b'ensorMap', b'bulk'))
def tma_tensor_map(ctx):
    """Flags Tensor Memory Accelerator (TMA) use: tensor maps and bulk async copies.

    What it does:
    Reports, once per line, `cuTensorMapEncodeTiled`/`cuTensorMapEncodeIm2col`, the
    `CUtensorMap` type, libcu++'s `cp_async_bulk_tensor_*`/`cp_async_bulk_*`,
    `cp_reduce_async_bulk*`, `memcpy_async_tx`, `barrier_arrive_tx`, `fence_proxy_async_*` and
    `cuda::ptx::tensormap_*`. (Inline `cp.async.bulk` PTX is reported by inline-ptx, HP301.)

    Why it matters on AMD GPUs:
    TMA is Hopper-and-later NVIDIA hardware that copies whole tensor tiles between global
    and shared memory asynchronously. AMD GPUs have no tensor-map copy engine and HIP has no
    such API.

    Example:
    cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, base, dims, strides,
                           box, elem_strides, ...);

    Fix:
    Load tiles with ordinary vectorized global loads into shared memory, synchronize the
    block, and double-buffer for overlap; remove the tensor-map setup on the host.
    """
    matches = [(m.start(), m.end(), m.group()) for m in ctx.code_matches(_TMA)]
    for start, end, name in _per_line(ctx, matches):
        yield Hit(start, end, f"`{name}`: TMA (tensor-map bulk copy) has no AMD/HIP equivalent",
                  _TMA_FIX)
