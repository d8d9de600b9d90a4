"""Tool-message bodies: JSON-RPC-shaped answers, and answers sized around the body limit.

A body is drawn as a template (``Doc``) whose call ids are placeholders (``Ref``), filled in only
when the request is sent: which calls are live, answered or superseded changes as the run goes on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from hypothesis import strategies as st

from tests.fuzz.oracle import TOOL_LIMIT
from tests.fuzz.strategies import (
    clean_texts,
    deep_json,
    json_numbers,
    json_object,
    json_strings,
    json_text,
    json_values,
    texts,
    weighted,
)

if TYPE_CHECKING:
    from tests.fuzz.harness import Fuzz


class Ref(NamedTuple):
    """A call id chosen when the request is sent: a live, answered or superseded call of jeff's."""

    kind: str
    n: int


@dataclass(frozen=True)
class Doc:
    """A body template: JSON text with call-id placeholders, and its encoding."""

    parts: tuple[str | Ref, ...]
    encoding: str = "utf-8"

    def render(self, fz: Fuzz) -> bytes:
        out = []
        for part in self.parts:
            out.append(json.dumps(resolve(fz, part)) if isinstance(part, Ref) else part)
        return "".join(out).encode(self.encoding, "surrogatepass")


def resolve(fz: Fuzz, ref: Ref) -> str:
    if ref.kind == "live" and fz.live:
        return fz.live[ref.n % len(fz.live)]
    if ref.kind == "answered" and fz.answered:
        return fz.answered[ref.n % len(fz.answered)]
    if ref.kind == "superseded" and fz.superseded:
        return fz.superseded
    if ref.kind == "prefix" and fz.live:  # a near miss: a real id with one character more
        return fz.live[ref.n % len(fz.live)] + "0"
    if ref.kind == "poisoned" and fz.live:  # a real id with a lone surrogate (sent as a \udXXX escape)
        return fz.live[ref.n % len(fz.live)] + chr(0xD800 + ref.n)
    return f"call_{ref.n:032x}"


refs = st.builds(
    Ref,
    st.sampled_from(["live", "live", "live", "answered", "superseded", "prefix", "unknown"]),
    st.integers(0, 7),
)
rpc_ids = weighted(
    (6, refs),
    (1, json_strings),
    (1, json_numbers),
    (1, st.sampled_from(["true", "false", "null", "{}", "[]", '{"id":"x"}', '""', "0", "-1", "1.0"])),
    (1, json_text),
)
jsonrpc_values = weighted(
    (3, st.just('"2.0"')),
    (1, st.sampled_from(['"1.0"', '"2"', "2.0", "2", "null", '"2.0 "', '" 2.0"', '"2.00"', "[]"])),
    (1, json_text),
)


def _dumps(value: Any, ascii_only: bool = True) -> str:
    return json.dumps(value, ensure_ascii=ascii_only)


calendar_event = st.fixed_dictionaries(
    {"id": clean_texts, "title": clean_texts, "start": st.fixed_dictionaries({"dateTime": clean_texts}),
     "end": st.fixed_dictionaries({"dateTime": clean_texts})},
    optional={"location": texts, "allDay": st.booleans(), "attendees": st.lists(texts, max_size=3)},
)  # fmt: skip
calendar_results = st.builds(
    _dumps,
    st.fixed_dictionaries(
        {"events": st.lists(calendar_event, max_size=4)}, optional={"extra": st.integers()}
    ),
)
results = weighted(
    (2, calendar_results),
    (
        1,
        st.sampled_from(
            [
                '{"events":[]}',
                '{"events":null}',
                '{"events":"none"}',
                '{"events":[{}]}',
                '{"confirmed":true}',
                "{}",
                "[]",
                "null",
            ]
        ),
    ),
    (1, json_text),
    (1, deep_json),
)
error_codes = st.one_of(
    st.sampled_from(["-32010", "-32001", "-32002", "-32603", "0"]), json_numbers, json_text
)
error_messages = st.one_of(
    st.sampled_from(
        ['"PermissionRequired"', '"UserCanceled"', '""', '"' + "m" * 1001 + '"', '"' + "m" * 1000 + '"']
    ),
    json_strings,
    json_text,
)


@st.composite
def error_objects(draw: st.DrawFn) -> str:
    if draw(st.integers(0, 9)) == 0:
        return draw(json_text)  # not an object at all, or anything
    pairs = []
    if draw(st.integers(0, 9)) > 0:
        pairs.append(('"code"', draw(error_codes)))
    if draw(st.integers(0, 9)) > 0:
        pairs.append(('"message"', draw(error_messages)))
    if draw(st.booleans()):
        data = st.one_of(json_text, st.just('{"requiredPermission":"calendar.read","canPromptAgain":true}'))
        pairs.append(('"data"', draw(data)))
    pairs.extend(draw(st.lists(st.tuples(json_strings, json_text), max_size=2)))
    return json_object(draw(st.permutations(pairs)))


valid_errors = st.builds(
    _dumps,
    st.fixed_dictionaries(
        {"code": st.one_of(st.sampled_from([-32010, -32001, -32002]), st.integers()), "message": clean_texts},
        optional={
            "data": st.one_of(
                st.none(),
                st.fixed_dictionaries({"requiredPermission": clean_texts, "canPromptAgain": st.booleans()}),
                json_values,
            )
        },
    ),
    st.booleans(),
)
well_formed_outcomes = st.one_of(
    st.tuples(st.just('"result"'), calendar_results),
    st.tuples(st.just('"error"'), valid_errors),
    st.tuples(st.just('"result"'), results),  # mostly results that do not fit calendar.getEvents: 422
    st.tuples(
        st.just('"result"'),
        st.one_of(
            results, st.sampled_from(['{"confirmed":false}', '{"status":"granted","canPromptAgain":true}'])
        ),
    ),
)
encodings_rpc = st.sampled_from(["utf-8"] * 6 + ["utf-16"])


@st.composite
def rpc_docs(draw: st.DrawFn) -> Doc:
    """JSON-RPC-shaped objects: half well formed (some mutated once), half with random members."""
    members: list[tuple[str, str | Ref]] = []
    if draw(st.booleans()):
        members = [('"jsonrpc"', '"2.0"'), ('"id"', draw(refs)), draw(well_formed_outcomes)]
        mutations = [None, None, None, "drop", "replace", "extra", "duplicate", "poison_id", "poison_result"]
        mutation = draw(st.sampled_from(mutations))
        if mutation == "drop":
            members.pop(draw(st.integers(0, 2)))
        elif mutation == "replace":
            i = draw(st.integers(0, 2))
            members[i] = (members[i][0], draw(json_text))
        elif mutation == "extra":
            members.append(draw(st.tuples(json_strings, json_text)))
        elif mutation == "duplicate":
            members.append(draw(st.sampled_from(members)))
        elif mutation == "poison_id":
            members[1] = ('"id"', Ref("poisoned", draw(st.integers(0, 7))))
        elif mutation == "poison_result":  # a lone surrogate deep inside an answer that otherwise fits
            members[2] = (
                '"result"',
                '{"events":[{"id":"e1","title":"\\ud800","start":{"dateTime":"x"},"end":{"dateTime":"y"}}]}',
            )
        return _members_doc(draw(st.permutations(members)), draw(encodings_rpc))
    if draw(st.integers(0, 9)) > 0:
        members.append(('"jsonrpc"', draw(jsonrpc_values)))
    if draw(st.integers(0, 9)) > 0:
        members.append(('"id"', draw(rpc_ids)))
    which = draw(st.sampled_from(["result", "result", "error", "error", "both", "neither"]))
    if which in ("result", "both"):
        members.append(('"result"', draw(results)))
    if which in ("error", "both"):
        members.append(('"error"', draw(error_objects())))
    if draw(st.integers(0, 4)) == 0:
        members.extend(draw(st.lists(st.tuples(json_strings, json_text), min_size=1, max_size=2)))
    if draw(st.integers(0, 9)) == 0 and members:  # a duplicate member: the last one wins
        members.append(draw(st.sampled_from(members)))
    return _members_doc(draw(st.permutations(members)), draw(encodings_rpc))


def _members_doc(members: list[tuple[str, str | Ref]], encoding: str) -> Doc:
    parts: list[str | Ref] = ["{"]
    for i, (key, value) in enumerate(members):
        parts.extend([("," if i else "") + key + ":", value])
    parts.append("}")
    return Doc(tuple(parts), encoding)


@st.composite
def sized_docs(draw: st.DrawFn) -> Doc:
    """A valid-looking answer padded to just under, at, or just over the 256 KiB limit."""
    target = TOOL_LIMIT + draw(st.integers(-40, 40))
    ref = draw(refs)
    return Doc(("", ref, ""), "pad:" + str(target))  # encoding slot carries the target size


def render_sized(fz: Fuzz, doc: Doc) -> bytes:
    target = int(doc.encoding.removeprefix("pad:"))
    call_id = resolve(fz, doc.parts[1])  # type: ignore[arg-type]
    template = json.dumps({"jsonrpc": "2.0", "id": call_id, "result": {"events": [], "pad": "<PAD>"}})
    pad = max(0, target - (len(template.encode()) - len("<PAD>")))
    return template.replace("<PAD>", "x" * pad).encode()
