"""Helpers for tests that compile HIP code with Debian's hipcc (HIP 5.2, clang 15).

Facts this module relies on (checked against Debian bookworm's hipcc 5.2.3-8):

- ``HIP_PLATFORM=amd`` must be set: hipcc otherwise looks for nvcc, finds it on
  machines with CUDA installed, and forwards everything to nvcc.
- hipcc compiles ``.cu``/``.cuh``/``.hip``/``.cpp``/``.cc``/``.cxx`` as HIP by itself,
  but treats ``.h``/``.hpp``/``.inl`` as plain C++ headers (no HIP headers, no
  device pass). We always pass ``-x hip`` before the file so every ported file is
  checked the same way; hipcc does not add a second ``-x hip`` when one is given.
- ``HIP_PATH``/``ROCM_PATH`` are not needed: Debian's hipcc finds /usr itself.
- ``-std=c++17`` is needed (hipcc 5.2 passes ``-std=c++11`` first; a later
  ``-std`` wins). rocPRIM fails to parse under C++11.
- An explicit ``--offload-arch`` is needed, otherwise hipcc runs
  rocm_agent_enumerator, which crashes without /sys/class/kfd.
- hipcc always appends link flags (``-lamdhip64`` ...), which clang reports as
  unused with ``-fsyntax-only``; ``-Wno-unused-command-line-argument`` hides that noise.
- ``-fsyntax-only`` does NOT reject inline PTX: inline assembly is only parsed when
  device code is assembled. :func:`hipcc_device_compile` runs the device-side
  code generation (``--cuda-device-only -c``) and does reject it
  ("error: invalid instruction").
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Iterable, Sequence

import pytest

from hipport import verify

#: The GPU architecture checks compile for. gfx90a (MI200, CDNA2) is accepted by
#: clang 15; newer ones (gfx942, gfx1100) are not.
OFFLOAD_ARCH = "gfx90a"

#: Suffixes hipcc would not compile as HIP on its own; we force ``-x hip`` anyway.
_PLAIN_C_SUFFIXES = {".c"}

#: Where HIP and ROCm library headers are looked up by :func:`find_hip_header`.
_DEFAULT_INCLUDE_ROOTS = ("/usr/include", "/opt/rocm/include")

_INSTALL_HINT = (
    "hipcc not found; install Debian's HIP toolchain: apt-get install hipcc "
    "libamdhip64-dev rocm-device-libs (optional: libhiprand-dev librocrand-dev "
    "librocprim-dev libhipsparse-dev librocsparse-dev)"
)


def find_hipcc() -> str | None:
    """Path of the hipcc to use, or None: the same lookup as `hipport verify`
    (HIPPORT_HIPCC, then PATH, then Debian's and ROCm's locations)."""
    return verify.find_hipcc()


hipcc_env = verify.hipcc_env


def hipcc_version() -> str | None:
    """hipcc's "HIP version: X.Y.Z-N" value (e.g. "5.2.21153-0"), or None."""
    hipcc = find_hipcc()
    if hipcc is None:
        return None
    try:
        proc = subprocess.run(
            # --offload-arch stops hipcc probing for a GPU (a traceback without one).
            [hipcc, f"--offload-arch={OFFLOAD_ARCH}", "--version"], env=hipcc_env(), capture_output=True,
            text=True, timeout=60, stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"HIP version:\s*(\S+)", proc.stdout)
    return match.group(1) if match else None


def find_hip_header(relative: str, roots: Iterable[str] = ()) -> Path | None:
    """Where an include like ``hipsparse/hipsparse.h`` resolves, or None.

    Searches ``roots``, then $ROCM_PATH/include and $HIP_PATH/include when set,
    then /usr/include and /opt/rocm/include. Lets a test skip when an optional
    library package is missing instead of failing with "file not found".
    """
    candidates = list(roots)
    for var in ("ROCM_PATH", "HIP_PATH"):
        if os.environ.get(var):
            candidates.append(os.path.join(os.environ[var], "include"))
    candidates.extend(_DEFAULT_INCLUDE_ROOTS)
    for root in candidates:
        path = Path(root) / relative
        if path.is_file():
            return path
    return None


def _hipcc_command(
    path: os.PathLike[str] | str,
    mode: Sequence[str],
    include_dirs: Iterable[os.PathLike[str] | str],
    extra: Iterable[str],
    offload_arch: str,
) -> list[str]:
    hipcc = find_hipcc()
    if hipcc is None:
        raise FileNotFoundError(_INSTALL_HINT)
    path = Path(path)
    cmd = [
        hipcc,
        f"--offload-arch={offload_arch}",
        "-std=c++17",
        *mode,
        "-Wno-unused-command-line-argument",
    ]
    cmd.extend(f"-I{d}" for d in include_dirs)
    cmd.extend(extra)
    if path.suffix not in _PLAIN_C_SUFFIXES:
        cmd.extend(["-x", "hip"])  # applies to the file that follows
    cmd.append(str(path))
    return cmd


def _run(cmd: list[str], cwd: os.PathLike[str] | str | None, timeout: float,
         temp: str | None = None) -> subprocess.CompletedProcess:
    env = hipcc_env()
    if temp is not None:  # clang's own temporaries: it leaves empty folders behind
        env["TMPDIR"] = temp
    return subprocess.run(
        cmd, env=env, cwd=cwd, capture_output=True, text=True,
        errors="replace", timeout=timeout, stdin=subprocess.DEVNULL,
    )


def hipcc_syntax_check(
    path: os.PathLike[str] | str,
    include_dirs: Iterable[os.PathLike[str] | str] = (),
    extra: Iterable[str] = (),
    *,
    offload_arch: str = OFFLOAD_ARCH,
    cwd: os.PathLike[str] | str | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess:
    """``hipcc --offload-arch=gfx90a -std=c++17 -fsyntax-only -x hip PATH``.

    Returns the CompletedProcess (returncode, stdout, stderr as text); never
    raises on a compile error. Raises FileNotFoundError when hipcc is missing.
    Host and device passes are both checked; inline PTX is NOT caught (see
    :func:`hipcc_device_compile`).
    """
    cmd = _hipcc_command(path, ["-fsyntax-only"], include_dirs, extra, offload_arch)
    return _run(cmd, cwd, timeout)


def hipcc_device_compile(
    path: os.PathLike[str] | str,
    include_dirs: Iterable[os.PathLike[str] | str] = (),
    extra: Iterable[str] = (),
    *,
    offload_arch: str = OFFLOAD_ARCH,
    cwd: os.PathLike[str] | str | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess:
    """Compile the device side to an object (``--cuda-device-only -c``), output discarded.

    Slower than the syntax check (about 1 s for a small file) but it runs the
    assembler, so inline PTX fails here ("invalid instruction").
    """
    with tempfile.TemporaryDirectory(prefix="hipport-hipcc-") as tmp:
        out = os.path.join(tmp, "device.o")
        mode = ["--cuda-device-only", "-c", "-o", out]
        cmd = _hipcc_command(path, mode, include_dirs, extra, offload_arch)
        return _run(cmd, cwd, timeout, temp=tmp)  # a device compile leaves two folders a file


def describe(proc: subprocess.CompletedProcess, limit: int = 4000) -> str:
    """A short text for assertion messages: the command, exit code and diagnostics."""
    args = proc.args if isinstance(proc.args, str) else " ".join(map(str, proc.args))
    output = (proc.stderr or "") + (proc.stdout or "")
    if len(output) > limit:
        output = "...\n" + output[-limit:]
    return f"$ {args}\nexit {proc.returncode}\n{output}"


#: Decorator / pytestmark entry: skip when hipcc is not installed.
requires_hipcc = pytest.mark.skipif(find_hipcc() is None, reason=_INSTALL_HINT)
