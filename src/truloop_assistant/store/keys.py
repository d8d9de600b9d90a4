"""Every Redis key the server writes, with its lifetime. Nothing else builds key names.

Keys of one conversation carry the same hash tag (``{c:<digest>}``) so that scripts touching
several of them work on Redis Cluster.
"""

from __future__ import annotations

import hashlib

PREFIX = "ta"
"""The start of every key (``TRULOOP_KEY_PREFIX``), so several deployments can share one Redis."""


def use_prefix(prefix: str) -> None:
    """Name every key of this process under ``prefix`` (from the settings, before Redis is used)."""
    global PREFIX
    PREFIX = prefix


HISTORY_TTL_S = 7 * 24 * 3600
"""A conversation's history is forgotten a week after its last turn."""
HISTORY_MAX_BYTES = 512 * 1024
"""A conversation's stored history is cut (oldest turns first) to stay under this size."""
SETTLED_TTL_S = 24 * 3600
"""Answered, expired and superseded call ids are remembered this long (200 duplicate / 409 / 410)."""
SEEN_TTL_S = 24 * 3600
"""Webhook de-duplication marks (Sendbird re-sends within minutes)."""
DONE_TURN_TTL_S = 3600
"""A finished turn's state (only that) stays this long so a re-delivered job sees it is done."""
SUPERSEDED_TURN_TTL_S = 300
"""A superseded turn's record is read once more, at once, by the run that answers the new message."""
INBOX_TTL_S = 24 * 3600
"""Events waiting for a conversation's worker; refreshed by every push."""
INBOX_MAX = 200
"""More waiting events than this in one conversation are refused (the sender is flooding)."""
LOCAL_MESSAGES_TTL_S = 7 * 24 * 3600
LOCAL_MESSAGES_MAX = 500


def conversation_tag(channel_url: str) -> str:
    digest = hashlib.sha256(channel_url.encode()).hexdigest()[:20]
    return "{c:" + digest + "}"


def _conv(tag: str, *parts: str) -> str:
    return ":".join((PREFIX, tag, *parts))


def history(tag: str, user_id: str) -> str:
    """What the model saw and did in one person's turns in a channel (tool calls and results are private)."""
    return _conv(tag, "history", user_id)


TRANSCRIPT_MAX = 30
"""Visible messages of a channel kept for context (who said what), newest last."""
TRANSCRIPT_LINE_CHARS = 500
"""Each kept message is cut to this many characters: context, not a copy."""


def transcript(tag: str) -> str:
    """List of the channel's visible messages (people's texts and the assistant's answers), bounded."""
    return _conv(tag, "transcript")


MEMBERS_TTL_S = 60
"""How long a channel's member list from the Platform API is trusted."""


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


OUTBOX_MAX = 200
"""More undelivered messages than this in one conversation are not kept (the oldest go first)."""


def outbox(tag: str) -> str:
    """List of messages a finished step still has to deliver, oldest first; expires with the inbox."""
    return _conv(tag, "outbox")


def outbox_failures(tag: str) -> str:
    """How many deliveries in a row failed (the retry backoff grows with it); gone once one succeeds."""
    return _conv(tag, "outbox", "failures")


EFFECTS_TTL_S = 24 * 3600
"""The recorded results of a turn's side effects outlive any re-run of its steps."""


def effects(tag: str, turn_id: str) -> str:
    """Hash: tool call id (or tool + arguments) -> the recorded result of a tool that changed something."""
    return _conv(tag, "effects", turn_id)


def drains() -> str:
    """Sorted set of conversations by when someone must look at them: a stranded inbox (its owner
    died, its job was lost) or an undelivered outbox waiting for its retry is drained from here."""
    return f"{PREFIX}:drains"


def call_request(tag: str, call_id: str) -> str:
    """What a call asked: JSON ``{"params", "message"}`` (the request's params and the text shown with
    it), for as long as its id is remembered; apart from its record, which stays small (Redis keeps a
    hash of short values compactly)."""
    return _conv(tag, "request", call_id)


def rpc_message(tag: str, call_id: str) -> str:
    """The channel's message id of a call's ``agent-rpc`` message (to update it once the call settles).

    Written when the request is delivered; gone once the update is delivered (or the call forgotten).
    """
    return _conv(tag, "rpc-message", call_id)


def unhandled() -> str:
    """Sorted set of pending calls a device answered -32601 (method not found), by when they end
    with that error unless another device answers (app-wide; one entry per such call)."""
    return f"{PREFIX}:unhandled"


def seen(tag: str, message_id: str) -> str:
    return _conv(tag, "seen", message_id)


def local_messages(tag: str) -> str:
    return _conv(tag, "local", "messages")


def local_members(tag: str) -> str:
    """Set: who has written in a dev channel (with the assistant, its members)."""
    return _conv(tag, "local", "members")


def queue(name: str) -> str:
    """The start of every key of the job queue ``name`` (saq's lists, jobs and marks).

    One hash slot for the whole queue: saq's scripts and transactions touch several of its keys.
    """
    return f"{PREFIX}:{{q:{name}}}"


def call_index(call_id: str) -> str:
    """call id -> conversation tag; the only lookup the tool-message endpoint starts from."""
    return f"{PREFIX}:call:{call_id}"


def rate_limit_prefix() -> str:
    """Prefix of the rate-limit counters (``limits`` names the rest; they expire with the window)."""
    return f"{PREFIX}:rl"


def rate_limit_notice(tag: str, user_id: str) -> str:
    """Set while a user has been told they are sending too fast (once per window)."""
    return _conv(tag, "rl-notice", user_id)


EXPIRY_GRACE_S = 120
"""A pending call's key outlives its deadline by this much, so the expiry scanner settles it (410)."""


def deadlines() -> str:
    """Sorted set of paused turns by the time their calls expire (app-wide; one entry per paused turn)."""
    return f"{PREFIX}:deadlines"


def local_message_seq() -> str:
    return f"{PREFIX}:local:seq"


LOCAL_TYPING_TTL_S = 60
"""The dev channel's typing mark outlives a worker that died mid-turn by at most this long."""


def local_typing(tag: str) -> str:
    """Set while the assistant is typing in a dev channel (the bot's user id)."""
    return _conv(tag, "local", "typing")


# -- memory
MEMORY_TTL_S = 365 * 24 * 3600
"""A user's memories are forgotten a year after the last one was saved."""
MEMORY_MAX = 500
"""At most this many memories per user; saving another drops the oldest."""


def _memory_tag(user_id: str) -> str:
    return "{m:" + hashlib.sha256(user_id.encode()).hexdigest()[:20] + "}"


def memories(user_id: str) -> str:
    """Hash: memory id -> JSON memory, one per user."""
    return f"{PREFIX}:{_memory_tag(user_id)}:memories"


def memory_order(user_id: str) -> str:
    """Sorted set: memory id scored by creation time (microseconds), to list and trim by age."""
    return f"{PREFIX}:{_memory_tag(user_id)}:memories:order"


# -- tool backends
USERS_MAX = 100_000
"""The user directory holds at most this many profiles; an import beyond it is refused."""
EVENT_RETENTION_S = 400 * 24 * 3600
"""An event (and its place in the indexes) is kept this long after it ends."""
EVENT_MIN_TTL_S = 24 * 3600
"""An event that ended long ago is still kept this long after it was written."""


def user_profiles() -> str:
    """Hash: user id -> JSON profile (the default user directory); bounded by ``USERS_MAX``."""
    return f"{PREFIX}:users:profiles"


def event(event_id: str) -> str:
    """JSON event; expires ``EVENT_RETENTION_S`` after the event ends."""
    return f"{PREFIX}:events:event:{event_id}"


def owner_events(owner_id: str) -> str:
    """Sorted set: event ids of an owner scored by start time; expires with its last event."""
    return f"{PREFIX}:events:owner:{owner_id}"


def invited_events(user_id: str) -> str:
    """Set: event ids a user is invited to; expires with its last event."""
    return f"{PREFIX}:events:invited:{user_id}"


REMINDER_LEASE_S = 60
"""A reminder a scanner claimed comes due again this long after, unless it was sent (or dropped)."""


def guest_reminders() -> str:
    """Sorted set of ``<event id>:<guest id>`` by when to remind the guest to give their availability.

    Written by the event store with every write to an event (a guest who answered, left or whose
    event was cancelled is removed); every worker's reminder scan claims due entries from it. Bounded:
    one entry per guest who still owes an answer, removed once reminded or past the deadline.
    """
    return f"{PREFIX}:events:reminders"


def _user_tag(user_id: str) -> str:
    return "{u:" + hashlib.sha256(user_id.encode()).hexdigest()[:20] + "}"


def user_channels(user_id: str) -> str:
    """Set of the channels where a person talked with the assistant (to erase their data on request)."""
    return f"{PREFIX}:{_user_tag(user_id)}:channels"


CLIENT_TOOLS_TTL_S = 30 * 24 * 3600
"""A device's declaration of tools is kept this long after that device last made it."""
CLIENT_TOOLS_DEVICES_MAX = 10
"""Devices whose declarations are kept per person; a new device's declaration drops the oldest."""


def client_tools(user_id: str) -> str:
    """Hash: device id (``""`` for an app that names none) -> that device's declaration of tools
    (``PUT /api/v1/agent/client-tools``) with when it was made."""
    return f"{PREFIX}:{_user_tag(user_id)}:device-tools"


CLIENT_FAILURES_TTL_S = 3600
"""A person's count of consecutive device failures per tool is forgotten an hour after the last one."""


def client_failures(user_id: str) -> str:
    """Hash: tool name -> how many times in a row the person's devices failed it (in any channel)."""
    return f"{PREFIX}:{_user_tag(user_id)}:client-failures"


USER_CALLS_MAX = 100
"""Open device calls listed per person (``GET /api/v1/agent/calls``); older ones drop off the list."""


def user_calls(user_id: str) -> str:
    """Sorted set of a person's pending call ids by when they were issued, with each call's
    conversation tag in the member (``<tag> <call id>``); settled ones are dropped when listed."""
    return f"{PREFIX}:{_user_tag(user_id)}:calls"


KB_PASSAGES_MAX = 50_000
"""Passages the knowledge base holds at most (each a few hundred characters): some 50 MB in Redis."""


# The knowledge base's keys share the hash tag {kb}: a write changes the documents and the version in
# one transaction, which a Redis Cluster runs only on keys of one slot.


def kb_documents() -> str:
    """Hash: document id -> the document (compressed JSON); see ``backends/knowledge/store.py``.

    No expiry: the knowledge base is the organisation's, kept until a sync or an index removes it.
    """
    return f"{PREFIX}:{{kb}}:documents"


def kb_version() -> str:
    """Moves with every write to the knowledge base: processes rebuild their index when it does."""
    return f"{PREFIX}:{{kb}}:version"


def kb_vectors() -> str:
    """Hash: a digest of an embedding model and a passage's text -> its vector (float32 bytes).

    No expiry; bounded by the documents: every write drops the vectors no stored passage has (at most
    ``KB_PASSAGES_MAX``, some 6 KB each at 1,536 dimensions). See ``backends/knowledge/vectors.py``.
    """
    return f"{PREFIX}:{{kb}}:vectors"


ADMIN_ROLE_TTL_S = 60
"""How long a chat turn's admission remembers whether the directory calls a person an admin."""


def admin_role(user_id: str) -> str:
    """``1`` or ``0``: whether the directory had the person as an admin a moment ago (rate limits)."""
    return f"{PREFIX}:{_user_tag(user_id)}:admin"


LEDGER_TURNS = 50
"""Turns whose tool calls the ledger keeps per conversation (the newest)."""
LEDGER_TTL_S = 7 * 24 * 3600
"""A conversation's ledger is dropped this long after its last turn."""


def ledger(tag: str) -> str:
    """Hash turn id -> the turn's ledger record (JSON); see :mod:`~truloop_assistant.store.ledger`."""
    return _conv(tag, "ledger")


def ledger_order(tag: str) -> str:
    """Sorted set of the ledger's turn ids by start time (to list newest first and to trim)."""
    return _conv(tag, "ledger:order")


DEAD_LETTERS_MAX = 20
"""Events given up after their retries that a conversation keeps, to show operators (the newest)."""


def dead_letters(tag: str) -> str:
    """List of a conversation's given-up events with their error and id, newest first (``inspect``,
    ``dead-letters``); bounded by ``DEAD_LETTERS_MAX``, dropped ``LEDGER_TTL_S`` after the last one."""
    return _conv(tag, "dead")


DEAD_LETTER_CONVERSATIONS_MAX = 1000
"""Conversations the index of dead letters names at most (those that gave an event up last)."""


def dead_letter_conversations() -> str:
    """Sorted set of the conversations that keep dead letters, by when they last gave one up (app-wide,
    for ``dead-letters list``). Each new dead letter trims it to ``DEAD_LETTER_CONVERSATIONS_MAX`` and
    drops entries older than ``LEDGER_TTL_S`` (their dead letters have expired); the set itself expires
    ``LEDGER_TTL_S`` after the last one. A conversation whose dead letters are all gone leaves it."""
    return f"{PREFIX}:dead-letters"


def last_failure(tag: str) -> str:
    """The conversation's last step that raised (JSON: when, which event, the error), for ``inspect``."""
    return _conv(tag, "failure")
