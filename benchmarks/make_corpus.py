#!/usr/bin/env python3
"""Generate a large, realistic CUDA source tree for benchmarking hipport.

Copies every .cu/.cuh/.cpp/.h file under the repository's fixtures/ and
examples/ folders into TARGET many times over, until the tree reaches the
requested size (default 10 MB). Each copy is a "project" of its own:

- the relative layout of the sources is kept, under ``proj_NNNN_<word>/``
  (some projects nested one level deeper, as in monorepos);
- file names get a per-copy suffix (``reduce.cu`` -> ``reduce_v7.cu``) and
  quoted ``#include``s of renamed files follow, so the include graph holds;
- identifiers the sources declare themselves (kernels, functions marked
  __global__/__device__/__host__, structs/classes/namespaces, macros) get the
  same suffix, consistently across the project. CUDA API names are never
  touched, so every copy carries the same porting work as the original.

Files are handled as bytes: CRLF, BOMs and Latin-1 bytes come through, and
binary files are copied verbatim (--utf8-only leaves non-UTF-8 files out, for
tools that cannot read them). The output is deterministic for a given
--seed and input tree.

    python benchmarks/make_corpus.py /tmp/corpus            # ~10 MB
    python benchmarks/make_corpus.py /tmp/corpus --size-mb 50 --force
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SOURCES = (REPO / "fixtures", REPO / "examples")
SUFFIXES = {".cu", ".cuh", ".cpp", ".h"}

WORDS = (
    "attention", "conv", "fft", "gemm", "histogram", "layernorm", "moe", "nbody",
    "optim", "pooling", "quant", "raytrace", "reduce", "scan", "softmax", "sort",
    "sparse", "stencil", "topk", "transpose",
)

# Declarations whose names belong to the project (not to CUDA).
_DECL_PATTERNS = (
    # kernels and device/host functions: the name right before "(".
    re.compile(rb"\b(?:__global__|__device__|__host__)\b[^;{}()]*?\b([A-Za-z_]\w*)\s*\("),
    re.compile(rb"\b(?:struct|class|namespace|union|enum(?:\s+class)?)\s+([A-Za-z_]\w*)"),
    re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.MULTILINE),
)
# Names that look like a vendor API or are too generic to rename safely.
_KEEP = re.compile(
    rb"^(?:cu|CU|cuda|CUDA|nv|NV|hip|HIP|roc|curand|cublas|cusparse|cufft|cudnn|"
    rb"torch|at|c10|std|thrust|cub|_|__|main$|[A-Za-z]$|[A-Za-z]{2}$)"
)
_CXX_WORDS = {
    b"void", b"int", b"float", b"double", b"char", b"bool", b"auto", b"const",
    b"inline", b"static", b"extern", b"template", b"typename", b"unsigned",
    b"signed", b"long", b"short", b"size_t", b"return", b"operator", b"class",
    b"struct", b"if", b"for", b"while", b"switch", b"sizeof", b"decltype",
}
_INCLUDE = re.compile(rb'(#[ \t]*include[ \t]*")([^"\r\n]+)(")')


@dataclass(frozen=True)
class SourceFile:
    rel: Path       # path relative to its source root's parent (e.g. examples/saxpy_ops/src/x.cu)
    data: bytes

    @property
    def binary(self) -> bool:
        return b"\0" in self.data


def is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return b"\0" not in data


def collect(sources: list[Path], utf8_only: bool = False) -> list[SourceFile]:
    files = []
    for root in sources:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if path.is_file() and not path.is_symlink() and path.suffix in SUFFIXES:
                data = path.read_bytes()
                if utf8_only and not is_utf8(data):
                    continue
                files.append(SourceFile(path.relative_to(root.parent), data))
    return files


def declared_names(files: list[SourceFile]) -> list[bytes]:
    names: set[bytes] = set()
    for f in files:
        if f.binary:
            continue
        for pattern in _DECL_PATTERNS:
            for match in pattern.finditer(f.data):
                name = match.group(1)
                if name not in _CXX_WORDS and not _KEEP.match(name):
                    names.add(name)
    # Longest first so the alternation prefers whole longer names (\b guards too).
    return sorted(names, key=lambda n: (-len(n), n))


def mutator(names: list[bytes], tag: bytes, include_map: dict[bytes, bytes]):
    """One regex pass: quoted #include paths follow renamed files (and are
    otherwise left alone); declared identifiers elsewhere get the tag."""
    alternatives = [_INCLUDE.pattern]
    if names:
        alternatives.append(rb"\b(" + b"|".join(re.escape(n) for n in names) + rb")\b")
    pattern = re.compile(b"|".join(alternatives))

    def replace(m: re.Match) -> bytes:
        if m.group(1) is None:
            return m.group(4) + tag
        target = m.group(2)
        head, sep, base = target.rpartition(b"/")
        new = include_map.get(base)
        return m.group(1) + (head + sep + new if new else target) + m.group(3)

    return lambda data: pattern.sub(replace, data)


def renamed_file(name: str, tag: str) -> str:
    stem, dot, ext = name.rpartition(".")
    return f"{stem}{tag}.{ext}" if dot else f"{name}{tag}"


def build(target: Path, sources: list[Path], size_bytes: int, seed: int,
          utf8_only: bool = False) -> tuple[int, int]:
    files = collect(sources, utf8_only)
    if not files:
        joined = ", ".join(str(s) for s in sources)
        raise SystemExit(f"make_corpus: no {'/'.join(sorted(SUFFIXES))} files under {joined}")
    names = declared_names(files)
    rng = random.Random(seed)
    written_bytes = written_files = 0
    copy = 0
    while written_bytes < size_bytes:
        copy += 1
        tag = f"_v{copy}"
        project = f"proj_{copy:04d}_{rng.choice(WORDS)}"
        base = target / (f"group_{copy % 7}" if rng.random() < 0.3 else "") / project
        include_map = {
            f.rel.name.encode(): renamed_file(f.rel.name, tag).encode() for f in files
        }
        mutate = mutator(names, tag.encode(), include_map)
        for f in files:
            out = base / f.rel.parent / renamed_file(f.rel.name, tag)
            out.parent.mkdir(parents=True, exist_ok=True)
            data = f.data if f.binary else mutate(f.data)
            out.write_bytes(data)
            written_bytes += len(data)
            written_files += 1
            if written_bytes >= size_bytes:
                break
    return written_files, written_bytes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", type=Path, help="directory to create")
    parser.add_argument("--size-mb", type=float, default=10.0, help="stop once this many MB are written (default 10)")
    parser.add_argument("--source", type=Path, action="append", dest="sources",
                        help="folder to copy from (repeatable; default: fixtures/ and examples/)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--utf8-only", action="store_true",
                        help="leave out files that are not valid UTF-8 text (torch's hipify crashes on them)")
    parser.add_argument("--force", action="store_true", help="delete TARGET first if it exists")
    args = parser.parse_args(argv)

    target: Path = args.target
    if target.exists() and any(target.iterdir()):
        if not args.force:
            print(f"make_corpus: {target} is not empty (use --force to replace it)", file=sys.stderr)
            return 2
        shutil.rmtree(target)
    target.mkdir(parents=True, exist_ok=True)
    sources = args.sources or list(DEFAULT_SOURCES)
    n_files, n_bytes = build(target, sources, int(args.size_mb * 1_000_000), args.seed,
                             args.utf8_only)
    print(f"make_corpus: wrote {n_files} files, {n_bytes / 1e6:.1f} MB to {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
