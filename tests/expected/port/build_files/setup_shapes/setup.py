"""Unusual shapes: variables, helper functions, +=, append, f-strings, platform branches."""
import os
import subprocess

from setuptools import setup
from torch.utils.cpp_extension import IS_HIP_EXTENSION, BuildExtension, CUDAExtension

os.environ["PYTORCH_ROCM_ARCH"] = "gfx90a;gfx942"
arch_list = os.environ.get("PYTORCH_ROCM_ARCH", "")


def cc_flags():
    major = subprocess.check_output(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"])
    return [f"-arch=sm_{major.decode().strip().replace('.', '')}"]


def nvcc_flags(debug=False):
    flags = ["-O3", "-std=c++17"]
    if debug:
        flags += ["-g", "-Rpass-analysis=kernel-resource-usage"]
    flags.append("-fgpu-flush-denormals-to-zero")
    flags.extend([])
    return flags + cc_flags()


LIBS = ["cusparse", "cusolver"] if not IS_HIP_EXTENSION else ["hipsparse", "hipsolver"]
compile_args = {"cxx": ["-O2"]}
compile_args["nvcc"] = nvcc_flags() + ["-fgpu-rdc", "-fgpu-default-stream=per-thread"]
link = ["-lhipfft"]
link += ["-lroctx64"]
external = __import__("build_config").NVCC_FLAGS

setup(
    name="sparse_ops",
    ext_modules=[
        CUDAExtension("sparse_ops._C", ["csrc/ops.cpp", "csrc/spmv.cu"], libraries=LIBS,
                      extra_compile_args=compile_args, extra_link_args=link),
        CUDAExtension("sparse_ops._ext", ["csrc/ext.cu"],
                      extra_compile_args={"nvcc": external + ["-ffast-math"]}),
    ],
    cmdclass={"build_ext": BuildExtension},
)
