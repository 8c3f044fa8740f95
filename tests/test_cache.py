"""The content-hash cache: a warm run gives the same bytes and report without re-porting, and
anything that could change a result (bytes, path, settings, hipport's code or tables) misses."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
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
    cache_mod.close_stores()


def count_ports(monkeypatch) -> list:
    calls = []
    real = pipeline.port_source

    def counting(*a, **k):
        calls.append(a[1])
        return real(*a, **k)

    monkeypatch.setattr(pipeline, "port_source", counting)
    return calls


def test_warm_run_reuses_results_and_matches_cold(tmp_path, private_cache, monkeypatch, capsys):
    calls = count_ports(monkeypatch)
    assert run("port", EXAMPLE, "-o", tmp_path / "cold", "--report", tmp_path / "r1", "-j", "1") == 0
    cold_calls = len(calls)
    assert cold_calls > 0 and any(private_cache.rglob("*"))
    assert run("port", EXAMPLE, "-o", tmp_path / "warm", "--report", tmp_path / "r2", "-j", "1") == 0
    assert len(calls) == cold_calls  # nothing ported again
    assert tree_bytes(tmp_path / "cold") == tree_bytes(tmp_path / "warm")
    for name in ("report.json", "report.md", "report.html"):
        assert (tmp_path / "r1" / name).read_bytes() == (tmp_path / "r2" / name).read_bytes(), name


def test_a_warm_run_loads_no_table_and_starts_no_worker(tmp_path, private_cache, monkeypatch, capsys):
    """Served from the cache: the same summary as the cold run, with neither the tables, the
    pipeline's per-file work nor a process pool (`-j 2` over more files than SERIAL_BELOW)."""
    from hipport import loaders, parallel

    src = ROOT / "fixtures" / "port"
    assert run("port", src, "-o", tmp_path / "cold", "-j", "1") == 0
    cold = capsys.readouterr().err.replace(str(tmp_path / "cold"), "OUT")

    def refuse(*a, **k):
        raise AssertionError("a warm run needs none of this")

    forget_open_caches()
    monkeypatch.setattr(loaders, "tools", refuse)
    monkeypatch.setattr(parallel, "pool", refuse)
    monkeypatch.setattr(pipeline, "port_source", refuse)
    assert run("port", src, "-o", tmp_path / "warm", "-j", "2") == 0
    assert capsys.readouterr().err.replace(str(tmp_path / "warm"), "OUT") == cold
    assert "CUDA API references" in cold
    assert tree_bytes(tmp_path / "cold") == tree_bytes(tmp_path / "warm")


def test_a_warm_run_rewrites_outputs_that_differ(tmp_path, private_cache, capsys):
    out = tmp_path / "out"
    assert run("port", EXAMPLE, "-o", out, "-j", "1") == 0
    expected = tree_bytes(out)
    ported = next(rel for rel, data in expected.items() if b"hip" in data)
    same_size = bytearray(expected[ported])
    same_size[0] ^= 0x20  # one byte changed, size and mtime's second kept
    (out / ported).write_bytes(bytes(same_size))
    linked = next(rel for rel in expected if rel != ported)
    (out / linked).unlink()
    (out / linked).symlink_to(tmp_path / "elsewhere")  # never written through
    assert run("port", EXAMPLE, "-o", out, "-j", "1") == 0
    assert tree_bytes(out) == expected
    assert not (out / linked).is_symlink() and not (tmp_path / "elsewhere").exists()


def test_settings_and_no_cache_miss(tmp_path, private_cache, monkeypatch, capsys):
    calls = count_ports(monkeypatch)
    assert run("port", EXAMPLE, "-o", tmp_path / "a", "-j", "1") == 0
    n = len(calls)
    assert run("port", EXAMPLE, "-o", tmp_path / "b", "-j", "1", "--launch-syntax", "hip") == 0
    assert len(calls) == 2 * n  # other settings: other keys
    assert run("port", EXAMPLE, "-o", tmp_path / "c", "-j", "1", "--no-cache") == 0
    assert len(calls) == 3 * n


def test_no_cache_makes_no_keys_or_values(tmp_path, private_cache, monkeypatch, capsys):
    """With --no-cache nothing is stored, so no entry is serialized and no stat is keyed."""
    from hipport import results

    def refuse(*a, **k):
        raise AssertionError("made for a cache that is off")

    monkeypatch.setattr(results, "dumps", refuse)
    monkeypatch.setattr(cache_mod.Cache, "stat_key", refuse)
    monkeypatch.setattr(cache_mod.Cache, "key", refuse)
    assert run("port", EXAMPLE, "-o", tmp_path / "out", "-j", "1", "--no-cache") == 0
    assert tree_bytes(tmp_path / "out") and not private_cache.exists()


def test_an_upgrade_invalidates_entries(tmp_path, private_cache, monkeypatch, capsys):
    calls = count_ports(monkeypatch)
    assert run("port", EXAMPLE, "-o", tmp_path / "a", "-j", "1") == 0
    n = len(calls)
    stored = entry_count(private_cache)
    assert stored >= n
    monkeypatch.setattr(cache_mod, "code_fingerprint", lambda: b"another hipport or other tables")
    forget_open_caches()
    assert run("port", EXAMPLE, "-o", tmp_path / "b", "-j", "1") == 0
    assert len(calls) == 2 * n
    # the first build's entries can never be hit again: they were dropped, not kept beside
    assert entry_count(private_cache) == stored


def entry_count(cache: Path) -> int:
    with sqlite3.connect(cache / cache_mod._DB_NAME) as db:
        return db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]


def test_parallel_workers_share_the_cache(tmp_path, private_cache, capsys):
    assert run("port", ROOT / "fixtures" / "port", "-o", tmp_path / "a", "-j", "2") == 0
    assert entry_count(private_cache) >= 16  # more files than the serial threshold: the pool's workers wrote them
    forget_open_caches()
    assert run("port", ROOT / "fixtures" / "port", "-o", tmp_path / "b", "-j", "2") == 0
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "b")


def test_hits_served_here_and_misses_ported_by_workers_keep_job_order(tmp_path, private_cache, monkeypatch, capsys):
    """A partly warm `-j 2` run: the pool starts with no SQLite connection open in this process
    (none may cross a fork), and the outputs and report match a serial run without the cache."""
    from hipport import parallel

    src = tmp_path / "src"
    shutil.copytree(ROOT / "fixtures" / "port", src)
    assert run("port", src, "-o", tmp_path / "first", "-j", "2") == 0
    sources = sorted(p for p in src.rglob("*.cu") if p.is_file() and not p.is_symlink())
    for p in sources[::2]:
        p.write_bytes(p.read_bytes() + b"\nvoid more() { cudaDeviceSynchronize(); }\n")
    assert len(sources[::2]) >= parallel.SERIAL_BELOW
    real_pool, opened = parallel.pool, []

    def pool(*a, **k):
        started = real_pool(*a, **k)  # its workers fork at the first submit, right after
        opened.append([s for s in cache_mod._stores.values() if s is not None])
        return started

    monkeypatch.setattr(parallel, "pool", pool)
    assert run("port", src, "-o", tmp_path / "mixed", "-j", "2", "--report", tmp_path / "rm") == 0
    assert opened == [[]]
    assert run("port", src, "-o", tmp_path / "serial", "-j", "1", "--no-cache", "--report", tmp_path / "rs") == 0
    assert tree_bytes(tmp_path / "mixed") == tree_bytes(tmp_path / "serial")
    assert (tmp_path / "rm" / "report.json").read_bytes() == (tmp_path / "rs" / "report.json").read_bytes()


def test_a_broken_entry_is_a_miss(tmp_path, private_cache, monkeypatch, capsys):
    calls = count_ports(monkeypatch)
    assert run("port", EXAMPLE, "-o", tmp_path / "a", "--report", tmp_path / "ra", "-j", "1") == 0
    n = len(calls)
    forget_open_caches()
    for entry in private_cache.rglob("*"):
        if entry.is_file():
            entry.write_bytes(b"not a database")
    assert run("port", EXAMPLE, "-o", tmp_path / "b", "-j", "1") == 0
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "b")
    assert len(calls) == 2 * n
    # a readable cache file whose entries are not values at all
    forget_open_caches()
    with sqlite3.connect(private_cache / cache_mod._DB_NAME) as db:
        assert db.execute("UPDATE entries SET value = x'8004deadbeef'").rowcount > 0
    assert run("port", EXAMPLE, "-o", tmp_path / "c", "-j", "1") == 0
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "c")
    assert len(calls) == 3 * n
    # one byte flipped inside each value: it would still load, into wrong bytes
    forget_open_caches()
    with sqlite3.connect(private_cache / cache_mod._DB_NAME) as db:
        for key, value in db.execute("SELECT key, value FROM entries").fetchall():
            torn = bytearray(value)
            torn[len(torn) // 2] ^= 1
            db.execute("UPDATE entries SET value = ? WHERE key = ?", (bytes(torn), key))
    assert run("port", EXAMPLE, "-o", tmp_path / "d", "--report", tmp_path / "rd", "-j", "1") == 0
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "d")
    assert (tmp_path / "ra" / "report.json").read_bytes() == (tmp_path / "rd" / "report.json").read_bytes()
    assert len(calls) == 4 * n


def test_a_cache_file_of_an_older_build_is_replaced(tmp_path, private_cache, capsys):
    private_cache.mkdir()
    with sqlite3.connect(private_cache / cache_mod._DB_NAME) as db:
        db.execute("CREATE TABLE meta (name TEXT PRIMARY KEY, value BLOB)")
        db.execute("CREATE TABLE entries (key BLOB PRIMARY KEY, value BLOB) WITHOUT ROWID")
        db.execute("INSERT INTO meta VALUES ('code', x'00')")
        db.execute("INSERT INTO entries VALUES (x'01', x'02')")
    assert run("port", EXAMPLE, "-o", tmp_path / "a", "-j", "1") == 0
    db = sqlite3.connect(private_cache / cache_mod._DB_NAME)
    assert db.execute("SELECT COUNT(*) FROM entries WHERE key = x'01'").fetchone()[0] == 0
    assert "WITHOUT ROWID" not in db.execute("SELECT sql FROM sqlite_master WHERE name = 'entries'").fetchone()[0]
    assert db.execute("SELECT COUNT(*) FROM entries").fetchone()[0] > 0


def test_records_round_trip_through_the_cache_format():
    from hipport.findings import Finding
    from hipport.kernel_links import Kernel, Launch, Scan
    from hipport.results import FileResult, dumps, json_entry, loads

    finding = Finding("a.cu", 3, 1, 3, 9, "HP101", "dynamic-parallelism", "error", "high", "m", "s", "x")
    result = FileResult("a.cu", "a.hip", "cuda", "ported", changed=True, replacements=2,
                        by_library={"runtime": 2}, unmapped=({"name": "cuX", "count": 1, "line": 2, "reason": "r"},),
                        notes=("line 1: n",), defines=("CHECK",), lines=4, lines_changed=1, findings=(finding,),
                        kernels=Scan((Kernel("k", 1, True),), (Launch("k", 3, "<<<>>>"),)))
    spliced, record = loads(dumps((((0, 4, b"hip"), (9, 9, b"\n")), result.record())))
    assert spliced == ((0, 4, b"hip"), (9, 9, b"\n")) and record == result.record()
    assert loads(dumps(((), result.record())))[0] == ()  # an unchanged file
    assert json_entry(record) == result.to_json()
    assert result.to_json()["findings"] == [finding.to_json()]
    assert result.to_json()["renamed_from"] == "a.cu"
    for wrong in (((), {"source": "a.cu"}), ("text", result.record()), (b"ported", result.record()),
                  [(), result.record()], ((), result.record()), ((), ("a.cu",)),
                  ((), tuple(result.record().values()) + (1,))):
        with pytest.raises(ValueError):
            loads(cache_mod.marshal.dumps(wrong))


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


def test_a_partly_warm_check_analyzes_only_changed_files(tmp_path, private_cache, monkeypatch, capsys):
    """Hits are answered by the run itself; only the edited file is analyzed again (by a
    worker with -j 2), and the report equals a cold serial run's."""
    from hipport import check

    src = tmp_path / "src"
    shutil.copytree(ROOT / "fixtures" / "check", src)
    assert run("check", src, "--format", "json", "--exit-zero", "-j", "2") == 0
    before = capsys.readouterr().out
    edited = sorted(src.rglob("*.cu"))[3]
    edited.write_bytes(edited.read_bytes() + b"\n__global__ void added(unsigned m) { __shfl_sync(0xffffffff, m, 0); }\n")
    calls = []
    real = check.check_file
    monkeypatch.setattr(check, "check_file", lambda job: calls.append(job.path) or real(job))
    assert run("check", src, "--format", "json", "--exit-zero", "-j", "1") == 0
    warm = capsys.readouterr().out
    assert [Path(c).name for c in calls] == [edited.name]
    assert run("check", src, "--format", "json", "--exit-zero", "-j", "1", "--no-cache") == 0
    assert capsys.readouterr().out == warm != before  # the edit shows: no stale entry reused


@pytest.mark.parametrize("name", ["parse/_scan.c", "parse/_scan.cpython-311-x86_64-linux-gnu.so"])
def test_a_changed_c_scanner_invalidates_the_cache(tmp_path, monkeypatch, name):
    package = tmp_path / "hipport"
    (package / "parse").mkdir(parents=True)
    (package / "cli.py").write_text("x = 1\n")
    scanner = package / name
    scanner.write_bytes(b"one")
    monkeypatch.setattr(cache_mod, "_PACKAGE", str(package))
    try:
        before = _fingerprint()
        scanner.write_bytes(b"other")
        assert _fingerprint() != before
    finally:
        cache_mod.code_fingerprint.cache_clear()


def _fingerprint() -> bytes:
    """The code fingerprint worked out afresh (it is kept for the process)."""
    cache_mod.code_fingerprint.cache_clear()
    return cache_mod.code_fingerprint()


def test_the_code_fingerprint_follows_nested_sources_not_bytecode(tmp_path, monkeypatch):
    package = tmp_path / "hipport"
    (package / "rules" / "__pycache__").mkdir(parents=True)
    rule = package / "rules" / "warp.py"
    rule.write_text("x = 1\n")
    monkeypatch.setattr(cache_mod, "_PACKAGE", str(package))
    try:
        before = _fingerprint()
        (package / "rules" / "__pycache__" / "warp.cpython-311.pyc").write_bytes(b"bytecode")
        (package / "rules" / "__pycache__" / "stray.py").write_text("y = 2\n")
        assert _fingerprint() == before
        rule.write_text("x = 22\n")
        assert _fingerprint() != before
    finally:
        cache_mod.code_fingerprint.cache_clear()


def test_estimate_is_served_by_the_cache_port_filled(tmp_path, private_cache, monkeypatch, capsys):
    assert run("port", EXAMPLE, "-o", tmp_path / "out", "-j", "1") == 0
    capsys.readouterr()
    calls = count_ports(monkeypatch)
    assert run("estimate", EXAMPLE, "--format", "json", "-j", "1") == 0
    warm = capsys.readouterr().out
    assert calls == []  # every file's result came from the cache
    assert run("estimate", EXAMPLE, "--format", "json", "-j", "1", "--no-cache") == 0
    assert calls and capsys.readouterr().out == warm


_CHECK_AND_LIST_RULE_MODULES = """
import sys
from hipport.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(sorted(m for m in sys.modules if m.startswith("hipport.rules.")
             or m in ("_hashlib", "pickle", "importlib.resources", "click", "dataclasses", "inspect", "typing",
                      "tomllib")),
      file=sys.stderr)
"""


def _check_in_a_fresh_process(cache: Path, *args: str):
    import os
    import subprocess
    import sys

    env = dict(os.environ, HIPPORT_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", _CHECK_AND_LIST_RULE_MODULES, "check", *args],
                          env=env, capture_output=True, text=True, timeout=120)
    return done.stdout, eval(done.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("fmt", ["text", "sarif"])
def test_a_cached_check_imports_no_rule_module_until_it_needs_one(tmp_path, fmt):
    """Pre-commit runs `check` on a few files per commit: once they are cached, the rule
    modules (whose patterns take longest to load) stay unimported, and the output is the
    cold run's. SARIF lists the rules' docs, so that format imports them. The project's
    pyproject.toml holds no [tool.hipport] table, as most do."""
    import shutil

    src = tmp_path / "project" / "src"
    shutil.copytree(ROOT / "fixtures" / "check" / "warp-mask", src)
    (tmp_path / "project" / "pyproject.toml").write_text('[project]\nname = "ops"\n')
    cold, cold_modules = _check_in_a_fresh_process(tmp_path / "cache", str(src), "--format", fmt)
    warm, warm_modules = _check_in_a_fresh_process(tmp_path / "cache", str(src), "--format", fmt)
    assert "hipport.rules.warp" in cold_modules and cold.strip()
    assert "inspect" not in cold_modules or fmt == "sarif"  # loading the rules needs no inspect
    assert warm == cold
    assert ("hipport.rules.warp" in warm_modules) == (fmt == "sarif")
    # nor what only a cold run or SARIF's fingerprints need: OpenSSL's hashes, pickle, resources,
    # nor dataclasses (a frozen dataclass costs a millisecond to make) and the inspect it imports,
    # nor typing (3 ms: annotations name its types only for type checkers, see hipport/__init__)
    # and tomllib, which imports it (a pyproject.toml without "hipport" in it is not parsed)
    assert not {"_hashlib", "pickle", "importlib.resources", "click", "dataclasses", "inspect", "typing",
                "tomllib"} & set(warm_modules) or fmt == "sarif"


def test_rule_rows_are_the_registrys_and_kept_only_by_a_fresh_process(tmp_path, private_cache, monkeypatch):
    from hipport import check
    from hipport.rules import REGISTRY, all_rules

    cache = tmp_path / "rows"
    want = [(r.code, r.name, r.category, tuple(sorted(r.kinds))) for r in all_rules()]
    # This process has registered rules (tests may add their own), so nothing is kept ...
    assert [tuple(r) for r in check.rule_rows(cache)] == want
    assert not (cache / cache_mod._DB_NAME).exists()
    # ... while a process that has registered none keeps them, and finds them again.
    monkeypatch.setattr(check, "REGISTRY", {})
    assert [tuple(r) for r in check.rule_rows(cache)] == want
    assert (cache / cache_mod._DB_NAME).exists()
    monkeypatch.setattr(check, "all_rules", lambda: pytest.fail("the kept rows were not used"))
    assert [tuple(r) for r in check.rule_rows(cache)] == want
    assert REGISTRY  # the real registry was left alone


def test_an_unchanged_file_is_stored_without_its_bytes_and_served_whole(tmp_path, private_cache, monkeypatch):
    """A file the port leaves as it is costs its cache entry no copy of its bytes; the warm run
    still writes it whole."""
    import sqlite3 as sql

    src = tmp_path / "src"
    src.mkdir()
    plain = b"int add(int a, int b) { return a + b; }\n" * 50
    (src / "plain.cpp").write_bytes(plain)
    (src / "k.cu").write_bytes(b"#include <cuda_runtime.h>\nvoid f(void* p) { cudaFree(p); }\n")
    assert run("port", src, "-o", tmp_path / "cold", "-j", "1") == 0
    forget_open_caches()
    values = [v for (v,) in sql.connect(private_cache / cache_mod._DB_NAME).execute("SELECT value FROM entries")]
    assert not any(plain[:200] in v for v in values)  # marshal keeps bytes as they are
    assert any(b"hipFree" in v for v in values)  # a changed file's output is kept
    calls = count_ports(monkeypatch)
    assert run("port", src, "-o", tmp_path / "warm", "-j", "1") == 0
    assert calls == [] and tree_bytes(tmp_path / "warm") == tree_bytes(tmp_path / "cold")
    assert (tmp_path / "warm" / "plain.cpp").read_bytes() == plain


def _count_check_reads(monkeypatch) -> list:
    from hipport import check

    reads = []
    real = check.read_with_stat

    def read(where, *rest):
        if sys._getframe(2).f_code.co_name == "_window":  # read for the cache's keys, not by the analysis
            reads.append(where)
        return real(where, *rest)

    monkeypatch.setattr(check, "read_with_stat", read)
    return reads


def test_a_settled_file_is_known_by_its_stat(tmp_path, private_cache, monkeypatch, capsys):
    """A file left alone since the last check is answered from its stat: not read, not hashed;
    one written since (its times moved) is read and checked again."""
    monkeypatch.setattr(cache_mod, "_SETTLED_NS", -(10**18))  # every file counts as settled
    src = tmp_path / "src"
    shutil.copytree(ROOT / "fixtures" / "check" / "warp-mask", src)
    files = sorted(p for p in src.rglob("*") if p.is_file())
    assert run("check", src, "--format", "json", "--exit-zero", "-j", "1") == 0
    cold = capsys.readouterr().out
    reads = _count_check_reads(monkeypatch)
    assert run("check", src, "--format", "json", "--exit-zero", "-j", "1") == 0
    assert reads == [] and capsys.readouterr().out == cold
    edited = next(p for p in files if p.suffix == ".cu")
    text = edited.read_bytes()
    edited.write_bytes(text.replace(b"0xffffffff", b"0xFFFFFFFF"))  # the same size
    st = edited.stat()
    os.utime(edited, ns=(st.st_atime_ns, st.st_mtime_ns + 5 * 10**9))  # past any timestamp tick
    assert run("check", src, "--format", "json", "--exit-zero", "-j", "1") == 0
    assert [Path(r).name for r in reads] == [edited.name]
    assert capsys.readouterr().out != cold


def test_a_warm_diff_hashes_and_stores_nothing(tmp_path, private_cache, monkeypatch, capsys):
    """--diff reads every changed file for its bytes, but a file the cache knows by its stat is
    neither hashed again nor looked up twice, and its stamp is not stored again (51,000 files:
    a warm --diff 6.2-7.1 -> 4.7-5.3 s)."""
    monkeypatch.setattr(cache_mod, "_SETTLED_NS", -(10**18))  # every file counts as settled
    src = tmp_path / "src"
    shutil.copytree(EXAMPLE, src)
    assert run("port", src, "--diff", "-j", "1") == 0
    cold = capsys.readouterr().out
    assert cold.count("+++ b/") >= 3
    hashed, stored, looked_up = [], [], []
    real_key, real_put, real_get = cache_mod.Cache.key, cache_mod.Cache.put_many, cache_mod.Cache.get_many

    def key(self, data, rel):
        if "\0" not in rel:  # a file's bytes (stat keys and the run's key name what they are)
            hashed.append(rel)
        return real_key(self, data, rel)

    monkeypatch.setattr(cache_mod.Cache, "key", key)

    def put_many(self, items, *a, **k):
        items = list(items)
        stored.extend(items)
        return real_put(self, items, *a, **k)

    def get_many(self, keys, *a, **k):
        keys = list(keys)
        looked_up.extend(keys)
        return real_get(self, keys, *a, **k)

    monkeypatch.setattr(cache_mod.Cache, "put_many", put_many)
    monkeypatch.setattr(cache_mod.Cache, "get_many", get_many)
    forget_open_caches()
    assert run("port", src, "--diff", "-j", "1") == 0
    assert capsys.readouterr().out == cold
    assert hashed == [] and stored == []
    assert len(looked_up) == len(set(looked_up))


@pytest.mark.parametrize("cache_file", ["new", "known"])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_check_of_a_tree_the_cache_does_not_know_leaves_reading_to_the_analysis(
        tmp_path, private_cache, monkeypatch, capsys, cache_file, jobs):
    """As for a port: a first check of a tree reads no file in the run itself where the cache
    file is new, and stops looking files up after a batch without a hit where it holds another
    tree's entries. The analysis reads those files (in the workers with -j 2) and still
    leaves the entries and stamps that answer the next run without a read."""
    from hipport import check

    monkeypatch.setattr(cache_mod, "_SETTLED_NS", -(10**18))
    monkeypatch.setattr(check, "_BATCH", 4)
    if cache_file == "known":
        assert run("check", ROOT / "fixtures" / "check" / "warp-mask", "--exit-zero", "-j", "1") == 0
        capsys.readouterr()
        forget_open_caches()
    src = tmp_path / "src"
    src.mkdir()
    n = 24  # past parallel.SERIAL_BELOW: -j 2 forks workers
    for i in range(n):
        (src / f"k{i:02}.cu").write_bytes(b"__global__ void k%d(unsigned m) { __shfl_sync(0xffffffff, m, 0); }\n" % i)
    reads = _count_check_reads(monkeypatch)
    assert run("check", src, "--format", "json", "--exit-zero", "-j", jobs) == 0
    cold = capsys.readouterr().out
    assert len(reads) == (4 if cache_file == "known" else 0)  # one batch looked up in vain
    assert len(json.loads(cold)["findings"]) == n
    forget_open_caches()
    analyzed = []
    real = check.check_file
    monkeypatch.setattr(check, "check_file", lambda job: analyzed.append(job.path) or real(job))
    del reads[:]
    assert run("check", src, "--format", "json", "--exit-zero", "-j", "1") == 0
    assert reads == [] and analyzed == [] and capsys.readouterr().out == cold


def _count_port_reads(monkeypatch) -> list:
    """The files a port reads: its inputs, and the outputs it compares before writing."""
    from hipport import emit, runner

    reads = []
    real_read, real_holds = runner.read_with_stat, emit._holds
    monkeypatch.setattr(runner, "read_with_stat", lambda where, *rest: reads.append(where) or real_read(where, *rest))
    monkeypatch.setattr(emit, "_holds", lambda fd, st, *a: reads.append(st.st_ino) or real_holds(fd, st, *a))
    return reads


def test_a_warm_port_into_the_same_output_reads_no_file(tmp_path, private_cache, monkeypatch, capsys):
    """Inputs and outputs known by their stat (an output as the last run wrote it) are neither
    read nor compared; an input or output changed since, even with its size and modification
    time put back, is read again and its output rewritten; a chmod reaches the output."""
    monkeypatch.setattr(cache_mod, "_SETTLED_NS", -(10**18))  # every file counts as settled
    src, out = tmp_path / "src", tmp_path / "out"
    shutil.copytree(EXAMPLE, src)
    assert run("port", src, "-o", out, "--report", tmp_path / "r1", "-j", "1") == 0
    expected = tree_bytes(out)
    reads = _count_port_reads(monkeypatch)
    assert run("port", src, "-o", out, "--report", tmp_path / "r2", "-j", "1") == 0
    assert reads == [] and tree_bytes(out) == expected
    assert (tmp_path / "r1" / "report.json").read_bytes() == (tmp_path / "r2" / "report.json").read_bytes()

    def edit_keeping_size_and_mtime(path: Path) -> None:
        st = path.stat()
        data = bytearray(path.read_bytes())
        data[0] ^= 0x20
        path.write_bytes(bytes(data))
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # the change time still moves

    ported = next(rel for rel, data in expected.items() if b"hip" in data and rel.endswith((".cu", ".cpp")))
    edit_keeping_size_and_mtime(out / ported)
    assert run("port", src, "-o", out, "-j", "1") == 0
    assert tree_bytes(out) == expected and len(reads) == 2  # that input, and that output
    edited_input = src / ported
    edit_keeping_size_and_mtime(edited_input)
    del reads[:]
    assert run("port", src, "-o", out, "-j", "1") == 0
    assert reads[:1] == [str(edited_input)] and (out / ported).read_bytes()[0] != expected[ported][0]
    os.chmod(src / ported, 0o755)
    assert run("port", src, "-o", out, "-j", "1") == 0
    assert (out / ported).stat().st_mode & 0o777 == 0o755
    del reads[:]
    assert run("estimate", src, "-j", "1") == 0  # a dry run needs no file's bytes either
    assert reads == []


@pytest.mark.parametrize("cache_file", ["new", "known"])
def test_a_tree_the_cache_does_not_know_stops_being_looked_up(tmp_path, private_cache, monkeypatch, capsys,
                                                             cache_file):
    """A first port of a tree finds neither stamps nor entries: after a few batches its files
    are no longer statted and read to look them up (the porting reads them), and the run still
    leaves what the next run looks up. In a cache file this run made (`new`), nothing is
    looked up at all."""
    from hipport import runner

    monkeypatch.setattr(cache_mod, "_SETTLED_NS", -(10**18))
    if cache_file == "known":  # the cache file exists, with another tree's entries
        assert run("port", EXAMPLE, "-o", tmp_path / "example", "-j", "1") == 0
        forget_open_caches()
    src = tmp_path / "src"
    src.mkdir()
    n = 3 * runner.GIVE_UP_AFTER
    for i in range(n):
        (src / f"k{i}.cu").write_bytes(b"void f%d(void* p) { cudaFree(p); }\n" % i)
    statted, unread = [], []
    real_stat, real_unread = runner._stat, runner._unread
    monkeypatch.setattr(runner, "_stat", lambda path, follow=True: statted.append(path) or real_stat(path, follow))
    monkeypatch.setattr(runner, "_unread", lambda job: unread.append(job) or real_unread(job))
    assert run("port", src, "-o", tmp_path / "cold", "-j", "1") == 0
    looked_up = runner.GIVE_UP_AFTER if cache_file == "known" else 0
    assert len(statted) == looked_up and len(unread) == n - looked_up
    forget_open_caches()
    reads = _count_port_reads(monkeypatch)
    del unread[:]
    assert run("port", src, "-o", tmp_path / "cold", "-j", "1") == 0
    assert reads == [] and unread == []  # the warm run looks every file up, and reads none
    assert run("port", src, "-o", tmp_path / "other", "-j", "2") == 0  # entries, no stamps, for OUT
    assert unread == [] and tree_bytes(tmp_path / "other") == tree_bytes(tmp_path / "cold")


@pytest.mark.parametrize("cache", ["on", "off"])  # off: the porting reads every file itself
def test_a_file_that_cannot_be_read_fails_alone(tmp_path, private_cache, monkeypatch, capsys, cache):
    from hipport import runner

    src = tmp_path / "src"
    src.mkdir()
    for i in range(3):
        (src / f"k{i}.cu").write_bytes(b"void f(void* p) { cudaFree(p); }\n")
    real = runner.read_with_stat

    def vanished(where, *rest):
        if where.endswith("k1.cu"):
            raise FileNotFoundError(2, "No such file or directory")
        return real(where, *rest)

    monkeypatch.setattr(runner, "read_with_stat", vanished)
    extra = ["--no-cache"] if cache == "off" else []
    run("port", src, "-o", tmp_path / "out", "-j", "1", "--report", tmp_path / "r", *extra)
    files = {f["source"]: f for f in json.loads((tmp_path / "r" / "report.json").read_text())["files"]}
    assert files["k1.cu"]["status"] == "failed" and "cannot read" in files["k1.cu"]["reason"]
    assert files["k0.cu"]["status"] == files["k2.cu"]["status"] == "ported"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["k0.cu", "k2.cu"]


def test_a_port_in_place_reads_only_what_it_may_rewrite(tmp_path, private_cache, monkeypatch, capsys):
    """In place, a file the port leaves unchanged and that is known by its stat is not read."""
    monkeypatch.setattr(cache_mod, "_SETTLED_NS", -(10**18))
    src = tmp_path / "src"
    shutil.copytree(EXAMPLE, src)
    assert run("port", src, "--in-place", "-j", "1") == 0  # ports the files
    ported = tree_bytes(src)
    assert run("port", src, "--in-place", "-j", "1") == 0  # finds nothing left to change
    reads = _count_port_reads(monkeypatch)
    assert run("port", src, "--in-place", "-j", "1") == 0
    assert reads == [] and tree_bytes(src) == ported


def test_a_file_written_just_now_is_always_read(tmp_path, private_cache, monkeypatch, capsys):
    """Within the settling time an edit may keep a file's times (one timestamp tick), so such a
    file is read on every run; its unchanged bytes are still answered from the cache."""
    from hipport import check

    src = tmp_path / "src"
    shutil.copytree(ROOT / "fixtures" / "check" / "warp-mask", src)
    assert run("check", src, "--format", "json", "--exit-zero", "-j", "1") == 0
    cold = capsys.readouterr().out
    reads = _count_check_reads(monkeypatch)
    analyzed = []
    real = check.check_file
    monkeypatch.setattr(check, "check_file", lambda job: analyzed.append(job.path) or real(job))
    assert run("check", src, "--format", "json", "--exit-zero", "-j", "1") == 0
    assert len(reads) == len([p for p in src.rglob("*") if p.is_file()]) and analyzed == []
    assert capsys.readouterr().out == cold


def test_the_port_cache_keeps_splices_not_ported_files(tmp_path, private_cache):
    """A cached entry holds what changes the input (its bytes are the key's), and a warm run
    rebuilds the very bytes the cold one wrote."""
    from hipport import results

    src = tmp_path / "src"
    src.mkdir()
    kernel = b"#include <cuda_runtime.h>\n__global__ void k(float* p) { p[0] = 1; }\n" + b"// pad\n" * 400 \
        + b"int main() { float* p; cudaMalloc(&p, 4); k<<<1, 1>>>(p); cudaFree(p); }\r\n"
    (src / "k.cu").write_bytes(kernel)
    (src / "same.cpp").write_bytes(b"int f() { return 1; }\n")
    assert run("port", src, "-o", tmp_path / "cold", "-j", "1") == 0
    forget_open_caches()
    with sqlite3.connect(private_cache / cache_mod._DB_NAME) as db:
        values = [v for (v,) in db.execute("SELECT value FROM entries")]
    spliced = {}
    for value in values:
        try:  # the cache also holds what is not a file's entry (the target HIP, ...)
            s, record = results.loads(cache_mod._unseal(value))
        except (ValueError, EOFError, TypeError):
            continue
        spliced[record["source"]] = s
    assert spliced["same.cpp"] == () and 0 < len(spliced["k.cu"]) < 10
    assert sum(len(text) for _, _, text in spliced["k.cu"]) < 100  # not the 3 KB file
    assert run("port", src, "-o", tmp_path / "warm", "-j", "1") == 0
    for name in ("k.cu", "same.cpp"):
        assert (tmp_path / "warm" / name).read_bytes() == (tmp_path / "cold" / name).read_bytes()
    assert b"hipMalloc" in (tmp_path / "warm" / "k.cu").read_bytes()


def test_the_fingerprint_follows_the_tables_without_reading_them(tmp_path, monkeypatch):
    import shutil

    from hipport import table_files

    tables = tmp_path / "tables"
    shutil.copytree(table_files.table_dir(), tables, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(table_files, "table_dir", lambda: tables)
    before = table_files.tables_stamp()
    assert b"runtime.tsv:" in before and b"build_files/cmake.tsv:" in before
    real_read = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: pytest.fail(f"read {self}") if self.suffix == ".tsv" else real_read(self))
    assert table_files.tables_stamp() == before
    monkeypatch.setattr(Path, "read_bytes", real_read)
    with open(tables / "overrides.tsv", "a") as f:
        f.write("cudaFooX\thipFooX\tadded\n")
    assert table_files.tables_stamp() != before


_PORT_AND_LIST_MODULES = """
import sys
from hipport.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(sorted(sys.modules), file=sys.stderr)
"""


def test_a_warm_port_imports_only_what_serving_the_cache_needs(tmp_path):
    """A warm run is start-up, reads and cache lookups: no porting code, no tree-sitter, and
    none of the modules only a cold run, a report, --diff, --in-place or SARIF needs."""
    import os
    import subprocess
    import sys

    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_bytes(b"__global__ void k(float* p) { p[0] = 1; }\nint main() { cudaDeviceSynchronize(); }\n")
    (src / "CMakeLists.txt").write_bytes(b"project(p CUDA)\nadd_executable(p k.cu)\n")
    env = dict(os.environ, HIPPORT_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))

    def run():
        done = subprocess.run([sys.executable, "-c", _PORT_AND_LIST_MODULES, "port", str(src), "-o", str(tmp_path / "out")],
                              env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
        return set(eval(done.stderr.strip().splitlines()[-1]))

    cold, warm = run(), run()
    assert "hipport.pipeline" in cold and "tree_sitter" in cold
    assert "dataclasses" not in cold  # making a frozen dataclass costs a millisecond a class
    unwanted = {"hipport.pipeline", "tree_sitter", "hipport.rules.warp", "_hashlib", "pickle", "tempfile",
                "difflib", "json", "csv", "shutil", "tomllib", "importlib.resources", "click", "hipport.mappings",
                "hipport.parse.lexer", "hipport.rules", "dataclasses", "inspect",
                "hipport.kernels", "hipport.regexes",  # the summary counts kernels from the records
                "typing",  # annotations name its types only for type checkers (hipport/__init__)
                "sqlite3", "datetime"}  # the cache talks to _sqlite3: the package adds only adapters
    assert unwanted & warm == set() and "_sqlite3" in warm


def test_a_cached_estimate_or_report_imports_no_rule_module(tmp_path):
    """An estimate (and a port's report) names the rules that found something, with their
    docs: kept in the cache beside the rules' rows, so a run whose files are all cached loads
    neither the rule modules nor tree-sitter to write them, and writes what a cold run does."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, HIPPORT_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))

    def run(*args):
        done = subprocess.run([sys.executable, "-c", _PORT_AND_LIST_MODULES, *map(str, args)],
                              env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
        return done.stdout, set(eval(done.stderr.strip().splitlines()[-1]))

    loaded = {"hipport.rules.warp", "tree_sitter", "inspect", "hipport.loaders"}
    cold, cold_modules = run("estimate", EXAMPLE, "--format", "json", "-j", "1")
    warm, warm_modules = run("estimate", EXAMPLE, "--format", "json", "-j", "1")
    assert json.loads(warm)["rules"] and warm == cold and loaded <= cold_modules
    assert loaded & warm_modules == set()
    first, second = tmp_path / "r1", tmp_path / "r2"  # a folder of its own: written, not kept (write_new)
    run("port", EXAMPLE, "-o", tmp_path / "out", "--report", first, "-j", "1")
    _, modules = run("port", EXAMPLE, "-o", tmp_path / "out", "--report", second, "-j", "1")
    for name in ("report.json", "report.md", "report.html"):
        assert (second / name).read_bytes() == (first / name).read_bytes(), name
    assert loaded & modules == {"inspect"}  # jinja2's, for report.md and report.html
    _, modules = run("port", EXAMPLE, "-o", tmp_path / "out", "--report", first, "-j", "1")
    assert "jinja2" not in modules and "hipport.report.html" not in modules  # kept as it was


def _count_serves(monkeypatch) -> list:
    """The batches served file by file (runner._serve): none when the run's entry serves it."""
    from hipport import runner

    batches = []
    real = runner._serve
    monkeypatch.setattr(runner, "_serve", lambda batch, lookups: batches.append(len(batch)) or real(batch, lookups))
    return batches


def test_a_warm_run_is_served_by_the_runs_entry_until_a_file_changes(tmp_path, private_cache, monkeypatch, capsys):
    """Every file as the last run left it: one entry serves the run, with the same outputs and
    report. An input or output changed since, or an output gone, sends the run through the
    per-file entries, which port what changed; the run after is served whole again."""
    monkeypatch.setattr(cache_mod, "_SETTLED_NS", -(10**18))  # every file counts as settled
    src, out = tmp_path / "src", tmp_path / "out"
    shutil.copytree(EXAMPLE, src)
    assert run("port", src, "-o", out, "--report", tmp_path / "r1", "-j", "1") == 0
    expected = tree_bytes(out)
    batches, reads, calls = _count_serves(monkeypatch), _count_port_reads(monkeypatch), count_ports(monkeypatch)
    assert run("port", src, "-o", out, "--report", tmp_path / "r2", "-j", "1") == 0
    assert batches == reads == calls == [] and tree_bytes(out) == expected
    assert (tmp_path / "r1" / "report.json").read_bytes() == (tmp_path / "r2" / "report.json").read_bytes()
    ported = next(rel for rel, data in expected.items() if b"hip" in data and rel.endswith((".cu", ".cpp")))
    for change in ("input", "output", "removed"):
        if change == "input":
            (src / ported).write_bytes((src / ported).read_bytes() + b"\n// cudaFree\n")
        elif change == "output":
            (out / ported).write_bytes(b"overwritten")
        else:
            (out / ported).unlink()
        assert run("port", src, "-o", out, "-j", "1") == 0
        assert batches and (out / ported).read_bytes() == expected[ported] + b"\n// cudaFree\n"
        del batches[:], calls[:]
        assert run("port", src, "-o", out, "-j", "1") == 0
        assert batches == calls == []


def test_a_runs_entries_hold_a_bounded_number_of_files_and_serve_it_together(tmp_path, private_cache, monkeypatch,
                                                                             capsys):
    """A run's records go into entries of _Tree.PART files each (one entry for 51,000 files
    was 45 MB, held three times over while written): together they serve the next run whole;
    without one of them the run goes through the per-file entries, with the same outputs."""
    from hipport import runner

    monkeypatch.setattr(cache_mod, "_SETTLED_NS", -(10**18))
    monkeypatch.setattr(runner._Tree, "PART", 3)
    src, out = tmp_path / "src", tmp_path / "out"
    shutil.copytree(EXAMPLE, src)
    kept, real_put = [], cache_mod.Cache.put

    def put(self, key, value):
        kept.append((key, len(value[0])))
        return real_put(self, key, value)

    monkeypatch.setattr(cache_mod.Cache, "put", put)
    assert run("port", src, "-o", out, "-j", "1") == 0
    files = sum(1 for p in src.rglob("*") if p.is_file())
    assert [n for _, n in kept] == [3] * (files // 3) + ([files % 3] if files % 3 else [])
    expected = tree_bytes(out)
    batches = _count_serves(monkeypatch)
    assert run("port", src, "-o", out, "-j", "1") == 0
    assert batches == [] and tree_bytes(out) == expected
    forget_open_caches()
    with sqlite3.connect(next(private_cache.rglob("*.sqlite3"))) as db:
        db.execute("DELETE FROM entries WHERE key = ?", (kept[-1][0],))
    assert run("port", src, "-o", out, "-j", "1") == 0
    assert batches and tree_bytes(out) == expected


def test_the_runs_entry_is_for_those_files_going_there(tmp_path, private_cache, monkeypatch, capsys):
    """The same files under other relative paths, or into another folder, are another run:
    its outputs are written where it says."""
    monkeypatch.setattr(cache_mod, "_SETTLED_NS", -(10**18))
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "k.cu").write_bytes(b"void f(void* p) { cudaFree(p); }\n")
    out = tmp_path / "out"
    assert run("port", src, "-o", out, "-j", "1") == 0
    assert run("port", src / "sub", "-o", out, "-j", "1") == 0
    ported = (out / "sub" / "k.cu").read_bytes()
    assert b"hipFree(p)" in ported and (out / "k.cu").read_bytes() == ported
    assert run("port", src, "-o", tmp_path / "other", "-j", "1") == 0
    assert tree_bytes(tmp_path / "other") == {"sub/k.cu": ported}


def test_no_runs_entry_while_a_file_is_unsettled(tmp_path, private_cache, monkeypatch, capsys):
    """A file written within the settling time may change without its stat showing it: a run
    that holds one is not kept whole, and the next run looks its files up one by one."""
    src = tmp_path / "src"
    shutil.copytree(EXAMPLE, src)  # just written: not settled
    assert run("port", src, "-o", tmp_path / "out", "-j", "1") == 0
    batches = _count_serves(monkeypatch)
    assert run("port", src, "-o", tmp_path / "out", "-j", "1") == 0
    assert batches


def _fill(root: Path, count: int, size: int) -> list[bytes]:
    """`count` entries of `size` bytes, written one after another; their keys, oldest first."""
    cache = cache_mod.Cache(root, "port", ("bound",))
    keys = [cache.key(str(i).encode(), "f.cu") for i in range(count)]
    for i, key in enumerate(keys):
        cache.put(key, bytes([i % 256]) * size)
    return keys


def _reopened(root: Path) -> cache_mod.Cache:
    forget_open_caches()  # the bound is kept when a process opens the store
    return cache_mod.Cache(root, "port", ("bound",))


def test_a_cache_past_its_bound_drops_its_oldest_entries(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_mod, "MAX_BYTES", 256 * 1024)
    root = tmp_path / "cache"
    keys = _fill(root, 200, 4000)  # 800 KB of entries
    store = cache_mod._open_store(root)
    assert store._used() > cache_mod.MAX_BYTES  # nothing dropped while this process writes
    cache = _reopened(root)
    used = cache_mod._open_store(root)._used()
    assert used <= cache_mod.MAX_BYTES * cache_mod.KEEP
    kept = cache.get_many(keys)
    assert keys[-1] in kept and keys[0] not in kept
    # what is kept is the newest entries, whole
    survivors = [i for i, key in enumerate(keys) if key in kept]
    assert survivors == list(range(survivors[0], 200))
    # no more than needed: a quarter at a time, so at least 3/4 of what may stay (equal entries)
    assert len(survivors) * 4000 >= 0.6 * cache_mod.MAX_BYTES * cache_mod.KEEP
    assert kept[keys[-1]] == bytes([199]) * 4000
    forget_open_caches()


def test_an_entry_written_again_counts_as_new_and_a_cache_under_its_bound_keeps_all(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    keys = _fill(root, 200, 4000)
    cache = cache_mod.Cache(root, "port", ("bound",))
    cache.put(keys[0], b"again")  # the oldest entry, rewritten: now the newest
    assert len(_reopened(root).get_many(keys)) == 200  # under the default bound: all kept
    monkeypatch.setattr(cache_mod, "MAX_BYTES", 256 * 1024)
    kept = _reopened(root).get_many(keys)
    assert kept[keys[0]] == b"again" and keys[1] not in kept
    forget_open_caches()


def test_a_pruned_cache_still_gives_the_same_port(tmp_path, private_cache, monkeypatch):
    assert run("port", EXAMPLE, "-o", tmp_path / "cold", "-j", "1") == 0
    monkeypatch.setattr(cache_mod, "MAX_BYTES", 1)  # every entry is dropped as the store opens
    forget_open_caches()
    calls = count_ports(monkeypatch)
    assert run("port", EXAMPLE, "-o", tmp_path / "again", "-j", "1") == 0
    assert calls  # ported again, not served
    assert tree_bytes(tmp_path / "again") == tree_bytes(tmp_path / "cold")


def test_a_renaming_run_is_served_from_the_cache_in_a_later_process(tmp_path):
    """--rename's files key the cache by their sorted digest: a set's repr follows the hash
    seed, which each process draws anew, so every run made new keys and ported it all again."""
    import subprocess
    import sys

    env = dict(os.environ, HIPPORT_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))

    def port(seed: str) -> int:
        subprocess.run([sys.executable, "-m", "hipport", "port", str(ROOT / "fixtures" / "port"), "-o",
                        str(tmp_path / "out"), "--rename", "-j", "1"],
                       env=dict(env, PYTHONHASHSEED=seed), capture_output=True, timeout=300, check=True)
        with sqlite3.connect(tmp_path / "cache" / "cache.sqlite3") as db:
            return db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]

    first = port("1")
    assert first > 0 and port("2") == first  # nothing ported, so nothing stored again


def test_the_renamed_files_cross_to_a_worker_by_number(tmp_path, private_cache):
    """Every job holds the run's Renamed; a batch sent to a `-j` worker (forked after it was
    made) carries its number, not its paths, and the ported tree is -j 1's."""
    import pickle

    from hipport.config import Settings
    from hipport.runner import OUT, Renamed, plan

    root, jobs = plan([ROOT / "fixtures" / "port"], Settings(rename=True), OUT, tmp_path / "x")
    renamed = jobs[0].renamed
    assert isinstance(renamed, Renamed) and len(renamed) > 5 and all(j.renamed is renamed for j in jobs)
    assert pickle.loads(pickle.dumps(jobs)) == jobs
    assert pickle.loads(pickle.dumps(renamed)) is renamed
    assert len(pickle.dumps(renamed)) < 64 < len(pickle.dumps(frozenset(renamed)))
    assert run("port", ROOT / "fixtures" / "port", "-o", tmp_path / "one", "--rename", "-j", "1") == 0
    forget_open_caches()
    assert run("port", ROOT / "fixtures" / "port", "-o", tmp_path / "two", "--rename", "-j", "2", "--no-cache") == 0
    assert tree_bytes(tmp_path / "one") == tree_bytes(tmp_path / "two")


def _kernels(src: Path, count: int, stem: str = "k") -> None:
    src.mkdir(parents=True)
    for i in range(count):
        (src / f"{stem}{i:02d}.cu").write_bytes(b"void f%d(void* p) { cudaFree(p); }\n" % i)


def test_the_parts_before_a_changed_file_are_served_by_their_entries(tmp_path, private_cache, monkeypatch, capsys):
    """The run's entries answer a part at a time: a file changed in the last part leaves the
    parts before it served by their entries, and only the files from that part on go through
    the per-file entries; the outputs are a cold run's, and the run after is served whole."""
    from hipport import runner

    monkeypatch.setattr(cache_mod, "_SETTLED_NS", -(10**18))
    monkeypatch.setattr(runner._Tree, "PART", 3)
    src, out = tmp_path / "src", tmp_path / "out"
    _kernels(src, 10)  # parts of 3, 3, 3 and 1 files
    assert run("port", src, "-o", out, "-j", "1") == 0
    (src / "k09.cu").write_bytes(b"void g(void* p) { cudaFreeHost(p); }\n")
    capsys.readouterr()
    batches = _count_serves(monkeypatch)
    assert run("port", src, "-o", out, "-j", "1") == 0
    assert batches == [1]
    printed = capsys.readouterr().err
    assert printed.startswith("10 files: 10 changed")
    assert run("port", src, "-o", tmp_path / "cold", "-j", "1", "--no-cache") == 0
    assert tree_bytes(out) == tree_bytes(tmp_path / "cold") and b"hipHostFree(p)" in (out / "k09.cu").read_bytes()
    capsys.readouterr()
    del batches[:]
    assert run("port", src, "-o", out, "-j", "1") == 0
    assert batches == [] and capsys.readouterr().err == printed


@pytest.mark.parametrize("command", ["port", "port --report", "estimate"])
def test_a_port_holds_a_part_of_its_records_at_a_time(tmp_path, private_cache, monkeypatch, capsys, command):
    """Cold or warm, a port counts its records as they come and keeps none (with --report, and
    in an estimate, each file's entry is made as its record comes); the run's entries hold one
    part's records, and the pipeline a batch's (a tree of 51,000 files held 190 MB of records,
    and its report, or estimate, both the records and the entries)."""
    import gc

    from hipport import runner
    from hipport.report import model

    monkeypatch.setattr(cache_mod, "_SETTLED_NS", -(10**18))
    monkeypatch.setattr(runner._Tree, "PART", 4)
    monkeypatch.setattr(runner, "BATCH", 4)
    src, out = tmp_path / "src", tmp_path / "out"
    _kernels(src, 24, "held")
    held = []
    real_add = model.Totals.add

    def add(self, record, *stamp):
        real_add(self, record, *stamp)
        if self.files % 5 == 0:  # records, not report entries: only records carry "defines"
            held.append(sum(1 for o in gc.get_objects()
                            if type(o) is dict and "defines" in o and o.get("source", "").startswith("held")))

    monkeypatch.setattr(model.Totals, "add", add)
    args = {"port": ["port", src, "-o", out], "port --report": ["port", src, "-o", out, "--report", tmp_path / "report"],
            "estimate": ["estimate", src, "--format", "json"]}[command]
    for _ in ("cold", "warm"):
        assert run(*args, "-j", "1") == 0
        assert len(held) == 4 and 0 < max(held) <= 4 + 4, held  # a part and a batch at most
        del held[:]
        printed = capsys.readouterr()
        if command == "estimate":
            assert len(json.loads(printed.out)["files"]) == 24
        else:
            assert "24 files: 24 changed" in printed.err
    if command == "port --report":
        assert len(json.loads((tmp_path / "report" / "report.json").read_text())["files"]) == 24


def test_a_report_folder_that_holds_the_report_is_left_as_it_is(tmp_path, private_cache, monkeypatch, capsys):
    """A warm `port --report` into the folder an earlier run with the same inputs and options
    wrote: the reports there are neither rendered nor written again (no jinja2), and the run
    says what it said. Anything that changes the report renders it again: a file's bytes (its
    stats), a report file edited or gone, the settings, the estimate's rates, --no-cache, and a
    file the report quotes whose stats cannot be trusted yet."""
    from hipport.report import html
    from hipport.report import model as report_model

    monkeypatch.setattr(cache_mod, "_SETTLED_NS", -(10**18))  # every file counts as settled
    src, out, rep = tmp_path / "src", tmp_path / "out", tmp_path / "rep"
    shutil.copytree(EXAMPLE, src)
    renders = []
    monkeypatch.setattr(html, "render", lambda *a, real=html.render: renders.append(1) or real(*a))
    names = report_model.REPORT_FILES

    def port(*extra) -> tuple[str, dict[str, tuple[int, int]]]:
        del renders[:]
        assert run("port", src, "-o", out, "--report", rep, "-j", "1", *extra) == 0
        said = capsys.readouterr().err
        return said, {n: (os.stat(rep / n).st_ino, os.stat(rep / n).st_mtime_ns) for n in names}

    def same_as_fresh(*extra) -> None:  # what a run without the cache writes
        assert run("port", src, "-o", tmp_path / "o2", "--report", tmp_path / "fresh", "--no-cache", *extra) == 0
        capsys.readouterr()
        for n in names:
            assert (rep / n).read_bytes() == (tmp_path / "fresh" / n).read_bytes(), n

    said, stats = port()
    assert renders and "findings:" in said
    again, kept = port()
    assert renders == [] and kept == stats and again == said
    same_as_fresh()

    quoted = next(p for p in sorted(src.rglob("*.cu")) if b"<<<" in p.read_bytes())  # findings quote it
    quoted.write_bytes(quoted.read_bytes().replace(b"\n", b"\n\n", 1))  # every finding a line further down
    _, stats = port()
    assert renders and stats != kept
    same_as_fresh()
    assert port()[1] == stats and renders == []

    for gone in names:
        (rep / gone).unlink()
        _, after = port()
        assert renders and all(after[n] != stats[n] for n in names)
        stats = after
    (rep / "report.md").write_text("edited", encoding="utf-8")
    _, stats = port()
    assert renders and (rep / "report.md").read_text(encoding="utf-8") != "edited"

    _, roc = port("--libs", "roc")
    assert renders and roc != stats
    same_as_fresh("--libs", "roc")
    (src / ".hipport.toml").write_text("[estimate]\nkernel-hours = [1, 5, 9]\n", encoding="utf-8")
    _, rated = port("--libs", "roc")
    assert renders and rated != roc
    same_as_fresh("--libs", "roc")
    assert port("--libs", "roc")[1] == rated and renders == []
    assert port("--libs", "roc", "--no-cache")[1] != rated and renders

    monkeypatch.setattr(cache_mod, "_SETTLED_NS", 10**18)  # no file's stats count: each is read
    first = port()[1]
    assert renders and port()[1] != first and renders
