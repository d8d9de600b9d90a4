"""What is known of a conversation's device calls: pending, settled, and what they asked."""

from __future__ import annotations

import time
from collections.abc import Sequence

from redis.asyncio import Redis

from . import keys
from .records import Asked, CallView


async def call_views(redis: Redis, tag: str, call_ids: Sequence[str]) -> list[CallView | None]:
    """What is known of each call of one conversation (None once it is forgotten)."""
    async with redis.pipeline(transaction=False) as pipe:
        for call_id in call_ids:
            pipe.hgetall(keys.pending(tag, call_id))
            pipe.hgetall(keys.settled(tag, call_id))
            pipe.get(keys.call_request(tag, call_id))
        found = await pipe.execute()
    now = time.time()
    views: list[CallView | None] = []
    for call_id, pending, settled, request in zip(
        call_ids, found[::3], found[1::3], found[2::3], strict=True
    ):
        if settled:
            fields = decode_fields(settled)
        elif pending:
            fields = decode_fields(pending)
            # Past its deadline it is expired, even before the expiry scanner has settled it.
            expires_at = float(fields.get("expires_at", "inf"))
            fields["state"] = "expired" if expires_at < now else "pending"
            if expires_at < now:
                fields["settled_at"] = str(expires_at)
        else:
            views.append(None)
            continue
        view = CallView.model_validate({**fields, "call_id": call_id, "tag": tag})
        if request is not None:
            view = view.model_copy(update={"request": Asked.model_validate_json(request)})
        views.append(view)
    return views


def decode_fields(raw: dict[bytes, bytes]) -> dict[str, str]:
    """A Redis hash's fields and values as text."""
    return {k.decode(): v.decode() for k, v in raw.items()}
