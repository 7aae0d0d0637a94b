"""The streaming stages' engine: validated records a block at a time, on every CPU the process
may use.

``map_records`` hands each block of records to a ``work`` callable, which returns the block's
output (JSONL bytes) and a small result; the output goes to ``out`` and the results are
yielded, in input order. A large input file is split into byte ranges that worker processes
read, parse, validate and work on themselves, each writing its output to a temporary file
that the parent appends to ``out``: the parent moves no records. Stdin, a small file or a
process allowed one CPU runs the same code in-process. Either way errors are those of
``jsonl.read_batches``, in file order, and duplicate ids are caught across blocks.
"""

from __future__ import annotations

import codecs
import collections
import contextlib
import itertools
import multiprocessing
import os
import shutil
import signal
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import IO, Any

from . import gcpolicy
from .errors import TERMINATING, UabError
from .jsonl import (
    MAX_LINE_BYTES,
    display_name,
    parse_block,
    read_batches,
    unspoolable,
    without_trailing_blank_lines,
)
from .records import validate_batch

# (records, index of the first) -> (JSONL, result); a work's error names its record's line within the
# batch (1: the batch's first record), which ``_worked`` makes the file's
Work = Callable[[list[dict], int], "tuple[bytes, Any]"]

_BLOCK = 4 << 20  # input bytes per task
_PARALLEL_FROM = 16 << 20  # smaller files are done in-process: a pool would cost more than it saves
_ORPHAN_CHECK = 1.0  # seconds between a worker's looks at whether its parent is still there


def workers(size: int | None = None) -> int:
    """Worker processes for a large input of ``size`` bytes: ``UAB_WORKERS``, else the CPUs this
    process may use, at most one per block (``None``: a size not known)."""
    value = os.environ.get("UAB_WORKERS")
    if value:
        digits = value.strip()
        if not (digits.isascii() and digits.isdigit() and int(digits) >= 1):  # '0', '-3', '1_0', '²' are none
            raise UabError(f"UAB_WORKERS must be a whole number >= 1, got {value!r}")
        n = int(digits)
    else:
        n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return n if size is None else max(1, min(n, -(-size // _BLOCK)))


def map_records(path: str, stage: str | None, work: Work, name: str | None = None,
                out: IO[bytes] | None = None, layout: list[int] | None = None) -> Iterator[Any]:
    """``work(batch, start)`` for each block of records of ``path`` validated for ``stage``
    (``None``: parsed only); its JSONL goes to ``out`` (``None``: dropped) and its result is
    yielded, in input order. ``start`` counts records from 0; a second pass over the same
    file passes the ``layout`` list the first pass filled (records per block), else workers
    see ``start=-1``. A file replaced, cut or grown meanwhile is a ``UabError``."""
    name = name or display_name(path)
    before = fingerprint(path)
    n = workers(before[2] if before else None)  # [2]: its size
    try:
        if n < 2 or before is None or before[2] < _PARALLEL_FROM:
            start = 0
            for batch in read_batches(path, stage, name):
                data, result = _worked(work, batch, start, start + 1)
                if out is not None:
                    out.write(data)
                yield result
                start += len(batch)
        else:
            yield from _parallel(path, stage, work, name, n, out, layout)
    except (UabError, OSError):  # what a changed input looks like: a bad line, a duplicate id, a vanished file
        if before is not None and fingerprint(path) != before:
            raise changed(name) from None
        raise
    if before is not None and fingerprint(path) != before:
        raise changed(name)


def changed(name: str | None) -> UabError:
    return UabError("input changed while it was being read; run again", name)


def fingerprint(path: str) -> tuple[int, int, int, int] | None:
    """What tells a regular file's content changed (``None``: stdin, a pipe, no such file)."""
    try:
        st = os.stat(path) if path != "-" else None
    except OSError:
        return None
    if st is None or not stat.S_ISREG(st.st_mode):
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _parallel(path: str, stage: str | None, work: Work, name: str, n: int, out: IO[bytes] | None,
              layout: list[int] | None) -> Iterator[Any]:
    size = os.path.getsize(path)
    known = list(layout or ())
    starts = [0, *itertools.accumulate(known)] if known else []  # each block's first record
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    try:
        spool = tempfile.mkdtemp(prefix="uab-blocks.") if out is not None else None
    except OSError as exc:
        raise unspoolable(exc, "block outputs") from None
    seen: set[str] = set()
    lines = 0  # lines of the input before the block being collected
    pending: collections.deque[Future] = collections.deque()
    try:
        with ProcessPoolExecutor(n, context, initializer=_start, initargs=(work,)) as pool:
            try:
                with _interrupt_deferred():  # workers forked but not yet managed cannot be stopped
                    pool.submit(int)  # starts them all
                for k, begin in enumerate(range(0, size, _BLOCK)):
                    start = starts[k] if k < len(starts) else -1
                    spooled = spool and os.path.join(spool, str(k))
                    pending.append(pool.submit(_task, path, begin, min(begin + _BLOCK, size), name, stage,
                                               start, spooled))
                    if len(pending) > 2 * n:
                        lines = yield from _collect(pending.popleft(), lines, seen, name, out, layout, known)
                while pending:
                    lines = yield from _collect(pending.popleft(), lines, seen, name, out, layout, known)
                if not lines:
                    raise UabError("empty input: no records", name)
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)  # before the spool goes: no task writes to it
                raise
    finally:
        if spool:
            shutil.rmtree(spool, ignore_errors=True)


_STOPPING = (signal.SIGINT, *TERMINATING)


@contextlib.contextmanager
def _interrupt_deferred() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP held back to the end of the block (in the main thread, where
    Python takes them): a process pool interrupted while it starts its processes cannot stop
    them, and the exit would wait for them forever."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    held = [s for s in _STOPPING if signal.getsignal(s) not in (signal.SIG_IGN, None)]
    previous = {s: signal.signal(s, lambda signum, frame: caught.append(signum)) for s in held}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if caught:
            signal.raise_signal(caught[0])  # to the handler it was meant for


def _collect(future: Future, lines: int, seen: set[str], name: str, out: IO[bytes] | None,
             layout: list[int] | None, known: list[int]):
    """One block's results, its ids checked against the earlier blocks' first (in line order,
    a duplicate id comes before a later error in the same block); returns the lines so far."""
    count, ids, results, error, spooled = future.result()
    if error is not None and error[2] is not None:  # the records after the block's first error are not reached;
        ids = ids[: error[2] + 1]  # its own id is checked first where it is valid (a work error), as in one process
    if seen.isdisjoint(ids) and len(set(ids)) == len(ids):  # all new (the fast, common case)
        seen.update(ids)
    else:  # find the first id that is not new, in line order
        for lineno, rid in enumerate(ids, lines + 1):
            if rid in seen:
                raise UabError(f"duplicate id {rid!r}", name, lineno)
            seen.add(rid)
    if error is not None:
        message, where, offset = error
        raise UabError(message, where, None if offset is None else lines + offset + 1)
    if layout is not None and not known:  # a first pass: record the layout for the next
        layout.append(count)
    if spooled is not None:
        with open(spooled, "rb") as fh:
            shutil.copyfileobj(fh, out, 1 << 20)
        os.unlink(spooled)
    yield from results
    return lines + count


_WORK: Work | None = None  # a worker process's work callable


def _start(work: Work) -> None:
    global _WORK
    _WORK = work
    gcpolicy.off()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's: it stops the pool
    for s in TERMINATING:  # the parent's way of taking them is not a worker's (one that is ignored stays so)
        if signal.getsignal(s) != signal.SIG_IGN:
            signal.signal(s, signal.SIG_DFL)
    threading.Thread(target=_end_with, args=(os.getppid(),), name="uab-orphan-watch", daemon=True).start()


def _end_with(parent: int) -> None:
    """End this worker once its parent is gone (``kill -9``): it would wait for work forever,
    holding the parent's stdout and stderr open."""
    while os.getppid() == parent:
        time.sleep(_ORPHAN_CHECK)
    os._exit(1)


def _task(path: str, begin: int, end: int, name: str, stage: str | None, start: int, spooled: str | None):
    """The lines that start in bytes ``[begin, end)`` of ``path``, in a worker: how many, their
    ids (for the parent's duplicate check), the work's results, the first error as
    ``(message, file, line offset in the block)`` and the file holding the block's output.
    ``start`` is the index of the block's first record (-1: not known)."""
    data, final = _without_trailing_blank_lines(path, *_lines(path, begin, end))
    first = 1 if begin == 0 else 2  # the file's first line gets its own checks (BOM, JSON array)
    ids: list[str] = []
    results: list[Any] = []
    count, error = 0, None
    try:
        with open(spooled, "wb") if spooled else contextlib.nullcontext() as out:
            for piece, last in ((data, False), (final, True)):
                if not piece:
                    continue
                for batch in parse_block(piece, first + count, last, name):
                    invalid = None
                    if stage is not None:
                        try:
                            validate_batch(batch, stage, name, first + count)
                        except UabError as exc:  # the records before it are valid: worked first, their ids count
                            batch, invalid = batch[: exc.line - first - count], exc
                        ids += [rec["id"] for rec in batch]
                    output, result = _worked(_WORK, batch, start + count if start >= 0 else -1, first + count)
                    if out is not None:
                        out.write(output)
                    results.append(result)
                    count += len(batch)
                    if invalid is not None:
                        raise invalid
    except UabError as exc:
        error = (exc.message, exc.path, None if exc.line is None else exc.line - first)
    except OSError as exc:  # the block's output is all a worker writes
        spill = unspoolable(exc, "block outputs")
        error = (spill.message, spill.path, None)
    return count, ids, results, error, spooled


def _worked(work: Work, batch: list[dict], start: int, line: int) -> tuple[bytes, Any]:
    """``work(batch, start)``, an error's line within the batch made the line that ``line`` is
    the batch's first (the file's in one process, the block's in a worker)."""
    try:
        return work(batch, start)
    except UabError as exc:
        if exc.line is None:
            raise
        raise UabError(exc.message, exc.path, line + exc.line - 1) from None


def _lines(path: str, begin: int, end: int) -> tuple[bytes, bytes, int]:
    """The lines of ``path`` that start in bytes ``[begin, end)``: those ending in a newline,
    a last line of the file without one (``b""`` if none), and the offset after them; the
    file's byte-order mark left out."""
    with open(path, "rb") as fh:
        base = max(begin - 1, 0)
        if begin == 0 and fh.read(len(codecs.BOM_UTF8)) == codecs.BOM_UTF8:  # no content: a file of one
            base = len(codecs.BOM_UTF8)  # and blank lines is empty
        fh.seek(base)
        data = fh.read(max(end - base, 0))
        if begin > 0:  # skip the line that started in an earlier block
            skip = data.find(b"\n")
            data = data[skip + 1:] if skip >= 0 else b""
            if not data:
                return b"", b"", end
            base += skip + 1
        if not data.endswith(b"\n"):  # read on to the end of the last line that starts here
            parts, length = [data], len(data)
            while length <= end - begin + MAX_LINE_BYTES:  # a longer line is reported, not read on
                piece = fh.read(1 << 16)
                if not piece:
                    break
                cut = piece.find(b"\n")
                parts.append(piece if cut < 0 else piece[: cut + 1])
                length += len(parts[-1])
                if cut >= 0:
                    break
            data = b"".join(parts)
    cut = data.rfind(b"\n") + 1
    return data[:cut], data[cut:], base + len(data)


def _without_trailing_blank_lines(path: str, data: bytes, final: bytes, after: int) -> tuple[bytes, bytes]:
    """A block's lines without the blank lines that end the file (only blank lines after them)."""
    if final.strip():
        return data, final
    kept = without_trailing_blank_lines(data)
    if len(kept) == len(data) and not final:
        return data, final
    with open(path, "rb") as fh:  # are the lines after this block blank too? (read until one is not)
        fh.seek(after)
        while piece := fh.read(1 << 16):
            if piece.strip():
                return data, final
    return kept, b""
