"""A person's "not before" for device tokens: a later revocation moves it on, never back; it lasts as
long as a token issued before it may be valid."""

from __future__ import annotations

from redis.asyncio import Redis

from truloop_assistant.store import keys
from truloop_assistant.store.token_revocations import TokenRevocations


async def test_a_revocation_moves_the_not_before_on_but_never_back(redis: Redis) -> None:
    revocations = TokenRevocations(redis, max_token_ttl_s=3600)
    assert await revocations.not_before("jeff") is None
    assert await revocations.revoke("jeff", at=1_800_000_000.25) == 1_800_000_000.25
    assert await revocations.revoke("jeff", at=1_700_000_000.0) == 1_800_000_000.25  # a lagging clock
    assert await revocations.revoke("jeff", at=1_800_000_001.5) == 1_800_000_001.5
    assert await revocations.not_before("jeff") == 1_800_000_001.5
    assert await revocations.not_before("mina") is None
    ttl = await redis.ttl(keys.tokens_not_before("jeff"))
    assert 3600 < ttl <= 3600 + keys.TOKENS_NOT_BEFORE_GRACE_S
