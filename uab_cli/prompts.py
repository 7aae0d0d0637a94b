"""Chat prompts built from question records: the answer prompt (a built-in preset or the
user's template, with an optional system prompt), the VCS confidence suffix and the LLM-judge
prompt (paper appendix).

A template is a list of chat messages whose contents name the question's fields in braces
(``TEMPLATE_FIELDS``); literal braces are doubled, as in ``str.format``.
"""

from __future__ import annotations

import codecs
import functools
import hashlib
import re
import string
import warnings
from dataclasses import dataclass, field

from .errors import UabError, not_utf8
from .reasoning import final_text
from .records import letters, question_type
from .signals import VCS_INSTRUCTION

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

# The paper's instructions, verbatim from its code (github.com/manhitv/UAB, commit 9eb3c6a,
# src/evaluator.py get_instruction_suffix, the main-table setting: neither --cot nor --bae),
# appended to the question in one user turn with no system prompt (src/main.py). Its MC
# questions list the choices as "(A) text" lines followed by a blank line (src/data/gpqa.py).
_PAPER_MATH = (" Put your final answer in \\boxed{{answer}} at the very end of your response, e.g. "
               "\\boxed{{\\frac{{1}}{{2}}}} or \\boxed{{3.14}}.")  # MATH-500, Minerva
_PAPER_CURLY = (' Make sure to state your final answer in curly brackets at the very end of your response, '
                'just like: "{{final answer: 123}}".')  # GSM8K, DeepScaleR
_PAPER_MC = (' Make sure to state your final answer choice in curly brackets at the very end of your '
             'response, just like: "{{final answer: (A)}}".')  # GPQA, MMLU, HH-RLHF
_PAPER_TEXT = (' Make sure to state your final answer in curly brackets at the very end of your response, '
               'just like: "{{final answer: X}}".')  # HLE
_PAPER_MC_QUESTION = "{stem}\n{choices}\n\n"
# The common chain-of-thought request of math reasoning models (DeepSeek-R1's usage notes,
# Qwen2.5-Math's evaluation), in the user turn as DeepSeek-R1 recommends.
BOXED_INSTRUCTION = "Please reason step by step, and put your final answer within \\boxed{{}}."


def _user(content: str) -> tuple[dict, ...]:
    return ({"role": "user", "content": content},)


def _uab(examples: bool) -> dict[str, tuple[dict, ...]]:
    out = {}
    for kind, pairs in _EXAMPLES.items():
        messages = [{"role": "system", "content": _INSTRUCTION}]
        for q, a in pairs if examples else ():
            messages += [{"role": "user", "content": _escape(q)}, {"role": "assistant", "content": _escape(a)}]
        out[kind] = (*messages, {"role": "user", "content": "{question}"})
    return out


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


# Built-in prompts: name -> (one-line summary, template per question type).
PRESETS: dict[str, tuple[str, dict[str, tuple[dict, ...]]]] = {
    "fewshot": ("uab's instruction (end with 'Answer: <answer>') and two worked examples", _uab(True)),
    "zeroshot": ("uab's instruction alone", _uab(False)),
    "paper": ("the paper's code: one user turn; \\boxed{} for math (its MATH-500), "
              "{final answer: (A)} for multiple choice", {
                  "math": _user("{stem}" + _PAPER_MATH),
                  "mc": _user(_PAPER_MC_QUESTION + _PAPER_MC),
                  "text": _user("{stem}" + _PAPER_TEXT)}),
    "paper-curly": ("the paper's code, {final answer: 123} for math (its GSM8K and DeepScaleR runs)", {
        "math": _user("{stem}" + _PAPER_CURLY),
        "mc": _user(_PAPER_MC_QUESTION + _PAPER_MC),
        "text": _user("{stem}" + _PAPER_TEXT)}),
    "boxed": ("'Please reason step by step, and put your final answer within \\boxed{}.' after the question "
              "(DeepSeek-R1, Qwen2.5-Math)", {kind: _user("{question}\n" + BOXED_INSTRUCTION) for kind in _EXAMPLES}),
}
# What a template may name: question -> its text in a prompt.
TEMPLATE_FIELDS = {
    "question": "the question, multiple-choice options listed as 'A. text' lines",
    "stem": "the question alone",
    "choices": "the options as '(A) text' lines (the paper's form; empty without options)",
}
ROLES = ("system", "user", "assistant")


def question_text(rec: dict) -> str:
    """The question as shown to the model: choices listed as ``A. ...`` lines for MC."""
    text = rec["question"].strip()
    if rec.get("choices"):
        text += "\n" + "\n".join(f"{l}. {c}" for l, c in zip(letters(len(rec["choices"])), rec["choices"]))
    return text


def _fields(rec: dict) -> dict[str, str]:
    choices = rec.get("choices") or []
    return {"question": question_text(rec), "stem": rec["question"].strip(),
            "choices": "\n".join(f"({l}) {c}" for l, c in zip(letters(len(choices)), choices))}


@dataclass(frozen=True)
class Prompt:
    """What a sample is asked: a preset (``PRESETS``) or a template's messages, and a system
    prompt that replaces theirs (``""``: none)."""

    preset: str = "fewshot"
    system: str | None = None
    template: tuple[dict, ...] | None = None
    # the question types whose options this prompt has warned it drops: a warning once per type,
    # however often (and from wherever) the messages are made
    _warned: set = field(default_factory=set, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.preset not in PRESETS:
            raise ValueError(f"unknown prompt style {self.preset!r}")

    def _base(self, kind: str) -> tuple[dict, ...]:
        """The messages that ask a question of type ``kind``, fields unfilled."""
        return self.template if self.template is not None else PRESETS[self.preset][1][kind]

    def _shows(self, kind: str, replaced: bool) -> bool:
        """Whether the messages of question type ``kind`` show a question's options ({question}
        lists them, {choices} is them) in a message they ask; ``replaced``: not counting the
        system messages ``system`` replaces."""
        named = {f for m in self._base(kind) if not replaced or m["role"] != "system"
                 for _, f, _, _ in string.Formatter().parse(m["content"]) if f}
        return bool(named & {"question", "choices"})

    @functools.cached_property
    def _shows_choices(self) -> dict[str, bool]:
        """Per question type, whether its messages show a question's options (``_shows``)."""
        return {kind: self._shows(kind, self.system is not None) for kind in _EXAMPLES}

    def messages(self, rec: dict, vcs: bool = False) -> tuple[dict, ...]:
        """The chat conversation that asks the model to answer ``rec``; with ``vcs`` the
        confidence request ends its last user message. A question with options that its messages
        do not show is asked without them: said in a warning."""
        kind = question_type(rec)
        base = self._base(kind)
        if rec.get("choices") and not self._shows_choices.get(kind, True) and kind not in self._warned:
            self._warned.add(kind)
            if self.template is None:
                asker = f"the {self.preset!r} prompt asks a question of type {kind!r} by its stem alone"
            elif self._shows(kind, False):  # only in a system message, which --system-prompt replaces
                asker = ("only a system message of the prompt template shows the options, and --system-prompt "
                         "replaces it")
            else:
                asker = "the prompt template names neither {question} nor {choices}"
            warnings.warn(f"{asker}: questions with 'choices' are asked without their options", UserWarning,
                          stacklevel=2)
        values = _fields(rec)
        messages = [{"role": m["role"], "content": m["content"].format(**values)} for m in base]
        if self.system is not None:
            messages = [m for m in messages if m["role"] != "system"]
            if self.system:
                messages.insert(0, {"role": "system", "content": self.system})
        if vcs:
            last = max(i for i, m in enumerate(messages) if m["role"] == "user")
            messages[last] = {**messages[last], "content": messages[last]["content"] + "\n\n" + VCS_INSTRUCTION}
        return tuple(messages)


def answer_messages(rec: dict, style: str = "fewshot", vcs: bool = False) -> tuple[dict, ...]:
    """The chat conversation a built-in prompt ``style`` makes for ``rec``."""
    return Prompt(style).messages(rec, vcs)


def load_template(path: str, replaces_system: bool = False) -> tuple[tuple[dict, ...], str]:
    """A ``--prompt-template`` file's messages, checked, and the sha256 of its bytes. The file is
    a JSON list of ``{"role", "content"}`` messages ending with a user turn; contents name
    ``TEMPLATE_FIELDS`` in braces, literal braces doubled. ``replaces_system``: a
    ``--system-prompt`` replaces its system messages, so the question must be named in another."""
    import orjson

    if not path:  # no file to name: the option
        raise UabError("--prompt-template: the path is empty (give a JSON file of chat messages)")
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise UabError(f"cannot read the prompt template: {exc.strerror}", path) from None
    bom = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0  # no content, as in a JSONL input
    try:
        text = data[bom:].decode("utf-8")
    except UnicodeDecodeError as exc:  # orjson says "surrogates not allowed" at column 1, whatever the byte
        raise not_utf8(data[bom:], exc.start, path) from None
    try:
        messages = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise UabError(f"prompt template is not JSON: {exc.msg} (column {exc.colno})", path, exc.lineno) from None
    if not isinstance(messages, list) or not messages:
        raise UabError('a prompt template is a JSON list of messages: [{"role": "user", "content": "{question}"}]',
                       path)
    named, in_system = set(), set()
    for n, m in enumerate(messages, 1):
        if not isinstance(m, dict) or set(m) != {"role", "content"} or not isinstance(m.get("content"), str):
            raise UabError(f'message {n}: expected {{"role": ..., "content": "text"}}, got {_short(m)}', path)
        if m["role"] not in ROLES:
            raise UabError(f"message {n}: role must be one of {', '.join(ROLES)}, got {m['role']!r}", path)
        fields_ = _check_fields(m["content"], f"message {n}", path)
        if replaces_system and m["role"] == "system":
            in_system |= fields_
        else:
            named |= fields_
    if messages[-1]["role"] != "user":
        raise UabError("the last message must be the user's (the model answers it)", path)
    if not named & {"question", "stem"}:
        if in_system & {"question", "stem"}:
            raise UabError("only a system message names the question, and --system-prompt replaces it: put "
                           "{question} (or {stem}) in a user turn", path)
        raise UabError("no message names the question: put {question} (or {stem}) in one", path)
    return tuple(messages), hashlib.sha256(data).hexdigest()


def _check_fields(text: str, where: str, path: str) -> set[str]:
    """The fields ``text`` names; ``UabError`` for an unknown one, a format spec or a lone brace."""
    hint = f"use {', '.join('{' + f + '}' for f in TEMPLATE_FIELDS)}; write a literal brace twice ({{{{ }}}})"
    try:
        parts = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise UabError(f"{where}: {exc}; {hint}", path) from None
    found = set()
    for _, name, spec, conversion in parts:
        if name is None:
            continue
        if name not in TEMPLATE_FIELDS or spec or conversion:
            shown = "{" + name + ("!" + conversion if conversion else "") + (":" + spec if spec else "") + "}"
            raise UabError(f"{where}: unknown field {shown}; {hint}", path)
        found.add(name)
    return found


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


JUDGE_PROMPT = (
    "Is the following question easy or hard for a language model to answer correctly? "
    "Respond with a single word: easy or hard.\n\n{question}"
)


def judge_messages(rec: dict) -> tuple[dict, ...]:
    """The paper's zero-shot LLM-judge prompt for one question."""
    return ({"role": "user", "content": JUDGE_PROMPT.format(question=question_text(rec))},)


# A verdict word and the negation before it: "not easy", "isn't hard", "not too hard", "not that easy"
_VERDICT = re.compile(r"(?:\b(not|never)|(n['\u2019]t))?\s*(?:\b(?:too|very|so|that|all that|particularly|"
                      r"especially|overly|really)\s+)?\b(easy|hard)\b")


def parse_judge(text: str) -> str | None:
    """``easy`` or ``hard`` from a judge response's final part (a reasoning model's thinking is a
    draft, as for an answer); ``None`` when it says neither (or both), or was cut off while thinking.
    A negated word says the other ("not easy", "isn't easy", "not too easy": hard)."""
    found = [(a or b, word) for a, b, word in _VERDICT.findall((final_text(text or "") or "").lower())]
    words = {word if not negated else {"easy": "hard", "hard": "easy"}[word] for negated, word in found}
    return words.pop() if len(words) == 1 else None
