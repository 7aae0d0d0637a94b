"""The streaming stages: ``allocate`` and ``vote`` from one JSONL file to another without
holding the records, a block at a time on every CPU (``blocks``)."""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass

from . import gcpolicy
from .blocks import changed, fingerprint, map_records
from .jsonl import display_name, dumps, read_batches, rereadable, whole_output
from .pipeline import (
    AllocationInputs,
    AllocationPlan,
    AllocationSummary,
    RegradeSummary,
    VoteSummary,
    default_signal,
    regrade,
    vote,
    vote_settings,
)
from .settings import Allocation, Vote


def allocate_file(path: str, settings: Allocation, output: str) -> AllocationSummary:
    """``allocate`` from a JSONL file (``-``: stdin) to ``output`` without holding the records:
    one pass collects what allocation reads, a second pass writes each record with its
    ``p`` and ``extra`` (both passes on every CPU, see ``blocks``). Memory stays a few
    numbers per question."""
    name = display_name(path)
    with rereadable(path) as source, gcpolicy.paused():
        before = fingerprint(source)
        signal = settings.signal or default_signal(next(read_batches(source, None, name))[0])
        inputs, layout = AllocationInputs(settings, signal), []
        for part in map_records(source, "sampled", CollectBlock(settings, signal), name, layout=layout):
            inputs.extend(part)
        plan = inputs.solve(range(1, inputs.m + 1), name)
        with whole_output(output) as fh:
            written = sum(map_records(source, None, AnnotateBlock(plan, name), name, fh, layout))
            if written != inputs.m or fingerprint(source) != before:
                raise changed(name)
    return plan.summary


@dataclass(frozen=True)
class CollectBlock:
    """What allocation reads of a block of records (a ``blocks.map_records`` work):
    ``AllocationInputs.extend`` joins the blocks in order."""

    settings: Allocation
    signal: str

    def __call__(self, batch: list[dict], start: int) -> tuple[bytes, AllocationInputs]:
        part = AllocationInputs(self.settings, self.signal)
        for rec in batch:
            part.add(rec)
        return b"", part


@dataclass(frozen=True)
class AnnotateBlock:
    """A block of records with their allocation, as JSONL, and how many (a
    ``blocks.map_records`` work over the blocks the first pass read)."""

    plan: AllocationPlan
    name: str | None = None  # the input, for errors

    def __call__(self, batch: list[dict], start: int) -> tuple[bytes, int]:
        if start < 0 or start + len(batch) > len(self.plan.p):  # not the blocks the first pass read
            raise changed(self.name)
        out = io.BytesIO()
        write, annotate = out.write, self.plan.annotate
        for i, rec in enumerate(batch, start):
            write(dumps(annotate(rec, i), self.name, i - start + 1))  # its line within the batch (blocks.Work)
        return out.getvalue(), len(batch)


def vote_file(path: str, settings: Vote, output: str) -> VoteSummary:
    """``vote`` every record of a JSONL file (``-``: stdin) into ``output``, streaming, on every
    CPU (see ``blocks``); a confidence rule's signal is resolved from the first record."""
    settings.check_rules()
    name = display_name(path)
    if settings.uses_confidence and settings.signal is None:
        with rereadable(path) as source:
            with contextlib.closing(read_batches(source, None, name)) as batches:
                settings = vote_settings(settings, next(batches, [None])[0])
            return _vote_file(source, settings, output, name)
    return _vote_file(path, settings, output, name)


def _vote_file(path: str, settings: Vote, output: str, name: str) -> VoteSummary:
    summary = VoteSummary(rule=settings)
    with whole_output(output) as fh, gcpolicy.paused():
        for part in map_records(path, "sampled", VoteBlock(settings, name), name, out=fh):
            summary.merge(part)
    return summary


@dataclass(frozen=True)
class VoteBlock:
    """Vote a block of records into JSONL and its summary (a ``blocks.map_records`` work)."""

    settings: Vote
    name: str | None = None  # the input, for errors

    def __call__(self, batch: list[dict], start: int) -> tuple[bytes, VoteSummary]:
        summary, out = VoteSummary(rule=self.settings), io.BytesIO()
        write, add, settings, name = out.write, summary.add, self.settings, self.name
        for line, rec in enumerate(batch, 1):  # its line within the batch (blocks.Work)
            vote(rec, settings)
            add(rec)
            write(dumps(rec, name, line))
        return out.getvalue(), summary


def regrade_file(path: str, output: str) -> RegradeSummary:
    """``regrade`` every record of a JSONL file (``-``: stdin) into ``output``, streaming, on
    every CPU (see ``blocks``)."""
    name, summary = display_name(path), RegradeSummary()
    with whole_output(output) as fh, gcpolicy.paused():
        for part in map_records(path, "sampled", RegradeBlock(name), name, out=fh):
            summary.merge(part)
    return summary


@dataclass(frozen=True)
class RegradeBlock:
    """Regrade a block of records into JSONL and its summary (a ``blocks.map_records`` work)."""

    name: str | None = None  # the input, for errors

    def __call__(self, batch: list[dict], start: int) -> tuple[bytes, RegradeSummary]:
        summary, out = RegradeSummary(), io.BytesIO()
        for line, rec in enumerate(batch, 1):  # its line within the batch (blocks.Work)
            out.write(dumps(regrade(rec, summary), self.name, line))
        return out.getvalue(), summary
