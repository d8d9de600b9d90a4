"""Erasing a person's data on their request: memories, their history with the assistant, pending calls,
the device tools their app declared, and what the conversations they wrote in keep of them.

The conversations are those on the person's list of channels (``keys.user_channels``: every channel
where they wrote, to the assistant or to others in its group channels, within
``USER_CHANNELS_TTL_S``), so no scan of the keyspace is needed; each conversation's keys share one
hash tag, and each is changed by its own commands (Redis Cluster safe). What is "of the person" in a
conversation others share:

- the transcript: their lines and the assistant's answers to them go; other people's lines stay;
- the ledger: the turns they started go (with what those turns looked up, others' contact details
  included); other people's turns stay, even where they name the person;
- the inbox: their queued messages, and resumes of their turns, go;
- the outbox: what their turns were to send (answers, requests to a phone) and any request to their
  phone go; the updates that close settled requests stay (no content: they close the dialogs);
- admission decisions: those on their messages go;
- dead letters: their given-up messages and resumes of their turns go (and the conversation's last
  failure when it was one of those); a replay started meanwhile skips them (``keys.erased``);
- their turns keep only their state (no paused run, answers or recorded effects), their history goes
  (with the lines naming the pictures and files they sent), and so do the files they sent in a group
  for their next mention of the assistant.

What the assistant passed on for the person in other people's 1:1 channels with it (a message it
relayed for them, an invitation to their event, a change or a reminder of it) goes too: the places
are on the person's index (``keys.passed_on``), each changed by its own commands: the lines written on
their behalf leave those channels' transcripts (so the recipients' model is no longer quoted them),
and the deliveries still waiting on their behalf leave the recipients' queues. The recipients' own
histories never held those words (the model is quoted them afresh for each request, from the
transcript), and what the recipients wrote back stays theirs.

Their guest pages' links stop working, and the pages' chats go.

Their device tokens issued until then are revoked (``store.token_revocations``): the app signs in
again for a new one.

Kept: events other people organize (the person stays on their invitee lists until the organizer
changes them), the directory's profile of the person (the organisation's), the ids of settled calls
(with whose they were, no content, gone after 24 h) so late answers still get their 410, the marks
that a message id was seen (no content, gone after 24 h; they keep a re-delivery from running an
erased message), and rate-limit counters (gone with their window).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import cast

from redis.asyncio import Redis

from ..backends.memory import MemoryStore
from ..channels.page import PageChannel
from ..pipeline.intake import Intake
from ..protocol.addresses import page_channel
from ..store import admissions, keys
from ..store.guest_links import GuestLinks
from ..store.inbox import Inbox
from ..store.ledger import Ledger
from ..store.outbox import Outbox
from ..store.passed_on import passed_on_places
from ..store.pending_deliveries import PendingDeliveries
from ..store.token_revocations import TokenRevocations
from ..store.transcript import Transcript
from ..store.turns import TurnStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Erased:
    memories: int
    channels: int
    calls_cut: int


@dataclass(frozen=True)
class Conversations:
    """The stores of conversations that keep something of a person."""

    store: TurnStore
    transcript: Transcript
    ledger: Ledger
    inbox: Inbox
    outbox: Outbox


async def erase_user(
    user_id: str,
    *,
    redis: Redis,
    conversations: Conversations,
    memory: MemoryStore,
    intake: Intake,
    revocations: TokenRevocations,
) -> Erased:
    """Erase what the server keeps of ``user_id`` and revoke their device tokens; safe to repeat."""
    now = time.time()
    # First, so that a dead-letter replay that started before sees it and leaves their messages alone,
    # and no token of theirs adds anything while the rest goes.
    await redis.set(keys.erased(user_id), repr(now), ex=keys.LEDGER_TTL_S)
    await revocations.revoke(user_id, at=now)
    memories = await memory.forget_all(user_id)
    raw = cast(set[bytes], await redis.smembers(keys.user_channels(user_id)))
    channels = sorted(c.decode() for c in raw)
    cut = 0
    for channel_url in channels:
        cut += await _erase_in(channel_url, user_id, redis=redis, stores=conversations, intake=intake)
    passed_on = await _take_back(user_id, redis=redis, transcript=conversations.transcript)
    # Their guest pages: the links stop working, and the page's chat goes with the rest.
    await GuestLinks(redis).forget_person(user_id)
    await PageChannel(redis).forget(page_channel(user_id))
    # What their requests asked (a dialog's text, say) goes too; the settled ids stay, without it.
    listed = cast(list[bytes], await redis.zrange(keys.user_calls(user_id), 0, -1))
    for tag, call_id in (m.decode().split(" ", 1) for m in listed):
        await redis.delete(keys.call_request(tag, call_id))
    await redis.delete(
        keys.user_channels(user_id),
        keys.client_tools(user_id),
        keys.user_calls(user_id),
        keys.client_failures(user_id),
        keys.standing_approvals(user_id),
        keys.admin_role(user_id),
        keys.direct_channel(user_id),
        keys.passed_on(user_id),
    )
    log.info(
        "erased %s: %d memories, %d channels, %d pending calls, %d lines or deliveries passed on for them",
        user_id,
        memories,
        len(channels),
        cut,
        passed_on,
    )
    return Erased(memories=memories, channels=len(channels), calls_cut=cut)


async def _erase_in(
    channel_url: str, user_id: str, *, redis: Redis, stores: Conversations, intake: Intake
) -> int:
    """Erase the person's data in one conversation (see the module's docstring); the calls cut short."""
    tag = keys.conversation_tag(channel_url)
    cut = 0
    turn_ids = await stores.ledger.forget_turns_of(channel_url, user_id)
    if (active := await stores.store.active_turn(channel_url, user_id)) is not None:
        turn_ids.append(active)
        snapshot = await stores.store.load_turn(channel_url, active)
        if snapshot is not None and await stores.store.supersede(snapshot.turn):
            cut += len(snapshot.turn.sent_calls)
            await intake.deliver(channel_url)  # the requests' messages say they ended
    await stores.inbox.forget_user(channel_url, user_id, turn_ids)
    await stores.outbox.forget_user(channel_url, user_id, turn_ids)
    await stores.ledger.forget_dead_letters_of(channel_url, user_id, turn_ids)
    await stores.store.forget_turns(channel_url, turn_ids)
    await redis.delete(
        keys.history(tag, user_id),
        keys.active_turn(tag, user_id),
        keys.recent_files(tag, user_id),
        keys.members(tag),  # a cache of the channel's members (the person among them), read again
    )
    await stores.transcript.forget_user(channel_url, user_id)
    await admissions.forget_user(redis, channel_url, user_id)
    return cut


async def _take_back(user_id: str, *, redis: Redis, transcript: Transcript) -> int:
    """Remove what was passed on for the person elsewhere (see the module's docstring), place by place;
    how many lines and deliveries went."""
    deliveries = PendingDeliveries(redis)
    gone = 0
    for place in await passed_on_places(redis, user_id):
        if place.kind == "line":
            gone += await transcript.forget_user(place.target, user_id)
        else:
            gone += await deliveries.forget_for(place.target, user_id)
    return gone
