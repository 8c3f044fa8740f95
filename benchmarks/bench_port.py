#!/usr/bin/env python3
"""Time `hipport port` on a source tree, and compare with other porting tools.

    python benchmarks/make_corpus.py /tmp/corpus
    python benchmarks/bench_port.py /tmp/corpus              # table
    python benchmarks/bench_port.py /tmp/corpus --json -     # JSON on stdout

Each tool first gets --warmup untimed runs (as hyperfine's --warmup: a tool's first run
pays for loading its own files into the OS page cache), then come --cold "cold" runs (empty
cache folders, a new output folder each) in rounds of one run per tool, so that a slow
spell of a shared host slows all tools alike. The "warm" runs are the same command again, as
a user re-runs it (same cache folders and output folder, files in the OS page cache;
hipify-perl, which edits a copy in place, gets a fresh copy each time). hipport's warm runs,
which its content cache makes about a tenth of a second, come --warm times at the end of
each round, and their median counts, as the cold runs' does: one such short run is at the
mercy of a slow spell, and warm runs all made at the end would sample other minutes than
the cold runs they are compared with. Tools without such a cache (torch-hipify,
hipify-perl) redo their whole work warm, shown once, at the end.
Every run happens in a fresh wrapper process that starts the tool, waits for it and reports
wall time and getrusage(RUSAGE_CHILDREN).ru_maxrss: the peak resident set of the largest
single process of that run (the tool or one of its worker processes), not a sum. It reports
too the CPU time of the run's processes (user and system), and, on Linux, the steal time the
machine's vCPUs recorded meanwhile (/proc/stat: time a vCPU had work but the host ran another
guest). Steal, or a `-j 1` run's wall time far above its CPU time (its files are in the page
cache), is the host's doing, not the tool's; a `-j N` run's CPU time against `-j 1`'s is the
work its processes add. A host can slow a run without either (a busy sibling hyperthread
slows the CPU time itself): the cpu-loop's runs show the pace the vCPUs had.

Tools:
  hipport -j 1, hipport -j N   always (`hipport` next to this Python, else `python -m hipport`)
  hipport-check -j 1           `hipport check CORPUS --exit-zero`: the analysis alone, no
                               output tree
  hipport-check-file           `hipport check FILE --exit-zero` of the corpus's `.cu` file
                               nearest 200 lines, as pre-commit runs it on a changed file
                               (interpreter start and table loading included)
  cpu-loop -j 1, cpu-loop -j N always: a fixed CPU-bound Python loop cut in 240 pieces, which
                               1 or N processes share as hipport's share batches; their ratio
                               is what the machine gave `-j N` in the same minutes
  torch-hipify                 when `torch` is importable here: torch.utils.hipify's
                               hipify() with is_pytorch_extension=True (copies the tree,
                               then rewrites; timing includes importing torch)
  hipify-perl                  when $HIPIFY_PERL names the script: the tree is copied
                               (timed), then `hipify-perl -inplace -quiet-warnings FILES...`
                               in batches (it also writes a .prehip backup per file)

Not imported by the test suite; needs nothing beyond the standard library.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

# Suffixes the hipify-perl run hands to the script (it takes files, not folders).
HIPIFY_PERL_SUFFIXES = {".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hxx", ".inl"}
HIPIFY_PERL_BATCH = 500  # files per hipify-perl process; keeps argv well under ARG_MAX
CHECK_FILE_LINES = 200  # issue 7: `check` of one file of about this many lines, under 0.3 s
LOOP_STEPS, LOOP_PIECES = 12_000_000, 240  # about 1 s of loop on one CPU, 5 ms a piece
COLD_ROUNDS = 3  # --cold's default

# Runs in a fresh interpreter for every measured run, so RUSAGE_CHILDREN sees that
# run's processes only. Reads a JSON spec on stdin (a tree's file list is too long for an
# argument): {"copy": [src, dst] | null, "commands": [[argv...], ...], "cwd": str}. Prints
# one JSON line.
_WRAPPER = r"""
import json, os, resource, shutil, subprocess, sys, time
def steal():  # seconds all vCPUs waited for the host so far; None off Linux
    try:
        with open("/proc/stat", "rb") as f:
            return int(f.readline().split()[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None
spec = json.loads(sys.stdin.read())
stolen = steal()
start = time.perf_counter()
rc, err = 0, ""
if spec.get("copy"):
    shutil.copytree(*spec["copy"])
for argv in spec["commands"]:
    p = subprocess.run(argv, cwd=spec["cwd"], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if p.returncode:
        rc, err = p.returncode, p.stderr.decode("utf-8", "replace")[-2000:]
        break
wall = time.perf_counter() - start
now = steal()
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall_s": wall, "peak_rss_kib": usage.ru_maxrss,  # KiB on Linux
                  "cpu_s": usage.ru_utime + usage.ru_stime,
                  "steal_s": None if stolen is None or now is None else now - stolen,
                  "rc": rc, "stderr_tail": err}))
"""

_TORCH_HIPIFY = r"""
import sys
from torch.utils.hipify.hipify_python import hipify
hipify(project_directory=sys.argv[1], output_directory=sys.argv[2], includes=["*"],
       show_detailed=False, show_progress=False, is_pytorch_extension=True)
"""


# What the machine gives `-j N`: a fixed amount of pure-Python work in many small pieces,
# which N processes (this one and N - 1 forked) take from one pipe as they go, as hipport's
# processes take batches of files. argv: total loop steps, pieces, processes. On a shared VM
# the vCPUs are not equally fast at times (one ran a fixed loop in 0.5 s, the other in 0.75 s,
# in the same second): no program then reaches N times its speed, and this loop's ratio, from
# the same minutes as hipport's, shows how far the machine was from it.
_CPU_LOOP = r"""
import os, sys
steps, pieces, procs = map(int, sys.argv[1:4])
r, w = os.pipe()
os.write(w, b"x" * pieces)
os.close(w)
children = []
for _ in range(procs - 1):
    pid = os.fork()
    if pid == 0:
        children = None
        break
    children.append(pid)
piece = steps // pieces
while os.read(r, 1):
    x = 0
    for i in range(piece):
        x += i
if children is None:
    os._exit(0)
for pid in children:
    os.waitpid(pid, 0)
"""


@dataclass
class Corpus:
    path: str
    files: int
    bytes: int


@dataclass
class Run:
    tool: str
    jobs: int
    phase: str            # "cold", "warm", or "warmup" (kept only when it failed)
    wall_s: float
    peak_rss_mb: float
    files_per_s: float
    mb_per_s: float
    rc: int
    error: str = ""
    cpu_s: float = 0.0    # user and system time of the run's processes
    steal_s: float | None = None  # the host's steal from all vCPUs during the run (Linux)


@dataclass
class Tool:
    name: str
    jobs: int
    # (corpus, out) -> ([corpus, out] to copy first, or None; commands to run)
    plan: Callable[[str, str], tuple[list[str] | None, list[list[str]]]] = field(repr=False)
    # a warm run repeats the command on the cold run's output folder (False: a fresh copy)
    same_out: bool = True
    # what it runs on when not the whole corpus (files/s and MB/s count this instead)
    corpus: Corpus | None = None
    warm: bool = True  # whether a warm run means anything (not for a loop that keeps nothing)
    cached: bool = False  # keeps a content cache: its warm runs come --warm times


def scan(corpus: Path) -> Corpus:
    files = total = 0
    for dirpath, _dirs, names in os.walk(corpus):
        for name in names:
            path = os.path.join(dirpath, name)
            if os.path.isfile(path) and not os.path.islink(path):
                files += 1
                total += os.path.getsize(path)
    return Corpus(str(corpus), files, total)


def check_file(corpus: Corpus) -> Corpus | None:
    """The corpus's `.cu` file whose line count is nearest CHECK_FILE_LINES (the first by path
    among equals), as a corpus of one; None when it has no readable `.cu` file."""
    best = None
    for dirpath, dirs, names in os.walk(corpus.path):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(dirpath, name)
            if not name.endswith(".cu") or os.path.islink(path):
                continue
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:
                continue
            rank = abs(data.count(b"\n") - CHECK_FILE_LINES)
            if best is None or rank < best[0]:
                best = (rank, path, len(data))
    return None if best is None else Corpus(best[1], 1, best[2])


def hipport_argv() -> list[str] | None:
    """How to start hipport: the script beside this Python, on PATH, or -m; None if absent."""
    import importlib.util

    exe = Path(sys.executable).with_name("hipport")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("hipport")
    if found:
        return [found]
    if importlib.util.find_spec("hipport") is not None:
        return [sys.executable, "-m", "hipport"]
    return None


def hipport_version(base: list[str] | None) -> str | None:
    """What `hipport --version` says of the measured hipport: its version, and whether its C
    scanner was built (without it a port takes about three times as long, and pip's install
    says little when it cannot build it). None when it does not say."""
    if base is None:
        return None
    try:
        done = subprocess.run([*base, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = done.stdout.strip().splitlines()
    return lines[0] if done.returncode == 0 and lines else None


def hipport_command(base: list[str], command: str, src: str, out: str, jobs: int) -> list[str]:
    """A measured hipport run: `port SRC -o OUT` or `check SRC` (its findings not an exit
    status), with `-j jobs`. instructions.py counts the same commands."""
    if command == "port":
        return [*base, "port", src, "-o", out, "-j", str(jobs)]
    return [*base, "check", src, "--exit-zero", "-j", str(jobs)]


def torch_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None


def hipify_perl_argv(script: str) -> list[str]:
    return [script] if os.access(script, os.X_OK) else ["perl", script]


NO_FILES = Corpus("(no files: a CPU-bound loop)", 0, 0)


def make_tools(jobs: int, only: set[str] | None, corpus: Corpus) -> list[Tool]:
    tools = []
    base = hipport_argv()
    if base is None:
        if only is None or "hipport" in only:
            print("bench_port: hipport is not installed here (pip install -e .); skipping it",
                  file=sys.stderr)
    else:
        for j in sorted({1, jobs}):
            tools.append(Tool("hipport", j, lambda src, out, j=j: (
                None, [hipport_command(base, "port", src, out, j)]), cached=True))
        tools.append(Tool("hipport-check", 1, lambda src, out: (
            None, [hipport_command(base, "check", src, out, 1)]), cached=True))
        one = check_file(corpus)
        if one is not None:
            tools.append(Tool("hipport-check-file", 1, lambda src, out: (
                None, [[*base, "check", src, "--exit-zero"]]), corpus=one, cached=True))
    for j in sorted({1, jobs}):
        tools.append(Tool("cpu-loop", j, lambda src, out, j=j: (
            None, [[sys.executable, "-c", _CPU_LOOP, str(LOOP_STEPS), str(LOOP_PIECES), str(j)]]),
            corpus=NO_FILES, warm=False))
    if torch_available():
        tools.append(
            Tool("torch-hipify", 1, lambda src, out: (None, [[sys.executable, "-c", _TORCH_HIPIFY, src, out]]))
        )
    script = os.environ.get("HIPIFY_PERL")
    if script:
        perl = hipify_perl_argv(script)

        def plan(src: str, out: str):
            rels = sorted(
                os.path.relpath(os.path.join(d, n), src)
                for d, _s, names in os.walk(src) for n in names
                if os.path.splitext(n)[1] in HIPIFY_PERL_SUFFIXES
            )
            batches = [rels[i:i + HIPIFY_PERL_BATCH] for i in range(0, len(rels), HIPIFY_PERL_BATCH)]
            # Paths are relative to `out`, the wrapper's cwd once the copy exists.
            return [src, out], [[*perl, "-inplace", "-quiet-warnings", *b] for b in batches]

        tools.append(Tool("hipify-perl", 1, plan, same_out=False))
    if only:
        tools = [t for t in tools if t.name in only]
    return tools


def run_env(cache: Path) -> dict[str, str]:
    """The environment of a measured run whose caches live in `cache`."""
    env = dict(os.environ)
    # Per-user caches go under `cache`: empty for a cold run, reused by warm runs; hipport's
    # among them, wherever the calling shell's HIPPORT_CACHE_DIR points (else a "cold" run
    # found the cache the warm-up had filled).
    env["XDG_CACHE_HOME"] = str(cache / "xdg")
    env.pop("HIPPORT_CACHE_DIR", None)
    # As a user's install runs: with the bytecode Python writes, and hipport with its tables
    # and patterns kept compiled beside it (from the warm-up run), whatever this shell says.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def measure(tool: Tool, phase: str, corpus: Corpus, out: Path, cache: Path) -> Run:
    """One run in a fresh wrapper process. A warm run reuses `out` and `cache` as the run
    before left them; any other phase (cold, warmup) starts both empty."""
    if phase != "warm":
        shutil.rmtree(cache, ignore_errors=True)
        cache.mkdir(parents=True)
    if phase != "warm" or not tool.same_out:
        shutil.rmtree(out, ignore_errors=True)
    copy, commands = tool.plan(corpus.path, str(out))
    # hipify-perl edits the copy in place, so it runs inside it; the other tools
    # run in the cache folder, in case they keep a cache in the working directory.
    cwd = out if copy else cache
    spec = {"copy": copy, "commands": commands, "cwd": str(cwd)}
    proc = subprocess.run(
        [sys.executable, "-c", _WRAPPER], env=run_env(cache), cwd=cache,
        input=json.dumps(spec), capture_output=True, text=True,
    )
    if proc.returncode != 0:
        return Run(tool.name, tool.jobs, phase, 0.0, 0.0, 0.0, 0.0, proc.returncode, proc.stderr[-2000:])
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    wall = max(res["wall_s"], 1e-9)
    return Run(
        tool=tool.name, jobs=tool.jobs, phase=phase, wall_s=round(wall, 3),
        peak_rss_mb=round(res["peak_rss_kib"] / 1024, 1),
        files_per_s=round(corpus.files / wall, 1), mb_per_s=round(corpus.bytes / 1e6 / wall, 2),
        rc=res["rc"], error=res["stderr_tail"], cpu_s=round(res["cpu_s"], 3),
        steal_s=None if res["steal_s"] is None else round(res["steal_s"], 2),
    )


def schedule(tools: list[Tool], warmup: int, cold: int, warm: int) -> list[tuple[str, Tool]]:
    """The runs in the order they happen: each tool's warm-ups, then rounds of one cold run of
    each tool (so that a slow spell of a shared host, which can last a minute, slows every
    tool's runs alike instead of one tool's whole series), each round closed by `warm` runs of
    every tool with a content cache, which reuse the folders that round's cold run left (so
    its warm median samples the same minutes as its cold median), then one warm run of each
    tool without such a cache (it redoes its whole work)."""
    runs = [("warmup", t) for t in tools for _ in range(warmup)]
    for _ in range(cold):
        runs += [("cold", t) for t in tools]
        runs += [("warm", t) for t in tools if t.warm and t.cached for _ in range(warm)]
    return runs + [("warm", t) for t in tools if t.warm and not t.cached]


def table(corpus: Corpus, runs: list[Run]) -> str:
    head = ("tool", "-j", "run", "wall s", "CPU s", "steal s", "files/s", "MB/s", "peak RSS MB", "exit")
    rows = [head] + [
        (r.tool, str(r.jobs), r.phase, f"{r.wall_s:.2f}", f"{r.cpu_s:.2f}",
         "-" if r.steal_s is None else f"{r.steal_s:.2f}",
         f"{r.files_per_s:.0f}" if not r.rc and r.files_per_s else "-",
         f"{r.mb_per_s:.2f}" if not r.rc and r.mb_per_s else "-",
         f"{r.peak_rss_mb:.0f}", str(r.rc))
        for r in runs
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = [f"corpus: {corpus.path}: {corpus.files} files, {corpus.bytes / 1e6:.1f} MB", ""]
    for n, row in enumerate(rows):
        lines.append("  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    for r in runs:
        if r.rc:
            lines.append(f"\n{r.tool} -j {r.jobs} {r.phase} failed (exit {r.rc}):\n{r.error.rstrip()}")
    return "\n".join(lines)


def ratios(runs: list[Run]) -> dict[str, float]:
    """What issue 7's targets compare, from the successful runs of each tool: hipport `-j 1`
    cold against torch-hipify and hipify-perl cold, against the `-j N` cold run, and against
    its own warm runs; the cold `check` of one file; the largest peak RSS of any hipport
    run; beside the `-j` ratio, the CPU loop's (what the machine gave it). Where a tool ran
    more than once in a phase (--cold, --warm), its median counts. With two rounds or more,
    the `-j` ratio also round by round (see paired_ratios)."""
    walls: dict[tuple[str, int, str], list[float]] = {}
    for r in runs:
        if not r.rc:
            walls.setdefault((r.tool, r.jobs, r.phase), []).append(r.wall_s)
    median = {key: statistics.median(w) for key, w in walls.items()}
    out = {}
    cold = median.get(("hipport", 1, "cold"))
    if cold:
        torch = median.get(("torch-hipify", 1, "cold"))
        if torch:
            out["hipport / torch-hipify (target <= 0.33)"] = round(cold / torch, 2)
        perl = median.get(("hipify-perl", 1, "cold"))
        if perl:
            out["hipify-perl / hipport (target >= 20)"] = round(perl / cold, 1)
        for (tool, jobs, phase), wall in sorted(median.items()):
            if tool == "hipport" and phase == "cold" and jobs > 1 and wall:
                out[f"-j 1 / -j {jobs} (target >= 1.7 for -j 2)"] = round(cold / wall, 2)
                paired = paired_ratios(runs, "hipport", jobs)
                if len(paired) > 1:
                    out[f"-j 1 / -j {jobs}, the median of each round's own ratio"] = round(statistics.median(paired), 2)
                alone = median.get(("cpu-loop", 1, "cold"))
                spread = median.get(("cpu-loop", jobs, "cold"))
                if alone and spread:
                    name = f"-j 1 / -j {jobs} of a CPU-bound loop in the same minutes ({jobs} on ideal cores)"
                    out[name] = round(alone / spread, 2)
        warm = median.get(("hipport", 1, "warm"))
        if warm:
            out["cold / warm (target >= 10)"] = round(cold / warm, 1)
    one = median.get(("hipport-check-file", 1, "cold"))
    if one:
        out["check of one file, s (target < 0.3)"] = round(one, 3)
    rss = [r.peak_rss_mb for r in runs if not r.rc and r.tool.startswith("hipport")]
    if rss:
        out["peak RSS of a hipport process, MB (target < 250)"] = max(rss)
    return out


def paired_ratios(runs: list[Run], tool: str, jobs: int) -> list[float]:
    """`tool`'s `-j 1` cold run over its `-j jobs` cold run, round by round (schedule() runs
    one of each a round, in the same minutes), where both succeeded. The ratio of the medians
    compares runs from different minutes, and a VM's pace drifts from one minute to the next:
    paired, each ratio compares runs made side by side."""
    def cold(j: int) -> list[Run]:
        return [r for r in runs if r.tool == tool and r.jobs == j and r.phase == "cold"]

    return [a.wall_s / b.wall_s for a, b in zip(cold(1), cold(jobs)) if not a.rc and not b.rc and b.wall_s]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark hipport port against other porting tools.")
    parser.add_argument("corpus", type=Path, help="source tree to port (see make_corpus.py)")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                        help="worker count for the parallel hipport run (default: CPU count)")
    parser.add_argument("--warmup", type=int, default=1,
                        help="untimed runs of each tool before its measured ones (default 1)")
    # Three rounds, not one: a VM's pace swings by tens of percent from one minute to the
    # next, and a single pair of runs gave this machine's `-j 2` ratio anywhere in 1.3-2.1x.
    parser.add_argument("--cold", type=int, default=COLD_ROUNDS,
                        help=f"cold runs of each tool; the ratios take their median, and the -j ratio is "
                             f"also taken round by round (default {COLD_ROUNDS})")
    parser.add_argument("--warm", type=int, default=3,
                        help="hipport's warm runs after each round of cold ones, median counted (default 3); "
                             "tools without a content cache run warm once")
    parser.add_argument("--tools", help="comma-separated subset: hipport,hipport-check,hipport-check-file,"
                                        "cpu-loop,torch-hipify,hipify-perl")
    parser.add_argument("--json", metavar="FILE", nargs="?", const="-",
                        help="write results as JSON to FILE ('-' or no value: stdout, instead of the table)")
    parser.add_argument("--scratch", type=Path, help="folder for outputs and caches (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the ported outputs")
    args = parser.parse_args(argv)

    if not args.corpus.is_dir():
        print(f"bench_port: {args.corpus} is not a directory", file=sys.stderr)
        return 2
    corpus = scan(args.corpus.resolve())
    only = set(args.tools.split(",")) if args.tools else None
    tools = make_tools(max(1, args.jobs), only, corpus)
    if not tools:
        print("bench_port: no tool selected", file=sys.stderr)
        return 2

    scratch_root = args.scratch or Path(tempfile.mkdtemp(prefix="hipport-bench-"))
    scratch_root.mkdir(parents=True, exist_ok=True)
    runs: list[Run] = []
    try:
        for phase, tool in schedule(tools, args.warmup, max(1, args.cold), args.warm):
            cache = scratch_root / f"cache-{tool.name}-j{tool.jobs}"
            out = scratch_root / f"out-{tool.name}-j{tool.jobs}"
            run = measure(tool, phase, tool.corpus or corpus, out, cache)
            if phase != "warmup" or run.rc:  # a failed warm-up is shown, and fails the run
                runs.append(run)
            if args.json != "-":
                print(f"  {tool.name} -j {tool.jobs} {phase}: {run.wall_s:.2f} s", file=sys.stderr)
        order = {(t.name, t.jobs): i for i, t in enumerate(tools)}
        runs.sort(key=lambda r: (order[r.tool, r.jobs], r.phase == "warm"))  # stable: runs in order
        if not args.keep:
            for tool in tools:
                shutil.rmtree(scratch_root / f"out-{tool.name}-j{tool.jobs}", ignore_errors=True)
    finally:
        if not args.keep and not args.scratch:
            shutil.rmtree(scratch_root, ignore_errors=True)

    result = {
        "version": 1,
        "machine": {"python": platform.python_version(), "platform": platform.platform(),
                    "cpus": os.cpu_count()},
        "hipport": hipport_version(hipport_argv()),
        "corpus": asdict(corpus),
        "check_file": next((asdict(t.corpus) for t in tools if t.name == "hipport-check-file" and t.corpus), None),
        "runs": [asdict(r) for r in runs],
        "ratios": ratios(runs),
    }
    if args.json == "-":
        print(json.dumps(result, indent=2))
    else:
        if result["hipport"]:
            print(result["hipport"])
        print(table(corpus, runs))
        if result["check_file"]:
            print(f"\nhipport-check-file checks {result['check_file']['path']} ({result['check_file']['bytes']} bytes)")
        if result["ratios"]:
            print("\nissue 7's targets, from this invocation:")
            for name, value in result["ratios"].items():
                print(f"  {name}: {value}")
        stolen = [r.steal_s for r in runs if r.steal_s is not None]
        if stolen:
            print(f"\nthe host's steal from this machine's vCPUs during the {len(runs)} timed runs: "
                  f"{sum(stolen):.2f} s in all, over {sum(r.wall_s for r in runs):.1f} s of wall")
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 1 if any(r.rc for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
