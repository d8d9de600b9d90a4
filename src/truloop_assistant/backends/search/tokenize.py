"""The tokenizer for in-process search: Korean through a morphological analyzer, English stemmed.

Korean text goes through Kiwi (``kiwipiepy``), which keeps the content morphemes (nouns, verb and
adjective stems, roots, numerals, Hanja) and drops what particles and endings add ("연차는",
"연차를" and "연차가" are all "연차"; "받아요" and "받았는데" are both "받다"). Everything else
becomes lowercase words, stemmed with the Snowball English stemmer ("reimbursed" and
"reimbursement" are both "reimburs"). Stopwords of both languages are dropped. Indexing and
querying use the same function.

Kiwi's model takes about a second and some 300 MB of memory to load, so it is loaded on the first
text with Hangul in it, not at import (see :func:`load_analyzer`).
"""

from __future__ import annotations

import functools
import logging
import re
import threading
import time
import unicodedata
from typing import TYPE_CHECKING

from ...i18n import HANGUL

if TYPE_CHECKING:
    from kiwipiepy import Kiwi

log = logging.getLogger(__name__)

TOKENIZER_VERSION = 3
"""Bumped whenever tokenization changes; tokens saved with another version must be recomputed.

Version 3: Korean through Kiwi's morphemes (was: character bigrams), English through Snowball.
"""

_TOKEN_RUN = re.compile(rf"(?P<hangul>[{HANGUL}]+)|[^\W_{HANGUL}]+(?:-[^\W_{HANGUL}]+)*")
_HAS_HANGUL = re.compile(f"[{HANGUL}]")
_HAS_SYLLABLE = re.compile("[\uac00-\ud7a3]")

_EN_STOPWORDS = frozenset(
    """a about after all also am an and any are as at be been before being but by can could did do
    does doing for from get gets got had has have having he her here hers him his how i if in into is
    it its just let me might more most must my no nor not of off on once only or other our ours out
    over own please same she should so some such than that the their them then there these they this
    those through to too under until up very was we were what when where which while who whom why will
    with would you your yours""".split()
)

_KEPT_TAGS = frozenset({"NNG", "NNP", "NNB", "NR", "MM", "XR", "SH", "VV", "VA"})
"""Kiwi's tags of content morphemes: nouns (bound ones too: 시간 and 일 after a number are bound),
numerals, determiners (첫), roots, Hanja, verb and adjective stems. Particles (J*), endings (E*),
affixes (XP*, XS*), pronouns, adverbs and interjections carry no subject of their own."""
_NOUN_TAGS = frozenset({"NNG", "NNP", "NNB", "NR", "XR"})
_COMPOUND_TAGS = _NOUN_TAGS | {"XSN"}
_PREDICATES = frozenset({"VV", "VA"})
"""Verb and adjective stems are indexed as their dictionary form (받 -> 받다), apart from nouns
of the same spelling (차 "car" and 차다 "to kick")."""
_KO_STOPWORDS = frozenset(
    """하다 되다 있다 없다 같다 않다 이다 아니다 어떻다 어떡하다 알다 알리다 주다 보다 싶다
    궁금 궁금하다 뭐 무엇 거 것 수 데 때 때문 등 중 뿐 듯 줄 바 지 좀 혹시 정말 그냥 지금
    제 저 나 우리 이 그 몇 모든 어떤 무슨 어느 여러 다른 각 한 두 세 네""".split()
)

_kiwi: Kiwi | None = None
_kiwi_lock = threading.Lock()
"""Guards loading the analyzer, and each use of it: the index is built in a thread while queries
are tokenized in the event loop's."""


def load_analyzer() -> None:
    """Load the Korean analyzer now (a second or so, holding the GIL); the first Korean text does it."""
    _analyzer()


def analyzer_loaded() -> bool:
    return _kiwi is not None


def _analyzer() -> Kiwi:
    global _kiwi
    if _kiwi is None:
        with _kiwi_lock:
            if _kiwi is None:
                started = time.perf_counter()
                from kiwipiepy import Kiwi

                # Without the dictionaries of proper nouns from Wikipedia and WikiData: together they
                # add some 250 MB and two seconds to the load, and on the retrieval set they find
                # nothing more (a handbook's own names are not in them anyway).
                kiwi = Kiwi(load_default_dict=False, load_multi_dict=False)
                kiwi.tokenize("")  # Kiwi finishes loading on its first use: done here, under the lock
                log.info("Korean analyzer loaded in %.1f s", time.perf_counter() - started)
                _kiwi = kiwi
    return _kiwi


def _korean_tokens(text: str) -> list[str]:
    """The content morphemes of the Hangul in ``text`` (the whole text is analysed, for context)."""
    kiwi = _analyzer()
    with _kiwi_lock:
        morphemes = kiwi.tokenize(text)
    tokens: list[str] = []
    compound: list[str] = []
    end = -1
    for morpheme in morphemes:
        tag = morpheme.tag.split("-")[0]  # VV-R, VA-I: regular and irregular conjugations alike
        # Nouns written together ("육아휴직", "주차권") are also indexed whole: the analyzer may cut
        # a word it does not know ("병가" as 병 + 가), and a whole word is the better match.
        if tag in _COMPOUND_TAGS and (morpheme.start == end or tag in _NOUN_TAGS):
            if morpheme.start != end:
                _end_compound(compound, tokens)
            compound.append(morpheme.form)
        else:
            _end_compound(compound, tokens)
        end = morpheme.start + morpheme.len
        if tag not in _KEPT_TAGS or (tag != "SH" and not _HAS_SYLLABLE.search(morpheme.form)):
            continue
        token = f"{morpheme.form}다" if tag in _PREDICATES else morpheme.form
        if token not in _KO_STOPWORDS:
            tokens.append(token)
            if tag in _NOUN_TAGS and len(token) >= 3:
                tokens.extend(_halves(token))
    _end_compound(compound, tokens)
    return tokens


def _halves(noun: str) -> list[str]:
    """The first two syllables of a noun the analyzer keeps whole (and the last two of a longer one):
    "주차장" is also found as "주차", "건강검진" as "건강" and "검진"."""
    return [noun[:2], noun[-2:]] if len(noun) >= 4 else [noun[:2]]


def _end_compound(compound: list[str], tokens: list[str]) -> None:
    if len(compound) > 1 and _HAS_SYLLABLE.search(whole := "".join(compound)):
        tokens.append(whole)
    compound.clear()


@functools.cache
def _stemmer() -> object:
    import Stemmer

    return Stemmer.Stemmer("english")


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    if not word.isascii() or not word.isalpha():
        return word
    return str(_stemmer().stemWord(word))  # type: ignore[attr-defined]


def _word_tokens(run: str) -> list[str]:
    # "wi-fi" is found as "wifi", "wi" and "fi": writers hyphenate inconsistently.
    words = [run.replace("-", ""), *run.split("-")] if "-" in run else [run]
    tokens: list[str] = []
    for word in words:
        if word in _EN_STOPWORDS or (len(word) == 1 and not word.isdigit()):
            continue
        tokens.append(_stem(word))
    return tokens


def tokenize(text: str) -> list[str]:
    """Tokens for indexing and querying: Korean content morphemes and stemmed lowercase words."""
    normalized = unicodedata.normalize("NFKC", text).lower()
    tokens: list[str] = []
    has_hangul = False
    for match in _TOKEN_RUN.finditer(normalized):
        if match.lastgroup == "hangul":
            has_hangul = True
        else:
            tokens.extend(_word_tokens(match.group()))
    if has_hangul:
        tokens.extend(_korean_tokens(normalized))
    return tokens
