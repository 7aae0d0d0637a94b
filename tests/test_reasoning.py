"""Reasoning models: the final part of a reply is what is graded, a reply cut inside its
reasoning has no answer, a server's separate reasoning is kept, and the answer-only signal
covers the tokens after the reasoning.

tests/data/reasoning_corpus.jsonl holds real replies of Sky-T1 models (trained on QwQ-32B-Preview
reasoning traces; their <|begin_of_thought|> … <|end_of_thought|> then the solution) to MATH-500,
Minerva-Math and AIME 2024 with the benchmark's gold: ``expected`` is the grade of the final
answer, ``null`` where the reply has none (cut off while thinking, or before its solution
states one); ``source`` names the public repository, commit, file, licence and row.
"""

from __future__ import annotations

import collections
import pathlib

import orjson
import pytest

from uab_cli.answers import extract_answer, is_correct
from uab_cli.backends.base import Completion
from uab_cli.errors import UabError
from uab_cli.pipeline import RegradeSummary, make_sample, regrade
from uab_cli.reasoning import answer_logprobs, answer_start, final_text, opening_marker
from uab_cli.records import check_record

CORPUS = pathlib.Path(__file__).parent / "data" / "reasoning_corpus.jsonl"
ROWS = [orjson.loads(line) for line in CORPUS.read_bytes().splitlines()]


@pytest.mark.parametrize("row", ROWS, ids=[f"{i}-{r['class']}" for i, r in enumerate(ROWS)])
def test_real_reasoning_reply_grades_as_its_final_answer(row):
    rec = {"id": "q", "question": "q", "answer": row["gold"]}
    sample = make_sample(Completion(row["response"], None, 0, "length"), rec, 0, 1, 0)
    graded = None if sample["answer"] is None else is_correct(rec, sample["answer"])
    assert graded is row["expected"], (sample["answer"], row["source"])


def test_regrade_reads_every_corpus_reply_as_a_fresh_sample_does():
    """``regrade`` takes the code path a drawn sample takes: the final part after the reasoning,
    none where the reasoning was cut off."""
    for row in ROWS:
        rec = {"id": "q", "question": "q", "answer": row["gold"]}
        fresh = make_sample(Completion(row["response"], None, 0, "length"), rec, 0, 1, 0)
        stale = {**rec, "samples": [{"index": 0, "phase": 1, "text": row["response"], "answer": "stale"}]}
        summary = RegradeSummary()
        assert regrade(stale, summary)["samples"][0]["answer"] == fresh["answer"], row["source"]
        assert summary.changed == 1 and summary.now_wrong == 0


def test_corpus_is_real_and_covers_each_case():
    seen = collections.Counter((r["class"], r["expected"]) for r in ROWS)
    assert len(ROWS) >= 25
    assert seen[("final", True)] and seen[("final", False)] and seen[("decoy", False)]
    assert seen[("cut_thought", None)] >= 5 and seen[("cut_solution", None)]
    assert all("(Apache-2.0)" in r["source"] and "@" in r["source"] for r in ROWS)
    # a draft inside the reasoning would have graded these otherwise
    cut = [r for r in ROWS if r["expected"] is None]
    assert sum(extract_answer(r["response"], {"question": "q", "answer": r["gold"]}) is not None for r in cut) >= 5


@pytest.mark.parametrize("text, final", [
    ("no reasoning here: \\boxed{1}", "no reasoning here: \\boxed{1}"),
    ("<think>\\boxed{1}</think>\n\\boxed{2}", "\n\\boxed{2}"),
    ("reasoning opened by the template \\boxed{1}\n</think>\n\nAnswer: 2", "\n\nAnswer: 2"),
    ("<think>still thinking \\boxed{1}", None),
    ("<think>a</think> b <think>thinking again \\boxed{3}", None),
    ("[THINK]x \\boxed{1}[/THINK]\\boxed{2}", "\\boxed{2}"),
    ("[THINK]x \\boxed{1}", None),
    ("<|begin_of_thought|>x<|end_of_thought|>\n<|begin_of_solution|>\\boxed{2}<|end_of_solution|>",
     "\n<|begin_of_solution|>\\boxed{2}<|end_of_solution|>"),
    ("<|begin_of_thought|>\\boxed{1}", None),
    ("<|channel|>analysis<|message|>\\boxed{1}<|end|><|start|>assistant<|channel|>final<|message|>\\boxed{2}<|return|>",
     "\\boxed{2}"),
    ("<|channel|>analysis<|message|>\\boxed{1} and so on", None),
    ("analysisWe need \\boxed{1}.assistantfinal\\boxed{2}", "\\boxed{2}"),
    ("analysisWe need \\boxed{1}, more", None),
    ("The analysis shows \\boxed{3}", "The analysis shows \\boxed{3}"),
    ("analysis: 2+3 = 5.\nAnswer: 5", "analysis: 2+3 = 5.\nAnswer: 5"),  # a plain reply, not decoded harmony
    ("analysis—2+3 = 5", "analysis—2+3 = 5"),
    # another family's opening marker quoted inside closed reasoning opens nothing (it read as cut)
    ("<think>Magistral opens with [THINK], harmony with <|channel|>analysis; \\boxed{1}</think>\n\\boxed{2}",
     "\n\\boxed{2}"),
    ("[THINK]R1 writes <think> first[/THINK]\\boxed{2}", "\\boxed{2}"),
    ("<think>a</think> b [THINK]thinking again \\boxed{3}", None),  # opened again after the close: cut
    # a marker quoted in the answer is text about one: it neither ends the reasoning again (the
    # answer before it was lost) nor opens it (the reply read as cut while thinking)
    ("<think>a</think>\nSo \\boxed{2}; the reasoning ends at `</think>`.", "\nSo \\boxed{2}; the reasoning ends at `</think>`."),
    ("a</think>\nSo \\boxed{2}, and `<think>` opens it", "\nSo \\boxed{2}, and `<think>` opens it"),
    ("<think>a</think>\\boxed{2}\nprint(\"[/THINK]\")", "\\boxed{2}\nprint(\"[/THINK]\")"),
    ("<think>must I write '</think>' now? \\boxed{1}", None),  # quoted inside open reasoning: still cut
    ("<think>`x`</think>\\boxed{2}", "\\boxed{2}"),  # a real marker after a code span still closes
])
def test_final_part_of_each_family(text, final):
    assert final_text(text) == final


def test_a_template_that_opens_the_reasoning_is_seen():
    assert opening_marker("<｜User｜>q<｜Assistant｜><think>\n") == "<think>\n"
    assert opening_marker("<|im_start|>assistant\n<think>\n\n</think>\n\n") == ""  # Qwen3, thinking off
    assert opening_marker("<|im_start|>assistant\n") == ""


def test_answer_logprobs_start_after_the_token_that_closes_the_reasoning():
    tokens = ["<think>", "a ", "b", "</think>", "\n\n", "The ", "answer"]
    logprobs = [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0]
    text = "".join(tokens)
    assert answer_start(text) == len("<think>a b</think>")
    assert list(answer_logprobs(logprobs, tokens, text, False)) == [-5.0, -6.0, -7.0]
    # a token that straddles the marker's end is the marker's
    assert list(answer_logprobs([-1.0, -2.0, -3.0], ["<think>x", "</think>\n", "42"], "", False)) == [-3.0]
    # the server returned the reasoning apart: the tokens that spell the content
    assert list(answer_logprobs(logprobs, tokens, "The answer", True)) == [-6.0, -7.0]
    # cut off, no reasoning, or no token texts: every token
    assert list(answer_logprobs(logprobs[:3], tokens[:3], "", False)) == logprobs[:3]
    assert list(answer_logprobs([-1.0, -2.0], ["4", "2"], "42", False)) == [-1.0, -2.0]
    assert list(answer_logprobs(logprobs, None, text, False)) == logprobs


def test_a_reply_with_only_whitespace_after_its_reasoning_is_scored_over_every_token():
    """A reply that closes its reasoning and then ends (EOS, or cut at --max-tokens) has no answer
    part, as when the server returns the reasoning apart: its answer-span ANLL was the NLL of the
    lone "\n\n" token after "</think>", a near-certain score for a reply that answers nothing."""
    tokens = ["<think>", "a ", "b", "</think>", "\n\n", ""]  # the last: EOS, decoded without special tokens
    logprobs = [-1.0, -2.0, -3.0, -4.0, -0.01, -0.5]
    text = "".join(tokens)
    assert final_text(text).strip() == ""
    assert list(answer_logprobs(logprobs, tokens, text, False)) == logprobs
    assert list(answer_logprobs(logprobs[:5], tokens[:5], text, False)) == logprobs[:5]
    rec = {"id": "q", "question": "What is 2 + 2?", "answer": "4"}
    sample = make_sample(Completion(text, tuple(logprobs), 6, "stop", tokens=tuple(tokens)), rec, 0, 1, 7, "answer")
    assert sample["answer"] is None and sample["anll"] == pytest.approx(-sum(logprobs) / len(logprobs))


def test_a_token_that_ends_the_marker_and_begins_the_answer_is_the_answers():
    # Qwen2's and Llama 3's pre-tokenisers join one punctuation mark to the letters after it:
    # a plain-text "</think>" before a choice letter ends in the token ">B", the answer's only word
    tokens = ["x", "</", "think", ">B", ".", ""]  # the last: EOS, decoded without special tokens
    logprobs = [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0]
    assert list(answer_logprobs(logprobs, tokens, "", False)) == [-4.0, -5.0, -6.0]
    # the answer's one token, not the whole reply
    assert list(answer_logprobs(logprobs[:4], tokens[:4], "", False)) == [-4.0]
    # the server returned the reasoning apart and a token spans both
    assert list(answer_logprobs(logprobs[:5], ["x", "</", "think", ">B", "."], "B.", True)) == [-4.0, -5.0]


def test_sample_keeps_the_servers_reasoning_and_reads_confidence_from_the_final_part():
    rec = {"id": "q", "question": "What is 2 + 2?", "answer": "4"}
    done = Completion("<think>Confidence: 2, \\boxed{5}</think>\\boxed{4}\nConfidence: 9", (-0.1,), 1, "stop")
    sample = make_sample(done, rec, 0, 1, 7)
    assert sample["answer"] == "4" and sample["confidence"] == 9 and "reasoning" not in sample
    cut = make_sample(Completion("<think>Confidence: 8 \\boxed{4}", (-0.1,), 1, "length"), rec, 0, 1, 7)
    assert cut["answer"] is None and cut["confidence"] is None and cut["anll"] == pytest.approx(0.1)
    apart = make_sample(Completion("\\boxed{4}", None, 3, "stop", reasoning="maybe \\boxed{5}"), rec, 0, 1, 7)
    assert apart["answer"] == "4" and apart["reasoning"] == "maybe \\boxed{5}"
    check_record({**rec, "samples": [apart]})
    with pytest.raises(UabError, match="'reasoning' must be a string or null"):
        check_record({**rec, "samples": [{**apart, "reasoning": ["x"]}]})


def test_a_vllm_reply_starts_with_the_marker_its_prompt_left_open():
    from types import SimpleNamespace as NS

    from uab_cli.backends.vllm import to_completion

    def position(token_id, text):
        return {token_id: NS(logprob=-0.5 * token_id, decoded_token=text)}

    def output(texts, prompt):
        sample = NS(text="".join(texts), token_ids=list(range(1, len(texts) + 1)), finish_reason="length",
                    logprobs=[position(i, t) for i, t in enumerate(texts, 1)])
        return NS(request_id="r", prompt=prompt, outputs=[sample])

    cut = to_completion(output(["So ", "\\boxed{3}"], "<｜User｜>q<｜Assistant｜><think>\n"))
    assert cut.text == "<think>\nSo \\boxed{3}" and final_text(cut.text) is None and cut.tokens is None
    done = to_completion(output(["So ", "</think>", "\\boxed{3}"], "<|im_start|>assistant\n"))
    assert done.text == "So </think>\\boxed{3}" and done.tokens == ("So ", "</think>", "\\boxed{3}")
    assert list(answer_logprobs(done.token_logprobs, done.tokens, done.text, False)) == [-1.5]


def test_a_servers_content_is_scored_over_the_tokens_of_its_reasoning_inline():
    """vLLM's reasoning parsers return the text after ``</think>`` as the content, its leading
    "\n\n" included: the answer span left out that token, which the same reply with its
    reasoning inline (and the separated one whose content the tokens do not spell) counts."""
    tokens = ["9 - 1", " is", " 8", "</think>", "\n\n", "So", " 8"]
    logprobs = [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0]
    inline = list(answer_logprobs(logprobs, tokens, "".join(tokens), False))
    assert inline == [-5.0, -6.0, -7.0]
    assert list(answer_logprobs(logprobs, tokens, "\n\nSo 8", True)) == inline
    # a token that ends the marker with the whitespace is the marker's, either way
    joined = ["9 - 1", " is", " 8", "</think>\n\n", "So", " 8"]
    assert list(answer_logprobs(logprobs[1:], joined, "\n\nSo 8", True)) == [-6.0, -7.0]
    assert list(answer_logprobs(logprobs[1:], joined, "".join(joined), False)) == [-6.0, -7.0]


def test_a_character_split_over_tokens_keeps_the_servers_content_the_answer_part():
    """A character of the content that the tokenizer splits over byte tokens decodes as one
    replacement character per token, so the token texts never spell the content: the answer
    span was silently the whole reply, the reasoning's tokens included."""
    tokens = ["9 - 1", " is", " 8", "</think>", "\n\n", "So", " \ufffd", "\ufffd", " 8"]
    logprobs = [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0, -9.0]
    assert list(answer_logprobs(logprobs, tokens, "So ∴ 8", True)) == [-5.0, -6.0, -7.0, -8.0, -9.0]
    # content that is all whitespace, or a reply without the marker in its tokens: still every token
    assert list(answer_logprobs(logprobs, tokens, "\n", True)) == logprobs
    assert list(answer_logprobs(logprobs[5:], tokens[5:], "So ∴ 8", True)) == logprobs[5:]
