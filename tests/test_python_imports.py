"""parse/python.imports reads a Python file's import statements one at a time, from their
`import` keywords in code, each parsed alone: what a walk of the whole file's tree finds, at
the same positions, without the parse of the whole file (ast costs 0.5-2 µs a byte)."""

import ast
from pathlib import Path

import pytest

from hipport.config import Settings
from hipport.parse.python import imports, statements, strings
from hipport.pipeline import port_source

ROOT = Path(__file__).resolve().parents[1]
PYTHON_FILES = sorted(ROOT.rglob("fixtures/**/*.py")) + sorted((ROOT / "hipport").rglob("*.py")) \
    + sorted((ROOT / "tests").glob("*.py")) + sorted((ROOT / "benchmarks").glob("*.py"))

# Every place Python lets `import` stand, and every place it is only text.
FORMS = b'''\xef\xbb\xbf"""A module; import apex in its docstring is text."""
import os, sys as system  # import pycuda, in a comment
from . import sibling
from .. parent . child import (a,  # a comment with ) and ( in it
    b as c)
from \\
    apex import amp
import cuda . bindings . driver as \\
    drv
x = 1; import pynvml; import os.path; y = 2
if x: import tensorrt
try:
\timport torch_tensorrt
except ImportError: from nvidia import dali
s = 'import apex' + "import apex" + r'\\\\' + b"\\"import apex".decode()
t = """
import apex
""" + \'\'\'import apex \'\'\'\' \'\'\'
u = f"{x!r} import apex {s['import apex']}" + rb'import' + Rb"import"
def f():
    yield from range(3)
    def g():
        import importlib, reimport_me
    return __import__("apex"), import_this
class C:
    match x:
        case 1:
            from pycuda import driver
raise ValueError("from apex import amp") from None
from caf\xc3\xa9 import cr\xc3\xa8me
'''


def _seen(node: ast.AST) -> tuple:
    names = tuple((a.name, a.asname, a.lineno, a.col_offset, a.end_lineno, a.end_col_offset) for a in node.names)
    return (type(node).__name__, getattr(node, "module", None), getattr(node, "level", None), node.lineno,
            node.col_offset, node.end_lineno, node.end_col_offset, names)


def _walked(data: bytes) -> list[tuple]:
    found = [n for n in statements(ast.parse(data)) if isinstance(n, (ast.Import, ast.ImportFrom))]
    return [_seen(n) for n in sorted(found, key=lambda n: (n.lineno, n.col_offset))]


@pytest.mark.parametrize("path", PYTHON_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_are_what_a_walk_of_the_tree_finds(path):
    data = path.read_bytes()
    found = imports(data)
    assert found is not None
    assert [_seen(n) for n in found] == _walked(data)


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_every_form_of_import_and_every_text_saying_it(newline):
    data = FORMS.replace(b"\n", newline)
    found = imports(data)
    assert found is not None
    assert [_seen(n) for n in found] == _walked(data)
    assert [n.lineno for n in found] == [2, 3, 4, 6, 8, 10, 10, 11, 13, 14, 23, 28, 30]


def test_imports_in_a_file_that_does_not_parse_are_read_all_the_same():
    data = b"import apex\nprint 'Python 2'\nfrom pycuda import driver\n"
    with pytest.raises(SyntaxError):
        ast.parse(data)
    assert [(type(n).__name__, n.lineno) for n in imports(data)] == [("Import", 1), ("ImportFrom", 3)]
    found = port_source(data, "old.py", "python", Settings()).result.findings
    assert [(f.rule, f.line) for f in found] == [("HP905", 1), ("HP905", 3)]


@pytest.mark.parametrize("data", [
    "caf\u00e9import = 1\nimport apex\n".encode(),  # the word ends a name that \b does not see
    b"from apex import (amp\n",  # brackets never closed
])
def test_text_read_as_an_import_that_is_not_one_leaves_it_to_the_whole_parse(data):
    assert imports(data) is None


def test_where_the_reading_gives_up_the_rules_parse_the_file_whole():
    data = "caf\u00e9import = 1\nimport apex\n".encode()
    found = port_source(data, "m.py", "python", Settings()).result.findings
    assert [(f.rule, f.line) for f in found] == [("HP905", 2)]


def test_a_file_whose_imports_alone_matter_is_not_parsed_whole(monkeypatch):
    from hipport.rules import _python

    parsed = []
    parse = _python.parse_python
    monkeypatch.setattr(_python, "parse_python", lambda data: parsed.append(data) or parse(data))
    model = b"import torch\nimport cuda.bindings.driver as cuda\n\ndef f(x):\n    return x.cuda()\n" * 50
    found = port_source(model, "m.py", "python", Settings()).result.findings
    assert [(f.rule, f.line) for f in found] == [("HP905", 2 + 5 * i) for i in range(50)]
    assert parsed == []


# What a tokenizer must get right about string literals: prefixes (valid and not), a keyword
# against a quote, quotes inside other quotes, escapes, continued lines, comments with quotes.
STRINGS = b"\n".join([
    b"s = 'a' + \"b\" + r'\\\\' + rb\"c\" + Rb'd' + bR\"e\" + f\"{x!r}\" + Fr'{y}' + u'g' + B\"h\"",
    b"t = 1 if\"yes\"else 2; u = x in\"abc\"; v = not\"\";w = ''",
    b"d = \"\"\"it's \"quoted\" \'\'\' and \\\\\"\"\" + \'\'\'one ' two '' three\'\'\'",
    b"e = 'continued \\",
    b"line' + \"esc \\\" quote\"  # a comment with 'quotes\" in it",
    b"xr = bar; ub = 3  # names ending in a prefix's letters",
    b"f = f\"{d['k']}\" f'{e[\"k\"]}'",
    b"g = \'\'\'\'\'\'  # empty triple",
    b"",
])


def _tokenized(data: bytes) -> list[tuple[int, bytes]]:
    import io
    import tokenize

    lines = io.BytesIO(data).readlines()
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    out = []
    try:
        for tok in tokenize.tokenize(io.BytesIO(data).readline):
            if tok.type == tokenize.STRING:
                row, col = tok.start
                out.append((starts[row - 1] + len(lines[row - 1].decode()[:col].encode()), tok.string.encode()))
    except (tokenize.TokenError, SyntaxError):
        pass
    return out


@pytest.mark.parametrize("path", PYTHON_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_string_tokens_are_what_the_tokenizer_finds(path):
    data = path.read_bytes()
    assert strings(data) == _tokenized(data)


@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
def test_every_form_of_string_literal(newline):
    data = STRINGS.replace(b"\n", newline)
    found = strings(data)
    assert found == _tokenized(data)
    assert [text for _, text in found][:11] == [b"'a'", b'"b"', b"r'\\\\'", b'rb"c"', b"Rb'd'", b'bR"e"',
                                                b'f"{x!r}"', b"Fr'{y}'", b"u'g'", b'B"h"', b'"yes"']
    assert len(found) == 21


def test_a_quote_left_open_is_passed_over_and_three_end_the_reading_as_in_the_tokenizer():
    data = b"a = 'one'\nb = 'two\nc = rb\"three\"\nd = \'\'\'four\ne = 'five'\n"
    assert strings(data) == _tokenized(data) == [(4, b"'one'"), (23, b'rb"three"')]
