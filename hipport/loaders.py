"""Per-process caches: the mapping tables and the lexer compiled from their name prefixes."""

from __future__ import annotations

import gc
from functools import lru_cache

from hipport import collector, regexes
from hipport.config import Settings
from hipport.mappings import Mappings, load, name_heads
from hipport.parse.lexer import Lexer


def candidate_prefixes(mappings: Mappings) -> set[bytes]:
    """Prefixes covering every table name (the lexer factors them into a trie and surfaces
    only words starting so), plus the starts of CUDA-looking names, which are reported when
    no table knows them."""
    # Every renamed name has a row (mappings.names' keys are entries'). The tables' own view
    # has the heads worked out when they were parsed; another mapping (a test's) gets them now.
    heads = getattr(mappings.entries, "heads", None)
    if heads is None:
        heads = name_heads(mappings.entries.keys())
    return {*heads, b"cu", b"CU", b"nv", b"NV"}


@lru_cache(maxsize=8)
def _tools(target: tuple[int, int] | None, libs: str, experimental: bool) -> tuple[Mappings, Lexer]:
    mappings = load(target_hip=target, libs=libs, experimental=experimental)
    return mappings, Lexer(candidate_prefixes(mappings))


def tools(settings: Settings) -> tuple[Mappings, Lexer]:
    return _tools(settings.target_hip, settings.libs, settings.experimental)


_set_aside = False


def prepare(settings: Settings) -> None:
    """Load what porting or checking any file needs (the tables and lexer, the rule modules)
    and, the first time, tune the garbage collector for the run (hipport.collector): what is
    loaded so far is set aside (gc.freeze), so that its passes do not walk those long-lived
    objects again and again and forked workers share their pages; and its pace is slowed (the
    command line did that as it started)."""
    global _set_aside
    from hipport.rules import all_rules  # noqa: PLC0415 - loaders is imported before the rules

    tools(settings)
    all_rules()
    regexes.save()  # what the next process (or -j worker) builds without compiling
    if not _set_aside:
        _set_aside = True
        gc.freeze()
        collector.relax()
