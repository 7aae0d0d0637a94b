"""Edges a new user meets: one option vocabulary in every command, exit codes documented,
`report` saying which plots it did not draw and why."""

from __future__ import annotations

import os
import pathlib
import re

import orjson
import pytest
from conftest import arithmetic, cli, read_jsonl, sampled, write_jsonl

from uab_cli import __version__

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUTPUT = ("phase1", "allocate", "phase2", "vote", "regrade", "run", "pool", "simulate", "report", "convert")


@pytest.mark.parametrize("command", OUTPUT)
def test_every_command_takes_o_output(command):
    text = cli([command, "-h"]).stdout
    assert "-o, --output" in text, command
    if command in ("phase1", "run", "pool"):
        assert "-K, --samples" in text and "--k " not in text and "--out " not in text, command


def test_the_readme_lists_every_exit_code():
    readme = (ROOT / "README.md").read_text()
    for code in (0, 1, 2, 130):
        assert re.search(rf"^\| `{code}` \| \S", readme, re.M), code


def test_report_names_the_plots_it_did_not_draw(tmp_path):
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(8))  # no levels
    assert cli(["pool", q, "-K", "4", "-o", str(tmp_path / "pool"), "--backend", "scripted", "-q"]).exit_code == 0
    res = str(tmp_path / "res.jsonl")
    assert cli(["simulate", str(tmp_path / "pool"), "--budgets", "2", "--seeds", "2", "-o", res, "-q"]).exit_code == 0
    result = cli(["report", res, "-o", str(tmp_path / "rep")])
    assert result.exit_code == 0
    assert "not drawn: allocation_by_level.png: the questions have no 'level' field" in result.stderr
    assert "not drawn: anll_correct_vs_incorrect.png: no --pool given" in result.stderr
    assert "not drawn: cost_at_accuracy.png: the results hold one budget" in result.stderr  # --budgets 2 only
    summary = (tmp_path / "rep" / "summary.md").read_text()
    assert "Plots not drawn:" in summary and "allocation_by_level.png: the questions have no 'level'" in summary
    assert not (tmp_path / "rep" / "allocation_by_level.png").exists()


def test_report_names_the_anll_plot_not_drawn_for_a_pool_without_gold(tmp_path):
    """A pool whose questions have no gold answer grades no sample: the ANLL plot (correct vs
    incorrect) is named as not drawn, with why (it was an empty figure and a matplotlib warning)."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(6))
    assert cli(["pool", q, "-K", "4", "-o", str(tmp_path / "pool"), "--backend", "scripted", "-q"]).exit_code == 0
    res = str(tmp_path / "res.jsonl")
    assert cli(["simulate", str(tmp_path / "pool"), "--budgets", "2,4", "--seeds", "1", "-o", res, "-q"]).exit_code == 0
    records = [orjson.loads(line) for line in (tmp_path / "pool" / "pool.jsonl").read_bytes().splitlines()]
    assert any(s.get("anll") is not None for r in records for s in r["samples"])
    ungraded = write_jsonl(tmp_path / "ungraded.jsonl", [{k: v for k, v in r.items() if k != "answer"} for r in records])
    result = cli(["report", res, "--pool", ungraded, "-o", str(tmp_path / "rep")])
    assert result.exit_code == 0, result.stderr
    assert "not drawn: anll_correct_vs_incorrect.png: the pool's questions with ANLL samples have no gold answer" \
        in result.stderr
    assert "No artists" not in result.stderr and not (tmp_path / "rep" / "anll_correct_vs_incorrect.png").exists()


def test_the_readme_names_every_help_panel():
    from uab_cli.options import PANELS

    readme = " ".join((ROOT / "README.md").read_text().split())
    assert f"panels ({', '.join(PANELS)})" in readme


def test_the_readme_names_every_allocator_simulate_replays():
    """README's list of the allocator names `uab simulate --allocators` takes left out the forfeit
    exits (`uab-exit-hard-forfeit`, `uab-exit-easy-forfeit`), which it replays."""
    from uab_cli import allocators

    readme = " ".join((ROOT / "README.md").read_text().split())
    listed = readme.split("Simulated allocator names: ")[1].split(" by default ")[0]
    assert set(allocators.ALLOCATORS) <= set(re.findall(r"`([a-z0-9-]+)`", listed))


def test_the_readme_links_resolve():
    """Every `](#anchor)` of README.md names a heading (as GitHub spells its anchor) or an
    `<a id>`, and every relative link names a file of the checkout."""
    readme = (ROOT / "README.md").read_text()
    prose = re.sub(r"^```.*?^```", "", readme, flags=re.S | re.M)
    anchors = set(re.findall(r'<a id="([^"]+)"', readme))
    for heading in re.findall(r"^#{1,6}\s+(.+)$", prose, re.M):
        slug = re.sub(r"[^\w\- ]", "", re.sub(r"<[^>]+>", "", heading).strip().lower()).replace(" ", "-")
        anchors.add(slug if slug not in anchors else f"{slug}-1")
    links = re.findall(r"\]\(([^)\s]+)\)", prose)
    assert [t for t in links if t.startswith("#") and t[1:] not in anchors] == []
    assert [t for t in links if not t.startswith(("#", "http")) and not (ROOT / t.split("#")[0]).exists()] == []
    assert any(t.startswith("#") for t in links)


@pytest.mark.parametrize("command", ["phase1", "allocate", "phase2", "vote", "regrade", "run", "pool", "simulate", "report"])
def test_a_missing_input_is_one_line_naming_it(command, tmp_path):
    missing = str(tmp_path / "missing.jsonl")
    args = [command, missing, "-o", str(tmp_path / "out")] + {"allocate": ["-N", "2"], "run": ["-N", "2"],
                                                              "pool": ["-K", "2"]}.get(command, [])
    result = cli(args)
    assert result.exit_code == 2, (command, result.stderr)
    assert result.stderr.strip() == f"error: {missing}: cannot read: No such file or directory", command


def test_report_refuses_a_pool_the_results_did_not_come_from(tmp_path):
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(8))
    assert cli(["pool", q, "-K", "4", "-o", str(tmp_path / "pool"), "--backend", "scripted", "-q"]).exit_code == 0
    res = str(tmp_path / "res.jsonl")
    assert cli(["simulate", str(tmp_path / "pool"), "--budgets", "2", "--seeds", "2", "-o", res, "-q"]).exit_code == 0
    other = write_jsonl(tmp_path / "other.jsonl", [{**r, "samples": s} for r, s in zip(
        arithmetic(5), ([{"index": 0, "phase": 1, "text": "1", "answer": "1", "anll": 0.1}] for _ in range(5)))])
    result = cli(["report", res, "-o", str(tmp_path / "rep"), "--pool", other])
    assert result.exit_code == 2 and not (tmp_path / "rep" / "summary.md").exists()
    assert result.stderr.strip() == (f"error: {other}: --pool holds 5 questions, the results were simulated on 8: "
                                     "give the pool they came from")  # the pool named, as its other errors are


def test_a_run_that_fails_before_writing_leaves_no_directory(tmp_path):
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    out = tmp_path / "runs" / "first"
    result = cli(["run", q, "-N", "2", "-o", str(out), "--backend", "scripted", "--max-model-len", "64",
                  "--max-tokens", "64"])
    assert result.exit_code == 2 and "leaves no room for a prompt" in result.stderr
    assert not (tmp_path / "runs").exists()  # the lock, the directory and the folder made on the way to it
    out.mkdir(parents=True)
    (out / "mine.txt").write_text("kept")  # a directory the run did not make stays (refused: not a run's)
    assert cli(["run", q, "-N", "2", "-o", str(out), "--backend", "scripted"]).exit_code == 2
    assert (out / "mine.txt").exists()


@pytest.mark.parametrize("command,args", [("run", ["-N", "2", "--backend", "scripted"]),
                                          ("pool", ["-K", "2", "--backend", "scripted"]), ("report", [])])
def test_a_directory_output_is_not_stdout(command, args, tmp_path, monkeypatch):
    """``-o -`` on a command that writes a directory made a folder named "-"."""
    monkeypatch.chdir(tmp_path)
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    result = cli([command, q, "-o", "-", *args])
    assert result.exit_code == 2 and f"cannot use as a {command} directory: - is stdout" in result.stderr
    assert not (tmp_path / "-").exists()


def test_vote_says_when_it_votes_less_than_was_meant(tmp_path):
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(4))
    p1, alloc = str(tmp_path / "p1.jsonl"), str(tmp_path / "a.jsonl")
    assert cli(["phase1", q, "--backend", "scripted", "-o", p1, "-q"]).exit_code == 0
    assert cli(["allocate", p1, "-N", "3", "--allocator", "uniform", "-o", alloc, "-q"]).exit_code == 0
    result = cli(["vote", alloc, "-o", str(tmp_path / "v.jsonl")])  # phase2 forgotten
    assert "4 question(s) hold fewer Phase-2 samples than allocated ('extra')" in result.stderr
    result = cli(["vote", p1, "--exclude-phase1", "-o", str(tmp_path / "v.jsonl")])
    assert ("4 question(s) hold no Phase-2 sample: --exclude-phase1 voted their Phase-1 sample(s), as the paper's "
            "code did") in result.stderr
    assert "hold no Phase-2" not in cli(["vote", p1, "-o", str(tmp_path / "v.jsonl")]).stderr


def test_a_pool_directory_given_to_run_says_so(tmp_path):
    """It said "(-K/--samples (unset → 1))", as if an option had changed."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    pool, run = str(tmp_path / "pool"), str(tmp_path / "run")
    assert cli(["pool", q, "-K", "2", "-o", pool, "--backend", "scripted", "-q"]).exit_code == 0
    assert cli(["run", q, "-N", "2", "-o", run, "--backend", "scripted", "-q"]).exit_code == 0
    result = cli(["run", q, "-N", "2", "-o", pool, "--backend", "scripted", "-q"])
    assert result.exit_code == 2 and "(it is a `uab pool` directory, not a `uab run` one)" in result.stderr
    result = cli(["pool", q, "-K", "2", "-o", run, "--backend", "scripted", "-q"])
    assert result.exit_code == 2 and "(it is a `uab run` directory, not a `uab pool` one)" in result.stderr


def test_one_line_takes_a_validation_error_s_reason():
    from uab_cli.errors import one_line

    pydantic_like = ValueError("1 validation error for VllmConfig\n  Value error, Total number of attention heads (9) "
                               "must be divisible by tensor parallel size (2). [type=value_error, input_value=...]\n"
                               "    For further information visit https://errors.pydantic.dev/2/v/value_error")
    assert one_line(pydantic_like) == "Total number of attention heads (9) must be divisible by tensor parallel size (2)."
    assert one_line(OSError("first\n\nsecond")) == "first" and one_line(KeyError()) == "KeyError"


@pytest.mark.parametrize("value,threads", [("3", 3), (" 2", 2), ("", None), ("0", None), ("-1", None), ("abc", None),
                                         ("²", None), ("٣", None)])  # digits to Python, not to OpenMP
def test_omp_num_threads_that_is_no_positive_integer_is_dropped(monkeypatch, value, threads):
    """OpenMP warns about such a value and uses every CPU (3x slower here); uab drops it and
    takes its own default."""
    import warnings

    from uab_cli.backends.local import _omp_threads

    monkeypatch.setenv("OMP_NUM_THREADS", value)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        assert _omp_threads() == threads
    assert ("OMP_NUM_THREADS" in os.environ) == (threads is not None)
    assert bool(said) == (threads is None)


# --- what a fuzzer of every input found ----------------------------------------------------------

def _sampled(n: int = 3, **sample) -> list[dict]:
    return [{**r, "samples": [{"index": 0, "phase": 1, "text": "1", "answer": "1", "anll": 0.1, **sample}]}
            for r in arithmetic(n)]


@pytest.mark.parametrize("change,says", [
    ({"index": "0"}, "sample 'index' must be a non-negative integer, got '0'"),
    ({"index": -1}, "sample 'index' must be a non-negative integer, got -1"),
    ({"phase": True}, "sample 'phase' must be 1 or 2, got True"),
    ({"phase": 1.0}, "sample 'phase' must be 1 or 2, got 1.0"),
])
def test_a_sample_s_index_and_phase_are_checked(tmp_path, change, says):
    path = write_jsonl(tmp_path / "p.jsonl", _sampled(**change))
    result = cli(["allocate", path, "-N", "2"])
    assert result.exit_code == 2 and f"p.jsonl:1: {says}" in result.stderr, result.stderr


@pytest.mark.parametrize("field,value,says", [
    ("level", {"a": 1}, "'level' must be a string or number, got dict"),
    ("uab", {"phase1": "x"}, "'uab.phase1' (what produced the record) must be an object, got str"),
])
def test_record_fields_a_stage_reads_are_checked(tmp_path, field, value, says):
    rows = arithmetic(2)
    rows[1][field] = value
    result = cli(["phase1", write_jsonl(tmp_path / "q.jsonl", rows), "--backend", "scripted"])
    assert result.exit_code == 2 and f"q.jsonl:2: {says}" in result.stderr, result.stderr


def test_a_damaged_checkpoint_sample_is_named_not_a_traceback(tmp_path):
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    run = ["run", q, "-N", "2", "-o", str(tmp_path / "r"), "--backend", "scripted", "-q"]
    assert cli(run).exit_code == 0
    ckpt = tmp_path / "r" / "samples.ckpt.jsonl"
    lines = ckpt.read_text().splitlines()
    lines[0] = lines[0].replace('"phase":1', '"phase":"one"')
    ckpt.write_text("\n".join(lines) + "\n")
    result = cli(run)
    assert result.exit_code == 2 and "samples.ckpt.jsonl:1: not a sample of this run's checkpoint" in result.stderr


def test_an_empty_list_of_temperatures_is_one_line(tmp_path):
    pool = write_jsonl(tmp_path / "p.jsonl", _sampled())
    result = cli(["simulate", pool, "-T", ","])
    assert result.exit_code == 2 and "-T/--signal-temperature takes comma-separated numbers, got ','" in result.stderr


def test_a_named_pipe_is_read_once_like_stdin(tmp_path):
    """`uab allocate <(cat p1.jsonl)`: the input is read twice; a pipe read a second time is
    empty ("empty input: no records", or a FIFO that hangs)."""
    import threading

    data = (tmp_path / "p.jsonl")
    write_jsonl(data, _sampled())
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(data.read_bytes()), daemon=True)
    writer.start()
    result = cli(["allocate", str(fifo), "-N", "2", "--allocator", "uniform"])
    assert result.exit_code == 0, result.stderr
    assert len(result.stdout.splitlines()) == 3


def test_an_output_file_path_ending_in_a_slash_is_refused_before_drawing(tmp_path, fake_backend):
    fake_backend.in_cli()
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(2))
    result = cli(["phase1", q, "--backend", "scripted", "-o", str(tmp_path / "new") + "/"])
    assert result.exit_code == 2 and "it names a directory (-o takes a file)" in result.stderr
    assert fake_backend.drawn == 0


@pytest.mark.parametrize("command", [["phase1"], ["run", "-N", "2"], ["pool", "-K", "2"]])
def test_a_record_nested_deeper_than_json_can_be_written_is_one_line(tmp_path, fake_backend, command):
    """orjson reads 1,024 levels but writes 254: phase1 drew every sample, then failed naming no
    line; run and pool (their config's input digest) were a `TypeError: Recursion limit reached`
    traceback. Now the error names the line, before any sample is drawn."""
    fake_backend.in_cli()
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "q", "question": "1+1?"}\n{"id": "a", "question": "q", "x": ' + "[" * 300 + "]" * 300
                    + "}\n")
    out = str(tmp_path / "out")
    result = cli([command[0], str(path), *command[1:], "--backend", "scripted", "-o", out])
    assert result.exit_code == 2 and result.stderr == (f"error: {path}:2: record 'a' cannot be written as JSON: a "
                                                       "value in it is nested over 254 levels deep\n")
    assert not os.path.exists(out) and fake_backend.drawn == 0


def test_a_budget_beyond_the_machine_is_one_line(tmp_path, monkeypatch):
    def exhausted(*args, **kwargs):
        raise MemoryError
    monkeypatch.setattr("uab_cli.allocators.majority_allocate", exhausted)
    path = write_jsonl(tmp_path / "p.jsonl", _sampled())
    result = cli(["allocate", path, "-N", "4", "--allocator", "majority", "-o", str(tmp_path / "a.jsonl")])
    assert result.exit_code == 2 and "out of memory" in result.stderr and len(result.stderr.splitlines()) == 1
    assert not (tmp_path / "a.jsonl").exists()


def _results(tmp_path) -> str:
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(8))
    assert cli(["pool", q, "-K", "4", "-o", str(tmp_path / "pool"), "--backend", "scripted", "-q"]).exit_code == 0
    res = str(tmp_path / "res.jsonl")
    assert cli(["simulate", str(tmp_path / "pool"), "--budgets", "2,4", "--seeds", "2", "-o", res, "-q"]).exit_code == 0
    return res


def test_report_on_a_malformed_results_row_leaves_the_report_as_it_was(tmp_path):
    res = _results(tmp_path)
    assert cli(["report", res, "-o", str(tmp_path / "rep")]).exit_code == 0
    before = {p.name: p.read_bytes() for p in (tmp_path / "rep").iterdir()}
    rows = [line.replace('"min_N":', '"min_N":"x","was":') for line in pathlib.Path(res).read_text().splitlines()]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(rows) + "\n")
    assert '"min_N":"x"' in bad.read_text()
    result = cli(["report", str(bad), "-o", str(tmp_path / "rep")])
    assert result.exit_code == 2 and "bad.jsonl: a row is not what `uab simulate -o` writes" in result.stderr
    assert {p.name: p.read_bytes() for p in (tmp_path / "rep").iterdir()} == before
    result = cli(["report", str(bad), "-o", str(tmp_path / "fresh")])
    assert result.exit_code == 2 and not (tmp_path / "fresh").exists()


@pytest.mark.parametrize("field, value, said", [("coverage", None, "a result row without 'coverage'"),
                                                ("T", '"x"', "a result row's 'T' is 'x'"),
                                                ("by_level", "[1,2]", "a result row's 'by_level' is [1, 2]"),
                                                ("tokens", '"many"', "a result row's 'tokens' is 'many'"),
                                                ("T", None, "a result row without 'T'"),
                                                ("cut", "null", "a result row's 'cut' is None"),
                                                ("vote_fallbacks", "null", "a result row's 'vote_fallbacks' is None"),
                                                ("tokens_median", "null", "a result row's 'tokens_median' is None"),
                                                ("by_level", "null", "a result row's 'by_level' is None")])
def test_report_names_the_line_of_a_result_row_of_another_shape(tmp_path, field, value, said):
    """A result row with a field of another type (or without one the table reads) is named by
    its line; the report said only the file, with Python's words (`KeyError: 'coverage'`)."""
    lines = pathlib.Path(_results(tmp_path)).read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith('{"allocator"'))
    row = orjson.loads(lines[at])
    row.pop(field, None)
    lines[at] = orjson.dumps(row if value is None else {**row, field: orjson.loads(value)}).decode()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    result = cli(["report", str(bad), "-o", str(tmp_path / "rep")])
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1
    assert f"bad.jsonl:{at + 1}: {said}" in result.stderr
    assert not (tmp_path / "rep").exists()


def test_report_names_the_line_of_a_recommendation_row_of_another_shape(tmp_path):
    lines = pathlib.Path(_results(tmp_path)).read_text().splitlines()
    row = orjson.loads(lines[-1])
    lines[-1] = orjson.dumps({"recommendation": {**row["recommendation"], "allocator": 5}}).decode()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    result = cli(["report", str(bad), "-o", str(tmp_path / "rep")])
    assert result.exit_code == 2 and f"bad.jsonl:{len(lines)}: a recommendation row's 'allocator' is 5" in result.stderr
    assert not (tmp_path / "rep").exists()


@pytest.mark.parametrize("field, value, said", [("held_out", None, "a recommendation row without 'held_out'"),
                                                ("held_out", '{"se": 0.1}', "row's held_out without 'gain'"),
                                                ("flags", None, "a recommendation row without 'flags'"),
                                                ("signal", None, "a recommendation row without 'signal'"),
                                                ("kept_over", '{"allocator": "uab", "signal": "anll", "why": "x"}',
                                                 "row's kept_over without 'T'")])
def test_report_names_the_line_of_a_recommendation_row_without_what_it_reads(tmp_path, field, value, said):
    """The fields the report reads of a recommendation row (its label, held-out gain, flags) and
    not `uab run`: a row without them was named with Python's words (`KeyError: 'held_out'`)."""
    lines = pathlib.Path(_results(tmp_path)).read_text().splitlines()
    rec = orjson.loads(lines[-1])["recommendation"]
    rec.pop(field, None)
    lines[-1] = orjson.dumps({"recommendation": rec if value is None else {**rec, field: orjson.loads(value)}}).decode()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    result = cli(["report", str(bad), "-o", str(tmp_path / "rep")])
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1, result.stderr
    assert f"bad.jsonl:{len(lines)}: " in result.stderr and said in result.stderr, result.stderr
    assert not (tmp_path / "rep").exists()


def _checked(tmp_path, allocator: str = "length") -> pathlib.Path:
    """A `simulate --check` results file (``allocator`` + majority recommended at N = 2 and 4, replayed
    on the same pool: ``uniform`` replays nothing)."""
    rows = [orjson.loads(line) for line in pathlib.Path(_results(tmp_path)).read_text().splitlines()]
    for r in rows:
        if "recommendation" in r:
            r["recommendation"].update(allocator=allocator, vote_rule="majority")
            r["recommendation"]["settings"].update(allocator=allocator, vote_rule="majority")
    res = tmp_path / "recommends.jsonl"
    res.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    out = tmp_path / "check.jsonl"
    assert cli(["simulate", str(tmp_path / "pool"), "--check", str(res), "--seeds", "2", "-o", str(out),
                "-q"]).exit_code == 0
    return out


@pytest.mark.parametrize("edit, said", [(lambda c: c.pop("gain"), "a check row without 'gain'"),
                                        (lambda c: c.update(se="x"), "a check row's 'se' is 'x'"),
                                        (lambda c: c.pop("worse"), "a check row without 'worse'"),
                                        (lambda c: c.update(N="4"), "a check row's 'N' is '4'"),
                                        (lambda c: c.update(N=0), "a check row's 'N' is 0"),
                                        (lambda c: c.pop("allocator"), "a check row without 'allocator'"),
                                        (lambda c: c.update(signal="anll"), "a check row's 'T' is None"),
                                        (lambda c: c.update(chosen_gain="x"), "a check row's 'chosen_gain' is 'x'"),
                                        (lambda c: c.clear() or c.update(x=5), "a check row without 'allocator'")])
def test_report_names_the_line_of_a_check_row_of_another_shape(tmp_path, edit, said):
    """A `simulate --check` verdict row edited by hand (or cut short) is named by its line, as a
    result or recommendation row is; it was the file alone, with Python's words (`KeyError: 'gain'`,
    `ValueError: Unknown format code 'f'`), after the notes of the plots not drawn."""
    lines = _checked(tmp_path).read_text().splitlines()
    result = _report_edited(tmp_path, lines, -1, lambda row: edit(row["check"]))
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1, result.stderr
    assert f"bad.jsonl:{len(lines)}: {said}, not what `uab simulate -o` writes" in result.stderr, result.stderr
    assert not (tmp_path / "rep").exists()


def _report_edited(tmp_path, lines: list[str], at: int, edit):
    """``uab report`` of the results ``lines`` with line ``at``'s row edited in place by ``edit(row)``,
    written as bad.jsonl."""
    row = orjson.loads(lines[at])
    edit(row)
    lines[at] = orjson.dumps(row).decode()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    return cli(["report", str(bad), "-o", str(tmp_path / "rep")])


def test_report_names_the_line_of_a_check_row_that_holds_no_object(tmp_path):
    lines = _checked(tmp_path).read_text().splitlines()
    result = _report_edited(tmp_path, lines, -1, lambda row: row.update(check=5))
    assert result.exit_code == 2 and f"bad.jsonl:{len(lines)}: a check row holds 5" in result.stderr, result.stderr
    assert not (tmp_path / "rep").exists()


@pytest.mark.parametrize("edit, said", [(lambda s: s.pop("pool"), "a simulation row without 'pool'"),
                                        (lambda s: s.pop("version"), "a simulation row without 'version'"),
                                        (lambda s: s.update(generation=5), "a simulation row's 'generation' is 5"),
                                        (lambda s: s.update(check=5), "a simulation row's 'check' is 5")])
def test_report_names_the_line_of_a_simulation_row_of_another_shape(tmp_path, edit, said):
    """The results file's first row, what produced it (summary.md opens with it): a hand-edited one
    was `KeyError: 'pool'` or `AttributeError: 'int' object has no attribute 'get'` without a line."""
    lines = pathlib.Path(_results(tmp_path)).read_text().splitlines()
    result = _report_edited(tmp_path, lines, 0, lambda row: edit(row["simulation"]))
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1, result.stderr
    assert f"bad.jsonl:1: {said}, not what `uab simulate -o` writes" in result.stderr, result.stderr
    assert not (tmp_path / "rep").exists()


def test_a_report_of_a_regraded_pool_says_so_and_its_plots_say_what_made_them(tmp_path):
    """The replays count the answers `uab regrade` read again, but the results file's first row, and
    so summary.md, named only the uab that drew the pool; a plot held no word of what made it
    (found alone, it could not tell its results file, pool or uab)."""
    image = pytest.importorskip("PIL.Image")  # matplotlib's own dependency
    _results(tmp_path)
    pool = str(tmp_path / "regraded-pool.jsonl")
    assert cli(["regrade", str(tmp_path / "pool" / "pool.jsonl"), "-o", pool, "-q"]).exit_code == 0
    res = tmp_path / "regraded.jsonl"
    assert cli(["simulate", pool, "--budgets", "2,4", "--seeds", "2", "-o", str(res),
                "-q"]).exit_code == 0
    made = orjson.loads(res.read_bytes().splitlines()[0])["simulation"]
    assert made["regrade"] == {"version": __version__}
    assert cli(["report", str(res), "-o", str(tmp_path / "rep")]).exit_code == 0
    opening = (tmp_path / "rep" / "summary.md").read_text().splitlines()[2]
    assert f"; answers regraded by uab {__version__}), 2 seeds" in opening, opening
    with image.open(tmp_path / "rep" / "accuracy_vs_budget.png") as png:
        assert png.text["Description"] == opening and png.text["Software"].startswith(f"uab {__version__} ")


def test_report_of_a_check_draws_its_verdicts(tmp_path):
    """And says why it draws no decile plot: `--check` writes no deciles rows, of any pool (it said
    the pool's samples must lack token logprobs, of a pool that has them)."""
    result = cli(["report", str(_checked(tmp_path)), "-o", str(tmp_path / "rep")])
    assert result.exit_code == 0, result.stderr
    summary = (tmp_path / "rep" / "summary.md").read_text()
    assert "## Recommendations replayed on these questions" in summary and "| 2 | length + majority |" in summary
    why = ("`simulate --check` writes no 'deciles' rows: it replays the recommended combinations alone (the "
           "results file it checks has them)")
    assert f"not drawn: signal_deciles.png: {why}\n" in result.stderr and f"- signal_deciles.png: {why}\n" in summary


def test_report_of_a_check_that_replayed_nothing_says_so(tmp_path):
    """Every recommendation Uniform + majority: `simulate --check` replays nothing and writes its
    verdicts alone. The report exited 2 ("no result rows to report"); now its summary.md holds
    the verdicts (no empty accuracy table) and names each plot of the replays as not drawn, why."""
    checked = _checked(tmp_path, "uniform")
    result = cli(["report", str(checked), "-o", str(tmp_path / "rep")])
    assert result.exit_code == 0, result.stderr
    why = "`simulate --check` replayed nothing: each recommendation it checked is Uniform + majority"
    assert f"not drawn: accuracy_vs_budget.png: {why}" in result.stderr, result.stderr
    summary = (tmp_path / "rep" / "summary.md").read_text()
    assert "| 2 | uniform + majority |" in summary and "Uniform + majority: nothing to replay" in summary
    assert "| N | allocator |" not in summary and f"- accuracy_vs_budget.png: {why}" in summary, summary
    assert sorted(p.name for p in (tmp_path / "rep").iterdir()) == ["summary.md"]
    one = cli(["simulate", str(tmp_path / "pool"), "--check", str(tmp_path / "recommends.jsonl"), "--seeds", "1",
               "-o", str(tmp_path / "one.jsonl"), "-q"])  # what it replays needs none: still 2 seeds, as README says
    assert one.exit_code == 2 and one.stderr == "error: --check needs --seeds 2 or more: a loss is judged against " \
        "its standard error over seeds\n", one.stderr
    assert not (tmp_path / "one.jsonl").exists()


@pytest.mark.parametrize("seed", [0, 1])
def test_report_refuses_result_rows_whose_levels_differ_naming_the_line(tmp_path, seed):
    """Every result row of one simulation holds its pool's levels: rows with other levels (seed 1
    without level 2) came from two simulations or a hand edit. It was `KeyError: '2'` without a
    line where the first seed had the level, and where it had not, level 2 left out of the plot."""
    q = write_jsonl(tmp_path / "q.jsonl", [{**r, "level": 1 + i % 2} for i, r in enumerate(arithmetic(8))])
    assert cli(["pool", q, "-K", "4", "-o", str(tmp_path / "pool"), "--backend", "scripted", "-q"]).exit_code == 0
    res = tmp_path / "res.jsonl"
    assert cli(["simulate", str(tmp_path / "pool"), "--budgets", "2,4", "--seeds", "2", "-o", str(res),
                "-q"]).exit_code == 0
    rows = [orjson.loads(line) for line in res.read_text().splitlines()]
    for r in rows:
        if r.get("seed") == seed:
            r["by_level"].pop("2")
    first = next(i for i, r in enumerate(rows, 1) if "seed" in r)  # seed 0's rows, then seed 1's
    at = next(i for i, r in enumerate(rows, 1) if r.get("seed") == 1)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    result = cli(["report", str(bad), "-o", str(tmp_path / "rep")])
    held, had = ("1, 2", "1") if seed == 0 else ("1", "1, 2")
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1, result.stderr
    assert f"bad.jsonl:{at}: a result row's levels are {held}, line {first}'s {had}: every result row of one " \
        "simulation holds its pool's levels" in " ".join(result.stderr.split()), result.stderr
    assert not (tmp_path / "rep").exists()


def test_report_of_results_from_before_the_recommendation_says_it_holds_none(tmp_path):
    """A results file of an earlier release (no header, no recommendation rows): the headroom
    table's note ended "Run it on new questions (…):" with nothing to run after it."""
    lines = pathlib.Path(_results(tmp_path)).read_text().splitlines(keepends=True)
    old = tmp_path / "old.jsonl"
    old.write_text("".join(line for line in lines if line.startswith('{"allocator"')))
    assert cli(["report", str(old), "-o", str(tmp_path / "rep")]).exit_code == 0
    text = (tmp_path / "rep" / "summary.md").read_text()
    assert "Run it on new questions" not in text and "holds no recommendation" in text


@pytest.mark.parametrize("fresh", [False, True])
def test_a_disk_that_fills_while_a_report_is_written_leaves_the_directory_as_it_was(tmp_path, monkeypatch, fresh):
    """Every file is written in full before the first replaces its old copy: a disk full at the
    last file (summary.md) left the new plots beside the old summary (or, in a new directory,
    plots and no summary)."""
    import errno

    res = _results(tmp_path)
    rep = tmp_path / ("new" if fresh else "rep")
    if not fresh:
        assert cli(["report", res, "-o", str(rep), "--targets", "60"]).exit_code == 0
    before = {p.name: p.read_bytes() for p in rep.iterdir()} if rep.exists() else None
    calls = []

    def fsync(fd):
        calls.append(fd)
        if len(calls) == 4:  # the accuracy, cost and decile plots, then summary.md (no levels, no --pool)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", fsync)
    result = cli(["report", res, "-o", str(rep), "--targets", "70"])
    assert result.exit_code == 2 and "summary.md: cannot write: No space left on device" in result.stderr
    assert ({p.name: p.read_bytes() for p in rep.iterdir()} if rep.exists() else None) == before


def test_a_report_of_results_without_majority_vote_rows_draws_what_it_can(tmp_path):
    """A results file whose result rows are cut down to other vote rules (`jq -c 'select(.vote_rule
    != "majority")'`): the levels plot, whose allocation no rule changes, takes another rule's
    rows, and the cost plot (majority vote) says why it is not drawn; both ended in `a row is not
    what uab simulate -o writes (ValueError: Number of columns must be a positive integer, not 0)`."""
    q = write_jsonl(tmp_path / "q.jsonl", [{**r, "level": 1 + i % 2} for i, r in enumerate(arithmetic(8))])
    assert cli(["pool", q, "-K", "4", "-o", str(tmp_path / "pool"), "--backend", "scripted", "-q"]).exit_code == 0
    res = tmp_path / "res.jsonl"
    assert cli(["simulate", str(tmp_path / "pool"), "--budgets", "2,4", "--seeds", "2", "-o", str(res),
                "-q"]).exit_code == 0
    weighted = tmp_path / "weighted.jsonl"
    weighted.write_text("".join(line for line in res.read_text().splitlines(keepends=True)
                                if not line.startswith('{"allocator"') or '"vote_rule":"majority"' not in line))
    result = cli(["report", str(weighted), "-o", str(tmp_path / "rep")])
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "rep" / "allocation_by_level.png").exists()
    assert "not drawn: cost_at_accuracy.png: the results hold no majority-vote rows" in result.stderr


@pytest.mark.parametrize("drop", [1, 60])
def test_report_refuses_a_results_file_cut_short(tmp_path, drop):
    """A results file that lost its last rows (a recommendation; or the recommendations, analyses
    and the last seeds' rows) was reported as if whole: its header's seeds beside fewer in the
    table, no recommendation, and no decile plot "because simulate writes none"."""
    lines = pathlib.Path(_results(tmp_path)).read_text().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:-drop]))
    result = cli(["report", str(cut), "-o", str(tmp_path / "rep")])
    said = " ".join(result.stderr.split())
    assert result.exit_code == 2 and f"error: {cut}: a `uab simulate -o` results file without its recommendation " \
        f"row for N = {4 if drop == 1 else '2, 4'} (they come last: is it cut short?)" in said, said
    assert not (tmp_path / "rep").exists()


@pytest.mark.parametrize("checked", [False, True])
def test_report_refuses_a_results_file_cut_after_its_header(tmp_path, checked):
    """A results file (of `simulate -o`, or of `--check`) that kept only its first row: it said
    "no result rows to report (`uab simulate -o` writes them)", of a file `uab simulate -o` wrote."""
    source = _checked(tmp_path) if checked else pathlib.Path(_results(tmp_path))
    cut = tmp_path / "cut.jsonl"
    cut.write_text(source.read_text().splitlines(keepends=True)[0])
    result = cli(["report", str(cut), "-o", str(tmp_path / "rep")])
    said = " ".join(result.stderr.split())
    assert result.exit_code == 2 and said == f"error: {cut}: a `uab simulate -o` results file without its " \
        f"{'check' if checked else 'recommendation'} rows (they come last: is it cut short?)", said
    assert not (tmp_path / "rep").exists()


def test_report_help_says_its_targets_default_to_the_results_files():
    """`report` without --targets shows the targets `simulate` used (its cost rows), not 5 new ones."""
    text = " ".join(cli(["report", "-h"]).stdout.split())
    assert "[default: the results file's (simulate's targets), else 5 inside" in text, text


@pytest.mark.parametrize("header", [True, False])
def test_report_refuses_two_results_files_appended(tmp_path, header):
    """The same replays twice (`cat a.jsonl a.jsonl`, a `>>`) would count every seed twice and
    shrink every standard error by √2: one line naming the file, exit 2, nothing written (the
    second file's header row, or in files without one, its first result row again)."""
    res = _results(tmp_path)
    lines = [line for line in pathlib.Path(res).read_text().splitlines() if header or '"allocator"' in line]
    twice = tmp_path / "twice.jsonl"
    twice.write_text("\n".join(lines * 2) + "\n")
    result = cli(["report", str(twice), "-o", str(tmp_path / "rep")])
    said = " ".join(result.stderr.split())
    if header:
        assert result.exit_code == 2 and said == f"error: {twice}:{len(lines) + 1}: a second {{\"simulation\": …}} " \
            "row (the first on line 1): one simulation per results file (were two appended?)", said
    else:
        again = len(lines) + 1  # its first result row
        assert result.exit_code == 2 and f"twice.jsonl:{again}: two result rows for " in said, said
        assert "seed 0" in said
    assert not (tmp_path / "rep").exists()


def test_report_refuses_the_results_of_two_pools_appended(tmp_path):
    """Two simulations of two pools at other budgets share no replay: appended, they were reported
    as one, `summary.md` naming the first pool for the second's rows, its cost table the first
    file's alone, and `--pool` checked against the first."""
    res = _results(tmp_path)
    q = write_jsonl(tmp_path / "q2.jsonl", arithmetic(12))
    assert cli(["pool", q, "-K", "8", "-o", str(tmp_path / "pool2"), "--backend", "scripted", "-q"]).exit_code == 0
    other = tmp_path / "other.jsonl"
    assert cli(["simulate", str(tmp_path / "pool2"), "--budgets", "8", "--seeds", "2", "-o", str(other),
                "-q"]).exit_code == 0
    both = tmp_path / "both.jsonl"
    first = pathlib.Path(res).read_text()
    both.write_text(first + other.read_text())
    result = cli(["report", str(both), "-o", str(tmp_path / "rep")])
    said = " ".join(result.stderr.split())
    assert result.exit_code == 2 and said == f"error: {both}:{len(first.splitlines()) + 1}: a second " \
        "{\"simulation\": …} row (the first on line 1): one simulation per results file (were two appended?)", said
    assert not (tmp_path / "rep").exists()


@pytest.mark.parametrize("key, value", [("accuracy", '"0.5"'), ("accuracy", "null")])
def test_report_names_the_line_of_a_result_row_it_cannot_read(tmp_path, key, value):
    res = _results(tmp_path)
    lines = pathlib.Path(res).read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if '"allocator"' in line) + 3
    lines[at] = lines[at].replace(f'"{key}":', f'"{key}":{value},"was":', 1)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    result = cli(["report", str(bad), "-o", str(tmp_path / "rep")])
    assert result.exit_code == 2 and f"bad.jsonl:{at + 1}: a result row's " in result.stderr, result.stderr
    assert not (tmp_path / "rep").exists()


def test_check_on_a_malformed_recommendation_names_the_file(tmp_path):
    res = _results(tmp_path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(pathlib.Path(res).read_text().replace('{"recommendation":{"N":2', '{"recommendation":{"N":null'))
    result = cli(["simulate", str(tmp_path / "pool"), "--check", str(bad)])
    assert result.exit_code == 2 and re.search(r"bad.jsonl:\d+: a recommendation row without 'N'", result.stderr), \
        result.stderr


@pytest.mark.parametrize(("edit", "says"), [
    (lambda rec: rec.update(N="2"), "a recommendation row's 'N' is '2', not what `uab simulate -o` writes"),
    (lambda rec: rec["settings"].update(vote_rule="bogus"), "unknown vote rule 'bogus'"),
    (lambda rec: rec["settings"].update(vote_temperature=-1), "--vote-temperature must be > 0, got -1"),
    (lambda rec: rec["settings"].update(exit_mode="skip"), "--exit-mode applies with --exit only"),
    (lambda rec: rec["settings"].update(foo=1), "unknown option for `uab run`: foo"),
    (lambda rec: rec.pop("settings"), "the recommendation for N = 2 has no settings to run"),
    # what --check's table prints: a traceback after the results file was written
    (lambda rec: rec.update(gain="0.05"), "a recommendation row's 'gain' is '0.05', not what `uab simulate -o` writes"),
    (lambda rec: rec.update(se=[1]), "a recommendation row's 'se' is [1], not what `uab simulate -o` writes"),
    (lambda rec: rec["held_out"].update(se_questions="0.1"),
     "a recommendation row's held_out's 'se_questions' is '0.1', not what `uab simulate -o` writes"),
    (lambda rec: rec.update(N=4), "a second recommendation for N = 4 (the first on line {4}): one results file per "
                                  "simulation")])
def test_a_hand_edited_recommendation_is_refused_naming_its_line(tmp_path, edit, says):
    """A recommendation row edited by hand (or two results files appended) is refused by `uab run
    --settings` and `uab simulate --check` with the file and the line of the row, nothing written;
    it was the file alone, a misleading message (no settings: "expected a JSON/TOML object of option
    values"; N "2": "no recommendation for --budget 2 (it has N = 2, 4)"), or for --check a bad vote
    rule without the file; and of two rows for one N the first ran, silently."""
    import json

    res = _results(tmp_path)
    rows = [json.loads(line) for line in pathlib.Path(res).read_text().splitlines()]
    at = next(i for i, r in enumerate(rows) if "recommendation" in r)  # N = 2's, then N = 4's
    edit(rows[at]["recommendation"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    where = f"/bad.jsonl:{at + 1}: " if "second" not in says else f"/bad.jsonl:{at + 2}: "
    says = says.replace("{4}", str(at + 1))
    q = write_jsonl(tmp_path / "new.jsonl", arithmetic(4))
    run = cli(["run", q, "--budget", "2", "--settings", str(bad), "-o", str(tmp_path / "run"), "-q"])
    assert run.exit_code == 2 and f"{where}{says}" in " ".join(run.stderr.split()), run.stderr
    assert not (tmp_path / "run").exists()
    if "no settings" in says:  # what --check does not read
        return
    check = cli(["simulate", str(tmp_path / "pool"), "--check", str(bad), "-o", str(tmp_path / "c.jsonl"), "-q"])
    assert check.exit_code == 2 and f"{where}{says}" in " ".join(check.stderr.split()), check.stderr
    assert not (tmp_path / "c.jsonl").exists()


def test_phase2_names_the_record_whose_provenance_holds_a_bad_value(tmp_path):
    rows = _sampled()
    for r in rows:
        r["extra"] = 1
        r["uab"] = {"phase1": {"backend": "scripted", "model": "scripted", "temperature": "hot", "k": 1}}
    result = cli(["phase2", write_jsonl(tmp_path / "a.jsonl", rows)])
    assert result.exit_code == 2, result.stderr
    assert "a.jsonl:1: its Phase-1 provenance (uab.phase1): --temperature takes a number, got 'hot'" in result.stderr


@pytest.mark.parametrize("args, names", [(["report", "-", "--pool", "-", "-o", "rep"], "RESULTS and --pool"),
                                         (["simulate", "-", "--check", "-"], "POOL and --check")])
def test_two_inputs_from_stdin_are_refused_by_name(tmp_path, monkeypatch, args, names):
    """The first would read stdin to its end and the second report "empty input"."""
    monkeypatch.chdir(tmp_path)
    result = cli(args, stdin=(ROOT / "results" / "smollm2-math" / "simulate.jsonl").read_bytes())
    assert result.exit_code == 2 and f"{names} cannot both read stdin" in result.stderr, result.stderr
    assert not (tmp_path / "rep").exists()


def test_simulate_help_explains_each_allocator_signal_and_vote_rule_in_a_line():
    """README: `uab COMMAND -h` explains each allocator, signal and vote rule in a line; simulate's
    lists named them only."""
    from uab_cli import allocators, signals, voting

    lines = [line.strip() for line in cli(["simulate", "-h"]).stdout.splitlines()]
    for name in [*allocators.ALLOCATORS, *signals.SUMMARIES, *voting.RULES]:
        assert any(line.startswith(f"{name}: ") for line in lines), name


def test_a_report_from_stdin_names_it_as_errors_do(tmp_path):
    res = _results(tmp_path)
    assert cli(["report", "-", "-o", str(tmp_path / "rep")], stdin=pathlib.Path(res).read_bytes()).exit_code == 0
    assert "Results: `<stdin>`" in (tmp_path / "rep" / "summary.md").read_text()  # it said `-`


# --- odd input files ------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["allocate", "phase2", "vote", "report"])
@pytest.mark.parametrize("data", [b"\xef\xbb\xbf", b"\xef\xbb\xbf\r\n  \n"], ids=["bom", "bom-blank-lines"])
def test_a_file_of_a_byte_order_mark_alone_is_empty(tmp_path, command, data):
    """An editor's empty UTF-8 file: its byte-order mark is no record (it was a traceback in
    `allocate` and an empty output in `vote` and `phase2`)."""
    path = tmp_path / "in.jsonl"
    path.write_bytes(data)
    out = tmp_path / ("rep" if command == "report" else "out.jsonl")
    extra = {"allocate": ["-N", "2"], "phase2": ["--backend", "scripted"]}.get(command, [])
    result = cli([command, str(path), *extra, "-o", str(out)])
    assert result.exit_code == 2, result.stderr
    assert result.stderr.strip() == f"error: {path}: empty input: no records"
    assert not out.exists()


@pytest.mark.parametrize("args,says", [
    (["phase1", "", "--backend", "scripted"], "INPUT"),
    (["allocate", "", "-N", "2"], "INPUT"),
    (["phase2", "", "--backend", "scripted"], "INPUT"),
    (["vote", ""], "INPUT"),
    (["run", "", "-N", "2", "--backend", "scripted"], "INPUT"),
    (["pool", "", "-K", "2", "--backend", "scripted"], "INPUT"),
    (["convert", ""], "INPUT"),
    (["simulate", ""], "POOL"),
    (["simulate", "{rows}", "--check", ""], "--check"),
    (["report", ""], "RESULTS"),
    (["report", "{rows}", "--pool", ""], "--pool"),  # was ignored: the report drawn without the pool
])
def test_an_empty_input_path_is_one_line_naming_the_input(tmp_path, fake_backend, args, says):
    """`uab phase1 ''` said "error: cannot read: No such file or directory", naming no input (and
    `convert ''` named the current folder, `report R --pool ''` drew without the pool): each names
    the argument or option, before anything is read, drawn or written."""
    fake_backend.in_cli()
    rows = write_jsonl(tmp_path / "rows.jsonl", _sampled())
    out = tmp_path / "out"
    result = cli([*(a.replace("{rows}", rows) for a in args), "-o", str(out)])
    assert result.exit_code == 2 and result.stderr == f"error: {says}: the path is empty (give a file, or - for " \
        "stdin)\n", result.stderr
    assert not out.exists() and fake_backend.drawn == 0


@pytest.mark.parametrize("command", ["phase1", "allocate", "phase2", "vote", "run", "pool", "simulate"])
def test_an_empty_settings_path_is_one_line_naming_the_option(tmp_path, fake_backend, command):
    """`--settings ''` was taken for no --settings: the command ran (drew, wrote) as if none were
    given; it is one error naming the option, before anything is drawn or written."""
    fake_backend.in_cli()
    rows = write_jsonl(tmp_path / "rows.jsonl", [{**r, "extra": 1, "p": 0.5} for r in _sampled()])
    out = tmp_path / "out"
    extra = {"allocate": ["-N", "2"], "run": ["-N", "2"], "pool": ["-K", "2"], "simulate": ["--budgets", "1"]}
    backend = ["--backend", "scripted"] if command in ("phase1", "phase2", "run", "pool") else []
    result = cli([command, rows, *extra.get(command, []), *backend, "--settings", "", "-o", str(out)])
    assert result.exit_code == 2 and result.stderr == "error: --settings: the path is empty (give a JSON/TOML file " \
        "of option values)\n", result.stderr
    assert not out.exists() and fake_backend.drawn == 0


@pytest.mark.parametrize("args,closed,says", [
    (["vote", "-", "-q"], "<&-", "error: <stdin>: cannot read: it is closed"),
    (["phase1", "-", "--backend", "scripted", "-q"], "<&-", "error: <stdin>: cannot read: it is closed"),
    (["convert", "-", "--preset", "math500"], "<&-", "error: <stdin>: cannot read: it is closed"),
    (["vote", "{rows}", "-q"], ">&-", "error: stdout: cannot write: it is closed"),
    (["--help"], ">&-", "error: stdout: cannot write: it is closed"),
    (["vote", "-h"], ">&-", "error: stdout: cannot write: it is closed"),
    (["--version"], ">&-", "error: stdout: cannot write: it is closed"),
], ids=["vote-stdin", "phase1-stdin", "convert-stdin", "vote-stdout", "help", "vote-help", "version"])
def test_a_closed_stdin_or_stdout_is_one_line(tmp_path, args, closed, says):
    """`uab vote - <&-`: a process started without stdin (or stdout) has none to read (write). The
    help and --version to a closed stdout exited 0, shown to no one, where a full one exits 2."""
    import subprocess
    import sys

    rows = write_jsonl(tmp_path / "p.jsonl", _sampled())
    command = " ".join(a.replace("{rows}", rows) for a in args)
    done = subprocess.run(["sh", "-c", f'exec "$0" -m uab_cli.cli {command} {closed}', sys.executable],
                          capture_output=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.decode().strip() == says


def test_report_refuses_a_closed_stdout_before_writing(tmp_path):
    """`uab report RESULTS -o DIR >&-`: report lists the files it writes on stdout; it wrote them
    and exited 0, the list lost, where a command whose output is stdout exits 2 on a closed one
    (and report itself on a full one); now it exits 2 as they do, before it writes anything."""
    import subprocess
    import sys

    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(8))
    assert cli(["pool", q, "-K", "4", "-o", str(tmp_path / "pool"), "--backend", "scripted", "-q"]).exit_code == 0
    res = str(tmp_path / "res.jsonl")
    assert cli(["simulate", str(tmp_path / "pool"), "--budgets", "2", "--seeds", "2", "-o", res, "-q"]).exit_code == 0
    rep = str(tmp_path / "rep")
    done = subprocess.run(["sh", "-c", f'exec "$0" -m uab_cli.cli report {res} -o {rep} >&-', sys.executable],
                          capture_output=True, timeout=120)
    assert done.returncode == 2 and done.stderr.decode() == "error: stdout: cannot write: it is closed\n", done.stderr
    assert not (tmp_path / "rep").exists()


def test_what_uab_prints_of_the_input_is_not_rich_markup(tmp_path):
    """A level, or a path, that reads as rich markup (`[/]`, `[red]`) is printed as it is, not
    styled, and not a MarkupError traceback after the output is written."""
    rows = [{**r, "level": level} for r, level in zip(_sampled(3), ("[/]", "[red]x", "2"))]
    votes = write_jsonl(tmp_path / "p.jsonl", rows)
    result = cli(["vote", votes, "-o", str(tmp_path / "v.jsonl")])
    assert result.exit_code == 0, result.stderr
    assert "[/]" in result.stderr and "[red]x" in result.stderr
    (tmp_path / "[").mkdir()
    odd = write_jsonl(tmp_path / "[" / "]p.jsonl", _sampled())  # a path holding "[/]"; its samples make a note
    result = cli(["run", odd, "-N", "2", "--backend", "scripted", "-o", str(tmp_path / "[" / "]run")])
    assert result.exit_code == 0, result.stderr
    assert f"record(s) of {odd} held samples" in result.stderr


def test_a_reader_that_closes_stdout_early_ends_the_command_as_sigpipe_would():
    """`uab vote f.jsonl | head -1`: exit 141 (128 + SIGPIPE, what a shell reports for a tool the
    pipe stopped) in silence; it was exit 1, the code of a backend failure."""
    import subprocess
    import sys

    pool = str(pathlib.Path(__file__).resolve().parent.parent / "results" / "smollm2-math" / "pool.jsonl")
    proc = subprocess.Popen([sys.executable, "-m", "uab_cli", "vote", pool, "-q"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout.read(100)
    proc.stdout.close()
    assert proc.wait(timeout=120) == 141 and proc.stderr.read() == b""


@pytest.mark.parametrize("interval", ["0", "0.05"])  # printed by the stage itself / also by the progress thread
def test_a_reader_that_closes_stderr_early_ends_the_command_as_sigpipe_would(tmp_path, interval):
    """`uab phase1 q.jsonl > p1.jsonl 2> >(head -1)`: once stderr's reader is gone, the next
    progress line ends the command with exit 141, as on stdout, writing nothing. It exited 1 (a
    backend failure's code) when the stage printed the line, and when the progress thread did,
    stdout was pointed at /dev/null and the stage went on to exit 0 with an empty output."""
    import subprocess
    import time

    from conftest import start_uab, wait_held

    questions = write_jsonl(tmp_path / "q.jsonl", arithmetic(5))
    with open(tmp_path / "p1.jsonl", "wb") as out:
        proc = start_uab(["phase1", questions, "--backend", "scripted"], hold_after=1, stdout=out,
                         stderr=subprocess.PIPE, env={**os.environ, "UAB_PROGRESS_INTERVAL": interval})
    try:
        wait_held(proc)
        assert proc.stderr.readline().startswith(b"phase1: 1/5 samples")
        proc.stderr.close()
        if interval != "0":
            time.sleep(0.5)  # the progress thread prints meanwhile (if it does not, the stage does: the same)
        proc.stdin.close()  # the stage goes on
        assert proc.wait(timeout=60) == 141
    finally:
        proc.kill()
        proc.wait()
    assert (tmp_path / "p1.jsonl").read_bytes() == b""


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_stderr_that_cannot_be_written_exits_2_not_a_backend_failures_1(tmp_path):
    """`uab phase1 q.jsonl -o p1.jsonl 2> log` on a full disk: the first progress line fails, and
    so did the error line about it, so the command ended with exit 1, a backend failure's code."""
    import subprocess
    import sys

    questions = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    with open("/dev/full", "wb") as full:
        done = subprocess.run([sys.executable, "-m", "uab_cli", "phase1", questions, "--backend", "scripted", "-o",
                               str(tmp_path / "p1.jsonl")], stderr=full, timeout=120, check=False)
    assert done.returncode == 2 and not (tmp_path / "p1.jsonl").exists()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_usage_error_on_a_stderr_that_cannot_be_written_exits_2_too():
    """`uab vote --bogus x 2> log` on a full disk: the usage error's line failed to write and the
    command ended with exit 1 (a backend failure's code), as other errors did before they went unsaid."""
    import subprocess
    import sys

    for args in (["vote", "--bogus", "x"], ["vote"], ["bogus"], ["--bogus"], ["--version=3"], []):
        with open("/dev/full", "wb") as full:
            done = subprocess.run([sys.executable, "-m", "uab_cli", *args], stderr=full, timeout=120, check=False)
        assert done.returncode == 2, args


def test_a_failed_stderr_is_named_stderr_not_stdout(tmp_path, monkeypatch):
    """After a write to a full stderr (`2> log` on a full disk) the boundary's error line, which
    goes unsaid there, named stdout ("stdout: cannot write: …"), though stdout had taken nothing
    amiss; it names stderr (captured here, where it can be read)."""
    import errno

    from uab_cli import cli as uab_cli

    class Full:  # a full disk: each write fails, and the text stays pending until flushed out
        def write(self, text):
            raise OSError(errno.ENOSPC, "No space left on device")

        def flush(self):
            raise OSError(errno.ENOSPC, "No space left on device")

    told = []
    monkeypatch.setattr(uab_cli, "err", uab_cli._Stderr(file=Full()))
    monkeypatch.setattr(uab_cli, "_tell", told.append)
    votes = tmp_path / "v.jsonl"
    result = cli(["vote", write_jsonl(tmp_path / "p.jsonl", _sampled()), "-o", str(votes)])
    assert result.exit_code == 2 and told == ["[red]error:[/red] stderr: cannot write: No space left on device"], told
    assert len(votes.read_text().splitlines()) == 3  # written before the summary table failed


@pytest.mark.parametrize("field,value", [("N", "true"), ("N", "2.5"), ("N", "0"), ("seed", "-1")])
def test_a_result_row_whose_n_or_seed_is_no_count_is_refused(tmp_path, field, value):
    """`simulate` writes integers; a hand-edited `true` read as N = 1, a 2.5 made a budget of its own."""
    res = _results(tmp_path)
    lines = pathlib.Path(res).read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith('{"allocator"'))
    lines[at] = re.sub(rf'"{field}":\s*-?\d+', f'"{field}":{value}', lines[at], count=1)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    result = cli(["report", str(bad), "-o", str(tmp_path / "rep")])
    said = f"error: {bad}:{at + 1}: a result row's N and seed are counts"
    assert result.exit_code == 2 and said in result.stderr, result.stderr
    assert not (tmp_path / "rep").exists()


def test_a_report_that_fails_while_drawing_leaves_no_figure_open(tmp_path):
    """A row of another shape found after the first figure was drawn: each later report in the
    process (a test run, a notebook) counted the figures left open, up to matplotlib's warning."""
    import matplotlib.pyplot as plt

    res = _results(tmp_path)
    rows = [line.replace('"min_N":', '"min_N":"x","was":') for line in pathlib.Path(res).read_text().splitlines()]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(rows) + "\n")
    before = set(plt.get_fignums())
    assert cli(["report", str(bad), "-o", str(tmp_path / "rep")]).exit_code == 2
    assert set(plt.get_fignums()) == before


def test_a_results_file_cut_before_its_recommendations_says_so(tmp_path):
    """A results file that lost its last rows (the recommendations) is refused by `uab run
    --settings` as one: it said `unknown option for uab run: simulation` (the header alone, one
    JSON object) or `expected a JSON/TOML object of option values`."""
    res = pathlib.Path(_results(tmp_path)).read_text().splitlines(keepends=True)
    q = write_jsonl(tmp_path / "new.jsonl", arithmetic(4))
    for keep in (1, 3):
        cut = tmp_path / f"cut{keep}.jsonl"
        cut.write_text("".join(res[:keep]))
        result = cli(["run", q, "--budget", "2", "--settings", str(cut), "-o", str(tmp_path / "run"), "-q"])
        assert result.exit_code == 2 and "a `uab simulate -o` results file without recommendation rows (they come " \
            "last: is it cut short?)" in " ".join(result.stderr.split()), result.stderr
        assert not (tmp_path / "run").exists()


def test_report_of_a_vote_rule_this_version_does_not_know_lists_it_last(tmp_path):
    """A newer uab's rule in the results: reported after the known rules; sorting the table
    failed with '… is not in list'."""
    res = _results(tmp_path)
    rows = [orjson.loads(line) for line in pathlib.Path(res).read_text().splitlines()]
    newer = [{**r, "vote_rule": "newer-rule"} for r in rows if r.get("vote_rule") == "majority" and "accuracy" in r]
    assert newer
    at = max(i for i, r in enumerate(rows) if r.get("vote_rule") == "majority" and "accuracy" in r) + 1
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [*rows[:at], *newer, *rows[at:]]))
    result = cli(["report", str(mixed), "-o", str(tmp_path / "rep")])
    assert result.exit_code == 0, result.stderr
    table = (tmp_path / "rep" / "summary.md").read_text()
    assert "newer-rule" in table and "2 seeds" in table


@pytest.mark.parametrize("given, expected", [
    (["--vote-temperature", "0.05,x"], "--vote-temperature takes comma-separated numbers, got '0.05,x'"),
    (["--vote-temperature", "0.1,0"], "--vote-temperature must be > 0, got 0.0"),  # as vote
    (["--vote-temperature", "0.1", "--vote-rules", "majority"], "--vote-temperature applies to the vote rule weighted"),
    # rules that read only the confidences' order: the list was taken and ignored, silently
    (["--vote-rules", "majority,confident-ties", "--vote-temperature", "0.05,0.1"],
     "error: --vote-temperature applies to the vote rule weighted (of a signal other than vcs), not --vote-rules "
     "majority,confident-ties\n"),
    (["--vote-rules", "filtered,most-confident", "--vote-temperature", "0.2"],  # at its default too
     "--vote-temperature applies to the vote rule weighted (of a signal other than vcs), not --vote-rules "
     "filtered,most-confident\n"),
    (["--vote-rules", "weighted", "--vote-signal", "vcs", "--vote-temperature", "0.05,0.1"],  # vcs: score/10
     "--vote-temperature applies to the vote rule weighted (of a signal other than vcs), not --vote-rules weighted "
     "with --vote-signal vcs\n"),
    # a --vcs pool's own vote signal is vcs too: the list was taken, and weighted replayed once, ignoring it
    (["--vote-rules", "weighted", "--vote-temperature", "0.05,0.1", "{vcs}"],
     "--vote-temperature applies to the vote rule weighted (of a signal other than vcs), not --vote-rules weighted "
     "with the pool's own vote signal vcs\n"),
    (["--vote-rules", "majority,confident-ties", "--settings", "{settings}"],
     "{settings}:1: --vote-temperature applies to the vote rule weighted"),
    (["--vote-rules", "confident-ties", "--vote-keep", "0.5"], "--vote-keep applies to the vote rule filtered, not "),
])
def test_simulate_vote_temperatures_are_checked_like_votes(tmp_path, given, expected):
    drawn = {"uab": {"phase1": {"backend": "cohere", "model": "command-r", "vcs": True}}} if "{vcs}" in given else {}
    given = [a for a in given if a != "{vcs}"]
    pool = write_jsonl(tmp_path / "p.jsonl", [{**r, **drawn} for r in _sampled(vcs=8)])
    settings = tmp_path / "s.json"
    settings.write_text('{"vote_temperature": "0.05,0.1"}')
    given, expected = [a.replace("{settings}", str(settings)) for a in given], expected.replace("{settings}", str(settings))
    result = cli(["simulate", pool, "-o", str(tmp_path / "r.jsonl"), *given])
    assert result.exit_code == 2 and expected in result.stderr and not (tmp_path / "r.jsonl").exists(), result.stderr


def test_simulate_takes_vote_temperatures_where_a_rule_of_its_grid_reads_them(tmp_path):
    """A grid with weighted (of a signal T scales) replays it at each; vote and run still take a
    --vote-temperature for an order-only rule (an old results file's recommendation carries one)."""
    pool = write_jsonl(tmp_path / "p.jsonl", _sampled())
    out = tmp_path / "r.jsonl"
    assert cli(["simulate", pool, "--vote-rules", "confident-ties,weighted", "--vote-temperature", "0.05,0.1",
                "--budgets", "1", "--seeds", "1", "-o", str(out), "-q"]).exit_code == 0
    assert {r.get("vote_temperature") for r in read_jsonl(out) if r.get("vote_rule") == "weighted"} == {0.05, 0.1}
    voted = cli(["vote", pool, "--vote-rule", "confident-ties", "--vote-temperature", "0.1", "-o", str(tmp_path / "v")])
    assert voted.exit_code == 0, voted.stderr


def test_simulate_records_the_vote_temperatures_it_crossed(tmp_path):
    pool = write_jsonl(tmp_path / "p.jsonl", [{**r, "samples": [{"index": j, "phase": 1, "text": "1", "answer": "1",
                                                                  "anll": 0.1} for j in range(2)]}
                                               for r in arithmetic(3)])
    out = tmp_path / "r.jsonl"
    assert cli(["simulate", pool, "--budgets", "2", "--seeds", "2", "--allocators", "uniform", "-o", str(out),
                "-q"]).exit_code == 0
    about = read_jsonl(out)[0]["simulation"]["vote"]
    assert about["temperatures"] == [0.05, 0.1, 0.2] and "temperature" not in about  # the default candidates
    assert cli(["simulate", pool, "--budgets", "2", "--seeds", "2", "--allocators", "uniform", "-o", str(out),
                "--vote-temperature", "0.3", "-q"]).exit_code == 0
    rows = list(read_jsonl(out))
    assert rows[0]["simulation"]["vote"]["temperature"] == 0.3
    assert {r["vote_temperature"] for r in rows if r.get("vote_rule") == "weighted"} == {0.3}
    # no rule a temperature changes: the default candidates were not crossed, and the header says so
    assert cli(["simulate", pool, "--budgets", "2", "--seeds", "2", "--allocators", "uniform", "-o", str(out),
                "--vote-rules", "majority,filtered", "-q"]).exit_code == 0
    assert read_jsonl(out)[0]["simulation"]["vote"]["temperature"] == 0.2


def test_simulate_records_a_repeated_vote_temperature_once(tmp_path):
    """``--vote-temperature 0.05,0.05`` replays weighted once, at 0.05; the header said
    ``"temperatures": [0.05, 0.05]``, a cross of two temperatures that no row holds."""
    pool = write_jsonl(tmp_path / "p.jsonl", [{**r, "samples": [{"index": j, "phase": 1, "text": "1", "answer": "1",
                                                                  "anll": 0.1} for j in range(2)]}
                                               for r in arithmetic(3)])
    out = tmp_path / "r.jsonl"
    for given, expected in (("0.05,0.05", {"temperature": 0.05}), ("0.1,0.05,0.1", {"temperatures": [0.1, 0.05]})):
        assert cli(["simulate", pool, "--budgets", "2", "--seeds", "2", "--allocators", "uniform", "-o", str(out),
                    "--vote-temperature", given, "-q"]).exit_code == 0
        about = read_jsonl(out)[0]["simulation"]["vote"]
        assert {k: about.get(k) for k in expected} == expected and len(about) == 4, about


@pytest.mark.parametrize("option", [["--vote-temperature", "0.05"], ["--vote-keep", "0.3"]])
def test_an_unknown_vote_rule_beside_a_confidence_option_is_named(tmp_path, option):
    """The option check ran first and named no rule: "--vote-keep applies to the vote rule
    filtered, not " (blank)."""
    pool = write_jsonl(tmp_path / "p.jsonl", _sampled())
    result = cli(["simulate", pool, "--vote-rules", "bogus", *option])
    assert result.exit_code == 2 and "unknown vote rule 'bogus'" in result.stderr


@pytest.mark.parametrize("command", [["run", "--budget", "2"], ["pool", "-K", "2"]])
@pytest.mark.parametrize("stop", ["backend", "interrupt"])
def test_a_run_stopped_before_its_first_sample_does_not_say_samples_are_kept(tmp_path, monkeypatch, fake_backend,
                                                                             command, stop):
    """A run or pool that fails (exit 1) or is interrupted (exit 130) before its first sample
    removes the directory it made: its hint said "finished samples are kept; re-run the same
    command to resume", of samples there were none of, in a directory that was gone."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    out = tmp_path / "new" / "r"
    fake_backend.in_cli(fail_after=0)
    if stop == "interrupt":
        def interrupted(*_a, **_k):
            raise KeyboardInterrupt

        monkeypatch.setattr("uab_cli.backends.scripted.ScriptedBackend.generate", interrupted)
    result = cli([command[0], q, *command[1:], "--backend", "scripted", "-o", str(out)])
    said = {"backend": "No sample was finished, so none is kept.",
            "interrupt": "interrupted: no sample was finished, so none is kept."}[stop]
    assert (result.exit_code, result.stderr.splitlines()[-1]) == ({"backend": 1, "interrupt": 130}[stop], said)
    assert "kept;" not in result.stderr and not (tmp_path / "new").exists()


@pytest.mark.parametrize("stop", ["backend", "interrupt"])
def test_a_run_stopped_after_its_judge_before_its_first_sample_says_the_labels_are_kept(tmp_path, monkeypatch,
                                                                                        fake_backend, stop):
    """A run whose judge answered but that stopped before its first sample keeps the judge's labels (paid
    calls), and its rerun reuses them: it said "no sample was finished, so none is kept"."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    out = tmp_path / "r"
    fake_backend.in_cli(fail_after=3 if stop == "backend" else None)  # the 3 judge calls, then no sample
    if stop == "interrupt":
        def interrupted(*_a, **_k):
            raise KeyboardInterrupt

        monkeypatch.setattr("uab_cli.pipeline.phase1", interrupted)
    result = cli(["run", q, "--budget", "2", "--allocator", "judge", "--backend", "scripted", "-o", str(out)])
    said = {"backend": "No sample was finished; the judge's labels are kept: re-run the same command to resume.",
            "interrupt": "interrupted: no sample was finished; the judge's labels are kept: re-run the same "
                         "command to resume."}[stop]
    assert (result.exit_code, result.stderr.splitlines()[-1]) == ({"backend": 1, "interrupt": 130}[stop], said)
    assert (out / "judge.json").exists() or (out / "judge.ckpt.jsonl").exists()


def test_a_run_out_of_memory_says_its_finished_samples_are_kept(tmp_path, monkeypatch):
    """Out of memory was one line, exit 2, and said nothing of the samples the run directory
    holds, which a rerun with a smaller budget reuses."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    out = str(tmp_path / "r")
    assert cli(["run", q, "--budget", "2", "--backend", "scripted", "-o", out, "-q"]).exit_code == 0

    def exhausted(*_a, **_k):
        raise MemoryError

    monkeypatch.setattr("uab_cli.backends.scripted.ScriptedBackend.generate", exhausted)
    result = cli(["run", q, "--budget", "4", "--backend", "scripted", "-o", out])
    assert result.exit_code == 2 and "out of memory" in result.stderr, result.stderr
    assert result.stderr.splitlines()[-1].startswith("Finished samples are kept; re-run with a smaller --budget")


@pytest.mark.parametrize("k, seeds, says", [(4, "1", "--check needs --seeds 2 or more"),
                                            (2, "2", "budget N=4 needs 32 samples; the pool holds 2")])
def test_simulate_check_refused_is_one_line_without_notes_on_the_pool(tmp_path, k, seeds, says):
    """--check refused (one seed, an N the pool cannot fill) printed its note that the pool holds
    the questions the recommendations were chosen on first: two lines for one error."""
    res = _results(tmp_path)  # a pool of 8 questions, K = 4; budgets 2, 4
    pool = str(tmp_path / "pool") if k == 4 else str(tmp_path / "pool2")
    if k != 4:
        assert cli(["pool", str(tmp_path / "q.jsonl"), "-K", str(k), "-o", pool, "--backend", "scripted",
                    "-q"]).exit_code == 0
    result = cli(["simulate", pool, "--check", res, "--seeds", seeds, "-o", str(tmp_path / "chk.jsonl")])
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith("error: ") and says in result.stderr and "note:" not in result.stderr
    assert not (tmp_path / "chk.jsonl").exists()


@pytest.mark.parametrize("given, option", [
    (["--vote-rules", ""], "--vote-rules"),  # replayed majority alone, silently
    (["--vote-rules", "majority,,weighted"], "--vote-rules"),
    (["--allocators", "uab,"], "--allocators"),
    (["--allocators", ""], "--allocators"),  # replayed uniform alone, silently
    (["--signals", ""], "--signals"),  # the pool's own signal, as if not given
    (["--budgets", "1,,2"], "--budgets"),
    (["--vote-temperature", "0.1,,0.2"], "--vote-temperature"),
    (["--targets", "50,"], "--targets"),
])
def test_simulate_lists_with_an_empty_item_are_refused_naming_the_option(tmp_path, given, option):
    """An empty item of a comma-separated list was dropped: `a,,b` read as `a,b`, and an empty
    list as the reference alone or the default."""
    pool = write_jsonl(tmp_path / "p.jsonl", _sampled())
    result = cli(["simulate", pool, "--seeds", "1", "-o", str(tmp_path / "r.jsonl"), *given])
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1, result.stderr
    assert lines[0] == f"error: {option} takes comma-separated {_LIST_ITEMS[option]}, got {given[1]!r}: an empty item"
    assert not (tmp_path / "r.jsonl").exists()


_LIST_ITEMS = {"--vote-rules": "names", "--allocators": "names", "--signals": "names", "--budgets": "integers",
               "--vote-temperature": "numbers", "--targets": "numbers"}


@pytest.mark.parametrize("command, given, says", [
    ("simulate", ["--seeds", "0"], "Invalid value for '--seeds'"),  # a single value: refused as it is parsed
    ("simulate", ["--budgets", "2,x"], "--budgets takes comma-separated integers, got '2,x'"),
    ("simulate", ["--allocators", "uab,"], "--allocators takes comma-separated names, got 'uab,': an empty item"),
    ("simulate", ["-T", "abc"], "-T/--signal-temperature takes comma-separated numbers, got 'abc'"),
    ("simulate", ["-T", "0.2,inf"], "--signal-temperature must be a finite number, got inf"),
    ("simulate", ["--vote-temperature", "0.1,0"], "--vote-temperature must be > 0, got 0.0"),
    ("simulate", ["--targets", "0.5"], "--targets takes percentages, e.g. 27.5 (not 0.275), got '0.5'"),
    ("simulate", ["--settings", "{settings}"], "{settings}:1: --budgets takes comma-separated integers, got '2,x'"),
    ("report", ["--targets", "101"], "--targets takes comma-separated accuracies in percent"),
])
def test_a_bad_list_value_is_refused_before_the_input_is_read(tmp_path, command, given, says):
    """simulate's (and report's --targets) list options were parsed in the command, some after the
    pool was read: a bad --budgets or -T on a big pool was reported after seconds of reading, and
    one beside a missing pool not at all. Now each is refused as it is parsed, as --seeds is."""
    settings = tmp_path / "s.json"
    settings.write_text('{"budgets": "2,x"}')
    given = [a.replace("{settings}", str(settings)) for a in given]
    out = ["-o", str(tmp_path / ("r.jsonl" if command == "simulate" else "rep"))]
    result = cli([command, str(tmp_path / "missing.jsonl"), *out, *given])
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1, result.stderr
    assert says.replace("{settings}", str(settings)) in lines[0] and "missing.jsonl" not in lines[0]


@pytest.mark.parametrize("given, says", [
    (["--allocators", "uab,bogus"], "unknown allocator 'bogus'; choose from uab, "),
    (["--signals", "anll,nope"], "unknown signal 'nope'; choose from anll, "),
    (["--vote-rules", "majority,nope"], "unknown vote rule 'nope'; choose from majority, "),
    (["--settings", "{settings}"], "{settings}:1: unknown allocator 'bogus'"),
])
def test_an_unknown_name_in_a_list_is_refused_before_the_pool_is_read(tmp_path, given, says):
    """simulate's --allocators, --signals and --vote-rules were parsed before the pool, but their
    names were checked only by the replay, after it was read: a typo on a big pool cost its reading
    first, and beside a missing pool only the pool's error showed. Now each name is checked
    against its registry as the list is parsed, with the replay's message."""
    settings = tmp_path / "s.json"
    settings.write_text('{"allocators": "bogus"}')
    given = [a.replace("{settings}", str(settings)) for a in given]
    result = cli(["simulate", str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "r.jsonl"), *given])
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1, result.stderr
    assert says.replace("{settings}", str(settings)) in lines[0] and "missing.jsonl" not in lines[0]
    assert not (tmp_path / "r.jsonl").exists()


NOT_UTF8 = "not valid UTF-8 at column 3 (byte 0xe9): save the file as UTF-8"  # one wording, every reader


@pytest.mark.parametrize("name,data,args", [
    ("in.jsonl", orjson.dumps(sampled(0)) + b'\n{"\xe9": 1}\n', ["vote", "{f}"]),
    ("in.csv", b"question,answer\nqq\xe9,1\n", ["convert", "{f}"]),
    ("in.json", b'[{"question": "a", "answer": "1"},\n{"\xe9": 1}]\n', ["convert", "{f}"]),
    ("s.json", b'{"budget": 2,\n "\xe9": 1}\n', ["vote", "{q}", "--settings", "{f}"]),
    ("s.toml", b"budget = 2\nxy\xe9 = 1\n", ["vote", "{q}", "--settings", "{f}"]),
    ("t.json", b'[{"role": "user",\n "\xe9": "{question}"}]', ["phase1", "{q}", "--backend", "scripted",
                                                             "--prompt-template", "{f}"]),
], ids=["jsonl-stage", "convert-csv", "convert-json", "settings-json", "settings-toml", "prompt-template"])
def test_every_reader_words_a_byte_that_is_no_utf8_alike(tmp_path, name, data, args):
    """A Latin-1 'é' was worded four ways: 'not valid UTF-8 at column 3 (byte 3: 0xe9)' (a JSONL
    stage), '... (byte 0xe9): save the file as UTF-8' (convert, no column), 'not JSON: 'utf-8' codec
    can't decode byte 0xe9 in position 16: invalid continuation byte' (a settings file) and
    'prompt template is not UTF-8: byte 21 is 0xe9'. Now one line, from one place: file, line, column, byte."""
    path = tmp_path / name
    path.write_bytes(data)
    q = write_jsonl(tmp_path / "q.jsonl", [sampled(0)])
    out = tmp_path / "out.jsonl"
    result = cli([a.format(f=path, q=q) for a in args] + ["-o", str(out)])
    assert result.exit_code == 2 and not out.exists()
    assert result.stderr == f"error: {path}:2: {NOT_UTF8}\n"


@pytest.mark.parametrize("data,line,column", [
    (b"question,answer\nWhat is \x00 2 + 2?,4\n", 2, 9),
    (b'question,answer\n"a\n b\x00",4\n', 3, 3),  # a quoted cell's second line: the NUL's own line
    (b"quest\x00ion,answer\nq,4\n", 1, 6),
    (b"question,answer\nq,4\n\x00\x00\x00\x00\n", 3, 1),  # a file padded with zeros after a crash
])
def test_a_nul_byte_in_a_csv_is_refused_as_in_jsonl(tmp_path, data, line, column):
    """A NUL inside a CSV cell converted silently (csv reads it as a character: the question held
    '\\u0000'), and zero padding was 'row has 1 cells'; a JSONL input's NUL was refused. Now a CSV
    one is too, naming its line and column."""
    path, out = tmp_path / "in.csv", tmp_path / "out.jsonl"
    path.write_bytes(data)
    result = cli(["convert", str(path), "-o", str(out)])
    assert result.exit_code == 2 and not out.exists()
    assert result.stderr == (f"error: {path}:{line}: a NUL byte at column {column}: binary data, not CSV text "
                             "(a file padded with zeros?)\n")


def test_a_blank_model_name_names_the_option(tmp_path):
    """`--model " "` said 'the model name is empty', naming no option (`--model ""` is the default)."""
    q, out = write_jsonl(tmp_path / "q.jsonl", arithmetic(1)), tmp_path / "out.jsonl"
    result = cli(["phase1", q, "--model", " ", "-o", str(out)])
    assert result.exit_code == 2 and not out.exists()
    assert result.stderr.startswith("error: --model: the model name is empty") and result.stderr.count("\n") == 1


@pytest.mark.parametrize("where", ["option", "settings"])
def test_a_blank_model_name_is_refused_before_any_backend(tmp_path, where):
    """`--model " "` was refused only where a local or vllm model loaded: the scripted backend drew
    with it and a `--settings` file's `{"model": " "}` passed. Now it is refused with the other
    options' checks, a settings file's at its line."""
    q, out, conf = write_jsonl(tmp_path / "q.jsonl", arithmetic(1)), tmp_path / "out.jsonl", tmp_path / "s.json"
    conf.write_text('{\n  "backend": "scripted",\n  "model": " "\n}\n')
    given = ["--backend", "scripted", "--model", " "] if where == "option" else ["--settings", str(conf)]
    result = cli(["phase1", q, *given, "-o", str(out)])
    at = f"{conf}:3: " if where == "settings" else ""
    assert result.exit_code == 2 and not out.exists()
    assert result.stderr == (f"error: {at}--model: the model name is empty (leave --model out for the default "
                             "model)\n")


@pytest.mark.parametrize("command", ["", "allocate", "run", "simulate"])
def test_the_help_under_a_latin1_locale_escapes_what_it_cannot_encode(command):
    """`PYTHONIOENCODING=latin-1 uab -h` (a Latin-1 terminal) was a traceback, exit 1, at the help's
    first '→' or '−'; now the character is written as an escape, as Python writes stderr's."""
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "latin-1"}
    result = subprocess.run([sys.executable, "-m", "uab_cli", *filter(None, [command]), "-h"],
                            capture_output=True, env=env, timeout=60)
    assert result.returncode == 0 and result.stderr == b"", result.stderr[-300:]
    assert result.stdout.startswith(b"Usage: ") and b"\\u2" in result.stdout


def test_report_draws_the_anll_plot_of_equal_huge_anlls_and_names_it_not_drawn_beyond_1e300(tmp_path):
    """ANLLs all equal and large (1e20) made numpy's bins fail ("Too many bins"), reported as `a row is
    not what uab simulate -o writes`; ANLLs near the largest float no matplotlib axis draws: the
    first is drawn in one bin, the second named as not drawn, with why."""
    for anll, drawn in ((1e20, True), (1e308, False)):
        rows = [{"id": f"q{i}", "question": "q?", "answer": "1", "samples": [
            {"index": j, "phase": 1, "text": a, "answer": a, "anll": anll} for j, a in enumerate("1212")]}
            for i in range(3)]
        pool, res, rep = write_jsonl(tmp_path / "p.jsonl", rows), str(tmp_path / "r.jsonl"), tmp_path / f"rep{drawn}"
        assert cli(["simulate", pool, "--budgets", "2", "--seeds", "1", "-q", "-o", res]).exit_code == 0
        result = cli(["report", res, "--pool", pool, "-o", str(rep)])
        assert result.exit_code == 0, result.stderr
        assert (rep / "anll_correct_vs_incorrect.png").exists() == drawn
        assert drawn or "not drawn: anll_correct_vs_incorrect.png: an ANLL of 1e+308 in the pool" in result.stderr
