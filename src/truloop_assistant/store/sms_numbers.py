"""What the server keeps of a phone number it texts: whether it opted out, what was sent to it, and
its last delivery failure.

An opt-out is the person's own choice (they texted STOP): it is kept (``SMS_OPT_OUT_TTL_S``, renewed
each time it stops a send) until they text START, or until their data is erased (:meth:`SmsNumbers.erase`).
A sent mark makes each dedup id go out once: claimed while the send is under way, then kept with the
message's SID. The last failure comes from Twilio's status callbacks, so the organizer can be told.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal, cast

from redis.asyncio import Redis

from . import keys

Claim = Literal["claimed", "opted_out", "sending", "sent"]
"""``claimed``: this caller sends it now; ``opted_out``: the number texted STOP (nothing is sent);
``sending``: another send of the same dedup id is under way; ``sent``: it went out before."""

SENDING = b"sending"

_CLAIM = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('EXPIRE', KEYS[1], ARGV[2])
  return 'opted_out'
end
local mark = redis.call('GET', KEYS[2])
if mark then
  if mark == 'sending' then return 'sending' end
  return 'sent'
end
redis.call('SET', KEYS[2], 'sending', 'EX', ARGV[1])
return 'claimed'
"""
"""KEYS: the opt-out, the sent mark. ARGV: the claim's TTL, the opt-out's TTL. The opt-out
is renewed when it stops a send: kept while anyone still tries to text the number."""

_RELEASE = """
if redis.call('GET', KEYS[1]) == 'sending' then return redis.call('DEL', KEYS[1]) end
return 0
"""


@dataclass(frozen=True)
class Failure:
    """A message Twilio could not deliver to the number: its ``status`` (``failed``, ``undelivered``),
    Twilio's error code (``30003``: unreachable handset, ...), when it was noted, and its SID."""

    status: str
    error_code: int | None
    at: float
    message_sid: str


class SmsNumbers:
    """Opt-outs, sent marks and delivery failures, per phone number (E.164)."""

    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._claim = redis.register_script(_CLAIM)
        self._release = redis.register_script(_RELEASE)

    async def opt_out(self, number: str) -> None:
        """The number texted STOP (or Twilio says it did): nothing more is sent to it."""
        await self._redis.set(keys.sms_opted_out(number), int(time.time()), ex=keys.SMS_OPT_OUT_TTL_S)

    async def opt_in(self, number: str) -> bool:
        """The number texted START: it may be texted again. Whether it had opted out."""
        return bool(await self._redis.delete(keys.sms_opted_out(number)))

    async def opted_out(self, number: str) -> bool:
        return bool(await self._redis.exists(keys.sms_opted_out(number)))

    async def claim(self, number: str, dedup_id: str) -> Claim:
        """Whether the message ``dedup_id`` may be sent to ``number`` now, claimed for this caller if so
        (atomically with the opt-out check: a STOP is never raced)."""
        found = await self._claim(
            keys=[keys.sms_opted_out(number), keys.sms_sent(number, dedup_id)],
            args=[keys.SMS_SENDING_TTL_S, keys.SMS_OPT_OUT_TTL_S],
        )
        return cast(Claim, found.decode() if isinstance(found, bytes) else str(found))

    async def release(self, number: str, dedup_id: str) -> None:
        """Give up a claim whose send failed: a later try sends it (a sent mark stays as it is)."""
        await self._release(keys=[keys.sms_sent(number, dedup_id)])

    async def mark_sent(self, number: str, dedup_id: str, message_sid: str) -> None:
        """The message ``dedup_id`` went out as ``message_sid``: a repeat is not sent."""
        await self._redis.set(keys.sms_sent(number, dedup_id), message_sid, ex=keys.SMS_SENT_TTL_S)

    async def sent_sid(self, number: str, dedup_id: str) -> str | None:
        """The SID the message ``dedup_id`` went out as; None if it has not (or is being sent)."""
        raw = cast(bytes | None, await self._redis.get(keys.sms_sent(number, dedup_id)))
        return None if raw is None or raw == SENDING else raw.decode()

    async def note_failure(
        self, number: str, *, status: str, error_code: int | None, message_sid: str
    ) -> None:
        """Keep Twilio's report that a message to ``number`` was not delivered (the last one wins)."""
        key = keys.sms_failure(number)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.delete(key)
            pipe.hset(
                key,
                mapping={
                    "status": status,
                    "error_code": "" if error_code is None else str(error_code),
                    "at": repr(time.time()),
                    "message_sid": message_sid,
                },
            )
            pipe.expire(key, keys.SMS_FAILURE_TTL_S)
            await pipe.execute()

    async def delivered(self, number: str) -> None:
        """A text reached ``number``: the last failure no longer stands."""
        await self._redis.delete(keys.sms_failure(number))

    async def last_failure(self, number: str) -> Failure | None:
        return _failure(cast(dict[bytes, bytes], await self._redis.hgetall(keys.sms_failure(number))))

    async def unreachable(self, people: list[str]) -> dict[str, str]:
        """Of ``people`` (``tel:`` and a number), those texts no longer reach, and why: they opted out
        (STOP), or Twilio could not deliver the last text (its status and error code); one round trip."""
        numbers = [person.removeprefix("tel:") for person in people]
        async with self._redis.pipeline(transaction=False) as pipe:  # (numbers' keys: many slots)
            for number in numbers:
                pipe.exists(keys.sms_opted_out(number))
                pipe.hgetall(keys.sms_failure(number))
            answers = await pipe.execute()
        found: dict[str, str] = {}
        for i, person in enumerate(people):
            opted_out, failure = answers[2 * i], _failure(answers[2 * i + 1])
            if opted_out:
                found[person] = "opted out of text messages (STOP); nothing more is sent to them"
            elif failure is not None:
                code = f" (Twilio error {failure.error_code})" if failure.error_code else ""
                found[person] = f"the last text to them was {failure.status}{code}"
        return found

    async def erase(self, number: str) -> None:
        """Forget the number: its opt-out and its last failure (its sent marks hold no more than that a
        message went, and lapse within ``SMS_SENT_TTL_S``). Twilio's own block of a number that texted
        STOP stays: a send is still refused there with 21610, which notes the opt-out again."""
        await self._redis.delete(keys.sms_opted_out(number), keys.sms_failure(number))


def _failure(raw: dict[bytes, bytes]) -> Failure | None:
    """A failure as its hash keeps it; None for none."""
    if not raw:
        return None
    code = raw.get(b"error_code", b"").decode()
    return Failure(
        status=raw.get(b"status", b"").decode(),
        error_code=int(code) if code.isdigit() else None,
        at=float(raw.get(b"at", b"0").decode() or 0),
        message_sid=raw.get(b"message_sid", b"").decode(),
    )
