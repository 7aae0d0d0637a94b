"""JSONL files: streaming read in blocks of whole lines (errors as ``FILE:LINE: message``),
validated through ``records``, and atomic write."""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import re
import select
import shlex
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from typing import IO

import orjson

from . import gcpolicy
from .errors import UabError, column, not_utf8, signals_held
from .records import NotARecord, validate_batch

MAX_LINE_BYTES = 8 * 1024 * 1024  # a longer line is almost surely not a question record

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
        yield from parse_block(data, first, last, name)


def _blocks(path: str, name: str) -> Iterator[tuple[bytes, int, bool]]:
    """The input in blocks of whole lines: ``(data, line number of its first line, last)``,
    about 64 KiB each; ``last`` marks a final line without a newline (its own block).
    Raises ``UabError`` for an empty input or a runaway line."""
    lineno = 0
    with _open_input(path) as fh:
        # A byte-order mark is no content: held out of the blank-line tests (a file of a BOM and
        # blank lines is empty) and given back with the first block, whose parse skips it.
        head = fh.read(len(_BOM))
        bom = _BOM if head == _BOM else b""
        more = () if len(head) < len(_BOM) else iter(lambda: fh.read1(_CHUNK), b"")  # short: the end, read once
        held, blanks = b"", 0  # the blank lines that end what was read: the first (an error if more follows), how many
        rest = b""  # the line being read
        for chunk in itertools.chain([head[len(bom):]], more):
            cut = chunk.rfind(b"\n") + 1
            if cut:
                data, rest = rest + chunk[:cut], chunk[cut:]
                kept = without_trailing_blank_lines(data)
                blank = data[len(kept):]
                if kept:  # after blank lines held back, the first of them is the error
                    yield bom + held + kept, lineno + 1, False
                    lineno += kept.count(b"\n")
                    bom, held, blanks = b"", b"", 0
                if blank:
                    held = held or blank[: blank.index(b"\n") + 1]
                    blanks += blank.count(b"\n")
            else:  # no line ends here: keep reading this line
                rest += chunk
            if len(rest) > MAX_LINE_BYTES:  # do not buffer a runaway line any further
                if held and rest.strip():
                    yield bom + held, lineno + 1, False  # the blank line before it comes first
                raise UabError(_too_long(rest, name), name, lineno + blanks + 1)
        if rest.strip():
            yield bom + held + rest, lineno + 1, True
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


def parse_block(data: bytes, first: int, last: bool, name: str) -> Iterator[list[dict]]:
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
                    batch.append(_parse_line(raw, lineno + len(batch), last, name))
                except UabError as exc:
                    if batch:
                        yield batch
                    raise UabError(exc.message, name, lineno + len(batch)) from None
        lineno += len(batch)
        yield batch


def _parse_line(raw: bytes, lineno: int, last: bool, name: str) -> dict:
    """One line as a JSON object, or ``UabError`` (without a location) saying what is wrong."""
    if len(raw) > MAX_LINE_BYTES:
        raise UabError(_too_long(raw, name))
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise UabError(_unparsable(raw, exc, lineno, last, name)) from None
    if type(obj) is not dict:
        message = f"expected a JSON object, got {type(obj).__name__}"
        if lineno == 1 and raw.lstrip()[:1] == b"[":
            message += f": {_array_hint(name)}"
        raise UabError(message)
    return obj


def display_name(path: str) -> str:
    """How errors name an input: the path, or ``<stdin>`` for ``-``."""
    return "<stdin>" if path == "-" else path


def _unparsable(raw: bytes, error: orjson.JSONDecodeError, lineno: int, last: bool, name: str) -> str:
    """Why a line is not a JSON object, in the user's terms."""
    if not raw.strip():
        return "blank line (JSONL needs one JSON object per line)"
    if CUT_SHORT in raw:
        return ("the input is cut short here: the command writing it stopped before its end (its error says why), "
                "so the records before it are not all of them")
    if lineno == 1 and raw.lstrip()[:1] == b"[":
        return _array_hint(name)
    if lineno == 1 and raw.startswith(b"PAR1"):  # Parquet's magic bytes
        return f"this is a Parquet file, not JSON Lines (one object per line); {_convert_how(name)}"
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:  # orjson names column 1 whatever the byte
        return not_utf8(raw, exc.start).message
    if _lone_cr(raw):
        return _lone_cr_how(name)
    if (nul := nul_byte(raw)) is not None:
        return nul
    if lineno == 1 and not raw.lstrip().startswith(b"{") and any(sep in raw for sep in (b",", b";", b"\t")):
        return f"this looks like a CSV or TSV file, not JSON Lines (one object per line); {_convert_how(name)}"
    if hint := non_finite(error):
        return f"invalid JSON: {hint}"
    return f"invalid JSON{' (truncated last line?)' if last else ''}: {error}"


_NON_FINITE = re.compile(r"-?(?:NaN|Infinity)(?!\w)")


def non_finite(error: orjson.JSONDecodeError) -> str | None:
    """What to write instead where JSON is broken at a NaN, Infinity or -Infinity (Python's ``json`` writes them for
    a float that is no number; JSON has none): null. None where it is broken otherwise."""
    doc, at = error.doc, error.pos
    if not isinstance(doc, str):
        return None
    found = (doc[at - 1:at] == "-" and _NON_FINITE.match(doc, at - 1)) or _NON_FINITE.match(doc, at)
    if not found:
        return None
    return f"{found.group()} at column {error.colno - (found.start() < at)} is no JSON value: write null instead"


def nul_byte(raw: bytes, kind: str = "JSON") -> str | None:
    """Why a line (or a file: the column is in the NUL's line) holding a NUL byte is no ``kind`` text
    (binary data, or a file padded with zeros after a crash), naming its column; ``None`` for one
    without. A NUL inside a JSON string is written as an escape; a CSV cell has no way to hold one."""
    at = raw.find(b"\0")
    if at < 0:
        return None
    return f"a NUL byte at column {column(raw, at)}: binary data, not {kind} text (a file padded with zeros?)"


def _too_long(raw: bytes, name: str) -> str:
    """Why a line is longer than MAX_LINE_BYTES: lines ended by a lone CR read as one, else a runaway line."""
    return _lone_cr_how(name) if _lone_cr(raw) else _TOO_LONG


def _lone_cr(raw: bytes) -> bool:
    """Whether ``raw`` is lines ended by a lone carriage return (classic Mac OS), read as one line:
    an object, a CR and more (a CR inside a JSON string is written as an escape, never as is)."""
    first, cr, rest = raw.partition(b"\r")
    try:
        return bool(cr and rest.strip()) and type(orjson.loads(first)) is dict
    except orjson.JSONDecodeError:
        return False


def _lone_cr_how(name: str) -> str:
    where = "< FILE > NEW.jsonl" if name == display_name("-") else f"< {shlex.quote(name)} > NEW.jsonl"
    return ("lines end with a lone carriage return (CR, old Mac OS line ends); JSON Lines ends them with LF "
            f"(or CRLF): rewrite it with `tr '\\r' '\\n' {where}`")


def _array_hint(name: str) -> str:
    return f"this looks like a JSON array, not JSON Lines (one object per line); {_convert_how(name)}"


def _convert_how(name: str) -> str:
    """How `uab convert` reads the input that errors call ``name`` (a copy of stdin is no file to name)."""
    return ("pipe it through `uab convert -`, which makes question records of it" if name == display_name("-")
            else f"`uab convert {shlex.quote(name)}` makes question records of it")


@contextlib.contextmanager
def rereadable(path: str) -> Iterator[str]:
    """A path to read the input from more than once: the file itself, or for ``-`` a
    temporary copy of stdin (removed on leaving). A path that cannot be read is a ``UabError``
    naming it, here, before anything reads it."""
    if path != "-" and not _special(path):
        with _open_input(path):
            pass
        yield path
        return
    fd, tmp = tempfile.mkstemp(prefix="uab-stdin.", suffix=".jsonl")
    try:  # stdin, or a pipe named by a path (a FIFO, <(...)): read once, into a copy
        with os.fdopen(fd, "wb") as fh, _open_input(path) as source:
            shutil.copyfileobj(source, fh, _WRITE_BUFFER)
        yield tmp
    finally:
        os.unlink(tmp)


def stdin() -> IO[bytes]:
    """The binary stdin; ``UabError`` when the process has none (started with stdin closed, ``<&-``)."""
    if sys.stdin is None:
        raise UabError("cannot read: it is closed", display_name("-"))
    return sys.stdin.buffer


def stdout() -> IO[bytes]:
    """The binary stdout; ``UabError`` when the process has none (started with stdout closed, ``>&-``)."""
    if sys.stdout is None:
        raise UabError("cannot write: it is closed", "stdout")
    return sys.stdout.buffer


def escaping_stdout() -> None:
    """stdout's text (the help) with a character its encoding lacks written as an escape
    (``\\u2192``), as Python writes stderr's: under a Latin-1 locale (``PYTHONIOENCODING=latin-1``)
    ``uab -h`` was a traceback, exit 1, at the help's first '→'. What uab writes there as data is
    bytes: records UTF-8 whatever the locale, report's paths as the file system names them."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)  # None: stdout closed (``>&-``), or replaced
    if reconfigure is not None:
        reconfigure(errors="backslashreplace")


@contextlib.contextmanager
def _open_input(path: str):
    if path == "-":
        yield stdin()
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
    """``read_records`` a block of records at a time (``stage=None``: parsed, not validated); an
    invalid record's error comes after the records before it, as a bad line's does."""
    seen: set[str] = set()
    lineno = 0
    name = name or display_name(path)
    for batch in _batches(path, name):
        if stage is not None:
            try:
                _validate(batch, stage, name, lineno + 1, seen)
            except UabError as exc:  # the records before it first, as for a line that does not parse
                if valid := batch[: exc.line - lineno - 1]:
                    yield valid
                raise
        lineno += len(batch)
        yield batch


def load_records(path: str, stage: str = "question") -> tuple[list[dict], list[int]]:
    """All validated records for a stage, and the line each came from; one that could not be
    written back (``dumps``) is an error naming its line, before a stage samples for it."""
    with gcpolicy.paused():
        records = [rec for _, rec in stream_records(path, stage)]
    return records, list(range(1, len(records) + 1))


def stream_records(path: str, stage: str = "question") -> Iterator[tuple[int, dict]]:
    """``load_records``'s records with their lines, one at a time (a caller that keeps only part of
    each): a block of them is validated and checked (``dumps``) before any of it is given."""
    name = display_name(path)
    seen: set[str] = set()
    line = 1
    for batch in _batches(path):
        _validate(batch, stage, name, line, seen)
        for n, rec in enumerate(batch, line):
            dumps(rec, name, n)
        yield from enumerate(batch, line)
        line += len(batch)


def _validate(batch: list[dict], stage: str, name: str, first_line: int, seen: set[str]) -> None:
    """``validate_batch``; a question that looks like a benchmark export's row (no id, a numeric
    id, no question) says how `uab convert` makes records of the file."""
    try:
        validate_batch(batch, stage, name, first_line, seen)
    except NotARecord as exc:
        if stage != "question":
            raise
        raise UabError(f"{exc.message}: a benchmark export? {_convert_how(name)}", exc.path, exc.line) from None


# --- writing -----------------------------------------------------------------------


_DUMP_OPTIONS = orjson.OPT_APPEND_NEWLINE | orjson.OPT_SERIALIZE_NUMPY


def dumps(rec: dict, path: str | None = None, line: int | None = None) -> bytes:
    """One JSONL line; ``UabError`` (at ``path``, ``line`` where given) for a record orjson reads
    but cannot write (nested over 254 levels deep: it reads up to 1024)."""
    try:
        return orjson.dumps(rec, None, _DUMP_OPTIONS)
    except orjson.JSONEncodeError as exc:
        why = "a value in it is nested over 254 levels deep" if str(exc) == "Recursion limit reached" else exc
        raise UabError(f"record {rec.get('id')!r} cannot be written as JSON: {why}", path, line) from None


_WRITE_BUFFER = 1 << 20


def check_inputs(**paths: str | None) -> None:
    """``UabError`` naming a command's input (by argument or option: ``RESULTS=..., pool=...``)
    whose path is empty, which names no file to open (``cannot read``, naming none); and when more
    than one is stdin (``-``): the first would read it all and the second find it empty."""
    empty = next((name for name, path in paths.items() if path == ""), None)
    if empty is not None:
        raise UabError(f"{_input_name(empty)}: the path is empty (give a file, or - for stdin)")
    stdin = [name for name, path in paths.items() if path == "-"]
    if len(stdin) > 1:
        raise UabError(f"{' and '.join(map(_input_name, stdin))} cannot both read stdin ('-'): give one of them as "
                       "a file")


def check_apart(output: str, **inputs: str | None) -> None:
    """``UabError`` naming ``output`` where it is the file of one of a command's ``inputs`` (by
    argument or option, as ``check_inputs``; the same file by another path too): the output would
    replace what the command read (a results file's recommendations, a pool's samples)."""
    if output == "-" or not os.path.isfile(output):
        return
    for name, path in inputs.items():
        if path and path != "-" and os.path.isfile(path) and os.path.samefile(output, path):
            raise UabError(f"-o is {_input_name(name)}, which this command reads: its output would replace it; "
                           "give -o another file", output)


def _input_name(name: str) -> str:
    """An input as the command line names it: an argument by its metavar (``RESULTS``), an option by its flag."""
    return name if name.isupper() else "--" + name


def check_output(path: str, directory: str | None = None) -> None:
    """``UabError`` naming ``path`` when an output cannot be written there, so that a bad ``-o``
    fails before anything is read or drawn; creates nothing. A file (``-``: stdout) unless
    ``directory`` says what directory it is (``"run directory"``). Missing folders are made
    when the output is written: here their nearest existing ancestor must be a directory
    uab can create files in."""
    if path == "-" and directory is None:
        stdout()
        return
    if directory is None and _special(path):  # /dev/null, a FIFO: written in place
        if not os.access(path, os.W_OK):
            raise UabError("cannot write the output here: permission denied", path)
        return
    what = f"cannot use as a {directory}" if directory else "cannot write the output here"
    if not path:
        raise UabError(f"{what}: the path is empty")
    if not directory and path.endswith(os.sep):
        raise UabError(f"{what}: it names a directory (-o takes a file)", path)
    if path == "-":  # a directory cannot be stdout: a folder named "-" is never what was meant
        raise UabError(f"{what}: - is stdout, and a {directory} holds several files (give a folder)")
    if os.path.exists(path) and os.path.isdir(path) != bool(directory):
        raise UabError(f"{what}: " + ("not a directory" if directory else "it is a directory (-o takes a file)"), path)
    where = os.path.abspath(path) if directory else os.path.dirname(os.path.abspath(path))
    while not os.path.exists(where):
        where = os.path.dirname(where)
    if not os.path.isdir(where):
        raise UabError(f"{what}: {where} is a file, not a directory", path)
    try:  # the one sure test: os.access says yes to root even where nothing can be created (/proc)
        fd, probe = tempfile.mkstemp(prefix=".uab-check.", suffix=".tmp", dir=where)
    except OSError as exc:
        raise UabError(f"{what}: cannot create files in {where} ({exc.strerror or exc})", path) from None
    os.close(fd)
    os.unlink(probe)


# Errors of writing itself, whoever writes: mapped to ``UabError`` even inside the block.
_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


@contextlib.contextmanager
def atomic_output(path: str) -> Iterator[IO[bytes]]:
    """A binary handle that becomes ``path`` only if the block succeeds (``-`` = stdout).
    Missing folders on the way are made; a failure to write is a ``UabError`` naming ``path``."""
    if path == "-":
        out = stdout()
        with _in_place("-"), _marked_if_cut(out, "stdout"):
            yield out
            out.flush()
        return
    if _special(path):  # renaming over /dev/null or a FIFO would replace it with a regular file
        try:
            fh = open(path, "wb", buffering=_WRITE_BUFFER)
        except OSError as exc:
            raise _unwritable(exc, path) from None
        with _in_place(path), fh, _marked_if_cut(fh, path):
            yield fh
        return
    directory = os.path.dirname(os.path.abspath(path))
    made: list[str] = []  # the folders made for it, removed again if the block fails
    try:
        _make_folders(directory, made)
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        _remove_folders(made)
        raise _unwritable(exc, path) from None
    inside = False
    try:
        with os.fdopen(fd, "wb", buffering=_WRITE_BUFFER) as fh:
            inside = True
            yield fh
            inside = False
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600 files; outputs are ordinary files
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        _remove_folders(made)
        if isinstance(exc, OSError) and (not inside or exc.errno in _WRITE_ERRNOS):
            raise _unwritable(exc, path) from None
        raise


# What ends an output written in place (stdout, a FIFO) whose writer stopped part-way (SIGTERM, Ctrl-C):
# an unfinished line that no JSON reader takes, so that the next stage of a pipe refuses the records
# before it instead of taking them for the whole set (they may end at a whole line).
CUT_SHORT = b"<uab: output cut short: the command writing it stopped before its end>"


@contextlib.contextmanager
def _marked_if_cut(fh: IO[bytes], name: str) -> Iterator[None]:
    """The block writes an output in place (``name``: ``stdout``, a FIFO's path); one that fails
    is ended with ``CUT_SHORT``, where it can still be written, and its exception names it (``cut_short``)."""
    try:
        yield
    except BaseException as exc:
        with contextlib.suppress(OSError, ValueError):  # its reader gone, a full disk: nothing more goes
            fh.write(CUT_SHORT)
            fh.flush()
            exc.uab_cut_short = name
        raise


def cut_short(exc: BaseException) -> str | None:
    """The output ``exc`` stopped part-way and ``CUT_SHORT`` ended (``stdout``, a FIFO's path), if any."""
    return getattr(exc, "uab_cut_short", None)


@contextlib.contextmanager
def whole_output(path: str) -> Iterator[IO[bytes]]:
    """``atomic_output`` for a stage that writes while it still reads (``vote``): an output written
    in place (stdout, a device, a FIFO) gets its bytes only once the block succeeds, held in a
    temporary file until then, so that a bad record further on leaves nothing written there."""
    if path != "-" and not _special(path):
        with atomic_output(path) as fh:
            yield fh
        return
    try:
        spool = tempfile.TemporaryFile(prefix="uab-output.")
    except OSError as exc:
        raise unspoolable(exc, "the output") from None
    with spool:
        try:
            yield spool
        except OSError as exc:
            if exc.errno not in _WRITE_ERRNOS:
                raise
            raise unspoolable(exc, "the output") from None
        spool.seek(0)
        with atomic_output(path) as fh:
            shutil.copyfileobj(spool, fh, _WRITE_BUFFER)


def unspoolable(exc: OSError, what: str) -> UabError:
    """A failure to keep ``what`` in the temporary directory, named as such."""
    return UabError(f"cannot keep {what} in the temporary directory: {exc.strerror or exc} "
                    "(set TMPDIR to a folder with room)", tempfile.gettempdir())


def write_files(files: dict[str, bytes], ready: Callable[[], None] | None = None, removed: Iterable[str] = ()) -> None:
    """Write each ``path: data`` as ``atomic_output`` does, every file written in full (and
    synced) before the first replaces its old copy: a failure to write one (a full disk) leaves
    them all as they were. ``ready()`` runs between the two (what is said of the files: a failure
    there leaves them as they were too). The files replace their old copies, and the ``removed``
    files go, as one step to Ctrl-C, SIGTERM and SIGHUP: one that comes meanwhile stops uab once
    they are done (``errors.signals_held``), not part-way. A removed file that cannot go (a folder
    in its place, no permission) is a ``UabError`` naming it, the files written."""
    with signals_held() as hold:
        with contextlib.ExitStack() as stack:
            for path, data in files.items():
                fh = stack.enter_context(atomic_output(path))
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            if ready is not None:
                ready()
            hold()
        for path in removed:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            except OSError as exc:  # else the boundary took it for a failure to write stdout, or a traceback
                raise UabError(f"cannot remove: {exc.strerror or exc} (the new files are written)", path) from None


@contextlib.contextmanager
def _in_place(path: str) -> Iterator[None]:
    """Writing straight to stdout or a device (/dev/full): a failure to write is a ``UabError``
    naming it."""
    try:
        yield
    except OSError as exc:
        failure = write_failure(exc, path)
        if failure is None:
            raise
        raise failure from None


def reader_gone(exc: OSError) -> bool:
    """Whether ``exc`` says stdout's reader closed it (``uab vote f.jsonl | head -1``): no error
    to report; the rest is discarded."""
    if exc.errno != errno.EPIPE:
        return False
    _discard_stdout()
    return True


@contextlib.contextmanager
def reader_watch(output: str, every: float = 1.0) -> Iterator[Callable[..., Callable[..., None] | None]]:
    """``watched(on_sample)``: ``on_sample`` (``None``: no callback) that also ends a sampling stage
    writing to a pipe whose reader is gone (stdout: ``uab phase1 Q | uab allocate - --bogus``; an
    ``-o`` FIFO) as a write there would: ``BrokenPipeError``, exit 141 in silence, before it draws
    (or asks the judge for) the rest. Looked at once every ``every`` seconds, as samples arrive;
    ``on_sample`` itself where ``output`` is no pipe. The block holds what the stage writes too: a
    FIFO is held open from its reader's first look until the block ends (a writer that closed
    before the output is written would give its reader an empty input)."""
    with _reader_closed(output) as gone:
        if gone is None:
            yield lambda on_sample=None: on_sample
            return
        due = 0.0

        def watched(on_sample: Callable[..., None] | None = None) -> Callable[..., None]:
            def call(*args) -> None:
                nonlocal due
                if on_sample:
                    on_sample(*args)
                if time.monotonic() >= due:
                    if gone():
                        raise BrokenPipeError(errno.EPIPE, "the output's reader is gone")
                    due = time.monotonic() + every

            return call

        yield watched


@contextlib.contextmanager
def _reader_closed(output: str) -> Iterator[Callable[[], bool] | None]:
    """Whether the reader of ``output`` has closed it, asked without writing: a pipe's write end
    polls as an error (Linux) or a hang-up once its read end is closed; ``None`` where ``output``
    is no pipe (a file, a terminal, a device) or the system has no ``poll``. Stdout is the pipe
    itself; a FIFO is opened (not blocking) once a reader has it open, and held until the block ends."""
    if not hasattr(select, "poll"):
        yield None
        return
    if output == "-":
        try:
            fd = sys.stdout.fileno()
            piped = stat.S_ISFIFO(os.fstat(fd).st_mode)
        except (OSError, ValueError, AttributeError):  # stdout closed, or no file (a test's capture)
            piped = False
        yield _closed_poll(fd) if piped else None
        return
    try:
        piped = stat.S_ISFIFO(os.stat(output).st_mode)
    except OSError:
        piped = False
    if not piped:
        yield None
        return
    fd, poll = -1, None  # the FIFO held open, once its reader came, and its poll

    def gone() -> bool:
        nonlocal fd, poll
        if poll is None:
            try:
                fd = os.open(output, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # no reader yet (ENXIO): not gone, it may come
                return False
            poll = _closed_poll(fd)
        return poll()

    try:
        yield gone
    finally:
        if fd >= 0:
            os.close(fd)


def _closed_poll(fd: int) -> Callable[[], bool]:
    """Whether the read end of the pipe whose write end is ``fd`` is closed."""
    poller, closed = select.poll(), select.POLLERR | select.POLLHUP
    poller.register(fd, closed)
    return lambda: any(events & closed for _, events in poller.poll(0))


def _discard_stdout() -> None:
    """Stdout's unwritten rest goes to /dev/null, so that exit does not fail on it again."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def write_failure(exc: OSError, path: str = "-") -> UabError | None:
    """The ``UabError`` for a failure to write ``path`` (``-``: stdout, whose rest is discarded),
    ``None`` for another error."""
    if exc.errno not in _WRITE_ERRNOS:
        return None
    if path == "-":
        _discard_stdout()
    return _unwritable(exc, "stdout" if path == "-" else path)


def _special(path: str) -> bool:
    """Whether ``path`` exists and is neither a regular file nor a directory (a device, a FIFO)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _make_folders(directory: str, made: list[str]) -> None:
    """``os.makedirs``, listing in ``made`` the folders it made (outermost first)."""
    missing = []
    while not os.path.isdir(directory) and directory != os.path.dirname(directory):
        missing.append(directory)
        directory = os.path.dirname(directory)
    for folder in reversed(missing):
        try:
            os.mkdir(folder)
        except FileExistsError:
            if not os.path.isdir(folder):
                raise
            continue  # made meanwhile by someone else: not ours to remove
        made.append(folder)


def _remove_folders(made: list[str]) -> None:
    for folder in reversed(made):
        with contextlib.suppress(OSError):  # not empty: someone else writes there now
            os.rmdir(folder)


def _unwritable(exc: OSError, path: str) -> UabError:
    return UabError(f"cannot write: {exc.strerror or exc}", path)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_records(path: str, records: Iterable[dict], streaming: bool = False) -> int:
    """Write records as JSONL atomically; consumes ``records`` lazily. Returns the count.
    ``streaming``: records made as they are written (``convert``), whose failure leaves nothing
    written where the output is written in place too (stdout: ``whole_output``)."""
    n = 0
    with (whole_output if streaming else atomic_output)(path) as fh, gcpolicy.paused():
        # One write per line into a large buffer: holding many small orjson outputs at once
        # (to join them) makes the allocator grow and shrink the heap for every one.
        write = fh.write
        for rec in records:
            write(dumps(rec))
            n += 1
    return n
