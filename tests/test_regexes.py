"""hipport.regexes: patterns built from stored code are re.compile's own, and nothing stored
that is damaged, stale or of another Python build is ever used."""

import marshal
import re
import sys
from pathlib import Path

import pytest

from hipport import regexes
from hipport.locations import copy_places

pytestmark = pytest.mark.skipif(regexes._sre is None, reason="no _sre engine to build patterns with")

PATTERNS = [(rb"(?P<name>cuda\w+)\s*\(", 0), (r"warp|lane", re.I), (rb"\b(?:a|b)+\Z", re.S | re.M),
            (r"(?i:find_package)\s*\(\s*(\w+)", 0), (rb"[^\s()#\"\\]+", 0)]


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A fresh store (what a new process starts with) kept for a package folder in tmp_path,
    with a cache folder of its own; the path beside the package's bytecode, where it is written
    even where this session writes no bytecode."""
    package = tmp_path / "package"
    monkeypatch.setenv("HIPPORT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(regexes, "_places", lambda: copy_places(str(package), "regexes"))
    monkeypatch.setattr(regexes, "_store", regexes._Store())
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    path = Path(copy_places(str(package), "regexes").write[0])
    path.parent.mkdir(parents=True)
    return path


def _fresh_process(monkeypatch):
    monkeypatch.setattr(regexes, "_store", regexes._Store())


def test_a_stored_pattern_is_built_without_parsing_and_equals_re_compile(store, monkeypatch):
    first = [regexes.compile(p, f) for p, f in PATTERNS]
    regexes.save()
    assert store.is_file()
    _fresh_process(monkeypatch)

    def no_parsing(*_args):
        raise AssertionError("parsed again")

    monkeypatch.setattr(regexes._parser, "parse", no_parsing)
    again = [regexes.compile(p, f) for p, f in PATTERNS]
    for (pattern, flags), a, b in zip(PATTERNS, first, again):
        assert b == re.compile(pattern, flags) == a  # same pattern, flags and engine code
        assert b.groupindex == a.groupindex and b.groups == a.groups
    assert again[0].search(b"x = cudaMalloc (p)").group("name") == b"cudaMalloc"
    assert again[1].search("WarpSize").group() == "Warp"


def test_every_pattern_stored_by_loading_the_rules_builds_as_re_compiles_it(store, monkeypatch):
    # What a real run stores: the module-level and table-made patterns, here those of two
    # modules run again under other names (their patterns go through compile() into this store).
    import importlib.util

    import hipport

    for name in ("rewrite/shell.py", "kernels.py"):
        spec = importlib.util.spec_from_file_location(f"_again_{len(name)}", f"{hipport.__path__[0]}/{name}")
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    regexes.save()
    _fresh_process(monkeypatch)
    stamp, entries = marshal.loads(store.read_bytes())
    assert stamp == regexes._stamp() and len(entries) > 10
    for (pattern, flags), built in entries.items():
        assert regexes._sre.compile(pattern, *built) == re.compile(pattern, flags)


@pytest.mark.parametrize("damage", [b"", b"not marshal at all", marshal.dumps((b"other build", {})),
                                    marshal.dumps("a string"), marshal.dumps((None, [1, 2]))])
def test_a_damaged_or_foreign_file_is_ignored_and_replaced(store, damage):
    store.write_bytes(damage)
    assert regexes.compile(rb"cu(da)?", 0) == re.compile(rb"cu(da)?")
    regexes.save()
    stamp, entries = marshal.loads(store.read_bytes())
    assert stamp == regexes._stamp() and list(entries) == [(rb"cu(da)?", 0)]


def test_an_entry_the_engine_refuses_is_compiled_instead(store, monkeypatch):
    store.write_bytes(marshal.dumps((regexes._stamp(), {(rb"abc", 0): (0, [999999], 0, {}, ())})))
    assert regexes.compile(rb"abc") == re.compile(rb"abc")
    assert regexes._store.entries[(rb"abc", 0)] != (0, [999999], 0, {}, ())  # made again, kept


def test_nothing_is_written_without_new_patterns(store, monkeypatch):
    regexes.compile(rb"x+y")
    regexes.save()
    written = store.stat().st_mtime_ns
    _fresh_process(monkeypatch)
    regexes.compile(rb"x+y")  # found: nothing new to write
    regexes.save()
    assert store.stat().st_mtime_ns == written


def test_without_bytecode_the_patterns_are_kept_in_the_cache_folder(store, tmp_path, monkeypatch):
    """PYTHONDONTWRITEBYTECODE (common in container images): nothing beside the bytecode, but
    the next process still builds its patterns from stored code, without parsing them."""
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    regexes.compile(rb"x+y")
    regexes.save()
    assert not store.exists()
    kept = list((tmp_path / "cache" / "compiled").glob("regexes.*.marshal"))
    assert len(kept) == 1
    _fresh_process(monkeypatch)
    monkeypatch.setattr(regexes._parser, "parse", lambda *_: pytest.fail("parsed again"))
    assert regexes.compile(rb"x+y") == re.compile(rb"x+y")
    written = kept[0].stat().st_mtime_ns
    regexes.save()
    assert kept[0].stat().st_mtime_ns == written and not store.exists()


def test_a_read_only_install_keeps_the_patterns_in_the_cache_folder(store, tmp_path, monkeypatch):
    store.parent.rmdir()
    store.parent.write_text("a file where the __pycache__ folder would go\n")
    regexes.compile(rb"x+y")
    regexes.save()
    assert len(list((tmp_path / "cache" / "compiled").glob("regexes.*.marshal"))) == 1
    _fresh_process(monkeypatch)
    monkeypatch.setattr(regexes._parser, "parse", lambda *_: pytest.fail("parsed again"))
    assert regexes.compile(rb"x+y") == re.compile(rb"x+y")


def test_a_store_past_its_bound_keeps_what_this_process_used(store, monkeypatch):
    stale = {(f"old{i}", 0): regexes._code_of(f"old{i}", 0, re.compile(f"old{i}")) for i in range(5)}
    store.write_bytes(marshal.dumps((regexes._stamp(), stale)))
    monkeypatch.setattr(regexes, "_MAX_ENTRIES", 3)
    regexes.compile("old1")
    regexes.compile("new")
    regexes.save()
    assert set(marshal.loads(store.read_bytes())[1]) == {("old1", 0), ("new", 0)}


def test_a_pattern_object_and_re_flags_pass_through():
    compiled = re.compile("ab")
    assert regexes.compile(compiled) is compiled
    assert regexes.compile("ab", re.I).flags & re.I


def test_saving_with_nothing_new_asks_nothing_of_the_file_system(store, monkeypatch):
    # check loads the rules once per file, and saves each time: that must cost nothing
    regexes.compile(rb"x+y")
    regexes.save()
    _fresh_process(monkeypatch)
    regexes.compile(rb"x+y")  # found in the file
    monkeypatch.setattr(regexes, "_places", lambda: pytest.fail("looked for the stored file"))
    for _ in range(3):
        regexes.save()


_PARSED_ON_LOADING = """
import os, sys
from re import _compiler
from hipport import regexes
from hipport.locations import copy_places

regexes._places = lambda: copy_places(sys.argv[1], "regexes")
sys.dont_write_bytecode = False
package = os.path.dirname(os.path.realpath(regexes.__file__))
parsed = []
compile_code = _compiler.compile


def spy(pattern, flags=0):  # what re.compile calls for a pattern its own cache lacks
    frame = sys._getframe(1)
    while frame.f_code.co_filename.endswith(("re/__init__.py", "regexes.py")):
        frame = frame.f_back
    if frame.f_code.co_filename.startswith(package):
        parsed.append(f"{frame.f_code.co_filename[len(package):]}:{frame.f_lineno} {pattern!r}")
    return compile_code(pattern, flags)


_compiler.compile = spy
import hipport.cli, hipport.runner
from hipport.config import Settings
from hipport.loaders import prepare

prepare(Settings())
print("\\n".join(parsed))
"""


def test_a_process_after_the_first_parses_no_pattern_as_it_loads_the_rules_and_tables(tmp_path):
    # Every pattern hipport's modules make as they load comes from the store (regexes.compile):
    # one made with re.compile is parsed again by every process and -j worker.
    import os
    import subprocess

    run = [sys.executable, "-c", _PARSED_ON_LOADING, str(tmp_path / "package")]
    env = dict(os.environ, HIPPORT_CACHE_DIR=str(tmp_path / "cache"))
    root = Path(__file__).resolve().parents[1]
    first = subprocess.run(run, capture_output=True, text=True, env=env, cwd=root, check=True)
    assert first.stdout.strip(), "the first process parsed nothing: the spy saw no pattern"
    again = subprocess.run(run, capture_output=True, text=True, env=env, cwd=root, check=True)
    assert again.stdout.strip() == ""
