"""CMake: the CUDA language, targets and packages -> HIP (CMake >= 3.21), from
mappings/build_files/cmake.tsv and libraries.tsv.

- `project(... CUDA)`, `enable_language(CUDA)`, `$<COMPILE_LANGUAGE:CUDA>`, `LANGUAGE CUDA` -> HIP;
- `CMAKE_CUDA_*` variables and `CUDA_*` target properties -> their HIP names; architecture
  lists (`CMAKE_CUDA_ARCHITECTURES 70 80`) -> the default AMD targets;
- `find_package(CUDAToolkit)` -> `find_package(hip)` plus one `find_package` per ROCm library
  the file links; `CUDA::cublas` -> `roc::hipblas`, ...;
- `.cu` sources get `set_source_files_properties(... PROPERTIES LANGUAGE HIP)` (CMake compiles
  only `.hip` files as HIP by default), or are renamed with --rename;
- nvcc options are translated (architecture options go: CMAKE_HIP_ARCHITECTURES sets them);
- `cmake_minimum_required` below 3.21 is raised to 3.21 when the file now uses HIP.

The commands and comments are parse/cmake's (the comments as FileContext keeps them, for the
rules too); edits never touch a comment.
"""

from __future__ import annotations

import functools
import re

from hipport import regexes
from hipport.edits import Edit
from hipport.parse.cmake import Arg, Command, parse
from hipport.patterns import by_common_start, word_start
from hipport.rewrite.shell import Rewritten, arch_list, flag_edits, libraries, path_edits, table

HIP_MIN_CMAKE = (3, 21)


# ---------------------------------------------------------------------------------------------
# tables


@functools.lru_cache(maxsize=None)
def _rows() -> dict[str, dict[str, dict[str, str]]]:
    out: dict[str, dict[str, dict[str, str]]] = {}
    for r in table("cmake"):
        out.setdefault(r["kind"], {})[r["cuda"]] = r
    return out


@functools.lru_cache(maxsize=None)
def _word_res() -> tuple[re.Pattern[bytes], ...]:
    """The table's variable, property and architecture names as whole words (or right after
    `-D`), group 1 the name: one literal-first pattern per two leading characters
    (CMAKE_CUDA_..., CUDA_...; see hipport.patterns)."""
    rows = _rows()
    names = sorted((n for k in ("variable", "property", "arch") for n in rows.get(k, {})), key=len, reverse=True)
    return tuple(regexes.compile(b"(" + word_start(head, after_define=True) + b"(?:" + rest + rb"))(?!\w)")
                 for head, rest in by_common_start(names))


def _words(data: bytes) -> list[re.Match[bytes]]:
    """_word_res()' matches in `data`, in order."""
    return sorted((m for p in _word_res() for m in p.finditer(data)), key=lambda m: m.start())


@functools.lru_cache(maxsize=None)
def _text_re() -> re.Pattern[bytes]:
    alts = "|".join(re.escape(n) for n in sorted(_rows().get("text", {}), key=len, reverse=True))
    return regexes.compile(alts.encode() if alts else rb"(?!)")


_GENEX = regexes.compile(rb"\$<(COMPILE_LANGUAGE|LINK_LANGUAGE|COMPILE_LANG_AND_ID|LINK_LANG_AND_ID):([^>$]*)>")
_CUDA_TARGET = regexes.compile(rb"CUDA::(?<![\w:]CUDA::)(\w+)")  # literal-first, as _word_res
_ARCH_ITEM = regexes.compile(rb"\d+(?:-real|-virtual)?|native|all|all-major")
_VERSION = regexes.compile(rb"(\d+)\.(\d+)(?:\.\d+)*")
_SOURCE_COMMANDS = frozenset({
    "add_library", "add_executable", "target_sources", "set", "list", "cuda_add_library",
    "cuda_add_executable", "pybind11_add_module", "python_add_library", "nanobind_add_module",
})
_SET_VALUE_END = frozenset({b"CACHE", b"PARENT_SCOPE", b"FORCE"})


def _is_cu(arg: Arg) -> bool:
    return arg.text.endswith(b".cu") and b"$<" not in arg.text and len(arg.text) > 3


# ---------------------------------------------------------------------------------------------
# the rewriter


def rewrite(ctx, renamed: frozenset[str]) -> Rewritten:
    data, settings, target = ctx.data, ctx.settings, ctx.mappings.target_hip
    commands, comments = parse(data)[0], ctx.comment_index
    newline = ctx.source.newline
    out = Rewritten()
    rows = _rows()
    uses_hip_language = False
    needed: dict[str, int] = {}  # CMake package -> first offset that needs it
    found_packages: set[str] = set()
    toolkit: list[Command] = []

    for cmd in commands:
        name = cmd.name
        if name == "find_package" and cmd.args:
            found_packages.add(cmd.args[0].text.decode("utf-8", "replace").lower())
        if name in ("project", "enable_language", "check_language"):
            args = cmd.args[1:] if name == "project" else cmd.args
            for a in args:
                if a.text == b"CUDA" and not a.quoted:
                    out.edits.append(Edit(a.start, a.end, b"HIP", "cmake", "CUDA"))
                    uses_hip_language = True
        elif name == "find_package" and cmd.args:
            pkg = rows["package"].get(cmd.args[0].text.decode("utf-8", "replace"))
            if pkg is not None:
                a = cmd.args[0]
                out.edits.append(Edit(a.start, a.end, pkg["hip"].encode(), "cmake", pkg["cuda"]))
                if len(cmd.args) > 1 and re.fullmatch(rb"\d+(?:\.\d+)*(?:\.\.\.\d+(?:\.\d+)*)?", cmd.args[1].text):
                    v = cmd.args[1]  # a CUDA version means nothing to the hip package
                    out.edits.append(Edit(a.end, v.end, b"", "cmake", v.text.decode()))
                    out.note(v.start, f"CUDA version {v.text.decode()} dropped from find_package")
                out.note(a.start, f"find_package({pkg['cuda']}) -> find_package({pkg['hip']}): {pkg['note']}")
                toolkit.append(cmd)
        if name in rows.get("command", {}):
            row = rows["command"][name]
            out.edits.append(Edit(cmd.start, cmd.start + len(name), row["hip"].encode(), "cmake", name))
            out.note(cmd.start, f"{name} -> {row['hip']}: {row['note']}")
        if name in _ARCH_COMMANDS:
            out.extend(_arch_values(cmd, rows))
        if name in _LANGUAGE_COMMANDS:
            out.extend(_language_property(cmd))
        if name in ("target_link_libraries", "link_libraries"):
            out.extend(_link_names(cmd, target))
    uses_hip_language |= any(e.cuda == "CUDA" for e in out.edits)

    # Words: CMAKE_CUDA_* variables, CUDA_* properties; FindCUDA's library lists.
    for m in _words(data):
        if comments.covers(m.start()):
            continue
        word = m.group(1).decode()
        row = next(rows[k][word] for k in ("variable", "property", "arch") if word in rows.get(k, {}))
        if not row["hip"]:
            out.note(m.start(), f"`{word}` left as written: {row['note']}")
            continue
        out.edits.append(Edit(m.start(1), m.end(1), row["hip"].encode(), "cmake", word))
        uses_hip_language = True
    for m in _text_re().finditer(data):
        if comments.covers(m.start()):
            continue
        row = rows["text"][m.group().decode()]
        out.edits.append(Edit(m.start(), m.end(), row["hip"].encode(), "cmake", row["cuda"]))
        needed.setdefault(row["package"], m.start())
    for m in _GENEX.finditer(data):
        if comments.covers(m.start()):
            continue
        genex = _genex(m)
        out.extend(genex)
        uses_hip_language |= bool(genex.edits)

    # Targets: CUDA::cublas -> roc::hipblas (and its package).
    libs = libraries(target)
    for m in _CUDA_TARGET.finditer(data):
        if comments.covers(m.start()):
            continue
        lib = libs.get(m.group().decode())
        if lib is None or not lib.target:
            why = lib.note if lib is not None else "no ROCm library stands in for it"
            out.note(m.start(), f"`{m.group().decode()}` left as written: {why}")
            continue
        out.edits.append(Edit(m.start(), m.end(), lib.target.encode(), "cmake", m.group().decode()))
        needed.setdefault(lib.package, m.start())

    out.extend(_packages(data, commands, toolkit, needed, found_packages, newline))
    sources = _sources(data, commands, settings.rename, newline)
    uses_hip_language |= bool(sources.edits) and not settings.rename
    out.extend(sources)
    if uses_hip_language:
        out.extend(_minimum_version(commands))
    # nvcc options in flag variables and target_compile_options: architectures go, since
    # CMAKE_HIP_ARCHITECTURES / HIP_ARCHITECTURES choose the targets.
    out.extend(flag_edits(data, comments, "drop", why="CMAKE_HIP_ARCHITECTURES / HIP_ARCHITECTURES choose the AMD targets"))
    out.extend(path_edits(data, comments))
    for cmd in commands if b"nvcc" in data else ():
        for a in cmd.args:
            if a.text == b"nvcc" or a.text.endswith(b"/nvcc"):
                out.note(a.start, f"`{a.text.decode()}` left as written: CMake's HIP language compiles "
                                  "with ROCm's clang++ (CMAKE_HIP_COMPILER), not with nvcc or hipcc")
    return out


# The commands that may set an architecture list, or a source file's language.
_ARCH_COMMANDS = frozenset({"set", "set_target_properties", "set_directory_properties",
                            "set_tests_properties", "set_property"})
_LANGUAGE_COMMANDS = frozenset({"set_source_files_properties", "set_property"})


@functools.lru_cache(maxsize=None)
def _arch_names() -> frozenset[bytes]:
    return frozenset(n.encode() for n in _rows().get("arch", {}))


def _arch_values(cmd: Command, rows) -> Rewritten:
    """The values of an architecture variable or property -> the default AMD targets."""
    out = Rewritten()
    arch_names = _arch_names()
    args = cmd.args
    spans: list[list[Arg]] = []
    if cmd.name == "set" and args and args[0].text in arch_names:
        values = []
        for a in args[1:]:
            if a.text in _SET_VALUE_END and not a.quoted:
                break
            values.append(a)
        spans.append(values)
    elif cmd.name in ("set_target_properties", "set_directory_properties", "set_tests_properties"):
        for k, a in enumerate(args[:-1]):
            if a.text in arch_names and not a.quoted:
                spans.append([args[k + 1]])
    elif cmd.name == "set_property":
        for k, a in enumerate(args):
            if a.text == b"PROPERTY" and k + 1 < len(args) and args[k + 1].text in arch_names:
                spans.append([v for v in args[k + 2 :]])
    for values in spans:
        if not values:
            continue
        items = [i for v in values for i in v.text.split(b";") if i]
        if any(b"${" in v.text for v in values):
            continue  # a variable: it follows the variable's own value
        if not items or not all(_ARCH_ITEM.fullmatch(i) for i in items):
            out.note(values[0].start, "architecture list left as written (not NVIDIA numbers): "
                                      f"use AMD targets such as {arch_list(';')}")
            continue
        first, last = values[0], values[-1]
        if len(values) == 1:
            sep = ";" if b";" in first.text or first.quoted else " "
            new = arch_list(sep).encode()
            new = b'"' + new + b'"' if first.quoted else new
        else:
            new = arch_list(" ").encode()
        old = b" ".join(v.text for v in values).decode()
        out.edits.append(Edit(first.start, last.end, new, "arch", old))
        out.note(first.start, f"architectures `{old}` -> `{new.decode()}` (AMD targets; edit the list for your GPUs)")
    return out


def _language_property(cmd: Command) -> Rewritten:
    """`LANGUAGE CUDA` in a property list -> `LANGUAGE HIP`."""
    out = Rewritten()
    if cmd.name not in _LANGUAGE_COMMANDS:
        return out
    for a, b in zip(cmd.args, cmd.args[1:]):
        if a.text == b"LANGUAGE" and b.text == b"CUDA" and not b.quoted:
            out.edits.append(Edit(b.start, b.end, b"HIP", "cmake", "CUDA"))
    return out


def _link_names(cmd: Command, target) -> Rewritten:
    """Bare link names (`cublas`, `-lcurand`) in target_link_libraries."""
    out = Rewritten()
    libs = libraries(target)
    for a in cmd.args:
        if a.quoted:
            continue
        text = a.text.decode("utf-8", "replace")
        prefix = "-l" if text.startswith("-l") else ""
        lib = libs.get(text[len(prefix):])
        if lib is None or "::" in text:
            continue
        s = a.start + len(prefix)
        out.edits.append(Edit(s, a.end, lib.hip.encode(), "link-library", text[len(prefix):]))
    return out


def _genex(m: re.Match[bytes]) -> Rewritten:
    out = Rewritten()
    pos = m.start(2)
    with_id = m.group(1).endswith(b"_AND_ID")
    for k, item in enumerate(m.group(2).split(b",")):
        if item == b"CUDA" and (k == 0 or not with_id):
            out.edits.append(Edit(pos, pos + 4, b"HIP", "cmake", "CUDA"))
        elif item == b"NVIDIA" and with_id and k > 0:
            out.edits.append(Edit(pos, pos + 6, b"Clang", "cmake", "NVIDIA"))
        pos += len(item) + 1
    return out


def _packages(data: bytes, commands: list[Command], toolkit: list[Command], needed: dict[str, int],
              found: set[str], newline: bytes) -> Rewritten:
    """find_package() for each ROCm library the file's targets need."""
    out = Rewritten()
    missing = sorted(p for p in needed if p and p.lower() not in found and not (p == "hip" and toolkit))
    if not missing:
        return out
    if toolkit:
        cmd = toolkit[0]
        tail = b"".join(b" " + a.text for a in cmd.args[1:] if a.text in (b"REQUIRED", b"QUIET") and not a.quoted)
        text = b"".join(newline + cmd.indent + b"find_package(" + p.encode() + tail + b")" for p in missing)
        out.edits.append(Edit(cmd.close + 1, cmd.close + 1, text, "cmake", ""))
        out.note(cmd.start, "added " + ", ".join(f"find_package({p})" for p in missing)
                 + " for the ROCm libraries this file links")
        return out
    # No find_package(CUDAToolkit) here (a subdirectory): before the first command that needs one.
    first = min(needed[p] for p in missing)
    cmd = next((c for c in commands if c.start <= first <= c.close), None)
    if cmd is None:
        return out
    line_start = data.rfind(b"\n", 0, cmd.start) + 1
    text = b"".join(cmd.indent + b"find_package(" + p.encode() + b" REQUIRED)" + newline for p in missing)
    out.edits.append(Edit(line_start, line_start, text, "cmake", ""))
    out.note(cmd.start, "added " + ", ".join(f"find_package({p} REQUIRED)" for p in missing)
             + " for the ROCm libraries this file links")
    return out


def _sources(data: bytes, commands: list[Command], rename: bool, newline: bytes) -> Rewritten:
    """`.cu` sources: renamed to `.hip` with --rename, else marked LANGUAGE HIP."""
    out = Rewritten()
    marked: set[bytes] = set()
    for cmd in commands:
        if cmd.name == "set_source_files_properties":
            texts = [a.text for a in cmd.args]
            if b"LANGUAGE" in texts and b"HIP" in texts:
                marked.update(texts)
    for cmd in commands:
        if cmd.name == "file" and cmd.args and cmd.args[0].text in (b"GLOB", b"GLOB_RECURSE") and len(cmd.args) > 2:
            patterns = [a for a in cmd.args[2:] if a.text not in (b"CONFIGURE_DEPENDS", b"LIST_DIRECTORIES",
                                                                  b"RELATIVE", b"FOLLOW_SYMLINKS")]
            cu = [a for a in patterns if a.text.endswith(b".cu")]
            if not cu:
                continue
            if rename:
                for a in cu:
                    out.edits.extend(_renamed(a))
                continue
            var = cmd.args[1].text
            ref = b"${" + var + b"}"
            if ref in marked:
                continue
            if len(cu) != len(patterns):
                out.note(cmd.start, f"`{var.decode()}` globs .cu and other files: mark the .cu ones "
                                    "with set_source_files_properties(... PROPERTIES LANGUAGE HIP)")
                continue
            out.edits.append(_after(cmd, b"set_source_files_properties(" + ref + b" PROPERTIES LANGUAGE HIP)", newline))
            out.note(cmd.start, f"the .cu files of `{var.decode()}` are marked LANGUAGE HIP")
            continue
        if cmd.name not in _SOURCE_COMMANDS:
            continue
        cu = [a for a in cmd.args if _is_cu(a)]
        if not cu:
            continue
        if rename:
            for a in cu:
                out.edits.extend(_renamed(a))
            continue
        # (An argument holding a word this file renames would be copied unrenamed: left out.)
        todo = [a for a in cu if a.text not in marked and not _words(a.text)]
        if not todo:
            continue
        marked.update(a.text for a in todo)
        # A quoted `a.cu;b.cu` is one argument: unquoted, CMake splits it into the files again.
        names = b" ".join(a.text if a.quoted and b";" in a.text and not re.search(rb"\s", a.text)
                          else data[a.start : a.end] for a in todo)
        out.edits.append(_after(cmd, b"set_source_files_properties(" + names + b" PROPERTIES LANGUAGE HIP)", newline))
        out.note(cmd.start, f"{len(todo)} .cu source(s) marked LANGUAGE HIP (CMake compiles only .hip "
                            "files as HIP by default; or port with --rename)")
    return out


def _renamed(a: Arg) -> list[Edit]:
    """--rename: each `.cu` of an argument (`a.cu`, `"a.cu;b.cu"`, `*.cu`) -> `.hip`."""
    base = a.start + (1 if a.quoted else 0)
    return [Edit(base + m.start(), base + m.end(), b".hip", "rename", a.text.decode("utf-8", "replace"))
            for m in re.finditer(rb"\.cu(?=;|\Z)", a.text)]


def _after(cmd: Command, line: bytes, newline: bytes) -> Edit:
    """An insertion of `line` on a new line right after the command's `)`."""
    return Edit(cmd.close + 1, cmd.close + 1, newline + cmd.indent + line, "cmake", "")


def _minimum_version(commands: list[Command]) -> Rewritten:
    out = Rewritten()
    for cmd in commands:
        if cmd.name != "cmake_minimum_required":
            continue
        for a, v in zip(cmd.args, cmd.args[1:]):
            if a.text != b"VERSION":
                continue
            m = _VERSION.match(v.text)
            if m is None or (int(m.group(1)), int(m.group(2))) >= HIP_MIN_CMAKE:
                continue
            s = v.start + (1 if v.quoted else 0)
            new = f"{HIP_MIN_CMAKE[0]}.{HIP_MIN_CMAKE[1]}".encode()
            out.edits.append(Edit(s + m.start(), s + m.end(), new, "cmake", m.group().decode()))
            out.note(v.start, f"cmake_minimum_required {m.group().decode()} -> {new.decode()}: "
                              "the HIP language needs CMake 3.21")
    return out
