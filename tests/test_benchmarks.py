"""benchmarks/bench_port.py's ratios: what issue 7's targets compare, from one invocation."""

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_port", ROOT / "benchmarks" / "bench_port.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclasses look their module up there
    spec.loader.exec_module(sys.modules[spec.name])
    return sys.modules[spec.name]


def test_ratios_compare_the_first_cold_and_warm_runs():
    bench = _bench()

    def run(tool, jobs, phase, wall, rc=0):
        return bench.Run(tool, jobs, phase, wall, 50.0, 1.0, 1.0, rc)

    runs = [run("hipport", 1, "cold", 1.2), run("hipport", 1, "warm", 0.1), run("hipport", 1, "warm", 0.5),
            run("hipport", 2, "cold", 0.75), run("torch-hipify", 1, "cold", 4.0),
            run("hipify-perl", 1, "cold", 0.0, rc=1)]  # a failed run counts for nothing
    assert bench.ratios(runs) == {
        "hipport / torch-hipify (target <= 0.33)": 0.3,
        "-j 1 / -j 2 (target >= 1.7 for -j 2)": 1.6,
        "cold / warm (target >= 10)": 12.0,
    }
    assert bench.ratios([run("torch-hipify", 1, "cold", 4.0)]) == {}  # no hipport run to compare


def test_ratios_take_the_median_of_several_cold_runs():
    bench = _bench()

    def run(tool, phase, wall, rc=0):
        return bench.Run(tool, 1, phase, wall, 50.0, 1.0, 1.0, rc)

    runs = [run("hipport", "cold", 1.4), run("hipport", "cold", 1.0), run("hipport", "cold", 1.1),
            run("hipport", "warm", 0.1), run("hipify-perl", "cold", 22.0), run("hipify-perl", "cold", 99.0, rc=1)]
    assert bench.ratios(runs) == {"hipify-perl / hipport (target >= 20)": 20.0, "cold / warm (target >= 10)": 11.0}


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


def test_cold_runs_go_round_robin_and_warm_runs_follow_their_tool():
    bench = _bench()
    a, b = bench.Tool("a", 1, None), bench.Tool("b", 2, None)
    order = [(phase, tool.name) for phase, tool in bench.schedule([a, b], warmup=1, cold=2, warm=1)]
    # a slow spell of the host then falls on both tools' cold runs, not on one tool's series
    assert order == [("warmup", "a"), ("warmup", "b"), ("cold", "a"), ("cold", "b"),
                     ("cold", "a"), ("cold", "b"), ("warm", "a"), ("warm", "b")]
