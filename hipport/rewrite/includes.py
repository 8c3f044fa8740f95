"""Rewrite `#include` paths from the includes table, drop duplicates this creates, and add
`<hip/hip_runtime.h>` where the code relied on nvcc's implicit include: in device code without
it, and before the HIP headers that came ahead of it (HIP 5.2's `hip_cooperative_groups.h`,
`driver_types.h` and texture headers do not compile without it)."""

from __future__ import annotations

from hipport import regexes
from hipport.edits import Edit
from hipport.mappings import Mappings
from hipport.parse.lexer import Directive, Lexed

RUNTIME_HEADER = "hip/hip_runtime.h"
_RUNTIME_LINE = b"#include <" + RUNTIME_HEADER.encode() + b">"  # without its line ending
_GUARD_DEFINE = regexes.compile(rb"[ \t]*#[ \t]*define[ \t]+(\w+)")
_GUARD_IFNDEF = regexes.compile(rb"[ \t]*#[ \t]*ifndef[ \t]+(\w+)")
_PRAGMA_ONCE = regexes.compile(rb"[ \t]*#[ \t]*pragma[ \t]+once\b")


def _line_span(data: bytes, d: Directive) -> tuple[int, int]:
    """The directive's whole line including its newline, for deletion."""
    end = data.find(b"\n", d.end)
    return d.start, (len(data) if end < 0 else end + 1)


def rewrite_includes(
    lexed: Lexed, mappings: Mappings, renamed: dict[str, str] | None = None
) -> tuple[list[Edit], set[str]]:
    """Edits for include paths; returns the edits and the set of headers the file now includes."""
    data = lexed.data
    edits: list[Edit] = []
    seen: set[tuple[str, tuple]] = set()
    now_included: set[str] = set()
    ahead: Directive | None = None  # the first CUDA header made HIP before any runtime include
    for d in lexed.includes:
        raw = d.path(data)
        path = raw.decode("utf-8", "surrogateescape")
        new = mappings.includes.get(path)
        if new is None and renamed and data[d.path_start : d.path_start + 1] == b'"':
            new = renamed.get(path)
            if new is not None:
                now_included.add(new)
                edits.append(Edit(d.path_start, d.path_end, b'"' + new.encode() + b'"', "rename", path))
                continue
        target = new if new is not None else path
        if RUNTIME_HEADER not in now_included:
            if target == RUNTIME_HEADER:
                if ahead is not None:
                    edits.append(_runtime_line_before(data, ahead))
            elif new is not None and ahead is None:
                ahead = d
        key = (target, d.branch)
        if new is not None and key in seen and not data[d.path_end : d.end].strip():
            # Two CUDA headers that map to one HIP header in the same #if branch: keep the first.
            # (Only a line holding nothing else goes: a comment after the path would go with it.)
            s, e = _line_span(data, d)
            edits.append(Edit(s, e, b"", mappings.include_library.get(path, "include"), path))
            continue
        seen.add(key)
        now_included.add(target)
        if new is not None:
            edits.append(
                Edit(d.path_start, d.path_end, b"<" + new.encode() + b">",
                     mappings.include_library.get(path, "include"), path)
            )
    return edits, now_included


def runtime_include_edit(lexed: Lexed, newline: bytes, bom_len: int) -> Edit | None:
    """Where `#include <hip/hip_runtime.h>` goes: before the first top-level include, else after
    a header guard or `#pragma once`, else before the first line of code."""
    data = lexed.data
    line = _RUNTIME_LINE + newline
    directives = lexed.directives
    for d in directives:
        if d.is_include and not d.branch:
            return Edit(d.start, d.start, line, "include", "")
    # No top-level include: skip the leading comments and blank lines.
    pos = bom_len
    comments = iter(lexed.comments)
    for s, e in comments:
        if data[pos:s].strip():
            break
        pos = e
    first = [d for d in directives if d.start >= pos]
    if first and _PRAGMA_ONCE.match(data, first[0].start) and not data[pos : first[0].start].strip():
        return _after_line(data, first[0], line, newline)
    if len(first) >= 2 and not data[pos : first[0].start].strip():
        g = _GUARD_IFNDEF.match(data, first[0].start)
        h = _GUARD_DEFINE.match(data, first[1].start)
        if g and h and g.group(1) == h.group(1):
            return _after_line(data, first[1], line, newline)
    # Before the first non-blank line after the leading comments.
    comment_end = pos
    while pos < len(data) and data[pos : pos + 1] in (b" ", b"\t", b"\r", b"\n"):
        pos += 1
    start = data.rfind(b"\n", 0, pos) + 1
    start = max(start, bom_len)
    if start < comment_end:
        # Code follows `*/` on the comment's last line: the include goes on a line of its own.
        return Edit(comment_end, comment_end, newline + line, "include", "")
    if pos >= len(data) and data and not data.endswith(b"\n"):
        return Edit(len(data), len(data), newline + line, "include", "")
    return Edit(start, start, line, "include", "")


def _runtime_line_before(data: bytes, d: Directive) -> Edit:
    """`#include <hip/hip_runtime.h>` on a line of its own before `d`'s, ended as that line is."""
    newline = b"\r\n" if data[d.end : d.end + 2] == b"\r\n" else b"\n"
    return Edit(d.start, d.start, _RUNTIME_LINE + newline, "include", "")


def _after_line(data: bytes, d: Directive, line: bytes, newline: bytes) -> Edit:
    end = data.find(b"\n", d.end)
    if end < 0:
        return Edit(len(data), len(data), newline + line, "include", "")
    return Edit(end + 1, end + 1, line, "include", "")
