"""The context-window guard: a prompt whose tokens plus --max-tokens exceed the model's context
is an input error before anything is drawn (or, with --too-long skip, a question left out and
named), and it is measured in bounded memory however long it is."""

from __future__ import annotations

import orjson
import pytest
from conftest import arithmetic, cli, read_jsonl, system_refusing_tokenizer, write_jsonl

from uab_cli import pipeline, runs
from uab_cli.backends.base import PromptLength
from uab_cli.backends.scripted import ScriptedBackend
from uab_cli.backends.tokens import ChatTokens
from uab_cli.errors import UabError
from uab_cli.settings import Generation

LONG = " ".join(["word"] * 400)  # 400 scripted tokens


def questions(tmp_path, long_ids=("q2",)) -> str:
    rows = arithmetic(5)
    for row in rows:
        if row["id"] in long_ids:
            row["question"] = f"What is {LONG} 1 + 2?"
    return write_jsonl(tmp_path / "q.jsonl", rows)


def scripted(*more: str) -> list[str]:
    return ["--backend", "scripted", "--max-model-len", "300", "--max-tokens", "32", *more]


def test_a_prompt_that_does_not_fit_is_an_input_error_before_anything_is_drawn(tmp_path, fake_backend):
    q = questions(tmp_path, ("q2", "q4"))
    fake_backend.in_cli()
    for args in (["run", q, "-N", "2", "-o", str(tmp_path / "r")], ["phase1", q, "-o", str(tmp_path / "p1.jsonl")],
                 ["pool", q, "-K", "2", "-o", str(tmp_path / "pool")]):
        result = cli([*args, *scripted()])
        assert result.exit_code == 2, result.stderr
        assert "question 'q2': its prompt has 4" in result.stderr and "(and 1 more question)" in result.stderr
        assert "exceeds the model's context of 300 tokens" in result.stderr
    assert fake_backend.drawn == 0 and not (tmp_path / "p1.jsonl").exists()
    assert not (tmp_path / "r" / runs.CONFIG).exists() and not (tmp_path / "pool" / runs.CONFIG).exists()
    # Nothing recorded: the fixed questions run in the same directory without --force.
    fixed = write_jsonl(tmp_path / "q.jsonl", arithmetic(5))
    for args in (["run", fixed, "-N", "2", "-o", str(tmp_path / "r")], ["pool", fixed, "-K", "2", "-o",
                                                                         str(tmp_path / "pool")]):
        assert cli([*args, *scripted()]).exit_code == 0


def test_too_long_skip_leaves_the_question_out_of_every_stage_and_names_it(tmp_path):
    q = questions(tmp_path)
    out = tmp_path / "r"
    result = cli(["run", q, "-N", "3", "-o", str(out), *scripted("--too-long", "skip")])
    assert result.exit_code == 0, result.stderr
    assert "skipped: question 'q2'" in result.stderr and "left out by --too-long skip: 1 question" in result.stderr
    votes = read_jsonl(out / "votes.jsonl")
    assert [r["id"] for r in votes] == ["q0", "q1", "q3", "q4"]
    assert sum(len(r["samples"]) for r in votes) == 3 * 4  # the budget: N per question that fits
    assert orjson.loads((out / "summary.json").read_bytes())["uab"]["skipped"] == ["q2"]
    # A rerun takes --too-long from the directory and draws nothing; changing it changes no sample.
    again = cli(["run", q, "-N", "3", "-o", str(out), "--max-model-len", "300"])
    assert again.exit_code == 0 and "drawn now 0, reused 12" in again.stderr, again.stderr
    error = cli(["run", q, "-N", "3", "-o", str(out), "--max-model-len", "300", "--too-long", "error"])
    assert error.exit_code == 2 and "question 'q2'" in error.stderr and "other settings" not in error.stderr


def test_too_long_skip_in_phase1_and_pool(tmp_path):
    q = questions(tmp_path)
    result = cli(["phase1", q, "-o", str(tmp_path / "p1.jsonl"), *scripted("--too-long", "skip")])
    assert result.exit_code == 0 and "skipped: question 'q2'" in result.stderr
    assert "allocate's budget N·M counts the 4 that fit" in " ".join(result.stderr.split())
    assert [r["id"] for r in read_jsonl(tmp_path / "p1.jsonl")] == ["q0", "q1", "q3", "q4"]
    result = cli(["pool", q, "-K", "2", "-o", str(tmp_path / "pool"), *scripted("--too-long", "skip")])
    assert result.exit_code == 0 and "4 questions × 2 samples" in result.stderr, result.stderr
    assert {r["uab"]["phase1"]["skipped"] for r in read_jsonl(tmp_path / "pool" / "pool.jsonl")} == {1}


def test_a_question_too_long_skip_left_out_is_counted_in_every_later_stages_provenance(tmp_path):
    """The pipe's votes tell a question left out from one never asked, as run's summary.json does;
    the budget N·M counts the questions that fit."""
    q = questions(tmp_path)
    p1, a, p2, v = (str(tmp_path / f"{n}.jsonl") for n in ("p1", "a", "p2", "v"))
    assert cli(["phase1", q, "-o", p1, *scripted("--too-long", "skip")]).exit_code == 0
    for args in (["allocate", p1, "-N", "3", "-o", a], ["phase2", a, "-o", p2, "--max-model-len", "300"],
                 ["vote", p2, "-o", v]):
        assert cli(args).exit_code == 0
    votes = read_jsonl(v)
    assert [r["id"] for r in votes] == ["q0", "q1", "q3", "q4"] and sum(len(r["samples"]) for r in votes) == 3 * 4
    assert all(r["uab"]["phase1"]["skipped"] == 1 for r in votes)
    # More Phase-1 samples on those records keep the earlier count; without --too-long skip and
    # nothing left out, a Phase 1 records none.
    assert cli(["phase1", p1, "-K", "2", "-o", p2, *scripted()]).exit_code == 0
    assert all(r["uab"]["phase1"]["skipped"] == 1 for r in read_jsonl(p2))
    assert cli(["phase1", q, "-o", p2, *scripted(), "--max-model-len", "3000"]).exit_code == 0
    assert all("skipped" not in r["uab"]["phase1"] for r in read_jsonl(p2))
    out = tmp_path / "run"
    assert cli(["run", q, "-N", "3", "-o", str(out), *scripted("--too-long", "skip")]).exit_code == 0
    for name in ("phase1.jsonl", "votes.jsonl"):
        assert all(r["uab"]["phase1"]["skipped"] == 1 for r in read_jsonl(out / name))


def test_phase2_refuses_a_max_tokens_that_no_longer_fits(tmp_path):
    q = questions(tmp_path, ())
    assert cli(["phase1", q, "-o", str(tmp_path / "p1.jsonl"), *scripted()]).exit_code == 0
    assert cli(["allocate", str(tmp_path / "p1.jsonl"), "-N", "2", "-o", str(tmp_path / "a.jsonl")]).exit_code == 0
    result = cli(["phase2", str(tmp_path / "a.jsonl"), "-o", str(tmp_path / "p2.jsonl"), "--max-model-len", "300",
                  "--max-tokens", "290"])
    assert result.exit_code == 2 and "lower --max-tokens to" in result.stderr and "--too-long" not in result.stderr
    assert not (tmp_path / "p2.jsonl").exists()


def test_every_question_too_long_is_an_error_even_with_skip(tmp_path):
    q = questions(tmp_path, ("q0", "q1", "q2", "q3", "q4"))
    result = cli(["run", q, "-N", "2", "-o", str(tmp_path / "r"), *scripted("--too-long", "skip")])
    assert result.exit_code == 2 and "question 'q0'" in result.stderr
    message = " ".join(result.stderr.split())
    assert "--too-long skip would leave no question" in message and "pass --too-long skip" not in message


def test_max_tokens_beyond_the_context_is_an_error(tmp_path):
    q = questions(tmp_path, ())
    result = cli(["phase1", q, "--backend", "scripted", "--max-model-len", "100", "--max-tokens", "100"])
    assert result.exit_code == 2 and "--max-tokens 100 leaves no room for a prompt" in result.stderr


def test_a_backend_without_a_known_context_checks_nothing():
    records = [{"id": "a", "question": LONG * 50}]
    pipeline.fit(records, ScriptedBackend(), Generation(backend="scripted"))
    assert len(records) == 1
    with pytest.raises(UabError, match="question 'a'"):
        pipeline.fit(records, ScriptedBackend(max_model_len=2048), Generation(backend="scripted"))


class CountingTokenizer:
    """A stand-in for a Hugging Face tokenizer: one token per character pair, vocabulary entries of
    at most 4 characters; it records the length of every text it tokenises."""

    def __init__(self):
        self.tokenised: list[int] = []

    def apply_chat_template(self, messages, add_generation_prompt, tokenize):
        return "".join(f"<{m['role']}>{m['content']}" for m in messages) + "<assistant>"

    def __call__(self, text, add_special_tokens):
        self.tokenised.append(len(text))
        return {"input_ids": list(range((len(text) + 1) // 2))}

    def get_vocab(self):
        return {"a": 0, "ab": 1, "abcd": 2}


def test_a_prompt_far_beyond_the_context_is_measured_without_tokenising_it():
    pytest.importorskip("jinja2")  # ChatTokens renders with it (transformers' dependency)
    tokenizer = CountingTokenizer()
    chat = ChatTokens(tokenizer, "fake")
    short = ({"role": "user", "content": "x" * 100},)
    assert chat.length(short, 1000) == PromptLength(59)  # exact: (6 + 100 + 11 + 1) // 2
    huge = ({"role": "user", "content": "x" * 5_000_000},)
    size = chat.length(huge, 1000)
    assert not size.exact and size.tokens == -(-(5_000_000 + 17) // 4) and size.tokens > 1000
    assert tokenizer.tokenised == [117]  # the huge prompt was never tokenised


def test_a_chat_template_that_refuses_the_messages_is_a_uab_error():
    """The local and vllm backends render and count prompts by ChatTokens: a template's own
    raise_exception (Gemma's "System role not supported") was jinja2's TemplateError, a traceback."""
    tok = system_refusing_tokenizer()
    chat = ChatTokens(tok, "gemma")
    with pytest.raises(UabError, match="^model 'gemma' cannot format this chat: System role not supported; "
                                       "--system-prompt '' asks without a system message$"):
        chat.length(({"role": "system", "content": "S"}, {"role": "user", "content": "Q"}), 100)
    assert chat.text(({"role": "user", "content": "Q"},)) == "Q\n"


def test_the_judge_pre_pass_sees_only_the_questions_that_fit(tmp_path):
    q = questions(tmp_path)
    out = tmp_path / "r"
    result = cli(["run", q, "-N", "2", "-o", str(out), "--allocator", "judge", *scripted("--too-long", "skip")])
    assert result.exit_code == 0, result.stderr
    labels = orjson.loads((out / runs.JUDGE).read_bytes())["labels"]
    assert sorted(labels) == ["q0", "q1", "q3", "q4"]


@pytest.mark.parametrize("command", ["run", "phase1"])
def test_a_judge_prompt_too_long_suggests_what_fits_the_judge(tmp_path, command):
    """The judge always asks for 8 tokens: its error said "with --max-tokens 8" (16 given) and
    suggested lowering --max-tokens, which the judge does not read."""
    rows = arithmetic(3)
    for row in rows:
        row["question"] = "What is " + " ".join(["word"] * 100) + " 1 + 2?"
    q = write_jsonl(tmp_path / "q.jsonl", rows)
    template = tmp_path / "t.json"
    template.write_text('[{"role": "user", "content": "{question}"}]')  # shorter than the judge's prompt
    args = ["-N", "2", "--allocator", "judge", "-o", str(tmp_path / "r")] if command == "run" else \
        ["--judge", "-o", str(tmp_path / "p1.jsonl")]
    result = cli([command, q, *args, "--backend", "scripted", "--max-model-len", "130", "--max-tokens", "16",
                  "--prompt-template", str(template)])
    assert result.exit_code == 2
    said = " ".join(result.stderr.split())
    assert "its judge prompt has 129 tokens, which with --judge-max-tokens 8 exceeds the model's context of " \
           "130 tokens" in said
    assert "use a model with a longer context (--max-tokens does not apply to the judge)" in said
    assert "lower --max-tokens" not in said and "or pass --too-long skip" in said  # it now skips such a question


def _a_long_judge_prompt(tmp_path):
    """Four questions, q1's judge prompt 129 tokens, and a template shorter than the judge's prompt."""
    rows = arithmetic(4)
    rows[1]["question"] = "What is " + " ".join(["word"] * 100) + " 1 + 2?"  # its judge prompt: 129 tokens
    q = write_jsonl(tmp_path / "q.jsonl", rows)
    template = tmp_path / "t.json"
    template.write_text('[{"role": "user", "content": "{question}"}]')  # shorter than the judge's prompt
    return q, template


@pytest.mark.parametrize("command", ["run", "phase1"])
def test_a_judge_prompt_that_fits_without_its_raised_cap_suggests_a_lower_one(tmp_path, command):
    """--judge-max-tokens is the judge's reply room in the context check: a question whose judge
    prompt fits alone is told the cap that fits, and --too-long skip leaves it out by it."""
    q, template = _a_long_judge_prompt(tmp_path)
    out = tmp_path / ("r" if command == "run" else "p1.jsonl")
    args = [command, q, *(["-N", "2", "--allocator", "judge"] if command == "run" else ["--judge"]), "-o", str(out),
            "--backend", "scripted", "--max-model-len", "200", "--max-tokens", "16", "--prompt-template", str(template),
            "--judge-max-tokens", "100"]
    result = cli(args)
    assert result.exit_code == 2
    said = " ".join(result.stderr.split())
    assert "question 'q1': its judge prompt has 129 tokens, which with --judge-max-tokens 100 exceeds the model's " \
           "context of 200 tokens" in said
    assert "lower --judge-max-tokens to 71 or pass --too-long skip" in said
    result = cli([*args, "--too-long", "skip"])
    assert result.exit_code == 0, result.stderr
    records = read_jsonl(out / "votes.jsonl" if command == "run" else out)
    assert [r["id"] for r in records] == ["q0", "q2", "q3"]


@pytest.mark.parametrize("command", ["run", "phase1"])
def test_too_long_skip_leaves_out_a_question_whose_judge_prompt_does_not_fit(tmp_path, command):
    """--too-long skip applied to the sampling prompt only: a question whose judge prompt did not
    fit stopped the run (exit 2, "shorten it or use a model with a longer context")."""
    q, template = _a_long_judge_prompt(tmp_path)
    out = tmp_path / ("r" if command == "run" else "p1.jsonl")
    args = ["-N", "2", "--allocator", "judge", "-o", str(out)] if command == "run" else ["--judge", "-o", str(out)]
    result = cli([command, q, *args, "--backend", "scripted", "--max-model-len", "130", "--max-tokens", "16",
                  "--prompt-template", str(template), "--too-long", "skip"])
    assert result.exit_code == 0, result.stderr
    assert "skipped: question 'q1': its judge prompt has 129 tokens" in " ".join(result.stderr.split())
    records = read_jsonl(out / "votes.jsonl" if command == "run" else out)
    assert [r["id"] for r in records] == ["q0", "q2", "q3"]
    assert records[0]["uab"]["phase1"]["skipped"] == 1
    if command == "run":  # the budget is N per question that fits
        assert sum(len(r["samples"]) for r in records) == 2 * 3
        assert sorted(orjson.loads((out / runs.JUDGE).read_bytes())["labels"]) == ["q0", "q2", "q3"]


@pytest.mark.parametrize("command", ["run", "pool"])
def test_a_rerun_reads_its_directory_record_once_before_the_lock(tmp_path, monkeypatch, command):
    """A rerun read its directory's config.json three times before taking the lock (its budget
    and --max-model-len for --settings, again after it, then the settings it records)."""
    q = questions(tmp_path)
    out = str(tmp_path / command)
    args = [command, q, "-o", out, *(["-N", "2"] if command == "run" else ["-K", "2"])]
    assert cli([*args, *scripted("--too-long", "skip")]).exit_code == 0
    settings = tmp_path / "settings.json"
    settings.write_text('{"max_tokens": 32}')
    reads = []
    monkeypatch.setattr(runs, "_read_config", lambda *a, f=runs._read_config: reads.append(a) or f(*a))
    result = cli([command, q, "-o", out, "--settings", str(settings), "-q"])
    assert result.exit_code == 0 and len(reads) == 1, (result.stderr, reads)
    assert orjson.loads((tmp_path / command / runs.CONFIG).read_bytes())["max_model_len"] == 300  # remembered


def test_too_long_is_no_sampling_setting_of_a_recommendation():
    from uab_cli import recommend

    entry = {"allocator": "uniform", "signal": None, "T": None, "N": 4, "vote_rule": "majority"}
    generation = {**Generation(backend="scripted", max_tokens=48, too_long="skip").info()}
    settings = recommend.run_settings(entry, {"generation": generation})
    assert settings["max_tokens"] == 48 and "too_long" not in settings


@pytest.mark.parametrize("command", ["run", "pool"])
def test_a_rerun_keeps_the_max_model_len_that_left_questions_out(tmp_path, command):
    """A plain rerun resumes the run it was: at the model's own context the question left out
    fits, and a rerun without --max-model-len drew its samples and voted on it too."""
    q = questions(tmp_path)
    out = str(tmp_path / command)
    args = [command, q, "-o", out, *(["-N", "2"] if command == "run" else ["-K", "2"])]
    assert cli([*args, *scripted("--too-long", "skip")]).exit_code == 0
    name = "votes.jsonl" if command == "run" else "pool.jsonl"
    before = (tmp_path / command / name).read_bytes()
    result = cli([command, q, "-o", out])
    assert result.exit_code == 0 and "skipped: question 'q2'" in result.stderr, result.stderr
    assert (tmp_path / command / name).read_bytes() == before
    # Given again, a larger context takes the question in; another model does not inherit it.
    assert cli([command, q, "-o", out, "--max-model-len", "100000"]).exit_code == 0
    assert "q2" in {r["id"] for r in read_jsonl(tmp_path / command / name)}
    assert cli([*args[:4], "--max-model-len", "300", "--force", "--backend", "scripted"]).exit_code == 0
    assert cli([command, q, "-o", out, "--model", "other", "--force"]).exit_code == 0
    assert orjson.loads((tmp_path / command / runs.CONFIG).read_bytes())["max_model_len"] is None
