"""CMake's syntax, as far as porting needs it: commands with their arguments (unquoted,
quoted, bracket), and comments (`#` to the line's end, `#[[...]]` with any number of `=`),
read from the bytes by the C scanner where it was built, else by python_parse, its reference.
The rewriter (rewrite/cmake) reads the commands; the rules and suppressions the comments.
"""

from __future__ import annotations

import functools

from hipport import regexes
from hipport.parse.lexer import _scan
from hipport.tuples import NamedTuple


class Arg(NamedTuple):
    start: int
    end: int
    quoted: bool
    text: bytes  # the argument's bytes without quotes


class Command(NamedTuple):
    name: str  # lower case
    start: int  # offset of the name
    close: int  # offset of `)`
    args: list[Arg]
    indent: bytes  # the spaces before the name on its line


_BRACKET_OPEN = regexes.compile(rb"\[(=*)\[")
_UNQUOTED = regexes.compile(rb'(?:[^\s()#"\\]|\\.)+')  # CMake: `#` always ends an unquoted argument
# Between commands only comments and command names matter; a name is a command when `(`
# follows it (spaces and tabs between).
_TOP_STEP = regexes.compile(rb"#|([A-Za-z_][A-Za-z0-9_]*)[ \t]*(\()?")


@functools.lru_cache(maxsize=1)
def parse(data: bytes) -> tuple[list[Command], list[tuple[int, int]]]:
    """The commands of a CMake file and its comments (start, end): by the C scanner where it
    was built (a step per byte in C, where python_parse takes a regex step per argument),
    else by python_parse, its reference. The last file's are kept: its comments are read
    first (FileContext.comments), then its commands (the rewriter). Not to be changed."""
    if _scan is not None:
        return _scan.cmake_parse(data, Command, Arg)
    return python_parse(data)


def python_parse(data: bytes) -> tuple[list[Command], list[tuple[int, int]]]:
    """parse() by regexes: the reference the C scanner is tested against."""
    commands: list[Command] = []
    comments: list[tuple[int, int]] = []
    i = 0
    while (m := _TOP_STEP.search(data, i)) is not None:
        start = m.start()
        if m.group(1) is None:  # `#`
            i = _comment(data, start, comments)
            continue
        if m.group(2) is None:
            i = m.end()
            continue
        args, close = _arguments(data, m.end(), comments)
        if close >= len(data):
            break  # an unterminated command: nothing after it is a command either
        line_start = data.rfind(b"\n", 0, start) + 1
        indent = data[line_start:start]
        if indent.strip(b" \t"):
            indent = b""
        commands.append(tuple.__new__(Command, (m.group(1).decode().lower(), start, close, args, indent)))
        i = close + 1
    return commands, comments


def _comment(data: bytes, i: int, comments: list) -> int:
    m = _BRACKET_OPEN.match(data, i + 1)
    if m:
        close = data.find(b"]" + m.group(1) + b"]", m.end())
        end = len(data) if close < 0 else close + len(m.group(1)) + 2
    else:
        end = data.find(b"\n", i)
        end = len(data) if end < 0 else end
    comments.append((i, end))
    return end


# One step of an argument list after any spaces, told by its first byte: `#`, a parenthesis,
# a quote, a bracket argument's opening, or an unquoted argument (which may start with `[`).
_ARG_STEP = regexes.compile(rb'[ \t\r\n]*([#()"]|\[=*\[|' + _UNQUOTED.pattern + rb")")
_SPACES = regexes.compile(rb"[ \t\r\n]*")
_QUOTED_BODY = regexes.compile(rb'(?:[^"\\]|\\[\s\S])*')


def _arguments(data: bytes, i: int, comments: list) -> tuple[list[Arg], int]:
    """The arguments of a command from just past its `(`, and the offset of its `)` (the
    data's length when it does not close). A step per argument, not per byte."""
    args: list[Arg] = []
    depth, n = 0, len(data)
    new = tuple.__new__  # Arg(...) without the NamedTuple's Python-level __new__: a call per argument
    while i < n:
        m = _ARG_STEP.match(data, i)
        if m is None:  # spaces, then the end or a byte no argument starts with (`\` before a newline, a form feed)
            i = _SPACES.match(data, i).end() + 1
            continue
        i = m.start(1)
        c = data[i]
        if c == 0x23:  # #
            i = _comment(data, i, comments)
        elif c == 0x28:  # (
            depth += 1
            i += 1
        elif c == 0x29:  # )
            if depth == 0:
                return args, i
            depth -= 1
            i += 1
        elif c == 0x22:  # "
            j = _QUOTED_BODY.match(data, i + 1).end()
            if j < n and data[j] != 0x22:
                j = n + 1  # a backslash as the data's last byte escapes past its end
            args.append(new(Arg, (i, min(j + 1, n), True, data[i + 1 : j])))
            i = j + 1
        elif c == 0x5B and (b := _BRACKET_OPEN.match(data, i)):  # [
            close = data.find(b"]" + b.group(1) + b"]", b.end())
            end = n if close < 0 else close + len(b.group(1)) + 2
            args.append(new(Arg, (i, end, True, data[b.end() : max(b.end(), end - len(b.group(1)) - 2)])))
            i = end
        else:
            args.append(new(Arg, (i, m.end(), False, m.group(1))))
            i = m.end()
    return args, n


def comment_spans(data: bytes) -> list[tuple[int, int]]:
    """The comments as parse/hash_comments gives every kind's: a `#` comment ends before the
    line's end, `\\r` or `\\n` (parse's ends at the `\\n`); a bracket comment as parse reads it."""
    out = []
    for start, end in parse(data)[1]:
        if _BRACKET_OPEN.match(data, start + 1) is None:  # a line comment
            cr = data.find(b"\r", start, end)
            if cr >= 0:
                end = cr
        out.append((start, end))
    return out

