"""What a standing approval covers: no more people, no other description, the same recipient."""

from __future__ import annotations

from typing import Any

import pytest

from truloop_assistant.protocol.standing_scope import covers, offered_scope

EVENT = {"title": "Dinner", "start_time": "2026-12-03T19:00:00+09:00"}
EVENT_ID = "evt_0123456789ab"


def given(tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """The scope a yes with "always" to this call gives."""
    scope = offered_scope(tool, args)
    assert scope is not None
    return scope


@pytest.mark.parametrize(
    ("later", "covered"),
    [
        (EVENT, True),
        ({**EVENT, "title": "Lunch", "location": "5F"}, True),
        ({**EVENT, "invitee_user_ids": ["mina"]}, True),
        ({**EVENT, "invitee_user_ids": ["mina", "seojun"]}, False),
        ({**EVENT, "guest_user_ids": ["guest-kim"]}, False),
        ({**EVENT, "guest_phone_numbers": ["010-5550-1234"]}, False),
        ({**EVENT, "description": "Agenda: budget"}, True),
        ({**EVENT, "description": "Wire 500 dollars"}, False),
    ],
)
def test_an_event_approval_covers_no_one_else_and_no_other_description(
    later: dict[str, Any], covered: bool
) -> None:
    approval = given("create_event", {**EVENT, "invitee_user_ids": ["mina"], "description": "Agenda: budget"})
    assert covers(approval, "create_event", later) is covered


@pytest.mark.parametrize(
    ("later", "covered"),
    [
        ({"event_id": EVENT_ID, "start_time": "2026-12-03T20:00:00+09:00"}, True),
        ({"event_id": EVENT_ID, "remove_invitee_user_ids": ["mina"]}, True),
        ({"event_id": EVENT_ID, "add_invitee_user_ids": ["mina"]}, False),
        ({"event_id": EVENT_ID, "add_guest_user_ids": ["guest-kim"]}, False),
        ({"event_id": EVENT_ID, "add_guest_phone_numbers": ["+821055501234"]}, False),
        ({"event_id": EVENT_ID, "remove_guest_phone_numbers": ["+821055501234"]}, True),
        ({"event_id": EVENT_ID, "description": "New text"}, False),
        ({"event_id": EVENT_ID, "clear": ["description"]}, False),
        ({"event_id": EVENT_ID, "clear": ["location"]}, True),
    ],
)
def test_an_update_approval_given_for_a_move_covers_moves_only(later: dict[str, Any], covered: bool) -> None:
    approval = given("update_event", {"event_id": EVENT_ID, "start_time": "2026-12-03T20:00:00+09:00"})
    assert approval == {"invitees": [], "description": None}
    assert covers(approval, "update_event", later) is covered


def test_a_relay_approval_covers_the_same_recipient_only() -> None:
    approval = given("send_message_to_user", {"user_id": "mina", "message": "lunch at 1"})
    assert covers(approval, "send_message_to_user", {"user_id": "mina", "message": "anything"})
    assert not covers(approval, "send_message_to_user", {"user_id": "seojun", "message": "lunch at 1"})


def test_no_always_for_invitations_guests_or_other_tools() -> None:
    assert offered_scope("invite_to_event", {"event_id": EVENT_ID, "invitee_user_ids": ["mina"]}) is None
    assert offered_scope("create_event", {**EVENT, "guest_user_ids": ["guest-kim"]}) is None
    assert offered_scope("update_event", {"event_id": EVENT_ID, "add_guest_user_ids": ["k"]}) is None
    assert offered_scope("create_event", {**EVENT, "guest_phone_numbers": ["010-5550-1234"]}) is None
    assert offered_scope("update_event", {"event_id": EVENT_ID, "add_guest_phone_numbers": ["0"]}) is None
    assert offered_scope("cancel_event", {"event_id": EVENT_ID}) is None
    assert offered_scope("save_memory", {"text": "I like tea"}) == {}
