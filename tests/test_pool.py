"""hipport.pool: forked workers fed over pipes. Results keep their order, a worker's exception
reaches the caller with the worker's traceback, a dead worker fails its tasks instead of
hanging the run, and shutdown leaves no process or descriptor behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hipport.pool import Cancelled, Pool, WorkerDied

ROOT = Path(__file__).resolve().parents[1]


def square(x):
    return x * x


def pid(_):
    return os.getpid()


def slow_pid(seconds):
    time.sleep(seconds)
    return os.getpid()


def fail(message):
    raise ValueError(message)


def unpicklable(_):
    return lambda: None  # a lambda cannot be pickled


def die(_):
    os._exit(3)


def nap(seconds):
    time.sleep(seconds)
    return seconds


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_map_keeps_job_order_over_chunks_and_uses_every_worker():
    with Pool(2) as pool:
        chunks = [(start, min(50, start + 7)) for start in range(0, 50, 7)]
        assert list(pool.map(square, list(range(50)), chunks)) == [x * x for x in range(50)]
        assert list(pool.map(square, [3, 4])) == [9, 16]  # a task per job
        # a worker takes one task at a time: two slow tasks go to two workers
        pids = {f.result() for f in [pool.submit(slow_pid, 0.1) for _ in range(2)]}
    assert len(pids) == 2 and os.getpid() not in pids


def test_a_workers_exception_is_raised_with_its_traceback_and_the_pool_goes_on():
    with Pool(2) as pool:
        failed = pool.submit(fail, "bad input")
        with pytest.raises(ValueError, match="bad input") as raised:
            failed.result()
        assert any("in a worker process" in note and "fail" in note for note in raised.value.__notes__)
        assert pool.submit(square, 9).result() == 81


def test_a_result_that_cannot_be_pickled_fails_its_task_only():
    with Pool(1) as pool:
        with pytest.raises(Exception, match="pickle") as raised:  # the pickling's own error
            pool.submit(unpicklable, None).result()
        assert "in a worker process" in raised.value.__notes__[0]
        assert pool.submit(square, 3).result() == 9


def test_a_dead_worker_fails_its_tasks_and_the_other_worker_goes_on():
    """The tasks queued after a worker died go to the one alive: the dead one's thread took
    them at once and failed them, and on a loaded machine won every one of 50 rounds."""
    with Pool(2) as pool:
        with pytest.raises(WorkerDied, match="ended without answering") as raised:
            pool.submit(die, None).result()
        assert raised.value.exit_code == 2  # the command stops with `hipport: error: ...`
        for _ in range(5):
            assert [f.result() for f in [pool.submit(square, n) for n in range(10)]] == [n * n for n in range(10)]


def test_the_last_worker_to_die_fails_the_tasks_left():
    """With no worker alive, a task fails rather than wait for ever."""
    with Pool(2) as pool:
        for _ in range(2):
            with pytest.raises(WorkerDied):
                pool.submit(die, None).result()
        for future in [pool.submit(square, n) for n in range(4)]:
            with pytest.raises(WorkerDied):
                future.result()


def test_shutdown_with_cancel_drops_queued_tasks_and_leaves_nothing_behind():
    before = _open_fds()
    pool = Pool(1)
    running = pool.submit(nap, 0.2)
    time.sleep(0.05)  # the worker has taken it
    queued = [pool.submit(square, n) for n in range(5)]
    pool.shutdown(cancel_futures=True)
    assert running.result() == 0.2  # a task under way finishes: its outputs are written whole
    for future in queued:
        with pytest.raises(Cancelled):
            future.result()
    assert _open_fds() == before
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # every worker was reaped


def test_workers_ignore_ctrl_c_and_finish_their_task():
    with Pool(1) as pool:
        worker = pool.submit(pid, None).result()
        future = pool.submit(nap, 0.3)
        time.sleep(0.1)
        os.kill(worker, signal.SIGINT)  # as a terminal's Ctrl-C reaches the process group
        assert future.result() == 0.3


def test_buffered_output_is_written_once():
    """What this process buffered before the fork is not written again by a worker."""
    code = ("import sys\nfrom hipport.pool import Pool\nsys.stdout.write('before the fork')\n"
            "with Pool(2) as p: p.submit(abs, -1).result()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "before the fork"


def test_a_pooled_port_imports_no_multiprocessing(tmp_path):
    """`-j 2` over more files than run in-process: the outputs are the serial run's, and the
    pool's start costs no import of multiprocessing or concurrent.futures (20 ms). `-j 2` is
    two processes, this one and one forked worker; the fork comes before this process loads
    the tables and rules (each process loads them at the same time as the other), and this
    process ports too."""
    from hipport import parallel

    src = ROOT / "fixtures" / "port"
    assert sum(1 for p in src.rglob("*") if p.is_file()) >= parallel.SERIAL_BELOW
    code = ("import os, sys\nfrom hipport.cli import main\nimport hipport.runner as runner\n"
            "forks, ported, fork, port_reads = [], [], os.fork, runner.port_reads\n"
            "def counted():\n    forks.append('hipport.rules' in sys.modules)\n    return fork()\n"
            "def watched(reads):\n    ported.append(os.getpid())\n    return port_reads(reads)\n"
            "os.fork, runner.port_reads = counted, watched\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print((forks, os.getpid() in ported, sorted(sys.modules)), file=sys.stderr)\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    outputs = {}
    for jobs in ("1", "2"):
        done = subprocess.run([sys.executable, "-c", code, "port", str(src), "-o", str(tmp_path / jobs),
                               "-j", jobs, "--no-cache"], env=env, capture_output=True, text=True, timeout=120)
        forks, ported_here, modules = eval(done.stderr.strip().splitlines()[-1])
        assert ("hipport.pool" in modules) == (jobs == "2")
        assert forks == ([False] if jobs == "2" else [])  # one worker, forked before any loading
        assert ported_here and "hipport.rules" in set(modules)
        assert not {"multiprocessing", "concurrent.futures"} & set(modules)
        outputs[jobs] = {p.relative_to(tmp_path / jobs): p.read_bytes()
                         for p in (tmp_path / jobs).rglob("*") if p.is_file()}
    assert outputs["1"] == outputs["2"] and outputs["1"]


def refuse(message):
    raise ValueError(message)


def test_an_initializer_that_fails_fails_every_task_with_its_error():
    """(As malformed mapping tables do when workers load them: the command then stops with
    that error, not with a dead worker.)"""
    with Pool(2, refuse, ("tables are malformed",)) as pool:
        for future in [pool.submit(square, n) for n in range(4)]:
            with pytest.raises(ValueError, match="tables are malformed"):
                future.result()


def test_without_fork_every_job_runs_in_this_process(tmp_path, monkeypatch):
    """Windows has no fork: `-j 2` then ports serially, with the same outputs."""
    from hipport import parallel
    from hipport.cli import main

    src = ROOT / "fixtures" / "port"

    def no_pool(*args, **kwargs):
        raise AssertionError("no pool without fork")

    monkeypatch.delattr(os, "fork")
    monkeypatch.setattr(parallel, "pool", no_pool)
    for jobs in ("2", "1"):
        with pytest.raises(SystemExit) as done:
            main(["port", str(src), "-o", str(tmp_path / jobs), "-j", jobs, "--no-cache"])
        assert done.value.code in (0, 1)
    assert [p.read_bytes() for p in sorted((tmp_path / "1").rglob("*")) if p.is_file()] == \
        [p.read_bytes() for p in sorted((tmp_path / "2").rglob("*")) if p.is_file()]
    assert list(parallel.run(abs, [-n for n in range(40)], 2)) == list(range(40))


def test_a_pool_starts_with_stdout_closed(tmp_path):
    """(`hipport port ... >&-` leaves Python no sys.stdout to flush before the fork.)"""
    code = "from hipport.pool import Pool\nwith Pool(2) as p: assert p.submit(abs, -3).result() == 3\n"
    done = subprocess.run([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, timeout=60, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                          preexec_fn=lambda: os.close(1))
    assert done.returncode == 0, done.stderr


def test_a_refused_fork_ports_and_checks_in_this_process(tmp_path, monkeypatch, capsys):
    """A container's process limit makes fork fail (EAGAIN): `-j 2` then does the work itself,
    with the same outputs, instead of stopping."""
    from hipport.cli import main

    src = ROOT / "fixtures" / "port"

    def check(jobs: str) -> str:
        with pytest.raises(SystemExit):
            main(["check", str(src), "-j", jobs, "--no-cache", "--format", "json", "--exit-zero"])
        return capsys.readouterr().out

    with pytest.raises(SystemExit):
        main(["port", str(src), "-o", str(tmp_path / "serial"), "-j", "1", "--no-cache"])
    serial_check = check("1")

    def refuse():
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refuse)
    with pytest.raises(SystemExit):
        main(["port", str(src), "-o", str(tmp_path / "refused"), "-j", "2", "--no-cache"])
    assert [p.read_bytes() for p in sorted((tmp_path / "serial").rglob("*")) if p.is_file()] == \
        [p.read_bytes() for p in sorted((tmp_path / "refused").rglob("*")) if p.is_file()]
    assert check("2") == serial_check and '"findings"' in serial_check


def test_a_waiting_caller_runs_queued_tasks_itself():
    """The caller is one more worker: while it waits for a result it runs the oldest queued
    tasks (so `-j 2` forks one worker and no process sits idle); with no worker at all it runs
    every task."""
    with Pool(0) as alone:
        assert not alone.run_one()  # nothing queued
        assert list(alone.map(pid, list(range(5)))) == [os.getpid()] * 5
    with Pool(1) as pool:
        pids = list(pool.map(slow_pid, [0.05] * 8))
    assert os.getpid() in pids and len(set(pids)) == 2


def record_setup(tag):
    setups.append(tag)


def setups_so_far(_):
    return list(setups)


setups: list[str] = []


def test_the_caller_runs_the_initializer_before_its_first_task_only():
    setups.clear()
    with Pool(0, record_setup, ("loaded",)) as pool:
        assert [pool.result(pool.submit(setups_so_far, None)) for _ in range(3)] == [["loaded"]] * 3
    with Pool(0, refuse, ("tables are malformed",)) as pool:
        for future in [pool.submit(square, n) for n in range(3)]:
            with pytest.raises(ValueError, match="tables are malformed"):
                pool.result(future)


def test_the_switch_interval_is_short_while_the_pool_runs_and_restored_after():
    """A feeder thread waits for the GIL while the caller runs a task; by default that wait is
    5 ms, during which its worker has no task."""
    before = sys.getswitchinterval()
    with Pool(1):
        assert sys.getswitchinterval() < before
    assert sys.getswitchinterval() == before


def test_task_bounds_cover_the_jobs_in_order_and_shrink_toward_the_end():
    from hipport.parallel import SMALLEST, bounds

    for count, workers, largest in [(941, 2, 64), (10_476, 2, 64), (20, 2, 64), (300, 8, 64), (16, 4, 64)]:
        spans = bounds(count, workers, largest)
        assert [s for s, _ in spans] == [0] + [e for _, e in spans[:-1]] and spans[-1][1] == count
        sizes = [e - s for s, e in spans]
        assert max(sizes) <= max(largest, SMALLEST) and max(sizes) <= max(1, count // (workers * 8), SMALLEST)
        assert sizes[:-1] == sorted(sizes[:-1], reverse=True)  # never larger than the task before
        assert sizes[-1] <= SMALLEST  # the last tasks are the smallest
    sizes = [e - s for s, e in bounds(941, 2, 64)]
    assert sizes[0] == 58 and sum(1 for n in sizes if n <= SMALLEST) >= 4
    assert bounds(150, 1, 64) == [(0, 64), (64, 128), (128, 150)]  # one process: fixed batches


def stamped_nap(seconds):
    start = time.monotonic()
    time.sleep(seconds)
    return start, time.monotonic()


def test_a_worker_has_its_next_task_while_this_process_holds_the_gil():
    """While many tasks are queued, a worker's next task waits in its pipe as it runs one, so
    it goes straight on even when the thread that feeds it cannot run: this process is in a
    long C call (a sort here; in a port, a parse or a long pattern search) that keeps the GIL.
    Without that, no task could start during the sort."""
    with Pool(1) as pool:
        pool.submit(square, 2).result()  # the worker is up
        numbers = [(i * 7919) % 1_000_003 for i in range(1_500_000)]
        futures = [pool.submit(stamped_nap, 0.1) for _ in range(6)]
        deadline = time.monotonic() + 10
        while pool.queued() > 4 and time.monotonic() < deadline:
            time.sleep(0.001)  # until the feeder has taken the worker's first task and the next
        time.sleep(0.02)  # and written the next to the worker's pipe
        held = time.monotonic()
        numbers.sort()  # keeps the GIL throughout; the first task ends meanwhile
        held = (held, time.monotonic())
        spans = [f.result() for f in futures]
    assert held[1] - held[0] > 0.1, "the sort was too quick to tell"
    assert any(held[0] < started < held[1] for started, _ in spans)


class _RacedQueue:
    """A queue a feeder thread empties between shutdown's look and its take."""

    def empty(self):
        return False

    def get(self, block=True):
        if block:
            raise AssertionError("a blocking get: shutdown would wait for ever")
        from queue import Empty
        raise Empty

    def put(self, item):
        pass


def test_cancelling_shutdown_never_waits_on_an_emptied_queue():
    pool = Pool(0)
    pool._tasks = _RacedQueue()
    pool.shutdown(cancel_futures=True)  # returns


def interrupted_setup():
    setups.append("tried")
    if len(setups) == 1:
        raise KeyboardInterrupt


def test_ctrl_c_in_the_initializer_here_fails_the_task_and_the_next_task_sets_up_again():
    setups.clear()
    with Pool(0, interrupted_setup) as pool:
        first = pool.submit(setups_so_far, None)
        with pytest.raises(KeyboardInterrupt):
            pool.run_one()
        assert first.done()  # settled, not lost
        with pytest.raises(KeyboardInterrupt):
            first.result()
        assert pool.result(pool.submit(setups_so_far, None)) == ["tried", "tried"]


def test_big_tasks_and_answers_never_wait_in_a_pipe_behind_another():
    """A task waits in a worker's pipe only when half the pipe holds it: a bigger one written
    while the worker blocks writing a big answer would hang both. Run in a child process so
    that a hang fails the test instead of the suite."""
    code = ("from hipport.pool import Pool\n"
            "def echo(data):\n    return data * 2\n"
            "with Pool(1) as pool:\n"
            "    futures = [pool.submit(echo, bytes([n]) * 300_000) for n in range(8)]\n"
            "    assert [f.result() for f in futures] == [bytes([n]) * 600_000 for n in range(8)]\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr


def nap_then_die(seconds):
    time.sleep(seconds)
    os._exit(3)


def test_a_dying_worker_fails_the_task_waiting_in_its_pipe_too():
    with Pool(1) as pool:
        pool.submit(square, 2).result()  # the worker is up
        futures = [pool.submit(nap_then_die, 0.05)] + [pool.submit(square, n) for n in range(5)]
        for future in futures:
            assert future._event.wait(30), "a task of the dead worker was never answered"
            with pytest.raises(WorkerDied):
                future.result()


_REAL: dict = {}  # what a test replaced, for the stand-in to call (in a worker too)


def port_the_first_file_slowly(reads):
    if any(r.job.file.rel == "f0000.cu" for r in reads):
        time.sleep(1.0)
    return _REAL["port_reads"](reads)


def _ahead_of_a_slow_file(tmp_path, monkeypatch, read_ahead: int) -> int:
    """Files served (read, or answered by the cache) ahead of those yielded, at most, in a
    pooled port whose first file is slow, where the run reads the files it ports: half the
    tree changed since a run that filled the cache (the other half keeps the lookups worth
    it), 1,000 bytes a file."""
    from hipport import runner
    from hipport.config import load_settings

    tmp_path = tmp_path / str(read_ahead)
    src, cache = tmp_path / "tree", tmp_path / "cache"
    src.mkdir(parents=True)
    for n in range(2000):
        (src / f"f{n:04d}.cu").write_text(f"int v{n};\n".ljust(999, "/") + "\n")
    settings = load_settings([src], jobs=2)
    _, jobs = runner.plan([src], settings, runner.DRY_RUN, None, cache)
    assert sum(1 for _ in runner.run(jobs, 1)) == 2000  # fills the cache
    for n in range(0, 2000, 2):
        (src / f"f{n:04d}.cu").write_text(f"long v{n};\n".ljust(999, "/") + "\n")
    _REAL["port_reads"], real_serve, served = runner.port_reads, runner._serve, [0]

    def counted(batch, lookups):
        served[0] += len(batch)
        return real_serve(batch, lookups)

    monkeypatch.setattr(runner, "port_reads", port_the_first_file_slowly)
    monkeypatch.setattr(runner, "_serve", counted)
    monkeypatch.setattr(runner, "READ_AHEAD", read_ahead)
    _, jobs = runner.plan([src], settings, runner.DRY_RUN, None, cache)
    ahead = yielded = 0
    for _ in runner.run(jobs, 2):
        yielded += 1
        ahead = max(ahead, served[0] - yielded)
    assert yielded == 2000
    monkeypatch.undo()
    return ahead


def test_a_pooled_port_holds_a_bounded_number_of_bytes_read_ahead_of_a_slow_file(tmp_path, monkeypatch):
    """Batches done behind a slow one are not yielded before it; the run reads on only while
    the files it has read and not yet ported hold at most READ_AHEAD bytes, whatever the slow
    file's delay. Without the bound it reads the whole tree meanwhile."""
    from hipport.runner import BATCH

    bounded = _ahead_of_a_slow_file(tmp_path, monkeypatch, 50_000)
    assert bounded <= 2 * 50 + 2 * BATCH  # 50 changed files' bytes, each beside an unchanged one
    assert _ahead_of_a_slow_file(tmp_path, monkeypatch, 1 << 40) > 1000


class _NewestFirst:
    """A pool whose tasks run only in this process, the newest first: the order that leaves the
    oldest batch for last. It counts the tasks handed out and not yet asked for."""

    class Future:
        def __init__(self) -> None:
            self.value = None

        def done(self) -> bool:
            return self.value is not None

    def __init__(self) -> None:
        self.queued: list = []
        self.out = self.most = 0

    def submit(self, func, arg, weight=0):
        future = self.Future()
        self.queued.append((future, func, arg))
        self.out += 1
        self.most = max(self.most, self.out)
        return future

    def run_one(self) -> bool:
        if not self.queued:
            return False
        future, func, arg = self.queued.pop()
        future.value = func(arg)
        return True

    def result(self, future):
        while not future.done() and self.run_one():
            pass
        self.out -= 1
        return future.value

    def shutdown(self, cancel_futures=False) -> None:
        pass


def test_a_pooled_port_hands_out_a_bounded_number_of_batches_ahead_of_the_oldest(tmp_path, monkeypatch):
    """Batches are done out of order (the largest task first) and yielded in order: past AHEAD
    batches handed out, the run ports queued ones until the oldest is done, so the outcomes
    waiting for it stay bounded. A cold run reads nothing ahead, so READ_AHEAD does not bound
    it: without AHEAD, a tree of 51,000 small files held nearly all its records."""
    from hipport import parallel, runner
    from hipport.config import load_settings

    src = tmp_path / "tree"
    src.mkdir()
    for n in range(80):
        (src / f"f{n:02d}.cu").write_bytes(b"void f%d(void* p) { cudaFree(p); }\n" % n)
    pool = _NewestFirst()
    monkeypatch.setattr(parallel, "pool", lambda workers, settings: pool)
    monkeypatch.setattr(runner, "BATCH", 4)
    monkeypatch.setattr(runner, "AHEAD", 3)
    settings = load_settings([src], jobs=2)
    _, jobs = runner.plan([src], settings, runner.DRY_RUN, None, None)
    outcomes = list(runner.run(jobs, 2))
    assert [o.record["source"] for o in outcomes] == [f"f{n:02d}.cu" for n in range(80)]
    assert all(o.record["changed"] for o in outcomes)
    assert pool.out == 0 and 3 < pool.most <= 2 * 3 + 1  # 20 batches of 4: all of them, without the bound


def test_the_heaviest_queued_task_is_taken_first_and_the_stop_last():
    """A run's tasks go to whichever process is free, the largest first: in the order they were
    submitted, a few large headers near the end kept one process porting them after the other
    was done. Tasks of equal weight keep their order; shutdown's stop follows every task."""
    from hipport.pool import _Tasks

    tasks = _Tasks()
    tasks.put(None)
    for name, weight in [("a", 1), ("b", 5), ("c", 5), ("d", 3), ("e", 0)]:
        tasks.put((name,), weight)
    taken = [tasks.get() for _ in range(6)]
    assert taken == [("b",), ("c",), ("d",), ("a",), ("e",), None]
    ran = []
    with Pool(0) as pool:
        for weight in (2, 9, 4):
            pool.submit(ran.append, weight, weight)
        while pool.run_one():
            pass
    assert ran == [9, 4, 2]


def test_a_caller_waiting_for_a_result_runs_that_task_first():
    """The caller waits for results in their order while the workers take the heaviest tasks:
    its own wait runs the awaited task before any heavier one, so the oldest results come
    while the rest are ported (taken heaviest first here too, a run's first batch, with its
    small remainder, was done last, and every outcome waited for the end of the run)."""
    ran = []
    with Pool(0) as pool:
        light, heavy = pool.submit(ran.append, "light", 1), pool.submit(ran.append, "heavy", 9)
        pool.result(light)
        assert ran == ["light"] and not heavy.done() and pool.queued() == 1
        pool.result(heavy)
        assert ran == ["light", "heavy"] and pool.queued() == 0
        assert not pool.run_one()  # the light task, still in the queue, is not run again


def test_near_the_end_a_waiting_caller_takes_the_heaviest_task_again():
    """Out of turn only while the other queued tasks would keep every process busy as long:
    near the end a heavy task run out of turn kept one process porting after the other was
    done (flash-attention: 21 and 61 ms)."""
    from hipport.pool import _out_of_turn

    assert _out_of_turn(5, [5, 6, 4], processes=2)  # the others, 10, keep two processes busy
    assert not _out_of_turn(5, [5, 6, 3], processes=2)
    assert _out_of_turn(0, [0, 0], processes=8)  # unweighed tasks (Pool.map) go in order
    assert not _out_of_turn(7, [7], processes=1)  # the last one is the heaviest anyway


def test_a_feeder_counts_the_tasks_not_yet_claimed_not_the_queue():
    """Tasks run out of turn stay in the queue until popped: counted, they made a feeder send
    its worker one of the last tasks to wait in the pipe while this process had none."""
    from hipport.pool import Future, _Feeder, _Tasks

    tasks = _Tasks()
    for _ in range(3):  # run out of turn already: claimed, still queued
        tasks.put((Future(), square, 1), 1)
    feeder = _Feeder(tasks, lambda future: None, lambda: 0, 1, 0, None, None, 0, set())
    feeder.sent.append(Future())  # the worker has a task
    assert feeder._take() is None
    assert tasks.get(block=False) is not None  # nothing was taken from the queue


def append_line(args):
    path, line = args
    with open(path, "a") as f:
        f.write(f"{line}\n")
    return os.getpid()


def test_a_task_run_out_of_turn_runs_once_whoever_takes_the_queue_next(tmp_path):
    """A task the caller runs out of turn stays in the queue: neither a worker nor the caller
    runs it again, and shutdown does not cancel it."""
    log = tmp_path / "ran.txt"
    with Pool(2) as pool:
        futures = [pool.submit(append_line, (log, n), weight=n % 7) for n in range(300)]
        assert [pool.result(f) for f in futures[::-1]]  # the newest first: many out of turn
    lines = log.read_text().split()
    assert sorted(lines, key=int) == [str(n) for n in range(300)]


def test_a_pooled_batch_goes_out_in_tasks_of_bounded_bytes_weighed_by_them(tmp_path, monkeypatch):
    """A batch's files to port are split into tasks of at most TASK_BYTES (a larger file alone),
    sized by the bytes read, or by the stat of a file the porting reads itself."""
    from hipport import runner

    monkeypatch.setattr(runner, "TASK_BYTES", 100)
    sizes = [60, 30, 20, 150, 10, 90, 5]
    misses = []
    for i, size in enumerate(sizes):
        path = tmp_path / f"f{i}.cu"
        path.write_bytes(b"x" * size)
        file = runner.InputFile(str(path), path.name, "cuda")
        job = runner.Job(file, runner.DRY_RUN, None, None, frozenset())
        misses.append((i, runner._Read(job, b"x" * size if i % 2 else None, 0, b"", None)))
    parts = [([i for i, _ in part], weight) for part, weight in runner._parts(misses)]
    assert parts == [([0, 1], 90), ([2], 20), ([3], 150), ([4, 5], 100), ([6], 5)]


def test_a_task_is_claimable_as_soon_as_a_feeder_can_take_it(monkeypatch):
    """A feeder thread may take a task off the queue the moment it is put there: the task must
    already be known as queued, else the feeder took it for one run out of turn and dropped
    it, and its result was waited for forever (a hang seen once in CI)."""
    import threading

    from hipport import pool as pool_mod

    real_put = pool_mod._Tasks.put

    def put_then_yield(self, item, weight=0):
        real_put(self, item, weight)
        time.sleep(0.002)  # the feeders run here: between the put and whatever follows it

    monkeypatch.setattr(pool_mod._Tasks, "put", put_then_yield)
    results = []
    with Pool(2) as pool:
        def wait_all():  # the oldest last, when no task is queued to run out of turn meanwhile
            futures = [pool.submit(square, n, weight=1) for n in range(40)]
            results.extend(pool.result(f) for f in futures[::-1])

        waiter = threading.Thread(target=wait_all, daemon=True)  # a hang fails the test, not the run
        waiter.start()
        waiter.join(timeout=30)
        assert not waiter.is_alive(), "a submitted task was never run"
    assert results == [n * n for n in reversed(range(40))]
