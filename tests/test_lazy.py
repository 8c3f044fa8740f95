"""hipport.lazy: modules loaded on first use, and the runs that never load `ast`, `json` or the
tree-sitter bindings."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from hipport.lazy import lazy_import

ROOT = Path(__file__).resolve().parents[1]


def _loaded(module: types.ModuleType) -> bool:
    """A lazy module becomes a plain module once loaded (asked without loading it)."""
    return type(module) is types.ModuleType


@pytest.fixture
def fresh(monkeypatch):
    """A stdlib module this process has not imported, with sys.modules restored after."""
    name = "colorsys"
    monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setattr(sys, "modules", dict(sys.modules))
    return name


def test_a_lazy_module_loads_when_first_read_and_is_the_one_everyone_imports(fresh):
    module = lazy_import(fresh)
    assert sys.modules[fresh] is module and not _loaded(module)
    assert module.rgb_to_hsv(1.0, 0.0, 0.0) == (0.0, 1.0, 1.0)
    assert _loaded(module)
    imported = __import__(fresh)
    assert imported is module and lazy_import(fresh) is module


def test_a_module_already_imported_is_given_as_it_is():
    import bisect

    assert lazy_import("bisect") is bisect and _loaded(bisect)


def test_a_missing_module_is_an_import_error():
    with pytest.raises(ImportError, match="no_such_module_here"):
        lazy_import("no_such_module_here")


_CHECK_AND_TELL = """
import sys, types
from hipport.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("loaded:", *[name for name in ("ast", "json", "tree_sitter") if type(sys.modules.get(name)) is types.ModuleType],
      file=sys.stderr)
"""


def _loaded_by(tmp_path: Path, *args: str) -> tuple[list[str], str]:
    env = dict(os.environ, HIPPORT_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", _CHECK_AND_TELL, *args], env=env, capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    return done.stderr.strip().splitlines()[-1].split()[1:], done.stdout


def test_a_check_of_cuda_loads_neither_ast_nor_json(tmp_path):
    """Pre-commit's run on a changed .cu file: `ast` (Python sources) and `json` (the JSON and
    SARIF formats) stay unloaded; each loads where it is needed. The literal mask is read
    from the tree, so the bindings load, but not again for the run the cache answers."""
    cu = tmp_path / "k.cu"
    cu.write_text("__global__ void k(int* p) { p[threadIdx.x] = __shfl_sync(0xffffffff, 1, 0); }\n")
    setup = tmp_path / "setup.py"
    setup.write_text("from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
                     "setup(ext_modules=[CUDAExtension('k', ['k.cu'], extra_compile_args={'nvcc': ['-arch=sm_80']})])\n")
    loaded, out = _loaded_by(tmp_path, "check", str(cu), "--exit-zero")
    assert loaded == ["tree_sitter"] and "k.cu:1:" in out
    loaded, out = _loaded_by(tmp_path, "check", str(cu), "--exit-zero", "--format", "json")
    assert loaded == ["json"] and '"findings": [' in out  # from the cache: no tree
    loaded, out = _loaded_by(tmp_path, "check", str(setup), "--exit-zero", "--no-cache")
    assert loaded == ["ast"] and "setup.py:3:" in out and "HP1101" in out


def test_the_tree_sitter_bindings_load_only_for_a_file_that_needs_a_tree(tmp_path):
    """Host code the lexer reads whole (a launch and runtime calls in `main`) needs no tree:
    the bindings, and the `typing` they import, stay unloaded. A launch inside a kernel is
    told from the tree, so they load for it."""
    host = tmp_path / "host.cu"
    host.write_text("#include <cuda_runtime.h>\n__global__ void k(int* p) { p[threadIdx.x] = 1; }\n"
                    "int main() {\n  int* d;\n  cudaMallocManaged(&d, 4);\n  k<<<1, 32>>>(d);\n"
                    "  cudaDeviceSynchronize();\n  return 0;\n}\n")
    loaded, out = _loaded_by(tmp_path, "check", str(host), "--exit-zero", "--no-cache")
    assert loaded == [] and "host.cu:5:3:" in out and "HP1001" in out
    nested = tmp_path / "dp.cu"
    nested.write_text("__global__ void child(int* p) { p[0] = 1; }\n"
                      "__global__ void parent(int* p) { child<<<1, 1>>>(p); }\n")
    loaded, out = _loaded_by(tmp_path, "check", str(nested), "--exit-zero", "--no-cache")
    assert loaded == ["tree_sitter"] and "dp.cu:2:34:" in out and "HP101" in out
