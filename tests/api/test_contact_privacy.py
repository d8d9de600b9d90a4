"""Contact details stay private through events: inviting someone does not reveal how to reach them.

The running server as in the invitee journey (tests/api/test_invitee_journey.py): the organizer
creates an event and says yes in the dialog, invitees talk to the assistant in their own chats, and
every tool result the model reads, every message it is given and the ledger are looked through for
the e-mail addresses and phone numbers the directory keeps private.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse
from pydantic_ai.models.function import AgentInfo

from tests.api.test_guest_journey import Script, Seen, call, create_lunch, says, today
from tests.api.test_invitee_journey import my_dates
from tests.api.test_ledger import ledger
from tests.api.test_tool_callbacks import EXAMPLE, audit_lines, install
from tests.support import Harness
from truloop_assistant.tools.callbacks import GROUP

CONTACTS = {
    "jeff": ("jeff.kim@example.com", "010-1234-5678"),
    "seojun": ("seojun.lee@example.com", "010-3456-7890"),
    "yuna": ("yuna.han@example.com", "02-555-0199"),
}


@pytest.fixture
def audit_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """examples/tool-callbacks installed: one JSON line per tool event, in this file."""
    site = tmp_path / "site"
    site.mkdir()
    example = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())
    install(site, "truloop_audit", example["project"]["entry-points"][GROUP])
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))
    monkeypatch.setenv("TRULOOP_AUDIT_FILE", str(tmp_path / "audit.jsonl"))
    yield tmp_path / "audit.jsonl"
    sys.modules.pop("truloop_audit", None)


@dataclass
class Watched(Script):
    """The script's model, also keeping every message it was given (the history included)."""

    given: list[str] = field(default_factory=list)

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.given.append(ModelMessagesTypeAdapter.dump_json(messages).decode())
        return super()._respond(messages, info)


def contacts_in(text: str, *people: str) -> list[str]:
    """The e-mail addresses and phone numbers of ``people`` that appear in ``text``."""
    return [value for person in people for value in CONTACTS[person] if value in text]


def profile(seen: list[Seen], user_id: str) -> dict[str, Any]:
    [found] = [s.json() for s in seen if s.tool == "get_user_profile" and s.json()["user_id"] == user_id]
    return found


def lookups(*user_ids: str) -> Any:
    """One step asking for each person's profile."""
    return lambda _: [("get_user_profile", {"user_id": u}) for u in user_ids]


async def profiles_ended(audit_file: Path, n: int) -> list[dict[str, Any]]:
    """The results of the first ``n`` get_user_profile calls the callbacks were told had ended."""
    async with asyncio.timeout(10):
        while True:
            ended = [
                line["call"]["result"]
                for line in await audit_lines(audit_file, 1)
                if line["event"] == "end" and line["call"]["tool"] == "get_user_profile"
            ]
            if len(ended) >= n:
                return ended
            await asyncio.sleep(0.05)


async def look_up(h: Harness, script: Script, words: str, *steps: Any, user: str) -> list[Seen]:
    """``user`` asks in their 1:1 channel; every tool result the model read for it."""
    channel = f"{user}-1" if user == "jeff" else h.direct_channel(user)
    assert channel is not None
    await says(h, script, words, *steps, user=user, channel=channel)
    return script.results[words]


async def test_inviting_people_does_not_reveal_their_contact_details(
    start_server: Any, directory: Any, audit_file: Path
) -> None:
    script = Watched()
    async with start_server(model=script.model()) as h:
        event = await create_lunch(h, script, invitee_user_ids=["seojun", "yuna"])
        event_id = event["event_id"]
        await h.idle()

        # The organizer reads the event and looks the invitees up: names, not how to reach them.
        words = "who is coming to the lunch?"
        seen = await look_up(
            h,
            script,
            words,
            lambda _: [
                ("get_event_details", {"event_id": event_id}),
                ("get_events", {}),
                ("search_users", {"query": "design", "by": "group"}),
            ],
            lookups("seojun", "yuna"),
            user="jeff",
        )
        assert [s.outcome for s in seen] == ["success"] * 5, seen
        assert contacts_in(json.dumps([s.text for s in seen]), "seojun", "yuna") == []
        seojun = profile(seen, "seojun")
        assert (seojun["name"], seojun["email"], seojun["phone"]) == ("이서준", None, None)
        assert seojun["contact_hidden"].startswith("email and phone not shown: ")

        # An invitee sees the organizer's contact details (the organizer chose to invite them), but not
        # those of the others invited with them.
        words = "what am I invited to, and how do I reach the people there?"
        seen = await look_up(
            h, script, words, call("list_invited_events"), lookups("jeff", "yuna"), user="seojun"
        )
        assert contacts_in(json.dumps([s.text for s in seen]), "yuna") == []
        assert (profile(seen, "jeff")["email"], profile(seen, "jeff")["phone"]) == CONTACTS["jeff"]
        assert profile(seen, "yuna")["phone"] is None

        # Once an invitee answers the invitation, the organizer may reach them; not who has not answered.
        dates = [(today() + timedelta(days=1)).isoformat()]
        await look_up(
            h, script, "tomorrow works", call("list_invited_events"), my_dates(dates), user="seojun"
        )
        words = "how do I reach the people coming?"
        seen = await look_up(h, script, words, lookups("seojun", "yuna"), user="jeff")
        assert (profile(seen, "seojun")["email"], profile(seen, "seojun")["phone"]) == CONTACTS["seojun"]
        assert (profile(seen, "yuna")["email"], profile(seen, "yuna")["phone"]) == (None, None)

        # Nothing the model was ever given (histories included) held a hidden detail: Yuna's never, and
        # Seojun's only after he answered, in the organizer's last turn.
        before_answer = script.given[: next(i for i, g in enumerate(script.given) if words in g)]
        assert all(contacts_in(given, "yuna") == [] for given in script.given)
        assert all(contacts_in(given, "seojun") == [] for given in before_answer)

        # The ledger keeps what the tools returned: the same view.
        turns = (await ledger(h, channel="jeff-1")).json()["turns"]
        emails = [
            {
                c["result"]["user_id"]: c["result"]["email"]
                for c in t["calls"]
                if c["tool"] == "get_user_profile"
            }
            for t in turns
        ]
        assert [e for e in emails if e] == [
            {"seojun": CONTACTS["seojun"][0], "yuna": None},
            {"seojun": None, "yuna": None},
        ]

        # Tool callbacks hear the same results.
        ended = await profiles_ended(audit_file, 6)
        assert sorted((r["user_id"], r["email"] or "") for r in ended) == [
            ("jeff", CONTACTS["jeff"][0]),
            ("seojun", ""),  # the organizer's first look
            ("seojun", CONTACTS["seojun"][0]),  # after he answered
            ("yuna", ""),
            ("yuna", ""),
            ("yuna", ""),
        ]
