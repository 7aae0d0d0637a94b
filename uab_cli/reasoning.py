"""Reasoning models: where a reply's reasoning ends and its final answer begins.

Only the final part is graded: a box written while thinking is a draft, not the answer, and a
reply cut off inside its reasoning has no answer at all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# (opening, closing) marker of each family's reasoning; the answer follows the last closing one.
FAMILIES = (
    # DeepSeek-R1 and its distills, QwQ, Qwen3, Phi-4-reasoning, GLM: <think> ... </think>
    (re.compile(r"<think>"), re.compile(r"</think>")),
    # Magistral
    (re.compile(r"\[THINK\]"), re.compile(r"\[/THINK\]")),
    # Sky-T1, Bespoke-Stratos, OpenThinker (QwQ-distilled): thought, then solution
    (re.compile(r"<\|begin_of_thought\|>"), re.compile(r"<\|end_of_thought\|>")),
    # GPT-OSS (harmony): the analysis channel, then <|channel|>final<|message|>
    (re.compile(r"<\|channel\|>\s*analysis"), re.compile(r"<\|channel\|>\s*final\b.*?<\|message\|>")),
    # harmony decoded with its special tokens skipped: "analysis…assistantfinal…"
    (re.compile(r"^analysis(?=[^\W\d_])"), re.compile(r"assistantfinal")),  # "analysisWe…", not "analysis: …"
)
_HARMONY_END = re.compile(r"\s*<\|(?:return|end|call)\|>\s*$")
_QUOTES = "`'\""


def _quoted(text: str, found: re.Match) -> bool:
    """Whether a marker ``found`` in ``text`` stands between two of the same quote (`` `</think>` ``,
    ``print('</think>')``): one the reply writes about, not one that opens or closes its reasoning."""
    start, end = found.span()
    before = text[start - 1:start]
    return bool(before) and before in _QUOTES and text[end:end + 1] == before


def answer_start(text: str) -> int | None:
    """Where the final part of ``text`` begins: 0 for a reply without reasoning markers, after
    the last closing marker (of any family) otherwise; ``None`` when reasoning was opened after
    it, or opened and never closed (a reply cut off while thinking). A marker in quotes or
    backticks is text about one (``_quoted``). (Every sample's answer and confidence read this:
    plain loops, no function per family.)"""
    start = 0
    for _, closing in FAMILIES:
        for close in closing.finditer(text):
            if not _quoted(text, close):
                start = max(start, close.end())
    # reasoning opened after the last close, of any family: cut while thinking (another family's
    # marker quoted inside the reasoning, "<think>… [THINK] …</think>", opens nothing)
    for opening, _ in FAMILIES:
        found = opening.search(text, start)
        while found and _quoted(text, found):
            found = opening.search(text, found.end())
        if found:
            return None
    return start


def final_text(text: str) -> str | None:
    """The part of a reply that is graded: the text after its reasoning (all of it for a
    model that does not reason), ``None`` when the reasoning was cut off."""
    start = answer_start(text)
    if start is None:
        return None
    return _HARMONY_END.sub("", text[start:]) if start else text


def opening_marker(prompt: str) -> str:
    """The reasoning marker a chat template left open at the end of ``prompt`` (DeepSeek-R1
    distills and QwQ end theirs with ``<think>\\n``), with what follows it; ``""`` if none."""
    for opening, _ in FAMILIES[:3]:
        found = list(opening.finditer(prompt))
        if found and not prompt[found[-1].end():].strip():
            return prompt[found[-1].start():]
    return ""


def answer_logprobs(logprobs: Sequence[float], tokens: Sequence[str] | None, text: str,
                    separated: bool) -> Sequence[float]:
    """The log-probabilities of the answer part of a reply: those of the tokens after its
    reasoning. ``tokens`` are the texts of the generated tokens, one per logprob; ``separated``:
    the server returned the reasoning apart from ``text`` (its logprobs still cover both), so
    the answer part is the tokens that spell ``text`` (where a character split over tokens keeps
    them from spelling it, those after the marker that closes the reasoning). A token that ends the marker and begins
    the answer (``>B`` after ``</think``) is the answer's: the marker's end is certain by then,
    so its logprob is the answer's first word's; one that adds only whitespace is the marker's.
    A reply without an answer part (cut while thinking, or only whitespace after its reasoning),
    or without token texts, is scored over all its tokens."""
    if not tokens or len(tokens) != len(logprobs):
        return logprobs
    joined = "".join(tokens)
    if separated:
        tail = text.strip()
        start = joined.rfind(tail) if tail else -1
        if start < 0 and tail:  # a character split over tokens ("\ufffd" each): after the closing marker
            start = answer_start(joined) or -1
        elif start > 0 and joined[:start].endswith(lead := text[:text.find(tail)]):  # the content's leading "\n\n" is its own
            start -= len(lead)
    else:
        start = answer_start(joined) or -1  # 0: no reasoning, None: no answer part
        if start > 0 and not joined[start:].strip():  # closed, then nothing but whitespace: no answer part
            start = -1
    if start < 0:
        return logprobs
    end = 0
    for i, token in enumerate(tokens):
        end += len(token)
        if end > start:
            head = end - len(token)  # where the token starts: before ``start``, it ends the marker
            answers = head >= start or token[start - head:].strip()
            rest = logprobs[i:] if answers else logprobs[i + 1:]
            return rest or logprobs
    return logprobs
