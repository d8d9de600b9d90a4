"""Fuzzing ``POST /api/v1/webhooks/sendbird``: signed junk, Sendbird-shaped events, bad signatures, sizes."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import strategies as st

from tests.fuzz.harness import SCALE, Fuzz, fuzz_server, run_property
from tests.fuzz.oracle import (
    ANY_WEBHOOK_OUTCOME,
    REJECTED,
    WEBHOOK_CODES,
    WEBHOOK_LIMIT,
    WEBHOOK_PATH,
    webhook_expectation,
)
from tests.fuzz.strategies import as_chunks, encoded_docs, json_values, texts
from tests.fuzz.webhook_inputs import bad_signatures, sendbird_events, signed_headers
from tests.support import sign, webhook_payload


def send_webhook(
    fz: Fuzz, body: bytes, headers: list[tuple[bytes, bytes]], signed: bool, event: Any = None
) -> None:
    r = fz.post(WEBHOOK_PATH, body, headers, WEBHOOK_CODES)
    if len(body) > WEBHOOK_LIMIT:
        assert r.status_code == 413, r.text
        return
    if not signed:
        assert r.status_code == 401, (r.status_code, r.text)
        return
    assert r.status_code in (200, 400), (r.status_code, r.text, body[:300])
    if r.status_code == 200:
        assert set(r.json()) == {"status"}, r.text
    outcome = REJECTED if r.status_code == 400 else r.json()["status"]
    allowed = webhook_expectation(event) if event is not None else ANY_WEBHOOK_OUTCOME
    assert outcome in allowed, (outcome, sorted(allowed), r.text, event)


@pytest.mark.timeout(10 * SCALE)
async def test_webhook_signed_arbitrary_bytes(start_server: Any) -> None:
    """Random bytes and random JSON documents, signed correctly so they get past the signature check."""
    bodies = st.one_of(st.binary(max_size=2000), encoded_docs())
    async with fuzz_server(start_server) as fz:

        def prop(body: bytes) -> None:
            send_webhook(fz, body, signed_headers(body), signed=True)

        ran = await asyncio.to_thread(run_property, prop, 250, bodies)
        print(fz.summary("webhook bytes", ran))


@pytest.mark.timeout(20 * SCALE)
async def test_webhook_signed_random_objects(start_server: Any) -> None:
    """Random JSON objects (any keys and values), signed correctly."""
    objects = st.dictionaries(
        st.one_of(st.sampled_from(["category", "type", "sender", "payload", "channel"]), texts),
        json_values,
        max_size=6,
    )
    async with fuzz_server(start_server) as fz:

        def prop(event: dict[str, Any], ascii_only: bool) -> None:
            body = json.dumps(event, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
            send_webhook(fz, body, signed_headers(body), signed=True, event=event)

        ran = await asyncio.to_thread(run_property, prop, 120, objects, st.booleans())
        print(fz.summary("webhook objects", ran))


@pytest.mark.timeout(30 * SCALE)
async def test_webhook_sendbird_shaped_payloads(start_server: Any) -> None:
    """Sendbird-shaped events whose every field may be missing, null or of another type."""
    async with fuzz_server(start_server) as fz:

        def prop(event: dict[str, Any], ascii_only: bool) -> None:
            body = json.dumps(event, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
            send_webhook(fz, body, signed_headers(body), signed=True, event=event)

        ran = await asyncio.to_thread(run_property, prop, 300, sendbird_events(), st.booleans())
        print(fz.summary("webhook sendbird", ran))


@pytest.mark.timeout(5 * SCALE)
async def test_webhook_unsigned_and_wrongly_signed(start_server: Any) -> None:
    """Without the right signature every body is 401 bad_signature, whatever it holds."""
    async with fuzz_server(start_server) as fz:

        def prop(case: tuple[bytes, list[tuple[bytes, bytes]]]) -> None:
            body, headers = case
            send_webhook(fz, body, headers, signed=False)

        ran = await asyncio.to_thread(run_property, prop, 150, bad_signatures())
        print(fz.summary("webhook signatures", ran))
        # and the right signature, in upper case or through the x-signature fallback, is accepted
        body = json.dumps(webhook_payload("signed", message_id=77, channel="fz-sig")).encode()
        for headers in (
            [(b"x-sendbird-signature", sign(body).upper().encode())],
            [(b"x-signature", sign(body).encode())],
        ):
            r = await fz.h.http.post(WEBHOOK_PATH, content=body, headers=headers)
            assert r.status_code == 200 and r.json()["status"] in ("queued", "duplicate"), r.text


@pytest.mark.timeout(5 * SCALE)
async def test_webhook_over_the_size_limit(start_server: Any) -> None:
    """Bodies around 1 MiB: over it is 413 before the signature is even looked at."""
    async with fuzz_server(start_server) as fz:

        def prop(delta: int, signed: bool, chunk: int | None) -> None:
            size = WEBHOOK_LIMIT + delta
            event = webhook_payload("big", message_id=900_000 + delta, channel="fz-big")
            event["pad"] = ""
            head = json.dumps(event)
            body = (head[:-2] + "x" * max(0, size - len(head)) + head[-2:]).encode()
            headers = signed_headers(body) if signed else [(b"x-sendbird-signature", b"00")]
            content = as_chunks(body, chunk) if chunk else body
            r = fz.post(WEBHOOK_PATH, content, headers, WEBHOOK_CODES)
            if len(body) > WEBHOOK_LIMIT:
                assert r.status_code == 413
            else:
                assert r.status_code == (200 if signed else 401), r.text

        ran = await asyncio.to_thread(
            run_property, prop, 20, st.integers(-20, 20), st.booleans(), st.none() | st.integers(4096, 65536)
        )
        print(fz.summary("webhook size", ran))
