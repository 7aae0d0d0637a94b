"""Tests for dataset conversion (uab_cli.convert) and the bundled sample data files."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import cli, json_reads, script

from uab_cli.answers import extract_answer, is_correct
from uab_cli.convert import PRESETS, convert_records, read_table
from uab_cli.errors import UabError

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "data" / "convert"
SAMPLES = ROOT / "sample_data"


def convert_file(name: str, preset: str | None, **options) -> list[dict]:
    """Convert one fixture file with read_table + convert_records."""
    path = FIXTURES / name
    return list(convert_records(read_table(path), preset, path=str(path), **options))


def load_jsonl(path: Path) -> list[dict]:
    """Records of a JSONL file (blank lines skipped)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# --- presets -------------------------------------------------------------------------------------


def test_presets_listed():
    assert set(PRESETS) == {"math500", "gsm8k", "svamp", "mgsm", "gpqa", "mmlu", "deepscaler", "hh-rlhf", "arc"}
    assert all(p.description for p in PRESETS.values())
    assert "[--preset " + "\\|".join(PRESETS) + "] [-o OUT]" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_math500():
    records = convert_file("math500.jsonl", "math500")
    assert records == [
        {
            "id": "test/prealgebra/1.json",
            "question": "What is the value of $\\frac{1}{2} + \\frac{1}{4}$?",
            "answer": "\\frac{3}{4}",
            "type": "math",
            "subject": "Prealgebra",
            "level": 1,
            "solution": "We have $\\frac{2}{4} + \\frac{1}{4} = \\boxed{\\frac{3}{4}}$.",
            "source": "math500",
        },
        {
            "id": "test/algebra/2.json",
            "question": "Solve for $x$: $2x + 3 = 11$.",
            "answer": "4",
            "type": "math",
            "subject": "Algebra",
            "level": 3,
            "solution": "Subtract 3 and divide by 2: $x = \\boxed{4}$.",
            "source": "math500",
        },
        {
            "id": "test/number_theory/3.json",
            "question": "How many positive divisors does 12 have?",
            "answer": "6",
            "type": "math",
            "subject": "Number Theory",
            "level": 2,
            "solution": "1, 2, 3, 4, 6, 12: $\\boxed{6}$.",
            "source": "math500",
        },
    ]


def test_math500_missing_answer_names_field_and_line():
    path = FIXTURES / "math500_missing_answer.jsonl"
    with pytest.raises(UabError) as info:
        list(convert_records(read_table(path), "math500", path=str(path)))
    err = info.value
    assert err.line == 3  # line 2 is blank: numbering follows the file
    assert err.path == str(path)
    assert "'answer'" in err.message and "math500" in err.message
    assert str(err).startswith(f"{path}:3: ")


def test_gpqa_letters_vary_and_are_deterministic():
    rows = load_jsonl(FIXTURES / "gpqa.jsonl")
    records = convert_file("gpqa.jsonl", "gpqa")
    assert [r["id"] for r in records] == [f"rec{i:03d}" for i in range(1, 9)]
    assert [r["answer"] for r in records] == ["B", "A", "D", "C", "B", "D", "D", "C"]
    for row, rec in zip(rows, records, strict=True):
        assert rec["type"] == "mc"
        assert rec["question"] == row["Question"]
        assert rec["choices"]["ABCD".index(rec["answer"])] == row["Correct Answer"]
        assert sorted(rec["choices"]) == sorted(
            [row["Correct Answer"], row["Incorrect Answer 1"], row["Incorrect Answer 2"], row["Incorrect Answer 3"]]
        )
        assert rec["subdomain"] == row["Subdomain"] and rec["domain"] == "Science"
    assert len({r["answer"] for r in records}) >= 3
    assert convert_file("gpqa.jsonl", "gpqa") == records
    # the order depends on the row's content, not on its position in the file
    assert list(convert_records(reversed(rows), "gpqa")) == records[::-1]


def test_gpqa_without_record_id_uses_row_index():
    rows = [{k: v for k, v in row.items() if k != "Record ID"} for row in load_jsonl(FIXTURES / "gpqa.jsonl")[:2]]
    assert [r["id"] for r in convert_records(rows, "gpqa")] == ["gpqa-0", "gpqa-1"]


def test_mmlu_index_and_letter_answers():
    records = convert_file("mmlu.jsonl", "mmlu")
    assert records == [
        {
            "id": "mmlu-0",
            "question": "What is 7 multiplied by 6?",
            "choices": ["36", "42", "48", "54"],
            "answer": "B",
            "type": "mc",
            "subject": "elementary_mathematics",
            "source": "mmlu",
        },
        {
            "id": "mmlu-1",
            "question": "Which gas makes up most of Earth's atmosphere?",
            "choices": ["Oxygen", "Carbon dioxide", "Nitrogen", "Argon"],
            "answer": "C",
            "type": "mc",
            "subject": "high_school_chemistry",
            "source": "mmlu",
        },
        {
            "id": "mmlu-2",
            "question": "Which is the smallest prime number?",
            "choices": ["0", "1", "2", "3"],
            "answer": "C",
            "type": "mc",
            "subject": "elementary_mathematics",
            "source": "mmlu",
        },
    ]


def test_mmlu_answer_out_of_range():
    rows = [{"question": "q?", "choices": ["a", "b"], "answer": 2}]
    with pytest.raises(UabError, match="out of range") as info:
        list(convert_records(rows, "mmlu"))
    assert info.value.line == 1


def test_deepscaler():
    assert convert_file("deepscaler.jsonl", "deepscaler") == [
        {
            "id": "deepscaler-0",
            "question": "Find the sum of the first 10 positive integers.",
            "answer": "55",
            "type": "math",
            "solution": "$10 \\cdot 11 / 2 = 55$.",
            "source": "deepscaler",
        },
        {
            "id": "deepscaler-1",
            "question": "What is the remainder when $2^{10}$ is divided by 7?",
            "answer": "2",
            "type": "math",
            "solution": "$1024 = 7 \\cdot 146 + 2$.",
            "source": "deepscaler",
        },
    ]


def test_hh_rlhf():
    rows = load_jsonl(FIXTURES / "hh_rlhf.jsonl")
    records = convert_file("hh_rlhf.jsonl", "hh-rlhf")
    assert [r["id"] for r in records] == ["hh-rlhf-0", "hh-rlhf-1", "hh-rlhf-2", "hh-rlhf-3"]
    assert [r["answer"] for r in records] == ["A", "B", "B", "A"]
    assert records[1] == {
        "id": "hh-rlhf-1",
        "question": "Human: What is the capital of France?\n\nAssistant: Paris.\n\nHuman: And of Italy?"
        "\n\nWhich response is better as the Assistant's next reply?",
        "choices": ["Madrid.", "Rome."],
        "answer": "B",
        "type": "mc",
        "source": "hh-rlhf",
    }
    for row, rec in zip(rows, records, strict=True):
        good = rec["choices"]["AB".index(rec["answer"])]
        assert row["chosen"].endswith(good) and not row["rejected"].endswith(good)
    assert convert_file("hh_rlhf.jsonl", "hh-rlhf") == records


def test_hh_rlhf_without_shared_prompt():
    rows = [{"chosen": "A polite answer.", "rejected": "A rude answer."}]
    (rec,) = convert_records(rows, "hh-rlhf")
    assert rec["question"] == "Which response is better?"
    assert sorted(rec["choices"]) == ["A polite answer.", "A rude answer."]
    assert rec["choices"]["AB".index(rec["answer"])] == "A polite answer."


def test_hh_rlhf_rejects_question_field():
    with pytest.raises(UabError, match="hh-rlhf"):
        convert_records([], "hh-rlhf", question_field="prompt")


def test_unknown_preset_lists_presets():
    with pytest.raises(UabError) as info:
        convert_records([{"question": "q"}], "gsm8k-socratic")
    for name in PRESETS:
        assert name in info.value.message


# --- generic field mapping -----------------------------------------------------------------------


def test_generic_field_mapping():
    records = convert_file(
        "generic.jsonl", None, question_field="prompt", answer_field="target", choices_field="options", id_field="qid"
    )
    assert records == [
        {"id": "g1", "question": "What is 3 + 4?", "answer": "7", "difficulty": 1, "source": "generic.jsonl"},
        {
            "id": "g2",
            "question": "Pick the even number.",
            "choices": ["3", "8", "5"],
            "answer": "B",
            "type": "mc",
            "difficulty": 2,
            "source": "generic.jsonl",
        },
        {
            "id": "g3",
            "question": "Which is a fruit?",
            "choices": ["Apple", "Brick"],
            "answer": "A",
            "type": "mc",
            "difficulty": 1,
            "source": "generic.jsonl",
        },
    ]


def test_generic_defaults_and_source_prefix():
    rows = [{"question": "What is 1 + 1?", "answer": 2, "level": 1}, {"question": "Name a colour.", "topic": "x"}]
    assert list(convert_records(rows, None, source="mine")) == [
        {"id": "mine-0", "question": "What is 1 + 1?", "answer": "2", "level": 1, "source": "mine"},
        {"id": "mine-1", "question": "Name a colour.", "topic": "x", "source": "mine"},
    ]
    assert [r["id"] for r in convert_records(rows, None)] == ["row-0", "row-1"]


def test_without_a_preset_the_source_is_the_file_name(tmp_path):
    """Without a preset a record had no source: nothing said where it came from. Now the
    input file's name (a row's own source column kept; stdin has no name to give)."""
    path = tmp_path / "my-bench.jsonl"
    path.write_text('{"question": "What is 1 + 1?", "answer": 2}\n{"question": "Name a colour.", "source": "web"}\n')
    records = list(convert_records(read_table(path), None, path=str(path)))
    assert [r.get("source") for r in records] == ["my-bench.jsonl", "web"]
    assert [r["id"] for r in records] == ["row-0", "row-1"]  # the default ids are as they were
    result = cli(["convert", "-"], stdin=path.read_bytes())
    assert [json.loads(line).get("source") for line in result.stdout.splitlines()] == [None, "web"]


def test_a_rows_empty_source_cell_gives_the_file_name(tmp_path):
    """A CSV row whose source cell was empty (null) kept "source": null, no provenance, beside
    rows named by theirs; it now gets the file's name, as a row without the column does."""
    path = tmp_path / "mixed.csv"
    path.write_text("question,answer,source\nq1,1,web\nq2,2,\n", encoding="utf-8")
    records = list(convert_records(read_table(path), None, path=str(path)))
    assert [r["source"] for r in records] == ["web", "mixed.csv"]


def test_generic_keeps_existing_ids():
    rows = [{"id": 7, "question": "a?"}, {"id": "x", "question": "b?"}]
    assert [r["id"] for r in convert_records(rows, None)] == ["7", "x"]


def test_preset_field_override():
    rows = [{"prompt": "What is 2 + 2?", "answer": "4"}]
    assert list(convert_records(rows, "deepscaler", question_field="prompt")) == [
        {"id": "deepscaler-0", "question": "What is 2 + 2?", "answer": "4", "type": "math", "source": "deepscaler"}
    ]


def test_generic_missing_explicit_field():
    rows = [{"prompt": "a?", "target": "1"}, {"prompt": "b?"}]
    with pytest.raises(UabError) as info:
        list(convert_records(rows, None, question_field="prompt", answer_field="target"))
    assert info.value.line == 2 and "'target'" in info.value.message


def test_generic_missing_question_field():
    with pytest.raises(UabError, match="'question'") as info:
        list(convert_records([{"text": "a?"}], None))
    assert info.value.line == 1


def test_generic_choices_field_never_present():
    with pytest.raises(UabError, match="'opts'"):
        list(convert_records([{"question": "a?"}], None, choices_field="opts"))


def test_mc_answer_as_choice_text_and_bad_answer():
    rows = [{"question": "q?", "choices": ["red", "blue"], "answer": "blue"}]
    assert next(convert_records(rows, None))["answer"] == "B"
    with pytest.raises(UabError, match="not a letter"):
        list(convert_records([{"question": "q?", "choices": ["red", "blue"], "answer": "green"}], None))


def test_duplicate_ids_rejected():
    rows = [{"id": "a", "question": "x?"}, {"id": "a", "question": "y?"}]
    with pytest.raises(UabError, match="duplicate id") as info:
        list(convert_records(rows, None))
    assert info.value.line == 2


# --- readers -------------------------------------------------------------------------------------


def test_read_table_jsonl_numbers_lines():
    numbers = [n for n, _ in read_table(FIXTURES / "math500_missing_answer.jsonl")]
    assert numbers == [1, 3]


def test_read_table_bad_json_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"question": "a"}\n{"question": \n', encoding="utf-8")
    with pytest.raises(UabError, match="invalid JSON") as info:
        list(read_table(path))
    assert info.value.line == 2


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_a_broken_json_array_names_the_line_where_it_breaks(tmp_path, suffix):
    """A JSON array with a bad value on line 3 was read as JSON Lines: "FILE:1: invalid JSON:
    unexpected end of data", the first line, which is fine."""
    path = tmp_path / f"rows{suffix}"
    path.write_text('[\n  {"question": "a", "answer": "1"},\n  {"question": "b", "answer": }\n]\n', encoding="utf-8")
    with pytest.raises(UabError, match=r"invalid JSON: unexpected character.*\(column 31\)") as info:
        list(read_table(path))
    assert info.value.line == 3


def test_a_json_arrays_rows_are_named_by_the_line_they_start_on(tmp_path):
    """An error in a row of a pretty-printed array named the row's position as its line
    ("rows.json:2:" for a row on line 6); the top-level object's "rows" array alike."""
    rows = [{"question": "What is 1 + 1?", "answer": "2"}, {"question": "", "answer": "3"}]
    path = tmp_path / "rows.json"
    path.write_text(json.dumps(rows, indent=2), encoding="utf-8")  # the second row opens on line 6
    with pytest.raises(UabError, match="field 'question' is empty") as info:
        list(convert_records(read_table(path), None, path=str(path)))
    assert str(info.value).startswith(f"{path}:6: ")
    served = {"features": [{"name": "question"}], "rows": [{"row_idx": i, "row": r, "truncated_cells": []}
                                                            for i, r in enumerate(rows)]}
    path.write_text(json.dumps(served, indent=1), encoding="utf-8")
    assert [n for n, *_ in read_table(path)] == [8, 16]
    first = json.dumps({"question": "a", "answer": '],\\"{'})  # brackets, a comma and a quote inside a string
    path.write_text(f'[{first},\n\n  {{"question": "b"}}, {{"question": "c"}}]')
    assert [n for n, _ in read_table(path)] == [1, 3, 3]
    path.write_text('\n {"data": [{"question": "a"}],\n "meta": {"data": []}}\n')
    assert [n for n, _ in read_table(path)] == [2]


def test_a_broken_pretty_printed_json_object_names_the_line_where_it_breaks(tmp_path):
    """A pretty-printed object (a datasets-server page saved with indent) with a bad value on
    line 14 was read as JSON Lines: "FILE:1: invalid JSON: unexpected end of data", its first
    line, "{", which is fine; JSON Lines in a .json file still names its own bad line."""
    rows = [{"row_idx": i, "row": {"question": f"q{i}", "answer": "1"}, "truncated_cells": []} for i in range(2)]
    text = json.dumps({"rows": rows}, indent=2).replace('"q1"', '"q1" oops')  # on line 14
    path = tmp_path / "page.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UabError, match=r"invalid JSON: unexpected character.*\(column 26\)") as info:
        list(read_table(path))
    assert info.value.line == 14
    piped = cli(["convert", "-"], stdin=text.encode())
    assert piped.exit_code == 2 and piped.stderr.startswith("error: <stdin>:14: invalid JSON: unexpected character")
    lines = tmp_path / "lines.json"
    lines.write_text('{"question": "a"}\n{"question": "b" "answer": "2"}\n', encoding="utf-8")
    with pytest.raises(UabError, match="invalid JSON") as info:
        list(read_table(lines))
    assert info.value.line == 2


@pytest.mark.skipif(json_reads(1000), reason="json reads 1,000 levels from Python 3.12, as orjson does: the row is read, "
                    "and refused where it is written (test_a_row_that_converts_to_a_record_json_cannot_write_names_its_line)")
def test_a_json_row_nested_too_deeply_is_an_error_naming_its_line(tmp_path):
    """A row nested 1,000 levels deep (orjson reads 1,024) was a RecursionError traceback, exit 1,
    from finding the line each row starts on."""
    path = tmp_path / "deep.json"
    path.write_text('[\n{"question": "a"},\n{"question": "b", "x": ' + "[" * 1000 + "]" * 1000 + "}\n]\n")
    with pytest.raises(UabError, match="nested too deeply for a record") as info:
        list(read_table(path))
    assert info.value.line == 3


@pytest.mark.parametrize("name,body,line,why", [
    ("deep.jsonl", '{"question": "a"}\n{"question": "b", "x": ' + "[" * 300 + "]" * 300 + "}\n", 2,
     "a value in it is nested over 254 levels deep"),
    ("deep.json", '[\n{"question": "a"},\n{"question": "b", "x": ' + '{"y": ' * 254 + "1" + "}" * 254 + "}\n]\n", 3,
     "a value in it is nested over 254 levels deep"),
    ("big.jsonl", '{"question": "a"}\n{"question": "b", "x": 123456789012345678901234}\n', 2,
     "Integer exceeds 64-bit range"),
])
@pytest.mark.parametrize("to_stdout", [False, True])
def test_a_row_that_converts_to_a_record_json_cannot_write_names_its_line(tmp_path, name, body, line, why, to_stdout):
    """Nested over 254 levels (orjson reads 1,024 but writes 254), or an integer beyond 64 bits
    passed through: the error came at write time naming neither file nor line, after stdout had
    the records before it."""
    path = tmp_path / name
    path.write_text(body)
    out = ["-o", str(tmp_path / "out.jsonl")] if not to_stdout else []
    result = cli(["convert", str(path), *out])
    assert result.exit_code == 2 and result.stdout == "" and not (tmp_path / "out.jsonl").exists()
    assert result.stderr == (f"error: {path}:{line}: record 'row-1' cannot be written as JSON: {why} (the record this "
                             "row converts to)\n")


# --- CSV ---------------------------------------------------------------------------------------


def test_csv_reads_a_header_row_and_names_each_rows_line(tmp_path):
    """CSV, the commonest benchmark export (GPQA ships as one), was refused: "unsupported file
    type '.csv'". Cells are text, an empty one null; a quoted cell may span lines."""
    path = tmp_path / "bench.csv"
    path.write_bytes(b'\xef\xbb\xbfquestion,answer,level\r\n"What is\n1 + 1?",2,3\r\n\r\nName a colour.,,\n')
    assert list(read_table(path)) == [(2, {"question": "What is\n1 + 1?", "answer": "2", "level": "3"}),
                                      (5, {"question": "Name a colour.", "answer": None, "level": None})]
    assert list(convert_records(read_table(path), None, path=str(path))) == [
        {"id": "row-0", "question": "What is\n1 + 1?", "answer": "2", "level": "3", "source": "bench.csv"},
        {"id": "row-1", "question": "Name a colour.", "level": None, "source": "bench.csv"}]
    rows = load_jsonl(FIXTURES / "gpqa.jsonl")
    gpqa = tmp_path / "gpqa_diamond.csv"
    with gpqa.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert list(convert_records(read_table(gpqa), "gpqa")) == convert_file("gpqa.jsonl", "gpqa")
    piped = cli(["convert", "-"], stdin=path.read_bytes())  # told from the content on stdin
    assert piped.exit_code == 0 and [json.loads(line)["question"] for line in piped.stdout.splitlines()] == [
        "What is\n1 + 1?", "Name a colour."]


@pytest.mark.parametrize("blank", [b"   ", b" \t "], ids=["spaces", "tab"])
def test_csv_whitespace_only_lines_are_blank_lines(tmp_path, blank):
    """An empty line was skipped, one of spaces or a tab (an editor's indent, a trailing line) was
    a row: 'row has 1 cells, the header 2'. It is a blank line too, as in a JSON Lines file."""
    path = tmp_path / "bench.csv"
    path.write_bytes(b"question,answer\n" + blank + b"\nWhat is 1 + 1?,2\n" + blank + b"\n" + blank + b"\n")
    assert list(read_table(path)) == [(3, {"question": "What is 1 + 1?", "answer": "2"})]


@pytest.mark.parametrize("block", [1, 2, 3, 5, 1 << 20])
def test_csv_checked_as_utf8_a_block_at_a_time_names_the_bad_byte_and_line(tmp_path, monkeypatch, block):
    """Characters split across blocks are no error; a bad byte in a later block is named, by its line."""
    import uab_cli.convert as convert

    monkeypatch.setattr(convert, "_BLOCK", block, raising=False)  # none on old code
    good = "question,answer\nq\u00e9\u20ac\U0001f600,1\n".encode()
    path = tmp_path / "utf8.csv"
    path.write_bytes(good)
    assert [row["question"] for _, row in read_table(path)] == ["q\u00e9\u20ac\U0001f600"]
    for bad, line, column in [(good + b"q\xe9t,2\n", 3, 2), (good + b"q,\xf0\x9f\x98", 3, 3), (b"\xff" + good, 1, 1)]:
        path.write_bytes(bad)
        with pytest.raises(UabError) as info:
            list(read_table(path))
        byte = bad[bad.index(b"\xe9t") if b"\xe9t" in bad else bad.rindex(b"\xf0") if bad.endswith(b"\x98") else 0]
        assert str(info.value) == f"{path}:{line}: not valid UTF-8 at column {column} (byte 0x{byte:02x}): save the file as UTF-8"


def test_csv_utf8_check_holds_no_str_of_the_whole_file():
    """Checking a CSV is UTF-8 decoded all of it at once: a str as large as the file (4 bytes a
    character with one emoji: a 50 MB file's 200 MB) on top of its bytes."""
    import tracemalloc

    import uab_cli.convert as convert

    text = b"question,answer\n" + b"q,1\n" * 2_000_000 + "\U0001f600,1\n".encode()
    tracemalloc.start()
    try:
        next(convert._read_csv("big.csv", text))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < len(text), peak  # the whole as one str: 4 × len(text)


@pytest.mark.parametrize("body,line,message", [
    (b"question,answer\nq1,1\nq2,2,3\n", 3, "row has 3 cells, the header 2"),
    (b'question,answer\nq1,1\n"q2\n,2\nq3,3\n', 3, "invalid CSV: unexpected end of data"),
    (b"question,answer\nq1,1\n\xe9t\xe9,2\n", 3, "not valid UTF-8 at column 1 (byte 0xe9): save the file as UTF-8"),
    (b"question,answer,question\nq1,1,q\n", 1, "the header names a column twice: 'question'"),
    (b'question,answer\nq1,1\n" \n ",2\n', 3, "field 'question' is empty"),
])
def test_csv_errors_name_the_line(tmp_path, body, line, message):
    path = tmp_path / "bad.csv"
    path.write_bytes(body)
    with pytest.raises(UabError) as info:
        list(convert_records(read_table(path), None, path=str(path)))
    assert str(info.value).startswith(f"{path}:{line}: {message}")


@pytest.mark.parametrize("name,body,line,column", [
    ("latin1.jsonl", b'{"question": "a", "answer": "1"}\n{"question": "\xe9t\xe9", "answer": "2"}\n', 2, 15),
    ("latin1.json", b'[{"question": "a", "answer": "1"},\n {"question": "\xe9t\xe9", "answer": "2"}]\n', 2, 16),
    ("-", b'{"question": "\xe9t\xe9", "answer": "2"}\n', 1, 15),
])
def test_json_not_utf8_is_named_as_a_csv_is(tmp_path, name, body, line, column):
    """A JSON or JSON Lines file in Latin-1 was `invalid JSON: str is not valid UTF-8: surrogates
    not allowed: line 1 column 1 (char 0)`, naming no byte; a CSV file's says what to do."""
    path = tmp_path / name
    if name != "-":
        path.write_bytes(body)
    result = cli(["convert", str(path) if name != "-" else "-", "-o", str(tmp_path / "out.jsonl")], stdin=body)
    where = path if name != "-" else "<stdin>"
    assert result.exit_code == 2 and not (tmp_path / "out.jsonl").exists()
    assert result.stderr == f"error: {where}:{line}: not valid UTF-8 at column {column} (byte 0xe9): save the file as UTF-8\n"


def test_csv_is_read_without_a_copy_of_4_bytes_a_character(tmp_path):
    """The rows were split from a StringIO of the whole text, which holds 4 bytes a character:
    a 50 MB CSV took 480 MB (now 220 MB, as a JSON file does), and 1.5 times the time."""
    import tracemalloc

    path = tmp_path / "long.csv"
    cell = "x, " * 100_000
    path.write_text("question,answer\n" + "".join(f'"{i}: {cell}",{i}\n' for i in range(20)), encoding="utf-8")
    size = path.stat().st_size
    (tmp_path / "one.jsonl").write_text('{"problem": "1+1?", "answer": "2"}\n', encoding="utf-8")
    assert cli(["convert", str(tmp_path / "one.jsonl"), "--preset", "math500"]).exit_code == 0  # the imports, untraced
    tracemalloc.start()
    try:
        assert sum(1 for _ in read_table(path)) == 20
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * size  # the bytes and one check of their UTF-8; the StringIO took 6.5 times


# Hendrycks' MMLU CSV: no header row; question, A, B, C, D, answer letter (a quoted cell holds commas).
HENDRYCKS = (b'What is 7 multiplied by 6?,36,42,48,54,B\n'
             b'"Which gas makes up most of Earth\'s atmosphere?",Oxygen,Carbon dioxide,Nitrogen,Argon,C\n'
             b'"Which is the smallest prime number, if any?",0,1,2,3,C\n'
             b'"Pick ""none"".",a,b,c,"none, really",D\n')


def test_header_less_mmlu_csv_with_one_choice_per_column(tmp_path):
    """Hendrycks' MMLU CSVs have no header row and a column per choice: --choices-field took one
    list column only ("should be a list" on a CSV) and the first question became the header.
    --columns names a header-less file's columns; --choices-field A,B,C,D the choices in order."""
    path = tmp_path / "elementary_mathematics_test.csv"
    path.write_bytes(HENDRYCKS)
    result = cli(["convert", str(path), "--preset", "mmlu", "--columns", "question, A,B,C,D,answer",
                  "--choices-field", "A,B,C,D"])
    assert result.exit_code == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["id"], r["choices"], r["answer"], r["type"]) for r in records] == [
        ("mmlu-0", ["36", "42", "48", "54"], "B", "mc"),
        ("mmlu-1", ["Oxygen", "Carbon dioxide", "Nitrogen", "Argon"], "C", "mc"),
        ("mmlu-2", ["0", "1", "2", "3"], "C", "mc"),  # numeric choices: the gold is still a letter
        ("mmlu-3", ["a", "b", "c", "none, really"], "D", "mc")]
    assert records[1]["question"] == "Which gas makes up most of Earth's atmosphere?"
    assert records[3]["question"] == 'Pick "none".'
    # without a preset: the A-D columns are the choices (not passed through), the rest are kept
    generic = list(convert_records(read_table(path, "question,A,B,C,D,answer"), None, choices_field="A,B,C,D",
                                   path=str(path)))
    assert generic[0] == {"id": "row-0", "question": "What is 7 multiplied by 6?", "choices": ["36", "42", "48", "54"],
                          "answer": "B", "type": "mc", "source": path.name}
    # an empty name leaves a column out; stdin with --columns is CSV (its first cell may open like JSON)
    piped = cli(["convert", "-", "--columns", ",question,answer"], stdin=b'7,"[1, 2] has how many items?",2\n')
    assert piped.exit_code == 0, piped.stderr
    assert json.loads(piped.stdout) == {"id": "row-0", "question": "[1, 2] has how many items?", "answer": "2"}


def test_choices_one_per_column_empty_cells(tmp_path):
    """Empty cells at the end leave a row fewer choices (ARC has 3 to 5); one before a given
    choice stays "" (as in a list column), so no letter shifts."""
    path = tmp_path / "arc.csv"
    path.write_bytes(b"question,A,B,C,D,E,answerKey\nq1,a,b,c,,,C\nq2,a,,c,d,e,E\n")
    records = list(convert_records(read_table(path), None, answer_field="answerKey", choices_field="A,B,C,D,E"))
    assert [(r["choices"], r["answer"]) for r in records] == [(["a", "b", "c"], "C"), (["a", "", "c", "d", "e"], "E")]
    with pytest.raises(UabError) as info:  # the gold names a choice left out
        list(convert_records(read_table(path), None, answer_field="answerKey", choices_field="A,B,C",
                                 path=str(path)))
    assert str(info.value).startswith(f"{path}:3: answer 'E' is not a letter A-C")
    path.write_bytes(b"question,A,B,answer\nq1,,,B\n")
    with pytest.raises(UabError) as info:
        list(convert_records(read_table(path), "mmlu", choices_field="A,B", path=str(path)))
    assert str(info.value) == f"{path}:2: columns 'A', 'B' are all empty (needed by preset mmlu)"


@pytest.mark.parametrize("body,columns,choices,message", [
    (HENDRYCKS, "question,A,B,C,answer", "A,B,C", "1: row has 6 cells, --columns names 5"),
    (b"question,A,B,C,D,answer\n" + HENDRYCKS, "question,A,B,C,D,answer", "A,B,C,D",
     "1: this row is a header (it names the columns --columns gives): leave --columns out"),
    # a column --columns leaves out (an empty name): the header was read as a data row
    (b"question,A,B,C,D,answer,id\n" + HENDRYCKS.replace(b"\n", b",x\n"), "question,A,B,C,D,answer,", "A,B,C,D",
     "1: this row is a header (it names the columns --columns gives): leave --columns out"),
    (b"question,A,B,C,D,answer\n" + HENDRYCKS, None, "A,B,C,E",
     "2: row is missing field 'E' (needed by preset mmlu); its columns: 'question', 'A', 'B', 'C', 'D', 'answer'; "
     "name the column with --choices-field COLUMN, or the columns holding one choice each with --choices-field "
     "A,B,C,D"),
    (HENDRYCKS, "question,A,B,C,D,answer", None,  # no --choices-field: named, not "try --preset gsm8k"
     "1: row is missing field 'choices' (needed by preset mmlu); its columns: 'question', 'A', 'B', 'C', 'D', "
     "'answer'; name the column with --choices-field COLUMN, or the columns holding one choice each"),
])
def test_choice_columns_and_columns_errors_name_the_line(tmp_path, body, columns, choices, message):
    path = tmp_path / "mmlu.csv"
    path.write_bytes(body)
    with pytest.raises(UabError) as info:
        list(convert_records(read_table(path, columns), "mmlu", choices_field=choices, path=str(path)))
    assert str(info.value).startswith(f"{path}:{message}")


def test_missing_choices_suggest_the_choices_field_not_an_open_answer_preset():
    """A multiple-choice row without its choices column under --preset mmlu was told "try
    --preset gsm8k" (which reads question and answer, and would drop the choices)."""
    row = {"question": "q?", "A": "1", "B": "2", "answer": "B"}
    with pytest.raises(UabError) as info:
        list(convert_records([row], "mmlu"))
    assert str(info.value) == (":1: row is missing field 'choices' (needed by preset mmlu); its columns: 'question', "
                               "'A', 'B', 'answer'; name the column with --choices-field COLUMN, or the columns "
                               "holding one choice each with --choices-field A,B,C,D")
    with pytest.raises(UabError, match="try --preset deepscaler$"):  # a missing question still does
        list(convert_records([{"problem": "1+1?", "answer": "2"}], None))


@pytest.mark.parametrize("name,preset,hint", [
    ("q.csv", None, "name the column with --question-field COLUMN"),
    ("q.tsv", "mmlu", "name the column with --choices-field COLUMN, or the columns holding one choice each with "
                      "--choices-field A,B,C,D"),
])
def test_a_csv_without_a_header_row_is_told_to_name_its_columns(tmp_path, name, preset, hint):
    """Without --columns a header-less CSV's first question is read as its header: the hints named
    --question-field or --choices-field only, never --columns, the option such a file needs."""
    path = tmp_path / name
    path.write_bytes(HENDRYCKS.replace(b",", b"\t" if name.endswith(".tsv") else b","))
    with pytest.raises(UabError) as info:
        list(convert_records(read_table(path), preset, path=str(path)))
    assert str(info.value).endswith("; the file's first row looks like data, not a header: name its columns with "
                                    f"--columns question,… (one name per column, in order); if it is a header, {hint}")
    path.write_bytes(b"Question,Correct Answer\nWhat is 1 + 1?,2\n")  # a header: the field's hint alone
    with pytest.raises(UabError) as info:
        list(convert_records(read_table(path), None, path=str(path)))
    assert "--columns" not in str(info.value) and str(info.value).endswith("; name the column with --question-field COLUMN")


def test_a_choices_cell_of_text_names_the_way_out(tmp_path):
    """pandas writes a list column to CSV as its repr: "should be a list" did not say why, nor what to do."""
    path = tmp_path / "mmlu.csv"
    path.write_bytes(b"question,choices,answer\nq,\"['36' '42']\",0\n")
    with pytest.raises(UabError) as info:
        list(convert_records(read_table(path), "mmlu", path=str(path)))
    assert str(info.value) == (f"{path}:2: field 'choices' should be a list of at least 2 choices; it holds text (a "
                               "CSV cell holds no list: name the columns holding one choice each, --choices-field "
                               "A,B,C,D, or convert the JSON or Parquet export)")


def test_columns_and_choices_field_option_errors(tmp_path):
    path = tmp_path / "mmlu.csv"
    path.write_bytes(HENDRYCKS)
    for columns, message in ((" , ", "--columns names no column"),
                             ("question,A,A", "--columns names a column twice: 'A'")):
        with pytest.raises(UabError, match=message):
            read_table(path, columns)
    with pytest.raises(UabError, match="--choices-field names an empty column: 'A,,B'"):
        list(convert_records(read_table(path, "question,A,B,C,D,answer"), "mmlu", choices_field="A,,B"))
    with pytest.raises(UabError) as info:
        read_table(FIXTURES / "mmlu.jsonl", "question,answer")
    assert str(info.value) == (f"{FIXTURES / 'mmlu.jsonl'}: --columns names the columns of a CSV file without a "
                               "header row; a .jsonl file names its own (leave --columns out)")
    result = cli(["convert", str(FIXTURES / "mmlu.jsonl"), "--columns", "question,answer"])
    assert result.exit_code == 2 and result.stderr.startswith("error: ") and not result.stdout


@pytest.mark.parametrize("name,body,line", [
    ("semi.csv", b'question;answer;note\n"What is 1,5 + 1?";2,5;x, y\n', 2),  # a European Excel export
    ("tabs.csv", b'question\tanswer\tnote\nWhat is 1,5 + 1?\t2,5\tx, y\n', 2),
    ("tabs.tsv", b'question\tanswer\tnote\nWhat is 1,5 + 1?\t2,5\tx, y\n', 2),
    ("excel.csv", b'sep=;\r\nquestion;answer;note, more\r\nWhat is 1,5 + 1?;2,5;x, y\r\n', 3),  # sep= decides
    ("mac.csv", b'sep=;\rquestion;answer;note, more\rWhat is 1,5 + 1?;2,5;x, y\r', 3),  # Excel for Mac: CR ends
])
def test_csv_delimiter_is_found(tmp_path, name, body, line):
    """A semicolon- or tab-separated file read as one merged column ("its columns: 'question;answer'");
    a .tsv file was refused."""
    path = tmp_path / name
    path.write_bytes(body)
    [(number, row)] = read_table(path)
    assert number == line and list(row.values()) == ["What is 1,5 + 1?", "2,5", "x, y"]
    assert list(row)[:2] == ["question", "answer"]


def test_csv_delimiter_of_a_header_less_file_splits_it_as_columns_says(tmp_path):
    """Without a header the first row is a question: its commas must not outvote the delimiter."""
    path = tmp_path / "semi.csv"
    path.write_bytes(b"What, if anything, is 1 + 1?;1;2;3;4;B\n")
    records = list(convert_records(read_table(path, "question,A,B,C,D,answer"), "mmlu", choices_field="A,B,C,D"))
    assert [(r["question"], r["choices"], r["answer"]) for r in records] == [
        ("What, if anything, is 1 + 1?", ["1", "2", "3", "4"], "B")]


def test_csv_column_without_a_name_is_left_out_with_a_warning(tmp_path):
    """pandas' to_csv writes its index as a first column with an empty name: it passed through
    as a field named "" in every record."""
    path = tmp_path / "frame.csv"
    path.write_bytes(b",question,answer,\n0,q1,1,\n1,q2,2,\n")
    with pytest.warns(UserWarning) as caught:
        records = list(convert_records(read_table(path), None, path=str(path)))
    assert [str(w.message) for w in caught] == [
        f"{path}:1: the header leaves column 1, 4 unnamed (a pandas index?): left out"]
    assert records == [{"id": "row-0", "question": "q1", "answer": "1", "source": "frame.csv"},
                       {"id": "row-1", "question": "q2", "answer": "2", "source": "frame.csv"}]


def test_read_table_json_array_and_hf_json_lines(tmp_path):
    rows = load_jsonl(FIXTURES / "mmlu.jsonl")
    array = tmp_path / "array.json"
    array.write_text(json.dumps(rows), encoding="utf-8")
    lines = tmp_path / "lines.json"  # datasets' to_json writes JSON Lines even to .json
    lines.write_text((FIXTURES / "mmlu.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    expected = convert_file("mmlu.jsonl", "mmlu")
    assert list(convert_records(read_table(array), "mmlu")) == expected
    assert list(convert_records(read_table(lines), "mmlu")) == expected


def test_read_table_errors(tmp_path):
    with pytest.raises(UabError, match="unsupported file type '.xlsx'; expected one of: .jsonl, .json, .csv, .tsv, "
                       ".parquet"):
        read_table(tmp_path / "data.xlsx")
    with pytest.raises(UabError, match="no such file"):
        read_table(tmp_path / "missing.jsonl")
    (tmp_path / "folder.jsonl").mkdir()
    with pytest.raises(UabError, match="cannot read: "):  # it exists: not "no such file"
        read_table(tmp_path / "folder.jsonl")
    with pytest.raises(UabError, match="cannot read: File name too long"):  # was an OSError traceback
        read_table(tmp_path / ("a" * 300 + ".jsonl"))


def test_read_table_parquet(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = load_jsonl(FIXTURES / "gpqa.jsonl")
    path = tmp_path / "gpqa.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    assert [n for n, _ in read_table(path)] == list(range(1, len(rows) + 1))
    assert list(convert_records(read_table(path), "gpqa")) == convert_file("gpqa.jsonl", "gpqa")
    mmlu = load_jsonl(FIXTURES / "mmlu.jsonl")[:2]  # int answers only: a parquet column has one type
    mpath = tmp_path / "mmlu.parquet"
    pq.write_table(pa.Table.from_pylist(mmlu), mpath)
    assert list(convert_records(read_table(mpath), "mmlu")) == convert_file("mmlu.jsonl", "mmlu")[:2]


def test_read_table_parquet_without_pyarrow(tmp_path, monkeypatch):
    path = tmp_path / "x.parquet"
    path.write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(UabError, match=r"pip install 'uab-cli\[parquet\]'"):
        read_table(path)


# --- sample data ---------------------------------------------------------------------------------


MATH_SETS = {0: "math_graded.jsonl", 1: "math_graded_s1.jsonl"}  # seed: committed file


@pytest.mark.parametrize("seed", MATH_SETS)
def test_math_set_regenerates_byte_for_byte(tmp_path, seed):
    out = tmp_path / "math.jsonl"
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "make_math_set.py"), "--seed", str(seed), "-o", str(out)], check=True
    )
    assert out.read_bytes() == (SAMPLES / MATH_SETS[seed]).read_bytes()


def check_records(records: list[dict]) -> None:
    """Shared validity checks: unique ids, text question, string gold, MC gold letter within choices."""
    ids = [r["id"] for r in records]
    assert len(ids) == len(set(ids))
    for r in records:
        assert isinstance(r["id"], str) and r["id"]
        assert isinstance(r["question"], str) and r["question"].strip()
        assert isinstance(r["answer"], str) and r["answer"].strip()
        assert r.get("type") in ("math", "mc", "text")
        if "choices" in r:
            assert r["type"] == "mc"
            assert all(isinstance(c, str) and c for c in r["choices"])
            assert len(set(r["choices"])) == len(r["choices"])
            assert r["answer"] in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[: len(r["choices"])]
        else:
            assert r["type"] != "mc"


@pytest.mark.parametrize("name", MATH_SETS.values())
def test_sample_math_graded(name):
    records = load_jsonl(SAMPLES / name)
    check_records(records)
    assert len(records) >= 240
    assert {r["level"] for r in records} == {1, 2, 3, 4, 5, 6}
    middle = sum(2 <= r["level"] <= 5 for r in records)
    assert middle >= 0.7 * len(records)
    assert all(r["type"] == "math" and r["answer"].lstrip("-").isdigit() and r["kind"] for r in records)
    assert len({r["question"] for r in records}) == len(records)


@pytest.mark.parametrize("name", MATH_SETS.values())
def test_sample_math_graded_answers_are_right(name):
    for r in load_jsonl(SAMPLES / name):
        q = r["question"]
        if q.startswith("What is "):
            expr = q[len("What is ") : -1].replace("×", "*")
            assert eval(expr, {"__builtins__": {}}) == int(r["answer"]), q
        else:
            lhs, rhs = q.split(": ")[1].split(". ")[0].split(" = ")
            a, b = lhs.split("x + ")
            assert int(a) * int(r["answer"]) + int(b) == int(rhs), q


def test_sample_mc_reasoning():
    records = load_jsonl(SAMPLES / "mc_reasoning.jsonl")
    check_records(records)
    assert len(records) >= 40
    assert all(r["type"] == "mc" and len(r["choices"]) == 4 for r in records)
    letters = [r["answer"] for r in records]
    assert all(letters.count(x) >= len(records) // 6 for x in "ABCD")


def test_sample_latex_answers_parse():
    math_verify = pytest.importorskip("math_verify")
    records = load_jsonl(SAMPLES / "latex_answers.jsonl")
    check_records(records)
    assert len(records) >= 30
    for r in records:
        parsed = math_verify.parse(f"${r['answer']}$")
        assert parsed, r["answer"]
        assert math_verify.verify(parsed, math_verify.parse(f"${r['answer']}$"))


def test_sample_quickstart():
    records = load_jsonl(SAMPLES / "quickstart.jsonl")
    check_records(records)
    assert len(records) == 6
    assert sum(r["type"] == "mc" for r in records) == 1


def test_equivalences_fixture_matches_math_verify():
    # the fixture's expected grades are math-verify's own, except where uab's normaliser has to step in
    math_verify = pytest.importorskip("math_verify")
    rows = load_jsonl(Path(__file__).resolve().parent / "data" / "equivalences.jsonl")
    assert len(rows) >= 30
    assert {r["equal"] for r in rows} == {True, False}

    def wrap(s: str) -> str:
        return s if s.startswith("$") else f"${s}$"

    differ = {
        (r["gold"], r["pred"])
        for r in rows
        if math_verify.verify(math_verify.parse(wrap(r["gold"])), math_verify.parse(wrap(r["pred"]))) != r["equal"]
    }
    # a unit in \text{} after a clock time; digits in different bases
    assert differ == {("\\text{4:30 p.m.}", "4:30 \\text{ p.m.}"), ("4210_5", "4210_6")}


def test_empty_gold_is_an_error():
    with pytest.raises(UabError, match="'answer' is empty") as info:
        list(convert_records([{"problem": "a?", "answer": "1"}, {"problem": "b?", "answer": "  "}], "deepscaler"))
    assert info.value.line == 2


def test_numeric_choices_match_text_before_index():
    """A digit gold that is one choice's text and another's index is read as the text, with one
    warning (it was silent: a CSV export of index golds, MedMCQA's cop, lost its golds to numeric
    choices); --answer-base says golds are indices."""
    import warnings

    rows = [
        {"question": "q?", "choices": ["5", "0", "1"], "answer": "1"},
        {"question": "r?", "choices": ["x", "y"], "answer": "1"},
        {"question": "s?", "choices": ["2", "3", "4", "5"], "answer": "2"},
    ]
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        assert [r["answer"] for r in convert_records(rows, "mmlu", path="q.csv")] == ["C", "B", "A"]
    assert [str(w.message) for w in said] == [
        "q.csv:1: gold '1' is the text of choice C and the index of choice B: read as the text (--answer-base 0 "
        "or 1 reads golds as indices)"]
    assert [r["answer"] for r in convert_records(rows, "mmlu", answer_base=0)] == ["B", "B", "C"]
    assert [r["answer"] for r in convert_records(rows[1:], "mmlu", answer_base=1)] == ["A", "B"]
    list(convert_records([{"question": "q?", "choices": ["0", "1"], "answer": "1"}], "mmlu"))  # the same: no word


# --- presets on real public rows (tests/data/convert/real/README.md names each source) ------------

REAL = FIXTURES / "real"


def convert_real(relative: str, preset: str, **options) -> list[dict]:
    path = REAL / relative
    return list(convert_records(read_table(path, preset=preset), preset, path=str(path), **options))


def test_gsm8k_preset_on_real_rows():
    path = REAL / "openai+grade-school-math/grade_school_math/data/test.jsonl"
    rows = load_jsonl(path)
    records = convert_real("openai+grade-school-math/grade_school_math/data/test.jsonl", "gsm8k")
    assert [r["answer"] for r in records] == ["18", "3", "2125", "26", "25", "4", "2"]
    assert [r["id"] for r in records] == [f"gsm8k-{i}" for i in range(7)]
    for row, rec in zip(rows, records, strict=True):
        assert rec["question"] == row["question"] and rec["type"] == "math" and rec["source"] == "gsm8k"
        assert rec["solution"] == row["answer"]  # the worked solution passes through whole


def test_gsm8k_preset_golds_grade_their_own_number_right():
    # rows 4-7 end their worked text with another number or with words before "#### N": kept whole as
    # gold (a plain convert), "26" is not graded right against them; the preset's gold is the number
    records = convert_real("openai+grade-school-math/grade_school_math/data/test.jsonl", "gsm8k")
    assert all(is_correct(rec, rec["answer"]) for rec in records)
    assert all(is_correct(rec, extract_answer(rec["solution"], rec)) for rec in records)
    assert not any(is_correct(rec, str(int(rec["answer"]) + 1)) for rec in records)


def test_gsm8k_without_final_hashes_names_line(tmp_path):
    path = tmp_path / "gsm.jsonl"
    path.write_text('{"question": "a?", "answer": "1 + 1 = 2\\n#### 2"}\n{"question": "b?", "answer": "so 3"}\n')
    with pytest.raises(UabError, match="'#### <answer>'") as info:
        list(convert_records(read_table(path), "gsm8k", path=str(path)))
    assert str(info.value).startswith(f"{path}:2: ")


SVAMP = "arkilpatel+SVAMP/SVAMP.json"


def test_svamp_preset_on_real_rows():
    rows = json.loads((REAL / SVAMP).read_text(encoding="utf-8"))
    records = convert_real(SVAMP, "svamp")
    assert records[0] == {
        "id": "chal-1",
        "question": "Each pack of dvds costs 76 dollars. If there is a discount of 25 dollars on each pack. "
                    "How much do you have to pay to buy each pack?",  # the Body's missing full stop added
        "answer": "51",  # 51.0
        "type": "math",
        "equation": "( 76.0 - 25.0 )",
        "problem_type": "Subtraction",
        "source": "svamp",
    }
    assert records[1]["question"] == f"{rows[1]['Body']} {rows[1]['Question']}"  # a Body with its full stop
    assert [r["answer"] for r in records] == ["51", "17", "1538832", "1", "121", "2"]
    assert [r["id"] for r in records] == [row["ID"] for row in rows]
    assert records[-1]["problem_type"] == "Common-Divison"  # as published


def test_svamp_golds_grade_a_models_forms_of_the_number_right():
    records = convert_real(SVAMP, "svamp")
    for rec in records:
        gold = rec["answer"]
        for response in (gold, f"{gold}.0", f"${gold}", f"So she pays \\boxed{{\\${gold}}}.", f"{int(gold):,} kids"):
            assert is_correct(rec, extract_answer(response, rec)), response
        assert not is_correct(rec, extract_answer(f"{gold}1", rec))


@pytest.mark.parametrize("answer,gold", [(51.0, "51"), (51, "51"), (0.5, "0.5"), ("51.0", "51"), ("51.00", "51"),
                                         ("-3.0", "-3"), ("2.50", "2.50"), ("1.05", "1.05")])
def test_svamp_gold_drops_only_a_zero_fraction(answer, gold):
    """SVAMP's Answer is a float (51.0); a CSV export holds it as the text "51.0": both give 51."""
    row = {"ID": "chal-1", "Body": "Tom has 51 apples", "Question": "How many?", "Answer": answer}
    assert next(convert_records([row], "svamp"))["answer"] == gold


def test_svamp_rows_without_the_preset_name_it():
    row = json.loads((REAL / SVAMP).read_text(encoding="utf-8"))[0]
    with pytest.raises(UabError, match="try --preset svamp$"):
        list(convert_records([row], None))
    with pytest.raises(UabError, match="field 'Body' is empty \\(needed by preset svamp\\)"):
        list(convert_records([{**row, "Body": " "}], "svamp"))


MGSM_ES = "google-research+url-nlp/mgsm/mgsm_es.tsv"


def test_mgsm_preset_reads_mgsms_headerless_tsv():
    """MGSM's TSV files have no header row: their first question was read as the header (every row then
    missing 'question'); --preset mgsm names the columns, and its file's name the language."""
    rows = [line.split("\t") for line in (REAL / MGSM_ES).read_text(encoding="utf-8").splitlines()]
    records = convert_real(MGSM_ES, "mgsm")
    assert records[0] == {"id": "mgsm-es-0", "question": rows[0][0], "answer": "18", "type": "math",
                          "language": "es", "source": "mgsm"}
    assert [r["answer"] for r in records] == ["18", "2125", "250"]  # 2,125: its thousands comma dropped
    assert [r["question"] for r in records] == [q for q, _ in rows]  # row 214's "Todo por un dólar" quotes kept
    assert [r["id"] for r in records] == ["mgsm-es-0", "mgsm-es-1", "mgsm-es-2"]
    for rec in records:  # as MGSM's Spanish exemplars end their replies
        assert is_correct(rec, extract_answer(f"5 + 6 = 11. La respuesta es {rec['answer']}.", rec))
    assert convert_real("google-research+url-nlp/mgsm/mgsm_ja.tsv", "mgsm")[1]["language"] == "ja"


def test_mgsm_preset_through_the_cli_and_stdin(tmp_path):
    """The Russian file's first question holds a comma: piped in, it was split at commas (two cells either way)."""
    ru = REAL / "google-research+url-nlp/mgsm/mgsm_ru.tsv"
    out = tmp_path / "ru.jsonl"
    assert cli(["convert", str(ru), "--preset", "mgsm", "-o", str(out)]).exit_code == 0
    assert [r["id"] for r in load_jsonl(out)] == ["mgsm-ru-0", "mgsm-ru-1"]
    piped = _convert("-", "--preset", "mgsm", stdin=ru.read_bytes())  # stdin has no name: no language, one warning
    assert piped.returncode == 0 and piped.stderr.decode().splitlines() == [
        "warning: <stdin>:1: the input's name does not say its language, as MGSM's mgsm_XX.tsv do: its records have "
        "no 'language', nor their ids (name the file mgsm_XX.tsv to keep it)"]
    records = [json.loads(line) for line in piped.stdout.splitlines()]
    assert [{**r, "id": "", "language": "ru"} for r in records] == [{**r, "id": ""} for r in load_jsonl(out)]
    assert [r["id"] for r in records] == ["mgsm-0", "mgsm-1"]


@pytest.mark.parametrize("body,message", [
    (b"question\tanswer\nHow many?\t4\n", None),  # a header row naming its columns is read as one
    (b"question\tanswer\tanswer_number\nHow many?\t\t4\n", None),  # juletxara/mgsm's header: answer_number the gold
    (b"How many?\t4\t5\n", "1: row has 3 cells, preset mgsm reads 2 (question, answer: its files have no header row)"),
    (b"How many?\t4.5\n", "1: field 'answer' should be a whole number (as MGSM's golds are), got '4.5'"),
    (b"How many?\t2,5\n", "1: field 'answer' should be a whole number (as MGSM's golds are), got '2,5'"),
    (b"How many?\t\n", "1: field 'answer' is null (needed by preset mgsm)"),
])
def test_mgsm_preset_rows_it_refuses(tmp_path, body, message):
    path = tmp_path / "mgsm_de.tsv"
    path.write_bytes(body)
    if message is None:
        assert convert_records(read_table(path, preset="mgsm"), "mgsm", path=str(path)).__next__()["answer"] == "4"
        return
    with pytest.raises(UabError) as info:
        list(convert_records(read_table(path, preset="mgsm"), "mgsm", path=str(path)))
    assert str(info.value) == f"{path}:{message}"


def test_mgsm_preset_reads_a_json_export_by_its_column_names(tmp_path):
    path = tmp_path / "mgsm_fr.jsonl"
    path.write_text('{"question": "Combien ?", "answer": 1200}\n', encoding="utf-8")
    assert convert_real(path, "mgsm") == [{"id": "mgsm-fr-0", "question": "Combien ?", "answer": "1200",
                                            "type": "math", "language": "fr", "source": "mgsm"}]


# Hugging Face's juletxara/mgsm: its test split's answer is null, its train split's a worked solution
MGSM_HF = [{"question": "¿Cuántos?", "answer": None, "answer_number": 18, "equation_solution": None},
           {"question": "¿Y ahora?", "answer": "Respuesta paso a paso: 2 + 3 = 5.", "answer_number": 1200,
            "equation_solution": "2 + 3 = 5"}]
MGSM_HF_RECORDS = [
    {"id": "mgsm-es-0", "question": "¿Cuántos?", "answer": "18", "type": "math", "language": "es", "source": "mgsm"},
    {"id": "mgsm-es-1", "question": "¿Y ahora?", "answer": "1200", "type": "math",
     "solution": "Respuesta paso a paso: 2 + 3 = 5.", "equation": "2 + 3 = 5", "language": "es", "source": "mgsm"}]


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_mgsm_preset_reads_the_hugging_face_export(tmp_path, suffix):
    """juletxara/mgsm (question, answer, answer_number, equation_solution) needed --answer-field answer_number:
    its 'answer' is null (test split) or a worked solution (train); a CSV export of it, whose header names more
    columns than the preset's two, was refused ("row has 4 cells, preset mgsm reads 2"). The gold is now
    answer_number, the worked solution and the equation kept; --answer-field answer_number reads the same."""
    path = tmp_path / f"mgsm_es{suffix}"
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in MGSM_HF), encoding="utf-8")
    else:
        with open(path, "w", encoding="utf-8", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(MGSM_HF[0]))
            writer.writeheader()
            writer.writerows(MGSM_HF)
    assert convert_real(path, "mgsm") == MGSM_HF_RECORDS
    assert convert_real(path, "mgsm", answer_field="answer_number") == MGSM_HF_RECORDS


def test_an_explicit_answer_field_wins_over_the_hugging_face_mgsm_gold(tmp_path):
    """--answer-field answer on juletxara/mgsm still read answer_number: the preset could not tell the option
    from its own default. The column named is read (its null or worked solution refused, naming the row)."""
    path = tmp_path / "mgsm_es.jsonl"
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in MGSM_HF[::-1]), encoding="utf-8")
    with pytest.raises(UabError) as info:
        list(convert_records(read_table(path, preset="mgsm"), "mgsm", answer_field="answer", path=str(path)))
    assert str(info.value) == (f"{path}:1: field 'answer' should be a whole number (as MGSM's golds are), "
                               "got 'Respuesta paso a paso: 2 + 3 = 5.'")
    out = tmp_path / "out.jsonl"
    result = cli(["convert", str(path), "--preset", "mgsm", "--answer-field", "answer", "-o", str(out)])
    assert result.exit_code == 2 and result.stderr.splitlines() == [f"error: {info.value}"] and not out.exists()
    path.write_text(json.dumps(MGSM_HF[0]) + "\n", encoding="utf-8")
    with pytest.raises(UabError, match=r":1: field 'answer' is null \(needed by preset mgsm\)$"):
        list(convert_records(read_table(path, preset="mgsm"), "mgsm", answer_field="answer", path=str(path)))


def test_columns_on_stdin_split_at_the_delimiter_that_fits_every_row():
    """--columns with a tab-separated file piped in whose first question holds one comma: comma and tab both
    split that row in two, and the comma won, splitting the next rows wrongly (or into too many cells)."""
    body = "Ella come tres, y vende el resto.\t18\nUna bata lleva 2 rollos.\t3\nOtra, y otra, y otra.\t7\n"
    piped = cli(["convert", "-", "--columns", "question,answer"], stdin=body.encode())
    assert piped.exit_code == 0, piped.output  # was: <stdin>:2: row has 1 cells, --columns names 2
    assert [(r["question"], r["answer"]) for r in map(json.loads, piped.stdout.splitlines())] == [
        ("Ella come tres, y vende el resto.", "18"), ("Una bata lleva 2 rollos.", "3"), ("Otra, y otra, y otra.", "7")]


def test_math500_preset_on_real_rows_keeps_solution():
    rows = load_jsonl(REAL / "MobileLLM+BudgetThinker/evaluation/data/math500/test_ori.jsonl")
    records = convert_real("MobileLLM+BudgetThinker/evaluation/data/math500/test_ori.jsonl", "math500")
    assert [r["id"] for r in records] == [row["unique_id"] for row in rows]
    assert [r["answer"] for r in records][1:3] == ["\\text{Evelyn}", "\\text{east}"]
    for row, rec in zip(rows, records, strict=True):
        assert (rec["question"], rec["solution"], rec["subject"]) == (row["problem"], row["solution"], row["subject"])
        assert rec["level"] == row["level"] and isinstance(rec["level"], int)


def test_mmlu_preset_on_real_cais_layout_rows():
    records = convert_real("QwenLM+Qwen2.5-Math/evaluation/data/mmlu_stem/test.jsonl", "mmlu")
    rows = load_jsonl(REAL / "QwenLM+Qwen2.5-Math/evaluation/data/mmlu_stem/test.jsonl")
    assert [r["answer"] for r in records] == ["ABCD"[row["answer"]] for row in rows]
    assert records[0]["answer"] == "C"
    assert all(r["choices"] == row["choices"] and r["type"] == "mc" for r, row in zip(records, rows, strict=True))


def test_deepscaler_preset_on_real_aime_and_amc_files():
    aime = convert_real("agentica-project+deepscaler/deepscaler/data/train/aime.json", "deepscaler")
    assert [r["answer"] for r in aime] == ["57", "12", "130", "051"]
    assert all(r["solution"] and r["type"] == "math" for r in aime)
    amc = convert_real("agentica-project+deepscaler/deepscaler/data/test/amc.json", "deepscaler")
    assert [r["answer"] for r in amc] == ["142", "144", "81"]  # stored as 142.0
    assert all("solution" not in r for r in amc)


def test_deepscaler_preset_reads_aime24_with_its_ids():
    records = convert_real("QwenLM+Qwen2.5-Math/evaluation/data/aime24/test.jsonl", "deepscaler", id_field="id")
    assert [(r["id"], r["answer"]) for r in records] == [("60", "204"), ("61", "113")]
    assert all(r["solution"] for r in records)


def test_hh_rlhf_preset_on_real_gzipped_rows(tmp_path):
    import gzip

    raw = gzip.decompress((REAL / "anthropics+hh-rlhf/harmless-base/test.jsonl.gz").read_bytes())
    path = tmp_path / "test.jsonl"
    path.write_bytes(raw)
    rows = load_jsonl(path)
    records = list(convert_records(read_table(path), "hh-rlhf"))
    for row, rec in zip(rows, records, strict=True):
        good = rec["choices"]["AB".index(rec["answer"])]
        bad = rec["choices"]["BA".index(rec["answer"])]
        assert row["chosen"].endswith(good) and row["rejected"].endswith(bad) and good != bad
        assert rec["question"].startswith("Human: ")
        assert row["chosen"].strip().startswith(rec["question"].split("\n\nWhich response")[0])
    assert {r["answer"] for r in records} == {"A", "B"}


def test_cli_convert_gsm8k_preset(tmp_path):
    from typer.testing import CliRunner

    from uab_cli.cli import app

    out = tmp_path / "gsm8k.jsonl"
    source = REAL / "openai+grade-school-math/grade_school_math/data/test.jsonl"
    result = CliRunner().invoke(app, ["convert", str(source), "--preset", "gsm8k", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert load_jsonl(out) == convert_real("openai+grade-school-math/grade_school_math/data/test.jsonl", "gsm8k")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q?", "answer": "no final line"}\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["convert", str(bad), "--preset", "gsm8k", "-o", str(tmp_path / "x.jsonl")])
    assert result.exit_code == 2 and f"{bad}:1:" in result.output
    assert not (tmp_path / "x.jsonl").exists()


def _convert(*args: str, stdin: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from uab_cli.cli import main; main()", "convert", *args],
                          input=stdin, capture_output=True, cwd=cwd)


def test_convert_reads_stdin_like_the_other_commands(tmp_path):
    rows = b'{"problem": "What is 1 + 1?", "answer": "2", "unique_id": "a"}\n{"problem": "2 + 2?", "answer": "4", "unique_id": "b"}\n'
    piped = _convert("-", "--preset", "math500", stdin=rows)
    (tmp_path / "m.jsonl").write_bytes(rows)
    from_file = _convert(str(tmp_path / "m.jsonl"), "--preset", "math500")
    assert piped.returncode == 0 and piped.stdout == from_file.stdout and piped.stdout.count(b"\n") == 2
    parquet = pytest.importorskip("pyarrow.parquet")
    import pyarrow as pa

    parquet.write_table(pa.Table.from_pylist([json.loads(r) for r in rows.splitlines()]), tmp_path / "m.parquet")
    piped = _convert("-", "--preset", "math500", stdin=(tmp_path / "m.parquet").read_bytes())
    assert piped.returncode == 0 and piped.stdout == from_file.stdout


@pytest.mark.parametrize("data", [b"", b"\n\n"])
def test_convert_empty_input_is_an_error(tmp_path, data):
    (tmp_path / "e.jsonl").write_bytes(data)
    for result in (_convert("-", stdin=data), _convert(str(tmp_path / "e.jsonl"))):
        assert result.returncode == 2 and b"empty input: no records" in result.stderr and not result.stdout


def test_convert_writes_nothing_unless_every_row_converts(tmp_path):
    (tmp_path / "two.jsonl").write_bytes(b'{"question": "a", "answer": "1"}\n{"problem": "b"}\n')
    result = _convert("two.jsonl", cwd=tmp_path)  # stdout: a pipe
    assert result.returncode == 2 and result.stdout == b"" and b"two.jsonl:2:" in result.stderr
    result = _convert("two.jsonl", "-o", "out.jsonl", cwd=tmp_path)
    assert result.returncode == 2 and not (tmp_path / "out.jsonl").exists()


def test_a_missing_column_lists_the_row_and_the_option_that_fits(tmp_path):
    math = _convert("-", stdin=b'{"problem": "a", "answer": "1", "unique_id": "x"}\n')
    assert math.returncode == 2
    assert b"its columns: 'problem', 'answer', 'unique_id'; try --preset math500" in math.stderr
    other = _convert("-", stdin=b'{"q": "a", "a": "1"}\n')
    assert b"its columns: 'q', 'a'; name the column with --question-field COLUMN" in other.stderr


def test_convert_accepts_a_byte_order_mark(tmp_path):
    result = _convert("-", stdin=b'\xef\xbb\xbf{"question": "a", "answer": "1"}\n')
    assert result.returncode == 0 and json.loads(result.stdout)["question"] == "a"


@pytest.mark.parametrize("preset,row", [
    (None, {"question": "q?", "answer": ["a", "b"]}),
    (None, {"question": "q?", "answer": {"text": "a"}}),
    (None, {"question": "q?", "choices": ["x", "y"], "answer": ["A"]}),
    ("mmlu", {"question": "q?", "choices": ["x", "y"], "answer": [0, 1]}),
])
def test_a_gold_of_several_answers_is_an_error_naming_the_row(preset, row):
    """It became the gold "['a', 'b']" (a Python repr) without a word."""
    rows = [{"question": "fine?", "answer": "1", "choices": ["x", "y"]} if "choices" in row else
            {"question": "fine?", "answer": "1"}, row]
    with pytest.raises(UabError) as info:
        list(convert_records(rows, preset, path="in.jsonl"))
    assert str(info.value).startswith("in.jsonl:2: field 'answer' should be one answer (text or a number), got ")
    assert "ambiguous as a gold" in str(info.value)


@pytest.mark.parametrize("preset,row,field", [
    (None, {"question": None, "answer": "1"}, "question"),
    ("math500", {"problem": None, "answer": "1", "unique_id": "a"}, "problem"),
    (None, {"prompt": "q?", "target": None}, "target"),
])
def test_a_null_field_is_named_as_null_not_missing(preset, row, field):
    options = {"question_field": "prompt", "answer_field": "target"} if "prompt" in row else {}
    with pytest.raises(UabError) as info:
        list(convert_records([row], preset, path="in.jsonl", **options))
    assert f"field {field!r} is null" in str(info.value) and "missing" not in str(info.value)


def test_convert_and_the_record_schema_agree_on_the_fewest_choices(tmp_path):
    from uab_cli.records import MIN_CHOICES, check_record

    one = {"id": "a", "question": "q?", "choices": ["x"], "answer": "A"}
    with pytest.raises(UabError, match=f"at least {MIN_CHOICES}"):
        check_record(one)
    with pytest.raises(UabError, match=f"at least {MIN_CHOICES} choices"):
        list(convert_records([one], None))
    two = {**one, "choices": ["x", "y"]}
    check_record(two)
    check_record(next(convert_records([two], None)))


SYNTHETIC = {"mixed": [], "calibrated-small": ["small", "--k", "8", "--wrong", "few", "--anll", "0.10,0.12",
                                               "--noise", "0.05"]}  # committed pool: its generator's arguments


@pytest.mark.parametrize("name", SYNTHETIC)
def test_synthetic_pool_regenerates_byte_for_byte(tmp_path, name):
    """The committed synthetic pools are what scripts/make_synthetic_pool.py writes (its docstring
    and results/synthetic/README.md give the commands); ``--wrong few`` splits a question's wrong
    samples over at most three competitors."""
    out = tmp_path / "pool.jsonl"
    args = SYNTHETIC[name] or [name]
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_synthetic_pool.py"), *args, "-o", str(out)],
                   check=True)
    committed = ROOT / "results" / "synthetic" / name / "pool.jsonl"
    assert out.read_bytes() == committed.read_bytes()
    if name == "calibrated-small":
        wrong = [{s["answer"] for s in r["samples"] if s["answer"] != r["answer"]} for r in load_jsonl(out)]
        assert max(map(len, wrong)) == 3


@pytest.mark.parametrize("wrong", ["one", "few", "scatter"])
def test_synthetic_wrong_answers_sort_before_or_after_the_gold_at_random(wrong):
    """Majority breaks ties lexicographically: a generator whose wrong answers mostly sort first
    (labels of different lengths, "10" beside "100") hands every even-N tie to a wrong answer
    and inflates every confidence rule's gain (it made the old calibrated-small pool's N = 2
    gain +9.3 points instead of +2.3)."""
    records = script("make_synthetic_pool").make("moderate", 300, 8, 0, wrong, 0.05)
    pairs = [(a < r["answer"]) for r in records for a in {s["answer"] for s in r["samples"]} - {r["answer"]}]
    assert len({len(s["answer"]) for r in records for s in r["samples"]} | {len(r["answer"]) for r in records}) == 1
    assert 0.45 < np.mean(pairs) < 0.55


def test_arc_choices_labelled_1_to_4_take_the_gold_by_label():
    """Some ARC rows label their choices "1".."4" and name the gold by label: "2" is the second
    choice (B), not index 2 (C); a gold that is no label is an error."""
    row = {"question": "Which is a mammal?", "answerKey": "2",
           "choices": {"text": ["shark", "whale", "trout", "eel"], "label": ["1", "2", "3", "4"]}}
    lettered = {**row, "answerKey": "D", "choices": {**row["choices"], "label": ["A", "B", "D", "E"]}}
    got = list(convert_records([row, lettered], None, answer_field="answerKey", choices_field="choices"))
    assert [r["answer"] for r in got] == ["B", "C"] and got[0]["choices"] == ["shark", "whale", "trout", "eel"]
    with pytest.raises(UabError, match=r"answer '5' is none of the choice labels \['1', '2', '3', '4'\]"):
        list(convert_records([{**row, "answerKey": "5"}], None, answer_field="answerKey", choices_field="choices"))


@pytest.mark.parametrize("gold", ["", "\\text{}", "\\boxed{}"])
def test_an_empty_generic_gold_is_an_error_naming_the_row(gold):
    with pytest.raises(UabError, match="field 'answer' is empty") as info:
        list(convert_records([{"question": "a?", "answer": "1"}, {"question": "b?", "answer": gold}], None))
    assert info.value.line == 2


@pytest.mark.parametrize("preset,gold", [("math500", "\\boxed{}"), ("deepscaler", "\\boxed{}"),
                                         ("deepscaler", "\\text{}"), ("gsm8k", "#### \\boxed{}")])
def test_an_empty_gold_is_an_error_under_every_preset(preset, gold):
    """The empty-gold check covered the default mapping only: math500 and deepscaler wrote a
    "\\boxed{}" gold, which grades every answer as ungraded."""
    key = "question" if preset == "gsm8k" else "problem"
    rows = [{key: "a?", "answer": "#### 1" if preset == "gsm8k" else "1", "unique_id": "a"},
            {key: "b?", "answer": gold, "unique_id": "b"}]
    with pytest.raises(UabError, match=f"field 'answer' is empty \\(needed by preset {preset}\\)") as info:
        list(convert_records(rows, preset))
    assert info.value.line == 2


@pytest.mark.parametrize("preset,row", [(None, {"question": "Is 7 prime?", "answer": True}),
                                        ("deepscaler", {"problem": "Is 7 prime?", "answer": False})])
def test_a_boolean_gold_is_an_error_as_in_phase1(preset, row):
    """A JSON true became the gold "True", though phase1 refuses a boolean gold."""
    with pytest.raises(UabError, match="field 'answer' should be one answer \\(text or a number\\), got the boolean"):
        list(convert_records([row], preset))


def test_an_arc_file_without_answer_field_warns_once_of_its_gold_column():
    """ARC's gold is in answerKey: the default mapping wrote records with no gold, without a word."""
    import warnings

    rows = [{"id": f"Mercury_{i}", "question": f"q{i}?", "answerKey": "B",
             "choices": {"text": ["a", "b", "c", "d"], "label": ["A", "B", "C", "D"]}} for i in range(3)]
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        got = list(convert_records(rows, None, path="arc.jsonl"))
    assert all("answer" not in r for r in got)
    assert [str(w.message) for w in said] == [
        "arc.jsonl:1: no gold answer field 'answer'; 'answerKey' looks like one: --answer-field answerKey"]
    # with the gold named, or a gold in the row, nothing to say (a warning is an error in tests)
    assert [r["answer"] for r in convert_records(rows, None, answer_field="answerKey")] == ["B"] * 3
    list(convert_records([{"question": "q?", "answer": "1", "label": "x"}, {"question": "r?"}], None))


def test_parquet_binary_and_decimal_columns_convert(tmp_path):
    """Binary text reads as text (it was written as "b'12'", a gold nothing equals), a decimal as
    its exact value, and binary that is no text (an image column) as null with a warning."""
    import decimal
    import warnings

    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table({"question": pa.array([b"What is 5 + 7?", b"What is 1 + 1?"], pa.binary()),
                      "answer": pa.array([b"12", b"2"], pa.binary()),
                      "price": pa.array([decimal.Decimal("1.50"), decimal.Decimal("3")], pa.decimal128(5, 2)),
                      "image": pa.array([{"bytes": b"\x89PNG\xff", "path": "a.png"}, None],
                                        pa.struct([("bytes", pa.binary()), ("path", pa.string())]))})
    path = tmp_path / "t.parquet"
    pq.write_table(table, path)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        got = list(convert_records(read_table(path), None))
    assert [(r["question"], r["answer"], r["price"]) for r in got] == [("What is 5 + 7?", "12", "1.50"),
                                                                        ("What is 1 + 1?", "2", 3)]
    assert got[0]["image"] == {"bytes": None, "path": "a.png"}
    assert any("column 'image' holds binary data that is no text" in str(w.message) for w in said)


def test_a_datasets_server_rows_download_is_unwrapped(tmp_path):
    """The Hugging Face datasets-server's /rows answer: each row is under "row"."""
    path = tmp_path / "rows.json"
    path.write_text(json.dumps({"features": [], "rows": [
        {"row_idx": 0, "row": {"question": "What is 2 + 2?", "answer": "#### 4"}, "truncated_cells": []},
        {"row_idx": 1, "row": {"question": "What is 3 + 3?", "answer": "#### 6"}, "truncated_cells": []}]}))
    assert [(r["question"], r["answer"]) for r in convert_records(read_table(path), "gsm8k")] == [
        ("What is 2 + 2?", "4"), ("What is 3 + 3?", "6")]


def _rows_page(path, offset, rows, truncated=()):
    """A /rows (or /first-rows) reply holding ``rows`` from ``offset`` on."""
    path.write_text(json.dumps({"features": [], "num_rows_total": 1319, "rows": [
        {"row_idx": offset + i, "row": row, "truncated_cells": list(truncated)} for i, row in enumerate(rows)]}))
    return path


def test_a_datasets_server_page_keeps_the_splits_row_numbers_as_ids(tmp_path):
    """/rows serves at most 100 rows a call: the page at offset 100 was numbered gsm8k-0.. again, so two
    converted pages held the same ids (and gsm8k-0 was not the split's row 0)."""
    rows = [{"question": f"What is {n} + {n}?", "answer": f"#### {2 * n}"} for n in range(3)]
    first = convert_records(read_table(_rows_page(tmp_path / "p0.json", 0, rows)), "gsm8k")
    later = convert_records(read_table(_rows_page(tmp_path / "p1.json", 100, rows)), "gsm8k")
    assert [r["id"] for r in first] == ["gsm8k-0", "gsm8k-1", "gsm8k-2"]
    assert [r["id"] for r in later] == ["gsm8k-100", "gsm8k-101", "gsm8k-102"]


def test_a_cell_the_datasets_server_cut_short_is_an_error(tmp_path):
    """/first-rows cuts long cells and names them in truncated_cells: the cut question was converted as it
    stood. A null one (a column /rows cannot serve) is no cut text."""
    cut = _rows_page(tmp_path / "first.json", 0, [{"question": "A long question cut", "answer": "#### 4"}],
                     truncated=["question"])
    with pytest.raises(UabError, match=r"cut cell\(s\) 'question' .*Parquet") as info:
        list(convert_records(read_table(cut), "gsm8k"))
    assert info.value.line == 1
    null = _rows_page(tmp_path / "rows.json", 0, [{"question": "q?", "answer": "#### 4", "image": None}],
                      truncated=["image"])
    assert [r["answer"] for r in convert_records(read_table(null), None, answer_field="answer")] == ["#### 4"]


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_a_gold_integer_beyond_64_bits_keeps_its_digits(tmp_path, suffix):
    """orjson reads a 30-digit integer as a float: the gold became 1.2345678901234568e+29's digits."""
    path = tmp_path / f"big{suffix}"
    row = '{"question": "q?", "answer": 123456789012345678901234567890}'
    path.write_text(row + "\n" if suffix == ".jsonl" else f"[{row}]")
    [(_, found)] = list(read_table(str(path)))
    assert found["answer"] == 123456789012345678901234567890
    assert list(convert_records([found], None))[0]["answer"] == "123456789012345678901234567890"


def test_mmlu_preset_takes_an_arc_gold_by_its_label():
    """README: choices given as ARC's {"text", "label"} take the gold by its label; --preset mmlu
    took "2" of labels 1-4 as index 2 (C) instead of the second choice (B)."""
    row = {"question": "Which is a mammal?", "answerKey": "2",
           "choices": {"text": ["shark", "whale", "trout", "eel"], "label": ["1", "2", "3", "4"]}}
    lettered = {**row, "answerKey": "D", "choices": {**row["choices"], "label": ["A", "B", "D", "E"]}}
    got = list(convert_records([row, lettered], "mmlu", answer_field="answerKey"))
    assert [r["answer"] for r in got] == ["B", "C"]


@pytest.mark.parametrize("row,message", [
    ({"problem": "What is 1 + 1?", "level": "Level 1", "type": "Algebra"}, "'type' must be one of math, mc, text"),
    ({"problem": "q?", "level": [1, 2]}, "'level' must be a string or number, got list"),
])
def test_convert_writes_no_record_phase1_refuses(tmp_path, row, message):
    """A column passed through (hendrycks MATH's "type": "Algebra") made a record every later
    command refused; now convert names the row and writes nothing."""
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({"problem": "fine?"}) + "\n" + json.dumps(row) + "\n")
    result = _convert(str(path), "--question-field", "problem", "-o", str(tmp_path / "out.jsonl"))
    assert result.returncode == 2 and not (tmp_path / "out.jsonl").exists()
    assert result.stderr.decode().startswith(f"error: {path}:2: {message}")


@pytest.mark.parametrize("value,kind", [(True, "bool"), ({"a": 1}, "dict"), ([1], "list")])
def test_an_id_that_is_no_text_or_number_is_an_error(value, kind):
    """It became the id "True" or "{'a': 1}" (a Python repr) without a word."""
    with pytest.raises(UabError, match=f"in.jsonl:1: field 'id' should be text or a number, got {kind}"):
        list(convert_records([{"id": value, "question": "q?"}], None, path="in.jsonl"))


# AI2's ARC CSV release: its header, and rows as it writes them (choices inside the question's text)
ARC_CSV = """\
"questionID","originalQuestionID","totalPossiblePoint","AnswerKey","isMultipleChoiceQuestion","includesDiagram",\
"examName","schoolGrade","year","question","subject","category"
"Mercury_7175875","7175875","1","C","1","0","Mercury","9","2015","An astronomer observes that a planet rotates \
faster after a meteorite impact. Which is the most likely effect of this increase in rotation? (A) Planetary density \
will decrease. (B) Planetary years will become longer. (C) Planetary days will become shorter. (D) Planetary gravity \
will become stronger.","","Test"
"NYSEDREGENTS_2015_4_7","7","1","3","1","0","NYSEDREGENTS","4","2015","Which object is a nonliving thing? \
(1) tree (2) ant (3) rock (4) bird","","Test"
"MCAS_2004_9_5","5","1","B","1","0","MCAS","9","2004","Which is the main function of a cell membrane? \
(A) producing energy (B) controlling what enters and leaves (C) storing genetic material","","Test"
"AKDE&ED_2008_8_3","3","1","E","1","0","AKDE&ED","8","2008","Which tool (A) measures mass? \
(A) ruler (B) thermometer (C) graduated cylinder (D) spring scale (E) balance","","Test"
"""


def test_arc_csv_preset_splits_the_choices_out_of_the_question(tmp_path):
    """AI2's ARC CSV holds each question's choices in its text ("… (A) a (B) b", or "(1) a (2) b",
    3 to 5 of them): they converted as one question with no choices and no gold."""
    path = tmp_path / "ARC-Easy-Test.csv"
    path.write_text(ARC_CSV, encoding="utf-8")
    got = list(convert_records(read_table(path), "arc", path=str(path)))
    assert [(r["id"], r["answer"], len(r["choices"])) for r in got] == [
        ("Mercury_7175875", "C", 4), ("NYSEDREGENTS_2015_4_7", "C", 4), ("MCAS_2004_9_5", "B", 3),
        ("AKDE&ED_2008_8_3", "E", 5)]
    assert got[0]["question"] == ("An astronomer observes that a planet rotates faster after a meteorite impact. "
                                  "Which is the most likely effect of this increase in rotation?")
    assert got[0]["choices"][2] == "Planetary days will become shorter."
    assert got[1] == {"id": "NYSEDREGENTS_2015_4_7", "question": "Which object is a nonliving thing?",
                      "choices": ["tree", "ant", "rock", "bird"], "answer": "C", "type": "mc", "source": "arc"}
    assert got[3]["question"] == "Which tool (A) measures mass?"  # an "(A)" in the stem starts no choices
    assert got[3]["choices"][4] == "balance"


@pytest.mark.parametrize("text", [
    "Which is true of (A) and (B)?",  # ordinary text that names labels
    "Pick one: (A) red (C) blue",  # a label left out
    "Pick one: (A) red (B) blue (B) green",  # a label twice
    "(A) red (B) blue",  # no question before them
    "Pick one: (A) red (B) (C) blue",  # an empty choice
    "Pick one: (A) red (B) blue (3) green",  # labels of two kinds
    "Pick one: (1) red",  # one choice
])
def test_arc_choices_are_split_only_from_a_clean_sequence(text):
    from uab_cli.convert import split_choices

    assert split_choices(text) is None
    with pytest.raises(UabError, match=r"field 'question' holds no choices to split out") as info:
        list(convert_records([{"question": "Pick? (A) a (B) b", "AnswerKey": "A"},
                              {"question": text, "AnswerKey": "A"}], "arc"))
    assert info.value.line == 2


def test_arc_gold_that_is_no_label_is_an_error():
    with pytest.raises(UabError, match=r"answer 'D' is none of the choice labels \['A', 'B', 'C'\]"):
        list(convert_records([{"question": "Pick? (A) a (B) b (C) c", "AnswerKey": "D"}], "arc"))


def test_an_arc_csv_without_a_preset_warns_of_the_choices_in_its_text(tmp_path):
    """Without --preset arc, an ARC CSV converted to records with no choices and no gold, without a
    word (its gold column, AnswerKey, went unnamed too); with --answer-field AnswerKey, a letter gold
    of a question with no choices."""
    import warnings

    path = tmp_path / "arc.csv"
    path.write_text(ARC_CSV, encoding="utf-8")
    for options in ({}, {"answer_field": "AnswerKey", "id_field": "questionID"}):
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            list(convert_records(read_table(path), None, path=str(path), **options))
        assert [str(w.message) for w in said] == [
            f"{path}:2: the question holds its choices ('(A) … (B) …'), left in its text: --preset arc "
            "splits them out"]
    # other column names: the options that map them under the preset
    rows = [{"id": "q1", "stem": "Pick? (1) a (2) b", "key": "2"}]
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        list(convert_records(rows, None, question_field="stem", answer_field="key"))
    assert [str(w.message) for w in said] == [
        ":1: the question holds its choices ('(A) … (B) …'), left in its text: --preset arc --question-field stem "
        "--answer-field key --id-field id splits them out"]
    assert [r["answer"] for r in convert_records(rows, "arc", question_field="stem", answer_field="key",
                                                 id_field="id")] == ["B"]
    # text with choices whose gold names none of them (an AMC problem, gold 5): nothing to say
    list(convert_records([{"question": "Sum? (A) 1 (B) 5", "answer": "5"}], None))
    # under --preset mmlu, its missing choices column names the preset that splits them (not --choices-field)
    with pytest.raises(UabError, match="row is missing field 'choices' \\(needed by preset mmlu\\); .*; "
                                       "try --preset arc$"):
        list(convert_records(read_table(path), "mmlu", answer_field="AnswerKey"))


MEDMCQA_ORIGINAL = [  # MedMCQA's original release: cop numbers the right one of opa-opd from 1
    {"question": "Which vitamin is supplied from only animal source:", "exp": "", "cop": 3, "opa": "Vitamin C",
     "opb": "Vitamin B7", "opc": "Vitamin B12", "opd": "Vitamin D", "subject_name": "Biochemistry",
     "topic_name": "Vitamins", "id": "e9ad821a", "choice_type": "single"},
    {"question": "All of the following are surgical options for morbid obesity except -", "exp": "", "cop": 4,
     "opa": "Adjustable gastric banding", "opb": "Biliopancreatic diversion", "opc": "Duodenal Switch",
     "opd": "Roux en Y Duodenal By pass", "subject_name": "Anaesthesia", "topic_name": None, "id": "a9ad821a",
     "choice_type": "single"},
]


@pytest.mark.parametrize("as_text", [False, True])
def test_a_1_based_gold_index_names_answer_base_and_converts_with_it(as_text):
    """MedMCQA's original cop counts from 1 (Hugging Face's from 0): a 4 of 4 choices said only
    "out of range" (a digit string: "not a letter A-D, an index, …"), naming no way out; --answer-base 1
    reads it."""
    rows = [{**row, "cop": str(row["cop"]) if as_text else row["cop"]} for row in MEDMCQA_ORIGINAL]
    options = {"answer_field": "cop", "choices_field": "opa,opb,opc,opd"}
    with pytest.raises(UabError, match=r"answer index 4 is out of range for 4 choices; 1-based indices \(MedMCQA's "
                                       r"original cop 1-4\)\? give --answer-base 1") as info:
        list(convert_records(rows, None, **options))
    assert info.value.line == 2
    assert [r["answer"] for r in convert_records(rows, None, answer_base=1, **options)] == ["C", "D"]
    with pytest.raises(UabError, match=r"answer index 0 is out of range for 4 choices numbered from 1 "
                                       r"\(--answer-base 1\)"):
        list(convert_records([{**rows[0], "cop": "0" if as_text else 0}], None, answer_base=1, **options))


@pytest.mark.parametrize("as_text", [False, True])
def test_1_based_golds_without_the_last_choice_are_warned_of(as_text):
    """A slice of MedMCQA's original release (cop from 1) without a gold of 4 (its first row, cop 3)
    converted each gold one choice on (D for C), without a word; a file whose golds read as indices from
    0 holds no 0 is now warned of, naming --answer-base 1. A 0 among them, --answer-base, or a preset
    (cais/mmlu counts from 0) says nothing."""
    import warnings

    rows = [{**row, "cop": str(row["cop"]) if as_text else row["cop"]} for row in MEDMCQA_ORIGINAL[:1]]
    options = {"answer_field": "cop", "choices_field": "opa,opb,opc,opd", "path": "dev.json"}
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        assert [r["answer"] for r in convert_records(rows, None, **options)] == ["D"]
    assert [str(w.message) for w in said] == [
        "dev.json:1: no gold read as a choice's index is 0 (choice A): if they count from 1 (MedMCQA's original cop "
        "1-4), each was read as the choice after its own: give --answer-base 1 (--answer-base 0 if they count from 0)"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [r["answer"] for r in convert_records(rows, None, answer_base=1, **options)] == ["C"]
        assert [r["answer"] for r in convert_records(rows, None, answer_base=0, **options)] == ["D"]
        zero = [{**rows[0], "id": "z", "cop": "0" if as_text else 0}]
        assert [r["answer"] for r in convert_records(rows + zero, None, **options)] == ["D", "A"]
        mmlu = [{"question": "q?", "choices": ["a", "b", "c"], "answer": "2" if as_text else 2}]
        assert [r["answer"] for r in convert_records(mmlu, "mmlu")] == ["C"]


def test_answer_base_errors_and_the_cop_column_warning(tmp_path):
    import warnings

    with pytest.raises(UabError, match="preset gpqa reads no gold as a choice's index; --answer-base cannot be given"):
        list(convert_records([], "gpqa", answer_base=1))
    with pytest.raises(UabError, match="no row has the choices field 'choices' that --answer-base numbers"):
        list(convert_records([{"question": "q?", "answer": "1"}], None, answer_base=1))
    with warnings.catch_warnings(record=True) as said:  # MedMCQA without --answer-field: no gold, without a word
        warnings.simplefilter("always")
        list(convert_records(MEDMCQA_ORIGINAL, None, choices_field="opa,opb,opc,opd", path="dev.json"))
    assert [str(w.message) for w in said] == [
        "dev.json:1: no gold answer field 'answer'; 'cop' looks like one: --answer-field cop"]
    path = tmp_path / "dev.json"
    path.write_text("".join(json.dumps(row) + "\n" for row in MEDMCQA_ORIGINAL), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    result = cli(["convert", str(path), "--answer-field", "cop", "--choices-field", "opa,opb,opc,opd",
                  "--answer-base", "1", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert [r["answer"] for r in load_jsonl(out)] == ["C", "D"]


@pytest.mark.parametrize("doc", [
    {"question": {"0": "2+2?", "1": "3+3?"}, "answer": {"0": "4", "1": "6"}},  # pandas' to_json default
    {"0": {"question": "2+2?", "answer": "4"}, "1": {"question": "3+3?", "answer": "6"}},  # orient='index'
    {"columns": ["question", "answer"], "index": [0, 1], "data": [["2+2?", "4"], ["3+3?", "6"]]},  # 'split'
])
def test_a_pandas_json_table_not_by_row_names_the_layout_that_reads(tmp_path, doc):
    """pandas' to_json writes a DataFrame by column unless told: convert said "field 'question' should
    be text, got dict" (or "expected a JSON object, got list", or a missing 'question'), as of a row."""
    path = tmp_path / "df.json"
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    with pytest.raises(UabError, match=r"a table by column or by row label \(pandas' to_json orient='columns', "
                                       r"'index' or 'split'\?\), not one object per row: write it with "
                                       r"to_json\(orient='records'\)") as info:
        list(convert_records(read_table(path), None, path=str(path)))
    assert info.value.line == 1
    # orient='table' holds one object per row, under "data": it reads
    table = {"schema": {"fields": []}, "data": [{"index": 0, "question": "2+2?", "answer": "4"}]}
    path.write_text(json.dumps(table), encoding="utf-8")
    assert [r["answer"] for r in convert_records(read_table(path), None)] == ["4"]


def test_convert_streams_its_records_not_holding_them(tmp_path):
    """`uab convert` held every record (and a list of the input's lines) before writing the first:
    a 124 MB JSONL file of 3·10⁵ rows peaked at 587 MB; it now writes each record as it converts
    (211 MB, the input's bytes and little more), still leaving nothing written on a bad row."""
    import tracemalloc

    path = tmp_path / "big.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for i in range(20_000):
            fh.write(json.dumps({"problem": f"What is {i} plus 1? " + "Explain. " * 20, "answer": str(i + 1),
                                 "solution": "Add one. " * 10, "level": "Level 1", "unique_id": f"u{i}"}) + "\n")
    size = path.stat().st_size
    command = ["convert", str(path), "--preset", "math500", "-o", str(tmp_path / "out.jsonl")]
    assert cli(command).exit_code == 0  # once untraced: what it imports stays
    tracemalloc.start()
    try:
        result = cli(command)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.exit_code == 0, result.stderr
    assert len(load_jsonl(tmp_path / "out.jsonl")) == 20_000
    assert peak < 1.5 * size + (4 << 20), (peak, size)
