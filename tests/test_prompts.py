"""Prompts the user controls: presets (the paper's, the boxed chain-of-thought), --system-prompt
and --prompt-template; the prompt is recorded with every sample and is part of what a run
directory's samples are."""

from __future__ import annotations

import json

import pytest
from conftest import arithmetic, cli, read_jsonl, write_jsonl

from uab_cli.errors import UabError
from uab_cli.prompts import Prompt, answer_messages, load_template, parse_judge
from uab_cli.settings import Generation

MC = {"id": "m", "question": "Which is even?", "choices": ["3", "8"], "answer": "B"}
MATH = {"id": "a", "question": "What is 3 + 4?", "answer": "7"}


def test_presets_ask_as_their_sources_do():
    # the paper's code (manhitv/UAB src/evaluator.py, main table): one user turn, no system prompt
    assert answer_messages(MATH, "paper") == ({"role": "user", "content": (
        "What is 3 + 4? Put your final answer in \\boxed{answer} at the very end of your response, "
        "e.g. \\boxed{\\frac{1}{2}} or \\boxed{3.14}.")},)
    assert answer_messages(MATH, "paper-curly")[0]["content"].endswith(
        'Make sure to state your final answer in curly brackets at the very end of your response, just like: '
        '"{final answer: 123}".')
    assert answer_messages(MC, "paper") == ({"role": "user", "content": (
        "Which is even?\n(A) 3\n(B) 8\n\n Make sure to state your final answer choice in curly brackets at the "
        'very end of your response, just like: "{final answer: (A)}".')},)
    assert answer_messages(MATH, "boxed") == ({"role": "user", "content": (
        "What is 3 + 4?\nPlease reason step by step, and put your final answer within \\boxed{}.")},)
    # uab's own prompts are unchanged
    few = answer_messages(MC, "fewshot", vcs=True)
    assert few[0]["content"].startswith("Solve the problem.") and len(few) == 6
    assert few[-1]["content"].startswith("Which is even?\nA. 3\nB. 8\n\n") and "Confidence" in few[-1]["content"]


def test_a_template_fills_its_fields_and_keeps_doubled_braces(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps([
        {"role": "system", "content": "Set {{x}} aside."},
        {"role": "user", "content": "1 + 1?"}, {"role": "assistant", "content": "{{final answer: 2}}"},
        {"role": "user", "content": "{stem}|{choices}|{question}"}]))
    messages, digest = load_template(str(path))
    prompt = Prompt(template=messages)
    assert prompt.messages(MC)[-1]["content"] == "Which is even?|(A) 3\n(B) 8|Which is even?\nA. 3\nB. 8"
    assert prompt.messages(MC)[0]["content"] == "Set {x} aside."
    assert prompt.messages(MC)[2]["content"] == "{final answer: 2}"
    assert prompt.messages(MATH, vcs=True)[-1]["content"].startswith("What is 3 + 4?||What is 3 + 4?\n\n")
    # --system-prompt replaces the template's own, "" removes it, and is never formatted
    assert Prompt(system="{question}", template=messages).messages(MATH)[0] == {"role": "system",
                                                                                 "content": "{question}"}
    assert [m["role"] for m in Prompt(system="", template=messages).messages(MATH)] == ["user", "assistant", "user"]
    assert Prompt("boxed", system="S").messages(MATH)[0] == {"role": "system", "content": "S"}
    assert len(digest) == 64


def test_a_template_that_shows_no_options_warns_on_a_multiple_choice_question():
    """{stem} alone asks an MC question without its options: said, not silent; a math question,
    or a template that names {choices} or {question}, says nothing."""
    stem_only = Prompt(template=({"role": "user", "content": "{stem}\nAnswer with the letter."},))
    with pytest.warns(UserWarning, match="names neither {question} nor {choices}"):
        assert stem_only.messages(MC)[-1]["content"] == "Which is even?\nAnswer with the letter."
    stem_only.messages(MATH)  # no warning: an error in tests
    Prompt(template=({"role": "user", "content": "{stem}\n{choices}"},)).messages(MC)


@pytest.mark.parametrize("style", ["paper", "paper-curly"])
@pytest.mark.parametrize("kind", ["math", "text"])
def test_a_built_in_prompt_that_shows_no_options_warns_as_a_template_does(style, kind):
    """The paper prompts ask a math or text question by its stem: one that still has choices was
    asked without them in silence (only a template warned); the prompts that list them say nothing."""
    rec = {**MC, "type": kind}
    with pytest.warns(UserWarning, match=f"the '{style}' prompt asks a question of type '{kind}' by its stem alone: "
                                         "questions with 'choices' are asked without their options"):
        assert "8" not in answer_messages(rec, style)[-1]["content"]
    answer_messages(MC, style)  # no warning: an error in tests
    for listing in ("fewshot", "zeroshot", "boxed"):
        assert "B. 8" in answer_messages(rec, listing)[-1]["content"]


def test_a_prompt_that_drops_the_options_warns_once_a_run(tmp_path):
    """README: such a prompt "runs, and warns once". Every prompt made for a question warned
    again: `uab run` said it 4 times (the context check and the draw, of Phase 1 and Phase 2)."""
    import warnings

    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"role": "user", "content": "{stem}"}]))
    q = write_jsonl(tmp_path / "q.jsonl", [{**MC, "id": f"m{i}"} for i in range(3)])
    with warnings.catch_warnings():  # uab prints them (a test's warning is otherwise an error)
        warnings.simplefilter("always")
        result = cli(["run", q, "-N", "3", "--backend", "scripted", "--max-model-len", "4096", "--prompt-template",
                      str(path), "-o", str(tmp_path / "r"), "-q"])
    assert result.exit_code == 0, result.stderr
    assert result.stderr.count("names neither {question} nor {choices}") == 1, result.stderr


@pytest.mark.parametrize("content, says", [
    ('[{"role": "user", "content": "{question}"}', ":1: prompt template is not JSON"),
    ('{"role": "user", "content": "{question}"}', "a prompt template is a JSON list of messages"),
    ('[{"role": "user", "text": "{question}"}]', 'message 1: expected {"role": ..., "content": "text"}'),
    ('[{"role": "human", "content": "{question}"}]', "message 1: role must be one of system, user, assistant"),
    ('[{"role": "user", "content": "{answer}"}]', "message 1: unknown field {answer}; use {question}, {stem}, "
                                                  "{choices}"),
    ('[{"role": "user", "content": "{question:>9}"}]', "unknown field {question:>9}"),
    ('[{"role": "user", "content": "{question} in \\\\boxed{}"}]', "message 1: unknown field {}"),
    ('[{"role": "user", "content": "{question} {"}]', "message 1: Single '{' encountered"),
    ('[{"role": "user", "content": "{question}"}, {"role": "assistant", "content": "A"}]',
     "the last message must be the user's"),
    ('[{"role": "user", "content": "Solve it."}]', "no message names the question"),
    ('[{"role": "user",\n "content": "{question} \xff"}]', ":2: not valid UTF-8 at column 25 (byte 0xff): save the file as UTF-8"),
    # its column in its line, as every reader names one (it said "byte 46 is 0xff", counted in the file)
    ('\xef\xbb\xbf[{"role": "user",\n "content": "{question} \xff"}]',
     ":2: not valid UTF-8 at column 25 (byte 0xff): save the file as UTF-8"),
    ("", ":1: prompt template is not JSON: Input is a zero-length, empty document"),
])
def test_a_bad_template_is_one_error_naming_the_file(tmp_path, content, says):
    path = tmp_path / "t.json"
    path.write_bytes(content.encode("latin-1"))
    with pytest.raises(UabError) as caught:
        load_template(str(path))
    assert str(caught.value).startswith(str(path)) and says in str(caught.value), str(caught.value)
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(2))
    result = cli(["phase1", q, "--backend", "scripted", "--prompt-template", str(path), "-o", str(tmp_path / "o")])
    assert result.exit_code == 2 and says in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_an_empty_template_path_is_one_error_naming_the_option(tmp_path):
    """``--prompt-template ''`` said "error: cannot read the prompt template: No such file or
    directory", naming neither a file nor the option."""
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(2))
    result = cli(["phase1", q, "--backend", "scripted", "--prompt-template", "", "-o", str(tmp_path / "o")])
    assert result.exit_code == 2 and result.stderr == "error: --prompt-template: the path is empty (give a JSON " \
        "file of chat messages)\n", result.stderr
    assert not (tmp_path / "o").exists()


def test_a_system_prompt_never_drops_the_only_message_that_names_the_question(tmp_path, fake_backend):
    """--system-prompt replaces the template's system messages: one that alone named the question
    is refused, naming the file (every sample was asked without its question); the options it
    alone showed no longer count as shown, and the warning says so (it said the template "names
    neither {question} nor {choices}", which it does)."""
    fake_backend.in_cli()
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"role": "system", "content": "Solve: {question}"},
                                {"role": "user", "content": "Go."}]))
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(2))
    result = cli(["phase1", q, "--backend", "scripted", "--prompt-template", str(path), "--system-prompt", "Be brief.",
                  "-o", str(tmp_path / "o.jsonl")])
    assert result.exit_code == 2 and result.stderr.startswith(f"error: {path}: only a system message names")
    assert fake_backend.drawn == 0 and not (tmp_path / "o.jsonl").exists()
    assert cli(["phase1", q, "--backend", "scripted", "--prompt-template", str(path), "-o", str(tmp_path / "o.jsonl"),
                "-q"]).exit_code == 0  # fine without --system-prompt
    choices_in_system = Prompt(system="S", template=({"role": "system", "content": "{choices}"},
                                                     {"role": "user", "content": "{stem}"}))
    with pytest.warns(UserWarning, match="only a system message of the prompt template shows the options, "
                                         "and --system-prompt replaces it: questions with 'choices'"):
        choices_in_system.messages(MC)
    with pytest.warns(UserWarning, match="names neither {question} nor {choices}"):  # none anywhere
        Prompt(system="S", template=({"role": "user", "content": "{stem}"},)).messages(MC)


def test_a_template_saved_with_a_byte_order_mark_reads_as_without(tmp_path):
    """As a JSONL input's: Windows editors save one (it was 'not JSON')."""
    path = tmp_path / "t.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps([{"role": "user", "content": "{question}"}]).encode())
    assert load_template(str(path))[0] == ({"role": "user", "content": "{question}"},)


def test_the_backend_is_asked_exactly_the_requested_messages(tmp_path, fake_backend):
    fake_backend.in_cli()
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"role": "user", "content": "Q: {question} {{ok}}"}]))
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(2))
    result = cli(["phase1", q, "--backend", "scripted", "--prompt-template", str(path), "--system-prompt", "Be brief.",
                  "-o", str(tmp_path / "p1.jsonl"), "-q"])
    assert result.exit_code == 0, result.stderr
    assert [r.messages for r in fake_backend.calls[0]] == [
        ({"role": "system", "content": "Be brief."}, {"role": "user", "content": f"Q: {rec['question']} {{ok}}"})
        for rec in arithmetic(2)]
    info = read_jsonl(tmp_path / "p1.jsonl")[0]["uab"]["phase1"]
    assert (info["system_prompt"], info["prompt_template"]) == ("Be brief.", str(path))
    assert info["prompt_template_sha256"] == load_template(str(path))[1]


def _run(tmp_path, *more):
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(3))
    return cli(["run", q, "-N", "2", "-o", str(tmp_path / "r"), "--backend", "scripted", "-q", *more])


def test_a_run_remembers_its_prompt_and_refuses_another(tmp_path, fake_backend):
    fake_backend.in_cli()
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"role": "user", "content": "{question}"}]))
    assert _run(tmp_path, "--prompt-template", str(path), "--system-prompt", "S").exit_code == 0
    assert fake_backend.drawn == 6
    # a rerun without the options takes the recorded prompt and draws nothing
    assert _run(tmp_path, "-N", "3").exit_code == 0
    assert fake_backend.drawn == 9 and fake_backend.calls[-1][0].messages[0] == {"role": "system", "content": "S"}
    for more, says in ((["--system-prompt", "T"], "--system-prompt (S → T)"),
                       (["--prompt", "boxed"], "--prompt (unset → boxed)")):
        result = _run(tmp_path, *more)
        assert result.exit_code == 2 and says in result.stderr, result.stderr
    was = load_template(str(path))[1]
    path.write_text(json.dumps([{"role": "user", "content": "Please: {question}"}]))  # edited in place
    result = _run(tmp_path)
    # its digests shortened as phase2's are (they were shown in full: 64 hex digits each)
    shown = f"--prompt-template (its content) ({was[:12]}… → {load_template(str(path))[1][:12]}…)"
    assert result.exit_code == 2 and shown in " ".join(result.stderr.split()), result.stderr
    assert _run(tmp_path, "--force").exit_code == 0
    assert fake_backend.calls[-1][0].messages[-1]["content"].startswith("Please: ")


def test_a_run_directory_of_an_earlier_uab_resumes(tmp_path, fake_backend):
    """Its config has no entries for the new options: they count as their defaults."""
    fake_backend.in_cli()
    assert _run(tmp_path).exit_code == 0
    config = json.loads((tmp_path / "r" / "config.json").read_text())
    for name in ("system_prompt", "prompt_template", "signal_span"):
        del config["generation"][name]
    (tmp_path / "r" / "config.json").write_text(json.dumps(config))
    assert _run(tmp_path).exit_code == 0 and fake_backend.drawn == 6


def _allocated_with_template(tmp_path, fake_backend):
    """Phase 1 drawn with the template t.json, allocated to a.jsonl at N = 2; returns t.json's path."""
    fake_backend.in_cli()
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"role": "user", "content": "{question}"}]))
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(2))
    assert cli(["phase1", q, "--backend", "scripted", "--prompt-template", str(path), "-o",
                str(tmp_path / "p1.jsonl"), "-q"]).exit_code == 0
    assert cli(["allocate", str(tmp_path / "p1.jsonl"), "-N", "2", "-o", str(tmp_path / "a.jsonl"), "-q"]).exit_code == 0
    return path


def test_phase2_refuses_a_template_edited_since_phase1(tmp_path, fake_backend):
    path = _allocated_with_template(tmp_path, fake_backend)
    assert cli(["phase2", str(tmp_path / "a.jsonl"), "-o", str(tmp_path / "p2.jsonl"), "-q"]).exit_code == 0
    assert fake_backend.calls[-1][0].messages == ({"role": "user", "content": arithmetic(2)[0]["question"]},)
    path.write_text(json.dumps([{"role": "user", "content": "Now: {question}"}]))
    result = cli(["phase2", str(tmp_path / "a.jsonl"), "-o", str(tmp_path / "p2b.jsonl"), "-q"])
    assert result.exit_code == 2 and "prompt template changed since Phase 1" in result.stderr



def test_phase2_from_another_folder_and_from_an_older_relative_path_checks_the_template(tmp_path, fake_backend,
                                                                                       monkeypatch):
    """The template is recorded absolute, so Phase 2 from another folder finds it; a Phase-1 file
    of an earlier uab recorded the path as typed, and Phase 2 still checks its content."""
    fake_backend.in_cli()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.json").write_text(json.dumps([{"role": "user", "content": "{question}"}]))
    q = write_jsonl(tmp_path / "q.jsonl", arithmetic(2))
    assert cli(["phase1", q, "--backend", "scripted", "--prompt-template", "t.json", "-o", "p1.jsonl", "-q"]
               ).exit_code == 0
    assert cli(["allocate", "p1.jsonl", "-N", "2", "-o", "a.jsonl", "-q"]).exit_code == 0
    rows = read_jsonl(tmp_path / "a.jsonl")
    assert rows[0]["uab"]["phase1"]["prompt_template"] == str(tmp_path / "t.json")
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert cli(["phase2", "../a.jsonl", "-o", "p2.jsonl", "-q"]).exit_code == 0
    monkeypatch.chdir(tmp_path)
    for rec in rows:  # as an earlier uab wrote it
        rec["uab"]["phase1"]["prompt_template"] = "t.json"
    write_jsonl(tmp_path / "old.jsonl", rows)
    (tmp_path / "t.json").write_text(json.dumps([{"role": "user", "content": "Now: {question}"}]))
    result = cli(["phase2", "old.jsonl", "-o", "p2b.jsonl", "-q"])
    assert result.exit_code == 2 and "prompt template changed since Phase 1" in result.stderr


def test_prompt_options_come_from_a_settings_file(tmp_path, fake_backend):
    fake_backend.in_cli()
    settings = tmp_path / "s.json"
    settings.write_text(json.dumps({"system_prompt": "From settings.", "prompt": "paper"}))
    assert _run(tmp_path, "--settings", str(settings)).exit_code == 0
    assert fake_backend.calls[0][0].messages[0] == {"role": "system", "content": "From settings."}
    gen = Generation.from_params({"system_prompt": "", "prompt": "zeroshot"})
    assert gen.prompter.messages(MATH) == ({"role": "user", "content": "What is 3 + 4?"},)


def test_a_recommendation_carries_the_pools_prompt_quoted_for_the_shell():
    from uab_cli import recommend

    entry = {"allocator": "uniform", "signal": None, "T": None, "N": 2, "vote_rule": "majority"}
    context = {"generation": {**Generation(system_prompt="Be brief.", prompt="boxed").info()}}
    settings = recommend.run_settings(entry, context)
    assert settings["system_prompt"] == "Be brief." and settings["prompt"] == "boxed"
    assert "--system-prompt 'Be brief.'" in recommend.flags(settings)


@pytest.mark.parametrize("text, label", [("easy", "easy"), ("Hard.", "hard"), ("not easy", "hard"),
                                         ("Not hard at all: easy", "easy"), ("easy or hard", None), ("", None),
                                         ("It is not too hard.", "easy"), ("This isn't hard", "easy"),
                                         ("It wasn\u2019t easy", "hard"), ("Not that easy.", "hard"),
                                         ("Not particularly hard: easy", "easy"), ("very hard", "hard")])
def test_the_judges_label_reads_a_negation(text, label):
    """A judge that answers "not easy" calls the question hard; it was read as easy. So do "isn't
    easy" and "not too easy" (a word between the negation and the verdict): they were read as easy."""
    assert parse_judge(text) == label


@pytest.mark.parametrize("text, label", [("<think>\nThis one looks easy", None), ("<think>Easy? No.</think>hard", "hard"),
                                         ("<think>It is hard", None), ("[THINK]hard[/THINK] Easy.", "easy")])
def test_the_judges_label_is_read_from_its_final_part(text, label):
    """A reasoning model's judge reply cut off while thinking gives no label (it counts as hard),
    and a word of its thinking is no verdict: its draft "easy" was read as the label."""
    assert parse_judge(text) == label


@pytest.mark.parametrize("content, says", [(None, "cannot read the prompt template"),
                                           ("{question} {answer}", "message 1: unknown field {answer}")])
def test_phase2_names_the_recorded_template_it_cannot_use(tmp_path, fake_backend, content, says):
    """A Phase-1 template deleted, or edited into a bad one, since: Phase 2's error named the
    record but not the template file ("a.jsonl:1: its Phase-1 provenance (uab.phase1): cannot
    read the prompt template: No such file or directory")."""
    path = _allocated_with_template(tmp_path, fake_backend)
    if content is None:
        path.unlink()
    else:
        path.write_text(json.dumps([{"role": "user", "content": content}]))
    result = cli(["phase2", str(tmp_path / "a.jsonl"), "-o", str(tmp_path / "p2.jsonl"), "-q"])
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert f"a.jsonl:1: its Phase-1 provenance (uab.phase1): {path}: {says}" in result.stderr
    assert not (tmp_path / "p2.jsonl").exists()
