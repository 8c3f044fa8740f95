"""hipport: port CUDA C++ and PyTorch CUDA extensions to AMD HIP/ROCm, losslessly."""

__version__ = "0.1.0"
