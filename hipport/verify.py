"""`hipport verify OUT`: compile every ported translation unit with hipcc, in parallel, and say
per file OK, FAIL (with the first error) or MISSING (a library header that is not installed).

The compile is `hipcc --offload-arch=ARCH -std=c++17 -fsyntax-only -x hip FILE` with
HIP_PLATFORM=amd (hipcc would otherwise forward to nvcc where one is installed), an explicit
--offload-arch (without one hipcc probes for a GPU), `-x hip` (hipcc compiles .h/.hpp as plain
C++ otherwise; a .c file is compiled as C, without the C++ -std and with -D__HIP_PLATFORM_AMD__=1,
as CMake's hip::host target gives C sources) and
-Wno-unused-command-line-argument (hipcc always appends link flags). Include
folders come from the build files (CMake include_directories / target_include_directories,
setup.py include_dirs, Makefile -I) and from -I; PyTorch extension sources also get the
installed torch's include folders and the defines CUDAExtension passes on ROCm.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sysconfig
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from hipport import regexes
from hipport.config import Settings
from hipport.edits import splice
from hipport.errors import HipportError
from hipport.parallel import processes
from hipport.parse.hash_comments import comment_spans
from hipport.words import plural

INSTALL_HINT = (
    "hipcc not found. Install a HIP compiler, e.g. Debian's HIP 5.2 toolchain:\n"
    "    apt-get install -y hipcc libamdhip64-dev rocm-device-libs\n"
    "    (optional: libhiprand-dev librocrand-dev librocprim-dev libhipsparse-dev librocsparse-dev)\n"
    "or ROCm from AMD (hipcc in /opt/rocm/bin); or name one with --hipcc PATH or HIPPORT_HIPCC."
)
TU_SUFFIXES = frozenset({".cu", ".hip", ".cpp", ".cc", ".cxx", ".c"})
PLATFORM_DEFINE = "__HIP_PLATFORM_AMD__=1"  # what hipcc defines for HIP sources, and not for C
HEADER_SUFFIXES = frozenset({".cuh", ".h", ".hpp", ".hxx", ".hh"})
# What CUDAExtension defines for hipcc on ROCm (torch.utils.cpp_extension), plus a module name.
TORCH_DEFINES = (PLATFORM_DEFINE, "USE_ROCM=1", "HIPBLAS_V2", "TORCH_EXTENSION_NAME=hipport_verify")
_TORCH_INCLUDE = regexes.compile(rb"^\s*#\s*include\s*[<\"](?:torch|ATen|c10)/", re.M)
_NOT_FOUND = regexes.compile(r"fatal error: '([^']+)' file not found")
_ERROR = regexes.compile(r"\berror:")

OK, FAIL, MISSING = "OK", "FAIL", "MISSING"


@dataclass(frozen=True)
class Options:
    offload_arch: str = "gfx90a"
    include_dirs: tuple[Path, ...] = ()
    defines: tuple[str, ...] = ()
    jobs: int = 0  # 0: one per CPU this process may use (parallel.processes)
    headers: bool = False  # also compile headers on their own
    strict: bool = False  # a missing library header is a failure
    hipcc: str | None = None
    std: str = "c++17"
    timeout: float = 600


@dataclass(frozen=True)
class Outcome:
    path: str  # relative to OUT, with `/`
    status: str  # OK | FAIL | MISSING
    message: str = ""  # the first error, or the missing header
    seconds: float = 0.0
    command: tuple[str, ...] = field(default=(), compare=False)


# ---------------------------------------------------------------------------------------------
# hipcc


def find_hipcc(explicit: str | os.PathLike | None = None) -> str | None:
    """--hipcc, then HIPPORT_HIPCC, then PATH, then /usr/bin and /opt/rocm/bin."""
    for candidate in (explicit, os.environ.get("HIPPORT_HIPCC")):
        if candidate:
            return str(candidate) if os.access(candidate, os.X_OK) and os.path.isfile(candidate) else None
    found = shutil.which("hipcc")
    if found:
        return found
    for path in ("/usr/bin/hipcc", "/opt/rocm/bin/hipcc"):
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def hipcc_env() -> dict[str, str]:
    env = dict(os.environ)
    env["HIP_PLATFORM"] = "amd"
    return env


def hipcc_version(hipcc: str, arch: str) -> str:
    try:
        proc = subprocess.run([hipcc, f"--offload-arch={arch}", "--version"], env=hipcc_env(),
                              capture_output=True, text=True, errors="replace", timeout=60,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    m = re.search(r"HIP version:\s*(\S+)", proc.stdout)
    return m.group(1) if m else ""


# ---------------------------------------------------------------------------------------------
# what to compile, with which include folders


def units(root: Path, headers: bool = False) -> list[Path]:
    """The translation units under root (build, VCS and vendored folders skipped)."""
    from hipport.files import collect  # noqa: PLC0415

    if root.is_file():
        return [root]
    _, files = collect([root], Settings())
    wanted = TU_SUFFIXES | (HEADER_SUFFIXES if headers else frozenset())
    return [f.path for f in files if f.skip is None and not f.verbatim and f.link is None
            and f.path.suffix.lower() in wanted]


_CMAKE_INCLUDE = regexes.compile(rb"(?is)\b(?:target_)?include_directories\s*\(([^)]*)\)")
_CMAKE_KEYWORDS = frozenset({b"SYSTEM", b"BEFORE", b"AFTER", b"INTERFACE", b"PUBLIC", b"PRIVATE"})
_CMAKE_DIR_VARS = (b"${CMAKE_CURRENT_SOURCE_DIR}", b"${CMAKE_CURRENT_LIST_DIR}", b"${PROJECT_SOURCE_DIR}",
                   b"${CMAKE_SOURCE_DIR}")
_MAKE_INCLUDE = regexes.compile(rb"(?<![\w-])-I[ \t]*([^\s$()'\"]+)")


def build_file_includes(root: Path) -> list[Path]:
    """Include folders named by the build files under root that exist in the tree."""
    from hipport.files import collect, file_kind  # noqa: PLC0415

    if root.is_file():
        return []
    _, files = collect([root], Settings())
    found: list[Path] = []
    for f in files:
        if f.skip or f.link is not None:
            continue
        kind = file_kind(f.path.name)
        try:
            data = f.path.read_bytes() if kind in ("cmake", "setup.py", "make") else b""
        except OSError:
            continue
        here = f.path.parent
        if kind == "cmake":
            for m in _CMAKE_INCLUDE.finditer(_without_comments(kind, data)):
                args = m.group(1).split()
                if m.group().lower().startswith(b"target_") and args:
                    args = args[1:]  # the target
                for a in args:
                    a = a.strip(b'"')
                    if a in _CMAKE_KEYWORDS:
                        continue
                    for var in _CMAKE_DIR_VARS:
                        if a.startswith(var):
                            base = root if var == b"${CMAKE_SOURCE_DIR}" else here
                            a = str(base).encode() + a[len(var):]
                            break
                    if b"${" in a or b"$<" in a:
                        continue
                    found.append(here / a.decode("utf-8", "replace"))
        elif kind == "setup.py":
            found += [here / d for d in _setup_include_dirs(data)]
        elif kind == "make":
            found += [here / m.group(1).decode("utf-8", "replace")
                      for m in _MAKE_INCLUDE.finditer(_without_comments(kind, data))]
    out: list[Path] = []
    for d in found:
        d = d.resolve()
        if d.is_dir() and d not in out:
            out.append(d)
    return out


def _without_comments(kind: str, data: bytes) -> bytes:
    """The file with its comments taken out (parse/hash_comments: a `#` in a quoted argument
    stays, a CMake bracket comment goes whole)."""
    return splice(data, ((start, end, b"") for start, end in comment_spans(kind, data)))


def _setup_include_dirs(data: bytes) -> list[str]:
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "include_dirs":
            out += [c.value for c in ast.walk(node.value)
                    if isinstance(c, ast.Constant) and isinstance(c.value, str)]
    return out


def torch_includes() -> list[Path]:
    """The installed torch's C++ include folders and Python's, found without importing torch."""
    out: list[Path] = []
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        inc = Path(spec.origin).parent / "include"
        out += [p for p in (inc, inc / "torch" / "csrc" / "api" / "include") if p.is_dir()]
    py = sysconfig.get_paths().get("include")
    if py and Path(py).is_dir():
        out.append(Path(py))
    return out


def uses_torch(path: Path) -> bool:
    try:
        return bool(_TORCH_INCLUDE.search(path.read_bytes()))
    except OSError:
        return False


# ---------------------------------------------------------------------------------------------
# compiling


def command(hipcc: str, path: Path, opts: Options, include_dirs: Iterable[Path],
            defines: Iterable[str]) -> list[str]:
    c_file = path.suffix.lower() == ".c"  # C stays C: clang refuses a C++ -std for it
    cmd = [hipcc, f"--offload-arch={opts.offload_arch}", *([] if c_file else [f"-std={opts.std}"]),
           "-fsyntax-only", "-Wno-unused-command-line-argument"]
    cmd += [f"-I{d}" for d in include_dirs]
    defines = list(defines)
    if c_file and PLATFORM_DEFINE not in defines:
        # HIP's headers in C need the platform macro hipcc defines only for HIP; a CMake build
        # gets it from the hip::host target (HIP 5.2's hip-config.cmake), and so does this one.
        defines.append(PLATFORM_DEFINE)
    cmd += [f"-D{d}" for d in defines]
    if not c_file:
        cmd += ["-x", "hip"]
    cmd.append(str(path))
    return cmd


def _first_error(output: str, root: Path) -> str:
    prefix = str(root) + os.sep
    for line in output.splitlines():
        if _ERROR.search(line):
            return line.replace(prefix, "").strip()
    lines = [line for line in output.splitlines() if line.strip()]
    return lines[-1].replace(prefix, "").strip() if lines else "hipcc failed without a message"


def _in_tree(header: str, root: Path) -> bool:
    """Whether a header that was not found exists in the ported tree (an include-path problem
    of the port, not a library that is missing on this machine)."""
    name = header.rsplit("/", 1)[-1]
    return any(p.as_posix().endswith("/" + header) for p in root.rglob(name)) if root.is_dir() else False


def compile_one(hipcc: str, path: Path, root: Path, opts: Options, include_dirs: list[Path]) -> Outcome:
    rel = path.relative_to(root).as_posix() if root.is_dir() else path.name
    defines = list(opts.defines)
    dirs = list(include_dirs)
    if uses_torch(path):
        defines += [d for d in TORCH_DEFINES if d not in defines]
        dirs += [d for d in torch_includes() if d not in dirs]
    cmd = command(hipcc, path, opts, dirs, defines)
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, env=hipcc_env(), cwd=path.parent, capture_output=True, text=True,
                              errors="replace", timeout=opts.timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return Outcome(rel, FAIL, f"hipcc took longer than {opts.timeout:.0f} s", time.monotonic() - start, tuple(cmd))
    except OSError as exc:
        return Outcome(rel, FAIL, f"cannot run hipcc: {exc}", time.monotonic() - start, tuple(cmd))
    seconds = time.monotonic() - start
    if proc.returncode == 0:
        return Outcome(rel, OK, "", seconds, tuple(cmd))
    output = (proc.stderr or "") + (proc.stdout or "")
    first = _first_error(output, root if root.is_dir() else path.parent)
    m = _NOT_FOUND.search(first)
    if m and not opts.strict and not _in_tree(m.group(1), root):
        return Outcome(rel, MISSING, f"{m.group(1)} not found (not installed for this hipcc)", seconds, tuple(cmd))
    return Outcome(rel, FAIL, first, seconds, tuple(cmd))


def verify(root: Path, opts: Options, on_done: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Compile every translation unit under root; outcomes in path order."""
    hipcc = find_hipcc(opts.hipcc)
    if hipcc is None:
        raise HipportError(INSTALL_HINT)
    root = root.resolve()
    todo = units(root, opts.headers)
    include_dirs = list(opts.include_dirs) + [d for d in build_file_includes(root) if d not in opts.include_dirs]
    jobs = processes(opts.jobs)

    def one(path: Path) -> Outcome:
        outcome = compile_one(hipcc, path, root, opts, include_dirs)
        if on_done is not None:
            on_done(outcome)
        return outcome

    with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(todo) or 1))) as pool:
        outcomes = list(pool.map(one, todo))
    return sorted(outcomes, key=lambda o: o.path)


# ---------------------------------------------------------------------------------------------
# output


def failed(outcomes: Iterable[Outcome], strict: bool = False) -> bool:
    return any(o.status == FAIL or (strict and o.status == MISSING) for o in outcomes)


def summary(outcomes: list[Outcome]) -> str:
    counts = {s: sum(1 for o in outcomes if o.status == s) for s in (OK, FAIL, MISSING)}
    line = f"{plural(len(outcomes), 'file')}: {counts[OK]} OK, {counts[FAIL]} FAIL"
    if counts[MISSING]:
        line += f", {counts[MISSING]} MISSING (a library header not installed here)"
    return line


def format_text(outcomes: list[Outcome], header: str = "") -> str:
    width = max([len(o.path) for o in outcomes] + [4])
    lines = [header] if header else []
    for o in outcomes:
        lines.append(f"{o.status:<7}  {o.path:<{width}}  {o.message}".rstrip())
    lines.append(summary(outcomes))
    return "\n".join(lines) + "\n"


def format_json(outcomes: list[Outcome], hipcc: str, version: str, opts: Options) -> str:
    doc = {
        "hipcc": hipcc, "hip_version": version, "offload_arch": opts.offload_arch,
        "files": [{k: v for k, v in asdict(o).items() if k != "command"} | {"command": list(o.command)}
                  for o in outcomes],
        "summary": {s.lower(): sum(1 for o in outcomes if o.status == s) for s in (OK, FAIL, MISSING)},
    }
    return json.dumps(doc, indent=2) + "\n"
