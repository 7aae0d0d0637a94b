"""The context-window guard on the embedded default (real SmolLM2, context 8,192): an over-long
question exits 2 naming it, before any sampling and in bounded memory (slow: loads the model)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from test_local import needs_wheel

pytestmark = [pytest.mark.slow, needs_wheel]

# Runs uab in a child and prints the child's exit code and peak resident memory (KiB on Linux).
MEASURE = textwrap.dedent("""
    import resource, subprocess, sys
    proc = subprocess.run([sys.executable, "-m", "uab_cli.cli", *sys.argv[1:]], capture_output=True, text=True)
    sys.stderr.write(proc.stderr)
    print(proc.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
""")


def measured(*args: str) -> tuple[int, int, str]:
    proc = subprocess.run([sys.executable, "-c", MEASURE, *args], capture_output=True, text=True, timeout=600)
    code, peak_kib = map(int, proc.stdout.split())
    return code, peak_kib, proc.stderr


def words(n: int) -> str:
    return " ".join(("small", "block", "red", "jar", "range", "three")[i % 6] for i in range(n))


@pytest.mark.parametrize("name,question,says", [
    ("five-mb", words(900_000)[:5_000_000], "its prompt has at least"),
    ("twelve-k", words(12_000), "its prompt has 1"),
])
def test_an_over_long_question_exits_2_in_bounded_memory(tmp_path, name, question, says):
    path = tmp_path / "q.jsonl"
    rows = [{"id": "short", "question": "What is 2 + 3?", "answer": "5"},
            {"id": name, "question": f"What is {question}?", "answer": "3"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, peak_kib, stderr = measured("run", str(path), "-N", "2", "-o", str(tmp_path / "r"))
    assert code == 2, stderr
    assert f"question '{name}': {says}" in stderr and "context of 8,192 tokens" in stderr, stderr
    assert peak_kib < 3 * 1024 * 1024, peak_kib  # under 3 GB (the model itself is ~0.5 GB)
    assert not (tmp_path / "r" / "phase1.jsonl").exists()


def test_prompt_lengths_count_what_the_model_is_fed():
    from uab_cli.backends.base import SampleRequest, SamplingParams
    from uab_cli.backends.local import LocalBackend
    from uab_cli.errors import UabError

    messages = ({"role": "user", "content": "What is 7 times 9? Think step by step."},)
    with LocalBackend() as backend:
        assert backend.context_length == 8192
        [size] = backend.prompt_lengths([messages], 8000)
        assert size.exact and size.tokens == len(backend.prompt_ids(messages))
        # Called directly, the backend still never prefills a prompt it cannot attend to.
        long = SampleRequest(({"role": "user", "content": words(12_000)},), 1)
        with pytest.raises(UabError, match=r"prompt 0 has .* exceeds the model's context of 8,192"):
            backend.generate([long], SamplingParams(max_tokens=8))
