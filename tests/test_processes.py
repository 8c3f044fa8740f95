"""How many processes a run takes by default: one per CPU the process may use, which its
affinity and its container's CPU quota (cgroup v1 or v2) decide, not the host's core count."""

from __future__ import annotations

import os

import pytest

from hipport import parallel


@pytest.fixture
def host(tmp_path, monkeypatch):
    """A 64-CPU host seen from a cgroup folder the test fills."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(64)))
    monkeypatch.setattr(parallel, "CGROUP", str(tmp_path))
    return tmp_path


def write(folder, name, text):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.mark.parametrize("files, cpus", [
    ({}, 64),  # no cgroup files: the affinity
    ({"cpu.max": "200000 100000\n"}, 2),  # v2: a container run with --cpus=2
    ({"cpu.max": "150000 100000\n"}, 2),  # 1.5 CPUs: rounded up
    ({"cpu.max": "10000 100000\n"}, 1),
    ({"cpu.max": "max 100000\n"}, 64),  # v2 without a quota
    ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, 64),  # v1 without
    ({"cpu/cpu.cfs_quota_us": "400000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 4),
    ({"cpu,cpuacct/cpu.cfs_quota_us": "300000\n", "cpu,cpuacct/cpu.cfs_period_us": "100000\n"}, 3),
    ({"cpu.max": "garbled\n"}, 64),
])
def test_usable_cpus_follow_the_quota(host, files, cpus):
    for name, text in files.items():
        write(host, name, text)
    assert parallel.usable_cpus() == cpus


def test_the_affinity_bounds_a_larger_quota(host, monkeypatch):
    write(host, "cpu.max", "800000 100000\n")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 5, 9})
    assert parallel.usable_cpus() == 3


def test_an_explicit_count_is_taken_as_asked(host):
    write(host, "cpu.max", "100000 100000\n")
    assert parallel.processes(0) == 1
    assert parallel.processes(5) == 5


def square(job):
    return job.value ** 2, os.getpid()


class Job:
    settings = None

    def __init__(self, value):
        self.value = value


def test_a_one_cpu_container_runs_in_this_process_by_default(host):
    write(host, "cpu.max", "100000 100000\n")
    results = list(parallel.run(square, [Job(v) for v in range(40)], 0))
    assert [r for r, _ in results] == [v * v for v in range(40)]
    assert {pid for _, pid in results} == {os.getpid()}
