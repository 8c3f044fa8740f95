"""Modules loaded when first used.

`ast` takes a process 4 ms to import, `json` 3 ms and the tree-sitter bindings 3 ms, and
many runs never use them: a pre-commit check of a .cu file, a port of a tree with no Python
in it, files the lexer answers for without a tree (hipport.parse.tree). A module named here is
registered at once (so every `import ast` elsewhere gets the same module, and the same node
classes) and loaded by importlib's LazyLoader when one of its attributes is first read.
Python 3.11's LazyLoader is not safe to trigger from two threads at once: hipport's only other
threads (the pool's feeders) pass pickled bytes and never read these modules.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_import(name: str) -> ModuleType:
    """The module `name`, loaded on first attribute access (at once where it already is)."""
    module = sys.modules.get(name)
    if module is not None:
        return module
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ImportError(f"no module named {name!r}", name=name)
    spec.loader = loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
