"""App-wide keys: indexes every process scans, the job queue, the tool backends' data."""

from __future__ import annotations

from .key_prefix import prefix

__all__ = [
    "call_index",
    "dead_letter_conversations",
    "deadlines",
    "dev_mark",
    "drains",
    "event",
    "guest_reminders",
    "invited_events",
    "kb_documents",
    "kb_vectors",
    "kb_version",
    "local_message_seq",
    "owner_events",
    "pending_deliveries",
    "pending_delivery_queue",
    "phone_guests_due",
    "platform_pace_channel",
    "platform_pace_keys",
    "queue",
    "rate_limit_prefix",
    "unhandled",
    "user_profiles",
]


def drains() -> str:
    """Sorted set of conversations by when someone must look at them: a stranded inbox (its owner
    died, its job was lost) or an undelivered outbox waiting for its retry is drained from here."""
    return f"{prefix()}:drains"


def unhandled() -> str:
    """Sorted set of pending calls a device answered -32601 (method not found), by when they end
    with that error unless another device answers (app-wide; one entry per such call)."""
    return f"{prefix()}:unhandled"


def queue(name: str) -> str:
    """The start of every key of the job queue ``name`` (saq's lists, jobs and marks).

    One hash slot for the whole queue: saq's scripts and transactions touch several of its keys.
    """
    return f"{prefix()}:{{q:{name}}}"


def call_index(call_id: str) -> str:
    """call id -> conversation tag; the only lookup the tool-message endpoint starts from."""
    return f"{prefix()}:call:{call_id}"


def rate_limit_prefix() -> str:
    """Prefix of the rate-limit counters (``ratelimit`` names the rest; they expire with the window)."""
    return f"{prefix()}:rl"


def platform_pace_keys(method: str, channel: str) -> list[str]:
    """What paces one HTTP method's Platform API calls app-wide (``channels.pacing``), in µs of Redis's
    clock, each expiring within seconds of its last use: the calls of the last second and the BULK ones
    among them (lists), a 429's hold, a budget the service stated (an hour), the callers waiting at each
    of three ranks by when they came and by their note's deadline, the growing answers (sorted sets),
    and ``channel``'s message sends (the first key again when none). One hash tag for all: one script
    reads them on a Cluster."""
    base = f"{prefix()}:{{sb-pace}}:{method}"
    return [
        f"{base}:calls",
        f"{base}:bulk",
        f"{base}:hold",
        f"{base}:learned",
        f"{base}:waiting:0",
        f"{base}:waiting:1",
        f"{base}:waiting:2",
        f"{base}:waiting-until:0",
        f"{base}:waiting-until:1",
        f"{base}:waiting-until:2",
        f"{base}:streams",
        f"{base}:streams-seen",
        platform_pace_channel(channel) if channel else f"{base}:calls",
    ]


def platform_pace_channel(channel: str) -> str:
    """The message sends of the last second to one channel (a list of µs, beside ``platform_pace_keys``)."""
    return f"{prefix()}:{{sb-pace}}:channel:{channel}"


def deadlines() -> str:
    """Sorted set of paused turns by the time their calls expire (app-wide; one entry per paused turn)."""
    return f"{prefix()}:deadlines"


def dev_mark() -> str:
    """String: ``dev``'s mark on a Redis it has used (under its own prefix, ``DEV_KEY_PREFIX``), so
    that it starts there again; no TTL, as long as the sample users it wrote beside it."""
    return f"{prefix()}:dev-server"


def local_message_seq() -> str:
    return f"{prefix()}:local:seq"


def dead_letter_conversations() -> str:
    """Sorted set of the conversations that keep dead letters, by when they last gave one up (app-wide,
    for ``dead-letters list``). Each new dead letter trims it to ``DEAD_LETTER_CONVERSATIONS_MAX`` and
    drops entries older than ``LEDGER_TTL_S`` (their dead letters have expired); the set itself expires
    ``LEDGER_TTL_S`` after the last one. A conversation whose dead letters are all gone leaves it."""
    return f"{prefix()}:dead-letters"


# -- tool backends


def user_profiles() -> str:
    """Hash: user id -> JSON profile (the default user directory); bounded by ``USERS_MAX``."""
    return f"{prefix()}:users:profiles"


def event(event_id: str) -> str:
    """JSON event; expires ``EVENT_RETENTION_S`` after the event ends (within ``EVENT_MIN_TTL_S`` and
    ``EVENT_MAX_TTL_S`` of its last write)."""
    return f"{prefix()}:events:event:{event_id}"


def owner_events(owner_id: str) -> str:
    """Sorted set: event ids of an owner scored by start time; expires with its last event."""
    return f"{prefix()}:events:owner:{owner_id}"


def invited_events(user_id: str) -> str:
    """Set: event ids a user is invited to; expires with its last event."""
    return f"{prefix()}:events:invited:{user_id}"


def phone_guests_due() -> str:
    """Sorted set of event ids by when their guests reached by phone are to be forgotten (30 days after
    the event ends): written by the event store with every write to an event that has any, emptied
    by the workers' scan (``operations.guest_erasure``)."""
    return f"{prefix()}:{{events}}:phone-guests-due"


def guest_reminders() -> str:
    """Sorted set of ``<event id>:<guest id>`` by when to remind the guest to give their availability.

    Written by the event store with every write to an event (a guest who answered, left or whose
    event was cancelled is removed); every worker's reminder scan claims due entries from it. Bounded:
    one entry per guest who still owes an answer, removed once reminded or past the deadline.
    """
    return f"{prefix()}:events:reminders"


# Deliveries waiting for their channel share the hash tag {deliveries}: a script moves a person's queue and
# their place in the scan together, which a Redis Cluster runs only on keys of one slot.


def pending_deliveries() -> str:
    """Sorted set of user ids by when their waiting invitations and event notices are tried next.

    Every worker's delivery scan claims due people from it (moving them a lease ahead). Bounded: one
    entry per person with a queue, removed once the queue is empty.
    """
    return f"{prefix()}:{{deliveries}}:due"


def pending_delivery_queue(user_id: str) -> str:
    """List of the invitations and event notices (JSON) still to deliver to ``user_id``, oldest first.

    Expires ``PENDING_DELIVERY_TTL_S`` after the last one was queued; at most ``PENDING_DELIVERIES_MAX``.
    """
    return f"{prefix()}:{{deliveries}}:queue:{user_id}"


# The knowledge base's keys share the hash tag {kb}: a write changes the documents and the version in
# one transaction, which a Redis Cluster runs only on keys of one slot.


def kb_documents() -> str:
    """Hash: document id -> the document (compressed JSON); see ``backends/knowledge/store.py``.

    No expiry: the knowledge base is the organisation's, kept until a sync or an index removes it.
    """
    return f"{prefix()}:{{kb}}:documents"


def kb_version() -> str:
    """Moves with every write to the knowledge base: processes rebuild their index when it does."""
    return f"{prefix()}:{{kb}}:version"


def kb_vectors() -> str:
    """Hash: a digest of an embedding model and a passage's text -> its vector (float32 bytes).

    No expiry; bounded by the documents: every write drops the vectors no stored passage has (at most
    ``KB_PASSAGES_MAX``, some 6 KB each at 1,536 dimensions). See ``backends/knowledge/vectors.py``.
    """
    return f"{prefix()}:{{kb}}:vectors"
