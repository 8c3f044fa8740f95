"""setup.py, read with `ast` (never executed); edits replace or remove string literals only.

- `CUDAExtension` stays: PyTorch's ROCm build hipifies and compiles it with hipcc.
- `libraries=["cublas", ...]`, `-lcublas` in `extra_link_args` -> the ROCm libraries
  (mappings/build_files/libraries.tsv); a list already chosen by a ROCm test (torch.version.hip,
  IS_HIP_EXTENSION, ROCM_HOME) is left alone.
- nvcc options in `extra_compile_args["nvcc"]` (or `extra_cuda_cflags`) are translated
  (mappings/build_files/nvcc_flags.tsv); architecture options are removed, since PyTorch passes
  --offload-arch from PYTORCH_ROCM_ARCH.
- `TORCH_CUDA_ARCH_LIST` -> `PYTORCH_ROCM_ARCH` (with an NVIDIA list value -> AMD targets).
- with --rename, `.cu` sources (and `*.cu` patterns) -> `.hip`.

Values are followed through local variables, `+`, `.append`/`.extend`/`+=`, `dict(nvcc=...)`,
helper functions' `return` and conditional expressions; what cannot be followed safely
(f-strings, values from other modules) is reported as a note, never guessed.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from hipport import regexes
from hipport.edits import Edit, apply_edits
from hipport.lazy import lazy_import
from hipport.parse import python as pyast
from hipport.parse.hash_comments import Spans
from hipport.rewrite.shell import (Rewritten, arch_list, flag_edits, flag_rules, libraries, link_edits,
                                   value_ok)
from hipport.rules._python import python_syntax
from hipport.source import bom_length
from hipport.tuples import NamedTuple

ast = lazy_import("ast")  # loaded by the first Python file (hipport.lazy)

_ARCH_WHY = "PyTorch's ROCm build passes --offload-arch from PYTORCH_ROCM_ARCH"
_SIMPLE = regexes.compile(r"([rRuU]?)('|\")([^'\"\\\n]*)\2\Z")
_NV_ARCH_LIST = regexes.compile(r"(?:\s*\d+\.\d+(?:\s*\+\s*PTX)?\s*[;, ]?)+\Z")
_FLAG_KEYWORDS = frozenset({"extra_cuda_cflags"})
_COMPILE_ARGS = "extra_compile_args"
_LINK_KEYWORDS = frozenset({"extra_link_args", "extra_ldflags"})
_HIP_NAMES = frozenset({"IS_HIP_EXTENSION", "ROCM_HOME"})


class _Module:
    def __init__(self, data: bytes, tree: ast.Module, syntax: tuple | None = None):
        self.data = data
        self.tree = tree
        # every node in ast.walk's order, node -> parent, node -> (start, end) byte offsets:
        # the rules' (rules/_python.python_syntax), else found here (_index)
        self.nodes: list[ast.AST] | None = None
        self.parents: dict = {}
        if syntax is not None:
            _, self.nodes, self.parents, self.span = syntax
        else:
            self.span = pyast.spans(data)
        self.bindings: dict[str, list[ast.AST]] = {}  # name -> values given to it
        self.adds: dict[str, list[tuple[ast.AST, ast.Call | None]]] = {}
        self.functions: dict[str, ast.FunctionDef] = {}



def _target_key(node: ast.AST) -> str | None:
    """`x` -> "x"; `x["nvcc"]` -> "x[nvcc]"."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and isinstance(
            node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return f"{node.value.id}[{node.slice.value}]"
    return None


def _index(mod: _Module) -> None:
    if mod.nodes is None:
        mod.nodes = pyast.nodes(mod.tree, mod.parents)
    for node in mod.nodes:
        if isinstance(node, ast.FunctionDef):
            mod.functions.setdefault(node.name, node)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                key = _target_key(t)
                if key:
                    mod.bindings.setdefault(key, []).append(node.value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            key = _target_key(node.target)
            if key:
                mod.bindings.setdefault(key, []).append(node.value)
        elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
            key = _target_key(node.target)
            if key:
                mod.adds.setdefault(key, []).append((node.value, None))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            key = _target_key(node.func.value)
            if key and node.func.attr in ("append", "extend", "insert"):
                arg = node.args[-1]
                mod.adds.setdefault(key, []).append((arg, node if node.func.attr != "extend" else None))


def _mentions_hip(expr: ast.AST) -> bool:
    for sub in ast.walk(expr):
        if isinstance(sub, ast.Attribute) and (sub.attr in _HIP_NAMES or sub.attr == "hip"):
            return True
        if isinstance(sub, ast.Name) and sub.id in _HIP_NAMES:
            return True
    return False


def _under_hip_test(mod: _Module, node: ast.AST) -> bool:
    """Whether `node` sits in a branch chosen by a ROCm test."""
    child, parent = node, mod.parents.get(node)
    while parent is not None:
        if isinstance(parent, (ast.IfExp, ast.If)) and child is not parent.test and _mentions_hip(parent.test):
            return True
        if isinstance(parent, (ast.FunctionDef, ast.Module)):
            return False
        child, parent = parent, mod.parents.get(parent)
    return False


class _Key(NamedTuple):
    """A dictionary entry set piecewise: `args["nvcc"] = [...]`, `args["nvcc"].append(...)`."""
    key: str


class Slot(NamedTuple):
    """A string constant found in a value: where it is and what holds it."""
    node: ast.Constant
    container: ast.AST | None  # the list/tuple literal it is an element of
    call: ast.Call | None = None  # the .append()/.insert() call it is the argument of


def _slots(mod: _Module, expr: ast.AST | _Key, out: Rewritten, what: str, seen: set | None = None) -> Iterator[Slot]:
    """The string constants an expression's value is built from."""
    seen = set() if seen is None else seen
    if id(expr) in seen:
        return
    seen.add(id(expr))
    if isinstance(expr, ast.Constant):
        if isinstance(expr.value, str):
            yield Slot(expr, None)
    elif isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
        for elt in expr.elts:
            if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                yield Slot(elt, expr)
            elif isinstance(elt, ast.Starred):
                yield from _slots(mod, elt.value, out, what, seen)
            else:
                yield from _slots(mod, elt, out, what, seen)
    elif isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        yield from _slots(mod, expr.left, out, what, seen)
        yield from _slots(mod, expr.right, out, what, seen)
    elif isinstance(expr, (ast.Name, ast.Subscript, _Key)):
        key = expr.key if isinstance(expr, _Key) else _target_key(expr)
        if key is None or (key not in mod.bindings and key not in mod.adds):
            out.note(mod.span(expr)[0], f"{what}: `{ast.unparse(expr)}` is not set in this file: left as written")
            return
        for value in mod.bindings.get(key, ()):
            yield from _slots(mod, value, out, what, seen)
        for value, call in mod.adds.get(key, ()):
            if call is not None and isinstance(value, ast.Constant) and isinstance(value.value, str):
                yield Slot(value, None, call)
            else:
                yield from _slots(mod, value, out, what, seen)
    elif isinstance(expr, ast.IfExp):
        if _mentions_hip(expr.test):
            return  # chosen per platform already
        yield from _slots(mod, expr.body, out, what, seen)
        yield from _slots(mod, expr.orelse, out, what, seen)
    elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in mod.functions:
        for node in ast.walk(mod.functions[expr.func.id]):
            if isinstance(node, ast.Return) and node.value is not None:
                yield from _slots(mod, node.value, out, what, seen)
    elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in ("list", "tuple") and expr.args:
        yield from _slots(mod, expr.args[0], out, what, seen)
    elif isinstance(expr, ast.JoinedStr):
        out.note(mod.span(expr)[0], f"{what}: f-string `{ast.unparse(expr)}` left as written: check it by hand")
    else:
        out.note(mod.span(expr)[0], f"{what}: `{ast.unparse(expr)[:60]}` is computed: left as written")


def _nvcc_values(mod: _Module, expr: ast.AST, out: Rewritten, seen: set | None = None) -> Iterator[ast.AST | _Key]:
    """The nvcc list of an extra_compile_args value: {"nvcc": [...]}, dict(nvcc=...), a variable."""
    seen = set() if seen is None else seen
    if id(expr) in seen:
        return
    seen.add(id(expr))
    if isinstance(expr, ast.Dict):
        for k, v in zip(expr.keys, expr.values):
            if isinstance(k, ast.Constant) and k.value == "nvcc":
                yield v
    elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "dict":
        for kw in expr.keywords:
            if kw.arg == "nvcc":
                yield kw.value
    elif isinstance(expr, ast.Name):
        for value in mod.bindings.get(expr.id, ()):
            yield from _nvcc_values(mod, value, out, seen)
        key = f"{expr.id}[nvcc]"
        if key in mod.bindings or key in mod.adds:
            yield _Key(key)
    elif isinstance(expr, ast.IfExp):
        if not _mentions_hip(expr.test):
            yield from _nvcc_values(mod, expr.body, out, seen)
            yield from _nvcc_values(mod, expr.orelse, out, seen)
    elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in mod.functions:
        for node in ast.walk(mod.functions[expr.func.id]):
            if isinstance(node, ast.Return) and node.value is not None:
                yield from _nvcc_values(mod, node.value, out, seen)
    elif not isinstance(expr, (ast.List, ast.Tuple)):
        out.note(mod.span(expr)[0], f"extra_compile_args: `{ast.unparse(expr)[:60]}` is computed: "
                                    "its nvcc options are left as written")


def _keyword_values(mod: _Module) -> Iterator[tuple[str, ast.AST]]:
    """(keyword, value) for keyword arguments and for string keys of dict literals."""
    for node in mod.nodes:
        if isinstance(node, ast.keyword) and node.arg:
            yield node.arg, node.value
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and isinstance(k.value, str):
                    yield k.value, v


# ---------------------------------------------------------------------------------------------
# edits on string literals


class _Editor:
    def __init__(self, mod: _Module, out: Rewritten):
        self.mod, self.out = mod, out
        self.deletions: list[tuple[int, int, str]] = []
        self.done: set[int] = set()

    def literal(self, node: ast.Constant) -> tuple[int, int, re.Match[str]] | None:
        """The literal's byte span and its parts, when it is a plain one-token string."""
        s, e = self.mod.span(node)
        text = self.mod.data[s:e].decode("utf-8", "replace")
        m = _SIMPLE.match(text)
        if m is None or m.group(3) != node.value:
            return None
        return s, e, m

    def replace(self, slot: Slot, words: list[str], label: str, old: str) -> bool:
        """The literal becomes `words` (one string; several list elements when there are more)."""
        found = self.literal(slot.node)
        if found is None or id(slot.node) in self.done:
            self.out.note(self.mod.span(slot.node)[0], f"`{old}` left as written: not a plain string literal")
            return False
        s, e, m = found
        if len(words) > 1 and slot.container is None:
            self.out.note(s, f"`{old}` left as written: it becomes several options ({' '.join(words)})")
            return False
        if any(m.group(2) in w or "\\" in w for w in words):
            return False
        quoted = [m.group(1) + m.group(2) + w + m.group(2) for w in words]
        self.done.add(id(slot.node))
        self.out.edits.append(Edit(s, e, ", ".join(quoted).encode(), label, old))
        return True

    def delete(self, slot: Slot, old: str) -> bool:
        """Queue a removal; finish() makes the edits (with its label)."""
        if id(slot.node) in self.done:
            return False
        if slot.container is None:
            call = slot.call
            stmt = self.mod.parents.get(call) if call is not None else None
            if not (isinstance(stmt, ast.Expr) and stmt.value is call):
                self.out.note(self.mod.span(slot.node)[0], f"`{old}` left as written: remove it by hand")
                return False
        self.done.add(id(slot.node))
        self.deletions.append((slot, old))
        return True

    def finish(self, label: str) -> None:
        data, mod = self.mod.data, self.mod
        spans: list[list] = []
        gone = {id(slot.node) for slot, _ in self.deletions}
        emptied: set[int] = set()
        for slot, old in self.deletions:
            c = slot.container
            if c is None:  # a .append("-lineinfo") statement
                s, e = mod.span(mod.parents[slot.call])
                spans.append([s, e, old])
                continue
            if id(c) in emptied:
                continue
            if all(id(x) in gone for x in c.elts):
                cs, ce = mod.span(c)
                if data[cs : cs + 1] in (b"[", b"(", b"{") and b"#" not in data[cs:ce]:
                    emptied.add(id(c))
                    olds = " ".join(o for sl, o in self.deletions if sl.container is c)
                    # A one-element tuple keeps its meaning only with its comma: leave `()`.
                    spans.append([cs + 1, ce - 1, olds])
                    continue
            s, e = mod.span(slot.node)
            j = e
            while j < len(data) and data[j] in b" \t":
                j += 1
            if data[j : j + 1] == b",":
                j += 1
                while j < len(data) and data[j] in b" \t":
                    j += 1
                e = j
            else:
                k = next(i for i, x in enumerate(c.elts) if x is slot.node)
                if k > 0:
                    prev_end = mod.span(c.elts[k - 1])[1]
                    if b"#" not in data[prev_end:s]:
                        s = prev_end
            spans.append([s, e, old])
        merged: list[list] = []
        for s, e, old in sorted(spans):
            if merged and s <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], e)
                merged[-1][2] += " " + old
            else:
                merged.append([s, e, old])
        bom = bom_length(data)
        for s, e, old in merged:
            ls = max(data.rfind(b"\n", 0, s) + 1, bom)
            le = data.find(b"\n", e)
            le = len(data) if le < 0 else le
            if not data[ls:s].strip(b" \t") and not data[e:le].strip(b" \t\r"):
                s, e = ls, min(le + 1, len(data))
            self.out.edits.append(Edit(s, e, b"", label, old))


# ---------------------------------------------------------------------------------------------
# the rewriter


def rewrite(ctx, renamed: frozenset[str]) -> Rewritten:
    """The edits that port a setup.py, from its tree, nodes, parents and spans as the rules
    read them (rules/_python.python_syntax): one parse and one walk serve both."""
    try:
        return _rewrite(ctx, renamed)
    except RecursionError:  # thousands of `+` in one value: deeper than parsing or following it can go
        out = Rewritten()
        out.note(0, "setup.py nests deeper than it can be followed (RecursionError): left unchanged")
        return out


def _rewrite(ctx, renamed: frozenset[str]) -> Rewritten:
    data, rel, settings, target = ctx.data, ctx.path, ctx.settings, ctx.mappings.target_hip
    out = Rewritten()
    syntax = python_syntax(ctx)
    if syntax[0] is None:  # it did not parse: ast says why
        syntax = None
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError) as exc:
            out.note(0, f"setup.py does not parse as Python 3 ({type(exc).__name__}): left unchanged")
            return out
    else:
        tree = syntax[0]
    mod = _Module(data, tree, syntax)
    _index(mod)
    editor = _Editor(mod, out)
    for key, value in _keyword_values(mod):
        if key == _COMPILE_ARGS:
            for nvcc in _nvcc_values(mod, value, out):
                _flags(mod, editor, nvcc, "extra_compile_args[\"nvcc\"]")
        elif key in _FLAG_KEYWORDS:
            _flags(mod, editor, value, key)
        elif key == "libraries":
            _libraries(mod, editor, value, target)
        elif key in _LINK_KEYWORDS:
            _link_args(mod, editor, value, key, target)
    _arch_env(mod, editor)
    if settings.rename:
        _renamed_sources(mod, editor, rel, renamed, _source_lists(mod, out))
    editor.finish("nvcc-flag")
    return out


def _flags(mod: _Module, editor: _Editor, expr: ast.AST, what: str) -> None:
    out = editor.out
    slots = [s for s in _slots(mod, expr, out, what) if not _under_hip_test(mod, s.node)]
    rules = flag_rules()
    for slot in slots:
        node = slot.node
        if id(node) in editor.done:
            continue
        word = node.value
        # A flag whose value is the next element: ["-gencode", "arch=compute_80,code=sm_80"].
        rule = rules.get(word)
        if rule is not None and rule.value and slot.container is not None:
            elts = slot.container.elts
            k = next((i for i, x in enumerate(elts) if x is node), -1)
            nxt = elts[k + 1] if 0 <= k < len(elts) - 1 else None
            if isinstance(nxt, ast.Constant) and isinstance(nxt.value, str) and value_ok(rule, nxt.value):
                _pair(editor, slot, Slot(nxt, slot.container), rule, nxt.value)
                continue
            if nxt is not None:
                out.note(mod.span(node)[0], f"`{word}`: its value is not a plain string: left as written")
                continue
        _single(editor, slot)


def _pair(editor: _Editor, flag: Slot, value: Slot, rule, text: str) -> None:
    old = f"{flag.node.value} {text}"
    s = editor.mod.span(flag.node)[0]
    if rule.action in ("drop", "arch"):
        editor.delete(flag, flag.node.value)
        editor.delete(value, text)
        why = _ARCH_WHY if rule.action == "arch" else rule.note
        editor.out.note(s, f"`{old}` removed: {why}")
    elif rule.action == "unwrap":
        editor.delete(flag, flag.node.value)
        editor.out.note(s, f"`{flag.node.value}` removed, `{text}` kept: {rule.note}")
    else:
        words = rule.hip.replace("{value}", text).split()
        if editor.replace(flag, words, "nvcc-flag", old):
            editor.delete(value, text)
            editor.out.note(s, f"`{old}` -> `{' '.join(words)}`: {rule.note}")


def _single(editor: _Editor, slot: Slot) -> None:
    """One string: its flags translated as a command-line fragment."""
    node = slot.node
    word = node.value
    if not word.strip() or "-" not in word:
        return
    body = word.encode("utf-8")
    res = flag_edits(body, Spans(()), "drop", why=_ARCH_WHY)
    if not res.edits:
        return
    new = apply_edits(body, res.edits).decode("utf-8")
    s = editor.mod.span(node)[0]
    words = new.split() if len(word.split()) == 1 else [new]
    done = editor.delete(slot, word) if not new.strip() else editor.replace(slot, words, "nvcc-flag", word)
    if done:
        for _, text in res.notes:
            editor.out.note(s, text)


def _libraries(mod: _Module, editor: _Editor, expr: ast.AST, target) -> None:
    libs = libraries(target)
    for slot in _slots(mod, expr, editor.out, "libraries"):
        lib = libs.get(slot.node.value)
        if lib is None or _under_hip_test(mod, slot.node):
            continue
        if editor.replace(slot, [lib.hip], "link-library", slot.node.value):
            editor.out.note(mod.span(slot.node)[0], f"libraries: `{slot.node.value}` -> `{lib.hip}`: {lib.note}")


def _link_args(mod: _Module, editor: _Editor, expr: ast.AST, what: str, target) -> None:
    for slot in _slots(mod, expr, editor.out, what):
        if _under_hip_test(mod, slot.node):
            continue
        body = slot.node.value.encode("utf-8")
        res = link_edits(body, Spans(()), target)
        if res.edits:
            editor.replace(slot, [apply_edits(body, res.edits).decode("utf-8")], "link-library", slot.node.value)


def _arch_env(mod: _Module, editor: _Editor) -> None:
    """"TORCH_CUDA_ARCH_LIST" -> "PYTORCH_ROCM_ARCH", and an NVIDIA list given to it -> AMD targets."""
    for node in mod.nodes:
        if not (isinstance(node, ast.Constant) and node.value == "TORCH_CUDA_ARCH_LIST"):
            continue
        if not editor.replace(Slot(node, None), ["PYTORCH_ROCM_ARCH"], "env", node.value):
            continue
        value = _arch_value(mod, node)
        if value is not None and _NV_ARCH_LIST.match(value.value) and editor.replace(
                Slot(value, None), [arch_list(";")], "arch", value.value):
            editor.out.note(mod.span(node)[0], f"TORCH_CUDA_ARCH_LIST=\"{value.value}\" -> "
                                               f"PYTORCH_ROCM_ARCH=\"{arch_list(';')}\" (AMD targets)")
        else:
            editor.out.note(mod.span(node)[0], "TORCH_CUDA_ARCH_LIST -> PYTORCH_ROCM_ARCH: PyTorch's ROCm "
                                               f"build reads AMD targets from it ({arch_list(';')})")


def _arch_value(mod: _Module, key: ast.Constant) -> ast.Constant | None:
    """The value paired with an environment key: os.environ[K] = V, setdefault(K, V), get(K, V)."""
    parent = mod.parents.get(key)
    value = None
    if isinstance(parent, ast.Subscript):
        assign = mod.parents.get(parent)
        if isinstance(assign, ast.Assign) and parent in assign.targets:
            value = assign.value
    elif isinstance(parent, ast.Call) and len(parent.args) >= 2 and parent.args[0] is key:
        value = parent.args[1]
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value
    return None


_EXTENSION_CALLS = frozenset({"CUDAExtension", "CppExtension", "Extension", "load"})


def _source_lists(mod: _Module, out: Rewritten) -> set[int]:
    """The string constants given as an extension's sources (`sources=` or its 2nd argument)."""
    found: set[int] = set()
    quiet = Rewritten()  # what cannot be followed is reported by the other passes already
    for node in mod.nodes:
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        values = [kw.value for kw in node.keywords if kw.arg == "sources"]
        if name in _EXTENSION_CALLS and len(node.args) > 1:
            values.append(node.args[1])
        for v in values:
            found.update(id(slot.node) for slot in _slots(mod, v, quiet, "sources"))
    return found


def _renamed_sources(mod: _Module, editor: _Editor, rel: str, renamed: frozenset[str], sources: set[int]) -> None:
    """--rename: `.cu` sources of an extension, `*.cu` patterns and paths of renamed files."""
    here = posixpath.dirname(rel)
    names = {posixpath.basename(r) for r in renamed}
    for node in mod.nodes:
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.endswith(".cu")):
            continue
        v = node.value
        if not ("*" in v or id(node) in sources or posixpath.normpath(posixpath.join(here, v)) in renamed
                or v in names):
            continue
        if editor.replace(Slot(node, None), [v[:-3] + ".hip"], "rename", v):
            editor.out.note(mod.span(node)[0], f"`{v}` -> `{v[:-3]}.hip` (--rename)")

