"""Per-process caches: the mapping tables and the lexer compiled from their name prefixes."""

from __future__ import annotations

from functools import lru_cache

from hipport.config import Settings
from hipport.mappings import Mappings, load
from hipport.parse.lexer import Lexer


def candidate_prefixes(mappings: Mappings, width: int = 8) -> set[bytes]:
    """Prefixes covering every table name (the lexer factors them into a trie and surfaces
    only words starting so), plus the starts of CUDA-looking names, which are reported when
    no table knows them."""
    names = set(mappings.names) | set(mappings.entries)
    # A qualified name (`thrust::cuda`) is found by its last word.
    return {n.rsplit("::", 1)[-1][:width].encode("ascii") for n in names} | {b"cu", b"CU", b"nv", b"NV"}


@lru_cache(maxsize=8)
def _tools(target: tuple[int, int] | None, libs: str, experimental: bool) -> tuple[Mappings, Lexer]:
    mappings = load(target_hip=target, libs=libs, experimental=experimental)
    return mappings, Lexer(candidate_prefixes(mappings))


def tools(settings: Settings) -> tuple[Mappings, Lexer]:
    return _tools(settings.target_hip, settings.libs, settings.experimental)
