"""`uab phase1 --backend openai` against a local server that replays reasoning-model replies
and records what it is sent: the messages are exactly the requested ones (system prompt and
template), and `uab vote` grades every reply as its final answer says — a box inside
<think> is a draft, a reply cut inside its reasoning has no answer, a server's separate
reasoning is kept and never graded."""

from __future__ import annotations

import json
import math
import re

import pytest
from conftest import cli, read_jsonl, system_refusing_tokenizer, write_jsonl
from fakeserver import FakeServer, _pieces, token_logprob

pytest.importorskip("openai")

# question -> (gold, reply the server sends, what the vote must make of it)
REPLIES = {
    "What is 3 + 4?": ("7", {"content": "<think>\nMaybe \\boxed{5}? No: 3 + 4 = 7, so \\boxed{7}.\n</think>\n\n"
                             "The sum is \\boxed{7}."}, "7"),
    "What is 2 + 2?": ("4", {"content": "<think>\nI first guessed \\boxed{4} but the answer must be bigger "
                             "so \\boxed{5}\n</think>\n\nFinal answer: \\boxed{5}"}, "5"),
    "What is 6 + 6?": ("12", {"content": "<think>\nLet me see, 6 + 6 is \\boxed{12}, but let me double-check "
                              "by counting one by one", "finish_reason": "length"}, None),
    "What is 9 - 1?": ("8", {"content": "So the answer is \\boxed{8}.",
                             "reasoning_content": "9 - 1 ... is it \\boxed{10}? No, \\boxed{8}."}, "8"),
    "What is 5 * 2?": ("10", {"content": None, "reasoning_content": "5 * 2 = \\boxed{10}, let me verify that",
                              "finish_reason": "length"}, None),
    "What is 1 + 1?": ("2", {"content": "<|channel|>analysis<|message|>1 + 1 = \\boxed{3}? no.<|end|><|start|>"
                             "assistant<|channel|>final<|message|>\\boxed{2}<|return|>"}, "2"),
    "What is 8 / 2?": ("4", {"content": "analysisCompute 8 / 2 = \\boxed{5}? no, 4.assistantfinalIt is "
                             "\\boxed{4}."}, "4"),
}
TEMPLATE = [
    {"role": "user", "content": "Example: {{x}} + 1 with x = 1?"},
    {"role": "assistant", "content": "<think>x is 1</think> The answer is \\boxed{{2}}."},
    {"role": "user", "content": "Q: {question}\nPut the answer in \\boxed{{}}."},
]
SYSTEM = "You are a careful mathematician. Use {braces} literally."


def _question(body: dict) -> str:
    return re.search(r"Q: (.*)\n", body["messages"][-1]["content"]).group(1)


def _phase1(server, tmp_path, *more):
    tmp_path.mkdir(exist_ok=True)
    questions = write_jsonl(tmp_path / "q.jsonl", [{"id": f"q{i}", "question": q, "answer": gold}
                                                    for i, (q, (gold, _, _)) in enumerate(REPLIES.items())])
    template = tmp_path / "template.json"
    template.write_text(json.dumps(TEMPLATE))
    out = tmp_path / "phase1.jsonl"
    result = cli(["phase1", questions, "-o", str(out), "--backend", "openai", "--base-url", f"{server.url}/v1",
                  "--model", "r1", "--system-prompt", SYSTEM, "--prompt-template", str(template), "-q", *more])
    assert result.exit_code == 0, result.stderr
    return out, template


def test_the_requested_messages_are_sent_and_every_reply_graded_by_its_final_answer(tmp_path):
    with FakeServer(script=lambda body: REPLIES[_question(body)][1]) as server:
        out, template = _phase1(server, tmp_path)
        sent = [r.body["messages"] for r in server.requests]
    assert len(sent) == len(REPLIES)
    for messages in sent:
        question = _question({"messages": messages})
        assert messages == [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": "Example: {x} + 1 with x = 1?"},
            {"role": "assistant", "content": "<think>x is 1</think> The answer is \\boxed{2}."},
            {"role": "user", "content": f"Q: {question}\nPut the answer in \\boxed{{}}."},
        ]
    votes = tmp_path / "votes.jsonl"
    result = cli(["vote", str(out), "-o", str(votes)])
    assert result.exit_code == 0, result.stderr
    for rec in read_jsonl(votes):
        gold, reply, final = REPLIES[rec["question"]]
        sample = rec["samples"][0]
        assert sample["answer"] == final, rec["question"]
        assert rec["prediction"] == final
        assert rec["correct"] is (final == gold)
        assert sample.get("reasoning") == reply.get("reasoning_content")  # kept, never graded
    provenance = read_jsonl(out)[0]["uab"]["phase1"]
    assert provenance["system_prompt"] == SYSTEM and provenance["prompt_template"] == str(template)
    assert len(provenance["prompt_template_sha256"]) == 64


def test_signal_span_answer_scores_the_tokens_after_the_reasoning(tmp_path):
    with FakeServer(script=lambda body: REPLIES[_question(body)][1]) as server:
        out, _ = _phase1(server, tmp_path / "answer", "--signal-span", "answer")
        whole, _ = _phase1(server, tmp_path / "reply")
    by_question = {r["question"]: r["samples"][0] for r in read_jsonl(out)}
    over_reply = {r["question"]: r["samples"][0] for r in read_jsonl(whole)}

    def mean_nll(tokens):
        return -sum(map(token_logprob, tokens)) / len(tokens)

    # the server's reasoning is apart: the answer part is the content's tokens
    assert math.isclose(by_question["What is 9 - 1?"]["anll"], mean_nll(_pieces("So the answer is \\boxed{8}.")))
    # reasoning inline: the tokens after the one that closes it
    after = REPLIES["What is 3 + 4?"][1]["content"].split("</think>")[1]
    assert math.isclose(by_question["What is 3 + 4?"]["anll"], mean_nll(_pieces(after)[1:]))
    # cut inside the reasoning: no answer part, so the whole reply, as without the option
    for q in ("What is 6 + 6?", "What is 5 * 2?"):
        assert by_question[q]["anll"] == over_reply[q]["anll"]
    assert by_question["What is 3 + 4?"]["anll"] != over_reply["What is 3 + 4?"]["anll"]
    assert read_jsonl(out)[0]["uab"]["phase1"]["signal_span"] == "answer"


def test_completions_endpoint_renders_through_the_tokenizers_chat_template(tmp_path):
    transformers = pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    vocab = {"[UNK]": 0, "<eos>": 1}
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="[UNK]")),
        eos_token="<eos>", unk_token="[UNK]",
        chat_template="{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n{% endfor %}"
                      "{% if add_generation_prompt %}<|assistant|><think>\n{% endif %}")
    tok.save_pretrained(tmp_path / "tok")
    questions = write_jsonl(tmp_path / "q.jsonl", [{"id": "a", "question": "What is 3 + 4?", "answer": "7"}])
    base = ["phase1", questions, "--backend", "openai", "--model", "m", "--prompt", "boxed", "-q"]
    with FakeServer() as server:
        result = cli([*base, "-o", str(tmp_path / "p.jsonl"), "--base-url", f"{server.url}/v1",
                      "--endpoint", "completions", "--tokenizer", str(tmp_path / "tok"), "--system-prompt", "S"])
        assert result.exit_code == 0, result.stderr
        assert server.requests[0].body["prompt"] == (
            "<|system|>S\n<|user|>What is 3 + 4?\nPlease reason step by step, and put your final answer within "
            "\\boxed{}.\n<|assistant|><think>\n")
        result = cli([*base, "-o", str(tmp_path / "c.jsonl"), "--base-url", f"{server.url}/v1",
                      "--tokenizer", str(tmp_path / "tok")])
    assert result.exit_code == 2 and "--endpoint completions" in result.stderr


@pytest.mark.parametrize("context", [None, 4096])  # rendered to send it, or to count it first
def test_a_chat_template_that_refuses_the_messages_is_one_error_before_any_request(tmp_path, context):
    """A template's own raise_exception (Gemma's "System role not supported", Mistral's "roles
    must alternate") raised jinja2's TemplateError, a traceback; --system-prompt '' avoids it.
    The local and vllm backends render through the same ChatTokens.text."""
    tok = system_refusing_tokenizer()
    tok.save_pretrained(tmp_path / "tok")
    questions = write_jsonl(tmp_path / "q.jsonl", [{"id": "a", "question": "What is 3 + 4?", "answer": "7"}])
    with FakeServer(max_model_len=context) as server:
        base = ["phase1", questions, "--backend", "openai", "--model", "fake-model", "--base-url", f"{server.url}/v1",
                "--endpoint", "completions", "--tokenizer", str(tmp_path / "tok"), "--max-tokens", "16", "-q"]
        result = cli([*base, "-o", str(tmp_path / "p.jsonl")])
        posts = [r.path for r in server.requests if r.path != "/v1/models"]
        assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.stderr
        assert result.stderr == (f"error: model {str(tmp_path / 'tok')!r} cannot format this chat: System role not "
                                 "supported; --system-prompt '' asks without a system message\n")
        assert posts == [] and not (tmp_path / "p.jsonl").exists()
        assert cli([*base, "--system-prompt", "", "-o", str(tmp_path / "p.jsonl")]).exit_code == 0


def test_completions_prompts_are_counted_as_the_tokenizers_chat_template_renders_them(tmp_path):
    """/tokenize counts the prompt the completions endpoint is sent (it counted the plain 'Role:
    text' rendering: a prompt the template makes too long passed the check, then the server
    refused it mid-run)."""
    pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    import transformers

    preamble = "You are a careful assistant. " * 20
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tokenizers.Tokenizer(tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]")),
        unk_token="[UNK]", chat_template=preamble + "{% for m in messages %}{{ m.content }}\n{% endfor %}")
    tok.save_pretrained(tmp_path / "tok")
    questions = write_jsonl(tmp_path / "q.jsonl", [{"id": "a", "question": "What is 3 + 4?", "answer": "7"}])
    with FakeServer(max_model_len=150) as server:
        result = cli(["phase1", questions, "-o", str(tmp_path / "p.jsonl"), "--backend", "openai", "--model",
                      "fake-model", "--base-url", f"{server.url}/v1", "--endpoint", "completions",
                      "--tokenizer", str(tmp_path / "tok"), "--max-tokens", "16", "-q"])
        paths = [r.path for r in server.requests]
    assert result.exit_code == 2, result.stderr
    assert "question 'a': its prompt has" in result.stderr and "context of 150 tokens" in result.stderr
    assert paths == ["/tokenize"]  # refused before anything was drawn
