"""``uab`` with a scripted backend that a test controls, for tests that kill, interrupt or fail a
real ``uab`` process at a known sample (``conftest.start_uab`` runs it):

    python tests/controlled_uab.py [--hold-after N --held-fd FD] [--fail-after N] -- UAB_ARGS...

runs ``uab UAB_ARGS``; behind ``--backend scripted`` the backend stops once N samples are drawn
(and checkpointed), writes ``held`` to file descriptor FD and waits for its stdin to close, or
raises ``BackendError`` once N samples are drawn. Not a test module: pytest does not collect it.
"""

from __future__ import annotations

import argparse
import os
import sys

from uab_cli.backends import BACKENDS
from uab_cli.backends.scripted import ScriptedBackend


def main(argv: list[str]) -> int:
    split = argv.index("--")
    parser = argparse.ArgumentParser(prog="controlled_uab.py")
    parser.add_argument("--hold-after", type=int)
    parser.add_argument("--held-fd", type=int)
    parser.add_argument("--fail-after", type=int)
    opts = parser.parse_args(argv[:split])

    class Controlled(ScriptedBackend):
        def __init__(self, model: str = "scripted"):
            super().__init__(model, fail_after=opts.fail_after)

        def generate(self, requests, params, on_result=None):
            def arrived(k, completion):
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
