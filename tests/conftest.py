"""Shared fixtures: JSONL helpers and a clean environment without API keys."""

from __future__ import annotations

import orjson
import pytest

KEY_VARS = ("CO_API_KEY", "COHERE_API_KEY", "OPENAI_API_KEY", "UAB_SCRIPTED_FAIL_AFTER", "UAB_SCRIPTED_DELAY")


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch):
    for var in KEY_VARS:
        monkeypatch.delenv(var, raising=False)


def write_jsonl(path, rows) -> str:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return str(path)


def read_jsonl(path) -> list[dict]:
    with open(path, "rb") as fh:
        return [orjson.loads(line) for line in fh]


def arithmetic(m: int) -> list[dict]:
    """m arithmetic questions with gold answers."""
    return [{"id": f"q{i}", "question": f"What is {i} + {2 * i + 1}?", "answer": str(3 * i + 1)} for i in range(m)]
