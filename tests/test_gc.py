"""A file's objects form no reference cycles: reference counting frees them as soon as the file
is done, which is what lets loaders.prepare make the garbage collector's passes rare."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import tomllib
from pathlib import Path

from hipport import collector, loaders
from hipport.check import check_source
from hipport.config import Settings
from hipport.files import file_kind
from hipport.pipeline import port_source
from hipport.rules import all_rules

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(p for base in ("fixtures", "examples") for p in (ROOT / base).rglob("*") if p.is_file())


def _cyclic_garbage(work) -> list:
    """The objects `work()` leaves in reference cycles (found by a full collection)."""
    gc.collect()
    enabled, flags = gc.isenabled(), gc.get_debug()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        work()
        gc.collect()
        return list(gc.garbage)
    finally:
        gc.garbage.clear()
        gc.set_debug(flags)
        if enabled:
            gc.enable()


def _ours(objects) -> list[str]:
    """The garbage made by hipport's own code (the standard library's ast.literal_eval leaves
    a few recursive closures, which do not grow with the files)."""
    names = []
    for o in objects:
        module = getattr(type(o), "__module__", "") or ""
        if callable(o) and hasattr(o, "__module__"):
            module = o.__module__ or ""
        if module.startswith("hipport") or type(o).__name__ in ("Token", "Directive", "MacroDef"):
            names.append(f"{module}.{type(o).__qualname__}")
    return names


def test_porting_and_checking_leave_no_reference_cycles():
    settings = Settings()
    rules = all_rules()

    def work():
        for p in SOURCES:
            data, kind = p.read_bytes(), file_kind(p.name)
            port_source(data, p.name, kind, settings)
            check_source(data, p.name, kind, settings, rules)

    assert len(SOURCES) > 150
    assert _ours(_cyclic_garbage(work)) == []


def test_a_cycle_through_the_file_context_would_be_seen():
    """The test above can fail: a memoized object holding its context strongly is a cycle."""
    from hipport.analysis import context_for

    class Holder:
        def __init__(self, ctx):
            self.ctx = ctx

    def work():
        ctx = context_for(b"#define WARP_SIZE 32\n", "a.cu", "cuda", Settings())
        ctx.memo["holder"] = Holder(ctx)

    assert "hipport.analysis.FileContext" in _ours(_cyclic_garbage(work))


def test_prepare_sets_the_collector_up_once(monkeypatch):
    frozen, thresholds = [], []
    monkeypatch.setattr(loaders, "_set_aside", False)
    monkeypatch.setattr(loaders.gc, "freeze", lambda: frozen.append(1))
    monkeypatch.setattr(loaders.gc, "set_threshold", lambda *t: thresholds.append(t))
    loaders.prepare(Settings())
    loaders.prepare(Settings())
    assert frozen == [1] and len(thresholds) == 1 and thresholds[0][0] == 50_000


# Run as the console script runs hipport: a finder notes the collector's pace when hipport.cli
# is first imported (the command line's own imports come after that).
_PACE_AT_CLI_IMPORT = """
import gc, sys

class Note:
    pace = None
    def find_spec(self, name, path=None, target=None):
        if name == "hipport.cli" and Note.pace is None:
            Note.pace = gc.get_threshold()[0]
        return None

sys.meta_path.insert(0, Note())
import hipport.__main__
print(Note.pace)
"""


def test_the_command_slows_the_collector_before_it_imports_the_command_line():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", _PACE_AT_CLI_IMPORT], env=env, capture_output=True,
                          text=True, timeout=60, check=True)
    assert int(done.stdout) == collector.YOUNG != 700


def test_the_console_script_starts_where_the_pace_is_set():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["hipport"] == "hipport.__main__:main"
