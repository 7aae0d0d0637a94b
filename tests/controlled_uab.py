"""``uab`` with a scripted backend that a test controls, for tests that kill, interrupt or fail a
real ``uab`` process at a known sample (``conftest.start_uab`` runs it):

    python tests/controlled_uab.py [--hold-after N | --hold-in-block] [--held-fd FD] [--fail-after N]
        [--delay S] -- UAB_ARGS...

runs ``uab UAB_ARGS``; behind ``--backend scripted`` the backend stops once N samples are drawn
(and checkpointed), writes ``held`` to file descriptor FD and waits for its stdin to close, or
raises ``BackendError`` once N samples are drawn; ``--delay`` takes S seconds over each sample (a slow model). ``--hold-in-block`` stops ``allocate`` and
``vote`` the same way in a worker process instead, at the file's first block (any input is
read by 2 workers in blocks of 200 bytes). Not a test module: pytest does not collect it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from uab_cli import blocks
from uab_cli.backends import BACKENDS
from uab_cli.backends.scripted import ScriptedBackend

_held: dict[str, int] = {}  # the held and release file descriptors of --hold-in-block
_task = blocks._task


def held_task(path: str, begin: int, *rest):
    """``blocks._task`` that holds the first block until the release descriptor closes (in a
    worker: module level, so that the pool can send it)."""
    if begin == 0:
        os.write(_held["fd"], b"held\n")
        while os.read(_held["release"], 1 << 16):  # our stdin's copy (a worker's stdin is closed)
            pass
    return _task(path, begin, *rest)


def main(argv: list[str]) -> int:
    split = argv.index("--")
    parser = argparse.ArgumentParser(prog="controlled_uab.py")
    parser.add_argument("--hold-after", type=int)
    parser.add_argument("--held-fd", type=int)
    parser.add_argument("--fail-after", type=int)
    parser.add_argument("--hold-in-block", action="store_true")
    parser.add_argument("--delay", type=float, default=0.0)
    opts = parser.parse_args(argv[:split])
    if opts.hold_in_block:
        _held.update(fd=opts.held_fd, release=os.dup(0))
        blocks._BLOCK, blocks._PARALLEL_FROM, blocks._task = 200, 0, held_task
        os.environ["UAB_WORKERS"] = "2"

    class Controlled(ScriptedBackend):
        def __init__(self, model: str = "scripted"):
            super().__init__(model, fail_after=opts.fail_after)

        def generate(self, requests, params, on_result=None):
            def arrived(k, completion):
                time.sleep(opts.delay)
                if on_result:
                    on_result(k, completion)  # the sample is checkpointed here
                if self.drawn == opts.hold_after:
                    os.write(opts.held_fd, b"held\n")
                    os.close(opts.held_fd)
                    sys.stdin.buffer.read()  # until the test closes our stdin (or kills us)

            return super().generate(requests, params, arrived)

    BACKENDS["scripted"] = lambda: Controlled
    from uab_cli.cli import main as uab

    sys.argv = ["uab", *argv[split + 1:]]
    return uab()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
