"""Which step of a person's turn runs now in a channel, and a stop the person asked of it.

The step runs in a worker and the stop comes to the API process: they meet in Redis. The step marks
itself running (``keys.running``: ``<turn id>:<step>``) at its start and removes the mark at its end;
a stop copies that mark to ``keys.stop_mark`` in one script, so only a step that runs now is stopped
(a later step of the same turn has another mark), and only the caller's own (the keys are per person).
The running step reads its stop mark a few times a second: one GET, no subscriber to keep, alike on
one Redis and on a Cluster (both keys carry the conversation's hash tag).
"""

from __future__ import annotations

from redis.asyncio import Redis

from . import keys

# Copy the running step's mark to its stop mark, if a step runs. KEYS: running, stop mark. ARGV: the
# stop mark's lifetime (s). Returns the mark stopped, or false.
_STOP = """
local running = redis.call('GET', KEYS[1])
if not running then return false end
redis.call('SET', KEYS[2], running, 'EX', ARGV[1])
return running
"""

# Remove the step's marks, unless another step's are there by now. KEYS: running, stop mark. ARGV:
# the step's mark.
_END = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
return 1
"""


def step_mark(turn_id: str, step: int) -> str:
    """What names one step of a turn in the running mark and the stop mark."""
    return f"{turn_id}:{step}"


class TurnStops:
    """Marks running steps, and stops them on the person's word (``POST /api/v1/agent/turns/stop``)."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._stop = redis.register_script(_STOP)
        self._end = redis.register_script(_END)

    def _keys(self, channel_url: str, user_id: str) -> list[str]:
        tag = keys.conversation_tag(channel_url)
        return [keys.running(tag, user_id), keys.stop_mark(tag, user_id)]

    async def started(self, channel_url: str, user_id: str, mark: str, *, lasts_s: float) -> None:
        """The step ``mark`` of ``user_id``'s turn runs now, for at most ``lasts_s`` seconds."""
        running, _ = self._keys(channel_url, user_id)
        await self.redis.set(running, mark, ex=int(lasts_s) + keys.RUNNING_GRACE_S)

    async def ended(self, channel_url: str, user_id: str, mark: str) -> None:
        """The step ``mark`` is over: nothing of it is left to stop."""
        await self._end(keys=self._keys(channel_url, user_id), args=[mark])

    async def stop(self, channel_url: str, user_id: str) -> bool:
        """Ask ``user_id``'s running step in the channel to stop; False when none of theirs runs there."""
        stopped = await self._stop(keys=self._keys(channel_url, user_id), args=[keys.STOP_MARK_TTL_S])
        return stopped is not None

    async def asked(self, channel_url: str, user_id: str, mark: str) -> bool:
        """Whether the person asked the step ``mark`` to stop."""
        _, stop = self._keys(channel_url, user_id)
        raw = await self.redis.get(stop)
        return raw is not None and (raw.decode() if isinstance(raw, bytes) else str(raw)) == mark
