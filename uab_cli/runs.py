"""``uab run``: all four stages with one loaded model, checkpointed into a run directory
so a crashed or killed run resumes where it stopped and ends with the same votes."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field

import orjson

from . import pipeline
from .backends.base import Backend
from .errors import UabError
from .records import atomic_output, dumps, samples, write_records

CONFIG = "config.json"
CHECKPOINT = "samples.ckpt.jsonl"
STAGE_FILES = ("phase1.jsonl", "allocation.jsonl", "phase2.jsonl", "votes.jsonl")


class RunDir:
    """A run directory: an exclusive lock, the run's configuration, a sample checkpoint."""

    def __init__(self, path: str, config: dict, force: bool = False):
        from filelock import FileLock, Timeout

        self.path = path
        os.makedirs(path, exist_ok=True)
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
        existing = None
        with contextlib.suppress(FileNotFoundError):
            with open(self.file(CONFIG), "rb") as fh:
                existing = orjson.loads(fh.read())
        if existing is not None and existing != config:
            if not force:
                changed = sorted(k for k in set(existing) | set(config) if existing.get(k) != config.get(k))
                raise UabError(
                    f"this directory holds a run with different settings ({', '.join(changed)}); "
                    "use a new --out, or --force to start over", self.path)
            for name in (CHECKPOINT, *STAGE_FILES):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.file(name))
        with atomic_output(self.file(CONFIG)) as fh:
            fh.write(orjson.dumps(config, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))

    def restore(self, records: list[dict]) -> int:
        """Put checkpointed samples back into their records; returns how many."""
        by_id = {rec["id"]: rec for rec in records}
        restored = 0
        seen = set()
        with open(self.file(CHECKPOINT), "rb") as fh:
            for raw in fh:
                try:
                    row = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    break  # a line cut short by a kill: everything after it is lost too
                key = (row["id"], row["sample"]["index"])
                if row["id"] in by_id and key not in seen:
                    seen.add(key)
                    by_id[row["id"]].setdefault("samples", []).append(row["sample"])
                    restored += 1
        for rec in records:
            rec.get("samples", []).sort(key=lambda s: s["index"])
        # Drop a torn tail so later appends start on a clean line.
        self._ckpt.close()
        self._truncate_torn_tail()
        self._ckpt = open(self.file(CHECKPOINT), "ab")
        return restored

    def _truncate_torn_tail(self) -> None:
        with open(self.file(CHECKPOINT), "rb+") as fh:
            data = fh.read()
            good = 0
            for line in data.splitlines(keepends=True):
                if not line.endswith(b"\n"):
                    break
                try:
                    orjson.loads(line)
                except orjson.JSONDecodeError:
                    break
                good += len(line)
            fh.truncate(good)

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
    config = {"input": input_name, "questions": [r["id"] for r in records][:5], "m": len(records),
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


def _judge_once(rundir: RunDir, records: list[dict], backend: Backend, gen: pipeline.Generation) -> dict:
    """Judge labels survive resume in ``judge.json`` (they are not part of the budget)."""
    path = rundir.file("judge.json")
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
