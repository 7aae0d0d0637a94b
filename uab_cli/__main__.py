"""The ``uab`` command's entry point (the console script's, ``python -m uab_cli``'s, a vLLM-spawned
process's): Ctrl-C, SIGTERM and SIGHUP stop it from its first line on, while the command line's modules
(numpy, torch, rich, typer) are still being imported, as they do once the command runs (``cli``): one
line and exit 128 + the signal's number, where they printed a KeyboardInterrupt traceback (Ctrl-C), or
ended uab in silence (SIGTERM: 143, SIGHUP: 129)."""

import sys

from .errors import stopped_before_work, terminated_on_signals


def main() -> int | None:
    """Import the command line, then run it (``cli.main``)."""
    try:
        with terminated_on_signals():  # back to their defaults after: the command line takes them itself
            from .cli import main as command
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM/SIGHUP (``errors.Terminated``)
        return stopped_before_work(exc)
    return command()


if __name__ == "__main__":
    sys.exit(main())
