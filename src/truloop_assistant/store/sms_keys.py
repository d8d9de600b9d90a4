"""The keys of text messages to guests' phone numbers: one hash tag per number, and the app-wide pace.

A number's keys share the hash tag ``{sms:<digest>}``: the send script reads its opt-out and claims
its sent mark together, which a Redis Cluster runs only on keys of one slot. The number itself is
never in a key's name (a digest is), so a key listing shows no phone numbers.
"""

from __future__ import annotations

import hashlib

from .key_prefix import prefix

__all__ = [
    "SMS_FAILURE_TTL_S",
    "SMS_OPT_OUT_TTL_S",
    "SMS_PACE_TTL_S",
    "SMS_SENDING_TTL_S",
    "SMS_SENT_TTL_S",
    "sms_failure",
    "sms_opted_out",
    "sms_pace",
    "sms_sent",
]

SMS_OPT_OUT_TTL_S = 2 * 365 * 24 * 3600
"""An opt-out (the person texted STOP) lives two years after it was last confirmed: by their STOP, by
a send it stopped, or by Twilio refusing a send with 21610. Twilio keeps its own block beside it (a
send to a number that texted STOP is refused), and its refusal notes the opt-out here again."""
SMS_SENDING_TTL_S = 300
"""A send's claim while it is under way (its retries and pacing included); a process that dies with
it lets it go when this runs out, and the message is tried again (Twilio has no idempotency key)."""
SMS_SENT_TTL_S = 7 * 24 * 3600
"""A sent message's mark (its Twilio SID): a repeat of its dedup id within this time is not sent."""
SMS_FAILURE_TTL_S = 30 * 24 * 3600
"""The last delivery failure of a number (from Twilio's status callbacks), after it was noted."""
SMS_PACE_TTL_S = 60
"""The pace's next free slot outlives its last use by at most this (plus the wait it holds)."""


def _number_tag(number: str) -> str:
    return "{sms:" + hashlib.sha256(number.encode()).hexdigest()[:20] + "}"


def sms_opted_out(number: str) -> str:
    """When the number texted STOP (epoch seconds): nothing is sent to it. ``SMS_OPT_OUT_TTL_S``."""
    return f"{prefix()}:{_number_tag(number)}:opted-out"


def sms_sent(number: str, dedup_id: str) -> str:
    """``sending`` while a message with ``dedup_id`` is being sent to the number (``SMS_SENDING_TTL_S``),
    then its Twilio SID (``SMS_SENT_TTL_S``): each dedup id goes out once."""
    return f"{prefix()}:{_number_tag(number)}:sent:{dedup_id}"


def sms_failure(number: str) -> str:
    """Hash of the number's last delivery failure: ``status``, ``error_code``, ``at`` (epoch seconds),
    ``message_sid``. ``SMS_FAILURE_TTL_S``."""
    return f"{prefix()}:{_number_tag(number)}:failure"


def sms_pace() -> str:
    """The next free slot (µs of Redis's clock) of the app-wide pace of sends (``TRULOOP_TWILIO_RATE``)."""
    return f"{prefix()}:sms-pace"
