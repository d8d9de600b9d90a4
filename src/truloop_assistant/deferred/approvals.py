"""Approvals of destructive server tools travel to the device as ``interaction.confirm`` dialogs."""

from __future__ import annotations

import json
from typing import Any

from pydantic_ai.messages import ToolCallPart

CONFIRM_METHOD = "interaction.confirm"


def describe_approval(call: ToolCallPart) -> dict[str, Any]:
    """The ``interaction.confirm`` params asking the user to allow this exact call."""
    args = call.args_as_dict()
    details = ", ".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    return {
        "title": f"Allow {call.tool_name.replace('_', ' ')}?",
        "message": f"The assistant wants to run {call.tool_name} with {details or 'no arguments'}.",
    }
