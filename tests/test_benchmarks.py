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
