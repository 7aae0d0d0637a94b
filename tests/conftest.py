"""Shared fixtures and helpers: a clean environment without API keys, JSONL files, question and
Phase-1 record builders, a script of ``scripts/`` as a module, the CLI in-process, a fake backend and a fake clock, a ``uab``
subprocess stopped at a known sample, and the bad-input corpus of ``tests/data/bad/``."""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import re
import select
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from uab_cli.backends import BACKENDS
from uab_cli.backends.base import Retry, SampleRequest
from uab_cli.backends.scripted import ScriptedBackend

KEY_VARS = ("CO_API_KEY", "COHERE_API_KEY", "OPENAI_API_KEY")


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch):
    for var in KEY_VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(autouse=True)
def closed_backends(monkeypatch):
    """Every remote backend a test makes is closed when the test ends, as uab closes its own: one
    left open (``CohereBackend(...).generate(...)``) holds its sockets until some later garbage
    collection, whose ResourceWarnings then land in whichever test that is."""
    from uab_cli.backends.remote import RemoteBackend

    made = []
    init = RemoteBackend.__init__

    @functools.wraps(init)
    def tracked(self, *args, **kwargs):
        init(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(RemoteBackend, "__init__", tracked)
    yield
    for backend in made:
        if hasattr(backend, "_client"):  # its constructor may have failed after RemoteBackend's
            backend.close()


# --- files and records ---------------------------------------------------------------


def script(name: str):
    """``scripts/NAME.py`` loaded as a module (the scripts are not a package)."""
    spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parent.parent / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the script loads
    spec.loader.exec_module(module)
    return module


def pyproject() -> dict:
    """``pyproject.toml``, parsed: by tomllib, or on Python 3.10 by tomli, which pytest depends on
    there (skips the test without it)."""
    toml = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli")
    return toml.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())


def skip_unless_toml_settings(name: str) -> None:
    """Skip a test of settings file ``name`` where uab refuses a ``.toml`` one: Python 3.10 has no
    tomllib (``test_a_toml_settings_file_before_python_3_11_is_refused_in_one_line``)."""
    if name.lower().endswith(".toml") and sys.version_info < (3, 11):
        pytest.skip("TOML settings need Python >= 3.11 (tomllib)")


def json_reads(depth: int) -> bool:
    """Whether Python's json reads an array nested ``depth`` levels deep: its C reader stops near the
    recursion limit (about 1,000 levels) up to Python 3.11, at about 1,500 on 3.12 and 10,000 on 3.13."""
    try:
        json.loads("[" * depth + "]" * depth)
    except RecursionError:
        return False
    return True


def write_jsonl(path, rows) -> str:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return str(path)


def read_jsonl(path) -> list[dict]:
    with open(path, "rb") as fh:
        return [orjson.loads(line) for line in fh]


def system_refusing_tokenizer():
    """A tokenizer whose chat template refuses a system message by its own ``raise_exception``,
    as Gemma's does ("System role not supported"); skips the test without transformers."""
    transformers = pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizers.Tokenizer(tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]")),
        unk_token="[UNK]", chat_template="{% for m in messages %}{% if m.role == 'system' %}"
                                         "{{ raise_exception('System role not supported') }}{% endif %}"
                                         "{{ m.content }}\n{% endfor %}")


def arithmetic(m: int) -> list[dict]:
    """m arithmetic questions with gold answers."""
    return [{"id": f"q{i}", "question": f"What is {i} + {2 * i + 1}?", "answer": str(3 * i + 1)} for i in range(m)]


def sampled(i: int, samples: int = 1, **extra) -> dict:
    """Question ``i`` as a hand-made Phase-1 record (no model needed) with ``samples`` samples,
    the first answering ``i`` (the gold is ``i + 1``); the line's length varies with ``i``, so
    lines fall across chunk and block boundaries. ``extra`` adds fields."""
    first = {"index": 0, "phase": 1, "text": f"Answer: {i}", "answer": str(i), "anll": 0.1 + i / 100}
    more = [{"index": j, "phase": 1, "text": f"Answer: {(i + j) % 4}" + " so" * ((i * j) % 23),
             "answer": str((i + j) % 4), "anll": (i * j) % 10 / 10} for j in range(1, samples)]
    return {"id": f"q{i}", "question": f"What is {i} + 1?" + " pad" * (i % 7), "answer": str(i + 1),
            "samples": [first, *more], **extra}


def sampled_rows(m: int) -> list[dict]:
    """``sampled(i)`` for i < m with 1-3 samples each and a level on every seventh."""
    return [sampled(i, 1 + i % 3, **({"level": 1 + i % 3} if i % 7 == 0 else {})) for i in range(m)]


# --- the CLI, a fake backend, a fake clock ---------------------------------------------


def cli(args: list[str], stdin: bytes | None = None):
    """Run the CLI in-process through typer's runner; stderr is kept apart from stdout."""
    from typer.testing import CliRunner

    from uab_cli.cli import app

    return CliRunner().invoke(app, args, input=stdin, catch_exceptions=False)


class FakeBackend:
    """What the ``fake_backend`` fixture gives: a maker of scripted backends (canned completions, a
    pure function of prompt and seed, right answers confident) that keeps each one it makes.

    ``fake_backend()`` is a backend; ``fake_backend`` itself is a backend factory where one is
    expected (``runs.run``). ``fake_backend(fail_after=n)`` and ``fake_backend.failing(n)`` (a
    factory) raise ``BackendError`` once n samples are drawn. ``made`` lists the backends made,
    ``calls`` the requests of every ``generate`` call in order, ``drawn`` counts samples.
    ``in_cli(fail_after=n)`` puts such backends behind ``--backend scripted`` for the test.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch):
        self.made: list[ScriptedBackend] = []
        self._monkeypatch = monkeypatch

    def __call__(self, model: str = "scripted", fail_after: int | None = None, **options) -> ScriptedBackend:
        backend = ScriptedBackend(model, fail_after=fail_after, **options)
        self.made.append(backend)
        return backend

    def failing(self, after: int) -> Callable[[], ScriptedBackend]:
        """A factory of backends that fail once ``after`` samples are drawn."""
        return lambda: self(fail_after=after)

    @property
    def calls(self) -> list[list[SampleRequest]]:
        return [call for backend in self.made for call in backend.calls]

    @property
    def drawn(self) -> int:
        return sum(backend.drawn for backend in self.made)

    def in_cli(self, fail_after: int | None = None) -> None:
        """``--backend scripted`` makes its backends here, with ``fail_after``, until the test ends."""

        fake = self

        class Scripted(ScriptedBackend):  # the registry's entry: a class, made by this fixture
            def __new__(cls, model: str = "scripted", **options):
                return fake(model, fail_after, **options)

        self._monkeypatch.setitem(BACKENDS, "scripted", lambda: Scripted)


@pytest.fixture
def fake_backend(monkeypatch) -> FakeBackend:
    return FakeBackend(monkeypatch)


class FakeClock:
    """A clock for code that takes one: ``now`` moves only when the test sets it or ``sleep``
    is called, so timed behaviour is tested without waiting and without races."""

    def __init__(self, now: float = 0.0):
        self.now = now

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def backs_off(waits: list[float], nominal: list[float]) -> bool:
    """Whether ``waits`` follow the ``nominal`` exponential delays, each jittered to between
    its half and all of it."""
    return len(waits) == len(nominal) and all(d / 2 <= w <= d for w, d in zip(waits, nominal))


def no_sleep(attempts: int = 6, log: list[float] | None = None) -> Retry:
    """A retry policy that records its delays in ``log`` instead of sleeping."""
    delays = log if log is not None else []
    return Retry(attempts=attempts, sleep=delays.append)


# --- a `uab` subprocess the test stops, kills or fails at a known sample -------------------

CONTROLLED_UAB = Path(__file__).with_name("controlled_uab.py")


def start_uab(args: list[str], hold_after: int | None = None, fail_after: int | None = None,
              hold_in_block: bool = False, delay: float = 0.0, **popen) -> subprocess.Popen:
    """``uab ARGS`` as a subprocess (``popen``: ``subprocess.Popen``'s arguments) whose
    ``--backend scripted`` stops once ``hold_after`` samples are drawn and checkpointed, until
    its stdin closes (``communicate()`` closes it), or fails once ``fail_after`` are drawn;
    ``hold_in_block``: whose ``allocate`` or ``vote`` stops so in a worker process, at the
    input's first block. ``wait_held(proc)`` returns when it has stopped: a kill then lands at
    a known sample, with no sleep to pace the run. ``delay``: seconds each sample takes (a slow model)."""
    command = [sys.executable, str(CONTROLLED_UAB), "--delay", str(delay)]
    if fail_after is not None:
        command += ["--fail-after", str(fail_after)]
    if hold_after is None and not hold_in_block:
        return subprocess.Popen([*command, "--", *args], **popen)
    hold = ["--hold-in-block"] if hold_in_block else ["--hold-after", str(hold_after)]
    read, write = os.pipe()
    try:
        proc = subprocess.Popen([*command, *hold, "--held-fd", str(write), "--", *args],
                                stdin=subprocess.PIPE, pass_fds=(write,), **popen)
    except BaseException:
        os.close(read)
        raise
    finally:
        os.close(write)
    proc.held_fd = read  # type: ignore[attr-defined]
    return proc


def wait_held(proc: subprocess.Popen, timeout: float = 60) -> None:
    """Wait until a ``start_uab(..., hold_after=n)`` process has drawn its n samples and stopped."""
    try:
        ready, _, _ = select.select([proc.held_fd], [], [], timeout)
        said = os.read(proc.held_fd, 64) if ready else b""
    finally:
        os.close(proc.held_fd)
    if said != b"held\n":
        proc.kill()
        _, stderr = proc.communicate()
        pytest.fail(f"the run did not stop at its sample (exit {proc.returncode}): {(stderr or b'').decode()}")


# --- the bad-input corpus: tests/data/bad/, one failure per file --------------------------

BAD = Path(__file__).parent / "data" / "bad"
OUT = "out.jsonl"
STAGES = {
    "phase1": ["phase1", "{f}", "--backend", "scripted", "-o", "{o}"],
    "allocate": ["allocate", "{f}", "--budget", "4", "-o", "{o}"],
    "phase2": ["phase2", "{f}", "--backend", "scripted", "-o", "{o}"],
    "vote": ["vote", "{f}", "-o", "{o}"],
    "run": ["run", "{f}", "--budget", "4", "--out", "{o}", "--backend", "scripted"],
}

# (file in tests/data/bad, stage, expected substring, line of the error; None: no line)
CASES = [
    ("invalid_json.jsonl", "phase1", "invalid JSON", 2),
    ("truncated_last_line.jsonl", "phase1", "truncated last line", 3),
    ("non_utf8.jsonl", "phase1", "not valid UTF-8 at column 30 (byte 0xe9): save the file as UTF-8", 2),
    ("blank_line.jsonl", "phase1", "blank line", 2),
    ("whitespace_line.jsonl", "run", "blank line", 3),
    ("toplevel_array.jsonl", "phase1", "expected a JSON object, got list", 1),
    ("toplevel_number.jsonl", "phase1", "expected a JSON object, got int", 2),
    ("toplevel_string.jsonl", "run", "expected a JSON object, got str", 3),
    ("missing_question.jsonl", "phase1", "has no 'question'", 2),
    ("misspelled_question.jsonl", "run", "did you mean 'qestion'", 1),
    ("empty_question.jsonl", "phase1", "'question' must be a non-empty string", 3),
    ("nonstring_question.jsonl", "vote", "'question' must be a non-empty string", 1),
    ("nonstring_id.jsonl", "phase1", "'id' must be a non-empty string, got 2", 2),
    ("empty_id.jsonl", "run", "'id' must be a non-empty string", 1),
    ("missing_id.jsonl", "phase1", "missing field 'id'", 3),
    ("results_file.jsonl", "vote", "missing field 'id': this is a `uab simulate -o` results file (for `uab report`",
     1),
    ("results_file.jsonl", "allocate", "this is a `uab simulate -o` results file", 1),
    ("duplicate_id.jsonl", "phase1", "duplicate id 'q1'", 3),
    ("duplicate_id.jsonl", "run", "duplicate id 'q1'", 3),
    ("choices_not_list.jsonl", "phase1", "'choices' must be a list of at least 2 strings", 1),
    ("choices_empty.jsonl", "phase1", "'choices' must be a list of at least 2 strings, got 0", 2),
    ("choices_one.jsonl", "run", "'choices' must be a list of at least 2 strings, got 1", 2),
    ("gold_letter_outside_choices.jsonl", "phase1", "gold answer 'E' is neither a choice letter A-D", 1),
    ("answer_not_scalar.jsonl", "phase1", "'answer' must be a string or number", 2),
    ("wrong_type.jsonl", "phase1", "'type' must be one of math, mc, text, got 'arithmetic'", 2),
    ("mc_without_choices.jsonl", "run", "type 'mc' needs 'choices'", 1),
    ("empty.jsonl", "phase1", "empty input", None),
    ("empty.jsonl", "vote", "empty input", None),
    ("empty.jsonl", "run", "empty input", None),
    # a stage file fed to the wrong stage
    ("no_samples.jsonl", "allocate", "has no 'samples': run `uab phase1` first", 1),
    ("no_samples.jsonl", "vote", "has no 'samples': run `uab phase1` first", 1),
    ("no_samples.jsonl", "phase2", "has no 'samples'", 1),
    ("empty_samples.jsonl", "allocate", "record 'q2' has no samples: run `uab phase1` first", 2),
    ("empty_samples.jsonl", "vote", "record 'q2' has no samples: run `uab phase1` first", 2),
    ("no_extra.jsonl", "phase2", "has no 'extra': run `uab allocate` first", 1),
    ("extra_missing_one.jsonl", "phase2", "record 'q2' has no 'extra'", 2),
    # bad stage fields
    ("extra_negative.jsonl", "phase2", "'extra' must be a non-negative integer, got -1", 1),
    ("extra_float.jsonl", "phase2", "'extra' must be a non-negative integer, got 1.5", 2),
    ("extra_string.jsonl", "phase2", "'extra' must be a non-negative integer, got '2'", 1),
    ("extra_bool.jsonl", "phase2", "'extra' must be a non-negative integer, got True", 2),
    ("extra_string.jsonl", "vote", "'extra' must be a non-negative integer, got '2'", 1),  # it picks the votes
    # more than the allocation its provenance records could give one question (a huge one ran out of memory)
    ("extra_over_budget.jsonl", "phase2", "'extra' 1000000000 over 1 Phase-1 sample(s) is more than its "
                                          "allocation's budget N·M (4, in its provenance)", 2),
    ("extra_over_max_per_question.jsonl", "phase2", "'extra' 3 over 1 Phase-1 sample(s) is more than its "
                                                    "allocation's --max-per-question (3", 2),
    ("anll_non_numeric.jsonl", "allocate", "sample 'anll' must be a number or null, got '0.1'", 2),
    ("anll_non_numeric.jsonl", "phase1", "sample 'anll' must be a number", 2),
    ("confidence_non_integer.jsonl", "vote", "sample 'confidence' must be an integer from 1 to 10 or null", 1),
    ("confidence_out_of_range.jsonl", "allocate", "sample 'confidence' must be an integer from 1 to 10 or null, "
                                                  "got 99", 2),
    ("samples_not_list.jsonl", "allocate", "'samples' must be a list of objects", 2),
    ("samples_not_list.jsonl", "phase1", "'samples' must be a list of objects", 2),
    ("samples_empty_object.jsonl", "vote", "'samples' must be a list of objects", 1),
    ("sample_missing_text.jsonl", "vote", "each sample needs a string 'text'", 1),
    ("sample_bad_phase.jsonl", "allocate", "sample 'phase' must be 1 or 2, got 3", 2),
    ("sample_answer_not_string.jsonl", "vote", "sample 'answer' must be a string or null, got 4", 2),
    # a sample given twice (a line copied by hand) voted, and counted against the budget, twice
    ("sample_index_twice.jsonl", "vote", "record 'q2' holds sample index 1 twice", 2),
    ("sample_index_twice.jsonl", "allocate", "record 'q2' holds sample index 1 twice", 2),
    ("sample_index_twice.jsonl", "phase2", "record 'q2' holds sample index 1 twice", 2),
    ("tokens_negative.jsonl", "vote", "sample 'n_tokens' must be a non-negative integer or null, got -3", 2),
    ("provenance_not_object.jsonl", "allocate", "'uab' (what produced the record) must be an object, got str", 1),
]


def check_error(result, name: str, line: int | None, expected: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    errors = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(errors) == 1, result.stderr
    where = re.escape(name) + (f":{line}" if line is not None else "")
    assert re.fullmatch(rf"error: {where}: .+", errors[0]), errors[0]
    assert expected in errors[0]
    assert result.stdout == ""


def check_no_output(directory: Path, stage: str) -> None:
    """Neither ``-o out.jsonl`` (for ``run``: the ``--out`` directory) nor a temp file is left."""
    assert not (directory / OUT).exists()
    assert not list(directory.glob(f".{OUT}.*.tmp"))
