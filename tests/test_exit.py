"""How the `hipport` command leaves (hipport.__main__): with the command's exit status and its
whole output, the cache's SQLite log folded into its file, and without tearing the
interpreter down."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import hipport.__main__ as entry
from hipport.config import Settings
from hipport.pipeline import port_source

ROOT = Path(__file__).resolve().parents[1]
KERNEL = b"""#include <cuda_runtime.h>
__global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }
void run(float* d) { scale<<<1, 32>>>(d, 2.0f); cudaDeviceSynchronize(); }
"""


def hipport(*args: str, cache: Path, code: str | None = None) -> subprocess.CompletedProcess:
    """`python -m hipport ARGS`, or the -c `code` that runs the entry point itself."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), HIPPORT_CACHE_DIR=str(cache))
    argv = [sys.executable, "-c", code, *args] if code else [sys.executable, "-m", "hipport", *args]
    return subprocess.run(argv, env=env, capture_output=True, timeout=120)


def test_the_exit_status_is_the_commands(tmp_path):
    src = tmp_path / "k.cu"
    src.write_bytes(b"__global__ void k(int* m) { m[0] = __ballot_sync(0xffffffff, 1); }\n")
    found = hipport("check", str(src), cache=tmp_path / "c")
    assert found.returncode == 1 and b"HP451" in found.stdout
    assert hipport("check", str(src), "--exit-zero", cache=tmp_path / "c").returncode == 0
    usage = hipport("port", cache=tmp_path / "c")
    assert usage.returncode == 2 and b"error: the following arguments are required" in usage.stderr


def test_the_whole_output_reaches_a_pipe(tmp_path):
    # more than a pipe's buffer, so that the output is still in flight when the command ends
    src = tmp_path / "big.cu"
    src.write_bytes(KERNEL * 3000)
    done = hipport("port", str(src), "--stdout", cache=tmp_path / "c")
    assert done.returncode == 0
    assert done.stdout == port_source(src.read_bytes(), "big.cu", "cuda", Settings()).data


def test_the_cache_is_closed_before_leaving(tmp_path):
    """Closing the last connection folds SQLite's write-ahead log into the file and removes it;
    left open, the next run would first have to read the log back."""
    (tmp_path / "src").mkdir()
    for i in range(20):
        (tmp_path / "src" / f"k{i}.cu").write_bytes(KERNEL + b"// %d\n" % i)
    cache = tmp_path / "cache"
    done = hipport("port", str(tmp_path / "src"), "-o", str(tmp_path / "out"), "-j", "1", cache=cache)
    assert done.returncode == 0, done.stderr
    assert any(cache.rglob("cache.sqlite3")) and not any(cache.rglob("*-wal"))


def test_the_interpreter_is_not_torn_down(tmp_path):
    code = ("import atexit, sys; atexit.register(lambda: print('torn down', file=sys.stderr));"
            "sys.argv[0] = 'hipport'; import hipport.__main__ as m; m.main()")
    done = hipport("--help", cache=tmp_path / "c", code=code)
    assert done.returncode == 0 and b"Usage: hipport" in done.stdout and b"torn down" not in done.stderr
    # an error other than SystemExit leaves the usual way, traceback and teardown included
    code = code.replace("m.main()", "m.run_command = lambda: 1 / 0; m.main()")
    done = hipport("--help", cache=tmp_path / "c", code=code)
    assert done.returncode == 1 and b"ZeroDivisionError" in done.stderr and b"torn down" in done.stderr


@pytest.mark.parametrize("code, status, said", [(None, 0, ""), (0, 0, ""), (2, 2, ""), (True, 1, ""),
                                                ("hipport: no", 1, "hipport: no\n")])
def test_leave_exits_as_sys_exit_would(monkeypatch, capsys, code, status, said):
    left = []
    monkeypatch.setattr(entry.os, "_exit", left.append)
    entry.leave(code)
    assert left == [status] and capsys.readouterr().err == said
