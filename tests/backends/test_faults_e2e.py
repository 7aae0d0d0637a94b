"""`uab run` against a fault-injecting OpenAI-compatible server on 127.0.0.1: every sample is real,
an outage stops cleanly after bounded retries, and the run resumes to the same votes."""

from __future__ import annotations

import orjson
from fakeserver import FakeServer
from typer.testing import CliRunner

from uab_cli.cli import app

M = 200
FAST_FAULTS = ("429_retry_after", "429", "500", "503", "reset", "malformed", "empty", "truncate")


def questions(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_bytes(b"".join(orjson.dumps({"id": f"q{i}", "question": f"What is {i} + 1?"}) + b"\n"
                              for i in range(M)))
    return str(path)


def run(q, out, server, *extra):
    args = ["run", q, "--budget", "2", "--out", str(out), "--backend", "openai", "--base-url",
            server.url + "/v1", "--model", "fake", "--concurrency", "16", "--timeout", "5", "-q", *extra]
    return CliRunner().invoke(app, args)


def samples(out):
    return [s for line in (out / "votes.jsonl").read_bytes().splitlines() for s in orjson.loads(line)["samples"]]


def test_thirty_percent_faults_complete_with_real_samples(tmp_path):
    q = questions(tmp_path)
    with FakeServer(fault_rate=0.3, faults=FAST_FAULTS, seed=3) as server:
        result = run(q, tmp_path / "run", server)
        faults = sum(r.fault is not None for r in server.requests)
    assert result.exit_code == 0, result.stderr
    drawn = samples(tmp_path / "run")
    assert len(drawn) == 2 * M and faults > 50
    assert all(s["text"] and s["finish_reason"] in ("stop", "length") for s in drawn)
    # truncation is a real sample: recorded as such and counted in the budget
    assert any(s["finish_reason"] == "length" for s in drawn)


def test_outage_stops_keeps_samples_and_resumes(tmp_path):
    q = questions(tmp_path)
    with FakeServer() as server:
        assert run(q, tmp_path / "clean", server).exit_code == 0
    with FakeServer(fault_rate=1.0, fault_after=120, faults=("503",)) as server:
        result = run(q, tmp_path / "run", server, "--retries", "2")
    assert result.exit_code == 1
    assert "failed after 2 attempts" in result.stderr and "resume" in result.stderr
    kept = (tmp_path / "run" / "samples.ckpt.jsonl").read_bytes().splitlines()
    assert 100 <= len(kept) <= 120
    with FakeServer() as server:
        result = run(q, tmp_path / "run", server, "--retries", "2")
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "run" / "votes.jsonl").read_bytes() == (tmp_path / "clean" / "votes.jsonl").read_bytes()
