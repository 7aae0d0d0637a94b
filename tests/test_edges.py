"""Edges a new user meets: one option vocabulary in every command, exit codes documented,
`report` saying which plots it did not draw and why."""

from __future__ import annotations

import pathlib
import re

import pytest
from conftest import arithmetic, cli, write_jsonl

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUTPUT = ("phase1", "allocate", "phase2", "vote", "run", "pool", "simulate", "report", "convert")


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
    summary = (tmp_path / "rep" / "summary.md").read_text()
    assert "Plots not drawn:" in summary and "allocation_by_level.png: the questions have no 'level'" in summary
    assert not (tmp_path / "rep" / "allocation_by_level.png").exists()


def test_the_readme_names_every_help_panel():
    from uab_cli.options import PANELS

    readme = " ".join((ROOT / "README.md").read_text().split())
    assert f"panels ({', '.join(PANELS)})" in readme
