"""benchmarks/: bench_port.py's runs and the ratios issue 7's targets compare, and
instructions.py's counts."""

import functools
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@functools.cache  # once a session: a Run made by _run is then of the class the tests' module holds
def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclasses look their module up there
    spec.loader.exec_module(sys.modules[spec.name])
    return sys.modules[spec.name]


def _bench():
    return _script("bench_port")


def _instructions():
    return _script("instructions")  # imports bench_port from its own folder


def _run(tool, jobs, phase, wall, rc=0, rss=50.0):
    """A finished run as bench_port records it (files/s and MB/s, which no ratio reads, as 1)."""
    return _bench().Run(tool, jobs, phase, wall, rss, 1.0, 1.0, rc)


def test_ratios_compare_cold_and_warm_runs():
    bench = _bench()
    runs = [_run("hipport", 1, "cold", 1.2), _run("hipport", 1, "warm", 0.5), _run("hipport", 1, "warm", 0.1),
            _run("hipport", 1, "warm", 0.08), _run("hipport", 1, "warm", 0.0, rc=1),  # the median of 3 warm runs
            _run("hipport", 2, "cold", 0.75), _run("torch-hipify", 1, "cold", 4.0),
            _run("hipify-perl", 1, "cold", 0.0, rc=1)]  # a failed run counts for nothing
    assert bench.ratios(runs) == {
        "hipport / torch-hipify (target <= 0.33)": 0.3,
        "-j 1 / -j 2 (target >= 1.7 for -j 2)": 1.6,
        "cold / warm (target >= 10)": 12.0,
        "peak RSS of a hipport process, MB (target < 250)": 50.0,
    }
    assert bench.ratios([_run("torch-hipify", 1, "cold", 4.0)]) == {}  # no hipport run to compare


def test_ratios_take_the_median_of_several_cold_runs():
    bench = _bench()

    def run(tool, phase, wall, rc=0, rss=50.0):
        return _run(tool, 1, phase, wall, rc, rss)

    runs = [run("hipport", "cold", 1.4), run("hipport", "cold", 1.0), run("hipport", "cold", 1.1, rss=61.0),
            run("hipport", "warm", 0.1), run("hipify-perl", "cold", 22.0), run("hipify-perl", "cold", 99.0, rc=1),
            run("hipport-check-file", "cold", 0.2), run("hipport-check-file", "cold", 0.09),
            run("hipport-check-file", "cold", 0.11), run("hipport-check-file", "warm", 0.05)]
    assert bench.ratios(runs) == {"hipify-perl / hipport (target >= 20)": 20.0, "cold / warm (target >= 10)": 11.0,
                                  "check of one file, s (target < 0.3)": 0.11,
                                  "peak RSS of a hipport process, MB (target < 250)": 61.0}


def test_the_j_ratio_is_also_taken_round_by_round():
    """The median of each round's own ratio pairs runs made in the same minutes; the ratio of
    the medians may take them from minutes far apart (here 1.2 s and 0.675 s, from different
    rounds: 1.78x, while the rounds' own ratios are 2.0, 1.25 and 2.0)."""
    bench = _bench()

    def run(jobs, wall, rc=0):
        return _run("hipport", jobs, "cold", wall, rc)

    rounds = [(1.2, 0.6), (1.0, 0.8), (1.4, 0.7), (1.3, 0.65)]
    runs = [run(1, a) for a, _ in rounds] + [run(2, b) for _, b in rounds]
    runs[3] = run(1, 9.9, rc=1)  # a failed run: its round counts for nothing
    assert bench.paired_ratios(runs, "hipport", 2) == [2.0, 1.25, 2.0]
    ratios = bench.ratios(runs)
    assert ratios["-j 1 / -j 2 (target >= 1.7 for -j 2)"] == 1.78
    assert ratios["-j 1 / -j 2, the median of each round's own ratio"] == 2.0
    assert not any("round" in name for name in bench.ratios(runs[:1] + runs[4:5]))  # one round: no median


def test_a_plain_invocation_takes_the_j_ratio_round_by_round(tmp_path, monkeypatch, capsys):
    """Without --cold, the benchmark makes more than one round, so the `-j` ratio also comes
    from runs made side by side: one pair of runs is at the mercy of the VM's minute."""
    bench = _bench()
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.cu").write_text("int main() { return 0; }\n")
    made = []

    def measure(tool, phase, corpus, out, cache):
        made.append((phase, tool.jobs))
        wall = 1.0 if tool.jobs == 1 else 0.5
        return _run(tool.name, tool.jobs, phase, wall)

    monkeypatch.setattr(bench, "measure", measure)
    assert bench.main([str(tmp_path / "src"), "-j", "2", "--tools", "hipport", "--warmup", "0",
                       "--warm", "0", "--scratch", str(tmp_path / "scratch"), "--json", "-"]) == 0
    assert made.count(("cold", 1)) == made.count(("cold", 2)) == bench.COLD_ROUNDS > 1
    ratios = json.loads(capsys.readouterr().out)["ratios"]
    assert ratios["-j 1 / -j 2, the median of each round's own ratio"] == 2.0


def test_the_one_file_check_takes_the_cu_file_nearest_200_lines(tmp_path):
    bench = _bench()
    for rel, lines in [("a/far.cu", 20), ("a/near.cu", 190), ("b/nearest.cuh", 200), ("b/tie.cu", 210),
                       ("c/long.cu", 900)]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("__global__ void k() {}\n" * lines)
    one = bench.check_file(bench.scan(tmp_path))
    assert one == bench.Corpus(str(tmp_path / "a" / "near.cu"), 1, 190 * 23)  # a .cu file; the first of equals
    tool = next(t for t in bench.make_tools(2, {"hipport-check-file"}, bench.scan(tmp_path)))
    assert tool.corpus == one and tool.plan(one.path, "unused")[1][0][-3:] == ["check", one.path, "--exit-zero"]
    (tmp_path / "empty").mkdir()
    assert bench.check_file(bench.scan(tmp_path / "empty")) is None


def test_warm_up_runs_are_left_out_and_each_cold_run_starts_empty(tmp_path):
    bench = _bench()
    corpus_dir = tmp_path / "src"
    corpus_dir.mkdir()
    (corpus_dir / "a.cu").write_text("int x;\n")
    corpus = bench.scan(corpus_dir)
    seen = []

    def plan(src, out):
        # each run records what the cache folder held when it started, then leaves a file there
        return None, [[sys.executable, "-c",
                       "import os, sys; d = os.environ['XDG_CACHE_HOME']; os.makedirs(d, exist_ok=True);"
                       "print(len(os.listdir(d)), file=sys.stderr); open(os.path.join(d, str(len(os.listdir(d)))), 'w');"
                       "sys.exit(3)"]]

    tool = bench.Tool("probe", 1, plan)
    cache, out = tmp_path / "cache", tmp_path / "out"
    for phase in ("warmup", "cold", "warm", "cold"):
        run = bench.measure(tool, phase, corpus, out, cache)
        seen.append((phase, run.error.strip()))
    # cold and warm-up runs find an empty cache; a warm run finds what the run before left
    assert seen == [("warmup", "0"), ("cold", "0"), ("warm", "1"), ("cold", "0")]


def test_cold_runs_go_round_robin_and_warm_runs_close_each_round():
    bench = _bench()
    a, b = bench.Tool("a", 1, None, cached=True), bench.Tool("b", 2, None)
    order = [(phase, tool.name) for phase, tool in bench.schedule([a, b], warmup=1, cold=2, warm=2)]
    # a slow spell of the host then falls on both tools' cold runs, not on one tool's series,
    # and the cached tool's warm runs sample the same rounds as its cold runs; a tool without
    # a content cache redoes its work warm, so it runs warm once, at the end
    assert order == [("warmup", "a"), ("warmup", "b"), ("cold", "a"), ("cold", "b"), ("warm", "a"), ("warm", "a"),
                     ("cold", "a"), ("cold", "b"), ("warm", "a"), ("warm", "a"), ("warm", "b")]


def test_every_hipport_tool_keeps_a_content_cache_and_no_other_does(tmp_path, monkeypatch):
    bench = _bench()
    monkeypatch.setenv("HIPIFY_PERL", "/nonexistent/hipify-perl")
    (tmp_path / "a.cu").write_text("__global__ void k() {}\n")
    tools = bench.make_tools(2, None, bench.scan(tmp_path))
    assert {t.name for t in tools if t.cached} == {"hipport", "hipport-check", "hipport-check-file"}
    assert {t.name for t in tools if not t.cached} >= {"cpu-loop", "hipify-perl"}


def test_tools_run_as_an_install_does_with_bytecode_written(tmp_path, monkeypatch):
    """This sandbox's shell sets PYTHONDONTWRITEBYTECODE; a user's install keeps its bytecode
    (and hipport its compiled tables beside it), so the measured runs do not inherit it."""
    bench = _bench()
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    (tmp_path / "src").mkdir()
    corpus = bench.scan(tmp_path / "src")
    probe = bench.Tool("probe", 1, lambda src, out: (None, [[
        sys.executable, "-c", "import sys; print(sys.dont_write_bytecode, file=sys.stderr); sys.exit(3)"]]))
    run = bench.measure(probe, "cold", corpus, tmp_path / "out", tmp_path / "cache")
    assert run.rc == 3 and run.error.strip() == "False"


def test_each_run_keeps_hipports_cache_in_its_own_folder(tmp_path, monkeypatch):
    """A shell's HIPPORT_CACHE_DIR (the test suite sets one) would hold every run's cache,
    the warm-up's too: each "cold" run would then be served from it."""
    bench = _bench()
    monkeypatch.setenv("HIPPORT_CACHE_DIR", str(tmp_path / "shared"))
    (tmp_path / "src").mkdir()
    probe = bench.Tool("probe", 1, lambda src, out: (None, [[
        sys.executable, "-c", "import os, sys; print(os.environ.get('HIPPORT_CACHE_DIR'), os.environ['XDG_CACHE_HOME'],"
                              " file=sys.stderr); sys.exit(3)"]]))
    run = bench.measure(probe, "cold", bench.scan(tmp_path / "src"), tmp_path / "out", tmp_path / "cache")
    assert run.error.split() == ["None", str(tmp_path / "cache" / "xdg")]


def test_the_cpu_loop_is_measured_cold_only_and_reported_beside_the_j_ratio(tmp_path):
    """A CPU-bound loop shared by 1 and by N processes, as hipport's batches are: its ratio is
    what the machine gave `-j N` in the same minutes (a VM's vCPUs are not always equally
    fast). It keeps nothing, so it has no warm run."""
    bench = _bench()
    (tmp_path / "a.cu").write_text("int x;\n")
    tools = bench.make_tools(2, {"cpu-loop"}, bench.scan(tmp_path))
    assert [(t.name, t.jobs) for t in tools] == [("cpu-loop", 1), ("cpu-loop", 2)]
    assert [(phase, t.jobs) for phase, t in bench.schedule(tools, warmup=0, cold=1, warm=1)] == \
        [("cold", 1), ("cold", 2)]

    def run(tool, jobs, wall):
        return _run(tool, jobs, "cold", wall)

    ratios = bench.ratios([run("hipport", 1, 1.2), run("hipport", 2, 0.8), run("cpu-loop", 1, 1.0),
                           run("cpu-loop", 2, 0.625)])
    assert ratios["-j 1 / -j 2 (target >= 1.7 for -j 2)"] == 1.5
    assert ratios["-j 1 / -j 2 of a CPU-bound loop in the same minutes (2 on ideal cores)"] == 1.6


def test_the_cpu_loop_shares_its_pieces_between_processes(tmp_path):
    """Every piece of the loop runs once, in whichever process takes it first; the forked
    processes end and are reaped."""
    bench = _bench()
    traced = bench._CPU_LOOP.replace("    x = 0\n", "    x = 0\n    os.write(1, b'%d ' % os.getpid())\n")
    assert traced != bench._CPU_LOOP
    done = subprocess.run([sys.executable, "-c", traced, "4000", "40", "3"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    pids = done.stdout.split()
    assert len(pids) == 40 and len(set(pids)) <= 3


def test_each_run_reports_its_cpu_time_and_the_hosts_steal(tmp_path):
    """A run slowed by the host (a shared VM's other guests) shows it: wall time far above
    CPU time, or steal. The CPU time is the run's processes', child processes included."""
    bench = _bench()
    (tmp_path / "src").mkdir()
    corpus = bench.scan(tmp_path / "src")
    burn = ("import os, time\n"
            "def spin():\n"
            "    t = time.process_time()\n"
            "    while time.process_time() - t < 0.2: pass\n"
            "if os.fork() == 0:\n"
            "    spin(); os._exit(0)\n"
            "spin(); os.wait()\n")
    run = bench.measure(bench.Tool("burn", 1, lambda src, out: (None, [[sys.executable, "-c", burn]])),
                        "cold", corpus, tmp_path / "out", tmp_path / "cache")
    assert run.rc == 0, run.error
    assert 0.38 <= run.cpu_s < run.wall_s * 2 + 0.5  # two processes' 0.2 s each, and a start
    if Path("/proc/stat").exists():
        assert run.steal_s is not None and run.steal_s >= 0
    else:
        assert run.steal_s is None
    text = bench.table(corpus, [run, bench.Run("other", 1, "cold", 1.0, 9.0, 0.0, 0.0, 0)])
    head, rule, burned, other = text.splitlines()[2:6]
    assert head.split()[3:7] == ["wall", "s", "CPU", "s"] and "steal s" in head
    assert burned.split()[4] == f"{run.cpu_s:.2f}"
    assert other.split()[4:6] == ["0.00", "-"]  # no steal figure: not measured


def test_a_profile_gives_its_pid_and_the_instructions_of_its_header(tmp_path):
    count = _instructions()
    profile = tmp_path / "callgrind.42"
    profile.write_text("# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\npid: 42\n"
                       "cmd:  python -m hipport port src\npart: 1\n\nevents: Ir\nsummary: 2356644241\n\n"
                       "ob=(1) /usr/lib/libc.so.6\nfn=(1) main\n0 12\n\ntotals: 2358827662\n")
    # the header's summary: the costs the profile holds (totals may count a child's pre-zero part)
    assert count.read_profile(profile) == (42, 1, 2356644241)
    profile.write_text("version: 1\npid: 42\npart: 3\nevents: Ir\nsummary: 77\n\nfn=(1) main\n0 77\n")
    assert count.read_profile(profile) == (42, 3, 77)  # a later dump of the same process
    profile.write_text("version: 1\npid: 42\nevents: Ir\nfn=(1) main\n0 12\nsummary: 12\n")
    with pytest.raises(ValueError, match="not a callgrind profile"):
        count.read_profile(profile)


def test_the_counts_table_shows_each_process_and_what_j_n_adds():
    count = _instructions()
    corpus = count.Corpus("/src", 940, 9_900_000)
    one = count.Count("port", 1, [count.Process(7, 5_000_000_000, True)], 0)
    two = count.Count("port", 2, [count.Process(9, 2_900_000_000, True), count.Process(10, 2_350_000_000, False)], 0)
    assert two.instructions == 5_250_000_000 and count.excess(one, two) == pytest.approx(0.05)
    lines = count.table(corpus, [one, two]).splitlines()
    assert lines[0] == "corpus: /src: 940 files, 9.9 MB"
    assert [line.split()[:3] for line in lines[4:]] == [["port", "1", "main"], ["port", "2", "main"],
                                                         ["port", "2", "worker"], ["port", "2", "all"]]
    assert lines[-1].split()[3:] == ["5250.0", "+5.0%", "against", "-j", "1"]
    failed = count.Count("port", 2, [], 1, "Traceback ...\nboom\n")
    assert "failed (exit 1): Traceback ...\nboom" in count.table(corpus, [one, failed])


def test_a_process_dumped_at_its_forks_counts_its_parts_and_what_ran_before_the_first():
    count = _instructions()
    # the main process (pid 9) forked twice: dumped as each fork began, then at its end
    found = count.processes([(10, 1, 2_300_000_000), (9, 1, 200_000_000), (9, 3, 2_000_000_000),
                             (9, 2, 1_000), (11, 1, 2_400_000_000)], main=9)
    assert [(p.pid, p.main, p.instructions, p.before_fork) for p in found] == [
        (9, True, 2_200_001_000, 200_000_000), (10, False, 2_300_000_000, None), (11, False, 2_400_000_000, None)]
    assert count.processes([(7, 1, 5_000_000_000)], main=7) == [count.Process(7, 5_000_000_000, True)]


def test_the_even_path_is_the_start_before_the_fork_and_then_the_rest_shared_evenly():
    count = _instructions()
    corpus = count.Corpus("/src", 940, 9_900_000)
    one = count.Count("port", 1, [count.Process(7, 4_500_000_000, True)], 0)
    # the main process: 200 M to its fork, then 2,200 M; the worker 2,300 M after it
    two = count.Count("port", 2, [count.Process(9, 2_400_000_000, True, 200_000_000),
                                  count.Process(10, 2_300_000_000, False)], 0)
    assert two.even_path == 200_000_000 + 4_500_000_000 / 2
    assert one.even_path is None  # no fork: nothing ran beside it
    # however the files fell to the processes under valgrind, the path is the same
    other_split = count.Count("port", 2, [count.Process(9, 2_600_000_000, True, 200_000_000),
                                          count.Process(10, 2_100_000_000, False)], 0)
    assert other_split.even_path == two.even_path
    three = count.Count("port", 3, [count.Process(9, 1_700_000_000, True, 200_000_000),
                                    count.Process(10, 1_500_000_000, False), count.Process(11, 1_500_000_000, False)], 0)
    assert three.even_path == 200_000_000 + 4_500_000_000 / 3
    lines = count.table(corpus, [one, two]).splitlines()
    assert lines[5].split()[4:] == ["2400.0", "200.0", "before", "its", "first", "fork"]
    assert lines[-1].split() == ["port", "2", "even", "path", "2450.0", "-j", "1", "/", "it:", "1.84x"]


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_a_forked_child_counts_only_what_it_runs_itself(tmp_path):
    """A child of os.fork starts with a copy of its parent's counts; zeroed as it starts, it
    counts its own work alone: here none, against the parent's loop of millions of steps."""
    count = _instructions()
    script = ("import os\nx = 0\nfor i in range(1_000_000): x += i\n"
              "pid = os.fork()\nif pid == 0: os._exit(0)\nos.waitpid(pid, 0)\n")
    done = subprocess.run([*count.valgrind_argv("valgrind", tmp_path), sys.executable, "-c", script],
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr
    found = count.processes([count.read_profile(p) for p in tmp_path.glob("callgrind.*")], main=0)
    assert len(found) == 2
    parent, child = sorted(found, key=lambda p: -p.instructions)
    assert parent.instructions > 50_000_000 and child.instructions < parent.instructions / 20
    # the parent's profile was dumped as the fork began: its loop ran before, its wait after
    assert parent.before_fork is not None and parent.before_fork > 0.95 * parent.instructions
    assert child.before_fork is None


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_instructions_counts_a_port_of_the_examples_with_one_process_and_with_two(tmp_path):
    count = _instructions()
    if count.hipport_argv() is None:
        pytest.skip("hipport is not installed")
    corpus = tmp_path / "src"
    shutil.copytree(ROOT / "examples", corpus)
    for k in range(2):  # enough files for a pool (parallel.SERIAL_BELOW)
        shutil.copytree(ROOT / "examples", corpus / f"copy{k}")
    out = tmp_path / "counts.json"
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "instructions.py"), str(corpus), "-j", "2",
                           "--json", str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    counts = json.loads(out.read_text())["counts"]
    assert [(c["jobs"], [p["main"] for p in c["processes"]], c["rc"]) for c in counts] == \
        [(1, [True], 0), (2, [True, False], 0)]
    one, two = counts
    # the worker loads the tables and rules itself: -j 2 executes more than -j 1
    assert two["instructions"] > one["instructions"] > 100_000_000
    assert two["excess"] == pytest.approx(two["instructions"] / one["instructions"] - 1)
    # but counts from its fork on: less than the main process, which also started the command
    # and walked the tree (about 250 against 370 M here; counted from the start, 390 against 370)
    assert two["processes"][1]["instructions"] < two["processes"][0]["instructions"]
    assert f"{two['excess']:+.1%} against -j 1" in done.stdout
    # the main process's profile was dumped at the fork: its start and the walk came before
    main, worker = two["processes"]
    assert 0 < main["before_fork"] < main["instructions"] and worker["before_fork"] is None
    assert two["even_path"] == pytest.approx(main["before_fork"] + (two["instructions"] - main["before_fork"]) / 2)
    assert two["allowed"] == pytest.approx(one["instructions"] / two["even_path"])
    assert one["even_path"] is None and one["allowed"] is None
    assert f"-j 1 / it: {two['allowed']:.2f}x" in done.stdout


def test_a_failed_count_is_said_to_have_failed_as_it_goes(tmp_path, monkeypatch, capsys):
    """The progress line of a run that failed names its exit status, not a count of 0.0 M."""
    count = _instructions()
    (tmp_path / "src").mkdir()
    monkeypatch.setattr(count, "hipport_argv", lambda: ["hipport"])
    monkeypatch.setattr(count.shutil, "which", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(count, "count", lambda base, valgrind, command, corpus, jobs, scratch, profiles:
                        count.Count(command, jobs, [], 2, "boom"))
    assert count.main([str(tmp_path / "src"), "-j", "2"]) == 1
    err = capsys.readouterr().err
    assert "port -j 1: failed (exit 2)" in err and "port -j 2: failed (exit 2)" in err and " M" not in err


def test_the_benchmark_says_whether_the_measured_hipport_scans_in_c(tmp_path):
    """A machine without the Python headers gets hipport without its C scanner and ports about
    three times slower; the benchmark's output says which hipport it measured."""
    bench = _bench()
    says = bench.hipport_version([sys.executable, "-c", "print('hipport, version 9.9 (C scanner: yes)')"])
    assert says == "hipport, version 9.9 (C scanner: yes)"
    assert bench.hipport_version([sys.executable, "-c", "import sys; sys.exit(3)"]) is None
    assert bench.hipport_version(None) is None
    here = bench.hipport_version([sys.executable, "-m", "hipport"])  # this checkout's, or an install's
    assert here.startswith("hipport, version ") and "(C scanner: " in here
