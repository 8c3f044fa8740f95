"""`hipport check` and `hipport rules` from the command line: exit codes, selection, formats,
baselines, configuration, odd files, the process pool, and the pre-commit hook.

Most tests use small test rules (registered here, removed after) selected with `--select`, so
they do not depend on what the real rule modules flag; the clean-file tests use the real ones.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hipport.check import Options, run_check
from hipport.cli import main
from hipport.config import Settings
from hipport.findings import severity_at_least
from hipport.rules import CATEGORY_CODES, REGISTRY, Hit, all_rules, load_rule_modules, rule
from clitools import TEST_RULE_DOC, free_code, hipport

ROOT = Path(__file__).resolve().parents[1]
DOC = TEST_RULE_DOC




class Boom(Exception):
    pass


@pytest.fixture(scope="module")
def t():
    """Test rules: WARN `% 32` (warp-size, warning), ERR `asm(` (inline-ptx, error), INFO
    `cudaMallocManaged` (unified-memory, info), CRASH raises on `crash_me`."""
    load_rule_modules()
    mod32, asm, managed = re.compile(rb"%\s*32\b"), re.compile(rb"\basm\s*\("), re.compile(rb"\bcudaMallocManaged\b")

    def lane_mod_32(ctx):
        for m in ctx.code_matches(mod32):
            yield Hit(m.start(), m.end(), "lane math assumes 32 lanes", "use warpSize")

    def asm_call(ctx):
        for m in ctx.code_matches(asm):
            yield Hit(m.start(), m.end(), "inline assembly")

    def managed_alloc(ctx):
        for m in ctx.code_matches(managed):
            yield Hit(m.start(), m.end(), "managed memory")

    def crash(ctx):
        if b"crash_me" in ctx.data:
            raise Boom("rule bug")
        return ()

    made = {}
    for key, func, category, severity in (("WARN", lane_mod_32, "warp-size", "warning"),
                                          ("ERR", asm_call, "inline-ptx", "error"),
                                          ("INFO", managed_alloc, "unified-memory", "info"),
                                          ("CRASH", crash, "tensor-core", "warning")):
        func.__doc__ = DOC
        code = free_code(category)
        rule(code=code, name=f"test-{key.lower()}", category=category, severity=severity, effort="low")(func)
        made[key] = code
    made["ALL"] = ",".join([made["WARN"], made["ERR"], made["INFO"], made["CRASH"], "HP1901"])
    yield made
    for key in ("WARN", "ERR", "INFO", "CRASH"):
        REGISTRY.pop(made[key])


def cli(capsys, *args) -> tuple[int, str, str]:
    try:
        main([str(a) for a in args])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    def write(rel: str, text: str | bytes) -> Path:
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text.encode() if isinstance(text, str) else text)
        return p

    return write


# --- exit codes --------------------------------------------------------------------------------

def test_no_findings_exits_0(capsys, tree, t):
    tree("src/k.cu", "int a = 0;\n")
    code, out, err = cli(capsys, "check", "--select", t["ALL"], "src")
    assert code == 0 and out == "No findings in 1 file.\n" and err == ""


def test_a_lone_skipped_file_is_counted_in_the_summary(capsys, tree):
    """A binary file is skipped with its reason on stderr; the summary says so instead of
    reporting an empty check."""
    tree("blob.cu", b"\x7fELF\x00\x01\x02")
    code, out, err = cli(capsys, "check", "blob.cu")
    assert code == 0
    assert out == "No findings in 0 files (1 file skipped).\n"
    assert "blob.cu: skipped: binary file" in err


def test_warning_exits_1_with_text_lines(capsys, tree, t):
    tree("src/k.cu", "int a = 0;\nint lane = i % 32;\n")
    code, out, _ = cli(capsys, "check", "--select", t["ALL"], "src")
    assert code == 1
    assert out.splitlines() == [f"src/k.cu:2:14: warning: lane math assumes 32 lanes [{t['WARN']} warp-size]",
                                "Found 1 finding (1 warning) in 1 file."]


def test_exit_zero_and_fail_on(capsys, tree, t):
    tree("k.cu", "int lane = i % 32;\n")
    assert cli(capsys, "check", "--select", t["ALL"], "--exit-zero", "k.cu")[0] == 0
    assert cli(capsys, "check", "--select", t["ALL"], "--fail-on", "error", "k.cu")[0] == 0
    assert cli(capsys, "check", "--select", t["ALL"], "--fail-on", "warning", "k.cu")[0] == 1
    tree("m.cu", "cudaMallocManaged(&p, n);\n")
    assert cli(capsys, "check", "--select", t["ALL"], "m.cu")[0] == 0  # info does not fail by default
    assert cli(capsys, "check", "--select", t["ALL"], "--fail-on", "info", "m.cu")[0] == 1
    tree("e.cu", "asm(\"nop\");\n")
    assert cli(capsys, "check", "--select", t["ALL"], "--fail-on", "error", "e.cu")[0] == 1


@pytest.mark.parametrize("args", [
    ["check", "missing.cu"],
    ["check", "--select", "no-such-category", "k.cu"],
    ["check", "--ignore", "HP99999", "k.cu"],
    ["check", "--format", "xml", "k.cu"],
    ["check", "--baseline", "missing.json", "k.cu"],
    ["check", "--target-hip", "six", "k.cu"],
    ["check"],
])
def test_usage_errors_exit_2(capsys, tree, t, args):
    tree("k.cu", "int a;\n")
    code, out, err = cli(capsys, *args)
    assert code == 2 and out == "" and err


def test_unreadable_config_exits_2(capsys, tree, t):
    tree("k.cu", "int a;\n")
    tree(".hipport.toml", "select = [\n")
    assert cli(capsys, "check", "k.cu")[0] == 2


# --- selection -----------------------------------------------------------------------------------

def test_select_and_ignore_by_category_and_code(capsys, tree, t):
    tree("k.cu", "int lane = i % 32;\nasm(\"nop\");\ncudaMallocManaged(&p, n);\n")

    mine = {t["WARN"], t["ERR"], t["INFO"]}

    def rules_of(*args):  # real rules of these categories may flag the lines too: not counted
        code, out, _ = cli(capsys, "check", "--format", "json", *args, "k.cu")
        return code, [f["rule"] for f in json.loads(out)["findings"] if f["rule"] in mine]

    assert rules_of("--select", t["ALL"]) == (1, [t["WARN"], t["ERR"], t["INFO"]])
    assert rules_of("--select", "warp-size") == (1, [t["WARN"]])
    assert rules_of("--select", "warp-size,unified-memory") == (1, [t["WARN"], t["INFO"]])
    assert rules_of("--select", "warp-size", "--select", t["ERR"].lower()) == (1, [t["WARN"], t["ERR"]])
    assert rules_of("--select", t["ALL"], "--ignore", "inline-ptx", "--ignore", t["WARN"]) == (0, [t["INFO"]])
    assert rules_of("--select", t["ALL"], "--ignore", "unified-memory,inline-ptx") == (1, [t["WARN"]])
    assert rules_of("--select", "test-err") == (1, [t["ERR"]])  # by rule name


def test_config_select_and_ignore(capsys, tree, t):
    tree("k.cu", "int lane = i % 32;\nasm(\"nop\");\n")
    tree("pyproject.toml", f'[tool.hipport]\nselect = ["{t["WARN"]}", "inline-ptx"]\nignore = "warp-size"\n')
    code, out, _ = cli(capsys, "check", "k.cu")
    assert code == 1 and f"[{t['ERR']} inline-ptx]" in out and t["WARN"] not in out
    # The command line wins, option by option.
    code, out, _ = cli(capsys, "check", "--ignore", "inline-ptx", "k.cu")
    assert code == 1 and t["WARN"] in out and t["ERR"] not in out
    tree("pyproject.toml", '[tool.hipport]\nselect = ["warp-size"]\nfail-on = "error"\n')
    assert cli(capsys, "check", "k.cu")[0] == 0
    tree("pyproject.toml", '[tool.hipport]\nfail-on = "fatal"\n')
    assert cli(capsys, "check", "k.cu")[0] == 2


def test_a_pyproject_without_hipport_is_passed_over_unparsed(capsys, tree, t, monkeypatch):
    """A project's own pyproject.toml, which names no hipport table, is not parsed (tomllib
    and the typing it imports are 5 ms of a cached pre-commit check), not even when TOML
    would refuse it: the search goes on up to the configuration above it."""
    import tomllib

    tree("k.cu", "int lane = i % 32;\nasm(\"nop\");\n")
    tree("pkg/k.cu", "int lane = i % 32;\nasm(\"nop\");\n")
    tree("pyproject.toml", f'[tool.hipport]\nselect = ["{t["WARN"]}"]\n')
    tree("pkg/pyproject.toml", "[project\nname = 'broken, and no table of ours'\n")
    parsed = []
    real_loads = tomllib.loads
    monkeypatch.setattr(tomllib, "loads", lambda text: parsed.append(text) or real_loads(text))
    code, out, _ = cli(capsys, "check", "pkg/k.cu")
    assert code == 1 and t["WARN"] in out and t["ERR"] not in out  # the outer table's selection
    assert set(parsed) == {f'[tool.hipport]\nselect = ["{t["WARN"]}"]\n'}  # the settings', the selection's


# --- output ------------------------------------------------------------------------------------

def test_output_file_and_formats(capsys, tree, t):
    tree("k.cu", "int lane = i % 32;\n")
    code, out, _ = cli(capsys, "check", "--select", t["ALL"], "--format", "sarif", "-o", "out.sarif", "k.cu")
    assert code == 1 and out == ""
    doc = json.loads(Path("out.sarif").read_text())
    assert doc["runs"][0]["results"][0]["ruleId"] == t["WARN"]
    code, out, _ = cli(capsys, "check", "--select", t["ALL"], "--format", "github", "k.cu")
    assert out == (f"::warning file=k.cu,line=1,col=14,endLine=1,endColumn=18,title={t['WARN']}"
                   "::lane math assumes 32 lanes%0Ause warpSize\n")
    code, out, _ = cli(capsys, "check", "--select", t["ALL"], "--format", "json", "k.cu")
    doc = json.loads(out)
    assert doc["summary"] == {"files": 1, "findings": 1, "by_category": {"warp-size": 1}, "by_severity": {"warning": 1}}
    assert doc["findings"][0]["snippet"] == "int lane = i % 32;"


def test_paths_are_relative_to_the_current_folder(capsys, tree, t):
    tree("proj/src/a.cu", "int lane = i % 32;\n")
    tree("proj/b.cu", "int lane = i % 32;\n")
    code, out, _ = cli(capsys, "check", "--select", t["ALL"], "--format", "json", "proj/src", "proj/b.cu")
    assert [f["path"] for f in json.loads(out)["findings"]] == ["proj/b.cu", "proj/src/a.cu"]
    os.chdir("proj/src")
    code, out, _ = cli(capsys, "check", "--select", t["ALL"], "--format", "json", ".")
    assert [f["path"] for f in json.loads(out)["findings"]] == ["a.cu"]


def test_suppression_through_the_cli(capsys, tree, t):
    tree("k.cu", "int lane = i % 32;  // hipport: ignore[warp-size] wave32 only\nint a = 0; // hipport: ignore[inline-ptx]\n")
    code, out, _ = cli(capsys, "check", "--select", t["ALL"], "k.cu")
    assert code == 0  # the unused suppression is info
    assert out.splitlines() == [
        "k.cu:2:15: info: unused suppression: inline-ptx (no such finding on this line) [HP1901 suppression]",
        "Found 1 finding (1 info) in 1 file (1 suppressed).",
    ]
    code, out, _ = cli(capsys, "check", "--select", t["ALL"], "--ignore", "suppression", "k.cu")
    assert out == "No findings in 1 file (1 suppressed).\n"


# --- baseline ----------------------------------------------------------------------------------

def test_baseline_round_trip(capsys, tree, t):
    tree("k.cu", "int lane = i % 32;\nasm(\"nop\");\n")
    code, out, err = cli(capsys, "check", "--select", t["ALL"], "--write-baseline", "base.json", ".")
    assert code == 0 and out == "" and "wrote 2 findings" in err
    assert {f["path"] for f in json.loads(Path("base.json").read_text())["findings"]} == {"k.cu"}
    code, out, _ = cli(capsys, "check", "--select", t["ALL"], "--baseline", "base.json", ".")
    assert code == 0 and out == "No findings in 1 file (2 in the baseline).\n"
    # Lines move, whitespace changes: still known. A new finding is reported.
    tree("k.cu", "// header\n\nint  lane = i % 32;\n  asm(\"nop\");\nint other = j % 32;\n")
    code, out, _ = cli(capsys, "check", "--select", t["ALL"], "--baseline", "base.json", ".")
    assert code == 1
    assert out.splitlines()[0].startswith("k.cu:5:15: warning:")
    assert out.splitlines()[-1] == "Found 1 finding (1 warning) in 1 file (2 in the baseline)."


def test_bad_baseline_exits_2(capsys, tree, t):
    tree("k.cu", "int a;\n")
    tree("base.json", "{")
    code, _, err = cli(capsys, "check", "--baseline", "base.json", "k.cu")
    assert code == 2 and "base.json" in err


# --- odd files ---------------------------------------------------------------------------------

def test_binary_and_non_utf8_files(capsys, tree, t):
    tree("bin.cu", b"\x00\x01\x02 % 32")
    tree("latin1.cu", b"// caf\xe9\nint lane = i % 32; // \xff\n")
    tree("notes.txt", "i % 32\n")  # not a kind any rule looks at: not checked
    code, out, err = cli(capsys, "check", "--select", t["ALL"], ".")
    assert code == 1
    assert out.splitlines() == [f"latin1.cu:2:14: warning: lane math assumes 32 lanes [{t['WARN']} warp-size]",
                                "Found 1 finding (1 warning) in 1 file (1 file skipped)."]
    assert err == "bin.cu: skipped: binary file (NUL bytes)\n"


def test_excluded_folders_are_not_walked(capsys, tree, t):
    tree("build/gen.cu", "int lane = i % 32;\n")
    tree("third_party/x.cu", "int lane = i % 32;\n")
    tree("src/ok.cu", "int a;\n")
    assert cli(capsys, "check", "--select", t["ALL"], ".")[:2] == (0, "No findings in 1 file.\n")


def test_a_failing_rule_costs_its_findings_only(capsys, tree, t):
    tree("k.cu", "int crash_me;\nint lane = i % 32;\n")
    code, out, err = cli(capsys, "check", "--select", t["ALL"], "k.cu")
    assert code == 2
    assert f"[{t['WARN']} warp-size]" in out
    assert f"k.cu: failed: rule {t['CRASH']} test-crash failed: Boom: rule bug" in err


def test_many_files_use_the_pool_and_keep_path_order(tmp_path, t):
    for i in range(40):
        (tmp_path / f"f{i:02d}.cu").write_text("int x;\n" * (i % 3) + "int lane = i % 32;\n")
    (tmp_path / "zz.cu").write_text("int crash_me;\n")
    options = Options(select=(t["WARN"], t["CRASH"]))
    serial = run_check([tmp_path], Settings(jobs=1), options)
    pooled = run_check([tmp_path], Settings(jobs=2), options)
    assert [f.path for f in pooled.findings] == [f"f{i:02d}.cu" for i in range(40)]
    assert pooled.findings == serial.findings
    assert [(r.path, r.status) for r in pooled.files] == [(r.path, r.status) for r in serial.files]
    assert pooled.failed[0].path == "zz.cu"


def test_a_check_streams_its_findings_a_window_at_a_time(tmp_path, t, monkeypatch):
    """The findings come out as each window of files is checked, and what they add up to is
    the whole run's (a tree of 51,000 files held its 100,000 findings, then the document of
    them, until the end: 240 MB for text, 360 MB for SARIF)."""
    from hipport import check, suppress
    from hipport.report.formats import FORMATTERS

    for i in range(22):
        (tmp_path / f"f{i:02d}.cu").write_text("int lane = i % 32; // hipport: ignore[warp-size]\n" * (i == 3)
                                               + "int lane = i % 32;\n" * (1 + i % 2))
    (tmp_path / "bin.cu").write_bytes(b"int x;\0\0")
    (tmp_path / "zz.cu").write_text("int crash_me;\n")
    monkeypatch.setattr(check, "_WINDOW", 4)
    real_window, windows = check._window, []

    def window(jobs, *rest):
        windows.append(len(jobs))
        return real_window(jobs, *rest)

    monkeypatch.setattr(check, "_window", window)
    options = Options(select=(t["WARN"], t["CRASH"], "HP1901"))
    whole = run_check([tmp_path], Settings(jobs=1), options)
    assert windows == [4] * 6 and len(whole.findings) == 33 and whole.suppressed == 1
    del windows[:]
    run = check.stream_check([tmp_path], Settings(jobs=1), options)
    findings = iter(run.findings)
    assert next(findings).path == "f00.cu" and windows == [4]  # before the other files are checked
    assert len(list(findings)) == 32 and windows == [4] * 6
    assert (run.checked, run.suppressed, run.baselined) == (whole.checked, whole.suppressed, whole.baselined) == (22, 1, 0)
    assert run.severities == whole.severities and run.categories == whole.categories
    assert [(f.path, f.status) for f in run.troubles] == [("bin.cu", "skipped"), ("zz.cu", "failed")]
    assert run.notes == whole.notes and check.exit_code(run, options) == check.exit_code(whole, options) == 2
    for name, fmt in FORMATTERS.items():
        streamed = "".join(fmt(check.stream_check([tmp_path], Settings(jobs=1), options)))
        assert streamed == "".join(fmt(whole)), name
    baseline = tmp_path / "baseline.json"
    baseline.write_text("".join(suppress.dump_baseline(whole.findings[:30])))
    run = check.stream_check([tmp_path], Settings(jobs=1), options, baseline=baseline)
    assert [f.path for f in run.findings] == ["f20.cu", "f21.cu", "f21.cu"] and run.baselined == 30


def test_the_windows_of_a_check_share_one_pool(tmp_path, t, monkeypatch):
    """A pool per window would fork, and load the tables, per window."""
    from hipport import check, parallel

    for i in range(60):
        (tmp_path / f"f{i:02d}.cu").write_text("int lane = i % 32;\n")
    monkeypatch.setattr(check, "_WINDOW", 20)
    real_pool, pools = parallel.pool, []

    def pool(*args):
        pools.append(real_pool(*args))
        return pools[-1]

    monkeypatch.setattr(parallel, "pool", pool)
    options = Options(select=(t["WARN"],))
    pooled = run_check([tmp_path], Settings(jobs=2), options, cache_root=None)
    assert len(pools) == 1 and pools[0] is not None
    assert [f.path for f in pooled.findings] == [f"f{i:02d}.cu" for i in range(60)]
    assert pooled.findings == run_check([tmp_path], Settings(jobs=1), options, cache_root=None).findings


# --- hipport rules -----------------------------------------------------------------------------

def test_rules_lists_every_rule_grouped(capsys, t):
    code, out, _ = cli(capsys, "rules")
    assert code == 0
    lines = out.splitlines()
    for r in all_rules():
        row = next(line for line in lines if line.split()[:1] == [r.code])
        assert row.split() == [r.code, r.name, r.severity, "effort:", r.effort]
    headers = [line for line in lines if line and not line.startswith(" ")]
    assert headers == [c for c in CATEGORY_CODES if any(r.category == c for r in all_rules())]
    assert lines.index("suppression") < lines.index(next(line for line in lines if "HP1901" in line))


@pytest.mark.parametrize("key", ["HP1901", "hp1901", "unused-suppression", "suppression"])
def test_rules_explains(capsys, key):
    code, out, _ = cli(capsys, "rules", key)
    assert code == 0
    assert out.startswith("HP1901 unused-suppression\ncategory: suppression, severity: info, effort: trivial\n")
    for section in ("What it does:", "Why it matters on AMD GPUs:", "Example:", "Fix:"):
        assert section in out


def test_rules_category_prints_each_rule(capsys, t):
    code, out, _ = cli(capsys, "rules", "warp-size")
    assert code == 0 and f"{t['WARN']} test-warn" in out


def test_rules_unknown_exits_2(capsys):
    code, out, err = cli(capsys, "rules", "no-such-thing")
    assert code == 2 and out == "" and "no-such-thing" in err


def test_rules_mappings(capsys):
    code, out, _ = cli(capsys, "rules", "--mappings")
    assert code == 0
    lines = out.splitlines()
    m = re.fullmatch(r"(\d+) CUDA names supported \((\d+) renamed\)", lines[-1])
    assert m and int(m.group(1)) >= int(m.group(2)) > 1000
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:-1]}
    assert {"runtime", "cublas"} <= set(rows)
    assert sum(int(v[0]) for v in rows.values()) == int(m.group(1))
    code, old, _ = cli(capsys, "rules", "--mappings", "--target-hip", "5.2")
    assert code == 0 and int(old.splitlines()[-1].split()[0]) < int(m.group(1))


# --- real rules on clean code ------------------------------------------------------------------

CLEAN = [ROOT / "fixtures/port/runtime/memory.cu", ROOT / "fixtures/port/runtime/streams_events.cu",
         ROOT / "fixtures/port/launches/simple.cu", ROOT / "fixtures/port/unchanged/plain_cpp.cpp",
         ROOT / "examples/saxpy_ops/src", ROOT / "examples/saxpy_ops/include", ROOT / "fixtures/precommit/src/scale.cu"]


@pytest.mark.parametrize("path", CLEAN, ids=lambda p: p.name)
def test_clean_cuda_has_no_findings_at_warning_or_above(path):
    """CUDA that ports to HIP with no manual work: the real rules must not warn on it."""
    res = run_check([path], Settings(), Options())
    assert res.failed == []
    bad = [f for f in res.findings if severity_at_least(f.severity, "warning")]
    assert bad == [], "\n".join(f"{f.path}:{f.line}: {f.rule} {f.message}" for f in bad)


# --- pre-commit ----------------------------------------------------------------------------------

PRECOMMIT_FIXTURE = ROOT / "fixtures" / "precommit"


def _hook() -> dict:
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    try:
        import yaml
    except ImportError:  # a tiny reader for our one flat hook
        hook = {}
        for line in text.splitlines():
            m = re.match(r"^[- ] (\w+): (.*)$", line)
            if m:
                value = m.group(2).strip()
                hook[m.group(1)] = value[1:-1] if value[:1] in "'\"" else {"true": True, "false": False}.get(value, value)
        return hook
    (hook,) = yaml.safe_load(text)
    return hook


def test_hook_definition():
    hook = _hook()
    assert hook["id"] == "hipport-check" and hook["entry"] == "hipport check"
    assert hook["language"] == "python" and hook["pass_filenames"] is True
    # hipport runs a process per CPU itself (as black, whose hook is serial too): pre-commit's
    # own split would make that a process per CPU per CPU, each loading the tables
    assert hook["require_serial"] is True
    files = re.compile(hook["files"])
    for name in ["a.cu", "d/b.cuh", "x.cpp", "x.cc", "x.cxx", "x.c", "x.h", "x.hpp", "x.hxx", "x.inl", "x.cuinc",
                 "CMakeLists.txt", "cmake/f.cmake", "setup.py", "Makefile", "Dockerfile", "requirements.txt",
                 "requirements-dev.txt", "pyproject.toml", "pkg/ops.py"]:
        assert files.search(name), name
    for name in ["README.md", "notes.txt", "data.bin", "x.cu.orig", "Makefile.bak", "lib.so"]:
        assert not files.search(name), name


def _repo(tmp_path: Path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    shutil.copytree(PRECOMMIT_FIXTURE, repo)
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "fixture"]):
        subprocess.run(cmd, cwd=repo, check=True, env=env, capture_output=True)
    return repo


def _run_hook(repo: Path, files: list[str]) -> subprocess.CompletedProcess:
    entry = _hook()["entry"].split()
    assert entry[0] == "hipport"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "hipport", *entry[1:], *files], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=120)


def _staged(repo: Path) -> list[str]:
    files = re.compile(_hook()["files"])
    listed = subprocess.run(["git", "ls-files"], cwd=repo, check=True, capture_output=True, text=True).stdout
    return [name for name in listed.splitlines() if files.search(name)]


def _suppress_all(repo: Path, findings: list[dict]) -> None:
    """Put `// hipport: ignore[...]` above every flagged line (bottom up, so lines stay put)."""
    by_line: dict[tuple[str, int], set[str]] = {}
    for f in findings:
        by_line.setdefault((f["path"], f["line"]), set()).add(f["category"])
    for (path, line), cats in sorted(by_line.items(), reverse=True):
        p = repo / path
        lines = p.read_text().splitlines(keepends=True)
        indent = re.match(r"\s*", lines[line - 1]).group(0)
        mark = "#" if not p.suffix in (".cu", ".cuh", ".cpp", ".h", ".hpp", ".c", ".cc") else "//"
        lines.insert(line - 1, f"{indent}{mark} hipport: ignore[{','.join(sorted(cats))}] reviewed for HIP\n")
        p.write_text("".join(lines))


def _require_real_rules():
    """The fixture repo is flagged by the inline-ptx, warp-mask, warp-size and build-flags rules."""
    wanted = {"inline-ptx", "warp-mask", "warp-size", "build-flags"}
    if not [r for r in all_rules() if r.category in wanted and not r.name.startswith("test-")]:
        pytest.skip("none of the rule modules that flag the fixture repo is registered yet")


def test_hook_entry_on_a_fixture_repo(tmp_path):
    _require_real_rules()
    repo = _repo(tmp_path)
    files = _staged(repo)
    assert "src/lanes.cu" in files and "README.md" not in files
    first = _run_hook(repo, files)
    assert first.returncode == 1, first.stdout + first.stderr
    second = _run_hook(repo, files + ["--format", "json"])
    doc = json.loads(second.stdout)
    failing = [f for f in doc["findings"] if severity_at_least(f["severity"], "warning")]
    assert failing and all(f["path"] in files for f in doc["findings"])
    _suppress_all(repo, failing)
    last = _run_hook(repo, files)
    assert last.returncode == 0, last.stdout + last.stderr
    assert "suppressed" in last.stdout.splitlines()[-1]


def _project_copy(dest: Path) -> Path:
    """This working tree (tracked and untracked, not ignored files) as a committed git repo:
    `pre-commit try-repo` installs the hook from a commit."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file() and not rel.startswith(("fixtures/", "tests/", "examples/", "benchmarks/")):
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "snapshot"]):
        subprocess.run(cmd, cwd=dest, check=True, env=env, capture_output=True)
    return dest


@pytest.mark.skipif(os.environ.get("HIPPORT_SKIP_PRE_COMMIT") == "1", reason="HIPPORT_SKIP_PRE_COMMIT=1")
def test_pre_commit_try_repo(tmp_path):
    """The real thing: pre-commit installs hipport from this tree into its own virtualenv (pip
    needs the package index) and runs the hook on the fixture repo."""
    pytest.importorskip("pre_commit")
    _require_real_rules()
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    repo = _repo(tmp_path)
    project = _project_copy(tmp_path / "project")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "cache"), PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)

    def try_repo() -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(project), "hipport-check",
                               "--all-files"], cwd=repo, env=env, capture_output=True, text=True, timeout=300)

    first = try_repo()
    if first.returncode not in (0, 1) or "An unexpected error has occurred" in first.stdout + first.stderr:
        pytest.skip("pre-commit could not set up the hook (no package index?):\n" + first.stdout[-2000:])
    assert "Traceback" not in first.stdout, "the hook's installed hipport crashed:\n" + first.stdout
    assert first.returncode == 1 and "Failed" in first.stdout and "\nFound " in first.stdout, first.stdout
    doc = json.loads(_run_hook(repo, _staged(repo) + ["--format", "json"]).stdout)
    _suppress_all(repo, [f for f in doc["findings"] if severity_at_least(f["severity"], "warning")])
    second = try_repo()
    assert second.returncode == 0 and "Passed" in second.stdout, second.stdout


def test_a_file_name_that_is_no_utf8_reaches_every_output(tmp_path, capsys):
    """Linux takes any bytes in a name: such a name is held as surrogates (os.fsdecode's) and
    written as their escapes, which JSON reads back as the same name; writing it as UTF-8
    failed the report, check's JSON and SARIF, and the baseline with a traceback."""
    import os

    src = tmp_path / "src"
    src.mkdir()
    try:
        (src / os.fsdecode(b"k\xff.cu")).write_bytes(b"__global__ void k(int* p) { p[threadIdx.x % 32] = 1; }\n")
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system takes only UTF-8 names")
    assert hipport("port", src, "-o", tmp_path / "out", "--report", tmp_path / "rep", "--no-cache") == 0
    report = json.loads((tmp_path / "rep" / "report.json").read_bytes())
    assert [os.fsencode(f["source"]) for f in report["files"]] == [b"k\xff.cu"]
    assert b"k\\udcff.cu" in (tmp_path / "rep" / "report.html").read_bytes()
    for fmt in ("json", "sarif"):
        assert hipport("check", src, "--format", fmt, "-o", tmp_path / f"c.{fmt}", "--no-cache") == 1
    doc = json.loads((tmp_path / "c.json").read_bytes())
    assert os.fsencode(doc["findings"][0]["path"]).endswith(b"k\xff.cu")
    json.loads((tmp_path / "c.sarif").read_bytes())
    assert hipport("check", src, "--write-baseline", tmp_path / "b.json", "--no-cache") == 0
    assert hipport("check", src, "--baseline", tmp_path / "b.json", "--no-cache") == 0  # the name matches
