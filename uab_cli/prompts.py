"""Chat prompts built from question records: answer prompts (few-shot or zero-shot),
the VCS confidence suffix and the LLM-judge prompt (paper appendix)."""

from __future__ import annotations

import re

from .records import letters, question_type
from .signals import VCS_INSTRUCTION

PROMPT_STYLES = ("fewshot", "zeroshot")

_INSTRUCTION = "Solve the problem. End your response with a final line of the form 'Answer: <answer>'."

# Small models ignore a zero-shot format request; two worked examples ending in
# "Answer: ..." make them answer in a form the extractor reads.
_EXAMPLES = {
    "math": [
        ("What is 12 + 51?", "12 + 51 = 63.\nAnswer: 63"),
        ("What is 9 × 4?", "9 × 4 = 36.\nAnswer: 36"),
    ],
    "mc": [
        (
            "Which number is even?\nA. 3\nB. 7\nC. 10\nD. 15",
            "3, 7 and 15 are odd; 10 is divisible by 2.\nAnswer: C",
        ),
        (
            "If all cats are animals and Tom is a cat, then Tom is:\nA. an animal\nB. a dog\nC. a plant\nD. none of these",
            "Tom is a cat, and every cat is an animal.\nAnswer: A",
        ),
    ],
    "text": [
        ("What is the capital of France?", "France's capital city is Paris.\nAnswer: Paris"),
        ("What colour is a clear daytime sky?", "On a clear day the sky looks blue.\nAnswer: blue"),
    ],
}

JUDGE_PROMPT = (
    "Is the following question easy or hard for a language model to answer correctly? "
    "Respond with a single word: easy or hard.\n\n{question}"
)


def question_text(rec: dict) -> str:
    """The question as shown to the model: choices listed as ``A. ...`` lines for MC."""
    text = rec["question"].strip()
    if rec.get("choices"):
        text += "\n" + "\n".join(f"{l}. {c}" for l, c in zip(letters(len(rec["choices"])), rec["choices"]))
    return text


def answer_messages(rec: dict, style: str = "fewshot", vcs: bool = False) -> tuple[dict, ...]:
    """The chat conversation that asks the model to answer ``rec``."""
    if style not in PROMPT_STYLES:
        raise ValueError(f"unknown prompt style {style!r}")
    messages: list[dict] = [{"role": "system", "content": _INSTRUCTION}]
    if style == "fewshot":
        for q, a in _EXAMPLES[question_type(rec)]:
            messages += [{"role": "user", "content": q}, {"role": "assistant", "content": a}]
    content = question_text(rec)
    if vcs:
        content += "\n\n" + VCS_INSTRUCTION
    messages.append({"role": "user", "content": content})
    return tuple(messages)


def judge_messages(rec: dict) -> tuple[dict, ...]:
    """The paper's zero-shot LLM-judge prompt for one question."""
    return ({"role": "user", "content": JUDGE_PROMPT.format(question=question_text(rec))},)


def parse_judge(text: str) -> str | None:
    """``easy`` or ``hard`` from a judge response; ``None`` when it says neither (or both)."""
    words = set(re.findall(r"\b(easy|hard)\b", (text or "").lower()))
    return words.pop() if len(words) == 1 else None
