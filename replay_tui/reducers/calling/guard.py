"""Keeping user rules honest: events left as given, calls that return.

Rules loaded from a user's file or package are code we did not write. Two
of their bugs would otherwise go unseen or hang the tool:

- rules that change the event they are given (``event.payload["x"] = 1``):
  the next replay of the same line reads the file again and gets a
  different history. :class:`EventChanged` names the change.
- rules that never return. :class:`RulesWatch` records which thread is in
  which rules call since when; a watchdog (the CLI's thread, the app's
  timer) asks it for the oldest call and may :meth:`RulesWatch.interrupt`
  it: :class:`RulesStuck` is raised inside the rules' own frame, so the
  engine reports ``reducer_error`` at that seq like any other bug.

The built-in rules are ours and tested: they run unwatched, at full speed.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from replay_tui.core.safe_text import escape_controls

T = TypeVar("T")

#: Seconds a rules call may run before it is interrupted (``--rules-timeout``).
DEFAULT_TIMEOUT = 10.0


class EventChanged(Exception):
    """The rules modified the event they were given."""


class RulesStuck(BaseException):
    """Raised inside rules that ran past the timeout.

    A BaseException, so that rules which catch ``Exception`` cannot swallow it.
    """


@dataclass(slots=True)
class Running:
    """One rules call in progress (one made for every call of watched rules)."""

    thread_id: int
    seq: int | None
    started: float
    interrupted: bool = False
    uses_async: bool = False  # interrupted by an exception set from outside (not a signal)
    #: RulesStuck has been raised in it (once: a second one would land
    #: while the call is being left, and leave it recorded as running).
    delivered: bool = False

    def seconds(self) -> float:
        return time.monotonic() - self.started


def _set_async_exc(thread_id: int, exc: type[BaseException] | None) -> None:
    """CPython's documented way to raise in another thread (None: cancel)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), None if exc is None else ctypes.py_object(exc)
    )


_INTERRUPT_SIGNAL = getattr(signal, "SIGUSR1", None)


class RulesWatch:
    """Which rules calls are running, for a watchdog to judge."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[int, Running] = {}
        self.timeout: float | None = DEFAULT_TIMEOUT

    def call(self, seq: int | None, fn: Callable[..., T], *args: object) -> T:
        """``fn(*args)``, recorded as a rules call on event ``seq``."""
        me = threading.get_ident()
        run = Running(me, seq, time.monotonic())
        with self._lock:
            outer = self._running.get(me)
            self._running[me] = run
        try:
            result = fn(*args)
        except RulesStuck as exc:
            self._leave(me, outer, run)
            exc.args = (self._stuck_message(run),)
            raise
        except BaseException:
            self._leave(me, outer, run)
            raise
        self._leave(me, outer, run)
        if run.interrupted:  # returned just as it was interrupted: it was late all the same
            raise RulesStuck(self._stuck_message(run))
        return result

    def _leave(self, me: int, outer: Running | None, run: Running) -> None:
        """Forget the call; a stray interrupt landing meanwhile cannot stop it."""
        run.delivered = True  # from now on the signal handler raises nothing here
        while True:
            try:
                with self._lock:
                    if outer is None:
                        self._running.pop(me, None)
                    else:
                        self._running[me] = outer
                    if run.interrupted and run.uses_async:
                        _set_async_exc(me, None)  # drop it if still undelivered
                return
            except RulesStuck:
                continue  # it landed before the line above: leave again

    def oldest(self) -> Running | None:
        """The call that has been running longest, if any."""
        with self._lock:
            calls = list(self._running.values())
        return min(calls, key=lambda r: r.started) if calls else None

    def interrupt(self, run: Running) -> bool:
        """Raise :class:`RulesStuck` in ``run``'s thread, inside the rules.

        Python code is interrupted at its next bytecode; a blocking call in
        the main thread is woken by a signal (see :func:`install_signal`).
        Code stuck in C without returning to Python cannot be interrupted.
        """
        main = threading.main_thread().ident
        by_signal = run.thread_id == main and _INTERRUPT_SIGNAL is not None and _signal_installed
        with self._lock:
            if self._running.get(run.thread_id) is not run or run.interrupted or run.delivered:
                return False
            run.interrupted = True
            if not by_signal:  # one way in per call, never two
                run.uses_async = True
                _set_async_exc(run.thread_id, RulesStuck)
        if by_signal and _INTERRUPT_SIGNAL is not None:
            signal.pthread_kill(run.thread_id, _INTERRUPT_SIGNAL)
        return True

    def stuck_in_this_thread(self) -> Running | None:
        """For the signal handler: takes no lock (it may run inside :meth:`call`
        while this thread holds it); a dict lookup is atomic."""
        run = self._running.get(threading.get_ident())
        return run if run is not None and run.interrupted and not run.delivered else None

    def _stuck_message(self, run: Running) -> str:
        limit = f"{self.timeout:g} s" if self.timeout else "the time allowed"
        return f"the rules did not return within {limit} (stuck in a loop or a wait?)"


_signal_installed = False


def install_signal(watch: RulesWatch) -> None:
    """Let the main thread's blocking calls (``time.sleep``, reads) be woken
    when its rules call is interrupted. Call from the main thread."""
    global _signal_installed
    if _INTERRUPT_SIGNAL is None or threading.current_thread() is not threading.main_thread():
        return

    def handler(signum: int, frame: object) -> None:
        run = watch.stuck_in_this_thread()
        if run is not None:
            run.delivered = True
            raise RulesStuck(watch._stuck_message(run))

    signal.signal(_INTERRUPT_SIGNAL, handler)
    _signal_installed = True


class Watchdog(threading.Thread):
    """Interrupts rules calls that run past ``watch.timeout``; calls
    ``hopeless`` if one still has not returned ``grace`` seconds later."""

    def __init__(
        self,
        watch: RulesWatch,
        hopeless: Callable[[Running], None],
        *,
        grace: float = 5.0,
        every: float = 0.1,
    ) -> None:
        super().__init__(name="replay-tui rules watchdog", daemon=True)
        self.watch = watch
        self.hopeless = hopeless
        self.grace = grace
        self.every = every
        self._stop_event = threading.Event()

    def run(self) -> None:
        timeout = self.watch.timeout
        if not timeout:
            return
        while not self._stop_event.wait(self.every):
            run = self.watch.oldest()
            if run is None:
                continue
            seconds = run.seconds()
            if seconds > timeout and not run.interrupted:
                self.watch.interrupt(run)
            elif run.interrupted and seconds > timeout + self.grace:
                self.hopeless(run)
                return

    def stop(self) -> None:
        self._stop_event.set()


def stop_when_stuck(watch: RulesWatch, timeout: float, label: str) -> Watchdog | None:
    """For the command line: interrupt rules calls longer than ``timeout``
    seconds (0: never); rules that cannot be interrupted get one line on
    stderr and exit status 2, never a hang."""
    watch.timeout = timeout if timeout > 0 else None
    if watch.timeout is None:
        return None
    install_signal(watch)

    def hopeless(run: Running) -> None:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        sys.stderr.write(
            f"replay-tui: {escape_controls(label)}: the rules have run on seq {run.seq} for "
            f"{run.seconds():.0f} s and cannot be interrupted (stuck outside Python code?); "
            "stopped\n"
        )
        sys.stderr.flush()
        os._exit(2)

    dog = Watchdog(watch, hopeless)
    dog.start()
    return dog
