"""How long each Redis key lives and how large it may grow (key names are in the modules beside)."""

__all__ = [
    "ADMIN_ROLE_TTL_S",
    "ADMISSIONS_MAX",
    "ADMISSIONS_TTL_S",
    "BURST_MAX_CHARS",
    "BURST_MAX_MESSAGES",
    "CLIENT_FAILURES_TTL_S",
    "CLIENT_TOOLS_DEVICES_MAX",
    "CLIENT_TOOLS_TTL_S",
    "DEAD_LETTERS_MAX",
    "DEAD_LETTER_CONVERSATIONS_MAX",
    "DIRECT_CHANNEL_TTL_S",
    "DONE_TURN_TTL_S",
    "EFFECTS_TTL_S",
    "EVENT_MAX_TTL_S",
    "EVENT_MIN_TTL_S",
    "EVENT_RETENTION_S",
    "EXPIRY_GRACE_S",
    "HISTORY_MAX_BYTES",
    "HISTORY_TTL_S",
    "INBOX_MAX",
    "INBOX_TTL_S",
    "INVITATIONS_WINDOW_S",
    "KB_PASSAGES_MAX",
    "LEDGER_TTL_S",
    "LEDGER_TURNS",
    "LOCAL_MESSAGES_MAX",
    "LOCAL_MESSAGES_TTL_S",
    "LOCAL_TYPING_TTL_S",
    "MEMBERS_TTL_S",
    "MEMORY_MAX",
    "MEMORY_TTL_S",
    "NOTICES_PER_WINDOW",
    "NOTICE_WINDOW_S",
    "OUTBOX_MAX",
    "PASSED_ON_LINE_MAX_AGE_S",
    "PASSED_ON_MAX",
    "PASSED_ON_TTL_S",
    "PENDING_DELIVERIES_MAX",
    "PENDING_DELIVERY_LEASE_S",
    "PENDING_DELIVERY_MAX_AGE_S",
    "PENDING_DELIVERY_RETRY_S",
    "PENDING_DELIVERY_TTL_S",
    "PHONE_GUEST_RETENTION_S",
    "RECENT_FILES",
    "RECENT_FILES_TTL_S",
    "REMINDER_LEASE_S",
    "RUNNING_GRACE_S",
    "SEEN_TTL_S",
    "SETTLED_TTL_S",
    "STANDING_APPROVALS_MAX",
    "STANDING_APPROVALS_TTL_S",
    "STOP_MARK_TTL_S",
    "STREAMED_TTL_S",
    "SUPERSEDED_TURN_TTL_S",
    "TOKENS_NOT_BEFORE_GRACE_S",
    "TRANSCRIPT_LINE_CHARS",
    "TRANSCRIPT_MAX",
    "USERS_MAX",
    "USER_CALLS_MAX",
    "USER_CHANNELS_TTL_S",
]

# -- a conversation's history, messages and events
HISTORY_TTL_S = 7 * 24 * 3600
"""A conversation's history is forgotten a week after its last turn."""
HISTORY_MAX_BYTES = 512 * 1024
"""A conversation's stored history is cut (oldest turns first) to stay under this size."""
TRANSCRIPT_MAX = 30
"""Visible messages of a channel kept for context (who said what), newest last."""
TRANSCRIPT_LINE_CHARS = 500
"""Each kept message is cut to this many characters: context, not a copy."""
MEMBERS_TTL_S = 60
"""How long a channel's member list from the Platform API is trusted."""
SEEN_TTL_S = 24 * 3600
"""Webhook de-duplication marks (a chat service re-sends within minutes)."""
INBOX_TTL_S = 24 * 3600
"""Events waiting for a conversation's worker; refreshed by every push."""
INBOX_MAX = 200
"""More waiting events than this in one conversation are refused (the sender is flooding)."""
BURST_MAX_MESSAGES = 20
"""At most this many messages of one person, waiting in a row, are one turn (the rest wait for the next)."""
BURST_MAX_CHARS = 8000
"""A turn gathers a person's waiting messages while their texts come to at most this many characters
together (the first message alone may be longer: it runs by itself)."""
OUTBOX_MAX = 200
"""More undelivered messages than this in one conversation are not kept (the oldest go first)."""
LOCAL_MESSAGES_TTL_S = 7 * 24 * 3600
LOCAL_MESSAGES_MAX = 500
LOCAL_TYPING_TTL_S = 60
"""The dev channel's typing mark outlives a worker that died mid-turn by at most this long."""

PASSED_ON_LINE_MAX_AGE_S = HISTORY_TTL_S
"""A line the assistant wrote on someone's behalf (a relayed message, an invitation) is quoted to the
model for at most this long, however long its channel's transcript lives on."""
PASSED_ON_TTL_S = PASSED_ON_LINE_MAX_AGE_S + 24 * 3600
"""A person's index of where things were passed on for them lives this long after the last: longer
than a line it names is quoted (``PASSED_ON_LINE_MAX_AGE_S``) and than a waiting delivery's queue
(``PENDING_DELIVERY_TTL_S``)."""
PASSED_ON_MAX = 2000
"""Places (channels, people's queues) one person's index keeps at most, the most recent ones."""

# -- paused turns and their device calls
SETTLED_TTL_S = 24 * 3600
"""Answered, expired and superseded call ids are remembered this long (200 duplicate / 409 / 410)."""
DONE_TURN_TTL_S = 3600
"""A finished turn's state (only that) stays this long so a re-delivered job sees it is done."""
SUPERSEDED_TURN_TTL_S = 300
"""A superseded turn's record is read once more, at once, by the run that answers the new message."""
EFFECTS_TTL_S = 24 * 3600
"""The recorded results of a turn's side effects outlive any re-run of its steps."""
STREAMED_TTL_S = 24 * 3600
"""The message ids a step's answer streamed into outlive any re-run of the step."""
RUNNING_GRACE_S = 60
"""The mark of a running step outlives the turn's time limit by this much (its worker may have died)."""
STOP_MARK_TTL_S = 60
"""A stop asked of a running step is seen by it within a second; the mark lingers no longer than this."""
EXPIRY_GRACE_S = 120
"""A pending call's key outlives its deadline by this much, so the expiry scanner settles it (410)."""
USER_CHANNELS_TTL_S = 8 * 24 * 3600
"""A person's list of channels (to erase their data there) lives this long after their last message
or turn: a day longer than a conversation nobody writes in keeps it (history, transcript, ledger,
dead letters: a week)."""
USER_CALLS_MAX = 100
"""Open device calls listed per person (``GET /api/v1/agent/calls``); older ones drop off the list."""
CLIENT_TOOLS_TTL_S = 30 * 24 * 3600
"""A device's declaration of tools is kept this long after that device last made it."""
CLIENT_TOOLS_DEVICES_MAX = 10
"""Devices whose declarations are kept per person; a new device's declaration drops the oldest."""
CLIENT_FAILURES_TTL_S = 3600
"""A person's count of consecutive device failures per tool is forgotten an hour after the last one."""
STANDING_APPROVALS_TTL_S = 30 * 24 * 3600
"""A standing approval ("always") lasts this long after it was given; then the person is asked again."""
STANDING_APPROVALS_MAX = 50
"""Standing approvals kept per person; a new one beyond them drops the oldest."""
NOTICE_WINDOW_S = 600
NOTICES_PER_WINDOW = 3
"""Notes from the server itself a person gets per ``NOTICE_WINDOW_S``, in all their channels: whatever
they send (too long, too fast, a file), telling them cannot cost the app's budget of messages."""
INVITATIONS_WINDOW_S = 3600
"""The window in which one organizer's invitations are counted (``tools.invitation_limits``)."""
TOKENS_NOT_BEFORE_GRACE_S = 24 * 3600
"""A revocation of a person's device tokens lives ``TRULOOP_JWT_MAX_TTL_S`` plus this: by then every
token issued before it for no longer than ``TRULOOP_JWT_MAX_TTL_S`` has expired."""
DIRECT_CHANNEL_TTL_S = 3600
"""A person's 1:1 channel with the bot is asked of the chat service again an hour after it was last found or
made: the invitations, reminders and messages of that hour cost no Platform API call for it, and a
channel deleted there (to stay under the bot's channel-join limit) is forgotten within the hour."""

# -- what operators look at
LEDGER_TURNS = 50
"""Turns whose tool calls the ledger keeps per conversation (the newest)."""
LEDGER_TTL_S = 7 * 24 * 3600
"""A conversation's ledger is dropped this long after its last turn."""
DEAD_LETTERS_MAX = 20
"""Events given up after their retries that a conversation keeps, to show operators (the newest)."""
ADMISSIONS_MAX = 50
"""Admission decisions (queued, duplicate, rate-limited...) a conversation keeps (the newest)."""
ADMISSIONS_TTL_S = 24 * 3600
"""A conversation's admission decisions are dropped this long after the last one."""
DEAD_LETTER_CONVERSATIONS_MAX = 1000
"""Conversations the index of dead letters names at most (those that gave an event up last)."""

# -- memory
MEMORY_TTL_S = 365 * 24 * 3600
"""A user's memories are forgotten a year after the last one was saved."""
MEMORY_MAX = 500
"""At most this many memories per user; saving another drops the oldest."""

# -- tool backends
USERS_MAX = 100_000
"""The user directory holds at most this many profiles; an import beyond it is refused."""
EVENT_RETENTION_S = 400 * 24 * 3600
"""An event (and its place in the indexes) is kept this long after it ends."""
PHONE_GUEST_RETENTION_S = 30 * 24 * 3600
"""A guest reached by phone (their number, dates and invitation language) is taken off an event this
long after it ends; the event itself stays for its organizer."""
EVENT_MIN_TTL_S = 24 * 3600
"""An event that ended long ago is still kept this long after it was written."""
EVENT_MAX_TTL_S = EVENT_RETENTION_S + (2 * 365 + 1 + 14) * 24 * 3600
"""No event is kept longer than this after it was written: one starting as far ahead as an event may
(two years) and lasting as long (14 days), then kept ``EVENT_RETENTION_S``; whatever an event says."""
REMINDER_LEASE_S = 60
"""A reminder a scanner claimed comes due again this long after, unless it was sent (or dropped)."""
PENDING_DELIVERY_LEASE_S = 60
"""A person whose waiting deliveries a scanner claimed comes due again this long after (its worker died)."""
PENDING_DELIVERY_RETRY_S = 10
"""A waiting delivery that met a 429, a 5xx or no answer again is tried again this long after."""
PENDING_DELIVERY_MAX_AGE_S = 3 * 24 * 3600
"""A delivery still refused this long after it was queued is given up (logged as an error)."""
PENDING_DELIVERY_TTL_S = PENDING_DELIVERY_MAX_AGE_S + 24 * 3600
"""A person's queue of waiting deliveries expires this long after the last one was queued."""
PENDING_DELIVERIES_MAX = 200
"""Deliveries waiting per person at most; beyond it the oldest is given up (logged as an error)."""
KB_PASSAGES_MAX = 50_000
"""Passages the knowledge base holds at most (each a few hundred characters): some 50 MB in Redis."""
ADMIN_ROLE_TTL_S = 60
"""How long a chat turn's admission remembers whether the directory calls a person an admin."""

RECENT_FILES_TTL_S = 10 * 60
"""How long a file sent in a group without a mention waits for the sender's next message that mentions
the assistant ("this one, @assistant"): a later mention is about something else."""
RECENT_FILES = 5
"""Files kept so at most, per person and group (the newest)."""
