"""Build the fused_ops CUDA extension: pip install --no-build-isolation ."""

import os

from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

HERE = os.path.dirname(os.path.abspath(__file__))

# Architectures to build for when the caller does not say (Volta, Ampere, Ada + PTX).
os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0;8.0;8.6+PTX")

NVCC_FLAGS = [
    "-O3",
    "--use_fast_math",
    "-lineinfo",  # keep line tables for Nsight Compute
    "-gencode", "arch=compute_80,code=sm_80",
    "-Xptxas=-v",
    "--expt-relaxed-constexpr",
]


def csrc(*names):
    return [os.path.join("csrc", name) for name in names]


setup(
    name="fused_ops",
    version="0.1.0",
    description="Fused bias-GELU, dropout and batched GEMM operators for PyTorch",
    packages=find_packages(exclude=["tests"]),
    ext_modules=[
        CUDAExtension(
            name="fused_ops._C",
            sources=csrc("bindings.cpp", "bias_gelu.cu", "dropout_rand.cu", "batched_gemm.cu"),
            include_dirs=[os.path.join(HERE, "csrc")],
            libraries=["cublas", "curand"],
            extra_compile_args={
                "cxx": ["-O3", "-std=c++17"],
                "nvcc": ["-std=c++17"] + NVCC_FLAGS,
            },
        )
    ],
    cmdclass={"build_ext": BuildExtension},
    install_requires=["torch>=2.1"],
    python_requires=">=3.9",
)
