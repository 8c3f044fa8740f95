#!/usr/bin/env python3
"""Write mappings/torch_extra.tsv: the CUDA library name pairs of PyTorch's hipify list
(torch/utils/hipify/cuda_to_hip_mappings.py) that hipport's other tables lack.

    python scripts/import_torch_mappings.py [PATH/TO/cuda_to_hip_mappings.py]
                                            [--tables DIR] [--out FILE] [--torch-version X.Y.Z]

Without a path the file is looked up in the installed torch (torch is not imported). The pairs
kept are

- from PyTorch's CUDA API dictionaries only (CUDA_IDENTIFIER_MAP, CUDA_TYPE_NAME_MAP,
  CUDA_SPECIAL_MAP); PyTorch's own names (PYTORCH_SPECIFIC_MAPPINGS, C10_MAPPINGS, the Caffe2
  lists), header paths (CUDA_INCLUDE_MAP) and math rewrites are not read;
- C identifiers on both sides (no `at::`, `cuda::`, `rocshmem::`, no header paths or text);
- not PyTorch-looking names (THC*, AT_*, C10_*, TORCH_*, CUDAStream-style classes);
- not already listed in a name table of --tables (every *.tsv but includes.tsv and torch_extra.tsv);
- not in EXCLUDED below, the hand review of what is left.

The output depends only on the input file and the tables: a rerun gives the same bytes.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import sys
import types
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT_NAME = "torch_extra.tsv"
DICTS = ("CUDA_IDENTIFIER_MAP", "CUDA_TYPE_NAME_MAP", "CUDA_SPECIAL_MAP")
COLUMNS = (
    "cuda hip roc kind section cuda_added cuda_deprecated cuda_changed cuda_removed hip_added "
    "hip_deprecated hip_changed hip_removed experimental roc_added risk note"
).split()
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# PyTorch's own spellings, in case a later torch moves some into the CUDA dictionaries.
PYTORCH_OWN = re.compile(r"(?:THC|THCuda|AT_|C10_|TORCH_|Caffe|caffe2|c10_|at_|CUDA[A-Z][a-z])")

# Hand review (torch 2.13.0): pairs left after the filters that are wrong or not a rename.
EXCLUDED = {
    "cuD310ResourceSetMapFlags": "not a CUDA name (a misspelling of cuD3D10ResourceSetMapFlags)",
    "CUDA_R_4F_E2M1": "HIP_R_4F_E2M1 is not in HIP up to ROCm 6.3 (hip/library_types.h)",
    "MAJOR_VERSION": "libraryPropertyType enumerator with a generic name, and hipLibraryMajorVersion "
                     "is not in HIP up to ROCm 6.3",
    "MINOR_VERSION": "libraryPropertyType enumerator with a generic name, and hipLibraryMinorVersion "
                     "is not in HIP up to ROCm 6.3",
    "PATCH_LEVEL": "libraryPropertyType enumerator with a generic name, and hipLibraryPatchVersion "
                   "is not in HIP up to ROCm 6.3",
    "CUBLAS_DATA_FLOAT": "HIPBLAS_DATA_* are not hipBLAS names (CUDA 7.5's cublasDataType_t)",
    "CUBLAS_DATA_DOUBLE": "HIPBLAS_DATA_* are not hipBLAS names (CUDA 7.5's cublasDataType_t)",
    "CUBLAS_DATA_HALF": "HIPBLAS_DATA_* are not hipBLAS names (CUDA 7.5's cublasDataType_t)",
    "CUBLAS_DATA_INT8": "HIPBLAS_DATA_* are not hipBLAS names (CUDA 7.5's cublasDataType_t)",
    "cublasSdotBatched": "not a cuBLAS name (cuBLAS has no batched level-1 API)",
    "cublasDdotBatched": "not a cuBLAS name (cuBLAS has no batched level-1 API)",
    "cublasSscalBatched": "not a cuBLAS name (cuBLAS has no batched level-1 API)",
    "cublasDscalBatched": "not a cuBLAS name (cuBLAS has no batched level-1 API)",
    "cublasSaxpyBatched": "not a cuBLAS name (cuBLAS has no batched level-1 API)",
    "cublasScopyBatched": "not a cuBLAS name (cuBLAS has no batched level-1 API)",
    "cublasDcopyBatched": "not a cuBLAS name (cuBLAS has no batched level-1 API)",
    "cublasSasumBatched": "not a cuBLAS name (cuBLAS has no batched level-1 API)",
    "cublasDasumBatched": "not a cuBLAS name (cuBLAS has no batched level-1 API)",
    "cublasSetWorkspace": "hipblasSetWorkspace is not in hipBLAS up to ROCm 6.3",
    "CUBLASLT_MATMUL_DESC_A_SCALE_MODE": "not in hipBLASLt up to ROCm 6.3",
    "CUBLASLT_MATMUL_DESC_B_SCALE_MODE": "not in hipBLASLt up to ROCm 6.3",
    "CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F": "not in hipBLASLt up to ROCm 6.3",
    "CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0": "not in hipBLASLt up to ROCm 6.3",
    "CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3": "not in hipBLASLt up to ROCm 6.3",
    "cuSPARSELt": "a product name, not an API identifier",
    "nvmlReturn_t": "NVML -> ROCm SMI is another library with other semantics, not a rename",
    "NVML_SUCCESS": "NVML -> ROCm SMI is another library with other semantics, not a rename",
    "NVML_P2P_CAPS_INDEX_READ": "NVML -> ROCm SMI is another library, and the pair is not equivalent",
    "NVML_P2P_STATUS_OK": "NVML -> ROCm SMI is another library, and the pair is not equivalent",
    "NVML_ERROR_INSUFFICIENT_SIZE": "NVML -> ROCm SMI is another library with other semantics",
    "nvmlDevice_t": "NVML -> ROCm SMI: a handle becomes a device index (uint32_t), not a rename",
    "nvmlGpuP2PStatus_t": "NVML -> ROCm SMI: an enum becomes bool, not a rename",
    "nvmlProcessInfo_t": "NVML -> ROCm SMI is another library with other semantics",
    "nvmlGpuP2PCapsIndex_t": "NVML -> ROCm SMI: an enum becomes uint32_t, not a rename",
}
# cuRAND's enumerators spelled curand_* in torch's list are not CUDA names (cuRAND: CURAND_*,
# which HIPIFY's curand table has).
EXCLUDED_PATTERNS = (
    (re.compile(r"curand_[A-Z0-9]"), "not a CUDA name (cuRAND spells these CURAND_...)"),
)
# The ROCm release a HIP library first shipped in, by the HIP name's prefix.
FLOORS = (
    (re.compile(r"hipsparseLt|HIPSPARSELT_"), "6.0.0", "cuSPARSELt",
     "hipSPARSELt (hipsparselt/hipsparselt.h) first shipped in ROCm 6.0 (tag rocm-6.0.0)"),
)
LIBRARY = (
    (re.compile(r"cusparseLt|CUSPARSELT_|cusparseComputeType|CUSPARSE_COMPUTE_"), "cuSPARSELt"),
    (re.compile(r"curand|mtgp32"), "cuRAND"),
    (re.compile(r"cuda|CUDA_|cu[A-Z]|CU_"), "CUDA runtime/driver"),
)
KINDS = {"mtgp32dc_params_fast_11213": "other"}  # a table of generator parameters
NOTES = {
    "cudaStreamGetCaptureInfo_v2": "CUDA 11.3-12.x (gone from the CUDA 13.0 headers); in HIP 5.2",
    "mtgp32_kernel_params": "the struct tag of mtgp32_kernel_params_t; hipRAND has only the typedef",
    "mtgp32dc_params_fast_11213": "same name in rocrand/rocrand_mtgp32_11213.h",
    "curand4": "hipRAND (hiprand/hiprand_kernel.h)",
}


def find_mappings_file() -> Path | None:
    """torch/utils/hipify/cuda_to_hip_mappings.py of the installed torch, without importing it."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        p = Path(root) / "utils" / "hipify" / "cuda_to_hip_mappings.py"
        if p.is_file():
            return p
    return None


def torch_version(mappings_file: Path) -> str | None:
    """The version of the torch the file belongs to (torch/version.py), local part dropped."""
    version_py = mappings_file.parents[2] / "version.py"
    try:
        text = version_py.read_text(encoding="utf-8")
    except OSError:
        return None
    m = re.search(r"""^__version__\s*(?::\s*str\s*)?=\s*['"]([^'"+]+)""", text, re.M)
    return m.group(1) if m else None


def load_mappings(path: Path) -> types.ModuleType:
    """Execute the mapping file as a module of a throw-away package, so that its relative imports
    (older torch: `from .constants import *`) resolve to its own folder."""
    package = "_hipport_torch_hipify"
    pkg = types.ModuleType(package)
    pkg.__path__ = [str(path.parent)]
    saved = {k: sys.modules.get(k) for k in list(sys.modules) if k == package or k.startswith(package + ".")}
    sys.modules[package] = pkg
    env = os.environ.pop("IS_FBCODE", None)  # the open-source spelling of the RCCL header
    try:
        spec = importlib.util.spec_from_file_location(f"{package}.cuda_to_hip_mappings", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return module
    finally:
        if env is not None:
            os.environ["IS_FBCODE"] = env
        for k in [k for k in sys.modules if k == package or k.startswith(package + ".")]:
            del sys.modules[k]
        sys.modules.update({k: v for k, v in saved.items() if v is not None})


def _hip_name(value, module: types.ModuleType) -> str | None:
    """The HIP spelling of a dictionary value: a string (torch >= 2.11), or a tuple (older torch)
    whose first item is the name, followed by the kind and API constants and, for names HIP lacks,
    HIP_UNSUPPORTED. None for unsupported pairs and for PyTorch's own APIs."""
    if isinstance(value, str):
        return value
    if not (isinstance(value, tuple) and value and isinstance(value[0], str)):
        return None
    skip = {getattr(module, c) for c in ("HIP_UNSUPPORTED", "API_PYTORCH", "API_CAFFE2", "API_C10")
            if isinstance(getattr(module, c, None), int)}
    if skip.intersection(v for v in value[1:] if isinstance(v, int)):
        return None
    return value[0]


def known_names(tables: Path, out: Path) -> set[str]:
    """The cuda column of every name table in `tables` except includes.tsv, torch_extra.tsv (this
    script's own output) and `out`."""
    names: set[str] = set()
    for p in sorted(tables.glob("*.tsv")):
        if p.name in ("includes.tsv", OUT_NAME) or p.resolve() == out.resolve():
            continue
        header = None
        for line in p.read_text(encoding="utf-8").split("\n"):
            if not line or line.startswith("#"):
                continue
            cells = line.split("\t")
            if header is None:
                header = cells.index("cuda")
                continue
            names.add(cells[header])
    return names


def select(module: types.ModuleType, known: set[str]) -> tuple[list[dict], dict[str, str]]:
    """(rows to write, {excluded cuda name: reason})."""
    pairs: dict[str, tuple[str, str]] = {}
    for dict_name in DICTS:
        for cuda, value in getattr(module, dict_name, {}).items():
            hip = _hip_name(value, module)
            if isinstance(cuda, str) and hip is not None and cuda not in pairs:
                pairs[cuda] = (hip, dict_name)
    rows, dropped = [], {}
    for cuda, (hip, dict_name) in pairs.items():
        reason = None
        if not (IDENT.match(cuda) and IDENT.match(hip)):
            reason = "not an identifier pair"
        elif PYTORCH_OWN.match(cuda):
            reason = "PyTorch's own name"
        elif cuda in known:
            reason = "already in hipport's tables"
        elif cuda in EXCLUDED:
            reason = EXCLUDED[cuda]
        else:
            reason = next((why for pat, why in EXCLUDED_PATTERNS if pat.match(cuda)), None)
        if reason:
            dropped[cuda] = reason
            continue
        rows.append(_row(cuda, hip, dict_name))
    rows.sort(key=lambda r: r["cuda"].encode())
    return rows, dropped


def _row(cuda: str, hip: str, dict_name: str) -> dict:
    library = next((lib for pat, lib in LIBRARY if pat.match(cuda)), "")
    added, floor_note = "", ""
    for pat, version, _lib, why in FLOORS:
        if pat.match(hip):
            added, floor_note = version, why
    if cuda in KINDS:
        kind = KINDS[cuda]
    elif cuda.endswith("_t") or (library == "cuSPARSELt" and cuda[0].islower() and cuda.endswith("Type")):
        kind = "type"
    elif cuda.isupper() or cuda.upper() == cuda:
        kind = "enum"
    elif cuda[0].islower() and "_" in cuda and not cuda.startswith("cu"):
        kind = "type"
    else:
        kind = "function"
    notes = [n for n in (NOTES.get(cuda, ""), floor_note) if n]
    return {"cuda": cuda, "hip": hip, "kind": kind,
            "section": f"{library} ({dict_name})" if library else dict_name,
            "hip_added": added, "note": "; ".join(notes)}


def render(rows: list[dict], version: str) -> str:
    source = f"from torch/utils/hipify (torch {version})"
    lines = [
        f"# hand-written review of PyTorch's hipify list: pairs {source} that the other tables lack; "
        f"written by scripts/import_torch_mappings.py (its EXCLUDED list is the review); do not edit",
        "\t".join(COLUMNS),
    ]
    for r in rows:
        r = dict(r, note="; ".join(n for n in (source, r["note"]) if n))
        lines.append("\t".join(r.get(c, "") for c in COLUMNS))
    return "\n".join(lines) + "\n"


def import_torch(mappings_file: Path, tables: Path, out: Path, version: str) -> tuple[int, dict[str, str]]:
    module = load_mappings(mappings_file)
    rows, dropped = select(module, known_names(tables, out))
    out.write_bytes(render(rows, version).encode("utf-8"))
    return len(rows), dropped


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mappings", nargs="?", type=Path,
                    help="torch/utils/hipify/cuda_to_hip_mappings.py (default: the installed torch's)")
    ap.add_argument("--tables", type=Path, default=REPO / "mappings",
                    help="the mapping tables whose names are skipped (default: mappings/)")
    ap.add_argument("--out", type=Path, default=None,
                    help="the table to write (default: TABLES/torch_extra.tsv)")
    ap.add_argument("--torch-version", help="the torch version for the notes (default: torch/version.py)")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args(argv)
    path = args.mappings or find_mappings_file()
    if path is None or not path.is_file():
        print("import_torch_mappings: cuda_to_hip_mappings.py not found (pass its path)", file=sys.stderr)
        return 2
    version = args.torch_version or torch_version(path)
    if not version:
        print("import_torch_mappings: cannot tell the torch version (use --torch-version)", file=sys.stderr)
        return 2
    out = args.out or args.tables / OUT_NAME
    count, dropped = import_torch(path, args.tables, out, version)
    if not args.quiet:
        reasons: dict[str, int] = {}
        for why in dropped.values():
            reasons[why] = reasons.get(why, 0) + 1
        print(f"{out}: {count} pairs from torch {version}", file=sys.stderr)
        for why, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"  skipped {n:4}: {why}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
