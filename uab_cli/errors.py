"""The two error types uab raises: user errors (exit 2) and backend failures (exit 1);
``Terminated``, SIGTERM or SIGHUP stopping uab as Ctrl-C does (exit 128 + the signal's
number); and ``require``, the import of an optional dependency that fails as a user error."""

from __future__ import annotations

import _thread
import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator


class UabError(Exception):
    """Bad input or a bad option: rendered as ``path:line: message``, exit code 2."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line

    def __str__(self) -> str:
        where = self.path if self.path is not None else ""
        if self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where}: {self.message}" if where else self.message


class BackendError(Exception):
    """A model backend failed after its retries (network, API, engine): exit code 1."""


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP (``kill``, a closed terminal): a ``KeyboardInterrupt``, so that what
    Ctrl-C cleans up (temporary files, worker processes, the run directory's lock) is cleaned
    up on these too, where the signal's default action would end the process on the spot."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


# The signals that stop uab as Ctrl-C does (SIGINT is Python's KeyboardInterrupt already).
TERMINATING = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


def _terminate(signum: int, frame) -> None:
    signal.signal(signum, signal.SIG_DFL)  # a second one ends the process at once, as it would have
    raise Terminated(signum)


def _taken_again(previous: Callable, resent: list) -> Callable:
    """A ``sys.unraisablehook``: a stop signal's exception (Ctrl-C's, a ``Terminated``) raised in a
    finalizer (``__del__``, a weakref callback: the garbage collector runs them at any line, so the
    signal's handler may run in one) is swallowed there, and uab went on as if no signal had come
    (a Ctrl-C while the local model loads); the signal is taken again, from another thread, so at
    a line of the main thread's once the hook has returned (taken in a finalizer again, it comes
    back here). ``resent`` gets a lock per signal sent again, released once it is sent
    (``terminated_on_signals`` waits for it). Any other exception goes to ``previous``."""

    def hook(unraisable) -> None:
        signum = stopped_by(unraisable.exc_value) if isinstance(unraisable.exc_value, KeyboardInterrupt) else None
        if signum is None or threading.current_thread() is not threading.main_thread():
            previous(unraisable)
            return
        if signum in TERMINATING and signal.getsignal(signum) == signal.SIG_DFL:  # ``_terminate`` left it so
            signal.signal(signum, _terminate)  # for a second signal: this is still the first
        sent = _thread.allocate_lock()
        sent.acquire()
        resent.append(sent)
        _thread.start_new_thread(_send, (signum, sent))  # not threading's: its start waits for the thread

    return hook


def _send(signum: int, sent) -> None:
    """Send ``signum`` to the main thread again (``_taken_again``), then release ``sent``."""
    try:
        _thread.interrupt_main(signum)
    finally:
        sent.release()


@contextlib.contextmanager
def terminated_on_signals() -> Iterator[None]:
    """``TERMINATING`` raise ``Terminated`` (in the main thread, where Python takes signals)
    inside the block; one that is ignored (``nohup``) stays ignored. A stop signal that a
    finalizer swallows is taken again (``_taken_again``)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    taken = [s for s in TERMINATING if signal.getsignal(s) == signal.SIG_DFL]
    for s in taken:
        signal.signal(s, _terminate)
    resent: list = []
    previous, sys.unraisablehook = sys.unraisablehook, _taken_again(sys.unraisablehook, resent)
    try:
        yield
    finally:
        try:  # a signal sent again near the block's end is taken here, by its handler, not lost after it
            for sent in resent:
                sent.acquire()
        finally:
            sys.unraisablehook = previous
            for s in taken:
                signal.signal(s, signal.SIG_DFL)


@contextlib.contextmanager
def signals_held() -> Iterator[Callable[[], None]]:
    """``hold()``: from then until the block ends, Ctrl-C, SIGTERM and SIGHUP wait (a few renames
    that make one output, seen whole or not at all), then stop uab as they would have, their
    exception marked as coming after the block's work (``after_work``); before it they stop the
    block as ever. In the main thread only (where Python takes signals); an ignored one stays ignored."""
    came: list[int] = []
    held: dict[int, object] = {}

    def hold() -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for s in (signal.SIGINT, *TERMINATING):
            if signal.getsignal(s) not in (signal.SIG_IGN, None):
                held[s] = signal.signal(s, lambda signum, frame: came.append(signum))

    try:
        yield hold
    except BaseException as exc:  # an error while one was held (a rename that failed): said, then exit as it stops
        if came:
            exc.uab_signal = came[0]  # ``stopped_by``: before, the error's exit 2 dropped it
        raise
    finally:
        for s, handler in held.items():
            signal.signal(s, handler)
    if came:
        try:
            signal.raise_signal(came[0])  # its handler, as it would have been taken
        except KeyboardInterrupt as exc:
            exc.uab_after_work = True
            raise


def after_work(exc: BaseException) -> bool:
    """Whether ``exc`` (Ctrl-C, SIGTERM, SIGHUP) came while ``signals_held`` held it: after the work."""
    return getattr(exc, "uab_after_work", False)


def stopped_by(exc: BaseException) -> int | None:
    """The signal that stops uab with ``exc``: Ctrl-C's (SIGINT), a ``Terminated``'s, or the one
    ``signals_held`` held when ``exc``, an error, came; None for none. uab exits 128 + its number."""
    if isinstance(exc, Terminated):
        return exc.signum
    if isinstance(exc, KeyboardInterrupt):
        return signal.SIGINT
    return getattr(exc, "uab_signal", None)


def stopped(signum: int) -> str:
    """How uab says a signal stopped it: ``interrupted`` (Ctrl-C), ``stopped by SIGTERM``."""
    return "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"


def stopped_before_work(exc: BaseException) -> int:
    """Say on stderr that ``exc`` (Ctrl-C, SIGTERM, SIGHUP) stopped uab before its command began
    (while it imported its modules, or parsed its command line); the exit code, 128 + the signal's number."""
    signum = stopped_by(exc)
    try:
        sys.stderr.write(f"{stopped(signum)}: nothing was written.\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed, or its reader gone: the exit code says it
        pass
    return 128 + signum


def column(data: bytes, at: int) -> int:
    """The column, in characters from 1, of byte ``at`` of ``data`` (a file's bytes, or one line's) in its line."""
    return len(data[data.rfind(b"\n", 0, at) + 1:at].decode("utf-8", "replace")) + 1


def not_utf8(data: bytes, at: int, path: str | None = None) -> UabError:
    """Every reader's one wording for a file that is not UTF-8 (a JSONL input, a CSV or JSON export,
    a settings file, a prompt template): ``data`` (the file's bytes, or one line's) is not from
    byte ``at`` on, named by its line, its column in characters and its value."""
    return UabError(f"not valid UTF-8 at column {column(data, at)} (byte 0x{data[at]:02x}): save the file as UTF-8",
                    path, data.count(b"\n", 0, at) + 1)


def one_line(exc: BaseException) -> str:
    """An exception's message on one line: a pydantic validation error (vLLM's config) by its
    reason (``Value error, …``), else the message's first non-empty line."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    for line in lines:
        if "Value error, " in line:
            return line.split("Value error, ", 1)[1].split(" [type=", 1)[0]
    return lines[0] if lines else type(exc).__name__


def require(module: str, extra: str, needed_for: str = "this backend"):
    """Import an optional dependency or raise a ``UabError`` naming the extra to install and
    what needs it (``needed_for``: an option that needs it beyond its backend's own extra)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise UabError(
            f"the {module!r} package is needed for {needed_for}: pip install 'uab-cli[{extra}]'"
        ) from exc
