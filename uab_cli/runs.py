"""``uab run``: all four stages with one loaded model, checkpointed into a run directory
so a crashed or killed run resumes where it stopped and ends with the same votes, and a
run with another budget or allocation reuses every sample already drawn."""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import hashlib
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import orjson

from . import __version__, allocators, cost, gcpolicy, pipeline, settings
from .backends import options as backend_options
from .backends.base import Backend
from .errors import UabError
from .jsonl import atomic_output, display_name, dumps, stream_records, write_failure, write_records
from .records import check_sample, is_int, provenance, questions_fingerprint, samples
from .signals import SCALAR_SIGNALS, lacks

if TYPE_CHECKING:
    from .pools import Pooled

CONFIG = "config.json"
CHECKPOINT = "samples.ckpt.jsonl"
# How the checkpoint's samples are drawn (``uab.phase1``'s entries: the generation settings, k),
# written before the first: a directory killed in its first Phase 1 has no Phase-1 output to say so.
DRAWN = "drawn.json"
STAGE_FILES = ("phase1.jsonl", "allocation.jsonl", "phase2.jsonl", "votes.jsonl")
JUDGE = "judge.json"
# The judge's verdicts as they arrive, one line each with its --judge-max-tokens (a checkpoint's
# append and torn-line rules), until judge.json holds them all: a rerun asks only the others.
JUDGE_CHECKPOINT = "judge.ckpt.jsonl"
SUMMARY = "summary.json"  # what the latest run cost (tokens and time per stage) and scored
POOL = "pool.jsonl"
VOTES_OF = "votes-{}.jsonl"  # the votes of one allocation and vote setting; votes.jsonl is the latest
# What a run directory holds before its first sample; ``close`` removes them in this order, the config
# (what marks the directory as uab's) last: a kill midway leaves a directory a rerun still takes.
_BOOKKEEPING = (DRAWN, CHECKPOINT, JUDGE, JUDGE_CHECKPOINT, CONFIG)
# Config entries that fix the samples: a run directory holding samples drawn with other
# values is refused (or, with --force, emptied). Every other entry (budget, allocation,
# vote) may change from one run to the next: the samples already drawn are reused.
# "questions" is what the samples depend on (``questions_fingerprint``); "fingerprint" (every
# field of every record, in file order) is still written for older uab, and compared only
# against a config written before "questions" existed.
FIXED = ("m", "questions", "fingerprint", "k", "generation")

MakeBackend = Callable[[], Backend]


@dataclass(frozen=True)
class Callbacks:
    """What ``run`` and ``pool`` report as they go, each optional: ``on_stage(stage, samples to
    draw)`` as a sampling stage starts, ``on_sample(record, sample)`` as a sample arrives,
    ``on_allocated(summary)`` after allocation, ``on_skip(record, too_long)`` for each question
    ``--too-long skip`` leaves out."""

    on_stage: Callable[[str, int], None] | None = None
    on_sample: pipeline.OnSample | None = None
    on_allocated: Callable[[pipeline.AllocationSummary], None] | None = None
    on_skip: pipeline.OnSkip | None = None


def _refuse_foreign(path: str) -> None:
    """``UabError`` if ``path`` holds files but no uab config: uab would write among a user's files."""
    if os.path.exists(os.path.join(path, CONFIG)):
        return
    foreign = sorted(n for n in os.listdir(path) if n != ".lock" and not n.endswith(".tmp"))
    if foreign:
        shown = ", ".join(foreign[:3]) + (", …" if len(foreign) > 3 else "")
        raise UabError(f"not a uab run directory and not empty ({shown}): uab would write its files "
                       "among these; use a new or empty directory, or --force", path)


def holds_samples(path: str) -> bool:
    """Whether run or pool directory ``path`` holds samples: in its checkpoint, or in any file but its
    config (a pool's or a run's outputs); a run that failed before its first sample left none (its
    judge's labels are no samples), or removed the directory it made."""
    if _size(os.path.join(path, CHECKPOINT)) > 0:
        return True
    try:
        names = os.listdir(path)
    except OSError:
        return False
    return bool({n for n in names if not n.endswith(".tmp")} - {".lock", *_BOOKKEEPING})


def holds_labels(path: str) -> bool:
    """Whether run directory ``path`` holds its judge's labels or some of its verdicts (paid calls a
    rerun reuses)."""
    return os.path.exists(os.path.join(path, JUDGE)) or _size(os.path.join(path, JUDGE_CHECKPOINT)) > 0


def kept_note(path: str | None) -> str:
    """What a run or pool directory ``path`` (None: not made yet) that stopped keeps for its rerun, in
    one sentence: its finished samples, else its judge's labels, else nothing."""
    if path is not None and holds_samples(path):
        return "Finished samples are kept; re-run the same command to resume."
    if path is not None and holds_labels(path):
        return "No sample was finished; the judge's labels are kept: re-run the same command to resume."
    return "No sample was finished, so none is kept."


class RunDir:
    """A run directory: an exclusive lock, the run's configuration, a sample store.

    The checkpoint holds every sample ever drawn for the run's generation settings, keyed
    by (question id, sample index); each run takes the indices its allocation needs from
    it and draws only the ones it lacks.
    """

    def __init__(self, path: str, force: bool = False):
        from filelock import FileLock, Timeout

        self.path = path
        self._made = _missing_folders(path)  # removed again by ``close`` while they hold nothing
        try:
            os.makedirs(path, exist_ok=True)
        except OSError as exc:
            raise UabError(f"cannot use as a run directory: {exc.strerror}", path) from None
        if not force:
            _refuse_foreign(path)
        self._lock = FileLock(os.path.join(path, ".lock"))
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            raise UabError("another `uab run` or `uab pool` is using this directory (its lock is held)", path) from None
        except OSError as exc:  # a lock file this user may not open (another user's), a full disk
            raise UabError(f"cannot lock the directory: {exc.strerror or exc}", self._lock.lock_file) from None
        self._ckpt = self._judge_ckpt = None
        self.store: dict[str, dict[int, dict]] = {}

    def file(self, name: str) -> str:
        return os.path.join(self.path, name)

    def check(self, config: dict, force: bool = False) -> list[str]:
        """The fixed entries ``config`` changes; ``UabError`` if any does, unless ``force``.
        A ``generation.model`` of ``""`` (the backend's default, not yet known) matches any."""
        changed: list[str] = []
        with contextlib.suppress(FileNotFoundError):
            existing, problem = _parsed_config(self.file(CONFIG))
            if problem:
                changed = [f"unreadable {CONFIG}"]
            elif ("pool" in existing) != ("pool" in config):  # a pool's directory given to run, or the reverse
                was, now = ("pool", "run") if "pool" in existing else ("run", "pool")
                changed = [f"it is a `uab {was}` directory, not a `uab {now}` one"]
            else:
                if not config["generation"].get("model"):
                    config = {**config, "generation": {**config["generation"],
                                                       "model": existing.get("generation", {}).get("model")}}
                changed = _changed(existing, config) or _drawn_with(self.path, config)[1]  # a hand-edited config
        if changed and not force and holds_samples(self.path):  # else nothing to keep: start over
            raise UabError(f"this directory holds samples drawn with other settings ({'; '.join(changed)}); "
                           "use a new --output, or --force to discard them", self.path)
        return changed

    def open(self, config: dict, force: bool = False,
             reuse: Callable[[dict[str, dict[int, dict]]], None] | None = None) -> None:
        """Check ``config`` against the directory's (``UabError`` if a fixed entry differs,
        unless ``force``, which empties the directory), load the sample store, remove the last
        run's outputs after Phase 1, and record ``config``. ``reuse(store)`` checks the samples the
        run will reuse: its ``UabError``, as a damaged checkpoint's, leaves the directory as it was."""
        # The last run's outputs after Phase 1 go (this run writes its own), and a pool's pool.jsonl: a
        # run or a grown pool that fails midway leaves none of them beside its new config (that run's
        # votes stay in votes-<setting>.jsonl; a pool's samples in the checkpoint); --force over
        # another configuration empties the directory of uab's files.
        gone = [SUMMARY, POOL, *STAGE_FILES[1:]]
        kept = None if self.check(config, force) else self._load(force)
        if kept is None:  # other settings, or a damaged checkpoint under --force: start over
            earlier = glob.glob(os.path.join(glob.escape(self.path), VOTES_OF.format("*")))
            gone += [CHECKPOINT, JUDGE, JUDGE_CHECKPOINT, STAGE_FILES[0], *map(os.path.basename, earlier)]
            kept = []
        elif reuse:
            reuse(self.store)
        for name in gone:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.file(name))
        # Temporary files of a write that a kill interrupted (we hold the lock: nobody else writes).
        for tmp in glob.glob(os.path.join(glob.escape(self.path), ".*.tmp")):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        self.write_json(CONFIG, config)
        self.write_json(DRAWN, {**config["generation"], **({"k": config["k"]} if "k" in config else {})})
        write_records(self.file(CHECKPOINT), kept)  # exactly the store: no torn last line, no duplicate
        self._ckpt = open(self.file(CHECKPOINT), "ab", buffering=0)  # nothing held back for close to write

    def _load(self, force: bool = False) -> list[dict] | None:
        """Read the checkpoint into ``store``; returns its rows, less a last line torn by a kill
        and duplicates. A bad line with lines after it is damage, not a kill: ``UabError`` naming
        it, the file left as it is; with ``force``, ``None`` and an empty store (start over). Of two
        lines of one sample the later wins, as in ``checkpoint`` (Phase 1 draws again a reply that
        lost its logprobs)."""
        rows, bad = _appended(self.file(CHECKPOINT), _sample_row)
        if bad:
            if force:
                self.store.clear()
                return None
            raise UabError("not a sample of this run's checkpoint, and samples follow it: fix or remove the line "
                           "(or --force to start over)", self.file(CHECKPOINT), bad)
        kept: dict[tuple[str, int], dict] = {}
        for row in rows:
            qid, sample = row["id"], row["sample"]
            self.store.setdefault(qid, {})[sample["index"]] = sample  # a later line wins: a sample drawn again
            kept[qid, sample["index"]] = row
        return list(kept.values())

    def take(self, records: list[dict], start: int | list[int], stop: int | list[int]) -> int:
        """Give each record the stored samples with index in ``[start, stop)`` that it
        lacks (per record when lists); returns how many were taken."""
        taken = 0
        for r, rec in enumerate(records):
            lo = start[r] if isinstance(start, list) else start
            hi = stop[r] if isinstance(stop, list) else stop
            stored = self.store.get(rec["id"], {})
            found = [stored[i] for i in pipeline.missing(rec, lo, hi) if i in stored]
            if found:
                rec["samples"] = sorted([*samples(rec), *found], key=lambda s: s["index"])
                taken += len(found)
        return taken

    def held_from(self, records: list[dict], start: int) -> int:
        """How many stored samples with index ``start`` or more the records have (what a rerun
        can reuse beyond Phase 1)."""
        return sum(sum(1 for i in self.store.get(rec["id"], {}) if i >= start) for rec in records)

    def checkpoint(self, rec: dict, sample: dict) -> None:
        """Append one finished sample, written through, so a kill or a full disk loses at most the
        line being written (the resume drops it); a failure to write is a ``UabError`` naming the file."""
        _append(self._ckpt, {"id": rec["id"], "sample": sample}, self.file(CHECKPOINT))
        self.store.setdefault(rec["id"], {})[sample["index"]] = sample

    def judged(self, max_tokens: int) -> dict[str, dict]:
        """The verdicts (by question id) that the judge checkpoint holds of a judge asked with
        ``max_tokens``, a stopped run's; the file then holds exactly them, open for ``judge``: another
        cap's verdicts go, as do a line torn by a kill and the lines from a damaged one on (asked
        again: the judge's calls are seeded per question, so they come out the same)."""
        rows, _ = _appended(self.file(JUDGE_CHECKPOINT), _judge_row)
        found = {row["id"]: row for row in rows if row["max_tokens"] == max_tokens}
        write_records(self.file(JUDGE_CHECKPOINT), found.values())
        self._judge_ckpt = open(self.file(JUDGE_CHECKPOINT), "ab", buffering=0)
        return {qid: row["verdict"] for qid, row in found.items()}

    def judge(self, qid: str, verdict: dict, max_tokens: int) -> None:
        """Append the judge's verdict on question ``qid`` to the judge checkpoint, as ``checkpoint`` a sample."""
        _append(self._judge_ckpt, {"id": qid, "verdict": verdict, "max_tokens": max_tokens},
                self.file(JUDGE_CHECKPOINT))

    def judge_done(self, saved: dict) -> None:
        """Write ``judge.json`` (``saved``: every label), then drop the judge checkpoint it replaces."""
        with atomic_output(self.file(JUDGE)) as fh:
            fh.write(orjson.dumps(saved))
        self._judge_ckpt.close()
        self._judge_ckpt = None
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.file(JUDGE_CHECKPOINT))

    def write(self, name: str, records: list[dict]) -> None:
        write_records(self.file(name), records)

    def copy(self, name: str, to: str) -> None:
        """File ``name`` again as ``to`` (atomically): the same bytes, not serialised twice."""
        with open(self.file(name), "rb") as src, atomic_output(self.file(to)) as fh:
            shutil.copyfileobj(src, fh, 1 << 20)

    def write_json(self, name: str, obj: dict) -> None:
        with atomic_output(self.file(name)) as fh:
            fh.write(orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))

    def close(self) -> None:
        """Release the lock; a directory this run made that holds no more than its config and an
        empty checkpoint (it failed before its first sample and before its judge's first verdict,
        which a rerun reuses) goes, with the folders made on the way to it."""
        for fh in (self._ckpt, self._judge_ckpt):
            if fh:
                fh.close()
        try:  # still holding the lock: no other run can take the directory while it goes
            if self._made and set(os.listdir(self.path)) <= {".lock", *_BOOKKEEPING} \
                    and not holds_samples(self.path) and not holds_labels(self.path):
                with contextlib.suppress(OSError):
                    for name in (*_BOOKKEEPING, ".lock"):
                        with contextlib.suppress(FileNotFoundError):
                            os.unlink(self.file(name))
                    for folder in self._made:
                        os.rmdir(folder)
        finally:
            self._lock.release()


def _size(path: str) -> int:
    """The size of file ``path``; 0 where it cannot be read."""
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _appended(path: str, parse: Callable[[dict], dict]) -> tuple[list[dict], int | None]:
    """The lines of append-only file ``path`` (a checkpoint; none where there is none), each read
    by ``parse`` (a ``ValueError``, ``TypeError``, ``KeyError`` or ``UabError`` on a line that is
    not one), less a last line a kill tore (it tears the last line only); and the number of a bad
    line with lines after it (damage, not a kill: the lines before it are returned), else None."""
    rows = []
    with contextlib.suppress(FileNotFoundError), _open_read(path) as fh:
        for lineno, raw in enumerate(fh, 1):
            try:
                if not raw.endswith(b"\n"):
                    raise ValueError("torn")
                rows.append(parse(orjson.loads(raw)))
            except (ValueError, TypeError, KeyError, UabError):
                return rows, (lineno if fh.read().strip() else None)
    return rows, None


def _sample_row(row: dict) -> dict:
    """``row`` where it is a line of the checkpoint: a question id and one of its samples."""
    if type(row["id"]) is not str or not is_int(row["sample"]["index"]):
        raise ValueError("bad index or id")
    check_sample(row["sample"])
    return row


def _judge_row(row: dict) -> dict:
    """``row`` where it is a line of the judge checkpoint: a question id, the judge's verdict on it
    and the ``--judge-max-tokens`` it was asked with."""
    if type(row["id"]) is not str or not _verdict(row["verdict"]) or not is_int(row["max_tokens"]):
        raise ValueError("not a verdict")
    return row


def _append(fh, row: dict, path: str) -> None:
    """Append ``row`` to checkpoint ``path`` (``fh``, unbuffered), so a kill or a full disk loses at
    most the line being written; a failure to write is a ``UabError`` naming ``path``."""
    line = memoryview(dumps(row))
    try:
        while line:  # a short write (the disk filled up) leaves the rest: write it, or fail on it
            line = line[fh.write(line):]
    except OSError as exc:
        raise write_failure(exc, path) or exc from None


def _missing_folders(path: str) -> list[str]:
    """The folders ``os.makedirs(path)`` would make, deepest first."""
    out = []
    path = os.path.abspath(path)
    while not os.path.exists(path):
        out.append(path)
        path = os.path.dirname(path)
    return out


@dataclass
class RunResult:
    """Budget accounting and accuracy of a finished run."""

    planned: int
    drawn: int  # samples drawn by this invocation
    restored: int  # samples reused from the run directory
    allocation: pipeline.AllocationSummary
    votes: pipeline.VoteSummary
    judge: dict = field(default_factory=dict)
    votes_file: str = ""  # votes.jsonl's copy named by the allocation and vote setting
    skipped: list = field(default_factory=list)  # pipeline.TooLong of each question --too-long skip left out
    summary: dict = field(default_factory=dict)  # summary.json: tokens and time per stage, accuracy
    drawn_tokens: dict[str, cost.Tokens] = field(default_factory=dict)  # per sampling stage, drawn now
    seconds: dict[str, float] = field(default_factory=dict)  # wall-clock per stage
    probes: int = 0  # Phase-1 samples drawn alone first to check for logprobs (pipeline.Phase1Drawn)


def _config(records: list[dict], gen: pipeline.Generation, input_name: str, derived: list[str],
            max_model_len: int | None = None, judged: bool = False, **more) -> dict:
    """A run directory's config; ``model_option`` is ``--model`` as given (``""``: the default),
    which a rerun without ``--model`` takes, as it takes ``max_model_len``, the ``--max-model-len``
    given (``remembered``); ``derived``: the entries the run derived (``_derived``); ``judged``: the
    run asks the LLM judge (its ``--judge-max-tokens`` is recorded)."""
    return {"input": input_name, "m": len(records), "questions": questions_fingerprint(records),
            "fingerprint": fingerprint(records), "generation": gen.info(judged), "model_option": gen.model,
            "max_model_len": max_model_len, "derived": derived, **more}


# A config's entries (``_config``) that say what a run was on and what a rerun reads, beside its
# settings and counts (``settings.SECTIONS``, ``settings.COUNTS``): no option, so ``--settings`` skips them.
_ABOUT = ("input", "m", "questions", "fingerprint", "derived", "model_option")


def config_settings(config: dict, path: str, command: str) -> dict:
    """A run's or pool's ``config`` (its ``config.json`` at ``path``) as ``--settings`` option values
    (by name) for ``command``: the generation, allocation and vote settings a rerun would take
    (less what the run derived, ``_chosen``; by ``settings.recorded_options``), ``--model`` as given,
    ``--max-model-len`` and the budget; -K for the command of its kind (a run's Phase-1 K to `run`,
    a pool's K to `pool`). ``UabError`` naming ``path`` for a config this version cannot read (an
    entry it does not know: a newer uab's) or a value its option refuses."""
    if problem := _config_problem(config):
        raise UabError(f"not a uab {CONFIG}: {problem}", path)
    config = _upgraded(config)
    unknown = sorted(set(config) - {*_ABOUT, *settings.SECTIONS, *settings.COUNTS})
    if unknown:
        raise settings.at_entry(UabError(f"it records {unknown[0]}, which no option of uab {__version__} sets (a "
                                         "config of a newer uab?): give the options as a JSON/TOML file of option "
                                         "values", path), unknown[0])
    settings.check_recorded(config, path, rerun=False)
    gen = {**config["generation"], "model": config.get("model_option", config["generation"].get("model")) or None}
    sections = _chosen(gen, config.get("allocate"), config.get("vote"), config.get("derived"))
    values = {k: v for section, info in zip(settings.SECTIONS, sections) if info is not None
              for k, v in settings.recorded_options(section, info, path).items()}
    kind = "pool" if "pool" in config else "run"
    values.update(max_model_len=config.get("max_model_len"), budget=config.get("n"),
                  samples=config.get("pool" if kind == "pool" else "k") if command == kind else None)
    takes = {o.name for o in (*settings.options(), *backend_options()) if command in o.commands} | {"samples"}
    return {k: v for k, v in values.items() if k in takes and v is not None}


def _derived(gen: pipeline.Generation, alloc: pipeline.Allocation | None = None,
             vote: pipeline.Vote | None = None) -> list[str]:
    """The config entries a run derives from other options rather than was given (``vote``
    before ``resolve_vote_signal``): ``--vcs`` from the backend, the allocation signal from
    ``--vcs``, an exit's own threshold, the official hard-exit test's N_max (N), the confidence rules'
    signal. A rerun derives them again."""
    out = [f"generation.{name}" for name in sorted(gen.derived)]
    if alloc is not None and alloc.signal is None:
        out.append("allocate.signal")
    if alloc is not None and alloc.exit is not None and alloc.exit_threshold is None:
        out.append("allocate.exit_threshold")
    if alloc is not None and alloc.nmax() is not None and alloc.exit_nmax is None:  # N: another -N, another N_max
        out.append("allocate.exit_nmax")
    if vote is not None and vote.uses_confidence and vote.signal is None:
        out.append("vote.signal")
    return out


@dataclass(frozen=True)
class Recorded:
    """What a run directory's config says of how its samples were drawn, allocated and voted: a
    rerun takes these for the options it does not give (``generation``: Generation's fields;
    ``k``; ``n``, the budget, for a rerun without ``--budget``; ``allocate`` and ``vote``: the
    last run's ``Allocation.info`` and ``Vote.info``, see ``settings.with_recorded``; ``pool``:
    a pool directory's K, for a rerun of ``uab pool`` without ``-K``)."""

    generation: dict | None = None
    k: int | None = None
    n: int | None = None
    allocate: dict | None = None
    vote: dict | None = None
    pool: int | None = None  # a pool directory's K
    max_model_len: int | None = None  # the --max-model-len the last run was given


def recorded(out: str, force: bool) -> Recorded:
    """The settings a run or pool directory records (empty where it has none), less the ones the
    last run derived (``_chosen``). A ``config.json`` that is no uab config (a hand edit, another
    tool's file), or one that records a value its option refuses, is a ``UabError`` naming it,
    unless ``force``: then there is nothing to take."""
    config = _read_config(out, force, "; fix it, or use a new --output (or --force to start over)") \
        if os.path.isdir(out) else {}
    try:
        settings.check_recorded(config, os.path.join(out, CONFIG))
    except UabError as exc:
        if not force:
            raise settings.at_its_line(exc, os.path.join(out, CONFIG)) from None
        return Recorded()  # --force starts over: nothing taken from a hand-edited config
    gen = config.get("generation")
    if not isinstance(gen, dict):
        return Recorded()
    if not force:
        _check_drawn_with(out, config)
    alloc, vote = (v if isinstance(v := config.get(key), dict) else None for key in ("allocate", "vote"))
    k, n, pool, context = (config.get(key) for key in ("k", "n", "pool", "max_model_len"))  # checked above
    cap = _read_json(os.path.join(out, JUDGE)).get("max_tokens")  # a last run that asked no judge records no cap:
    if "judge_max_tokens" not in gen and type(cap) is int and cap >= 1:  # that of the labels the directory keeps
        gen = {**gen, "judge_max_tokens": cap}
    gen, alloc, vote = _chosen({**gen, "model": config.get("model_option") or ""}, alloc, vote, config.get("derived"))
    return Recorded(gen, k, n, alloc, vote, pool, context)


def _check_drawn_with(out: str, config: dict) -> None:
    """``UabError`` naming run or pool directory ``out``'s config where its fixed entries differ from
    those its samples were drawn with, as its Phase-1 output (a pool's ``pool.jsonl``), else
    ``DRAWN``, records them (a hand edit): a rerun takes the recorded settings as given, and would
    draw the rest of the budget (a larger pool) with them (and record them as the samples'), or
    read Phase-2 samples as Phase-1 ones."""
    name, edited = _drawn_with(out, config)
    if edited:
        raise UabError(f"it records other settings than {name} says its samples were drawn with "
                       f"({'; '.join(edited)}): restore it, use a new --output, or --force to discard the samples",
                       os.path.join(out, CONFIG))


def _phase1_file(config: dict) -> str:
    """The file of a directory with ``config`` whose records hold its Phase-1 provenance."""
    return POOL if "pool" in config else STAGE_FILES[0]


def _drawn_with(out: str, config: dict) -> tuple[str, list[str]]:
    """The file that says how run or pool directory ``out``'s samples were drawn (its Phase-1
    output, else ``DRAWN``: one killed in its first Phase 1 has no Phase-1 output), and ``_changed``
    from those settings to ``config``'s (none where neither says: a directory from an earlier
    uab). A pool's K may change (a larger one adds samples): not compared."""
    name = _phase1_file(config)
    drawn_with = _phase1_provenance(os.path.join(out, name))
    if drawn_with is None:
        name, drawn_with = DRAWN, _read_json(os.path.join(out, DRAWN))
        if not drawn_with:
            return name, []
    held = {**config, "k": config.get("k") if "pool" in config else drawn_with.get("k"),
            "generation": {k: v for k, v in drawn_with.items() if k not in ("k", "skipped")}}
    return name, _changed(held, config)


def remembered(params: dict, rec: Recorded) -> dict:
    """What a rerun of ``run`` or ``pool`` (by its ``params``) takes from its directory (``rec``,
    ``recorded``'s) for an option it leaves unset: the budget, and the ``--max-model-len`` the last
    run was given, so the questions ``--too-long skip`` left out stay out (at the model's own context
    they may fit); not where another ``--backend`` or ``--model`` is given (the context was that model's).
    Its option says so in the help (``Option.remembered``)."""
    gen = rec.generation or {}
    same = params.get("backend") in (None, gen.get("backend")) and params.get("model") in (None, gen.get("model"))
    return {"budget": rec.n, "max_model_len": rec.max_model_len if same else None}


def _chosen(gen: dict, alloc: dict | None, vote: dict | None,
            derived: list | None) -> tuple[dict, dict | None, dict | None]:
    """The recorded generation, allocation and vote settings less the values the last run derived
    rather than was given (``derived``, see ``_derived``): ``--vcs`` its backend chose, the
    allocation signal ``--vcs`` chose, an exit's own default threshold, the vote signal its
    allocation's signal (or ``--vcs``) chose. A rerun derives them again, so another
    ``--backend``, ``--vcs``, ``--exit`` or ``--signal`` allocates and votes as a fresh run would
    (it kept cohere's vcs for ``--backend local``, hard's 0.5 for ``--exit easy``, anll for
    ``--signal max-nll``, vcs for ``--no-vcs``), and a value given stays given even where it equals
    the derived one. A config from before uab recorded ``derived`` counts as derived each value
    that equals the one the run would have derived."""
    if not isinstance(derived, list):
        derived = _derived_before(gen, alloc, vote)
    sections = {"generation": gen, "allocate": alloc, "vote": vote}
    for entry in derived:
        section, _, name = str(entry).partition(".")
        if isinstance(sections.get(section), dict):
            sections[section] = {k: v for k, v in sections[section].items() if k != name}
    return sections["generation"], sections["allocate"], sections["vote"]


def _derived_before(gen: dict, alloc: dict | None, vote: dict | None) -> list[str]:
    """``_derived`` of a config written before it was recorded: each value equal to the one the
    run would have derived (such a config cannot tell a value given from a derived one)."""
    vcs = bool(gen.get("vcs"))
    out = ["generation.vcs"] if vcs == settings.default_vcs(gen.get("backend")) else []
    if alloc is not None and alloc.get("exit_threshold") is not None \
            and allocators.EXITS.get(alloc.get("exit")) == alloc["exit_threshold"]:
        out.append("allocate.exit_threshold")
    if alloc is not None and vote is not None and vote.get("signal") is not None \
            and vote["signal"] == pipeline.default_vote_signal(alloc.get("signal"), vcs):
        out.append("vote.signal")
    if alloc is not None and alloc.get("signal") == pipeline.signal_for(vcs):
        out.append("allocate.signal")
    return out


def phase1_k(given: int | None, recorded: Recorded, alloc: pipeline.Allocation, out: str) -> int:
    """A run's -K: ``given``, else the directory's (``recorded``), else what the allocator needs.
    A directory drawn with fewer Phase-1 samples than the allocator or its signal needs (a K = 1
    run, then ``--allocator adaptive``) says how to go on: -K is how its samples were drawn."""
    if given is not None or recorded.k is None:
        return given or alloc.phase1_samples
    short = alloc.phase1_short(recorded.k, alloc.signal or "anll")  # the default signals need one
    if short:
        raise UabError(f"its samples were drawn with -K {recorded.k}, and {short[0]} needs -K {short[1]} Phase-1 "
                       f"samples per question: use a new --output, or give -K {short[1]} --force to discard them", out)
    return recorded.k


def _setting_name(alloc: pipeline.Allocation, signal: str, vote: pipeline.Vote, judge_tokens: int | None = None) -> str:
    """A readable, unique file-name part for one allocation and vote setting; ``judge_tokens``: the
    ``--judge-max-tokens`` of the labels the allocation read, where not the paper's (other labels,
    another allocation; the paper's names a file as before the option)."""
    vote_info = {k: v for k, v in vote.info().items() if k != "version"}
    judged = [] if judge_tokens in (None, settings.JUDGE_TOKENS) else [{"judge_max_tokens": judge_tokens}]
    settings_digest = hashlib.sha256(orjson.dumps([alloc.info(signal), vote_info, *judged], option=orjson.OPT_SORT_KEYS))
    return f"N{alloc.n}-{alloc.allocator}-{vote.rule}-{settings_digest.hexdigest()[:8]}"


def run(
    records: list[dict],
    backend: MakeBackend,
    gen: pipeline.Generation,
    out: str,
    alloc: pipeline.Allocation,
    vote: pipeline.Vote = pipeline.Vote(),
    k: int = 1,
    force: bool = False,
    input_name: str = "",
    callbacks: Callbacks = Callbacks(),
    price: cost.Price | None = None,
    max_model_len: int | None = None,
) -> RunResult:
    """Phase 1 → allocate → Phase 2 → vote, writing every intermediate into ``out``.

    ``backend`` makes the backend (used as a context manager, which closes it); it is
    called once the directory's lock is held, so a busy directory fails at once. Samples
    already in ``out`` (same generation settings and k) are reused, so another budget or
    allocator draws only the samples it lacks and votes as a fresh run would. What the run
    cost (tokens and wall-clock time per stage, money at ``price``) goes to ``summary.json``.
    """
    started = time.perf_counter()
    signal = alloc.signal or pipeline.signal_for(gen.vcs)
    alloc.check(k, signal, len(records), vcs=gen.vcs)  # fail before any sampling
    vote.check_rules()
    derived = _derived(gen, alloc, vote)
    vote = pipeline.resolve_vote_signal(vote, signal, gen.vcs)
    rundir = RunDir(out, force)
    try:
        judged = _asks_judge(alloc, k)
        config = _config(records, gen, input_name, derived, max_model_len, judged, k=k, n=alloc.n,
                         allocate=alloc.info(signal), vote=vote.info())
        rundir.check(config, force)  # before the model loads
        with backend() as be:
            gen = dataclasses.replace(gen, model=gen.model or be.model)
            skipped = _fit(records, be, gen, callbacks.on_skip, judged)
            rundir.open({**config, "generation": gen.info(judged)}, force,
                        lambda store: _reusable(records, store, k, signal if alloc.uses_signal else None, out))
            result = _stages(rundir, records, be, gen, alloc, vote, k, signal, callbacks, skipped)
            about = {"input": input_name, "generation": pipeline.drawn_info(gen, be, judged), "k": k,
                     "vote": vote.info(),
                     "allocate": {**alloc.info(signal, result.planned, result.allocation.saved),
                                  **({"rounds": result.allocation.rounds} if result.allocation.rounds is not None else {})},
                     "votes_file": result.votes_file, "skipped": [t.id for t in result.skipped]}
            result.summary = _summary(records, result, alloc, time.perf_counter() - started, about, price)
            rundir.write_json(SUMMARY, result.summary)
            return result
    finally:
        rundir.close()


def _reusable(records: list[dict], store: dict[str, dict[int, dict]], k: int, signal: str | None, out: str) -> None:
    """``UabError`` naming the first question whose stored Phase-1 sample lacks the token-logprob
    statistic ``signal`` reads (drawn by a run whose allocator read none, on a backend that returns
    none): its allocation would fail after the last run's outputs and config were replaced, and
    every plain rerun after it."""
    if signal is None or not settings.needs_logprobs(signal):
        return
    for rec in records:
        stored = store.get(rec["id"], {})
        if any(lacks(stored[i], SCALAR_SIGNALS[signal]) for i in range(k) if i in stored):  # not a filtered one
            raise UabError(f"question {rec['id']!r}: its stored Phase-1 samples have no token logprobs (the backend "
                           f"returned none), which --signal {signal} needs; rerun with an allocator that reads no "
                           "signal (--allocator uniform), or use a new --output", out)


def _fit(records: list[dict], backend: Backend, gen: pipeline.Generation,
         on_skip: pipeline.OnSkip | None, judge: bool = False) -> list[pipeline.TooLong]:
    """``pipeline.fit`` before the directory records anything (a question too long leaves no
    config behind; ``judge``: its judge prompt too); returns the questions ``--too-long skip``
    left out of every stage."""
    return pipeline.fit(records, backend, gen, on_skip or (lambda rec, too_long: None), judge)


def _asks_judge(alloc: pipeline.Allocation, k: int) -> bool:
    """Whether a run asks the LLM judge: its allocator reads the labels and there is a Phase 2
    to allocate (at N = K the labels would go unread)."""
    return alloc.allocator in allocators.NEEDS_JUDGE and alloc.n > k


def _summary(records, result: RunResult, alloc, seconds: float, about: dict, price) -> dict:
    """``summary.json``: the tokens of the samples each stage file holds, of those drawn now, time per stage."""
    held = {f"phase{p}": cost.Tokens().add(s for rec in records for s in samples(rec, p)) for p in (1, 2)}
    judge = result.judge if alloc.allocator in allocators.NEEDS_JUDGE else None
    return cost.run_summary(held, result.drawn_tokens, result.seconds, seconds, judge, result.votes, about, price,
                            result.probes, result.allocation.fallbacks)


def _stages(rundir, records, be, gen, alloc, vote, k, signal, callbacks: Callbacks, skipped) -> RunResult:
    clock, seconds = time.perf_counter, {}
    drawn_now: dict[tuple, dict] = {}  # (question, index) -> the sample drawn now; one drawn again replaces it
    judge_info: dict = {}
    judged = _asks_judge(alloc, k)
    if judged:
        start = clock()
        judge_info = _judge_once(rundir, records, be, gen)
        seconds["judge"] = clock() - start
    elif alloc.allocator in allocators.NEEDS_JUDGE:  # N = K: no Phase 2, the labels would go unread
        judge_info = cost.judge_skipped(f"budget N={alloc.n} is the {k} Phase-1 sample{'s' * (k > 1)} per question: "
                                        "nothing to allocate")

    def keep(rec: dict, sample: dict) -> None:
        rundir.checkpoint(rec, sample)
        drawn_now[rec["id"], sample["index"]] = sample
        if callbacks.on_sample:
            callbacks.on_sample(rec, sample)

    start = clock()
    restored = rundir.take(records, 0, k)
    wanted = sum(len(pipeline.missing(r, 0, k)) for r in records)
    if callbacks.on_stage:
        callbacks.on_stage("phase1", wanted)
    sig = signal if alloc.uses_signal else None
    phase1_drawn = pipeline.phase1(records, be, gen, k, keep, sig, len(skipped), judged=judged)
    drawn = phase1_drawn.samples
    rundir.write("phase1.jsonl", records)
    seconds["phase1"], start = clock() - start, clock()
    rounds = alloc.allocator in allocators.ROUNDS  # Phase 2 drawn round by round as it allocates
    if rounds and callbacks.on_stage:  # the rounds are seeded: a rerun reuses what the checkpoint holds
        to_draw = alloc.n * len(records) - sum(len(samples(r, 1)) for r in records) - rundir.held_from(records, k)
        callbacks.on_stage("phase2", max(to_draw, 0))

    held: list[int] = []  # per question, the samples it held after the last round (none before the first)
    voted = np.zeros(len(records), dtype=np.int64)  # and its vote margin then

    def margins(n):  # a round: the samples n asks for (stored or drawn), then the votes so far
        nonlocal restored, drawn, held
        first, now = not held, n.tolist()
        grown = [r for r, h in enumerate(now) if first or h != held[r]]  # the others hold and vote as they did
        held = now
        for r in grown:
            records[r]["extra"] = now[r] - k
        more = [records[r] for r in grown]
        restored += rundir.take(more, k, [k + rec["extra"] for rec in more])
        # after the first round every record's Phase-2 provenance is this run's own: not checked again
        drawn += pipeline.phase2(records, be, gen, keep, checked=not first, grown=grown)
        voted[grown] = pipeline.vote_margins(more, vote)
        return voted.copy()

    summary = pipeline.allocate(records, alloc, margins=margins if rounds else None)
    rundir.write("allocation.jsonl", records)
    seconds["allocate"], start = (0.0, start) if rounds else (clock() - start, clock())  # rounds: Phase 2's time
    if callbacks.on_allocated:
        callbacks.on_allocated(summary)
    if not rounds:
        restored += rundir.take(records, k, [k + r["extra"] for r in records])
        if callbacks.on_stage:
            callbacks.on_stage("phase2", sum(len(pipeline.missing(r, k, k + r["extra"])) for r in records))
        drawn += pipeline.phase2(records, be, gen, keep)
    rundir.write("phase2.jsonl", records)
    seconds["phase2"], start = clock() - start, clock()
    votes = pipeline.VoteSummary(rule=vote)
    for rec in records:
        votes.add(pipeline.vote(rec, vote))
    votes_file = VOTES_OF.format(_setting_name(alloc, signal, vote, gen.judge_max_tokens if judged else None))
    rundir.write(votes_file, records)
    rundir.copy(votes_file, "votes.jsonl")
    seconds["vote"] = clock() - start
    tokens = {f"phase{p}": cost.Tokens().add(s for s in drawn_now.values() if s["phase"] == p) for p in (1, 2)}
    return RunResult(alloc.n * len(records), drawn, restored, summary, votes, judge_info, votes_file, skipped,
                     drawn_tokens=tokens, seconds=seconds, probes=phase1_drawn.probes)


@dataclass
class PoolResult:
    """What ``pool`` drew: the samples drawn now, and ``summary.json`` (its ``reused`` among them)."""

    drawn: int
    summary: dict


def pool(
    records: list[dict],
    backend: MakeBackend,
    gen: pipeline.Generation,
    out: str,
    k: int,
    force: bool = False,
    input_name: str = "",
    callbacks: Callbacks = Callbacks(),
    max_model_len: int | None = None,
    price: cost.Price | None = None,
) -> PoolResult:
    """Draw ``k`` samples per question once, resumably, into ``out/pool.jsonl``.

    A pool replays any allocator offline (``uab simulate``); a larger ``k`` on the same
    directory adds samples. What the draw cost (the samples drawn now and reused, their tokens,
    wall-clock time, money at ``price``) goes to ``summary.json``. ``records`` loses the
    questions that ``--too-long skip`` leaves out.
    """
    if k < 1:
        raise UabError(f"--samples must be >= 1, got {k}")
    started = time.perf_counter()
    rundir = RunDir(out, force)
    try:
        config = _config(records, gen, input_name, _derived(gen), max_model_len, pool=k)
        rundir.check(config, force)  # before the model loads
        with backend() as be:
            gen = dataclasses.replace(gen, model=gen.model or be.model)
            skipped = _fit(records, be, gen, callbacks.on_skip)
            rundir.open({**config, "generation": gen.info()}, force)
            start = time.perf_counter()
            rundir.take(records, 0, k)
            if callbacks.on_stage:
                callbacks.on_stage("pool", sum(len(pipeline.missing(r, 0, k)) for r in records))
            drawn_now: dict[tuple, dict] = {}  # (question, index) -> the sample drawn now; one drawn again replaces it

            def keep(rec: dict, sample: dict) -> None:
                rundir.checkpoint(rec, sample)
                drawn_now[rec["id"], sample["index"]] = sample
                if callbacks.on_sample:
                    callbacks.on_sample(rec, sample)

            drawn = pipeline.phase1(records, be, gen, k, keep, skipped=len(skipped)).samples
            rundir.write(POOL, records)
            held = cost.Tokens().add(s for rec in records for s in samples(rec))
            about = {"input": input_name, "generation": pipeline.drawn_info(gen, be), "k": k,
                     "skipped": [t.id for t in skipped]}
            now = time.perf_counter()
            summary = cost.pool_summary(held, cost.Tokens().add(drawn_now.values()), now - start, now - started,
                                        len(records), about, price)
            rundir.write_json(SUMMARY, summary)
            return PoolResult(drawn, summary)
    finally:
        rundir.close()


def fingerprint(records: list[dict]) -> str:
    """The digest configs held before ``questions_fingerprint``: every field of every record, in order."""
    h = hashlib.sha256()
    for rec in records:
        h.update(orjson.dumps(rec, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE))
    return h.hexdigest()[:16]


def _changed(old: dict, new: dict) -> list[str]:
    """``--option (old → new)`` for each fixed entry that differs between two configs."""
    out: dict[str, str] = {}  # flag -> its change, the first one where two entries share a flag
    older = "questions" not in old  # a config from before "questions": the whole records compare
    for key in FIXED:
        if key == ("questions" if older else "fingerprint"):
            continue
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            ignore = pipeline.Generation.SAMPLE_FREE if key == "generation" else ()
            for option, change in settings.changes(key, a, b, ignore).items():
                out.setdefault(option, change)
        else:
            out.setdefault(settings.flag(key), f"({settings.show(a)} → {settings.show(b)})")
    return [f"{flag} {change}" for flag, change in out.items()]


def _judge_once(rundir: RunDir, records: list[dict], backend: Backend, gen: pipeline.Generation) -> dict:
    """Judge labels survive resume in ``judge.json`` (they are not part of the budget), with each
    question's verdict and tokens, so that a rerun counts the calls and verdicts of its own
    questions (``--too-long skip`` may leave out some the file labels). A file that does not
    label every question (damaged, or more questions now), or one from before the verdicts were
    kept that labels other questions than these, is judged again: the judge's calls are seeded
    per question, so the labels it had come out the same; but not the questions whose verdicts it
    keeps, or the judge checkpoint (``RunDir.judged``: a stopped run's) does. So is one whose judge
    had another ``--judge-max-tokens`` (``max_tokens``; a file without it: the paper's, which uab
    asked with before the option), all of them. Reused labels mostly cut at the cap warn as new ones do."""
    saved = _read_json(rundir.file(JUDGE))
    labels, verdicts, counts = saved.get("labels"), saved.get("verdicts"), saved.get("counts")
    ids = [rec["id"] for rec in records]
    same_cap = saved.get("max_tokens", settings.JUDGE_TOKENS) == gen.judge_max_tokens
    if same_cap and isinstance(labels, dict) and all(labels.get(i) in ("easy", "hard") for i in ids):
        if isinstance(verdicts, dict) and all(_verdict(verdicts.get(i), labels[i]) for i in ids):
            counts = pipeline.judge_counts(verdicts[i] for i in ids)
        elif not (isinstance(counts, dict) and len(labels) == len(ids)):  # an older file's counts: of its questions
            counts = None
        if counts is not None:
            for rec in records:
                rec["judge"] = labels[rec["id"]]
            pipeline.warn_cut(counts, gen.judge_max_tokens)
            return {**counts, "reused": True}
    kept = {i: v for i, v in verdicts.items() if _verdict(v)} if same_cap and isinstance(verdicts, dict) else {}
    known = {**kept, **rundir.judged(gen.judge_max_tokens)}
    counts = pipeline.judge(records, backend, gen, known,
                            lambda qid, verdict: rundir.judge(qid, verdict, gen.judge_max_tokens))
    verdicts = counts.pop("verdicts")
    rundir.judge_done({"counts": counts, "labels": {r["id"]: r["judge"] for r in records},
                       "verdicts": verdicts, "max_tokens": gen.judge_max_tokens})
    return {**counts, "reused": all(i in known for i in ids)}


def _verdict(found, label: str | None = None) -> bool:
    """Whether ``found`` is a verdict ``judge.json`` kept (for a question labelled ``label``)."""
    return isinstance(found, dict) and found.get("verdict") in cost.JUDGE_VERDICTS \
        and (label is None or pipeline.judge_label(found) == label) \
        and all(found.get(k) is None or is_int(found.get(k)) for k in ("prompt_tokens", "completion_tokens"))


def pool_file(path: str) -> str:
    """The pool file a ``simulate``/``report`` argument names: a file, a ``uab pool``
    directory's ``pool.jsonl``, or a Uniform ``uab run`` directory's ``votes.jsonl`` (N samples
    of every question); another run directory is not a pool and says so."""
    return _directory_file(path, pool=True)


def pool_price(path: str) -> cost.Price | None:
    """The ``--price`` the pool a ``simulate`` argument names was drawn at: a ``uab pool`` (or
    Uniform ``uab run``) directory's ``summary.json`` records it (its ``source``); ``None`` for a
    file or a directory that records none."""
    if not os.path.isdir(path):
        return None
    found = os.path.join(path, SUMMARY)
    price = cost.Price.recorded(_read_json(found).get("price"))
    return price and dataclasses.replace(price, source=found)


def records_file(path: str, output: str) -> str:
    """The sampled records a ``regrade`` argument names: a file, a ``uab pool`` directory's
    ``pool.jsonl`` or a ``uab run`` directory's ``votes.jsonl`` (every sample its allocation
    chose). A directory is not edited in place (its checkpoint keeps the answers as drawn):
    an ``output`` inside it is refused, as inside the directory of a file of one (``pool.jsonl``)."""
    found = _directory_file(path, pool=False)
    home = path if found != path else os.path.dirname(path) or "."
    inside = os.path.realpath(home)
    ours = found != path or os.path.exists(os.path.join(home, CONFIG))  # a pool or run directory
    if ours and output != "-" and os.path.commonpath([os.path.realpath(output), inside]) == inside:
        raise UabError("uab regrade leaves the pool or run directory it reads as drawn (a rerun reuses its "
                       "checkpoint): give -o a file outside it", output)
    return found


def _directory_file(path: str, pool: bool) -> str:
    """``pool_file`` (``pool``) or ``records_file``'s file."""
    if not os.path.isdir(path):
        return path
    found = os.path.join(path, POOL)
    if os.path.exists(found):
        return found
    if os.path.exists(os.path.join(path, CONFIG)):
        config = _read_config(path)
        if "pool" in config:
            raise UabError("an unfinished `uab pool` directory: rerun the same `uab pool` command to finish it",
                           path)
        allocate = config.get("allocate")
        allocator = allocate.get("allocator") if isinstance(allocate, dict) else None
        if pool and allocator != "uniform":
            raise UabError(f"a `uab run` directory, not a pool: --allocator {allocator} chose how many samples each "
                           "question has; draw a pool with `uab pool INPUT -K 16 -o DIR`", path)
        votes = os.path.join(path, STAGE_FILES[-1])
        if os.path.exists(votes):
            return votes
        raise UabError("an unfinished `uab run` directory (no votes.jsonl): rerun the same `uab run` command "
                       "to finish it", path)
    if pool:
        raise UabError(f"no {POOL} in this directory: give a pool file or a `uab pool` directory", path)
    raise UabError(f"no {POOL} and no {STAGE_FILES[-1]} in this directory: give a file of sampled records, a "
                   "`uab pool` directory or a finished `uab run` directory", path)


def check_pool(records: list[dict], path: str, lines: list[int] | None = None) -> None:
    """``UabError`` naming the first record whose samples an allocator other than Uniform chose
    (a run's ``votes.jsonl`` or ``phase2.jsonl``): every replay would inherit that choice; or
    whose samples were drawn otherwise than the first record's (pools of two draws concatenated):
    what ``simulate`` records and recommends are the first record's settings (``PoolCheck``)."""
    check = PoolCheck(path)
    for r, rec in enumerate(records):
        check.add(rec, lines[r] if lines else None)
    check.done()


class PoolCheck:
    """``check_pool`` record by record (``add``; a pool read as a stream), its refusal raised by ``done``."""

    def __init__(self, path: str):
        self.path = path
        self.allocated: UabError | None = None  # the first record an allocator chose the samples of
        self.unlike: UabError | None = None  # the first record drawn otherwise than the first
        self.same_draw: pipeline.Unlike | None = None

    def add(self, rec: dict, line: int | None) -> None:
        from .evaluation import generation_changes  # evaluation is heavy: loaded by the commands that read a pool

        chosen = provenance(rec).get("allocate")
        if self.allocated is None and isinstance(chosen, dict) and chosen.get("allocator") not in (None, "uniform"):
            self.allocated = UabError(f"its samples were allocated by --allocator {chosen['allocator']} (a run's output, "
                                      "not a pool): every replay would inherit that choice; draw a pool with `uab pool "
                                      "INPUT -K 16 -o DIR`", self.path, line)
        if self.same_draw is None:
            self.same_draw = pipeline.Unlike(pipeline.generation_of(rec), generation_changes)
        elif self.unlike is None and (otherwise := self.same_draw(rec)):
            self.unlike = UabError(f"record {rec.get('id')!r} was drawn otherwise than the pool's first record ("
                                   + "; ".join(f"{o} {c}" for o, c in otherwise.items()) + "): a pool is one draw's "
                                   "settings, which simulate records and recommends; simulate each pool apart",
                                   self.path, line)

    def done(self) -> None:
        """Raise the refusal of the records added, if any: an allocated record's first."""
        if self.allocated or self.unlike:
            raise self.allocated or self.unlike


def read_pool(path: str) -> Pooled:
    """The pool file ``path`` as ``simulate`` and ``report`` read it (``pools.Pooled``): streamed, each
    record validated as sampled records (errors name its line) and checked (``check_pool``, refused
    once the whole file is read, so that an invalid line later in it comes first as when the file
    was read whole), and nothing of it kept but what they read."""
    from . import pools  # heavy (grading): loaded by the commands that read a pool

    check, pooled = PoolCheck(display_name(path)), pools.Pooled()
    with gcpolicy.paused():
        for line, rec in stream_records(path, "sampled"):
            check.add(rec, line)
            pooled.add(rec)
    check.done()
    return pooled


def _read_config(path: str, force: bool = False, hint: str = "") -> dict:
    """The config of directory ``path`` (``{}`` where it has none); one that is no uab config (not
    JSON, cut short, a hand edit) is a ``UabError`` naming it and ending in ``hint``, unless
    ``force`` (then ``{}``)."""
    file = os.path.join(path, CONFIG)
    try:
        found, problem = _parsed_config(file)
    except FileNotFoundError:
        return {}
    if problem is None:
        return found
    if force:
        return {}
    raise UabError(f"not a uab {CONFIG}: {problem}{hint}", file)


def _parsed_config(file: str) -> tuple[dict | None, str | None]:
    """``(config, None)`` for a uab config.json, ``(None, what is wrong)`` for another file
    (not JSON, cut short, a hand edit); ``FileNotFoundError`` where there is none."""
    with _open_read(file) as fh:
        data = fh.read()
    try:
        found = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        return None, f"not JSON ({exc})"
    problem = _config_problem(found)
    return (_upgraded(found), None) if problem is None else (None, problem)


def _upgraded(config: dict) -> dict:
    """``config`` (a uab config) with the entries a uab before 2026-11-25 named otherwise under
    this version's names: its ``allocate`` was the whole allocation, T named ``temperature``
    (``Allocation.info`` names it ``T``), which a rerun would take for unset (T = 0.2)."""
    alloc = config.get("allocate")
    if not (isinstance(alloc, dict) and "temperature" in alloc and "T" not in alloc):
        return config
    return {**config, "allocate": {("T" if k == "temperature" else k): v for k, v in alloc.items()}}


def _config_problem(found) -> str | None:
    """What makes ``found`` (a config.json's JSON) no uab config (None: nothing)."""
    if not isinstance(found, dict):
        return "not a JSON object"
    bad = next((k for k in settings.SECTIONS if not isinstance(found.get(k, {}), dict)), None)
    return None if bad is None else f"its {bad!r} is not an object"


def _phase1_provenance(path: str) -> dict | None:
    """How a run directory's Phase-1 samples were drawn, as the first record of its ``phase1.jsonl``
    records it (``uab.phase1``: the generation settings and ``k``); None where there is none to read."""
    try:
        with _open_read(path) as fh:
            found = provenance(orjson.loads(fh.readline())).get("phase1")
    except (FileNotFoundError, orjson.JSONDecodeError, AttributeError):
        return None
    return found if isinstance(found, dict) else None


def _read_json(path: str) -> dict:
    """A JSON object file; ``{}`` where there is none, or something else; ``UabError`` where it
    cannot be read (no permission)."""
    try:
        with _open_read(path) as fh:
            found = orjson.loads(fh.read())
    except (FileNotFoundError, orjson.JSONDecodeError):
        return {}
    return found if isinstance(found, dict) else {}


def _open_read(path: str):
    """``path`` opened to read; ``FileNotFoundError`` where there is none, any other failure to
    open (no permission, a directory) a ``UabError`` naming it."""
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise UabError(f"cannot read: {exc.strerror or exc}", path) from None
