"""uab's one policy for Python's cyclic garbage collector.

Records are millions of small dicts and lists parsed from JSON: they hold no reference
cycles, so the cyclic collector only costs time (it traverses every live record again and
again), while reference counting frees them as usual. Every place that tunes the collector
calls one of these.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


def for_records() -> None:
    """Process-wide: collect young objects rarely (a command parses records by the million)."""
    gc.set_threshold(200_000, 50, 1000)


def off() -> None:
    """A worker process that parses blocks and frees each when done: no cyclic collection."""
    gc.disable()


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block. Parsed JSON holds no reference cycles,
    but as records pile up the collector traverses every one of them again and again (more
    than half the time of loading 10⁵ records); reference counting still frees as usual.
    On exit the block's objects join the oldest generation (``gc.freeze``/``unfreeze``, skipped
    when the caller froze objects itself) so that they are not all traversed as young ones."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if not gc.get_freeze_count():  # age the block's objects without traversing them
                gc.freeze()
                gc.unfreeze()
            gc.enable()
