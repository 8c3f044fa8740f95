"""Paths named on the command line (pre-commit names each changed file): what each one
becomes, and that each is looked at once."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from hipport.config import Settings
from hipport.errors import HipportError
from hipport.files import collect

KERNEL = b"__global__ void k(float* p) { p[0] = 1; }\n"


def test_each_named_file_is_looked_at_once(tmp_path, monkeypatch):
    names = []
    for i in range(300):
        (tmp_path / f"k{i}.cu").write_bytes(KERNEL)
        names.append(tmp_path / f"k{i}.cu")
    looks = []
    for call in ("stat", "lstat"):
        real = getattr(os, call)

        def counted(path, *args, real=real, **kwargs):
            looks.append(path)
            return real(path, *args, **kwargs)

        monkeypatch.setattr(os, call, counted)
    monkeypatch.chdir(tmp_path)
    root, files = collect([Path(p.name) for p in names], Settings())
    assert root == tmp_path
    assert [f.rel for f in files] == sorted(p.name for p in names)
    # pathlib's is_file, is_dir, exists... looked five times a file; resolving the folder
    # looks once at each folder above it, however deep the temp folder is (a TMPDIR of its own)
    at_files = Counter(os.path.basename(str(p)) for p in looks if str(p).endswith(".cu"))
    assert at_files == Counter(p.name for p in names)
    assert len(looks) - len(names) <= len(tmp_path.resolve().parts) + 2


def test_what_each_kind_of_named_path_becomes(tmp_path, monkeypatch):
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "a.cu").write_bytes(KERNEL)
    (src / "sub" / "b.cuh").write_bytes(KERNEL)
    (tmp_path / "outside.cu").write_bytes(KERNEL)
    (src / "in.cu").symlink_to("a.cu")
    (src / "out.cu").symlink_to(tmp_path / "outside.cu")
    (src / "dangling.cu").symlink_to("nowhere.cu")
    (src / "dirlink").symlink_to("sub")
    os.mkfifo(src / "pipe.cu")
    monkeypatch.chdir(tmp_path)
    named = [Path("src/a.cu"), Path("src/./sub/"), Path("src/sub/../a.cu"), Path("src/a.cu"), Path("src/in.cu"),
             Path("src/out.cu"), Path("src/dangling.cu"), Path("src/dirlink"), Path("src/pipe.cu")]
    root, files = collect(named, Settings())
    assert root == src
    got = {f.rel: (f.where, f.kind, f.link, f.skip) for f in files}
    assert got == {
        "a.cu": (str(src / "a.cu"), "cuda", None, None),
        "sub/b.cuh": (str(src / "sub" / "b.cuh"), "cuda", None, None),
        "sub/../a.cu": (str(src / "sub" / ".." / "a.cu"), "cuda", None, None),
        # a link named on the command line: the file it points to, wherever that is
        "in.cu": (str(src / "in.cu"), "cuda", None, None),
        "out.cu": (str(src / "out.cu"), "cuda", None, None),
        "dangling.cu": (str(src / "dangling.cu"), "cuda", "nowhere.cu", None),  # recreated as it is
        "dirlink": (str(src / "dirlink"), "other", "sub", None),
        "pipe.cu": (str(src / "pipe.cu"), "cuda", None, "not a regular file (a FIFO, socket or device)"),
    }


def test_the_current_folder_named_is_the_root(tmp_path, monkeypatch):
    (tmp_path / "k.cu").write_bytes(KERNEL)
    monkeypatch.chdir(tmp_path)
    for named in ([Path(".")], [Path("."), Path("k.cu")], [Path("")]):
        root, files = collect(named, Settings())
        assert (root, [(f.where, f.rel) for f in files]) == (tmp_path, [(str(tmp_path / "k.cu"), "k.cu")])


@pytest.mark.parametrize("name, says", [("missing.cu", "no such file or directory"),
                                        ("k.cu/inner.cu", "Not a directory")])
def test_a_named_path_that_is_not_there_is_a_clear_error(name, says, tmp_path, monkeypatch):
    (tmp_path / "k.cu").write_bytes(KERNEL)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(HipportError, match=f"^{name}: {says}$"):
        collect([Path("k.cu"), Path(name)], Settings())


def test_named_files_need_no_folder_patterns(tmp_path, monkeypatch):
    """The exclude patterns (one regex, compiled per run) match names met in a folder's walk:
    a pre-commit run that names files compiles none."""
    from hipport import files

    (tmp_path / "k.cu").write_bytes(KERNEL)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "m.cu").write_bytes(KERNEL)
    (tmp_path / "sub" / "build").mkdir()
    (tmp_path / "sub" / "build" / "gen.cu").write_bytes(KERNEL)
    files._matcher.cache_clear()
    built = []
    real = files._matcher.__wrapped__
    monkeypatch.setattr(files, "_matcher", lambda patterns: built.append(patterns) or real(patterns))
    _, found = collect([tmp_path / "k.cu"], Settings())
    assert [f.rel for f in found] == ["k.cu"] and built == []
    _, found = collect([tmp_path / "k.cu", tmp_path / "sub"], Settings())
    assert [f.rel for f in found] == ["k.cu", "sub/m.cu"] and built  # sub/build is left out
