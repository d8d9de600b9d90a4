"""The assistant's toolsets, grouped the way the agents use them."""

from typing import Any

from pydantic_ai import AbstractToolset, CombinedToolset, FunctionToolset

from .datetime_tools import datetime_toolset
from .device_tools import device_toolset
from .event_tools import event_server_toolset
from .guest_tools import guest_toolset, invitee_toolset
from .knowledge_tools import knowledge_toolset
from .memory_tools import memory_toolset
from .places_tools import places_toolset
from .relay_tools import relay_toolset
from .user_tools import user_toolset

member_device_toolset = device_toolset("member")
"""The device tools a member's agent offers (phone calendar, confirm dialog, OS permission)."""
notification_device_toolset = device_toolset("notification")
"""The device tools the writer of relayed messages may use."""

all_toolsets = [
    datetime_toolset,
    user_toolset,
    knowledge_toolset,
    memory_toolset,
    places_toolset,
    relay_toolset,
    event_server_toolset,
    invitee_toolset,
    member_device_toolset,
]
"""Everything a member (a person in the user directory) can use."""

guest_toolsets = [datetime_toolset, guest_toolset, device_toolset("guest")]
"""Invited guests: their invitations and availability only (plus the date tools to reason about dates)."""

notification_safe_toolsets = [
    datetime_toolset,
    knowledge_toolset,
    notification_device_toolset,
    places_toolset,
]
"""What the notification agent may use while writing a relayed message. Excluded: events (no
recursive event creation), users (no unintended lookups), relay (no unintended sends), memories
(the sender's saved facts never reach a message someone else reads, whatever the request says)."""


def tool_names() -> frozenset[str]:
    """The name of every tool the server defines (an app may not declare one of these)."""
    names: set[str] = set()

    def walk(toolset: AbstractToolset[Any]) -> None:
        if isinstance(toolset, FunctionToolset):
            names.update(toolset.tools)
        elif isinstance(toolset, CombinedToolset):
            for inner in toolset.toolsets:
                walk(inner)

    for toolset in [*all_toolsets, *guest_toolsets, *notification_safe_toolsets]:
        walk(toolset)
    return frozenset(names)


__all__ = [
    "all_toolsets",
    "datetime_toolset",
    "event_server_toolset",
    "guest_toolset",
    "guest_toolsets",
    "invitee_toolset",
    "member_device_toolset",
    "notification_device_toolset",
    "notification_safe_toolsets",
    "tool_names",
]
