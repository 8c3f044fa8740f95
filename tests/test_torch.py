"""PyTorch custom-op repositories end to end: the ported examples/fused_ops_ext tree is a
snapshot (tests/expected/examples/fused_ops_ext/), and ROCm PyTorch's idioms are asserted one by
one: what v2 (torch >= 2.11) keeps and moves, what v1 (torch <= 2.10) writes instead.

`pytest tests/test_torch.py --update-expected` rewrites the snapshot (review the diff)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hipport.cli import main
from hipport.config import Settings
from hipport.pipeline import port_source
from hipport.rewrite.torch import header

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "fused_ops_ext"
SNAPSHOT = ROOT / "tests" / "expected" / "examples" / "fused_ops_ext"


def port_tree(src: Path, out: Path, *args: str) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["port", str(src), "-o", str(out), "-j", "1", *args])
    assert exit_.value.code == 0


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def ported(tmp_path_factory) -> dict[str, bytes]:
    out = tmp_path_factory.mktemp("torch") / "v2"
    port_tree(EXAMPLE, out)
    return files(out)


@pytest.fixture(scope="module")
def ported_v1(tmp_path_factory) -> dict[str, bytes]:
    out = tmp_path_factory.mktemp("torch") / "v1"
    port_tree(EXAMPLE, out, "--torch-hipify", "v1")
    return files(out)


def text(tree: dict[str, bytes], rel: str) -> str:
    return tree[rel].decode("utf-8")


# ---------------------------------------------------------------------------------------------
# the snapshot


def test_snapshot(ported, request):
    original = files(EXAMPLE)
    assert set(ported) == set(original), "the ported tree mirrors the input, file for file"
    changed = {rel: data for rel, data in ported.items() if data != original[rel]}
    if request.config.getoption("--update-expected"):
        shutil.rmtree(SNAPSHOT, ignore_errors=True)
        for rel, data in changed.items():
            (SNAPSHOT / rel).parent.mkdir(parents=True, exist_ok=True)
            (SNAPSHOT / rel).write_bytes(data)
    assert SNAPSHOT.is_dir(), "no snapshot; run pytest tests/test_torch.py --update-expected"
    assert files(SNAPSHOT) == changed


def test_every_kind_of_file_is_ported(ported):
    original = files(EXAMPLE)
    changed = {rel for rel, data in ported.items() if data != original[rel]}
    assert changed == {
        "CMakeLists.txt", "Dockerfile", "requirements.txt", "scripts/build.sh", "setup.py",
        "csrc/batched_gemm.cu", "csrc/bias_gelu.cu", "csrc/cuda_utils.cuh", "csrc/dropout_rand.cu",
    }
    # Python code keeps torch.cuda and device="cuda": ROCm PyTorch answers to them.
    for rel in ("fused_ops/__init__.py", "fused_ops/ops.py", "tests/test_fused_ops.py", "csrc/bindings.cpp",
                "csrc/ops.h", "README.md"):
        assert ported[rel] == original[rel], rel


# ---------------------------------------------------------------------------------------------
# C++: the PyTorch idioms, one by one (v2)


@pytest.mark.parametrize("rel,kept", [
    ("csrc/bias_gelu.cu", "cudaStream_t stream = at::cuda::getCurrentCUDAStream();".replace("cudaStream_t", "hipStream_t")),
    ("csrc/bias_gelu.cu", "const at::cuda::OptionalCUDAGuard device_guard(x.device());"),
    ("csrc/bias_gelu.cu", "C10_CUDA_KERNEL_LAUNCH_CHECK();"),
    ("csrc/bias_gelu.cu", "AT_DISPATCH_FLOATING_TYPES_AND2(at::ScalarType::Half, at::ScalarType::BFloat16"),
    ("csrc/bias_gelu.cu", "bias_gelu_kernel<scalar_t><<<blocks_for(n), kThreads, 0, stream>>>("),
    ("csrc/dropout_rand.cu", "c10::cuda::CUDAGuard device_guard(x.device());"),
    ("csrc/dropout_rand.cu", "auto stream = at::cuda::getCurrentCUDAStream();"),
    ("csrc/dropout_rand.cu", "AT_DISPATCH_FLOATING_TYPES_AND_HALF("),
    ("csrc/batched_gemm.cu", "hipblasHandle_t handle = at::cuda::getCurrentCUDABlasHandle();"),
    ("csrc/batched_gemm.cu", "TORCH_CUDABLAS_CHECK(hipblasSetStream(handle, at::cuda::getCurrentCUDAStream()));"),
    ("csrc/batched_gemm.cu", "a.scalar_type() == at::kFloat"),
    ("csrc/cuda_utils.cuh", 'TORCH_CHECK((x).is_cuda(), #x " must be a CUDA tensor")'),
    ("csrc/bindings.cpp", "TORCH_LIBRARY_IMPL(fused_ops, CUDA, m) {"),
    ("csrc/bindings.cpp", "torch::cuda::is_available()"),
])
def test_v2_keeps_pytorch_spellings(ported, rel, kept):
    assert kept in text(ported, rel)


@pytest.mark.parametrize("rel,old,new", [
    ("csrc/bias_gelu.cu", "<ATen/cuda/CUDAContext.h>", "<ATen/hip/HIPContext.h>"),
    ("csrc/bias_gelu.cu", "<c10/cuda/CUDAGuard.h>", "<c10/hip/HIPGuard.h>"),
    ("csrc/batched_gemm.cu", "<ATen/cuda/Exceptions.h>", "<ATen/hip/Exceptions.h>"),
    ("csrc/cuda_utils.cuh", "<c10/cuda/CUDAException.h>", "<c10/hip/HIPException.h>"),
    ("csrc/cuda_utils.cuh", "<cuda_runtime.h>", "<hip/hip_runtime.h>"),
    ("csrc/cuda_utils.cuh", "<cuda_fp16.h>", "<hip/hip_fp16.h>"),
    ("csrc/batched_gemm.cu", "<cublas_v2.h>", "<hipblas/hipblas.h>"),
    ("csrc/dropout_rand.cu", "<curand_kernel.h>", "<hiprand/hiprand_kernel.h>"),
    ("csrc/bias_gelu.cu", "cudaStream_t stream", "hipStream_t stream"),
    ("csrc/batched_gemm.cu", "cublasHandle_t handle", "hipblasHandle_t handle"),
    ("csrc/batched_gemm.cu", "cublasSgemmStridedBatched(", "hipblasSgemmStridedBatched("),
    ("csrc/batched_gemm.cu", "CUBLAS_OP_N, CUBLAS_OP_N", "HIPBLAS_OP_N, HIPBLAS_OP_N"),
    ("csrc/dropout_rand.cu", "curandStatePhilox4_32_10_t state;", "hiprandStatePhilox4_32_10_t state;"),
    ("csrc/dropout_rand.cu", "curand_init(seed", "hiprand_init(seed"),
])
def test_v2_moves_headers_and_library_names(ported, rel, old, new):
    original = (EXAMPLE / rel).read_text()
    assert old in original and old not in text(ported, rel)
    assert new in text(ported, rel)


def test_cuda_version_guard_gets_a_suggestion_not_a_rewrite():
    data = (EXAMPLE / "csrc/batched_gemm.cu").read_bytes()
    result = port_source(data, "csrc/batched_gemm.cu", "cuda", Settings())
    assert b"#if defined(CUDA_VERSION) && CUDA_VERSION >= 11000" in result.data
    guards = [f for f in result.result.findings if f.category == "pytorch-extension" and "CUDA_VERSION" in f.message]
    assert guards and all("USE_ROCM" in f.suggestion for f in guards)
    assert not [f for f in result.result.findings if f.category == "version-macro"]


# ---------------------------------------------------------------------------------------------
# build files, scripts and dependencies of the example


@pytest.mark.parametrize("rel,present,absent", [
    ("setup.py", 'CUDAExtension(\n            name="fused_ops._C"', None),
    ("setup.py", 'libraries=["hipblas", "hiprand"]', '"cublas"'),
    ("setup.py", 'os.environ.setdefault("PYTORCH_ROCM_ARCH", "gfx90a;gfx942")', "TORCH_CUDA_ARCH_LIST"),
    ("setup.py", '"-ffast-math"', "--use_fast_math"),
    ("setup.py", '"nvcc": ["-std=c++17"] + NVCC_FLAGS', "-gencode"),
    ("setup.py", "# keep line tables for Nsight Compute", "-lineinfo"),
    ("setup.py", '"-O3",', "-Xptxas"),
    ("CMakeLists.txt", "project(fused_ops LANGUAGES CXX HIP)", "LANGUAGES CXX CUDA"),
    ("CMakeLists.txt", "cmake_minimum_required(VERSION 3.21)", "VERSION 3.18"),
    ("CMakeLists.txt", "set(CMAKE_HIP_ARCHITECTURES gfx90a gfx942)", "CMAKE_CUDA_ARCHITECTURES"),
    ("CMakeLists.txt", "find_package(hip REQUIRED)\nfind_package(hipblas REQUIRED)\nfind_package(hiprand REQUIRED)",
     "CUDAToolkit"),
    ("CMakeLists.txt", "hip::host roc::hipblas hip::hiprand", "CUDA::"),
    ("CMakeLists.txt", "set_source_files_properties(csrc/bias_gelu.cu csrc/dropout_rand.cu csrc/batched_gemm.cu "
                       "PROPERTIES LANGUAGE HIP)", None),
    ("CMakeLists.txt", '"$<$<COMPILE_LANGUAGE:HIP>:-ffast-math>"', "COMPILE_LANGUAGE:CUDA"),
    ("CMakeLists.txt", "# nvcc-only options: fast math, line tables", None),  # comments stay
    ("Dockerfile", "FROM rocm/dev-ubuntu-22.04:6.3", "nvidia/cuda"),
    ("Dockerfile", 'ARG PYTORCH_ROCM_ARCH="gfx90a;gfx942"\nENV PYTORCH_ROCM_ARCH=${PYTORCH_ROCM_ARCH}', None),
    ("Dockerfile", "ROCM_HOME=/opt/rocm", "/usr/local/cuda"),
    ("Dockerfile", "(rocm-smi || true)", None),
    ("Dockerfile", "# nvidia-smi fails without a GPU", None),
    ("requirements.txt", "--extra-index-url https://download.pytorch.org/whl/rocm6.3\ntorch==2.5.1\n", "cu121\n"),
    ("requirements.txt", "cupy-cuda12x>=13.0", None),
    ("scripts/build.sh", "\nrocm-smi\n", None),
    ("scripts/build.sh", "GPU_NAME=$(nvidia-smi --query-gpu=name", None),  # output parsed: flagged, kept
    ("scripts/build.sh", 'export PYTORCH_ROCM_ARCH="gfx90a;gfx942"', "TORCH_CUDA_ARCH_LIST"),
])
def test_example_build_files(ported, rel, present, absent):
    out = text(ported, rel)
    assert present in out
    if absent is not None:
        assert absent not in out


def test_example_report_flags_what_is_left(tmp_path):
    out, report = tmp_path / "out", tmp_path / "report"
    port_tree(EXAMPLE, out, "--report", str(report))
    import json

    doc = json.loads((report / "report.json").read_text())
    entries = {f["source"]: f for f in doc["files"]}
    req = entries["requirements.txt"]
    cupy = [f for f in req["findings"] if f["category"] == "cuda-only-library" and "cupy" in f["message"]]
    assert cupy and "cupy-rocm" in cupy[0]["suggestion"]
    script = entries["scripts/build.sh"]
    assert any("nvidia-smi` left as written (its output is parsed)" in n for n in script["notes"])
    setup = entries["setup.py"]
    assert any("`-lineinfo` removed" in n for n in setup["notes"])
    gemm = entries["csrc/batched_gemm.cu"]
    assert any(f["category"] == "pytorch-extension" for f in gemm["findings"])


# ---------------------------------------------------------------------------------------------
# v1 (torch <= 2.10) and the header table


@pytest.mark.parametrize("rel,expected", [
    ("csrc/bias_gelu.cu", "#include <ATen/hip/impl/HIPGuardImplMasqueradingAsCUDA.h>"),
    ("csrc/bias_gelu.cu", "hipStream_t stream = at::hip::getCurrentHIPStreamMasqueradingAsCUDA();"),
    ("csrc/bias_gelu.cu", "const at::hip::OptionalHIPGuardMasqueradingAsCUDA device_guard(x.device());"),
    ("csrc/bias_gelu.cu", "C10_HIP_KERNEL_LAUNCH_CHECK();"),
    ("csrc/dropout_rand.cu", "c10::hip::HIPGuardMasqueradingAsCUDA device_guard(x.device());"),
    ("csrc/batched_gemm.cu", "hipblasSetStream(handle, at::hip::getCurrentHIPStreamMasqueradingAsCUDA())"),
    ("csrc/batched_gemm.cu", "hipblasHandle_t handle = at::cuda::getCurrentCUDABlasHandle();"),
    ("csrc/bindings.cpp", "TORCH_LIBRARY_IMPL(fused_ops, CUDA, m) {"),
    ("csrc/cuda_utils.cuh", "#include <c10/hip/HIPException.h>"),
    ("csrc/bias_gelu.cu", "#include <ATen/hip/HIPContext.h>"),
])
def test_v1_writes_masquerading_spellings(ported_v1, rel, expected):
    assert expected in text(ported_v1, rel)


def test_v1_and_v2_differ_only_in_cpp(ported, ported_v1):
    differ = {rel for rel in ported if ported[rel] != ported_v1[rel]}
    assert differ == {"csrc/bias_gelu.cu", "csrc/dropout_rand.cu", "csrc/batched_gemm.cu"}


@pytest.mark.parametrize("path,v2,v1", [
    ("ATen/cuda/CUDAContext.h", "ATen/hip/HIPContext.h", "ATen/hip/HIPContext.h"),
    ("ATen/cuda/detail/CUDAHooks.h", "ATen/hip/detail/HIPHooks.h", "ATen/hip/detail/HIPHooks.h"),
    ("ATen/cuda/Atomic.cuh", "ATen/hip/Atomic.cuh", "ATen/hip/Atomic.cuh"),
    ("ATen/native/cuda/Loops.cuh", "ATen/native/hip/Loops.cuh", "ATen/native/hip/Loops.cuh"),
    ("ATen/native/cuda/block_reduce.cuh", "ATen/native/hip/block_reduce.cuh", "ATen/native/hip/block_reduce.cuh"),
    ("c10/cuda/CUDAGuard.h", "c10/hip/HIPGuard.h", "ATen/hip/impl/HIPGuardImplMasqueradingAsCUDA.h"),
    ("c10/cuda/CUDAStream.h", "c10/hip/HIPStream.h", "ATen/hip/impl/HIPStreamMasqueradingAsCUDA.h"),
    ("c10/cuda/CUDACachingAllocator.h", "c10/hip/HIPCachingAllocator.h",
     "ATen/hip/impl/HIPCachingAllocatorMasqueradingAsCUDA.h"),
    ("c10/cuda/CUDAException.h", "c10/hip/HIPException.h", "c10/hip/HIPException.h"),
    ("torch/extension.h", None, None),
    ("ATen/Dispatch.h", None, None),
    ("c10/util/Half.h", None, None),
])
def test_header_table(path, v2, v1):
    assert header(path, "v2") == v2
    assert header(path, "v1") == v1


TORCH_SNIPPET = b"""#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#ifdef USE_CUDA
void f(at::Tensor t) {
  c10::cuda::CUDAStream s = c10::cuda::getCurrentCUDAStream();
  at::cuda::CUDAStreamGuard g(s);
  auto dev = c10::cuda::current_device();
  C10_CUDA_CHECK(cudaGetLastError());  // at::cuda::getCurrentCUDAStream() in a comment
  const char* m = "c10::cuda::CUDAGuard in a string";
  myns::CUDAStream other;
  TORCH_CHECK(t.device().type() == at::kCUDA);
}
#endif
"""


def test_snippet_v2_and_v1():
    v2 = port_source(TORCH_SNIPPET, "x.cu", "cuda", Settings()).data.decode()
    assert "#include <c10/hip/HIPStream.h>" in v2 and "#ifdef USE_ROCM" in v2
    assert "c10::cuda::CUDAStream s = c10::cuda::getCurrentCUDAStream();" in v2
    assert "C10_CUDA_CHECK(hipGetLastError());" in v2 and "at::kCUDA" in v2
    v1 = port_source(TORCH_SNIPPET, "x.cu", "cuda", Settings(torch_hipify="v1")).data.decode()
    assert "#include <ATen/hip/impl/HIPStreamMasqueradingAsCUDA.h>" in v1
    assert "c10::hip::HIPStreamMasqueradingAsCUDA s = c10::hip::getCurrentHIPStreamMasqueradingAsCUDA();" in v1
    assert "at::hip::HIPStreamGuardMasqueradingAsCUDA g(s);" in v1
    assert "c10::hip::current_device()" in v1 and "C10_HIP_CHECK(hipGetLastError());" in v1
    # Comments, strings and the project's own names stay.
    assert "// at::cuda::getCurrentCUDAStream() in a comment" in v1
    assert '"c10::cuda::CUDAGuard in a string"' in v1 and "myns::CUDAStream other;" in v1
    assert "at::kCUDA" in v1
    for out in (v2, v1):
        again = port_source(out.encode(), "x.cu", "cuda", Settings(torch_hipify="v1" if out is v1 else "v2"))
        assert again.data == out.encode()


def test_files_without_pytorch_keep_their_names():
    src = b"#include <cuda_runtime.h>\nstruct CUDAStream {};\n#ifdef USE_CUDA\nCUDAStream s;\n#endif\n"
    for variant in ("v1", "v2"):
        out = port_source(src, "x.cu", "cuda", Settings(torch_hipify=variant)).data
        assert b"struct CUDAStream {};" in out and b"#ifdef USE_CUDA" in out


def test_torch_hipify_option(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.hipport]\ntorch-hipify = "v1"\n')
    src = tmp_path / "k.cu"
    src.write_bytes(b"#include <c10/cuda/CUDAGuard.h>\n")
    from hipport.config import load_settings
    from hipport.errors import HipportError

    assert load_settings([src]).torch_hipify == "v1"
    assert load_settings([src], torch_hipify="v2").torch_hipify == "v2"
    with pytest.raises(HipportError):
        load_settings([src], torch_hipify="v3")
    with pytest.raises(SystemExit) as exit_:
        main(["port", str(src), "--stdout", "--torch-hipify", "v2"])
    assert exit_.value.code == 0


def test_rename_updates_the_build_files(tmp_path):
    out = tmp_path / "renamed"
    port_tree(EXAMPLE, out, "--rename")
    assert (out / "csrc" / "bias_gelu.hip").is_file() and not (out / "csrc" / "bias_gelu.cu").exists()
    setup = (out / "setup.py").read_text()
    assert 'csrc("bindings.cpp", "bias_gelu.hip", "dropout_rand.hip", "batched_gemm.hip")' in setup
    cmake = (out / "CMakeLists.txt").read_text()
    assert "csrc/bias_gelu.hip" in cmake and "LANGUAGE HIP" not in cmake


# ---------------------------------------------------------------------------------------------
# the original compiles with nvcc (opt-in: four translation units of PyTorch headers take minutes)


def _nvcc_includes() -> list[str] | None:
    """Include folders for compiling the example with nvcc, or None when something is missing."""
    nvcc = shutil.which("nvcc")
    try:
        import torch.utils.cpp_extension as ext  # noqa: PLC0415
    except Exception:
        return None
    if nvcc is None:
        return None
    dirs = list(ext.include_paths()) + [p for p in os.environ.get("CUDA_LIB_INCLUDE", "").split(":") if p]
    import sysconfig  # noqa: PLC0415

    dirs.append(sysconfig.get_paths()["include"])
    needed = ("cusolverDn.h", "cublas_v2.h", "curand_kernel.h", "c10/cuda/impl/cuda_cmake_macros.h")
    cuda_include = Path(nvcc).resolve().parent.parent / "include"
    for name in needed:
        if not any((Path(d) / name).is_file() for d in dirs + [str(cuda_include)]):
            return None
    return dirs


@pytest.mark.skipif(os.environ.get("HIPPORT_NVCC_EXAMPLE") != "1",
                    reason="opt-in (HIPPORT_NVCC_EXAMPLE=1): compiles the example with nvcc and PyTorch's headers")
@pytest.mark.parametrize("rel", ["csrc/bias_gelu.cu", "csrc/dropout_rand.cu", "csrc/batched_gemm.cu", "csrc/bindings.cpp"])
def test_example_compiles_with_nvcc(rel, tmp_path):
    dirs = _nvcc_includes()
    if dirs is None:
        pytest.skip("needs nvcc, a torch with its C++ headers, and the cuBLAS/cuRAND/cuSOLVER headers "
                    "(CUDA_LIB_INCLUDE=dir1:dir2)")
    lang = ["-x", "cu"] if rel.endswith(".cpp") else []
    cmd = ["nvcc", "-std=c++17", *lang, *(f"-I{d}" for d in dirs), f"-I{EXAMPLE / 'csrc'}",
           "-DTORCH_EXTENSION_NAME=_C", "-c", str(EXAMPLE / rel), "-o", str(tmp_path / "x.o")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]


@pytest.mark.parametrize("text, expected", [
    (b"auto s = at::cuda::getCurrentCUDAStream();", True),
    (b"c10 :: cuda ::CUDAGuard g(dev);", True),
    (b"auto s = at::\n    cuda::getCurrentCUDAStream();", True),
    (b"at::cuda::x();", True),  # at the very start of the file
    (b"// at::cuda::getCurrentCUDAStream()\nint x;", False),
    (b'const char* s = "at::cuda::x";', False),
    (b"flat::cuda::x(); thrust::cuda::par;", False),
    (b"c10::hip::x(); at::cuda_stream;", False),
    (b"#define STREAM at::cuda::getCurrentCUDAStream()\nint x;", True),  # a macro body is code
    (b"int cuda = 0; thrust::cuda::par; x = cuda::y + cuda;\nauto s = at :: cuda :: s();", True),
    (b"int cuda = 0; thrust::cuda::par; x = cuda::y + cuda;", False),
    (b"/* at */ ::cuda::x(); at /* c */ ::cuda::y();", False),
])
def test_torch_source_by_its_cuda_namespace(text, expected):
    from hipport.loaders import tools
    from hipport.rewrite.torch import is_torch_source

    assert is_torch_source(tools(Settings())[1].lex(text)) is expected
