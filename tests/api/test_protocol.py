"""The published device protocol is what the server checks: the schemas and the server agree."""

from __future__ import annotations

from typing import Any

import jsonschema_rs
import pytest
from pydantic import ValidationError

from tests.support import calendar_model
from truloop_assistant.deferred.handlers import HANDLERS_BY_METHOD

EVENT = {"id": "e1", "title": "Standup", "start": {"dateTime": "2026-11-24T10:00:00+09:00"},
         "end": {"dateTime": "2026-11-24T10:15:00+09:00"}}  # fmt: skip
ANSWERS: dict[str, list[Any]] = {
    "calendar.getEvents": [
        {"events": []},
        {"events": [EVENT]},
        {"events": [{**EVENT, "location": "Room 4", "allDay": False}], "nextPageToken": None},
        {},
        {"events": "none"},
        {"events": [{**EVENT, "id": 7}]},
        {"events": [{**EVENT, "start": {}}]},
        {"events": [EVENT] * 1001},
        [],
        None,
    ],
    "interaction.confirm": [
        {"confirmed": True},
        {"confirmed": False, "pressedAt": "2026-11-24T10:00:00Z"},
        {"confirmed": "yes"},
        {"confirmed": 1},
        {},
        "ok",
        # The server's own dialogs: a reason, changes, "always".
        {"confirmed": False, "reason": "Mina is away"},
        {"confirmed": True, "edited": {"start_time": "2026-12-02T12:30:00+09:00"}, "remember": "always"},
        {"confirmed": False, "reason": "x" * 501},
        {"confirmed": True, "remember": "sometimes"},
        {"confirmed": True, "edited": ["title"]},
    ],
    "permissions.getStatus": [
        {"status": "granted", "canPromptAgain": False},
        {"status": "notDetermined", "canPromptAgain": True},
        {"status": "maybe", "canPromptAgain": True},
        {"status": "denied"},
        {"status": "denied", "canPromptAgain": "no"},
        {"status": None, "canPromptAgain": False},
    ],
}


async def test_the_protocol_is_published_without_a_token(start_server: Any) -> None:
    async with start_server() as h:
        r = await h.http.get("/api/v1/agent/protocol")
        assert r.status_code == 200
        document = r.json()
        assert set(document["methods"]) == set(HANDLERS_BY_METHOD) == set(ANSWERS)
        assert document["methods"]["calendar.getEvents"]["tool"] == "get_calendar_events"
        assert document["custom_type"] == "agent-rpc"
        assert set(document["errors"]) == {"-32010", "-32001", "-32002"}
        assert "requiredPermission" in document["errors"]["-32010"]["data"]["properties"]
        assert "/api/v1/agent/protocol" in (await h.http.get("/openapi.json")).json()["paths"]


async def test_the_params_the_server_sends_fit_the_published_schema(start_server: Any) -> None:
    async with start_server(model=calendar_model()) as h:
        published = (await h.http.get("/api/v1/agent/protocol")).json()["methods"]
        await h.user_says("what's on this week?")
        [request] = await h.rpc_requests(1)
    assert request["method"] == "calendar.getEvents"
    assert jsonschema_rs.validator_for(published["calendar.getEvents"]["params"]).is_valid(request["params"])
    assert not jsonschema_rs.validator_for(published["calendar.getEvents"]["params"]).is_valid({})


@pytest.mark.parametrize("method", sorted(ANSWERS))
async def test_a_result_fits_the_published_schema_exactly_when_the_server_accepts_it(
    start_server: Any, method: str
) -> None:
    async with start_server() as h:
        schema = (await h.http.get("/api/v1/agent/protocol")).json()["methods"][method]["result"]
    published = jsonschema_rs.validator_for(schema)
    handler = HANDLERS_BY_METHOD[method]
    verdicts = []
    for answer in ANSWERS[method]:
        try:
            handler.validate_result(answer)
            accepted = True
        except ValidationError:
            accepted = False
        assert published.is_valid(answer) == accepted, (answer, accepted)
        verdicts.append(accepted)
    assert True in verdicts and False in verdicts  # both kinds were tried


async def test_each_method_says_who_answers_it_and_gives_an_example_that_fits(start_server: Any) -> None:
    async with start_server() as h:
        methods = (await h.http.get("/api/v1/agent/protocol")).json()["methods"]
    assert methods["interaction.confirm"]["answered_by"] == "person"
    assert methods["calendar.getEvents"]["answered_by"] == "phone"
    for method, published in methods.items():
        assert jsonschema_rs.validator_for(published["result"]).is_valid(published["example"]), method
        HANDLERS_BY_METHOD[method].validate_result(published["example"])
