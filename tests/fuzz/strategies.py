"""Shared hypothesis strategies: JSON built as text, header values, and chunked bodies.

JSON is built as text rather than from Python values, so that anything a client could send is
reachable: lone surrogates, NaN/Infinity, numbers past the int-digit limit, duplicate keys, deep
nesting, UTF-16/32 encodings and stray bytes around the document.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st


def weighted(*options: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """Like one_of, with weights (one_of merges repeated strategies, so repeating them does not weigh)."""
    total = sum(weight for weight, _ in options)

    @st.composite
    def pick(draw: st.DrawFn) -> Any:
        n = draw(st.integers(0, total - 1))
        for weight, strategy in options:
            if n < weight:
                return draw(strategy)
            n -= weight
        raise AssertionError("unreachable")

    return pick()


# Mostly ordinary characters; lone surrogates and JSON-significant ones as a spice.
any_char = weighted(
    (12, st.characters()), (1, st.characters(categories=["Cs"])), (1, st.sampled_from('\x00\n"\\/\u2028'))
)
# (st.text() would drop the surrogates of a one_of alphabet, so the characters are joined by hand)
texts = st.lists(any_char, max_size=40).map("".join)
clean_texts = st.text(st.characters(categories=["L", "N", "P", "Zs"]), min_size=1, max_size=40)


def _render_str(s: str, ascii_only: bool) -> str:
    return json.dumps(s, ensure_ascii=ascii_only)


json_strings = weighted(
    (3, st.builds(_render_str, st.text(max_size=40), st.booleans())),
    (1, st.builds(_render_str, texts, st.booleans())),  # lone surrogates, escaped or raw
)
json_numbers = weighted(
    (4, st.integers().map(str)),
    (2, st.integers(min_value=-(10**40), max_value=10**40).map(str)),
    (2, st.floats(allow_nan=False, allow_infinity=False).map(json.dumps)),
    (1, st.floats().map(json.dumps)),  # NaN, Infinity, -Infinity too
    (1, st.sampled_from(["1e400", "-1e400", "-0", "0.0", "1E-400", "12345678901234567890.5", "1" * 4300])),
    (1, st.integers(4290, 4400).map(lambda n: "7" * n)),  # past Python's int-digit limit
)
json_leaves = st.one_of(st.sampled_from(["null", "true", "false"]), json_numbers, json_strings)


def _array(items: list[str]) -> str:
    return "[" + ",".join(items) + "]"


def json_object(pairs: list[tuple[str, str]]) -> str:
    """An object from (key, value) JSON texts, in that order, duplicates kept."""
    return "{" + ",".join(f"{k}:{v}" for k, v in pairs) + "}"


json_text = st.recursive(
    json_leaves,
    lambda kids: (
        st.lists(kids, max_size=5).map(_array)
        | st.lists(st.tuples(json_strings, kids), max_size=5).map(json_object)
    ),
    max_leaves=25,
)


def _json_value(text: str) -> Any:
    """A JSON text fragment as a Python value, for building payload objects (None when unparsable)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


json_values = json_text.map(_json_value)


def _nest(n: int, leaf: str, as_array: bool) -> str:
    return ("[" * n + leaf + "]" * n) if as_array else ('{"a":' * n + leaf + "}" * n)


deep_json = st.builds(
    _nest, st.integers(0, 1200) | st.integers(20_000, 50_000), json_leaves | st.just("{}"), st.booleans()
)
json_docs = weighted((2, json_text), (1, deep_json))
encodings = st.sampled_from(["utf-8", "utf-8", "utf-8", "utf-16", "utf-32"])
affixes = st.sampled_from(["", "", " ", "\n", "\ufeff", "\x00", "garbage"])


@st.composite
def encoded_docs(draw: st.DrawFn, docs: st.SearchStrategy[str] = json_docs) -> bytes:
    text = draw(affixes) + draw(docs) + draw(affixes)
    return text.encode(draw(encodings), "surrogatepass")


# -- header values -----------------------------------------------------------------------------

# A header value as HTTP/1.1 defines it (RFC 9110 field-value): field-vchars (VCHAR 0x21-0x7E or
# obs-text 0x80-0xFF) with runs of SP or HTAB between them, none at either end (those are not part
# of the value). Only such values get to the app: uvicorn's HTTP parser refuses other bytes with
# its own plain-text 400, which is not the app's contract.
FIELD_VALUE = re.compile(rb"(?:[\x21-\x7e\x80-\xff]+(?:[\t ]+[\x21-\x7e\x80-\xff]+)*)?")
HEADER_BYTES = [9, *range(0x20, 0x7F), *range(0x80, 0x100)]  # HTAB, SP, VCHAR, obs-text
header_bytes = (
    st.lists(st.sampled_from(HEADER_BYTES), max_size=200)
    .map(lambda b: bytes(b).strip())
    .filter(lambda b: FIELD_VALUE.fullmatch(b) is not None)
)


# -- bodies on the wire ------------------------------------------------------------------------


def as_chunks(body: bytes, size: int) -> Iterator[bytes]:
    """Transfer-Encoding: chunked, at most ~32 chunks (tiny chunks of a big body only cost time)."""
    size = max(size, len(body) // 32 + 1)
    for i in range(0, len(body), size):
        yield body[i : i + size]
