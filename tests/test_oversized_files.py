"""Files larger than hipport ports (Settings.max_file_bytes: checkpoints, libraries, datasets
in a tree) are skipped and, with -o, copied as they are without being read into memory."""

import os
import stat

import pytest

from hipport import cache as cache_mod
from hipport import emit, runner
from hipport.config import Settings
from hipport.pipeline import port_source

MOST = 1 << 20
SETTINGS = Settings(max_file_bytes=MOST)


@pytest.fixture
def tree(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "weights.bin").write_bytes(b"\x89PT\0" + os.urandom(MOST))  # binary, past the limit
    (src / "table.cu").write_bytes(b"// \xc3\xa9\n" + b"int x = 1;\n" * (MOST // 10))  # text, past it
    (src / "k.cu").write_bytes(b"#include <cuda_runtime.h>\nvoid f() { cudaDeviceSynchronize(); }\n")
    os.chmod(src / "weights.bin", 0o640)
    return src


def port(src, out, cache_root=None, mode=runner.OUT):
    _, jobs = runner.plan([src], SETTINGS, mode, out, cache_root)
    return {o.record["source"]: o.record for o in runner.run(jobs, 1)}


def whole_reads(monkeypatch) -> list[int]:
    """The sizes of the files read whole from now on."""
    sizes: list[int] = []
    read = emit._read_to_end
    monkeypatch.setattr(emit, "_read_to_end", lambda fd, size: sizes.append(size) or read(fd, size))
    return sizes


def test_an_oversized_file_is_copied_as_it_is_without_being_read_whole(tree, tmp_path, monkeypatch):
    sizes = whole_reads(monkeypatch)
    records = port(tree, tmp_path / "out")
    assert max(sizes) <= MOST  # k.cu, not the two large files
    for name in ("weights.bin", "table.cu"):
        source, copy = tree / name, tmp_path / "out" / name
        assert copy.read_bytes() == source.read_bytes()
        assert stat.S_IMODE(copy.stat().st_mode) == stat.S_IMODE(source.stat().st_mode)
    assert records["k.cu"]["status"] == "ported"


def test_an_oversized_file_has_the_record_its_whole_bytes_would_give(tree, tmp_path):
    records = port(tree, tmp_path / "out")
    for name in ("weights.bin", "table.cu"):
        whole = port_source((tree / name).read_bytes(), name, "other" if name.endswith(".bin") else "cuda",
                            SETTINGS).result.record()
        assert records[name] == whole
    assert records["weights.bin"]["reason"] == "binary file (NUL bytes)"
    assert (records["table.cu"]["reason"], records["table.cu"]["encoding"]) == ("larger than 1 MiB", "utf-8")


def test_a_rerun_leaves_the_copy_alone_until_the_file_changes(tree, tmp_path):
    out = tmp_path / "out"
    port(tree, out)
    copy = out / "weights.bin"
    first = copy.stat()
    port(tree, out)
    assert (copy.stat().st_ino, copy.stat().st_ctime_ns) == (first.st_ino, first.st_ctime_ns)  # not written
    changed = b"\x89PT\0" + os.urandom(MOST)  # the same size, new bytes and time
    (tree / "weights.bin").write_bytes(changed)
    port(tree, out)
    assert copy.read_bytes() == changed


def test_a_link_in_the_output_is_replaced_not_written_through(tree, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"keep me")
    (out / "weights.bin").symlink_to(outside)
    port(tree, out)
    assert outside.read_bytes() == b"keep me"
    assert not (out / "weights.bin").is_symlink()
    assert (out / "weights.bin").read_bytes() == (tree / "weights.bin").read_bytes()


def test_in_place_leaves_an_oversized_file_untouched(tree, monkeypatch):
    before = {name: (tree / name).stat() for name in ("weights.bin", "table.cu")}
    sizes = whole_reads(monkeypatch)
    records = port(tree, None, mode=runner.IN_PLACE)
    assert max(sizes) <= MOST
    for name, st in before.items():
        assert (tree / name).stat().st_ctime_ns == st.st_ctime_ns
        assert records[name]["status"] == "skipped"


def test_a_warm_run_answers_for_an_oversized_file_without_opening_it(tree, tmp_path, monkeypatch):
    """The file's stamp joins the run's whole-tree entry: the next run serves every file
    from that one entry, the large ones unopened."""
    monkeypatch.setattr(cache_mod, "_SETTLED_NS", -(10**18))  # every file counts as settled
    out, cache_root = tmp_path / "out", tmp_path / "cache"
    cold = port(tree, out, cache_root)
    opened: list[str] = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda path, *a, **k: opened.append(os.fspath(path)) or real_open(path, *a, **k))
    warm = port(tree, out, cache_root)
    assert warm == cold
    assert not [p for p in opened if p.endswith(("weights.bin", "table.cu"))]


@pytest.mark.parametrize("cached", [False, True])
def test_check_skips_an_oversized_file_without_reading_it_whole(tree, tmp_path, monkeypatch, cached):
    from hipport import check

    sizes = whole_reads(monkeypatch)
    result = check.run_check([tree], SETTINGS, check.load_options([tree]),
                             cache_root=tmp_path / "cache" if cached else None)
    assert max(sizes) <= MOST
    by_path = {f.path: f for f in result.files}
    assert (by_path["table.cu"].status, by_path["table.cu"].reason) == ("skipped", "larger than 1 MiB")
    assert by_path["k.cu"].status == "checked"
