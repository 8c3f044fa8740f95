#!/usr/bin/env python3
"""Import AMD HIPIFY's API support tables (Markdown) into hipport's mappings/*.tsv.

Usage: python scripts/import_hipify_tables.py PATH [--out mappings]

PATH is a folder holding HIPIFY's `docs/tables/*.md` files. Each Markdown table has the
columns `CUDA | A | D | C | R | HIP | A | D | C | R | E` (A/D/C/R: version in which the
name was Added, Deprecated, Changed, Removed; E: experimental), and the `*_and_ROC.md` /
`*_and_MIOPEN.md` files add a `ROC`/`MIOPEN | A | D | C | R | E` group. One TSV per library
is written; the output depends only on the input files, so a rerun on the same input gives
the same bytes.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

# (TSV stem, source table). The _and_ROC / _and_MIOPEN variants keep the roc/MIOpen name.
LIBRARIES: tuple[tuple[str, str], ...] = (
    ("runtime", "CUDA_Runtime_API_functions_supported_by_HIP.md"),
    ("driver", "CUDA_Driver_API_functions_supported_by_HIP.md"),
    ("device", "CUDA_Device_API_supported_by_HIP.md"),
    ("complex", "cuComplex_API_supported_by_HIP.md"),
    ("cublas", "CUBLAS_API_supported_by_HIP_and_ROC.md"),
    ("curand", "CURAND_API_supported_by_HIP_and_ROC.md"),
    ("cufft", "CUFFT_API_supported_by_HIP.md"),
    ("cusparse", "CUSPARSE_API_supported_by_HIP_and_ROC.md"),
    ("cusolver", "CUSOLVER_API_supported_by_HIP_and_ROC.md"),
    ("cudnn", "CUDNN_API_supported_by_HIP_and_MIOPEN.md"),
    ("cub", "CUB_API_supported_by_HIP.md"),
    ("nvrtc", "CUDA_RTC_API_supported_by_HIP.md"),
)

COLUMNS: tuple[str, ...] = (
    "cuda", "hip", "roc", "kind", "section",
    "cuda_added", "cuda_deprecated", "cuda_changed", "cuda_removed",
    "hip_added", "hip_deprecated", "hip_changed", "hip_removed",
    "experimental", "roc_added", "risk", "note",
)

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
VERSION = re.compile(r"[0-9]+(\.[0-9]+)*\Z")
HEADING = re.compile(r"#{2,6}\s+(.*?)\s*#*\s*\Z")
NUMBERING = re.compile(r"^[0-9]+(\.[0-9]+)*\.?\s+")
# Which group a header label starts, and what it is called in the TSV.
GROUPS = {"CUDA": "cuda", "HIP": "hip", "ROC": "roc", "MIOPEN": "roc"}
FLAGS = {"A": "added", "D": "deprecated", "C": "changed", "R": "removed", "E": "experimental"}


class TableError(Exception):
    """The input does not look like HIPIFY's tables."""


def strip_markdown(text: str) -> str:
    """Cell or heading text without bold markers, code-span backticks or links. Underscores are
    kept: `__half` is a name, not emphasis."""
    text = text.strip()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # [text](link)
    text = text.replace("**", "").replace("`", "")
    return " ".join(text.split())


def split_row(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|"):
        line = line[:-1]
    return [strip_markdown(c) for c in line.split("|")]


def header_layout(cells: list[str], where: str) -> list[tuple[str, str]]:
    """[(group, field)] per column: ("cuda", "name"), ("cuda", "added"), ..."""
    layout: list[tuple[str, str]] = []
    group = ""
    for cell in cells:
        label = cell.upper()
        if label in GROUPS:
            group = GROUPS[label]
            layout.append((group, "name"))
        elif label in FLAGS and group:
            layout.append((group, FLAGS[label]))
        else:
            raise TableError(f"{where}: unexpected table header cell {cell!r}")
    groups = [g for g, f in layout if f == "name"]
    if groups[:2] != ["cuda", "hip"] and groups[:2] != ["cuda", "roc"]:
        raise TableError(f"{where}: table header must start with CUDA then HIP: {cells}")
    return layout


# ---------------------------------------------------------------------------------------------
# kind: a heuristic from the section heading and the shape of the name

TYPE_SECTION = re.compile(r"\btypes?\b", re.IGNORECASE)
TYPE_SUFFIX = re.compile(r"(_t|_st|_enum|_s|_union|_v[0-9]+)\Z")
ALL_CAPS_RE = re.compile(r"_*[A-Z][A-Z0-9_]*\Z")


def is_all_caps(name: str) -> bool:
    """ALL_CAPS names; an `x` between digits (CUBLASLT_MATMUL_TILE_64x128) counts as a capital."""
    return bool(ALL_CAPS_RE.match(re.sub(r"(?<=[0-9])x(?=[0-9])", "X", name)))


CAPS_STRUCT = re.compile(
    r"CUDA_[A-Z0-9_]*(DESC|DESCRIPTOR|PARAMS|MEMCPY2D|MEMCPY3D|MEMCPY3D_PEER|TOKENS|"
    r"PROPERTIES|REQUIREMENTS|INFO|PROP|LAUNCH_PARAMS|FRAME|PLANE_DESC|ATTRIBUTE_VALUE)\Z"
)
CAPS_MACRO = re.compile(
    r"(CUDART_|CUB_|_CUB_|__CUB_|CU_LAUNCH_PARAM_|CU_MEMHOSTALLOC_|CU_MEMHOSTREGISTER_|CU_TRSA_|"
    r"CU_TRSF_|CUDA_ARRAY3D_|CU_DEVICE_CPU\Z|CU_DEVICE_INVALID\Z|CU_STREAM_LEGACY\Z|"
    r"CU_STREAM_PER_THREAD\Z|CU_IPC_HANDLE_SIZE\Z|CUDA_IPC_HANDLE_SIZE\Z|CU_PARAM_TR_DEFAULT\Z|"
    r"CUDA_EGL_MAX_PLANES\Z|CUDA_EXTERNAL_MEMORY_DEDICATED\Z|CUDA_EXTERNAL_SEMAPHORE_[A-Z_]*SKIP|"
    r"CUDA_NVSCISYNC_|CU_GRAPH_KERNEL_NODE_PORT_|CU_KERNEL_NODE_ATTRIBUTE_|CU_STREAM_ATTRIBUTE_|"
    r"CU_COMPUTE_ACCELERATED_TARGET_BASE\Z|CUFFT_FORWARD\Z|CUFFT_INVERSE\Z|CUDNN_DIM_MAX\Z|"
    r"CUDNN_BN_MIN_EPSILON\Z|CUDNN_SEV_[A-Z_]*_EN\Z|CUDNN_MAJOR\Z|CUDNN_MINOR\Z)"
)
CAPS_MACRO_END = re.compile(r".*(_VERSION|_VER_[A-Z_]+|_MAJOR|_MINOR|_PATCHLEVEL)\Z")
CAPS_ENUM_PART = re.compile(r".*_(ATTRIBUTE|ERROR|STATUS)_")
# Runtime names spelled like enumerators but #defined in driver_types.h / cuda_runtime_api.h.
CAMEL_MACRO = re.compile(
    r"cuda(HostAlloc|HostRegister|ArrayDefault|ArrayLayered|ArraySurfaceLoadStore|ArrayCubemap|"
    r"ArrayTextureGather|ArrayColorAttachment|ArraySparse|ArrayDeferredMapping|MemAttach|"
    r"StreamNonBlocking|StreamDefault|StreamLegacy|StreamPerThread|EventDefault|EventBlockingSync|"
    r"EventDisableTiming|EventInterprocess|EventRecord|EventWait|DeviceSchedule|"
    r"DeviceBlockingSync|DeviceMapHost|DeviceLmemResizeToMax|DeviceMask|DeviceSyncMemops|"
    r"DevicePropDontCare|CpuDeviceId|InvalidDeviceId|IpcMemLazyEnablePeerAccess|Occupancy|"
    r"CooperativeLaunchMultiDevice|PeerAccessDefault|InitDeviceFlagsAreValid|NvSciSyncAttr|"
    r"ExternalMemoryDedicated|ExternalSemaphoreSignalSkip|ExternalSemaphoreWaitSkip|"
    r"GraphKernelNodePort|SurfaceType|TextureType|StreamAttr|KernelNodeAttr[A-Z])"
)
# Runtime enumerator families whose enum type is not a plain prefix of the enumerator.
CAMEL_ENUM = re.compile(
    r"cuda(Success\Z|Error[A-Z]|DevAttr|DevP2PAttr|MemcpyHostTo|MemcpyDeviceTo|MemcpyDefault\Z|"
    r"GraphInstantiate(Error|InvalidStructure|NodeOperationNotSupported|MultipleDevicesNotSupported|"
    r"Success|FlagAutoFree|FlagUpload|FlagDeviceLaunch|FlagUseNodePriority)|"
    r"BoundaryMode|FormatMode|ReadMode|FilterMode|AddressMode|ResourceType|ComputeMode)"
)
# Endings of struct/enum type names (never of enumerators) in the runtime's camel-case names.
CAMEL_TYPE_END = re.compile(
    r".*([a-z]V[0-9]|Params|Parms|Desc|Info|Attributes|Handle|Kind|Type|Flags|Mode|Options|Scope|"
    r"Target|Result|Config|Policy|Properties|Requirements|Prop|Data|Window|Pair|Fn|Callback)\Z"
)
CAMEL_STRUCT_END = re.compile(r".*([a-z]V[0-9]|Params|Parms|Desc|Info|Attributes|Data|Pair)\Z")
CAMEL_TOKEN = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
CUB_TYPES = frozenset({"CubVector"})


def camel_prefixes(name: str, min_tokens: int = 3) -> list[str]:
    """Prefixes of `name` ending at a camel-case word boundary, longest first."""
    ends = [m.end() for m in CAMEL_TOKEN.finditer(name)]
    return [name[:e] for e in reversed(ends[min_tokens - 1 : -1])]


def runtime_families(type_names: frozenset[str]) -> dict[str, int]:
    """How many type-section names continue each camel prefix (3+ words) with a new word."""
    counts: dict[str, int] = {}
    for name in type_names:
        if TYPE_SUFFIX.search(name) or not name.startswith("cuda"):
            continue
        for p in camel_prefixes(name):
            counts[p] = counts.get(p, 0) + 1
    return counts


def kind_of(name: str, section: str, library: str, type_names: frozenset[str],
            families: dict[str, int]) -> str:
    """One of function, type, enum, macro, namespace, other (heuristic, documented)."""
    if library == "cub":
        return "type" if name in CUB_TYPES else "macro"
    if not TYPE_SECTION.search(section):
        if is_all_caps(name) and not name.startswith("__"):
            return "macro"
        return "function"
    if is_all_caps(name):
        if CAPS_STRUCT.match(name):
            return "type"
        if CAPS_MACRO.match(name):
            return "macro"
        if CAPS_MACRO_END.match(name) and not CAPS_ENUM_PART.match(name):
            return "macro"
        if TYPE_SUFFIX.search(name) and not name.startswith("__"):
            return "type"
        return "enum"
    if TYPE_SUFFIX.search(name):
        return "type"
    if re.match(r"CU[a-z]", name):
        return "type"
    if library == "runtime":
        if CAMEL_MACRO.match(name) and not re.search(r"(Params|Properties)\Z", name):
            return "macro"
        if CAMEL_ENUM.match(name):
            return "enum"
        if not CAMEL_STRUCT_END.match(name):
            if any(p in type_names for p in camel_prefixes(name, 2)):
                return "enum"  # cudaLimitStackSize continues the type cudaLimit
        if CAMEL_TYPE_END.match(name) or families.get(name, 0):
            return "type"  # a type name, or the name others continue (the enum's own name)
        if any(families.get(p, 0) >= 3 for p in camel_prefixes(name)):
            return "enum"  # one of a family: cudaMemAdviseSetReadMostly, ...
        return "type"
    return "type"


# ---------------------------------------------------------------------------------------------


@dataclass
class Row:
    cuda: str
    cells: dict[str, str]
    section: str


def parse_tables(path: Path) -> list[Row]:
    rows: list[Row] = []
    section = ""
    layout: list[tuple[str, str]] | None = None
    expect_rule = False
    text = path.read_text(encoding="utf-8")
    for lineno, line in enumerate(text.splitlines(), 1):
        where = f"{path.name}:{lineno}"
        stripped = line.strip()
        m = HEADING.match(stripped)
        if m:
            section = NUMBERING.sub("", strip_markdown(m.group(1)))
            layout = None
            continue
        if not stripped.startswith("|"):
            layout = None
            continue
        cells = split_row(stripped)
        if layout is None:
            layout = header_layout(cells, where)
            expect_rule = True
            continue
        if expect_rule:
            if not all(re.fullmatch(r":?-+:?", c.replace(" ", "")) for c in cells):
                raise TableError(f"{where}: expected the |:--| rule under the header")
            expect_rule = False
            continue
        if len(cells) != len(layout):
            raise TableError(f"{where}: {len(cells)} cells, header has {len(layout)}")
        values: dict[str, str] = {}
        for (group, what), cell in zip(layout, cells):
            values[f"{group}_{what}"] = cell
        name = values["cuda_name"]
        if not IDENT.match(name):
            raise TableError(f"{where}: CUDA name {name!r} is not an identifier")
        if not section:
            raise TableError(f"{where}: table row before any section heading")
        rows.append(Row(name, values, section))
    return rows


def version_cell(value: str, where: str) -> str:
    if value and not VERSION.match(value):
        raise TableError(f"{where}: version cell {value!r} is not a version")
    return value


def convert(library: str, rows: list[Row], source: str) -> list[dict[str, str]]:
    type_names = frozenset(r.cuda for r in rows if TYPE_SECTION.search(r.section))
    families = runtime_families(type_names) if library == "runtime" else {}
    out: list[dict[str, str]] = []
    for r in rows:
        c = r.cells
        where = f"{source} ({r.cuda})"
        hip = c.get("hip_name", "")
        roc = c.get("roc_name", "")
        notes: list[str] = []
        if hip and not IDENT.match(hip):
            notes.append(f"HIPIFY maps this to {hip} (not an identifier), so it is kept unsupported")
            hip = ""
        if roc and not IDENT.match(roc):
            notes.append(f"HIPIFY gives the roc name {roc} (not an identifier), dropped")
            roc = ""
        hip_e = c.get("hip_experimental", "")
        roc_e = c.get("roc_experimental", "")
        if hip_e:
            notes.append(f"experimental in HIP {hip_e}")
        elif roc_e:
            notes.append(f"experimental in ROC {roc_e}")
        if hip and not c.get("hip_added") and library != "cudnn":  # cuDNN: hipDNN, unused
            notes.append("HIPIFY gives no HIP version")
        row = {
            "cuda": r.cuda,
            "hip": hip,
            "roc": roc,
            "kind": kind_of(r.cuda, r.section, library, type_names, families),
            "section": r.section,
            "experimental": "1" if (hip_e or roc_e) else "",
            "roc_added": version_cell(c.get("roc_added", ""), where),
            "risk": "",
            "note": "; ".join(notes),
        }
        for side in ("cuda", "hip"):
            for what in ("added", "deprecated", "changed", "removed"):
                row[f"{side}_{what}"] = version_cell(c.get(f"{side}_{what}", ""), where)
        out.append(row)
    return out


def deduplicate(
    rows: list[dict[str, str]], prefer: tuple[str, str] = ("hip", "roc")
) -> tuple[list[dict[str, str]], list[str]]:
    """One row per CUDA name: the first row with a HIP name, else the first with a roc name,
    else the first (cuDNN: MIOpen name first). The others are named in the kept row's note."""
    by_name: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        by_name.setdefault(row["cuda"], []).append(row)
    kept: list[dict[str, str]] = []
    conflicts: list[str] = []
    for name, group in by_name.items():
        if len(group) == 1:
            kept.append(group[0])
            continue
        best = next((g for g in group if g[prefer[0]]), None) or next(
            (g for g in group if g[prefer[1]]), group[0]
        )
        others = []
        for g in group:
            if g is best:
                continue
            if g["section"] == best["section"]:
                desc = "listed again in this section"
            else:
                desc = f"also listed in section '{g['section']}'"
            if (g["hip"], g["roc"]) != (best["hip"], best["roc"]):
                desc += f" with hip={g['hip'] or '-'} roc={g['roc'] or '-'}"
                conflicts.append(f"{name}: kept hip={best['hip'] or '-'} roc={best['roc'] or '-'} "
                                 f"('{best['section']}'); {desc}")
            others.append(desc)
        best = dict(best)
        best["note"] = "; ".join([n for n in (best["note"], *others) if n])
        kept.append(best)
    kept.sort(key=lambda r: r["cuda"].encode())
    return kept, conflicts


def source_info(path: Path) -> str:
    """`ROCm/HIPIFY commit X (date)` from a README beside or above the tables, if any."""
    for readme in (path / "README.md", path.parent / "README.md"):
        if not readme.is_file():
            continue
        text = readme.read_text(encoding="utf-8", errors="replace")
        if "hipify" not in text.lower():
            continue
        m = re.search(r"commit\s+`?([0-9a-f]{7,40})`?(?:\s*,\s*([0-9]{4}-[0-9]{2}-[0-9]{2}))?", text)
        if m:
            info = f"ROCm/HIPIFY commit {m.group(1)}"
            if m.group(2):
                info += f" ({m.group(2)})"
            return info
    return ""


def render(rows: list[dict[str, str]], info: str) -> str:
    first = "# generated by scripts/import_hipify_tables.py from HIPIFY tables"
    if info:
        first += f" {info}"
    first += "; do not edit"
    lines = [first, "\t".join(COLUMNS)]
    for row in rows:
        cells = []
        for col in COLUMNS:
            value = " ".join(row[col].split())
            if "\t" in value or "\n" in value:
                raise TableError(f"{row['cuda']}: tab or newline in {col}")
            cells.append(value)
        lines.append("\t".join(cells))
    return "\n".join(lines) + "\n"


def import_tables(src: Path, out: Path, quiet: bool = False) -> dict[str, tuple[int, int]]:
    info = source_info(src)
    counts: dict[str, tuple[int, int]] = {}
    rendered: dict[str, str] = {}
    for stem, filename in LIBRARIES:
        table = src / filename
        if not table.is_file():
            raise TableError(f"missing table {table}")
        key = "roc" if stem == "cudnn" else "hip"
        prefer = ("roc", "hip") if stem == "cudnn" else ("hip", "roc")
        rows, conflicts = deduplicate(convert(stem, parse_tables(table), filename), prefer)
        rendered[stem] = render(rows, info)
        supported = sum(1 for r in rows if r[key])
        counts[stem] = (supported, len(rows) - supported)
        if not quiet:
            for c in conflicts:
                print(f"{stem}: duplicate {c}", file=sys.stderr)
    out.mkdir(parents=True, exist_ok=True)
    for stem, text in rendered.items():
        (out / f"{stem}.tsv").write_bytes(text.encode("utf-8"))
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", type=Path, help="folder with HIPIFY's docs/tables/*.md")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "mappings",
                    help="output folder (default: the repository's mappings/)")
    ap.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    args = ap.parse_args(argv)
    try:
        counts = import_tables(args.path, args.out, args.quiet)
    except (TableError, OSError, UnicodeDecodeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not args.quiet:
        for stem, (sup, uns) in counts.items():
            print(f"{stem:10} {sup:6} supported {uns:6} unsupported")
    return 0


if __name__ == "__main__":
    sys.exit(main())
