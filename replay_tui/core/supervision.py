"""Supervising a process whose work may hang: a child that must beat or
be stopped (``check --jobs``, the CLI's own supervisor), and the beat it
sends. Nothing here knows what the work is: rules are guarded in
:mod:`replay_tui.reducers.calling.guard`, on top of this."""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable

#: How long the supervisor waits past the timeout for a silent child: the
#: watchdog inside it gets ``grace`` seconds to stop the rules itself; this
#: is for when it cannot even run.
SILENCE_MARGIN = 20.0


def _real_fd(stream: object) -> bool:
    try:
        stream.fileno()  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return False
    return True


#: In a supervised child: the pipe its processes beat on (see :func:`supervised`).
_heartbeat_fd: int | None = None


def _die_with_parent() -> None:
    """Linux: be killed when the parent process dies (even while this
    process holds the GIL), so nothing is left running behind a killed or
    interrupted command."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def worker_init() -> None:
    """Initializer of ``check``'s pool workers. Ctrl-C is for the process
    that started them (a worker's KeyboardInterrupt would print a
    traceback); they die with it; in a supervised command they beat too."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    if _heartbeat_fd is not None:
        threading.Thread(target=_beat, args=(_heartbeat_fd,), daemon=True).start()


def supervised(work: Callable[[], int], timeout: float) -> int:
    """``work()`` in a forked child, for a command running user rules.

    Rules stuck inside one C call (a catastrophic regex) hold the
    interpreter's lock: no thread in their process runs, the watchdog
    included. Each process of the command (the child, and its pool workers
    checking runs) beats on a pipe from a thread of its own; this parent,
    which runs no rules, kills a process silent for ``timeout`` plus
    :data:`SILENCE_MARGIN` seconds. A silent pool worker costs only its run
    ("the process checking it stopped"); a silent child ends the command:
    exit 2 with one line, never a hang. Without ``fork`` (or with stdout not
    a real file), ``work()`` runs here.
    """
    global _heartbeat_fd
    if not hasattr(os, "fork") or not (_real_fd(sys.stdout) and _real_fd(sys.stderr)):
        return work()
    sys.stdout.flush()
    sys.stderr.flush()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: beat while the interpreter runs, then do the work
        os.close(read_fd)
        _die_with_parent()
        _heartbeat_fd = write_fd
        code = 2
        try:
            threading.Thread(target=_beat, args=(write_fd,), daemon=True).start()
            code = work()
        except BaseException:  # REPLAY_TUI_DEBUG re-raises: show it before exiting
            traceback.print_exc()
            code = 1
        finally:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(code)
    os.close(write_fd)
    try:
        return _watch_child(pid, read_fd, timeout + SILENCE_MARGIN)
    finally:
        os.close(read_fd)


def _watch_child(pid: int, read_fd: int, limit: float) -> int:
    last: dict[int, float] = {pid: time.monotonic()}
    pending = b""
    try:
        while True:
            ready, _, _ = select.select([read_fd], [], [], 0.5)
            if ready:
                pending += os.read(read_fd, 65536)
                *beats, pending = pending.split(b"\n")
                now = time.monotonic()
                for beat in beats:
                    who, _, quiet = beat.partition(b" ")
                    if who.isdigit():  # "pid", or "pid seconds": quiet on purpose
                        last[int(who)] = now + (int(quiet) if quiet.isdigit() else 0)
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                code = os.waitstatus_to_exitcode(status)
                if code < 0:
                    name = signal.Signals(-code).name if -code in signal.valid_signals() else -code
                    sys.stderr.write(f"replay-tui: the command was stopped by signal {name}\n")
                    return 2
                return code
            now = time.monotonic()
            for beating, seen in list(last.items()):
                if now - seen <= limit:
                    continue
                del last[beating]
                if beating == pid:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    sys.stderr.write(
                        f"replay-tui: the rules stopped responding for {limit:.0f} s (stuck "
                        "inside one call that holds Python's lock, such as a runaway regex); "
                        "killed\n"
                    )
                    return 2
                if _parent_of(beating) == pid:  # a pool worker stuck in its run
                    with contextlib.suppress(OSError):
                        os.kill(beating, signal.SIGKILL)
    except KeyboardInterrupt:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGINT)
        for _ in range(30):
            if os.waitpid(pid, os.WNOHANG)[0]:
                return 130
            time.sleep(0.1)
        os.kill(pid, signal.SIGKILL)  # its workers die with it (PR_SET_PDEATHSIG)
        os.waitpid(pid, 0)
        return 130


def _parent_of(pid: int) -> int | None:
    """The parent pid of a live process (Linux /proc), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat_line = fh.read()
    except OSError:
        return None
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses
    fields = stat_line[stat_line.rfind(b")") + 2 :].split()
    return int(fields[1]) if len(fields) > 1 and fields[1].isdigit() else None


def expect_silence(seconds: float) -> None:
    """Say, in a supervised process, that it is about to hold the
    interpreter for up to ``seconds`` in code of ours (parsing a huge
    history), so that its silence is not taken for stuck rules."""
    if _heartbeat_fd is not None:
        with contextlib.suppress(OSError):
            os.write(_heartbeat_fd, f"{os.getpid()} {int(seconds) + 1}\n".encode())


def _beat(fd: int) -> None:
    """Write this process's pid every half second while its interpreter runs."""
    line = f"{os.getpid()}\n".encode()
    with contextlib.suppress(OSError):
        while True:
            os.write(fd, line)
            time.sleep(0.5)
