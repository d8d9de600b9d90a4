"""What a standing approval ("always") covers: the calls like the one the person saw and allowed.

A yes with ``"remember": "always"`` allows no more than its dialog showed:

- ``create_event`` / ``update_event``: calls that invite no one but the people that dialog named
  (``invitees``) and write no description but the one it showed (``description``: ``None`` for
  none, ``""`` for a removed one). A call adding guests (by chat user id or phone number) is never
  covered, and a dialog that adds guests offers no "always";
- ``send_message_to_user``: messages to the same person (``user_id``);
- ``save_memory``: every call.

Other tools (``invite_to_event`` among them) have no scope: "always" is not offered for them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

EVENT_TOOLS = frozenset({"create_event", "update_event"})
_GUESTS = {
    "create_event": ("guest_user_ids", "guest_phone_numbers"),
    "update_event": ("add_guest_user_ids", "add_guest_phone_numbers"),
}
_INVITEES = {"create_event": "invitee_user_ids", "update_event": "add_invitee_user_ids"}


def offered_scope(tool: str, args: Mapping[str, Any]) -> dict[str, Any] | None:
    """What "always" would cover, said for this call; None when it may not be allowed for good."""
    if tool in EVENT_TOOLS:
        if _adds_guests(tool, args):
            return None
        return {"invitees": sorted(_ids(args.get(_INVITEES[tool]))), "description": _description(tool, args)}
    if tool == "send_message_to_user":
        recipient = args.get("user_id")
        return {"user_id": recipient.strip()} if isinstance(recipient, str) and recipient.strip() else None
    if tool == "save_memory":
        return {}
    return None


def covers(scope: Mapping[str, Any], tool: str, args: Mapping[str, Any]) -> bool:
    """Whether a standing approval of ``tool`` with this scope lets this call of it run without asking."""
    if tool in EVENT_TOOLS:
        invitees = scope.get("invitees")
        if _adds_guests(tool, args) or not isinstance(invitees, list):
            return False
        described = _description(tool, args)
        return _ids(args.get(_INVITEES[tool])) <= set(invitees) and (
            described is None or described == scope.get("description")
        )
    if tool == "send_message_to_user":
        recipient = args.get("user_id")
        return isinstance(recipient, str) and recipient.strip() == scope.get("user_id")
    return tool == "save_memory"


def _adds_guests(tool: str, args: Mapping[str, Any]) -> bool:
    return any(_ids(args.get(name)) for name in _GUESTS[tool])


def _ids(value: Any) -> set[str]:
    """User ids given as a list (anything else: none)."""
    if not isinstance(value, list | tuple):
        return set()
    return {str(v).strip() for v in value if str(v).strip()}


def _description(tool: str, args: Mapping[str, Any]) -> str | None:
    """The description the call writes (``""``: it removes it), or None when it leaves it alone."""
    value = args.get("description")
    if isinstance(value, str) and value.strip():
        return value.strip()
    clear = args.get("clear")
    if tool == "update_event" and isinstance(clear, list | tuple) and "description" in clear:
        return ""
    return None
