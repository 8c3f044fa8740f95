"""A typical extension build script: literal lists, a dict of compiler flags."""
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

# "--use_fast_math" in a comment or docstring is not a flag
setup(
    name="attn_ops",
    ext_modules=[
        CUDAExtension(
            name="attn_ops._C",
            sources=["csrc/attn.cpp", "csrc/attn_kernel.cu"],
            libraries=["hipblas", "hipblaslt", "c10"],
            extra_link_args=["-lhiprand", "-Wl,--no-as-needed"],
            extra_compile_args={
                "cxx": ["-O3", "-fopenmp"],
                "nvcc": [
                    "-O3",
                    "-ffast-math",
                    "-U__CUDA_NO_HALF_OPERATORS__",
                    "-fno-strict-aliasing",
                    # register report
                    "-DNDEBUG",
                ],
            },
        )
    ],
    cmdclass={"build_ext": BuildExtension},
    description="uses -lineinfo and cublas (a string that is not a flag list)",
)
