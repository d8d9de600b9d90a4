"""What is kept of a number the server texts, on a standalone Redis and on a Redis Cluster."""

from __future__ import annotations

from redis.asyncio import Redis

from tests.support import ON_STANDALONE_AND_CLUSTER
from truloop_assistant.store import keys
from truloop_assistant.store.sms_numbers import SmsNumbers

pytestmark = ON_STANDALONE_AND_CLUSTER

GUEST = "+821055501234"


async def test_an_opt_out_stops_every_claim_until_start(redis: Redis) -> None:
    numbers = SmsNumbers(redis)
    assert await numbers.claim(GUEST, "d1") == "claimed"
    await numbers.opt_out(GUEST)
    assert await numbers.claim(GUEST, "d2") == "opted_out"
    assert await numbers.opt_in(GUEST)
    assert await numbers.claim(GUEST, "d2") == "claimed"
    assert not await numbers.opt_in(GUEST)  # it had not opted out (again)


async def test_a_dedup_id_is_sent_once(redis: Redis) -> None:
    numbers = SmsNumbers(redis)
    assert await numbers.claim(GUEST, "d1") == "claimed"
    assert await numbers.claim(GUEST, "d1") == "sending"
    await numbers.release(GUEST, "d1")
    assert await numbers.claim(GUEST, "d1") == "claimed"
    await numbers.mark_sent(GUEST, "d1", "SM" + "0" * 32)
    await numbers.release(GUEST, "d1")  # a late release leaves a sent mark as it is
    assert await numbers.claim(GUEST, "d1") == "sent"
    assert await numbers.sent_sid(GUEST, "d1") == "SM" + "0" * 32


async def test_nothing_is_kept_forever_and_erase_forgets_the_number(redis: Redis) -> None:
    numbers = SmsNumbers(redis)
    assert await numbers.claim(GUEST, "d1") == "claimed"
    await numbers.opt_out(GUEST)
    await numbers.mark_sent(GUEST, "d2", "SM" + "1" * 32)
    await numbers.note_failure(GUEST, status="undelivered", error_code=30003, message_sid="SM" + "1" * 32)
    written = [keys.sms_opted_out(GUEST), keys.sms_sent(GUEST, "d1"), keys.sms_sent(GUEST, "d2")]
    for key in [*written, keys.sms_failure(GUEST)]:
        assert 0 < await redis.ttl(key) <= keys.SMS_OPT_OUT_TTL_S, key
    failure = await numbers.last_failure(GUEST)
    assert failure is not None and (failure.status, failure.error_code) == ("undelivered", 30003)
    await numbers.erase(GUEST)
    assert not await numbers.opted_out(GUEST)
    assert await numbers.last_failure(GUEST) is None
    assert GUEST not in " ".join(written)  # key names carry a digest, never the number
