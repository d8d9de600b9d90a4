"""The contract every response is held to, and what each request may get back.

``check_contract`` is the shape every answer of the two endpoints has (never a 5xx; errors are
``{"error": {"code", "message"}}`` with a known code per status). ``tool_expectation`` and
``webhook_expectation`` say, for one request, which answers the docs (docs/http.md) allow given what was sent.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import httpx

from tests.support import BOT

if TYPE_CHECKING:
    from tests.fuzz.harness import Fuzz
    from tests.fuzz.tool_headers import Auth

TOOL_PATH = "/api/v1/agent/tool-message"
WEBHOOK_PATH = "/api/v1/webhooks/sendbird"
TOOL_LIMIT = 256 * 1024
WEBHOOK_LIMIT = 1024 * 1024
MESSAGE_SEND = "group_channel:message_send"
REVISIONS = ("group_channel:message_update", "group_channel:message_delete")

SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")

TOOL_CODES = {
    400: {"invalid_json", "invalid_jsonrpc", "json_too_deep"},
    401: {"unauthorized", "invalid_token", "token_expired"},
    403: {"not_your_call"},
    404: {"unknown_call"},
    409: {"already_answered"},
    410: {"call_superseded", "call_expired"},
    413: {"payload_too_large"},
    422: {"invalid_result"},
}
WEBHOOK_CODES = {400: {"invalid_webhook"}, 401: {"bad_signature"}, 413: {"payload_too_large"}}


def check_contract(r: httpx.Response, codes: dict[int, set[str]] | None = None) -> None:
    assert r.status_code < 500, f"server error {r.status_code}: {r.text[:1000]}"
    if r.status_code < 400:
        return
    assert r.headers.get("content-type", "").startswith("application/json"), r.headers
    body = r.json()
    assert isinstance(body, dict) and set(body) == {"error"}, body
    error = body["error"]
    assert isinstance(error, dict) and set(error) == {"code", "message"}, body
    assert isinstance(error["code"], str) and SNAKE.fullmatch(error["code"]), body
    assert isinstance(error["message"], str) and error["message"].strip(), body
    if codes is not None and r.status_code in codes:
        assert error["code"] in codes[r.status_code], (r.status_code, body)


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return deepest


def _clean_text(value: Any) -> bool:
    """No lone surrogates and no non-finite numbers anywhere: JSON any client library would write."""
    try:
        json.dumps(value, ensure_ascii=False, allow_nan=False).encode()
    except (ValueError, UnicodeEncodeError):
        return False
    return True


# -- tool-message ------------------------------------------------------------------------------


def plainly_valid_rpc(data: Any) -> bool:
    """A JSON-RPC 2.0 response nobody could call malformed (shallow, clean, exactly one outcome)."""
    if not isinstance(data, dict) or set(data) - {"jsonrpc", "id", "result", "error"}:
        return False
    if data.get("jsonrpc") != "2.0" or ("result" in data) == ("error" in data):
        return False
    if type(data.get("id")) not in (str, int) or not _clean_text(data) or _depth(data) > 8:
        return False
    if "error" in data:
        error = data["error"]
        if not isinstance(error, dict) or type(error.get("code")) is not int:
            return False
        if not isinstance(error.get("message"), str) or len(error["message"]) > 1000:
            return False
    return True


def tool_expectation(fz: Fuzz, body: bytes, auth: Auth) -> set[int]:
    """The statuses the docs allow for this request, given the order of the checks."""
    if len(body) > TOOL_LIMIT:
        return {413}
    if auth.kind == "bad":
        return {401}
    allowed = {400} | ({401} if auth.kind == "unknown" else set())
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return allowed
    if not isinstance(data, dict):
        return allowed
    call_id = data.get("id")
    known = isinstance(call_id, str) and call_id in fz.known_ids
    if not known:
        allowed |= {404}
    elif auth.kind == "other":  # another user's call is 403 whatever its state
        allowed |= {403}
    elif call_id == fz.superseded:
        allowed |= {410} if auth.kind == "jeff" else {403, 410}
    elif auth.kind == "jeff":
        allowed |= {200, 202, 409, 422}
    else:
        allowed |= {200, 202, 403, 409, 422}
    if plainly_valid_rpc(data) and auth.kind in ("jeff", "other"):
        allowed.discard(400)
    return allowed


# -- webhook -----------------------------------------------------------------------------------


REJECTED = "rejected"
"""A 400 ``invalid_webhook``; the other webhook outcomes are the ``status`` of a 200."""
ANY_WEBHOOK_OUTCOME = frozenset({REJECTED, "queued", "duplicate", "revised", "ignored"})


def _non_empty_str(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def _names_its_message(sender: Any, payload: Any, channel: Any) -> bool:
    """Whether a message's sender, channel URL and message id are there, as the docs require."""
    return (
        isinstance(sender, dict)
        and _non_empty_str(sender.get("user_id"))
        and isinstance(channel, dict)
        and _non_empty_str(channel.get("channel_url"))
        and isinstance(payload, dict)
        and type(payload.get("message_id")) is int  # a JSON integer: not a bool, a float or a string
        and payload["message_id"] > 0
        and isinstance(payload.get("message", ""), str)
        and isinstance(payload.get("custom_type", ""), str)
    )


def _revision_expectation(event: dict[str, Any], category: str, custom: str) -> frozenset[str]:
    """An edit or deletion: rejected unless it names its message; the assistant's own (its requests
    settling), an edit of another type than text and an edit to no text are ignored; else revised."""
    sender, payload, channel = event.get("sender"), event.get("payload"), event.get("channel")
    if not _names_its_message(sender, payload, channel):
        return frozenset({REJECTED})
    own = {"agent-rpc", "agent-rpc-settled"} & {custom, payload.get("custom_type", "")}
    if sender["user_id"] == BOT or own:
        return frozenset({"ignored"})
    kind = event.get("type")
    if category == REVISIONS[0] and (kind not in (None, "MESG") or not payload.get("message", "").strip()):
        return frozenset({"ignored"})
    return frozenset({"revised"})


def webhook_expectation(event: Any) -> frozenset[str]:
    """The outcomes the docs allow for a correctly signed event (``REJECTED`` or a 200 status)."""
    if not isinstance(event, dict) or not _clean_text(event) or _depth(event) > 8:
        return ANY_WEBHOOK_OUTCOME
    category, kind, custom = event.get("category"), event.get("type", None), event.get("custom_type", "")
    if (
        not isinstance(category, str)
        or not (kind is None or isinstance(kind, str))
        or not isinstance(custom, str)
    ):
        return ANY_WEBHOOK_OUTCOME  # not a webhook event at all: the docs do not say
    if category in REVISIONS:
        return _revision_expectation(event, category, custom)
    if category != MESSAGE_SEND or kind != "MESG":
        return frozenset({"ignored"})  # whatever else it holds
    sender, payload, channel = event.get("sender"), event.get("payload"), event.get("channel")
    if not _names_its_message(sender, payload, channel):
        return frozenset({REJECTED})
    if (
        sender["user_id"] == BOT
        or "agent-rpc" in (custom, payload.get("custom_type", ""))
        or not payload.get("message", "").strip()
    ):
        return frozenset({"ignored"})
    return frozenset({"queued", "duplicate", "ignored"})  # ignored: too long, or over the rate limit
