"""What a paused step sends to the device: one JSON-RPC request per call the server did not answer."""

from __future__ import annotations

from ..deferred.approvals import ApprovalContext, describe_approval
from ..deferred.handlers import device_params
from ..protocol.jsonrpc import JsonRpcRequest
from ..store.outbox import RpcOut
from ..store.records import PausedTurn
from .results import REQUESTS


async def device_requests(paused: PausedTurn, context: ApprovalContext) -> list[RpcOut]:
    """The ``agent-rpc`` messages of a paused step; each ``dedup_id`` is stable per turn, step and call."""
    requests = REQUESTS.validate_json(paused.requests)
    parts = {p.tool_call_id: p for p in [*requests.calls, *requests.approvals]}
    out = []
    for ref in paused.sent_calls:
        part = parts[ref.tool_call_id]
        if ref.bucket == "approval":
            dialog = await describe_approval(part, context, requests.metadata.get(ref.tool_call_id))
            params, notification = dialog.model_dump(exclude_none=True), dialog.title
        else:
            params = device_params(part, requests.metadata.get(ref.tool_call_id))
            notification = str(part.args_as_dict().get("notification_message") or "")
        out.append(
            RpcOut(
                request=JsonRpcRequest(id=ref.call_id, method=ref.method, params=params),
                notification=notification,
                dedup_id=f"{paused.turn_id}:{paused.step}:{ref.call_id}",
                recipient=paused.user_id,
            )
        )
    return out
