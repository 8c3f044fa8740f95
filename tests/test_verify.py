"""`hipport verify OUT`: which files it compiles, with which flags and include folders, how it
classifies the results (with a stand-in hipcc), and the real thing with Debian's hipcc on the
ported plain-CUDA example (skipped where hipcc is not installed)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from hiptools import requires_hipcc
from hipport import verify
from hipport.cli import main

ROOT = Path(__file__).resolve().parents[1]

FAKE_HIPCC = r"""#!/usr/bin/env bash
# Stand-in for hipcc: logs its arguments, answers from markers in the compiled file.
printf '%s\n' "HIP_PLATFORM=$HIP_PLATFORM $*" >> "$(dirname "$0")/calls.log"
for a in "$@"; do
  case "$a" in --version) echo "HIP version: 9.9.99999-fake"; exit 0;; esac
  f="$a"
done
if grep -q BROKEN "$f"; then
  echo "$f:3:5: warning: something harmless" >&2
  echo "$f:4:7: error: use of undeclared identifier 'oops'" >&2
  echo "$f:9:1: error: a second error" >&2
  exit 1
fi
if grep -q MISSINGLIB "$f"; then echo "$f:1:10: fatal error: 'hipfoo/hipfoo.h' file not found" >&2; exit 1; fi
if grep -q LOCALMISSING "$f"; then echo "$f:1:10: fatal error: 'inc/local.h' file not found" >&2; exit 1; fi
exit 0
"""


@pytest.fixture()
def fake_hipcc(tmp_path) -> Path:
    path = tmp_path / "bin" / "hipcc"
    path.parent.mkdir()
    path.write_text(FAKE_HIPCC)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def make_tree(root: Path) -> Path:
    files = {
        "src/ok.cu": "__global__ void k() {}\n",
        "src/broken.hip": "// BROKEN\n",
        "src/uses_lib.cpp": "// MISSINGLIB\n",
        "src/local.cc": "// LOCALMISSING\n",
        "src/plain.c": "int x;\n",
        "include/inc/local.h": "#pragma once\n",
        "include/k.cuh": "#pragma once\n",
        "build/generated.cu": "// build output: never compiled\n",
        "third_party/lib/vendored.cu": "// vendored: never compiled\n",
        "CMakeLists.txt": "target_include_directories(t PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/include ${GEN} "
                          "$<BUILD_INTERFACE:x>)\ninclude_directories(src)\n# include_directories(nothere)\n"
                          "#[[ an old layout:\ninclude_directories(csrc_inc) ]]\n"
                          'include_directories("include#dir")\n',
        "include#dir/h.h": "\n",
        "setup.py": 'CUDAExtension("m", [], include_dirs=["csrc_inc", "/nonexistent"])\n',
        "csrc_inc/a.h": "\n",
        "tools/Makefile": "CFLAGS = -I../include -I$(ROCM)/include -Ino_such_dir\n",
    }
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def run_cli(*args: str) -> int:
    with pytest.raises(SystemExit) as exit_:
        main(["verify", *args])
    return exit_.value.code


def test_units_and_include_folders(tmp_path):
    root = make_tree(tmp_path / "out")
    units = sorted(p.relative_to(root).as_posix() for p in verify.units(root))
    assert units == ["src/broken.hip", "src/local.cc", "src/ok.cu", "src/plain.c", "src/uses_lib.cpp"]
    with_headers = {p.relative_to(root).as_posix() for p in verify.units(root, headers=True)}
    assert {"include/k.cuh", "include/inc/local.h", "csrc_inc/a.h"} <= with_headers
    dirs = [d.relative_to(root.resolve()).as_posix() for d in verify.build_file_includes(root)]
    assert sorted(dirs) == ["csrc_inc", "include", "include#dir", "src"]
    (root / "setup.py").unlink()  # csrc_inc is named in a CMake bracket comment alone now
    dirs = [d.relative_to(root.resolve()).as_posix() for d in verify.build_file_includes(root)]
    assert sorted(dirs) == ["include", "include#dir", "src"]


def test_command_has_the_hipcc_facts(tmp_path):
    opts = verify.Options(offload_arch="gfx908")
    cmd = verify.command("hipcc", tmp_path / "a.h", opts, [tmp_path / "inc"], ["X=1"])
    assert cmd[:5] == ["hipcc", "--offload-arch=gfx908", "-std=c++17", "-fsyntax-only",
                       "-Wno-unused-command-line-argument"]
    assert cmd[-3:] == ["-x", "hip", str(tmp_path / "a.h")]  # headers too are compiled as HIP
    assert f"-I{tmp_path / 'inc'}" in cmd and "-DX=1" in cmd
    c_cmd = verify.command("hipcc", tmp_path / "a.c", opts, [], [])  # C stays C
    assert "-x" not in c_cmd and not any(arg.startswith("-std=") for arg in c_cmd)
    assert "-D__HIP_PLATFORM_AMD__=1" in c_cmd and "-D__HIP_PLATFORM_AMD__=1" not in cmd


def test_outcomes_with_a_stand_in_hipcc(tmp_path, fake_hipcc):
    root = make_tree(tmp_path / "out")
    outcomes = {o.path: o for o in verify.verify(root, verify.Options(hipcc=str(fake_hipcc), jobs=2))}
    assert {p: o.status for p, o in outcomes.items()} == {
        "src/ok.cu": "OK", "src/plain.c": "OK", "src/broken.hip": "FAIL", "src/uses_lib.cpp": "MISSING",
        "src/local.cc": "FAIL",  # the header is in the tree: an include-path problem, not a missing library
    }
    assert outcomes["src/broken.hip"].message == "src/broken.hip:4:7: error: use of undeclared identifier 'oops'"
    assert outcomes["src/uses_lib.cpp"].message.startswith("hipfoo/hipfoo.h not found")
    calls = (fake_hipcc.parent / "calls.log").read_text().splitlines()
    assert calls and all(c.startswith("HIP_PLATFORM=amd ") for c in calls)
    assert all(f"-I{(root / 'include').resolve()}" in c for c in calls)
    strict = {o.path: o.status for o in verify.verify(root, verify.Options(hipcc=str(fake_hipcc), strict=True))}
    assert strict["src/uses_lib.cpp"] == "FAIL"


def test_cli_table_and_exit_codes(tmp_path, fake_hipcc, capsys):
    root = make_tree(tmp_path / "out")
    assert run_cli(str(root), "--hipcc", str(fake_hipcc), "-j", "1") == 1
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert lines[0].startswith(f"hipport verify: {fake_hipcc} (HIP 9.9.99999-fake), --offload-arch=gfx90a, 5 files")
    assert any(line.startswith("FAIL     src/broken.hip") and "undeclared identifier 'oops'" in line for line in lines)
    assert any(line.startswith("OK       src/ok.cu") for line in lines)
    assert any(line.startswith("MISSING  src/uses_lib.cpp") for line in lines)
    assert lines[-1] == "5 files: 2 OK, 2 FAIL, 1 MISSING (a library header not installed here)"
    # Only the good files: exit 0; a missing library is not a failure unless --strict.
    for bad in ("src/broken.hip", "src/local.cc"):
        (root / bad).unlink()
    assert run_cli(str(root), "--hipcc", str(fake_hipcc)) == 0
    assert run_cli(str(root), "--hipcc", str(fake_hipcc), "--strict") == 1
    capsys.readouterr()
    assert run_cli(str(root), "--hipcc", str(fake_hipcc), "--format", "json", "--offload-arch", "gfx906") == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["offload_arch"] == "gfx906" and doc["hip_version"] == "9.9.99999-fake"
    assert doc["summary"] == {"ok": 2, "fail": 0, "missing": 1}
    assert {f["path"] for f in doc["files"]} == {"src/ok.cu", "src/plain.c", "src/uses_lib.cpp"}
    assert all("--offload-arch=gfx906" in f["command"] for f in doc["files"])


def test_extra_includes_and_defines(tmp_path, fake_hipcc):
    root = tmp_path / "out"
    (root / "k.cu").parent.mkdir(parents=True)
    (root / "k.cu").write_text("\n")
    extra = tmp_path / "extra"
    extra.mkdir()
    assert run_cli(str(root), "--hipcc", str(fake_hipcc), "-I", str(extra), "-D", "FOO=2") == 0
    call = (fake_hipcc.parent / "calls.log").read_text().splitlines()[-1]
    assert f"-I{extra.resolve()}" in call and "-DFOO=2" in call and "-x hip" in call


def test_torch_sources_get_torch_includes_and_rocm_defines(tmp_path, fake_hipcc, monkeypatch):
    root = tmp_path / "out"
    root.mkdir()
    (root / "ext.cpp").write_text("#include <torch/extension.h>\n")
    (root / "plain.cu").write_text("\n")
    torch_inc = tmp_path / "torch_include"
    torch_inc.mkdir()
    monkeypatch.setattr(verify, "torch_includes", lambda: [torch_inc])
    verify.verify(root, verify.Options(hipcc=str(fake_hipcc), jobs=1))
    calls = {c.rsplit(" ", 1)[-1]: c for c in (fake_hipcc.parent / "calls.log").read_text().splitlines()}
    ext = calls[str(root.resolve() / "ext.cpp")]
    assert f"-I{torch_inc}" in ext and "-DUSE_ROCM=1" in ext and "-D__HIP_PLATFORM_AMD__=1" in ext
    plain = calls[str(root.resolve() / "plain.cu")]
    assert "USE_ROCM" not in plain and str(torch_inc) not in plain


def test_missing_hipcc_says_how_to_install(tmp_path, monkeypatch, capsys):
    root = tmp_path / "out"
    root.mkdir()
    monkeypatch.setenv("HIPPORT_HIPCC", str(tmp_path / "no-such-hipcc"))
    with pytest.raises(SystemExit) as exit_:
        from hipport.cli import main as entry

        entry(["verify", str(root)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "hipcc not found" in err and "apt-get install -y hipcc libamdhip64-dev rocm-device-libs" in err


def test_missing_output_folder_is_a_usage_error(tmp_path):
    from hipport.cli import main as entry

    with pytest.raises(SystemExit) as exit_:
        entry(["verify", str(tmp_path / "nothing")])
    assert exit_.value.code == 2


# ---------------------------------------------------------------------------------------------
# with Debian's hipcc: the CI check of the ported plain-CUDA example


@requires_hipcc
@pytest.mark.hipcc
def test_verify_ported_plain_cuda_example(tmp_path, capsys):
    out = tmp_path / "saxpy_ops"
    with pytest.raises(SystemExit) as exit_:
        main(["port", str(ROOT / "examples" / "saxpy_ops"), "-o", str(out), "--target-hip", "5.2", "-j", "1"])
    assert exit_.value.code == 0
    capsys.readouterr()
    assert run_cli(str(out)) == 0
    text = capsys.readouterr().out
    statuses = dict(line.split()[1::-1] for line in text.splitlines()[1:-1])
    assert statuses["src/saxpy.cu"] == "OK" and statuses["src/reduce.cu"] == "OK"
    assert statuses["src/random_fill.cu"] == "OK" and statuses["src/main.cpp"] == "OK"
    # hipBLAS is not packaged for Debian bookworm: reported, not failed (OK where it is installed).
    assert statuses["src/blas_ops.cu"] in ("OK", "MISSING")


def verify_one(folder: Path, name: str, text: str, capsys) -> tuple[int, str]:
    """`hipport verify` of a folder holding one file: its exit code, and the file's line."""
    folder.mkdir()
    (folder / name).write_text(text)
    code = run_cli(str(folder))
    return code, next(line for line in capsys.readouterr().out.splitlines() if name in line)


@requires_hipcc
@pytest.mark.hipcc
def test_verify_reports_a_real_compile_error(tmp_path, capsys):
    code, line = verify_one(tmp_path / "bad", "k.hip",
                            "#include <hip/hip_runtime.h>\n__global__ void k(float* x) { x[0] = undeclared; }\n", capsys)
    assert code == 1
    assert line.startswith("FAIL") and "k.hip:2:" in line and "undeclared" in line


@requires_hipcc
@pytest.mark.hipcc
def test_verify_compiles_a_c_file_as_c(tmp_path, capsys):
    # A tree's C files (cuda-samples' GL helpers) are compiled as C: clang refuses -std=c++17 there.
    code, line = verify_one(tmp_path / "c", "helper.c",
                            "static int twice(int x) { return 2 * x; }\nint four(void) { return twice(2); }\n", capsys)
    assert code == 0 and line.startswith("OK")
    # HIP's runtime API from C (cuda-samples' libNVVM samples), with the platform macro CMake's
    # hip::host target gives: without it hip_runtime_api.h stops at its #error.
    code, line = verify_one(tmp_path / "c_api", "devices.c",
                            "#include <hip/hip_runtime_api.h>\n"
                            "int count(void) { int n = 0; return hipGetDeviceCount(&n) == hipSuccess ? n : 0; }\n", capsys)
    assert code == 0 and line.startswith("OK"), line


@requires_hipcc
@pytest.mark.hipcc
def test_verify_ported_torch_example_fails_nothing(tmp_path, capsys):
    """The ROCm PyTorch headers are not installed here: every file is OK or MISSING, none FAILs."""
    out = tmp_path / "fused_ops_ext"
    with pytest.raises(SystemExit) as exit_:
        main(["port", str(ROOT / "examples" / "fused_ops_ext"), "-o", str(out), "--target-hip", "5.2", "-j", "1"])
    assert exit_.value.code == 0
    capsys.readouterr()
    code = run_cli(str(out))
    text = capsys.readouterr().out
    assert code == 0, text
    assert "FAIL " not in text


def test_format_text_aligns_columns():
    outcomes = [verify.Outcome("a.cu", "OK"), verify.Outcome("long/path/b.cu", "FAIL", "b.cu:1:1: error: x")]
    lines = verify.format_text(outcomes).splitlines()
    assert lines[0] == "OK       a.cu"
    assert lines[1] == "FAIL     long/path/b.cu  b.cu:1:1: error: x"
    assert lines[2] == "2 files: 1 OK, 1 FAIL"
