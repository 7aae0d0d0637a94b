"""Reliability of the ``uab`` CLI: bad input, crash safety, concurrent use, changed
arguments and determinism. The CLI runs for real: in-process through typer's CliRunner
where that is enough, as a ``uab`` subprocess where a process has to die or race.

Bad-input files live in ``tests/data/bad/`` (one failure each, named for it); the 10 MB
line is generated at test time.
"""

from __future__ import annotations

import errno
import io
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from conftest import (
    BAD,
    CASES,
    KEY_VARS,
    OUT,
    STAGES,
    arithmetic,
    check_error,
    check_no_output,
    cli,
    pyproject,
    read_jsonl,
    start_uab,
    wait_held,
    write_jsonl,
)
from typer.testing import CliRunner

from uab_cli import pipeline, runs
from uab_cli.backends.scripted import ScriptedBackend
from uab_cli.cli import app
from uab_cli.errors import BackendError
from uab_cli.jsonl import MAX_LINE_BYTES

ROOT = Path(__file__).resolve().parents[1]
M, N = 30, 4  # the subprocess runs: 30 arithmetic questions, 120 samples in all
_SCRIPT = Path(sys.executable).with_name("uab")
UAB = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "uab_cli.cli"]


# --- helpers -----------------------------------------------------------------------


def env(**extra: str) -> dict:
    base = {k: v for k, v in os.environ.items() if k not in KEY_VARS and k not in ("FORCE_COLOR", "NO_COLOR")}
    return {**base, "COLUMNS": "200", **extra}


def run_args(questions: str, out: Path, *more: str) -> list[str]:
    return [*UAB, "run", questions, "--budget", str(N), "--out", str(out), "--backend", "scripted", "-q", *more]


def start(args: list[str], **control: int) -> subprocess.Popen:
    """``args`` as a subprocess; ``control`` (``hold_after``, ``fail_after``): the run goes through
    ``conftest.start_uab``, its scripted backend stopping or failing at that sample."""
    # SIGINT back to its default so Python turns it into KeyboardInterrupt even when the
    # test runner was started in the background (which ignores SIGINT for its children).
    popen = dict(env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                 preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # noqa: PLW1509
    if control:
        return start_uab(args[len(UAB):], **control, **popen)
    return subprocess.Popen(args, **popen)


def finish(proc: subprocess.Popen, timeout: float = 60) -> tuple[int, str]:
    _, stderr = proc.communicate(timeout=timeout)
    return proc.returncode, stderr.decode()


def lines(path: Path) -> int:
    try:
        with open(path, "rb") as fh:
            return fh.read().count(b"\n")
    except FileNotFoundError:
        return 0


def assert_complete(run_dir: Path, reference: Path) -> None:
    """votes.jsonl byte-identical to the reference; every record's samples are 0..N_i-1, total N·M."""
    assert (run_dir / "votes.jsonl").read_bytes() == (reference / "votes.jsonl").read_bytes()
    records = read_jsonl(run_dir / "votes.jsonl")
    for rec in records:
        assert [s["index"] for s in rec["samples"]] == list(range(len(rec["samples"]))), rec["id"]
    assert sum(len(r["samples"]) for r in records) == N * M
    ckpt = [orjson.loads(line) for line in (run_dir / runs.CHECKPOINT).read_bytes().splitlines()]
    assert len({(row["id"], row["sample"]["index"]) for row in ckpt}) == N * M
    assert not list(run_dir.glob(".*.tmp"))


@pytest.fixture(scope="module")
def questions(tmp_path_factory) -> str:
    return write_jsonl(tmp_path_factory.mktemp("q") / "questions.jsonl", arithmetic(M))


@pytest.fixture(scope="module")
def reference(questions, tmp_path_factory) -> Path:
    """An uninterrupted `uab run` of the questions (seed 0)."""
    out = tmp_path_factory.mktemp("ref") / "run"
    proc = subprocess.run(run_args(questions, out), env=env(), capture_output=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    assert lines(out / runs.CHECKPOINT) == N * M
    return out


# --- 1. bad input ------------------------------------------------------------------

# The corpus (BAD, CASES, STAGES) and its checks live in conftest.py; test_blocks.py runs it on workers.


def test_corpus_is_complete():
    assert len(list(BAD.iterdir())) >= 20
    assert {f for f, *_ in CASES} == {p.name for p in BAD.iterdir()}


@pytest.mark.parametrize("name,stage,expected,line", CASES, ids=[f"{c[1]}-{c[0]}" for c in CASES])
def test_bad_file(tmp_path, name, stage, expected, line):
    path = str(BAD / name)
    args = [a.format(f=path, o=tmp_path / OUT) for a in STAGES[stage]]
    check_error(cli(args), path, line, expected)
    check_no_output(tmp_path, stage)


@pytest.mark.parametrize("name,stage,expected,line", CASES, ids=[f"{c[1]}-{c[0]}" for c in CASES])
def test_bad_stdin(tmp_path, name, stage, expected, line):
    args = [a.format(f="-", o=tmp_path / OUT) for a in STAGES[stage]]
    check_error(cli(args, stdin=(BAD / name).read_bytes()), "<stdin>", line, expected)
    check_no_output(tmp_path, stage)


@pytest.fixture(scope="module")
def huge(tmp_path_factory) -> Path:
    """Line 2 is a 10 MB record (line 1 is valid input for every stage)."""
    path = tmp_path_factory.mktemp("huge") / "huge_line.jsonl"
    first = {"id": "q0", "question": "What is 0 + 1?", "extra": 0,
             "samples": [{"index": 0, "phase": 1, "text": "Answer: 1", "answer": "1", "anll": 0.1}]}
    big = {"id": "q1", "question": "What is 1 + 1? " + "x" * (10 * 2**20)}
    path.write_bytes(orjson.dumps(first) + b"\n" + orjson.dumps(big) + b"\n")
    assert path.stat().st_size > MAX_LINE_BYTES
    return path


@pytest.mark.parametrize("stage", ["phase1", "phase2", "vote"])
@pytest.mark.parametrize("via_stdin", [False, True])
def test_huge_line(tmp_path, huge, stage, via_stdin):
    source = "-" if via_stdin else str(huge)
    args = [a.format(f=source, o=tmp_path / OUT) for a in STAGES[stage]]
    result = cli(args, stdin=huge.read_bytes() if via_stdin else None)
    check_error(result, "<stdin>" if via_stdin else str(huge), 2, "line longer than 8 MiB")
    check_no_output(tmp_path, stage)


@pytest.fixture()
def sampled_file(tmp_path) -> str:
    """A small valid Phase-1 output (hand-made samples: no model needed)."""
    rows = []
    for i, rec in enumerate(arithmetic(4)):
        rows.append({**rec, "samples": [{"index": 0, "phase": 1, "seed": i, "text": "Answer: 1", "answer": "1",
                                         "anll": 0.1 * (i + 1), "confidence": None}]})
    return write_jsonl(tmp_path / "sampled.jsonl", rows)


# (arguments after the input file, expected substring): option errors, no location
OPTION_CASES = [
    (["run", "--budget", "0"], "--budget must be >= 1"),
    (["run", "--budget", "-3"], "--budget must be >= 1"),
    (["run", "--k", "2", "--budget", "1"], "budget N=1 is smaller than the 2 Phase-1 samples"),
    (["run", "--budget", "4", "--signal", "vote-entropy"], "vote-entropy needs at least 2 Phase-1 samples"),
    (["run", "--budget", "4", "--allocator", "uniform", "--exit", "hard"], "--exit applies to the uab allocators"),
    (["run", "--budget", "4", "--base-url", "http://127.0.0.1:1/v1"],
     "--base-url does not apply to the scripted backend (only to openai, cohere)"),
    (["run", "--budget", "4", "--dtype", "float16"], "--dtype does not apply to the scripted backend"),
    (["allocate", "--budget", "0"], "--budget must be >= 1"),
]

# Choices are checked by the parser: exit 2 before any input is read, naming the valid values.
CHOICE_CASES = [
    (["run", "--budget", "4", "--allocator", "greedy"], "'greedy' is not one of 'uab', 'uab-coverage'"),
    (["run", "--budget", "4", "--signal", "entropy"], "'entropy' is not one of 'anll'"),
    (["run", "--budget", "4", "--gain", "linear"], "'linear' is not one of 'algorithm1', 'coverage'"),
    (["run", "--budget", "4", "--backend", "nope"], "'nope' is not one of 'local', 'vllm'"),
    (["run", "--budget", "4", "--exit-mode", "drop"], "'drop' is not one of 'redistribute', 'skip'"),
    (["allocate", "--budget", "4", "--allocator", "greedy"], "'greedy' is not one of"),
    (["allocate", "--budget", "4", "--vote-model", "borda"], "'borda' is not one of 'plurality-2', 'scatter'"),
    (["phase1", "--prompt", "oneshot"], "'oneshot' is not one of 'fewshot', 'zeroshot'"),
    (["phase1", "--endpoint", "responses"], "'responses' is not one of 'chat', 'completions'"),
    (["phase1", "--dtype", "int4"], "'int4' is not one of 'auto'"),
]


@pytest.mark.parametrize("args,expected", CHOICE_CASES, ids=[" ".join(a) for a, _ in CHOICE_CASES])
def test_bad_choices_fail_when_parsed(tmp_path, args, expected):
    command, *options = args
    out = ["--out", str(tmp_path / OUT)] if command == "run" else ["-o", str(tmp_path / OUT)]
    result = cli([command, str(BAD / "invalid_json.jsonl"), *options, *out])  # the input is never read
    assert result.exit_code == 2 and expected in " ".join(result.stderr.split()), result.stderr
    assert "invalid JSON" not in result.stderr
    check_no_output(tmp_path, command)


@pytest.mark.parametrize("args,expected", OPTION_CASES, ids=[" ".join(a) for a, _ in OPTION_CASES])
def test_bad_options(tmp_path, sampled_file, args, expected):
    command, *options = args
    out = ["--out", str(tmp_path / OUT)] if command == "run" else ["-o", str(tmp_path / OUT)]
    if command == "run":
        options = [*options, "--backend", "scripted"] if "--backend" not in options else options
    result = cli([command, sampled_file, *options, *out])
    assert result.exit_code == 2, result.stderr
    errors = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(errors) == 1 and errors[0].startswith("error: ") and expected in errors[0], result.stderr
    check_no_output(tmp_path, command)


def test_run_out_is_a_file(tmp_path, sampled_file):
    (tmp_path / "taken").write_text("not a directory")
    result = cli(["run", sampled_file, "--budget", "4", "--out", str(tmp_path / "taken"), "--backend", "scripted"])
    check_error(result, str(tmp_path / "taken"), None, "cannot use as a run directory")


def test_real_console_script_reports_bad_input(tmp_path):
    """The installed entry point, not just CliRunner: one line, exit 2, nothing written."""
    path = str(BAD / "duplicate_id.jsonl")
    proc = subprocess.run([*UAB, "phase1", path, "--backend", "scripted", "-o", str(tmp_path / OUT)],
                          env=env(), capture_output=True, timeout=60, check=False)
    assert proc.returncode == 2
    assert proc.stderr.decode().splitlines() == [f"error: {path}:3: duplicate id 'q1'"]
    proc = subprocess.run([*UAB, "phase1", "-", "--backend", "scripted", "-o", str(tmp_path / OUT)],
                          input=(BAD / "invalid_json.jsonl").read_bytes(), env=env(), capture_output=True,
                          timeout=60, check=False)
    assert proc.returncode == 2 and proc.stderr.decode().startswith("error: <stdin>:2: invalid JSON")
    assert os.listdir(tmp_path) == []


def test_error_message_is_not_markup(tmp_path):
    path = tmp_path / "set[b].jsonl"
    write_jsonl(path, [{"id": "[/x]", "question": "What is 1 + 1?"}] * 2)
    result = CliRunner().invoke(app, ["phase1", str(path), "--backend", "scripted", "-o", str(tmp_path / OUT)])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {path}:2: duplicate id '[/x]'"


# --- 2. crash safety ---------------------------------------------------------------


def test_sigkill_during_phase1_resumes_identically(questions, reference, tmp_path):
    out = tmp_path / "run"
    proc = start(run_args(questions, out), hold_after=M // 6)
    wait_held(proc)
    proc.send_signal(signal.SIGKILL)
    assert finish(proc)[0] == -signal.SIGKILL
    assert lines(out / runs.CHECKPOINT) == M // 6, "not killed at the held sample of phase 1"
    assert not (out / "phase1.jsonl").exists()
    rc, stderr = finish(start(run_args(questions, out)))
    assert rc == 0, stderr
    assert_complete(out, reference)


def test_sigkill_during_phase2_resumes_identically(questions, reference, tmp_path):
    out = tmp_path / "run"
    proc = start(run_args(questions, out), hold_after=M + (N - 1) * M // 4)
    wait_held(proc)
    proc.send_signal(signal.SIGKILL)
    assert finish(proc)[0] == -signal.SIGKILL
    assert lines(out / runs.CHECKPOINT) == M + (N - 1) * M // 4, "not killed at the held sample of phase 2"
    assert (out / "allocation.jsonl").exists() and not (out / "phase2.jsonl").exists()
    rc, stderr = finish(start(run_args(questions, out)))
    assert rc == 0, stderr
    assert_complete(out, reference)


@pytest.mark.parametrize("keep", [M // 2, M + 17])  # torn in phase 1 / in phase 2
def test_torn_checkpoint_line_resumes(questions, reference, tmp_path, keep):
    """A kill mid-write leaves half a line (and maybe a temp file): the resume ignores both."""
    out = tmp_path / "run"
    out.mkdir()
    shutil.copy(reference / runs.CONFIG, out / runs.CONFIG)
    ckpt = (reference / runs.CHECKPOINT).read_bytes().splitlines(keepends=True)
    torn = ckpt[keep]
    (out / runs.CHECKPOINT).write_bytes(b"".join(ckpt[:keep]) + torn[: len(torn) // 2])
    (out / ".phase1.jsonl.k1ll3d.tmp").write_bytes(b'{"id": "q0", "quest')
    rc, stderr = finish(start([*run_args(questions, out)[:-1]]))
    assert rc == 0, stderr
    assert f"reused {keep}" in stderr
    assert_complete(out, reference)


def test_torn_line_that_is_valid_json_is_not_restored(questions, reference, tmp_path):
    """A last line cut just before its newline parses, but it is torn all the same: the
    checkpoint is rewritten without it, so what was restored is what the checkpoint holds."""
    out = tmp_path / "run"
    out.mkdir()
    shutil.copy(reference / runs.CONFIG, out / runs.CONFIG)
    ckpt = (reference / runs.CHECKPOINT).read_bytes().splitlines(keepends=True)
    (out / runs.CHECKPOINT).write_bytes(b"".join(ckpt[:9]) + ckpt[9].rstrip(b"\n"))
    rc, stderr = finish(start([*run_args(questions, out)[:-1]]))
    assert rc == 0 and "reused 9" in stderr, stderr
    assert_complete(out, reference)


def _textless(line: bytes) -> bytes:
    """Checkpoint ``line`` with its sample's text gone (its id and index intact)."""
    row = orjson.loads(line)
    del row["sample"]["text"]
    return orjson.dumps(row) + b"\n"


def _numbered(line: bytes) -> bytes:
    """Checkpoint ``line`` with a number for its question id (its sample intact)."""
    return orjson.dumps({**orjson.loads(line), "id": 7}) + b"\n"


@pytest.mark.parametrize("damage", [lambda line: b"garbage\n", _textless, _numbered],
                         ids=["garbage", "no-text", "number-id"])
def test_a_damaged_checkpoint_line_with_samples_after_it_is_an_error(questions, reference, tmp_path, damage):
    """Only the last line can be torn by a kill; a bad line before others is damage. The resume
    dropped it and every sample after it, silently (paid for again on an API). A line of an id and
    an index whose sample is no sample (no text) is damage too."""
    out = tmp_path / "run"
    out.mkdir()
    shutil.copy(reference / runs.CONFIG, out / runs.CONFIG)
    ckpt = (reference / runs.CHECKPOINT).read_bytes().splitlines(keepends=True)
    damaged = b"".join(ckpt[:4]) + damage(ckpt[4]) + b"".join(ckpt[5:])
    (out / runs.CHECKPOINT).write_bytes(damaged)
    rc, stderr = finish(start([*run_args(questions, out)[:-1]]))
    assert rc == 2 and stderr.strip().endswith(f"{out / runs.CHECKPOINT}:5: not a sample of this run's checkpoint, "
                                               "and samples follow it: fix or remove the line (or --force to start "
                                               "over)"), stderr
    assert (out / runs.CHECKPOINT).read_bytes() == damaged


@pytest.mark.parametrize("command", ["run", "pool"])
def test_force_starts_over_on_a_damaged_checkpoint(questions, reference, tmp_path, command):
    """The damage error says `--force to start over`; with --force the same error came back."""
    out = tmp_path / "run"
    args = run_args(questions, out)[len(UAB):]
    if command == "pool":
        args = ["pool", questions, "-K", "2", *args[4:]]
        assert cli(args).exit_code == 0
    else:
        shutil.copytree(reference, out)
    ckpt = (out / runs.CHECKPOINT).read_bytes().splitlines(keepends=True)
    (out / runs.CHECKPOINT).write_bytes(b"".join(ckpt[:4]) + b"garbage\n" + b"".join(ckpt[5:]))
    assert cli(args).exit_code == 2
    result = cli([*args, "--force"])
    assert result.exit_code == 0, result.stderr
    assert lines(out / runs.CHECKPOINT) == len(ckpt)  # every sample drawn again, none twice
    if command == "run":
        assert_complete(out, reference)


@pytest.mark.parametrize("sig,code,said", [("SIGINT", 130, "interrupted"), ("SIGTERM", 143, "stopped by SIGTERM"),
                                           ("SIGHUP", 129, "stopped by SIGHUP")])
@pytest.mark.parametrize("held", [M // 3, M + 10])  # in phase 1 / in phase 2
def test_a_stop_signal_exits_128_plus_it_and_resumes(questions, reference, tmp_path, sig, code, said, held):
    """Ctrl-C, SIGTERM (``kill``) and SIGHUP (a closed terminal) stop a run the same way; the
    last two ended it on the spot (exit -15, -1: no message, nothing cleaned up)."""
    out = tmp_path / "run"
    proc = start(run_args(questions, out), hold_after=held)
    wait_held(proc)
    proc.send_signal(getattr(signal, sig))
    rc, stderr = finish(proc)
    assert rc == code, stderr
    assert stderr == f"{said}: finished samples are kept; re-run the same command to resume.\n"
    assert not (out / "votes.jsonl").exists() and not list(out.glob(".*.tmp"))
    assert lines(out / runs.CHECKPOINT) == held
    rc, stderr = finish(start(run_args(questions, out)))
    assert rc == 0, stderr
    assert_complete(out, reference)


# A ``uab`` that stops in its imports: the import of the command line waits for a signal (after
# saying so on stdout), as a slow start-up (torch, numpy on a cold disk) does.
_SLOW_IMPORTS = """
import sys, time

class Slow:
    def find_spec(self, name, path=None, target=None):
        if name == "uab_cli.cli":
            print("importing", flush=True)
            time.sleep(60)

sys.meta_path.insert(0, Slow())
sys.argv = ["uab", "--version"]
"""


def _entry(how: str) -> str:
    """How ``uab`` starts: ``python -m uab_cli``, or the console script pyproject.toml names."""
    if how == "-m":
        return "import runpy; runpy.run_module('uab_cli', run_name='__main__', alter_sys=True)"
    module, function = pyproject()["project"]["scripts"]["uab"].split(":")
    return f"from {module} import {function}; sys.exit({function}())"


def _stopped_once(script: str, ready: bytes, sig: str) -> tuple[int, str]:
    """Run ``script`` (Ctrl-C taken as in a shell's foreground), send ``sig`` once it prints ``ready``:
    its exit code and stderr."""
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, env=env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # noqa: PLW1509
    assert proc.stdout.readline() == ready
    proc.send_signal(getattr(signal, sig))
    return finish(proc)


@pytest.mark.parametrize("how", ["-m", "script"])
@pytest.mark.parametrize("sig,code,said", [("SIGINT", 130, "interrupted"), ("SIGTERM", 143, "stopped by SIGTERM"),
                                           ("SIGHUP", 129, "stopped by SIGHUP")])
def test_a_stop_signal_while_uab_starts_is_one_line_too(how, sig, code, said):
    """Ctrl-C while uab imported its modules printed a KeyboardInterrupt traceback, SIGTERM ended it in
    silence (exit 143, -15 to a parent); as once it runs: one line, exit 128 + the signal's number."""
    assert _stopped_once(_SLOW_IMPORTS + _entry(how), b"importing\n", sig) == (code, f"{said}: nothing was written.\n")


# A signal that comes while a finalizer runs (the garbage collector runs them at any line: the local
# backend's model load frees many regex objects with a ``__del__``): here in the import of the command line.
_IN_A_FINALIZER = """
import sys, time

class Garbage:
    def __del__(self):
        print("finalizing", flush=True)
        time.sleep(60)

class Collect:
    def find_spec(self, name, path=None, target=None):
        if name == "uab_cli.cli":
            Garbage()

sys.meta_path.insert(0, Collect())
sys.argv = ["uab", "--version"]
"""


@pytest.mark.parametrize("sig,code,said", [("SIGINT", 130, "interrupted"), ("SIGTERM", 143, "stopped by SIGTERM")])
def test_a_stop_signal_that_comes_in_a_finalizer_still_stops_uab(sig, code, said):
    """Python swallows an exception raised in a finalizer: the handler's KeyboardInterrupt or
    ``Terminated`` was lost there, and uab went on to the end (exit 0) as if no signal had come."""
    assert _stopped_once(_IN_A_FINALIZER + _entry("-m"), b"finalizing\n", sig) == (code, f"{said}: nothing was written.\n")


# A signal that a finalizer swallows as the block that takes signals ends (the last line of uab's
# imports, of its command): nothing of the block is left to run when the signal is sent again.
_IN_A_LAST_FINALIZER = """
import signal, sys, time
from uab_cli.errors import terminated_on_signals

class Garbage:
    def __del__(self):
        signal.raise_signal(signal.SIG)

try:
    with terminated_on_signals():
        Garbage()
except KeyboardInterrupt as exc:
    print("stopped in the block:", type(exc).__name__, flush=True)
    sys.exit(0)
time.sleep(1)  # where the signal, sent again after the block, came
print("went on", flush=True)
"""


@pytest.mark.parametrize("sig,raised", [("SIGINT", "KeyboardInterrupt"), ("SIGTERM", "Terminated")])
def test_a_stop_signal_a_finalizer_swallows_as_the_block_ends_stops_it(sig, raised):
    """The signal a finalizer swallowed was sent again from a thread that ran after the block had
    ended: a SIGTERM was lost (its handler back to the default, which Python does not run: uab went
    on, exit 0), a Ctrl-C came past the boundary that says it. The block's end now waits for it."""
    proc = subprocess.run([sys.executable, "-c", _IN_A_LAST_FINALIZER.replace("SIG)", f"{sig})")], cwd=ROOT,
                          env=env(), capture_output=True, timeout=60,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # noqa: PLW1509
    assert (proc.returncode, proc.stdout.decode()) == (0, f"stopped in the block: {raised}\n"), proc.stderr.decode()


# A ``uab`` that stops while click parses its command line: the parse waits for a signal (after
# saying so on stdout), as a slow option callback would.
_SLOW_PARSE = """
import sys, time
import typer.core

def slow(self, ctx, args):
    print("parsing", flush=True)
    time.sleep(60)

typer.core.TyperGroup.parse_args = slow
sys.argv = ["uab", "--version"]
"""


@pytest.mark.parametrize("how", ["-m", "script"])
@pytest.mark.parametrize("sig,code,said", [("SIGINT", 130, "interrupted"), ("SIGTERM", 143, "stopped by SIGTERM"),
                                           ("SIGHUP", 129, "stopped by SIGHUP")])
def test_a_stop_signal_while_uab_parses_its_command_line_is_one_line_too(how, sig, code, said):
    """Between the imports and the command, while click parsed the command line, Ctrl-C exited 130
    in silence (click's own handling), SIGTERM and SIGHUP ended uab on the spot (-15, -1 to a parent)."""
    assert _stopped_once(_SLOW_PARSE + _entry(how), b"parsing\n", sig) == (code, f"{said}: nothing was written.\n")


def test_backend_failure_exits_1_and_resumes(questions, reference, tmp_path):
    out = tmp_path / "run"
    rc, stderr = finish(start(run_args(questions, out), fail_after=M + 25))
    assert rc == 1
    assert "backend error: scripted failure after 55 samples" in stderr and "resume" in stderr
    assert "Traceback" not in stderr
    assert lines(out / runs.CHECKPOINT) == M + 25
    rc, stderr = finish(start(run_args(questions, out)))
    assert rc == 0, stderr
    assert_complete(out, reference)


class FullDisk(io.RawIOBase):
    """A file on a disk with ``room`` bytes free: a write takes what fits and says how much, the
    next one fails with ENOSPC, as write(2) does."""

    def __init__(self, raw, room: int):
        self.raw, self.room = raw, room

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        if self.room <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = self.raw.write(bytes(data[: self.room]))
        self.room -= n
        return n

    def close(self) -> None:
        self.raw.close()
        super().close()


@pytest.mark.parametrize("room", [0, 2000, 14000])  # the first line / torn in phase 1 / in phase 2
def test_a_full_disk_while_checkpointing_is_one_line_and_the_rerun_resumes(questions, reference, tmp_path, monkeypatch,
                                                                          room):
    """The checkpoint's appends are no atomic write: a full disk there named stdout, and a run that
    failed on its first sample raised again closing the checkpoint (its directory stayed)."""
    out = tmp_path / "new" / "run"

    def opened(path, mode="r", buffering=-1):
        if mode != "ab":
            return open(path, mode, buffering)
        full = FullDisk(open(path, mode, buffering=0), room)
        return full if buffering == 0 else io.BufferedWriter(full)

    monkeypatch.setattr(runs, "open", opened, raising=False)
    result = CliRunner().invoke(app, run_args(questions, out)[len(UAB):])
    assert result.exit_code == 2 and result.stderr == (f"error: {out / runs.CHECKPOINT}: cannot write: "
                                                       "No space left on device\n"), result.stderr
    if not room:  # it failed before its first sample: nothing is left
        assert not (tmp_path / "new").exists()
    else:
        assert (out / runs.CHECKPOINT).stat().st_size == room  # the line the disk cut short is the last one
    monkeypatch.undo()
    whole = lines(out / runs.CHECKPOINT)
    rc, stderr = finish(start(run_args(questions, out)[:-1]))
    assert rc == 0 and f"reused {whole}" in stderr, stderr
    assert_complete(out, reference)


def test_a_judge_run_that_fails_before_its_first_sample_leaves_no_samples_behind(tmp_path, fake_backend):
    """The judge's labels are written before the first sample: a run that failed there left its
    directory (lock, config and all) and refused other settings, saying it held samples. The
    labels are paid calls: the directory keeps them (a rerun asks no judge), but holds no samples."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(4))
    args = ["run", q, "--budget", "3", "--allocator", "judge", "--backend", "scripted", "-q"]
    fake_backend.in_cli(fail_after=4)  # the 4 judge calls answer, the first sample fails
    assert cli([*args, "-o", str(tmp_path / "new" / "run")]).exit_code == 1
    assert sorted(os.listdir(tmp_path / "new" / "run")) == sorted([".lock", runs.CONFIG, runs.DRAWN, runs.CHECKPOINT,
                                                                   runs.JUDGE])
    fake_backend.in_cli(fail_after=0)  # nothing answers: a directory with nothing to keep goes
    assert cli([*args, "-o", str(tmp_path / "none" / "run")]).exit_code == 1
    assert not (tmp_path / "none").exists()
    (tmp_path / "kept").mkdir()  # a directory the run did not make stays, and takes other settings
    fake_backend.in_cli(fail_after=4)
    assert cli([*args, "-o", str(tmp_path / "kept")]).exit_code == 1
    assert (tmp_path / "kept" / runs.JUDGE).exists()
    fake_backend.in_cli()
    result = cli([*args, "-o", str(tmp_path / "kept"), "--max-tokens", "100"])
    assert result.exit_code == 0, result.stderr
    assert lines(tmp_path / "kept" / runs.CHECKPOINT) == 3 * 4
    assert cli([*args, "-o", str(tmp_path / "new" / "run")]).exit_code == 0
    assert _judge_calls(fake_backend) == 0  # its labels kept


def test_a_run_stopped_while_it_removes_the_directory_it_made_can_rerun(tmp_path, fake_backend, monkeypatch):
    """A run that fails before its first sample removes the directory it made, its config first: a
    second Ctrl-C (or a kill) right after that left drawn.json and an empty checkpoint without a
    config, a directory every rerun refused as not uab's. The config goes last now."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(4))
    out = tmp_path / "new" / "run"
    args = ["run", q, "--budget", "2", "--backend", "scripted", "-q", "-o", str(out)]
    real = os.unlink

    def stopped_after_one(path):  # the first file the run removes from its directory, then Ctrl-C
        real(path)
        if os.path.dirname(os.path.abspath(path)) == str(out):
            monkeypatch.setattr(os, "unlink", real)
            raise KeyboardInterrupt

    fake_backend.in_cli(fail_after=0)  # nothing answers: the run keeps nothing, and removes its directory
    monkeypatch.setattr(os, "unlink", stopped_after_one)
    assert cli(args).exit_code == 130
    fake_backend.in_cli()
    result = cli(args)
    assert result.exit_code == 0, result.stderr
    assert lines(out / runs.CHECKPOINT) == 2 * 4


def _judge_calls(fake_backend) -> int:
    """The judge's requests of the last backend made (the last run's)."""
    return sum("easy or hard" in req.messages[-1]["content"] for call in fake_backend.made[-1].calls for req in call)


@pytest.mark.parametrize("stop", ["fail", "kill"])
def test_a_judge_stopped_mid_judging_asks_only_the_rest_on_rerun(tmp_path, fake_backend, stop):
    """judge.json was written only once every judge call had answered: a run killed, or failing on a
    backend error, mid-judging asked every question again on rerun (costly with a reasoning judge).
    Now the verdicts are checkpointed as they arrive: the judge is asked M times in all, and the
    labels, the votes and judge.json are those of an uninterrupted run; another cap asks all again."""
    m, k = 12, 5
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(m))
    args = ["run", q, "--budget", "3", "--allocator", "judge", "--backend", "scripted", "-q"]
    assert cli([*args, "-o", str(tmp_path / "ref")]).exit_code == 0
    out = tmp_path / "new" / "run"
    if stop == "fail":
        fake_backend.in_cli(fail_after=k)
        assert cli([*args, "-o", str(out)]).exit_code == 1
    else:
        proc = start(run_args(q, out, "--budget", "3", "--allocator", "judge"), hold_after=k)
        wait_held(proc)
        proc.kill()
        finish(proc)
        with open(out / runs.JUDGE_CHECKPOINT, "ab") as fh:
            fh.write(b'{"id": "q1')  # a line the kill tore
    assert lines(out / runs.JUDGE_CHECKPOINT) == k and not (out / runs.JUDGE).exists()
    fake_backend.in_cli()
    result = cli([*args, "-o", str(out)])
    assert result.exit_code == 0, result.stderr
    assert _judge_calls(fake_backend) == m - k  # k asked by the stopped run: M in all
    assert (out / runs.JUDGE).read_bytes() == (tmp_path / "ref" / runs.JUDGE).read_bytes()
    assert (out / "votes.jsonl").read_bytes() == (tmp_path / "ref" / "votes.jsonl").read_bytes()
    assert not (out / runs.JUDGE_CHECKPOINT).exists()
    assert cli([*args, "-o", str(out), "--judge-max-tokens", "9"]).exit_code == 0
    assert _judge_calls(fake_backend) == m  # another cap: every question asked again


def test_a_judge_stopped_twice_keeps_the_verdicts_of_both_stops(tmp_path, fake_backend):
    """The rerun of a judge stopped with a torn last line rewrites its checkpoint without that line
    before it appends: the next line does not join it, so a second stop keeps both stops' verdicts."""
    m = 12
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(m))
    out = tmp_path / "run"
    args = ["run", q, "--budget", "3", "--allocator", "judge", "--backend", "scripted", "-q", "-o", str(out)]
    for asked in (4, 3):
        fake_backend.in_cli(fail_after=asked)
        assert cli(args).exit_code == 1
        with open(out / runs.JUDGE_CHECKPOINT, "ab") as fh:
            fh.write(b'{"id": "q1')  # a line the stop tore
    ckpt = (out / runs.JUDGE_CHECKPOINT).read_bytes().splitlines(keepends=True)
    assert len(ckpt) == 4 + 3 + 1
    row = orjson.loads(ckpt[-2])
    row["verdict"] = {"verdict": "neither"}  # a line that holds no verdict: damage, that question asked again
    (out / runs.JUDGE_CHECKPOINT).write_bytes(b"".join(ckpt[:-2]) + orjson.dumps(row) + b"\n")
    fake_backend.in_cli()
    assert cli(args).exit_code == 0
    assert _judge_calls(fake_backend) == m - 4 - 3 + 1


@pytest.mark.parametrize("name", [".lock", runs.CONFIG, runs.CHECKPOINT])
def test_a_run_directory_file_that_cannot_be_opened_is_one_line(questions, reference, tmp_path, name):
    """A lock, config or checkpoint the rerun cannot open (another user's, or unreadable; here a
    folder, which root cannot open either) was a traceback."""
    out = tmp_path / "run"
    shutil.copytree(reference, out)
    (out / name).unlink()
    (out / name).mkdir()
    given = run_args(questions, out)[len(UAB):]
    for args in (given, given[:2] + given[4:]):  # with -N, and without: the budget comes from the config
        result = CliRunner().invoke(app, args)
        what = "cannot lock the directory" if name == ".lock" else "cannot read"
        assert result.exit_code == 2 and result.stderr == f"error: {out / name}: {what}: Is a directory\n", \
            result.stderr


class OutOfOrder(ScriptedBackend):
    """Reports each batch's completions last-first, like a concurrent HTTP backend can."""

    def generate(self, requests, params, on_result=None):
        out = [self.complete(req, params) for req in requests]
        for k in reversed(range(len(requests))):
            if self.fail_after is not None and self.drawn >= self.fail_after:
                raise BackendError(f"failure after {self.drawn} samples")
            self.drawn += 1
            if on_result:
                on_result(k, out[k])
        return out


@pytest.mark.parametrize("fail_after", [7, 10 + 3])  # a hole in phase 1 (k=2) / in phase 2
def test_resume_after_out_of_order_completions(tmp_path, fail_after):
    """A crash can leave sample 1 checkpointed without sample 0: resume must neither
    duplicate index 1 nor lose index 0."""
    gen = pipeline.Generation(backend="scripted", model="scripted", seed=3)
    alloc = pipeline.Allocation(4, "uab", signal="vote-entropy")
    reference = arithmetic(5)
    runs.run(reference, OutOfOrder, gen, str(tmp_path / "a"), alloc, k=2)
    with pytest.raises(BackendError):
        runs.run(arithmetic(5), lambda: OutOfOrder(fail_after=fail_after), gen, str(tmp_path / "b"), alloc, k=2)
    resumed = arithmetic(5)
    runs.run(resumed, OutOfOrder, gen, str(tmp_path / "b"), alloc, k=2)
    for rec in resumed:
        assert [s["index"] for s in rec["samples"]] == list(range(len(rec["samples"])))
    assert resumed == reference
    assert (tmp_path / "a" / "votes.jsonl").read_bytes() == (tmp_path / "b" / "votes.jsonl").read_bytes()


# --- 3. concurrent use ---------------------------------------------------------------


def test_second_run_on_same_out_is_refused(questions, reference, tmp_path):
    out = tmp_path / "run"
    first = start(run_args(questions, out), hold_after=1)
    wait_held(first)  # the first run holds the lock, stopped after its first sample
    rc, stderr = finish(start(run_args(questions, out)))
    assert first.poll() is None, "the first run ended before the second one started"
    assert rc == 2
    assert re.fullmatch(r"error: .*: another `uab run` or `uab pool` is using this directory \(its lock is held\)\n", stderr)
    rc, stderr = finish(first)  # closes its stdin: it goes on
    assert rc == 0, stderr
    assert_complete(out, reference)


# --- 4. changed arguments ------------------------------------------------------------


def test_changed_generation_is_refused_unless_forced(questions, reference, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(reference, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    args = ["run", questions, "--budget", "5", "--seed", "3", "--temperature", "0.5", "--allocator", "uniform",
            "--out", str(out), "--backend", "scripted", "-q"]
    result = cli(args)
    assert result.exit_code == 2
    [message] = result.stderr.splitlines()
    assert message.startswith(f"error: {out}: this directory holds samples drawn with other settings")
    for changed in ("--seed (0 → 3)", "--temperature (0.9 → 0.5)"):
        assert changed in message
    assert "--budget" not in message and "--allocator" not in message  # those may change
    assert "--force" in message
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # untouched

    other = tmp_path / "copy of questions.jsonl"  # same questions elsewhere: still the same run
    shutil.copy(questions, other)
    result = cli(["run", str(other), "--budget", str(N), "--out", str(out), "--backend", "scripted", "-q"])
    assert result.exit_code == 0, result.stderr
    assert (out / "votes.jsonl").read_bytes() == before["votes.jsonl"]

    write_jsonl(other, arithmetic(M + 1)[1:])  # other questions: refused
    result = cli(["run", str(other), "--budget", str(N), "--out", str(out), "--backend", "scripted", "-q"])
    assert result.exit_code == 2 and "input questions" in result.stderr

    result = cli([*args, "--force"])
    assert result.exit_code == 0, result.stderr
    records = read_jsonl(out / "votes.jsonl")
    assert sum(len(r["samples"]) for r in records) == 5 * M
    assert records[0]["uab"]["allocate"]["allocator"] == "uniform"
    assert lines(out / runs.CHECKPOINT) == 5 * M  # the old samples were discarded


def test_changed_allocation_reuses_samples(questions, reference, tmp_path):
    """Budget, allocator, signal, T, exits and vote options may change on a run directory:
    its samples are reused and the votes equal a fresh run's at the new settings."""
    out = tmp_path / "run"
    shutil.copytree(reference, out)
    changed = ["--budget", "6", "--allocator", "uab-coverage", "-T", "0.3", "--tie-seed", "2"]
    assert cli([*run_args(questions, out)[len(UAB):], *changed]).exit_code == 0
    fresh = tmp_path / "fresh"
    assert cli([*run_args(questions, fresh)[len(UAB):], *changed]).exit_code == 0
    assert (out / "votes.jsonl").read_bytes() == (fresh / "votes.jsonl").read_bytes()
    # The checkpoint keeps every sample: back at N=4 the votes are the reference's, nothing drawn
    # (--allocator and --vote-rule given: else the rerun keeps the last run's allocation and vote).
    kept = lines(out / runs.CHECKPOINT)
    result = cli([*run_args(questions, out)[len(UAB):-1], "--allocator", "uab", "--vote-rule", "majority"])
    assert result.exit_code == 0 and "drawn now 0" in result.stderr, result.stderr
    assert (out / "votes.jsonl").read_bytes() == (reference / "votes.jsonl").read_bytes()
    assert lines(out / runs.CHECKPOINT) == kept


# --- 5. determinism ------------------------------------------------------------------


def strip_provenance(records: list[dict]) -> list[dict]:
    return [{k: v for k, v in rec.items() if k != "uab"} for rec in records]


def test_runs_and_shell_pipeline_agree(questions, reference, tmp_path):
    out = tmp_path / "again"
    second = start(run_args(questions, out))
    pipe = subprocess.run(
        f"{' '.join(UAB)} phase1 {questions} --backend scripted -q"
        f" | {' '.join(UAB)} allocate - --budget {N} -q"
        f" | {' '.join(UAB)} phase2 - -q"
        f" | {' '.join(UAB)} vote - -q -o {tmp_path / 'piped.jsonl'}",
        shell=True, env=env(), capture_output=True, timeout=60, check=False, executable="/bin/bash")
    assert pipe.returncode == 0, pipe.stderr.decode()
    rc, stderr = finish(second)
    assert rc == 0, stderr
    assert (out / "votes.jsonl").read_bytes() == (reference / "votes.jsonl").read_bytes()

    piped = read_jsonl(tmp_path / "piped.jsonl")
    ran = read_jsonl(reference / "votes.jsonl")
    assert strip_provenance(piped) == strip_provenance(ran)
    # Provenance agrees too, stage by stage, except the allocator's note of the input lines.
    assert [r["uab"] for r in piped] == [r["uab"] for r in ran]


def test_a_utf8_bom_and_trailing_blank_lines_are_accepted(tmp_path):
    """An editor's UTF-8 file (byte-order mark, blank lines at the end), from a path and stdin."""
    bom = Path(__file__).parent / "data" / "utf8_bom.jsonl"
    data = bom.read_bytes() + b"\n  \n"
    edited = tmp_path / "edited.jsonl"
    edited.write_bytes(data)
    for args, stdin in ((["phase1", str(edited)], None), (["phase1", "-"], data)):
        result = cli([*args, "--backend", "scripted", "-o", str(tmp_path / "p1.jsonl")], stdin=stdin)
        assert result.exit_code == 0, result.stderr
        assert [r["id"] for r in read_jsonl(tmp_path / "p1.jsonl")] == ["q1", "q2"]


# --- 6. reruns remember ------------------------------------------------------------------


def test_a_rerun_takes_the_generation_options_the_directory_records(questions, tmp_path):
    out = tmp_path / "run"
    first = ["run", questions, "--budget", "2", "--out", str(out), "--backend", "scripted", "--seed", "3",
             "--max-tokens", "48", "-K", "2", "--allocator", "uniform"]
    assert cli(first).exit_code == 0
    config = orjson.loads((out / runs.CONFIG).read_bytes())
    assert config["allocate"]["signal"] == "anll" and config["allocate"]["vote_model"] is None

    # No --backend, --seed, --max-tokens or -K: the directory's are taken, only the missing samples drawn.
    again = cli(["run", questions, "--budget", "3", "--out", str(out), "--allocator", "uniform"])
    assert again.exit_code == 0, again.stderr
    assert f"drawn now {M}, reused {2 * M}" in again.stderr
    records = read_jsonl(out / "votes.jsonl")
    assert {r["uab"]["phase1"]["max_tokens"] for r in records} == {48}
    assert all(len(r["samples"]) == 3 for r in records)

    # An explicit other value is still a change of the samples: refused, once per option.
    changed = cli(["run", questions, "--budget", "3", "--out", str(out), "--seed", "4"])
    assert changed.exit_code == 2
    assert "--seed (3 → 4)" in changed.stderr and "--max-tokens" not in changed.stderr


@pytest.mark.parametrize("first,then", [
    (["--exit", "hard"], ["--exit", "easy"]),  # hard's default threshold, 0.5, is not easy's 0.7
    (["--vote-rule", "weighted"], ["--signal", "max-nll"]),  # the vote signal follows the allocation's
    (["--vcs"], ["--no-vcs", "--force"]),  # the signal --vcs chose (vcs) is not --no-vcs's (anll)
    ([], ["--vcs", "--force"]),  # nor anll --vcs's
])
@pytest.mark.parametrize("older", [False, True])  # a config without "derived", as an earlier uab wrote it
def test_a_rerun_derives_again_what_the_last_run_derived(questions, tmp_path, first, then, older):
    """A default the last run resolved from another option (an exit's threshold, the confidence
    rules' signal) is no choice of it: a rerun that changes that option votes as a fresh run does."""
    base = ["--budget", "3", "--backend", "scripted", "-q"]
    assert cli(["run", questions, "-o", str(tmp_path / "run"), *base, *first]).exit_code == 0
    if older:
        config = orjson.loads((tmp_path / "run" / runs.CONFIG).read_bytes())
        del config["derived"]
        (tmp_path / "run" / runs.CONFIG).write_bytes(orjson.dumps(config))
    result = cli(["run", questions, "-o", str(tmp_path / "run"), *then])
    assert result.exit_code == 0, result.stderr
    assert cli(["run", questions, "-o", str(tmp_path / "fresh"), *base, *first, *then]).exit_code == 0
    config, fresh = (orjson.loads((tmp_path / d / runs.CONFIG).read_bytes()) for d in ("run", "fresh"))
    assert (config["allocate"], config["vote"]) == (fresh["allocate"], fresh["vote"])
    assert (tmp_path / "run" / "votes.jsonl").read_bytes() == (tmp_path / "fresh" / "votes.jsonl").read_bytes()


def test_a_rerun_keeps_a_threshold_or_vote_signal_the_last_run_was_given(questions, tmp_path):
    out = str(tmp_path / "run")
    given = ["--exit", "hard", "--exit-threshold", "0.3", "--vote-rule", "weighted", "--vote-signal", "max-nll"]
    assert cli(["run", questions, "--budget", "3", "-o", out, "--backend", "scripted", "-q", *given]).exit_code == 0
    assert cli(["run", questions, "--budget", "4", "-o", out, "--signal", "total-nll", "-q"]).exit_code == 0
    config = orjson.loads((tmp_path / "run" / runs.CONFIG).read_bytes())
    assert (config["allocate"]["exit_threshold"], config["vote"]["signal"]) == (0.3, "max-nll")


@pytest.mark.parametrize("given", [["--exit", "hard", "--exit-threshold", "0.5"],  # hard's own threshold, given
                                   ["--vote-rule", "weighted", "--vote-signal", "anll"]])  # the derived signal, given
def test_a_given_value_equal_to_the_derived_one_stays_given(questions, tmp_path, given):
    """The directory records what the last run derived: a value given equal to it was taken for
    derived and changed with the option it derives from (--signal max-nll gave the vote max-nll).
    A threshold given stays given, at its own exit (another exit drops it: test_options.py)."""
    out = str(tmp_path / "run")
    assert cli(["run", questions, "--budget", "3", "-o", out, "--backend", "scripted", "-q", *given]).exit_code == 0
    then = ["--exit", "hard", "--exit-mode", "skip"] if "--exit" in given else ["--signal", "max-nll"]
    assert cli(["run", questions, "-o", out, "-q", *then]).exit_code == 0
    config = orjson.loads((tmp_path / "run" / runs.CONFIG).read_bytes())
    assert str(config["allocate"]["exit_threshold"] if "--exit" in given else config["vote"]["signal"]) == given[-1]
    assert not {"allocate.exit_threshold", "vote.signal"} & set(config["derived"])


def test_a_rerun_on_another_backend_derives_vcs_again(questions, tmp_path, fake_backend, monkeypatch):
    """--vcs is on by default for cohere: a rerun (or pool) that switches --backend takes the new
    backend's default, as a fresh run does (it kept cohere's vcs, and allocated by vcs); --vcs given stays."""
    from uab_cli.backends import BACKENDS

    fake_backend.in_cli()
    monkeypatch.setitem(BACKENDS, "cohere", BACKENDS["scripted"])
    for command, first in (("run", ["-N", "2"]), ("pool", ["-K", "1"])):
        out = tmp_path / command
        assert cli([command, questions, *first, "-o", str(out), "--backend", "cohere", "-q"]).exit_code == 0
        assert orjson.loads((out / runs.CONFIG).read_bytes())["generation"]["vcs"] is True
        result = cli([command, questions, "-o", str(out), "--backend", "scripted", "--force", "-q"])
        assert result.exit_code == 0, result.stderr
        config = orjson.loads((out / runs.CONFIG).read_bytes())
        assert config["generation"]["vcs"] is False and config.get("allocate", {"signal": "anll"})["signal"] == "anll"
    out = str(tmp_path / "given")
    assert cli(["run", questions, "-N", "2", "-o", out, "--backend", "cohere", "--vcs", "-q"]).exit_code == 0
    assert cli(["run", questions, "-o", out, "--backend", "scripted", "--force", "-q"]).exit_code == 0
    assert orjson.loads((tmp_path / "given" / runs.CONFIG).read_bytes())["generation"]["vcs"] is True


@pytest.mark.parametrize("text", ['{"generation": {"backend": "scr', "[1, 2]", '{"generation": 3}'])
def test_a_broken_config_is_one_line_naming_it(questions, tmp_path, fake_backend, text):
    """It gave "Missing option -N" (the budget it records was unreadable) or, to simulate, "a `uab
    run` directory, not a pool: --allocator None"; --force starts over: it reuses no sample."""
    out = tmp_path / "run"
    assert cli(["run", questions, "--budget", "2", "-o", str(out), "--backend", "scripted", "-q"]).exit_code == 0
    (out / runs.CONFIG).write_text(text)
    for args in (["run", questions, "-o", str(out)], ["run", questions, "-N", "2", "-o", str(out)],
                 ["pool", questions, "-o", str(out)], ["simulate", str(out), "-o", str(tmp_path / "s.jsonl")]):
        result = cli([*args, "-q"])
        lines = result.stderr.strip().splitlines()
        assert result.exit_code == 2 and len(lines) == 1, result.stderr
        assert lines[0].startswith(f"error: {out / runs.CONFIG}: not a uab config.json: "), result.stderr
    assert not (tmp_path / "s.jsonl").exists()
    fake_backend.in_cli()
    result = cli(["run", questions, "--budget", "2", "-o", str(out), "--backend", "scripted", "-q", "--force"])
    assert result.exit_code == 0, result.stderr
    assert orjson.loads((out / runs.CONFIG).read_bytes())["n"] == 2 and fake_backend.drawn == 2 * M


def test_a_vote_temperature_that_does_not_change_the_vote_is_not_recorded(questions, tmp_path):
    """vcs weights read no temperature, nor do the rules that only rank samples: another
    --vote-temperature wrote another votes file, and provenance, with the same votes."""
    out = tmp_path / "run"
    base = ["run", questions, "--budget", "2", "-o", str(out), "--backend", "scripted", "--vcs", "-q"]
    for rule in (["--vote-rule", "weighted", "--vote-signal", "vcs"], ["--vote-rule", "most-confident"]):
        for t in ("0.2", "0.7"):
            assert cli([*base, *rule, "--vote-temperature", t]).exit_code == 0
        assert "temperature" not in orjson.loads((out / runs.CONFIG).read_bytes())["vote"]
        assert "temperature" not in read_jsonl(out / "votes.jsonl")[0]["uab"]["vote"]
    assert len(list(out.glob("votes-*.jsonl"))) == 2
    assert cli([*base, "--vote-rule", "weighted", "--vote-signal", "vcs-pow", "--vote-temperature", "0.7"]).exit_code == 0
    assert orjson.loads((out / runs.CONFIG).read_bytes())["vote"]["temperature"] == 0.7  # (score/10)^(1/T) reads it


@pytest.mark.parametrize("allocation", [["--allocator", "uniform"], ["--signal", "vcs"]])
def test_a_signal_temperature_that_does_not_change_the_allocation_is_not_recorded(questions, tmp_path, allocation):
    """-T scales no p for an allocator that reads none, nor vcs's score/10: another -T wrote
    another votes file with the same allocation and votes."""
    out = tmp_path / "run"
    base = ["run", questions, "--budget", "2", "-o", str(out), "--backend", "scripted", "--vcs", "-q", *allocation]
    for t in ("0.2", "0.7"):
        assert cli([*base, "-T", t]).exit_code == 0
    assert orjson.loads((out / runs.CONFIG).read_bytes())["allocate"]["T"] is None
    assert len(list(out.glob("votes-*.jsonl"))) == 1


@pytest.mark.parametrize("allocator", ["uab", "uniform"])
def test_an_allocation_seed_the_allocator_does_not_read_is_not_recorded(questions, tmp_path, allocator):
    """Only random and adaptive read --allocation-seed: another seed for any other allocator
    wrote another votes file with the same allocation and votes."""
    out = tmp_path / "run"
    base = ["run", questions, "--budget", "2", "-o", str(out), "--backend", "scripted", "-q", "--allocator", allocator]
    for seed in ("0", "5"):
        assert cli([*base, "--allocation-seed", seed]).exit_code == 0
    assert orjson.loads((out / runs.CONFIG).read_bytes())["allocate"]["seed"] is None
    assert len(list(out.glob("votes-*.jsonl"))) == 1


def test_the_random_allocators_seed_is_recorded(questions, tmp_path):
    out = tmp_path / "run"
    base = ["run", questions, "--budget", "3", "-o", str(out), "--backend", "scripted", "-q", "--allocator", "random"]
    assert cli([*base, "--allocation-seed", "5"]).exit_code == 0
    assert orjson.loads((out / runs.CONFIG).read_bytes())["allocate"]["seed"] == 5
    assert all(r["uab"]["allocate"]["seed"] == 5 for r in read_jsonl(out / "votes.jsonl"))


def test_votes_of_every_allocation_setting_are_kept(questions, reference, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(reference, out)
    base = run_args(questions, out)[len(UAB):]
    assert cli([*base, "--allocator", "uniform"]).exit_code == 0
    assert cli([*base, "--vote-rule", "most-confident"]).exit_code == 0
    kept = sorted(p.name for p in out.glob("votes-*.jsonl"))
    assert len(kept) == 3 and any("-uniform-majority-" in n for n in kept)  # the reference's, and these two
    [latest] = [n for n in kept if "-most-confident-" in n]
    assert (out / latest).read_bytes() == (out / "votes.jsonl").read_bytes()
    assert cli([*base, "--allocator", "uniform"]).exit_code == 0  # the same setting again: the same file
    assert sorted(p.name for p in out.glob("votes-*.jsonl")) == kept


def test_a_directory_uab_did_not_make_is_refused_unless_forced(questions, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "votes.jsonl").write_text("my own notes\n")
    result = cli(["run", questions, "--budget", "2", "--out", str(out), "--backend", "scripted", "-q"])
    assert result.exit_code == 2
    assert "not a uab run directory and not empty (votes.jsonl)" in result.stderr
    assert (out / "votes.jsonl").read_text() == "my own notes\n"
    assert sorted(p.name for p in out.iterdir()) == ["votes.jsonl"]
    forced = cli(["run", questions, "--budget", "2", "--out", str(out), "--backend", "scripted", "-q", "--force"])
    assert forced.exit_code == 0 and len(read_jsonl(out / "votes.jsonl")) == M


def test_changed_questions_are_named_once(questions, reference, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(reference, out)
    other = write_jsonl(tmp_path / "other.jsonl", arithmetic(M + 1))  # another count and other questions
    result = cli(run_args(other, out)[len(UAB):])
    assert result.exit_code == 2
    assert result.stderr.count("input questions") == 1, result.stderr


def _rerun(questions, out: Path, *more: str):
    return cli(["run", str(questions), "--budget", str(N), "--out", str(out), "--backend", "scripted", "-q", *more])


def test_edited_gold_and_reordered_lines_resume_without_drawing(questions, reference, tmp_path):
    """The directory's fingerprint covers what the samples depend on (id, question, choices,
    type), not the gold, other fields or the line order: a fixed gold label regrades."""
    out = tmp_path / "run"
    shutil.copytree(reference, out)
    rows = read_jsonl(questions)
    wrong = {r["id"] for r in read_jsonl(reference / "votes.jsonl") if not r["correct"]}
    fixed = [dict(r, answer="12345", note="relabelled") if i == 0 else r for i, r in enumerate(rows)][::-1]
    edited = write_jsonl(tmp_path / "edited.jsonl", fixed)
    result = _rerun(edited, out)
    assert result.exit_code == 0, result.stderr
    assert lines(out / runs.CHECKPOINT) == N * M  # nothing drawn
    votes = {r["id"]: r for r in read_jsonl(out / "votes.jsonl")}
    assert [r["id"] for r in read_jsonl(out / "votes.jsonl")] == [r["id"] for r in fixed]
    assert votes[rows[0]["id"]]["answer"] == "12345" and votes[rows[0]["id"]]["correct"] is False
    assert {i for i, r in votes.items() if not r["correct"]} == wrong | {rows[0]["id"]}
    for changed in ([dict(rows[0], question=rows[0]["question"] + " ")] + rows[1:],  # what the prompt shows
                    [dict(rows[0], choices=["1", "2"])] + rows[1:],
                    [dict(rows[0], type="text")] + rows[1:],
                    [dict(rows[0], id="renamed")] + rows[1:]):  # the samples' seeds
        result = _rerun(write_jsonl(tmp_path / "changed.jsonl", changed), out)
        assert result.exit_code == 2 and "input questions" in result.stderr, result.stderr


def test_a_config_from_before_the_questions_fingerprint_still_resumes(questions, reference, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(reference, out)
    config = orjson.loads((out / runs.CONFIG).read_bytes())
    assert config["questions"] == runs.questions_fingerprint(read_jsonl(questions))
    del config["questions"]  # as uab wrote it before
    (out / runs.CONFIG).write_bytes(orjson.dumps(config))
    result = _rerun(questions, out)
    assert result.exit_code == 0, result.stderr
    assert_complete(out, reference)
    assert "questions" in orjson.loads((out / runs.CONFIG).read_bytes())  # the config is brought up to date

    (out / runs.CONFIG).write_bytes(orjson.dumps(config))  # the old config again
    edited = write_jsonl(tmp_path / "edited.jsonl", [dict(r, answer="0") for r in read_jsonl(questions)])
    result = _rerun(edited, out)  # an old config cannot tell a gold edit from another question
    assert result.exit_code == 2 and "input questions" in result.stderr


def test_a_pool_resumes_on_edited_gold(tmp_path):
    rows = arithmetic(6)
    first = write_jsonl(tmp_path / "q.jsonl", rows)
    args = ["-K", "3", "-o", str(tmp_path / "pool"), "--backend", "scripted", "-q"]
    assert cli(["pool", first, *args]).exit_code == 0
    edited = write_jsonl(tmp_path / "edited.jsonl", [dict(r, answer="99") for r in rows[::-1]])
    result = cli(["pool", edited, *args])
    assert result.exit_code == 0, result.stderr
    pooled = read_jsonl(tmp_path / "pool" / runs.POOL)
    assert [r["answer"] for r in pooled] == ["99"] * 6 and all(len(r["samples"]) == 3 for r in pooled)
    assert lines(tmp_path / "pool" / runs.CHECKPOINT) == 18


def test_a_smaller_pool_k_writes_the_first_k_and_keeps_the_rest(tmp_path):
    """README: a smaller -K rewrites pool.jsonl with each question's first K samples; the others
    stay in the checkpoint, so the larger K again draws nothing."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(5))
    args = ["-o", str(tmp_path / "pool"), "--backend", "scripted", "-q"]
    assert cli(["pool", q, "-K", "6", *args]).exit_code == 0
    full = read_jsonl(tmp_path / "pool" / runs.POOL)
    assert cli(["pool", q, "-K", "2", *args]).exit_code == 0
    assert [r["samples"] for r in read_jsonl(tmp_path / "pool" / runs.POOL)] == [r["samples"][:2] for r in full]
    assert lines(tmp_path / "pool" / runs.CHECKPOINT) == 30
    result = cli(["pool", q, "-K", "6", *args[:-1]])
    assert "(0 drawn now)" in " ".join(result.stderr.split()) and read_jsonl(tmp_path / "pool" / runs.POOL) == full
    result = cli(["pool", q, "-o", str(tmp_path / "pool")])  # no -K: the directory's (6), its backend too
    said = " ".join(result.stderr.split())  # rich wraps the line at the terminal's width
    assert result.exit_code == 0 and "5 questions × 6 samples" in said and "(0 drawn now)" in said
    fresh = cli(["pool", q, "-o", str(tmp_path / "new"), "--backend", "scripted"])
    assert fresh.exit_code == 2 and "Missing option '-K' / '--samples'" in fresh.stderr
    assert not (tmp_path / "new").exists()
