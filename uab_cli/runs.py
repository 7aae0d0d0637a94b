"""``uab run``: all four stages with one loaded model, checkpointed into a run directory
so a crashed or killed run resumes where it stopped and ends with the same votes."""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field

import orjson

from . import pipeline
from .backends.base import Backend
from .errors import UabError
from .records import atomic_output, dumps, is_int, samples, write_records

CONFIG = "config.json"
CHECKPOINT = "samples.ckpt.jsonl"
STAGE_FILES = ("phase1.jsonl", "allocation.jsonl", "phase2.jsonl", "votes.jsonl")
JUDGE = "judge.json"
# Config entries that do not change the results: a run resumes whatever they say.
INFORMATIONAL = ("input",)
# How a config entry is spelled on the command line (for "changed settings" errors).
OPTIONS = {
    "n": "--budget", "k": "--k", "fingerprint": "input questions",
    "generation.backend": "--backend", "generation.model": "--model", "generation.seed": "--seed",
    "generation.temperature": "--temperature", "generation.max_tokens": "--max-tokens",
    "generation.top_p": "--top-p", "generation.prompt": "--prompt", "generation.vcs": "--vcs/--no-vcs",
    "generation.version": "uab version", "allocate.allocator": "--allocator", "allocate.signal": "--signal",
    "allocate.temperature": "--signal-temperature", "allocate.seed": "--allocation-seed",
    "allocate.gain": "--gain", "allocate.exit": "--exit", "allocate.exit_threshold": "--exit-threshold",
    "allocate.exit_mode": "--exit-mode", "allocate.max_per_question": "--max-per-question",
    "allocate.vote_model": "--vote-model",
    "vote.include_phase1": "--exclude-phase1", "vote.tie_seed": "--tie-seed",
}


class RunDir:
    """A run directory: an exclusive lock, the run's configuration, a sample checkpoint."""

    def __init__(self, path: str, config: dict, force: bool = False):
        from filelock import FileLock, Timeout

        self.path = path
        try:
            os.makedirs(path, exist_ok=True)
        except OSError as exc:
            raise UabError(f"cannot use as a run directory: {exc.strerror}", path) from None
        self._lock = FileLock(os.path.join(path, ".lock"))
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            raise UabError("another `uab run` is using this directory (its lock is held)", path) from None
        try:
            self._check_config(config, force)
        except BaseException:
            self._lock.release()
            raise
        self._ckpt = open(self.file(CHECKPOINT), "ab")

    def file(self, name: str) -> str:
        return os.path.join(self.path, name)

    def _check_config(self, config: dict, force: bool) -> None:
        changed: list[str] = []
        with contextlib.suppress(FileNotFoundError):
            with open(self.file(CONFIG), "rb") as fh:
                try:
                    existing = orjson.loads(fh.read())
                except orjson.JSONDecodeError:
                    existing = None
            changed = _changed(existing, config) if isinstance(existing, dict) else [f"unreadable {CONFIG}"]
        if changed:
            if not force:
                raise UabError(
                    f"this directory holds a run with different settings ({'; '.join(changed)}); "
                    "use a new --out, or --force to start over", self.path)
            for name in (CHECKPOINT, JUDGE, *STAGE_FILES):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.file(name))
        # Temporary files of a write that a kill interrupted (we hold the lock: nobody else writes).
        for tmp in glob.glob(os.path.join(glob.escape(self.path), ".*.tmp")):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        with atomic_output(self.file(CONFIG)) as fh:
            fh.write(orjson.dumps(config, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))

    def restore(self, records: list[dict]) -> int:
        """Put checkpointed samples back into their records; returns how many.

        Only each record's gap-free run of sample indices 0, 1, ... is kept: the stages
        draw the indices after it, so a sample that finished out of order before a crash
        is drawn again rather than duplicated. The checkpoint is rewritten to hold exactly
        the restored samples (this also drops a line torn by a kill).
        """
        by_id = {rec["id"]: rec for rec in records}
        found: dict[str, dict[int, dict]] = {}
        with open(self.file(CHECKPOINT), "rb") as fh:
            for raw in fh:
                try:
                    if not raw.endswith(b"\n"):
                        raise ValueError("torn")
                    row = orjson.loads(raw)
                    qid, sample = row["id"], row["sample"]
                    index = sample["index"]
                except (ValueError, TypeError, KeyError):
                    break  # a line cut short by a kill: everything after it is lost too
                if qid in by_id:
                    found.setdefault(qid, {}).setdefault(index, sample)
        kept = []
        for rec in records:
            ckpt = found.get(rec["id"], {})
            before = len(kept)
            own = {s.get("index"): s for s in samples(rec)}  # samples the input came with
            merged: list[dict] = []
            while len(merged) in own or len(merged) in ckpt:
                i = len(merged)
                merged.append(own.get(i) or ckpt[i])
                if i not in own:
                    kept.append({"id": rec["id"], "sample": ckpt[i]})
            if len(kept) > before:  # restored at least one
                rest = [s for s in samples(rec) if not (is_int(s.get("index")) and s["index"] < len(merged))]
                rec["samples"] = merged + rest
        self._ckpt.close()
        write_records(self.file(CHECKPOINT), kept)
        self._ckpt = open(self.file(CHECKPOINT), "ab")
        return len(kept)

    def checkpoint(self, rec: dict, sample: dict) -> None:
        """Append one finished sample (flushed, so a kill loses at most the line being written)."""
        self._ckpt.write(dumps({"id": rec["id"], "sample": sample}))
        self._ckpt.flush()

    def write(self, name: str, records: list[dict]) -> None:
        write_records(self.file(name), records)

    def close(self) -> None:
        self._ckpt.close()
        self._lock.release()


@dataclass
class RunResult:
    """Budget accounting and accuracy of a finished run."""

    planned: int
    drawn: int
    restored: int
    allocation: pipeline.AllocationSummary
    votes: pipeline.VoteSummary
    judge: dict = field(default_factory=dict)


def run(
    records: list[dict],
    backend: Backend,
    gen: pipeline.Generation,
    out: str,
    n: int,
    allocate_options: dict,
    vote_options: dict,
    k: int = 1,
    force: bool = False,
    input_name: str = "",
    on_stage: Callable[[str, int], None] | None = None,
    on_sample: pipeline.OnSample | None = None,
) -> RunResult:
    """Phase 1 → allocate → Phase 2 → vote, writing every intermediate into ``out``."""
    config = {"input": input_name, "m": len(records), "fingerprint": fingerprint(records),
              "n": n, "k": k, "generation": gen.info(), "allocate": allocate_options, "vote": vote_options}
    rundir = RunDir(out, config, force)
    try:
        restored = rundir.restore(records)
        judge_info: dict = {}
        if allocate_options.get("allocator") == "judge":
            judge_info = _judge_once(rundir, records, backend, gen)

        def stage(name: str, todo: int) -> None:
            if on_stage:
                on_stage(name, todo)

        def keep(rec: dict, sample: dict) -> None:
            rundir.checkpoint(rec, sample)
            if on_sample:
                on_sample(rec, sample)

        stage("phase1", sum(max(0, k - len(samples(r, 1))) for r in records))
        drawn = pipeline.phase1(records, backend, gen, k, keep)
        rundir.write("phase1.jsonl", records)
        summary = pipeline.allocate(records, n, **allocate_options)
        rundir.write("allocation.jsonl", records)
        stage("phase2", sum(max(0, r["extra"] - len(samples(r, 2))) for r in records))
        drawn += pipeline.phase2(records, backend, gen, keep)
        rundir.write("phase2.jsonl", records)
        votes = pipeline.VoteSummary()
        for rec in records:
            votes.add(pipeline.vote(rec, **vote_options))
        rundir.write("votes.jsonl", records)
        return RunResult(n * len(records), sum(len(samples(r)) for r in records), restored, summary,
                         votes, judge_info)
    finally:
        rundir.close()


def pool(
    records: list[dict],
    backend: Backend,
    gen: pipeline.Generation,
    out: str,
    k: int,
    force: bool = False,
    input_name: str = "",
    on_sample: pipeline.OnSample | None = None,
) -> int:
    """Draw ``k`` samples per question once, resumably, into ``out/pool.jsonl``.

    A pool replays any allocator offline (``uab simulate``). Returns the samples drawn now.
    """
    config = {"input": input_name, "m": len(records), "fingerprint": fingerprint(records),
              "pool": k, "generation": gen.info()}
    rundir = RunDir(out, config, force)
    try:
        rundir.restore(records)

        def keep(rec: dict, sample: dict) -> None:
            rundir.checkpoint(rec, sample)
            if on_sample:
                on_sample(rec, sample)

        drawn = pipeline.phase1(records, backend, gen, k, keep)
        rundir.write("pool.jsonl", records)
        return drawn
    finally:
        rundir.close()



def fingerprint(records: list[dict]) -> str:
    """A digest of the input records: a run resumes only on the same questions, wherever the file is."""
    h = hashlib.sha256()
    for rec in records:
        h.update(orjson.dumps(rec, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE))
    return h.hexdigest()[:16]


def _changed(old: dict, new: dict, prefix: str = "") -> list[str]:
    """``--option (old → new)`` for each setting that differs between two configs."""
    out = []
    for key in sorted(set(old) | set(new), key=str):
        path = f"{prefix}{key}"
        if path in INFORMATIONAL or old.get(key) == new.get(key):
            continue
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += _changed(a, b, f"{path}.")
        else:
            out.append(f"{OPTIONS.get(path, path)} ({_show(a)} → {_show(b)})")
    return out


def _show(value) -> str:
    return "unset" if value is None else orjson.dumps(value).decode() if not isinstance(value, str) else value


def _judge_once(rundir: RunDir, records: list[dict], backend: Backend, gen: pipeline.Generation) -> dict:
    """Judge labels survive resume in ``judge.json`` (they are not part of the budget)."""
    path = rundir.file(JUDGE)
    if os.path.exists(path):
        with open(path, "rb") as fh:
            saved = orjson.loads(fh.read())
        for rec in records:
            rec["judge"] = saved["labels"][rec["id"]]
        return saved["counts"]
    counts = pipeline.judge(records, backend, gen)
    with atomic_output(path) as fh:
        fh.write(orjson.dumps({"counts": counts, "labels": {r["id"]: r["judge"] for r in records}}))
    return counts
