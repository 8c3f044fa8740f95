"""pytorch-extension: PyTorch extension idioms that need attention on ROCm.

CUDA_VERSION-style guards: in a source that includes PyTorch headers the guard is reported here
(the advice is PyTorch's USE_ROCM) and version-macro stays silent; elsewhere version-macro reports
it. Python files are parsed with `ast` and never executed.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from functools import lru_cache

from hipport import regexes
from hipport.lazy import lazy_import
from hipport.rules import Guarded, Hit, rule
from hipport.rules._python import python_imports, python_nodes, python_parents, python_span, tests_rocm
from hipport.rules.version_macro import TORCH_HEADER_PREFIXES, includes_torch, version_comparisons

ast = lazy_import("ast")  # loaded by the first Python file (hipport.lazy)


# The rule needs an include of a PyTorch header, whose path is a slice of the file.
@rule(code="HP1151", name="cuda-version-guard-in-extension", category="pytorch-extension",
      severity="warning", effort="medium",
      triggers=tuple(prefix.encode() for prefix in TORCH_HEADER_PREFIXES))
def cuda_version_guard_in_extension(ctx):
    """Reports CUDA_VERSION-style comparisons in PyTorch extension sources.

    What it does:
    In a file that includes <torch/...>, <ATen/...> or <c10/...>, flags comparisons of
    CUDA_VERSION, CUDART_VERSION, __CUDACC_VER_*__ and the CUDA library version macros
    (the same set as cuda-version-comparison, which stays silent in such files).

    Why it matters on AMD GPUs:
    On ROCm, CUDAExtension hipifies the sources and compiles them with hipcc, defining
    USE_ROCM and __HIP_PLATFORM_AMD__; the CUDA version macros are not defined (0 in #if), so
    `#if CUDA_VERSION >= 11000` picks the branch written for old CUDA toolkits.

    Example:
    #if defined(CUDA_VERSION) && CUDA_VERSION >= 11000
      at::cuda::CUDAGraph graph;
    #endif

    Fix:
    Test the platform first: `#if defined(USE_ROCM) || CUDA_VERSION >= 11000` (or a separate
    USE_ROCM branch), and compare HIP_VERSION when a ROCm version matters.
    """
    if not includes_torch(ctx):
        return
    for start, end, name, _in_directive in version_comparisons(ctx):
        yield Hit(start, end,
                  f"`{name}` guards code in a PyTorch extension: the ROCm build defines USE_ROCM "
                  f"and leaves {name} undefined (0 in #if), so the branch for old CUDA is used",
                  "add a USE_ROCM branch (`#if defined(USE_ROCM) || ...`) and compare HIP_VERSION "
                  "where a ROCm version matters")


# ---------------------------------------------------------------------------------------------
# setup.py / build scripts

# CUDA math/runtime libraries -> what to link on ROCm (CUDAExtension leaves `libraries` as is).
CUDA_LINK_LIBRARIES = {
    "cublas": "hipblas", "cublasLt": "hipblaslt", "curand": "hiprand", "cusparse": "hipsparse",
    "cusolver": "hipsolver", "cufft": "hipfft", "cudnn": "MIOpen", "nccl": "rccl",
    "cudart": "amdhip64", "cuda": "amdhip64", "nvrtc": "hiprtc", "nvToolsExt": "roctx64",
}
_LINK_KEYWORDS = frozenset({"libraries", "extra_link_args", "extra_ldflags"})


def _platform_selected(node: ast.AST, parents: dict) -> bool:
    """Whether `node` sits in a branch chosen by a ROCm test (`a if IS_HIP_EXTENSION else b`,
    or either branch of `if torch.version.hip: ... else: ...`)."""
    child, parent = node, parents.get(node)
    while parent is not None:
        if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test and tests_rocm(
                parent.test):
            return True
        child, parent = parent, parents.get(parent)
    return False


def _strings(node: ast.AST) -> Iterator[ast.Constant]:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            yield sub


# A keyword argument: the name, then `=` (spaces, continuations or comments between), not the
# word in prose or a comment. No `\b` before it: re would try the pattern at every byte.
_SPACES = rb"(?:[\s\\]|#[^\n]*+)*+"  # between tokens: spaces, line continuations, comments
_LINK_WORDS = tuple(sorted(k.encode() for k in _LINK_KEYWORDS))
_LINK_TRIGGERS = (Guarded(regexes.compile(rb"(?:" + b"|".join(_LINK_WORDS) + rb")" + _SPACES + rb"=(?!=)"),
                          _LINK_WORDS),)


@rule(code="HP1152", name="cuda-library-link-in-extension", category="pytorch-extension",
      severity="error", effort="low", kinds=("setup.py", "python"), triggers=_LINK_TRIGGERS)
def cuda_library_link_in_extension(ctx):
    """Reports CUDA libraries named in an extension's link settings: libraries=["cublas", ...].

    What it does:
    In setup.py and Python build scripts, flags the CUDA libraries (cublas, cublasLt, curand,
    cusparse, cusolver, cufft, cudnn, nccl, cudart, cuda, nvrtc, nvToolsExt) listed in a call's
    `libraries=`, or given as -l flags in `extra_link_args=` / `extra_ldflags=`.

    Why it matters on AMD GPUs:
    PyTorch's CUDAExtension hipifies the sources but passes `libraries` through unchanged, so
    on ROCm the link asks for libcublas.so and fails.

    Example:
    CUDAExtension("ops", ["ops.cu"], libraries=["cublas", "curand"])

    Fix:
    Choose the list by platform: hipblas, hiprand, hipsparse, hipfft, ... when
    torch.version.hip is set (or IS_HIP_EXTENSION from torch.utils.cpp_extension).
    """
    span = python_span(ctx)
    for node in python_nodes(ctx, ast.Call):
        for kw in node.keywords:
            if kw.arg not in _LINK_KEYWORDS:
                continue
            for const in _strings(kw.value):
                if _platform_selected(const, python_parents(ctx)):
                    continue  # already chosen per platform
                name = const.value
                if kw.arg != "libraries":
                    if not name.startswith("-l"):
                        continue
                    name = name[2:]
                rocm = CUDA_LINK_LIBRARIES.get(name)
                if rocm is None:
                    continue
                s, e = span(const)
                yield Hit(s, e,
                          f"links the CUDA library `{name}`: PyTorch's ROCm build passes link "
                          "libraries through unchanged, so the link fails on ROCm",
                          f"link `{rocm}` when torch.version.hip is set "
                          "(or IS_HIP_EXTENSION from torch.utils.cpp_extension)")


# A literal ending in `.hip` as written (torch.version.hip is no such thing).
_HIP_SOURCE = (Guarded(regexes.compile(rb"\.hip[\"']"), (b".hip",)),)


@rule(code="HP1153", name="handwritten-hip-beside-cu", category="pytorch-extension",
      severity="warning", effort="low", kinds=("setup.py", "python"), triggers=_HIP_SOURCE)
def handwritten_hip_beside_cu(ctx):
    """Reports a `.hip` source listed next to a `.cu` of the same name.

    What it does:
    Flags a string literal naming a `.hip` file in a build script that also names the `.cu`
    file PyTorch's hipify would translate to that path (`X.cu` -> `X.hip`, with `cuda` in the
    directory or file name becoming `hip`: `cuda/attn_cuda.cu` -> `hip/attn_hip.hip`).

    Why it matters on AMD GPUs:
    On ROCm, CUDAExtension runs PyTorch's hipify, which writes the translation of the `.cu`
    source to exactly that path whenever the content differs, overwriting the hand-written
    HIP file.

    Example:
    sources=["kernels/attn.cu", "kernels/attn.hip"]

    Fix:
    Keep one source per kernel: let hipify translate `X.cu`, or give the hand-written HIP file
    another name and select the list with torch.version.hip.
    """
    span = python_span(ctx)
    consts = [c for c in python_nodes(ctx, ast.Constant) if isinstance(c.value, str)]
    targets = {hipify_target(c.value): c.value for c in consts if c.value.endswith(".cu")}
    for const in consts:
        source = targets.get(const.value) if const.value.endswith(".hip") else None
        if source is None:
            continue
        s, e = span(const)
        if ctx.data[s:e].rstrip(b"\"'").endswith(b".hip"):  # as written (the trigger), not pieced or escaped
            yield Hit(s, e,
                      f"`{const.value}` is listed beside `{source}`: on ROCm, PyTorch's hipify "
                      "writes its translation of that .cu file to this same path, overwriting "
                      "the hand-written file",
                      "keep one source per kernel, or rename the hand-written HIP file")


def hipify_target(path: str) -> str:
    """Where PyTorch's hipify (torch.utils.hipify, extension mode) writes a `.cu` source:
    `cuda`/`CUDA` in the directory and file name become `hip`/`HIP`, `.cu` becomes `.hip`."""
    directory, name = posixpath.split(path)
    root = posixpath.splitext(name)[0]
    directory = directory.replace("cuda", "hip").replace("CUDA", "HIP")
    root = root.replace("cuda", "hip").replace("CUDA", "HIP")
    return posixpath.join(directory, root + ".hip")


def _gate_names(ctx) -> tuple[set[str], set[str], set[str], set[str]]:
    """Local names for torch, torch.version, CUDA_HOME and torch.utils.cpp_extension."""
    torch_names, version_names, home_names, ext_names = set(), set(), set(), set()
    for node in python_imports(ctx):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "torch" or (a.name.startswith("torch.") and a.asname is None):
                    torch_names.add(a.asname or "torch")
                elif a.name == "torch.version" and a.asname:
                    version_names.add(a.asname)
                elif a.name == "torch.utils.cpp_extension" and a.asname:
                    ext_names.add(a.asname)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            for a in node.names:
                if node.module == "torch" and a.name == "version":
                    version_names.add(a.asname or "version")
                elif node.module == "torch.utils.cpp_extension" and a.name == "CUDA_HOME":
                    home_names.add(a.asname or "CUDA_HOME")
                elif node.module == "torch.utils" and a.name == "cpp_extension":
                    ext_names.add(a.asname or "cpp_extension")
    return torch_names, version_names, home_names, ext_names


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _gates(node: ast.AST, parents: dict) -> bool:
    """Whether the value of `node` decides control flow without a ROCm alternative: it reaches
    an if/while/assert/ternary test or a comprehension filter, or feeds a comparison or boolean
    operator, and that expression does not also test torch.version.hip / IS_HIP_EXTENSION."""
    child, parent = node, parents.get(node)
    gate = None
    while parent is not None:
        if isinstance(parent, (ast.If, ast.While, ast.Assert, ast.IfExp)) and parent.test is child:
            gate = child
            break
        if isinstance(parent, ast.comprehension) and child in parent.ifs:
            gate = child
            break
        if isinstance(parent, (ast.Compare, ast.BoolOp)) or (
                isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)):
            gate = parent  # keep climbing to the whole condition
        elif not isinstance(parent, (ast.Call, ast.Attribute, ast.Subscript)):
            break
        child, parent = parent, parents.get(parent)
    if gate is None or tests_rocm(gate):
        return False
    # a CUDA check inside `if <ROCm test>: ... else: ...` is already the CUDA-only branch
    while parent is not None:
        if isinstance(parent, (ast.If, ast.IfExp)) and tests_rocm(parent.test):
            return False
        parent = parents.get(parent)
    return True


# What the rule can report: `version` then `.cuda` (torch.version.cuda, (torch.version).cuda,
# version.cuda), with spaces, line continuations, closing parentheses or comments between; the
# `version as ALIAS` whose `ALIAS.cuda` it reports too; or CUDA_HOME. Most Python files saying
# `cuda` (torch.cuda, .cuda()) or `version` have none, and are spared the syntax tree: ast
# takes about 150 bytes of memory and 2 µs a byte of source.
_GAP = rb"(?:[\s\\)]|#[^\n]*+)*+"  # _SPACES, or closing parentheses: `(torch.version).cuda`
_DOT_CUDA = rb"\." + _SPACES + rb"cuda\b"
_GATE_TRIGGERS = (Guarded(regexes.compile(rb"version" + _GAP + rb"(?:" + _DOT_CUDA + rb"|as\b)"),
                          (b"version",)), b"CUDA_HOME")
_VERSION_CUDA = regexes.compile(rb"version" + _GAP + _DOT_CUDA)


@lru_cache(maxsize=64)
def _alias_cuda(alias: str) -> re.Pattern[bytes]:
    """`ALIAS.cuda`, for `from torch import version as ALIAS`."""
    return regexes.compile(rb"\b" + re.escape(alias.encode()) + _GAP + _DOT_CUDA)


def _may_gate(data: bytes, torch_names, version_names, home_names, ext_names) -> bool:
    """Whether an expression the rule reports may be in the text, told from the file's imports
    before its tree is asked: `version` then `.cuda` where torch is imported, `ALIAS.cuda` for
    torch.version imported as ALIAS, CUDA_HOME where cpp_extension or torch is (an alias of
    CUDA_HOME itself is left to the tree). DeepSpeed's modules import torch and packaging's
    `version as pkg_version`, and use neither torch.version.cuda nor CUDA_HOME."""
    if home_names or ((torch_names or ext_names) and b"CUDA_HOME" in data):
        return True
    if torch_names and _VERSION_CUDA.search(data):
        return True
    return any(_alias_cuda(alias).search(data) for alias in version_names)


@rule(code="HP1154", name="torch-version-cuda-gate", category="pytorch-extension",
      severity="warning", effort="low", kinds=("python", "setup.py"), triggers=_GATE_TRIGGERS)
def torch_version_cuda_gate(ctx):
    """Reports code gated on `torch.version.cuda` or CUDA_HOME to mean "has a GPU".

    What it does:
    Flags `torch.version.cuda` and torch.utils.cpp_extension's CUDA_HOME where their value
    decides control flow (an if/while/assert/ternary test, a comparison, a boolean operator).
    `torch.cuda.is_available()` and plain reads (printing the version) are not flagged.

    Why it matters on AMD GPUs:
    ROCm builds of PyTorch keep the torch.cuda API, but torch.version.cuda is None there
    (torch.version.hip holds the HIP version) and CUDA_HOME is usually unset (ROCM_HOME is
    set), so checks written as "is this a GPU build?" take the CPU or error path on AMD GPUs.

    Example:
    if torch.version.cuda is not None:
        ext_modules.append(CUDAExtension("ops", ["ops.cu"]))

    Fix:
    Test `torch.version.cuda or torch.version.hip` (any GPU build), torch.version.hip (ROCm
    only), or IS_HIP_EXTENSION / ROCM_HOME from torch.utils.cpp_extension.
    """
    torch_names, version_names, home_names, ext_names = _gate_names(ctx)
    if not _may_gate(ctx.data, torch_names, version_names, home_names, ext_names):
        return
    cuda_exprs = {f"{t}.version.cuda" for t in torch_names} | {
        f"{v}.cuda" for v in version_names}
    home_exprs = set(home_names) | {f"{e}.CUDA_HOME" for e in ext_names} | {
        f"{t}.utils.cpp_extension.CUDA_HOME" for t in torch_names}
    span = python_span(ctx)
    for node in python_nodes(ctx, ast.Attribute, ast.Name):
        if not isinstance(node.ctx, ast.Load):
            continue
        dotted = _dotted(node)
        if dotted in cuda_exprs and _gates(node, python_parents(ctx)):
            s, e = span(node)
            yield Hit(s, e,
                      f"`{dotted}` gates this code: it is None on ROCm builds of PyTorch "
                      "(torch.version.hip is set instead)",
                      "test `torch.version.cuda or torch.version.hip` for any GPU build, or "
                      "torch.version.hip for ROCm")
        elif dotted in home_exprs and _gates(node, python_parents(ctx)):
            s, e = span(node)
            yield Hit(s, e,
                      f"`{dotted}` gates this code: on ROCm CUDA_HOME is usually unset and "
                      "ROCM_HOME points to the ROCm install",
                      "also accept IS_HIP_EXTENSION / ROCM_HOME from torch.utils.cpp_extension")
