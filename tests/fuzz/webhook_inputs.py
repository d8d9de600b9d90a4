"""Webhook inputs: Sendbird-shaped events with odd fields, and bodies under wrong signatures."""

from __future__ import annotations

import json
import string
from typing import Any

from hypothesis import strategies as st

from tests.fuzz.oracle import MESSAGE_SEND, REVISIONS
from tests.fuzz.strategies import header_bytes, json_values, texts, weighted
from tests.support import API_TOKEN, BOT, sign, webhook_payload


def signed_headers(body: bytes) -> list[tuple[bytes, bytes]]:
    return [(b"content-type", b"application/json"), (b"x-sendbird-signature", sign(body).encode())]


channel_urls = st.one_of(
    st.sampled_from(
        ["sendbird_group_channel_1", "a/b c?d=e&f#g", "%2F..%2F", "", " ", "ch-1", "../../x", "채널"]
    ),
    st.text(max_size=60),
    texts,
)
message_ids = weighted(
    (6, st.integers(min_value=1, max_value=2**63)),
    (
        2,
        st.one_of(
            st.text(string.digits, min_size=1, max_size=20),
            st.sampled_from([0, -1, True, False, 1.0]),
            st.integers(),
            st.text(max_size=30),
            texts,
            st.floats(),
            st.none(),
            st.booleans(),
            st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
            st.lists(st.integers(), max_size=2),
            st.integers(min_value=10**100, max_value=10**300),
        ),
    ),
)
ABSENT = object()


def maybe(
    strategy: st.SearchStrategy[Any], weird: st.SearchStrategy[Any] = json_values
) -> st.SearchStrategy[Any]:
    """Mostly the right shape, sometimes absent, sometimes any JSON value."""
    return weighted((8, strategy), (1, st.just(ABSENT)), (1, weird))


@st.composite
def sendbird_events(draw: st.DrawFn) -> dict[str, Any]:
    sender = {
        "user_id": draw(maybe(st.one_of(st.sampled_from(["jeff", BOT, "mina", ""]), texts))),
        "nickname": "n",
    }
    payload = {
        "message_id": draw(maybe(message_ids)),
        "message": draw(
            maybe(st.one_of(st.sampled_from(["hello", "  ", "", "calendar"]), texts, st.text(max_size=200)))
        ),
        "custom_type": draw(maybe(st.sampled_from(["", "agent-rpc", "other"]) | texts)),
        "created_at": draw(json_values),
    }
    channel = {"channel_url": draw(maybe(channel_urls)), "name": draw(texts)}
    event: dict[str, Any] = {
        "category": draw(
            maybe(
                st.sampled_from(
                    [
                        MESSAGE_SEND,
                        MESSAGE_SEND,
                        *REVISIONS,
                        "group_channel:join",
                        "open_channel:message_send",
                    ]
                )
                | texts
            )
        ),
        "type": draw(maybe(st.sampled_from(["MESG", "MESG", "FILE", "ADMM", "mesg"]) | st.none() | texts)),
        "custom_type": draw(maybe(st.sampled_from(["", "agent-rpc", "agent-rpc-settled"]) | texts)),
        "sender": draw(maybe(st.just(sender) | st.none())),
        "payload": draw(maybe(st.just(payload) | st.none())),
        "channel": draw(maybe(st.just(channel) | st.none())),
        "app_id": "test-app",
    }
    event.update(draw(st.dictionaries(st.text(max_size=8), json_values, max_size=2)))
    for part in (event, sender, payload, channel):
        for key in [k for k, v in part.items() if v is ABSENT]:
            del part[key]
    if draw(st.integers(0, 3)) == 0:  # a lone surrogate (or NUL) in one of the fields a turn is built from
        part, key = draw(
            st.sampled_from(
                [(sender, "user_id"), (payload, "message"), (channel, "channel_url"), (payload, "message_id")]
            )
        )
        part[key] = draw(st.sampled_from(["hi", "", "42"])) + draw(
            st.sampled_from(["\ud800", "\udfff", "\x00", "\ud83d"])
        )
    return event


@st.composite
def bad_signatures(draw: st.DrawFn) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    body = draw(
        st.one_of(st.binary(max_size=300), st.just(json.dumps(webhook_payload("hi", message_id=5)).encode()))
    )
    right = sign(body)
    kind = draw(
        st.sampled_from(
            ["none", "empty", "hex", "other_token", "other_body", "truncated", "random", "x_signature"]
        )
    )
    headers = [(b"content-type", b"application/json")]
    name = b"x-sendbird-signature"
    if kind == "none":
        return body, headers
    if kind == "empty":
        value = ""
    elif kind == "hex":
        value = draw(st.text("0123456789abcdef", max_size=80))
    elif kind == "other_token":
        value = sign(
            body, token=draw(st.text(string.printable, max_size=30).filter(lambda t: t != API_TOKEN))
        )
    elif kind == "other_body":
        value = sign(body + draw(st.binary(min_size=1, max_size=5)))
    elif kind == "truncated":
        value = right[: draw(st.integers(0, len(right) - 1))]
    elif kind == "x_signature":  # the fallback header, wrongly signed
        name, value = b"x-signature", sign(body, token="nope")
    else:
        raw = draw(header_bytes)
        if raw.strip().lower() == right.encode():
            raw += b"x"
        return body, [*headers, (name, raw)]
    return body, [*headers, (name, value.encode())]
