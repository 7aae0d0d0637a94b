"""The command line: help, version, stage commands through typer's runner, the README quickstart."""

from __future__ import annotations

import os
import pathlib
import re
import shlex
import stat

import pytest
from typer.testing import CliRunner

from conftest import arithmetic, read_jsonl, write_jsonl
from uab_cli import __version__
from uab_cli.cli import app

ROOT = pathlib.Path(__file__).resolve().parents[1]


def uab(*args, input=None):
    result = CliRunner().invoke(app, [str(a) for a in args], input=input)
    assert result.exit_code == 0, result.output + str(result.exception)
    return result


def test_version_and_help_list_every_stage():
    assert uab("--version").stdout.strip() == f"uab {__version__}"
    out = uab("--help").stdout
    for verb in ("phase1", "allocate", "phase2", "vote", "run", "pool", "simulate", "report", "convert"):
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


def test_pool_simulate_report(tmp_path):
    q = write_jsonl(tmp_path / "q.jsonl", [dict(r, level=i % 3) for i, r in enumerate(arithmetic(40))])
    uab("pool", q, "--samples", 6, "--out", tmp_path / "pool", "--backend", "scripted", "-q")
    assert all(len(r["samples"]) == 6 for r in read_jsonl(tmp_path / "pool" / "pool.jsonl"))
    res = tmp_path / "res.jsonl"
    uab("simulate", tmp_path / "pool", "--budgets", "2,4", "--seeds", 3, "--allocators", "uab,uniform", "-o", res, "-q")
    rows = read_jsonl(res)
    assert len(rows) == 2 * 2 * 3 and all(r["samples_used"] == r["N"] * 40 for r in rows)
    paths = uab("report", res, "-o", tmp_path / "rep", "--pool", tmp_path / "pool").stdout.split()
    assert {os.path.basename(p) for p in paths} >= {"accuracy_vs_budget.png", "summary.md"}


@pytest.mark.slow
def test_readme_quickstart_runs_on_the_embedded_model(tmp_path, monkeypatch):
    """The README's quickstart command, verbatim, on the real SmolLM2 weights."""
    readme = (ROOT / "README.md").read_text()
    command = re.search(r"^uab run sample_data/quickstart\.jsonl.*$", readme, re.M).group(0)
    args = shlex.split(command)[1:]
    monkeypatch.chdir(ROOT)
    out = tmp_path / "quick"
    args[args.index("--out") + 1] = str(out)
    result = uab(*args)
    assert "accuracy" in result.stderr
    votes = read_jsonl(out / "votes.jsonl")
    assert len(votes) == 6 and sum(len(r["samples"]) for r in votes) == 24
    assert all(r["uab"]["phase1"]["backend"] == "local" for r in votes)
    assert all(s["anll"] is not None and s["n_tokens"] > 0 for r in votes for s in r["samples"])
    assert sum(r["correct"] for r in votes) >= 1
