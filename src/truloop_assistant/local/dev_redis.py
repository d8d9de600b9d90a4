"""Which Redis ``truloop-assistant dev`` may write in, when ``TRULOOP_REDIS_URL`` names one.

``dev`` writes sample users there, one of them an admin, and keeps the conversations of its local
channel. A Redis given in the environment may be a deployment's, so ``dev`` starts on it only when
everything in its database is ``dev``'s own: nothing at all, or only keys under ``dev``'s prefix
(``DEV_KEY_PREFIX``, whatever ``TRULOOP_KEY_PREFIX`` says) beside the mark it left there when it
first used the database (``keys.dev_mark``). Any other key, a deployment's of any prefix included,
or keys under ``dev``'s prefix without that mark (a deployment that chose that prefix), and it
refuses, naming the fix. The embedded Redis ``dev`` starts itself is new each time and not checked.
"""

from __future__ import annotations

from ..errors import OperatorError
from ..redis_client import connect
from ..store import keys

SCAN_LIMIT = 100_000
"""At most this many keys are looked at; a database with more is not taken for ``dev``'s."""

FIX = (
    "Unset TRULOOP_REDIS_URL and dev starts an embedded Redis of its own, "
    "or point TRULOOP_REDIS_URL at an empty database (e.g. another database number, /15)"
)


class NotDevsRedis(OperatorError):
    """The Redis of ``TRULOOP_REDIS_URL`` holds what is not ``dev``'s; the message says what and the fix."""


async def claim(redis_url: str) -> None:
    """Check that the database at ``redis_url`` holds nothing but ``dev``'s, then mark it as ``dev``'s.

    Raises :class:`NotDevsRedis` when it holds anything else. Call with ``dev``'s prefix in use
    (``keys.use_prefix(keys.DEV_KEY_PREFIX)``).
    """
    own = f"{keys.DEV_KEY_PREFIX}:".encode()
    redis = connect(redis_url)
    try:
        seen = 0
        async for key in redis.scan_iter(count=1000):
            name = key if isinstance(key, bytes) else str(key).encode()
            if not name.startswith(own):
                start = name.split(b":", 1)[0].decode(errors="replace")[:40]
                raise NotDevsRedis(
                    f"it holds keys that are not dev's (such as keys starting with {start!r}): it may be "
                    "a deployment's, and dev would write its sample users (one an admin) among them"
                )
            seen += 1
            if seen > SCAN_LIMIT:
                raise NotDevsRedis(f"it holds more than {SCAN_LIMIT:,} keys: too many for dev's own")
        mark = keys.dev_mark()
        if seen and not await redis.exists(mark):
            raise NotDevsRedis(
                f"it holds keys under {keys.DEV_KEY_PREFIX!r}, dev's prefix, that dev did not write "
                "(a deployment with that TRULOOP_KEY_PREFIX?)"
            )
        await redis.set(mark, "truloop-assistant dev")
    finally:
        await redis.aclose()
