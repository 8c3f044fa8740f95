"""Per file: bytes in -> edits -> bytes out plus a FileResult. Never raises for a file's content."""

from __future__ import annotations

import bisect
import codecs
import importlib
import posixpath
from collections import Counter

from hipport.analysis import context_for
from hipport.check import check_context
from hipport.config import Settings
from hipport.edits import splice, splices
from hipport.files import is_source, unreadable_reason
from hipport.kernels import scan as scan_kernels
from hipport.results import FileResult, Ported, output_name
from hipport.rules import all_rules
from hipport.rules._syntax import own_field_names
from hipport.rules.api_tables import table_words
from hipport.rewrite.includes import RUNTIME_HEADER, rewrite_includes, runtime_include_edit
from hipport.rewrite import shell
from hipport.rewrite.launches import launch_edits
from hipport.rewrite.members import member_edits
from hipport.rewrite.names import cuda_looking_defines, rename_identifiers
from hipport.rewrite.torch import torch_edits
from hipport.source import Source

# Libraries whose names nvcc makes visible without an include in a .cu file.
_IMPLICIT_LIBRARIES = frozenset({"runtime", "device", "driver", "complex"})
# Build files: one rewriter module per kind, whose `rewrite(ctx, renamed)` returns edits against
# the original bytes + notes; the file's context (analysis.FileContext) holds what the rules
# found already (comments, Python syntax). Each is imported when a file of its kind comes: most
# trees lack most kinds (setup.py's rewriter imports `ast`).
BUILD_REWRITERS = {
    "cmake": "cmake", "setup.py": "setup_py", "make": "makefile", "docker": "dockerfile",
    "requirements": "requirements", "shell": "shell",
}


def _encoding(data: bytes, whole: bool = True) -> str:
    """`utf-8` or `non-utf-8`; of a file's first bytes only (`whole` false), a character cut
    at their end is no error."""
    if data.isascii():
        return "utf-8"
    try:
        if whole:
            data.decode("utf-8")
        else:
            codecs.getincrementaldecoder("utf-8")().decode(data, final=False)
        return "utf-8"
    except UnicodeDecodeError:
        return "non-utf-8"


def unread_result(data: bytes, rel: str, kind: str, settings: Settings, size: int | None = None) -> FileResult | None:
    """The result of a file that is not ported or checked at all (binary, or too large), else
    None. `size`: the file's, where `data` is only its first bytes (see unreadable_reason)."""
    reason = unreadable_reason(data, settings, size)
    if not reason:
        return None
    encoding = "binary" if reason.startswith("binary") else _encoding(data, whole=size is None)
    return FileResult(source=rel, output=output_name(rel, settings), kind=kind, status="skipped",
                      reason=reason, encoding=encoding)


def _line_count(src: Source) -> int:
    """Lines in the file, a last one without a newline included: told from the line index
    (in C, and wanted anyway by the findings and edits of most files), not by a count."""
    data = src.data
    return len(src.line_starts()) - 1 + (1 if data and not data.endswith(b"\n") else 0)


def _lines_touched(src: Source, edits: list) -> int:
    """Original lines an edit touches (an insertion counts as one line)."""
    starts, lines = src.line_starts(), set()
    count, find = len(starts), bisect.bisect_right
    for e in edits:
        first = find(starts, e.start)
        if first == count or e.end <= starts[first]:  # most edits: a name within one line
            lines.add(first)
        else:
            lines.update(range(first, find(starts, e.end - 1) + 1))
    return len(lines)


def port_source(data: bytes, rel: str, kind: str, settings: Settings,
                renamed: frozenset[str] = frozenset()) -> Ported:
    """Port one buffer (C/C++/CUDA sources are rewritten; every kind is analyzed).
    `renamed`: relative paths of files renamed by --rename."""
    unread = unread_result(data, rel, kind, settings)
    if unread is not None:
        return Ported(data, unread)
    base = dict(source=rel, output=output_name(rel, settings), kind=kind)
    encoding = _encoding(data)
    try:
        ctx = context_for(data, rel, kind, settings)
    except Exception as exc:
        return Ported(data, FileResult(**base, status="failed", reason=f"{type(exc).__name__}: {exc}",
                                       lines=_line_count(Source(data, rel)), encoding=encoding))
    lines = _line_count(ctx.source)
    checked = check_context(ctx, all_rules())
    findings = checked.findings
    notes = [f"{checked.status}: {checked.reason}"] if checked.reason else []
    if kind in BUILD_REWRITERS:
        return _port_build(data, base, kind, ctx, renamed, findings, notes, lines, encoding)
    if not is_source(kind):
        return Ported(data, FileResult(**base, status="unchanged", lines=lines, encoding=encoding,
                                       findings=findings, notes=tuple(notes)))
    try:
        src, lexed, mappings = ctx.source, ctx.lexed, ctx.mappings
        renamed_ids = rename_identifiers(lexed, mappings, lambda: ctx.declared)
        edits, unmapped = renamed_ids.edits, renamed_ids.unmapped
        notes += [f"line {src.line_col(offset)[0]}: {text}" for offset, text in renamed_ids.notes]
        include_edits, included = rewrite_includes(lexed, mappings, _renamed_includes(lexed, rel, renamed))
        edits += include_edits
        edits += member_edits(ctx, table_words(ctx), lambda: own_field_names(ctx))
        edits += torch_edits(lexed, settings.torch_hipify, edits)
        if settings.launch_syntax == "hip":
            launch, skipped = launch_edits(lexed)
            edits += launch
            for offset in skipped:
                notes.append(f"line {src.line_col(offset)[0]}: kernel launch left as <<<>>> (could not split it)")
        uses_runtime = kind == "cuda" and any(e.library in _IMPLICIT_LIBRARIES for e in edits)
        if RUNTIME_HEADER not in included and (uses_runtime or lexed.has_device_code()):
            edit = runtime_include_edit(lexed, src.newline, len(src.bom))
            if edit is not None:
                edits.insert(0, edit)  # before any insertion at the same offset (a launch)
        spliced = splices(edits)
        new = splice(data, spliced)
    except Exception as exc:  # a bug must cost one file, never the run or the file's bytes
        return Ported(data, FileResult(**base, status="failed", reason=f"{type(exc).__name__}: {exc}",
                                       lines=lines, encoding=encoding, findings=findings))
    # CUDA names and headers replaced, per library; launches counted apart, --rename's own
    # include fixes not at all (they are no CUDA API).
    by_library = Counter(e.library for e in edits if e.library not in ("launch", "rename") and e.cuda)
    launches = sum(1 for e in edits if e.library == "launch" and e.cuda)
    if launches:
        by_library["launch"] = launches
    first_lines = {u.name: src.line_col(u.line_offset)[0] for u in unmapped}
    changed = new != data
    result = FileResult(
        **base, status="ported" if changed else "unchanged", changed=changed,
        replacements=sum(by_library.values()), by_library=dict(by_library),
        unmapped=tuple({"name": u.name, "count": u.count, "line": first_lines[u.name], "reason": u.reason}
                       for u in unmapped),
        notes=tuple(notes), defines=cuda_looking_defines(lexed), lines=lines,
        lines_changed=_lines_touched(src, edits) if changed else 0, encoding=encoding, findings=findings,
        kernels=scan_kernels(lexed),
    )
    return Ported(new, result, spliced if changed else ())


def _port_build(data: bytes, base: dict, kind: str, ctx, renamed: frozenset[str],
                findings, notes: list[str], lines: int, encoding: str) -> Ported:
    """A build file through its rewriter; a rewriter that raises costs the file's edits only."""
    src = ctx.source
    try:
        rewrite = importlib.import_module(f"hipport.rewrite.{BUILD_REWRITERS[kind]}").rewrite
        done = rewrite(ctx, renamed)
        edits = shell.drop_overlaps(done.edits)
        spliced = splices(edits)
        new = splice(data, spliced)
    except Exception as exc:  # a bug must cost one file, never the run or the file's bytes
        return Ported(data, FileResult(**base, status="failed", reason=f"{type(exc).__name__}: {exc}",
                                       lines=lines, encoding=encoding, findings=findings))
    notes += [f"line {src.line_col(offset)[0]}: {text}" for offset, text in sorted(done.notes)]
    by_library = Counter(e.library for e in edits if e.cuda)
    changed = new != data
    return Ported(new, FileResult(
        **base, status="ported" if changed else "unchanged", changed=changed,
        replacements=sum(by_library.values()), by_library=dict(by_library), notes=tuple(notes),
        lines=lines, lines_changed=_lines_touched(src, edits) if changed else 0, encoding=encoding,
        findings=findings), spliced if changed else ())


def _renamed_includes(lexed, rel: str, renamed: frozenset[str]) -> dict[str, str]:
    """Quoted includes that point at a file --rename renames, with their new spelling."""
    if not renamed:
        return {}
    here = posixpath.dirname(rel)
    out = {}
    for d in lexed.includes:
        path = d.path(lexed.data).decode("utf-8", "surrogateescape")
        if path.endswith(".cu") and posixpath.normpath(posixpath.join(here, path)) in renamed:
            out[path] = path[:-3] + ".hip"
    return out

