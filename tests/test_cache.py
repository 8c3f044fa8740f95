"""The content-hash cache: a warm run gives the same bytes and report without re-porting, and
anything that could change a result (bytes, path, settings, hipport's code or tables) misses."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from hipport import cache as cache_mod
from hipport import pipeline
from hipport.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "saxpy_ops"


def run(*args) -> int:
    with pytest.raises(SystemExit) as exit_:
        main([str(a) for a in args])
    return exit_.value.code


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HIPPORT_CACHE_DIR", str(tmp_path / "cache"))
    forget_open_caches()
    yield tmp_path / "cache"
    forget_open_caches()


def forget_open_caches() -> None:
    """What a new process starts with: no Cache objects, no open database."""
    cache_mod.open_cache.cache_clear()
    cache_mod._open_store.cache_clear()


def count_ports(monkeypatch) -> list:
    calls = []
    real = pipeline.port_source

    def counting(*a, **k):
        calls.append(a[1])
        return real(*a, **k)

    monkeypatch.setattr("hipport.runner.port_source", counting)
    return calls


def test_warm_run_reuses_results_and_matches_cold(tmp_path, private_cache, monkeypatch, capsys):
    calls = count_ports(monkeypatch)
    assert run("port", EXAMPLE, "-o", tmp_path / "cold", "--report", tmp_path / "r1", "-j", "1") == 0
    cold_calls = len(calls)
    assert cold_calls > 0 and any(private_cache.rglob("*"))
    assert run("port", EXAMPLE, "-o", tmp_path / "warm", "--report", tmp_path / "r2", "-j", "1") == 0
    assert len(calls) == cold_calls  # nothing ported again
    assert tree_bytes(tmp_path / "cold") == tree_bytes(tmp_path / "warm")
    r1 = json.loads((tmp_path / "r1" / "report.json").read_text())
    r2 = json.loads((tmp_path / "r2" / "report.json").read_text())
    assert r1["files"] == r2["files"]


def test_settings_and_no_cache_miss(tmp_path, private_cache, monkeypatch, capsys):
    calls = count_ports(monkeypatch)
    assert run("port", EXAMPLE, "-o", tmp_path / "a", "-j", "1") == 0
    n = len(calls)
    assert run("port", EXAMPLE, "-o", tmp_path / "b", "-j", "1", "--launch-syntax", "hip") == 0
    assert len(calls) == 2 * n  # other settings: other keys
    assert run("port", EXAMPLE, "-o", tmp_path / "c", "-j", "1", "--no-cache") == 0
    assert len(calls) == 3 * n


def test_an_upgrade_invalidates_entries(tmp_path, private_cache, monkeypatch, capsys):
    calls = count_ports(monkeypatch)
    assert run("port", EXAMPLE, "-o", tmp_path / "a", "-j", "1") == 0
    n = len(calls)
    monkeypatch.setattr(cache_mod, "code_fingerprint", lambda: b"another hipport or other tables")
    forget_open_caches()
    assert run("port", EXAMPLE, "-o", tmp_path / "b", "-j", "1") == 0
    assert len(calls) == 2 * n
    # the first build's entries can never be hit again: they were dropped, not kept beside
    db = sqlite3.connect(private_cache / cache_mod._DB_NAME)
    assert db.execute("SELECT COUNT(*) FROM entries").fetchone()[0] == n


def test_parallel_workers_share_the_cache(tmp_path, private_cache, capsys):
    assert run("port", ROOT / "fixtures" / "port", "-o", tmp_path / "a", "-j", "2") == 0
    db = sqlite3.connect(private_cache / cache_mod._DB_NAME)
    stored = db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
    assert stored >= 16  # more files than the serial threshold: the pool's workers wrote them
    db.close()
    forget_open_caches()
    assert run("port", ROOT / "fixtures" / "port", "-o", tmp_path / "b", "-j", "2") == 0
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "b")


def test_a_broken_entry_is_a_miss(tmp_path, private_cache, capsys):
    assert run("port", EXAMPLE, "-o", tmp_path / "a", "-j", "1") == 0
    forget_open_caches()
    for entry in private_cache.rglob("*"):
        if entry.is_file():
            entry.write_bytes(b"not a pickle")
    assert run("port", EXAMPLE, "-o", tmp_path / "b", "-j", "1") == 0
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "b")
    # a readable cache file whose entries do not unpickle
    forget_open_caches()
    with sqlite3.connect(private_cache / cache_mod._DB_NAME) as db:
        assert db.execute("UPDATE entries SET value = x'8004deadbeef'").rowcount > 0
    assert run("port", EXAMPLE, "-o", tmp_path / "c", "-j", "1") == 0
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "c")


def test_check_uses_the_cache_too(tmp_path, private_cache, monkeypatch, capsys):
    from hipport import check

    calls = []
    real = check.check_source
    monkeypatch.setattr(check, "check_source", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    src = ROOT / "fixtures" / "check" / "warp-mask"
    first = run("check", src, "--format", "json", "--exit-zero", "-j", "1")
    out1 = capsys.readouterr().out
    n = len(calls)
    assert run("check", src, "--format", "json", "--exit-zero", "-j", "1") == first == 0
    assert len(calls) == n and capsys.readouterr().out == out1


def test_cache_dir_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("HIPPORT_CACHE_DIR", "off")
    assert cache_mod.cache_dir() is None
    monkeypatch.delenv("HIPPORT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "/x")
    assert cache_mod.cache_dir() == Path("/x/hipport")
