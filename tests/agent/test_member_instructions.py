"""The member agent's instructions name tools as they are declared: a list kept in prose follows the
tools, so a tool that starts asking first (or stops) cannot be left out of what the model is told."""

from __future__ import annotations

import re

from truloop_assistant.agent.prompts import MEMBER_INSTRUCTIONS
from truloop_assistant.tools import all_toolsets
from truloop_assistant.tools.marks import is_destructive


def test_the_tools_said_to_ask_first_are_the_member_tools_that_do() -> None:
    listed = re.search(r"Tools that change something or reach people \(([^)]*)\)", MEMBER_INSTRUCTIONS)
    assert listed is not None
    said = set(listed.group(1).split(", "))
    asking = {
        name
        for toolset in all_toolsets
        for name, tool in toolset.tools.items()
        if is_destructive(tool.tool_def)
    }
    assert said == asking


def test_every_tool_the_instructions_name_is_a_member_tool() -> None:
    offered = {name for toolset in all_toolsets for name in toolset.tools}
    named = set(re.findall(r"\b[a-z]+(?:_[a-z]+)+\b", MEMBER_INSTRUCTIONS))
    arguments = {
        "notification_message",
        "invitee_user_ids",
        "guest_user_ids",
        "guest_phone_numbers",
        "user_id",
    }
    assert named - arguments <= offered, named - arguments - offered
