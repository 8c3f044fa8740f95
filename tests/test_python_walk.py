"""Python sources are walked once: parse/python.nodes is ast.walk's list in one loop, and the
rules and the setup.py rewriter read a file's tree through it instead of each walking it."""

import ast
from pathlib import Path

import pytest

from hipport.config import Settings
from hipport.files import file_kind
from hipport.parse.python import nodes
from hipport.pipeline import port_source

ROOT = Path(__file__).resolve().parents[1]
PYTHON_FILES = sorted(ROOT.rglob("fixtures/**/*.py")) + sorted((ROOT / "hipport").rglob("*.py"))[:40]

# A model file and a build script with what the Python rules look for: link libraries, .cu and
# .hip sources, torch.version.cuda gates (one chosen per platform), NVIDIA-only imports.
MODEL = '''import torch
import torch.utils.cpp_extension as ext
from torch.utils.cpp_extension import CUDAExtension, CUDA_HOME
import apex
x = [y for y in range(3) if torch.version.cuda]
if torch.version.cuda is not None and CUDA_HOME:
    m = CUDAExtension("m", ["k/attn.cu", "k/attn.hip"], libraries=["cublas", "nccl"],
                      extra_link_args=["-lcurand"] if not torch.version.hip else ["-lhiprand"])
'''


@pytest.mark.parametrize("path", PYTHON_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_nodes_are_what_ast_walk_finds(path):
    tree = ast.parse(path.read_bytes())
    parents: dict = {}
    assert [id(n) for n in nodes(tree, parents)] == [id(n) for n in ast.walk(tree)]
    assert parents == {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}


@pytest.mark.parametrize("name", ["model.py", "setup.py"])
def test_a_python_file_is_walked_whole_by_no_one(name, monkeypatch):
    walked_whole = []
    walk = ast.walk

    def counting(node):
        if isinstance(node, ast.Module):
            walked_whole.append(node)
        return walk(node)

    monkeypatch.setattr(ast, "walk", counting)
    done = port_source(MODEL.encode(), name, file_kind(name), Settings())
    codes = {f.rule for f in done.result.findings}
    assert {"HP1152", "HP1153", "HP1154", "HP905"} <= codes, codes  # every rule that walks ran
    assert walked_whole == []
