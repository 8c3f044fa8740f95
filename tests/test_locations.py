"""hipport.locations: where the cache folder is, and where compiled copies are read and written."""

import sys
from pathlib import Path

import pytest

from hipport.locations import cache_dir, copy_places, read_copy, write_copy

TAG = sys.implementation.cache_tag


def test_cache_dir_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("HIPPORT_CACHE_DIR", "off")
    assert cache_dir() is None
    monkeypatch.delenv("HIPPORT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "/x")
    assert cache_dir() == Path("/x/hipport")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HIPPORT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    return tmp_path / "cache"


def test_a_copy_goes_beside_the_bytecode_first_then_to_the_cache_folder(tmp_path, cache, monkeypatch):
    places = copy_places(str(tmp_path / "pkg"), "tables")
    beside = str(tmp_path / "pkg" / "__pycache__" / f"tables.{TAG}.marshal")
    assert places.read == places.write and places.read[0] == beside
    assert len(places.read) == 2 and places.read[1].startswith(str(cache / "compiled" / f"tables.{TAG}."))
    # another install's copy has a name of its own in the shared cache folder
    assert copy_places(str(tmp_path / "other"), "tables").read[1] != places.read[1]
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # the cache folder only is written
    assert copy_places(str(tmp_path / "pkg"), "tables")[:2] == ((places.read[1], beside), (places.read[1],))
    monkeypatch.setenv("HIPPORT_CACHE_DIR", "off")  # and without it, nothing is
    assert copy_places(str(tmp_path / "pkg"), "tables") == ((beside,), (), "", "")


def test_writing_falls_back_to_the_cache_folder_and_reading_takes_the_first_good_copy(tmp_path, cache,
                                                                                      monkeypatch):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__pycache__").write_text("a file where the folder would go\n")
    places = copy_places(str(tmp_path / "pkg"), "tables")
    assert write_copy(places, b"good")
    assert Path(places.write[1]).read_bytes() == b"good"
    assert [p.name for p in (cache / "compiled").iterdir()] == [Path(places.write[1]).name]  # no temporary left

    def read(place):
        try:
            data = Path(place).read_bytes()
        except OSError:
            return None
        return data if data == b"good" else None  # a stale copy reads as None

    assert read_copy(places, read) == b"good"
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / "compiled").write_text("a file where the folder would go\n")
    monkeypatch.setenv("HIPPORT_CACHE_DIR", str(blocked))
    assert not write_copy(copy_places(str(tmp_path / "pkg"), "tables"), b"newer")  # built again next time


def test_the_cache_folder_keeps_the_newest_copies(tmp_path, cache, monkeypatch):
    """Every install leaves copies named for it in the shared cache folder; a write there
    drops the oldest past KEPT_COPIES, whoever wrote them (a copy beside the bytecode is
    never pruned)."""
    import os

    from hipport import locations

    monkeypatch.setattr(locations, "KEPT_COPIES", 3)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    written = []
    for n in range(5):
        places = copy_places(str(tmp_path / f"install{n}"), "tables")
        assert write_copy(places, b"rows %d" % n)
        os.utime(places.write[0], ns=(n * 10**9, n * 10**9))  # written in this order
        written.append(places.write[0])
    left = sorted(str(p) for p in (cache / "compiled").iterdir())
    assert left == sorted(written[-3:])
    places = copy_places(str(tmp_path / "install9"), "tables")
    assert write_copy(places, b"newest")
    assert sorted(str(p) for p in (cache / "compiled").iterdir()) == sorted(written[-2:] + [places.write[0]])
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # beside the bytecode: no pruning there
    beside = copy_places(str(tmp_path / "install0"), "tables")
    assert write_copy(beside, b"x") and os.path.exists(beside.write[0])
    assert len(list((cache / "compiled").iterdir())) == 3


def test_hipport_keeps_its_own_copies_beside_its_package_folder(cache):
    """pip's uninstall removes what it installed and its bytecode: a copy inside hipport's
    folder kept `site-packages/hipport` after it, and `pip install -e .` then imported that
    leftover as a namespace package without hipport's code. Copies of hipport's own folders go
    in the __pycache__ next to the package folder, named for the folder."""
    from hipport import locations

    package = Path(locations.__file__).resolve().parent
    top = package.parent / "__pycache__"
    for folder, name, expected in ((package, "regexes", f"hipport.regexes.{TAG}.marshal"),
                                   (package / "tables", "tables", f"hipport.tables.tables.{TAG}.marshal"),
                                   (package / "report", "template-0123", f"hipport.report.template-0123.{TAG}.marshal")):
        places = copy_places(str(folder), name)
        assert places.write[0] == str(top / expected)
        assert not Path(places.write[0]).resolve().is_relative_to(package)


def test_a_run_writes_nothing_inside_an_installed_package_but_bytecode(tmp_path):
    """As pip installs it (a copy of the package in a site folder): after a port with a report,
    the only new files inside the package folder are Python's own bytecode, which pip's
    uninstall removes with the modules; the compiled tables, patterns and report templates
    are in the site folder's __pycache__, and a second run reads them there. Copies that an
    older build kept inside the package folder are removed as the new ones are written."""
    import os
    import shutil
    import subprocess

    root = Path(__file__).resolve().parents[1]
    site = tmp_path / "site"
    shutil.copytree(root / "hipport", site / "hipport", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(root / "mappings", site / "hipport" / "tables")  # where the wheel puts them
    installed = set((site / "hipport").rglob("*"))
    legacy = [site / "hipport" / "__pycache__" / f"regexes.{TAG}.marshal",
              site / "hipport" / "tables" / "__pycache__" / f"tables.{TAG}.marshal",
              site / "hipport" / "report" / "__pycache__" / f"template-0123456789abcdef.{TAG}.marshal"]
    for old in legacy:
        old.parent.mkdir(exist_ok=True)
        old.write_bytes(b"an older build's copy")
    env = dict(os.environ, PYTHONPATH=str(site), HIPPORT_CACHE_DIR="off")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for n in range(2):
        subprocess.run([sys.executable, "-m", "hipport", "port", str(root / "examples" / "saxpy_ops"),
                        "-o", str(tmp_path / f"out{n}"), "--report", str(tmp_path / f"report{n}")],
                       env=env, cwd=tmp_path, check=True, capture_output=True, timeout=300)
    added = set((site / "hipport").rglob("*")) - installed
    assert added and all(p.name == "__pycache__" or p.suffix == ".pyc" for p in added), sorted(added)
    kept = sorted(p.name for p in (site / "__pycache__").iterdir())
    assert any(name.startswith("hipport.tables.tables.") for name in kept)
    assert any(name.startswith("hipport.regexes.") for name in kept)
    assert any(name.startswith("hipport.report.template-") for name in kept), kept
    assert not any(old.exists() for old in legacy)
