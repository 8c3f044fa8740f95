"""Tests of the hipcc harness (tests/hiptools.py) and of the HIP 5.2 facts it relies on.

Compile cases elsewhere trust that "passes hipcc" means something: a valid HIP
file passes, and the constructs hipport flags (inline PTX, warp *_sync
intrinsics) really fail on the toolchain CI installs.
"""

from __future__ import annotations

import textwrap

import pytest

from hiptools import (
    describe,
    find_hip_header,
    find_hipcc,
    hipcc_device_compile,
    hipcc_syntax_check,
    hipcc_version,
    requires_hipcc,
)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def need_header(relative):
    if find_hip_header(relative) is None:
        pytest.skip(f"<{relative}> not installed")


VALID = """
    #include <hip/hip_runtime.h>

    __global__ void scale(float* x, float a, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) x[i] *= a;
    }

    int main() {
        float* d = nullptr;
        if (hipMalloc(&d, 256 * sizeof(float)) != hipSuccess) return 1;
        scale<<<1, 256>>>(d, 2.0f, 256);
        hipLaunchKernelGGL(scale, dim3(1), dim3(256), 0, 0, d, 2.0f, 256);
        return hipFree(d) == hipSuccess ? 0 : 1;
    }
"""

INLINE_PTX = """
    #include <hip/hip_runtime.h>

    __global__ void lane(unsigned* out) {
        unsigned x;
        asm volatile("mov.u32 %0, %%laneid;" : "=r"(x));
        out[threadIdx.x] = x;
    }
"""


# --- without hipcc -------------------------------------------------------------


def test_missing_hipcc_is_reported(monkeypatch, tmp_path):
    monkeypatch.setenv("HIPPORT_HIPCC", str(tmp_path / "no-such-hipcc"))
    assert find_hipcc() is None
    with pytest.raises(FileNotFoundError, match="apt-get install hipcc"):
        hipcc_syntax_check(write(tmp_path, "k.hip", VALID))


# --- with hipcc ----------------------------------------------------------------


@pytest.mark.hipcc
@requires_hipcc
class TestHipcc:
    def test_version_is_known(self):
        assert hipcc_version() is not None

    @pytest.mark.parametrize("name", ["k.hip", "k.cu", "k.h"])
    def test_valid_program_passes(self, tmp_path, name):
        # .h is not compiled as HIP by hipcc itself; the harness forces -x hip.
        proc = hipcc_syntax_check(write(tmp_path, name, VALID))
        assert proc.returncode == 0, describe(proc)
        assert "-fsyntax-only" in proc.args

    def test_syntax_error_fails(self, tmp_path):
        proc = hipcc_syntax_check(write(tmp_path, "bad.hip", VALID.replace("x[i] *= a;", "x[i] *= ;")))
        assert proc.returncode != 0
        assert "error" in proc.stderr

    def test_include_dirs_are_used(self, tmp_path):
        write(tmp_path, "inc/local/consts.h", "#define SCALE 3.0f\n")
        src = write(tmp_path, "k.hip", """
            #include <hip/hip_runtime.h>
            #include "local/consts.h"
            __global__ void k(float* x) { x[threadIdx.x] = SCALE; }
        """)
        assert hipcc_syntax_check(src).returncode != 0
        proc = hipcc_syntax_check(src, include_dirs=[tmp_path / "inc"])
        assert proc.returncode == 0, describe(proc)

    def test_inline_ptx_fails_device_compile(self, tmp_path):
        src = write(tmp_path, "ptx.hip", INLINE_PTX)
        proc = hipcc_device_compile(src)
        assert proc.returncode != 0, describe(proc)
        assert "invalid instruction" in proc.stderr

    def test_inline_ptx_slips_through_syntax_only(self, tmp_path):
        # Pinned so nobody relies on -fsyntax-only to catch inline PTX:
        # asm strings are only parsed when the device code is assembled.
        proc = hipcc_syntax_check(write(tmp_path, "ptx.hip", INLINE_PTX))
        assert proc.returncode == 0, describe(proc)

    def test_valid_program_passes_device_compile(self, tmp_path):
        proc = hipcc_device_compile(write(tmp_path, "k.hip", VALID))
        assert proc.returncode == 0, describe(proc)

    def test_device_compile_leaves_nothing_in_the_temp_folder(self, tmp_path, monkeypatch):
        # clang leaves two empty folders (k-1a2b3c) in TMPDIR for each device compile
        temp = tmp_path / "temp"
        temp.mkdir()
        monkeypatch.setenv("TMPDIR", str(temp))
        proc = hipcc_device_compile(write(tmp_path, "k.hip", VALID))
        assert proc.returncode == 0, describe(proc)
        assert list(temp.iterdir()) == []

    def test_shfl_down_sync_fails_on_hip5(self, tmp_path):
        version = hipcc_version() or ""
        if not version.startswith("5."):
            pytest.skip(f"fact pinned for HIP 5.x, found {version}")
        body = """
            #include <hip/hip_runtime.h>
            __global__ void k(float* out) {
                float v = out[threadIdx.x];
                v += SHUFFLE;
                out[threadIdx.x] = v;
            }
        """
        synced = hipcc_syntax_check(
            write(tmp_path, "sync.hip", body.replace("SHUFFLE", "__shfl_down_sync(0xffffffff, v, 16)"))
        )
        assert synced.returncode != 0, describe(synced)
        assert "__shfl_down_sync" in synced.stderr
        maskless = hipcc_syntax_check(
            write(tmp_path, "nomask.hip", body.replace("SHUFFLE", "__shfl_down(v, 16)"))
        )
        assert maskless.returncode == 0, describe(maskless)

    def test_hiprand_host_api_passes(self, tmp_path):
        need_header("hiprand/hiprand.h")
        proc = hipcc_syntax_check(write(tmp_path, "rand.cu", """
            #include <hip/hip_runtime.h>
            #include <hiprand/hiprand.h>
            int main() {
                hiprandGenerator_t gen;
                if (hiprandCreateGenerator(&gen, HIPRAND_RNG_PSEUDO_DEFAULT) != HIPRAND_STATUS_SUCCESS) return 1;
                hiprandSetPseudoRandomGeneratorSeed(gen, 1234ULL);
                float* d = nullptr;
                hiprandGenerateUniform(gen, d, 16);
                hiprandDestroyGenerator(gen);
                return 0;
            }
        """))
        assert proc.returncode == 0, describe(proc)

    def test_hiprand_device_api_passes(self, tmp_path):
        need_header("hiprand/hiprand_kernel.h")
        proc = hipcc_syntax_check(write(tmp_path, "rand_kernel.cu", """
            #include <hip/hip_runtime.h>
            #include <hiprand/hiprand_kernel.h>
            __global__ void fill(float* x, unsigned long long seed) {
                int i = blockIdx.x * blockDim.x + threadIdx.x;
                hiprandState_t state;
                hiprand_init(seed, i, 0, &state);
                x[i] = hiprand_uniform(&state);
            }
        """))
        assert proc.returncode == 0, describe(proc)

    def test_hipsparse_passes(self, tmp_path):
        # Debian installs only <hipsparse/hipsparse.h> (no flat <hipsparse.h>).
        need_header("hipsparse/hipsparse.h")
        proc = hipcc_syntax_check(write(tmp_path, "sparse.cu", """
            #include <hip/hip_runtime.h>
            #include <hipsparse/hipsparse.h>
            int main() {
                hipsparseHandle_t handle;
                if (hipsparseCreate(&handle) != HIPSPARSE_STATUS_SUCCESS) return 1;
                hipsparseMatDescr_t descr;
                hipsparseCreateMatDescr(&descr);
                hipsparseSetMatIndexBase(descr, HIPSPARSE_INDEX_BASE_ZERO);
                hipsparseDestroyMatDescr(descr);
                hipsparseDestroy(handle);
                return 0;
            }
        """))
        assert proc.returncode == 0, describe(proc)

    def test_rocprim_passes_with_cxx17(self, tmp_path):
        need_header("rocprim/rocprim.hpp")
        proc = hipcc_syntax_check(write(tmp_path, "prim.hip", """
            #include <hip/hip_runtime.h>
            #include <rocprim/rocprim.hpp>
            __global__ void block_sum(int* p) {
                using reduce_t = rocprim::block_reduce<int, 256>;
                __shared__ reduce_t::storage_type storage;
                int v = p[threadIdx.x];
                reduce_t().reduce(v, v, storage);
                if (threadIdx.x == 0) p[0] = v;
            }
        """))
        assert proc.returncode == 0, describe(proc)
