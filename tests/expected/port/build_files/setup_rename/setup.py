import glob

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

sources = ["csrc/bind.cpp"] + sorted(glob.glob("csrc/kernels/*.hip"))
setup(
    name="renamed",
    ext_modules=[CUDAExtension("renamed._C", sources + ["csrc/extra.hip"], libraries=["hiprand"])],
    cmdclass={"build_ext": BuildExtension},
)
