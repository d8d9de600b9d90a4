"""Sendbird Platform API adapter on aiohttp (the hot path; the admin command uses the SDK)."""

from __future__ import annotations

import asyncio
import logging
import random
from dataclasses import replace
from typing import Any
from urllib.parse import quote

from pydantic import SecretStr

from ..config import reveal
from ..metrics import SENDBIRD_FAILURES, SENDBIRD_RETRIES
from ..protocol.jsonrpc import JsonRpcRequest
from .base import AGENT_RPC, AGENT_RPC_SETTLED, CHAT, Capabilities, ChannelSendError, streaming_data
from .pacing import Kind, Pacer, kind_now
from .parts import DEFAULT_MAX_CHARS, send_in_parts
from .platform_http import PlatformClient, PlatformThrottled, PlatformTransportError, Reply, retry_after

log = logging.getLogger(__name__)

_RETRY_STATUS = {429, 500, 502, 503, 504}
TYPING_TIMEOUT_S = 2.0
"""One typing call, all of it: the indicator is a courtesy, never worth a wait."""


def platform_client(
    api_url: str,
    api_token: str | SecretStr,
    *,
    timeout_s: float = 10.0,
    max_connections: int = 100,
    pacer: Pacer | None = None,
) -> PlatformClient:
    """A pooled client for the Sendbird Platform API, with the token on every request (paced app-wide
    by ``pacer``)."""
    return PlatformClient(
        api_url,
        headers={"Api-Token": reveal(api_token), "Content-Type": "application/json; charset=utf8"},
        timeout_s=timeout_s,
        connect_timeout_s=5.0,
        max_connections=max_connections,
        pacer=pacer,
    )


class SendbirdChannel:
    """Sends through a :func:`platform_client` it does not own (the relay shares it)."""

    def __init__(
        self,
        client: PlatformClient,
        *,
        bot_user_id: str,
        max_attempts: int = 5,
        backoff_base_s: float = 0.2,
        backoff_cap_s: float = 5.0,
        typing_timeout_s: float = TYPING_TIMEOUT_S,
        max_message_chars: int = DEFAULT_MAX_CHARS,
    ) -> None:
        self.bot_user_id = bot_user_id
        self.max_message_chars = max_message_chars
        self.typing_timeout_s = typing_timeout_s
        self.max_attempts = max_attempts
        self.backoff_base_s = backoff_base_s
        self.backoff_cap_s = backoff_cap_s
        self._client = client

    def capabilities(self, channel_url: str) -> Capabilities:
        """A chat with the app: device requests, streaming, updates and typing; its length limit."""
        return replace(CHAT, max_chars=self.max_message_chars)

    async def send_text(self, channel_url: str, text: str, *, dedup_id: str) -> None:
        """Post the text, as consecutive messages when it is longer than Sendbird takes."""

        async def send(part: str, part_dedup_id: str) -> None:
            await self._send(channel_url, {"message": part}, dedup_id=part_dedup_id)

        await send_in_parts(send, text, dedup_id=dedup_id, max_chars=self.max_message_chars)

    async def send_rpc(
        self,
        channel_url: str,
        request: JsonRpcRequest,
        *,
        notification: str,
        dedup_id: str,
        recipient: str = "",
    ) -> int | None:
        body: dict[str, Any] = {
            "message": notification,
            "custom_type": AGENT_RPC,
            "data": request.model_dump_json(),
        }
        if recipient:
            body |= {"mention_type": "users", "mentioned_user_ids": [recipient]}
        return await self._send(channel_url, body, dedup_id=dedup_id)

    async def settle_rpc(self, channel_url: str, message_id: int, *, data: str, text: str) -> None:
        path = f"/v3/group_channels/{quote(channel_url, safe='')}/messages/{message_id}"
        body = {"message_type": "MESG", "custom_type": AGENT_RPC_SETTLED, "data": data, "message": text}
        await self._request(
            "PUT",
            path,
            body,
            channel_url=channel_url,
            what=f"update of message {message_id}",
            kind=Kind.UPDATE,
            attempts=1,  # the outbox tries it again, behind what waits: the answer after it does not wait
        )

    async def post_streamed(
        self, channel_url: str, text: str, *, dedup_id: str, streaming: bool, stopped: bool = False
    ) -> int | None:
        return await self._send(
            channel_url,
            {"message": text, "data": streaming_data(streaming, stopped=stopped)},
            dedup_id=dedup_id,
        )

    async def update_streamed(
        self, channel_url: str, message_id: int, text: str, *, streaming: bool, stopped: bool = False
    ) -> bool:
        path = f"/v3/group_channels/{quote(channel_url, safe='')}/messages/{message_id}"
        body = {"message_type": "MESG", "message": text, "data": streaming_data(streaming, stopped=stopped)}
        what = f"update of message {message_id}"
        if not streaming:  # the final text: retried, never dropped
            await self._request("PUT", path, body, channel_url=channel_url, what=what)
            return True
        try:  # a growing text, tried once: the next update (or the final one) carries it anyway
            response = await self._client.request(
                "PUT", path, json=body, kind=Kind.STREAM, stream=str(message_id)
            )
        except PlatformTransportError as exc:  # no budget to spare (throttled) included
            log.debug("update of growing message %s in %s skipped: %s", message_id, channel_url, exc)
            return False
        if response.status_code >= 300:
            log.info(
                "update of growing message %s in %s: HTTP %d", message_id, channel_url, response.status_code
            )
        return response.status_code < 300

    async def delete_message(self, channel_url: str, message_id: int) -> None:
        path = f"/v3/group_channels/{quote(channel_url, safe='')}/messages/{message_id}"
        try:
            await self._request("DELETE", path, {}, channel_url=channel_url, what=f"deletion of {message_id}")
        except ChannelSendError as exc:
            if exc.retryable:
                raise
            log.info("message %s in %s was not there to delete: %s", message_id, channel_url, exc)

    async def typing_started(self, channel_url: str) -> bool:
        return await self._typing("POST", channel_url, Kind.TYPING)

    async def typing_stopped(self, channel_url: str) -> bool:
        return await self._typing("DELETE", channel_url, Kind.TYPING_STOP)

    async def _typing(self, method: str, channel_url: str, kind: Kind) -> bool:
        """One attempt, bounded in time; the turn goes on whatever happens to it. False: not sent,
        for want of budget (a typing call is skipped, never queued)."""
        path = f"/v3/group_channels/{quote(channel_url, safe='')}/typing"
        body = {"user_ids": [self.bot_user_id]}
        try:
            async with asyncio.timeout(self.typing_timeout_s):
                response = await self._client.request(
                    method, path, json=body, timeout=self.typing_timeout_s, kind=kind
                )
        except PlatformThrottled:
            log.debug("sendbird typing %s in %s skipped: no budget to spare", method, channel_url)
            return False
        except Exception as exc:  # a closed client at shutdown too: never the turn's problem
            log.warning("sendbird typing %s in %s failed: %r", method, channel_url, exc)
            return True
        if response.status_code >= 300:
            log.warning(
                "sendbird typing %s in %s failed: HTTP %d: %s",
                method,
                channel_url,
                response.status_code,
                response.text[:200],
            )
        return True

    async def _send(self, channel_url: str, fields: dict[str, Any], *, dedup_id: str) -> int | None:
        """Post a message; returns its ``message_id`` (None if Sendbird's answer has none)."""
        path = f"/v3/group_channels/{quote(channel_url, safe='')}/messages"
        body = {"message_type": "MESG", "user_id": self.bot_user_id, **fields, "dedup_id": dedup_id}
        response = await self._request(
            "POST", path, body, channel_url=channel_url, what=f"dedup_id={dedup_id}", send=True
        )
        try:
            message_id = response.json().get("message_id")
        except (ValueError, AttributeError):
            return None
        return message_id if isinstance(message_id, int) and not isinstance(message_id, bool) else None

    async def _request(
        self,
        method: str,
        path: str,
        body: dict[str, Any],
        *,
        channel_url: str,
        what: str,
        attempts: int | None = None,
        kind: Kind = Kind.ANSWER,
        send: bool = False,
    ) -> Reply:
        """One Platform API write, retried on 429/5xx and transport errors; the 2xx response (``send``: a
        message send, also paced per channel)."""
        last_error = ""
        last_status: int | None = None  # and code: of the last answer, when there was one
        last_code: int | None = None
        max_attempts = attempts or self.max_attempts
        for attempt in range(1, max_attempts + 1):
            try:
                response = await self._client.request(
                    method, path, json=body, kind=kind, channel=channel_url if send else ""
                )
            except PlatformThrottled as exc:
                if kind_now(kind).waits:
                    last_error, last_status, last_code = str(exc), None, None
                    delay = self._backoff(attempt)
                else:  # a notice finds no spare budget: skipped, never tried again
                    raise ChannelSendError(f"skipped: {exc}", retryable=False) from exc
            except PlatformTransportError as exc:
                last_error = str(exc)  # the underlying error's name first, as the retries' label
                last_status = last_code = None
                delay = self._backoff(attempt)
            else:
                if response.status_code < 300:
                    return response
                last_error = f"HTTP {response.status_code}: {response.text[:200]}"
                if response.status_code not in _RETRY_STATUS:
                    code, said = _error_of(response)
                    repeat = _is_a_repeat(code, said)
                    refusal = f"HTTP {response.status_code}" + (f", code {code}" if code else "")
                    if not repeat:
                        SENDBIRD_FAILURES.labels("false").inc()
                        log.error(
                            "sendbird refused %s to %s (%s): %s (%s)",
                            method,
                            channel_url,
                            refusal,
                            said,
                            what,
                        )
                    raise ChannelSendError(
                        f"Sendbird refused the message ({refusal}): {said}",
                        retryable=False,
                        already_delivered=repeat,
                        status=response.status_code,
                        code=code,
                    )
                last_status, last_code = response.status_code, _error_of(response)[0]
                delay = retry_after(response) or self._backoff(attempt)
            if attempt < max_attempts:
                SENDBIRD_RETRIES.labels(last_error.split(":", 1)[0].removeprefix("HTTP ")).inc()
                log.warning(
                    "sendbird %s to %s failed (%s); retry %d in %.2fs",
                    method,
                    channel_url,
                    last_error,
                    attempt,
                    delay,
                )
                await asyncio.sleep(delay)
        log.warning(
            "sendbird %s to %s failed %d times: %s (%s)",
            method,
            channel_url,
            max_attempts,
            last_error,
            what,
        )
        SENDBIRD_FAILURES.labels("true").inc()
        raise ChannelSendError(
            f"could not send to {channel_url}: {last_error}",
            retryable=True,
            status=last_status,
            code=last_code,
        )

    def _backoff(self, attempt: int) -> float:
        # Capped exponential backoff with full jitter.
        return random.uniform(0, min(self.backoff_cap_s, self.backoff_base_s * 2 ** (attempt - 1)))


def _error_of(response: Reply) -> tuple[int | None, str]:
    """Sendbird's error code and text (``{"error": true, "code": 400201, "message": "..."}``), or the
    start of whatever else the answer says."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        return None, response.text[:500] or response.reason
    code = body.get("code")
    said = body.get("message")
    return (
        code if isinstance(code, int) and not isinstance(code, bool) else None,
        said[:500] if isinstance(said, str) else response.text[:500],
    )


def _is_a_repeat(code: int | None, said: str) -> bool:
    """Sendbird's refusal of a ``dedup_id`` it has seen: the message was delivered before.

    What a repeated ``dedup_id`` gets is not documented ("the server performs a duplicate check"):
    a success, or an error whose text names the dedup id or a duplicate, or 400202 (the resource
    already exists), are all taken as "already sent".
    """
    text = said.lower()
    return code == 400202 or "dedup" in text or "duplicat" in text
