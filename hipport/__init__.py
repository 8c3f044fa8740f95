"""hipport: port CUDA C++ and PyTorch CUDA extensions to AMD HIP/ROCm, losslessly."""

__version__ = "0.1.0"

# typing.TYPE_CHECKING without importing typing (3 ms a process, which a run served from the
# cache would spend for nothing): the modules import what only their annotations name under
# `if TYPE_CHECKING:`, which type checkers take as true by its name.
TYPE_CHECKING = False
