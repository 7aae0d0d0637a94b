"""Pivot `uab simulate` results into one Markdown table: accuracy difference to Uniform
(percentage points, paired by seed, ± standard error) per pool, N and allocator (and vote
rule, with its vote temperature, where the results cross several).
Usage: python scripts/results_table.py NAME=results.jsonl [NAME=results.jsonl ...]
"""

from __future__ import annotations

import argparse
import sys

from uab_cli.errors import UabError
from uab_cli.evaluation import summarize
from uab_cli.jsonl import read_jsonl
from uab_cli.recommend import vote_label


def label(e: dict, many_t: bool) -> str:
    """Allocator name, with its signal unless ANLL and its T when several were replayed, and
    its vote rule (and vote temperature) unless majority (Uniform + majority is the reference column)."""
    out = e["allocator"] + (f" + {vote_label(e)}" if e.get("vote_rule", "majority") != "majority" else "")
    extra = [e["signal"]] if e["signal"] not in (None, "anll") else []
    if many_t and e["T"] is not None:
        extra.append(f"T={e['T']}")
    return f"{out} ({', '.join(extra)})" if extra else out


def table(arg: str) -> str:
    if not arg.partition("=")[0] or "=" not in arg:
        raise argparse.ArgumentTypeError(f"{arg!r}: NAME=RESULTS expected")
    return arg


def results(path: str) -> list[dict]:
    """The summary of one `uab simulate -o` results file; a file that does not read, or holds no
    result rows (a pool, records), is a UabError naming it."""
    summary = [e for e in summarize([row for _, row in read_jsonl(path)]) if "skipped" not in e]
    if not summary:
        raise UabError("no result rows (`uab simulate -o` writes them)", path)
    return summary


def main(args: list[str]) -> None:
    tables = []
    allocators: list[str] = []
    for arg in args:
        name, path = arg.split("=", 1)
        summary = results(path)
        many_t = len({e["T"] for e in summary if e["T"] is not None}) > 1
        tables.append((name, summary, many_t))
        for e in summary:
            if label(e, many_t) not in ("uniform", *allocators):
                allocators.append(label(e, many_t))
    print("| pool | N | uniform acc % | " + " | ".join(allocators) + " |")
    print("|---|---|---|" + "---|" * len(allocators))
    for name, summary, many_t in tables:
        for n in sorted({e["N"] for e in summary}):
            cells = {}
            for e in summary:
                if e["N"] != n:
                    continue
                cells[label(e, many_t)] = e
            uni = cells.get("uniform")
            row = [name, str(n), f"{100 * uni['accuracy']:.1f}" if uni else "-"]
            for a in allocators:
                e = cells.get(a)
                row.append("-" if e is None else f"{100 * e['diff_uniform']:+.1f} ± {100 * e['diff_se']:.1f}")
            print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tables", nargs="+", metavar="NAME=RESULTS", type=table, help="a name and a simulate results file")
    try:
        main(parser.parse_args().tables)
    except UabError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
