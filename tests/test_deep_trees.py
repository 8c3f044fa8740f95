"""Trees and code nested deeper than Python's stack. The walk and the output tree's folders
take no recursion, and a folder whose path is too long to open is skipped with its reason,
while the rest of the tree is ported and checked; statement blocks and parentheses thousands
deep are read without recursion, or as unknown values where the evaluator's stack ends."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from clitools import hipport

KERNEL = b"__global__ void k(float* p) { p[0] = 1; }\nint main() { cudaDeviceSynchronize(); }\n"


def nest(top: Path, depth: int, data: bytes) -> None:
    """`depth` folders `d` inside `top`, and k.cu at the bottom (made relative to open folders:
    the full path may be longer than the OS takes)."""
    fd = os.open(top, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        out = os.open("k.cu", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(out, data)
        os.close(out)
    finally:
        os.close(fd)


def unnest(top: Path) -> None:
    """Remove what nest() made (shutil.rmtree recurses once per folder)."""
    fds = [os.open(top, os.O_RDONLY)]
    while True:
        names = os.listdir(fds[-1])
        if "d" not in names:
            break
        fds.append(os.open("d", os.O_RDONLY, dir_fd=fds[-1]))
    for name in os.listdir(fds[-1]):
        os.unlink(name, dir_fd=fds[-1])
    while len(fds) > 1:
        os.close(fds.pop())
        os.rmdir("d", dir_fd=fds[-1])
    os.close(fds[0])


@pytest.fixture
def deep(tmp_path):
    made = []

    def make(name: str, depth: int) -> Path:
        top = tmp_path / name
        top.mkdir()
        (top / "top.cu").write_bytes(KERNEL)
        nest(top, depth, KERNEL)
        made.append(top)
        return top

    yield make
    for top in made:
        for folder in (top, top.with_name(top.name + "-out")):
            if folder.exists():
                unnest(folder)


def test_a_tree_deeper_than_the_stack_is_ported_and_checked(deep, tmp_path, capsys):
    depth = sys.getrecursionlimit() + 50
    src = deep("src", depth)
    out = tmp_path / "src-out"
    assert hipport("port", src, "-o", out, "--no-cache", "-j", "1") == 0
    assert (out / "/".join(["d"] * depth) / "k.cu").read_bytes().startswith(b"#include <hip/hip_runtime.h>")
    capsys.readouterr()
    assert hipport("check", src, "--no-cache", "--format", "json", "--exit-zero") == 0
    assert json.loads(capsys.readouterr().out)["summary"]["files"] == 2


def test_a_folder_too_deep_to_open_is_skipped_with_its_reason(deep, tmp_path, capsys):
    src = deep("long", 2100)  # 4,200 bytes of path: over Linux's PATH_MAX
    out = tmp_path / "long-out"
    assert hipport("port", src, "-o", out, "--no-cache", "-j", "1") == 0
    err = capsys.readouterr().err
    assert "skipped: cannot list the folder" in err and "1 skipped" in err
    assert (out / "top.cu").read_bytes().startswith(b"#include <hip/hip_runtime.h>")
    assert hipport("check", src, "--no-cache", "--exit-zero") == 0
    assert "skipped: cannot list the folder" in capsys.readouterr().err


@pytest.mark.parametrize("name, text", [
    # each statement block is what the block around it is: judged down the chain, not recursively
    ("blocks", b"__global__ void k(int* p) { " + b"{" * 3000 + b" p[threadIdx.x % 32] = 1; " + b"}" * 3000 + b" }\n"),
    # values read through parentheses deeper than the evaluator's stack: unknown
    ("an #if condition", b"#if " + b"(" * 3000 + b"1" + b")" * 3000 + b"\n"
                         b"__global__ void k(int* p) { p[threadIdx.x % 32] = 1; }\n#endif\n"),
    ("an initializer", b"__global__ void k(int* p) { const int lane_size = " + b"(" * 3000 + b"32" + b")" * 3000
                       + b"; p[threadIdx.x % 32] = lane_size; }\n"),
])
def test_code_nested_thousands_deep_is_checked(tmp_path, capsys, name, text):
    (tmp_path / "k.cu").write_bytes(b"#include <cuda_runtime.h>\n" + text)
    assert hipport("check", tmp_path / "k.cu", "--no-cache", "--format", "json", "--exit-zero") == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"]["files"] == 1 and [f["rule"] for f in doc["findings"]] == ["HP402"], name
