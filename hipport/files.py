"""Find the input files: walk paths, apply excludes, classify each file, refuse escaping links."""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from hipport.config import NEVER_COPIED, Settings
from hipport.errors import HipportError
from hipport.tuples import NamedTuple

CUDA_SUFFIXES = frozenset({".cu", ".cuh", ".cuinc"})
CPP_SUFFIXES = frozenset({".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hxx", ".inl", ".hh", ".c++", ".h++"})
_BY_NAME = {"CMakeLists.txt": "cmake", "setup.py": "setup.py", "Makefile": "make",
            "makefile": "make", "GNUmakefile": "make", "Dockerfile": "docker",
            "pyproject.toml": "pyproject"}


BINARY_SNIFF = 8192  # a NUL byte in the first 8 KiB: a binary file


def unreadable_reason(data: bytes, settings: Settings, size: int | None = None) -> str | None:
    """Why a file's bytes are not ported or checked at all (they are copied as they are).
    `size`: the file's, where `data` is only its first BINARY_SNIFF bytes (a file too large
    to read whole)."""
    if b"\0" in data[:BINARY_SNIFF]:
        return "binary file (NUL bytes)"
    if (len(data) if size is None else size) > settings.max_file_bytes:
        return f"larger than {settings.max_file_bytes // (1024 * 1024)} MiB"
    return None


def file_kind(name: str) -> str:
    """`cuda`, `cpp` (both rewritten as C++), a build-file kind, `python`, or `other` (copied)."""
    suffix = os.path.splitext(name)[1].lower()
    if suffix in CUDA_SUFFIXES:
        return "cuda"
    if suffix in CPP_SUFFIXES:
        return "cpp"
    if name in _BY_NAME:
        return _BY_NAME[name]
    if suffix == ".cmake":
        return "cmake"
    if suffix in (".mk", ".mak"):
        return "make"
    if name.startswith("Dockerfile") or suffix == ".dockerfile":
        return "docker"
    if name.startswith("requirements") and suffix == ".txt":
        return "requirements"
    if suffix == ".py":
        return "python"
    if suffix == ".sh":
        return "shell"
    return "other"


def is_source(kind: str) -> bool:
    return kind in ("cuda", "cpp")


class InputFile(NamedTuple):
    where: str  # the path as found (absolute); a string, as a Path per file costs a tree's walk
    rel: str  # relative to the root, with `/`
    kind: str
    link: str | None = None  # the link text when the file is a symlink that stays in the tree
    skip: str | None = None  # why it is not processed (a link leaving the tree, ...)
    verbatim: bool = False  # in an excluded (vendored) folder: copied to OUT, never ported

    @property
    def path(self) -> Path:
        return Path(self.where)


@lru_cache(maxsize=32)
def _matcher(patterns: tuple[str, ...]) -> Callable[[str], object]:
    """All glob patterns as one regex (one match per name, not one per pattern): a function
    that is truthy for the names that match."""
    if not patterns:
        return lambda name: False
    return re.compile("|".join(fnmatch.translate(p) for p in patterns)).match


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


class _Named(NamedTuple):
    """A path named on the command line, stat'ed once (pre-commit names thousands of files,
    and pathlib's steps took 45 µs a file)."""
    where: str  # absolute, as Path.absolute() gives it
    link: bool  # a symlink itself
    mode: int | None  # st_mode of what it names (None: a dangling link)

    @property
    def folder(self) -> str:
        """The path if it names a folder, else the folder holding it."""
        is_dir = self.mode is not None and stat.S_ISDIR(self.mode)
        return self.where if is_dir else os.path.dirname(self.where)


def _named(p: Path, cwd: str) -> _Named:
    text = str(p)  # a Path's text is normal (`a//b`, `a/./b` are `a/b`), but for the folder `.`
    where = cwd if text == "." else os.path.join(cwd, text)
    try:
        mode = os.lstat(where).st_mode
    except FileNotFoundError:
        raise HipportError(f"{p}: no such file or directory") from None
    except OSError as exc:
        raise HipportError(f"{p}: {exc.strerror or exc}") from None
    link = stat.S_ISLNK(mode)
    if link:
        try:
            mode = os.stat(where).st_mode
        except OSError:
            mode = None
    return _Named(where, link, mode)


def find_root(named: list[_Named]) -> Path:
    """What output paths are relative to: the folder itself, or the folder holding the inputs."""
    if len(named) == 1:
        return Path(named[0].folder)
    return Path(os.path.commonpath([n.folder for n in named]))


def collect(paths: list[Path], settings: Settings) -> tuple[Path, list[InputFile]]:
    cwd = os.getcwd()
    named = [_named(p, cwd) for p in paths]
    root = find_root(named)
    real_root = root.resolve()
    found: dict[str, InputFile] = {}

    def add(path: Path, rel: str | None = None) -> None:
        rel = rel or path.absolute().relative_to(root).as_posix()
        if rel in found:
            return
        kind, where = file_kind(path.name), str(path)
        if path.is_symlink():
            target = path.resolve()
            if not _inside(target, real_root):
                found[rel] = InputFile(where, rel, kind, skip=f"symlink leaves the input tree (-> {os.readlink(path)})")
                return
            found[rel] = InputFile(where, rel, kind, link=os.readlink(path))
            return
        if not path.is_file():
            found[rel] = InputFile(where, rel, kind, skip="not a regular file (a FIFO, socket or device)")
            return
        found[rel] = InputFile(where, rel, kind)

    def walk(top: str, top_rel: str) -> None:
        # Matched only where a folder is walked: pre-commit names files.
        never_walked, vendored = _matcher(NEVER_COPIED), _matcher(settings.excluded)
        left_out = _matcher(settings.extend_exclude)
        # A stack, not recursion: a tree may nest folders deeper than Python's stack goes.
        stack = [(top, top_rel, False)]
        while stack:
            folder, rel, verbatim = stack.pop()
            try:
                # os.scandir's entries know their type without a stat per file: trees have
                # tens of thousands of files.
                with os.scandir(folder) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except OSError as exc:
                if folder == top:
                    raise HipportError(f"{folder}: cannot list the folder: {exc.strerror or exc}") from None
                found[rel] = InputFile(folder, rel, "other", skip=f"cannot list the folder: {exc.strerror or exc}")
                continue
            prefix = rel + "/" if rel != "." else ""
            for e in entries:
                name = e.name
                if e.is_dir():
                    if never_walked(name):
                        continue
                    if e.is_symlink():
                        add(Path(e.path), prefix + name)  # recreated as a link, never followed
                    else:
                        # Inside an excluded folder that is not build output: copied to OUT, never ported.
                        stack.append((e.path, prefix + name, verbatim or bool(vendored(name))))
                # The default excludes name folders (build, vendor, ...); only the user's
                # extend-exclude patterns also match file names.
                elif not left_out(name):
                    file_rel = prefix + name
                    if e.is_file(follow_symlinks=False):
                        if file_rel not in found:
                            found[file_rel] = InputFile(e.path, file_rel, file_kind(name), verbatim=verbatim)
                    else:
                        add(Path(e.path), file_rel)  # a link, a FIFO, a socket, a device

    top = str(root).rstrip("/") + "/"  # what starts each named file's path: root is the folder above
    for where, link, mode in named:
        if mode is not None and stat.S_ISREG(mode):
            # Named on the command line, a link too: the user means the file the link points to.
            rel = where[len(top):] if where.startswith(top) else Path(where).relative_to(root).as_posix()
            if not link and rel in found:
                continue
            found[rel] = InputFile(where, rel, file_kind(os.path.basename(where)))
        elif link or mode is None or not stat.S_ISDIR(mode):
            add(Path(where))
        else:
            walk(where, Path(where).relative_to(root).as_posix())
    return root, [found[k] for k in sorted(found)]
