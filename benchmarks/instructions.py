#!/usr/bin/env python3
"""Count the instructions a hipport run executes, with valgrind's callgrind.

    python benchmarks/instructions.py CORPUS                  # port, -j 1 and -j 2
    python benchmarks/instructions.py CORPUS -j 4 --command check --json counts.json

On a shared VM a run's wall and CPU times swing by tens of percent from one minute to the
next (benchmarks/README.md); the instructions it executes do not: two runs of the same tree
differ by a few tenths of a percent. A change that saves 1 % of the work shows here at once,
where bench_port.py needs many rounds to tell it from the drift. And `-j N`'s count against
`-j 1`'s is the work the processes add to share the files (each worker's own loading, the
pickles, the feeder threads); what a `-j N` run's CPU time adds beyond that is the machine's
(page faults and the like, which are the kernel's instructions and not counted here, and two
busy cores slowing each other). Where `-j N` forked, the table also gives its even path: what
the main process ran before its first fork (its start, the imports, the walk: no worker exists
yet), then the rest of the run's count shared evenly by its N processes, as they share the
files when they run at the same pace (they take tasks as they go, and end within milliseconds
of each other). `-j 1`'s count over it is the speed-up the instructions allow `-j N` on N
cores that run at one pace, with no time in the kernel.

Each command runs once without valgrind first, as a user's first run, which writes the
bytecode, the compiled tables and the stored patterns; then once under
`valgrind --tool=callgrind --trace-children=yes`, a profile per process. A forked worker
starts with a copy of its parent's counts, so its counts are zeroed as it starts (CPython
calls PyOS_AfterFork_Child in the child of os.fork): each instruction counts once, in the
process that ran it. The main process's profile is dumped as each fork begins
(PyOS_BeforeFork), so its first part is what it ran before its first worker existed. Only
user-space instructions count. A run under valgrind takes 30 to 80 times as long as without
it.

Needs valgrind (`apt-get install valgrind`) and an installed hipport; nothing beyond the
standard library otherwise. tests/test_benchmarks.py runs it where valgrind is installed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_port import Corpus, hipport_argv, hipport_command, run_env, scan  # noqa: E402 - this folder is no package

# Zeroed in a forked child as it starts: else its profile holds its parent's counts too.
AFTER_FORK = "PyOS_AfterFork_Child"
# Dumped in the forking process as each fork begins: a process's first part is then what it
# ran before its first fork.
BEFORE_FORK = "PyOS_BeforeFork"


@dataclass
class Process:
    pid: int
    instructions: int
    main: bool  # the process the command started (else a worker it forked)
    before_fork: int | None = None  # of those, the ones run before its first fork (None: it forked none)


@dataclass
class Count:
    command: str
    jobs: int
    processes: list[Process]
    rc: int
    error: str = ""

    @property
    def instructions(self) -> int:
        return sum(p.instructions for p in self.processes)

    @property
    def even_path(self) -> float | None:
        """What the main process ran before its first fork, then the rest shared evenly by
        the processes: the run's length in instructions where they all run at one pace. From
        the sum, not from how the files happened to fall to each process under valgrind (whose
        own pace differs between processes). None where it forked no worker."""
        main = next((p for p in self.processes if p.main), None)
        if main is None or main.before_fork is None or len(self.processes) < 2:
            return None
        return main.before_fork + (self.instructions - main.before_fork) / len(self.processes)


def read_profile(path: Path) -> tuple[int, int, int]:
    """A callgrind profile's (pid, part, instructions): its `pid:` and `part:` lines (the part
    numbers a process's dumps, from 1) and the `summary:` line of its header, the sum of the
    costs it holds (the `totals:` at its end may also count what a child did before its counts
    were zeroed)."""
    pid = summary = None
    part = 1
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key == "pid":
                pid = int(value)
            elif key == "part":
                part = int(value)
            elif key == "summary":
                summary = int(value.split()[0])  # the first event: Ir, instructions read
            if pid is not None and summary is not None:  # `part:` comes before `summary:`
                return pid, part, summary
            if line.startswith(("fl=", "fn=", "ob=")):
                break  # the costs have begun: the header had no summary
    raise ValueError(f"{path}: not a callgrind profile with a pid and a summary")


def valgrind_argv(valgrind: str, profiles: Path) -> list[str]:
    return [valgrind, "--tool=callgrind", "--trace-children=yes", f"--zero-before={AFTER_FORK}",
            f"--dump-before={BEFORE_FORK}", f"--callgrind-out-file={profiles}/callgrind.%p"]


def processes(parts: list[tuple[int, int, int]], main: int) -> list[Process]:
    """The processes of a run's profiles (pid, part, instructions), the main one first, each
    one's parts summed. A process dumped in more than one part forked: its first part is what
    it ran before its first fork."""
    by_pid: dict[int, dict[int, int]] = {}
    for pid, part, n in parts:
        by_pid.setdefault(pid, {})[part] = n
    found = [Process(pid, sum(counts.values()), pid == main, counts[min(counts)] if len(counts) > 1 else None)
             for pid, counts in by_pid.items()]
    return sorted(found, key=lambda p: (not p.main, p.pid))


def run(argv: list[str], scratch: Path) -> tuple[int, int, str]:
    """`argv` as bench_port.py runs a cold run (new output and cache folders, bytecode on):
    its pid (valgrind runs the command in the process it starts in), exit status and the
    tail of its error output."""
    for name in ("out", "cache"):
        shutil.rmtree(scratch / name, ignore_errors=True)
    (scratch / "cache").mkdir(parents=True)
    with subprocess.Popen(argv, cwd=scratch / "cache", env=run_env(scratch / "cache"),
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as proc:
        _, err = proc.communicate()
    return proc.pid, proc.returncode, err.decode("utf-8", "replace")[-2000:]


def count(base: list[str], valgrind: str, command: str, corpus: Corpus, jobs: int,
          scratch: Path, profiles: Path) -> Count:
    """One cold run of the command under callgrind, after one without it."""
    argv = hipport_command(base, command, corpus.path, str(scratch / "out"), jobs)
    _, rc, err = run(argv, scratch)
    if rc:
        return Count(command, jobs, [], rc, err)
    shutil.rmtree(profiles, ignore_errors=True)
    profiles.mkdir(parents=True)
    main, rc, err = run([*valgrind_argv(valgrind, profiles), *argv], scratch)
    if rc:  # a profile may be cut short: none counts
        return Count(command, jobs, [], rc, err)
    return Count(command, jobs, processes([read_profile(p) for p in sorted(profiles.glob("callgrind.*"))], main), rc)


def baseline(counts: list[Count]) -> Count | None:
    """The `-j 1` count the others are set against; None when it failed."""
    return next((c for c in counts if c.jobs == 1 and not c.rc), None)


def table(corpus: Corpus, counts: list[Count]) -> str:
    first = baseline(counts)
    lines = [f"corpus: {corpus.path}: {corpus.files} files, {corpus.bytes / 1e6:.1f} MB", "",
             f"{'command':8}  {'-j':>2}  {'process':18}  {'instructions (M)':>16}",
             f"{'-' * 8}  {'-' * 2}  {'-' * 18}  {'-' * 16}"]
    for c in counts:
        if c.rc:
            lines.append(f"{c.command:8}  {c.jobs:>2}  failed (exit {c.rc}): {c.error.strip()[-300:]}")
            continue
        for n, p in enumerate(c.processes):
            name = "main" if p.main else f"worker {n}"
            before = f"   {p.before_fork / 1e6:.1f} before its first fork" if p.before_fork is not None else ""
            lines.append(f"{c.command:8}  {c.jobs:>2}  {name + f' ({p.pid})':18}  {p.instructions / 1e6:16.1f}{before}")
        if len(c.processes) > 1 or c is not first:
            added = f"   {excess(first, c):+.1%} against -j 1" if first and c is not first else ""
            lines.append(f"{c.command:8}  {c.jobs:>2}  {'all':18}  {c.instructions / 1e6:16.1f}{added}")
        even = c.even_path
        if even is not None:
            speedup = allowed(first, c)
            said = f"   -j 1 / it: {speedup:.2f}x" if speedup is not None else ""
            lines.append(f"{c.command:8}  {c.jobs:>2}  {'even path':18}  {even / 1e6:16.1f}{said}")
    return "\n".join(lines)


def allowed(first: Count | None, other: Count) -> float | None:
    """The speed-up over `first` (the `-j 1` count) that `other`'s instructions allow: its even
    path's; None without either."""
    even = other.even_path
    return first.instructions / even if first is not None and even else None


def excess(first: Count, other: Count) -> float:
    """What `other` executes beyond `first`, as a fraction of `first`."""
    return other.instructions / first.instructions - 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Count the instructions a hipport run executes (valgrind).")
    parser.add_argument("corpus", type=Path, help="source tree (see make_corpus.py)")
    parser.add_argument("-j", "--jobs", type=int, default=2,
                        help="processes of the parallel run, counted beside -j 1 (default 2)")
    parser.add_argument("--command", choices=["port", "check"], default="port",
                        help="hipport port CORPUS -o OUT, or hipport check CORPUS (default: port)")
    parser.add_argument("--valgrind", default=os.environ.get("VALGRIND", "valgrind"),
                        help="the valgrind to run (default: $VALGRIND, else valgrind on PATH)")
    parser.add_argument("--json", metavar="FILE", help="also write the counts as JSON to FILE")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="keep the profiles in DIR/j1, DIR/jN (for callgrind_annotate)")
    args = parser.parse_args(argv)

    if not args.corpus.is_dir():
        print(f"instructions: {args.corpus} is not a directory", file=sys.stderr)
        return 2
    if shutil.which(args.valgrind) is None:
        print(f"instructions: {args.valgrind} not found (apt-get install valgrind)", file=sys.stderr)
        return 2
    base = hipport_argv()
    if base is None:
        print("instructions: hipport is not installed here (pip install .)", file=sys.stderr)
        return 2
    corpus = scan(args.corpus.resolve())
    scratch = Path(tempfile.mkdtemp(prefix="hipport-instructions-"))
    counts = []
    try:
        for jobs in sorted({1, max(1, args.jobs)}):
            profiles = (args.keep or scratch / "profiles") / f"j{jobs}"
            counts.append(count(base, args.valgrind, args.command, corpus, jobs, scratch, profiles))
            done = counts[-1]
            said = f"failed (exit {done.rc})" if done.rc else f"{done.instructions / 1e6:.1f} M"
            print(f"  {args.command} -j {jobs}: {said}", file=sys.stderr)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(table(corpus, counts))
    if args.json:
        first = baseline(counts)
        Path(args.json).write_text(json.dumps({
            "version": 1, "corpus": asdict(corpus),
            "counts": [{**asdict(c), "instructions": c.instructions,
                        "excess": excess(first, c) if first and c is not first and not c.rc else None,
                        "even_path": c.even_path,
                        "allowed": allowed(first, c)}
                       for c in counts]}, indent=2) + "\n")
    return 1 if any(c.rc for c in counts) else 0


if __name__ == "__main__":
    sys.exit(main())
