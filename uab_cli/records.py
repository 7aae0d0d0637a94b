"""The JSONL record format: field names, validation per stage, streaming read and atomic write.

This is the only module that knows the schema. A record is a plain dict so that fields
uab does not know pass through every stage untouched.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator
from typing import IO

import orjson

from . import gcpolicy
from .errors import UabError

MAX_LINE_BYTES = 8 * 1024 * 1024  # a longer line is almost surely not a question record
TYPES = ("math", "mc", "text")
PROVENANCE = "uab"  # per-record field holding what produced the record, stage by stage


def letters(n: int) -> list[str]:
    """Choice letters for n choices: A, B, C, ..."""
    return [chr(ord("A") + i) for i in range(n)]


# --- reading -----------------------------------------------------------------------

# Bytes per read: lines are split and parsed in bulk, not one readline call each. Small
# enough that a chunk's parsed objects stay in the CPU cache (1 MiB chunks parse 2x slower).
_CHUNK = 1 << 16
_BOM = b"\xef\xbb\xbf"
_DICT = {dict}
_TOO_LONG = f"line longer than {MAX_LINE_BYTES // 2**20} MiB"


def read_jsonl(path: str) -> Iterator[tuple[int, dict]]:
    """Yield ``(line number, object)`` for each line of a JSONL file (``-`` = stdin)."""
    lineno = 0
    for batch in _batches(path):
        for obj in batch:
            lineno += 1
            yield lineno, obj


def _batches(path: str, name: str | None = None) -> Iterator[list[dict]]:
    """The input's objects, one list per 64 KiB read; line ``k`` of the input is object ``k``.
    Errors come in file order, after the objects before them (see ``parse_block``)."""
    name = name or display_name(path)
    for data, first, last in _blocks(path, name):
        yield from parse_block(data, first, last, path, name)


def _blocks(path: str, name: str) -> Iterator[tuple[bytes, int, bool]]:
    """The input in blocks of whole lines: ``(data, line number of its first line, last)``,
    about 64 KiB each; ``last`` marks a final line without a newline (its own block).
    Raises ``UabError`` for an empty input or a runaway line."""
    lineno = 0
    with _open_input(path) as fh:
        rest = b""
        while True:
            chunk = fh.read1(_CHUNK)
            if not chunk:
                break
            cut = chunk.rfind(b"\n") + 1
            if not cut:  # no line ends here: keep reading this line
                rest += chunk
                if len(rest) > MAX_LINE_BYTES:  # do not buffer a runaway line any further
                    raise UabError(_TOO_LONG, name, lineno + 1)
                continue
            data, rest = rest + chunk[:cut], chunk[cut:]
            kept = without_trailing_blank_lines(data)
            if len(kept) < len(data):  # blank lines at the end are held back: an error only if more follows
                data, rest = kept, data[len(kept):] + rest
            if data:
                yield data, lineno + 1, False
                lineno += data.count(b"\n")
            if len(rest) > MAX_LINE_BYTES:
                raise UabError(_TOO_LONG, name, lineno + 1)
        if rest.strip():
            yield rest, lineno + 1, True
            lineno += 1
    if lineno == 0:
        raise UabError("empty input: no records", name)


def without_trailing_blank_lines(data: bytes) -> bytes:
    """``data`` without the blank (whitespace-only) lines at its end; files often end with one."""
    end = len(data.rstrip())
    if not end:
        return b""
    newline = data.find(b"\n", end)
    return data if newline < 0 else data[: newline + 1]


def parse_block(data: bytes, first: int, last: bool, path: str, name: str) -> Iterator[list[dict]]:
    """A block's objects in lists of about 64 KiB of input (small enough to stay in the CPU
    cache while a stage works on them). A piece is parsed in one comprehension; when
    something in it is wrong it is parsed again line by line, and the objects before the
    first bad line are yielded before the error (``FILE:LINE: message``) is raised. A UTF-8
    byte-order mark at the start of the file is skipped."""
    loads, decode_error = orjson.loads, orjson.JSONDecodeError
    lineno, pos, end = first, 3 if first == 1 and data[:3] == _BOM else 0, len(data)
    while pos < end:
        cut = data.find(b"\n", pos + _CHUNK) + 1 or end
        lines = data[pos:cut].split(b"\n")
        if not last:
            lines.pop()  # the empty piece after the final newline
        pos = cut
        try:
            batch = [loads(raw) for raw in lines]
            ok = max(map(len, lines), default=0) <= MAX_LINE_BYTES and set(map(type, batch)) <= _DICT
        except decode_error:
            ok = False
        if not ok:
            batch = []
            for raw in lines:
                try:
                    batch.append(_parse_line(raw, lineno + len(batch), last, path))
                except UabError as exc:
                    if batch:
                        yield batch
                    raise UabError(exc.message, name, lineno + len(batch)) from None
        lineno += len(batch)
        yield batch


def _parse_line(raw: bytes, lineno: int, last: bool, path: str) -> dict:
    """One line as a JSON object, or ``UabError`` (without a location) saying what is wrong."""
    if len(raw) > MAX_LINE_BYTES:
        raise UabError(_TOO_LONG)
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise UabError(_unparsable(raw, str(exc), lineno, last, path)) from None
    if type(obj) is not dict:
        message = f"expected a JSON object, got {type(obj).__name__}"
        if lineno == 1 and raw.lstrip()[:1] == b"[":
            message += f": {_array_hint(path)}"
        raise UabError(message)
    return obj


def display_name(path: str) -> str:
    """How errors name an input: the path, or ``<stdin>`` for ``-``."""
    return "<stdin>" if path == "-" else path


def _unparsable(raw: bytes, error: str, lineno: int, last: bool, path: str) -> str:
    """Why a line is not a JSON object, in the user's terms."""
    if not raw.strip():
        return "blank line (JSONL needs one JSON object per line)"
    if lineno == 1 and raw.lstrip()[:1] == b"[":
        return _array_hint(path)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:  # orjson names column 1 whatever the byte
        column = len(raw[: exc.start].decode("utf-8")) + 1
        return f"not valid UTF-8 at column {column} (byte {exc.start + 1}: 0x{raw[exc.start]:02x})"
    what = "invalid JSON"
    if last and what == "invalid JSON":
        what = "invalid JSON (truncated last line?)"
    return f"{what}: {error}"


def _array_hint(path: str) -> str:
    how = "save it to a file and run `uab convert FILE`" if path == "-" else f"`uab convert {shlex.quote(path)}` reads it"
    return f"this looks like a JSON array, not JSON Lines (one object per line); {how}"


@contextlib.contextmanager
def rereadable(path: str) -> Iterator[str]:
    """A path to read the input from more than once: the file itself, or for ``-`` a
    temporary copy of stdin (removed on leaving)."""
    if path != "-":
        yield path
        return
    fd, tmp = tempfile.mkstemp(prefix="uab-stdin.", suffix=".jsonl")
    try:
        with os.fdopen(fd, "wb") as fh:
            shutil.copyfileobj(sys.stdin.buffer, fh, _WRITE_BUFFER)
        yield tmp
    finally:
        os.unlink(tmp)


@contextlib.contextmanager
def _open_input(path: str):
    if path == "-":
        yield sys.stdin.buffer
        return
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise UabError(f"cannot read: {exc.strerror}", path) from None
    with fh:
        yield fh


def read_records(path: str, stage: str = "question") -> Iterator[tuple[int, dict]]:
    """Stream validated records for a stage (``question``, ``sampled``, ``allocated``)."""
    lineno = 0
    for batch in read_batches(path, stage):
        for rec in batch:
            lineno += 1
            yield lineno, rec


def read_batches(path: str, stage: str | None = "question", name: str | None = None) -> Iterator[list[dict]]:
    """``read_records`` a block of records at a time (``stage=None``: parsed, not validated)."""
    seen: set[str] = set()
    lineno = 0
    name = name or display_name(path)
    for batch in _batches(path, name):
        if stage is not None:
            validate_batch(batch, stage, name, lineno + 1, seen)
        lineno += len(batch)
        yield batch


def load_records(path: str, stage: str = "question") -> tuple[list[dict], list[int]]:
    """All validated records for a stage, and the line each came from."""
    records: list[dict] = []
    seen: set[str] = set()
    with gcpolicy.paused():
        for batch in _batches(path):
            validate_batch(batch, stage, display_name(path), len(records) + 1, seen)
            records += batch
    return records, list(range(1, len(records) + 1))


def validate_batch(batch: list[dict], stage: str, name: str, first_line: int, seen: set[str] | None = None) -> None:
    """Check each record for ``stage`` and, given the ``seen`` ids, that its id is new;
    ``FILE:LINE: message`` if not."""
    for lineno, rec in enumerate(batch, first_line):
        try:
            check_record(rec, stage)
        except UabError as exc:
            raise UabError(exc.message, name, lineno) from None
        if seen is not None:
            n = len(seen)
            seen.add(rec["id"])
            if len(seen) == n:
                raise UabError(f"duplicate id {rec['id']!r}", name, lineno)


def check_record(rec: dict, stage: str = "question") -> None:
    """Raise ``UabError`` (without a location) if ``rec`` is not valid input for ``stage``."""
    _check_question(rec)
    samples = rec.get("samples")
    if samples is None and stage in ("sampled", "allocated"):
        raise UabError(f"record {rec['id']!r} has no 'samples': run `uab phase1` first")
    if samples is not None:  # at every stage: Phase 1 keeps the samples a record comes with
        if type(samples) is not list:
            raise UabError("'samples' must be a list of objects")
        for s in samples:
            _check_sample(s)
    if stage == "allocated":
        extra = rec.get("extra")
        if extra is None:
            raise UabError(f"record {rec['id']!r} has no 'extra': run `uab allocate` first")
        if not is_int(extra) or extra < 0:
            raise UabError(f"'extra' must be a non-negative integer, got {extra!r}")


def is_int(x) -> bool:
    """An integer that is not a bool (JSON true/false are not counts)."""
    return isinstance(x, int) and not isinstance(x, bool)


def _check_question(rec: dict) -> None:
    # Exact-type tests first (what JSON gives), isinstance only for subclasses: this runs per record.
    rid = rec.get("id")
    if type(rid) is not str or not rid:
        if "id" not in rec:
            raise UabError("missing field 'id'")
        if not isinstance(rid, str) or not rid:
            raise UabError(f"'id' must be a non-empty string, got {rid!r}")
    q = rec.get("question")
    if type(q) is not str or not q or q.isspace():
        if q is None:
            raise UabError(f"record {rid!r} has no 'question'" + _did_you_mean(rec, "question"))
        if not isinstance(q, str) or not q.strip():
            raise UabError("'question' must be a non-empty string")
    gold = rec.get("answer")
    if gold is not None and type(gold) not in _SCALARS and (not isinstance(gold, _SCALARS) or isinstance(gold, bool)):
        raise UabError(f"'answer' must be a string or number, got {type(gold).__name__}")
    choices = rec.get("choices")
    if choices is not None:
        if not isinstance(choices, list) or not choices or not all(isinstance(c, str) for c in choices):
            raise UabError("'choices' must be a non-empty list of strings")
        if len(choices) > 26:
            raise UabError("at most 26 choices (letters A-Z)")
        if gold is not None and gold_letter(rec) is None:
            raise UabError(
                f"gold answer {gold!r} is neither a choice letter "
                f"{letters(len(choices))[0]}-{letters(len(choices))[-1]} nor a choice text"
            )
    prov = rec.get(PROVENANCE)
    if prov is not None and type(prov) is not dict:
        raise UabError(f"'{PROVENANCE}' (what produced the record) must be an object, got {type(prov).__name__}")
    t = rec.get("type")
    if t is not None and t not in TYPES:
        raise UabError(f"'type' must be one of {', '.join(TYPES)}, got {t!r}")
    if t == "mc" and choices is None:
        raise UabError("type 'mc' needs 'choices'")


_SCALARS = (str, int, float)
_STATS = ("anll", "total_nll", "max_nll", "nll_var")
_COUNTS = ("n_tokens", "prompt_tokens")  # a sample's completion and prompt tokens
_NUMBER_OR_NONE = (int, float, type(None))


def _check_sample(s: dict) -> None:
    if type(s) is not dict:
        raise UabError("'samples' must be a list of objects")
    get = s.get
    if type(get("text")) is not str:
        raise UabError("each sample needs a string 'text'")
    if get("phase") not in (1, 2):
        raise UabError(f"sample 'phase' must be 1 or 2, got {get('phase')!r}")
    for key in _STATS:
        if type(get(key)) not in _NUMBER_OR_NONE:
            raise UabError(f"sample {key!r} must be a number or null, got {get(key)!r}")
    for key in _COUNTS:
        n = get(key)
        if n is not None and (type(n) is not int or n < 0):
            raise UabError(f"sample {key!r} must be a non-negative integer or null, got {n!r}")
    c = get("confidence")
    if c is not None and type(c) is not int:
        raise UabError(f"sample 'confidence' must be an integer or null, got {c!r}")
    a = get("answer")
    if a is not None and type(a) is not str:
        raise UabError(f"sample 'answer' must be a string or null, got {a!r}")
    r = get("reasoning")  # a server's separate reasoning: kept, never graded
    if r is not None and type(r) is not str:
        raise UabError(f"sample 'reasoning' must be a string or null, got {type(r).__name__}")


def _did_you_mean(rec: dict, field: str) -> str:
    import difflib

    close = difflib.get_close_matches(field, [k for k in rec if isinstance(k, str)], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}? or use `uab convert`)" if close else ""


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
    if g.strip("()").upper() in valid and len(g.strip("()")) == 1:
        return g.strip("()").upper()
    for letter, text in zip(valid, choices):
        if g == text.strip():
            return letter
    return None


def samples(rec: dict, phase: int | None = None) -> list[dict]:
    """The record's samples, optionally only those of one phase."""
    out = rec.get("samples") or []
    return out if phase is None else [s for s in out if s.get("phase") == phase]


def provenance(rec: dict) -> dict:
    """What produced this record, stage by stage (``{"phase1": {...}, "allocate": {...}}``)."""
    prov = rec.get(PROVENANCE)
    return prov if type(prov) is dict else {}


def with_provenance(rec: dict, stage: str, info: dict) -> dict:
    """Record ``info`` about ``stage`` in the record's provenance (returns the record)."""
    prov = rec.get(PROVENANCE)
    rec[PROVENANCE] = {**prov, stage: info} if prov else {stage: info}  # a copy: records may share one
    return rec


# --- writing -----------------------------------------------------------------------


_DUMP_OPTIONS = orjson.OPT_APPEND_NEWLINE | orjson.OPT_SERIALIZE_NUMPY


def dumps(rec: dict) -> bytes:
    """One JSONL line."""
    return orjson.dumps(rec, None, _DUMP_OPTIONS)


_WRITE_BUFFER = 1 << 20


@contextlib.contextmanager
def atomic_output(path: str) -> Iterator[IO[bytes]]:
    """A binary handle that becomes ``path`` only if the block succeeds (``-`` = stdout)."""
    if path == "-":
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb", buffering=_WRITE_BUFFER) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600 files; outputs are ordinary files
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_records(path: str, records: Iterable[dict]) -> int:
    """Write records as JSONL atomically; consumes ``records`` lazily. Returns the count."""
    n = 0
    with atomic_output(path) as fh, gcpolicy.paused():
        # One write per line into a large buffer: holding many small orjson outputs at once
        # (to join them) makes the allocator grow and shrink the heap for every one.
        write = fh.write
        for rec in records:
            write(dumps(rec))
            n += 1
    return n
