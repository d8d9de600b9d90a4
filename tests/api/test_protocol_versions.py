"""The device protocol's versions: an app names the one it speaks, and is sent no method of a later one."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.support import JWT_SECRET, LOCATION_TOOL, Harness
from truloop_assistant.auth import issue_token
from truloop_assistant.protocol import versions
from truloop_assistant.protocol.device_methods import DEVICE_METHODS

PATH = "/api/v1/agent/client-tools"
LATER = "2027-06-01"
"""A version after today's, in which the tests pretend ``permissions.getStatus`` appeared."""
NEWER = "get_permission_status"


def auth(user: str = "jeff", **headers: str) -> dict[str, str]:
    return {"authorization": f"Bearer {issue_token(JWT_SECRET, user)}", **headers}


async def declare(h: Harness, body: dict[str, Any], **headers: str) -> httpx.Response:
    return await h.http.put(PATH, content=json.dumps(body), headers=auth(**headers))


async def declared(h: Harness, device_id: str | None = None) -> Any:
    r = await h.http.get(PATH, params={"device_id": device_id} if device_id else {}, headers=auth())
    assert r.status_code == 200, r.text
    return r.json()


async def test_the_published_protocol_names_its_version_and_each_methods(start_server: Any) -> None:
    async with start_server() as h:
        document = (await h.http.get("/api/v1/agent/protocol")).json()
    assert document["protocol_version"] == "2026-12-01" == versions.PROTOCOL_VERSION
    assert {m: spec["since"] for m, spec in document["methods"].items()} == {
        "calendar.getEvents": "2026-12-01",
        "interaction.confirm": "2026-12-01",
        "permissions.getStatus": "2026-12-01",
    }


async def test_an_app_names_its_version_in_the_declaration_or_the_header(start_server: Any) -> None:
    async with start_server() as h:
        body = {"tools": [LOCATION_TOOL], "protocol": "2026-12-01"}
        assert (await declare(h, body)).status_code == 200
        assert await declared(h) == body  # read back as sent

        assert (await declare(h, {"tools": []}, **{versions.HEADER: "2027-01-15"})).status_code == 200
        assert await declared(h) == {"tools": [], "protocol": "2027-01-15"}  # the header's, kept

        both = {"tools": [], "protocol": "2026-12-01", "device_id": "phone"}
        assert (await declare(h, both, **{versions.HEADER: "2027-01-15"})).status_code == 200
        assert await declared(h, "phone") == both  # the body's wins

        assert (await declare(h, {"tools": []})).status_code == 200
        assert await declared(h) == {"tools": []}  # none named: the baseline, and nothing to read back


@pytest.mark.parametrize(
    ("body", "headers", "where"),
    [
        ({"tools": [], "protocol": "2026-13-01"}, {}, "protocol: '2026-13-01'"),
        ({"tools": [], "protocol": "20261201"}, {}, "protocol: '20261201'"),
        ({"tools": [], "protocol": 20261201}, {}, "protocol"),
        ({"tools": []}, {versions.HEADER: "next year"}, f"the {versions.HEADER} header: 'next year'"),
        ({"tools": [], "protocol": "2026-12-01"}, {versions.HEADER: "2026-12"}, versions.HEADER),
    ],
)
async def test_a_malformed_version_is_a_400_that_says_the_fix_and_keeps_the_declaration(
    start_server: Any, body: dict[str, Any], headers: dict[str, str], where: str
) -> None:
    async with start_server() as h:
        assert (await declare(h, {"tools": [LOCATION_TOOL]})).status_code == 200
        r = await declare(h, body, **headers)
        assert r.status_code == 400, r.text
        error = r.json()["error"]
        assert error["code"] == "invalid_protocol" and where in error["message"], error
        if not isinstance(body.get("protocol"), int):
            assert 'YYYY-MM-DD, such as "2026-12-01"' in error["message"]
        assert await declared(h) == {"tools": [LOCATION_TOOL]}


@pytest.fixture
def later_method(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server whose protocol is at ``LATER``, in which ``permissions.getStatus`` appeared."""
    monkeypatch.setitem(DEVICE_METHODS, NEWER, dataclasses.replace(DEVICE_METHODS[NEWER], since=LATER))
    monkeypatch.setattr(versions, "PROTOCOL_VERSION", LATER)


def recording(seen: list[set[str]]) -> FunctionModel:
    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append({t.name for t in info.function_tools})
        return ModelResponse(parts=[TextPart("ok")])

    return FunctionModel(fn)


def offering(h: Harness, seen: list[set[str]]) -> Callable[[], Any]:
    async def offered() -> set[str]:
        await h.user_says("what can you do?")
        await h.idle()
        return seen[-1]

    return offered


@pytest.mark.usefixtures("later_method")
async def test_an_app_is_offered_no_method_newer_than_its_version(start_server: Any) -> None:
    seen: list[set[str]] = []
    async with start_server(model=recording(seen)) as h:
        offered = offering(h, seen)
        tools = await offered()  # nothing declared: the baseline
        assert NEWER not in tools and {"get_calendar_events", "create_event"} <= tools

        # A version between two speaks the older; one newer than the server's, the server's.
        for version, sent in [
            ("2026-12-01", False),
            ("2027-05-31", False),
            (LATER, True),
            ("2099-01-01", True),
        ]:
            assert (await declare(h, {"tools": [], "protocol": version})).status_code == 200
            tools = await offered()
            assert (NEWER in tools) is sent, version
            assert {"get_calendar_events", "confirm_interaction", "create_event"} <= tools, version

        assert (await declare(h, {"tools": []}, **{versions.HEADER: LATER})).status_code == 200
        assert NEWER in await offered()
        assert (await declare(h, {"tools": []})).status_code == 200  # a version no longer named
        assert NEWER not in await offered()

        # An app on the baseline that lists the method among its builtin is sent it; one that
        # speaks the later version but lists only others is not.
        listed = {"tools": [], "builtin": ["permissions.getStatus", "interaction.confirm"]}
        assert (await declare(h, listed)).status_code == 200
        assert NEWER in await offered()
        unlisted = {"tools": [], "protocol": LATER, "builtin": ["calendar.getEvents"]}
        assert (await declare(h, unlisted)).status_code == 200
        tools = await offered()
        assert NEWER not in tools and "get_calendar_events" in tools


@pytest.mark.usefixtures("later_method")
async def test_with_several_devices_a_method_goes_when_any_of_them_speaks_it(start_server: Any) -> None:
    seen: list[set[str]] = []
    async with start_server(model=recording(seen)) as h:
        offered = offering(h, seen)
        old_tablet = {"device_id": "tablet", "tools": [], "protocol": "2026-12-01"}
        assert (await declare(h, old_tablet)).status_code == 200
        assert NEWER not in await offered()

        phone = {"device_id": "phone", "tools": [], "protocol": LATER}
        assert (await declare(h, phone)).status_code == 200
        assert NEWER in await offered()  # the phone answers it; the tablet answers -32601

        listing = {
            "device_id": "phone",
            "tools": [],
            "builtin": ["calendar.getEvents", "permissions.getStatus"],
        }
        assert (await declare(h, listing)).status_code == 200
        tools = await offered()
        assert NEWER in tools and "create_event" in tools  # the tablet shows the dialog

        assert (await h.http.delete(PATH, params={"device_id": "phone"}, headers=auth())).status_code == 204
        assert NEWER not in await offered()
