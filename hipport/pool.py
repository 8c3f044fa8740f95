"""A small process pool: forked workers fed over pipes, and the calling process as one more.

concurrent.futures' process pool costs 20 ms to import and start (multiprocessing, logging,
sockets, queues), a sixth of a `-j 2` port's serial start on a tree of 700 files. Here each
worker is a forked child fed over two pipes, and a thread in this process per worker hands it
one task at a time and takes back its result. A caller that waits for a result runs queued
tasks itself meanwhile (Pool.result, Pool.map): `-j N` forks N - 1 workers, and no process
sits idle while N cores port (an idle coordinator made every worker a third process on two
cores, and each worker loads the tables again).
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import count
from queue import Empty, PriorityQueue

from hipport import TYPE_CHECKING
from hipport.errors import HipportError

if TYPE_CHECKING:
    from typing import Any

_HEADER = 8  # bytes of a message's length, before the pickled message
_SWITCH_INTERVAL = 0.0005  # seconds a thread waits for the GIL before it asks for it


class WorkerDied(HipportError):
    """A worker process ended without answering (killed, or out of memory): the command stops
    with a clear error, not a traceback."""


class Cancelled(RuntimeError):
    """The task was dropped when the pool shut down before running it."""


class Future:
    """A task's result, once its worker has answered."""
    __slots__ = ("_event", "_value", "_error")

    def __init__(self) -> None:
        self._event = threading.Event()
        self._value: Any = None
        self._error: BaseException | None = None

    def done(self) -> bool:
        return self._event.is_set()

    def result(self) -> Any:
        self._event.wait()
        if self._error is not None:
            raise self._error
        return self._value

    def _settle(self, value: Any = None, error: BaseException | None = None) -> None:
        self._value, self._error = value, error
        self._event.set()


class _Tasks:
    """The queued tasks, the heaviest first: the processes take the largest tasks while many are
    queued and the small ones last, so they finish together (in submission order, a run's few
    large headers came last and kept one process porting them after the other was done). The
    stop (None) comes after every task."""

    def __init__(self) -> None:
        self._queue: PriorityQueue = PriorityQueue()
        self._order = count()  # ties in the order put; items themselves are never compared

    def put(self, item: tuple | None, weight: int = 0) -> None:
        self._queue.put((1, 0, 0, None) if item is None else (0, -weight, next(self._order), item))

    def get(self, block: bool = True) -> tuple | None:
        return self._queue.get(block)[3]


class Pool:
    """`workers` forked processes running module-level functions on picklable arguments."""

    def __init__(self, workers: int, initializer: Callable | None = None, initargs: tuple = ()) -> None:
        self._tasks = _Tasks()  # (future, func, arg), or None: stop
        self._queued: dict[Future, tuple] = {}  # future -> (func, arg, weight) until a thread claims it
        self._children: list[tuple[int, int, int]] = []  # (pid, task pipe, result pipe)
        self._initializer: Callable | None = initializer  # run here before this process's first task
        self._initargs = initargs
        self._broken: Exception | None = None  # the initializer's error, here
        for stream in (sys.stdout, sys.stderr):  # else a child holds a copy of what is buffered
            try:
                stream.flush()
            except (AttributeError, OSError, ValueError):
                pass  # none, closed, or a reader gone: nothing buffered to copy, or nothing to lose
        try:
            for _ in range(workers):
                self._fork(initializer, initargs)
        except BaseException:  # a fork failed: end the workers forked so far
            for _, to_child, from_child in self._children:
                os.close(to_child)
                os.close(from_child)
            self._wait()
            raise
        self._alive = {pid for pid, _, _ in self._children}  # the workers not known dead
        # Threads only after every fork: a fork copies no thread, but would copy their locks.
        self._threads = [threading.Thread(target=self._feed, args=child, daemon=True)
                         for child in self._children]
        for t in self._threads:
            t.start()
        # A feeder thread that has a worker's answer waits for the GIL while this process runs
        # a task, and its worker for the next task meanwhile: by default up to 5 ms a task.
        self._interval = sys.getswitchinterval()
        sys.setswitchinterval(min(self._interval, _SWITCH_INTERVAL))

    def _fork(self, initializer: Callable | None, initargs: tuple) -> None:
        to_child, from_parent = _pipe()
        to_parent, from_child = _pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            inherited = [to_child, from_child] + [fd for _, *fds in self._children for fd in fds]
            _child(from_parent, to_parent, inherited, initializer, initargs)
        os.close(from_parent)
        os.close(to_parent)
        self._children.append((pid, to_child, from_child))

    def submit(self, func: Callable, arg: Any, weight: int = 0) -> Future:
        """Queue `func(arg)`; the heaviest queued task (by `weight`, e.g. its bytes) is taken
        first, tasks of equal weight in the order submitted."""
        future = Future()
        # Known as queued before it is: a feeder thread may take it off the queue at once, and
        # one it cannot claim is a task run out of turn, which it drops.
        self._queued[future] = (func, arg, weight)
        self._tasks.put((future, func, arg), weight)
        return future

    def map(self, func: Callable, jobs: Sequence, bounds: Iterable[tuple[int, int]] | None = None) -> Iterator:
        """`func(job)` for every job, in job order; a task per (start, stop) of `bounds`, which
        cover the jobs in order (default: a task per job). This process runs queued tasks while
        it waits (see result)."""
        if bounds is None:
            bounds = ((i, i + 1) for i in range(len(jobs)))
        futures = [self.submit(_each, (func, jobs[start:stop])) for start, stop in bounds]
        for future in futures:
            yield from self.result(future)

    def queued(self) -> int:
        """Tasks submitted that no process has taken yet."""
        return len(self._queued)

    def result(self, future: Future) -> Any:
        """The future's result; until it is there, this process runs tasks itself, as one more
        worker: the future's own first, when no worker has taken it yet and the other queued
        tasks would keep every process busy as long (the caller, waiting for its results in
        order, then has the oldest in turn while the workers take the heaviest; taken
        heaviest first here too, the oldest were often the last done, and every result waited
        for the end of the run; near the end, the heaviest first again, so that the processes
        finish together), then the next queued ones."""
        task = self._queued.get(future)
        # list() copies the weights in one step: feeder threads claim tasks meanwhile
        if task is not None and _out_of_turn(task[2], [w for _, _, w in list(self._queued.values())],
                                             len(self._children) + 1):
            task = self._claim(future)
            if task is not None:
                self._run(future, task[0], task[1])
        while not future.done() and self.run_one():
            pass
        return future.result()

    def run_one(self) -> bool:
        """Run the next queued task (the heaviest: see _Tasks) in this process, the initializer
        first the first time; False when no task is queued."""
        while True:
            try:
                item = self._tasks.get(block=False)
            except Empty:
                return False
            if item is None:  # shutting down: the stop is a feeder thread's
                self._tasks.put(None)
                return False
            future, func, arg = item
            if self._claim(future) is not None:  # else run already, out of turn (see result)
                self._run(future, func, arg)
                return True

    def _claim(self, future: Future) -> tuple | None:
        """The task's function, argument and weight for the one thread that asks first
        (dict.pop is one step under the GIL); None to any other: a task run out of turn stays
        queued."""
        return self._queued.pop(future, None)

    def _run(self, future: Future, func: Callable, arg: Any) -> None:
        """Run a task taken here, the initializer first the first time."""
        try:
            if self._initializer is not None:
                self._broken = _initialize(self._initializer, self._initargs)
                self._initializer = None  # after: cut short by Ctrl-C, it runs again next time
            if self._broken is not None:
                raise self._broken
            value = func(arg)
        except BaseException as exc:
            future._settle(error=exc)
            if not isinstance(exc, Exception):
                raise  # Ctrl-C stops this process's run, as without a pool
        else:
            future._settle(value)

    def shutdown(self, cancel_futures: bool = False) -> None:
        """Stop the workers after the tasks they hold: the one each runs and the one that may
        wait in its pipe (see _feed); and, unless cancelled, after those queued."""
        if cancel_futures:
            while True:  # not empty() then get(): a feeder thread may take the last one between
                try:
                    item = self._tasks.get(block=False)
                except Empty:
                    break
                if item is not None and self._claim(item[0]) is not None:
                    item[0]._settle(error=Cancelled("the pool shut down first"))
        for _ in self._threads:
            self._tasks.put(None)
        for t in self._threads:
            t.join()  # each closes its worker's pipes: the worker ends
        self._threads = []
        self._wait()
        sys.setswitchinterval(self._interval)

    def _wait(self) -> None:
        for pid, _, _ in self._children:
            os.waitpid(pid, 0)
        self._children = []

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown(cancel_futures=exc[0] is not None)

    def _feed(self, pid: int, to_child: int, from_child: int) -> None:
        """One worker's tasks until told to stop; then its pipes close, which ends it."""
        with _closing(open(to_child, "wb")) as out, open(from_child, "rb") as back:
            _Feeder(self._tasks, self._claim, self.queued, len(self._children), pid, out, back,
                    _room(to_child), self._alive).run()


class _Feeder:
    """A feeder thread's side of one worker. While many tasks are queued, the worker's next one
    waits in its pipe as it runs one (if small, see _room): else it waited for this thread,
    which gets the GIL from a process that is porting only every switch interval or after a
    long C call, 1-2 ms a task. After the worker dies, every task it has fails; the tasks
    queued are left to the workers alive, and the last worker's thread fails those it takes
    once it too is dead (a dead worker's thread took them at once, and could starve a live
    worker of every task)."""

    def __init__(self, tasks: _Tasks, claim: Callable[[Future], tuple | None], queued: Callable[[], int],
                 workers: int, pid: int, out, back, room: int, alive: set[int]) -> None:
        self.tasks, self.claim, self.queued, self.workers, self.pid = tasks, claim, queued, workers, pid
        self.out, self.back, self.room = out, back, room
        self.alive = alive  # the pids of the pool's workers not known dead, shared by its threads
        self.sent: deque[Future] = deque()  # the tasks written to the worker, oldest first
        self.taken: tuple[Future, bytes] | None = None  # a task too big to wait in the pipe, held
        self.stop = False  # the pool is shutting down, or this worker is dead and another lives
        self.dead: WorkerDied | None = None

    def run(self) -> None:
        while True:
            while not self.stop and len(self.sent) < 2 and self._send():
                pass
            if self.sent:
                self._answer(self.sent.popleft())
            elif self.stop:
                return

    def _send(self) -> bool:
        """Write the worker one more task; False when none goes now."""
        if self.taken is None:
            self.taken = self._take()
            if self.taken is None:
                return False
        future, message = self.taken
        if self.sent and len(message) > self.room:
            return False  # written once the worker has answered: see _room
        self.taken = None
        try:
            _write(self.out, message)
        except OSError as exc:
            self._mark_dead(exc)
            future._settle(error=self.dead)
        else:
            self.sent.append(future)
        return True

    def _take(self) -> tuple[Future, bytes] | None:
        """The next queued task, pickled; None when none is to be taken now: the worker has one
        and few are queued (each goes to whichever process is free first), none is queued, the
        pool stops, or the worker is dead and another lives. Waits for one while the worker has
        none."""
        while True:
            if self.dead is not None and self.alive:  # the live workers take the tasks
                self.stop = True
                return None
            if self.sent and self.queued() <= self.workers:  # not the queue's size: tasks run
                return None  # out of turn stay in it until popped
            try:
                item = self.tasks.get(block=not self.sent)
            except Empty:
                return None
            if item is None:
                self.stop = True
                return None
            future, func, arg = item
            if self.claim(future) is None:
                continue  # the pool's process ran it out of turn (Pool.result)
            if self.dead is not None:
                future._settle(error=self.dead)
                continue
            try:
                return future, _dumps((func, arg))
            except Exception as exc:  # noqa: BLE001 - the caller's to raise, from result()
                future._settle(error=exc)

    def _mark_dead(self, exc: BaseException) -> None:
        self.dead = _died(self.pid, exc)
        self.alive.discard(self.pid)

    def _answer(self, future: Future) -> None:
        """Settle the oldest task written with the worker's answer."""
        try:
            answer = _receive(self.back)
        except (OSError, EOFError) as exc:
            self._mark_dead(exc)
            for lost in (future, *self.sent):
                lost._settle(error=self.dead)
            self.sent.clear()
            return
        try:
            ok, value = pickle.loads(answer)
        except Exception as exc:  # noqa: BLE001 - the stream is whole: only this task fails
            future._settle(error=exc)
            return
        if ok:
            future._settle(value)
        else:
            future._settle(error=value)


class _closing:
    """A worker's task pipe, closed at the end without raising: after the worker died, closing
    flushes what was buffered for it into a broken pipe (its tasks have failed already)."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        return self.stream

    def __exit__(self, *exc: object) -> None:
        try:
            self.stream.close()  # closes the descriptor even when the flush fails
        except OSError:
            pass


def _died(pid: int, exc: BaseException) -> WorkerDied:
    return WorkerDied(f"worker process {pid} ended without answering ({exc}): was it killed, "
                      "or out of memory? `-j 1` ports in this process")


def _out_of_turn(weight: int, queued: list[int], processes: int) -> bool:
    """Whether a task of `weight`, one of those `queued` (their weights), may run out of turn:
    the others weigh as much as it on each of the `processes`, who are then kept busy while
    it runs."""
    return weight * processes <= sum(queued) - weight


def _room(fd: int) -> int:
    """The largest task that may wait in a worker's pipe while the worker runs another: half
    the pipe's buffer, so that writing it never blocks once the worker has read its current
    task (a blocked write here while the worker blocks writing a long answer would hang
    both). 0 where the buffer's size is unknown: then every task waits for the answer."""
    try:
        import fcntl  # noqa: PLC0415 - POSIX only; F_GETPIPE_SZ is Linux's

        return fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ) // 2
    except (ImportError, AttributeError, OSError):
        return 0


def _pipe() -> tuple[int, int]:
    """(write end, read end): the argument order of the pool's code."""
    r, w = os.pipe()
    return w, r


def _dumps(message: Any) -> bytes:
    """A message: its length, then its pickle."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return len(data).to_bytes(_HEADER, "little") + data


def _write(stream, message: bytes) -> None:
    stream.write(message)  # a buffered stream writes it all, however the pipe takes it
    stream.flush()


def _receive(stream) -> bytes:
    """The next message's pickle, read whole."""
    header = stream.read(_HEADER)
    if len(header) < _HEADER:
        raise EOFError("no answer" if not header else "a cut message")
    size = int.from_bytes(header, "little")
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("a cut message")
    return data


def _child(from_parent: int, to_parent: int, inherited: list[int], initializer: Callable | None,
           initargs: tuple) -> None:
    """A worker's life: run tasks until the parent closes the task pipe. Ctrl-C reaches the
    whole process group: a worker ignores it and finishes its task (its outputs are written
    whole), and the parent, which stops, closes the pipe. `inherited`: the parent's ends of
    this worker's pipes and of the workers forked before, closed here (a worker holding
    another's task pipe open would keep it from ever ending)."""
    code = 1
    try:
        for fd in inherited:
            os.close(fd)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        broken = _initialize(initializer, initargs) if initializer is not None else None
        with open(from_parent, "rb") as tasks, open(to_parent, "wb") as answers:
            while True:
                try:
                    task = _receive(tasks)
                except EOFError:
                    break
                try:
                    if broken is not None:
                        raise broken
                    func, arg = pickle.loads(task)
                    answer = (True, func(arg))
                except Exception as exc:  # noqa: BLE001 - the parent raises it from Future.result
                    answer = (False, _portable(exc))
                try:
                    message = _dumps(answer)
                except Exception as exc:  # noqa: BLE001 - a result that cannot cross
                    message = _dumps((False, _portable(exc)))
                _write(answers, message)
        code = 0
    finally:
        os._exit(code)  # no atexit handler, no flush of the parent's buffers copied by the fork


def _initialize(initializer: Callable, initargs: tuple) -> Exception | None:
    """Run a process's initializer; its exception (e.g. malformed tables), with which every
    task of that process then fails, as the caller's error to report; else None."""
    try:
        initializer(*initargs)
    except Exception as exc:  # noqa: BLE001 - raised again from each task's result
        return exc
    return None


def _portable(exc: Exception) -> Exception:
    """The exception with the worker's traceback as a note, or a RuntimeError carrying that
    text when the exception cannot be pickled."""
    import traceback  # noqa: PLC0415 - only for a task that failed

    text = "".join(traceback.format_exception(exc))
    try:
        if not any(n.startswith("in a worker process") for n in getattr(exc, "__notes__", ())):
            exc.add_note(f"in a worker process:\n{text}")  # once: an initializer's error recurs
        pickle.dumps(exc)
        return exc
    except Exception:  # noqa: BLE001 - whatever the pickling raises, the text still travels
        return RuntimeError(f"in a worker process:\n{text}")


def _each(task: tuple[Callable, Sequence]) -> list:
    func, jobs = task
    return [func(job) for job in jobs]
