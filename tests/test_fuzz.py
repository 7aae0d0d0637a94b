"""Crash-fuzzing the readers of untrusted text (Hypothesis): model replies (answer extraction, confidence,
normalisation), JSONL records, settings files (JSON/TOML) and `uab convert`'s inputs raise nothing but uab's
own one-line error and never hang; and the inputs that once took seconds to minutes (each fixed where it was
quadratic, checked by the work it does, not by a clock)."""

from __future__ import annotations

import json
import signal
import threading
import warnings

import pytest
from conftest import json_reads, skip_unless_toml_settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uab_cli import answers, convert, jsonl
from uab_cli import settings as uab_settings
from uab_cli.errors import UabError

# markers in several languages, LaTeX fragments, digits of many scripts, the characters folding rewrites
MARKERS = ["The answer is ", "the answer is not ", "Answer: ", "Final Answer\n", "答案是", "答案：", "Die Antwort ist ",
           "La respuesta es ", "Ответ — ", "คำตอบคือ", "答え:", "উত্তর হল ", "సమాధానం ", "Jibu ni ", "####", "\\boxed{",
           "\\fbox{", "{final answer: ", "Confidence: ", "Confidence: 8", "(Confidence: 9)", "confidence 8/10", "It is ",
           "\\frac{", "\\dfrac{1}{2}", "^{", "_{", "\\sqrt", "\\sqrt{", "\\text{ cm}", "\\mathrm{", "\\left(", "\\right)",
           "\\overline{3}", "0.\\dot{1}", "\\times 10^{", "\\in [", "\\cup", "\\le ", "\\pi", "$", "$$", "\\(", "\\)",
           "\\[", "\\]", "{", "}", "(", ")", "[", "]", "=", ",", ".", " ", "\n", "\t", "\r", "-", "**", "x", " or ",
           " and ", "(A) ", "B) ", "\nC. ", "D-West", "½", "1½", "²", "√", "−", "。", "।", "\u00a0", "\u2009", "\u0301",
           "km", "元", " яблок", " (twelve)", "1,000", "1 1/2", "1e5", "°", "%", "\\"]
DIGITS = "0123456789٠١٢٣٤٥٦٧٨٩०१२३४५६७८९০১২৩৫൬๓０１２３４５６７８９𝟎𝟏𝟗"
ATOMS = st.one_of(st.sampled_from(MARKERS), st.text(max_size=6), st.text(DIGITS, min_size=1, max_size=5),
                  st.integers(-10**6, 10**6).map(str))
REPLIES = st.lists(ATOMS, max_size=25).map("".join)
# a long run of one character class between two replies: what regular expressions rescan
RUN = st.sampled_from([" ", "\n", "x y ", "1 ", "1", "{", "}", "$", "=", "1=", "\\", "(", "答", "٥", ", ", "*", "-", ".",
                       "\\boxed{", "Answer: ", "Confidence: ", "\\frac{1}{", "^{", "x ", "the answer is not 1. "])
LONG_REPLIES = st.builds(lambda head, run, n, tail: head + run * (n // len(run)) + tail,
                         REPLIES, RUN, st.integers(10_000, 100_000), REPLIES)
CHOICES = ["12", "x + 1", "~A", "Paris"]


def _within(seconds: int, read, *args):
    """``read(*args)``, failing where it runs past ``seconds`` (a hang, or time that grows faster than the input:
    the inputs here take milliseconds) or raises anything but ``UabError``."""
    if threading.current_thread() is not threading.main_thread():  # SIGALRM is the main thread's
        return read(*args)

    def hang(*_):
        raise TimeoutError(f"{read.__name__} ran past {seconds} s")

    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(seconds)
    try:
        return read(*args)
    except UabError:
        return None
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _read_reply(text: str) -> None:
    for read, *extra in [(answers.extract_math,), (answers.extract_choice, CHOICES), (answers.extract_text,),
                         (answers.parse_confidence,), (answers.normalize_math,), (answers.normalize_text,),
                         (answers.fold,), (answers.extract_answer, {"question": "q", "choices": CHOICES})]:
        _within(30, read, text, *extra)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=REPLIES)
def test_a_reply_of_anything_reads_without_error(text):
    _read_reply(text)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=LONG_REPLIES)
def test_a_long_run_in_a_reply_reads_without_error(text):
    _read_reply(text)


@pytest.mark.slow
@settings(max_examples=5000, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=REPLIES)
def test_many_replies_of_anything_read_without_error(text):
    _read_reply(text)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=LONG_REPLIES)
def test_many_long_runs_in_replies_read_without_error(text):
    _read_reply(text)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gold=REPLIES, prediction=REPLIES)
def test_grading_anything_says_true_or_false(gold, prediction):
    """math-verify's parser and sympy meet whatever the normaliser leaves of a reply."""
    rec = {"question": "q", "answer": gold}
    if answers.gold_answer(rec) is not None:
        assert _within(30, answers.is_correct, rec, answers.normalize_math(prediction)) in (True, False)


@pytest.mark.parametrize("reply, expected", [
    ("\\boxed{2 " + "x y " * 100_000 + "}", "2xy"),  # each variable before a unit was sliced off the list of words
    ("The answer is " + "a " * 50_000 + "1", "a"),  # the unit after each word was looked for up to the end
    ("\\boxed{" + "\\text{a}" * 50_000 + "1}", "a"),
    ("\\boxed{" + "m " * 30_000 + "m^{4}}", "mm"),  # no square or cube: no unit
    ("The answer is 1" + " " * 100_000 + "2", "12"),  # "and"/"or" was looked for from each space of a run
    ("\\boxed{either 1" + " " * 60_000 + "x}", "either1x"),  # and whether one follows "either", from each
    ("\\boxed{1 (a" + " " * 200_000 + "1}", "1(a"),  # a remark's closing bracket, from each
    ("\\boxed{1" + "$" * 100_000 + "2\\text{ cm}}", "12"),  # the spaces before a unit, from each (a "$" is one)
    ("So 7 remain, not 9, because 2 were eaten " + "and 1 more " * 30_000, "7"),  # a result after each "and 1"
    ("The answer is 5. " + "Confidence: 8 (" * 48_000, "5"),  # a confidence's remark, to the line's end from each
    ("So 7, not 9, because 2 were eaten and 1" + " " * 100_000 + "x remain", "1"),  # a result's verb after each space
    ("So 7, not 9, because 2 were eaten and 3 which is" + " " * 100_000, "7"),  # a value after the result's word
    ("答案是" + "manzanas y no " * 40_000, "manzanas y no"),  # a number before, from the start at each "y no"
    ("\\boxed{" + "2\\cdot\\text{m}" * 60_000 + "}", "2\\cdot m"),  # the next "\\text{", from the start after each
    ("The answer is " + "approx. 5 " * 25_000, "5approx.5"),  # an abbreviation before each point, from the start
])
def test_a_long_answer_normalises_in_linear_work(reply, expected):
    """A long answer's unit, or the "and" of a list in it, was found in time that grew with the square of its words
    or spaces: 16 kB of "a a a … 1" took seconds, 100 kB minutes. A hang guard, not a timing: each takes well under
    a second."""
    assert _within(30, answers.extract_math, reply).startswith(expected)


@settings(max_examples=300, deadline=None)
@given(a=st.lists(st.sampled_from(list("abmx /.\\^{}231\n") + ["cm", "km/h", "^{2}", "\\pi "]), max_size=12).map("".join))
def test_a_unit_tail_read_backwards_is_the_one_a_search_finds(a):
    back = answers._UNIT_TAIL_REVERSED.match(a[::-1])
    found = back and answers._UNIT_TAIL.match(a, len(a) - back.end())
    searched = answers._UNIT_TAIL.search(a)
    assert (found and (found.span(), found.span(1))) == (searched and (searched.span(), searched.span(1)))


@pytest.mark.parametrize("read, text", [
    (answers.parse_confidence, "Confidence: " + "9" * 5000),
    (answers.extract_math, "٥" * 5000 + "½"),  # a mixed number: 555…5 1/2
    (answers.normalize_math, "1 1/" + "7" * 5000),
])
def test_a_number_of_more_digits_than_int_reads_is_no_traceback(read, text):
    """int() reads at most 4,300 digits: a score or a mixed number of more was a ValueError."""
    assert read(text) is None or read(text).startswith(("5", "1"))


# --- records, settings files, convert inputs ----------------------------------------------------------------

_LEAF = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=False), st.text(max_size=8),
                  st.sampled_from(["", "mc", "math", "text", "A", "(B)", "Ｂ", "1", "Level 3", "²", "10²", "٣", "7" * 30]))
_VALUE = st.recursive(_LEAF, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["text", "phase", "index", "anll", "n_tokens",
                                                                  "confidence", "answer", "x"]), inner, max_size=4)),
    max_leaves=10)
_SAMPLE = st.fixed_dictionaries({"text": st.one_of(REPLIES, _VALUE), "phase": st.one_of(st.sampled_from([1, 2]), _VALUE)},
                                optional={key: _VALUE for key in ("index", "anll", "n_tokens", "confidence", "answer")})
_RECORD = st.fixed_dictionaries({}, optional={
    "id": st.one_of(st.text(max_size=4), _VALUE), "question": st.one_of(REPLIES, _VALUE), "answer": _VALUE,
    "choices": st.one_of(st.lists(st.text(max_size=3), max_size=30), _VALUE), "type": _VALUE, "level": _VALUE,
    "extra": _VALUE, "samples": st.one_of(st.lists(_SAMPLE, max_size=3), _VALUE), "uab": _VALUE,
    "problem": REPLIES, "options": _VALUE, "label": _VALUE})
_LINE = st.one_of(_RECORD.map(lambda rec: json.dumps(rec, ensure_ascii=False)), st.text(max_size=20),
                  st.sampled_from(["", "[", "{", '{"a": 1' + "0" * 30 + "}", "[" * 1000 + "]" * 1000, "PAR1", "sep=;",
                                   'k = """', "[table]", "x = [1,", 'a,b\n"1', '{"N": 2, "settings": {}}']))
FILES = st.builds(lambda lines, end, bom: (b"\xef\xbb\xbf" if bom else b"") + end.join(lines).encode("utf-8", "replace"),
                  st.lists(_LINE, max_size=5), st.sampled_from(["\n", "\r\n", "\r"]), st.booleans())


def _read_file(path) -> None:
    for stage in ("question", "sampled", "allocated"):
        _within(30, jsonl.load_records, str(path), stage)


def _convert(path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        list(convert.convert_records(convert.read_table(path), None, path=str(path)))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=FILES)
def test_a_file_of_anything_reads_as_records_settings_or_a_table_or_a_one_line_error(tmp_path, data):
    for name in ("r.jsonl", "s.json", "s.toml", "c.jsonl", "c.json", "c.csv", "c.tsv"):
        path = tmp_path / name
        path.write_bytes(data)
        if name.startswith("r."):
            _read_file(path)
        elif name.startswith("s."):
            _within(30, uab_settings.load_file, str(path), 2)
        else:
            _within(30, _convert, path)


@pytest.mark.parametrize("name", ["c.jsonl", "c.json"])
def test_a_row_nested_deeper_than_json_reads_with_a_long_integer_is_a_one_line_error(tmp_path, name):
    """A long integer is read again by json, exactly; json reads fewer levels than orjson, and its RecursionError
    was a traceback (orjson read the row). From Python 3.12 json reads those levels too: the row's record is
    refused where it is written (orjson writes 254 levels), at the row's line."""
    row = b'{"question": "q", "answer": 12345678901234567890, "x": ' + b"[" * 1000 + b"]" * 1000 + b"}"
    path = tmp_path / name
    path.write_bytes(row if name == "c.jsonl" else b"[" + row + b"]")
    read = json_reads(1000)
    with pytest.raises(UabError, match="nested over 254 levels deep" if read else "nested too deeply for a record") as info:
        _convert(path)
    assert info.value.path == str(path) and info.value.line == (1 if name == "c.jsonl" or read else None)


@pytest.mark.parametrize("row, says", [
    ({"question": "q", "choices": ["a", "b"], "answer": "²"}, "answer '²' is not a letter A-B, an index, or one of"),
    ({"question": "q", "choices": ["a", "b"], "answer": "7" * 5000}, "is not a letter A-B, an index, or one of"),
    ({"question": "q", "choices": ["10²", "10³"], "answer": "10³"}, None),  # the choice's text (isdigit, no int)
])
def test_a_gold_of_digits_int_cannot_read_is_a_choice_or_a_one_line_error(tmp_path, row, says):
    """A gold that str.isdigit() takes and int() does not ("²", "10³", 5,000 digits) was a ValueError."""
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(row) + "\n")
    if says is None:
        assert [rec["answer"] for rec in convert.convert_records(convert.read_table(path), None)] == ["B"]
        return
    with pytest.raises(UabError, match=says) as info:
        _convert(path)
    assert info.value.line == 1


def test_a_level_of_more_digits_than_int_reads_is_kept_as_text(tmp_path):
    path = tmp_path / "m.jsonl"
    level = "Level " + "3" * 5000
    path.write_text(json.dumps({"problem": "q", "answer": "1", "level": level}) + "\n")
    assert [rec["level"] for rec in convert.convert_records(convert.read_table(path), "math500")] == [level]


def test_a_toml_settings_file_of_many_keys_is_parsed_once(tmp_path, monkeypatch):
    """Each key's line was found by parsing all the lines before it again: 50 kB of keys took a minute. Counted by
    the characters handed to tomllib: about the file's, once for the file and once for the keys found."""
    skip_unless_toml_settings("s.toml")
    import tomllib

    text = "".join(f"k{i} = {i}\n" for i in range(2000)) + 'system_prompt = """\nbudget = 0\n"""\nbudget = 3\n'
    path = tmp_path / "s.toml"
    path.write_text(text)
    parsed, loads = [], tomllib.loads
    monkeypatch.setattr(tomllib, "loads", lambda s, **kw: parsed.append(len(s)) or loads(s, **kw))
    values = uab_settings.load_file(str(path))
    assert values["budget"] == 3 and values.lines["budget"] == 2004 and values.lines["k1999"] == 2000
    assert sum(parsed) < 3 * len(text)
