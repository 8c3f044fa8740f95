"""Python sources are parsed only where a rule's words occur, and walked once: parse/python.nodes
is ast.walk's list in one loop, and the rules and the setup.py rewriter read a file's tree
through it instead of each walking it."""

import ast
from pathlib import Path

import pytest

from hipport.config import Settings
from hipport.files import file_kind
from hipport.parse.python import nodes, statements
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


@pytest.mark.parametrize("path", PYTHON_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_statements_are_what_ast_walk_finds_of_them(path):
    """parse/python.statements walks statements alone (what holds an import) and finds them
    in ast.walk's order, with the module, except handlers and match cases that hold them."""
    tree = ast.parse(path.read_bytes())
    holders = (ast.Module, ast.stmt, ast.excepthandler, ast.match_case)
    assert [id(n) for n in statements(tree)] == [id(n) for n in ast.walk(tree) if isinstance(n, holders)]


def test_imports_nested_anywhere_are_found():
    source = (b"try:\n    import apex\nexcept ImportError:\n    from pynvml import nvmlInit\n"
              b"def f(x):\n    match x:\n        case 1:\n            import pycuda.driver\n"
              b"class C:\n    if True:\n        import tensorrt as trt\n")
    found = [f for f in port_source(source, "m.py", "python", Settings()).result.findings if f.rule == "HP905"]
    assert [f.line for f in found] == [2, 4, 8, 11]


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


@pytest.mark.parametrize("path", sorted(ROOT.glob("fixtures/**/setup.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_a_setup_py_is_parsed_whole_once_and_walked_once(path, monkeypatch):
    """The rules and the setup.py rewriter read one tree from one walk (rules/_python.
    python_syntax): flash-attention's two large setup.py files were parsed twice and walked
    three times, 95 of its port's 1,100 ms. The import reader's one-statement parses aside."""
    from hipport.analysis import context_for
    from hipport.edits import splice, splices
    from hipport.parse import python as pyast
    from hipport.rewrite import setup_py, shell

    data = path.read_bytes()
    parsed, walked, real_parse, real_nodes = [], [], ast.parse, pyast.nodes

    def parse(source, *args, **kwargs):
        if source == data:
            parsed.append(source)
        return real_parse(source, *args, **kwargs)

    def walk(tree, parents=None):
        walked.append(tree)
        return real_nodes(tree, parents)

    monkeypatch.setattr(ast, "parse", parse)
    monkeypatch.setattr(pyast, "nodes", walk)
    done = port_source(data, "setup.py", "setup.py", Settings())
    monkeypatch.undo()
    assert len(parsed) == 1 and len(walked) == 1
    # the same edits as the rewriter finds in a context the rules have not read
    alone = setup_py.rewrite(context_for(data, "setup.py", "setup.py", Settings()), frozenset())
    assert done.data == splice(data, splices(shell.drop_overlaps(alone.edits)))


def test_a_python_file_without_the_rules_words_is_never_parsed(monkeypatch):
    from hipport.rules import _python

    parsed = []
    parse = _python.parse_python
    monkeypatch.setattr(_python, "parse_python", lambda data: parsed.append(data) or parse(data))
    plain = b"import numpy as np\n\ndef mean(x):\n    return np.mean(x)\n"
    assert not port_source(plain, "stats.py", "python", Settings()).result.findings
    assert parsed == []
    port_source(MODEL.encode(), "model.py", "python", Settings())
    assert len(parsed) == 1  # one parse for every rule


# A PyTorch model saying `cuda`, `bindings`, `cudart`, `version`, `.hip` and `libraries` but
# with neither a CUDA version gate, an NVIDIA-only import, a link setting nor a .hip source.
TORCH_CUDA_MODEL = b"""\"\"\"A model; its C++ bindings call cudart through torch.cuda.\"\"\"
import torch
from torch import nn

__version__ = "1.0"  # the cuda version it was tested with: see torch.__version__

class Net(nn.Module):
    def forward(self, x):
        with torch.cuda.amp.autocast():
            return x.cuda().relu()

if torch.cuda.is_available():  # the libraries it loads: .hip on ROCm builds
    torch.cuda.synchronize()
elif torch.version.hip:
    print("ROCm", torch.version.hip)
"""


def test_a_model_saying_cuda_without_a_gate_or_nvidia_import_is_not_parsed(monkeypatch):
    """ast takes about 150 bytes a byte of source (a 4 MB file: 650 MB): a Python file is
    parsed only where a rule could report something, not wherever `cuda` occurs."""
    from hipport.rules import _python

    parsed = []
    parse = _python.parse_python
    monkeypatch.setattr(_python, "parse_python", lambda data: parsed.append(data) or parse(data))
    assert not port_source(TORCH_CUDA_MODEL, "model.py", "python", Settings()).result.findings
    assert parsed == []


@pytest.mark.parametrize("code, source", [
    ("HP905", "import pycuda.driver as drv\n"),
    ("HP905", "from cuda import cudart\n"),
    ("HP905", "import cuda.bindings.runtime\n"),
    ("HP905", "from cuda.bindings import driver\n"),
    ("HP905", "import os, cuda . cudart\n"),
    ("HP905", "from cuda import (\n    bindings,  # the new ones\n)\n"),
    ("HP905", "from \\\n    cuda import cudart\n"),
    ("HP905", "import cuda . bindings . driver as drv\n"),
    ("HP905", "from nvidia import dali\n"),
    ("HP905", "import nvidia.dali.fn as fn\n"),
    ("HP905", "import pynvml\n"),
    ("HP905", "import torch_tensorrt\n"),
    ("HP905", "from apex import amp\n"),
    ("HP1152", "CUDAExtension('m', ['m.cu'], libraries = ['cublas'])\n"),
    ("HP1152", "CUDAExtension('m', ['m.cu'], libraries  # to link\n              =['cublas'])\n"),
    ("HP1152", "CUDAExtension('m', ['m.cu'], extra_link_args=['-lcurand'])\n"),
    ("HP1152", "load('m', ['m.cu'], extra_ldflags=\\\n     ['-lcublas'])\n"),
    ("HP1153", "sources = ['k/a.cu', 'k/a.hip']\n"),
    ("HP1153", "sources = [\"k/a.cu\", \"\"\"k/a.hip\"\"\"]\n"),
    ("HP1153", "sources = ['k/a.cu', 'k/' 'a.hip']\n"),
    ("HP1154", "import torch\nif torch.version.cuda:\n    pass\n"),
    ("HP1154", "import torch\nif (torch.version).cuda:\n    pass\n"),
    ("HP1154", "from torch import version as v\nif v.cuda:\n    pass\n"),
    ("HP1154", "import torch.version as tv\nok = 1 if tv.cuda else 0\n"),
    ("HP1154", "import torch.version as \\\n    tv\nok = 1 if tv.cuda else 0\n"),
    ("HP1154", "from torch import (version as v)\nif not v.cuda:\n    pass\n"),
    ("HP1154", "import torch\nif (torch.version  # which build\n        ).cuda:\n    pass\n"),
    ("HP1154", "import torch\nif torch.version.\\\n        cuda:\n    pass\n"),
    ("HP1154", "from torch.utils.cpp_extension import CUDA_HOME as home\nif home:\n    pass\n"),
    ("HP1154", "from torch.utils import cpp_extension as ce\nassert ce.CUDA_HOME\n"),
])
def test_the_python_rules_words_are_in_every_form_they_report(code, source):
    """What lets a rule parse the file (HP905: a module's name, dotted or after `from` its
    package `import`; HP1152: a link keyword
    then `=`; HP1153: `.hip` ending a literal; HP1154: `version` then `.cuda` or `as`, or
    CUDA_HOME) is in every form the rule reports."""
    found = port_source(source.encode(), "m.py", "python", Settings()).result.findings
    assert [f.rule for f in found] == [code]


def test_a_hip_source_pieced_from_two_literals_is_not_read_as_one():
    pieced = 'import torch\nsources = ["k/attn.cu", "k/attn.h" "ip"]\n'
    written = 'import torch\nsources = ["k/attn.cu", "k/attn.hip"]\n'
    assert [f.rule for f in port_source(written.encode(), "setup.py", "setup.py", Settings()).result.findings
            if f.rule == "HP1153"] == ["HP1153"]
    assert not [f for f in port_source(pieced.encode(), "setup.py", "setup.py", Settings()).result.findings
                if f.rule == "HP1153"]


@pytest.mark.parametrize("data", [b"import apex\n", b"\xef\xbb\xbfimport apex\n", b"x = 1\rimport apex\r",
                                  b"x = 1\r\nimport apex\r\n", b"s = '\xc3\xa9'; import apex\n"])
def test_a_python_finding_spans_its_node_whatever_the_line_ends_and_bom(data):
    found = [f for f in port_source(data, "m.py", "python", Settings()).result.findings if f.rule == "HP905"]
    assert len(found) == 1
    f = found[0]
    line_start = sum(len(line) + 1 for line in data.split(b"\n")[: f.line - 1])  # findings count lines by \n
    assert data[line_start + f.column - 1 : line_start + f.end_column - 1] == b"import apex"


def test_a_module_importing_torch_and_another_version_is_not_parsed(monkeypatch):
    """`version as` lets HP1154 look at the imports (an alias of torch.version is reported by
    its `.cuda`); where they show torch and packaging's version but the text has neither
    `version` then `.cuda` nor CUDA_HOME, as in DeepSpeed's modules, nothing is parsed whole.
    An alias of torch.version used as a gate is still found."""
    from hipport.rules import _python

    parsed = []
    parse = _python.parse_python
    monkeypatch.setattr(_python, "parse_python", lambda data: parsed.append(data) or parse(data))
    deepspeed = (b"import torch\nfrom packaging import version as pkg_version\n\n"
                 b"def new_enough():\n    return pkg_version.parse(torch.__version__) >= pkg_version.parse('2.1')\n")
    assert not port_source(deepspeed, "m.py", "python", Settings()).result.findings
    assert parsed == []
    aliased = deepspeed + b"from torch import version as tv\nif tv . cuda:\n    pass\n"
    assert [f.rule for f in port_source(aliased, "m.py", "python", Settings()).result.findings] == ["HP1154"]
    assert parsed
