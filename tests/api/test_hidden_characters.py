"""User ids with characters that do not show are refused, and the dialog keeps each name and id
isolated, so nobody shows as someone else: through the server, as the model and phone see it."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tests.api.test_tools_gate import scripted
from truloop_assistant.backends.events import RedisEventStore
from truloop_assistant.backends.users import UserProfile

FSI, PDI = "\u2068", "\u2069"
SOON = datetime.now(ZoneInfo("Asia/Seoul")).replace(microsecond=0) + timedelta(days=2)
LUNCH = {
    "title": "Lunch",
    "start_time": SOON.isoformat(),
    "end_time": (SOON + timedelta(hours=1)).isoformat(),
}


def isolated(text: str) -> str:
    return f"{FSI}{text}{PDI}"


@pytest.mark.parametrize(
    ("tool", "args", "hidden"),
    [
        ("create_event", {**LUNCH, "guest_user_ids": ["kim\u202eeva"]}, "U+202E"),
        ("create_event", {**LUNCH, "guest_user_ids": ["mina\u200b"]}, "U+200B"),
        ("create_event", {**LUNCH, "invitee_user_ids": ["\u2067mina"]}, "U+2067"),
        ("create_event", {**LUNCH, "guest_user_ids": ["kim\u0007"]}, "U+0007"),
        ("create_event", {**LUNCH, "guest_user_ids": ["kim\u3164"]}, "U+3164"),
        ("update_event", {"event_id": "{event}", "add_guest_user_ids": ["kim\u2066"]}, "U+2066"),
        ("invite_to_event", {"event_id": "{event}", "guest_user_ids": ["kim\u00ad"]}, "U+00AD"),
        ("send_message_to_user", {"user_id": "mi\u200dna", "message": "lunch moved"}, "U+200D"),
        ("get_user_profile", {"user_id": "mina\u2069"}, "U+2069"),
    ],
)
async def test_a_user_id_with_a_character_that_does_not_show_is_sent_back_before_any_dialog(
    start_server: Any, directory: Any, redis: Any, tool: str, args: dict[str, Any], hidden: str
) -> None:
    if args.get("event_id") == "{event}":
        made = await RedisEventStore(redis).create(
            "jeff", title="Lunch", start_time=SOON, end_time=SOON + timedelta(hours=1)
        )
        args = {**args, "event_id": made.event_id}
    async with start_server(model=scripted((tool, args))) as h:
        await h.user_says("go ahead")
        [reply] = await h.replies(1)
        assert reply.text.startswith(f"{tool} retried"), reply.text
        assert hidden in reply.text, reply.text
        assert [m for m in h.sendbird.messages if m.is_rpc] == []  # no dialog
        assert h.sendbird.channels == {}  # nobody was written to


async def test_the_dialog_isolates_each_name_and_id_so_none_reorders_the_text_around_it(
    start_server: Any, directory: Any
) -> None:
    spoofer = UserProfile(user_id="eve", name="Eve \u202ekcaj", username="eve")
    await directory.import_users([spoofer])
    rtl_guest = "אורח-7"  # a right-to-left id is fine: it shows, and it stays in its place
    call = {**LUNCH, "invitee_user_ids": ["mina", "eve"], "guest_user_ids": [rtl_guest], "location": "Cafe"}
    async with start_server(model=scripted(("create_event", call))) as h:
        await h.user_says("lunch with mina, eve and my friend")
        [rpc] = await h.rpc_requests(1)
        message = rpc["params"]["message"]
        assert f"{isolated('박민아')} ({isolated('mina')})" in message
        assert f"{isolated(spoofer.name)} ({isolated('eve')})" in message
        assert isolated(rtl_guest) in message
        assert f"“{isolated('Lunch')}”" in message and isolated("Cafe") in message
        # Every isolate is closed: nothing a name holds leaks into the rest of the text.
        assert message.count(FSI) == message.count(PDI)
