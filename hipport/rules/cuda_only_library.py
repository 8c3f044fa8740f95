"""cuda-only-library: NVIDIA libraries with no drop-in HIP/ROCm replacement.

LIBRARIES is the data: per library its headers, the code names that reveal it, its CMake package
and link names, and the ROCm project that covers the same ground (if any). PYTHON_PACKAGES and
PYTHON_MODULES do the same for Python dependencies and imports. The rules only read the tables.
"""

from __future__ import annotations

import bisect
import re
from functools import lru_cache

from hipport import regexes
from hipport.lazy import lazy_import
from hipport.parse.lexer import Substrings
from hipport.rules import Guarded, Hit, rule
from hipport.rules import _syntax as sx
from hipport.rules._python import python_imports, python_nodes, python_span, python_string_tokens
from hipport.rules.build_flags import build_matches
from hipport.tuples import NamedTuple

ast = lazy_import("ast")  # loaded by the first Python file (hipport.lazy)


class Library(NamedTuple):
    name: str
    alternative: str  # the ROCm project to port to, or "" when there is none
    headers: tuple[str, ...]  # exact names, or prefixes ending in "/" or "*"
    api: str = ""  # regex for code names that reveal the library
    packages: tuple[str, ...] = ()  # CMake find_package names
    links: tuple[str, ...] = ()  # link names (regex fragments)


LIBRARIES: tuple[Library, ...] = (
    Library("CUTLASS/CuTe", "AMD's composable_kernel (CK) for custom GEMM, convolution and "
            "attention kernels, or hipBLASLt for plain GEMMs", ("cutlass/", "cute/"),
            r"\bcutlass\s*::|\bcute\s*::", ("NvidiaCutlass", "CUTLASS")),
    Library("cuTENSOR", "hipTensor (its API is modelled on cuTENSOR)", ("cutensor.h", "cutensor/"),
            r"\bcutensor[A-Z]\w*", ("CUTENSOR", "cuTENSOR"), ("cutensor",)),
    Library("nvJPEG", "rocJPEG (hardware JPEG decoding on AMD GPUs)", ("nvjpeg.h",),
            r"\bnvjpeg[A-Z]\w*|\bNVJPEG_\w+", ("NVJPEG",), ("nvjpeg",)),
    Library("nvJPEG2000", "", ("nvjpeg2k.h",), r"\bnvjpeg2k[A-Z]\w*", (), ("nvjpeg2k",)),
    Library("NPP", "RPP (ROCm Performance Primitives) for part of NPP's image and signal "
            "functions; no drop-in", ("npp*",),
            r"\bnpp[is][A-Z][A-Za-z0-9]*_\w+|\bnpp(?:Get|Set)[A-Z]\w*", ("NPP",),
            (r"npp(?:c|s|i[a-z]{1,4})",)),
    Library("TensorRT", "MIGraphX (AMD's graph compiler and inference engine; imports ONNX)",
            ("NvInfer*", "NvOnnxParser.h"), r"\bnvinfer1\s*::|\bnvonnxparser\s*::",
            ("TensorRT",), ("nvinfer", "nvinfer_plugin", "nvonnxparser", "nvparsers")),
    Library("DALI", "rocAL (ROCm Augmentation Library)", ("dali/",), r"\bdali\s*::", ("DALI",)),
    Library("nvCOMP", "", ("nvcomp.h", "nvcomp.hpp", "nvcomp/"),
            r"\bnvcomp[A-Z]\w*|\bnvcomp\s*::", ("nvcomp",), (r"nvcomp\w*",)),
    Library("cuDSS", "", ("cudss.h",), r"\bcudss[A-Z]\w*", ("cudss",), ("cudss",)),
    Library("cuFile (GPUDirect Storage)", "hipFile (AMD's direct-to-GPU storage I/O library, "
            "recent ROCm releases)", ("cufile.h",), r"\bcuFile[A-Z]\w*", (),
            ("cufile", "cufile_rdma")),
    Library("NVSHMEM", "rocSHMEM (GPU-initiated OpenSHMEM-style communication on ROCm)",
            ("nvshmem.h", "nvshmemx.h"), r"\bnvshmemx?_\w+", ("NVSHMEM",),
            ("nvshmem", "nvshmem_host", "nvshmem_device")),
    Library("OptiX", "HIP RT (AMD's ray-tracing library for HIP)", ("optix.h", "optix_*"),
            r"\boptix[A-Z]\w*", ("OptiX",)),
    Library("cuSPARSELt", "hipSPARSELt", ("cusparseLt.h",), r"\bcusparseLt[A-Z]\w*", (),
            ("cusparseLt",)),
    Library("NVML", "AMD SMI (amd_smi/amdsmi.h) or ROCm SMI", ("nvml.h",), r"\bnvml[A-Z]\w*",
            (), ("nvidia-ml",)),
    Library("cuDNN frontend", "MIOpen (no drop-in for the cuDNN graph API)",
            ("cudnn_frontend.h", "cudnn_frontend/"), r"\bcudnn_frontend\s*::"),
)


def _header_matches(path: str, header: str) -> bool:
    if header.endswith(("/", "*")):
        return path.startswith(header.rstrip("*"))
    return path == header


# Every header any library names, whole or as a prefix: most includes match none, told by one
# set lookup and one startswith instead of a test per header of every library.
_EXACT_HEADERS = frozenset(h for lib in LIBRARIES for h in lib.headers if not h.endswith(("/", "*")))
_HEADER_PREFIXES = tuple(h.rstrip("*") for lib in LIBRARIES for h in lib.headers if h.endswith(("/", "*")))


def _library_for_header(path: str) -> Library | None:
    if path not in _EXACT_HEADERS and not path.startswith(_HEADER_PREFIXES):
        return None
    for lib in LIBRARIES:
        if any(_header_matches(path, h) for h in lib.headers):
            return lib
    return None


@lru_cache(maxsize=4096)  # a pure function of the path, and the same headers recur in every file
def _library_for_include(raw_path: bytes) -> Library | None:
    return _library_for_header(raw_path.decode("utf-8", "replace"))


_LEADING_LITERAL = regexes.compile(r"\\b(\w+)")


def _literal_prefixes(api: str) -> tuple[bytes, ...]:
    """The literal each top-level alternative of an `api` regex starts with (after `\\b`): every
    match contains one of them. Raises ValueError for an alternative without one, so a new table
    row cannot silently weaken the trigger."""
    return tuple(dict.fromkeys(word.encode() for _, word in _alternatives(api)))


def _alternatives(api: str) -> list[tuple[str, str]]:
    """Each top-level alternative of an `api` regex with the literal it starts with (after `\\b`)."""
    out = []
    for alternative in _top_level_alternatives(api):
        m = _LEADING_LITERAL.match(alternative)
        if m is None:
            raise ValueError(f"api pattern {api!r}: {alternative!r} has no literal prefix")
        word = m.group(1)
        if alternative[m.end() : m.end() + 1] in ("?", "*", "{"):
            word = word[:-1]  # its last character is optional (`nvshmemx?_`)
        out.append((alternative, word))
    return out


def _top_level_alternatives(regex: str) -> list[str]:
    """`regex` split at its `|` outside groups and character classes."""
    out, depth, start, i = [], 0, 0, 0
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            i += 1  # the escaped character is a literal
        elif c == "[":  # a class: its `(`, `|` and a leading `]` are literals
            i += 1
            if regex[i : i + 1] == "^":
                i += 1
            if regex[i : i + 1] == "]":
                i += 1
            while regex[i] != "]":
                i += 2 if regex[i] == "\\" else 1
        elif c in "()":
            depth += 1 if c == "(" else -1
        elif c == "|" and depth == 0:
            out.append(regex[start:i])
            start = i + 1
        i += 1
    out.append(regex[start:])
    return out


def _literal_first(api: str) -> tuple[re.Pattern[bytes], ...]:
    """An `api` regex as one pattern per top-level alternative, each opening with its literal
    and checking the `\\b` behind it (sx.word_start): re searches a leading literal fast, and
    tries a `\\b`-led alternation at every byte."""
    out = []
    for alternative, word in _alternatives(api):
        rest = alternative[len(r"\b") + len(word):]
        out.append(regexes.compile(sx.word_start(word.encode()) + rest.encode()))
    return tuple(out)


# Per library with code names: its patterns (_literal_first) and the literals one of which
# every match contains (found in one pass, they skip the pattern search in most files).
_API = tuple((lib, _literal_first(lib.api), _literal_prefixes(lib.api))
             for lib in LIBRARIES if lib.api)
_API_TRIGGERS = tuple(sorted({p for _, _, prefixes in _API for p in prefixes}))
_API_PREFIXES = Substrings(_API_TRIGGERS)  # which of them a file holds, in one pass


def _advice(lib: Library) -> str:
    if lib.alternative:
        return f"port to {lib.alternative}"
    return ("no ROCm equivalent: keep this code path NVIDIA-only behind a platform guard, or "
            "replace the library with your own HIP code")


@rule(code="HP901", name="cuda-only-library-include", category="cuda-only-library",
      severity="error", effort="high")
def cuda_only_library_include(ctx):
    """Reports includes of NVIDIA-only libraries: CUTLASS/CuTe, cuTENSOR, nvJPEG, NPP, TensorRT...

    What it does:
    Flags #include of the headers of CUTLASS and CuTe, cuTENSOR, nvJPEG, NPP, TensorRT, DALI,
    nvCOMP, cuDSS, cuFile, NVSHMEM, OptiX, cuSPARSELt, NVML and the cuDNN frontend, and names
    the ROCm project that covers the same ground where there is one.

    Why it matters on AMD GPUs:
    These libraries are NVIDIA-only and have no hip* drop-in that renaming could reach: the
    ported file does not compile until the code is rewritten against a ROCm library with its
    own API, or kept out of the AMD build.

    Example:
    #include <cutlass/gemm/device/gemm.h>

    Fix:
    Port the feature to the ROCm counterpart (composable_kernel or hipBLASLt for CUTLASS,
    hipTensor for cuTENSOR, rocJPEG for nvJPEG, MIGraphX for TensorRT, rocAL for DALI,
    rocSHMEM for NVSHMEM, HIP RT for OptiX), or guard the NVIDIA-only path.
    """
    # No triggers: reading the lexer's includes costs less than searching the file for the
    # header names would.
    for d in ctx.lexed.includes:
        lib = _library_for_include(d.path(ctx.data))
        if lib is not None and not sx.hip_excluded(ctx, d.start):
            path = d.path(ctx.data).decode("utf-8", "replace")
            yield Hit(d.path_start, d.path_end,
                      f"<{path}> belongs to {lib.name}, which is NVIDIA-only", _advice(lib))


@rule(code="HP902", name="cuda-only-library-api", category="cuda-only-library",
      severity="error", effort="high", triggers=_API_TRIGGERS)
def cuda_only_library_api(ctx):
    """Reports code using an NVIDIA-only library whose header this file does not include.

    What it does:
    Looks for the library's names in code (cutlass:: / cute:: qualifiers, cutensor*, nvjpeg*,
    npp*, nvinfer1::, nvcomp*, cudss*, cuFile*, nvshmem_*, optix*, ...) and reports the first
    use of each library in a file that does not include its header (an include is reported by
    cuda-only-library-include instead), so a header-less translation unit is still caught.

    Why it matters on AMD GPUs:
    The code depends on an NVIDIA-only library even though its header comes in indirectly;
    it will not build for ROCm without a rewrite.

    Example:
    cute::Tensor t = cute::make_tensor(ptr, layout);

    Fix:
    Port the code to the ROCm counterpart named in the message, or guard it as NVIDIA-only.
    """
    data = ctx.data
    held = {_API_TRIGGERS[i] for i in _API_PREFIXES.found(data)}
    candidates = [(lib, api) for lib, api, prefixes in _API if not held.isdisjoint(prefixes)]
    if not candidates:
        return
    included = {lib.name for d in ctx.lexed.includes
                if (lib := _library_for_include(d.path(data)))}
    for lib, api in candidates:
        if lib.name in included:
            continue
        for m in sx.code_word_matches(ctx, api):
            if not sx.relevant(ctx, m.start()):
                continue
            name = m.group().decode().replace(" ", "")
            yield Hit(m.start(), m.end(),
                      f"`{name}` uses {lib.name}, which is NVIDIA-only (first use in this file)",
                      _advice(lib))
            break


def _link_pattern() -> re.Pattern[bytes]:
    names = "|".join(link for lib in LIBRARIES for link in lib.links)
    return regexes.compile(
        (r"(?<![\w.$(-])(?:-l|lib)?(?P<name>" + names + r")(?![\w-])"
         r"|\bCUDA::(?P<target>\w+)"
         r"|\b(?i:find_package)\s*\(\s*(?P<package>\w+)").encode())


_LINK = _link_pattern()


def _link_parts() -> tuple[re.Pattern[bytes], ...]:
    """_LINK's matches, as patterns that each open with a literal and are searched as their
    alternation (patterns.leftmost_matches): a name after `-l`, after `lib`, or bare (a
    pattern per two leading letters of the names), an imported target, a find_package. No two
    open with the same byte, so each is _LINK where its first byte is; the names keep their
    order. (_LINK, led by a lookbehind, is tried at every byte.)"""
    links = [link for lib in LIBRARIES for link in lib.links]
    by_head: dict[str, list[str]] = {}
    for link in links:
        by_head.setdefault(link[:2], []).append(link[2:])
    not_after, end = r"[\w.$(-]", r"(?![\w-])"
    parts = [lead + rf"(?<!{not_after}{lead})(?P<name>{'|'.join(links)}){end}" for lead in ("-l", "lib")]
    parts += [rf"(?P<name>{head}(?<!{not_after}{head})(?:{'|'.join(rest)})){end}" for head, rest in by_head.items()]
    parts += [r"CUDA::(?<!\wCUDA::)(?P<target>\w+)", r"[fF](?<!\w[fF])(?i:ind_package)\s*\(\s*(?P<package>\w+)"]
    if any(not (len(head) == 2 and head.isascii() and head.isalpha() and head.islower()) for head in by_head):
        raise ValueError("link names must open with two letters")
    return tuple(regexes.compile(part.encode()) for part in parts)


_LINK_PARTS = _link_parts()
# CMake's FindCUDAToolkit imported targets of NVIDIA-only libraries.
_CMAKE_TARGETS = ((r"nvjpeg", "nvJPEG"), (r"npp\w+", "NPP"),
                  (r"cuFile\w*", "cuFile (GPUDirect Storage)"), (r"nvml", "NVML"))
_BY_NAME = {lib.name: lib for lib in LIBRARIES}


def _library_for_link(text: str, kind: str) -> Library | None:
    if kind == "target":
        return next((_BY_NAME[n] for pat, n in _CMAKE_TARGETS if re.fullmatch(pat, text)), None)
    for lib in LIBRARIES:
        if kind == "package" and text.lower() in (p.lower() for p in lib.packages):
            return lib
        if kind == "name" and any(re.fullmatch(link, text) for link in lib.links):
            return lib
    return None


@rule(code="HP903", name="cuda-only-library-link", category="cuda-only-library",
      severity="error", effort="high", kinds=("cmake", "make", "setup.py"))
def cuda_only_library_link(ctx):
    """Reports build files that find or link NVIDIA-only libraries.

    What it does:
    Flags find_package() of CUTLASS, TensorRT, cuTENSOR, nvJPEG, NPP, DALI, nvCOMP, cuDSS,
    NVSHMEM or OptiX, CUDA:: imported targets of nvJPEG, NPP, cuFile and NVML, and link names
    (nvinfer, cutensor, nvjpeg, npp*, nvcomp, cudss, cufile, nvshmem, nvidia-ml, ...) in CMake
    files, Makefiles and setup.py string literals.

    Why it matters on AMD GPUs:
    ROCm ships none of these libraries, so configuring or linking fails on an AMD system even
    after the sources are ported.

    Example:
    target_link_libraries(infer PRIVATE nvinfer nvonnxparser)

    Fix:
    Link the ROCm counterpart once the code is ported (migraphx for TensorRT, hiptensor for
    cuTENSOR, rocjpeg for nvJPEG, ...), or make the dependency optional for NVIDIA builds.
    """
    for start, end, text in build_matches(ctx, _LINK_PARTS):
        m = _LINK.fullmatch(text)
        if m is None:
            continue
        kind = m.lastgroup
        lib = _library_for_link(m.group(kind).decode(), kind)
        if lib is None:
            continue
        s, e = start + m.start(kind), start + m.end(kind)
        what = {"package": "finds", "name": "links", "target": "links"}[kind]
        yield Hit(s, e, f"{what} {lib.name} (`{m.group(kind).decode()}`), which ROCm does not "
                        "provide", _advice(lib))


# ---------------------------------------------------------------------------------------------
# Python dependencies and imports


class PythonPackage(NamedTuple):
    pattern: str  # full match on the normalized distribution name (lower case, '-' separators)
    what: str
    alternative: str
    severity: str = ""  # "warning" where a ROCm build of the same project exists


PYTHON_PACKAGES: tuple[PythonPackage, ...] = (
    PythonPackage(r"apex", "NVIDIA apex, which is built for CUDA only",
                  "torch.amp and PyTorch's fused optimizers, or ROCm's apex fork "
                  "(github.com/ROCm/apex, built from source)"),
    PythonPackage(r"tensorrt(?:-[\w-]+)?|nvidia-tensorrt|torch-tensorrt",
                  "TensorRT, which is NVIDIA-only",
                  "MIGraphX (Torch-MIGraphX, or ONNX Runtime's MIGraphX execution provider)"),
    PythonPackage(r"nvidia-dali(?:-[\w-]+)?", "NVIDIA DALI, which is NVIDIA-only",
                  "rocAL (ROCm Augmentation Library)"),
    PythonPackage(r"pycuda", "PyCUDA, which is CUDA-only", "HIP Python (hip-python)"),
    PythonPackage(r"cuda-python|cuda-bindings", "NVIDIA's CUDA Python bindings",
                  "HIP Python (hip-python)"),
    PythonPackage(r"pynvml|nvidia-ml-py3?", "bindings to NVIDIA's NVML",
                  "AMD SMI's Python package (amdsmi)"),
    PythonPackage(r"cupy-cuda\w+", "a CuPy wheel built for CUDA",
                  "a ROCm build of CuPy (cupy-rocm-* wheels, or built with CUPY_INSTALL_USE_HIP=1)",
                  "warning"),
    PythonPackage(r"bitsandbytes", "bitsandbytes, which needs a ROCm-enabled build on AMD GPUs",
                  "a ROCm-enabled bitsandbytes build (its multi-backend releases, or "
                  "github.com/ROCm/bitsandbytes)", "warning"),
    PythonPackage(r"xformers", "xFormers, whose PyPI wheels are CUDA builds",
                  "an xFormers build for ROCm (github.com/ROCm/xformers)", "warning"),
    PythonPackage(r"flash-attn|flash-attention",
                  "FlashAttention, whose prebuilt wheels are CUDA builds",
                  "FlashAttention built from source for ROCm (upstream's ROCm backend or "
                  "github.com/ROCm/flash-attention)", "warning"),
    PythonPackage(r"nvidia-[\w-]+", "an NVIDIA CUDA library wheel",
                  "remove it: on ROCm the libraries come from the ROCm install or the ROCm "
                  "PyTorch wheels"),
)
_REQ_NAME = regexes.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_CUDA_TORCH = regexes.compile(r"\b(?:torch|torchvision|torchaudio)\s*==\s*[\w.]+\+cu\d+")
_CUDA_INDEX = regexes.compile(r"download\.pytorch\.org/whl/(?:nightly/)?cu\d+")


def python_package(name: str) -> PythonPackage | None:
    """The table's CUDA-only Python package a pip/requirements name is (PEP 503 normalized)."""
    norm = re.sub(r"[-_.]+", "-", name).lower()
    for pkg in PYTHON_PACKAGES:
        if re.fullmatch(pkg.pattern, norm):
            return pkg
    return None


def _requirement_hits(text: str, base: int, data: bytes) -> list[Hit]:
    """Hits for one requirement string that starts at byte offset `base`."""
    out = []
    m = _REQ_NAME.match(text)
    if m and not text.lstrip().startswith("-"):
        pkg = python_package(m.group(1))
        if pkg is not None:
            s = base + len(text[: m.start(1)].encode())
            e = s + len(m.group(1).encode())
            out.append(Hit(s, e, f"`{m.group(1)}`: {pkg.what}; it does not run on AMD GPUs as "
                                 "pinned",
                           pkg.alternative if pkg.alternative.startswith("remove") else
                           f"depend on {pkg.alternative}", pkg.severity))
    for pat, what, fix in (
            (_CUDA_TORCH, "a CUDA build of PyTorch", "use the ROCm build (a +rocmX.Y version "
             "from https://download.pytorch.org/whl/rocmX.Y)"),
            (_CUDA_INDEX, "PyTorch's CUDA wheel index", "use the ROCm index "
             "(https://download.pytorch.org/whl/rocmX.Y)")):
        for mm in pat.finditer(text):
            s = base + len(text[: mm.start()].encode())
            out.append(Hit(s, s + len(mm.group().encode()), f"`{mm.group()}` selects {what}",
                           fix, "warning"))
    return out


@rule(code="HP904", name="cuda-only-python-dependency", category="cuda-only-library",
      severity="error", effort="high", kinds=("requirements", "pyproject", "setup.py"))
def cuda_only_python_dependency(ctx):
    """Reports Python dependencies that exist only for NVIDIA GPUs.

    What it does:
    Reads requirements files, pyproject.toml dependency tables and setup.py install/extras
    requirements, and flags apex, TensorRT, DALI, PyCUDA, cuda-python, NVML bindings and
    nvidia-* library wheels (errors), CUDA builds of CuPy, bitsandbytes, xFormers and
    FlashAttention (warnings: ROCm builds exist), and pins of CUDA PyTorch builds (+cu121) or
    PyTorch's CUDA wheel index (warnings).

    Why it matters on AMD GPUs:
    These wheels contain CUDA binaries: they fail to install, fail to import, or silently fall
    back to CPU on a ROCm system.

    Example:
    cupy-cuda12x==13.0.0

    Fix:
    Depend on the ROCm counterpart named in the message (a ROCm build or fork, MIGraphX for
    TensorRT, rocAL for DALI, hip-python for PyCUDA), or move NVIDIA-only extras out of the
    default requirements.
    """
    data = ctx.data
    if ctx.kind == "requirements":
        starts = ctx.comment_index.starts
        for m in re.finditer(rb"[^\n]+", data):
            i = bisect.bisect_left(starts, m.start())  # the line's comment, if any, ends it
            end = starts[i] if i < len(starts) and starts[i] < m.end() else m.end()
            line = data[m.start() : end].decode("utf-8", "replace")
            if line.strip():
                yield from _requirement_hits(line, m.start(), data)
    elif ctx.kind == "pyproject":
        yield from _pyproject_hits(ctx)
    else:
        yield from _setup_requirement_hits(ctx)


def _pyproject_hits(ctx):
    import tomllib  # noqa: PLC0415 - a pyproject.toml's rule alone needs it: 1.6 ms a run

    data = ctx.data
    text = data.decode("utf-8", "replace")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return
    def table(value) -> dict:
        return value if isinstance(value, dict) else {}

    def strings(value) -> list[str]:
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

    project = table(doc.get("project"))
    wanted = strings(project.get("dependencies"))
    for deps in table(project.get("optional-dependencies")).values():
        wanted += strings(deps)
    wanted += strings(table(doc.get("build-system")).get("requires"))
    poetry = table(table(doc.get("tool")).get("poetry"))
    keys = list(table(poetry.get("dependencies"))) + list(table(poetry.get("dev-dependencies")))
    for group in table(poetry.get("group")).values():
        keys += list(table(table(group).get("dependencies")))
    in_comment = ctx.comment_index.covers
    seen: set[int] = set()
    for req in wanted:
        for m in re.finditer(re.escape(f'"{req}"') + "|" + re.escape(f"'{req}'"), text):
            base = len(text[: m.start() + 1].encode())
            if base in seen or in_comment(base):
                continue
            seen.add(base)
            yield from _requirement_hits(req, base, data)
    for key in keys:
        for m in re.finditer(r"(?m)^[ \t]*(" + re.escape(key) + r")[ \t]*=", text):
            base = len(text[: m.start(1)].encode())
            if base not in seen and not in_comment(base):
                seen.add(base)
                yield from _requirement_hits(key, base, data)


_REQUIRES_KEYWORDS = frozenset({"install_requires", "extras_require", "setup_requires",
                                "tests_require"})


def _setup_requirement_hits(ctx):
    data = ctx.data
    ranges = [(node.value.lineno, node.value.end_lineno) for node in python_nodes(ctx, ast.keyword)
              if node.arg in _REQUIRES_KEYWORDS]
    if not ranges:
        return
    newlines = [m.start() for m in re.finditer(rb"\n", data)]
    for offset, raw in python_string_tokens(ctx):
        line = bisect.bisect_left(newlines, offset) + 1
        if not any(a <= line <= b for a, b in ranges):
            continue
        try:
            value = ast.literal_eval(raw.decode("utf-8"))
        except (ValueError, SyntaxError):
            continue
        if isinstance(value, str):
            prefix = len(raw) - len(raw.lstrip(b"rRbBuUfF"))
            quote = 3 if raw[prefix : prefix + 3] in (b'"""', b"'''") else 1
            yield from _requirement_hits(value, offset + prefix + quote, data)


# Python modules of NVIDIA-only packages (top-level or dotted prefixes).
PYTHON_MODULES = {
    "apex": ("NVIDIA apex", "torch.amp and PyTorch's fused optimizers, or ROCm's apex fork"),
    "tensorrt": ("TensorRT", "MIGraphX (migraphx / torch_migraphx)"),
    "torch_tensorrt": ("Torch-TensorRT", "Torch-MIGraphX (torch_migraphx)"),
    "nvidia.dali": ("NVIDIA DALI", "rocAL (ROCm Augmentation Library)"),
    "pycuda": ("PyCUDA", "HIP Python (from hip import hip)"),
    "cuda.bindings": ("NVIDIA cuda-python", "HIP Python (hip-python)"),
    "cuda.cudart": ("NVIDIA cuda-python", "HIP Python (hip-python)"),
    "pynvml": ("NVML bindings", "AMD SMI's Python package (amdsmi)"),
}


def _module_entry(module: str):
    for name, info in PYTHON_MODULES.items():
        if module == name or module.startswith(name + "."):
            return name, info
    return None


def _import_triggers() -> tuple[bytes | Guarded, ...]:
    """What every import the rule reports holds: a top-level module's name; a dotted one's
    parts with a dot between (`cuda.bindings`, spaces and line continuations allowed), or
    `from` its package `import` (`from cuda import (bindings)`). Not `cuda` or `bindings`
    alone, which most PyTorch code and much prose say, and which cost a file the syntax
    tree (ast takes about 150 bytes of memory and 2 µs a byte of source)."""
    gap = rb"[\s\\]"  # between tokens of an import outside brackets: spaces, continuations
    dot = gap + rb"*\." + gap + b"*"
    out: dict = {}
    for name in PYTHON_MODULES:
        parts = [re.escape(part).encode() for part in name.split(".")]
        if len(parts) == 1:
            out[name.encode()] = None
            continue
        top = (name.split(".")[0].encode(),)
        out[Guarded(regexes.compile(dot.join(parts) + rb"\b"), top)] = None
        out[Guarded(regexes.compile(rb"from" + gap + b"+" + dot.join(parts[:-1]) + gap + rb"+import\b"), top)] = None
    return tuple(out)


_IMPORT_TRIGGERS = _import_triggers()


@rule(code="HP905", name="cuda-only-python-import", category="cuda-only-library",
      severity="error", effort="high", kinds=("python", "setup.py"), triggers=_IMPORT_TRIGGERS)
def cuda_only_python_import(ctx):
    """Reports imports of NVIDIA-only Python packages (apex, tensorrt, nvidia.dali, pycuda, ...).

    What it does:
    Parses the file with Python's ast (never runs it) and flags import statements of apex,
    tensorrt, torch_tensorrt, nvidia.dali, pycuda, cuda-python's cuda.bindings/cuda.cudart and
    pynvml (also `from cuda import cudart`).

    Why it matters on AMD GPUs:
    These packages wrap NVIDIA-only libraries; on ROCm the import fails or the code path cannot
    run.

    Example:
    from apex import amp

    Fix:
    Use the ROCm counterpart named in the message (torch.amp instead of apex.amp, MIGraphX for
    TensorRT, rocAL for DALI, hip-python for PyCUDA, amdsmi for pynvml), or make the import
    optional for NVIDIA systems.
    """
    offset = python_span(ctx)
    for node in python_imports(ctx):
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for module in modules:
            found = _module_entry(module)
            if found is None:
                continue
            name, (what, alternative) = found
            s, e = offset(node)
            yield Hit(s, e, f"imports `{name}` ({what}), which is NVIDIA-only",
                      f"use {alternative}")
            break
