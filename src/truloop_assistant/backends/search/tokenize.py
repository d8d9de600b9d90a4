"""The tokenizer for in-process search: Korean and English without a morphological analyzer.

Hangul runs become character bigrams after a light particle strip (plus the whole stem when it is
three to five syllables, so exact words rank above scattered bigrams); other scripts become
lowercase words after light English suffix stripping. Stopwords of both languages are dropped.
Indexing and querying use the same function.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from ...i18n import HANGUL

TOKENIZER_VERSION = 2
"""Bumped whenever tokenization changes; tokens saved with another version must be recomputed."""

_TOKEN_RUN = re.compile(rf"(?P<hangul>[{HANGUL}]+)|[^\W_{HANGUL}]+(?:-[^\W_{HANGUL}]+)*")

_EN_STOPWORDS = frozenset(
    """a about after all also am an and any are as at be been before being but by can could did do
    does doing for from get gets got had has have having he her here hers him his how i if in into is
    it its just let me might more most must my no nor not of off on once only or other our ours out
    over own please same she should so some such than that the their them then there these they this
    those through to too under until up very was we were what when where which while who whom why will
    with would you your yours""".split()
)
_KO_STOPWORDS = frozenset(
    """어떻게 어떤 어떻 무엇 뭐 뭐야 뭔가 뭔가요 뭐예요 알려 알려줘
    알려주세요 알려주 궁금 궁금해 궁금합니다 있나 있어 있어요 있나요 없어
    해줘 해주세요 그리고 그런데 하지만 또는 제가 저는 나는 내가 우리 혹시
    언제 어디 누구 이거 그거 저거 이건 그건 정말 그냥 지금 해 뭐해
    어떡해 하나 되나 돼 할까 하지 좀""".split()
)
_KO_SUFFIXES = frozenset(
    """은 는 이 가 을 를 에 의 도 만 로 와 과 랑 나 야 요 께 에서
    에게 으로 까지 부터 처럼 보다 이랑 하고 이나 이야 이고 이며 라고
    예요 이에요 에서는 으로는 에는 에도 에서도 으로도 까지는 부터는 이라도
    에게는 만큼 마다 하다 하기 하는 하면 하려면 하려고 하나요 하세요 해요
    해야 해서 했어요 했어 합니다 합니까 할 한 해 해줘 해주세요 되나요
    돼요 되면 되는 됩니다 인가요 입니다 이다 인데""".split()
)
_KO_SUFFIX_MAX = max(map(len, _KO_SUFFIXES))


def _strip_particle(word: str) -> str:
    """Remove the longest trailing Korean particle or verb ending, keeping at least two syllables."""
    # Longest first, so "에서는" is stripped whole rather than leaving "에서".
    for length in range(min(_KO_SUFFIX_MAX, len(word) - 2), 0, -1):
        if word[-length:] in _KO_SUFFIXES:
            return word[:-length]
    return word


def _hangul_tokens(run: str) -> list[str]:
    if run in _KO_STOPWORDS:
        return []
    stem = _strip_particle(run)
    if stem in _KO_STOPWORDS:
        return []
    if len(stem) == 1:
        return [stem]
    tokens = [stem[i : i + 2] for i in range(len(stem) - 1)]
    if 3 <= len(stem) <= 5:
        tokens.append(stem)
    return tokens


def _stem_english(word: str) -> str:
    """A deliberately light stemmer: plurals and a few common suffixes."""
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us")):
        word = word[:-1]
    for suffix in ("ment", "ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def _word_tokens(run: str) -> list[str]:
    # "wi-fi" is found as "wifi", "wi" and "fi": writers hyphenate inconsistently.
    words = [run.replace("-", ""), *run.split("-")] if "-" in run else [run]
    tokens = []
    for word in words:
        if word in _EN_STOPWORDS or (len(word) == 1 and not word.isdigit()):
            continue
        tokens.append(_stem_english(word))
    return tokens


@functools.cache  # called with Hangul characters only, so it holds at most a few thousand
def _is_syllable(char: str) -> bool:
    return unicodedata.name(char, "").startswith("HANGUL SYLLABLE ")


def _hangul_run_tokens(run: str) -> list[str]:
    """Syllables as bigrams; loose jamo around them ("알려줘ㅠㅠ") as a word of their own.

    Jamo trailing a word are tone, not part of it: kept with the word they would hide its particle
    and make it miss its stopword.
    """
    if _is_syllable(run[0]) and _is_syllable(run[-1]):
        return _hangul_tokens(run)
    start, end = 0, len(run)
    while start < end and not _is_syllable(run[start]):
        start += 1
    while end > start and not _is_syllable(run[end - 1]):
        end -= 1
    tokens = _word_tokens(run[:start]) if start else []
    if end > start:
        tokens.extend(_hangul_tokens(run[start:end]))
    if end < len(run) and end > start:
        tokens.extend(_word_tokens(run[end:]))
    return tokens


def tokenize(text: str) -> list[str]:
    """Tokens for indexing and querying: Hangul character bigrams and lowercase words."""
    normalized = unicodedata.normalize("NFKC", text).lower()
    tokens: list[str] = []
    for match in _TOKEN_RUN.finditer(normalized):
        run = match.group()
        tokens.extend(_hangul_run_tokens(run) if match.lastgroup == "hangul" else _word_tokens(run))
    return tokens
