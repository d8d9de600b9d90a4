"""The relay tool's arguments: a bad one is a retry before anyone is looked up or written to."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai import models

from tests.tools.support import retried, run_tool
from truloop_assistant.tools.relay_tools import relay_toolset

models.ALLOW_MODEL_REQUESTS = False


@pytest.mark.parametrize(
    ("args", "field", "message"),
    [
        ({"user_id": "mina", "message": "  "}, "message", "String should have at least 1 character"),
        ({"user_id": "mina", "message": "x" * 1001}, "message", "String should have at most 1000 characters"),
        (
            {"user_id": " ", "message": "lunch moved to 1pm"},
            "user_id",
            "String should have at least 1 character",
        ),
        ({"message": "lunch moved to 1pm"}, "user_id", "Field required"),
    ],
)
async def test_bad_arguments_ask_for_a_fix(args: dict[str, Any], field: str, message: str) -> None:
    # Without backends the tool body would fail; a retry shows it never ran.
    problems = retried(await run_tool(relay_toolset, None, "send_message_to_user", user="jeff", **args))
    assert list(problems) == [field] and message in problems[field]


async def test_a_call_written_with_the_arguments_former_name_is_still_read() -> None:
    # A call kept from before the argument was named ``message`` (waiting for its yes over an upgrade).
    # Its arguments are valid, so the tool body runs (and, with no backends here, fails): no retry.
    args = {"user_id": "mina", "request": "lunch moved to 1pm"}
    answer = await run_tool(relay_toolset, None, "send_message_to_user", user="jeff", **args)
    assert answer.startswith("failed"), answer
