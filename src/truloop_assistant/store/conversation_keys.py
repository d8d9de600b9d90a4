"""The keys of one conversation. They carry the same hash tag (``{c:<digest>}``) so that scripts
touching several of them work on Redis Cluster."""

from __future__ import annotations

import hashlib
from functools import lru_cache

from .key_prefix import prefix

__all__ = [
    "active_turn",
    "admissions",
    "bell",
    "call_request",
    "conversation_tag",
    "dead_letters",
    "drain_note",
    "effects",
    "history",
    "inbox",
    "inbox_attempts",
    "last_failure",
    "ledger",
    "ledger_order",
    "local_members",
    "local_messages",
    "local_typing",
    "members",
    "outbox",
    "outbox_error",
    "outbox_failures",
    "owner",
    "pending",
    "recent_files",
    "rpc_message",
    "running",
    "seen",
    "seen_line",
    "settled",
    "stop_mark",
    "streamed",
    "transcript",
    "turn",
    "upload",
    "waiting",
]


@lru_cache(maxsize=4096)  # a step names its conversation's keys dozens of times
def conversation_tag(channel_url: str) -> str:
    digest = hashlib.sha256(channel_url.encode()).hexdigest()[:20]
    return "{c:" + digest + "}"


def _conv(tag: str, *parts: str) -> str:
    return ":".join((prefix(), tag, *parts))


def history(tag: str, user_id: str) -> str:
    """What the model saw and did in one person's turns in a channel (tool calls and results are private)."""
    return _conv(tag, "history", user_id)


def transcript(tag: str) -> str:
    """List of the channel's visible messages (people's texts and the assistant's answers), bounded."""
    return _conv(tag, "transcript")


def members(tag: str) -> str:
    """The channel's member user ids (JSON), cached from the Platform API or the dev channel."""
    return _conv(tag, "members")


def turn(tag: str, turn_id: str) -> str:
    """Hash: ``record`` (the paused run), ``state``, ``remaining``, ``r:<call_id>`` (answers)."""
    return _conv(tag, "turn", turn_id)


def active_turn(tag: str, user_id: str) -> str:
    """The id of one person's paused turn in the channel, if any (people in a group pause apart)."""
    return _conv(tag, "active", user_id)


def pending(tag: str, call_id: str) -> str:
    """A call waiting for the device; lives ``TRULOOP_PENDING_CALL_TTL_S``."""
    return _conv(tag, "pending", call_id)


def settled(tag: str, call_id: str) -> str:
    """A call that left the pending state: answered, expired or superseded."""
    return _conv(tag, "settled", call_id)


def inbox(tag: str) -> str:
    """List of the conversation's events (user messages, resumes) in arrival order."""
    return _conv(tag, "inbox")


def inbox_attempts(tag: str) -> str:
    """Hash: event id -> how many times a worker started on it (poison events are dropped)."""
    return _conv(tag, "inbox", "attempts")


def owner(tag: str) -> str:
    """The job that drains the conversation's inbox; expires unless its worker keeps it alive."""
    return _conv(tag, "owner")


def drain_note(tag: str) -> str:
    """The drain that last claimed the conversation: ``<owner> <since> <worker>`` (Unix seconds; the
    worker's host and process id), for ``inspect``; lives as long as an inbox."""
    return _conv(tag, "owner", "note")


def waiting(tag: str) -> str:
    """The owner of a drain that waits a moment for a device's answer before it lets go of the
    conversation; expires with that moment."""
    return _conv(tag, "owner", "waiting")


def bell(tag: str) -> str:
    """List rung (one element) by a push into an inbox whose drain is waiting: it wakes that drain."""
    return _conv(tag, "owner", "bell")


def outbox(tag: str) -> str:
    """List of messages a finished step still has to deliver, oldest first; expires with the inbox."""
    return _conv(tag, "outbox")


def outbox_failures(tag: str) -> str:
    """How many deliveries in a row failed (the retry backoff grows with it); gone once one succeeds."""
    return _conv(tag, "outbox", "failures")


def outbox_error(tag: str) -> str:
    """The last failed delivery of the outbox's oldest message (JSON: when, what, the channel's status,
    code and text), for ``inspect``; gone once a delivery succeeds, like the count of failures."""
    return _conv(tag, "outbox", "error")


def admissions(tag: str) -> str:
    """List of what admission decided of the channel's recent messages (JSON: when, the decision, the
    sender's and message's ids; no text), newest first, for ``inspect``; bounded by ``ADMISSIONS_MAX``,
    dropped ``ADMISSIONS_TTL_S`` after the last one."""
    return _conv(tag, "admissions")


def effects(tag: str, turn_id: str) -> str:
    """Hash: tool call id (or tool + arguments) -> the recorded result of a tool that changed something."""
    return _conv(tag, "effects", turn_id)


def call_request(tag: str, call_id: str) -> str:
    """What a call asked: JSON ``{"params", "message"}`` (the request's params and the text shown with
    it; and ``channel_url`` when it was posted outside the conversation's channel), for as long as its
    id is remembered; apart from its record, which stays small (Redis keeps a hash of short values
    compactly)."""
    return _conv(tag, "request", call_id)


def rpc_message(tag: str, call_id: str) -> str:
    """The channel's message id of a call's ``agent-rpc`` message (to update it once the call settles),
    followed by a space and the channel's URL when it was posted outside the conversation's channel.

    Written when the request is delivered; gone once the update is delivered (or the call forgotten).
    """
    return _conv(tag, "rpc-message", call_id)


def streamed(tag: str, turn_id: str) -> str:
    """Hash: ``"<step>:<index>"`` -> the channel's message id of each message a turn's answers streamed
    into (expires after ``STREAMED_TTL_S``): a re-run of a step updates its messages, not posts anew."""
    return _conv(tag, "streamed", turn_id)


def running(tag: str, user_id: str) -> str:
    """``<turn id>:<step>`` of the step of one person's turn that runs now in the channel; set at the
    step's start, removed at its end, and it expires (``RUNNING_GRACE_S`` past the turn's time limit)
    should the worker die in between."""
    return _conv(tag, "running", user_id)


def stop_mark(tag: str, user_id: str) -> str:
    """``<turn id>:<step>`` of the running step the person asked to stop (the step polls it); lives
    ``STOP_MARK_TTL_S``."""
    return _conv(tag, "running", user_id, "stop")


def seen(tag: str, message_id: str) -> str:
    return _conv(tag, "seen", message_id)


def seen_line(tag: str, message_id: str) -> str:
    """Mark: the message's line is in the transcript (added by the worker once it knew whom it was for)."""
    return _conv(tag, "seen", message_id, "line")


def local_messages(tag: str) -> str:
    return _conv(tag, "local", "messages")


def local_members(tag: str) -> str:
    """Set: who has written in a dev channel (with the assistant, its members)."""
    return _conv(tag, "local", "members")


def local_typing(tag: str) -> str:
    """Set while the assistant is typing in a dev channel (the bot's user id)."""
    return _conv(tag, "local", "typing")


def ledger(tag: str) -> str:
    """Hash turn id -> the turn's ledger record (JSON); see :mod:`~truloop_assistant.store.ledger`."""
    return _conv(tag, "ledger")


def ledger_order(tag: str) -> str:
    """Sorted set of the ledger's turn ids by start time (to list newest first and to trim)."""
    return _conv(tag, "ledger:order")


def dead_letters(tag: str) -> str:
    """List of a conversation's given-up events with their error and id, newest first (``inspect``,
    ``dead-letters``); bounded by ``DEAD_LETTERS_MAX``, dropped ``LEDGER_TTL_S`` after the last one."""
    return _conv(tag, "dead")


def last_failure(tag: str) -> str:
    """The conversation's last step that raised (JSON: when, which event, the error), for ``inspect``."""
    return _conv(tag, "failure")


def upload(tag: str, upload_id: str) -> str:
    """A file put through the local channel (``/dev``): its bytes, as a person's phone would have
    uploaded them to the chat's file host (``LOCAL_MESSAGES_TTL_S``, as the messages it is sent in)."""
    return _conv(tag, "upload", upload_id)


def recent_files(tag: str, user_id: str) -> str:
    """List: the files a person sent in a group without mentioning the assistant, for their next
    message that does (``RECENT_FILES_TTL_S``); erased with their data."""
    return _conv(tag, "recent_files", user_id)
