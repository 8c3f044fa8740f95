"""Command lines: the build tables (mappings/build_files/*.tsv), the nvcc-flag translator and the
word rewrites shared by shell scripts, Makefiles, Dockerfile RUN lines and CMake.

Everything here returns byte-range Edits against the original buffer, never touching comments.
`rewrite` is the rewriter for `*.sh` files.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable

from hipport import regexes
from hipport.edits import Edit
from hipport.parse.hash_comments import Spans
from hipport.source import bom_length
from hipport.tuples import NamedTuple

# ---------------------------------------------------------------------------------------------
# the tables


def table(name: str) -> tuple[dict[str, str], ...]:
    """Rows of mappings/build_files/NAME.tsv as dicts keyed by the header."""
    from hipport.table_files import data_table  # noqa: PLC0415 - keeps this module cheap to import

    return data_table("build_files", name)


@functools.lru_cache(maxsize=None)
def default_archs() -> tuple[str, ...]:
    """The AMD targets written where a build file named NVIDIA architectures."""
    return tuple(r["arch"] for r in table("archs") if r["default"] == "1")


def rocm_release(target: tuple[int, int]) -> str:
    return f"{target[0]}.{target[1]}"


def _version(text: str) -> tuple[int, int] | None:
    parts = text.split(".")
    return (int(parts[0]), int(parts[1]) if len(parts) > 1 else 0) if text else None


class Library(NamedTuple):
    cuda: str
    hip: str  # link name
    package: str  # CMake package ("" when it has none)
    target: str  # CMake target
    note: str


@functools.lru_cache(maxsize=16)
def libraries(target: tuple[int, int]) -> dict[str, Library]:
    """CUDA link names and CUDA:: targets -> the ROCm library usable at `target`."""
    out: dict[str, Library] = {}
    for r in table("libraries"):
        hip = r["hip"]
        added = _version(r["hip_added"])
        note = r["note"]
        if added is not None and added > target:
            if not r["before"]:
                continue
            hip, note = r["before"], f"{note} (target {rocm_release(target)}: {r['before']})"
            lib = Library(r["cuda"], hip, "hip", "hip::host", note)
        else:
            lib = Library(r["cuda"], hip, r["package"], r["target"], note)
        out[r["cuda"]] = lib
        for t in r["cuda_targets"].split():
            out[t] = lib
    return out


# ---------------------------------------------------------------------------------------------
# results


class Rewritten:
    """What a build-file rewriter returns: edits against the original bytes and notes for the
    report, each at a byte offset."""

    def __init__(self) -> None:
        self.edits: list[Edit] = []
        self.notes: list[tuple[int, str]] = []

    def note(self, offset: int, text: str) -> None:
        self.notes.append((offset, text))

    def extend(self, other: "Rewritten") -> None:
        self.edits.extend(other.edits)
        self.notes.extend(other.notes)


def drop_overlaps(edits: Iterable[Edit]) -> list[Edit]:
    """Sorted edits with any edit that overlaps an earlier one left out (first producer wins)."""
    out: list[Edit] = []
    end = -1
    for e in sorted(edits, key=lambda e: (e.start, e.end)):
        if e.start < end:
            continue
        out.append(e)
        end = max(end, e.end)
    return out


# ---------------------------------------------------------------------------------------------
# nvcc flags


class FlagRule(NamedTuple):
    flag: str
    value: str  # "" | "any" | "nvarch"
    action: str  # replace | drop | arch | unwrap
    hip: str
    note: str


# Values of NVIDIA architecture options: sm_80, compute_80,sm_80, native, all, the -gencode
# pair arch=compute_80,code=sm_80 (code may be quoted or bracketed), or a variable.
NVARCH = regexes.compile(
    r"(?:(?:sm|compute|lto)_(?:\w+|\$[({]\w+[)}])(?:,(?:sm|compute|lto)_\w+)*|native|all|all-major"
    r"|arch=(?:compute|sm)_\w+(?:,code=(?:\\?\"[\w,]+\\?\"|'[\w,]+'|\[[\w,]+\]|[\w,]+))?"
    r"|\$[({][\w.]+[)}]|\$\w+)\Z"
)


@functools.lru_cache(maxsize=None)
def flag_rules() -> dict[str, FlagRule]:
    return {r["flag"]: FlagRule(r["flag"], r["value"], r["action"], r["hip"], r["note"])
            for r in table("nvcc_flags")}


def value_ok(rule: FlagRule, value: str) -> bool:
    if rule.value == "nvarch":
        return bool(NVARCH.match(value))
    return bool(value)


def classify(word: str) -> tuple[FlagRule, str | None] | None:
    """The rule for one word: (rule, joined value or None). None when the word is no nvcc flag
    (or its joined value is not what the flag takes)."""
    rules = flag_rules()
    rule = rules.get(word)
    if rule is not None:
        return rule, None
    flag, eq, value = word.partition("=")
    if eq:
        rule = rules.get(flag)
        if rule is not None and rule.value and value_ok(rule, value):
            return rule, value
    return None


def arch_text(sep: str = " ") -> str:
    return sep.join(f"--offload-arch={a}" for a in default_archs())


def _keeps_value(rule: FlagRule, value: str | None) -> str | None:
    """What replaces the flag and its separator when the value stays as written: "" for
    `unwrap`, the template's prefix for a `replace` ending in {value}; None otherwise."""
    if not value or value[0] in "\"'":
        return None
    if rule.action == "unwrap":
        return ""
    if rule.action == "replace" and rule.hip.endswith("{value}") and rule.hip.count("{value}") == 1:
        return rule.hip[: -len("{value}")]
    return None


def apply_rule(rule: FlagRule, value: str | None) -> list[str] | None:
    """The words a flag becomes (empty: dropped); None for `arch` (the caller decides)."""
    if rule.action == "drop":
        return []
    if rule.action == "replace":
        return rule.hip.replace("{value}", value or "").split()
    if rule.action == "unwrap":
        return [v for v in (value or "").split(",") if v]
    return None


# A flag starts a word in build text (shell, make, CMake arguments, quoted strings); its value
# runs to the end of the word.
_VALUE = r"""(?:\\"|\$\([\w.]+\)|\$\{[\w.]+\}|[^\s"';()<>`|&])"""
# (The lookbehind follows the first `-`, so that re searches for that literal: the byte
# before the flag is one of those that may end the word before it, or there is none.)
_FLAG_WORD = regexes.compile((r"(-(?<![^\s\"'(;:>=,\[`]-)-?[A-Za-z][\w.+-]*)(?:=(" + _VALUE + r"*))?").encode())
_NEXT_WORD = regexes.compile(rb"(?:[ \t]+|[ \t]*\\\r?\n[ \t]*|;)(" + _VALUE.encode() + rb"+)")
_HSPACE = b" \t"


def logical_lines(data: bytes) -> list[int]:
    """Start offsets of logical lines (a line ending in a backslash continues on the next)."""
    starts = [0]
    for m in re.finditer(rb"\n", data):
        before = data[max(0, m.start() - 2) : m.start()]
        if not (before.endswith(b"\\") or before == b"\\\r"):
            starts.append(m.end())
    return starts


def flag_edits(data: bytes, comments: Spans, policy: str, start: int = 0, end: int | None = None,
               label: str = "nvcc-flag", why: str = "") -> Rewritten:
    """Edits for nvcc options in data[start:end] outside comments. `policy` says what an
    architecture option becomes: "offload" (the first one in a logical line becomes
    --offload-arch for the default targets, the others go) or "drop" (the build system sets
    the targets: PYTORCH_ROCM_ARCH, CMAKE_HIP_ARCHITECTURES)."""
    end = len(data) if end is None else end
    out = Rewritten()
    found: list[tuple[int, int, list[str] | None, FlagRule, str]] = []  # start, end, words, rule, text
    for m in _FLAG_WORD.finditer(data, start, end):
        if comments.covers(m.start()):
            continue
        word = m.group(1).decode("utf-8", "replace")
        joined = m.group(2)
        rules = flag_rules()
        if joined is not None:
            hit = classify(m.group().decode("utf-8", "replace"))
            if hit is None:
                continue
            rule, value = hit
            span_end = m.end()
        else:
            rule = rules.get(word)
            if rule is None:
                continue
            value, span_end = None, m.end()
            if rule.value:
                nxt = _NEXT_WORD.match(data, m.end(), end)
                if nxt is None:
                    continue
                value = nxt.group(1).decode("utf-8", "replace")
                if not value_ok(rule, value):
                    continue
                span_end = nxt.end()
        if rule.action == "unwrap" and value and (flag_rules().get(value.split(",")[0].split("=")[0]) is not None):
            continue  # `-Xcompiler -Xptxas`: not a host option; left for a person to sort out
        if rule.action == "unwrap" and value and value[0] in "\"'":
            out.note(m.start(), f"`{word}` with a quoted value left as written: pass the host options to hipcc directly")
            continue
        if found and m.start() < found[-1][1]:
            continue
        text = data[m.start() : span_end].decode("utf-8", "replace")
        kept = _keeps_value(rule, value)
        if kept is not None:
            # `-Xcompiler -fPIC`, `--default-stream per-thread`: only the flag's own bytes change,
            # so edits inside the value (a renamed variable, a path) still apply.
            value_start = span_end - len(value.encode("utf-8"))
            out.edits.append(Edit(m.start(), value_start, kept.encode(), label, text))
            if rule.action == "unwrap":
                out.edits.extend(Edit(value_start + i, value_start + i + 1, b" ", label, "")
                                 for i, c in enumerate(data[value_start:span_end]) if c == ord(","))
            new = apply_rule(rule, value)
            out.note(m.start(), f"`{text}` -> `{' '.join(new or [])}`: {rule.note}")
            found.append((m.start(), span_end, None, rule, ""))  # taken; nothing more to emit
            continue
        found.append((m.start(), span_end, apply_rule(rule, value), rule, text))
    lines = logical_lines(data) if any(f[2] is None for f in found) else []
    seen_arch_lines: set[int] = set()
    last = -1
    for s, e, words, rule, text in found:
        if not text:  # edited above, value kept
            last = e
            continue
        if words is None:  # an architecture option
            line = bisect.bisect_right(lines, s) - 1
            if policy == "offload" and line not in seen_arch_lines:
                seen_arch_lines.add(line)
                out.edits.append(Edit(s, e, arch_text().encode(), label, text))
                out.note(s, f"`{text}` -> {arch_text()} (AMD targets; edit the list for your GPUs)")
                last = e
                continue
            words = []
            out.note(s, f"`{text}` removed: {why or '--offload-arch covers the AMD targets'}")
        if words:
            new = " ".join(words).encode()
            out.edits.append(Edit(s, e, new, label, text))
            if rule.note:
                out.note(s, f"`{text}` -> `{new.decode()}`: {rule.note}")
            last = e
            continue
        ds, de = _deletion(data, s, e, last)
        out.edits.append(Edit(ds, de, b"", label, text))
        if rule.action != "arch":
            out.note(s, f"`{text}` removed: {rule.note}")
        last = de
    return out


def _deletion(data: bytes, s: int, e: int, last: int) -> tuple[int, int]:
    """The bytes to delete for a dropped word at data[s:e]: the word with the spaces before it
    (or after it, when it starts its line), or with the `;` list separator before (or after) it;
    its quotes when it was a whole quoted argument. Never reaches back before `last` (the end
    of the previous edit)."""
    quote = data[s - 1 : s]
    if s > 0 and quote in (b'"', b"'") and data[e : e + 1] == quote:
        s, e = s - 1, e + 1
        # An element of an exec-form list (`RUN ["nvcc", "-lineinfo", "a.cu"]`): its comma too.
        after = re.match(rb"[ \t]*,[ \t]*", data[e:])
        if after:
            return s, e + after.end()
        before = re.search(rb",[ \t]*\Z", data[max(0, s - 16) : s])
        if before and data[e : e + 1] == b"]" and s - (len(before.group())) >= max(last, 0):
            return s - len(before.group()), e
    if s - 1 >= max(last, 0) and data[s - 1 : s] == b";":
        return s - 1, e
    if data[e : e + 1] == b";":
        return s, e + 1
    i = s
    while i > max(last, 0) and data[i - 1] in _HSPACE:
        i -= 1
    if i < s and i > 0 and data[i - 1 : i] != b"\n":
        return i, e
    j = e
    while j < len(data) and data[j] in _HSPACE:
        j += 1
    line_start = i == 0 or data[i - 1 : i] == b"\n"
    cont = re.match(rb"\\\r?\n", data[j : j + 3])
    if line_start and cont and i >= max(last, 0):
        return i, j + cont.end()  # a continuation line holding only this word
    if data[j : j + 1] not in (b"\n", b"\r", b""):
        return s, j
    # Alone on a continuation line (`    -lineinfo` after `... \`): the continuation goes too.
    if i > 0 and data[i - 1 : i] == b"\n":
        k = i - 1
        if data[k - 1 : k] == b"\r":
            k -= 1
        if data[k - 1 : k] == b"\\":
            k -= 1
            while k > 0 and data[k - 1] in _HSPACE:
                k -= 1
            if k >= max(last, 0):
                return k, j
    return s, e


# ---------------------------------------------------------------------------------------------
# words of command lines


_LIB_FLAG = regexes.compile(rb"(?<![\w-])-l(\w+)(?![\w.+-])")
_PATH = regexes.compile(rb"/usr/local/cuda(?:-\d+(?:\.\d+)*)?(/lib64)?(?![\w.-])")
_VAR_LIB64 = regexes.compile(rb"\$[({]?(?:CUDA_HOME|CUDA_PATH|CUDA_ROOT|CUDA_TOOLKIT_ROOT_DIR)[)}]?/(lib64)(?![\w.-])")


@functools.lru_cache(maxsize=None)
def tools() -> dict[str, dict[str, str]]:
    return {r["cuda"]: r for r in table("tools")}


def _word_re(names: Iterable[str]) -> re.Pattern[bytes]:
    alts = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    # A word of its own, or a define on a command line (-DCMAKE_CUDA_ARCHITECTURES=80).
    return regexes.compile(rf"(?:(?<=-D)|(?<![\w./-]))(?:{alts})(?![\w-])".encode())


@functools.lru_cache(maxsize=None)
def _tool_re() -> re.Pattern[bytes]:
    names = [n for n, r in tools().items() if r["kind"] in ("tool", "smi", "note")]
    alts = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    # A tool is a word of its own or the last part of a path (/usr/local/cuda/bin/nvcc).
    return regexes.compile(rf"(?<![\w.-])(?:[\w.$(){{}}/-]*/)?({alts})(?![\w.-])".encode())


@functools.lru_cache(maxsize=None)
def _env_re() -> re.Pattern[bytes]:
    return _word_re(n for n, r in tools().items() if r["kind"] in ("env", "arch-env"))


# An architecture list as a value: 7.0;8.0+PTX, "8.0 8.6", sm_80, 70-real, "70;80".
_ARCH_VALUE = regexes.compile(
    rb"(?P<q>[\"']?)(?P<v>(?:(?:\d+(?:\.\d+)?(?:\+PTX)?|\d+-(?:real|virtual)|sm_\d+\w*|compute_\d+\w*|native|all|all-major)"
    rb"(?:[;, ]+|(?=(?P=q))))+)(?P=q)(?=[\s;)\]}]|$)", re.I)


def arch_list(sep: str) -> str:
    return sep.join(default_archs())


def _smi_parsed(data: bytes, s: int, e: int) -> str:
    """Why an nvidia-smi call's output is read by the script ('' when it is not)."""
    line_start = data.rfind(b"\n", 0, s) + 1
    line_end = data.find(b"\n", e)
    line_end = len(data) if line_end < 0 else line_end
    before, after = data[line_start:s], data[e:line_end]
    if re.search(rb"\$\((?:[^)]*)$|`[^`]*$", before) or re.match(rb"[^|#]*\|(?!\|)", after):
        return "its output is parsed"
    if re.match(rb"[ \t]+[^\s|;&)>#]", after):
        return "it has arguments"
    return ""


def word_edits(data: bytes, comments: Spans, *, start: int = 0, end: int | None = None,
               target: tuple[int, int], rename: bool = False, quote: bool = True) -> Rewritten:
    """Tools (nvcc -> hipcc, ...), -l link names, CUDA install paths, environment variables
    (TORCH_CUDA_ARCH_LIST -> PYTORCH_ROCM_ARCH with its value, CUDA_HOME -> ROCM_HOME) and,
    with --rename, `.cu` file names in data[start:end] outside comments."""
    out = tool_edits(data, comments, start, end)
    out.extend(link_edits(data, comments, target, start, end))
    out.extend(path_edits(data, comments, start, end))
    out.extend(env_edits(data, comments, start, end, quote))
    if rename:
        out.extend(cu_name_edits(data, comments, start, end))
    return out


def tool_edits(data: bytes, comments: Spans, start: int = 0, end: int | None = None) -> Rewritten:
    end = len(data) if end is None else end
    out = Rewritten()
    for m in _tool_re().finditer(data, start, end):
        if comments.covers(m.start()):
            continue
        name = m.group(1).decode()
        row = tools()[name]
        s, e = m.start(1), m.end(1)
        if row["kind"] == "note":
            out.note(s, f"`{name}`: {'use ' + row['hip'] + '; ' if row['hip'] else ''}{row['note']}")
            continue
        if row["kind"] == "smi":
            why = _smi_parsed(data, s, e)
            if why:
                out.note(s, f"`{name}` left as written ({why}): {row['hip']} has {row['note']}")
                continue
        out.edits.append(Edit(s, e, row["hip"].encode(), "tool", name))
        if row["kind"] == "smi":
            out.note(s, f"`{name}` -> `{row['hip']}`: {row['note']}")
    return out


def link_edits(data: bytes, comments: Spans, target: tuple[int, int], start: int = 0,
               end: int | None = None) -> Rewritten:
    """-lcublas -> -lhipblas, ..."""
    end = len(data) if end is None else end
    out = Rewritten()
    libs = libraries(target)
    for m in _LIB_FLAG.finditer(data, start, end):
        name = m.group(1).decode()
        lib = libs.get(name)
        if lib is None or comments.covers(m.start()):
            continue
        out.edits.append(Edit(m.start(1), m.end(1), lib.hip.encode(), "link-library", name))
    return out


def path_edits(data: bytes, comments: Spans, start: int = 0, end: int | None = None) -> Rewritten:
    """/usr/local/cuda[-X.Y][/lib64] -> /opt/rocm[/lib]."""
    end = len(data) if end is None else end
    out = Rewritten()
    for m in _PATH.finditer(data, start, end):
        if comments.covers(m.start()):
            continue
        new = b"/opt/rocm/lib" if m.group(1) else b"/opt/rocm"
        out.edits.append(Edit(m.start(), m.end(), new, "path", m.group().decode()))
    for m in _VAR_LIB64.finditer(data, start, end):
        if not comments.covers(m.start()):
            out.edits.append(Edit(m.start(1), m.end(1), b"lib", "path", "lib64"))
    return out


def env_edits(data: bytes, comments: Spans, start: int = 0, end: int | None = None,
              quote: bool = True) -> Rewritten:
    """Environment variables by name (CUDA_HOME -> ROCM_HOME); an architecture variable's value
    -> the default AMD targets, `;`-separated (quoted where it was not, if `quote`: a shell
    would split the list at the `;`)."""
    end = len(data) if end is None else end
    out = Rewritten()
    for m in _env_re().finditer(data, start, end):
        if comments.covers(m.start()):
            continue
        name = m.group().decode()
        row = tools()[name]
        if not row["hip"]:
            out.note(m.start(), f"`{name}`: {row['note']}")
            continue
        out.edits.append(Edit(m.start(), m.end(), row["hip"].encode(), "env", name))
        if row["kind"] == "arch-env":
            a = _ASSIGN.match(data, m.end(), end)
            v = _ARCH_VALUE.match(data, a.end()) if a else None
            if v is not None and v.end() <= end:
                new = arch_list(";")
                if quote and not v.group("q"):
                    new = f'"{new}"'
                out.edits.append(Edit(v.start("v"), v.end("v"), new.encode(), "arch", v.group("v").decode()))
                out.note(m.start(), f"`{name}` -> `{row['hip']}={arch_list(';')}`: {row['note']}")
            else:
                out.note(m.start(), f"`{name}` -> `{row['hip']}`: set it to AMD targets such as {arch_list(';')}")
    return out


# Between a variable and its value: `=`, make's `:=` `?=` `+=`, or spaces (Dockerfile ENV/ARG).
_ASSIGN = regexes.compile(rb"[ \t]*(?:[:?+!]|::)?=[ \t]*|[ \t]+")
_CU_NAME = regexes.compile(rb"(?<=[\w*%})\]])\.cu(?![\w.+-])")


def cu_name_edits(data: bytes, comments: Spans, start: int = 0, end: int | None = None) -> Rewritten:
    """--rename: every `X.cu` word (a file, a pattern like %.cu or *.cu) becomes `X.hip`."""
    end = len(data) if end is None else end
    out = Rewritten()
    for m in _CU_NAME.finditer(data, start, end):
        if comments.covers(m.start()):
            continue
        out.edits.append(Edit(m.start(), m.end(), b".hip", "rename", ".cu"))
    return out


# ---------------------------------------------------------------------------------------------
# shell scripts


_PIP_INSTALL = regexes.compile(rb"\bpip3?\s+install\b((?:[^&;|\n\\]|\\\r?\n|\\.)*)")
_REQUIREMENT = regexes.compile(rb"(?<![\w./=-])([A-Za-z0-9][\w.-]*)(?:\[[^\]\s]*\])?(?:[=<>!~]=?[^\s'\"]*)?")


def pip_notes(data: bytes, comments: Spans, start: int = 0, end: int | None = None) -> Rewritten:
    """Notes for CUDA-only packages installed with pip (cuda-only-library's table)."""
    from hipport.rules.cuda_only_library import python_package  # noqa: PLC0415 - the rule's own data

    end = len(data) if end is None else end
    out = Rewritten()
    for m in _PIP_INSTALL.finditer(data, start, end):
        if comments.covers(m.start()):
            continue
        args = m.group(1)
        for r in _REQUIREMENT.finditer(args):
            word = r.group(1).decode("utf-8", "replace")
            if args[max(0, r.start() - 1) : r.start()] not in (b"", b" ", b"\t", b"\n", b"'", b'"'):
                continue
            if comments.covers(m.start(1) + r.start(1)):
                continue
            pkg = python_package(word)
            if pkg is not None:
                out.note(m.start(1) + r.start(1), f"cuda-only-library: `{word}`: {pkg.what}; use {pkg.alternative}")
    return out


def command_edits(data: bytes, comments: Spans, *, start: int = 0, end: int | None = None,
                  target: tuple[int, int], rename: bool, policy: str = "offload",
                  quote: bool = True) -> Rewritten:
    """All command-line rewrites for data[start:end]: tools, link names, paths, environment
    variables, nvcc flags, PyTorch wheel indexes and (with --rename) .cu names; notes for
    CUDA-only packages installed with pip."""
    from hipport.rewrite.requirements import index_edits  # noqa: PLC0415 - circular at import

    out = word_edits(data, comments, start=start, end=end, target=target, rename=rename, quote=quote)
    out.extend(flag_edits(data, comments, policy, start, end))
    out.extend(index_edits(data, comments, target, start, end))
    out.extend(pip_notes(data, comments, start, end))
    return out


def rewrite(ctx, renamed: frozenset[str]) -> Rewritten:
    """A shell script (`*.sh`)."""
    data = ctx.data
    return command_edits(data, ctx.comment_index, start=bom_length(data), target=ctx.mappings.target_hip,
                         rename=ctx.settings.rename)
