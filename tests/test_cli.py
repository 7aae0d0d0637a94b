"""The command line: help, version, stage commands through typer's runner, the README quickstart."""

from __future__ import annotations

import json
import os
import pathlib
import re
import shlex
import stat

import pytest
from conftest import arithmetic, read_jsonl, write_jsonl
from typer.testing import CliRunner

from uab_cli import __version__
from uab_cli.backends.scripted import ScriptedBackend
from uab_cli.cli import app
from uab_cli.errors import UabError

ROOT = pathlib.Path(__file__).resolve().parents[1]


def uab(*args, input=None):
    result = CliRunner().invoke(app, [str(a) for a in args], input=input)
    assert result.exit_code == 0, result.output + str(result.exception)
    return result


def test_version_and_help_list_every_stage():
    assert uab("--version").stdout.strip() == f"uab {__version__}"
    out = uab("--help").stdout
    for verb in ("phase1", "allocate", "phase2", "vote", "regrade", "run", "pool", "simulate", "report", "convert"):
        assert re.search(rf"\b{verb}\b", out), verb


def test_stage_files_compose_and_match_run(tmp_path):
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(15))
    p1, al, p2, vo = (tmp_path / f for f in ("p1.jsonl", "al.jsonl", "p2.jsonl", "vo.jsonl"))
    uab("phase1", q, "--backend", "scripted", "-o", p1, "-q")
    uab("allocate", p1, "--budget", 3, "-o", al)
    uab("phase2", al, "-o", p2, "-q")
    result = uab("vote", p2, "-o", vo)
    assert "accuracy" in result.stderr
    uab("run", q, "--budget", 3, "--out", tmp_path / "run", "--backend", "scripted", "-q")
    assert vo.read_bytes() == (tmp_path / "run" / "votes.jsonl").read_bytes()
    assert sum(len(r["samples"]) for r in read_jsonl(vo)) == 45
    mode = stat.S_IMODE(os.stat(vo).st_mode)
    assert mode & stat.S_IROTH, "outputs are ordinary readable files, not mkstemp's 0600"


def test_stdin_and_stdout(tmp_path):
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(4))
    p1 = uab("phase1", q, "--backend", "scripted", "-q").stdout
    al = uab("allocate", "-", "--budget", 2, "-q", input=p1).stdout
    assert [r["extra"] for r in map(__import__("orjson").loads, al.splitlines())] and al.count("\n") == 4


def test_allocation_summary_reports_skip_savings(tmp_path):
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(30))
    p1 = tmp_path / "p1.jsonl"
    uab("phase1", q, "--backend", "scripted", "-o", p1, "-q")
    result = uab("allocate", p1, "--budget", 4, "--exit", "easy", "--exit-mode", "skip", "-o", tmp_path / "a.jsonl")
    assert "saved" in result.stderr


def test_convert_command(tmp_path):
    out = tmp_path / "mmlu.jsonl"
    uab("convert", ROOT / "tests" / "data" / "convert" / "mmlu.jsonl", "--preset", "mmlu", "-o", out)
    rows = read_jsonl(out)
    assert rows and all(r["answer"] in "ABCD" and r["choices"] for r in rows)


def test_a_directory_given_with_a_slash_is_named_with_one(tmp_path):
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    pool = uab("pool", q, "--samples", 2, "--out", f"{tmp_path / 'pool'}/", "--backend", "scripted")
    run = uab("run", q, "--budget", 2, "--out", f"{tmp_path / 'run'}/", "--backend", "scripted")
    flat = ["".join(r.stderr.split()) for r in (pool, run)]  # a long path may be wrapped anywhere
    assert f"{tmp_path / 'pool' / 'pool.jsonl'}(" in flat[0] and f"outputsin{tmp_path / 'run'}/:" in flat[1]


def test_pool_simulate_report(tmp_path):
    q = write_jsonl(tmp_path / "q.jsonl", [dict(r, level=i % 3) for i, r in enumerate(arithmetic(40))])
    uab("pool", q, "--samples", 6, "--out", tmp_path / "pool", "--backend", "scripted", "-q")
    assert all(len(r["samples"]) == 6 for r in read_jsonl(tmp_path / "pool" / "pool.jsonl"))
    res = tmp_path / "res.jsonl"
    uab("simulate", tmp_path / "pool", "--budgets", "2,4", "--seeds", 3, "--allocators", "uab,uniform", "-o", res, "-q")
    about, *rows = read_jsonl(res)  # first, what produced the file
    assert about["simulation"]["pool"] == str(tmp_path / "pool") and about["simulation"]["questions"] == 40
    assert about["simulation"]["generation"]["backend"] == "scripted" and about["simulation"]["seeds"] == 3
    results = [r for r in rows if "allocator" in r]  # allocators × N × seeds × the five vote rules (weighted at 3 Ts)
    assert len(results) == 2 * 2 * 3 * 7 and all(r["samples_used"] == r["N"] * 40 for r in results)
    kinds = [next(iter(r)) for r in rows[len(results):]]  # then the analyses, and the recommendations last
    assert kinds == ["deciles"] * 4 + ["cost_at_accuracy"] * (kinds.count("cost_at_accuracy")) + ["recommendation"] * 2
    assert kinds.count("cost_at_accuracy") == 2 * 7 * 5  # allocators × vote variants × the default 5 targets
    assert [r["recommendation"]["N"] for r in rows[-2:]] == [2, 4]
    paths = uab("report", res, "-o", tmp_path / "rep", "--pool", tmp_path / "pool").stdout.split()
    names = {os.path.basename(p) for p in paths}
    assert names >= {"accuracy_vs_budget.png", "summary.md", "signal_deciles.png"}
    summary = (tmp_path / "rep" / "summary.md").read_text()
    # the cost plot where a majority-vote curve rises from N = 2 to 4 (on this pool none may: then it says so)
    assert "cost_at_accuracy.png" in names or "- cost_at_accuracy.png: no majority-vote accuracy rises" in summary
    assert "## Cost at fixed accuracy" in summary and "## Tokens per response" in summary
    assert f"Results: `{res}` from the pool `{tmp_path / 'pool'}` (40 questions; drawn with backend scripted" in summary


def test_a_smaller_allocation_of_records_with_more_samples_votes_its_budget_only(tmp_path):
    """Allocating a run's votes again at a smaller budget: Phase 2 draws nothing, and the vote
    counts the samples the new allocation asks for (N·M), not every sample the records hold."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(6))
    uab("run", q, "--budget", 5, "--out", tmp_path / "r", "--backend", "scripted", "--allocator", "uniform", "-q")
    a, p2, v = (str(tmp_path / f"{n}.jsonl") for n in ("a", "p2", "v"))
    uab("allocate", tmp_path / "r" / "votes.jsonl", "--budget", 2, "--allocator", "uniform", "-o", a, "-q")
    uab("phase2", a, "-o", p2, "-q")
    result = uab("vote", p2, "-o", v)
    assert "6 question(s) hold more Phase-2 samples than allocated" in " ".join(result.stderr.split())
    fresh = tmp_path / "fresh"
    uab("run", q, "--budget", 2, "--out", fresh, "--backend", "scripted", "--allocator", "uniform", "-q")
    for mine, theirs in zip(read_jsonl(v), read_jsonl(fresh / "votes.jsonl")):
        assert mine["votes"] == theirs["votes"] and sum(mine["votes"].values()) <= 2


def test_pools_that_are_not_the_results_pool_or_not_a_pool_are_named(tmp_path):
    """`report --pool` with other questions of the same count is refused; `--check` on a pool
    drawn with other settings says so; a run's votes, allocated by UAB, are not a pool."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(12))
    other = write_jsonl(tmp_path / "o.jsonl", [dict(r, id=f"o{i}") for i, r in enumerate(arithmetic(12))])
    for name, questions, more in (("pool", q, []), ("other", other, ["--temperature", "0.5", "--max-tokens", "64"])):
        uab("pool", questions, "--samples", 4, "--out", tmp_path / name, "--backend", "scripted", "-q", *more)
    res = tmp_path / "res.jsonl"
    uab("simulate", tmp_path / "pool", "--budgets", "2", "--seeds", 2, "--allocators", "uniform", "-o", res, "-q")
    result = CliRunner().invoke(app, ["report", str(res), "-o", str(tmp_path / "rep"), "--pool", str(tmp_path / "other")])
    assert result.exit_code == 2 and "holds other questions than the pool the results were simulated on" in result.stderr
    assert result.stderr.startswith(f"error: {tmp_path / 'other' / 'pool.jsonl'}: --pool holds")  # the pool file named
    assert not (tmp_path / "rep").exists()
    result = uab("simulate", tmp_path / "other", "--check", res, "-o", tmp_path / "chk.jsonl")
    message = " ".join(result.stderr.split())
    assert "was drawn with other settings than the pool behind" in message
    assert "--max-tokens (1024 → 64)" in message and "--temperature (0.9 → 0.5)" in message
    result = uab("simulate", tmp_path / "pool", "--check", res, "-o", tmp_path / "chk2.jsonl")
    assert "other settings" not in result.stderr
    # a results file of a uab before its {"simulation": …} row (or recommendation rows alone) said nothing:
    # its recommendations' settings hold the pool's sampling settings, as `uab run --settings` draws them
    old = tmp_path / "old.jsonl"
    old.write_text("".join(line for line in res.read_text().splitlines(True) if '"simulation"' not in line))
    result = uab("simulate", tmp_path / "other", "--check", old, "-o", tmp_path / "chk4.jsonl")
    message = " ".join(result.stderr.split())
    assert "--max-tokens (1024 → 64)" in message and "--temperature (0.9 → 0.5)" in message, message
    result = uab("simulate", tmp_path / "pool", "--check", old, "-o", tmp_path / "chk5.jsonl")
    assert "other settings" not in result.stderr
    uab("pool", q, "--samples", 6, "--out", tmp_path / "k6", "--backend", "scripted", "-q")  # only a larger -K
    result = uab("simulate", tmp_path / "k6", "--check", "-", "-o", tmp_path / "chk3.jsonl", input=res.read_bytes())
    assert "other settings" not in result.stderr  # and the results read once from stdin
    assert [r["check"]["N"] for r in read_jsonl(tmp_path / "chk3.jsonl") if "check" in r] == [2]
    uab("run", q, "--budget", 3, "--out", tmp_path / "r", "--backend", "scripted", "-q")
    result = CliRunner().invoke(app, ["simulate", str(tmp_path / "r" / "votes.jsonl"), "--budgets", "2"])
    assert result.exit_code == 2
    assert f"{tmp_path / 'r' / 'votes.jsonl'}:1: its samples were allocated by --allocator uab" in result.stderr


def test_a_pool_of_two_draws_concatenated_is_refused_naming_the_first_record_drawn_otherwise(tmp_path):
    """Two `uab pool` files concatenated: the results would record, and the recommendation run,
    the first record's settings for every sample. Another seed or -K is the same draw's settings."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(12))
    other = write_jsonl(tmp_path / "o.jsonl", [dict(r, id=f"o{i}") for i, r in enumerate(arithmetic(12))])
    for name, questions, more in (("a", q, []), ("b", other, ["--temperature", "0.5"]),
                                  ("c", other, ["--seed", "3", "--samples", "6"])):
        uab("pool", questions, "--samples", 4, "--out", tmp_path / name, "--backend", "scripted", "-q", *more)
    for name, parts in (("ab", "ab"), ("ac", "ac")):
        (tmp_path / f"{name}.jsonl").write_bytes(b"".join((tmp_path / p / "pool.jsonl").read_bytes() for p in parts))
    result = CliRunner().invoke(app, ["simulate", str(tmp_path / "ab.jsonl"), "--seeds", "2", "-o", str(tmp_path / "r")])
    assert result.exit_code == 2 and not (tmp_path / "r").exists()
    assert result.stderr.startswith(f"error: {tmp_path / 'ab.jsonl'}:13: record 'o0' was drawn otherwise than the "
                                    "pool's first record (--temperature (0.9 → 0.5))")
    uab("simulate", tmp_path / "ac.jsonl", "--budgets", "2", "--seeds", 2, "--allocators", "uniform", "-q",
        "-o", tmp_path / "r")


def test_records_of_one_draw_are_compared_once_per_distinct_setting_not_once_per_record(monkeypatch):
    """A pool (or a Phase-1 file) whose records differ from the first in their -K alone (the records of
    a second draw with another seed, or that came with more samples) is one draw: each distinct setting
    is compared once, not once per record (seconds per 10^5 records: `check_pool` runs on every pool read)."""
    from uab_cli import evaluation, pipeline, runs, settings

    first = {"backend": "scripted", "model": "scripted", "seed": 0, "temperature": 0.9, "max_tokens": 64, "k": 1}
    records = [{"id": f"q{i}", "question": "q", "uab": {"phase1": {**first, "k": 1 + (i > 0), "seed": i % 2}}}
               for i in range(500)]
    calls = []
    for module, name in ((evaluation, "generation_changes"), (settings, "changes")):
        original = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _f=original, **kw: calls.append(1) or _f(*a, **kw))
    runs.check_pool(records, "pool.jsonl")
    assert len(calls) <= 2  # k 2 with seed 1, k 2 with seed 0
    calls.clear()
    for rec in records:
        rec["uab"]["phase1"]["seed"] = 0
    assert pipeline.phase1_settings(records)["k"] == 1 and len(calls) <= 1
    records[-1]["uab"]["phase1"]["temperature"] = 0.5  # and a record drawn otherwise is still named
    with pytest.raises(UabError, match="record 'q499' was drawn otherwise than the pool's first record"):
        runs.check_pool(records, "pool.jsonl")
    with pytest.raises(UabError, match="record 'q499' was sampled in Phase 1 otherwise than record 'q0'"):
        pipeline.phase1_settings(records)


def _stale(i: int, texts: list[str], stored: list[str | None], **more) -> dict:
    """Question ``i`` (gold ``i + 1``) whose samples hold ``stored`` answers an older extractor read in ``texts``."""
    drawn = [{"index": j, "phase": 1, "text": t, "answer": a} for j, (t, a) in enumerate(zip(texts, stored))]
    return {"id": f"q{i}", "question": f"What is {i} + 1?", "answer": str(i + 1), "samples": drawn, **more}


def test_regrade_reads_stored_answers_again_counts_the_changes_and_drops_the_stale_vote(tmp_path):
    """Samples keep the answer read when they were drawn; regrade reads each again from its text as
    a fresh sample would (a box drafted while reasoning is no answer), says what changed against
    gold, records it in provenance, and drops a vote that counted the old answers."""
    vote = {"prediction": "5", "votes": {"5": 2}, "correct": False, "covered": True, "uab": {"vote": {"rule": "majority"}}}
    rows = [_stale(1, ["<think>\\boxed{5}</think> The answer is 2.", "Answer: 2"], ["5", "2"], **vote),
            _stale(2, ["The answer is 3, which is odd.", "I think 7"], ["3, which is odd", "7"]),
            _stale(3, ["<think>so \\boxed{4}", "Answer: 4"], ["4", "4"])]  # the first cut while reasoning
    src, out = write_jsonl(tmp_path / "v.jsonl", rows), tmp_path / "r.jsonl"
    result = uab("regrade", src, "-o", out)
    message = " ".join(result.stderr.split())
    assert "regrade: 3 of 6 answers changed (3 questions); against gold, 2 went wrong → right and 1 right → wrong" \
        in message, message
    assert "dropped the vote of 1 question(s), which counted the old answers: run `uab vote` on the output" in message
    got = read_jsonl(out)
    assert [[s["answer"] for s in r["samples"]] for r in got] == [["2", "2"], ["3", "7"], [None, "4"]]
    assert [r["uab"]["regrade"] for r in got] == [{"version": __version__, "changed": c, "confidences_changed": 0}
                                                  for c in (1, 1, 1)]
    assert not {"prediction", "votes", "correct", "covered"} & set(got[0]) and "vote" not in got[0]["uab"]
    piped = uab("regrade", "-", "-q", input=pathlib.Path(src).read_bytes())  # a stage in a pipe: stdin to stdout
    assert piped.stdout.encode() == out.read_bytes() and not piped.stderr
    again = uab("regrade", out, "-o", tmp_path / "again.jsonl")
    assert "regrade: 0 of 6 answers changed" in again.stderr and "dropped" not in again.stderr
    assert "accuracy" in uab("vote", out, "-o", tmp_path / "votes.jsonl").stderr


def test_regrade_reads_the_verbalised_confidence_again_as_a_fresh_sample_does(tmp_path):
    """A --vcs pool drawn before "10%" was no score kept confidence 10 for it: regrade read the
    answers again but not the confidences, which the vcs signal and the confidence vote rules read."""
    rows = [_stale(1, ["Answer: 2\nConfidence: 10%", "Answer: 2\nConfidence: 8", "<think>Confidence: 9"], ["2", "2", None])]
    for s, c in zip(rows[0]["samples"], (10, 8, 9)):
        s["confidence"] = c
    src, out = write_jsonl(tmp_path / "v.jsonl", rows), tmp_path / "r.jsonl"
    message = " ".join(uab("regrade", src, "-o", out).stderr.split())
    assert "regrade: 0 of 3 answers changed" in message and "; 2 verbalised confidences changed" in message, message
    got = read_jsonl(out)[0]
    assert [s["confidence"] for s in got["samples"]] == [None, 8, None]  # the last: cut while reasoning
    assert got["uab"]["regrade"] == {"version": __version__, "changed": 0, "confidences_changed": 2}


def test_regrade_sets_again_the_p_an_allocation_read_from_the_answers_or_confidences(tmp_path):
    """An allocated record's p from vote-entropy (its Phase-1 answers) or vcs (their confidences)
    stayed as allocated after regrade changed what it read; now it is read again as allocate
    reads it, and where its T is not recorded (an allocator that reads no p) a warning says it is stale."""
    rows = [_stale(i, ["Answer: 2\nConfidence: 10%", "Answer: 2\nConfidence: 8"], ["5", "2"]) for i in range(4)]
    for rec in rows:
        rec["samples"][0]["confidence"] = 10
    src = write_jsonl(tmp_path / "v.jsonl", rows)
    for signal, allocator, p in (("vote-entropy", "uab", 1.0), ("vcs", "uab", 0.8), ("vcs", "uniform", 0.8)):
        alloc, out = tmp_path / "a.jsonl", tmp_path / "r.jsonl"
        uab("allocate", src, "-N", 3, "--signal", signal, "--allocator", allocator, "-o", alloc, "-q")
        assert read_jsonl(alloc)[0]["p"] != p
        message = " ".join(uab("regrade", alloc, "-o", out).stderr.split())
        assert "; 4 allocated p read again from them" in message and "warning" not in message, message
        got = read_jsonl(out)
        assert [r["p"] for r in got] == [pytest.approx(p)] * 4 and got[0]["uab"]["regrade"]["p"] == "read again"
        assert [r["extra"] for r in got] == [r["extra"] for r in read_jsonl(alloc)]  # the allocation stays as drawn
        again = tmp_path / "again.jsonl"  # as allocate would read them
        uab("allocate", out, "-N", 3, "--signal", signal, "--allocator", allocator, "-o", again, "-q")
        assert [r["p"] for r in read_jsonl(again)] == [r["p"] for r in got]
    uab("allocate", src, "-N", 3, "--signal", "vote-entropy", "--allocator", "uniform", "-o", alloc, "-q")
    message = " ".join(uab("regrade", alloc, "-o", out).stderr.split())
    assert "warning: 4 question(s) keep the p their allocation read from the old answers" in message, message
    assert [r["uab"]["regrade"]["p"] for r in read_jsonl(out)] == ["stale"] * 4
    uab("allocate", src, "-N", 3, "--signal", "anll", "--allocator", "uniform", "-o", alloc, "-q")  # no logprobs: no p
    message = " ".join(uab("regrade", alloc, "-o", out).stderr.split())
    assert "allocated p" not in message and "warning" not in message and "p" not in read_jsonl(out)[0]["uab"]["regrade"]


def test_regrade_of_a_bad_record_names_its_line_and_writes_nothing(tmp_path):
    src = write_jsonl(tmp_path / "v.jsonl", [_stale(1, ["Answer: 2"], ["2"]), {"id": "q2", "question": "?"}])
    out = tmp_path / "r.jsonl"
    result = CliRunner().invoke(app, ["regrade", str(src), "-o", str(out)])
    assert result.exit_code == 2 and not out.exists() and not result.stdout
    assert result.stderr.strip() == f"error: {src}:2: record 'q2' has no 'samples': run `uab phase1` first"
    result = CliRunner().invoke(app, ["regrade", str(src)])  # stdout too: nothing half-written
    assert result.exit_code == 2 and not result.stdout


def test_regrade_takes_a_pool_or_run_directory_and_writes_outside_it(tmp_path):
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(5))
    uab("pool", q, "--samples", 3, "--out", tmp_path / "pool", "--backend", "scripted", "-q")
    pool = tmp_path / "pool" / "pool.jsonl"
    assert uab("regrade", tmp_path / "pool", "-q").stdout == uab("regrade", pool, "-q").stdout
    before = {p.name: p.read_bytes() for p in (tmp_path / "pool").iterdir()}
    for inside in (pool, tmp_path / "pool" / "new.jsonl"):
        for given in (tmp_path / "pool", pool):  # its file too: regrade pool.jsonl -o pool.jsonl rewrote the pool
            result = CliRunner().invoke(app, ["regrade", str(given), "-o", str(inside)])
            assert result.exit_code == 2 and "give -o a file outside it" in result.stderr, result.stderr
    assert {p.name: p.read_bytes() for p in (tmp_path / "pool").iterdir()} == before
    uab("run", q, "--budget", 3, "--out", tmp_path / "r", "--backend", "scripted", "-q")  # allocated by uab
    by_dir = uab("regrade", tmp_path / "r", "-o", tmp_path / "rr.jsonl")
    assert "regrade: 0 of 15 answers changed" in by_dir.stderr and "dropped the vote of 5" in " ".join(by_dir.stderr.split())
    result = CliRunner().invoke(app, ["regrade", str(tmp_path)])
    assert result.exit_code == 2 and "no pool.jsonl and no votes.jsonl in this directory" in result.stderr


@pytest.mark.slow
def test_readme_quickstart_runs_on_the_embedded_model(tmp_path, monkeypatch):
    """The README's quickstart command, verbatim, on the real SmolLM2 weights."""
    readme = (ROOT / "README.md").read_text()
    command = re.search(r"^uab run sample_data/quickstart\.jsonl.*$", readme, re.M).group(0)
    args = shlex.split(command)[1:]
    monkeypatch.chdir(ROOT)
    out = tmp_path / "quick"
    args[args.index("-o") + 1] = str(out)
    result = uab(*args)
    assert "accuracy" in result.stderr
    votes = read_jsonl(out / "votes.jsonl")
    assert len(votes) == 6 and sum(len(r["samples"]) for r in votes) == 24
    assert all(r["uab"]["phase1"]["backend"] == "local" for r in votes)
    assert all(s["anll"] is not None and s["n_tokens"] > 0 for r in votes for s in r["samples"])
    assert sum(r["correct"] for r in votes) >= 1


COMMANDS = ("phase1", "allocate", "phase2", "vote", "regrade", "run", "pool", "simulate", "report", "convert")


def test_help_is_plain_and_shows_every_default():
    summaries = uab("-h").stdout
    for verb in COMMANDS:
        doc = getattr(__import__("uab_cli.cli", fromlist=[verb]), verb).__doc__.split("\n\n")[0]
        assert " ".join(doc.split()) in " ".join(summaries.split()), verb  # not cut short
    for verb in COMMANDS:
        text = uab(verb, "-h").stdout
        assert not re.search(r"<str>|<int>|<float>|\{[A-Z]+\}|\(default", text), verb
    run = " ".join(uab("run", "--help").stdout.split())
    for option in ("--seed INTEGER", "--concurrency INTEGER", "--rpm FLOAT", "--timeout FLOAT", "--endpoint"):
        assert re.search(re.escape(option) + r"[^\[]*\[default: [^\]]+\]", run), option
    # Names described one per line; options grouped in panels.
    for line in ("uab: Algorithm 1 (paper)", "uniform: self-consistency", "anll: exp(-ANLL/T)",
                 "most-confident: the single most confident sample's answer"):
        assert line in run, line
    assert all(f"{panel}:" in run for panel in ("Input/output", "Generation", "Backend", "Allocation", "Vote"))
    assert "--out" not in uab("run", "-h").stdout.split("Options:")[0].replace("--output", "")  # a hidden alias
    phase2 = " ".join(uab("phase2", "-h").stdout.split())
    assert "1024" not in phase2 and "--max-tokens INTEGER Max new tokens per sample. [default: Phase 1's]" in phase2
    assert "-o, --output" in uab("report", "-h").stdout


def _shown(verb: str, flag: str) -> str:
    """The help of ``flag`` in ``uab VERB -h``, whitespace joined: from its line to the next option's."""
    entries = re.split(r"\n(?=  -)", uab(verb, "-h").stdout)
    return next(" ".join(e.split()) for e in entries if flag in re.split(r"[\s,/]+", e.strip().split("  ")[0]))


def test_phase2_help_shows_phase1s_sample_options_as_their_default():
    """`phase2` takes --dtype, --endpoint and --tokenizer from Phase 1's provenance (README), but
    its help showed the backend's own defaults (`[default: auto]`, `[default: chat]`)."""
    from uab_cli.settings import Generation

    for flag in ("--dtype", "--endpoint", "--tokenizer"):
        assert "[default: Phase 1's]" in _shown("phase2", flag), flag
        assert "Phase 1's" not in _shown("phase1", flag), flag
    assert "[default: auto]" in _shown("phase1", "--dtype") and "[default: chat; a rerun: the directory's]" in _shown("run", "--endpoint")
    recorded = {"backend": "openai", "model": "m", "backend_options": {"endpoint": "completions", "tokenizer": "gpt2"}}
    assert Generation.from_params({}, recorded).backend_options == {"endpoint": "completions", "tokenizer": "gpt2"}
    recorded = {"backend": "local", "model": "m", "backend_options": {"dtype": "bfloat16"}}
    assert Generation.from_params({}, recorded).backend_options == {"dtype": "bfloat16"}


@pytest.mark.parametrize("verb, flag, says", [
    ("pool", "-K", "[required, or the pool directory's]"),  # was `[default: the pool directory's]`: a new one has none
    ("vote", "--tie-seed", "[default: the answer that sorts first]"),  # was `earliest answer`: not the first drawn
    ("run", "--model", "cohere: command-a-03-2025; openai: none, give one; a rerun: the directory's]"),  # was the local model's for all
    ("phase1", "--base-url", "cohere: CO_API_URL, else Cohere's]"),  # cohere reads CO_API_URL first
    ("simulate", "--price", "[default: the one a POOL directory's summary.json records]"),  # was none shown
    ("phase1", "--vcs", "[default: off; on for cohere]"),  # was `on for cohere` alone: off for every other backend
    ("vote", "--vote-signal", "[default: the allocation's signal, else vcs after a --vcs Phase 1, else anll]"),  # was `else anll or vcs`
])
def test_help_defaults_are_the_real_ones(verb, flag, says):
    """Defaults the help spelled out by hand say what the command takes where the option is not given."""
    assert says in _shown(verb, flag), _shown(verb, flag)


def test_run_and_pool_help_say_a_rerun_takes_the_directorys_settings():
    """A rerun in an existing directory takes every setting its config records that it does not give
    (README "Runs: resume and grow"), but `run -h` and `pool -h` showed the built-in defaults alone
    (`--temperature [default: 0.9]`): now each such option says so, the others and other commands do not."""
    from uab_cli.backends import options as backend_options
    from uab_cli.options import declared
    from uab_cli.settings import Allocation, Generation, Vote

    rerun = "a rerun: the directory's]"
    recorded = {"run": [*declared(Generation), *declared(Allocation), *declared(Vote)], "pool": declared(Generation)}
    for verb, options in recorded.items():
        options = [o for o in (*options, *(o for o in backend_options() if o.samples)) if verb in o.commands]
        for o in options:
            flag = o.flag.split("/")[0]
            assert rerun in _shown(verb, flag) or o.required, (verb, flag)
            assert "rerun" not in _shown("phase1" if "phase1" in o.commands else "allocate" if "allocate" in
                                         o.commands else "vote", flag), flag
        assert "rerun" not in _shown(verb, "--base-url") and "rerun" not in _shown(verb, "--concurrency")
    assert "[default: 0.9; a rerun: the directory's]" in _shown("run", "--temperature")
    assert "[default: include-phase1; a rerun: the directory's]" in _shown("run", "--include-phase1")
    assert "[required, or the run directory's]" in _shown("run", "--budget")


def test_run_and_pool_help_mark_each_option_a_rerun_remembers():
    """A rerun also takes from its directory what ``runs.remembered`` gives it, though no recorded
    setting: `--max-model-len` (with the same --backend and --model), but `run -h` showed only
    `[default: the model's / the server's]` for it, against README's "the help says so beside
    each option a rerun takes from the directory"."""
    from uab_cli import runs
    from uab_cli.backends import options as backend_options
    from uab_cli.settings import options as setting_options

    remembered = set(runs.remembered({}, runs.Recorded()))
    assert "max_model_len" in remembered
    for verb in ("run", "pool"):
        for o in (*setting_options(), *backend_options()):
            if o.name in remembered and verb in o.commands:
                assert "directory's]" in _shown(verb, o.flag.split("/")[0]), (verb, o.flag)
    assert "[default: the model's / the server's; a rerun: the directory's]" in _shown("run", "--max-model-len")
    assert "rerun" not in _shown("phase1", "--max-model-len")


def test_the_defaults_the_help_names_are_taken(tmp_path):
    """What ``test_help_defaults_are_the_real_ones`` shows: a new pool directory needs -K; cohere's
    model without --model; simulate's --price from a pool directory (run's shows none)."""
    from uab_cli.backends.cohere import MODEL, CohereBackend

    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(2))
    missing = CliRunner().invoke(app, ["pool", str(q), "-o", str(tmp_path / "p"), "--backend", "scripted"])
    assert missing.exit_code == 2 and "Missing option '-K'" in missing.stderr, missing.stderr
    assert __import__("inspect").signature(CohereBackend).parameters["model"].default == MODEL
    assert "[default" not in _shown("run", "--price")
    from uab_cli.pipeline import default_vote_signal
    from uab_cli.settings import default_vcs

    assert [default_vcs(b) for b in ("local", "vllm", "openai", "cohere")] == [False, False, False, True]
    assert [default_vote_signal(s, vcs) for s, vcs in ((None, True), (None, False), ("max-nll", True),
                                                       ("vote-entropy", False))] == ["vcs", "anll", "max-nll", "anll"]


@pytest.mark.parametrize("columns", ["100", "60"])
def test_help_wraps_at_spaces_only(monkeypatch, columns):
    """click's wrapper broke lines after a hyphen too, cutting an option the help names in two
    (`(--exclude-` / `phase1:` in `vote -h` and `run -h`, `--allocator (--vote-` / `rule)` in `run -h`)."""
    monkeypatch.setenv("COLUMNS", columns)
    for verb in ("", *COMMANDS):
        text = uab(*([verb] if verb else []), "-h").stdout
        cut = [line for line in text.splitlines() if re.search(r"[A-Za-z]-$", line)]
        assert not cut, (verb, cut)
    assert "(--exclude-phase1:" in uab("vote", "-h").stdout and "(--vote-rule)" in uab("run", "-h").stdout


def _readme_flags(text: str) -> set[str]:
    """The options a README passage names in code spans: `-K/--samples` both, `--exit*` a prefix."""
    return {f for span in re.findall(r"`(-[^`]*)`", text) for f in re.split(r"[/ ]", span) if f.startswith("-")}


def _named(option, flags: set[str]) -> bool:
    spellings = [*option.flag.split("/"), *([option.short] if option.short else [])]
    return any(s in flags or any(f.endswith("*") and s.startswith(f[:-1]) for f in flags) for s in spellings)


def test_readme_names_every_option_of_fixed_choices():
    """README's list of the options whose choices `-h` lists and a wrong one exits 2 left out
    --vote-rule, --vote-signal, --cut-samples, --signal-span, --too-long and convert's --preset."""
    from uab_cli.backends import options as backend_options
    from uab_cli.settings import options as setting_options

    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    listed = _readme_flags(re.search(r"Options are checked before anything is read or drawn: choices \((.*?)\)", readme)[1])
    chosen = [o for o in (*setting_options(), *backend_options()) if o.names()]
    assert len(chosen) >= 16
    for option in chosen:
        assert _named(option, listed), option.flag
    assert "--preset" in listed and "--preset" in uab("convert", "-h").stdout


def test_readme_names_every_option_a_rerun_takes_from_its_directory():
    """`run -h` marks each option a rerun takes from its directory (`a rerun: the directory's`);
    README's "Runs: resume and grow" lists them, but left out --cut-samples (a vote option a rerun
    may change) and --too-long (taken from config.json, and changing no sample)."""
    from uab_cli.backends import options as backend_options
    from uab_cli.options import declared
    from uab_cli.settings import Allocation, Generation, Vote

    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    changes = _readme_flags(re.search(r"A rerun on the same directory may change the (.*?): it reuses", readme)[1])
    remembers = _readme_flags(re.search(r"\*\*A rerun remembers how the samples were drawn\*\*(.*?)Giving `--prompt`",
                                        readme)[1])
    for options, named in (([*declared(Allocation), *declared(Vote)], changes),
                           ([*declared(Generation), *(o for o in backend_options() if o.samples)], remembers)):
        for option in (o for o in options if "run" in o.commands):
            assert _named(option, named), option.flag
            assert "a rerun: the directory's]" in _shown("run", option.flag.split("/")[0]) or option.required


def test_every_option_the_readme_gives_a_command_is_one_it_takes():
    """Each `--option` (or `-X`) on a `uab COMMAND …` line of README.md, in a code span or block,
    is an option of that command (an example would otherwise exit 2)."""
    import typer

    commands = typer.main.get_command(app).commands
    takes = {name: {o for p in c.params for o in (*p.opts, *getattr(p, "secondary_opts", ()))}
             for name, c in commands.items()}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pieces = re.findall(r"`([^`\n]+)`", readme)
    for block in re.findall(r"```[a-z]*\n(.*?)```", readme, re.S):
        pieces += block.replace("\\\n", " ").splitlines()
    checked = 0
    for piece in pieces:
        for m in re.finditer(rf"\buab ({'|'.join(commands)})\b(.*?)(?=\||\buab |$)", piece):
            for option in re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", m.group(2)):
                checked += 1
                assert option in takes[m.group(1)] or option == "--bogus", (m.group(1), option, piece)
    assert checked > 100


def test_an_option_error_names_no_hidden_alias(tmp_path):
    """The old spellings --out and --k are accepted but named nowhere: not in the help, nor in
    the line of a missing or invalid option, nor among an unknown option's near names."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(2))
    for args, shown in ((["pool", q, "-K", "2"], "'-o' / '--output'."), (["run", q, "-N", "2"], "'-o' / '--output'."),
                        (["phase1", q, "-K", "0"], "'-K' / '--samples':")):
        result = CliRunner().invoke(app, [str(a) for a in args])
        assert result.exit_code == 2 and shown in result.stderr, result.stderr
        assert "--out'" not in result.stderr and "--k'" not in result.stderr, result.stderr
    # nor among the near names of an unknown option
    result = CliRunner().invoke(app, ["pool", q, "-K", "2", "--outp", "x"])
    assert result.exit_code == 2 and "(Possible options: --output, --timeout)" in result.stderr, result.stderr


@pytest.mark.parametrize("args, says", [
    (["--bogus"], "error: No such option: --bogus (see `uab -h`)\n"),
    (["--verson", "vote"], "error: No such option: --verson (Possible options: --version) (see `uab -h`)\n"),
    (["--version=3"], "error: Option '--version' does not take a value. (see `uab -h`)\n"),
])
def test_a_usage_error_before_the_command_is_one_line_too(args, says):
    """`uab --bogus`: uab's own options were parsed before its error boundary, and printed click's
    `Usage: … Error: …` block where `uab vote --bogus` gets one line."""
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and result.stderr == says and result.stdout == "", result.stderr


def test_uab_alone_still_shows_its_help():
    result = CliRunner().invoke(app, [])
    assert result.exit_code == 2 and "Commands:" in result.stderr and "error:" not in result.stderr


def test_every_command_of_k_samples_takes_the_hidden_k_alias(tmp_path):
    """`--k` still works, hidden, for one release in `phase1`, `run` and `pool` (CHANGELOG); `pool`
    said `No such option: --k`."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(2))
    for args in (["phase1", q, "-o", tmp_path / "p1.jsonl"], ["run", q, "--budget", 2, "-o", tmp_path / "run"],
                 ["pool", q, "-o", tmp_path / "pool"]):
        result = CliRunner().invoke(app, [str(a) for a in (*args, "--k", 2, "--backend", "scripted", "-q")])
        assert result.exit_code == 0, (args[0], result.stderr)
    assert [len(r["samples"]) for r in read_jsonl(tmp_path / "pool" / "pool.jsonl")] == [2, 2]
    assert "--k" not in uab("pool", "-h").stdout


def test_options_for_another_backend_are_errors(tmp_path):
    """--base-url with the embedded default model: exit 2 before anything loads or is written."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    for args in (["run", q, "--budget", 2, "--out", tmp_path / "run", "--base-url", "http://127.0.0.1:1/v1"],
                 ["phase1", q, "--backend", "scripted", "--concurrency", 4],
                 ["phase1", q, "--backend", "scripted", "--retries", 2]):
        result = CliRunner().invoke(app, [str(a) for a in args])
        assert result.exit_code == 2, result.output
        assert "does not apply to the" in result.stderr
    assert not (tmp_path / "run").exists()


def test_failure_messages_fit_the_command(tmp_path, monkeypatch, fake_backend):
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(5))
    fake_backend.in_cli(fail_after=2)
    result = CliRunner().invoke(app, ["phase1", q, "--backend", "scripted", "-o", str(tmp_path / "p1.jsonl")])
    assert result.exit_code == 1 and "Nothing was written" in result.stderr and "resume" not in result.stderr
    assert not (tmp_path / "p1.jsonl").exists()
    result = CliRunner().invoke(app, ["run", q, "--budget", "2", "--backend", "scripted", "--out", str(tmp_path / "r")])
    assert result.exit_code == 1 and "re-run the same command to resume" in result.stderr
    assert [backend.drawn for backend in fake_backend.made] == [2, 2]
    fake_backend.in_cli()

    uab("run", q, "--budget", 2, "--backend", "scripted", "--out", tmp_path / "r", "-q")

    def interrupted(*_a, **_k):
        raise KeyboardInterrupt

    monkeypatch.setattr("uab_cli.streams.vote", interrupted)
    result = CliRunner().invoke(app, ["vote", str(tmp_path / "r" / "phase2.jsonl"), "-o", str(tmp_path / "v.jsonl")])
    assert result.exit_code == 130 and "interrupted" in result.stderr and "resume" not in result.stderr


def test_a_run_that_fails_before_its_first_sample_leaves_no_directory_and_blocks_nothing(tmp_path, fake_backend):
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    out = tmp_path / "new" / "r"
    fake_backend.in_cli(fail_after=0)
    result = CliRunner().invoke(app, ["run", q, "--budget", "2", "--backend", "scripted", "--out", str(out)])
    assert result.exit_code == 1
    assert not (tmp_path / "new").exists()  # config, empty checkpoint, lock and folders: all gone
    # A directory it did not make keeps its config and empty checkpoint: no sample, so other settings may follow.
    out.mkdir(parents=True)
    result = CliRunner().invoke(app, ["run", q, "--budget", "2", "--backend", "scripted", "--out", str(out),
                                      "--temperature", "0.5"])
    assert result.exit_code == 1 and sorted(os.listdir(out)) == [".lock", "config.json", "drawn.json", "samples.ckpt.jsonl"]
    fake_backend.in_cli()
    result = CliRunner().invoke(app, ["run", q, "--budget", "2", "--backend", "scripted", "--out", str(out), "-q",
                                      "--temperature", "0.9"])
    assert result.exit_code == 0, result.stderr
    assert json.loads((out / "config.json").read_text())["generation"]["temperature"] == 0.9
    result = CliRunner().invoke(app, ["run", q, "--budget", "2", "--backend", "scripted", "--out", str(out), "-q",
                                      "--temperature", "0.5"])
    assert result.exit_code == 2 and "--temperature (0.9 → 0.5)" in result.stderr  # now it holds samples
    (out / "samples.ckpt.jsonl").write_bytes(b"")  # its outputs still hold them: not discarded unasked
    result = CliRunner().invoke(app, ["run", q, "--budget", "2", "--backend", "scripted", "--out", str(out), "-q",
                                      "--temperature", "0.5"])
    assert result.exit_code == 2 and (out / "votes.jsonl").exists()


def test_run_and_pool_take_the_questions_of_records_that_hold_samples(tmp_path, fake_backend):
    """A Phase-1 file given to `uab run` (here with -K 2 and another temperature) is its questions:
    the run draws its own samples, records its own K, and says so."""
    fake_backend.in_cli()
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    p1 = tmp_path / "p1.jsonl"
    uab("phase1", q, "--backend", "scripted", "-K", 2, "--temperature", 0.5, "-o", p1, "-q")
    result = CliRunner().invoke(app, ["run", str(p1), "--budget", "2", "--backend", "scripted", "--out",
                                      str(tmp_path / "r")])
    assert result.exit_code == 0, result.stderr
    assert "3 record(s) of" in result.stderr and "took their questions only" in " ".join(result.stderr.split())
    fresh = tmp_path / "fresh"
    uab("run", q, "--budget", 2, "--backend", "scripted", "--out", fresh, "-q")
    assert (tmp_path / "r" / "votes.jsonl").read_bytes() == (fresh / "votes.jsonl").read_bytes()
    result = CliRunner().invoke(app, ["pool", str(p1), "-K", "2", "--backend", "scripted", "--out",
                                      str(tmp_path / "p"), "-q"])
    assert result.exit_code == 0, result.stderr
    assert all(r["uab"]["phase1"]["temperature"] == 0.9 for r in read_jsonl(tmp_path / "p" / "pool.jsonl"))


@pytest.mark.parametrize("args", [["vote", "-"], ["report", "-", "-o", "REPORT"],
                                  ["simulate", "POOL", "--check", "-"]])
def test_stdin_from_a_terminal_gets_a_hint(tmp_path, args):
    """`uab vote -` typed at a terminal says what it waits for instead of hanging silently;
    `report -` and `simulate --check -` waited without a word."""
    import pty
    import subprocess
    import sys

    pool = write_jsonl(tmp_path / "pool.jsonl", [{"id": "q1", "question": "q", "samples": [{"index": 0}]}])
    args = [{"REPORT": str(tmp_path / "report"), "POOL": pool}.get(a, a) for a in args]
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "uab_cli.cli", *args], stdin=slave,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "COLUMNS": "200"})
    os.close(slave)
    try:
        os.write(master, b"\x04")  # Ctrl-D: end of input
        _, stderr = proc.communicate(timeout=60)
    finally:
        os.close(master)
    assert "reading records from stdin (a terminal)" in stderr.decode()
    assert proc.returncode == 2 and "empty input" in stderr.decode()


def test_a_narrow_console_cuts_no_value_of_a_summary_table(tmp_path):
    """At COLUMNS=40 (a split terminal) rich squeezed the tables and cut their numbers to '…'
    (accuracy `65…`, tokens `13…`); they keep their width instead, as in a wide console."""
    import subprocess
    import sys

    q = write_jsonl(tmp_path / "q.jsonl", [{**r, "level": i % 3 + 1} for i, r in enumerate(arithmetic(12))])
    uab("run", q, "--budget", 3, "--backend", "scripted", "--out", tmp_path / "r", "-q")

    def tables(columns: str) -> list[str]:
        stderr = subprocess.run([sys.executable, "-m", "uab_cli.cli", "allocate", str(tmp_path / "r" / "phase1.jsonl"),
                                 "-N", "3", "-o", str(tmp_path / "a.jsonl")], capture_output=True, check=True,
                                env={**os.environ, "COLUMNS": columns}).stderr.decode()
        stderr += subprocess.run([sys.executable, "-m", "uab_cli.cli", "vote", str(tmp_path / "r" / "phase2.jsonl"),
                                  "-o", str(tmp_path / "v.jsonl")], capture_output=True, check=True,
                                 env={**os.environ, "COLUMNS": columns}).stderr.decode()
        return [line for line in stderr.splitlines() if line[:1] in "┏┃┡│└"]

    wide = tables("200")
    assert sum(line[0] == "┏" for line in wide) == 3 and "…" not in "".join(wide)  # allocation, vote, by level
    assert tables("40") == wide


def test_every_declared_option_reaches_its_commands():
    """The settings fields and backends declare the options; each command's help and
    parameters come from those declarations."""
    from uab_cli.backends import options as backend_options
    from uab_cli.settings import options

    for option in [*options(), *backend_options()]:
        assert option.commands, option.flag
        for verb in option.commands:
            text = uab(verb, "-h").stdout
            assert option.flag.split("/")[0] in text, (verb, option.flag)
            assert f"{option.panel}:" in text, (verb, option.panel)


def test_parse_errors_and_option_errors_share_one_style(tmp_path):
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(2))
    for args, says in ((["run", q, "-N", "2", "-o", tmp_path / "r", "--allocator", "bogus"], "'bogus' is not one of"),
                       (["run", q, "-o", tmp_path / "r"], "Missing option '-N' / '--budget'"),
                       (["run", q, "-N", "0", "-o", tmp_path / "r"], "--budget must be >= 1")):
        result = CliRunner().invoke(app, [str(a) for a in args])
        assert result.exit_code == 2 and result.stderr.startswith("error: ") and says in result.stderr, result.stderr
        assert "Usage:" not in result.stderr and "Value error" not in result.stderr
    assert not (tmp_path / "r").exists()


def test_a_settings_file_is_checked_like_the_command_line(tmp_path):
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(2))
    for values, says in (({"top_p": 2}, "--top-p must be in (0, 1], got 2"),
                         ({"allocator": "bogus"}, "unknown allocator 'bogus'"),
                         ({"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "concurrency": 0},
                          "--concurrency must be >= 1, got 0")):
        settings = tmp_path / "s.json"
        settings.write_text(json.dumps(values))
        result = CliRunner().invoke(app, ["run", q, "-N", "2", "-o", str(tmp_path / "r"), "--settings", str(settings)])
        assert result.exit_code == 2 and says in result.stderr, result.stderr
    assert not (tmp_path / "r").exists()


def test_old_spellings_still_work(tmp_path, fake_backend):
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    fake_backend.in_cli()
    result = CliRunner().invoke(app, ["run", q, "-N", "2", "--out", str(tmp_path / "r"), "--k", "2", "--backend",
                                      "scripted", "-q"])
    assert result.exit_code == 0, result.stderr
    assert fake_backend.drawn == 6 and (tmp_path / "r" / "votes.jsonl").exists()


def test_simulate_on_a_run_directory_says_it_is_not_a_pool(tmp_path, fake_backend):
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    fake_backend.in_cli()
    assert CliRunner().invoke(app, ["run", q, "-N", "2", "-o", str(tmp_path / "r"), "--backend", "scripted",
                                    "-q"]).exit_code == 0
    result = CliRunner().invoke(app, ["simulate", str(tmp_path / "r")])
    assert result.exit_code == 2 and "a `uab run` directory, not a pool: --allocator uab chose" in result.stderr, \
        result.stderr
    result = CliRunner().invoke(app, ["simulate", str(tmp_path)])
    assert result.exit_code == 2 and "no pool.jsonl in this directory" in result.stderr, result.stderr


def test_simulate_takes_a_uniform_run_directory_as_its_votes(tmp_path, fake_backend):
    """A Uniform run holds N samples of every question: a pool, in its votes.jsonl."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    fake_backend.in_cli()
    assert CliRunner().invoke(app, ["run", q, "-N", "2", "-o", str(tmp_path / "r"), "--backend", "scripted",
                                    "--allocator", "uniform", "-q"]).exit_code == 0
    by_dir = CliRunner().invoke(app, ["simulate", str(tmp_path / "r"), "--budgets", "2", "--seeds", "2"])
    by_file = CliRunner().invoke(app, ["simulate", str(tmp_path / "r" / "votes.jsonl"), "--budgets", "2",
                                       "--seeds", "2"])
    assert by_dir.exit_code == 0, by_dir.stderr
    assert by_dir.stdout.splitlines()[1:] == by_file.stdout.splitlines()[1:] and len(by_file.stdout.splitlines()) > 2


def test_phase1_refuses_records_of_a_later_stage_naming_the_line_before_the_model_loads(tmp_path, monkeypatch):
    """An allocation counts the Phase-1 samples it was made over: more of them (-K 2 on allocate's
    output) kept its 'extra', and phase2 then drew N·M + M samples. Phase-2 samples collide with
    Phase 1's indices. Either is one line naming the file and line, before any backend loads."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    p1, al, p2, out = (tmp_path / f for f in ("p1.jsonl", "al.jsonl", "p2.jsonl", "out.jsonl"))
    uab("phase1", q, "--backend", "scripted", "-o", p1, "-q")
    uab("allocate", p1, "--budget", 3, "-o", al, "-q")
    uab("phase2", al, "-o", p2, "-q")
    with monkeypatch.context() as patch:
        patch.setattr(ScriptedBackend, "__init__", lambda *a, **kw: pytest.fail("the backend loaded"))
        for path, held in ((al, "an allocation ('extra')"), (p2, "Phase-2 samples")):
            result = CliRunner().invoke(app, ["phase1", str(path), "--backend", "scripted", "-K", "2", "-o", str(out)])
            assert result.exit_code == 2 and not out.exists()
            assert " ".join(result.stderr.split()) == (f"error: {path}:1: record 'q0' already holds {held}: Phase 1 "
                                                       "takes questions or Phase-1 records (allocate, phase2 and "
                                                       "vote come after it)")
    uab("phase1", p1, "--backend", "scripted", "-K", "2", "-o", out, "-q")  # Phase-1 records: more samples
    assert [len(r["samples"]) for r in read_jsonl(out)] == [2, 2, 2]


def test_phase2_refuses_phase1_files_of_two_runs_joined(tmp_path):
    """Phase 2 draws with one set of settings: records sampled in Phase 1 with another seed would
    get Phase-2 samples of the first record's seed beside their own provenance."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(4))
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    uab("phase1", q, "--backend", "scripted", "-o", a, "-q")
    uab("phase1", q, "--backend", "scripted", "--seed", 7, "-o", b, "-q")
    joined = write_jsonl(tmp_path / "j.jsonl", [*read_jsonl(a)[:2], *read_jsonl(b)[2:]])
    uab("allocate", joined, "--budget", 2, "-o", tmp_path / "al.jsonl", "-q")
    result = CliRunner().invoke(app, ["phase2", str(tmp_path / "al.jsonl"), "-o", str(tmp_path / "p2.jsonl")])
    assert result.exit_code == 2 and not (tmp_path / "p2.jsonl").exists()
    assert f"{tmp_path / 'al.jsonl'}:3: record 'q2' was sampled in Phase 1 otherwise than record 'q0' (--seed (0 → 7))" \
        in " ".join(result.stderr.split())
    uab("allocate", a, "--budget", 2, "-o", tmp_path / "ok.jsonl", "-q")
    assert "phase2: 4/4" in " ".join(uab("phase2", tmp_path / "ok.jsonl", "-o", tmp_path / "p2.jsonl").stderr.split())


@pytest.mark.parametrize("stage", ["phase1", "phase2"])
def test_a_stage_checks_its_records_earlier_draws_once(tmp_path, monkeypatch, stage):
    """``uab phase1``/``uab phase2`` checked every record's earlier draws (and Phase 1 what it
    can take) twice: once to name the line, once more in the stage."""
    from uab_cli import pipeline

    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    p1, al = tmp_path / "p1.jsonl", tmp_path / "al.jsonl"
    uab("phase1", q, "--backend", "scripted", "-o", p1, "-q")
    uab("allocate", p1, "--budget", 2, "-o", al, "-q")
    calls = []

    def counted(name, check):
        return lambda *args, **kwargs: calls.append(name) or check(*args, **kwargs)

    for name in ("same_draws", "phase1_takes"):
        monkeypatch.setattr(pipeline, name, counted(name, getattr(pipeline, name)))
    args = [p1, "--backend", "scripted", "-K", 2] if stage == "phase1" else [al]  # Phase 1 grows to K = 2
    uab(stage, *args, "-o", tmp_path / "out.jsonl", "-q")
    assert sorted(calls) == (["phase1_takes", "same_draws"] if stage == "phase1" else ["same_draws"])


@pytest.mark.parametrize("stage", ["phase1", "phase2"])
def test_a_stage_rerun_with_other_settings_names_the_file_and_line(tmp_path, stage):
    """``uab phase1``/``uab phase2`` on records that hold that stage's samples drawn with another
    seed said which record, but not where: one line without FILE:LINE."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    p1, al, p2 = tmp_path / "p1.jsonl", tmp_path / "al.jsonl", tmp_path / "p2.jsonl"
    uab("phase1", q, "--backend", "scripted", "-o", p1, "-q")
    uab("allocate", p1, "--budget", 2, "-o", al, "-q")
    uab("phase2", al, "--backend", "scripted", "-o", p2, "-q")
    rows = read_jsonl(p1 if stage == "phase1" else p2)
    rows[1]["uab"][stage]["seed"] = 5  # the second record's samples were drawn with seed 5
    held = write_jsonl(tmp_path / "held.jsonl", rows)
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, [stage, held, "--backend", "scripted", "-o", str(out)])
    assert result.exit_code == 2 and not out.exists()
    assert result.stderr.count("\n") == 1
    assert f"error: {held}:2: record 'q1' holds {stage[:-1]} {stage[-1]} samples drawn with other settings " \
           "(--seed (5 → 0))" in " ".join(result.stderr.split())


def test_simulate_and_report_hold_what_they_read_of_a_pool_not_its_records(tmp_path):
    """`simulate POOL` and `report --pool POOL` stream the pool (`runs.read_pool`): they hold what the
    replay and the report read of it (answer classes, grades, statistics, token counts: tens of bytes a
    sample), never its records' parsed JSON. Two pools alike but for their samples' texts (26 MB of them
    in one) trace the same peak memory; holding the records (982 MB at 50,000 questions × 8 samples),
    the one with the texts traced 26 MB more."""
    import tracemalloc

    def pool(name: str, text: str) -> str:
        return write_jsonl(tmp_path / name, (
            {"id": f"q{i}", "question": f"What is {i} + 1?", "answer": str(i + 1), "samples": [
                {"index": j, "phase": 1, "text": f"{text} {j}", "answer": str(i + j % 2), "n_tokens": 900,
                 "finish_reason": "stop", "anll": 0.1 + j / 100} for j in range(8)]} for i in range(400)))

    def peaks(pool: str) -> list[int]:
        """The peak memory traced by `simulate` and by `report` on ``pool``."""
        out = []
        tracemalloc.start()
        try:
            uab("simulate", pool, "--budgets", "2,4", "--seeds", 2, "--allocators", "uniform,uab", "-q",
                "-o", tmp_path / "results.jsonl")
            out.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.reset_peak()
            uab("report", tmp_path / "results.jsonl", "--pool", pool, "-o", tmp_path / "report")
            out.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        return out

    short, long = pool("short.jsonl", "x"), pool("long.jsonl", "x" * 8192)
    peaks(short)  # the modules and caches the commands load on first use, loaded
    held = [b - a for a, b in zip(peaks(short), peaks(long))]
    assert max(held) < 2**20, [f"{n / 2**20:.1f} MiB" for n in held]
