"""The streaming stages on worker processes (``uab_cli.blocks``): the same bytes out, the same
errors (file, line, message) and nothing half-written, as in one process.

Blocks are made tiny here (a few hundred bytes) so that small files span many blocks and every
error lands in a later one; ``UAB_WORKERS=2`` forces the pool on any machine.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time

import orjson
import pytest
from conftest import (
    BAD,
    CASES,
    OUT,
    STAGES,
    check_error,
    check_no_output,
    cli,
    sampled,
    sampled_rows,
    start_uab,
    wait_held,
    write_jsonl,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from uab_cli import blocks


@pytest.fixture
def pool(monkeypatch, tmp_path_factory):
    """Every input goes to 2 worker processes in blocks of 200 bytes; afterwards no block
    output is left in the temporary directory."""
    spool = tmp_path_factory.mktemp("tmp")
    monkeypatch.setattr(tempfile, "tempdir", str(spool))
    monkeypatch.setattr(blocks, "_BLOCK", 200)
    monkeypatch.setattr(blocks, "_PARALLEL_FROM", 0)
    monkeypatch.setenv("UAB_WORKERS", "2")
    yield
    assert not list(spool.iterdir())


def run_both(args: list[str], monkeypatch) -> tuple[bytes, bytes, str, str]:
    """The command's output and stderr in one process, then on the pool."""
    monkeypatch.setenv("UAB_WORKERS", "1")
    one = cli(args + ["-o", "one.jsonl"])
    monkeypatch.setattr(blocks, "_BLOCK", 200)
    monkeypatch.setattr(blocks, "_PARALLEL_FROM", 0)
    monkeypatch.setenv("UAB_WORKERS", "2")
    two = cli(args + ["-o", "two.jsonl"])
    assert one.exit_code == two.exit_code == 0, (one.stderr, two.stderr)
    with open("one.jsonl", "rb") as a, open("two.jsonl", "rb") as b:
        return a.read(), b.read(), one.stderr, two.stderr


@pytest.mark.parametrize("allocator", ["uab", "uniform", "length"])
def test_allocate_on_workers_writes_the_same_bytes(tmp_path, monkeypatch, allocator):
    monkeypatch.chdir(tmp_path)
    path = write_jsonl(tmp_path / "p1.jsonl", sampled_rows(300))
    one, two, err1, err2 = run_both(["allocate", path, "--budget", "5", "--allocator", allocator], monkeypatch)
    assert one == two and one.count(b"\n") == 300
    assert err1 == err2  # the allocation summary


def test_vote_on_workers_writes_the_same_bytes_and_summary(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write_jsonl(tmp_path / "p1.jsonl", sampled_rows(300))
    with open(path, "rb+") as fh:  # a last line without a newline
        fh.truncate(os.path.getsize(path) - 1)
    one, two, err1, err2 = run_both(["vote", path], monkeypatch)
    assert one == two and one.count(b"\n") == 300
    assert err1 == err2 and "300" in err1  # accuracy table, by level included
    # every seventh question has a level (1, 2, 3 in turn): 15, 14 and 14 questions, summed over every block
    levels = {cells[0]: cells[1] for line in err2.splitlines()
              if len(cells := [c.strip() for c in line.split("\u2502") if c.strip()]) == 3}
    assert levels == {"1": "15", "2": "14", "3": "14"}, err2


VOTE_OR_ALLOCATE = [c for c in CASES if c[1] in ("allocate", "vote")]


@pytest.mark.parametrize("name,stage,expected,line", VOTE_OR_ALLOCATE, ids=[f"{c[1]}-{c[0]}" for c in VOTE_OR_ALLOCATE])
def test_bad_file_on_workers(tmp_path, pool, name, stage, expected, line):
    path = str(BAD / name)
    args = [a.format(f=path, o=tmp_path / OUT) for a in STAGES[stage]]
    check_error(cli(args), path, line, expected)
    check_no_output(tmp_path, stage)


def padded(tmp_path, bad_line: bytes, at: int, m: int = 120, last_newline: bool = True) -> str:
    """``m`` good Phase-1 lines with ``bad_line`` as line ``at`` (1-based)."""
    lines = [orjson.dumps(r) for r in sampled_rows(m)]
    lines.insert(at - 1, bad_line)
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\n".join(lines) + (b"\n" if last_newline else b""))
    return str(path)


@pytest.mark.parametrize("stage", ["allocate", "vote"])
@pytest.mark.parametrize("bad,at,expected", [
    (b'{"id": "x", "question": "q", "samples": [', 57, "invalid JSON"),
    (b"", 90, "blank line"),
    (b'{"id": "q3", "question": "again", "samples": [{"phase": 1, "text": "t"}]}', 101, "duplicate id 'q3'"),
    (b'{"id": "z", "question": "q", "samples": [{"phase": 1, "text": "t", "answer": 5}]}', 64,
     "sample 'answer' must be a string or null, got 5"),
    (b'[{"id": "z"}]', 1, "looks like a JSON array"),
])
def test_errors_in_later_blocks_name_the_line(tmp_path, pool, stage, bad, at, expected):
    path = padded(tmp_path, bad, at)
    args = [a.format(f=path, o=tmp_path / OUT) for a in STAGES[stage]]
    check_error(cli(args), path, at, expected)
    check_no_output(tmp_path, stage)


def test_a_truncated_last_line_is_reported_as_one(tmp_path, pool):
    path = padded(tmp_path, b'{"id": "x", "question": "q", "samp', 121, last_newline=False)
    check_error(cli(["vote", path, "-o", str(tmp_path / OUT)]), path, 121, "truncated last line")


def test_a_duplicate_before_an_error_in_the_same_block_comes_first(tmp_path, pool):
    lines = [orjson.dumps(r) for r in sampled_rows(60)]
    lines[40] = orjson.dumps({**orjson.loads(lines[40]), "id": "q2"})  # line 41 repeats line 3's id
    lines[41] = b"not json"
    path = tmp_path / "two.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    check_error(cli(["vote", str(path), "-o", str(tmp_path / OUT)]), str(path), 41, "duplicate id 'q2'")


def test_a_line_longer_than_the_limit_is_reported_not_read(tmp_path, pool, monkeypatch):
    monkeypatch.setattr(blocks, "MAX_LINE_BYTES", 1000)
    monkeypatch.setattr("uab_cli.jsonl.MAX_LINE_BYTES", 1000)
    path = padded(tmp_path, b'{"id": "x", "question": "' + b"y" * 5000 + b'"}', 30)
    check_error(cli(["vote", path, "-o", str(tmp_path / OUT)]), path, 30, "line longer than")


@pytest.mark.parametrize("setting, size, expected", [
    ("64", 17 << 20, 5),  # 17 MiB: 5 blocks of 4 MiB, so 5 workers, not 64
    ("64", 16 << 20, 4),
    ("3", 17 << 20, 3),  # fewer workers than blocks: as set
    ("64", None, 64),  # a size not known: as set
])
def test_workers_are_at_most_one_per_block(monkeypatch, setting, size, expected):
    """``UAB_WORKERS`` above the number of blocks of the input forks no idle worker processes."""
    monkeypatch.setenv("UAB_WORKERS", setting)
    assert blocks.workers(size) == expected


@pytest.mark.parametrize("setting", ["many", "0", "-3", "1_0", "²"])
def test_bad_worker_count_is_a_usage_error(tmp_path, monkeypatch, setting):
    """A count that is no whole number >= 1 names the variable; 0 and -3 ran one process, silently,
    and 1_0 (Python's int reads it) ten."""
    monkeypatch.setenv("UAB_WORKERS", setting)
    path = write_jsonl(tmp_path / "p1.jsonl", sampled_rows(3))
    result = cli(["vote", path, "-o", str(tmp_path / OUT)])
    assert result.exit_code == 2, result.stderr
    assert f"error: UAB_WORKERS must be a whole number >= 1, got {setting!r}" in result.stderr
    assert not (tmp_path / OUT).exists()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=30).map(lambda b: b.replace(b"\n", b"")), min_size=1, max_size=40),
       st.booleans(), st.integers(1, 64))
def test_blocks_cover_every_line_once(tmp_path_factory, lines, final_newline, size):
    """Cutting a file into byte ranges gives back each line exactly once, in order, with a
    last line without newline set apart and a byte-order mark left out."""
    data = b"\n".join(lines) + (b"\n" if final_newline else b"")
    path = tmp_path_factory.mktemp("b") / "f"
    path.write_bytes(data)
    bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0  # left out
    whole, finals = b"", []
    for begin in range(0, len(data), size):
        terminated, final, after = blocks._lines(str(path), begin, min(begin + size, len(data)))
        assert after == bom + len(whole) + len(terminated) + len(final) or not terminated + final
        assert terminated.endswith(b"\n") or not terminated
        whole += terminated + final
        finals.append(final)
    assert whole == data[bom:]
    tail = data[bom:].rpartition(b"\n")[2]  # a last line without newline
    assert [f for f in finals if f] == ([tail] if tail else [])


def test_allocate_reads_stdin_like_a_file(tmp_path, monkeypatch):
    """stdin is spooled to a temporary file for the two passes, and removed."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    path = write_jsonl(tmp_path / "p1.jsonl", sampled_rows(50))
    from_file = cli(["allocate", path, "--budget", "4", "-q"])
    from_stdin = cli(["allocate", "-", "--budget", "4", "-q"], stdin=open(path, "rb").read())
    assert from_file.exit_code == from_stdin.exit_code == 0
    assert from_file.stdout == from_stdin.stdout and from_file.stdout.count("\n") == 50
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p1.jsonl"]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_allocate_notices_an_input_changed_between_its_passes(tmp_path, monkeypatch, workers):
    from uab_cli import pipeline

    if workers == "2":
        monkeypatch.setattr(blocks, "_BLOCK", 200)
        monkeypatch.setattr(blocks, "_PARALLEL_FROM", 0)
    monkeypatch.setenv("UAB_WORKERS", workers)
    path = write_jsonl(tmp_path / "p1.jsonl", sampled_rows(40))
    solve = pipeline.AllocationInputs.solve

    def solve_then_append(self, *args):
        with open(path, "ab") as fh:  # another process appends while allocate works
            fh.write(orjson.dumps(sampled(40)) + b"\n")
        return solve(self, *args)

    monkeypatch.setattr(pipeline.AllocationInputs, "solve", solve_then_append)
    result = cli(["allocate", path, "--budget", "4", "-o", str(tmp_path / OUT)])
    assert result.exit_code == 2 and "input changed while it was being read" in result.stderr
    assert not (tmp_path / OUT).exists()


@pytest.mark.parametrize("stage", ["allocate", "vote"])
@pytest.mark.parametrize("tail", [b"\n", b"\n\n", b"\n   \n\t\n\n"])
def test_a_bom_and_trailing_blank_lines_are_accepted(tmp_path, monkeypatch, stage, tail):
    """Files as editors save them: a UTF-8 byte-order mark, blank lines at the end; in one
    process and on workers alike, the same output as the plain file."""
    monkeypatch.chdir(tmp_path)
    lines = [orjson.dumps(r) for r in sampled_rows(120)]
    plain = write_jsonl(tmp_path / "plain.jsonl", sampled_rows(120))
    edited = tmp_path / "edited.jsonl"
    edited.write_bytes(b"\xef\xbb\xbf" + b"\n".join(lines) + tail)
    extra = ["--budget", "4"] if stage == "allocate" else []
    want = cli([stage, plain, *extra, "-o", "want.jsonl"])
    assert want.exit_code == 0, want.stderr
    one, two, _, _ = run_both([stage, str(edited), *extra], monkeypatch)
    expected = (tmp_path / "want.jsonl").read_bytes()
    assert one == two == expected


def test_a_blank_line_before_more_records_is_still_an_error(tmp_path, pool):
    path = padded(tmp_path, b"", 120)  # blank line 120, one record after it
    check_error(cli(["vote", path, "-o", str(tmp_path / OUT)]), path, 120, "blank line")


@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.parametrize("tail", [b"\n" * 3000, b"\n \t\n\r\n" * 600 + b"   "])
def test_trailing_blank_lines_past_the_line_limit_are_accepted(tmp_path, monkeypatch, workers, tail):
    """Blank lines that end the file are no line of their own, however many: in one process
    they were held as one "line" and refused past the line limit."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(blocks, "MAX_LINE_BYTES", 1000)
    monkeypatch.setattr("uab_cli.jsonl.MAX_LINE_BYTES", 1000)
    plain = write_jsonl(tmp_path / "plain.jsonl", sampled_rows(120))
    edited = tmp_path / "edited.jsonl"
    edited.write_bytes((tmp_path / "plain.jsonl").read_bytes() + tail)
    assert cli(["vote", plain, "-o", "want.jsonl"]).exit_code == 0
    if workers == "2":
        monkeypatch.setattr(blocks, "_BLOCK", 200)
        monkeypatch.setattr(blocks, "_PARALLEL_FROM", 0)
    monkeypatch.setenv("UAB_WORKERS", workers)
    result = cli(["vote", str(edited), "-o", "got.jsonl"])
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "got.jsonl").read_bytes() == (tmp_path / "want.jsonl").read_bytes()


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_blank_line_before_a_runaway_line_is_the_error(tmp_path, monkeypatch, workers):
    """The first error in file order: the blank line, not the over-long line after it (named
    by the blank line's number in one process)."""
    monkeypatch.setattr(blocks, "MAX_LINE_BYTES", 1000)
    monkeypatch.setattr("uab_cli.jsonl.MAX_LINE_BYTES", 1000)
    if workers == "2":
        monkeypatch.setattr(blocks, "_BLOCK", 200)
        monkeypatch.setattr(blocks, "_PARALLEL_FROM", 0)
    monkeypatch.setenv("UAB_WORKERS", workers)
    path = padded(tmp_path, b"\n" + b'{"id": "x", "question": "' + b"y" * 200_000 + b'"}', 60)  # past a read
    check_error(cli(["vote", path, "-o", str(tmp_path / OUT)]), path, 60, "blank line")
    check_no_output(tmp_path, "vote")


def test_a_bom_and_only_blank_lines_is_an_empty_input_on_workers(tmp_path, pool):
    path = tmp_path / "blank.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b"\n \n" * 300)
    check_error(cli(["vote", str(path), "-o", str(tmp_path / OUT)]), str(path), None, "empty input: no records")


@pytest.mark.parametrize("stage", [["vote"], ["allocate", "--budget", "4"]])
def test_a_work_error_on_workers_is_that_of_one_process(tmp_path, monkeypatch, stage):
    """An error of the work itself (a record too deeply nested to write) names the record's line, in one
    process and on workers alike: a worker named the first line of the record's batch, then both no line."""
    rows = sampled_rows(120)
    rows[80]["x"] = 0
    lines = [orjson.dumps(r) for r in rows]
    lines[80] = lines[80].replace(b'"x":0', b'"x":' + b"[" * 300 + b"]" * 300)
    path = tmp_path / "deep.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    monkeypatch.setenv("UAB_WORKERS", "1")
    one = cli([stage[0], str(path), *stage[1:], "-o", str(tmp_path / OUT)])
    monkeypatch.setattr(blocks, "_BLOCK", 2000)
    monkeypatch.setattr(blocks, "_PARALLEL_FROM", 0)
    monkeypatch.setenv("UAB_WORKERS", "2")
    two = cli([stage[0], str(path), *stage[1:], "-o", str(tmp_path / OUT)])
    assert one.exit_code == two.exit_code == 2
    assert one.stderr == two.stderr == (f"error: {path}:81: record {rows[80]['id']!r} cannot be written as JSON: a "
                                        "value in it is nested over 254 levels deep\n")
    check_no_output(tmp_path, stage[0])


@pytest.mark.parametrize("stage", ["vote", "regrade"])
@pytest.mark.parametrize("invalid", [
    b'{"id": "z", "question": "q", "samples": [{"phase": 1, "text": "t", "answer": 5}]}',
    b'{"id": "q3", "question": "again", "samples": [{"phase": 1, "text": "t"}]}',  # a duplicate id
])
@pytest.mark.parametrize("block", [None, "apart", "together", 200])
def test_a_work_error_before_an_invalid_record_comes_first(tmp_path, monkeypatch, stage, invalid, block):
    """A record the work cannot write (nested over 254 levels deep), then an invalid record: the
    first in file order is the error, in one process and on workers, wherever blocks end. The
    invalid one (checked before its batch was worked) won in one process and where both shared a
    worker's block; the unwritable one where a block ended between them."""
    rows = sampled_rows(60)
    rows[40]["x"] = 0
    lines = [orjson.dumps(r) for r in rows]
    lines[40] = lines[40].replace(b'"x":0', b'"x":' + b"[" * 300 + b"]" * 300)
    lines[41] = invalid
    path = tmp_path / "deep.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    monkeypatch.setenv("UAB_WORKERS", "1" if block is None else "2")
    if block is not None:
        apart = sum(len(line) + 1 for line in lines[:41])  # a block ends between lines 41 and 42
        monkeypatch.setattr(blocks, "_BLOCK", {"apart": apart, "together": apart + 50}.get(block, block))
        monkeypatch.setattr(blocks, "_PARALLEL_FROM", 0)
    check_error(cli([stage, str(path), "-o", str(tmp_path / OUT)]), str(path), 41, "cannot be written as JSON")
    check_no_output(tmp_path, stage)


@pytest.mark.parametrize("stage", ["vote", "regrade"])
@pytest.mark.parametrize("block", [None, "apart", "together"])
def test_an_unwritable_record_with_a_duplicate_id_is_a_duplicate_id(tmp_path, monkeypatch, stage, block):
    """A record the work cannot write whose id an earlier block's record has: one process names its
    duplicate id (checked before its batch is worked), and so do workers, which named the unwritable value."""
    rows = sampled_rows(60)
    rows[40]["x"], rows[40]["id"] = 0, rows[3]["id"]
    lines = [orjson.dumps(r) for r in rows]
    lines[40] = lines[40].replace(b'"x":0', b'"x":' + b"[" * 300 + b"]" * 300)
    path = tmp_path / "deep.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    monkeypatch.setenv("UAB_WORKERS", "1" if block is None else "2")
    if block is not None:
        apart = sum(len(line) + 1 for line in lines[:40])  # a block ends just before line 41
        monkeypatch.setattr(blocks, "_BLOCK", {"apart": apart, "together": apart + 50}[block])
        monkeypatch.setattr(blocks, "_PARALLEL_FROM", 0)
    check_error(cli([stage, str(path), "-o", str(tmp_path / OUT)]), str(path), 41, f"duplicate id {rows[3]['id']!r}")
    check_no_output(tmp_path, stage)


@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.parametrize("stage,bad,expected", [
    (["vote"], b'{"id": "z", "question": "q", "samples": [{"phase": 1, "text": "t", "answer": 5}]}',
     "sample 'answer' must be a string or null"),
    (["allocate", "--budget", "4"], orjson.dumps(sampled(9999, x=0)).replace(b'"x":0', b'"x":' + b"[" * 300 + b"]" * 300),
     "cannot be written as JSON"),
])
def test_a_bad_record_far_on_leaves_stdout_empty(tmp_path, monkeypatch, workers, stage, bad, expected):
    """`uab vote p2.jsonl > votes.jsonl` (or into a pipe): a bad record far into the input is one error
    line and nothing on stdout, as with -o; vote wrote the votes of every block before it (and
    allocate, of a record it cannot write, the records before it) to stdout, then exited 2."""
    if workers == "2":
        monkeypatch.setattr(blocks, "_BLOCK", 20000)
        monkeypatch.setattr(blocks, "_PARALLEL_FROM", 0)
    monkeypatch.setenv("UAB_WORKERS", workers)
    path = padded(tmp_path, bad, 2900, m=3000)
    check_error(cli([stage[0], path, *stage[1:]]), path, 2900, expected)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_vote_notices_an_input_cut_while_it_is_read(tmp_path, monkeypatch, workers):
    """Another process rewrites the input while vote reads it: an error, not the votes of the
    first part of the file (or, on workers, a duplicate id the file does not hold)."""
    from uab_cli import pipeline

    if workers == "2":
        monkeypatch.setattr(blocks, "_BLOCK", 20000)
        monkeypatch.setattr(blocks, "_PARALLEL_FROM", 0)
    monkeypatch.setenv("UAB_WORKERS", workers)
    path = write_jsonl(tmp_path / "p1.jsonl", sampled_rows(3000))
    keep = open(path, "rb").read().index(b"\n", 100_000) + 1
    merge = pipeline.VoteSummary.merge

    def merge_then_cut(self, other):
        if os.path.getsize(path) > keep:
            os.truncate(path, keep)
        return merge(self, other)

    monkeypatch.setattr(pipeline.VoteSummary, "merge", merge_then_cut)
    result = cli(["vote", path, "-o", str(tmp_path / OUT)])
    assert result.exit_code == 2 and "input changed while it was being read" in result.stderr
    assert not (tmp_path / OUT).exists()


@pytest.mark.parametrize("fails", ["mkdtemp", "write"])
def test_a_temporary_directory_without_room_is_named(tmp_path, pool, monkeypatch, fails):
    """Block outputs that cannot be kept name the temporary directory (and TMPDIR), not the
    output, which has room; never a traceback."""
    import builtins
    import errno

    def no_room(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def open_no_room(file, mode="r", *args, **kwargs):
        return no_room() if "w" in mode else builtins.open(file, mode, *args, **kwargs)

    if fails == "mkdtemp":
        monkeypatch.setattr(tempfile, "mkdtemp", no_room)
    else:
        monkeypatch.setattr(blocks, "open", open_no_room, raising=False)
    path = write_jsonl(tmp_path / "p1.jsonl", sampled_rows(60))
    result = cli(["vote", path, "-o", str(tmp_path / OUT)])
    check_error(result, tempfile.gettempdir(), None, "cannot keep block outputs in the temporary directory")
    assert "TMPDIR" in result.stderr
    check_no_output(tmp_path, "vote")


def test_ctrl_c_while_the_workers_start_leaves_none_behind(tmp_path, monkeypatch):
    """Ctrl-C as the pool forks its workers: exit 130 and no worker left waiting for tasks
    (which the exit would have waited for, forever)."""
    import multiprocessing
    import signal
    import time
    from concurrent.futures import ProcessPoolExecutor

    monkeypatch.setattr(blocks, "_BLOCK", 200)
    monkeypatch.setattr(blocks, "_PARALLEL_FROM", 0)
    monkeypatch.setenv("UAB_WORKERS", "2")
    spawn = ProcessPoolExecutor._spawn_process

    def spawn_then_interrupt(self):
        spawn(self)
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(ProcessPoolExecutor, "_spawn_process", spawn_then_interrupt)
    path = write_jsonl(tmp_path / "p1.jsonl", sampled_rows(60))
    try:
        result = cli(["vote", path, "-o", str(tmp_path / OUT)])
        for _ in range(50):
            if not multiprocessing.active_children():
                break
            time.sleep(0.1)
        assert not multiprocessing.active_children()
        assert result.exit_code == 130 and "interrupted: nothing was written" in result.stderr
        assert not (tmp_path / OUT).exists()
    finally:
        for child in multiprocessing.active_children():
            child.kill()
            child.join()


def children(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (Linux's /proc)."""
    found = set()
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as fh:
                if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                    found.add(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads the process table in /proc")
@pytest.mark.parametrize("stage,sig", [("vote", "SIGINT"), ("vote", "SIGTERM"), ("allocate", "SIGTERM"),
                                       ("allocate", "SIGHUP"), ("vote", "SIGKILL")])
def test_a_stage_stopped_while_its_workers_read_leaves_no_worker_and_no_file(tmp_path, stage, sig):
    """SIGTERM and SIGHUP (``kill``, a closed terminal) stop ``allocate`` and ``vote`` on worker
    processes as Ctrl-C does: exit 128 + the signal, no worker left, no temporary output or block
    output. They ended the parent at once, leaving both files and the workers, which waited for
    work forever holding its stderr open (``uab vote … 2>&1 | tee log`` never ended). After
    ``kill -9``, which nothing can clean up after, the workers end too."""
    signum = getattr(signal, sig)
    spool = tmp_path / "tmp"
    spool.mkdir()
    path = write_jsonl(tmp_path / "p1.jsonl", sampled_rows(60))
    args = [a.format(f=path, o=tmp_path / OUT) for a in STAGES[stage]]
    with open(tmp_path / "stderr", "wb") as stderr:  # not a pipe: a worker left behind holds it open
        proc = start_uab(args, hold_in_block=True, env={**os.environ, "TMPDIR": str(spool)},
                         stdout=subprocess.DEVNULL, stderr=stderr,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # noqa: PLW1509
    workers: set[int] = set()
    try:
        wait_held(proc)  # a worker holds the first block: the parent waits for it, the pool running
        workers = children(proc.pid)
        assert workers, "no worker process"
        proc.send_signal(signum)
        proc.stdin.close()  # the held block goes on
        rc = proc.wait(timeout=60)
        deadline = time.monotonic() + 30
        while any(map(alive, workers)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(map(alive, workers)), "a worker outlived its parent"
    finally:
        for pid in filter(alive, workers | children(proc.pid)):
            os.kill(pid, signal.SIGKILL)
        proc.kill()
        proc.wait()
    if signum == signal.SIGKILL:
        assert rc == -signal.SIGKILL
        return
    stopped = "interrupted" if signum == signal.SIGINT else f"stopped by {sig}"
    assert rc == 128 + signum and (tmp_path / "stderr").read_text() == f"{stopped}: nothing was written.\n"
    check_no_output(tmp_path, stage)
    assert not list(spool.iterdir())


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_a_stage_stopped_while_it_copies_stdin_removes_the_copy(tmp_path, sig):
    """``uab allocate -`` keeps a copy of stdin in the temporary directory: SIGTERM or SIGHUP
    removes it, as Ctrl-C does (the kill left it behind, as big as the input)."""
    spool = tmp_path / "tmp"
    spool.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "uab_cli", "allocate", "-", "--budget", "4", "-o", str(tmp_path / OUT)],
                            env={**os.environ, "TMPDIR": str(spool)}, stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        proc.stdin.write(orjson.dumps(sampled(0)) + b"\n" + b" " * (5 << 19))  # 2.5 MiB: 2 of its 1 MiB reads
        proc.stdin.flush()
        deadline = time.monotonic() + 60
        while not [f for f in spool.glob("uab-stdin.*") if f.stat().st_size] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list(spool.glob("uab-stdin.*")), "no copy of stdin was made"
        proc.send_signal(getattr(signal, sig))  # copying stdin, it waits for more
        _, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 128 + getattr(signal, sig), stderr
    assert stderr.decode() == f"stopped by {sig}: nothing was written.\n"
    assert not list(spool.iterdir())
    check_no_output(tmp_path, "allocate")
