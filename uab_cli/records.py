"""The JSONL record format: field names, validation per stage, provenance.

This is the only module that knows the schema. A record is a plain dict so that fields
uab does not know pass through every stage untouched. Reading and writing the files is
``jsonl``'s job.
"""

from __future__ import annotations

import hashlib
import math
import unicodedata
from collections.abc import Iterable

import orjson

from .errors import UabError

TYPES = ("math", "mc", "text")
MIN_CHOICES, MAX_CHOICES = 2, 26  # a multiple-choice question offers a choice; letters A-Z
PROVENANCE = "uab"  # per-record field holding what produced the record, stage by stage


def letters(n: int) -> list[str]:
    """Choice letters for n choices: A, B, C, ..."""
    return [chr(ord("A") + i) for i in range(n)]


class NotARecord(UabError):
    """A row with no id, a numeric id or no question: a benchmark export's row, most likely,
    which ``uab convert`` makes a question record of (``jsonl`` adds how, at the question stage)."""


def validate_batch(batch: list[dict], stage: str, name: str, first_line: int, seen: set[str] | None = None) -> None:
    """Check each record for ``stage`` and, given the ``seen`` ids, that its id is new;
    ``FILE:LINE: message`` if not."""
    for lineno, rec in enumerate(batch, first_line):
        try:
            check_record(rec, stage)
        except UabError as exc:
            raise type(exc)(exc.message, name, lineno) from None
        if seen is not None:
            n = len(seen)
            seen.add(rec["id"])
            if len(seen) == n:
                raise UabError(f"duplicate id {rec['id']!r}", name, lineno)


def check_record(rec: dict, stage: str = "question") -> None:
    """Raise ``UabError`` (without a location) if ``rec`` is not valid input for ``stage``."""
    _check_question(rec)
    samples = rec.get("samples")
    if (samples is None or samples == []) and stage in ("sampled", "allocated"):
        raise UabError(f"record {rec['id']!r} has no {'samples' if samples == [] else repr('samples')}: "
                       "run `uab phase1` first")
    if samples is not None:  # at every stage: Phase 1 keeps the samples a record comes with
        if type(samples) is not list:
            raise UabError("'samples' must be a list of objects")
        for s in samples:
            check_sample(s)
        if len(samples) > 1:  # a sample given twice (a line copied by hand) would vote and count twice
            _check_indices(rec["id"], samples)
    if stage in ("sampled", "allocated"):  # vote reads an 'extra' it finds: how many Phase-2 samples count
        extra = rec.get("extra")
        if extra is None and stage == "allocated":
            raise UabError(f"record {rec['id']!r} has no 'extra': run `uab allocate` first")
        if extra is not None and (not is_int(extra) or extra < 0):
            raise UabError(f"'extra' must be a non-negative integer, got {extra!r}")
        if extra and stage == "allocated":  # what phase2 draws (vote only counts what it finds)
            _check_allotted(rec, extra)


def _check_indices(rid: str, samples: list[dict]) -> None:
    """``UabError`` naming the first sample ``index`` that two of a record's samples share (one
    sample given twice); samples without an index are not compared."""
    seen: set[int] = set()
    for s in samples:
        if (i := s.get("index")) is None:
            continue
        if i in seen:
            raise UabError(f"record {rid!r} holds sample index {i} twice: each sample once (remove the copy)")
        seen.add(i)


# Phase-2 samples one question may take where no allocation in its provenance sets a budget:
# phase2 holds every sample (and, before drawing, every request) in memory.
MAX_UNALLOCATED_EXTRA = 10**6


def _check_allotted(rec: dict, extra: int) -> None:
    """``UabError`` if Phase-1 samples plus ``extra`` exceed what the allocation recorded in the
    record's provenance could give one question: its budget N·M, or its --max-per-question
    (an edited 'extra' would overrun the budget; a huge one ran Phase 2 out of memory); without
    such an allocation, if ``extra`` is beyond ``MAX_UNALLOCATED_EXTRA``."""
    info = provenance(rec).get("allocate")
    if type(info) is not dict:
        if extra > MAX_UNALLOCATED_EXTRA:
            raise UabError(f"'extra' {extra:,} is more Phase-2 samples than one question takes without an "
                           f"allocation (at most {MAX_UNALLOCATED_EXTRA:,}: phase2 holds every sample in memory): "
                           "check it, or set it with `uab allocate`")
        return
    held = len(samples(rec, 1))
    for key, what in (("max_per_question", "--max-per-question"), ("budget", "budget N·M")):
        cap = info.get(key)
        if is_int(cap) and held + extra > cap:
            raise UabError(f"'extra' {extra} over {held} Phase-1 sample(s) is more than its allocation's {what} "
                           f"({cap}, in its provenance) gives one question: run `uab allocate` again")


def is_int(x) -> bool:
    """An integer that is not a bool (JSON true/false are not counts)."""
    return isinstance(x, int) and not isinstance(x, bool)


def _check_question(rec: dict) -> None:
    # Exact-type tests first (what JSON gives), isinstance only for subclasses: this runs per record.
    rid = rec.get("id")
    if type(rid) is not str or not rid:
        if "id" not in rec:
            results = {"simulation", "recommendation", "check", "deciles", "cost_at_accuracy"} & set(rec) or \
                {"allocator", "accuracy"} <= set(rec)
            if results:
                raise UabError("missing field 'id': this is a `uab simulate -o` results file (for `uab report`, "
                               "or `uab run --settings`), not records")
            raise NotARecord("missing field 'id'")
        if not isinstance(rid, str) or not rid:
            error = NotARecord if isinstance(rid, (int, float)) and not isinstance(rid, bool) else UabError
            raise error(f"'id' must be a non-empty string, got {rid!r}")
    q = rec.get("question")
    if type(q) is not str or not q or q.isspace():
        if q is None:
            error = UabError if "question" in rec else NotARecord  # null, or no such field (an export's "problem")
            raise error(f"record {rid!r} has no 'question'" + _did_you_mean(rec, "question"))
        if not isinstance(q, str) or not q.strip():
            raise UabError("'question' must be a non-empty string")
    gold = rec.get("answer")
    if gold is not None and type(gold) not in _SCALARS and (not isinstance(gold, _SCALARS) or isinstance(gold, bool)):
        raise UabError(f"'answer' must be a string or number, got {type(gold).__name__}")
    if type(gold) is float and gold.is_integer() and abs(gold) >= 2**63:  # JSON's reader made it a float
        raise UabError(f"'answer' {gold!r}: an integer beyond 64 bits is read inexactly; write it as a JSON string")
    choices = rec.get("choices")
    if choices is not None:
        if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
            raise UabError(f"'choices' must be a list of at least {MIN_CHOICES} strings")
        if len(choices) < MIN_CHOICES:
            raise UabError(f"'choices' must be a list of at least {MIN_CHOICES} strings, got {len(choices)}")
        if len(choices) > MAX_CHOICES:
            raise UabError(f"at most {MAX_CHOICES} choices (letters A-Z)")
        if gold is not None and gold_letter(rec) is None:
            raise UabError(
                f"gold answer {gold!r} is neither a choice letter "
                f"{letters(len(choices))[0]}-{letters(len(choices))[-1]} nor a choice text"
            )
    prov = rec.get(PROVENANCE)
    if prov is not None and type(prov) is not dict:
        raise UabError(f"'{PROVENANCE}' (what produced the record) must be an object, got {type(prov).__name__}")
    for stage, info in (prov or {}).items():
        if type(info) is not dict and stage in STAGES:
            raise UabError(f"'{PROVENANCE}.{stage}' (what produced the record) must be an object, got {type(info).__name__}")
    level = rec.get("level")
    if level is not None and type(level) not in _SCALARS:
        raise UabError(f"'level' must be a string or number, got {type(level).__name__}")
    t = rec.get("type")
    if t is not None and t not in TYPES:
        raise UabError(f"'type' must be one of {', '.join(TYPES)}, got {t!r}")
    if t == "mc" and choices is None:
        raise UabError("type 'mc' needs 'choices'")


_SCALARS = (str, int, float)


def level_name(level) -> str:
    """The group a question's difficulty ``level`` falls in, as per-level results name it (``simulate``'s
    ``by_level`` keys, ``vote``'s table): its text, so that ``1`` and ``"1"`` are one level."""
    return str(level)


def level_order(name: str) -> tuple:
    """Where a level's ``level_name`` sorts: numbers by value first, then the other names."""
    try:
        value = float(name)
    except ValueError:
        value = math.nan
    return (0, value, name) if math.isfinite(value) else (1, 0.0, name)


STAGES = ("phase1", "allocate", "phase2", "vote")  # the stages, each recorded in provenance under its name
_STATS = ("anll", "total_nll", "max_nll", "nll_var")
COUNTS = ("n_tokens", "prompt_tokens")  # a sample's completion and prompt tokens
_NUMBER_OR_NONE = (int, float, type(None))


def check_sample(s: dict) -> None:
    if type(s) is not dict:
        raise UabError("'samples' must be a list of objects")
    get = s.get
    if type(get("text")) is not str:
        raise UabError("each sample needs a string 'text'")
    if type(get("phase")) is not int or get("phase") not in (1, 2):
        raise UabError(f"sample 'phase' must be 1 or 2, got {get('phase')!r}")
    i = get("index")
    if i is not None and (type(i) is not int or i < 0):
        raise UabError(f"sample 'index' must be a non-negative integer, got {i!r}")
    for key in _STATS:
        if type(get(key)) not in _NUMBER_OR_NONE:
            raise UabError(f"sample {key!r} must be a number or null, got {get(key)!r}")
    for key in COUNTS:
        n = get(key)
        if n is not None and (type(n) is not int or n < 0):
            raise UabError(f"sample {key!r} must be a non-negative integer or null, got {n!r}")
    c = get("confidence")
    if c is not None and (type(c) is not int or not 1 <= c <= 10):  # as ``answers.parse_confidence`` reads it
        raise UabError(f"sample 'confidence' must be an integer from 1 to 10 or null, got {c!r}")
    a = get("answer")
    if a is not None and type(a) is not str:
        raise UabError(f"sample 'answer' must be a string or null, got {a!r}")
    r = get("reasoning")  # a server's separate reasoning: kept, never graded
    if r is not None and type(r) is not str:
        raise UabError(f"sample 'reasoning' must be a string or null, got {type(r).__name__}")


def _did_you_mean(rec: dict, field: str) -> str:
    import difflib

    close = difflib.get_close_matches(field, [k for k in rec if isinstance(k, str) and k != field], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def question_type(rec: dict) -> str:
    """The record's ``type``, inferred when absent: choices → mc, otherwise math."""
    t = rec.get("type")
    if t:
        return t
    return "mc" if rec.get("choices") else "math"


def gold_letter(rec: dict) -> str | None:
    """The gold choice letter of a multiple-choice record (gold may be a letter or a choice text)."""
    gold, choices = rec.get("answer"), rec.get("choices") or []
    if gold is None:
        return None
    g = str(gold).strip()
    valid = letters(len(choices))
    bare = (g if g.isascii() else unicodedata.normalize("NFKC", g)).strip("()")  # full-width "Ｂ", "（B）"
    if bare.upper() in valid and len(bare) == 1:
        return bare.upper()
    for letter, text in zip(valid, choices):
        if g == text.strip():
            return letter
    return None


def samples(rec: dict, phase: int | None = None) -> list[dict]:
    """The record's samples, optionally only those of one phase."""
    out = rec.get("samples") or []
    return out if phase is None else [s for s in out if s.get("phase") == phase]


def sample_index(sample: dict) -> int:
    """A sample's ``index``; 0 where it has none (absent or null: a hand-made record)."""
    return sample.get("index") or 0


def provenance(rec: dict) -> dict:
    """What produced this record, stage by stage (``{"phase1": {...}, "allocate": {...}}``)."""
    prov = rec.get(PROVENANCE)
    return prov if type(prov) is dict else {}


def without_provenance(rec: dict, stage: str) -> dict:
    """Drop ``stage`` from the record's provenance, where it no longer describes the record."""
    prov = provenance(rec)
    if stage in prov:
        rec[PROVENANCE] = {k: v for k, v in prov.items() if k != stage}  # a copy: records may share one
    return rec


def with_provenance(rec: dict, stage: str, info: dict) -> dict:
    """Record ``info`` about ``stage`` in the record's provenance (returns the record)."""
    prov = rec.get(PROVENANCE)
    rec[PROVENANCE] = {**prov, stage: info} if prov else {stage: info}  # a copy: records may share one
    return rec


def questions_fingerprint(records: Iterable[dict]) -> str:
    """A digest of what the samples depend on: each question's id (its samples' seeds) and what
    its prompt and answer extraction read (question text, choices, type), in id order. A run
    resumes on the same questions wherever the file is, in any line order, with other gold
    answers or other extra fields (the votes grade against the new gold)."""
    return fingerprint(map(asked, records))


def asked(rec: dict) -> list:
    """What ``questions_fingerprint`` hashes of one question: its id, question text, choices and type."""
    return [rec["id"], rec["question"], rec.get("choices") or [], question_type(rec)]


def fingerprint(questions: Iterable[list]) -> str:
    """``questions_fingerprint`` of the questions' ``asked``, in any order."""
    h = hashlib.sha256()
    for entry in sorted(questions, key=lambda entry: entry[0]):
        h.update(orjson.dumps(entry, option=orjson.OPT_APPEND_NEWLINE))
    return h.hexdigest()[:16]
