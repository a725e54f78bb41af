"""Solver processes of the server: hints and the checked-deal filler run there, never on the event loop.

The pure-Python solver holds the GIL while it searches, so running it in a
thread of the server process makes every other player's move wait for GIL
hand-offs; the compiled one lets go of it but still takes a core
(bench/hint_latency.py measures both). A :class:`Workers`
is a small pool of ``spawn``-started processes that end with the server
(even a SIGKILLed one), optionally at a lower CPU priority so that
background work never competes with racers on an equal footing. A count of
0 means a thread of the server process instead (one process less, for a
machine with one core).

The workers never see SIGINT: a terminal's Ctrl-C reaches the whole process
group, and each worker printed a ``KeyboardInterrupt`` traceback (and sent one
back as the result of its call) while the server was stopping them anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import signal
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import resource_tracker
from typing import Any, Awaitable, Callable, Iterator, TypeVar

from .embedded import term_with_parent

T = TypeVar("T")


def _warm() -> None:
    """Nothing: a first call makes a worker import the solver before anyone waits for it."""


def _worker_start(parent: int, niceness: int) -> None:
    """A worker ends with the server, even a SIGKILLed one (its pipes would keep it waiting forever), and
    only so: it ignores SIGINT, which it was started with blocked (:func:`_sigint_blocked`); setting
    SIG_IGN drops one that came meanwhile."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    term_with_parent()
    if os.getppid() != parent:  # the server died before the request to the kernel was made
        os._exit(0)
    if niceness:
        os.nice(niceness)


@contextlib.contextmanager
def _sigint_blocked() -> Iterator[None]:
    """SIGINT blocked in this thread while it starts processes, which inherit the mask: one that comes
    while a worker imports, before :func:`_worker_start` ignores it, waits instead of raising there.
    This process gets its own as soon as the block ends. The standard library starts its resource
    tracker the same way, but unblocks SIGINT after, whatever the mask was: it is started first."""
    resource_tracker.ensure_running()
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


class Workers:
    """``count`` solver processes (a thread when ``count`` is 0), started on first use."""

    def __init__(self, count: int, niceness: int = 0) -> None:
        self.count = count
        self.niceness = niceness
        self._pool: Executor | None = None

    def _executor(self) -> Executor:
        if self._pool is None:
            # spawn: a fork of a process with an event loop and Redis sockets would share them.
            with _sigint_blocked():  # each submit starts a process while none is idle, up to count
                self._pool = ProcessPoolExecutor(self.count, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=_worker_start, initargs=(os.getpid(), self.niceness))
                for _ in range(self.count):
                    self._pool.submit(_warm)
        return self._pool

    def start(self) -> None:
        """Start the processes now, so the first call does not pay for their start."""
        if self.count > 0:
            self._executor()

    async def call(self, timeout: float, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` in a worker; ``asyncio.TimeoutError`` after ``timeout`` seconds.

        A worker that died (killed, out of memory) raises ``BrokenProcessPool``
        once; the next call starts a fresh pool.
        """
        call: Awaitable[T]
        if self.count <= 0:
            call = asyncio.to_thread(fn, *args)
        else:
            call = asyncio.get_running_loop().run_in_executor(self._executor(), fn, *args)
        try:
            return await asyncio.wait_for(call, timeout)
        except BrokenProcessPool:
            self.close()
            raise

    def close(self, kill: bool = False) -> None:
        """Stop the processes and wait for them: none may outlive the server.

        By default a running call is waited for (a hint: at most its budget).
        ``kill`` terminates the processes instead, for work that is worth
        nothing half done and whose CPU-time budget, in a low-priority
        process on a busy machine, could keep a stopping server waiting long.
        """
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if kill and isinstance(pool, ProcessPoolExecutor):
            processes = list(getattr(pool, "_processes", {}).values())  # no public way to stop a running call
            pool.shutdown(wait=False, cancel_futures=True)
            for proc in processes:
                proc.terminate()
            for proc in processes:
                proc.join(5)
        pool.shutdown(wait=True, cancel_futures=True)
