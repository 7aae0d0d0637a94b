"""The record reader and writer: chunked reading, errors in file order, the JSON-array and
terminal-stdin hints, records passing through unchanged, and the vectorised signal means."""

from __future__ import annotations

import math

import orjson
import pytest
from conftest import cli, sampled, write_jsonl

from uab_cli import gcpolicy, jsonl
from uab_cli.errors import UabError
from uab_cli.jsonl import (
    load_records,
    read_jsonl,
    read_records,
    write_records,
)
from uab_cli.records import check_record
from uab_cli.signals import MissingSignal, success_probabilities

# --- chunked reading ---------------------------------------------------------------


@pytest.mark.parametrize("chunk", [7, 64, 1 << 20])
def test_chunked_reading_returns_every_line(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(jsonl, "_CHUNK", chunk)
    rows = [sampled(i) for i in range(50)]
    body = b"".join(orjson.dumps(r) + (b"\r\n" if i % 5 == 0 else b"\n") for i, r in enumerate(rows))
    path = tmp_path / "in.jsonl"
    path.write_bytes(body.rstrip(b"\n"))  # last line without a newline is still a record
    got, lines = load_records(str(path), "sampled")
    assert got == rows and lines == list(range(1, 51))
    assert [n for n, _ in read_records(str(path), "sampled")] == lines
    assert [obj for _, obj in read_jsonl(str(path))] == rows


@pytest.mark.parametrize("chunk", [16, 1 << 20])
def test_errors_come_in_file_order(tmp_path, monkeypatch, chunk):
    """A bad record on line 3 is reported before a JSON error on line 5 of the same chunk."""
    monkeypatch.setattr(jsonl, "_CHUNK", chunk)
    lines = [orjson.dumps(sampled(i)) for i in range(6)]
    lines[2] = orjson.dumps({**sampled(2), "question": ""})
    lines[4] = b'{"id": "q4", "question": '
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(UabError) as exc:
        load_records(str(path), "sampled")
    assert (exc.value.line, exc.value.message) == (3, "'question' must be a non-empty string")
    lines[2] = orjson.dumps(sampled(2))
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(UabError, match="invalid JSON") as exc:
        list(read_records(str(path), "sampled"))
    assert exc.value.line == 5 and exc.value.path == str(path)


def test_runaway_line_is_refused_before_it_is_buffered(tmp_path, monkeypatch):
    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", 1000)
    path = tmp_path / "in.jsonl"
    path.write_bytes(orjson.dumps(sampled(0)) + b"\n" + b'{"id": "' + b"x" * 5000)  # no newline ever comes
    with pytest.raises(UabError, match="line longer than") as exc:
        load_records(str(path), "sampled")
    assert exc.value.line == 2


# --- hints ---------------------------------------------------------------------------


def test_json_array_file_points_to_convert(tmp_path):
    rows = [{"id": "q1", "question": "What is 1 + 1?", "answer": "2"}]
    pretty = tmp_path / "questions.jsonl"
    pretty.write_bytes(orjson.dumps(rows, option=orjson.OPT_INDENT_2))  # line 1 is "["
    result = cli(["phase1", str(pretty), "--backend", "scripted", "-o", str(tmp_path / "out.jsonl")])
    assert result.exit_code == 2
    assert f"{pretty}:1: this looks like a JSON array" in result.stderr
    assert f"`uab convert {pretty}`" in result.stderr and not (tmp_path / "out.jsonl").exists()
    # ... and the hint is true: convert reads it, although it is named .jsonl
    converted = tmp_path / "converted.jsonl"
    assert cli(["convert", str(pretty), "-o", str(converted)]).exit_code == 0
    assert [r["question"] for r in load_records(str(converted))[0]] == ["What is 1 + 1?"]


def test_json_array_on_stdin_says_to_pipe_it_through_convert():
    result = cli(["phase1", "-", "--backend", "scripted"], stdin=b'[{"id": "q1", "question": "Q?"}]\n')
    assert result.exit_code == 2
    assert result.stderr.startswith("error: <stdin>:1: expected a JSON object, got list: this looks like a JSON array")
    assert "pipe it through `uab convert -`" in result.stderr


@pytest.mark.parametrize("args", [["allocate", "-", "--budget", "2"], ["vote", "-", "--vote-rule", "weighted"]])
def test_a_hint_for_stdin_names_no_temporary_copy(args):
    """allocate and a confidence vote read stdin twice, from a temporary copy: the hint said
    "`uab convert /tmp/uab-stdin.x1y2.jsonl` makes question records of it", a file gone at exit."""
    result = cli(args, stdin=b'[{"id": "q1", "question": "Q?"}]\n')
    assert result.exit_code == 2 and "uab-stdin" not in result.stderr
    assert "pipe it through `uab convert -`" in result.stderr


@pytest.mark.parametrize("rows", [2, 300_000])  # one line, or one over 8 MiB: each said something else
def test_lone_carriage_return_line_ends_are_named(tmp_path, rows):
    """A file split by CR alone (old Mac OS) read as one line: "invalid JSON (truncated last
    line?): unexpected content after document", or "line longer than 8 MiB"."""
    path = tmp_path / "mac.jsonl"
    path.write_bytes(b"\r".join(orjson.dumps({"id": f"q{i}", "question": f"What is {i} + 1?"}) for i in range(rows)))
    for source, stdin, name in ((str(path), None, str(path)), ("-", path.read_bytes(), "<stdin>")):
        result = cli(["phase1", source, "--backend", "scripted", "-o", str(tmp_path / "out.jsonl")], stdin=stdin)
        assert result.exit_code == 2 and not (tmp_path / "out.jsonl").exists()
        assert result.stderr.startswith(f"error: {name}:1: lines end with a lone carriage return (CR, old Mac OS ")
        assert "`tr '\\r' '\\n' <" in result.stderr


@pytest.mark.parametrize("where", [b'{"id\x00": "q1"}', b'{"id": "q1", "question": "Q\x00?"}', b"\x00" * 64])
def test_a_nul_byte_is_named_with_its_column(tmp_path, where):
    """A NUL byte (binary data; a file that a crash padded with zeros) was 'invalid JSON: unexpected
    character, expected ':' after key: line 1 column 6 (char 5)', or 'unexpected control character
    in string', naming no NUL; now the byte and its column, in every JSONL reader (convert's too)."""
    path = tmp_path / "in.jsonl"
    column = where.index(b"\x00") + 1
    for args, first in ((["phase1", "--backend", "scripted"], {"id": "q0", "question": "What is 1 + 1?"}),
                        (["vote"], sampled(0)), (["convert"], {"question": "What is 1 + 1?"})):
        path.write_bytes(orjson.dumps(first) + b"\n" + where + b"\n")
        result = cli([args[0], str(path), *args[1:], "-o", str(tmp_path / "out.jsonl")])
        assert result.exit_code == 2 and not (tmp_path / "out.jsonl").exists()
        assert result.stderr == (f"error: {path}:2: a NUL byte at column {column}: binary data, not JSON text "
                                 "(a file padded with zeros?)\n"), result.stderr


def test_a_huge_extra_without_an_allocation_is_refused():
    """A record with no allocation in its provenance was taken with any 'extra': 10**12 made
    phase2 build every request first and run out of memory."""
    rec = sampled(1, extra=10**12)
    with pytest.raises(UabError, match=r"'extra' 1,000,000,000,000 is more Phase-2 samples than one question takes "
                                       r"without an allocation \(at most 1,000,000: phase2 holds every sample"):
        check_record(rec, "allocated")
    check_record(sampled(1, extra=10**6), "allocated")


def test_parquet_file_points_to_convert(tmp_path):
    """A Parquet export given to phase1 was "invalid JSON: unexpected character ... column 1"."""
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    path = tmp_path / "test-00000-of-00001.parquet"
    pq.write_table(pa.table({"question": ["What is 1 + 1?"], "answer": ["2"]}), path)
    result = cli(["phase1", str(path), "--backend", "scripted", "-o", str(tmp_path / "out.jsonl")])
    assert result.exit_code == 2 and not (tmp_path / "out.jsonl").exists()
    assert result.stderr.startswith(f"error: {path}:1: this is a Parquet file, not JSON Lines")
    assert f"`uab convert {path}` makes question records of it" in result.stderr


@pytest.mark.parametrize("table", [b"question,answer\nWhat is 1 + 1?,2\n", b"question\tanswer\nWhat is 1 + 1?\t2\n"],
                         ids=["csv", "tsv"])
def test_a_csv_file_points_to_convert(tmp_path, table):
    """A user's CSV (or TSV) of questions given to run said "invalid JSON: unexpected character,
    expected a JSON value: line 1 column 1 (char 0)", pointing nowhere; JSON arrays and Parquet
    files already named `uab convert`."""
    path = tmp_path / "mine.csv"
    path.write_bytes(table)
    for source, stdin, name, how in ((str(path), None, str(path), f"`uab convert {path}` makes question records"),
                                     ("-", table, "<stdin>", "pipe it through `uab convert -`")):
        result = cli(["run", source, "-N", "2", "--backend", "scripted", "-o", str(tmp_path / "run")], stdin=stdin)
        assert result.exit_code == 2 and not (tmp_path / "run").exists()
        assert result.stderr.startswith(f"error: {name}:1: this looks like a CSV or TSV file, not JSON Lines"), \
            result.stderr
        assert how in result.stderr
    converted = tmp_path / "q.jsonl"  # ... and the hint is true
    assert cli(["convert", str(path), "-o", str(converted)]).exit_code == 0
    assert [r["question"] for r in load_records(str(converted))[0]] == ["What is 1 + 1?"]


@pytest.mark.parametrize("row,message", [
    ({"problem": "What is 1 + 1?", "answer": "2", "unique_id": "test/a.json"}, "missing field 'id'"),
    ({"id": 60, "problem": "What is 1 + 1?", "answer": 2}, "'id' must be a non-empty string, got 60"),
    ({"id": "a", "problem": "What is 1 + 1?", "answer": "2"}, "record 'a' has no 'question'"),
])
@pytest.mark.parametrize("command", ["phase1", "run"])
def test_a_raw_benchmark_export_points_to_convert(tmp_path, row, message, command):
    """A MATH-500 or AIME export given straight to phase1 or run said only "missing field 'id'"."""
    path = write_jsonl(tmp_path / "test.jsonl", [row])
    out = ["-o", str(tmp_path / "out")] + (["-N", "2"] if command == "run" else [])
    result = cli([command, str(path), "--backend", "scripted", *out])
    assert result.exit_code == 2 and not (tmp_path / "out").exists()
    assert result.stderr.strip() == (f"error: {path}:1: {message}: a benchmark export? "
                                     f"`uab convert {path}` makes question records of it")


@pytest.mark.parametrize("row,message", [
    ({"id": "a", "question": None}, "record 'a' has no 'question'"),  # no "did you mean 'question'?"
    ({"id": "", "question": "q?"}, "'id' must be a non-empty string, got ''"),
    ({"accuracy": 0.5, "allocator": "uab"}, "missing field 'id': this is a `uab simulate -o` results file"),
])
def test_a_bad_record_that_is_no_export_row_gets_no_convert_hint(tmp_path, row, message):
    path = write_jsonl(tmp_path / "in.jsonl", [row])
    result = cli(["phase1", str(path), "--backend", "scripted"])
    assert result.exit_code == 2 and result.stderr.startswith(f"error: {path}:1: {message}")
    assert "uab convert" not in result.stderr and "did you mean" not in result.stderr


# --- records pass through ------------------------------------------------------------


def test_unknown_fields_pass_through_allocate_and_vote(tmp_path):
    mine = {"source": {"dataset": "x", "row": [1, 2.5, None, True]}, "level": "Level 3"}
    rows = [sampled(i, **mine) for i in range(4)]
    rows[0]["samples"][0]["my_score"] = {"a": [1, 2]}
    src = write_jsonl(tmp_path / "p1.jsonl", rows)
    alloc, votes = tmp_path / "alloc.jsonl", tmp_path / "votes.jsonl"
    assert cli(["allocate", src, "--budget", "2", "-o", str(alloc), "-q"]).exit_code == 0
    assert cli(["vote", str(alloc), "-o", str(votes), "-q"]).exit_code == 0
    for out in (alloc, votes):
        got, _ = load_records(str(out), "sampled")
        assert all(r["source"] == mine["source"] and r["level"] == "Level 3" for r in got)
        assert got[0]["samples"][0]["my_score"] == {"a": [1, 2]}
    assert sum(r["extra"] for r in load_records(str(alloc), "allocated")[0]) == 4


def test_a_sample_with_a_null_index_is_one_without_an_index(tmp_path):
    """`"index": null` passes validation as no index; vote (of a record holding more Phase-2 samples
    than its 'extra') and phase2 (sorting the samples it drew in) crashed on it with a TypeError."""
    rec = sampled(1, extra=1)
    rec["samples"] += [{"index": None, "phase": 2, "text": "Answer: 2", "answer": "2"},
                       {"index": 2, "phase": 2, "text": "Answer: 2", "answer": "2"}]
    votes = cli(["vote", write_jsonl(tmp_path / "p2.jsonl", [rec]), "-q"])
    assert votes.exit_code == 0 and orjson.loads(votes.stdout)["votes"] == {"1": 1, "2": 1}  # index 2 is beyond
    rec["extra"] = 3  # indices 1 and 3 to draw, sorted in among them
    drawn = cli(["phase2", write_jsonl(tmp_path / "a.jsonl", [rec]), "--backend", "scripted", "-q"])
    assert drawn.exit_code == 0, drawn.stderr
    assert [s["index"] for s in orjson.loads(drawn.stdout)["samples"]] == [0, None, 1, 2, 3]


def test_write_records_is_one_line_per_record(tmp_path):
    rows = [sampled(i) for i in range(3000)]
    path = tmp_path / "out.jsonl"
    assert write_records(str(path), iter(rows)) == 3000
    assert path.read_bytes() == b"".join(orjson.dumps(r) + b"\n" for r in rows)


# --- signal means ----------------------------------------------------------------------


def test_scalar_signal_is_the_mean_over_a_questions_samples():
    phase1 = [[{"anll": 0.2}], [{"anll": 0.1}, {"anll": 0.5}], [{"anll": 0.0}, {"anll": 0.0}, {"anll": 0.3}]]
    p, fallbacks = success_probabilities(phase1, "anll", 0.2)
    assert p.tolist() == pytest.approx([math.exp(-1), math.exp(-1.5), math.exp(-0.5)]) and fallbacks == 0


@pytest.mark.parametrize("phase1, index", [
    ([[{"anll": 0.2}], [{"anll": None}], [{"anll": 0.1}]], 1),
    ([[{"anll": 0.2}], [{"anll": 0.1}], [{"anll": 0.1}, {}]], 2),
    ([[{"anll": 0.2}], []], 1),
])
def test_missing_signal_names_the_first_question_without_one(phase1, index):
    with pytest.raises(MissingSignal) as exc:
        success_probabilities(phase1, "anll")
    assert exc.value.index == index


def test_load_records_pauses_the_cyclic_gc_and_restores_it(tmp_path, monkeypatch):
    import gc

    path = tmp_path / "q.jsonl"
    path.write_bytes(b'{"id": "a", "question": "q"}\n')
    seen = []
    real = jsonl._batches

    def spy(p):
        for batch in real(p):
            seen.append(gc.isenabled())
            yield batch

    monkeypatch.setattr(jsonl, "_batches", spy)
    assert gc.isenabled()
    jsonl.load_records(str(path))
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        with gcpolicy.paused():
            pass
        assert not gc.isenabled()  # a caller's own pause is kept
    finally:
        gc.enable()
    kept = [[]]  # a caller's own gc.freeze() is not undone
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with gcpolicy.paused():
            kept.append([])
        # still frozen (an unfreeze would leave 0); frozen objects that other threads free meanwhile
        # leave the count, so it may only fall
        assert 0 < gc.get_freeze_count() <= frozen and gc.isenabled()
    finally:
        gc.unfreeze()


def test_a_gold_integer_beyond_64_bits_is_refused_not_rounded(tmp_path):
    """JSON's reader makes it a float, whose digits are not the gold's: write it as a string."""
    path = tmp_path / "big.jsonl"
    path.write_text('{"id": "a", "question": "q?", "answer": 123456789012345678901234567890, '
                    '"samples": [{"index": 0, "phase": 1, "text": "5", "answer": "5"}]}\n')
    result = cli(["vote", str(path), "-o", str(tmp_path / "v.jsonl")])
    assert result.exit_code == 2 and not (tmp_path / "v.jsonl").exists()
    assert f"{path}:1: 'answer' 1.2345678901234568e+29: an integer beyond 64 bits" in result.stderr


@pytest.mark.parametrize("gold", ["B", "(B)", "b", "Ｂ", "（Ｂ）", "（B）", "two"])
def test_a_gold_letter_in_full_width_forms_is_the_letter(gold):
    """A C-Eval-style export may write its gold letter full width: it was "no gold", the question
    ungraded, while a reply's full-width letter is read as the letter."""
    from uab_cli.records import gold_letter

    assert gold_letter({"answer": gold, "choices": ["one", "two", "three"]}) == "B"


@pytest.mark.parametrize("fields, expected", [({"type": "text"}, "text"), ({"type": "math", "choices": ["a", "b"]}, "math"),
                                             ({"choices": ["a", "b"]}, "mc"), ({}, "math")])
def test_a_question_type_is_its_own_or_inferred_from_its_choices(fields, expected):
    from uab_cli.records import question_type

    assert question_type({"id": "q1", "question": "Q?", **fields}) == expected


def test_levels_sort_numbers_by_value_then_names():
    """Per-level tables list numeric levels by value (``-1``, ``2``, ``10``), then the named ones (an
    infinite "inf" among them) by name; ``1`` and ``"1"`` are one level."""
    from uab_cli.records import level_name, level_order

    assert level_name(1) == level_name("1") == "1"
    levels = ["hard", "10", "inf", "easy", "2", "-1"]
    assert sorted(levels, key=level_order) == ["-1", "2", "10", "easy", "hard", "inf"]


def test_a_sample_without_an_index_is_index_0():
    from uab_cli.records import sample_index

    assert [sample_index(s) for s in ({}, {"index": None}, {"index": 3})] == [0, 0, 3]


def test_dropping_a_stage_from_provenance_keeps_the_rest_and_adds_none():
    """``without_provenance`` drops the stage (a copy: another record sharing the dict keeps it) and
    leaves a record without provenance as it is (no empty ``uab`` field written)."""
    from uab_cli.records import PROVENANCE, with_provenance, without_provenance

    shared = {"phase1": {"k": 1}, "vote": {"rule": "majority"}}
    one, two = {"id": "q1", PROVENANCE: shared}, {"id": "q2", PROVENANCE: shared}
    assert without_provenance(one, "vote")[PROVENANCE] == {"phase1": {"k": 1}}
    assert two[PROVENANCE] == {"phase1": {"k": 1}, "vote": {"rule": "majority"}}
    assert without_provenance({"id": "q3"}, "vote") == {"id": "q3"}
    assert with_provenance(two, "allocate", {"N": 4})[PROVENANCE] == {**shared, "allocate": {"N": 4}}
    assert shared == {"phase1": {"k": 1}, "vote": {"rule": "majority"}}


def test_the_questions_fingerprint_is_stable_and_ignores_line_order():
    """The digest a run directory resumes on: the same in any line order (sorted by id, not by
    question text), and the same value as the releases before (a change would refuse every run
    directory they wrote)."""
    from uab_cli.records import questions_fingerprint

    questions = [{"id": "q2", "question": "Alpha?", "choices": ["x", "y"], "answer": "A"},
                 {"id": "q1", "question": "Zulu?"}, {"id": "q10", "question": "Mid?", "type": "text"}]
    assert questions_fingerprint(questions) == questions_fingerprint(questions[::-1]) == "cd335eebde1fe9ba"


@pytest.mark.parametrize("token", [b"NaN", b"Infinity", b"-Infinity"])
def test_a_nan_or_infinity_literal_says_to_write_null(tmp_path, token):
    """A line with Python's NaN, Infinity or -Infinity (json.dumps of a float that is no number) was "invalid JSON:
    unexpected character, expected a JSON value" (or "no digit after sign"); now the token, its column and null to
    write instead, in every JSONL reader (convert's too), and a .json document's."""
    path = tmp_path / "in.jsonl"
    for args, first in ((["vote"], sampled(0)), (["convert"], {"question": "What is 1 + 1?"})):
        path.write_bytes(orjson.dumps(first) + b'\n{"id": "q1", "confidence": ' + token + b"}\n")
        result = cli([args[0], str(path), *args[1:], "-o", str(tmp_path / "out.jsonl")])
        assert result.exit_code == 2 and not (tmp_path / "out.jsonl").exists()
        assert result.stderr == (f"error: {path}:2: invalid JSON: {token.decode()} at column 28 is no JSON value: "
                                 "write null instead\n"), result.stderr
    document = tmp_path / "rows.json"
    document.write_bytes(b'[\n  {"question": "a",\n   "answer": ' + token + b"}\n]\n")
    result = cli(["convert", str(document), "-o", str(tmp_path / "out.jsonl")])
    assert result.exit_code == 2 and result.stderr == (f"error: {document}:3: invalid JSON: {token.decode()} at column 14 "
                                                       "is no JSON value: write null instead\n"), result.stderr
