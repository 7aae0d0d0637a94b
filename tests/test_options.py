"""Option values: one check for every option, from the command line and a --settings file alike
(types, 64-bit integers, finite numbers, bounds), options that exclude each other or do not
apply, required options filled by a settings file or a run directory's record."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from conftest import arithmetic, cli, read_jsonl, skip_unless_toml_settings, write_jsonl

from uab_cli import recommend
from uab_cli.errors import UabError
from uab_cli.options import Option, param_name
from uab_cli.settings import LISTS, Allocation, Generation

BIG = "99999999999999999999"  # beyond 64 bits


@pytest.fixture()
def questions(tmp_path) -> str:
    return write_jsonl(tmp_path / "q.jsonl", arithmetic(3))


def refused(result, says: str) -> None:
    """Exit 2 with one line ``error: …`` that contains ``says``."""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2, result.stderr
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], result.stderr


def run(questions: str, out, *args: str):
    return cli(["run", questions, "--backend", "scripted", "-o", str(out), "-q", *map(str, args)])


def settings_file(tmp_path, text: str) -> str:
    path = tmp_path / "settings.json"
    path.write_text(text)
    return str(path)


# --- 64-bit integers -------------------------------------------------------------------------

BIG_INTS = [["--seed", BIG], ["-N", BIG], ["--max-per-question", BIG], ["--tie-seed", BIG],
            ["--allocation-seed", BIG], ["--max-tokens", BIG], ["--seed", "-" + BIG]]


@pytest.mark.parametrize("args", BIG_INTS, ids=[" ".join(a) for a in BIG_INTS])
def test_an_integer_beyond_64_bits_is_a_range_error_and_leaves_nothing(tmp_path, questions, args):
    result = run(questions, tmp_path / "r", *(["-N", "2"] if args[0] != "-N" else []), *args)
    refused(result, "must fit in 64 bits (-9223372036854775808 to 9223372036854775807)")
    assert not (tmp_path / "r").exists()  # no directory, no .lock


@pytest.mark.parametrize("key", ["budget", "seed"])
def test_an_integer_beyond_64_bits_in_a_settings_file_is_a_range_error(tmp_path, questions, key):
    budget = [] if key == "budget" else ["-N", "2"]
    result = run(questions, tmp_path / "r", *budget, "--settings", settings_file(tmp_path, f'{{"{key}": {BIG}}}'))
    refused(result, f"must fit in 64 bits (-9223372036854775808 to 9223372036854775807), got {BIG}")
    assert not (tmp_path / "r").exists()


def test_seeds_and_budgets_the_code_cannot_use_are_refused(tmp_path, questions):
    refused(run(questions, tmp_path / "r", "-N", "2", "--allocation-seed", "-1", "--allocator", "random"),
            "--allocation-seed must be >= 0, got -1")
    refused(run(questions, tmp_path / "r", "-N", str(2**63 - 1)), "budget N·M = 9223372036854775807·3 does not fit")
    refused(cli(["pool", questions, "-K", BIG, "--backend", "scripted", "-o", str(tmp_path / "p")]), "'-K'")
    assert not (tmp_path / "r").exists() and not (tmp_path / "p").exists()


# --- finite numbers ---------------------------------------------------------------------------

NOT_FINITE = [(["--temperature", "nan"], "--temperature must be a finite number, got nan"),
              (["--temperature", "1e309"], "--temperature must be a finite number, got inf"),
              (["-T", "nan"], "--signal-temperature must be a finite number"),
              (["--top-p", "nan"], "--top-p must be a finite number"),
              (["--vote-temperature", "nan"], "--vote-temperature must be a finite number"),
              (["--vote-keep", "nan"], "--vote-keep must be a finite number"),
              (["--exit", "hard", "--exit-threshold", "nan"], "--exit-threshold must be a finite number"),
              (["--price", "nan,1"], "--price takes IN,OUT: two finite non-negative prices"),
              (["--price", "1,inf"], "--price takes IN,OUT: two finite non-negative prices")]


@pytest.mark.parametrize("args,says", NOT_FINITE, ids=[" ".join(a) for a, _ in NOT_FINITE])
def test_nan_and_infinity_are_refused(tmp_path, questions, args, says):
    refused(run(questions, tmp_path / "r", "-N", "2", *args), says)
    assert not (tmp_path / "r").exists()


def test_nan_in_a_settings_file_and_in_simulate_is_refused(tmp_path, questions):
    refused(run(questions, tmp_path / "r", "-N", "2", "--settings", settings_file(tmp_path, '{"temperature": NaN}')),
            "--temperature must be a finite number, got nan")
    assert run(questions, tmp_path / "r", "-N", "2", "--allocator", "uniform").exit_code == 0
    pool = str(tmp_path / "r" / "votes.jsonl")  # Uniform's votes: N samples per question, a pool
    for args, says in ((["-T", "0.2,inf"], "--signal-temperature must be a finite number, got inf"),
                       (["-T", "abc"], "-T/--signal-temperature takes comma-separated numbers"),
                       (["--vote-temperature", "nan"], "--vote-temperature must be a finite number"),
                       (["--targets", "nan"], "--targets takes comma-separated accuracies in percent")):
        refused(cli(["simulate", pool, "--budgets", "1", "--seeds", "1", *args]), says)


# --- types from a settings file -----------------------------------------------------------------

WRONG_TYPES = [('{"seed": 1.5}', "--seed takes an integer, got 1.5"),
               ('{"budget": "3"}', "--budget takes an integer, got '3'"),
               ('{"budget": true}', "--budget takes an integer, got True"),
               ('{"temperature": "hot"}', "--temperature takes a number, got 'hot'"),
               ('{"vcs": 1}', "--vcs takes true or false, got 1"),
               ('{"samples": "x"}', "--samples takes an integer, got 'x'"),
               # a command's own options take the declared ones' type rule: click read "2" as 2, 2.0 as 2
               ('{"samples": "2"}', "--samples takes an integer, got '2'"),
               ('{"samples": 2.0}', "--samples takes an integer, got 2.0"),
               ('{"samples": true}', "--samples takes an integer, got True"),
               ('{"price": 5}', "--price takes a string, got 5"),
               ('{"price": "5"}', "--price takes IN,OUT: two finite non-negative prices"),
               ('{"api_key": ["sk-secret-1"]}', "--api-key takes a string, got a list"),  # never the key itself
               ('{"api_key": 5}', "--api-key takes a string, got an int")]


@pytest.mark.parametrize("text,says", WRONG_TYPES, ids=[t for t, _ in WRONG_TYPES])
def test_a_settings_value_of_the_wrong_type_is_refused(tmp_path, questions, text, says):
    budget = [] if "budget" in text else ["-N", "2"]
    path = settings_file(tmp_path, text)
    refused(run(questions, tmp_path / "r", *budget, "--settings", path), f"{path}:1: {says}")  # the file is named
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(("text", "given", "says"), [
    ('{"quiet": "yes"}', [], "--quiet takes true or false, got 'yes'"),  # run() gives -q
    ('{"temperature": "hot"}', ["--temperature", "0.5"], "--temperature takes a number, got 'hot'"),
    ('{"samples": "x"}', ["-K", "1"], "--samples takes an integer, got 'x'")])
def test_a_settings_files_bad_value_is_refused_where_the_command_line_gives_it_too(tmp_path, questions, text, given,
                                                                                     says):
    path = settings_file(tmp_path, text)
    refused(run(questions, tmp_path / "r", "-N", "2", *given, "--settings", path), f"{path}:1: {says}")
    assert not (tmp_path / "r").exists()


def test_a_number_for_simulates_list_option_in_a_settings_file_says_the_string_to_write(tmp_path, questions):
    """`uab run`'s `vote_temperature` takes a number, `simulate`'s a string of comma-separated
    ones: `{"vote_temperature": 0.2}` for simulate said only "takes a string, got 0.2", no word of
    what to write. Now the message spells it (a list too); the string written runs."""
    assert run(questions, tmp_path / "r", "-N", "2", "-K", "2").exit_code == 0
    pool, out = str(tmp_path / "r" / "phase1.jsonl"), tmp_path / "res.jsonl"

    def simulate(text):
        return cli(["simulate", pool, "--seeds", "1", "--vote-rules", "majority,weighted", "-o", str(out), "-q",
                    "--settings", settings_file(tmp_path, text)])

    for text, says in [('{"vote_temperature": 0.2}', '--vote-temperature takes a string, got 0.2 (comma-separated '
                        'numbers: write "0.2")'),
                       ('{"vote_temperature": [0.05, 0.1]}', 'write "0.05,0.1")'),
                       ('{"signal_temperature": 1}', '--signal-temperature takes a string, got 1 (comma-separated '
                        'numbers: write "1")'),
                       ('{"budgets": [2]}', 'write "2")'), ('{"targets": 30}', 'write "30")')]:
        refused(simulate(text), says)
        assert not out.exists()
    for text, says in [('{"budgets": 2.5}', "--budgets takes a string, got 2.5"),  # no integer: no string to write
                       ('{"allocators": 1}', "--allocators takes a string, got 1")]:  # lists no numbers
        refused(simulate(text), says)
        assert "write" not in simulate(text).stderr
    assert simulate('{"vote_temperature": "0.05,0.1", "budgets": "2"}').exit_code == 0


def test_an_option_from_a_settings_file_at_odds_with_another_names_the_file(tmp_path, questions):
    path = settings_file(tmp_path, '{"gain": "coverage", "max_tokens": 16}')
    refused(run(questions, tmp_path / "r", "-N", "2", "--allocator", "uniform", "--settings", path),
            f"{path}:1: --gain applies to the uab allocators, not --allocator uniform")
    result = run(questions, tmp_path / "r", "-N", "2", "--allocator", "uniform", "--gain", "coverage")
    refused(result, "error: --gain applies")  # given on the command line: no file to name
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(("text", "given", "says"), [
    ('{"allocator": "uniform"}', ["--gain", "coverage"], "--gain applies to the uab allocators, not --allocator uniform"),
    ('{"allocator": "majority"}', ["--exit", "hard"], "--exit applies to the uab allocators, not --allocator majority"),
    ('{"vote_rule": "majority"}', ["--vote-temperature", "0.05"],
     "--vote-temperature applies to the vote rule weighted (of a signal other than vcs), not --vote-rule majority"),
    ('{"signal": "vote-entropy"}', ["-K", "1"], "--signal vote-entropy needs at least 2 Phase-1 samples per question"),
    ('{"samples": 1}', ["--signal", "vote-entropy"], "--signal vote-entropy needs at least 2 Phase-1 samples per "
                                                     "question (-K/--samples 2)"),
    ('{"samples": 3}', [], "budget N=2 is smaller than the 3 Phase-1 samples per question (-K/--samples 3): "
                           "give --budget 3 or more, or a smaller -K")])
def test_a_settings_files_value_at_odds_with_an_option_given_names_the_file(tmp_path, questions, text, given, says):
    """The file's allocator, vote rule, signal or -K was at odds with an option the command line
    gave, and the message named the value alone (`not 'uniform'`, `budget N=2 is smaller than the
    3 Phase-1 samples`): the settings file went unnamed."""
    path = settings_file(tmp_path, text)
    refused(run(questions, tmp_path / "r", "-N", "2", *given, "--settings", path), f"error: {path}:1: {says}")
    assert not (tmp_path / "r").exists()


def test_a_budget_below_k_names_the_settings_file_it_came_from_and_not_a_phase1_files_count(tmp_path, questions):
    """A settings file's budget below the command line's -K named no file; on a Phase-1 file's
    own samples (`allocate`), the count is the file's, not -K's, and the message says no -K."""
    path = settings_file(tmp_path, '{"budget": 2}')
    refused(run(questions, tmp_path / "r", "-K", "3", "--settings", path),
            f"error: {path}:1: budget N=2 is smaller than the 3 Phase-1 samples per question (-K/--samples 3)")
    refused(run(questions, tmp_path / "r", "-K", "3", "-N", "2"), "error: budget N=2 is smaller than the 3 Phase-1")
    assert not (tmp_path / "r").exists()
    phase1 = str(tmp_path / "p1.jsonl")
    assert cli(["phase1", questions, "-K", "3", "--backend", "scripted", "-o", phase1, "-q"]).exit_code == 0
    said = "budget N=2 is smaller than the 3 Phase-1 samples per question: give --budget 3 or more"
    refused(cli(["allocate", phase1, "--settings", path]), f"error: {path}:1: {said}")
    refused(cli(["allocate", phase1, "-N", "2"]), f"error: {said}")


@pytest.mark.parametrize("option,value,says", [
    (Option("--n", "", type=int, minimum=1), 2**63, "--n must fit in 64 bits"),
    (Option("--n", "", type=int, minimum=1), -(2**63) - 1, "--n must fit in 64 bits"),
    (Option("--x", "", type=float, minimum=0), float("nan"), "--x must be a finite number, got nan"),
    (Option("--x", "", type=float, maximum=1), float("-inf"), "--x must be a finite number, got -inf"),
    (Option("--x", "", type=float), True, "--x takes a number, got True"),
    (Option("--s", "", choices=("a", "b")), 1, "--s takes a string, got 1"),
])
def test_option_check_types_ranges_and_finite_numbers(option, value, says):
    with pytest.raises(UabError) as caught:
        option.check(value)
    assert says in str(caught.value)
    option.check(2**63 - 1 if option.type is int else "a" if option.type is str else 0.5)


# --- --prompt and --prompt-template ------------------------------------------------------------


@pytest.fixture()
def template(tmp_path) -> str:
    path = tmp_path / "t.json"
    path.write_text(json.dumps([{"role": "user", "content": "{question}"}]))
    return str(path)


def test_prompt_and_template_exclude_each_other(tmp_path, questions, template):
    says = "--prompt and --prompt-template exclude each other: give one"
    refused(run(questions, tmp_path / "r", "-N", "2", "--prompt", "boxed", "--prompt-template", template), says)
    both = settings_file(tmp_path, json.dumps({"prompt": "boxed", "prompt_template": template}))
    refused(run(questions, tmp_path / "r", "-N", "2", "--settings", both), says)
    assert not (tmp_path / "r").exists()
    with pytest.raises(UabError, match="exclude each other"):
        Generation.build(prompt="boxed", prompt_template=template)


def test_a_given_template_wins_over_a_settings_files_prompt(tmp_path, questions, template, fake_backend):
    fake_backend.in_cli()
    boxed = settings_file(tmp_path, json.dumps({"prompt": "boxed"}))
    assert run(questions, tmp_path / "r", "-N", "2", "--settings", boxed, "--prompt-template", template).exit_code == 0
    config = json.loads((tmp_path / "r" / "config.json").read_text())["generation"]
    assert config["prompt_template"] == template and config["prompt"] is None  # no built-in prompt was asked
    assert fake_backend.calls[0][0].messages == ({"role": "user", "content": arithmetic(3)[0]["question"]},)


def test_a_rerun_with_the_other_prompt_option_drops_the_recorded_one(tmp_path, questions, template):
    out = tmp_path / "r"
    assert run(questions, out, "-N", "2", "--prompt-template", template).exit_code == 0
    refused(run(questions, out, "--prompt", "boxed"), "--prompt (unset → boxed); --prompt-template (")
    assert run(questions, out, "--prompt", "boxed", "--force").exit_code == 0
    config = json.loads((out / "config.json").read_text())["generation"]
    assert config["prompt"] == "boxed" and config["prompt_template"] is None
    refused(run(questions, out, "--prompt-template", template), "--prompt (boxed → unset)")
    assert run(questions, out, "--prompt-template", template, "--force").exit_code == 0
    config = json.loads((out / "config.json").read_text())["generation"]
    assert config["prompt"] is None and config["prompt_template"] == template
    config = json.loads((out / "config.json").read_text())  # as an earlier uab wrote it: the default prompt's name
    config["generation"]["prompt"] = "fewshot"
    (out / "config.json").write_text(json.dumps(config))
    result = run(questions, out, "-N", "3")
    assert result.exit_code == 0, result.stderr


def test_the_same_template_named_another_way_is_no_change(tmp_path, questions, template, monkeypatch):
    out = tmp_path / "r"
    assert run(questions, out, "-N", "2", "--prompt-template", template).exit_code == 0
    monkeypatch.chdir(tmp_path)
    result = run(questions, out, "-N", "2", "--prompt-template", "./t.json")  # the same file, another spelling
    assert result.exit_code == 0, result.stderr
    assert json.loads((out / "config.json").read_text())["generation"]["prompt_template"] == template
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")  # a rerun from another folder finds the recorded template
    result = run(questions, out, "-N", "3")
    assert result.exit_code == 0, result.stderr
    config = json.loads((out / "config.json").read_text())  # as an earlier uab wrote it: the path as typed
    config["generation"]["prompt_template"] = "t.json"
    (out / "config.json").write_text(json.dumps(config))
    result = run(questions, out, "-N", "3", "--prompt-template", "../t.json")  # the same file, from elsewhere/
    assert result.exit_code == 0, result.stderr
    Path(template).write_text(json.dumps([{"role": "user", "content": "Q: {question}"}]))  # another template
    refused(run(questions, out, "-N", "2", "--prompt-template", "../t.json"), "--prompt-template (its content)")


@pytest.mark.parametrize("recorded_prompt", [None, "fewshot"])  # an earlier uab recorded the default prompt too
def test_a_recommendation_from_a_template_pool_carries_the_template_only(template, recorded_prompt):
    entry = {"allocator": "uniform", "signal": None, "T": None, "N": 2, "vote_rule": "majority"}
    pool = {**Generation(prompt_template=template).info(), "prompt": recorded_prompt}
    settings = recommend.run_settings(entry, {"generation": pool})
    assert settings["prompt_template"] == template and "prompt" not in settings


def test_a_recommendation_carries_the_pools_backend_options_that_are_not_the_default():
    entry = {"allocator": "uniform", "signal": None, "T": None, "N": 2, "vote_rule": "majority"}
    pool = Generation(backend="openai", backend_options={"endpoint": "completions", "tokenizer": "org/tok"}).info()
    settings = recommend.run_settings(entry, {"generation": pool})
    assert settings["endpoint"] == "completions" and settings["tokenizer"] == "org/tok"
    assert "--endpoint completions --tokenizer org/tok" in recommend.flags(settings)
    default = recommend.run_settings(entry, {"generation": Generation(backend="local").info()})
    assert "dtype" not in default and "backend_options" not in default


def test_a_recommendations_flags_keep_every_digit_of_a_number():
    shown = recommend.flags({"signal_temperature": 0.1234567, "vote_temperature": 1 / 3, "top_p": 1.0})
    assert shown == "--signal-temperature 0.1234567 --vote-temperature 0.3333333333333333 --top-p 1"


def test_a_recommendations_flags_spell_a_switch_on_and_off():
    assert recommend.flags({"vcs": True, "include_phase1": True}) == "--vcs --include-phase1"
    assert recommend.flags({"vcs": False, "include_phase1": False}) == "--no-vcs --exclude-phase1"


def test_backend_options_take_the_backends_default_and_are_compared_option_by_option():
    from uab_cli import settings

    local = Generation(backend="local")
    assert local.backend_options == {"dtype": "float32"}
    assert Generation(backend="vllm", backend_options={"dtype": "bfloat16"}).backend_options == {"dtype": "bfloat16"}
    bf16 = Generation.from_params({"backend": "local", "dtype": "bfloat16"}).info()
    assert settings.changes("generation", local.info(), bf16) == {"--dtype": "(float32 → bfloat16)"}
    older = {k: v for k, v in local.info().items() if k != "backend_options"}  # written before they were recorded
    assert settings.changes("generation", older, bf16) == {}
    # Phase 2 (no option given) keeps Phase 1's; another backend drops them
    assert Generation.from_params({}, bf16).backend_options == {"dtype": "bfloat16"}
    assert Generation.from_params({"backend": "openai"}, bf16).backend_options == {"endpoint": "chat",
                                                                                    "tokenizer": None}
    # local always means float32 by auto: recorded alike, no change
    assert Generation.from_params({"backend": "local", "dtype": "auto"}).backend_options == {"dtype": "float32"}


@pytest.mark.parametrize("value,change", [("reply", {}), ("answer", {"--signal-span": "(reply → answer)"})])
def test_a_config_entry_from_before_its_option_existed_reads_as_its_default(value, change):
    """A config an older uab wrote lacks the entry: it was drawn at the option's default, no change
    where the run gives that, shown against the default where it gives another."""
    from uab_cli import settings

    new = {**Generation().info(), "signal_span": value}
    older = {k: v for k, v in new.items() if k != "signal_span"}
    assert settings.changes("generation", older, new) == change


def test_another_template_file_is_named_beside_its_content(tmp_path):
    """A rerun with another template file names the file, and its content where that differs
    too; the same content under another name is no change."""
    from uab_cli import settings

    texts = {"a": "{question}", "b": "Q: {question}", "c": "{question}"}
    for name, content in texts.items():
        (tmp_path / f"{name}.json").write_text(json.dumps([{"role": "user", "content": content}]))
    a, b, c = (Generation(prompt_template=str(tmp_path / f"{n}.json")).info() for n in texts)
    assert list(settings.changes("generation", a, b)) == ["--prompt-template", "--prompt-template (its content)"]
    assert settings.changes("generation", a, c) == {}


def test_a_tokenizer_directory_is_recorded_absolute_and_goes_with_the_completions_endpoint(tmp_path, monkeypatch):
    from uab_cli import settings

    (tmp_path / "tok").mkdir()
    monkeypatch.chdir(tmp_path)
    given = Generation.from_params({"backend": "openai", "endpoint": "completions", "tokenizer": "./tok"})
    assert given.backend_options["tokenizer"] == str(tmp_path / "tok")
    again = Generation.from_params({"tokenizer": "tok"}, given.info())  # typed another way: the same
    assert settings.changes("generation", given.info(), again.info()) == {}
    assert Generation.from_params({"backend": "openai", "endpoint": "completions", "tokenizer": "org/tok"}
                                  ).backend_options["tokenizer"] == "org/tok"  # a hub id stays as typed
    chat = Generation.from_params({"endpoint": "chat"}, given.info())  # the recorded tokenizer does not apply
    assert chat.backend_options == {"endpoint": "chat", "tokenizer": None}
    assert Generation.from_params({"endpoint": "completions"}, given.info()).backend_options == given.backend_options


def test_another_backend_than_a_settings_files_drops_its_model_and_sample_options(tmp_path, questions):
    path = settings_file(tmp_path, '{"backend": "openai", "model": "served", "endpoint": "completions", '
                                   '"max_tokens": 16}')
    result = run(questions, tmp_path / "r", "-N", "2", "--settings", path)  # run() gives --backend scripted
    assert result.exit_code == 0, result.stderr
    config = json.loads((tmp_path / "r" / "config.json").read_text())["generation"]
    assert config["backend"] == "scripted" and config["max_tokens"] == 16 and config["backend_options"] == {}


def test_another_backend_than_a_settings_files_drops_all_its_backend_options(tmp_path, questions):
    """The file's server, API key and engine options belong to its backend too: an OpenAI key and
    URL were sent to --backend cohere, and a vllm file's --tensor-parallel-size refused the run."""
    from uab_cli import settings

    values = {"backend": "openai", "api_key": "sk-openai", "base_url": "http://127.0.0.1:8000/v1", "concurrency": 4,
              "max_tokens": 16}
    assert settings.for_backend(values, "cohere") == {"backend": "openai", "max_tokens": 16}
    assert settings.for_backend(values, "openai") == values and settings.for_backend(values, None) == values
    path = settings_file(tmp_path, '{"backend": "vllm", "tensor_parallel_size": 2, "gpu_memory_utilization": 0.5, '
                                   '"max_model_len": 4096, "max_tokens": 16}')
    result = run(questions, tmp_path / "r", "-N", "2", "--settings", path)  # run() gives --backend scripted
    assert result.exit_code == 0, result.stderr
    assert json.loads((tmp_path / "r" / "config.json").read_text())["generation"]["max_tokens"] == 16
    path = settings_file(tmp_path, '{"tensor_parallel_size": 2}')  # no backend named: the option is the run's
    refused(run(questions, tmp_path / "r2", "-N", "2", "--settings", path),
            "--tensor-parallel-size does not apply to the scripted backend (only to vllm)")


# --- another backend than the recorded one ------------------------------------------------------


def test_another_backend_does_not_inherit_the_recorded_model():
    recorded = {"backend": "scripted", "model": "scripted", "max_tokens": 16}
    gen = Generation.from_params({"backend": "local"}, recorded)
    assert gen.backend == "local" and gen.model == "" and gen.max_tokens == 16
    assert Generation.from_params({"backend": "scripted"}, recorded).model == "scripted"
    assert Generation.from_params({}, recorded).model == "scripted"


def test_phase2_with_another_backend_draws_with_that_backends_model(tmp_path, questions):
    phase1, allocated = tmp_path / "p1.jsonl", tmp_path / "a.jsonl"
    assert cli(["phase1", questions, "--backend", "scripted", "--model", "m-of-local", "-o", str(phase1)]).exit_code == 0
    rows = read_jsonl(phase1)
    for row in rows:  # as if Phase 1 had run on the local backend
        row["uab"]["phase1"]["backend"] = "local"
    write_jsonl(phase1, rows)
    assert cli(["allocate", str(phase1), "-N", "2", "-o", str(allocated), "-q"]).exit_code == 0
    result = cli(["phase2", str(allocated), "--backend", "scripted", "-o", str(tmp_path / "p2.jsonl"), "-q"])
    assert result.exit_code == 0, result.stderr
    assert {r["uab"]["phase2"]["model"] for r in read_jsonl(tmp_path / "p2.jsonl")} == {"scripted"}


# --- required options, --settings files and a run directory's record ---------------------------


def test_the_budget_may_come_from_a_settings_file_or_the_run_directory(tmp_path, questions):
    out = tmp_path / "r"
    assert run(questions, out, "--settings", settings_file(tmp_path, '{"budget": 3}')).exit_code == 0
    assert json.loads((out / "config.json").read_text())["n"] == 3
    result = run(questions, out, "--vote-rule", "weighted")  # a rerun: N from config.json
    assert result.exit_code == 0, result.stderr
    assert sum(len(r["samples"]) for r in read_jsonl(out / "votes.jsonl")) == 9
    assert json.loads((out / "config.json").read_text())["n"] == 3
    assert run(questions, out, "--settings", settings_file(tmp_path, '{"budget": 2}')).exit_code == 0
    assert json.loads((out / "config.json").read_text())["n"] == 2  # the file wins over the record


def test_a_missing_budget_is_still_one_line(tmp_path, questions):
    refused(run(questions, tmp_path / "r"), "Missing option '-N' / '--budget'. (see `uab run -h`)")
    refused(cli(["allocate", questions, "--settings", settings_file(tmp_path, '{"allocator": "uniform"}')]),
            "Missing option '-N' / '--budget'. (see `uab allocate -h`)")
    assert not (tmp_path / "r").exists()
    assert "[required, or the run directory's]" in " ".join(cli(["run", "-h"]).stdout.split())
    assert "[required]" in cli(["allocate", "-h"]).stdout


@pytest.fixture()
def results(tmp_path) -> str:
    rows = [{"recommendation": {"N": n, "settings": {"allocator": "uniform", "max_tokens": 16}}} for n in (2, 4)]
    return write_jsonl(tmp_path / "results.jsonl", [{"allocator": "uab", "N": 2, "seed": 0}, *rows])


def test_a_results_file_without_a_budget_names_its_budgets(tmp_path, questions, results):
    refused(run(questions, tmp_path / "r", "--settings", results),
            "give --budget N to choose its recommendation (it has N = 2, 4)")
    assert not (tmp_path / "r").exists()
    assert run(questions, tmp_path / "r", "-N", "4", "--settings", results).exit_code == 0
    assert run(questions, tmp_path / "r", "--settings", results).exit_code == 0  # N = 4 from the directory
    assert json.loads((tmp_path / "r" / "config.json").read_text())["allocate"]["allocator"] == "uniform"


def test_a_results_file_of_one_recommendation_gives_the_run_its_budget(tmp_path, questions):
    one = write_jsonl(tmp_path / "one.jsonl", [{"recommendation": {"N": 3, "settings": {"allocator": "uniform"}}}])
    result = run(questions, tmp_path / "r", "--settings", one)
    assert result.exit_code == 0, result.stderr
    config = json.loads((tmp_path / "r" / "config.json").read_text())
    assert (config["n"], config["allocate"]["allocator"]) == (3, "uniform")
    assert sum(len(r["samples"]) for r in read_jsonl(tmp_path / "r" / "votes.jsonl")) == 3 * 3
    assert run(questions, tmp_path / "s", "-N", "2", "--settings", one).exit_code == 2  # no recommendation for 2


@pytest.mark.parametrize("command", ["phase1", "phase2", "allocate", "vote", "pool", "simulate"])
def test_only_run_takes_a_results_file(tmp_path, questions, results, command):
    args = {"allocate": ["-N", "2"], "pool": ["-K", "1"]}.get(command, [])
    result = cli([command, questions, *args, "--settings", results, "-o", str(tmp_path / "out")])
    refused(result, "a `uab simulate -o` results file's recommendation is for `uab run --budget N` "
                    "(to replay it on another pool: `uab simulate POOL --check RESULTS`)")
    assert not (tmp_path / "out").exists()
    shown = " ".join(cli([command, "-h"]).stdout.split())
    assert ("--settings TEXT JSON/TOML file of option values, or a run's or pool's config.json (or its directory): "
            "its settings; options given on the command line win.") in shown
    # simulate's help speaks of its own recommendation; none offers to read one, as run's does
    assert ("results file (its recommendation" if command == "simulate" else "recommendation") not in shown
    assert "results file (its recommendation for --budget)" in " ".join(cli(["run", "-h"]).stdout.split())


def test_simulate_help_says_nothing_of_a_recommendation_for_budget():
    assert "its recommendation for --budget" not in " ".join(cli(["simulate", "-h"]).stdout.split())


# --- allocation options that do not apply -------------------------------------------------------

NOT_APPLYING = [(["--gain", "coverage", "--allocator", "majority"],
                 "--gain applies to the uab allocators, not --allocator majority"),
                (["--gain", "coverage", "--allocator", "uniform"], "--gain applies to the uab allocators"),
                (["--vote-model", "scatter"], "--vote-model applies to the majority allocators, not --allocator uab"),
                (["--exit-mode", "skip"], "--exit-mode applies with --exit only"),
                (["--exit-threshold", "0.3"], "--exit-threshold applies with --exit only"),
                (["--exit", "hard", "--exit-threshold", "2"], "--exit-threshold must be in [0, 1], got 2.0"),
                # a preset's option given at its default: was taken silently, the preset's value ran
                (["--allocator", "majority-scatter", "--vote-model", "plurality-2"],
                 "--allocator majority-scatter is --allocator majority --vote-model scatter, not --vote-model plurality-2"),
                (["--allocator", "uab-coverage", "--gain", "algorithm1"],
                 "--allocator uab-coverage is --allocator uab --gain coverage, not --gain algorithm1"),
                (["--allocator", "uab-exit-easy-skip", "--exit-mode", "redistribute"],
                 "--allocator uab-exit-easy-skip is --allocator uab --exit-mode skip, not --exit-mode redistribute"),
                # given at its default to an allocator that does not read it: was taken, and ignored, silently
                (["--allocator", "uniform", "--gain", "algorithm1"],
                 "--gain applies to the uab allocators, not --allocator uniform"),
                (["--allocator", "uniform", "--vote-model", "plurality-2"],
                 "--vote-model applies to the majority allocators, not --allocator uniform"),
                (["--exit-mode", "redistribute"], "--exit-mode applies with --exit only"),
                # the official code's hard-exit test: read by --exit hard only, its N_max by that test only
                (["--exit-test", "official"], "--exit-test applies with --exit only"),
                (["--exit", "easy", "--exit-test", "official"], "--exit-test applies to --exit hard: the easy exit "
                 "tests p > θ, in the paper and the official code alike"),
                (["--exit", "easy", "--exit-nmax", "8"], "--exit-nmax applies to --exit hard"),
                (["--exit", "hard", "--exit-nmax", "8"], "--exit-nmax applies with --exit-test official only"),
                (["--exit", "hard", "--exit-test", "official", "--exit-nmax", "0"], "--exit-nmax must be >= 1, got 0"),
                (["--exit", "hard", "--exit-test", "nature"], "'nature' is not one of 'paper', 'official'")]


@pytest.mark.parametrize("args,says", NOT_APPLYING, ids=[" ".join(a) for a, _ in NOT_APPLYING])
def test_allocation_options_that_do_not_apply_are_refused(tmp_path, questions, args, says):
    refused(run(questions, tmp_path / "r", "-N", "2", *args), says)
    refused(cli(["allocate", questions, "-N", "2", *args]), says)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("allocator", ["uniform", "random", "majority", "uab-exit-hard"])
def test_a_rerun_takes_no_recorded_default_its_allocator_does_not_read(tmp_path, questions, allocator):
    """A run's config records `--gain algorithm1` and `--exit-mode redistribute` whatever its
    allocator: a plain rerun of a `uniform` directory must not give them back as options given,
    which its allocator does not read (refused, as given on the command line)."""
    out = tmp_path / "r"
    assert run(questions, out, "-N", "2", "--allocator", allocator).exit_code == 0
    recorded = json.loads((out / "config.json").read_text())["allocate"]
    result = run(questions, out, "-N", "3")
    assert result.exit_code == 0, result.stderr
    now = json.loads((out / "config.json").read_text())["allocate"]
    assert {**now, "n": 2} == recorded


VOTE_NOT_APPLYING = [(["--vote-temperature", "0.2"], "--vote-temperature applies to the vote rule weighted (of a "
                      "signal other than vcs), not --vote-rule majority"),
                     (["--vote-rule", "weighted", "--vote-keep", "0.5"],
                      "--vote-keep applies to the vote rule filtered, not --vote-rule weighted")]


@pytest.mark.parametrize("args,says", VOTE_NOT_APPLYING, ids=[" ".join(a) for a, _ in VOTE_NOT_APPLYING])
def test_a_vote_option_given_at_its_default_that_the_rule_does_not_read_is_refused(tmp_path, questions, args, says):
    """`uab run --vote-temperature 0.2` (its default) by majority was taken and ignored in silence,
    where 0.3 exits 2; on the command line or from a --settings file (which the line names)."""
    refused(run(questions, tmp_path / "r", "-N", "2", *args), f"error: {says}")
    text = json.dumps({param_name(a): json.loads(v) if v[0].isdigit() else v for a, v in zip(args[::2], args[1::2])})
    path = settings_file(tmp_path, text)
    refused(run(questions, tmp_path / "r", "-N", "2", "--settings", path), f"error: {path}:1: {says}")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("rule", ["majority", "weighted", "filtered", "confident-ties"])
def test_a_rerun_takes_no_recorded_vote_default_as_given(tmp_path, questions, rule):
    """A run's config records the vote's settings at their defaults (`"keep": 0.5` for filtered,
    `"temperature": 0.2` for weighted): a plain rerun takes them as the run's, not as options given."""
    out = tmp_path / "r"
    assert run(questions, out, "-N", "2", "--vote-rule", rule).exit_code == 0
    recorded = json.loads((out / "config.json").read_text())["vote"]
    result = run(questions, out, "-N", "3")
    assert result.exit_code == 0, result.stderr
    assert json.loads((out / "config.json").read_text())["vote"] == recorded
    assert run(questions, out, "-N", "3", "--vote-rule", "majority").exit_code == 0  # another rule: from the defaults


@pytest.mark.parametrize("allocator,entry,recorded,fixed", [
    ("uab-coverage", "gain", "algorithm1", "coverage"),
    # another value than the default (a hand edit): the preset sets it again too
    ("uab-exit-easy", "exit_mode", "skip", "redistribute"),
])
def test_a_rerun_of_a_preset_takes_no_recorded_default_it_fixes(tmp_path, questions, allocator, entry, recorded, fixed):
    """A config from before presets recorded what they run holds `"gain": "algorithm1"` beside
    `uab-coverage`: a plain rerun takes the preset's gain, not the conflict a given one is."""
    out = tmp_path / "r"
    assert run(questions, out, "-N", "2", "--allocator", allocator).exit_code == 0
    config = json.loads((out / "config.json").read_text())
    config["allocate"][entry] = recorded
    (out / "config.json").write_text(json.dumps(config))
    result = run(questions, out, "-N", "3")
    assert result.exit_code == 0, result.stderr
    assert json.loads((out / "config.json").read_text())["allocate"][entry] == fixed


def test_a_rerun_of_a_preset_refused_for_its_option_names_the_way_out(tmp_path, questions):
    """Rerunning a `uab-coverage` directory with only `--gain algorithm1` was refused with no way
    out named: `--allocator uab --gain algorithm1` runs it, on the samples drawn."""
    out = tmp_path / "r"
    assert run(questions, out, "-N", "2", "--allocator", "uab-coverage").exit_code == 0
    refused(run(questions, out, "--gain", "algorithm1"), "--allocator uab-coverage is --allocator uab --gain coverage, "
            "not --gain algorithm1: for that, give --allocator uab --gain algorithm1")
    assert run(questions, out, "--allocator", "uab", "--gain", "algorithm1").exit_code == 0
    assert json.loads((out / "config.json").read_text())["allocate"]["gain"] == "algorithm1"


def test_options_that_apply_still_work():
    assert Allocation(4, "majority", vote_model="scatter").vote_model == "scatter"
    assert Allocation(4, "majority-scatter", vote_model="scatter").vote_model == "scatter"  # a preset's own value
    assert Allocation(4, "uab", gain="coverage", exit="hard", exit_mode="skip", exit_threshold=0.4).theta() == 0.4


def test_simulate_takes_gain_for_every_allocator(tmp_path, questions):
    assert run(questions, tmp_path / "r", "-N", "2", "-K", "2").exit_code == 0
    result = cli(["simulate", str(tmp_path / "r" / "phase1.jsonl"), "--budgets", "2", "--seeds", "1", "--gain",
                  "coverage", "--allocators", "majority,uniform,uab", "--vote-rules", "majority"])
    assert result.exit_code == 0, result.stderr


def test_simulate_refuses_an_allocation_option_no_allocator_of_its_grid_reads(tmp_path, questions):
    """`simulate --allocators uniform,uab-coverage --gain coverage` (or `--gain algorithm1`,
    `--exit-test paper`) ran, the option read by no allocator replayed (`uab-coverage` fixes its
    own gain, the `uniform` baseline reads none), where `run` refuses one its allocator ignores;
    only `--exit-test official` was refused, in a message of its own. Now each is refused, given
    at its default too, from a settings file as well, in one message shape, and nothing is written."""
    assert run(questions, tmp_path / "r", "-N", "2", "-K", "2").exit_code == 0
    pool, out = str(tmp_path / "r" / "phase1.jsonl"), tmp_path / "res.jsonl"

    def simulate(grid, *args):
        return cli(["simulate", pool, "--budgets", "2", "--seeds", "1", "--allocators", grid, "--vote-rules",
                    "majority", "-o", str(out), "-q", *args])

    hard = "uab-exit-hard, uab-exit-hard-skip, uab-exit-hard-forfeit"
    for args, says in [(["--gain", "coverage"], "--gain applies to the allocators uab, uab-exit-hard, "),
                       (["--gain", "algorithm1"], "uab-exit-easy-forfeit, not --allocators uniform,uab-coverage"),
                       (["--exit-test", "paper"], f"--exit-test applies to the allocators {hard}, not --allocators "
                        "uniform,uab-coverage"),
                       (["--exit-test", "official", "--exit-nmax", "8"], "--exit-test applies to the allocators")]:
        refused(simulate("uniform,uab-coverage", *args), says)
        assert not out.exists()
    refused(simulate("uniform,uab-exit-easy", "--exit-test", "official"), f"--exit-test applies to the allocators {hard}")
    refused(simulate("uniform", "--settings", settings_file(tmp_path, '{"gain": "algorithm1"}')),
            ": --gain applies to the allocators uab, ")
    refused(simulate("bogus", "--gain", "coverage"), "unknown allocator 'bogus'")  # what is wrong first
    assert simulate("uab-exit-hard-skip,uniform", "--gain", "algorithm1", "--exit-test", "official", "--exit-nmax",
                    "8").exit_code == 0  # read: accepted


# --- --targets ----------------------------------------------------------------------------------


def test_targets_below_one_percent_are_taken_for_fractions(tmp_path, questions):
    assert run(questions, tmp_path / "r", "-N", "2", "-K", "2").exit_code == 0
    pool = str(tmp_path / "r" / "phase1.jsonl")
    refused(cli(["simulate", pool, "--budgets", "2", "--seeds", "1", "--targets", "0.27"]),
            "--targets takes percentages, e.g. 27.5 (not 0.275), got '0.27'")
    refused(cli(["report", str(tmp_path / "x.jsonl"), "-o", str(tmp_path / "rep"), "--targets", "30,0.5"]),
            "--targets takes percentages")


@pytest.mark.parametrize(("text", "taken"), [
    ("1,100", [0.01, 1.0]), ("27.5", [0.275]),  # the bounds are percentages, not fractions
    ("0", "in percent (1 <= t <= 100)"), ("100.5", "in percent"), ("0.5,101", "in percent"),  # out of range
    ("0.5", "takes percentages, e.g. 27.5"), ("1,0.5", "takes percentages"), ("0.5,100", "takes percentages"),
])
def test_targets_take_percentages_from_1_to_100(text, taken):
    """`--targets` (simulate's and report's): each from 1 % to 100 %, as a fraction; a list of
    values in (0, 1) with the others in range is taken for fractions, said as such."""
    if isinstance(taken, list):
        assert LISTS["targets"].parse(text) == taken
        return
    with pytest.raises(UabError, match=re.escape(taken)):
        LISTS["targets"].parse(text)


# --- help ---------------------------------------------------------------------------------------


def test_vote_help_says_what_the_weight_and_the_kept_fraction_are():
    shown = " ".join(cli(["vote", "-h"]).stdout.split())
    assert "exp(log w)" not in shown
    assert "weighted: each sample votes with weight w = exp(-s/T) of its --vote-signal statistic s" in shown
    assert "filtered: the fraction of a question's answered samples kept (rounded up)." in shown


@pytest.mark.parametrize("command", ["run", "pool", "phase1"])
def test_the_64_bit_cap_on_samples_stays_out_of_the_help(command):
    shown = " ".join(cli([command, "-h"]).stdout.split())
    assert str(2**63 - 1) not in shown and "x>=1" in shown
    assert command != "run" or "[default: 1 (2 for --allocator adaptive), or the run directory's; x>=1]" in shown


def test_simulate_seeds_are_a_bounded_count():
    pool = str(Path(__file__).resolve().parent.parent / "results" / "smollm2-mc")
    refused(cli(["simulate", pool, "--seeds", BIG, "-q"]), "'--seeds'")  # an OverflowError traceback before
    refused(cli(["simulate", pool, "--seeds", "0", "-q"]), "'--seeds'")


def test_a_model_directory_is_recorded_absolute(tmp_path, monkeypatch):
    """`--model ./m` from two folders names two directories: recorded as typed, a rerun from
    the other folder reused samples of the first model and drew the rest from the second."""
    from uab_cli.settings import Generation, changes

    for folder in ("a", "b"):
        (tmp_path / folder / "m").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "a")
    first = Generation(model="./m").info()
    assert first["model"] == str(tmp_path / "a" / "m")
    assert Generation(model="m").info()["model"] == first["model"]  # the same directory typed another way
    assert Generation(model="org/hub-id").info()["model"] == "org/hub-id"  # not a path: as given
    monkeypatch.chdir(tmp_path / "b")
    assert changes("generation", first, Generation(model="./m").info()) == {
        "--model": f"({tmp_path / 'a' / 'm'} → {tmp_path / 'b' / 'm'})"}
    # an older uab recorded it as typed: read from the folder it was typed in, the same model
    monkeypatch.chdir(tmp_path / "a")
    assert changes("generation", {**first, "model": "./m"}, Generation(model="./m").info()) == {}


def test_the_default_models_alias_is_the_default_model():
    """`--model smollm2` on a run drawn with the default model is the same model (it was refused
    as a change, `--model (SmolLM2-135M-Instruct → smollm2)`); a server's model name stays."""
    from uab_cli.models import DEFAULT_MODEL

    assert Generation(model="smollm2").model == Generation(model=" SmolLM2 ", backend="vllm").model == DEFAULT_MODEL
    assert Generation(model="smollm2", backend="openai").model == "smollm2"


@pytest.mark.parametrize(("section", "key", "value", "says"), [
    ("generation", "temperature", "hot", "--temperature takes a number, got 'hot' (recorded as generation.temperature)"),
    ("allocate", "T", -1, "--signal-temperature must be > 0, got -1 (recorded as allocate.T)"),
    ("vote", "rule", "best", "unknown vote rule 'best'"),
])
def test_a_hand_edited_config_value_its_option_refuses_names_the_file(tmp_path, questions, fake_backend, section, key,
                                                                       value, says):
    fake_backend.in_cli()
    out = tmp_path / "r"
    assert run(questions, out, "-N", "2").exit_code == 0
    config = json.loads((out / "config.json").read_text())
    config[section][key] = value
    (out / "config.json").write_text(json.dumps(config))
    refused(run(questions, out, "-N", "3"), f"{out / 'config.json'}:1: {says}")


@pytest.mark.parametrize(("section", "key", "value", "says"), [
    ("generation", "temperature", "hot", "--temperature takes a number, got 'hot' (recorded as generation.temperature)"),
    (None, "model_option", 5, "--model takes a string, got 5 (recorded as model_option)"),
])
def test_a_hand_edited_config_value_is_named_at_its_line_on_a_rerun(tmp_path, questions, section, key, value, says):
    """A rerun's own config.json named the file but no line (`r/config.json: --temperature takes
    a number`), where `--settings r` names the entry's line: both `FILE:LINE: …`."""
    out = tmp_path / "r"
    assert run(questions, out, "-N", "2").exit_code == 0
    config = json.loads((out / "config.json").read_text())
    (config[section] if section else config)[key] = value
    text = json.dumps(config, indent=2)  # as uab writes it
    (out / "config.json").write_text(text)
    lines = text.splitlines()
    start = lines.index(f'  "{section}": {{') if section else 0
    line = next(i for i, t in enumerate(lines, 1) if i > start and t.strip().startswith(f'"{key}":'))
    refused(run(questions, out, "-N", "3"), f"error: {out / 'config.json'}:{line}: {says}")
    refused(run(questions, tmp_path / "r2", "-N", "3", "--settings", str(out)), f"error: {out / 'config.json'}:{line}: ")


@pytest.mark.parametrize("text", [None, b"\xff\xfe{"], ids=["gone", "no-longer-json"])
def test_a_config_gone_or_changed_before_its_entrys_line_is_read_names_none(tmp_path, text):
    """The config a rerun refused may be gone, or no longer JSON, when its entry's line is looked up:
    the error names no line (it is not lost to another)."""
    from uab_cli import settings

    path = tmp_path / "config.json"
    if text is not None:
        path.write_bytes(text)
    exc = settings.at_its_line(settings.at_entry(UabError("bad", str(path)), "generation.seed"), str(path))
    assert (exc.message, exc.path, exc.line) == ("bad", str(path), None)


def test_a_recorded_count_at_the_largest_integer_is_taken(tmp_path, questions):
    """A count's bound is inclusive: a recorded --max-model-len of 2**63 - 1 is one it takes."""
    out = tmp_path / "r"
    assert run(questions, out, "-N", "2").exit_code == 0
    config = json.loads((out / "config.json").read_text())
    config["max_model_len"] = 2**63 - 1
    (out / "config.json").write_text(json.dumps(config))
    result = run(questions, out, "-N", "3")
    assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize(("key", "value", "rerun", "says"), [
    ("n", "x", (), "-N/--budget takes a positive integer, got 'x' (recorded as n)"),  # ignored: "Missing option -N"
    ("n", 0, (), "-N/--budget takes a positive integer, got 0 (recorded as n)"),
    ("k", True, (), "-K/--samples takes a positive integer, got True (recorded as k)"),  # true == 1: taken
    ("k", 4, (), "budget N=3 is smaller than the 4 Phase-1 samples per question (recorded as n and k)"),
    ("max_model_len", -1, (), "--max-model-len takes a positive integer, got -1 (recorded as max_model_len)"),
    ("model_option", 5, (), "--model takes a string, got 5 (recorded as model_option)"),  # did not name the file
    # another model than its samples': named --model, which the rerun had not given ("holds samples drawn with other
    # settings (--model (scripted → other))")
    ("model_option", "other", (), "it records model_option 'other', not the model its generation.model says its "
                                  "samples were drawn with ('scripted'), which a rerun without --model would take: "
                                  "restore it, use a new --output, or --force to discard the samples"),
    # a -K 1 directory: its Phase-2 samples read as Phase-1 ones ("record 'q0' already holds Phase-2 samples")
    ("k", 2, ("-N", "2"), "it records other settings than phase1.jsonl says its samples were drawn with "
                          "(-K/--samples (1 → 2))"),
])
def test_a_hand_edited_count_in_the_config_names_the_file(tmp_path, questions, key, value, rerun, says):
    out = tmp_path / "r"
    assert run(questions, out, "-N", "3").exit_code == 0
    config = json.loads((out / "config.json").read_text())
    config[key] = value
    (out / "config.json").write_text(json.dumps(config))
    at = "" if "phase1.jsonl" in says else ":1"  # an entry's value: its line; what differs from the samples': none
    refused(run(questions, out, *rerun), f"{out / 'config.json'}{at}: {says}")


@pytest.mark.parametrize(("section", "key", "value"), [(None, "n", 0), (None, "k", True), (None, "model_option", 5),
                                                      ("generation", "temperature", -1)])
def test_force_starts_over_from_a_config_value_its_option_refuses(tmp_path, questions, section, key, value):
    """The refusal's way out, as README says (and as for a config that is no uab config): --force
    takes nothing from it and starts over; it was refused again (`-N/--budget takes a positive
    integer, got 0 (recorded as n)`)."""
    out = tmp_path / "r"
    assert run(questions, out, "-N", "3").exit_code == 0
    config = json.loads((out / "config.json").read_text())
    (config[section] if section else config)[key] = value
    (out / "config.json").write_text(json.dumps(config))
    result = run(questions, out, "-N", "2", "--force")
    assert result.exit_code == 0, result.stderr
    assert json.loads((out / "config.json").read_text())["n"] == 2


def test_a_hand_edited_generation_setting_is_refused_as_a_change(tmp_path, questions):
    """A rerun takes the recorded settings as given: an edited temperature drew the rest of the
    budget at it, beside samples drawn at the other, and recorded it as theirs (silently)."""
    out = tmp_path / "r"
    assert run(questions, out, "-N", "2").exit_code == 0
    config = json.loads((out / "config.json").read_text())
    config["generation"]["temperature"] = 0.5
    (out / "config.json").write_text(json.dumps(config))
    before = (out / "samples.ckpt.jsonl").read_bytes()
    refused(run(questions, out, "-N", "3"), f"{out / 'config.json'}: it records other settings than phase1.jsonl says "
                                            "its samples were drawn with (--temperature (0.9 → 0.5)): restore it")
    assert (out / "samples.ckpt.jsonl").read_bytes() == before
    assert run(questions, out, "-N", "3", "--force").exit_code == 0  # --force starts over
    # at the edited setting, with none of the samples drawn at the other (they were all reused, and
    # recorded in phase1.jsonl as drawn at it: the config matched itself, so nothing was discarded)
    stages = json.loads((out / "summary.json").read_text())["stages"]
    assert stages["phase1"]["reused"]["samples"] == stages["phase2"]["reused"]["samples"] == 0, stages
    config["generation"]["too_long"] = "skip"  # a setting that does not change a sample: no refusal
    (out / "config.json").write_text(json.dumps(config))
    assert run(questions, out, "-N", "4").exit_code == 0


def test_a_hand_edited_generation_setting_of_a_pool_is_refused_as_a_change(tmp_path, questions):
    """A pool directory had no such check: a larger -K drew its new samples at the edited
    temperature and recorded it in pool.jsonl as every sample's."""
    out = tmp_path / "p"
    pool = ["pool", questions, "--backend", "scripted", "-o", str(out), "-q"]
    assert cli([*pool, "-K", "2"]).exit_code == 0
    config = json.loads((out / "config.json").read_text())
    config["generation"]["temperature"] = 0.5
    (out / "config.json").write_text(json.dumps(config))
    before = (out / "samples.ckpt.jsonl").read_bytes()
    refused(cli([*pool, "-K", "3"]), f"{out / 'config.json'}: it records other settings than pool.jsonl says its "
                                     "samples were drawn with (--temperature (0.9 → 0.5)): restore it")
    assert (out / "samples.ckpt.jsonl").read_bytes() == before
    config["generation"]["temperature"] = 0.9  # restored: its K may change (more samples, or fewer)
    (out / "config.json").write_text(json.dumps(config))
    assert cli([*pool, "-K", "3"]).exit_code == 0
    assert cli([*pool, "-K", "1"]).exit_code == 0


@pytest.mark.parametrize("command", ["run", "pool"])
def test_a_hand_edited_generation_setting_is_refused_after_a_cut_short_first_phase1(tmp_path, questions,
                                                                                  fake_backend, command):
    """A directory stopped during its first Phase 1 (a pool while it draws) has no phase1.jsonl
    (pool.jsonl) to say how its samples were drawn: the edited temperature drew the rest of them
    beside the ones drawn at the other, and phase1.jsonl recorded it as every sample's."""
    out = tmp_path / "r"
    args = [command, questions, "--backend", "scripted", "-o", str(out), "-q", *(("-N", "2") if command == "run"
                                                                                 else ("-K", "2"))]
    fake_backend.in_cli(fail_after=2)
    assert cli(args).exit_code == 1
    assert not (out / "phase1.jsonl").exists() and not (out / "pool.jsonl").exists()
    config = json.loads((out / "config.json").read_text())
    config["generation"]["temperature"] = 0.5
    (out / "config.json").write_text(json.dumps(config))
    before = (out / "samples.ckpt.jsonl").read_bytes()
    fake_backend.in_cli()
    refused(cli(args[:-2]), f"{out / 'config.json'}: it records other settings than drawn.json says its samples "
                            "were drawn with (--temperature (0.9 → 0.5)): restore it")
    assert (out / "samples.ckpt.jsonl").read_bytes() == before
    config["generation"]["temperature"] = 0.9  # restored: the run resumes
    (out / "config.json").write_text(json.dumps(config))
    assert cli(args[:-2]).exit_code == 0
    assert fake_backend.made[-1].drawn == 4  # the 6 samples less the 2 drawn before the failure


# --- odd settings files ---------------------------------------------------------------------------


DEEP = b"[" * 20_000 + b"]" * 20_000  # deeper than json reads on any Python (``json_reads``; 3.13: 10,000 levels)


@pytest.mark.parametrize("name,data,line,says", [
    ("s.toml", b"budget = 2\nx = " + DEEP + b"\n", 2, "not a TOML file: maximum recursion depth exceeded"),
    ("s.json", b'{"budget": 2,\n "x": ' + DEEP + b"}", 2, "not JSON: maximum recursion depth exceeded"),
    ("s.json", b'{"budget": 2,\n "model": "\\ud800"}', 2, "not JSON text: \\ud800 is half of a UTF-16 surrogate pair"),
    ("s.toml", b'budget = 2\nmodel = "\xff"\n', 2, "not valid UTF-8 at column 10 (byte 0xff): save the file as UTF-8"),
    ("s.toml", b'\xef\xbb\xbfbudget = 2\nmodel = "\xff"\n', 2, "not valid UTF-8 at column 10 (byte 0xff): save the file as UTF-8"),
    ("s.json", b'{"budget": 2,\n "model": "\xff"}', 2, "not valid UTF-8 at column 12 (byte 0xff): save the file as UTF-8"),
], ids=["deep-toml", "deep-json", "lone-surrogate", "bad-utf8-toml", "bad-utf8-toml-bom", "bad-utf8-json"])
def test_a_settings_file_json_cannot_hold_is_one_line(tmp_path, questions, name, data, line, says):
    """Refused where it is read, naming the file: a TOML nesting past Python's recursion (a
    traceback), a JSON escape of half a surrogate pair (json reads it; no output can hold it). They
    named no line, nor did a byte that is no UTF-8: now the line of the nesting, the escape, the byte."""
    skip_unless_toml_settings(name)
    path = tmp_path / name
    path.write_bytes(data)
    refused(run(questions, tmp_path / "r", "-N", "2", "--settings", str(path)), f"error: {path}:{line}: {says}")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("text", ['"seed"', "[1, 2]", "3"])
def test_a_settings_file_of_no_json_object_is_one_line(tmp_path, questions, text):
    """A JSON string, array or number: no option values, said in one line naming the file."""
    refused(run(questions, tmp_path / "r", "-N", "2", "--settings", settings_file(tmp_path, text)),
            "settings.json: expected a JSON/TOML object of option values")
    assert not (tmp_path / "r").exists()


def test_a_settings_file_with_a_control_character_says_so_whole(tmp_path, questions):
    """json's message for a raw control character (a NUL, a tab in a string) is 'Invalid control
    character at', its place after the colon: the line ended on 'at'. Now it ends on the character."""
    path = tmp_path / "s.json"
    path.write_bytes(b'{"budget": 2,\n "model": "a\x00b"}')
    result = run(questions, tmp_path / "r", "--settings", str(path))
    refused(result, f"error: {path}:2: not JSON: Invalid control character")
    assert result.stderr.rstrip().endswith("Invalid control character") and not (tmp_path / "r").exists()


def test_settings_from_stdin_is_refused_as_such(tmp_path, questions):
    """`--settings -` said '-: cannot read: No such file or directory' (a file named '-'), where every
    input takes '-' for stdin: it says --settings reads a file."""
    result = cli(["run", questions, "--backend", "scripted", "-q", "-N", "2", "-o", str(tmp_path / "r"),
                  "--settings", "-"], stdin=b'{"seed": 7}')
    refused(result, "error: --settings reads a file, not stdin ('-')")
    assert not (tmp_path / "r").exists()


LINED = [  # (file name, text, command-line options, the line, the message)
    ("s.json", '{\n  "budget": 2,\n  "temperature": "hot"\n}', [], 3, "--temperature takes a number, got 'hot'"),
    ("s.json", '{\n  "seed": 1,\n\n  "budget": -1\n}', [], 4, "--budget must be >= 1, got -1"),
    ("s.json", '\n{"budget": -1}', [], 2, "--budget must be >= 1, got -1"),  # a first line of its own
    ("s.json", '{"budget": 2,\n "allocator": "nope"}', [], 2, "unknown allocator 'nope'"),
    ("s.json", '{"budget": 2,\n "max_tokenz": 16}', [], 2, "unknown option for `uab run`: max_tokenz"),
    ("s.json", '{"max_tokens": 8,\n "max-tokens": 16, "budget": 2}', [], 2,
     "an option is given twice: 'max_tokens' and 'max-tokens'"),
    ("s.json", '{"budget": 2,\n "max_tokens": 16,\n "gain": "coverage"}', ["--allocator", "uniform"], 3,
     "--gain applies to the uab allocators, not --allocator uniform"),
    ("s.toml", 'budget = 2\n# sampling\ntemperature = "hot"\n', [], 3, "--temperature takes a number, got 'hot'"),
    ("s.toml", 'system_prompt = """\nbudget = 0\n"""\n"budget" = 0\n', [], 4, "--budget must be >= 1, got 0"),
    ("s.toml", "system_prompt = '''\nbudget = 0\n'''\nbudget = 0\n", [], 4, "--budget must be >= 1, got 0"),
    ("s.toml", 'system_prompt = """a\\\r\n"budget" = 0 \\"""\r\n"""\r\nbudget = 0\r\n', [], 4, "--budget must be >= 1, got 0"),
    # triple quotes in a comment or a one-line string open no multi-line string
    ("s.toml", 'budget = 2  # a prompt takes """\ntemperature = "hot"\n', [], 2, "--temperature takes a number, got 'hot'"),
    ("s.toml", "system_prompt = 'say \"\"\" here'\nbudget = 0\n", [], 2, "--budget must be >= 1, got 0"),
    ("s.toml", 'budget = 2\nbudget = 3\n', [], 2, "not a TOML file: Cannot overwrite a value"),
    # one recommendation as a JSON object: each value at its nested key's line (it named no line)
    ("s.json", '{"recommendation": {"N": 2,\n  "settings": {"max_tokens": 16,\n    "allocator": "nope"}}}', [], 3,
     "unknown allocator 'nope'"),
    ("s.json", '{"recommendation": {"N": 2, "settings": {"max_tokens": 16,\n  "max_tokenz": 16}}}', [], 2,
     "unknown option for `uab run`: max_tokenz"),
    ("s.json", '{"recommendation": {"N": 2,\n  "T": "hot", "settings": {}}}', [], 2,
     "a recommendation row's 'T' is 'hot', not what `uab simulate -o` writes"),
    ("s.toml", 'budget = 2\nseed = [1\n', [], 2, "not a TOML file: Unclosed array (at end of document)"),
    # one recommendation as TOML tables (it named no line): each value at its key's line, under its table
    ("s.toml", '[recommendation]\nN = 2\n[recommendation.settings]\nmax_tokens = 16\nallocator = "nope"\n', [], 5,
     "unknown allocator 'nope'"),
    ("s.toml", '[recommendation]\nN = 2\nT = "hot"\n[recommendation.settings]\n', [], 3,
     "a recommendation row's 'T' is 'hot', not what `uab simulate -o` writes"),
    ("s.toml", '[recommendation]\nN = 2\nsettings.max_tokens = 16\nsettings.max_tokenz = 16\n', [], 4,
     "unknown option for `uab run`: max_tokenz"),
    ("s.toml", '# one line\nrecommendation = {N = 2, settings = {allocator = "nope"}}\n', [], 2,
     "unknown allocator 'nope'"),
    ("s.toml", 'budget = 2\n\n[sampling]\ntemperature = 0.5\n', [], 3, "unknown option for `uab run`: sampling"),
    ("s.toml", 'budget = 2\n\n[sampling.hot]\ntemperature = 0.5\n', [], 3,  # a table only a dotted header names
     "unknown option for `uab run`: sampling"),
    # a results file (JSONL): a row's value at its row's line, a broken row at its own
    ("r.jsonl", '{"simulation": {"pool": "p"}}\n\n{"recommendation": {"N": 2, "settings": {"allocator": "nope"}}}\n', [],
     3, "unknown allocator 'nope'"),
    ("r.jsonl", '{"simulation": {"pool": "p"}}\n{"recommendation": {"N": 2,\n', [], 2, "not JSON: "),
]


@pytest.mark.parametrize("name,text,given,line,says", LINED, ids=[f"{n}:{t}" for n, t, *_ in LINED])
def test_a_settings_files_bad_value_names_the_file_and_its_line(tmp_path, questions, name, text, given, line, says):
    """A value of a settings file its option refuses (of the wrong type, out of bounds, unknown,
    at odds with another, given twice) named the file but no line (`settings.json: --temperature
    takes a number`), and TOML's syntax errors ended `(at line 2, column 11)`: `FILE:LINE: …`."""
    skip_unless_toml_settings(name)
    path = tmp_path / name
    path.write_text(text)
    refused(run(questions, tmp_path / "r", "-N", "2", *given, "--settings", str(path)), f"error: {path}:{line}: {says}")
    assert not (tmp_path / "r").exists()


def test_a_settings_files_option_of_another_command_is_named_as_one(tmp_path, questions):
    """One file for the pipeline's stages: `uab phase1` said `unknown option … budget, vote_rule`,
    as of a misspelt name; it names the commands that take them (a misspelt name is still unknown)."""
    path = settings_file(tmp_path, '{"budget": 2, "vote_rule": "weighted", "max_tokens": 16}')
    refused(cli(["phase1", questions, "--backend", "scripted", "-o", str(tmp_path / "p.jsonl"), "--settings", path]),
            f"{path}:1: `uab phase1` does not take budget (an option of `uab allocate`, `uab run`); vote_rule "
            "(an option of `uab vote`, `uab run`)")
    assert not (tmp_path / "p.jsonl").exists()
    path = settings_file(tmp_path, '{"budget": 2, "max_tokenz": 16}')
    refused(cli(["allocate", questions, "--settings", path]), f"{path}:1: unknown option for `uab allocate`: max_tokenz")


@pytest.mark.parametrize("text,key", [
    ('{"temperature": 0.5,\n "max_tokens": 16,\n "temperature": 0.9}', "temperature"),
    ('{"recommendation": {"N": 2, "settings": {"allocator": "uab", "allocator": "uniform"}}}', "allocator"),
    # the second key's line, not an array's items' keys (each given once), nor a nested key of that name
    ('{"pairs": [{"a": 1}, {"a": 2}], "x": {"seed": 1},\n "seed": 1,\n "seed": 2}', "seed"),
    # nor two items of an array giving it once each (all items shared one path: it named line 1)
    ('{"runs": [{"seed": 1}, {"seed": 2}],\n "seed": 1,\n "seed": 2}', "seed"),
], ids=["options", "recommendation", "after-others", "after-array-items"])
def test_a_json_settings_file_giving_a_key_twice_is_refused(tmp_path, questions, text, key):
    """json kept the last value silently (a TOML file's second is refused by its reader, and two
    spellings of one option by uab): one line naming the file, the second key's line and the key,
    nothing drawn."""
    refused(run(questions, tmp_path / "r", "-N", "2", "--settings", settings_file(tmp_path, text)),
            f"settings.json:{text.count(chr(10)) + 1}: an option is given twice: {key!r}")
    assert not (tmp_path / "r").exists()


def test_a_toml_settings_file_may_start_with_a_byte_order_mark(tmp_path, questions):
    """As a JSON settings file and a JSONL input may."""
    skip_unless_toml_settings("s.toml")
    path = tmp_path / "s.toml"
    path.write_bytes(b"\xef\xbb\xbfseed = 7\n")
    assert run(questions, tmp_path / "r", "-N", "2", "--settings", str(path)).exit_code == 0
    assert {r["uab"]["phase1"]["seed"] for r in read_jsonl(tmp_path / "r" / "phase1.jsonl")} == {7}


def test_a_toml_settings_file_before_python_3_11_is_refused_in_one_line(tmp_path, questions, monkeypatch):
    """Python 3.10 has no tomllib (README: TOML settings on Python >= 3.11): one line naming the file, as
    there, on any Python (its import made to fail here), and nothing written."""
    monkeypatch.setitem(sys.modules, "tomllib", None)  # `import tomllib` raises ImportError, as on 3.10
    path = tmp_path / "s.toml"
    path.write_text("seed = 7\n")
    refused(run(questions, tmp_path / "r", "-N", "2", "--settings", str(path)),
            f"error: {path}: TOML settings need Python >= 3.11; use a JSON file")
    assert not (tmp_path / "r").exists()


def test_a_recommendations_template_digest_without_its_template_is_no_template(tmp_path, questions):
    """A recommendation row carries its pool's template digest where its settings name the template;
    a hand-edited one whose settings name none runs the built-in prompt: the digest checks no template."""
    rec = {"recommendation": {"N": 2, "settings": {"backend": "scripted", "allocator": "uniform"},
                              "prompt_template_sha256": "ab" * 32}}
    result = run(questions, tmp_path / "r", "--settings", settings_file(tmp_path, json.dumps(rec)))
    assert result.exit_code == 0, result.stderr
    config = json.loads((tmp_path / "r" / "config.json").read_text())
    assert config["generation"]["prompt_template"] is None and config["allocate"]["allocator"] == "uniform"


def test_a_results_file_may_start_with_a_byte_order_mark(tmp_path, questions):
    """As `simulate --check` and `report` read it: a results file saved by an editor that adds one
    was refused as `RESULTS:2: not JSON: Extra data`."""
    settings = {"backend": "scripted", "max_tokens": 16, "allocator": "uniform", "vote_rule": "majority"}
    rows = [{"simulation": {"pool": "p"}}, {"recommendation": {"N": 2, "settings": settings}},
            {"recommendation": {"N": 3, "settings": settings}}]
    path = tmp_path / "results.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b"".join(json.dumps(r).encode() + b"\n" for r in rows))
    result = run(questions, tmp_path / "r", "-N", "3", "--settings", str(path))
    assert result.exit_code == 0, result.stderr
    config = json.loads((tmp_path / "r" / "config.json").read_text())
    assert config["n"] == 3 and config["allocate"]["allocator"] == "uniform" and config["generation"]["max_tokens"] == 16


# --- a run's or pool's config.json as --settings ---------------------------------------------------

SETTINGS_KEPT = ("generation", "allocate", "vote", "k", "n", "derived", "model_option", "max_model_len")
RUN_SETTINGS = [["-N", "4", "--vcs", "--signal", "vcs-pow", "-T", "0.5", "--vote-rule", "weighted"],
                ["-N", "4", "-K", "2", "--signal", "vote-entropy", "--temperature", "0.3", "--max-tokens", "64"],
                ["-N", "3", "--exit", "hard", "--exit-test", "official", "--exit-mode", "skip", "--prompt", "zeroshot",
                 "--vote-rule", "filtered", "--vote-keep", "0.5", "--cut-samples", "drop", "--max-model-len", "4096"],
                ["-N", "3", "--allocator", "adaptive", "--max-per-question", "4", "--allocation-seed", "7",
                 "--exclude-phase1", "--tie-seed", "3", "--system-prompt", "", "--seed", "5"]]


@pytest.mark.parametrize("args", RUN_SETTINGS, ids=["vcs", "vote-entropy", "official-exit", "adaptive"])
@pytest.mark.parametrize("given", ["config.json", "directory"])
def test_a_runs_config_given_as_settings_reproduces_the_run_on_other_questions(tmp_path, questions, args, given):
    """`uab run NEW -o DIR --settings OLD/config.json` (or OLD): exit 2 listing the config's
    sections as unknown options; now the new run records the old one's generation, allocation and
    vote settings, budget and -K (a value the old run derived, as --vcs's signal, derived again)."""
    assert run(questions, tmp_path / "old", *args).exit_code == 0
    other = write_jsonl(tmp_path / "other.jsonl", arithmetic(5)[2:])
    settings = tmp_path / "old" / "config.json" if given == "config.json" else tmp_path / "old"
    result = cli(["run", other, "-o", str(tmp_path / "new"), "-q", "--settings", str(settings)])
    assert result.exit_code == 0, result.stderr
    old, new = (json.loads((tmp_path / d / "config.json").read_text()) for d in ("old", "new"))
    assert {k: new.get(k) for k in SETTINGS_KEPT} == {k: old.get(k) for k in SETTINGS_KEPT}
    assert new["questions"] != old["questions"]


def test_a_pools_config_given_as_settings_draws_another_pool_with_its_settings(tmp_path, questions):
    """`uab pool` (and `phase1`) take a pool's generation settings, `pool` its -K too; -K given wins."""
    old = tmp_path / "old"
    assert cli(["pool", questions, "-K", "3", "-o", str(old), "--backend", "scripted", "--temperature", "0.5",
                "--max-tokens", "20", "--prompt", "zeroshot", "-q"]).exit_code == 0
    other = write_jsonl(tmp_path / "other.jsonl", arithmetic(5)[2:])
    for out, k in (("new", []), ("fewer", ["-K", "2"])):
        result = cli(["pool", other, "-o", str(tmp_path / out), "-q", "--settings", str(old), *k])
        assert result.exit_code == 0, result.stderr
    configs = {d: json.loads((tmp_path / d / "config.json").read_text()) for d in ("old", "new", "fewer")}
    assert configs["new"]["generation"] == configs["old"]["generation"] == configs["fewer"]["generation"]
    assert (configs["new"]["pool"], configs["fewer"]["pool"]) == (3, 2)
    result = cli(["phase1", other, "--settings", str(old / "config.json")])
    assert result.exit_code == 0, result.stderr
    drawn = json.loads(result.stdout.splitlines()[0])["uab"]["phase1"]
    assert {k: v for k, v in drawn.items() if k != "k"} == configs["old"]["generation"]


def test_the_command_line_wins_over_a_runs_config_and_an_allocator_given_starts_from_the_defaults(tmp_path,
                                                                                                   questions):
    """As on a rerun: the exit and -T of a uab run do not follow `--allocator uniform` (which would
    refuse them), nor the vote temperature `--vote-rule majority`; a value given wins."""
    assert run(questions, tmp_path / "old", "-N", "3", "--exit", "hard", "-T", "0.3", "--vote-rule", "weighted",
               "--vote-temperature", "0.1", "--max-tokens", "32").exit_code == 0
    result = cli(["run", questions, "-o", str(tmp_path / "new"), "-q", "--settings", str(tmp_path / "old"),
                  "--allocator", "uniform", "--vote-rule", "majority", "-N", "2", "--max-tokens", "16"])
    assert result.exit_code == 0, result.stderr
    config = json.loads((tmp_path / "new" / "config.json").read_text())
    assert (config["n"], config["generation"]["max_tokens"], config["generation"]["backend"]) == (2, 16, "scripted")
    assert (config["allocate"]["allocator"], config["allocate"]["exit"], config["allocate"]["T"]) == ("uniform", None, None)
    assert config["vote"]["rule"] == "majority" and "temperature" not in config["vote"]


def test_an_allocator_given_over_a_runs_config_draws_the_phase1_samples_it_needs(tmp_path, questions):
    """The config's -K goes with its allocator: `--allocator adaptive` (2 Phase-1 samples) over a
    uniform run's config (-K 1) draws the 2 it needs, as a rerun would, not the recorded 1."""
    assert run(questions, tmp_path / "old", "-N", "3", "--allocator", "uniform").exit_code == 0
    result = run(questions, tmp_path / "new", "--settings", str(tmp_path / "old"), "--allocator", "adaptive")
    assert result.exit_code == 0, result.stderr
    config = json.loads((tmp_path / "new" / "config.json").read_text())
    assert (config["k"], config["n"], config["allocate"]["allocator"]) == (2, 3, "adaptive")


@pytest.mark.parametrize("edit,says,key", [
    (lambda c: {**c, "future": 1}, "it records future, which no option of uab", "future"),
    (lambda c: {**c, "generation": {**c["generation"], "min_p": 0.1}}, "it records generation.min_p, which no option",
     "min_p"),
    (lambda c: {**c, "generation": {**c["generation"], "backend_options": {"api_key": "k"}}},
     "it records generation.backend_options.api_key, which no option", "api_key"),
    (lambda c: {**c, "vote": {**c["vote"], "quorum": 2}}, "it records vote.quorum, which no option", "quorum"),
    (lambda c: {**c, "allocate": 3}, "not a uab config.json: its 'allocate' is not an object", None),
    (lambda c: {**c, "generation": {**c["generation"], "temperature": "hot"}},
     "--temperature takes a number, got 'hot' (recorded as generation.temperature)", "temperature"),
    # another model than its samples': the rerun's way out ("…, use a new --output, or --force to discard the samples")
    (lambda c: {**c, "model_option": "other"}, "it records model_option 'other', not the model its generation.model "
     "says its samples were drawn with ('scripted'), which --settings would take as --model: restore it, or give the "
     "options as a JSON/TOML file of option values", "model_option"),
], ids=["entry", "generation", "backend-option", "vote", "section", "value", "model"])
def test_a_config_of_another_shape_given_as_settings_is_one_line_naming_it(tmp_path, questions, edit, says, key):
    """A config of a newer uab (an entry this version does not know) is refused, not half read;
    at the entry's line (the message named the file alone)."""
    assert run(questions, tmp_path / "old", "-N", "2").exit_code == 0
    path = tmp_path / "config.json"
    path.write_text(json.dumps(edit(json.loads((tmp_path / "old" / "config.json").read_text())), indent=2))
    lines = path.read_text().splitlines()
    found = (i for i, line in enumerate(lines, 1) if line.strip().startswith(f'"{key}":'))
    at = "" if key is None else f":{next(found)}"
    refused(run(questions, tmp_path / "new", "--settings", str(path)), f"{path}{at}: {says}")
    assert not (tmp_path / "new").exists()
    (tmp_path / "empty").mkdir()
    refused(run(questions, tmp_path / "new", "--settings", str(tmp_path / "empty")),
            f"{tmp_path / 'empty'}: no config.json: not a run or pool directory")


@pytest.mark.parametrize("command", ["run", "pool", "phase1"])
def test_a_config_given_as_settings_refuses_its_template_edited_since(tmp_path, questions, template, command):
    """As a recommendation's: a run's config records its template's digest, and a command taking the
    template from it after the file was edited is refused in one line naming the template (it asked
    with the edited file, silently); --prompt-template given asks with it as it is now, as a choice."""
    assert run(questions, tmp_path / "old", "-N", "2", "--prompt-template", template).exit_code == 0
    Path(template).write_text(json.dumps([{"role": "user", "content": "Now: {question}"}]))
    other, new = write_jsonl(tmp_path / "other.jsonl", arithmetic(5)[2:]), tmp_path / "new"
    args = {"run": ["-o", str(new)], "pool": ["-K", "2", "-o", str(new)], "phase1": []}[command]
    old = tmp_path / "old"
    result = cli([command, other, *args, "-q", "--settings", str(old)])
    refused(result, f"{template}: the prompt template changed since the samples of {old} were drawn (sha256 ")
    assert "restore it, or give --prompt-template" in result.stderr and result.stdout == "" and not new.exists()
    given = cli([command, other, *args, "-q", "--settings", str(old), "--prompt-template", template])
    assert given.exit_code == 0, given.stderr


def test_a_rerun_derives_the_official_exit_tests_n_max_from_its_own_budget(tmp_path, questions):
    """`--exit-test official` without `--exit-nmax` tests with N_max = N: a rerun at another -N
    tests with its own N (recorded as derived), and one given stays given."""
    out = tmp_path / "r"
    assert run(questions, out, "-N", "2", "--exit", "hard", "--exit-test", "official").exit_code == 0
    assert json.loads((out / "config.json").read_text())["allocate"]["exit_nmax"] == 2
    result = run(questions, out, "-N", "3")
    assert result.exit_code == 0, result.stderr
    config = json.loads((out / "config.json").read_text())
    assert (config["allocate"]["exit_test"], config["allocate"]["exit_nmax"]) == ("official", 3)
    assert "allocate.exit_nmax" in config["derived"]
    assert run(questions, out, "-N", "2", "--exit-nmax", "8").exit_code == 0
    assert run(questions, out, "-N", "3").exit_code == 0
    assert json.loads((out / "config.json").read_text())["allocate"]["exit_nmax"] == 8


def test_a_rerun_with_another_exit_or_test_drops_the_recorded_official_test(tmp_path, questions):
    """A rerun keeps the recorded options it does not give: after `--exit hard --exit-test
    official --exit-nmax 8`, a rerun with `--exit easy` (or `--exit-test paper`) took the recorded
    test (its N_max) back and was refused for it, with no option to give it up but `--allocator`."""
    out = tmp_path / "r"
    given = ["--exit", "hard", "--exit-test", "official", "--exit-nmax", "8"]
    assert run(questions, out, "-N", "2", *given).exit_code == 0
    result = run(questions, out, "--exit-test", "paper")
    assert result.exit_code == 0, result.stderr
    recorded = json.loads((out / "config.json").read_text())["allocate"]
    assert (recorded["exit"], "exit_test" in recorded) == ("hard", False)
    assert run(questions, out, "-N", "2", *given).exit_code == 0
    result = run(questions, out, "--exit", "easy")
    assert result.exit_code == 0, result.stderr
    recorded = json.loads((out / "config.json").read_text())["allocate"]
    assert (recorded["exit"], "exit_test" in recorded) == ("easy", False)


def test_a_rerun_at_another_exit_drops_the_recorded_threshold(tmp_path, questions):
    """A θ given for one exit means nothing to the other: a rerun of `--exit hard --exit-threshold
    0.3` with `--exit easy` took 0.3 over to the easy exit (p > 0.3: nearly every question exits)
    rather than easy's own 0.7. The same exit again keeps it, and so does `--exit-mode`."""
    out = tmp_path / "r"
    assert run(questions, out, "-N", "2", "--exit", "hard", "--exit-threshold", "0.3").exit_code == 0
    result = run(questions, out, "--exit", "hard", "--exit-mode", "skip")
    assert result.exit_code == 0, result.stderr
    recorded = json.loads((out / "config.json").read_text())["allocate"]
    assert (recorded["exit"], recorded["exit_threshold"], recorded["exit_mode"]) == ("hard", 0.3, "skip")
    result = run(questions, out, "--exit", "easy")
    assert result.exit_code == 0, result.stderr
    config = json.loads((out / "config.json").read_text())
    assert (config["allocate"]["exit"], config["allocate"]["exit_threshold"]) == ("easy", 0.7)
    assert (config["allocate"]["exit_mode"], "allocate.exit_threshold" in config["derived"]) == ("skip", True)
    assert run(questions, out, "--exit", "hard").exit_code == 0  # derived again: hard's own 0.5
    assert json.loads((out / "config.json").read_text())["allocate"]["exit_threshold"] == 0.5


def test_an_error_over_an_option_a_rerun_took_from_its_record_says_so(tmp_path, questions):
    """A rerun keeps the recorded options it does not give; where one of them no longer fits (a cap
    below the new budget), the error named it as if given, with no word of where it came from or
    that only `--allocator` gives it up."""
    out = tmp_path / "r"
    assert run(questions, out, "-N", "2", "--max-per-question", "3").exit_code == 0
    refused(run(questions, out, "-N", "4"), "--max-per-question is too small: 3 per question cannot hold the "
            f"budget of N=4 per question (--max-per-question 3 is the last run's, taken from {out / 'config.json'}: "
            "give --max-per-question to change it, or --allocator uab to start from the defaults)")
    given = run(questions, out, "-N", "4", "--max-per-question", "3")  # given: as before
    refused(given, "cannot hold the budget of N=4 per question")
    assert "last run's" not in given.stderr
    assert run(questions, out, "-N", "4", "--allocator", "uab").exit_code == 0


def test_an_error_over_the_rule_or_allocator_a_rerun_took_from_its_record_says_so(tmp_path, questions):
    """The rule (allocator) that leads its settings, taken from config.json, was named in the error
    of an option it does not read as if given: `--vote-keep 0.3` on a confident-ties run (a
    recommendation's) said `not --vote-rule confident-ties` to a rerun that gave no --vote-rule."""
    out = tmp_path / "r"
    assert run(questions, out, "-N", "2", "--allocator", "uniform", "--vote-rule", "confident-ties").exit_code == 0
    where = out / "config.json"
    refused(run(questions, out, "--vote-keep", "0.3"), "--vote-keep applies to the vote rule filtered, not --vote-rule "
            f"confident-ties (--vote-rule confident-ties is the last run's, taken from {where}: give --vote-rule to "
            "change it)")
    refused(run(questions, out, "--gain", "coverage"), "not --allocator uniform (--allocator uniform is the last "
            f"run's, taken from {where}: give --allocator to change it)")
    given = run(questions, out, "--vote-rule", "majority", "--vote-keep", "0.3")  # given: as before
    refused(given, "--vote-keep applies to the vote rule filtered, not --vote-rule majority")
    assert "last run's" not in given.stderr


def test_a_rerun_of_a_preset_exit_run_keeps_its_exit_test_and_threshold(tmp_path, questions):
    """A preset fixes the exit (`uab-exit-hard`), so a rerun gives none: the recorded `--exit-test
    official --exit-nmax 8`, which requires the hard exit, was dropped (back to the paper's test, in
    silence), as if the run had no exit."""
    out = tmp_path / "r"
    given = ["--allocator", "uab-exit-hard", "--exit-test", "official", "--exit-nmax", "8", "--exit-threshold", "0.3"]
    assert run(questions, out, "-N", "2", *given).exit_code == 0
    result = run(questions, out, "-N", "3")
    assert result.exit_code == 0, result.stderr
    recorded = json.loads((out / "config.json").read_text())["allocate"]
    assert [recorded.get(k) for k in ("exit", "exit_test", "exit_nmax", "exit_threshold")] == ["hard", "official", 8, 0.3]


def test_a_rerun_of_a_hard_exit_preset_keeps_its_official_test(tmp_path, questions):
    """The preset's --exit hard is not on the command line: a rerun giving only -N (or a plain
    resume) dropped the recorded --exit-test official as if no hard exit required it, and
    allocated by the paper's test."""
    out = tmp_path / "r"
    given = ["--allocator", "uab-exit-hard-skip", "--exit-test", "official", "--exit-nmax", "8"]
    assert run(questions, out, "-N", "2", *given).exit_code == 0
    for again in (["-N", "3"], []):
        result = run(questions, out, *again)
        assert result.exit_code == 0, result.stderr
        recorded = json.loads((out / "config.json").read_text())["allocate"]
        assert (recorded["allocator"], recorded["exit_test"], recorded["exit_nmax"]) == ("uab-exit-hard-skip",
                                                                                           "official", 8)
    assert run(questions, out, "--exit-test", "paper").exit_code == 0  # given: the paper's test, no N_max
    assert "exit_test" not in json.loads((out / "config.json").read_text())["allocate"]


def _older_config(config: dict) -> dict:
    """``config`` (a run's ``config.json``) as a uab before 2026-11-25 wrote it: no ``questions``,
    ``derived`` or ``model_option``, and the allocation as its whole dataclass, T named
    ``temperature``, the allocation seed and the vote model at their defaults then."""
    alloc = config["allocate"]
    return {"input": config["input"], "m": config["m"], "fingerprint": config["fingerprint"],
            "generation": config["generation"], "k": config["k"], "n": config["n"],
            "allocate": {"n": alloc["n"], "allocator": alloc["allocator"], "signal": None,
                         "temperature": alloc["T"], "gain": alloc["gain"], "exit": None, "exit_threshold": None,
                         "exit_mode": "redistribute", "max_per_question": None, "vote_model": "plurality-2",
                         "seed": 0},
            "vote": {"include_phase1": True, "tie_seed": None, "rule": "majority", "version": config["vote"]["version"]}}


def test_a_run_directory_of_an_older_uab_keeps_its_signal_temperature(tmp_path, questions):
    """A run directory from before 2026-11-25 records T as ``allocate.temperature``: a rerun
    without -T took the default 0.2 (allocated otherwise, drew again), and `--settings` its
    config.json was refused as "a config of a newer uab"."""
    out = tmp_path / "r"
    assert run(questions, out, "-N", "3", "-T", "0.5").exit_code == 0
    allocation = (out / "allocation.jsonl").read_text()
    config = json.loads((out / "config.json").read_text())
    (out / "config.json").write_text(json.dumps(_older_config(config)))
    result = run(questions, out)
    assert result.exit_code == 0, result.stderr
    assert json.loads((out / "config.json").read_text())["allocate"]["T"] == 0.5
    assert (out / "allocation.jsonl").read_text() == allocation
    (out / "config.json").write_text(json.dumps(_older_config(config)))
    result = run(questions, tmp_path / "s", "--settings", out / "config.json")
    assert result.exit_code == 0, result.stderr
    assert json.loads((tmp_path / "s" / "config.json").read_text())["allocate"]["T"] == 0.5
