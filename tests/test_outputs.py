"""Where outputs go: a bad ``-o`` fails at once (one ``error:`` line, exit 2, nothing read,
drawn or created), and a write that fails anyway is a user error, never a traceback."""

from __future__ import annotations

import errno
import os

import pytest
from conftest import BAD, arithmetic, check_error, cli, sampled_rows, write_jsonl

from uab_cli import jsonl
from uab_cli.errors import UabError

# Each command with an input it would fail on if it read it (a file of bad JSON) and the
# options it needs; {o} is the output. The output is checked first, so its error is the one.
BROKEN = str(BAD / "invalid_json.jsonl")
COMMANDS = {
    "phase1": ["phase1", BROKEN, "--backend", "scripted", "-o", "{o}"],
    "allocate": ["allocate", BROKEN, "--budget", "4", "-o", "{o}"],
    "phase2": ["phase2", BROKEN, "--backend", "scripted", "-o", "{o}"],
    "vote": ["vote", BROKEN, "-o", "{o}"],
    "convert": ["convert", BROKEN, "-o", "{o}"],
    "simulate": ["simulate", BROKEN, "--budgets", "2", "-o", "{o}"],
}
DIRECTORIES = {
    "run": (["run", BROKEN, "--budget", "4", "--backend", "scripted", "-o", "{o}"], "run directory"),
    "pool": (["pool", BROKEN, "-K", "2", "--backend", "scripted", "-o", "{o}"], "pool directory"),
    "report": (["report", BROKEN, "-o", "{o}"], "report directory"),
}


def _args(template: list[str], out) -> list[str]:
    return [a.replace("{o}", str(out)) for a in template]


@pytest.mark.parametrize("command", COMMANDS)
def test_an_output_that_is_a_directory_fails_first(tmp_path, command):
    result = cli(_args(COMMANDS[command], tmp_path))
    check_error(result, str(tmp_path), None, "it is a directory (-o takes a file)")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("command", COMMANDS)
def test_an_output_under_a_file_fails_first(tmp_path, command):
    (tmp_path / "plain").write_text("a file\n")
    out = tmp_path / "plain" / "sub" / "out.jsonl"
    result = cli(_args(COMMANDS[command], out))
    check_error(result, str(out), None, f"{tmp_path / 'plain'} is a file, not a directory")
    assert sorted(os.listdir(tmp_path)) == ["plain"]


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
@pytest.mark.parametrize("command", [*COMMANDS, *DIRECTORIES])
def test_an_output_where_nothing_can_be_created_fails_first(command):
    """/proc takes no new files, even from root (for whom os.access says yes)."""
    template = COMMANDS.get(command) or DIRECTORIES[command][0]
    result = cli(_args(template, "/proc/nope/x.jsonl"))
    check_error(result, "/proc/nope/x.jsonl", None, "cannot create files in /proc")


@pytest.mark.parametrize("command", DIRECTORIES)
def test_an_output_directory_that_is_a_file_fails_first(tmp_path, command):
    template, what = DIRECTORIES[command]
    (tmp_path / "plain").write_text("a file\n")
    result = cli(_args(template, tmp_path / "plain"))
    check_error(result, str(tmp_path / "plain"), None, f"cannot use as a {what}: not a directory")
    result = cli(_args(template, tmp_path / "plain" / "sub"))
    check_error(result, str(tmp_path / "plain" / "sub"), None, "is a file, not a directory")
    assert sorted(os.listdir(tmp_path)) == ["plain"]


def test_missing_folders_are_made_only_when_the_output_is_written(tmp_path):
    out = tmp_path / "new" / "deeper" / "votes.jsonl"
    result = cli(["vote", BROKEN, "-o", str(out)])  # fails on its input: creates nothing
    assert result.exit_code == 2 and "has no 'samples'" in result.stderr
    assert os.listdir(tmp_path) == []
    good = write_jsonl(tmp_path / "sampled.jsonl", sampled_rows(3))
    assert cli(["vote", good, "-o", str(out), "-q"]).exit_code == 0
    assert out.exists() and sorted(os.listdir(out.parent)) == ["votes.jsonl"]


def test_check_output_takes_stdout_and_writable_places(tmp_path):
    jsonl.check_output("-")
    jsonl.check_output(str(tmp_path / "a" / "b.jsonl"))
    jsonl.check_output(str(tmp_path), "run directory")
    jsonl.check_output(str(tmp_path / "new"), "run directory")
    assert os.listdir(tmp_path) == []  # the probe leaves nothing
    with pytest.raises(UabError, match="the path is empty"):
        jsonl.check_output("")


def test_a_failing_write_is_a_user_error(tmp_path, monkeypatch):
    """The safety net: whatever the check missed, a failed write is one ``UabError`` naming the
    path, and no temporary file stays."""
    out = tmp_path / "out.jsonl"

    def full(src, dst):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(jsonl.os, "replace", full)
    with pytest.raises(UabError) as caught:
        jsonl.write_records(str(out), [{"id": "a"}])
    assert str(caught.value) == f"{out}: cannot write: No space left on device"
    assert os.listdir(tmp_path) == []

    (tmp_path / "plain").write_text("")
    with pytest.raises(UabError, match="cannot write: File exists"):
        jsonl.write_records(str(tmp_path / "plain" / "out.jsonl"), [{"id": "a"}])


def test_a_disk_full_inside_the_block_is_a_user_error_and_other_errors_pass(tmp_path):
    out = str(tmp_path / "out.jsonl")
    with pytest.raises(UabError, match="No space left on device"):
        with jsonl.atomic_output(out):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    with pytest.raises(FileNotFoundError):  # the caller's own error (reading an input) is not a write error
        with jsonl.atomic_output(out):
            open(tmp_path / "missing")
    assert os.listdir(tmp_path) == []


def test_a_failure_to_write_after_the_block_is_a_user_error(tmp_path, monkeypatch):
    """An error syncing the finished output (EIO, not a full disk) names the output, not a
    traceback, and leaves no file: the block is over, so it is the write's, not the caller's."""
    out = tmp_path / "out.jsonl"

    def failing(fd):
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(jsonl.os, "fsync", failing)
    with pytest.raises(UabError) as caught:
        with jsonl.atomic_output(str(out)) as fh:
            fh.write(b"{}\n")
    assert str(caught.value) == f"{out}: cannot write: {os.strerror(errno.EIO)}"
    assert os.listdir(tmp_path) == []


def test_an_output_ending_in_a_slash_fails_first(tmp_path):
    """``-o new/`` names a directory even where none is there yet: refused, not written as ``new``."""
    out = f"{tmp_path / 'new'}{os.sep}"
    result = cli(_args(COMMANDS["vote"], out))
    check_error(result, out, None, "it names a directory (-o takes a file)")
    assert os.listdir(tmp_path) == []


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("to", ["-o", ">"])
def test_a_full_device_or_stdout_is_one_line_and_exit_2(tmp_path, to):
    """Written in place (a device, stdout), a failure to write is a user error too, not a traceback."""
    import subprocess
    import sys

    rows = write_jsonl(tmp_path / "p.jsonl", sampled_rows(3))
    command = [sys.executable, "-m", "uab_cli.cli", "vote", rows, "-q"]
    with open("/dev/full", "wb") as full:
        done = subprocess.run(command + (["-o", "/dev/full"] if to == "-o" else []), capture_output=to == "-o",
                              stdout=None if to == "-o" else full, stderr=None if to == "-o" else subprocess.PIPE)
    lines = done.stderr.decode().strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr.decode()
    assert lines[0] == f"error: {'/dev/full' if to == '-o' else 'stdout'}: cannot write: No space left on device"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_stdout_under_what_report_prints_is_one_line_and_exit_2(tmp_path):
    """`uab report RESULTS -o DIR > list` on a full disk: one line, exit 2, and DIR as it was (it
    was written in full before the list of its files failed): a new one not made, an old one's
    files kept."""
    import subprocess
    import sys

    results = os.path.join(os.path.dirname(__file__), "..", "results", "smollm2-mc", "simulate.jsonl")
    old = tmp_path / "old"
    old.mkdir()
    (old / "summary.md").write_text("old")
    for rep in (tmp_path / "new", old):
        with open("/dev/full", "wb") as full:
            done = subprocess.run([sys.executable, "-m", "uab_cli.cli", "report", results, "-o", str(rep)],
                                  stdout=full, stderr=subprocess.PIPE)
        assert done.returncode == 2 and "Traceback" not in done.stderr.decode()
        assert done.stderr.decode().strip().splitlines()[-1] == "error: stdout: cannot write: No space left on device"
    assert sorted(os.listdir(tmp_path)) == ["old"]
    assert os.listdir(old) == ["summary.md"] and (old / "summary.md").read_text() == "old"


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_report_stopped_while_its_files_replace_the_old_ones_replaces_them_all(tmp_path, monkeypatch, sig):
    """Ctrl-C (or SIGTERM) between two of the renames that put a report's files in place left some
    files new and the others old (and a plot it could not draw, the earlier report's, kept),
    "interrupted: nothing was written"; now the renames finish first, then it stops, exit 130 (143),
    saying so."""
    import signal

    results = os.path.join(os.path.dirname(__file__), "..", "results", "smollm2-mc", "simulate.jsonl")
    rep = tmp_path / "rep"
    rep.mkdir()
    names = ["accuracy_vs_budget.png", "cost_at_accuracy.png", "signal_deciles.png", "summary.md",
             "allocation_by_level.png"]  # the last one it cannot draw (no level field): the old one goes
    for name in names:
        (rep / name).write_bytes(b"old")
    replace, renamed = os.replace, []

    def stopped_between(src, dst):
        replace(src, dst)
        if os.path.dirname(os.fspath(dst)) == str(rep):
            renamed.append(dst)
            if len(renamed) == 1:
                signal.raise_signal(getattr(signal, sig))

    monkeypatch.setattr(jsonl.os, "replace", stopped_between)
    result = cli(["report", results, "-o", str(rep)])
    code = 130 if sig == "SIGINT" else 128 + signal.SIGTERM
    assert result.exit_code == code, result.stderr
    assert len(renamed) == 4 and sorted(os.listdir(rep)) == sorted(names[:4])
    assert all((rep / name).read_bytes() != b"old" for name in names[:4])
    stopped = "interrupted" if sig == "SIGINT" else "stopped by SIGTERM"
    assert result.stderr.splitlines()[-1] == f"{stopped} after its output was written in full."


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_report_stopped_while_a_rename_fails_says_the_error_and_exits_as_the_signal(tmp_path, monkeypatch, sig):
    """A Ctrl-C (or SIGTERM) held while report's files replaced their old copies was dropped when a rename
    then failed: the error's exit 2, as if no signal had come; now the error's line, then exit 130 (143)."""
    import signal

    results = os.path.join(os.path.dirname(__file__), "..", "results", "smollm2-mc", "simulate.jsonl")
    rep = tmp_path / "rep"
    replace, renamed = os.replace, []

    def stopped_then_failed(src, dst):
        if os.path.dirname(os.fspath(dst)) == str(rep):
            renamed.append(dst)
            if len(renamed) == 1:
                signal.raise_signal(getattr(signal, sig))
            else:
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), dst)
        replace(src, dst)

    monkeypatch.setattr(jsonl.os, "replace", stopped_then_failed)
    result = cli(["report", results, "-o", str(rep)])
    assert result.exit_code == 128 + getattr(signal, sig), result.stderr
    assert len(renamed) == 2 and result.stderr.splitlines()[-1].startswith(f"error: {renamed[1]}: ")


def test_an_earlier_plot_that_cannot_be_removed_is_one_line_and_exit_2(tmp_path):
    """A plot report cannot draw, whose earlier copy it removes, that would not go (here a folder in
    its place; a file without permission) ended in a traceback: its OSError was no failure to write."""
    results = os.path.join(os.path.dirname(__file__), "..", "results", "smollm2-mc", "simulate.jsonl")
    stale = tmp_path / "rep" / "allocation_by_level.png"  # not drawn: the questions have no level field
    (stale / "inside").mkdir(parents=True)
    result = cli(["report", results, "-o", str(tmp_path / "rep")])
    assert result.exit_code == 2, result.stderr
    said = result.stderr.splitlines()[-1]  # Linux: Is a directory; macOS: Operation not permitted
    assert said.startswith(f"error: {stale}: cannot remove: ") and said.endswith(" (the new files are written)")
    assert (tmp_path / "rep" / "summary.md").exists() and stale.is_dir()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["--help"], ["-h"], ["--version"], ["vote", "--help"]])
def test_help_or_version_to_a_full_stdout_is_one_line_and_exit_2(args):
    """`uab --help > log` on a full disk: uab's own help and --version ended in a traceback, exit 1
    (a backend failure's code); now one line, exit 2, as a command's help did."""
    import subprocess
    import sys

    with open("/dev/full", "wb") as full:
        done = subprocess.run([sys.executable, "-m", "uab_cli", *args], stdout=full, stderr=subprocess.PIPE,
                              timeout=120)
    assert done.returncode == 2 and done.stderr.decode() == "error: stdout: cannot write: No space left on device\n", \
        done.stderr.decode()


def test_a_fifo_or_device_output_is_written_in_place_not_replaced(tmp_path):
    """`-o /dev/null` (here a FIFO, safe to test as root) is written to, never renamed over:
    an atomic rename would replace the device or FIFO with a regular file."""
    import stat
    import threading

    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()), daemon=True)
    reader.start()
    result = cli(["vote", write_jsonl(tmp_path / "s.jsonl", sampled_rows(5)), "-o", str(fifo), "-q"])
    reader.join(timeout=30)
    assert result.exit_code == 0, result.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert got and got[0].count(b"\n") == 5


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_a_stage_stopped_while_it_writes_stdout_leaves_a_stream_the_next_stage_refuses(tmp_path, sig):
    """`uab phase1 Q | uab allocate -` with phase1 stopped while it writes (a pipe holds 64 KiB):
    the records it wrote end with an unfinished line that says the output is cut short, so the
    next stage exits 2 rather than allocating the first few hundred questions as the whole set
    (they ended at a whole line, with exit 0 and "nothing was written" on phase1's stderr)."""
    import signal
    import subprocess
    import sys

    from conftest import arithmetic

    questions = write_jsonl(tmp_path / "q.jsonl", arithmetic(3000))  # about 2 MiB of Phase-1 records
    proc = subprocess.Popen([sys.executable, "-m", "uab_cli", "phase1", questions, "--backend", "scripted", "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        first = os.read(proc.stdout.fileno(), 1)  # it writes now, and blocks once the pipe is full
        proc.send_signal(getattr(signal, sig))
        written, stderr = proc.communicate(timeout=120)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 128 + getattr(signal, sig), stderr
    assert b"nothing was written" not in stderr and b"cut short" in stderr, stderr
    result = cli(["allocate", "-", "--budget", "4", "-q"], stdin=first + written)
    assert result.exit_code == 2 and result.stdout == "", result.stdout[:200]
    assert "cut short" in result.stderr and result.stderr.startswith("error: <stdin>:"), result.stderr


def _sampling_source(tmp_path, stage: str, m: int) -> str:
    """An input with m samples to draw for ``stage`` (phase1: questions; phase2: allocated at N = 2)."""
    from conftest import arithmetic

    source = write_jsonl(tmp_path / "q.jsonl", arithmetic(m))
    if stage == "phase2":  # m Phase-2 samples to draw
        assert cli(["phase1", source, "--backend", "scripted", "-q", "-o", str(tmp_path / "p1.jsonl")]).exit_code == 0
        assert cli(["allocate", str(tmp_path / "p1.jsonl"), "--budget", "2", "-q",
                    "-o", str(tmp_path / "a.jsonl")]).exit_code == 0
        source = str(tmp_path / "a.jsonl")
    return source


def _start_slow(args: list[str], **popen):
    """``uab ARGS`` drawing a sample each 0.05 s (300 of them: 15 s), its progress one line as the stage ends."""
    from conftest import start_uab

    env = {**os.environ, "UAB_PROGRESS_INTERVAL": "3600"}
    return start_uab([*args, "--backend", "scripted"], delay=0.05, env=env, **popen)


@pytest.mark.parametrize("stage", ["phase1", "phase2", "judge"])
def test_a_sampling_stage_whose_stdout_reader_is_gone_stops_drawing(tmp_path, stage):
    """`uab phase1 Q | uab allocate - --bogus`: the next stage exits at once, and the sampling stage
    stops within a second or so, exit 141 in silence, as a `| head` stop does (it drew every sample,
    hours on a real model, and saw the closed pipe only at its final write). `phase1 --judge` stops
    so in its judge pass too (it asked the judge about every question, then stopped in Phase 1)."""
    import re
    import subprocess
    import sys

    m = 300
    args = ["phase1", "--judge"] if stage == "judge" else [stage]
    proc = _start_slow([*args, _sampling_source(tmp_path, stage, m)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        reader = subprocess.run([sys.executable, "-m", "uab_cli", "allocate", "-", "--bogus"],
                                stdin=proc.stdout, capture_output=True, timeout=120)
        proc.stdout.close()  # the reader's end is closed: the reader has exited
        stderr = proc.communicate(timeout=120)[1].decode()
    finally:
        proc.kill()
        proc.wait()
    assert reader.returncode == 2, reader.stderr
    assert proc.returncode == 141, stderr
    if stage == "judge":  # stopped before the judge's line, and Phase 1's
        assert stderr == ""
        return
    drawn = re.fullmatch(rf"{stage}: (\d+)/{m} samples[^\n]*\n", stderr)
    assert drawn and int(drawn[1]) < m / 2, stderr


@pytest.mark.parametrize("stage", ["phase1", "phase2"])
def test_a_sampling_stage_whose_fifo_reader_is_gone_stops_drawing(tmp_path, stage):
    """`-o FIFO` whose reader closes it while the stage draws stops the stage as stdout's does,
    exit 141 in silence (it drew every sample, then found the FIFO's reader gone)."""
    import re
    import subprocess
    import time

    m = 300
    source = _sampling_source(tmp_path, stage, m)
    fifo = str(tmp_path / "out.fifo")
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # the reader, there from the start
    proc = _start_slow([stage, source, "-o", fifo], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # until uab holds the FIFO open: its read is no end then
            try:
                if os.read(reader, 1):
                    break
            except BlockingIOError:
                break
            time.sleep(0.05)
        os.close(reader)
        stderr = proc.communicate(timeout=120)[1].decode()
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 141, stderr
    drawn = re.fullmatch(rf"{stage}: (\d+)/{m} samples[^\n]*\n", stderr)
    assert drawn and int(drawn[1]) < m / 2, stderr


def test_only_a_pipe_is_watched_for_its_reader(tmp_path, monkeypatch):
    """The stop above looks at stdout only where the stage writes it and it is a pipe, and at an
    `-o` path only where it is a FIFO: never at a file, so a stage writing a file draws on
    whatever its stdout is."""
    import io

    def on_sample(*args):
        return None

    def watching(output):
        with jsonl.reader_watch(output) as watched:
            return watched(on_sample)

    with open(tmp_path / "f", "w") as f:
        monkeypatch.setattr("sys.stdout", f)
        assert watching("-") is on_sample
    monkeypatch.setattr("sys.stdout", io.StringIO())
    assert watching("-") is on_sample
    with jsonl.reader_watch("-") as watched:
        assert watched() is None  # the judge's pass, without a callback
    read, write = os.pipe()
    with open(write, "w") as w:
        monkeypatch.setattr("sys.stdout", w)
        assert watching(str(tmp_path / "o.jsonl")) is on_sample
        with jsonl.reader_watch("-") as watched:
            watched(on_sample)()  # its reader is there
            watched()()
        os.close(read)
        with jsonl.reader_watch("-") as watched, pytest.raises(BrokenPipeError):
            watched()()


def test_a_fifo_output_is_watched_from_its_readers_first_look(tmp_path):
    """`-o FIFO`: no reader yet is no reader gone (it may come); once one has it open the FIFO is
    held open, so that its reader sees no end before the output is written, and its close is seen."""
    fifo = str(tmp_path / "out.fifo")
    os.mkfifo(fifo)
    with jsonl.reader_watch(fifo, every=0) as watched:
        watch = watched()
        watch()  # no reader yet
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        watch_now = watched()
        watch_now()  # the reader is there: the FIFO is held open from now
        with pytest.raises(BlockingIOError):  # a writer, no data: no end
            os.read(reader, 1)
        os.close(reader)
        with pytest.raises(BrokenPipeError):
            watch_now()
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        assert os.read(reader, 1) == b""  # let go at the block's end
    finally:
        os.close(reader)


# Each command that writes one file, with a valid input for it ({i}) and the options it needs.
READS_AND_WRITES = {
    "phase1": (["phase1", "{i}", "--backend", "scripted", "-q", "-o", "{o}"], "questions"),
    "allocate": (["allocate", "{i}", "--budget", "3", "-q", "-o", "{o}"], "sampled"),
    "phase2": (["phase2", "{i}", "--backend", "scripted", "-q", "-o", "{o}"], "allocated"),
    "vote": (["vote", "{i}", "-q", "-o", "{o}"], "sampled"),
    "regrade": (["regrade", "{i}", "-q", "-o", "{o}"], "sampled"),
    "convert": (["convert", "{i}", "-o", "{o}"], "questions"),
    "convert-csv": (["convert", "{i}", "-o", "{o}"], "csv"),
}


@pytest.mark.parametrize("command", READS_AND_WRITES)
@pytest.mark.parametrize("same", ["path", "another-path"])
def test_an_output_that_is_the_input_is_refused(tmp_path, command, same):
    """`uab convert bench.csv -o bench.csv` replaced the benchmark export with its question records,
    `uab phase1 q.jsonl -o q.jsonl` the questions with their samples (and vote, allocate, phase2,
    regrade likewise), exit 0: only `simulate` refused an `-o` that is its input. Now every command
    that writes a file does, naming it, exit 2, the input as it was."""
    template, kind = READS_AND_WRITES[command]
    if kind == "csv":
        (tmp_path / "in.csv").write_bytes(b"question,answer\nWhat is 1 + 2?,3\nWhat is 2 + 2?,4\n")
        path = str(tmp_path / "in.csv")
    elif kind == "allocated":
        sampled_file = write_jsonl(tmp_path / "s.jsonl", sampled_rows(6))
        path = str(tmp_path / "in.jsonl")
        assert cli(["allocate", sampled_file, "--budget", "3", "-q", "-o", path]).exit_code == 0
    else:
        path = write_jsonl(tmp_path / "in.jsonl", arithmetic(4) if kind == "questions" else sampled_rows(6))
    before = open(path, "rb").read()
    output = path if same == "path" else os.path.join(str(tmp_path), ".", os.path.basename(path))
    result = cli([a.replace("{i}", path).replace("{o}", output) for a in template])
    check_error(result, output, None, "-o is INPUT, which this command reads: its output would replace it")
    assert open(path, "rb").read() == before
    assert sorted(os.listdir(tmp_path)) == sorted(n for n in ("s.jsonl", os.path.basename(path)) if
                                                  (tmp_path / n).exists())


@pytest.mark.parametrize("source", ["file", "-"])
def test_a_bad_record_past_the_first_block_leaves_stdout_empty(tmp_path, source):
    """`uab vote` to stdout writes while it reads: its records are held until the whole input is
    read, so a bad record past the first block (64 KiB) leaves nothing written there, as a bad one
    in the first block does."""
    path = tmp_path / "sampled.jsonl"
    write_jsonl(path, sampled_rows(2_000))
    with open(path, "ab") as fh:
        fh.write(b'{"id": "bad", "question": "Q?"\n')
    assert path.stat().st_size > 4 * 2**16
    lines = sum(1 for _ in open(path, "rb"))
    result = cli(["vote", str(path) if source == "file" else "-", "-q"],
                 stdin=None if source == "file" else path.read_bytes())
    name = str(path) if source == "file" else "<stdin>"
    assert result.exit_code == 2 and result.stderr.startswith(f"error: {name}:{lines}: ")
    assert result.stdout == ""
