"""Remote backends: throughput vs --concurrency, and the --rpm limit, against a local server.

The server (tests/backends/fakeserver.py, 127.0.0.1 only) answers every request after a
fixed delay. Prints samples/s at concurrency 1, 8, 32 (ratios to concurrency 1) for the
OpenAI-compatible and Cohere backends, then the most requests the server saw in any 60 s window under --rpm.
Usage: python benchmarks/bench_api.py [--delay 0.1]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "backends"))

from fakeserver import FakeServer, max_in_window, sample_requests  # noqa: E402

from uab_cli.backends.base import SamplingParams  # noqa: E402
from uab_cli.backends.cohere import CohereBackend  # noqa: E402
from uab_cli.backends.openai import OpenAIBackend  # noqa: E402

PARAMS = SamplingParams(max_tokens=16)


def make(kind: str, url: str, concurrency: int, rpm: float | None = None):
    if kind == "openai":
        return OpenAIBackend(model="m", base_url=url + "/v1", concurrency=concurrency, rpm=rpm)
    return CohereBackend(model="m", base_url=url, api_key="bench-key", concurrency=concurrency, rpm=rpm)


def throughput(kind: str, delay: float) -> None:
    base = None
    for concurrency in (1, 8, 32):
        n = max(16, 8 * concurrency)
        with FakeServer(delay=delay) as server, make(kind, server.url, concurrency) as backend:
            start = time.perf_counter()
            backend.generate(sample_requests(n), PARAMS)
            rate = n / (time.perf_counter() - start)
        base = base or rate
        print(f"{kind:>7} concurrency {concurrency:>2}: {rate:7.1f} samples/s  ({rate / base:5.1f}x vs 1)")


def rate_limit(kind: str, rpm: float, seconds: float) -> None:
    """Requests for a bit more than a minute at a binding limit; the busiest 60 s window."""
    n = int(rpm / 60 * seconds)
    with FakeServer() as server, make(kind, server.url, 32, rpm) as backend:
        backend.generate(sample_requests(n), PARAMS)
        times = [r.time for r in server.requests]
    most = max_in_window(times, 60.0)
    print(f"{kind:>7} --rpm {rpm:.0f}: {n} requests over {seconds:.0f} s, busiest 60 s window "
          f"{most} requests (ratio to limit {most / rpm:.3f})")


def main(delay: float) -> None:
    print(f"server delay {delay:.2f} s per request")
    for kind in ("openai", "cohere"):
        throughput(kind, delay)
    rate_limit("openai", 300, 64.0)  # both backends share one limiter (backends/remote.py)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delay", type=float, default=0.1, help="the server's seconds per request (default 0.1)")
    main(parser.parse_args().delay)
