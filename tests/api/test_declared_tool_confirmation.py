"""App-declared device tools that ask the user's yes first: ``"confirm"`` and ``"read_only"``."""

from __future__ import annotations

import json
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.api.test_client_tools import LOCATION, declare, declared
from tests.api.test_tools_gate import q
from tests.support import Harness

TRANSFER = {
    "name": "transfer_points",
    "description": "Send some of the user's loyalty points to another member.",
    "method": "wallet.transfer",
    "parameters": {
        "type": "object",
        "properties": {"to": {"type": "string"}, "amount": {"type": "integer", "minimum": 1}},
        "required": ["to", "amount"],
    },
}
ARGS = {"notification_message": "Sending points…", "to": "mina", "amount": 5}


def calls_then_reports(name: str, args: dict[str, Any]) -> FunctionModel:
    """Calls ``name`` with ``args`` on each new message, then says how the call ended."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        if returns:
            return ModelResponse(parts=[TextPart(f"{returns[0].outcome}: {returns[0].model_response_str()}")])
        return ModelResponse(parts=[ToolCallPart(name, args)])

    return FunctionModel(fn)


def methods(h: Harness) -> list[str]:
    return [m.rpc["method"] for m in h.sendbird.in_channel("ch-1") if m.is_rpc]


async def test_a_declared_tool_is_sent_to_the_phone_only_after_the_users_yes(start_server: Any) -> None:
    async with start_server(model=calls_then_reports("transfer_points", ARGS)) as h:
        assert (await declare(h, {"tools": [TRANSFER]})).status_code == 200

        # Declined: nothing goes to the wallet, and the model is told.
        await h.user_says("send mina 5 points")
        [ask] = await h.rpc_requests(1)
        assert ask["method"] == "interaction.confirm"
        assert "transfer points" in ask["params"]["title"]
        message = ask["params"]["message"]
        assert (
            "transfer_points" in message and f"to: {q('mina')}" in message and f"amount: {q('5')}" in message
        )
        assert TRANSFER["description"] in message and "Sending points" not in message
        assert (await h.answer(ask["id"], result={"confirmed": False})).status_code == 202
        [no] = await h.replies(1)
        assert no.text.startswith("denied")
        await h.idle()
        assert methods(h) == ["interaction.confirm"]

        # Confirmed: then, and only then, the phone is asked to run it, with its arguments.
        await h.user_says("send mina 5 points")
        [_, ask] = await h.rpc_requests(2)
        assert ask["method"] == "interaction.confirm"
        assert (await h.answer(ask["id"], result={"confirmed": True})).status_code == 202
        [*_, rpc] = await h.rpc_requests(3)
        assert rpc["method"] == "wallet.transfer" and rpc["params"] == {"to": "mina", "amount": 5}
        assert (await h.answer(rpc["id"], result={"sent": 5})).status_code == 202
        [_, yes] = await h.replies(2)
        assert yes.text == f"success: {json.dumps({'sent': 5}, separators=(',', ':'))}"


async def test_arguments_that_do_not_fit_are_fixed_before_the_user_is_asked(start_server: Any) -> None:
    async with start_server(model=calls_then_reports("transfer_points", {**ARGS, "amount": 0})) as h:
        assert (await declare(h, {"tools": [TRANSFER]})).status_code == 200
        await h.user_says("send mina nothing")
        await h.replies(1)
        assert methods(h) == []  # a retry for the model, never a dialog for arguments that cannot run


async def test_read_only_and_unconfirmed_tools_go_to_the_phone_at_once(start_server: Any) -> None:
    cases = [
        ({**TRANSFER, "confirm": False}, "wallet.transfer"),
        ({**TRANSFER, "read_only": True}, "wallet.transfer"),
        ({**TRANSFER, "read_only": True, "confirm": True}, "interaction.confirm"),
        ({**TRANSFER, "read_only": False}, "interaction.confirm"),
    ]
    async with start_server(model=calls_then_reports("transfer_points", ARGS)) as h:
        for n, (declared_tool, first) in enumerate(cases, start=1):
            assert (await declare(h, {"tools": [declared_tool]})).status_code == 200
            assert await declared(h) == {"tools": [declared_tool]}  # read back as sent
            await h.user_says("send mina 5 points", channel=f"ch-{n + 1}")
            [rpc] = await h.rpc_requests(1, channel=f"ch-{n + 1}")
            assert rpc["method"] == first, declared_tool
        bad = await declare(h, {"tools": [{**LOCATION, "confirm": "yes"}]})
        assert bad.status_code == 400 and "confirm" in bad.json()["error"]["message"]
