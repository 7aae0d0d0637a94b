#!/usr/bin/env python3
"""Build the question files under ``datasets/`` from the public raw files, with uab's convert presets.

Each source is pinned to a GitHub repository, commit and path (see ``SOURCES`` and datasets/README.md).
``--raw DIR`` finds a source either as a plain file ``DIR/<owner>+<name>/<path>`` or, failing that, in a
bare git directory ``DIR/<owner>+<name>/repo`` (read with ``git show <commit>:<path>``):

    python scripts/make_datasets.py --raw /path/to/raw -o datasets

The output is deterministic: the same raw files give the same bytes. Samples of 300 are drawn by the
SHA-256 of each row's text (the 300 smallest hashes, then kept in file order), not by a random generator.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import subprocess
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from uab_cli.convert import convert_records, read_table  # noqa: E402
from uab_cli.errors import UabError  # noqa: E402
from uab_cli.jsonl import write_records  # noqa: E402

SAMPLE = 300
MGSM_LANGUAGES = ("bn", "de", "en", "es", "fr", "ja", "ru", "sw", "te", "th", "zh")  # one file each, as MGSM's


@dataclass(frozen=True)
class Source:
    """One public raw file: where it lives and under which licence."""

    repo: str
    commit: str
    path: str
    licence: str


SOURCES = {
    "math500": Source(
        "MobileLLM/BudgetThinker",
        "f0466b9d37595f46603387baa5930e312fefb7f5",
        "evaluation/data/math500/test_ori.jsonl",
        "MIT (MATH, Hendrycks et al.; the 500-problem split of openai/prm800k)",
    ),
    "gsm8k_test": Source(
        "openai/grade-school-math",
        "3101c7d5072418e28b9008a6636bde82a006892c",
        "grade_school_math/data/test.jsonl",
        "MIT",
    ),
    "svamp": Source(
        "arkilpatel/SVAMP",
        "689d7ccac74b9983a2ac7cc3b264f441b99e7c53",
        "SVAMP.json",
        "MIT",
    ),
    "mmlu_formal_logic": Source(
        "HaeChan0305/MLILAB-FedLLM",
        "d92730e8bacd7b3a61e551e015e40588e10234b4",
        "data/mmlu/test/formal_logic_test.csv",
        "MIT (MMLU, hendrycks/test)",
    ),
    "hh_rlhf_test300": Source(
        "anthropics/hh-rlhf",
        "354e5c3cb8960630860dd5774a6ac2a58313bf4d",
        "harmless-base/test.jsonl.gz",
        "MIT",
    ),
    "deepscaler300": Source(
        "agentica-project/deepscaler",
        "95ef74ffee001cce89463f2d61dfdce1d03576c1",
        "deepscaler/data/train/aime.json",
        "MIT",
    ),
    **{
        f"mgsm_{language}": Source(
            "google-research/url-nlp",
            "452a21ad3dae5668c06ceeac21ff073e1e40f9be",
            f"mgsm/mgsm_{language}.tsv",
            "CC BY 4.0 (MGSM, Shi et al. 2022, mgsm/LICENSE; its questions GSM8K's, Cobbe et al. 2021, translated)",
        )
        for language in MGSM_LANGUAGES
    },
}


def raw_bytes(raw: Path, source: Source) -> tuple[str, bytes]:
    """The raw file's name (for errors) and bytes: a plain copy under ``raw`` if present, else ``git show`` from a
    bare mirror (named ``GIT_DIR:PATH``)."""
    folder = raw / source.repo.replace("/", "+")
    plain = folder / source.path
    if plain.is_file():
        return str(plain), plain.read_bytes()
    git_dir = folder / "repo"
    if not git_dir.is_dir():
        raise UabError(f"not found (nor a git directory at {git_dir})", str(plain))
    done = subprocess.run(
        ["git", f"--git-dir={git_dir}", "show", f"{source.commit}:{source.path}"], capture_output=True, check=False
    )
    if done.returncode != 0:
        raise UabError(" ".join(done.stderr.decode().split()), str(git_dir))
    return f"{git_dir}:{source.path}", done.stdout


def rows(path: str, data: bytes, *fields: str) -> list[tuple[int, dict]]:
    """The rows of a raw file as ``uab convert`` reads it (by its name's suffix; a ``.gz`` one decompressed first),
    each with ``fields``: a file that does not read, or a row without one of them, is a UabError naming its line."""
    if path.endswith(".gz"):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise UabError(f"cannot decompress: {exc}", path) from None
    table = [(line, row) for line, row, *_ in read_table(path.removesuffix(".gz"), data=data)]
    for line, row in table:
        if missing := [name for name in fields if name not in row]:
            raise UabError(f"row is missing field {missing[0]!r}; its columns: {', '.join(map(repr, row))}", path, line)
    return table


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sample(rows: list[tuple[int, dict]], key) -> list[tuple[int, dict]]:
    """The ``SAMPLE`` rows with the smallest SHA-256 of ``key(row)``, in their original order."""
    chosen = sorted(rows, key=lambda item: _digest(key(item[1])))[:SAMPLE]
    return sorted(chosen, key=lambda item: item[0])


def build_math500(path: str, data: bytes) -> Iterator[dict]:
    return convert_records(rows(path, data), "math500", path=path)


def build_gsm8k(path: str, data: bytes) -> Iterator[dict]:
    return convert_records(rows(path, data), "gsm8k", path=path)


def build_svamp(path: str, data: bytes) -> Iterator[dict]:
    return convert_records(rows(path, data), "svamp", path=path)


def build_mmlu_formal_logic(path: str, data: bytes) -> Iterator[dict]:
    choices = [f"choice{c}" for c in range(4)]
    table = rows(path, data, "question", *choices, "answer")
    with_ids = [(n, {"id": f"mmlu-formal_logic-{i}", "question": r["question"], "choices": [r[c] for c in choices],
                     "answer": r["answer"], "subject": "formal_logic"}) for i, (n, r) in enumerate(table)]
    return convert_records(with_ids, "mmlu", id_field="id", path=path, answer_base=0)


def build_hh_rlhf(path: str, data: bytes) -> Iterator[dict]:
    chosen = sample(rows(path, data, "chosen", "rejected"), lambda r: f"{r['chosen']}\x00{r['rejected']}")
    with_ids = [(n, {**r, "id": f"hh-rlhf-harmless-base-test-{n}"}) for n, r in chosen]
    return convert_records(with_ids, "hh-rlhf", id_field="id", path=path)


def build_deepscaler(path: str, data: bytes) -> Iterator[dict]:
    chosen = sample(rows(path, data, "problem", "year", "aime_number", "problem_number"), lambda r: r["problem"])
    with_ids = [
        (n, {**r, "id": f"deepscaler-aime-{r['year']}-{r['aime_number']}-{r['problem_number']}"}) for n, r in chosen
    ]
    return convert_records(with_ids, "deepscaler", id_field="id", path=path)


def build_mgsm(path: str, data: bytes) -> Iterator[dict]:
    """One MGSM language's TSV, read as ``uab convert mgsm_XX.tsv --preset mgsm`` reads it (its name gives the language)."""
    return convert_records(read_table(path, preset="mgsm", data=data), "mgsm", path=path)


BUILDERS = {
    "math500": build_math500,
    "gsm8k_test": build_gsm8k,
    "svamp": build_svamp,
    "mmlu_formal_logic": build_mmlu_formal_logic,
    "hh_rlhf_test300": build_hh_rlhf,
    "deepscaler300": build_deepscaler,
    **dict.fromkeys((name for name in SOURCES if name.startswith("mgsm_")), build_mgsm),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--raw", type=Path, required=True, help="folder with <owner>+<name>/ copies or git mirrors")
    parser.add_argument("-o", "--out", type=Path, default=Path("datasets"), help="output folder")
    parser.add_argument("--only", choices=sorted(BUILDERS), action="append", help="build only these files")
    args = parser.parse_args(argv)
    for name in args.only or BUILDERS:  # write_records makes the folder, and writes each file whole or not at all
        source = SOURCES[name]
        count = write_records(str(args.out / f"{name}.jsonl"), BUILDERS[name](*raw_bytes(args.raw, source)))
        print(f"{name}.jsonl: {count} records from {source.repo}@{source.commit[:7]}:{source.path}")
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except UabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
