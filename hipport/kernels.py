"""Kernels of a C/C++/CUDA buffer: `__global__` functions and the places that launch them.

One pass over the lexer's tokens (comments and literals are already known), no parse tree:
a kernel is the name before the first top-level `(` after a `__global__` token; a launch is a
`<<<` in code (the name before it), `hipLaunchKernelGGL(name, ...)`, or
`cudaLaunchKernel`/`hipLaunchKernel` (and their cooperative forms) given a kernel's address.

`scan()` returns plain tuples, so a per-file result can carry them across processes;
hipport.kernel_links joins every file's kernels and launches into the report's project-level
list.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from hipport import TYPE_CHECKING, regexes
from hipport.kernel_links import Kernel, Launch, Scan
from hipport.parse import IS_WORD_BYTE
from hipport.patterns import word_start, word_starts
from hipport.tuples import NamedTuple

if TYPE_CHECKING:  # the report reads kernel scans without the lexer
    from hipport.parse.lexer import Lexed, Token

_PRECHECK = (b"__global__", b"<<<", b"LaunchKernel")
# Tokens after `__global__`: comments, words, `::`, brackets, anything else one byte at a time.
_TOKEN = regexes.compile(rb"\s+|//[^\n]*|/\*.*?(?:\*/|\Z)|[A-Za-z_]\w*|::|[^\s]", re.S)
_ATTRIBUTES = frozenset({b"__launch_bounds__", b"__attribute__", b"__declspec", b"alignas",
                         b"__align__", b"__maxnreg__", b"__cluster_dims__", b"decltype"})
_NOT_A_NAME = frozenset({b"operator", b"const", b"volatile", b"static", b"inline", b"extern",
                         b"void", b"__forceinline__", b"__noinline__", b"__device__"})
_GGL = regexes.compile(word_start(b"hipLaunchKernelGGL") + rb"\s*\(\s*(?:HIP_KERNEL_NAME\s*\(\s*)?"
                  rb"((?:[A-Za-z_]\w*\s*::\s*)*[A-Za-z_]\w*)")
_LAUNCH_API = regexes.compile(
    word_starts((b"cuda", b"hip")) + rb"Launch(?:Cooperative)?Kernel\s*(?:<[^<>;]*>\s*)?\(\s*"
    rb"(?:\(\s*(?:const\s+)?void\s*\*\s*\)\s*|reinterpret_cast\s*<[^<>;]*>\s*\(\s*)?&?\s*"
    rb"((?:[A-Za-z_]\w*\s*::\s*)*[A-Za-z_]\w*)")
_LOOKBACK = 256
_LOOKAHEAD = 4096


def might_have_kernels(data: bytes) -> bool:
    """The cheap pre-check: only files with one of these bytes are lexed for kernels."""
    return any(marker in data for marker in _PRECHECK)


def _last_name(text: bytes) -> str:
    return text.split(b"::")[-1].strip().decode("ascii", "replace")


_SPACE = b" \t\r\n"


def _callee_before(data: bytes, p: int) -> str | None:
    """The kernel's name in `k<<<`, `ns::k<<<`, `k<T, 4><<<` (template arguments skipped)."""
    i, stop = p, max(0, p - _LOOKBACK)
    while i > stop and data[i - 1] in _SPACE:
        i -= 1
    if i > stop and data[i - 1] == 0x3E:  # `>`: skip back over the template arguments
        depth = 0
        while i > stop:
            c = data[i - 1]
            i -= 1
            if c == 0x3E:
                depth += 1
            elif c == 0x3C:
                depth -= 1
                if depth == 0:
                    break
            elif c in b";{}":
                return None
        else:
            return None
        while i > stop and data[i - 1] in _SPACE:
            i -= 1
    end = i
    while i > stop and data[i - 1] in IS_WORD_BYTE:
        i -= 1
    if i == end or data[i] in b"0123456789":
        return None
    return data[i:end].decode("ascii")


def _kernel_after(data: bytes, start: int) -> tuple[bytes, bool] | None:
    """Name of the function whose `__global__` ends at `start`, and whether it has a body."""
    window = data[start : start + _LOOKAHEAD]
    plain = _PLAIN_KERNEL.match(window)  # most kernels: the token walk below would agree
    if plain is not None and plain.group(1) not in _NOT_A_NAME and plain.group(1) not in _ATTRIBUTES:
        last, name_end = plain.group(1), plain.end() - 1
    else:
        found = _name_and_paren(window)
        if found is None:
            return None
        last, name_end = found
    close = _skip_parens(window, name_end)
    if close is None:
        return last, False
    for m in _TOKEN.finditer(window, close):
        tok = m.group()
        if tok == b"{":
            return last, True
        if tok in (b";", b"}", b"="):
            return last, False
    return last, False


# `__global__ void name(`: the shape of most kernels.
_PLAIN_KERNEL = regexes.compile(rb"[ \t\r\n]+void[ \t\r\n]+([A-Za-z_]\w*)[ \t\r\n]*\(")


def _name_and_paren(window: bytes) -> tuple[bytes, int] | None:
    """The declared name after `__global__` and the offset of its `(`, token by token
    (attributes, templates and comments stepped over)."""
    pos, depth, last = 0, 0, None
    for m in _TOKEN.finditer(window):
        tok = m.group()
        if tok[:1].isspace() or tok[:2] in (b"//", b"/*"):
            continue
        if m.start() < pos:
            continue
        if tok in _ATTRIBUTES:
            close = _skip_parens(window, m.end())
            if close is None:
                return None
            pos = close
            continue
        if tok in (b";", b"{", b"}", b"=", b"#"):
            return None
        if tok == b"<":
            depth += 1
        elif tok == b">":
            depth = max(0, depth - 1)
        elif tok == b"(" and depth == 0:
            return (last, m.start()) if last is not None else None
        elif depth == 0 and (tok[:1].isalpha() or tok[:1] == b"_") and tok not in _NOT_A_NAME:
            last = tok
    return None


def _skip_parens(window: bytes, i: int) -> int | None:
    """Offset just past the `)` closing the `(` at `i` (after spaces); `i` itself when no `(`
    follows (an attribute without arguments); None when it does not close in the window."""
    while i < len(window) and window[i : i + 1] in b" \t\r\n":
        i += 1
    if window[i : i + 1] != b"(":
        return i
    depth = 0
    for m in _PAREN.finditer(window, i):
        depth += 1 if m.group() == b"(" else -1
        if depth == 0:
            return m.end()
    return None


_PAREN = regexes.compile(rb"[()]")


def _tokens_named(lexed: Lexed, word: str) -> Iterator[Token]:
    """The identifiers spelled `word`, found by list.index (a search in C, not a loop here)."""
    words, i = lexed.words, -1
    while True:
        try:
            i = words.index(word, i + 1)
        except ValueError:
            return
        yield lexed.identifiers[i]


def scan(lexed: Lexed) -> Scan:
    """Kernels defined or declared in one lexed buffer, and the launches in it."""
    data = lexed.data  # no might_have_kernels(): each search below is its own pre-check
    last = [0, 1]  # the last offset asked and its line: offsets mostly come in order

    def line(offset: int) -> int:
        at, n = last if offset >= last[0] else (0, 1)
        last[:] = offset, n + data.count(b"\n", at, offset)
        return last[1]

    kernels: list[Kernel] = []
    for tok in _tokens_named(lexed, "__global__"):
        if lexed.in_directive(tok.start):
            continue
        found = _kernel_after(data, tok.end)
        if found is not None:
            kernels.append(Kernel(found[0].decode("ascii", "replace"), line(tok.start), found[1]))
    launches: list[Launch] = []
    for p in lexed.find_launches():
        name = _callee_before(data, p)
        if name is not None and not lexed.in_directive(p):
            launches.append(Launch(name, line(p), "<<<>>>"))
    api_launches = b"LaunchKernel" in data  # hipLaunchKernelGGL's too
    for pattern, syntax in ((_GGL, "hipLaunchKernelGGL"), (_LAUNCH_API, "launch-api")):
        if not api_launches or (pattern is _GGL and b"hipLaunchKernelGGL" not in data):
            continue
        for m in pattern.finditer(data):
            if not lexed.in_plain_code(m.start()):
                continue
            launches.append(Launch(_last_name(m.group(1)), line(m.start()), syntax))
    launches.sort(key=lambda x: (x.line, x.name))
    return Scan(tuple(kernels), tuple(launches))


class FileJob(NamedTuple):
    """One file to scan in a worker (parallel.run wants `.settings` on a job)."""
    path: str  # absolute path to read
    settings: object


def scan_file(job: FileJob) -> Scan | None:
    """Read, pre-check, lex and scan one file; None when it cannot be read or lexed."""
    try:
        with open(job.path, "rb") as fh:
            data = fh.read()
        if not might_have_kernels(data):
            return Scan()
        from hipport.loaders import tools
        return scan(tools(job.settings)[1].lex(data))
    except Exception:  # a file that cannot be scanned costs its kernels, never the report
        return None
