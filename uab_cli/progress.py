"""Progress of the sampling stages on stderr: a live bar on a terminal; plain lines at a steady
pace otherwise (CI jobs, ``nohup``, log files, a terminal with ``TERM=dumb``), every
``$UAB_PROGRESS_INTERVAL`` seconds (10).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from .errors import UabError

INTERVAL_ENV = "UAB_PROGRESS_INTERVAL"
DEFAULT_INTERVAL = 10.0
_MAX_WAIT = 3600.0  # the ticker's longest sleep: a longer one (inf) overflows, and it looks again when it wakes


def interval_from_env() -> float:
    """Seconds between plain progress lines: ``$UAB_PROGRESS_INTERVAL`` or 10 (0: every sample; ``inf``:
    none but each stage's last)."""
    text = os.environ.get(INTERVAL_ENV, "").strip()
    if not text:
        return DEFAULT_INTERVAL
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:  # also rejects nan
        raise UabError(f"{INTERVAL_ENV} must be a number of seconds >= 0, got {text!r}")
    return value


class StageProgress:
    """Counts samples and tokens per stage and shows them; silent when ``quiet``.

    On a terminal it draws a rich bar. Elsewhere (a dumb terminal too: ``TERM=dumb``, where rich
    draws the bar once, when it stops) it prints ``stage: done/total samples, tokens,
    tok/s, ETA`` lines, at most one per ``interval`` seconds as samples arrive and, from a
    background ticker, also while none do; a stage's last line says it is done. ``clock`` and
    ``ticker`` exist for tests.
    """

    def __init__(
        self,
        console: Console,
        quiet: bool,
        interval: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        ticker: bool = True,
    ):
        self.console, self.clock = console, clock
        self.mode = None if quiet else "bar" if console.is_interactive else "lines"
        self.interval = interval_from_env() if interval is None else interval
        self.bar: Progress | None = None
        if self.mode == "bar":
            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[tokens]} tok, {task.fields[rate]} tok/s"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=console,
            )
        self.task = None
        self.name, self.total, self.done, self.tokens, self.shown = "", 0, 0, 0, -1
        self.said_done = False  # the stage's "done" line is out: samples beyond its total come at the interval
        self.started = self.last = 0.0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        if self.mode == "lines" and ticker and self.interval > 0:
            self._thread = threading.Thread(target=self._tick, name="uab-progress", daemon=True)

    def __enter__(self):
        if self.bar:
            self.bar.start()
        if self._thread:
            self._thread.start()
        return self

    def __exit__(self, *exc):
        if self._thread:
            self._stop.set()
            self._thread.join()
        if self.bar:
            self.bar.stop()
        self._finish_stage()

    def stage(self, name: str, total: int) -> None:
        """A new stage begins with ``total`` samples to draw."""
        self._finish_stage()
        with self._lock:
            self.name, self.total, self.done, self.tokens, self.shown = name, total, 0, 0, -1
            self.said_done = False
            self.started = self.last = self.clock()
        self.task = None
        if self.bar and total:  # nothing to draw (every sample reused): no bar, no line
            self.task = self.bar.add_task(name, total=total, tokens=0, rate="-")

    def sample(self, rec: dict, sample: dict) -> None:
        """One sample arrived (the pipeline's ``on_sample`` callback)."""
        with self._lock:
            self.done += 1
            self.tokens += sample.get("n_tokens") or 0
            self.total = max(self.total, self.done)  # a reply drawn again (it lost its logprobs): one more drawn
        if self.bar and self.task is not None:
            elapsed = self.bar.tasks[self.task].elapsed or 0.0
            rate = f"{self.tokens / elapsed:.0f}" if elapsed > 0 else "-"
            self.bar.update(self.task, advance=1, total=self.total, tokens=self.tokens, rate=rate)
        elif self.mode == "lines":
            self._maybe_print()

    def line(self, now: float) -> str:
        """The plain progress line for the current stage at time ``now``."""
        elapsed = now - self.started
        rate = f"{self.tokens / elapsed:.1f}" if elapsed > 0 else "-"
        if self.done >= self.total:
            return f"{self.name}: {self.done}/{self.total} samples done in {_clock(elapsed)}, {self.tokens} tok, {rate} tok/s"
        eta = _clock((self.total - self.done) * elapsed / self.done) if self.done else "-"
        return (
            f"{self.name}: {self.done}/{self.total} samples, {self.tokens} tok, {rate} tok/s, "
            f"elapsed {_clock(elapsed)}, ETA {eta}"
        )

    def _maybe_print(self) -> None:
        with self._lock:
            now = self.clock()
            finished = self.done >= self.total
            # nothing to draw (every sample reused): no line, also when the ticker looks in; a
            # total is a floor (``adaptive`` may draw more than it foresaw, Phase 1 a reply
            # again): samples after the "done" line still count, at the interval and at the end
            if not self.name or not self.total or (finished and self.done == self.shown) \
                    or (now - self.last < self.interval and not (finished and not self.said_done)):
                return
            self.last, self.shown, self.said_done = now, self.done, self.said_done or finished
            text = self.line(now)
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def _finish_stage(self) -> None:
        with self._lock:
            changed = self.mode == "lines" and self.name and self.total and self.done != self.shown
            text = self.line(self.clock()) if changed else None
            self.name = ""
        if text:
            self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def _tick(self) -> None:
        """Print on time while samples are slow to arrive."""
        while not self._stop.wait(min(_MAX_WAIT, max(0.1, self.last + self.interval - self.clock()))):
            self._maybe_print()


def _clock(seconds: float) -> str:
    """h:mm:ss, or m:ss under an hour."""
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"
