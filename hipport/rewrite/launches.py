"""`--launch-syntax hip`: `k<<<g, b, s, st>>>(args)` -> `hipLaunchKernelGGL(k, dim3(g), dim3(b), s, st, args)`.

The launch is rewritten piecewise (the callee start, `<<<`, the commas and `>>>(`), so names
inside the configuration and the arguments keep their own rename edits. Works the same in
code and in macro bodies, where the parser sees only raw text.
"""

from __future__ import annotations

from hipport.edits import Edit
from hipport.parse.lexer import Lexed
from hipport.rewrite.calls import WS, split_top_level


# What may stand before a launch statement's kernel: a statement or block boundary, a label,
# the close of `if (...)`, or a macro's parameter list. Anything else (`a->k`, `pick(id)`,
# `#include`) means the callee is not a plain kernel name: the launch is left as written.
_BOUNDARY = frozenset(b";{}):\\")


def _callee_start(lexed: Lexed, end: int) -> int | None:
    """Start of the kernel expression ending at `end`: `k`, `ns::k<T, 2>`, `(*fp)`."""
    data = lexed.data
    i = end
    while True:
        i = lexed.previous_code(i)
        if i == 0:
            return None
        c = data[i - 1 : i]
        if c in (b">", b")"):
            i = _match_back(data, i - 1)
            if i is None:
                return None
            if c == b")":
                return i if _at_boundary(lexed, i) else None
            continue  # template arguments: the name comes before them
        j = i
        while j > 0 and (data[j - 1 : j].isalnum() or data[j - 1 : j] == b"_"):
            j -= 1
        if j == i or data[j : j + 1].isdigit():
            return None
        k = lexed.previous_code(j)
        if data[k - 2 : k] == b"::":
            i = k - 2
            continue
        return j if _at_boundary(lexed, j) else None


def _at_boundary(lexed: Lexed, start: int) -> bool:
    before = lexed.previous_code(start)
    if before == 0:
        return True
    if lexed.data[before - 1] in _BOUNDARY:
        return True
    # `else k<<<...>>>()` and `do k<<<...>>>()`: keywords, not a name the callee continues.
    return lexed.data[max(0, before - 5) : before].split()[-1:] in ([b"else"], [b"do"])


def _match_back(data: bytes, close: int) -> int | None:
    """Offset of the `<` or `(` that opens the bracket closing at `close`. Inside parentheses
    `<` and `>` are operators (`T<(a > b)>`), so only parentheses count there."""
    stack = [data[close : close + 1]]
    i = close
    while stack:
        i -= 1
        if i < 0:
            return None
        ch = data[i : i + 1]
        if ch in (b";", b"{", b"}"):
            return None
        if ch in (b")", b"]"):
            stack.append(ch)
        elif ch == b">" and stack[-1] == b">":
            stack.append(ch)
        elif ch == b"(" or ch == b"[":
            if stack[-1] not in (b")", b"]"):
                return None
            stack.pop()
        elif ch == b"<" and stack[-1] == b">":
            stack.pop()
    return i


def launch_edits(lexed: Lexed) -> tuple[list[Edit], list[int]]:
    """Edits for every `<<<` in code; also the offsets of launches left as they were."""
    data = lexed.data
    edits: list[Edit] = []
    skipped: list[int] = []
    covered = -1  # end of the last rewritten launch configuration
    for p in lexed.find_launches():
        if p < covered:
            skipped.append(p)  # a `<<<` inside another launch's configuration
            continue
        cfg = split_top_level(data, p + 3, b">>>")
        callee = _callee_start(lexed, p)
        if cfg is None or callee is None:
            skipped.append(p)
            continue
        commas, close = cfg
        after = close + 3
        covered = after
        while after < len(data) and data[after] in WS:
            after += 1
        if data[after : after + 1] != b"(" or not 1 <= len(commas) <= 3:
            skipped.append(p)
            continue
        rest = after + 1
        while rest < len(data) and data[rest] in WS:
            rest += 1
        no_args = data[rest : rest + 1] == b")"
        callee_end = lexed.previous_code(p)
        if data[callee_end:p].strip(WS):
            skipped.append(p)  # a comment between the kernel and `<<<`: leave it as written
            continue
        template = b"<" in data[callee:callee_end]
        open_text = b"hipLaunchKernelGGL(" + (b"HIP_KERNEL_NAME(" if template else b"")
        edits.append(Edit(callee, callee, open_text, "launch", "<<<>>>"))
        edits.append(Edit(callee_end, _skip_ws(data, p + 3), (b")" if template else b"") + b", dim3(", "launch"))
        # g, b -> dim3(g), dim3(b); the stream arguments stay as written.
        edits.append(Edit(commas[0], _skip_ws(data, commas[0] + 1), b"), dim3(", "launch"))
        if len(commas) >= 2:
            edits.append(Edit(commas[1], commas[1] + 1, b"),", "launch"))
        # `>>>(` becomes the missing launch parameters; the call's own `)` closes the macro.
        missing = {1: b"), 0, 0", 2: b", 0", 3: b""}[len(commas)]
        while data[close - 1] in b" \t":
            close -= 1
        edits.append(Edit(close, after + 1, missing if no_args else missing + b", ", "launch"))
    return edits, skipped


def _skip_ws(data: bytes, i: int) -> int:
    while i < len(data) and data[i] in b" \t":
        i += 1
    return i
