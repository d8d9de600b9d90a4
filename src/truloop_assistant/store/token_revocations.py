"""Revoked device tokens: per person, the moment before which their tokens are refused ("not before").

A revocation (the person's erasure, an operator's ``users revoke-tokens`` or the admin API) sets it;
the token verifier reads it once per request. A later revocation moves it on, an earlier one (a
server whose clock lags) never moves it back.
"""

from __future__ import annotations

from redis.asyncio import Redis

from . import keys

# Set the not-before unless a later one is set already, and keep it for its lifetime.
# KEYS: the person's not-before. ARGV: the moment (epoch seconds), lifetime (s). Returns the one kept.
_REVOKE = """
local kept = tonumber(redis.call('GET', KEYS[1]) or '')
if not kept or tonumber(ARGV[1]) > kept then redis.call('SET', KEYS[1], ARGV[1]) end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return redis.call('GET', KEYS[1])
"""


class TokenRevocations:
    """Each person's "not before" for device tokens, kept as long as a token issued before it may be
    valid: ``max_token_ttl_s`` (``TRULOOP_JWT_MAX_TTL_S``) plus ``TOKENS_NOT_BEFORE_GRACE_S``."""

    def __init__(self, redis: Redis, *, max_token_ttl_s: int) -> None:
        self.redis = redis
        self.lasts_s = max_token_ttl_s + keys.TOKENS_NOT_BEFORE_GRACE_S
        self._revoke = redis.register_script(_REVOKE)

    async def revoke(self, user_id: str, *, at: float) -> float:
        """Refuse ``user_id``'s tokens issued before ``at`` (epoch seconds); the not-before now kept."""
        kept = await self._revoke(keys=[keys.tokens_not_before(user_id)], args=[repr(at), self.lasts_s])
        return float(kept)

    async def not_before(self, user_id: str) -> float | None:
        """When ``user_id``'s tokens were last revoked, None if they never were (or it lapsed)."""
        raw = await self.redis.get(keys.tokens_not_before(user_id))
        return None if raw is None else float(raw)
