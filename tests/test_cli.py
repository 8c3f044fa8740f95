"""`hipport port` as a user of hipify or ruff meets it: modes, trees, reports, bad input.

The CLI runs in-process through hipport.cli.main (output captured with capsysbinary), except
where the test is about `python -m hipport` itself. Inputs are small trees written under
tmp_path, plus the repository's examples/ and fixtures/ folders, which are only read.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from hipport import __version__
from hipport.config import Settings
from hipport.loaders import tools
from clitools import hipport

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "saxpy_ops"
FIXTURES = REPO / "fixtures"
BROKEN = FIXTURES / "broken"




def files_under(root: Path) -> dict[str, bytes]:
    """Relative path -> bytes of every regular file (links not followed)."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.is_symlink():
            out[p.relative_to(root).as_posix()] = p.read_bytes()
    return out


def snapshot(root: Path) -> dict[str, tuple]:
    """Everything a run could change: entries, bytes, modes, mtimes, link targets."""
    out = {}
    for p in sorted(root.rglob("*")):
        st_ = p.lstat()
        rel = p.relative_to(root).as_posix()
        if p.is_symlink():
            out[rel] = ("link", os.readlink(p))
        elif p.is_dir():
            out[rel] = ("dir", stat.S_IMODE(st_.st_mode))
        else:
            out[rel] = ("file", hashlib.sha256(p.read_bytes()).hexdigest(), stat.S_IMODE(st_.st_mode), st_.st_mtime_ns)
    return out


def report_of(folder: Path) -> dict:
    return json.loads((folder / "report.json").read_text(encoding="utf-8"))


def entry(report: dict, source: str) -> dict:
    matches = [f for f in report["files"] if f["source"] == source]
    assert len(matches) == 1, f"{source} appears {len(matches)} times in report.json"
    return matches[0]


KERNEL = b"""#include <cuda_runtime.h>
#include "k.cuh"

__global__ void scale(float* p, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] *= a;
}

void run(float* host, int n) {
    float* dev = nullptr;
    cudaMalloc(&dev, n * sizeof(float));
    cudaMemcpy(dev, host, n * sizeof(float), cudaMemcpyHostToDevice);
    scale<<<(n + 255) / 256, 256>>>(dev, 2.0f, n);
    cudaDeviceSynchronize();
    cudaFree(dev);
}
"""
HEADER = b"""#pragma once
#include <cuda_runtime.h>
inline void check(cudaError_t e) { if (e != cudaSuccess) throw e; }
"""
PLAIN_CPP = b"#include <cstdio>\nint main() { std::puts(\"no cuda here\"); return 0; }\n"
CMAKE = b"cmake_minimum_required(VERSION 3.18)\nproject(demo LANGUAGES CXX CUDA)\nadd_library(demo src/k.cu)\n"
README = b"# demo\n\nCall cudaMalloc, then cudaFree.\n"
SCRIPT = b"#!/usr/bin/env python3\nprint('cudaMalloc is just a word here')\n"


def make_tree(root: Path) -> Path:
    """A small project: changed .cu/.cuh, an unchanged .cpp, build files, docs, an executable."""
    (root / "src").mkdir(parents=True)
    (root / "include").mkdir()
    (root / "tools").mkdir()
    (root / "src" / "k.cu").write_bytes(KERNEL)
    (root / "include" / "k.cuh").write_bytes(HEADER)
    (root / "src" / "main.cpp").write_bytes(PLAIN_CPP)
    (root / "CMakeLists.txt").write_bytes(CMAKE)
    (root / "README.md").write_bytes(README)
    (root / "tools" / "gen.py").write_bytes(SCRIPT)
    (root / "tools" / "gen.py").chmod(0o755)
    (root / "src" / "k.cu").chmod(0o750)
    return root


# --- -o OUT ---------------------------------------------------------------------------------

def test_out_mirrors_the_tree(tmp_path, capsysbinary):
    src = make_tree(tmp_path / "proj")
    before = snapshot(src)
    out = tmp_path / "out"
    assert hipport("port", src, "-o", out) == 0
    assert snapshot(src) == before  # the input is only read
    inputs, outputs = files_under(src), files_under(out)
    assert sorted(outputs) == sorted(inputs)
    for rel in ("README.md", "tools/gen.py", "src/main.cpp"):
        assert outputs[rel] == inputs[rel], rel
    for rel in ("src/k.cu", "include/k.cuh", "CMakeLists.txt"):
        assert outputs[rel] != inputs[rel], rel
    assert b"CUDA" not in outputs["CMakeLists.txt"] and b"HIP" in outputs["CMakeLists.txt"]
    assert b"hipMalloc(&dev" in outputs["src/k.cu"] and b"cudaMalloc" not in outputs["src/k.cu"]
    assert b"scale<<<" in outputs["src/k.cu"]  # launches are kept by default
    assert b"#include <hip/hip_runtime.h>" in outputs["include/k.cuh"]
    for rel in inputs:
        assert stat.S_IMODE((out / rel).stat().st_mode) == stat.S_IMODE((src / rel).stat().st_mode), rel
    assert os.access(out / "tools" / "gen.py", os.X_OK)
    captured = capsysbinary.readouterr()
    assert captured.out == b""  # the summary goes to stderr
    assert captured.err.strip()


def test_out_again_rewrites_only_what_differs(tmp_path, capsysbinary):
    src = make_tree(tmp_path / "proj")
    out = tmp_path / "out"
    assert hipport("port", src, "-o", out) == 0
    old = 1_000_000_000  # mark every output file with an old mtime
    for p in out.rglob("*"):
        os.utime(p, (old, old))
    (out / "README.md").write_bytes(b"edited by hand\n")  # wrong bytes: written again
    (out / "src" / "main.cpp").chmod(0o600)  # wrong mode: written again
    (src / "include" / "k.cuh").write_bytes(HEADER + b"// changed\n")  # new input
    assert hipport("port", src, "-o", out) == 0
    rewritten = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and p.stat().st_mtime != old}
    assert rewritten == {"README.md", "src/main.cpp", "include/k.cuh"}
    assert files_under(out)["README.md"] == files_under(src)["README.md"]
    assert stat.S_IMODE((out / "src" / "main.cpp").stat().st_mode) == stat.S_IMODE((src / "src" / "main.cpp").stat().st_mode)
    assert (out / "include" / "k.cuh").read_bytes().endswith(b"// changed\n")


def test_out_removed_between_runs_of_one_process(tmp_path, capsysbinary):
    src = make_tree(tmp_path / "proj")
    out = tmp_path / "out"
    assert hipport("port", src, "-o", out) == 0
    shutil.rmtree(out)  # the same process (an editor plugin, a test) ports again
    assert hipport("port", src, "-o", out) == 0
    assert sorted(files_under(out)) == sorted(files_under(src))


def test_out_given_a_single_file(tmp_path, capsysbinary):
    src = make_tree(tmp_path / "proj")
    out = tmp_path / "out"
    assert hipport("port", src / "src" / "k.cu", "-o", out) == 0
    assert files_under(out).keys() == {"k.cu"}
    assert b"hipMemcpyHostToDevice" in (out / "k.cu").read_bytes()
    assert capsysbinary.readouterr().err.startswith(b"1 file: 1 changed,")


# --- --stdout ---------------------------------------------------------------------------------

def test_stdout_prints_exactly_the_ported_bytes(tmp_path, capsysbinary):
    src = make_tree(tmp_path / "proj")
    out = tmp_path / "out"
    assert hipport("port", src, "-o", out) == 0
    capsysbinary.readouterr()
    assert hipport("port", src / "src" / "k.cu", "--stdout") == 0
    captured = capsysbinary.readouterr()
    assert captured.out == (out / "src" / "k.cu").read_bytes()
    assert captured.out != KERNEL


def test_single_file_defaults_to_stdout(tmp_path, capsysbinary):
    src = make_tree(tmp_path / "proj")
    before = snapshot(src)
    assert hipport("port", src / "include" / "k.cuh", "--stdout") == 0
    explicit = capsysbinary.readouterr().out
    assert hipport("port", src / "include" / "k.cuh") == 0
    captured = capsysbinary.readouterr()
    assert captured.out == explicit
    assert b"hipError_t" in captured.out
    assert snapshot(src) == before


def test_stdout_keeps_crlf_and_bom(tmp_path, capsysbinary):
    data = b"\xef\xbb\xbf" + KERNEL.replace(b"\n", b"\r\n")
    (tmp_path / "w.cu").write_bytes(data)
    assert hipport("port", tmp_path / "w.cu") == 0
    out = capsysbinary.readouterr().out
    assert out.startswith(b"\xef\xbb\xbf#include <hip/hip_runtime.h>\r\n")
    assert out.count(b"\n") == out.count(b"\r\n") == data.count(b"\r\n")


def test_stdout_with_a_directory_is_a_usage_error(tmp_path, capsysbinary):
    src = make_tree(tmp_path / "proj")
    assert hipport("port", src, "--stdout") == 2
    captured = capsysbinary.readouterr()
    assert captured.out == b""
    assert b"--stdout" in captured.err


def test_stdout_follows_a_symlink_named_on_the_command_line(tmp_path, capsysbinary):
    (tmp_path / "real.cu").write_bytes(KERNEL)
    (tmp_path / "alias.cu").symlink_to("real.cu")
    assert hipport("port", tmp_path / "real.cu", "--stdout") == 0
    expected = capsysbinary.readouterr().out
    assert hipport("port", tmp_path / "alias.cu", "--stdout") == 0
    assert capsysbinary.readouterr().out == expected


# --- --diff -----------------------------------------------------------------------------------

def test_diff_prints_a_unified_diff_and_writes_nothing(tmp_path, capsysbinary):
    src = make_tree(tmp_path / "proj")
    before, around = snapshot(src), sorted(p.name for p in tmp_path.iterdir())
    assert hipport("port", src, "--diff") == 0
    diff = capsysbinary.readouterr().out
    assert snapshot(src) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == around
    assert b"--- a/src/k.cu\n+++ b/src/k.cu\n" in diff
    assert b"--- a/include/k.cuh\n+++ b/include/k.cuh\n" in diff
    assert b"\n-    cudaMalloc(&dev, n * sizeof(float));\n" in diff
    assert b"\n+    hipMalloc(&dev, n * sizeof(float));\n" in diff
    assert b"@@ " in diff
    assert b"--- a/CMakeLists.txt\n+++ b/CMakeLists.txt\n" in diff  # build files are ported too
    for unchanged in (b"main.cpp", b"README.md", b"gen.py"):
        assert unchanged not in diff


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs patch(1)")
def test_diff_applies_to_give_the_out_tree(tmp_path, capsysbinary):
    src = make_tree(tmp_path / "proj")
    out = tmp_path / "out"
    assert hipport("port", src, "-o", out) == 0
    capsysbinary.readouterr()
    assert hipport("port", src, "--diff") == 0
    diff = capsysbinary.readouterr().out
    work = tmp_path / "work"
    shutil.copytree(src, work)
    subprocess.run(["patch", "-s", "-p1"], cwd=work, input=diff, check=True)
    assert files_under(work) == files_under(out)


# --- --in-place -------------------------------------------------------------------------------

def test_in_place_rewrites_only_changed_files(tmp_path, capsysbinary):
    src = make_tree(tmp_path / "proj")
    before = snapshot(src)
    expected = tmp_path / "expected"
    assert hipport("port", src, "-o", expected) == 0
    assert hipport("port", src, "--in-place") == 0
    after = snapshot(src)
    assert files_under(src) == files_under(expected)
    assert sorted(after) == sorted(before)  # no new entries: no *.hipport-tmp left behind
    assert not list(src.rglob("*hipport-tmp*"))
    for rel in ("src/main.cpp", "README.md", "tools/gen.py"):
        assert after[rel] == before[rel], rel  # same bytes, mode and mtime_ns: never rewritten
    for rel in ("src/k.cu", "include/k.cuh", "CMakeLists.txt"):
        assert after[rel][1] != before[rel][1], rel
        assert after[rel][2] == before[rel][2], rel  # mode kept
    assert stat.S_IMODE((src / "src" / "k.cu").stat().st_mode) == 0o750


def test_in_place_twice_changes_nothing_the_second_time(tmp_path, capsysbinary):
    src = make_tree(tmp_path / "proj")
    assert hipport("port", src, "--in-place") == 0
    once = snapshot(src)
    assert hipport("port", src, "--in-place") == 0
    assert snapshot(src) == once


def test_in_place_rename(tmp_path, capsysbinary):
    src = make_tree(tmp_path / "proj")
    (src / "src" / "main.cpp").write_bytes(b'#include "k.cu"\nint main() { return 0; }\n')
    (src / "src" / "host.cu").write_bytes(b"int host_only() { return 1; }\n")  # unchanged, renamed all the same
    assert hipport("port", src, "--in-place", "--rename") == 0
    names = files_under(src)
    assert "src/k.hip" in names and "src/k.cu" not in names
    assert "src/host.hip" in names and "src/host.cu" not in names
    assert names["src/host.hip"] == b"int host_only() { return 1; }\n"
    assert "include/k.cuh" in names  # .cuh keeps its name
    assert names["src/main.cpp"] == b'#include "k.hip"\nint main() { return 0; }\n'
    assert stat.S_IMODE((src / "src" / "k.hip").stat().st_mode) == 0o750
    assert not list(src.rglob("*hipport-tmp*"))


def test_in_place_rename_never_overwrites_an_existing_hip_file(tmp_path, capsysbinary):
    (tmp_path / "k.cu").write_bytes(b"void f() { cudaFree(0); }\n")
    (tmp_path / "k.hip").write_bytes(b"// hand-written HIP version, keep me\n")
    hipport("port", tmp_path, "--in-place", "--rename")
    assert (tmp_path / "k.hip").read_bytes() == b"// hand-written HIP version, keep me\n"
    assert (tmp_path / "k.cu").exists()


def test_out_rename_collision_is_refused(tmp_path, capsysbinary):
    src = tmp_path / "proj"
    src.mkdir()
    (src / "k.cu").write_bytes(b"void f() { cudaFree(0); }\n")
    (src / "k.hip").write_bytes(b"// hand-written HIP version\n")
    code = hipport("port", src, "-o", tmp_path / "out", "--rename", "--report", tmp_path / "rep")
    if code == 0:  # or a run that reports the clash on the file
        statuses = {f["source"]: f["status"] for f in report_of(tmp_path / "rep")["files"]}
        assert statuses["k.cu"] in ("failed", "skipped")
        assert (tmp_path / "out" / "k.hip").read_bytes() == b"// hand-written HIP version\n"
    else:
        assert code == 2
        assert b"k.hip" in capsysbinary.readouterr().err
        assert not (tmp_path / "out").exists()


# --- --rename with -o -------------------------------------------------------------------------

def test_out_rename_renames_cu_and_fixes_includes(tmp_path, capsysbinary):
    src = make_tree(tmp_path / "proj")
    (src / "src" / "main.cpp").write_bytes(b'#include "k.cu"\n#include <k.cu>\nint main() { return 0; }\n')
    (src / "tests").mkdir()
    (src / "tests" / "t.cu").write_bytes(b'#include "../src/k.cu"\n#include "../include/k.cuh"\n')
    out, rep = tmp_path / "out", tmp_path / "rep"
    assert hipport("port", src, "-o", out, "--rename", "--report", rep) == 0
    names = files_under(out)
    assert {"src/k.hip", "tests/t.hip", "include/k.cuh"} <= names.keys()
    assert "src/k.cu" not in names and "tests/t.cu" not in names
    assert names["src/main.cpp"].startswith(b'#include "k.hip"\n')
    assert b"#include <k.cu>" in names["src/main.cpp"]  # only quoted includes name project files
    assert names["tests/t.hip"] == b'#include "../src/k.hip"\n#include "../include/k.cuh"\n'
    report = report_of(rep)
    k = entry(report, "src/k.cu")
    assert k["output"] == "src/k.hip" and k["renamed_from"] == "src/k.cu"
    h = entry(report, "include/k.cuh")
    assert h["output"] == "include/k.cuh" and "renamed_from" not in h


def test_keep_names_is_the_default(tmp_path, capsysbinary):
    src = make_tree(tmp_path / "proj")
    assert hipport("port", src, "-o", tmp_path / "a") == 0
    assert hipport("port", src, "-o", tmp_path / "b", "--keep-names") == 0
    assert files_under(tmp_path / "a") == files_under(tmp_path / "b")
    assert "src/k.cu" in files_under(tmp_path / "a")


@pytest.mark.parametrize("mode", ["out", "in-place"])
def test_rename_keeps_links_to_renamed_files_working(tmp_path, capsysbinary, mode):
    src = tmp_path / "proj"
    src.mkdir()
    (src / "good.cu").write_bytes(KERNEL)
    (src / "alias.cu").symlink_to("good.cu")
    (src / "view.cuh").symlink_to("good.cu")
    if mode == "out":
        assert hipport("port", src, "-o", tmp_path / "out", "--rename") == 0
        root = tmp_path / "out"
    else:
        assert hipport("port", src, "--in-place", "--rename") == 0
        root = src
    links = [p for p in root.iterdir() if p.is_symlink()]
    assert len(links) == 2
    for link in links:
        assert link.exists(), f"{link.name} -> {os.readlink(link)} dangles"


# --- --report ---------------------------------------------------------------------------------

def test_report_json(tmp_path, capsysbinary):
    out, rep = tmp_path / "out", tmp_path / "rep"
    assert hipport("port", EXAMPLE, "-o", out, "--report", rep) == 0
    assert b"report.json" in capsysbinary.readouterr().err
    report = report_of(rep)
    assert report["version"] == 1
    assert report["tool"] == {"name": "hipport", "version": __version__}
    sources = sorted(f["source"] for f in report["files"])
    assert sources == sorted(files_under(EXAMPLE))
    for f in report["files"]:
        for key in ("source", "output", "changed", "replacements", "status"):
            assert key in f, (f["source"], key)
        assert f["status"] in ("ported", "unchanged")
        assert f["changed"] == (f["status"] == "ported")
        assert f["changed"] == ((out / f["output"]).read_bytes() != (EXAMPLE / f["source"]).read_bytes())
        assert sum(f["by_library"].values()) == f["replacements"], f["source"]
    summary = report["summary"]
    assert summary["files"] == len(report["files"])
    assert summary["changed"] == sum(f["changed"] for f in report["files"])
    assert summary["replacements"] == sum(f["replacements"] for f in report["files"])
    assert sum(summary["replacements_by_library"].values()) == summary["replacements"]
    per_library: dict[str, int] = {}
    for f in report["files"]:
        for lib, n in f["by_library"].items():
            per_library[lib] = per_library.get(lib, 0) + n
    assert summary["replacements_by_library"] == per_library
    assert {"runtime", "cublas", "curand"} <= per_library.keys()
    saxpy = entry(report, "src/saxpy.cu")
    assert saxpy["changed"] and saxpy["replacements"] > 0 and saxpy["by_library"]["runtime"] > 0
    cmake = entry(report, "CMakeLists.txt")
    assert cmake["changed"] is True and cmake["kind"] == "cmake"
    assert entry(report, "README.md")["changed"] is False


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_written_outputs_get_the_mode_a_new_file_gets(umask, tmp_path, capsysbinary):
    """check -o, estimate -o, a baseline and the report are files to share: their mode is what
    the umask gives a new file, as a shell's `>` gives, not the private mode of the temporary
    file they are written through; one written again keeps the mode its owner gave it."""
    src = make_tree(tmp_path / "src")
    outs = tmp_path / "outs"
    old = os.umask(umask)
    try:
        hipport("check", src, "--format", "sarif", "-o", outs / "check.sarif", "--exit-zero")
        hipport("check", src, "--write-baseline", outs / "baseline.json")
        hipport("estimate", src, "-o", outs / "estimate.txt")
        hipport("port", src, "-o", tmp_path / "out", "--report", outs / "report")
        written = sorted(p for p in outs.rglob("*") if p.is_file())
        assert [p.name for p in written] == ["baseline.json", "check.sarif", "estimate.txt", "report.html",
                                             "report.json", "report.md"]
        for p in written:
            assert stat.S_IMODE(p.stat().st_mode) == 0o666 & ~umask, p.name
        (outs / "check.sarif").chmod(0o600)
        hipport("check", src, "--format", "sarif", "-o", outs / "check.sarif", "--exit-zero")
        assert stat.S_IMODE((outs / "check.sarif").stat().st_mode) == 0o600
    finally:
        os.umask(old)


@pytest.mark.parametrize("proc", [True, False])
def test_the_umask_is_read_without_being_set_where_linux_shows_it(proc, monkeypatch):
    """Setting the umask to read it would give a file another thread makes meanwhile mode
    0666: /proc/self/status shows it; elsewhere it is set and set back."""
    import builtins

    from hipport import emit

    real_open, real_umask, set_to = builtins.open, os.umask, []

    def no_proc(path, *args, **kwargs):
        if str(path).startswith("/proc/"):
            raise FileNotFoundError(path)
        return real_open(path, *args, **kwargs)

    def umask(mask):
        set_to.append(mask)
        return real_umask(mask)

    if not proc:
        monkeypatch.setattr(builtins, "open", no_proc)
    old = real_umask(0o027)
    try:
        monkeypatch.setattr(os, "umask", umask)
        assert emit._umask() == 0o027
        assert set_to == ([] if proc and os.path.exists("/proc/self/status") else [0, 0o027])
    finally:
        real_umask(old)


def test_report_with_diff_writes_only_the_report(tmp_path, capsysbinary):
    src = make_tree(tmp_path / "proj")
    before = snapshot(src)
    assert hipport("port", src, "--diff", "--report", tmp_path / "rep") == 0
    assert snapshot(src) == before
    assert entry(report_of(tmp_path / "rep"), "src/k.cu")["changed"] is True


# --- bad command lines ------------------------------------------------------------------------

def test_missing_path(tmp_path, capsysbinary):
    missing = tmp_path / "no_such_dir"
    assert hipport("port", missing, "-o", tmp_path / "out") == 2
    assert str(missing).encode() in capsysbinary.readouterr().err
    assert not (tmp_path / "out").exists()


def test_one_missing_path_among_several_stops_before_writing(tmp_path, capsysbinary):
    src = make_tree(tmp_path / "proj")
    assert hipport("port", src / "src", src / "nope.cu", "-o", tmp_path / "out") == 2
    assert b"nope.cu" in capsysbinary.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("where", ["inside", "same", "around"])
def test_out_overlapping_the_input_is_refused(tmp_path, capsysbinary, where):
    src = make_tree(tmp_path / "proj")
    out = {"inside": src / "hip", "same": src, "around": tmp_path}[where]
    before = snapshot(tmp_path)
    assert hipport("port", src, "-o", out) == 2
    err = capsysbinary.readouterr().err
    assert str(out).encode() in err and (b"inside" in err or b"contains" in err)
    assert snapshot(tmp_path) == before  # nothing written anywhere


def test_out_beside_a_file_given_alone_is_allowed(tmp_path, capsysbinary):
    """Only the file is read, so OUT may sit in its folder (it was refused as "inside the
    input" of a folder the user never named)."""
    src = make_tree(tmp_path / "proj")
    one = next(p for p in sorted(src.rglob("*.cu")))
    out = one.parent / "hip"
    assert hipport("port", one, "-o", out) == 0
    assert (out / one.name).read_bytes() != one.read_bytes() and [p.name for p in out.iterdir()] == [one.name]
    assert hipport("port", one.parent, "-o", one.parent / "hip2") == 2  # a folder input still refuses


def test_out_inside_input_through_a_relative_spelling(tmp_path, capsysbinary, monkeypatch):
    src = make_tree(tmp_path / "proj")
    monkeypatch.chdir(src / "src")
    before = snapshot(tmp_path)
    assert hipport("port", "..", "-o", "../hip") == 2
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("args", [
    ["-o", "OUT", "--in-place"],
    ["-o", "OUT", "--diff"],
    ["--in-place", "--stdout"],
    ["--stdout", "--diff"],
], ids=lambda a: "+".join(x for x in a if x != "OUT"))
def test_two_modes_at_once(tmp_path, capsysbinary, args):
    src = make_tree(tmp_path / "proj")
    before = snapshot(tmp_path)
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in args]
    assert hipport("port", src / "src" / "k.cu", *argv) == 2
    captured = capsysbinary.readouterr()
    assert captured.out == b"" and b"--in-place" in captured.err  # the message lists the modes
    assert snapshot(tmp_path) == before


def test_directory_without_a_mode(tmp_path, capsysbinary):
    src = make_tree(tmp_path / "proj")
    assert hipport("port", src) == 2
    captured = capsysbinary.readouterr()
    assert captured.out == b"" and b"-o" in captured.err and b"--in-place" in captured.err


@pytest.mark.parametrize("args", [
    ["--target-hip", "banana"],
    ["--target-hip", "6"],
    ["--launch-syntax", "chevrons"],
    ["--libs", "cuda"],
    ["-j", "-1"],
    ["--no-such-option"],
])
def test_bad_option_values(tmp_path, capsysbinary, args):
    src = make_tree(tmp_path / "proj")
    before = snapshot(tmp_path)
    assert hipport("port", src, "-o", tmp_path / "out", *args) == 2
    assert capsysbinary.readouterr().err.strip()
    assert snapshot(tmp_path) == before


def test_no_path_is_a_usage_error(capsysbinary):
    assert hipport("port") == 2


def test_out_that_is_a_file(tmp_path, capsysbinary):
    src = make_tree(tmp_path / "proj")
    (tmp_path / "out").write_bytes(b"not a folder")
    assert hipport("port", src, "-o", tmp_path / "out") == 2


def test_a_file_named_like_an_excluded_folder_is_mirrored(tmp_path, capsysbinary):
    src = make_tree(tmp_path / "proj")
    (src / "build").write_bytes(b"#!/bin/sh\ncmake --build .\n")
    assert hipport("port", src, "-o", tmp_path / "out") == 0
    assert (tmp_path / "out" / "build").read_bytes() == b"#!/bin/sh\ncmake --build .\n"


def test_excluded_folders_are_not_ported_and_vendored_code_is_copied(tmp_path, capsysbinary):
    src = make_tree(tmp_path / "proj")
    for d in (".git", "build", "third_party/lib"):
        (src / d).mkdir(parents=True)
        (src / d / "x.cu").write_bytes(KERNEL)
    assert hipport("port", src, "-o", tmp_path / "out", "--report", tmp_path / "rep") == 0
    files = {f["source"]: f for f in report_of(tmp_path / "rep")["files"]}
    assert set(files) == set(files_under(make_tree(tmp_path / "plain"))) | {"third_party/lib/x.cu"}
    # Vendored code is copied so OUT builds, but never ported; VCS data and build output are not copied.
    assert files["third_party/lib/x.cu"]["changed"] is False
    assert (tmp_path / "out" / "third_party" / "lib" / "x.cu").read_bytes() == KERNEL
    assert not (tmp_path / "out" / ".git").exists() and not (tmp_path / "out" / "build").exists()


def test_output_inside_a_build_folder_of_the_input_is_allowed(tmp_path, capsysbinary):
    src = make_tree(tmp_path / "proj")
    assert hipport("port", src, "-o", src / "build" / "hip") == 0
    assert hipport("port", src, "-o", src / "hip") == 2


# --- bad files inside a tree ------------------------------------------------------------------

@pytest.fixture
def broken_tree(tmp_path):
    src = tmp_path / "proj"
    src.mkdir()
    for name in ("binary.cu", "empty.cu", "unterminated_comment.cu", "unbalanced.cu"):
        shutil.copyfile(BROKEN / name, src / name)
    shutil.copyfile(FIXTURES / "port" / "encoding" / "latin1_comment.cu", src / "latin1.cu")
    (src / "good.cu").write_bytes(KERNEL)
    (src / "sub").mkdir()
    (src / "sub" / "h.cuh").write_bytes(HEADER)
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "outside.cu").write_bytes(b"void outside() { cudaFree(0); } // SECRET-OUTSIDE\n")
    (src / "escape.cu").symlink_to(secret / "outside.cu")  # absolute, leaves the tree
    (src / "escape_rel.cu").symlink_to(Path("..") / "secret" / "outside.cu")
    (src / "escape_dir").symlink_to(secret, target_is_directory=True)
    (src / "alias.cu").symlink_to("good.cu")  # stays in the tree
    (src / "subalias").symlink_to("sub", target_is_directory=True)
    return src


def test_bad_files_do_not_stop_the_run(tmp_path, capsysbinary, broken_tree):
    src, out, rep = broken_tree, tmp_path / "out", tmp_path / "rep"
    assert hipport("port", src, "-o", out, "--report", rep) == 0
    err = capsysbinary.readouterr().err
    report = report_of(rep)

    binary = entry(report, "binary.cu")
    assert binary["status"] == "skipped" and "binary" in binary["reason"]
    assert (out / "binary.cu").read_bytes() == (src / "binary.cu").read_bytes()
    assert b"binary.cu" in err

    empty = entry(report, "empty.cu")
    assert empty["status"] == "unchanged" and empty["changed"] is False
    assert (out / "empty.cu").is_file() and (out / "empty.cu").read_bytes() == b""

    latin = entry(report, "latin1.cu")
    assert latin["status"] == "ported" and latin["encoding"] == "non-utf-8"
    original, ported = (src / "latin1.cu").read_bytes(), (out / "latin1.cu").read_bytes()
    non_utf8_lines = [line for line in original.splitlines(keepends=True) if any(b >= 0x80 for b in line)]
    assert len(non_utf8_lines) == 2
    for line in non_utf8_lines:
        assert line in ported  # the Latin-1 comments, byte for byte
    assert b"hipMalloc(&dev" in ported and b"cudaMalloc" not in ported
    assert b"bump<<<(n + 63) / 64, 64>>>(dev, n);" in ported
    assert ported.count(b"\n") == original.count(b"\n")  # cuda_runtime.h replaced, no line added

    unterminated = entry(report, "unterminated_comment.cu")
    assert unterminated["status"] == "ported"
    original, ported = (src / "unterminated_comment.cu").read_bytes(), (out / "unterminated_comment.cu").read_bytes()
    comment = original[original.index(b"/*"):]
    assert ported.endswith(comment)  # the never-closed comment runs to the end, untouched
    assert b"cudaFree(p);" in comment
    assert b"hipMalloc(&p" in ported[: -len(comment)] and b"hipMemset(p" in ported[: -len(comment)]

    assert entry(report, "unbalanced.cu")["status"] == "ported"
    assert b"hipMalloc(&p" in (out / "unbalanced.cu").read_bytes()

    for link in ("escape.cu", "escape_rel.cu", "escape_dir"):
        e = entry(report, link)
        assert e["status"] == "skipped" and "symlink" in e["reason"], link
        assert not os.path.lexists(out / link), link
        assert link.encode() in err
    assert not any(b"SECRET-OUTSIDE" in data for data in files_under(out).values())
    assert not any("outside" in p.name for p in out.rglob("*"))

    for link, target in (("alias.cu", "good.cu"), ("subalias", "sub")):
        assert (out / link).is_symlink(), link
        assert os.readlink(out / link) == target
        assert entry(report, link)["status"] == "unchanged"
    assert (out / "alias.cu").read_bytes() == (out / "good.cu").read_bytes()  # resolves inside OUT

    assert entry(report, "good.cu")["status"] == "ported"
    assert entry(report, "sub/h.cuh")["status"] == "ported"
    summary = report["summary"]
    assert summary["files"] == len(report["files"])
    assert summary["by_status"].get("failed", 0) == 0


def test_bad_files_in_place_are_left_alone(tmp_path, capsysbinary, broken_tree):
    src = broken_tree
    before = snapshot(tmp_path)
    assert hipport("port", src, "--in-place") == 0
    after = snapshot(tmp_path)
    for rel in ("proj/binary.cu", "proj/empty.cu", "proj/escape.cu", "proj/alias.cu", "secret/outside.cu"):
        assert after[rel] == before[rel], rel
    assert after["proj/latin1.cu"] != before["proj/latin1.cu"]


def _unblock_fifo(path: Path, writer: threading.Thread) -> None:
    """Let a writer blocked in open() go: open the read end without blocking, then close it."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    writer.join(timeout=10)
    os.close(fd)


def test_a_fifo_in_the_tree_is_skipped_not_read(tmp_path, capsysbinary):
    src = tmp_path / "proj"
    src.mkdir()
    (src / "good.cu").write_bytes(KERNEL)
    fifo = src / "pipe.cu"
    os.mkfifo(fifo)
    read = []

    def writer():  # only a reader of the FIFO lets this open() return
        try:
            with open(fifo, "wb") as f:
                read.append(True)
                f.write(b"void f() { cudaFree(0); }\n")
        except OSError:
            pass

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    try:
        hipport("port", src, "-o", tmp_path / "out", "--report", tmp_path / "rep", "-j", "1")
        opened = list(read)  # before the clean-up below opens the read end itself
    finally:
        if t.is_alive():
            _unblock_fifo(fifo, t)
    assert opened == []  # hipport never opened the FIFO for reading
    assert entry(report_of(tmp_path / "rep"), "pipe.cu")["status"] == "skipped"


# --- launch syntax ----------------------------------------------------------------------------

LAUNCH = b"""__global__ void k(float* p, int n) {}
void go(float* p, int n, cudaStream_t s) {
    k<<<(n + 63) / 64, 64>>>(p, n);
    k<<<dim3(4, 4), dim3(8, 8), 0, s>>>(p, n);
}
"""


def test_launch_syntax(tmp_path, capsysbinary):
    (tmp_path / "l.cu").write_bytes(LAUNCH)
    assert hipport("port", tmp_path / "l.cu", "--launch-syntax", "hip") == 0
    hip = capsysbinary.readouterr().out
    assert b"<<<" not in hip and b">>>" not in hip
    assert b"hipLaunchKernelGGL(k, dim3((n + 63) / 64), dim3(64), 0, 0, p, n);" in hip
    assert b"hipLaunchKernelGGL(k, dim3(dim3(4, 4)), dim3(dim3(8, 8)), 0, s, p, n);" in hip
    assert hipport("port", tmp_path / "l.cu") == 0
    kept = capsysbinary.readouterr().out
    assert b"k<<<(n + 63) / 64, 64>>>(p, n);" in kept
    assert b"k<<<dim3(4, 4), dim3(8, 8), 0, s>>>(p, n);" in kept
    assert b"hipLaunchKernelGGL" not in kept
    assert hipport("port", tmp_path / "l.cu", "--launch-syntax", "keep") == 0
    assert capsysbinary.readouterr().out == kept


def test_launch_syntax_from_config_file_and_command_line_wins(tmp_path, capsysbinary):
    (tmp_path / ".hipport.toml").write_text('[tool.hipport]\nlaunch-syntax = "hip"\n')
    (tmp_path / "l.cu").write_bytes(LAUNCH)
    assert hipport("port", tmp_path / "l.cu") == 0
    assert b"hipLaunchKernelGGL" in capsysbinary.readouterr().out
    assert hipport("port", tmp_path / "l.cu", "--launch-syntax", "keep") == 0
    assert b"hipLaunchKernelGGL" not in capsysbinary.readouterr().out


# --- parallel runs ----------------------------------------------------------------------------

def test_jobs_2_gives_the_same_output_as_jobs_1(tmp_path, capsysbinary):
    src = tmp_path / "proj"
    variants = [KERNEL, HEADER, LAUNCH, PLAIN_CPP, (BROKEN / "binary.cu").read_bytes(),
                (FIXTURES / "port" / "encoding" / "latin1_comment.cu").read_bytes()]
    for i in range(30):
        folder = src / f"m{i % 4}"
        folder.mkdir(parents=True, exist_ok=True)
        suffix = (".cu", ".cuh", ".cpp", ".h", ".cu", ".cu")[i % 6]
        (folder / f"f{i:02d}{suffix}").write_bytes(variants[i % len(variants)].replace(b"scale", b"scale%d" % i))
    (src / "m0" / "link.cu").symlink_to("f00.cu")
    results = {}
    for jobs in ("1", "2"):
        out, rep = tmp_path / f"out{jobs}", tmp_path / f"rep{jobs}"
        # --no-cache: the -j 2 run must port, not find the -j 1 run's results in the cache
        assert hipport("port", src, "-o", out, "-j", jobs, "--report", rep, "--launch-syntax", "hip", "--no-cache") == 0
        results[jobs] = (snapshot_without_times(out), report_of(rep)["files"], report_of(rep)["summary"])
    assert len(results["1"][1]) == 31 >= _serial_below()  # so -j 2 really goes through the process pool
    assert results["1"] == results["2"]


def _serial_below() -> int:
    """How many files the runner ports in-process before it starts a pool (0 if unknown)."""
    import importlib
    for module, name in (("hipport.parallel", "SERIAL_BELOW"), ("hipport.runner", "_SERIAL_BELOW")):
        try:
            return int(getattr(importlib.import_module(module), name))
        except (ImportError, AttributeError):
            continue
    return 0


def snapshot_without_times(root: Path) -> dict[str, tuple]:
    return {k: v[:3] for k, v in snapshot(root).items()}


# --- idempotence ------------------------------------------------------------------------------

def test_porting_the_output_again_changes_nothing(tmp_path, capsysbinary):
    out1, out2, rep2 = tmp_path / "out1", tmp_path / "out2", tmp_path / "rep2"
    assert hipport("port", EXAMPLE, "-o", out1) == 0
    assert files_under(out1) != files_under(EXAMPLE)
    assert hipport("port", out1, "-o", out2, "--report", rep2) == 0
    assert files_under(out2) == files_under(out1)
    report = report_of(rep2)
    assert report["summary"]["changed"] == 0
    assert all(f["status"] == "unchanged" for f in report["files"])


def test_fixture_tree_ports_losslessly(tmp_path, capsysbinary):
    """Every fixture: comments and literals come out byte-identical, and a second run is a no-op."""
    out, again = tmp_path / "out", tmp_path / "again"
    before = snapshot(FIXTURES)
    assert hipport("port", FIXTURES, "-o", out) == 0
    assert snapshot(FIXTURES) == before
    assert hipport("port", out, "-o", again) == 0
    assert files_under(again) == files_under(out)
    lexer = tools(Settings())[1]
    checked = 0
    for rel, data in files_under(FIXTURES).items():
        if not rel.endswith((".cu", ".cuh", ".cpp")) or b"\0" in data:
            continue
        ported = (out / rel).read_bytes()
        lexed = lexer.lex(data)
        for a, b in lexed.comments + lexed.strings:
            assert data[a:b] in ported, (rel, data[a:b])
        checked += 1
    assert checked >= 20


# --- help and version -------------------------------------------------------------------------

def test_help(capsysbinary):
    assert hipport("--help") == 0
    top = capsysbinary.readouterr().out
    assert b"port" in top and b"Usage" in top
    assert b"\n  COMMAND\n" not in top  # the commands are listed, not argparse's metavar above them
    assert hipport("port", "--help") == 0
    text = capsysbinary.readouterr().out
    for option in (b"-o", b"--output", b"--in-place", b"--stdout", b"--report", b"--diff", b"-j", b"--jobs",
                   b"--rename", b"--keep-names", b"--launch-syntax", b"--target-hip", b"--libs",
                   b"--experimental", b"keep", b"hip", b"roc"):
        assert option in text, option


def test_version_from_python_m():
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "hipport", "--version"], capture_output=True, env=env,
                          cwd=REPO, timeout=60)
    assert proc.returncode == 0
    assert __version__ in proc.stdout.decode()
    from hipport.parse.lexer import scanner_state  # this checkout's, as the process imports

    assert proc.stdout.decode().strip() == f"hipport, version {__version__} ({scanner_state()})"


def test_a_closed_stdout_loses_the_output_without_a_traceback(tmp_path):
    """Started with stdout closed (`hipport rules >&-`), Python gives hipport no stream at all:
    what would go there is lost, as print() loses it, and the exit status is the command's."""
    if shutil.which("sh") is None:
        pytest.skip("no POSIX shell")
    (tmp_path / "k.cu").write_bytes(KERNEL)
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))

    def run(args: str, redirect: str) -> subprocess.CompletedProcess:
        return subprocess.run(["sh", "-c", f'exec "$0" -m hipport {args} {redirect}', sys.executable],
                              capture_output=True, env=env, cwd=tmp_path, timeout=60)

    for args in ("--version", "rules", "port k.cu --stdout", "check k.cu"):
        closed, open_ = run(args, ">&-"), run(args, "")
        assert open_.stdout and b"Traceback" not in closed.stderr, (args, closed.stderr)
        assert closed.returncode == open_.returncode, args


def test_python_m_stdout_is_clean(tmp_path):
    """Through a real process: stdout carries the ported file only, the summary goes to stderr."""
    (tmp_path / "k.cu").write_bytes(KERNEL)
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "hipport", "port", str(tmp_path / "k.cu")],
                          capture_output=True, env=env, cwd=tmp_path, timeout=60)
    assert proc.returncode == 0
    assert proc.stdout.startswith(b"#include <hip/hip_runtime.h>\n")
    assert b"hipMalloc(&dev" in proc.stdout and b"files:" not in proc.stdout


# --- comments and literals stay as written ----------------------------------------------------

MENTIONS = rb'''// line comment: cudaMalloc, cublasSgemm, #include <cuda_runtime.h>
#include <cuda_runtime.h>
#include "cublas_v2.h"
/* block comment: cudaMalloc(&p, n); cublasSgemm(h, ...);
#include <cuda_runtime.h>
   cudaMemcpyHostToDevice */
static const char* s = "cudaMalloc cublasSgemm <cuda_runtime.h>";
static const char* r = R"x(cudaMalloc(
#include <cuda_runtime.h>
  cublasSgemm) )" )x";
static const int c = 'cuda';
static const char q = '"';
void f(cublasHandle_t h, float* p) {
    // continued comment \
    cudaMalloc(&p, 8);
    cudaMalloc(&p, 4); // cudaMalloc again
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, 0, p, 1, p, 1, 0, p, 1); /* cublasSgemm */
    puts("cublasSgemm" "cudaFree");
}
'''


def test_comments_and_literals_are_byte_identical(tmp_path, capsysbinary):
    (tmp_path / "m.cu").write_bytes(MENTIONS)
    assert hipport("port", tmp_path / "m.cu", "--stdout") == 0
    out = capsysbinary.readouterr().out
    untouched = [
        b"// line comment: cudaMalloc, cublasSgemm, #include <cuda_runtime.h>\n",
        b"/* block comment: cudaMalloc(&p, n); cublasSgemm(h, ...);\n#include <cuda_runtime.h>\n"
        b"   cudaMemcpyHostToDevice */",
        b'"cudaMalloc cublasSgemm <cuda_runtime.h>"',
        b'R"x(cudaMalloc(\n#include <cuda_runtime.h>\n  cublasSgemm) )" )x"',
        b"'cuda'", b"'\"'",
        b"// continued comment \\\n    cudaMalloc(&p, 8);\n",
        b"// cudaMalloc again\n", b"/* cublasSgemm */", b'puts("cublasSgemm" "cudaFree");',
    ]
    for piece in untouched:
        assert piece in out, piece
    # ... while the code around them is ported.
    assert out.startswith(b"// line comment")
    assert b"\n#include <hip/hip_runtime.h>\n#include <hipblas/hipblas.h>\n/* block comment" in out
    assert b"    hipMalloc(&p, 4); // cudaMalloc again\n" in out
    assert b"    hipblasSgemm(h, HIPBLAS_OP_N, HIPBLAS_OP_N," in out
    assert b"void f(hipblasHandle_t h, float* p)" in out
    # The one real cuda_runtime.h include is gone; the three in the comments and the raw string stay.
    assert MENTIONS.count(b"#include <cuda_runtime.h>") == 4
    assert out.count(b"#include <cuda_runtime.h>") == 3
    assert out.count(b"#include <hip/hip_runtime.h>") == 1
    assert out.count(b"\n") == MENTIONS.count(b"\n")


def test_usage_errors_name_the_command_and_where_help_is(tmp_path, capsys):
    src = make_tree(tmp_path / "proj")
    for args, says in ((["port", src, "-o", tmp_path / "out", "--no-such-option"], "unrecognized arguments: --no-such-option"),
                       (["port", src, "-o", tmp_path / "out", "-j", "-1"], "-1 is below 0"),
                       (["check", src, "--baseline", src], "is a folder, not a file"),
                       (["verify", tmp_path / "nothere"], "does not exist")):
        assert hipport(*args) == 2
        err = capsys.readouterr().err
        command = args[0]
        assert err.startswith(f"Usage: hipport {command} [OPTIONS]"), err
        assert f"Try 'hipport {command} --help' for help." in err and f"hipport {command}: error:" in err
        assert says in err
    assert not (tmp_path / "out").exists()
    assert hipport() == 2 and "Usage: hipport [OPTIONS] COMMAND" in capsys.readouterr().err


def test_rename_and_keep_names_the_last_one_wins(tmp_path):
    src = make_tree(tmp_path / "proj")
    assert hipport("port", src, "-o", tmp_path / "a", "--keep-names", "--rename") == 0
    assert hipport("port", src, "-o", tmp_path / "b", "--rename", "--keep-names") == 0
    assert list((tmp_path / "a").rglob("*.hip")) and not list((tmp_path / "b").rglob("*.hip"))


def test_only_the_command_run_gets_its_parser_built(capsys):
    from hipport.cli import parser

    def commands(top):
        sub = next(a for a in top._actions if a.dest == "==SUPPRESS==" and hasattr(a, "choices") and a.choices)
        return {name: len(p._actions) for name, p in sub.choices.items()}

    assert list(commands(parser("check"))) == ["check"] and commands(parser("check"))["check"] > 10
    full = commands(parser())
    assert list(full) == ["port", "check", "estimate", "rules", "verify"] and min(full.values()) > 1
    names = ("port", "check", "estimate", "rules", "verify")
    for args in (("--help",), ("-h", "port"), ()):  # the top-level help, whatever follows
        assert hipport(*args) == (0 if args else 2)
        captured = capsys.readouterr()
        assert all(f"  {name} " in captured.out + captured.err for name in names), args
    assert hipport("port", "--help") == 0
    out = capsys.readouterr().out
    assert out.startswith("Usage: hipport port [OPTIONS] PATH") and "--report" in out and "  check " not in out
    assert hipport("nosuchcommand") == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'nosuchcommand'" in err and "'port', 'check', 'estimate', 'rules', 'verify'" in err
