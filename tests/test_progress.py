"""Progress on stderr when it is not a terminal: paced plain lines (CI, nohup, log files)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from conftest import FakeClock
from rich.console import Console

from uab_cli.errors import UabError
from uab_cli.progress import StageProgress, interval_from_env

ROOT = Path(__file__).resolve().parent.parent


def progress(quiet=False, interval=10.0):
    out, clock = io.StringIO(), FakeClock()
    console = Console(file=out, force_terminal=False, width=200)
    return StageProgress(console, quiet, interval=interval, clock=clock, ticker=False), out, clock


def test_plain_lines_come_at_the_interval_and_say_stage_count_rate_and_eta():
    bar, out, clock = progress(interval=10.0)
    with bar:
        bar.stage("phase1", 4)
        for t in (3.0, 9.0, 12.0, 15.0):  # one line by t=12: 3 samples, 30 tokens in 12 s
            clock.now = t
            bar.sample({}, {"n_tokens": 10})
            if t == 12.0:
                assert out.getvalue().splitlines() == [
                    "phase1: 3/4 samples, 30 tok, 2.5 tok/s, elapsed 0:12, ETA 0:04"
                ]
    lines = out.getvalue().splitlines()
    assert lines[1:] == ["phase1: 4/4 samples done in 0:15, 40 tok, 2.7 tok/s"]


def test_a_new_stage_starts_its_own_count():
    bar, out, clock = progress(interval=0.0)
    with bar:
        bar.stage("phase1", 1)
        bar.sample({}, {"n_tokens": 5})
        clock.now = 2.0
        bar.stage("phase2", 2)
        clock.now = 3.0
        bar.sample({}, {"n_tokens": 7})
    assert out.getvalue().splitlines() == [
        "phase1: 1/1 samples done in 0:00, 5 tok, - tok/s",
        "phase2: 1/2 samples, 7 tok, 7.0 tok/s, elapsed 0:01, ETA 0:01",
    ]


def test_quiet_prints_nothing():
    bar, out, _ = progress(quiet=True, interval=0.0)
    with bar:
        bar.stage("phase1", 2)
        bar.sample({}, {"n_tokens": 3})
    assert out.getvalue() == ""


def test_interval_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("UAB_PROGRESS_INTERVAL", "2.5")
    assert interval_from_env() == 2.5
    monkeypatch.delenv("UAB_PROGRESS_INTERVAL")
    assert interval_from_env() == 10.0
    monkeypatch.setenv("UAB_PROGRESS_INTERVAL", "soon")
    with pytest.raises(UabError, match="UAB_PROGRESS_INTERVAL"):
        interval_from_env()


def test_a_bad_interval_is_refused_under_q_too(tmp_path, monkeypatch):
    """Checked whether or not progress is shown (``-q``, a terminal's bar): one line naming the
    variable, before anything is drawn, so a typo set for every CI job is found the first time."""
    from conftest import arithmetic, cli, write_jsonl

    monkeypatch.setenv("UAB_PROGRESS_INTERVAL", "soon")
    q, out = write_jsonl(tmp_path / "q.jsonl", arithmetic(2)), tmp_path / "p1.jsonl"
    result = cli(["phase1", q, "--backend", "scripted", "-q", "-o", str(out)])
    assert result.exit_code == 2 and not out.exists()
    assert result.stderr == "error: UAB_PROGRESS_INTERVAL must be a number of seconds >= 0, got 'soon'\n"


def _run(tmp_path, *extra):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "UAB_PROGRESS_INTERVAL": "0"}
    log = tmp_path / "stderr.log"
    with open(log, "w") as fh:
        subprocess.run(
            [sys.executable, "-m", "uab_cli.cli", "run", str(ROOT / "sample_data" / "quickstart.jsonl"),
             "--budget", "2", "--backend", "scripted", "--out", str(tmp_path / "run"), *extra],
            stdout=subprocess.DEVNULL, stderr=fh, env=env, check=True,
        )
    return log.read_text().splitlines()


def test_a_run_logged_to_a_file_shows_progress_lines(tmp_path):
    lines = _run(tmp_path)
    phase1 = [line for line in lines if line.startswith("phase1: ")]
    assert phase1[0].startswith("phase1: 1/6 samples, ") and " tok/s, " in phase1[0] and "ETA" in phase1[0]
    assert phase1[-1].startswith("phase1: 6/6 samples done in ")
    assert any(line.startswith("phase2: 6/6 samples done in ") for line in lines)


def test_a_quiet_run_logged_to_a_file_is_silent(tmp_path):
    assert _run(tmp_path, "-q") == []


def test_a_stage_with_nothing_to_draw_prints_no_line():
    """A rerun that reuses every sample: no 'phase1: 0/0 samples done' line."""
    bar, out, clock = progress(interval=0.0)
    with bar:
        bar.stage("phase1", 0)
        clock.now = 1.0
        bar.stage("phase2", 1)
        bar.sample({}, {"n_tokens": 3})
    assert out.getvalue().splitlines() == ["phase2: 1/1 samples done in 0:00, 3 tok, - tok/s"]


def test_the_ticker_prints_no_line_for_a_stage_with_nothing_to_draw():
    """A rerun's phase 2 with every sample reused: the background ticker, looking in while the
    stage was current, printed 'phase2: 0/0 samples done in 0:00, 0 tok, 0.0 tok/s'."""
    bar, out, clock = progress(interval=10.0)
    with bar:
        bar.stage("phase2", 0)
        clock.now = 1.0
        bar._maybe_print()  # what the ticker thread does when it wakes
    assert out.getvalue() == ""


def test_a_rerun_of_rounds_counts_only_the_phase2_samples_it_draws(tmp_path):
    """``adaptive`` allocates as it draws, so Phase 2's count is set before its rounds: it
    leaves out what the checkpoint holds (a vote-rule rerun printed 'phase2: 0/12 samples')."""
    args = ("--allocator", "adaptive", "--budget", "4")  # the later --budget wins over _run's
    first = _run(tmp_path, *args)
    assert any(line.startswith("phase2: 12/12 samples done in ") for line in first)
    again = _run(tmp_path, *args, "--vote-rule", "confident-ties")
    assert not [line for line in again if line.startswith("phase2:")]
    grown = _run(tmp_path, "--allocator", "adaptive", "--budget", "6")
    assert any(line.startswith("phase2: 12/12 samples done in ") for line in grown)


def test_a_sample_drawn_again_grows_the_bars_total_rather_than_overrunning_it():
    """Phase 1 draws again a reply that lost its logprobs: the bar showed 13/12."""
    console = Console(file=io.StringIO(), force_terminal=True, width=200)
    bar = StageProgress(console, False, interval=10.0, clock=FakeClock(), ticker=False)
    with bar:
        bar.stage("phase1", 3)
        for _ in range(4):
            bar.sample({}, {"n_tokens": 1})
        task = bar.bar.tasks[bar.task]
        assert (task.completed, task.total) == (4, 4)


def test_a_dumb_terminal_gets_plain_lines_not_a_bar_it_never_redraws():
    """On a terminal with ``TERM=dumb`` (Emacs' shell, a CI runner's pty) rich draws the bar
    once, when it stops: a stage showed nothing until it was done. It gets the paced lines."""
    out, clock = io.StringIO(), FakeClock()
    console = Console(file=out, force_terminal=True, width=200, _environ={"TERM": "dumb"})
    bar = StageProgress(console, False, interval=10.0, clock=clock, ticker=False)
    with bar:
        bar.stage("phase1", 4)
        for t in (3.0, 12.0):
            clock.now = t
            bar.sample({}, {"n_tokens": 10})
        assert out.getvalue().splitlines() == ["phase1: 2/4 samples, 20 tok, 1.7 tok/s, elapsed 0:12, ETA 0:12"]


def test_samples_beyond_a_stages_total_still_count_in_its_lines():
    """A stage's total is a floor (``adaptive`` on a checkpoint it reuses only part of, a Phase-1
    reply drawn again): the lines stopped at 'phase2: 2/2 samples done' while more were drawn."""
    bar, out, clock = progress(interval=10.0)
    with bar:
        bar.stage("phase2", 2)
        for t in (1.0, 2.0, 3.0, 4.0):
            clock.now = t
            bar.sample({}, {"n_tokens": 10})
        bar._maybe_print()  # the ticker, with nothing new since the last line: no line
    assert out.getvalue().splitlines() == ["phase2: 2/2 samples done in 0:02, 20 tok, 10.0 tok/s",
                                           "phase2: 4/4 samples done in 0:04, 40 tok, 10.0 tok/s"]


def test_adaptive_reusing_part_of_a_checkpoint_shows_every_phase2_sample_it_draws(tmp_path):
    """``length`` at N=6 leaves samples that ``adaptive`` at N=8 does not all reuse: Phase 2's
    count, set before the rounds, falls short of what they draw."""
    _run(tmp_path, "-K", "2", "--allocator", "length", "--budget", "6")
    lines = _run(tmp_path, "--allocator", "adaptive", "--budget", "8")
    drawn = orjson.loads((tmp_path / "run" / "summary.json").read_bytes())["stages"]["phase2"]["drawn"]
    assert [line for line in lines if line.startswith("phase2: ")][-1].startswith(
        f"phase2: {drawn['samples']}/{drawn['samples']} samples done in ")
    assert f" {drawn['completion_tokens']} tok, " in [line for line in lines if line.startswith("phase2: ")][-1]


@pytest.mark.parametrize("interval", [float("inf"), 1e300])
def test_an_endless_interval_prints_only_each_stages_last_line_and_the_ticker_sleeps_as_a_lock_can(interval):
    """``UAB_PROGRESS_INTERVAL=inf`` (or 1e300) is accepted, so the ticker waits at most what a lock
    takes: it waited ``inf`` seconds, an OverflowError traceback in its thread."""
    import threading

    timeouts = []

    class Stop(threading.Event):
        def wait(self, timeout=None):
            timeouts.append(timeout)
            threading.Lock().acquire(True, timeout)  # a free lock: at once, but an overlong timeout raises as Event's
            return True  # stopped: the ticker ends

    bar, out, clock = progress(interval=interval)
    bar._stop = Stop()
    bar._tick()
    assert len(timeouts) == 1
    with bar:
        bar.stage("phase1", 2)
        for t in (5.0, 1e6):
            clock.now = t
            bar.sample({}, {"n_tokens": 1})
    assert out.getvalue().splitlines() == ["phase1: 2/2 samples done in 277:46:40, 2 tok, 0.0 tok/s"]
