"""Answers: extraction from a response, normalisation, equivalence (math-verify), majority
vote and grading.

Extraction only finds where an answer is and where its expression ends; one normaliser,
:func:`normalize_math`, then serves golds and predictions alike. An answer that normalises
to nothing is no answer: it never matches and never counts as a vote.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import itertools
import random
import re
import string
import threading
import unicodedata
from collections.abc import Callable, Sequence
from decimal import Decimal
from fractions import Fraction
from typing import NamedTuple

from .records import gold_letter, letters, question_type
from .signals import CONFIDENCE_PATTERN, STATED_CONFIDENCE, confidence_score

# --- extraction --------------------------------------------------------------------

# the confidence ending a reply, with the bracket or bar that opens it ("Answer: 7 (Confidence: 9)",
# "Answer: 7 | Confidence: 9") or a dash set apart ("Answer: 7 - Confidence: 9"); it starts where no
# space precedes it (else a run of spaces is scanned again from each of its spaces: 100 kB, minutes); a remark in
# brackets after it ("Confidence: 8 (fairly sure)") is of at most 200 characters (scanned to the line's end from each
# "Confidence: 8 (" of a looping line, 180 kB took 7 s)
_CONF_TAIL = re.compile(r"(?:[(\[{|]|(?<=\s)[-–—]|(?<!\s))\s*" + CONFIDENCE_PATTERN + r"(?:\s*\([^)\n]{0,200}\))?\W*$",
                        re.IGNORECASE | re.MULTILINE)
_CONFIDENCE = re.compile(CONFIDENCE_PATTERN, re.IGNORECASE)
_STATED_CONFIDENCE = re.compile(STATED_CONFIDENCE, re.IGNORECASE | re.MULTILINE)
# A run of blanks is matched from one end only (a class that takes "\n" after "^", or two runs
# side by side, rescan it from each of its characters: a reply of 100 kB of blank lines took minutes).
# an adverb after "the answer is" is no part of the answer: "the answer is actually 46", "is indeed: D"
_ADVERBS = r"actually|indeed|still|really|clearly|definitely|certainly|simply|just"
_ADVERB = rf"(?:\s+(?:{_ADVERBS}))?\b"
# "Answer" in MGSM's languages, as its exemplars end ("La respuesta es 11.", "Die Antwort lautet 11.", "Ответ — 11.",
# "Jibu ni 11.", "উত্তর হল 11।", "సమాధానం 11.", "คำตอบคือ 11", "答案是 11。", "答えは11です。"): the word, what says
# "is" after it (":" too with the article, as "the answer:"), and what opens "the answer is" read mid-line: the
# article, or the start of a word ("Antwortet", "respuestas", "majibu" are none; Python's \w stops at an Indic vowel
# sign or virama, hence the script blocks), or nothing where words are not spaced (Thai, Chinese, Japanese, their
# colon too: "所以答案：18"); a spaced word ends there too ("es" is no "está"). The word opening a line with its
# "is", ":" or "=" marks the answer as "Answer:" does ("Respuesta: 11", "Ответ: 11"); so does it before a letter.
# A word hyphenated onto another is part of it ("Schritt-für-Schritt-Antwort:"), one after a dash alone is not ("-Antwort").
_APART = r"(?<![\w\u0900-\u0dff])(?<![\w\u0900-\u0dff]-)"
_ANSWER_ABROAD = {  # by language: the words (the answer, the final answer), its "is", its opener (None: words are not spaced)
    "es": (("respuesta", r"respuesta\s+final"), "es|:", r"la\s+"), "fr": (("r[ée]ponse", r"r[ée]ponse\s+finale"), "est|:", r"la\s+"),
    "de": (("antwort", r"endg[üu]ltige\s+antwort"), "ist|lautet|:", r"die\s+"),
    "ru": (("ответ", r"окончательный\s+ответ", r"итоговый\s+ответ"), "[—–]", ""), "sw": (("jibu", r"jibu\s+la\s+mwisho"), "ni", ""),
    "bn": (("উত্তর", r"চূড়ান্ত\s+উত্তর"), "হলো|হল|ঃ", ""), "te": (("సమాధానం", r"తుది\s+సమాధానం"), r"(?=-?\d)", ""),  # "సమాధానం 11": no "is"
    "th": (("ค(?:ำ|ํา)ตอบ(?:สุดท้าย)?",), "คือ|:", None),  # "ำ" as written, or as NFKC writes it (a letter's reply is read so)
    "zh": (("答案",), "是|为|:", None), "ja": (("答え",), "は|:", None),  # "最终答案：", "最終的な答え：" end so
}
# "And" (and "or") in MGSM's languages, as the words that join a list's items ("18 Äpfel und 3 Birnen" is 18 and 3, as
# "18 apples and 3 pears"; "Jibu ni 50 au 51" is 50 or 51, as "50 or 51"), or, before a word after a number, open the
# next clause ("18 und wir sind fertig" is 18): spaced as English's; Spanish's "y" and "o" name a variable too ("x y"),
# so only a number (and its unit's words) and a number it lists (before a word after a number it ends the clause still:
# "18 y luego"; "e" and "u", their forms before an /i/ or /o/ sound, are none before a number); Thai's "และ" (and
# "หรือ", or), Chinese's "和", "与", "及" (and "或", "或者", or) and Japanese's "及び" (and "または", or) before a number,
# spaced or not (Thai is written without spaces between words: "18 ลูกและ 3 ลูก"; a word that holds "และ" is split only
# before a number), and Japanese's "と" (and "か", or) there after a digit, a counter or a unit in katakana ("18個と3個",
# "18ドルと3セント", "49か50"), as they are inside words elsewhere ("あと3個": 3 more; "何か", "3か月"). A comma before any
# of them lists on too ("18, y 3"), as Chinese's and Japanese's "、" does before an unspaced one ("18個、と3個").
_OR_ABROAD = r"oder|ou|или|au|বা|లేదా"
_AND_ABROAD = rf"und|et|и|na|এবং|మరియు|{_OR_ABROAD}"  # and, or
_AND_WORDS = rf"and|or|{_AND_ABROAD}"  # English's and theirs, spaced
# a comma between a list's items: "," or Chinese's and Japanese's enumeration comma "、" ("1、2和3" is "1, 2 and 3"), a
# space before it too ("5 , 6")
_LIST_COMMA = r"\s*[,\u3001]"
_OR_NUMBERS = "o"
_AND_NUMBERS = rf"y|{_OR_NUMBERS}"
_OR_UNSPACED = "或者|或|または|หรือ"
_AND_UNSPACED = rf"[和与及]|及び|และ|{_OR_UNSPACED}"
_OR_AFTER_COUNTER = "か"
_AND_AFTER_COUNTER = rf"と|{_OR_AFTER_COUNTER}"
_COUNTER = "つ\u30a0-\u30ff\u4e00-\u9fff"  # what Japanese writes after a number: a counter or a unit ("3つ", "18個", "18ドル")
# Japanese's "と" ("か") after a digit, counter or unit, a comma before it too ("18個と3個", "18個、と3個"), before a number
_AND_AFTER_COUNTERS = rf"(?<=[\d{_COUNTER}])(?:{_LIST_COMMA})?\s*(?:{_AND_AFTER_COUNTER})\s*"
# a word that closes a list after its last item, no unit of it ("1, 2, and 3 respectively", "18 และ 3 ตามลำดับ")
_RESPECTIVELY_WORD = r"\s*(?:respectively|respectivamente|respectivement|соответственно|ตามลำดับ)"
_RESPECTIVELY = re.compile(rf"{_RESPECTIVELY_WORD}\s*$", re.IGNORECASE)


def _opening(*words: str) -> str:
    """A look at the first letter of ``words`` (any case): a pattern searched for tries each of its alternatives
    at each character of a reply, a look-behind or one alternative per word there took 2 to 5 times the rest of it.
    A language's "final answer" that opens with another word ("Endgültige Antwort:") is found at its answer word
    ("Antwort:") there, or under "^" or the article ("die endgültige Antwort"): its first letter is not looked at
    (the "e" of every other English word made the letter marker's search 9% slower)."""
    return "(?=(?i:[" + "".join(sorted({word[0] for word in words})) + "]))"


_ENDS = r"(?![^\W\d_]|[\u0900-\u0dff])"  # no letter or Indic sign after ("হল", not "হলে": if); a number may follow
_ANSWER_WORD = "|".join((_APART if opener is not None else "") + f"(?:{'|'.join(words)})"  # a letter's marker: apart
                        for words, _, opener in _ANSWER_ABROAD.values())  # too ("majibu ni A" is none)
_ANSWER_IS = "|".join(is_ for _, is_, _ in _ANSWER_ABROAD.values())
_SPACED = {language: entry for language, entry in _ANSWER_ABROAD.items() if entry[2] is not None}
_LAST_SPAN = re.compile(r"(?<!\\)\$((?:\\\$|[^$])+)(?<!\\)\$|\\\(((?:(?!\\\().)+?)\\\)")
_ENUMERATOR = re.compile(r"^(?:[^\S\n]|[*#])*\d+\.(?!\d)", re.MULTILINE)  # "**5. FORMAT:**" is no answer
# the repeating digits of a decimal: 0.\overline{5}, 0.1\bar{6}, 0.\dot{3}, 0.\dot{1}4\dot{2} (142 repeats)
_PERIOD = r"(?:\\(?:overline|bar)(?:\{\d+\}|\d)|\\dot(?:\{\d\}|\d)(?:\d*\\dot(?:\{\d\}|\d))?)(?!\d)"
_DECIMALS = r"(?:\.\d*" + _PERIOD + r"|\.\d+)?"  # after a whole number: ".5", ".\overline{3}" or none
# Thousands separated by "," or LaTeX's "{,}" and "\," (70{,}000), or by a no-break or thin space
# ("1 000", French and SI style): one number, not 70 and 000; likewise a mixed number ("1 1/2",
# "2\frac{1}{4}"), a LaTeX fraction, a repeating decimal and scientific notation ("1.2e+3", "1.2 \times 10^{3}").
# A minus opens a number where no letter or digit comes before it: "x = -5", "(-5)", "5 - -3", but "3-over-5"
# and "pages 3-5" end with 5, not -5. A letter of a script written without spaces (Thai, kana, CJK: "结果是-5",
# "ผลคือ-12") or a LaTeX relation or operator's name ("x\ge-2", "2\times-3") is no word the minus is written onto.
_CURRENCY_AFTER = "\u20ac\u00a3\u00a5"  # "€", "£", "¥": a sign written before a value or after it ("25 €", "€25")
_UNSPACED = "\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff"
_SIGN_AFTER = ("le", "leq", "ge", "geq", "ne", "neq", "lt", "gt", "approx", "sim", "equiv", "in", "to", "times", "cdot",
               "div", "pm", "mp", "quad", "qquad", "implies", "Rightarrow")
_MINUS = rf"-(?:(?<![^\W_{_UNSPACED}]-)" + "".join(rf"|(?<=\\{name}-)" for name in _SIGN_AFTER) + ")"
# A point written onto a currency's abbreviation opens no number: "Rs.500", "Ksh.1,500", "రూ.500" are amounts (500, 1500,
# 500), not 0.5; onto any other word it is a decimal point, its space left out ("The probability is.5": 0.5); the
# abbreviations looked behind for by length, one look for each
_POINT_ONTO = ("Rs", "Ksh", "Kshs", "Tsh", "రూ")
_POINT = r"\." + "".join(rf"(?<!(?<![^\W\d_])(?i:{'|'.join(w for w in _POINT_ONTO if len(w) == n)})\.)"
                          for n in sorted({len(w) for w in _POINT_ONTO}))
_NUMBER = re.compile(rf"(?:{_MINUS})?(?:"
                     r"\d{1,3}(?:(?:,|\{,\}|\\,|[\u00a0\u202f\u2009])\d{3})+" + _DECIMALS + "|"
                     r"\d*\.\d*" + _PERIOD + r"|\d+ \d+/\d+|"
                     r"(?:\d+ ?)?\\[dtc]?frac(?:\{\d+\}|\d)(?:\{\d+\}|\d)|"  # "\frac{4}{3}", "\frac43", "\frac9{19}"
                     r"\d+(?:\.\d+)?(?:[eE][-+]?\d+|\s*(?:\u00d7|\\times|\\cdot)\s*10\^(?:\{[-+]?\d+\}|[-+]?\d+)|/\d+)?|"
                     rf"{_POINT}\d+)")
_DELIMS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))
# "and"/"or" before a word, after a number, opens the next clause ("18 and we are done", "18 und wir sind fertig"), not
# a list's next item ("2 and 3", "18 apples and 3 pears", "x and y": a number or a letter follows; "0 or pi", "2 and
# sqrt(3)": math's word, ``_MATH_WORDS``, or a function's name before its bracket, follows)
_AND_CLAUSE = re.compile(rf"\s(?:{_AND_WORDS}|{_AND_NUMBERS})\s+([^\W\d_]{{2,}})(?![^\W\d_]|\s*\()", re.IGNORECASE)
# "and" (or "or") before a number, the list going on ("18 ลูกและ 3 ลูก"), after a comma too ("1, 2, and 3", "18 ชิ้น, และ 3
# ชิ้น", "50, or 51")
_AND_THEN = (rf"(?:(?:{_LIST_COMMA})?(?:\s+(?:{_AND_WORDS}|{_AND_NUMBERS})\s+|\s*(?:{_AND_UNSPACED})\s*)|"
             rf"{_AND_AFTER_COUNTERS})")
_AND_THEN_NUMBER = rf"{_AND_THEN}(?=-?\.?\d)"
_COMMA_AND = re.compile(rf"{_AND_THEN}(?=\$?-?\.?\d)", re.IGNORECASE)  # an amount too: "$50, or $51"
# a list item's unit: its words, each letter of a script written without spaces one ("18 Äpfel", "18个", "18 ชิ้น")
_UNIT_CHAR = re.compile(r"[^\W\d_]|[\u0900-\u0e7f%\u00b0]")
_UNIT_WORD = re.compile(rf"[{_UNSPACED}]|(?:(?![{_UNSPACED}])(?:[^\W\d_]|[\u0900-\u0dff%\u00b0]))+")
_ITEM_END = re.compile(r"[^\S\n]*(?:[.!?;,:)\]*]|\n|$)")
_LIST_END = re.compile(rf"(?:{_RESPECTIVELY_WORD})?{_ITEM_END.pattern}", re.IGNORECASE)  # "and $51 respectively."
# "or" (any language's) after a comma (``_comma_lists_on``), and the plain number before it: "1.5", "-2", "1,200", not
# "2^3"
_COMMA_OR = re.compile(rf"{_LIST_COMMA}\s*(?:or|{_OR_ABROAD}|{_OR_NUMBERS}|{_OR_UNSPACED}|{_OR_AFTER_COUNTER})\s*",
                       re.IGNORECASE)
_OR_ITEM = re.compile(r"(?<![\w^\\/.-])-?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|[\d./]*\d)$")  # "1,200" whole
_DIGIT_RUN = re.compile(r"\d+")
# a list going on past words of another script, its unit: "18 яблок и 3 груши", "18 ลูกและ 3 ลูก"
_LIST_GOES_ON = re.compile(rf"(?:\s+(?:(?![\u0900-\u0e7f])[^\W\d_]|[\u0900-\u0e7f])+)*?{_AND_THEN_NUMBER}", re.IGNORECASE)
_DIGIT = re.compile(r"\d")
_OPEN, _CLOSE = "([{", ")]}"
# a word of a script other than Latin or Greek after a space ends an answer too: its unit ("Ответ — 18 яблок"), or
# the next sentence where no full stop ends the first ("คำตอบคือ 18 ตรวจสอบ 18 - 7 = 11", "答案是 18 验证 …")
_OTHER_SCRIPT = re.compile(r"(?![A-Za-z\u00aa-\u024f\u0370-\u03ff])[^\W\d_]")
# the characters ``_clause`` may cut at: a sentence's or a clause's end, a comma, a space
_CLAUSE_END = re.compile(r"[!?;.,\s\u3001]")
_ABBREVIATIONS = ("Mr", "Mrs", "Ms", "Dr", "St", "vs", "approx")
_ABBREVIATION = re.compile(rf"(?<![A-Za-z])(?:{'|'.join(_ABBREVIATIONS)})$")  # "Mr. Brennan" goes on
# (looked for in the letters before a point only: searched for from the start at each, a reply looping "approx. 5"
# was read in time growing with its square)
_ABBREVIATION_BACK = max(map(len, _ABBREVIATIONS))
# what lists spans ("$8$, $4$", "$2$ and $3$") or bold parts ("**50** or **51**")
_LIST_JOINT = r"\s*(?:,\s*(?:(?:and|or)\s*)?|(?:and|or)\s*)"
_SPAN_JOINT = re.compile(rf"{_LIST_JOINT}(?=\$|\\\()")
_BOLD_JOINT = re.compile(_LIST_JOINT)
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_EMPHASIS = re.compile(r"\*+(?=[A-Za-z(])|(?<=[A-Za-z)])\*+")
_PROSE = re.compile(r"[A-Za-z]{2,}\.?\s+[A-Za-z]{2}")  # a sentence, not an expression
_VERB = re.compile(r"\s(?:is|are|was|equals|be)\s", re.IGNORECASE)
# a verb that opens a new clause after a value, its subject ("12 are girls", "12 were girls", "9 remain"), English's
# or one of MGSM's languages' that deny before the value ("12 sont des filles", "12 restent", "12 sind Mädchen", "12 son
# niñas", "12 ni wasichana")
_SUBJECT_VERB = (rf"(?:{_VERB.pattern}|\swere\s|\s(?:remain(?:s|ed)?|est|sont|[ée]tai(?:t|ent)|reste(?:nt)?|ist|sind|"
                 r"war(?:en)?|bleib(?:t|en)|es|son|era(?:n)?|queda(?:n)?|ni)(?![\w-]))")
# … "of them" or "of whom" between too ("12 of them are girls"), or Russian's, its verb left out ("12 из них девочки")
_CLAUSE_VERB = re.compile(rf"(?:\s+of\s+(?:them|whom))?{_SUBJECT_VERB}|\s+из\s+них(?![\w-])", re.IGNORECASE)
# A remark on the answer after "the answer is", not one: a verdict ("correct", "not given", "unknown")
# that ends its clause, or a denied value ("not 49"); a reason may follow it ("incorrect because 3 + 4 = 8"), or the
# next sentence may restate the answer ("The answer is not 49. It is 50."). In English and MGSM's languages ("Die
# Antwort ist falsch, 7", "La respuesta es incorrecta porque …", "Ответ — не 49, а 50", "Die Antwort ist nicht 49. Es
# ist 50."): the words that deny a value before it, "not" or, where the language denies in its verb, the negated verb
# ("La respuesta no es 49", "La réponse n'est pas 49", "Jibu si 49" or "sio 49", "答案不是49" or "并非49", "Die Antwort
# ist nicht etwa 49", "คำตอบไม่ใช่ 49"; Chinese's "非" alone too, "50而非49", not "除非": unless; the answer's word
# before it marks the answer as before "is", ``_negated``), the verdicts, a reason's words (None: none listed), and what
# opens a sentence that restates the answer (after a denial only; None: none listed); by language, as ``_ANSWER_ABROAD``.
_REMARKS = {
    "en": (r"not|n['\u2019]t", r"correct|incorrect|wrong|right|given(?!\s+(?:as|by)\b)|unknown|unclear", r"because|since|as|given",
     r"it(?:\s+is|'s|\u2019s|\s+should\s+be|\s+must\s+be)|the\s+(?:correct|right|actual)\s+(?:answer|value)\s+is"),
    "de": (r"nicht(?:\s+(?:etwa|aber))?", r"richtig|korrekt|falsch|inkorrekt|unbekannt|unklar", r"weil|da|denn",
     r"(?:es|sie)\s+(?:ist|lautet)|die\s+(?:richtige|korrekte|tatsächliche)\s+antwort\s+(?:ist|lautet)"),
    "es": (r"no\s+es|no", r"correct[ao]|incorrect[ao]|err[óo]ne[ao]|equivocad[ao]|desconocid[ao]", r"porque|ya\s+que|pues",
     r"es|la\s+respuesta\s+(?:correcta|real)\s+es"),
    "fr": (r"n['\u2019]est\s+pas|non\s+pas|pas|non", r"correcte|incorrecte|fausse|faux|inconnue", r"car|parce\s+que|puisque",
     r"c['\u2019]est|elle\s+est|la\s+(?:bonne\s+r[ée]ponse|r[ée]ponse\s+correcte)\s+est"),
    "ru": ("не", r"(?:не)?(?:верн(?:ый|ое|о)|верен|правильн(?:ый|ое|о))|неизвестн(?:ый|ое|о)|неизвестен",
     r"потому\s+что|так\s+как|поскольку", r"это|(?:правильный|верный)\s+ответ\s*[—–]?"),
    "sw": (r"sio|si", r"sahihi|makosa|kosa", r"kwa\s+sababu", r"ni|jibu\s+sahihi\s+ni"),
    "zh": (r"不是|并非|(?<!除)非", r"不?正确的?|错误的?|不对", r"因为", r"(?:而|应该|应)?是"),
    "th": ("ไม่ใช่", None, "เพราะ(?:ว่า)?", r"(?:มัน|แต่)?(?:คือ|เป็น)|ค(?:ำ|ํา)ตอบที่ถูกต้องคือ"),
    # Bengali and Telugu deny after the value (``_NOT_AFTER``); "এটি 50" (it is 50), "అది 50" (that is 50)
    "bn": (None, None, "কারণ", r"(?:এটি|এটা|সেটি|সেটা)(?:\s+(?:হলো|হল))?"), "te": (None, None, "ఎందుకంటే", r"అది|ఇది"),
    # Japanese denies after the value (``_NOT_AFTER``); "正解は50です", or the value and its copula ("50だ", "50個です";
    # not "50だけ": only 50, nor "50ですか": is it 50?)
    "ja": (None, None, None, rf"正解は|(?=(?:{_NUMBER.pattern})[{_COUNTER}]*(?:です|だ)(?![けか]))"),
}
# what joins a value and the denial after it ("50 and not 49", "50, but not 49"), "and" and "but", by language as
# ``_REMARKS`` ("50 y no 49", "50, pero no 49", "50 und nicht 49", "50, aber nicht 49", "50 et non 49", "50, mais pas
# 49", "50, а не 49", "50, но не 49", "50 na si 49", "50, lakini si 49", "50，而不是49", "50 แต่ไม่ใช่ 49"); none in
# the languages that deny after the value
_DENIAL_JOINTS = {"en": "and|but", "de": "und|aber", "es": "y|pero", "fr": "et|mais", "ru": "и|но|а", "sw": "na|lakini",
                  "zh": "而|但是?|并", "th": "และ|แต่"}
# a Bengali counter after a number, written onto it ("12টি", "12টা", "12খানা") or after a space ("12 জন"): "উত্তর 49টি নয়"
# denies 49 as "উত্তর 49 নয়" does
_BN_COUNTER = r"[^\S\n]?(?:টি|টা|খানা|জন)(?![^\W\d_]|[\u0980-\u09ff])"
# the languages that put the verb last deny after the value: Japanese, Bengali ("নয়", its "য়" composed or not), Telugu
# ("答えは49ではない", "উত্তর 49 নয়", "సమాధానం 49 కాదు"; "答えは49ではなく50です" states 50; a Japanese counter or unit
# may come between, "答えは49個ではない"; Bengali's and Telugu's a word, not a word's start: "9 নয়টি" is nine of them,
# "49 নয়ই" (emphatic "ই", or "ও": not either) denies; Telugu's polite "కాదండి" and its "కాదని" (that it is not) too);
# a question after it asks
# no denial, it affirms ("答えは49ではないでしょうか", "49ではないのか", "49ではないかと思います", "49ではありませんか",
# "উত্তর 49 নয় কি?", or with a question mark: "49じゃない？", "49じゃないの？", "উত্তর 49 নয়?": isn't it 49?)
# (never ASCII: ``_remark`` looks for it in non-ASCII lines only; an ASCII word here would need that check gone)
_NOT_AFTER = re.compile(rf"(?:[{_COUNTER}]*|{_BN_COUNTER})\s*(?:(?:では(?:ない|ありません)|じゃない)(?!(?:の|です|でしょう|だろう)?か)|ではなく|"
                        rf"(?:ন(?:\u09df|\u09af\u09bc)[ইও]?(?!\s*কি)|కాద(?:ు|ని|ండి)){_ENDS})(?!の?\s*[?？])")
_NOT = "|".join(not_ for not_, _, _, _ in _REMARKS.values() if not_)
# ", <word>" opens the next clause: two ASCII letters, Spanish's "y" before a number ("18, y 3 es impar"), a letter
# of another script ("答案是18，因为…": "，" is ","), or a value its denial follows ("答えは49、50ではない": 49, not 50, as
# "The answer is 49, not 50"; ``_remark`` reads a list so denied where the answer is stated after it)
_NEXT_CLAUSE = re.compile(rf"\s*(?:[A-Za-z]{{2}}|(?:{_AND_NUMBERS})\s+(?=-?\.?\d)|{_OTHER_SCRIPT.pattern}|"
                          rf"(?:{_NUMBER.pattern}){_NOT_AFTER.pattern})")
# Spanish's bare "no" is also an answer, English's ("The answer is no 5 is prime" is `no5`): before a number it denies
# the number only where the number ends its sentence ("no 49.") or the answer is stated after it ("no 49, sino 50", "no
# 49. Es 50."; "no es 49" denies always)
_NOT_OR_ANSWER = "no"
_VERDICT = re.compile(rf"(?=[^\W\d_])(?:(?:{_NOT})\s+)?(?:{'|'.join(verdicts for _, verdicts, _, _ in _REMARKS.values() if verdicts)})(?![\w-])|"
                      r"not(?![\w-])", re.IGNORECASE)  # "is given as 50" states 50; Spanish's "no" alone is an answer; a
                      # letter first, looked at once: an answer opening with a number tries no word


# Thai asks with "หรือ" (or), "หรือเปล่า", "หรือไม่", "เหรอ" or "หรอ" ending its sentence, a unit between: "ไม่ใช่ 10
# หรือ", "ไม่ใช่ 10 บาทเหรอ?" (isn't it 10?; not "ไม่ใช่ 10 หรือ 20": or)
_THAI_ASKS = r"[^\S\n]*[\u0e00-\u0e7f]*?[^\S\n]*(?:หรือ(?:เปล่า|ไม่)?|เหรอ|หรอ)(?=[^\S\n]*(?:[?？\n]|$))"


# A currency's word or code written before the amount, by language, English's with the ISO codes any language writes
# (any language's after any marker: "USD 500", "Rs. 500", "KSh 500", "Jibu ni shilingi 500", "答案是人民币500元"); a whole
# word, the number written onto it too ("USD500", "Rs.500")
_CURRENCY_WORDS = {
    "en": r"USD|US\$|INR|Rs\.?|EUR|GBP|CHF|JPY|CNY|RMB|THB|RUB|KES|KShs?\.?", "sw": r"shilingi|dola|TSh",
    "zh": "人民币", "te": r"రూ\.?",  # "రూ. 500": Rs. 500
}
_CURRENCY_BEFORE = "|".join(_CURRENCY_WORDS.values())
# an amount opening an answer, its currency's word before it: the answer is the amount ("Rs 500" is 500)
_CURRENCY_AMOUNT = re.compile(rf"(?:{_CURRENCY_BEFORE})(?![^\W\d_])[^\S\n]*(?=-?\d)", re.IGNORECASE)


def _denial(words: str) -> str:
    """A word of ``words`` that denies the value after it (a space after the word, none needed after one of a script
    written without spaces: "答案不是49"; a sign before the value too: "not €49"; Chinese's question "答案不是49吗",
    "不是3个吗", a counter between, affirms the value: isn't it 49?; so does Thai's "ไม่ใช่ 10 หรือ", "ไม่ใช่ 10 บาทเหรอ"
    ending its line or sentence, not "ไม่ใช่ 10 หรือ 20": or); a currency's word before the value too, as Swahili writes
    it ("sio shilingi 400", ``_CURRENCY_BEFORE``)."""
    return (rf"(?:{words})(?:\s+|(?<=[{_UNSPACED}])\s*)(?:(?:{_CURRENCY_BEFORE})\s+)?(?=[{_CURRENCY_AFTER}]?-?\.?\d|\$|\\\(|-?\\[dtc]?frac)"  # what
            rf"(?![{_CURRENCY_AFTER}]?(?:{_NUMBER.pattern})(?:[{_COUNTER}]*\s*[吗嗎么麼吧]|{_THAI_ASKS}))")  # _NUMBER opens with


# a denial after English's marker, any language's word ("Answer: 不是49"), or after a language's own answer word, its
# own word or English's only ("Jibu ni not 49": "not" is no word of another): Swahili's "si" (is not) is Spanish's "si"
# (if), "La respuesta es si 5 es par" denies nothing
_DENIAL = re.compile(_denial(_NOT), re.IGNORECASE)
_DENIALS = {language: re.compile(_denial("|".join(filter(None, (_REMARKS["en"][0], _REMARKS[language][0])))),
                                 re.IGNORECASE) for language in _ANSWER_ABROAD}
# the language of a marker that names its answer word
_LANGUAGE = {language: re.compile("|".join(words), re.IGNORECASE) for language, (words, _, _) in _ANSWER_ABROAD.items()}
# a denied value's list going on: "and" (or "or", "nor" and theirs in MGSM's languages; "or" as "and",
# ``_AND_THEN_NUMBER``) and a number ("not 5, 6, and 7", "not 5 or 6", "no es 5, 6 y 7", "no es 49 ni 50", "no es 49 o 50"),
# or a comma and a number, a math span or an amount too (Spanish's and French's "ni" with no comma before it: Swahili's
# "ni" after one is "is", "Jibu si 49, ni 50") (a Japanese or Chinese counter or unit may end an item: "49個と50個",
# "5个和6个"), a Thai unit word after a space too ("ไม่ใช่ 60 บาท หรือ 70 บาท"), bold items bold between them ("not **49**, **50**")
_THAI_UNIT = r"[^\S\n]+[\u0e01-\u0e4e]+?"  # (lazy: "60 หรือ 70" leaves "หรือ" to the joint)
_OR_DENIED = rf"(?:{_LIST_COMMA})?\s+(?:nor|noch|ни)\s+|\s+ni\s+"
_VALUE_AHEAD = r"(?=-?\.?\d|\$|\\\()"  # a number, a math span or a dollar amount ("not $49$ or $50$", "not $49 or $50")
_DENIED_JOINT = re.compile(rf"(?P<bold>\*\*)?(?:[{_COUNTER}]*?|{_THAI_UNIT})(?:(?P<and>{_AND_THEN}|{_OR_DENIED})|{_LIST_COMMA}\s*)"
                           rf"(?(bold)\*\*){_VALUE_AHEAD}",
                           re.IGNORECASE)
# ", ", ": ", " - " (not "-3"), an em dash (never a minus: "49 নয়—50"), Japanese's "、", a denied "49%", or its sign
# after it ("nicht 25 €, sondern 20 €")
_REMARK_JOINT = re.compile(rf"(?:[\s,:;%°\u3001\u2014{_CURRENCY_AFTER}]|\\%|[-\u2013](?![.\d]))*")
_REASONS = "|".join(reasons for _, _, reasons, _ in _REMARKS.values() if reasons)
_REASON = re.compile(rf"\s*(?:{_REASONS})(?![\w-])", re.IGNORECASE)
# Words that start prose after an answer ("4 because ...", "51 which is ..."), a reason's in any language ("50 porque
# 3 + 4 = 7", "Jibu ni 50 kwa sababu …", as "50 because …"): the cut points.
_CONNECTIVE = re.compile(
    r"\s(?:which|because|since|as|so|where|when|that|meaning|hence|thus|therefore|but|this|"
    rf"it|is|are|was|were|for|from|if|given|i\.e\.|e\.g\.|after|in|of|per|with|{_REASONS})(?![A-Za-z])",
    re.IGNORECASE)
# two letters (Greek's are variables), an apostrophe between them too ("c'est 50")
_IN_WORDS = re.compile(r"(?![\u0370-\u03ff])[^\W\d_]['\u2019]?(?![\u0370-\u03ff])[^\W\d_]|" + _OTHER_SCRIPT.pattern)


def _correction(again: str) -> re.Pattern:
    """A denial's sentence ended, the next restating the answer with a word of ``again``: "The answer is not 49. It is
    50.", "… It's 50", "… The correct answer is 50", "… Es ist 50.", "答案不是49。是50。", "Jibu si 49. Ni 50."; a value
    must open what follows ("It is the largest." states none; no word boundary after a word of a script written without
    spaces, "是50", nor after an Indic vowel sign, "এটি 50"; a currency's word before it, "Ni shilingi 500",
    ``_CURRENCY_BEFORE``), and no denial after it ("এটি 50 নয়": it is not 50)."""
    return re.compile(rf"\s*(?:[.!;]\s+|\n\s*)(?:{again})(?:{_ADVERB}|(?<=[{_UNSPACED}\u0900-\u0dff]))"
                      rf"[\s*:]*(?:(?:{_CURRENCY_BEFORE})\s+)?(?=\$|\\\(|-?\.?\d|-?\\[dtc]?frac)"
                      rf"(?!\$?(?:{_NUMBER.pattern})\$?{_NOT_AFTER.pattern})",
                      re.IGNORECASE)


# after English's marker any language's words, after a language's own answer word its own or English's, as ``_DENIALS``:
# Swahili's "ni" (it is) is Spanish's and French's "ni" (nor), "La respuesta no es 49. Ni 50." restates nothing
_CORRECTION = _correction("|".join(again for _, _, _, again in _REMARKS.values() if again))
_CORRECTIONS = {language: _correction("|".join(filter(None, (_REMARKS["en"][3], _REMARKS[language][3]))))
                for language in _ANSWER_ABROAD}
# a value and a denial of the value after it, set apart by a comma, a bracket or a dash, or by "and" or "but", an
# adverb before the denial too: "It is 51, not 49 or 50.", "$51$ (not $49$)", "51 — not 49", "$18, not $19", "**14**,
# not **16**", "**14** and not **16**", "5, definitely not 6", "5, and certainly not 6"; a percent or degree sign or a
# unit's words (four at most) between too ("25%, not 30%", "12 points, not 13", "20 square feet (not 24)", "60 km/h, not
# 50", "3 cups of flour, not 4"); the value before states the answer (as "The answer is 51, not 49" does); not Spanish's
# bare "no" before a value after a comma alone, English's self-correction too ("3, no 4": 4; after a joint word it
# denies: "3 y no 4", "3, pero no 4": 3, ``_DENIAL_JOINTS``); the values that "not" and a verb in -ing after it open
# an aside on are none too (``_NOT_DOING``). A unit may be a sign after the value ("25 € et non 30 €") or a Chinese or
# Japanese counter or unit, up to six characters, no space before ("小明有5个苹果，而不是3个", "12元，而不是15元",
# "60千米每小时，不是50千米每小时", "60千米/小时"), or a Bengali counter ("মোট 12টি, 10টি নয়", ``_BN_COUNTER``); a
# space alone sets "not" (and its word in German, Russian, Swahili and Thai) apart too, a unit of two words at most
# between and no verb ("15 apples not 20", "50 nicht 49", "ได้ 50 ไม่ใช่ 10"; not "15 is not 20": ``_SPACE_APART``); in
# the languages that deny after the value, and after English's verdict on a value, the value set apart before the
# denied one states the answer ("合計は50個で、60個ではない", "মোট 50, 60 নয়", "x = 50, 60 is wrong": 50, ``_NOT_AFTER``,
# ``_WRONG_AFTER``; the match ends where the denied value starts); a bracket is a round or square one ("7 [not 9]"),
# and a hyphen or two spaced as a dash set a denial apart as a dash does ("7 - not 9", "7 -- not 9"; not a value
# denied after it: "50 - 60 is wrong" may be an expression's)
_APART_BY = r"[,(\[\u2013\u2014\u3001]"
_DASH_APART = r"[^\S\n]+--?[^\S\n]+"
# "not" and a verb in -ing after a value so set apart deny no value: they open an aside whose values qualify the one
# before ("12 apples, not counting the 3 eaten", "$50, not including tax of $4", "€40, not including the €5 fee", "5 (not
# using the 2 shortcuts)"), and those are none, to the aside's end (``_ASIDE_END``); a noun in -ing is no verb: no vowel before its "ing" ("thing",
# "string", "bring"), "morning", "evening" ("x = 5, not string 6": 6); an aside's value comes within three words of
# its verb ("not counting the farmer's 2 legs"), else no aside qualifies the value before: an opening phrase does, the
# comma that ends it left out ("After 3 days, not counting Sunday she had saved $45": 45)
_NOT_DOING = (r"(?P<aside>not[^\S\n]+(?![b-df-hj-np-tv-xz]+ing(?![\w-])|(?:morn|even)ing(?![\w-]))"
              r"[^\W\d_]{2,}ing(?![\w-])(?=(?:[^\S\n]+[^\W\d_][^\s\d]*){0,3}[^\S\n]+[$(" + _CURRENCY_AFTER + r"]?-?\.?\d))")
# an aside ends at a clause's punctuation, a colon, "=", an arrow, a sentence's dash, "so" or words that give a result
# ("12, not counting 3 → 9", "12, not counting the 3 eaten: 9 left", "20, not counting 5 lost = 15", "… so 9 remain",
# "30 minutes, not including the 10 minute break which makes 40", "… making 40", "… for a total of 40": 9, 9, 15, 9, 40),
# or "and" after a word before a value that a verb, a unit's word between, makes the subject of a new clause ("12, not
# counting the 3 eaten and 9 remain", "… and 9 apples are left": 9; ``_SUBJECT_VERB``; not "… the 3 eaten and 2 lost",
# nor "… the 3 eaten and 2 of them were rotten", whose "them" may be the aside's, nor "not counting 3 and 4 is 7", a
# value before "and" listing the aside's); ``_ASIDE_STOP`` all but that "and" (a reason's end, ``_REASON_END``)
_ASIDE_STOP = (r"[,;:=!?()\[\]\n\u2013\u2014\u2192\u21d2]|->|\.(?!\d)|\b(?:so|(?:which|that)\s+(?:makes|gives|brings|"
               r"leaves|means)|making|giving|bringing|leaving|for\s+a\s+total)\b")
_ASIDE_END = re.compile(rf"{_ASIDE_STOP}|"
                        rf"(?<=[^\W\d_][^\S\n])and[^\S\n]+(?=(?:{_NUMBER.pattern})(?:[^\S\n]+[^\W\d_]+)?{_SUBJECT_VERB})",
                        re.IGNORECASE)
# a joint and the space after it (none needed after one of a script written without spaces: "50，而不是49"), and the
# space before it too (none before one of such a script: "50而不是49")
_AND_BUT = rf"(?:{'|'.join(_DENIAL_JOINTS.values())})(?:[^\S\n]+|(?<=[{_UNSPACED}])[^\S\n]*)"
_SPACED_AND_BUT = rf"(?:[^\S\n]+|(?=[{_UNSPACED}])){_AND_BUT}"
# a denial a space alone sets apart from the value before it ("The answer is 15 not 20", "50 nicht 49", "50 не 49",
# "Jibu ni 50 sio 49", "50 si 49", Thai's "ได้ 50 ไม่ใช่ 10": 50); not Spanish's "no", an answer too ("3 no 4"), nor
# French's "pas" or "non" alone (its "et non" joins), nor Chinese's (no space: "答案是50不是49")
_SPACE_APART = "|".join(_REMARKS[language][0] for language in ("en", "de", "ru", "sw", "th"))
# a unit so set apart: a sign, or two words at most, none a verb or a word of prose ("15 apples not 20", "$15 not $20",
# "15% not 20%", "6 km/h not 7"; not "15 is not 20", "15 which is not 20", "15 or not 20": nothing said of 20 as the
# answer)
_PROSE_WORD = (r"[^\S\n]+(?:is|are|was|were|be|been|has|have|had|equals?|makes?|gives?|ist|sind|war|ni|это|"
               r"or|nor|and|if|than|only|more|less|least|most|at|to|of|in|for|from|per|with|so|as|that|this|it|"
               rf"which|where|when|since|because|then|also|{_REASONS})(?![\w-])")
_ADVERBED = rf"(?:(?:{_ADVERBS})[^\S\n]+)?"  # an adverb before the denial ("5, and certainly not 6")
# (looked for first: a line with none, most, denies nothing so; one blank before a joint, not a run: searched for, a run
# was read from each of its blanks)
_SET_APART = re.compile(rf"{_APART_BY}|(?:[^\S\n]|(?=[{_UNSPACED}])){_AND_BUT}|[^\S\n](?:{_SPACE_APART})",
                        re.IGNORECASE)
# a unit's word's letters, Thai's vowel and tone marks among them (no letters to "\w": "12 ลูก ไม่ใช่ 10 ลูก", "ชิ้น")
_LETTERS = r"(?:[^\W\d_]|[\u0e31\u0e34-\u0e3a\u0e47-\u0e4e])+"
_VALUE_SIGN = rf"(?:\\?%|[^\S\n]?\u00b0[CFK]?|[^\S\n]?[{_CURRENCY_AFTER}])?"  # "25%", "15°", "20 °C", "25 €"
_UNITS_WORD = rf"[^\S\n]+{_LETTERS}(?:/{_LETTERS})*"  # "apples", "km/h"
# a verdict after a value that denies it, as a denial after the value does, a unit's word between too ("x = 2, 3 is
# wrong", "The answer is 2, 3 is incorrect.", "6 hours, 5 hours is wrong": 2, 2, 6; not "3 is correct", nor "2 + 3 is
# wrong": an expression, no value set apart, nor "3 is wrong?": asked)
_WRONG_AFTER = (rf"(?:{_UNITS_WORD})?[^\S\n]+(?:is|was)[^\S\n]+(?:wrong|incorrect|not[^\S\n]+(?:right|correct))"
                r"(?![\w-]|[^\S\n]*\?)")
# a value's unit and a space, then a denial, the space alone setting it apart (``_SPACE_APART``): looked ahead for,
# the group "spaced" set where it is found; the space alone sets a denial apart only then ("(?(spaced)…)"), the group
# "alone" set where it does (an aside so opened ends with its value, ``_denied_after``)
_SPACED_DENIAL = rf"{_VALUE_SIGN}(?:(?!{_PROSE_WORD}){_UNITS_WORD}){{0,2}}[^\S\n]+(?:{_SPACE_APART})"
_VALUE_THEN_DENIAL = re.compile(rf"(?<=[\d$*])(?:(?={_SPACED_DENIAL})(?P<spaced>)|)"
                                rf"(?P<unit>{_VALUE_SIGN}(?:(?:{_UNITS_WORD}){{0,4}}|[{_UNSPACED}][{_UNSPACED}/]{{0,5}}|{_BN_COUNTER}))"
                                rf"(?:(?:(?:[^\S\n]*{_APART_BY}[^\S\n]*|{_DASH_APART})(?:{_AND_BUT}|(?!{_ADVERBED}{_NOT_OR_ANSWER}\s+[-.$\\\d]))|"
                                rf"{_SPACED_AND_BUT}|(?(spaced)(?P<alone>[^\S\n]+)(?={_SPACE_APART})|(?!))){_ADVERBED}"
                                rf"(?:{_DENIAL.pattern}|(?:{_NOT})\s+\*\*(?=\$?-?\.?\d)|{_NOT_DOING})|"
                                rf"[^\S\n]*{_APART_BY}[^\S\n]*(?=(?:{_NUMBER.pattern}){_NOT_AFTER.pattern}|\$?(?:{_NUMBER.pattern}){_WRONG_AFTER}))",
                                re.IGNORECASE)
# what joins two dollar amounts (``_amounts``): a comma, "and" or "or" (any language's), an operator, or a range's en
# or em dash or "to" ("$50–$60", "$50—$60", "$50 to $60": read as written, as "50–60" and "50 to 60" are)
_AMOUNT_JOINT = re.compile(rf"[^\S\n]*,?[^\S\n]*(?:(?:{_AND_WORDS}|{_AND_NUMBERS})[^\S\n]+|"
                           r"(?P<operator>[-+*/=\u00d7\u00f7\u2013\u2014]|to(?=[^\S\n]))[^\S\n]*)?", re.IGNORECASE)
_SPAN_OPEN = re.compile(r"\$|\\\(")
# what may stand between a marker and its answer: "Answer: 50", "**Answer:** 50", "#### 50", and a comma ("La respuesta
# es, 50", "答案是，50", "答えは、50です")
_MARKER_JOINT = " \t\n*:#,\u3001"
# after that comma, an aside in words up to the next one ("The answer is, therefore, 12", "is, I think, 42", "es, por
# supuesto, 12", "is, after adding the 3 apples, 12"; not a value: "is, 8 cookies, and 2 left", nor math: "is, x = 5")
_ASIDE = re.compile(r"(?=[^\W\d_])(?=[^,\u3001\n]*?[^\W\d_]{2})[^,\u3001\n$\\=]+[,\u3001][ \t*]*")


def _negated(denial: re.Pattern) -> str:
    """A negated verb after a language's answer word, as its "is" is: a ``denial`` (``_DENIALS``: its language's) and its
    value, or a value and a denial after it ("La respuesta no es 49", "Ответ не 49", "答案不是49", "উত্তর 49 নয়";
    English's "is" before "n't 49"); the marker ends before it, ``_remark`` reads it."""
    return rf"(?=[\s*]*(?:{denial.pattern}|(?:{_NUMBER.pattern}){_NOT_AFTER.pattern}))"


# (the spaced words under one look at their first letters, then _APART; the ones opening a line under one "^")
_MARKER = re.compile(rf"(?:final\s+answer|the\s+answer)[\s*]*(?:is{_ADVERB}|is{_negated(_DENIAL)}|:|=)|^(?:[^\S\n]|[*#>-])*answer[\s*]*(?:is{_ADVERB}|:|=)|"
                     r"####|" + _opening(*(opener or words[0] for words, _, opener in _SPACED.values())) + _APART + "(?:"
                     + "|".join(rf"{opener}(?:{'|'.join(words)})(?:[\s*]*(?:{is_}){_ENDS}|{_negated(_DENIALS[language])})"
                                for language, (words, is_, opener) in _SPACED.items()) + ")|"
                     + "|".join(rf"(?:{'|'.join(words)})(?:[\s*]*(?:{is_})|{_negated(_DENIALS[language])})"
                                for language, (words, is_, opener) in _ANSWER_ABROAD.items() if opener is None)
                     + r"|^(?:[^\S\n]|[*#>-])*(?:final\s+answer[\s*]*$|"  # a heading: "### Final Answer", the answer below it
                     + "|".join(rf"(?:{'|'.join(words)})(?:[\s*]*(?:(?:{is_}){_ENDS}|:|=)|{_negated(_DENIALS[language])})"
                                for language, (words, is_, _) in _ANSWER_ABROAD.items()) + ")",
                     re.IGNORECASE | re.MULTILINE)


def _closing(text: str, i: int) -> int | None:
    """Index of the brace closing the one at ``text[i]``."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return None


def last_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` (or ``\\fbox{...}``), braces balanced."""
    start = max(text.rfind("\\boxed"), text.rfind("\\fbox"))
    if start < 0:
        return None
    i = text.find("{", start)
    if i < 0 or text[start:i].strip() not in ("\\boxed", "\\fbox"):
        rest = text[start + len("\\boxed"):].strip().split()
        return rest[0].strip("$.") if rest else None
    j = _closing(text, i)
    return text[i + 1:j] if j is not None else None


_CURLY = re.compile(r"\{\s*final\s+answer\s*:", re.IGNORECASE)


def last_curly(text: str) -> str | None:
    """Content of the last ``{final answer: ...}`` (the paper's answer format), braces balanced."""
    found = list(_CURLY.finditer(text))
    if not found:
        return None
    j = _closing(text, found[-1].start())
    return text[found[-1].end():j].strip() if j is not None else None


def _strip_confidence(text: str) -> str:
    """``text`` folded (``fold``: "Ｃｏｎｆｉｄｅｎｃｅ" is "Confidence") without the confidence ending a line."""
    return _CONF_TAIL.sub("", fold(text or ""))


def parse_confidence(text: str) -> int | None:
    """The score 1-10 (``signals.confidence_score``) of the last ``Confidence: <score>`` in a response (folded, as
    ``_strip_confidence`` reads it)."""
    found = [m.group("value") for m in _CONFIDENCE.finditer(fold(text or ""))]
    return confidence_score(found[-1]) if found else None


def _clause(t: str, prose: bool = True) -> str:
    """``t`` up to the end of its first sentence or, with ``prose``, clause (", <word>", a
    connective word, "and"/"or" before a word after a number, or a word of another script unless a list goes
    on after it) at bracket depth 0: "4, which is even", "4 and we are done" and "4 и мы" are "4", "(1, 2)",
    "2 and 3" and "18 яблок и 3 груши" stay whole."""
    if not _CLAUSE_END.search(t):  # nothing to cut at (a bare "42", "x^2+1"): not read a character at a time
        return t
    depth = resume = 0  # (after a list's unit and "and", gone over: a run of words is scanned once)
    first = _DIGIT.search(t)
    digit = first.start() if first else len(t)  # where the first number may start: looked for once
    for i, c in enumerate(t):
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth = max(depth - 1, 0)
        elif depth or (i and t[i - 1] == "\\"):  # inside brackets, or "\!", "\;", "\,"
            continue
        elif c in "!?;" or (c == "." and (i + 1 == len(t) or t[i + 1].isspace())
                             and not _ABBREVIATION.search(t, max(i - _ABBREVIATION_BACK, 0), i)):
            return t[:i]
        elif prose and c in ",\u3001" and _NEXT_CLAUSE.match(t, i + 1) and not _comma_lists_on(t, i):
            return t[:i]
        elif prose and c.isspace() and i > resume:
            if _CONNECTIVE.match(t, i) or _and_clause(t, i, digit):
                return t[:i]
            if _OTHER_SCRIPT.match(t, i + 1):
                if not (goes_on := _LIST_GOES_ON.match(t, i)):
                    return t[:i]
                resume = goes_on.end()
    return t


def _comma_lists_on(t: str, i: int) -> bool:
    """Whether "and" and a number after the comma ``t[i]`` go on with the list, not the next clause: the item after
    it is as the one before, a number that ends its clause with the unit of the one before or none ("1, 2, and 3",
    "2 cm, and 3 cm", "18个，和3个", "1, 2, and 3 respectively"; not "18, and 18 is even", "7, and 7 + 3 = 10", nor
    "8 cookies, and 2 left": words of another unit may be a clause's); after the enumeration comma "、", which lists
    only, any item does ("18個、と3個です", "18个、和3个梨"). "Or" after a comma lists on only between plain numbers of one
    form and unit ("50, or 51", "1, 2, or 3"), else restates ("1/2, or 0.5", "2 dozen, or 24": ``_restated``). A dollar
    sign opens the item after where one opens the item before ("$50, or $51", "$1/2, or $0.50": as "50, or 51")."""
    if not (joint := _COMMA_AND.match(t, i)):
        return False
    if not (number := _NUMBER.match(t, joint.end() + _dollar_listed(t, i, joint))):
        return False
    if t[i] == "\u3001":
        return True
    start = i  # the unit of the item before: the letters back to its number
    while start and (t[start - 1] in " \t" or _UNIT_CHAR.match(t[start - 1])):
        start -= 1
    end = number.end()
    while end < len(t) and (t[end] in " \t" or _UNIT_CHAR.match(t[end])):
        end += 1
    unit = _RESPECTIVELY.sub("", t[number.end():end])  # "and 3 respectively": no unit
    if not (start > 0 and t[start - 1].isdigit() and _ITEM_END.match(t, end) is not None):
        return False
    after = [word.casefold() for word in _UNIT_WORD.findall(unit)]
    before = [word.casefold() for word in _UNIT_WORD.findall(t, start, i)]
    if _COMMA_OR.fullmatch(joint.group()):  # "or": the same unit, and no number restated ("1/2, or 0.5")
        return after == before and not _restated(_OR_ITEM.search(t, max(start - 32, 0), start), number.group())
    return after in ([], before)


def _dollar_listed(t: str, i: int, joint: re.Match) -> bool:
    """Whether a dollar sign opens the item after the comma ``t[i]`` and its joint as one opens the number before it."""
    return t.startswith("$", joint.end()) and (before := _OR_ITEM.search(t, max(i - 32, 0), i)) is not None and (
        t.startswith("$", before.start() - 1))


def _restated(before: re.Match | None, number: str) -> bool:
    """Whether ``number``, after a comma and "or", gives the number ``before`` it again, not the next item of a list
    ("50, or 51", "1, 2, or 3"): the same one ("4 apples, or 4"), one of another form ("1/2, or 0.5", "50%, or 0.5",
    "5, or 5.0"), or after no plain number ("2^3, or 8")."""
    return (before is None or before.group() == number
            or _DIGIT_RUN.sub("0", before.group().lstrip("-")) != _DIGIT_RUN.sub("0", number.lstrip("-")))


def _and_clause(t: str, i: int, digit: int) -> bool:
    """Whether "and"/"or" after the space ``t[i]`` opens the next clause (``_AND_CLAUSE``): a word
    that is no math's follows, and a number comes before (``t``'s first digit is at ``digit``: looked for once, not
    from the start at each "and", which read a reply of words looping "… y no …" in time growing with its square)."""
    found = _AND_CLAUSE.match(t, i)
    return bool(found) and found.group(1).lower() not in _MATH_WORDS and digit < i


def _math_span(t: str) -> str | None:
    """The content of the ``$...$``/``\\(...\\)``/``\\[...\\]`` span that opens ``t``, if any,
    with the spans listed after it ("$8$, $4$" or "$2$ and $3$" → "8,4", "2,3")."""
    parts, i, ored = [], 0, False
    while True:
        for open_, close in _DELIMS:
            if t.startswith(open_, i):
                end = re.compile(r"(?<!\\)" + re.escape(close)).search(t, i + len(open_))  # "\$" is a dollar
                break
        else:
            end = None
        if end is not None and open_ == "$" and _currency(t[i + 1:end.start()]):
            # "$18 per day, ... at $2": dollars, not a math span; the amount is the answer
            return ",".join([*parts, _NUMBER.match(t, i + 1).group()])
        if end is not None and open_ == "$" and not parts and (joint := _amounts(t, i, end.end())):
            if joint.group("operator") or _amounts_end(t, end.end()):
                return None  # "$50, or $51", "$50 + $20 = $70": dollars, read as "50, or 51" is
            return _NUMBER.match(t, i + 1).group()  # "$50 and $5 is the tip": the amount before is the answer
        if end is None:
            return _listed(parts, ored) if parts else None
        parts.append(t[i + len(open_):end.start()])
        joint = _SPAN_JOINT.match(t, end.end())
        if not joint:
            return _listed(parts, ored)
        i, ored = joint.end(), ored or "or" in joint.group()


def _listed(parts: list[str], ored: bool) -> str:
    """Spans listed as one answer: a comma list, each item's thousands separators dropped first ("$1,200$ and $1,300$"
    is `1200,1300`, ``_ungroup``), but inequalities of one variable listed with "or" keep it ("$x<2$ or $x>3$" is a
    union, see ``_union``)."""
    parts = list(map(_ungroup, parts))
    return " or ".join(parts) if ored and _union(" or ".join(parts)) != " or ".join(parts) else ",".join(parts)


def _currency(span: str) -> bool:
    """Whether a "$...$" span is two dollar amounts and the prose between them: it starts with
    a number and runs over a line break or through words."""
    return bool(re.match(r"\d", span)) and ("\n" in span or _PROSE.search(span) is not None)


def _amounts(t: str, i: int, close: int) -> re.Match | None:
    """The joint between two dollar amounts where the "$" at ``t[i]`` and the one ending at ``t[close]`` are their signs:
    a number after each, a list's joint or an operator between ("$50, or $51", "$50 and $51", "$50 + $20"; no math
    span ends where a number follows); None where they are not."""
    if (number := _NUMBER.match(t, i + 1)) and _DIGIT.match(t, close + t.startswith(".", close)):
        return _AMOUNT_JOINT.fullmatch(t, number.end(), close - 1)
    return None


def _amounts_end(t: str, close: int) -> bool:
    """Whether the amount after the "$" ending at ``t[close]``, and the amounts listed after it, end their item ("$50,
    or $51.", "$5, $6 and $7", "$50 and $51 respectively"), as a list's last item does, not words of the clause ("$50
    and $5 is the tip")."""
    while number := _NUMBER.match(t, close):
        if not t.startswith("$", (joint := _AMOUNT_JOINT.match(t, number.end())).end()):
            return _LIST_END.match(t, number.end()) is not None
        close = joint.end() + 1
    return False


def _after_marker(tail: str) -> str:
    """The expression after "the answer is": a math span if one opens it, else the bold part
    of its line or its first sentence, cut at its first clause; a value a denial of another follows states the answer
    ("50 — not 49", "$18, not $19", "**50** (not 49)": 50, as "51, not 49" is 51; ``_VALUE_THEN_DENIAL``), and so does
    the value before a bracket the denial is in ("12 (since 3 × 4 = 12, not 13)": 12), or the value a bracket opening the answer holds ("(5, not 6)": 5)."""
    t = tail.lstrip(_MARKER_JOINT)
    if t[:1].isalpha() and (currency := _CURRENCY_AMOUNT.match(t)):  # "Rs 500", "dola 6, sio dola 5": the amount
        t = t[currency.end():]
    line = t.split("\n", 1)[0]
    if _SET_APART.search(line) and (denial := _VALUE_THEN_DENIAL.search(line)):
        stated = line[:denial.end("unit")]  # its unit kept: "4:30 pm, not 5:30 pm"
        if (opened := _left_open(stated)) is not None:  # "(5, not 6)": what the bracket opening it holds
            stated = stated[:opened] if _DIGIT.search(stated, 0, opened) else stated[1:] if opened == 0 else ""
        if stated:
            t = line = stated
    if (span := _math_span(t)) is not None:
        return span
    if (marks := line.count("**")) % 2 and marks > 1:  # "**50** or **51**": the "**" opening its first bold part went
        line = "**" + line  # with the marker's joint (a lone one closing stays as it read: "**Answer: 50** or 51")
    if marks < 2 or not (bold := list(_BOLD.finditer(line))):  # (no bold part sought in a line with none: most)
        return _prose_value(_clause(line, prose=False))
    first = len(bold) - 1  # the last bold part, with the ones it lists ("**50** or **51**" as "50 or 51")
    while first and _BOLD_JOINT.fullmatch(line, bold[first - 1].end(), bold[first].start()):
        first -= 1
    return _prose_value(line[bold[first].start():bold[-1].end()].replace("**", ""))


def _left_open(t: str) -> int | None:
    """Where the first bracket ``t`` leaves open is ("12 (since 3" opens one at 3), if one is."""
    opened: list[int] = []
    for i, c in enumerate(t):
        if c in _OPEN:
            opened.append(i)
        elif c in _CLOSE and opened:
            opened.pop()
    return opened[0] if opened else None


def _prose_value(line: str) -> str:
    """The value a sentence states: after its last verb ("The value of x is 2"), else its
    first number when it is words ("You can make 240 outfits"), else its first clause."""
    if _PROSE.match(line) and (verbs := list(_VERB.finditer(line))):
        line = line[verbs[-1].end():].lstrip()
        if (span := _math_span(line)) is not None:
            return span
    line = _EMPHASIS.sub("", line)
    if _PROSE.match(line) and (number := _NUMBER.search(line)):
        return number.group()  # "can pick 210 groups of 3 boys": qualifiers come after
    return _clause(line).strip()


class _Denial(str):
    """What ``_marked`` reads where a reply denies a value and states none ("The answer is not 49."):
    no answer at all, not its last number (49)."""


_DENIED = _Denial()


def _marked(text: str, math: bool = True) -> str | None:
    """The answer after the last "the answer is"/"Answer:"/"####", cut at the end of its
    expression (``math``) or of its sentence. A math marker followed by a remark on the answer
    (``_remark``) states the answer later in the remark's sentence ("The answer is incorrect, it is
    50.", "The answer is not 49, it is 50.", "is correct: 50"), or else marks none ("Answer: 49. The
    answer is incorrect.", "is correct because 3 + 4 = 7"): the one before it does; a denied value states
    the answer the next sentence restates ("The answer is not 49. It is 50.", ``_corrected``), and with
    none, and no marker before it that states one, is no answer (``_DENIED``)."""
    found = list(_MARKER.finditer(text))
    if not math:
        return _clause(text[found[-1].end():].lstrip(_MARKER_JOINT).split("\n", 1)[0], prose=False) if found else None
    ends = [m.start() for m in found[1:]] + [len(text)]  # an earlier marker's answer ends at the next marker
    denied = False
    for marker, end in zip(reversed(found), reversed(ends)):
        tail = _past_joint(text[marker.end():end])
        line = tail.split("\n", 1)[0]
        if (remark := _remark(line, marker.group(), tail)) is None:
            return _after_marker(tail)
        rest, denial = remark
        for value in (_stated(rest), denial and _corrected(tail[len(line) - len(rest):], marker.group())):
            if value and normalize_math(value):
                return value
        if denial.lower() == _NOT_OR_ANSWER and _sentence(rest):  # "no 5 is prime", no answer stated after it:
            return _after_marker(tail)  # the answer; "no 49." ending its sentence denies 49
        denied = denied or bool(denial)
    return _DENIED if denied else None


def _past_joint(tail: str) -> str:
    """What follows a marker (``tail``) from its answer on: past the joint (``_MARKER_JOINT``) and, after a comma, an
    aside (``_ASIDE``) where no words but a remark follow it ("The answer is, therefore, 12", "is, however, wrong.",
    "is, in fact, not 49"), not where words do ("The answer is, yes, because …": yes)."""
    t = tail.lstrip(_MARKER_JOINT)
    if (aside := _ASIDE.match(t)) and tail[:len(tail) - len(t)].rstrip(" \t*").endswith((",", "\u3001")):
        rest = t[aside.end():]
        if not _IN_WORDS.match(rest) or _VERDICT.match(rest) or _DENIAL.match(rest):
            return rest
    return t


def _language(marker: str) -> str | None:
    """The language whose answer word a marker names ("La respuesta es": "es"), None for English's ("The answer is")."""
    return next((language for language, word in _LANGUAGE.items() if word.search(marker)), None)


def _remark(line: str, marker: str = "", tail: str = "") -> tuple[str, str] | None:
    """The rest of ``line`` (what follows "the answer is") after the remark on the answer that opens
    it, and the word denying a value where the remark denies one: "not 49" (a number or math span), "49ではない", else ""
    for a verdict that ends its clause ("correct.", "wrong, …", "incorrect because …", "given in …", not
    "right angle"); None where no remark opens it. A denial before the value is in the language of the ``marker``'s
    answer word (``_DENIALS``), any language's after English's: each is one of any language's (``_DENIAL``), which
    is looked at first (most lines open with no denial: no marker's language is sought for them). A denial after the
    value is never ASCII (``_NOT_AFTER``): an ASCII line (most) is read for no value there; after a list it denies the
    whole list where "and" or "or" joins it or the answer is stated after it, else the last item only (no remark: "答えは
    49、50ではない" is 49); ``tail``, the text the line opens, is read for a correction on the next
    line too ("49、50ではない", then "51だ": 51)."""
    if (denial := _DENIAL.match(line)) and (language := _language(marker)) is not None:
        denial = _DENIALS[language].match(line)
    if denial:
        if value := _value_at(line, denial.end()):
            return line[_denied_list(line, value):], denial.group().strip()
    elif not line.isascii() and (value := _value_at(line, 0)):  # "49ではない", a list's last item "49と50ではない"
        end, listed = _list_after(line, value)
        # commas alone, as ``_denied_list``: all denied where the answer is stated after, in the sentence or the next
        # ("49、50ではなく51です"), else the last item only ("49、50ではない": 49, not 50; ``_NEXT_CLAUSE`` ends it there)
        if (denial := _NOT_AFTER.match(line, end)) and (end == value or listed or _stated(line[denial.end():])
                                                         or _corrected((tail or line)[denial.end():], marker)):
            return line[denial.end():], denial.group().strip()
    if verdict := _VERDICT.match(line):
        rest = line[verdict.end():]
        if re.match(r"\s*(?:[^\w\s$\\]|$)", rest) or _CONNECTIVE.match(rest) or _REASON.match(rest):
            return rest, ""
    return None


def _value_at(line: str, i: int) -> int | None:
    """Where the number or math span at ``line[i]`` ends ("49", "$49$", not dollars: "$49, it is $50", "$49 or $50"; a
    sign before the number too: "€49"), if one is there."""
    span = _LAST_SPAN.match(line, i)
    dollars = span and (_currency(span.group(1) or "") or _amounts(line, i, span.end()))
    value = span if span and not dollars else _NUMBER.match(line, i + line.startswith(("$", *_CURRENCY_AFTER), i))
    return value.end() if value else None


def _denied_list(line: str, value: int) -> int:
    """Where the denial of the value ending at ``line[value]`` ends: after the list the value opens where "and" or "or"
    lists it ("not 5, 6, and 7 but 8" denies 5, 6 and 7: the answer is 8; "not 5 or 6." states none), or where commas
    alone list it and the sentence states the answer after the list ("not 5, 6 but 8"); else at the value, so that
    the value after a comma states the answer ("not 49, 50." is 50). Chinese's and Japanese's "、" only lists, as "and"
    does ("答案不是49、50" denies both; "答案不是49，50", its comma, is 50)."""
    end, listed = _list_after(line, value)
    return end if end != value and (listed or "\u3001" in line[value:end] or _stated(line[end:])) else value


def _list_after(line: str, value: int) -> tuple[int, bool]:
    """Where the list the value ending at ``line[value]`` opens ends (``_DENIED_JOINT``; a Japanese counter or unit after
    an item: "49個と50個"), and whether "and" or "or" lists it."""
    end, listed = value, False
    while (joint := _DENIED_JOINT.match(line, end)) and (item := _value_at(line, joint.end())):
        end, listed = item, listed or joint.group("and") is not None
    return end, listed


def _corrected(after: str, marker: str) -> str | None:
    """The answer the sentence after a denial's restates ("The answer is not 49. It is 50."), read as after
    "the answer is"; ``after`` is the text from the end of the denied value on, ``marker`` the one before the denial
    (its language's words restate, ``_CORRECTIONS``). None where the next sentence opens otherwise ("It is the
    largest.")."""
    correction = _CORRECTIONS.get(_language(marker), _CORRECTION)
    return _after_marker(after[m.end():]) if (m := correction.match(after)) else None


def _sentence(rest: str) -> str:
    """What the sentence goes on with after a remark's value or verdict (``rest``), its joint (", ", ": ") dropped."""
    return _clause(rest[_REMARK_JOINT.match(rest).end():], prose=False).strip()


def _stated(rest: str) -> str | None:
    """The answer stated after a remark on it, in the remark's sentence: what opens it, read as after
    "the answer is" (": $\\frac{1}{2}$", ", x+1"), or in words its first math span or number (", it is
    50", " but 50"); none after a reason ("because 3 + 4 = 8") or where the sentence ends."""
    rest = rest[_REMARK_JOINT.match(rest).end():]
    if _REASON.match(rest) or not (sentence := _sentence(rest)):
        return None
    if not _IN_WORDS.match(sentence):
        return _after_marker(rest)
    number, span = _NUMBER.search(sentence), _SPAN_OPEN.search(sentence)
    if span and (number is None or span.start() <= number.start()) and (value := _math_span(sentence[span.start():])):
        return value
    return number.group() if number else None


# Characters that write ASCII ones unambiguously, in any script: full-width forms ("５０", "－５", "３．５",
# "（Ｂ）", as NFKC has them), any script's decimal digits ("٥٠", "५०"), the minus sign ("−5"), Arabic's
# decimal and thousands separators ("١٫٥", "١٬٠٠٠"), the ideographic full stop ("50。") and vulgar fractions
# ("½"; "1½" is the mixed number 1 1/2), and the danda that ends a Bengali sentence ("11।"). Not a locale's "1.234" (a thousand or a decimal), nor the en dash
# (a range: "3–5"), nor superscripts in a reply (units: "5 m²"; see ``_SUPERSCRIPT`` in an answer).
_FOLDED = re.compile(r"[\u00bc-\u00be\u2150-\u215e\uff01-\uff5e\u3000\u3002\u0964\u2212\ufe63\u066b\u066c]|[^\D0-9]")
_FOLDS = {"\u3002": ". ", "\u0964": ". ", "\u2212": "-", "\ufe63": "-", "\u066b": ".", "\u066c": ","}


def _fold_char(m: re.Match) -> str:
    c = m.group()
    if c.isdecimal():
        return str(unicodedata.decimal(c))
    folded = _FOLDS.get(c) or unicodedata.normalize("NFKC", c)
    if "\u2044" in folded:  # a vulgar fraction; after a whole number, a mixed number ("1½" is 1 1/2, not 11/2)
        folded = folded.replace("\u2044", "/")
        return " " + folded if m.start() and m.string[m.start() - 1].isdecimal() else folded
    return folded


def fold(text: str) -> str:
    """``text`` with the characters ``_FOLDED`` lists as the ASCII they write."""
    return text if text.isascii() else _FOLDED.sub(_fold_char, text)


def extract_math(text: str) -> str | None:
    """Final math answer: last \\boxed{}, then {final answer: ...}, "the answer is"/"Answer:"/"####",
    last number."""
    text = _strip_confidence(text)  # folded: "−5" is -5, "５０" is 50, after a marker or not
    for find in (last_boxed, last_curly, _marked):
        if (candidate := find(text)) is _DENIED:
            return None
        if candidate is not None and (ans := normalize_math(candidate)):
            return ans
    # a list's "1." is no answer, but a reply that is "152." alone states 152; nor is a stated confidence's
    # number ("My confidence level is 9.")
    text = _STATED_CONFIDENCE.sub(" ", text)
    return _last_value(text if _ENUMERATOR.fullmatch(text.strip()) else _ENUMERATOR.sub("", text))


def _last_value(text: str) -> str | None:
    """The last number or inline math span of a response that marks no answer, a span with the
    spans listed before it ("the solutions are $x=1$ and $x=2$" → "1,2", as after "the answer is"); not one a
    value before it denies ("It is 51, not 49 or 50.": 51, ``_denied_after``)."""
    found: list[tuple[int, str | int]] = [(m.end(), m.group()) for m in _NUMBER.finditer(text)]
    found += [(m.end(), m.group(1)) for m in _BOLD.finditer(text)  # "The answer **204_5** is correct."
              if re.search(r"\d", m.group(1)) and not re.search(r"(?<!\\)[A-Za-z]{2}", m.group(1))]
    matches = list(_LAST_SPAN.finditer(text))
    spans = [m.group(1) or m.group(2) for m in matches]
    first = list(range(len(spans)))  # the first span of the list that ends with each span
    ored = [False] * len(spans)  # whether "or" lists it after the one before
    for i in range(1, len(spans)):
        if (joint := _SPAN_JOINT.match(text, matches[i - 1].end())) and joint.end() == matches[i].start():
            first[i], ored[i] = first[i - 1], "or" in joint.group()
    found += [(m.end(), i) for i, m in enumerate(matches) if re.search(r"\d", spans[i])]  # joined when tried
    found += [(m.end(), m.group()) for m in _CLOCK.finditer(text)]  # "4:30 pm", not 30
    stated: set[int] = set()
    if denied := _denied_after(text):
        stated = {value for value, _, _ in denied}
        starts, ends = _merged([(start, end) for _, start, end in denied])  # (one look each: each value against each
        # denial took 10 s on 60 kB of them)
        found = [f for f in found if not (i := bisect.bisect_left(starts, f[0])) or f[0] > ends[i - 1]]
    for end, candidate in sorted(found, key=lambda f: f[0], reverse=True):  # no two end at one place
        if isinstance(candidate, int):
            candidate = _listed(spans[first[candidate]:candidate + 1], any(ored[first[candidate] + 1:candidate + 1]))
        elif end in stated and (listed := _LISTED_BEFORE.search(text, max(0, end - _LISTED_REACH), end)):
            candidate = listed.group("list")  # "The answers are 2, 3, and not 4.": 2,3
        if ans := normalize_math(candidate):
            return ans
    return None


def _merged(spans: list[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """The starts and the ends of the spans ``(start, end]`` joined where they overlap, in order."""
    starts: list[int] = []
    ends: list[int] = []
    for start, end in sorted(spans):
        if ends and start <= ends[-1]:
            ends[-1] = max(ends[-1], end)
        else:
            starts.append(start)
            ends.append(end)
    return starts, ends


# a reason after the values a denial follows, a unit between too, is the denial's, to where an aside ends ("7 remain,
# not 9, because 2 were eaten": 7; "剩下7个，而不是9个，因为吃了2个。", no space after "因为": 7; "… as 2 were added, so
# he has 14": 14; ``_ASIDE_STOP``) or a joint opens the next clause (``_REASON_END``), as a reason after a remark is
# (``_REASON``); the bracket or dash that closes the denial may come before it, on its line or a comma's ("10 laps (not
# 8), since 2 were added", "6 hours — not 5 — since …", "(not 8),\nsince …": 10, 6, 10; not "(not 8)\nsince …", "(not
# 9)\n- since …"); a reply with no denial is read as before (its last value); a reason's word is a whole word ("12,
# not 10, was wrong" gives none: "as" ends "was")
_DENIAL_REASON = re.compile(rf"[{_COUNTER}]*(?:{_UNITS_WORD}){{0,2}}?(?:[,\s]*|(?:[,)\]}}\u2013\u2014-]|[^\S\n])*(?:,\s*)?)"
                            rf"(?:(?<![^\W\d_])|(?=[{_UNSPACED}]))(?:{_REASONS})(?:(?![\w-])|(?<=[{_UNSPACED}]))",
                            re.IGNORECASE)
# a reason ends where an aside does (not at "and" before a subject, ``_ASIDE_END``'s: the reason's own clause, below),
# or at a joint that opens the next clause, in any language ("… because he lost 2 and now he has 11", "… because 2 were
# eaten but then he found 4", "…, weil 2 gegessen wurden und dann …", "因为吃了2个然后买了5个", "因为吃了2个又买了5个",
# "เพราะกินไป 2 แล้วซื้อเพิ่ม 5": the values after are read); not "and" (``_AND_JOINT``) before a value, which goes on
# with the reason ("because 2 were eaten and 0 were added", "because there are 12 slices and 3 people", "… and $3 was
# spent": 7, 4, 7; "and now …", "and then …" end it), nor another joint between two values ("because 2 but 3 …"), nor
# "又" (again) before the reason's value ("因为她又买了2个"), nor a one-letter word ("y": a variable)
_AND_JOINT = r"and|und|et|и|na"
_REASON_VALUE = rf"[${_CURRENCY_AFTER}]?-?\.?\d"  # a value's first character after a reason's joint (``_REASON_END``, ``_REASON_AND``)
_CLAUSE_JOINT = r"but|then|aber|dann|pero|luego|mais|puis|но|потом|затем|lakini|kisha"
_UNSPACED_JOINT = rf"(?:(?<=\d)|(?<=\d[{_COUNTER}]))[又再]|然后|但是?|现在|所以|แล้ว|และ|แต่|จากนั้น|ดังนั้น"
_REASON_END = re.compile(rf"{_ASIDE_STOP}|(?<!\w)(?:(?<!\d[^\S\n])(?:{_CLAUSE_JOINT})|(?:{_CLAUSE_JOINT}|{_AND_JOINT})"
                         rf"(?![^\S\n]+{_REASON_VALUE}))(?!\w)|{_UNSPACED_JOINT}", re.IGNORECASE)
# … but where a result is stated after that "and" in the reason, the value is a new statement of the answer and the
# reason ends at the "and", as before it went on past one: after a joint that draws a result ("… and 3 were added,
# therefore he has 10", "… итого 10"), a result's word before a value ("… and 3 were added to make 10", "… to give a
# total of 10", "… which is 10", "… which equals 10", "… resulting in 10", "… to bring her total to 10", "… and 7 + 3
# is 10") or a value before a result's verb ("… and 10 remain", "… and 7 is right", "… for 10 in all"): 10, 7 or 10;
# not "and" between two values ("because he lost 2 and 11 are left": as before), nor
# a word that states no value, the reason's own ("3 of the remaining 5 were sold", "3 were added to make the pile
# bigger", "2 that is broken", "1 was left over from before", "3 people in total": the value before the denial is read)
_RESULT_JOINT = r"therefore|thus|hence|donc|итого|hivyo"
_RESULT_THEN = (r"(?:to\s+(?:make|get|reach|give|equal|total|bring|end\s+(?:up\s+)?with)|(?:which|that)\s+(?:is|equals)|"
                r"totall?ing|result(?:s|ing)\s+in|[-+*/\u00d7][^\S\n]*\d[\d,.]*[^\S\n]+(?:is|makes|gives|equals))"
                r"(?:\s+(?:it|up|to|us|exactly|just|only|a\s+total\s+of|(?:the|his|her|their)\s+total(?:\s+of)?)){0,2}|"
                r"in\s+(?:all|total)|"
                r"insgesamt|au\s+total(?:\s+de)?|pour\s+un\s+total(?:\s+de)?|"
                r"всего(?:\s+(?:стало|было|будет|получилось|получается))?|jumla(?:\s+(?:ya|ni))?")
_THEN_RESULT = r"remains?|(?:is|are)\s+(?:left(?:\s+over)?|correct|right|the\s+(?:final\s+)?answer)|left\s+over|übrig"
_REASON_AND = re.compile(rf"(?<!\w)(?<!\d[^\S\n])(?:{_AND_JOINT})[^\S\n]+(?={_REASON_VALUE})", re.IGNORECASE)
_REASON_RESULT = re.compile(rf"(?<![\w-])(?:(?:{_RESULT_JOINT})(?![\w-])|(?:{_RESULT_THEN})[^\S\n]+(?={_REASON_VALUE})|"
                            rf"for[^\S\n]+\$?\d[\d,.]*[^\S\n]+in[^\S\n]+(?:all|total)(?![\w-]))|"
                            rf"(?<![\w.,-])\$?\d[\d,.]*(?:[^\S\n]+(?!(?:was|were)(?!\w))[^\W\d_]+)?[^\S\n]+"
                            rf"(?:{_THEN_RESULT})(?![\w-])", re.IGNORECASE)


def _reason_result(text: str, start: int, end: int) -> int:
    """Where a reason from ``start`` to ``end`` ends instead: at the first "and" before a value, if a result is stated
    after it (``_REASON_RESULT``, the last one found in the reason: one look at each), or ``end``."""
    last = max((result.start() for result in _REASON_RESULT.finditer(text, start, end)), default=-1)
    joint = _REASON_AND.search(text, start, end)
    return joint.start() if joint and joint.start() < last else end


def _denied_after(text: str) -> list[tuple[int, int, int]]:
    """Where each value a denial of others follows ends, and where the values it denies are (``_VALUE_THEN_DENIAL``; a
    list as "or" or commas list it: "51, not 49 or 50", "51, not 49, 50"), from its denial's end to the list's (a
    clock time's whole: "not 5:30 pm"; a reason after it to its end, ``_DENIAL_REASON``), or to the end of the aside "not
    counting" opens (``_NOT_DOING``); commas alone list no value a verb follows ("30 students in the class, not 25, 12
    are girls": 12 is no denied one)."""
    denied = []
    aside = -1  # the end of the last aside: an aside that opens before it ends there too (one look for each end)
    for m in _VALUE_THEN_DENIAL.finditer(text):
        if m.group("aside") and m.group("alone") is not None:  # no comma to end it at punctuation: it ends with its
            denied.append((m.start(), m.end(), _NUMBER.search(text, m.end()).end()))  # value ("… of 5 which is 45")
        elif m.group("aside"):
            if aside < m.end():
                aside = stop.start() if (stop := _ASIDE_END.search(text, m.end())) else len(text)
            denied.append((m.start(), m.end(), aside))
        elif (value := _value_at(text, m.end())) and (end := _denied_items(text, m.end(), value)):
            end = clock.end() if (clock := _CLOCK_TAIL.match(text, end)) else end
            end += 2 * text.startswith("**", end)  # "not **16**"
            if reason := _DENIAL_REASON.match(text, end):
                end = stop.start() if (stop := _REASON_END.search(text, reason.end())) else len(text)
                end = _reason_result(text, reason.end(), end)
            denied.append((m.start(), m.end(), end))
    return denied


# a list a value a denial follows ends, stated: after a verb, "=" or ":" ("The answers are 2, 3, and not 4", "x = 2, 3
# but not 4": 2,3, as after "the answer is"; not "In 2023, 51 came, not 49": 51), looked for within a reach before it
_LISTED_BEFORE = re.compile(rf"(?:{_VERB.pattern}|[=:]\s*)(?P<list>(?:(?:{_NUMBER.pattern}){_LIST_JOINT})+"
                            rf"(?:{_NUMBER.pattern}))$", re.IGNORECASE)
_LISTED_REACH = 200


def _denied_items(text: str, start: int, value: int) -> int:
    """Where the list of denied values the value ``text[start:value]`` opens ends (``_list_after``), at the value where
    commas alone list a last item a verb follows, the subject of a new clause ("not 25, 12 are girls", "not 25, 12 of
    them were girls": ``_CLAUSE_VERB``), unless that item is the denied value again ("10, not 12, 12 is wrong": 10)."""
    end, listed = _list_after(text, value)
    verb = _CLAUSE_VERB.match(text, end + 2 * text.startswith("**", end))  # "not **49**, **50** were red"
    item = end - (value - start)  # where the last item starts if it is the denied value again (not "2, 12", "5, 0.5")
    again = text[start:value] == text[item:end] and text[item - 1] not in ".0123456789"
    return value if end != value and not listed and verb and not again else end


_MC_IS = r"(?i:(?:is|must\s+be|should\s+be)" + _ADVERB + "|" + _ANSWER_IS + r")[\s*:(\[]*"
_MC_MARKED = re.compile(  # upper-case letters, or a lower-case one that ends its phrase ("answer: d"); "the
    # answer must be C", "is indeed: D" too (not "would be": "… the answer would be A if …" is no answer);
    # "the solution is D" with its verb only ("Solution A has 5 litres" names no answer)
    _opening("answer", "choice", "option", "solution", *(words[0] for words, _, _ in _ANSWER_ABROAD.values())) +
    r"(?:(?i:answer|choice|option|" + _ANSWER_WORD + r")[\s*:(\[]*(?:" + _MC_IS + r")?|(?i:solution)\s+" + _MC_IS + r")"
    r"(?:(?i:option|choice)[\s*(\[]*)?"
    r"(?:([A-Z])(?![A-Za-z])|([a-z])(?=[).\]:*]|\s*$))")
_ANSWERED = re.compile(r"answer|" + _ANSWER_WORD, re.IGNORECASE)  # a marker that names the answer, not an option
_MC_PATTERNS = [
    re.compile(r"\(([A-Z])\)"),
    re.compile(r"(?:^|\n)[^\S\n]*\**\(?([A-Z])[\).:*]+(?:\s|$)"),
]
# a line that opens with a letter and a dash, and the rest of it: "D-West", "D – West" (see extract_choice)
_LETTER_DASH = re.compile(r"^[^\S\n]*\**([A-Z])\**[^\S\n]*[-\u2013\u2014][^\S\n]*(.*)", re.MULTILINE)


def extract_choice(text: str, choices: Sequence[str]) -> str | None:
    """The chosen letter: \\boxed{B}, "Answer: B", "(B)", "B)", "**B**", a bare letter, or a
    choice's text."""
    # full-width forms are their ASCII letters and brackets ("答案：（Ｂ）" is "答案:(B)"); a Cyrillic "В" is no
    # Latin B (in a Russian list it is the third option)
    raw = _strip_confidence(text)
    text = unicodedata.normalize("NFKC", raw)
    valid = letters(len(choices))
    boxed = last_boxed(text)
    if boxed is not None:
        b = normalize_math(boxed).upper()
        if b in valid:
            return b
    found = [m for m in _MC_MARKED.finditer(text) if (m.group(1) or m.group(2)).upper() in valid]
    # "the answer is C" outranks a later mention of "option A" in the discussion
    answered = [m for m in found if _ANSWERED.match(m.group(0))] or found
    if answered:
        m = answered[-1]
        return _stated_choice(text, m.start(m.lastindex), choices) or m.group(m.lastindex).upper()
    for pattern in _MC_PATTERNS:  # bare letters count only in upper case
        found = [f for f in pattern.findall(text) if f in valid]
        if found:
            return found[-1]
    # "D-West": the letter and its choice's text, which punctuation removal would run together ("dwest")
    for m in reversed(list(_LETTER_DASH.finditer(text))):
        if m.group(1) in valid and _stated_choice(m.group(2), 0, choices) == m.group(1):
            return m.group(1)
    stripped = text.strip().strip(".*").strip()
    if stripped.upper() in valid and len(stripped) == 1:
        return stripped.upper()
    lowered = f" {normalize_text(raw)} "  # as the choices are written ("m²" stays "m²")
    # whole words only ("12" is not the choice "2"); the latest end wins, then the longest
    hits = [(lowered.rfind(f" {t} ") + len(t), len(t), letter) for letter, c in zip(valid, choices)
            if (t := normalize_text(c)) and f" {t} " in lowered]
    if not hits:  # a choice that normalises to nothing ("~A": no punctuation, no article "a") as written
        written = [(*end, letter) for letter, c in zip(valid, choices)
                   if not normalize_text(c) and len(_as_written(c)) > 1 and (end := _written(text, c))]
        return max(written)[-1] if written else None
    tied = [letter for *key, letter in hits if key == list(max(hits)[:2])]
    if len(tied) > 1:  # "L" and "~L" read alike without punctuation: the one written as the choice is
        written = [(*end, letter) for letter in tied if (end := _written(text, choices[valid.index(letter)]))]
        tied = [max(written)[-1]] if written else tied
    return tied[-1]


def _written(text: str, choice: str) -> tuple[int, int] | None:
    """Where the last whole-word occurrence of ``choice``, spaces collapsed, ends in ``text``, and its
    length; None if it does not occur."""
    t, text = _as_written(choice), " ".join(text.split())
    ends = [m.end() for m in re.finditer(rf"(?<!\w){re.escape(t)}(?!\w)", text)] if t else []
    return (ends[-1], len(t)) if ends else None


def _as_written(choice: str) -> str:
    """A choice's text as ``extract_choice`` reads the reply: folded (``fold``: "−5" is "-5"), NFKC-normalised,
    spaces collapsed."""
    return " ".join(unicodedata.normalize("NFKC", fold(choice)).split())


# what may follow a choice's text stated after "the answer is": the end, punctuation, a word
_CHOICE_END = re.compile(r"$|[.,;:!?*)\]]|\s*\n|\s+[^\W\d_]{2}")


def _stated_choice(text: str, at: int, choices: Sequence[str]) -> str | None:
    """The letter of the longest choice whose text the reply states at ``at`` (the letter "the
    answer is" found, or the bracket opening it): "The answer is B ⊃ W" states choice A's "B ⊃ W",
    not the letter B. Case and spaces as the choices write them, up to a boundary (``_CHOICE_END``)."""
    start = len(text[:at].rstrip("([*"))
    rest = " ".join(text[start:].lstrip("*").split("\n", 1)[0].split())
    hits = [(len(t), letter) for letter, c in zip(letters(len(choices)), choices)
            if len(t := _as_written(c)) > 1
            and rest.startswith(t) and _CHOICE_END.match(rest, len(t))]
    return max(hits)[1] if hits else None


def extract_text(text: str) -> str | None:
    """Free-text answer: after "Answer:"/"the answer is" when present, else the whole text."""
    text = _strip_confidence(text)
    ans = normalize_text(last_curly(text) or _marked(text, math=False) or text)
    return ans or None


def extract_answer(text: str, rec: dict) -> str | None:
    """Extract and normalise a response's answer according to the record's question type."""
    kind = question_type(rec)
    if kind == "mc":
        return extract_choice(text, rec.get("choices") or [])
    if kind == "text":
        return extract_text(text)
    return extract_math(text)


# --- normalisation -----------------------------------------------------------------

_TEXT_NAME = r"\\(?:text|textbf|textit|textrm|textsf|textnormal|mbox|mathrm|mathbf|mathit|mathsf|bf|rm)\s*"
_TEXT_CMD = re.compile(rf"{_TEXT_NAME}\{{")
_TEXT_CMD_RUN_ON = re.compile(rf"{_TEXT_NAME}[}}\\]")  # a name before a closing brace or another command
_DELIM = re.compile(r"\\\$|(?<!\\)\\[()\[\]]|\$")
# Spacing and sizing commands; "\ " is a space but "\\" (a row break) is kept.
_NOISE = re.compile(r"\\left(?![a-z])|\\right(?![a-z])|\\[!,;:]|\\displaystyle|\\[qt]?quad|"
                    r"(?<!\\)\\ |\\%|%|(?:°|\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|(?<=\d)\s*\\circ|\\degree)(?:\s*[CF](?![A-Za-z]))?|"
                    r"\{,\}|~|[\u20ac\u00a3\u00a5\u20b9]")  # "€5", "£12.50": 5 and 12.5, as "$5" is; "25°C" is 25
_FRAC = re.compile(r"\\[dtc]frac")
_AM_PM = re.compile(r"(?<=:\d\d)\s*([AaPp])\.?\s*[Mm]\.?(?![A-Za-z])")
# a clock time with its "am" or "pm" ("4:30 pm"), read whole where no marker is ("It's 4:30 pm, not 5:30 pm.": 4:30pm,
# as after "the answer is"), not its minutes
_CLOCK_TAIL = re.compile(rf":\d\d{_AM_PM.pattern}")
_CLOCK = re.compile(rf"(?<![\d:.])\d{{1,2}}{_CLOCK_TAIL.pattern}")
_UNIT = r"[A-Za-z]+(?:/[A-Za-z]+)*\.?"
_UNIT_TAIL = re.compile(rf"(?<![\\A-Za-z])({_UNIT}(?:\s+{_UNIT})*)(?:\s*\^\s*\{{?[23]\}}?)?\s*$")
# the same read backwards, from the end of the reversed answer: a search for _UNIT_TAIL tried each word in turn,
# each reading on to the end (16 kB of "a a a … 1" took seconds); this finds where the match starts, in one pass
_TINU = r"\.?(?:[A-Za-z]+/)*[A-Za-z]+"  # _UNIT reversed
_UNIT_TAIL_REVERSED = re.compile(rf"\s*(?:\}}?[23]\{{?\s*\^\s*)?{_TINU}(?:\s+{_TINU})*(?![\\A-Za-z])")
_WORD_THEN_SPACE = re.compile(r"\S+\s+")  # a word of an answer and the blanks after it
_ORDINAL = re.compile(r"(?<=\d)\s*(?:\^\s*\{\s*(?:st|nd|rd|th)\s*\}|\^?(?:st|nd|rd|th)(?![A-Za-z]))")
_UNICODE = str.maketrans({"\u2013": "-", "\u03c0": "\\pi ", "\u221e": "\\infty ", "\u00d7": "\\times ",
                          "\u22c5": "\\cdot ", "\u00b7": "\\cdot ", "\u2264": "\\le ", "\u2265": "\\ge ",
                          "\u2260": "\\ne ", "\u2248": "\\approx "})
# an em dash before a value that ends the answer reads as the en dash ("50—60", "$50 — $60", "10—3" are `50-60`,
# `10-3`); before a word it is a sentence's dash, no minus ("12 — easy", "18—because …" stay `12—`, `18—…`: not
# `12-easy`), and so it is before a value words or an operator follow ("42 — 6 groups of 7", "18—2 less than before",
# "42 — 6 × 7": 42, 18, 42, not 36, 16, 0); so is an en dash before a word of four letters or more, no function's ("12
# – easy" is `12—`; "2 – ab", "12 – x", "2 – \\sqrt{3}", "1 – sqrt(2)" a minus)
_EM_DASH_VALUE = re.compile(r"\u2014(?=\s*\$?-?(?:\.?\d[\d.,]*|\\[dt]?frac\{\d+\}\{\d+\})\$?(?:\\?%|\u00b0)?[\s.,;*]*$)")
_EN_DASH_WORD = re.compile(r"\u2013(?=[^\S\n]*[^\W\d_]{4,}(?![\w(^{]))")
# an en or em dash ending an answer, a full stop or bold after it too, is a sentence's, nothing of the value ("The
# answer is 12 –": 12, not `12-`)
_DASHES = "\u2013\u2014"
_AFTER_DASH = " \t\n.,;*"
# superscript digits in an answer are an exponent ("2⁴" is 2^4, "10⁻³" is 10^{-3}, "m²" is m^2), not digits
# run on (NFKC's "24")
_SUPERSCRIPT = re.compile(r"[\u207a\u207b]?[\u2070\u00b9\u00b2\u00b3\u2074-\u2079]+")
_ROOT = re.compile(r"\u221a\s*(?:\(([^()]*)\)|\{([^{}]*)\}|(\d+(?:\.\d+)?|[A-Za-z]))")
_MATH_WORDS = {"pi", "sqrt", "infty", "inf", "sin", "cos", "tan", "log", "ln"}  # a value's words, a list's item too
_NOT_UNITS = _MATH_WORDS | {"am", "pm", "i", "e"}  # no unit after a number: "4:30 pm", "3+4i", "2e"
_POWERS = {"square", "sq", "cubic", "cu"}  # "square feet", "sq units", "cubic units"
# a unit's words set in upright text at the end ("7 \\text{ d}", "3\\,\\mathrm{kg}", "x+2 \\text{ units}", "\\mbox{ cm}^2"):
# not \\mathbf{} or \\mathit{}, which set vectors and variables ("3\\mathbf{i} + 4\\mathbf{j}")
_TEXT_UNIT = re.compile(r"\\(?:text|textrm|textnormal|mbox|mathrm)\s*\{\s*(" + _UNIT + r"(?:\s+" + _UNIT + r")*)"
                        r"(?:\s*\^\s*\{?[23]\}?)?\s*\}(?:\s*\^\s*\{?[23]\}?)?[\s.,;]*$")
# a remark in words after a number: "12 (twelve)", "3.5 (approx.)", "18 (i.e., eighteen) apples"
# (its words end where its spaces before the bracket start: tried at each of them, 60 kB of spaces took seconds)
_REMARK = re.compile(r"(?<=[\d}])\s+\(\s*([A-Za-z](?:[A-Za-z\s.,'-]*[A-Za-z.,'-])?)\s*\)(?!\S)")
# Up to three letters written onto a number are a product of variables ("2ab", "4xy^2"), not units,
# unless they abbreviate a unit ("12cm", "5kg", "60mph"); a longer word is a unit ("5days"), and
# units set apart ("12 cm", "12\text{cm}") always are
_GLUED_UNITS = {"mm", "cm", "dm", "km", "mg", "kg", "ml", "cl", "dl", "oz", "lb", "lbs", "in", "ft", "yd", "mi",
                "gal", "qt", "mph", "kph", "kmh", "m/s", "sec", "secs", "min", "mins", "hr", "hrs", "day", "wk", "wks",
                "mo", "mos", "yr", "yrs", "cal", "kcal", "ms"}
# one letter is a variable ("2m", "5 x"), unless set apart from the number and a unit's symbol ("10 m", "5 s")
_LETTER_UNITS = {"m", "g", "s", "h", "l"}
# letters that name no unit, a variable even in upright text after a number ("2 \\mathrm{x}" is 2x; "7 \\text{ d}" is 7)
_COORDINATES = {"x", "y", "z"}
# a head ending so takes the letters after it as its operand: "2 \\cdot s" is 2s, not 2 seconds
_OPERAND_AFTER = ("^", "_", "\\", "+", "-", "*", "/", "\\cdot", "\\times", "\\div", "\\pm", "\\mp")
_SCALES = {"hundred": 100, "thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
# "2 and 3", "2, or 3", and MGSM's languages' "and" (``_AND_ABROAD``): "18 Äpfel und 3 Birnen", "18 manzanas y 3 peras"
# (group 1: the number and its unit's words before "y", kept), "18个苹果和3个梨" and "18個と3個" are "18 apples and 3 pears"
_AND_UNSPACED_OR_NUMBERS = (rf"(?<=[^\W_])(?:{_LIST_COMMA})?\s*(?:{_AND_UNSPACED})\s*(?=-?\d)|"
                            rf"(?:{_AND_AFTER_COUNTERS}|(?<=[\d{_COUNTER}])\s*\u3001\s*)(?=-?\d)|"
                            rf"(\d(?:\s+[^\W\d_]{{2,}})*)(?:\s*,)?\s+(?:{_AND_NUMBERS})\s+(?=-?\.?\d)")
# (a spaced one from where no space precedes: else a run of spaces is read to its end from each of its spaces, 60 kB
# took seconds)
_AND_OR = re.compile(rf"(?<!\s)\s+(?:{_AND_WORDS})\s+|(?:(?<!\s)\s+)?,\s*(?:{_AND_WORDS})\s+|{_AND_UNSPACED_OR_NUMBERS}")
# words before an answer: "either 4 or 5", "both 2 and 3" (a list), "approximately 3.14", "\approx 3.14"
# whether _AND_OR finds a joint ahead: its spaced ones by their shortest forms, each read once (no run of tries)
_JOINED = rf"\s(?:{_AND_WORDS})\s|,\s*(?:{_AND_WORDS})\s|{_AND_UNSPACED_OR_NUMBERS}"
# (its spaces taken whole where a joint follows them, else but one where the joint opens with that one)
_LEAD = re.compile(rf"^(?:(?:either|both)(?:\s+(?!\s)(?=.*?(?:{_JOINED}))|\s+(?=\s(?:{_AND_WORDS})\s))|"
                   r"(?:approximately|approx\.|about|roughly|around|\\approx|\\sim)\s*(?=[-\d.\\]))", re.IGNORECASE | re.DOTALL)
_OR = re.compile(r"(?:,\s*)?(?<![\\A-Za-z])or(?![A-Za-z])|\\(?:lor|vee)(?![A-Za-z])")
_LESS = re.compile(r"<=?|\\(?:le|leq|leqslant|lt)(?![A-Za-z])")
_BETWEEN = r"[(\[][^()\[\],]+,[^()\[\],]+[)\]]"  # an interval: "(1,2]", "(-\infty,0)"
_IN = re.compile(rf"\s*([A-Za-z])\s*\\in\s*({_BETWEEN}(?:\s*\\cup\s*{_BETWEEN})*)\s*")  # "x \in (1,2) \cup (3,4)"
_RELATION = re.compile(rf"{_LESS.pattern}|>=?|\\(?:ge|geq|geqslant|gt)(?![A-Za-z])")
_REPEATING = re.compile(r"(?<![\d.])(\d*)\.(\d*)(" + _PERIOD + ")")  # a repeating decimal: its whole, fixed and repeating digits
_ASSIGN = re.compile(r"^\s*([A-Za-z](?:_\{?\w+\}?)?|[A-Za-z]{3,})\s*(?:=|\\in)\s*(?=[^=]|$)")  # "x =" alone names no value
# a number's digits before its first thousands separator: not "0" ("0,100", as "0 and 100" normalises, is a list)
_LEAD_GROUP = r"-?[1-9]\d{0,2}"
_THOUSANDS = re.compile(rf"^{_LEAD_GROUP}(?:,\d{{3}})+" + _DECIMALS + "$")
# a number with thousands separators that a list's next item or joint follows, if any ("1,200 and 1,300", "1,200, 1,300",
# "1,200 dollars"): not one more digits are written onto ("1,200,1,300" is no number; "1,000, 000", LaTeX's "1,000,\!000",
# may be one)
_GROUPED_ITEM = re.compile(rf"(?<![\w.,^\\]){_LEAD_GROUP}(?:,\d{{3}})+" + _DECIMALS + r"(?![\d.]|,\d|,\s*\d{3}(?!\d))")
_GROUPED = re.compile(rf"\s*{_LEAD_GROUP}(?:,\s*\d{{3}})+" + _DECIMALS + r"(?![\d,.])")  # thousands ("10,\!080" is "10, 080" here), then units at most
_CHOICE = re.compile(r"^\(([A-Z])\)\s+[A-Za-z0-9$\\]")
_SUBSCRIPT = re.compile(r"_\{(\w|\d+)\}")  # 4210_{5} is 4210_5, 11_{16} is 11_16
_LETTER = re.compile(r"^\(([A-Za-z]|-?\d+(?:\.\d+)?)\)$")  # "(C)", "(051)"
_WORDS = re.compile(r"[^\W\d_](?:[^\W\d_]|[\s'.,\-])*")  # letters of any script: "Évelyn", "café"
_WORD = re.compile(r"[^\W\d_]{3}")  # three letters in a row: a word, not a product of symbols
_TIME = re.compile(r"\d:\d\d")
_RANGE = re.compile(r"(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?)")
# Words after a number that are not ASCII (any script's but Greek, whose letters are variables) are its unit or a
# copula: "18元", "3个苹果", "18です", "29টি", "18 яблок", "18 Äpfel", "18 niños" (ASCII ones: ``_drop_units``)
# (no look-ahead for the letter that is not ASCII: from each digit to the end, 40 kB of "1 1 1 …" took seconds; Indic
# and Thai letters and signs under one alternative only: a letter two alternatives took made "1 আপেল আপেল … 2", its
# end not reached, try each way of splitting the run between them, 2 to the power of its letters)
_SCRIPT_TAIL = re.compile(r"(?<=[\d}])(?:(?![\u0370-\u03ff\u0900-\u0e7f])[^\W\d_]|[\u0900-\u0e7f]|\s)+$")
_BASE = re.compile(r"[0-9A-Za-z]+_\d+")


def _unwrap_text(a: str) -> str:
    """``\\text{...}``, ``\\mbox{...}``, ``\\mathrm{...}`` … replaced by their content: each command and its closing
    brace by a space, left to right; one whose brace is not closed only dropped, and the rest left. Each is found once
    (searched for again from the start after each, a looping reply of "\\text{…}" took time growing with its square),
    but where a name runs onto a brace or a command ("\\mbox\\text{…}", "\\mathrm}{…}"), as unwrapping one may
    make another: one at a time there."""
    if _TEXT_CMD_RUN_ON.search(a):
        while m := _TEXT_CMD.search(a):
            j = _closing(a, m.end() - 1)
            if j is None:
                return a[:m.start()] + a[m.end():]
            a = a[:m.start()] + " " + a[m.end():j] + " " + a[j + 1:]
        return a
    edits = []
    for m in _TEXT_CMD.finditer(a):
        if (j := _closing(a, m.end() - 1)) is None:
            edits.append((m.start(), m.end(), ""))
            break
        edits += [(m.start(), m.end(), " "), (j, j + 1, " ")]
    parts, i = [], 0
    for start, end, new in sorted(edits):
        parts += [a[i:start], new]
        i = end
    return "".join(parts) + a[i:]


def _split_top(a: str) -> list[str]:
    """``a`` split at its commas of bracket depth 0."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(a):
        depth += (c in _OPEN) - (c in _CLOSE)
        if c == "," and depth == 0:
            parts.append(a[start:i])
            start = i + 1
    return parts + [a[start:]]


def _items(a: str) -> list[str]:
    """A list's items, split at its top-level commas ("5 cm, 6 cm"); a number with thousands ("10,000 cm")
    is one item, and LaTeX's thin space ("7\\,\\text{d}") no comma."""
    if _GROUPED.match(a):
        return [a]
    items, start = [], 0
    for part in _split_top(a.replace("\\,", "\\ ")):  # as long: its parts' lengths place a's
        items.append(a[start:start + len(part)])
        start += len(part) + 1
    return items


def _drop_text_unit(a: str) -> str:
    """"7 \\text{ d}", "x+2 \\text{ units}" → "7", "x+2": words in upright text after an expression with a
    number are its unit, a letter among them too when it follows a number or is a unit's symbol (set apart
    so, it is no variable: "10m" is one; but "\\log_2 \\mathrm{x}" keeps its x); after one without
    ("n \\text{ odd}") only the words ``_unit_words`` takes; ``_drop_units`` then reads the rest (a scale
    word, "5 \\text{ million}", multiplies; "4:30 \\text{ p.m.}" keeps its "pm"). Each item of a list
    ("5 \\text{ cm}, 6 \\text{ cm}") drops its own."""
    if len(parts := _items(a)) > 1:
        return ",".join(map(_drop_text_unit, parts))
    m = _TEXT_UNIT.search(a)
    if not m:
        return a
    words = m.group(1).lower().replace(".", "").split()
    head = _rstrip_spacing(a[:m.start()])  # "3\\,\\mathrm{kg}": its space is no comma
    # a letter after an expression, no unit's symbol, is a variable: "2+3\\mathrm{x}", "\\log_2 \\mathrm{x}"
    variable = len(words) == 1 and _variable(words[0], glued=False) and (
        words[0] in _COORDINATES or not _NUMBER.fullmatch(_ASSIGN.sub("", head, count=1).strip()))
    # "3+4\\mathrm{i}" (or an engineer's "\\mathrm{j}") is complex, "2\\mathrm{e}" Euler's number: no units
    if (not head or variable or set(words) & (_NOT_UNITS | _SCALES.keys() | {"j"}) or _TEXT_CMD.search(head)
            or head.endswith(("=", "(", "[", ",") + _OPERAND_AFTER)
            or not (re.search(r"\d", head) or _unit_words(words))):
        return a
    return head


def _rstrip_spacing(a: str) -> str:
    """``a`` without the spaces and LaTeX spacing commands (``\\,``, ``\\;``, ``\\ `` …) it ends in, read back from
    its end once: a pattern anchored at the end, ``(?:\\\\[,;:! ]|\\s)+$``, was tried from each space of a run."""
    end = len(a)
    while end:
        if end > 1 and a[end - 2] == "\\" and a[end - 1] in ",;:! ":  # "\\ " a command, before its space alone
            end -= 2
        elif a[end - 1].isspace():
            end -= 1
        else:
            break
    return a[:end]


def _unit_words(words: list[str]) -> bool:
    """Whether ``words`` name a unit after any expression, one with variables too ("\\pi r^2 square units",
    "x+2 units", "2x \\text{ square feet}"): "units", or a unit squared or cubed in words."""
    return set(words) <= {"unit", "units"} or (len(words) > 1 and words[0] in _POWERS)


def _drop_remark(a: str) -> str:
    """"12 (twelve)" → "12", "18 (eighteen) apples" → "18 apples": remarks in words set apart after a number
    (not "\\sin (theta)", nor a product of letters "2 (ab)")."""
    return _REMARK.sub(lambda m: "" if _WORD.search(m.group(1)) else m.group(), a)


def _drop_units(a: str) -> str:
    """"12 cm", "5 apples", "6 square units", "18 яблок", "18元" → the number; "4:30 pm" keeps its "pm"; each
    item of a list its own ("5 cm, 6 cm", "x = 2 m, y = 3 m", "3元, 4元")."""
    if len(parts := _items(a)) > 1:
        return ",".join(map(_drop_units, parts))
    a = _drop_remark(_SCRIPT_TAIL.sub(_script_unit, a))
    m = (back := _UNIT_TAIL_REVERSED.match(a[::-1])) and _UNIT_TAIL.match(a, len(a) - back.end())
    if not m:
        return a
    words = m.group(1).lower().replace(".", "").split()
    head = a[:m.start()].rstrip()
    bare = re.sub(r"\\[A-Za-z]+", "", _ASSIGN.sub("", head, count=1))  # an item of a list may name its value
    if words[0] in _SCALES and (value := as_number(re.sub(r"\s+", "", head).replace(",", ""))) is not None:
        value *= _SCALES[words[0]]  # "5 thousand" is 5000, not 5 (nor "5 thousand dollars")
        return str(value.numerator) if value.denominator == 1 else a
    start, skipped = m.start(), 0
    # a lone letter before more words is a variable when it would be one alone ("2\pi r units", "2x cm",
    # "4 x y"): the unit, if any, is the words after it ("a" is the article: "5 a day"); counted, not sliced
    # off one at a time (40 kB of "x y x y …" took seconds)
    while len(words) - skipped > 1 and a[start] != "a" and _variable(words[skipped], glued=not a[start - 1].isspace()):
        start, skipped = _WORD_THEN_SPACE.match(a, start).end(), skipped + 1
    words = words[skipped:]
    tail = "".join(words)
    # a capitalised word written onto it opens the next sentence ("Answer: 56Yes."): no product of variables
    glued = (not a[start - 1].isspace() and len(tail) <= 3 and tail not in _GLUED_UNITS
             and not re.fullmatch(r"[A-Z][a-z]{2}", a[start:m.end(1)]))
    # "10 m^2" is 10m²; "\text{ m}^2", unwrapped, sets its exponent apart: square metres
    letter = len(tail) < 2 and (_variable(tail, glued) or re.search(r"[A-Za-z]\^", m.group()) is not None)
    symbolic = not re.search(r"\d", bare) or re.search(r"[A-Za-z=]", bare)
    if (letter or words[0] in _NOT_UNITS or glued or (symbolic and not _unit_words(words))
            or not a[:start].strip() or head.endswith(_OPERAND_AFTER)):  # "x units": the variable stays
        return a
    return a[:start].rstrip()


def _variable(letter: str, glued: bool) -> bool:
    """Whether a lone letter after a number is a variable: written onto it ("2m") or no unit's symbol
    ("5 x"); "10 m", "5 s" are units."""
    return len(letter) == 1 and (glued or letter not in _LETTER_UNITS)


def _union(a: str) -> str:
    """"x < 2 or x > 3" → "(-\\infty,2)\\cup(3,\\infty)": inequalities of one variable joined by "or"
    as the union of their intervals (with "and" they would be an intersection: the list stays)."""
    parts = _OR.split(a)
    intervals = [_interval(p) for p in parts] if len(parts) > 1 else [None]
    if None in intervals or len({var for var, _ in intervals}) != 1:
        return a
    return "\\cup".join(interval for _, interval in intervals)


def _interval(a: str) -> tuple[str, str] | None:
    """An inequality solved for its one variable ("x \\le 2", "3 < x", "1 < x \\le 2") as its variable and
    interval ("(-\\infty,2]", "(3,\\infty)", "(1,2]"), or the intervals a variable is in ("x \\in (1,2)");
    None for anything else."""
    if m := _IN.fullmatch(a):
        return m.group(1), m.group(2)
    ops = [("<" if _LESS.fullmatch(op) else ">", "=" in op or "e" in op) for op in _RELATION.findall(a)]
    terms = [t.strip() for t in _RELATION.split(a)]
    if not 1 <= len(ops) <= 2 or len({d for d, _ in ops}) != 1 or not all(terms):
        return None
    var = next((i for i, t in enumerate(terms) if re.fullmatch(r"[A-Za-z]", t)), None)
    bounds = [t for i, t in enumerate(terms) if i != var]
    if var is None or (len(ops) == 2 and var != 1) or any(
            re.search(r"[A-Za-z=,]", re.sub(r"\\[A-Za-z]+", "", b)) for b in bounds):
        return None
    below, above = ("-\\infty", False), ("\\infty", False)  # the two ends: bound, closed
    for i, ((d, closed), bound) in enumerate(zip(ops, bounds)):
        # terms[var] after the bound ("2 < x") has it below when "<", else above; before it, the other way
        if (d == "<") == (i < var):
            below = (bound, closed)
        else:
            above = (bound, closed)
    return terms[var], f"{'[' if below[1] else '('}{below[0]},{above[0]}{']' if above[1] else ')'}"


def _repeating(m: re.Match) -> str:
    """A repeating decimal's value ("0.\\overline{5}" → "\\frac{5}{9}", "0.1\\overline{6}" → "\\frac{1}{6}")."""
    whole, fixed, period = m.group(1), m.group(2), re.sub(r"\D", "", m.group(3))  # "\dot{1}4\dot{2}": 142
    if len(whole + fixed + period) > _DIGITS:  # more digits than int() reads: a string, as in as_number
        return m.group()
    value = int(whole or 0) + Fraction(int(fixed + period) - int(fixed or 0), 10 ** len(fixed) * (10 ** len(period) - 1))
    return str(value.numerator) if value.denominator == 1 else f"\\frac{{{value.numerator}}}{{{value.denominator}}}"


def _drop_assign(a: str) -> str:
    """"x = 5" → "5"; "x=2, x=3" → "2,3"; "x \\in [-2, 7]" → "[-2, 7]"; "35 - 26 = 9" → "9"
    (a chain of equal values; an equation such as "x^2 + y^2 = 25" stays whole)."""
    sides = a.split("=")
    if len(sides) > 1 and all(s.strip() and not re.search(r"[A-Za-z<>]", re.sub(r"\\[A-Za-z]+", "", s))
                              for s in sides[:-1]):
        a = sides[-1]
    if (m := _ASSIGN.match(a)) and _GROUPED.match(a, m.end()):  # "n = 10,080": one number, not a list
        return a[m.end():]
    parts = _split_top(a)
    names = {m.group(1) if (m := _ASSIGN.match(p)) else None for p in parts}
    if len(names) == 1 and None not in names:
        return ",".join(_ASSIGN.sub("", p, count=1) for p in parts)
    return a


def _plain_int(a: str) -> str | None:
    """The canonical form of a run of ASCII digits ("007" → "7"); else None. The common case,
    kept cheap: votes over a million records."""
    return (a.lstrip("0") or "0") if a.isascii() and a.isdigit() else None


@functools.lru_cache(maxsize=1 << 16)
def normalize_math(ans: str) -> str:
    """Canonical string for a math answer ("" when there is none): inside \\boxed{}, no $ or
    delimiters, \\text{} unwrapped, no spacing commands, units, degrees, percent or dollar
    signs, no "x =", thousands separators dropped, numbers in lowest form, text lower case."""
    a = str(ans).strip()
    if (n := _plain_int(a)) is not None:
        return n
    a = fold(unicodedata.normalize("NFC", a.replace("\0", " "))).strip()  # "é" is "e\u0301"; NUL is our placeholder below
    inner = last_boxed(a)
    if inner is not None:
        a = inner
    a = _ROOT.sub(lambda m: "\\sqrt{" + "".join(g for g in m.groups() if g) + "}", a)
    if (cut := a.rstrip(_AFTER_DASH)).endswith(tuple(_DASHES)):
        a = cut.rstrip(_DASHES + _AFTER_DASH)  # "12 ––" too
    a = _EM_DASH_VALUE.sub("-", _EN_DASH_WORD.sub("\u2014", _SUPERSCRIPT.sub(_power, a))).translate(_UNICODE)
    a = _ORDINAL.sub("", _unwrap_text(_drop_text_unit(_DELIM.sub(" ", a.replace("**", " ")))))
    a = _NOISE.sub(" ", _FRAC.sub(r"\\frac", a)).strip().rstrip(".,;").strip()
    a = _AM_PM.sub(lambda m: " " + m.group(1).lower() + "m", a)
    if m := _CHOICE.match(a):  # "(B) Circle": a choice letter with its text
        return m.group(1)
    if _PROSE.match(a) and re.search(r"\d", a):  # \boxed{Hillary has 7 nickels.}
        a = _prose_value(a)
    joined = 0
    if re.search(r"[\d\\]", a):  # "2 and 3", "x = 2 or x = -2"; "x < 2 or x > 3" is a union
        a, joined = _AND_OR.subn(_list_joint, _union(_LEAD.sub("", _ungroup(a))))
    a = _drop_units(_drop_assign(a)).strip().rstrip(".,;").strip()
    if _WORDS.fullmatch(a) and (_WORD.search(a) or a.lower() in ("no", "yes")):
        return normalize_text(a)  # a text answer: "Evelyn", "east"
    a = _mixed(_scientific(a))
    a = re.sub(r"(\\[A-Za-z]+)\s+(?=[A-Za-z])", "\\1\0", a)  # "\pi r" keeps its space
    a = re.sub(r"\s+", "", a).replace("\0", " ")
    # before a repeating decimal is read: "1,000.\overline{3}" is no list; nor is a list "and" joined ("2 and 100")
    if not joined and _THOUSANDS.match(a):
        a = a.replace(",", "")
    a = _REPEATING.sub(_repeating, a)
    a = _SUBSCRIPT.sub(r"_\1", _LETTER.sub(r"\1", a))
    num = as_number(a)
    if num is not None and num.denominator == 1:
        return str(num.numerator)
    if num is not None and re.fullmatch(r"-?\d*\.\d+", a):
        return _decimal_str(a)
    return a


def _ungroup(a: str) -> str:
    """``a`` with the thousands separators of its numbers that stand as a list's items dropped ("1,200 and 1,300" →
    "1200 and 1300", "1,200, 1,300" → "1200, 1300", "1,200 dollars"), before its items are joined by commas, which
    would run them together ("1,200,1,300"); not in brackets ("(1,200)" is a pair), nor where the digits go on
    ("1,2" and "1,200,1,300" stay lists, ``_GROUPED_ITEM``)."""
    if "," not in a:
        return a
    out, depth, start = [], 0, 0  # (the depth counted on from the match before: once over ``a``)
    for m in _GROUPED_ITEM.finditer(a):
        depth += sum((c in _OPEN) - (c in _CLOSE) for c in a[start:m.start()])
        out += a[start:m.start()], m.group() if depth else m.group().replace(",", "")
        start = m.end()
    return "".join(out) + a[start:]


def _list_joint(m: re.Match) -> str:
    """An ``_AND_OR`` joint as a comma, the number before a Spanish "y" kept."""
    return (m.group(1) or "") + ","


def _script_unit(m: re.Match) -> str:
    """A ``_SCRIPT_TAIL`` dropped where a letter of it is not ASCII; ASCII units are ``_drop_units``'s."""
    return m.group() if m.group().isascii() else ""


def _power(m: re.Match) -> str:
    exponent = unicodedata.normalize("NFKC", m.group()).replace("\u2212", "-")
    return f"^{exponent}" if len(exponent) == 1 else f"^{{{exponent}}}"


def _scientific(a: str) -> str:
    """"3e5" → "300000", "2.5E-3" → "0.0025", "6.02 \\times 10^{23}" → "602000000000000000000000": a
    number in scientific notation, written out (math-verify reads the "e" as Euler's number, and
    compares 10^{23} in floating point); one too long to write out stays as it is."""
    m = _SCIENTIFIC.fullmatch(a)
    if not m or abs(exponent := int(m.group(2).strip("{}"))) + len(a) > _DIGITS:
        return a
    return format(Decimal(m.group(1)).scaleb(exponent), "f")


def _mixed(a: str) -> str:
    """"1 1/2" → "3/2": a mixed number, as its value (its space is no product: not 11/2); "7 5/3"
    too (26/3, as math-verify reads "7\\frac{5}{3}"; its digits run together were 75/3)."""
    m = _MIXED.fullmatch(a)
    if not m or len(a) > _DIGITS or int(m.group(4)) == 0:  # (more digits than int() reads: a string, as in as_number)
        return a
    value = int(m.group(2)) + Fraction(int(m.group(3)), int(m.group(4)))
    return str(-value if m.group(1) else value)


def _decimal_str(a: str) -> str:
    neg, a = a.startswith("-"), a.lstrip("-")
    whole, frac = a.split(".")
    frac = frac.rstrip("0")
    out = (whole or "0") + ("." + frac if frac else "")
    return "-" + out if neg and out != "0" else out


_DIGITS = 4000  # below int()'s 4300-digit limit, with room for "5 trillion" (×10^12)
_SCIENTIFIC = re.compile(r"(-?\d+(?:\.\d+)?)(?:[eE]|\s*\\(?:times|cdot)\s*10\^)(\{[-+]?\d{1,6}\}|[-+]?\d{1,6})")
_MIXED = re.compile(r"(-?)(\d+)\s+(\d+)/(\d+)")
_LATEX_FRAC = re.compile(r"^(-?)\\frac\{(-?\d+)\}\{(\d+)\}$|^(-?)\\frac(\d)(\d)$")


@functools.lru_cache(maxsize=1 << 16)
def as_number(a: str) -> Fraction | None:
    """Exact value of a plain number: 12, -3.5, 7/8, \\frac{7}{8}; else None (also for one of more
    than ``_DIGITS`` characters, which Python will not read as an integer: compared as a string)."""
    if len(a) > _DIGITS:
        return None
    if a.isascii() and a.isdigit():
        return Fraction(int(a))
    try:
        if re.fullmatch(r"[-+]?(\d+(\.\d*)?|\.\d+)", a):
            return Fraction(a)
        if re.fullmatch(r"[-+]?\d+/\d+", a):
            return Fraction(a) if not a.endswith("/0") else None
    except (ValueError, ZeroDivisionError):
        return None
    m = _LATEX_FRAC.match(a)
    if m:
        sign, num, den = (m.group(1), m.group(2), m.group(3)) if m.group(2) else m.group(4, 5, 6)
        if int(den) == 0:
            return None
        value = Fraction(int(num), int(den))
        return -value if sign else value
    return None


_ASCII_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_text(ans: str) -> str:
    """SQuAD-style: lower case, no punctuation (of any script: "北京。", "«Paris»", "¡Sí!") or articles,
    single spaces; full-width letters and digits as ASCII ("ＰＡＲＩＳ")."""
    a = fold(unicodedata.normalize("NFC", str(ans))).lower()  # "café" spelt with a combining accent is "café"
    a = a.translate(_ASCII_PUNCTUATION)
    if not a.isascii():  # (ASCII's punctuation is string.punctuation's: a letter at a time only where it is not)
        a = "".join(ch for ch in a if not unicodedata.category(ch).startswith("P"))
    a = re.sub(r"\b(a|an|the)\b", " ", a)
    return " ".join(a.split())


# --- equivalence -------------------------------------------------------------------


def _timeout() -> int | None:
    # math-verify's timeouts use SIGALRM, which only works on the main thread.
    return 5 if threading.current_thread() is threading.main_thread() else None


@functools.lru_cache(maxsize=65536)
def _parsed(ans: str):
    from math_verify import parse

    return parse(f"${ans}$", extraction_config=_extraction(), parsing_timeout=_timeout())


@functools.cache
def _extraction() -> list:
    """math-verify's default extraction without its unit list: ``normalize_math`` has dropped the units,
    and math-verify's own list would drop the variables it kept ("2ab" is 2 to it, "ab" a unit)."""
    from math_verify import ExprExtractionConfig, LatexExtractionConfig

    latex = LatexExtractionConfig()
    return [dataclasses.replace(latex, normalization_config=dataclasses.replace(latex.normalization_config, units=False)),
            ExprExtractionConfig()]


def _literal(a: str) -> bool:
    """Answers compared as strings only: words ("east" is no product e·a·s·t) and clock times."""
    words = (re.fullmatch(r"[^\W\d_](?:[^\W\d_]| )*", a) and a == a.lower()  # lower-case letters of any script
             and (_WORD.search(a) or a in ("no", "yes")))
    return bool(words or _TIME.search(a))


@functools.lru_cache(maxsize=65536)
def math_equal(gold: str, pred: str) -> bool:
    """Whether two normalised math answers are the same value (math-verify; numbers exactly).
    An empty answer equals nothing."""
    if not gold or not pred:
        return False
    if gold == pred:
        return True
    if _canonical_int(gold) and _canonical_int(pred):
        return False
    g, p = as_number(gold), as_number(pred)
    if g is not None and p is not None:
        return g == p
    if _in_base(gold) or _in_base(pred):  # 2516_8: the digits, any base given
        (g_digits, _, g_base), (p_digits, _, p_base) = gold.partition("_"), pred.partition("_")
        return g_digits == p_digits and not (g_base and p_base)
    if _literal(gold) or _literal(pred) or ("=" in gold and "=" not in pred):
        return False  # an equation asked for is not answered by a value
    if _range(gold) or _range(pred):
        return False  # (not as written: equal above)
    from math_verify import verify

    try:
        g, p = _parsed(gold), _parsed(pred)
        sets = _solves_interval(g, p)
        # math-verify's verdict is whether some pair of the two sides' readings compares equal: a pair
        # that ``_apart`` proves unequal is not compared (sympy's simplify, most of a pool's preparation)
        return any(verify([a], [b], timeout_seconds=_timeout(), allow_set_relation_comp=sets)
                   for a, b in itertools.product(g, p) if not _apart(a, b))
    except Exception:  # a pathological expression is simply not equal
        return False


def _range(a: str) -> bool:
    """Whether ``a`` is a range of two numbers, the lower first ("50-60", as "50–60" and "50 - 60" normalise): no
    difference (math-verify reads -10), which is written the larger first ("8-3" is 5); it equals itself only."""
    return bool(m := _RANGE.fullmatch(a)) and Fraction(m.group(1)) < Fraction(m.group(2))


def _apart(a, b) -> bool:
    """Whether math-verify surely compares its readings ``a`` and ``b`` unequal: two nonzero monomials
    with different variables or powers (``7``, ``7 b a c k``, ``24 x``: a prose answer read as a product of
    letters), which no simplification equates, or a monomial and a set of several values one of which is
    such a different monomial. Neither side a lone symbol when compared directly: math-verify equates
    the symbol ``ab`` with the product ``a b``."""
    from sympy import FiniteSet, Symbol

    if isinstance(b, FiniteSet) and not isinstance(a, FiniteSet):
        a, b = b, a
    if isinstance(a, FiniteSet) and not isinstance(b, FiniteSet):
        one = _monomial(b)
        return one is not None and len(a.args) > 1 and any(_monomial(x) not in (None, one) for x in a.args)
    if isinstance(a, Symbol) or isinstance(b, Symbol):
        return False
    one, other = _monomial(a), _monomial(b)
    return one is not None and other is not None and one != other


def _monomial(e) -> dict | None:
    """The variables and their powers of a nonzero monomial: a product of nonzero rationals, constants
    (e, π), variables and their positive integer powers ({} for a number); None for anything else."""
    from sympy import Integer, Mul, NumberSymbol, Pow, Rational, Symbol

    if isinstance(e, Rational):
        return {} if e != 0 else None
    if isinstance(e, NumberSymbol):
        return {}
    if isinstance(e, Symbol):
        return {e: 1}
    if isinstance(e, Pow) and isinstance(e.exp, Integer) and e.exp > 0:
        base = _monomial(e.base)
        return None if base is None else {v: n * int(e.exp) for v, n in base.items()}
    if isinstance(e, Mul):
        powers: dict = {}
        for factor in e.args:
            part = _monomial(factor)
            if part is None:
                return None
            for v, n in part.items():
                powers[v] = powers.get(v, 0) + n
        return powers
    return None


def _in_base(a: str) -> bool:
    """Whether ``a`` is a number in a base ("2516_8", "AB_16", "101_2"): digits that base has, 2 to 36; a
    letter with a subscript is a symbol ("x_1", "a_2": no digit x in base 1, nor a in base 2)."""
    if not _BASE.fullmatch(a):
        return False
    digits, _, written = a.partition("_")
    base = int(written) if len(written) <= 2 else 0
    return 2 <= base <= 36 and all(int(d, 36) < base for d in digits)


def _solves_interval(gold: list, pred: list) -> bool:
    """Whether ``pred`` is an inequality solved for one variable ("2 \\le x \\le 3", "x > 2": the
    variable alone against numbers) and ``gold`` an interval or union of them, which math-verify
    then compares as sets ("[2,3]", "(2,\\infty)"; it does so the other way round by itself). Not an
    inequality that a question states ("x^2 - 5x + 6 \\le 0" is no answer to its solution), nor a
    gold that lists values ("2,3" is no interval 2 < x < 3), nor one that reads as a point too ("(2,3)",
    two finite ends in parentheses: an ordered pair as often as an open interval)."""
    from sympy import And, Eq, Interval, Symbol, Union
    from sympy.core.relational import Relational

    if not gold or not pred or not isinstance(gold[0], (Interval, Union)) or _point(gold[0]):
        return False
    relations = pred[0].args if isinstance(pred[0], And) else (pred[0],)
    sides = [(r.lhs, r.rhs) if isinstance(r.lhs, Symbol) else (r.rhs, r.lhs) for r in relations
             if isinstance(r, Relational) and not isinstance(r, Eq)]
    return (len(sides) == len(relations) and len({var for var, _ in sides}) == 1
            and all(isinstance(var, Symbol) and not bound.free_symbols for var, bound in sides))


def _point(interval) -> bool:
    """Whether math-verify's interval is written as a point: "(2,3)", open at two finite ends."""
    return bool(getattr(interval, "left_open", False) and interval.right_open
                and interval.start.is_finite and interval.end.is_finite)


def _canonical_int(a: str) -> bool:
    """Whether ``a`` is an integer written the one way ``normalize_math`` writes it."""
    digits = a[1:] if a[:1] == "-" else a
    return digits.isascii() and digits.isdigit() and (digits[0] != "0" or a == "0")


def equal(a: str, b: str, kind: str) -> bool:
    """Equivalence of two normalised answers of a question type (empty answers equal nothing)."""
    return math_equal(a, b) if kind == "math" else bool(a) and a == b


# --- voting ------------------------------------------------------------------------


class Tally(NamedTuple):
    """A majority vote: the winning answer and the count per answer class."""

    prediction: str | None
    votes: dict[str, int]


def group(answers: Sequence[str | None], kind: str) -> dict[str, int]:
    """Count answers per equivalence class, keyed by the class's lexicographically first member.

    ``None`` and ``""`` (no answer) are not counted.
    """
    return _classes(answers, kind)[0]


def class_keys(answers: Sequence[str | None], kind: str) -> dict[str, str]:
    """Each distinct answer's class key (``group``'s), from the one grouping ``group`` makes."""
    rep_of: dict[str, str] = {}
    _classes(answers, kind, rep_of)
    return {a: rep_of.get(a, a) for a in answers if a}


def _classes(answers: Sequence[str | None], kind: str, rep_of: dict | None = None) -> tuple[dict[str, int], bool]:
    """``group``'s counts, and whether the classes are plain strings (two answers are equal iff
    they are the same string: not math, or every answer a canonical integer). ``rep_of``, when
    given, receives each distinct answer's class representative (for non-plain classes)."""
    counts: dict[str, int] = {}
    for a in answers:
        if a:
            counts[a] = counts.get(a, 0) + 1
    if kind != "math" or all(map(_canonical_int, counts)):  # the common case, kept cheap
        return counts, True
    rep_of = {} if rep_of is None else rep_of
    reps: list[str] = []
    by_value: dict[Fraction, str] = {}
    for a in sorted(counts):
        value = as_number(a)
        if value is not None and value in by_value:
            rep_of[a] = by_value[value]
            continue
        # Distinct plain numbers differ; anything symbolic goes through ``_joins``.
        candidates = reps if value is None else [r for r in reps if as_number(r) is None]
        match = next((r for r in candidates if _joins(r, a, kind)), None)
        rep_of[a] = match or a
        if match is None:
            reps.append(a)
        if value is not None:
            by_value[value] = rep_of[a]
    merged: dict[str, int] = {}  # in order of each class's first answer, as counted
    for a, c in counts.items():
        merged[rep_of[a]] = merged.get(rep_of[a], 0) + c
    return merged, False


def _joins(a: str, b: str, kind: str) -> bool:
    """Whether two distinct normalised answers, one of them symbolic, share a vote class: equal
    both ways, as a class is graded by its key and so holds only answers that grade alike (an
    equation is no value: "25" does not answer the gold "x^2+y^2=25" that its own samples do),
    and by a rule that is an equivalence, so that a vote over some samples groups them as over all.
    Where ``math_equal``'s leniency is not transitive the answers are classes apart, each graded as
    written: a number in a base ("40" is "40_8" and "40_9", which differ), a tuple and a set
    (``_order``), and a plain number and a symbolic value unless equal exactly (math-verify rounds a
    decimal to 6 places: "3.141592653" and "3.1415926535" are each "\\pi", not each other)."""
    if _in_base(a) or _in_base(b) or {_order(a), _order(b)} == {True, False}:
        return False
    a, b = _exact(a), _exact(b)
    return equal(a, b, kind) and equal(b, a, kind)


def _exact(a: str) -> str:
    """A plain number that is no integer as the fraction it is ("0.5" → "\\frac{1}{2}"), which
    math-verify compares exactly; any other answer as it is."""
    value = as_number(a)
    if value is None or value.denominator == 1:
        return a
    return f"{'-' if value < 0 else ''}\\frac{{{abs(value.numerator)}}}{{{value.denominator}}}"


def _order(a: str) -> bool | None:
    """Whether ``a`` is a bracketed tuple or interval ("(3,2)", "[1,4)": True), a collection without
    order ("3,2", "\\{2,3\\}", "\\pm1": False), or neither (None). math-verify equates "3,2" with both
    "2,3" and "(3,2)", but not "2,3" with "(3,2)": a class never holds both a tuple and an unordered
    collection, so grouping is an equivalence and a vote groups a draw as the replay groups the pool."""
    if a.startswith("\\{") or "\\pm" in a or "\\mp" in a or len(_split_top(a.replace(";", ","))) > 1:
        return False
    depths = itertools.accumulate((c in _OPEN) - (c in _CLOSE) for c in a)
    if a[:1] in "([" and a[-1:] in ")]" and 0 not in list(depths)[:-1] and len(_split_top(a[1:-1])) > 1:
        return True  # one bracket pair around it all: "(1,2)\\cup(3,4)" is neither
    return None


def majority_vote(answers: Sequence[str | None], kind: str = "math", tie_seed: int | None = None) -> Tally:
    """Majority over answers; ties go to the lexicographically earliest answer, or to a
    seeded random choice when ``tie_seed`` is given. Samples without an answer never win."""
    return _majority(_classes(answers, kind)[0], tie_seed)


def _majority(counts: dict[str, int], tie_seed: int | None) -> Tally:
    if len(counts) <= 1:  # one answer class (the common case) or none: no tie, already sorted
        return Tally(next(iter(counts), None), counts)
    best = max(counts.values())
    tied = sorted(a for a, c in counts.items() if c == best)
    winner = tied[0] if tie_seed is None or len(tied) == 1 else random.Random(tie_seed).choice(tied)
    return Tally(winner, _by_votes(counts))


def _by_votes(counts: dict[str, int]) -> dict[str, int]:
    """Counts ordered most votes first, then by answer."""
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def gold_answer(rec: dict, kind: str | None = None) -> str | None:
    """The record's gold answer, normalised like predictions (a letter for multiple choice);
    ``kind`` is the record's question type when the caller knows it."""
    gold = rec.get("answer")
    if gold is None:
        return None
    kind = kind or question_type(rec)
    if kind == "math":  # distinct integer golds would only churn normalize_math's cache
        found = (type(gold) is str and _plain_int(gold)) or normalize_math(str(gold))
    elif kind == "mc":
        found = gold_letter(rec)
    else:
        found = normalize_text(str(gold))
    return found or None  # "" or \text{}: no gold (ungraded), not one every answer misses


def is_correct(rec: dict, prediction: str | None) -> bool | None:
    """Grade a prediction against the record's gold (``None`` when there is no gold)."""
    gold = gold_answer(rec)
    if gold is None:
        return None
    if not prediction:
        return False
    return equal(gold, prediction, question_type(rec))


def vote_and_grade(answers: Sequence[str | None], gold: str | None, kind: str = "math",
                   tie_seed: int | None = None,
                   pick: Callable[[list[str | None]], str | None] | None = None) -> tuple[Tally, bool | None, bool | None]:
    """Majority vote over answers graded against the normalised ``gold``: the vote, whether
    its prediction is right and whether some voted answer is (coverage); ``None, None``
    without a gold. ``pick``, when given, elects the prediction instead of majority from each
    answer's class representative (``None`` for no answer; see ``voting.choose``)."""
    rep_of: dict[str, str] | None = None if pick is None else {}
    counts, plain = _classes(answers, kind, rep_of)
    if pick is None:
        vote = _majority(counts, tie_seed)
    else:
        winner = pick([(rep_of.get(a, a) if a else None) for a in answers])
        vote = Tally(winner, _by_votes(counts))
    if gold is None:
        return vote, None, None
    prediction = vote.prediction
    if plain and (kind != "math" or _canonical_int(gold)):
        # Equal iff the same string: a dict lookup instead of a call per voted answer.
        return vote, gold == prediction, gold in counts
    correct = prediction is not None and equal(gold, prediction, kind)
    # every answer, not each class's key: "3,2" answers the gold "(3,2)" though its class "2,3" does not
    return vote, correct, correct or any(equal(gold, a, kind) for a in set(answers) if a and a != prediction)
