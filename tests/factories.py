"""The turn runner and the conversation drainer for tests, built on one Redis the way the server builds
them (keyless backends, the local channel), with any constructor argument replaced by a test's own.

``make_runner(redis, settings, inviter=recording)`` is the server's runner but for its inviter;
``make_drainer(redis, settings, runner=broken)`` drains with a runner of the test's. ``paused_turn``
is a turn paused on calendar calls, as the store keeps it.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any
from zoneinfo import ZoneInfo

from pydantic_ai.models import Model
from redis.asyncio import Redis

from truloop_assistant.agent.agents import (
    Agents,
    build_guest_agent,
    build_member_agent,
    build_notification_agent,
)
from truloop_assistant.agent.inviter import DirectInviter
from truloop_assistant.agent.models import resolve_model
from truloop_assistant.agent.notifier import Notifier
from truloop_assistant.agent.runner import TurnRunner
from truloop_assistant.agent.turn_limits import TurnLimits
from truloop_assistant.backends import Backends
from truloop_assistant.backends.events import RedisEventStore
from truloop_assistant.backends.knowledge import load_knowledge_base
from truloop_assistant.backends.knowledge.embedding import passage_embedder
from truloop_assistant.backends.knowledge.live import LiveKnowledgeBase
from truloop_assistant.backends.knowledge.store import KnowledgeStore
from truloop_assistant.backends.memory import RedisMemoryStore
from truloop_assistant.backends.users import RedisUserDirectory
from truloop_assistant.channels.local import LocalChannel
from truloop_assistant.channels.relay import LocalRelay
from truloop_assistant.config import Settings
from truloop_assistant.pipeline.conversations import ConversationDrainer
from truloop_assistant.pipeline.delivery import Deliverer
from truloop_assistant.pipeline.typing_indicator import Typing
from truloop_assistant.store.answers import ServerFailure
from truloop_assistant.store.device_declarations import ClientTools
from truloop_assistant.store.drains import Drains
from truloop_assistant.store.effects import Effects
from truloop_assistant.store.history import History
from truloop_assistant.store.inbox import Inbox
from truloop_assistant.store.ledger import Ledger
from truloop_assistant.store.outbox import Outbox
from truloop_assistant.store.records import CallRef, PausedTurn
from truloop_assistant.store.transcript import Transcript
from truloop_assistant.store.turns import TurnStore
from truloop_assistant.tools.agent_deps import utcnow
from truloop_assistant.tools.callbacks import ToolCallbacks


def keyless_backends(redis: Redis, settings: Settings) -> Backends:
    """The backends the server has with no outside service configured."""
    return Backends(
        users=RedisUserDirectory(redis),
        events=RedisEventStore(redis),
        knowledge=LiveKnowledgeBase(
            KnowledgeStore(redis, embedder=passage_embedder(settings.embedding_model)),
            fallback=partial(load_knowledge_base, settings.kb_dir),
        ),
        memory=RedisMemoryStore(redis),
        places=None,
    )


def make_runner(redis: Redis, settings: Settings, *, model: Model | None = None, **parts: Any) -> TurnRunner:
    """A turn runner on ``redis``; ``model`` replaces the configured one, ``parts`` any of
    :class:`TurnRunner`'s arguments."""
    zone = ZoneInfo(settings.timezone)
    chosen = model or resolve_model(settings.model, timezone=zone, fallbacks=settings.fallback_models)
    timeout = settings.tool_timeout_s
    history = History(redis, max_messages=settings.history_max_messages)
    transcript = Transcript(redis)
    channel = LocalChannel(redis, bot_user_id=settings.sendbird_bot_user_id)
    relay = LocalRelay(bot_user_id=settings.sendbird_bot_user_id)
    built: dict[str, Any] = {
        "agents": Agents(
            member=build_member_agent(chosen, tool_timeout_s=timeout),
            guest=build_guest_agent(chosen, tool_timeout_s=timeout),
        ),
        "store": TurnStore(redis, pending_ttl_s=settings.pending_call_ttl_s, history=history),
        "history": history,
        "transcript": transcript,
        "timezone": zone,
        "limits": TurnLimits.from_settings(settings),
        "backends": keyless_backends(redis, settings),
        "relay_writer": Notifier(
            agent=build_notification_agent(chosen, tool_timeout_s=timeout),
            relay=relay,
            channel=channel,
            timeout_s=settings.model_timeout_s,
            turn_request_limit=settings.max_model_requests,
            transcript=transcript,
        ),
        "inviter": DirectInviter(relay=relay, channel=channel, history=history, transcript=transcript),
        "effects": Effects(redis),
        "ledger": Ledger(redis),
        "client_tools": ClientTools(redis),
        "tool_descriptions": dict,
        "callbacks": ToolCallbacks(),
        "clock": utcnow,
    }
    return TurnRunner(**{**built, **parts})


def make_drainer(redis: Redis, settings: Settings, **parts: Any) -> ConversationDrainer:
    """A conversation drainer on ``redis`` over the local channel; ``parts`` replaces any of
    :class:`ConversationDrainer`'s arguments (``runner`` is :func:`make_runner`'s unless given)."""
    channel = LocalChannel(redis, bot_user_id=settings.sendbird_bot_user_id)
    ttl = settings.worker_heartbeat_s
    built: dict[str, Any] = {
        "inbox": Inbox(redis, owner_ttl_s=ttl),
        "drains": Drains(redis, owner_ttl_s=ttl),
        "deliverer": Deliverer(Outbox(redis, pending_ttl_s=settings.pending_call_ttl_s), channel),
        "typing": Typing(channel),
        "ledger": Ledger(redis),
        "heartbeat_s": settings.worker_heartbeat_s,
    }
    if "runner" not in parts:
        built["runner"] = make_runner(redis, settings)
    return ConversationDrainer(**{**built, **parts})


def paused_turn(calls: int, *, local: dict[str, ServerFailure] | None = None) -> PausedTurn:
    """Turn ``m1`` of jeff in ``ch-1``, paused on ``calls`` calendar calls (``call_0``…); ``local``:
    the calls the server failed itself."""
    refs = [
        CallRef(call_id=f"call_{i}", tool_call_id=f"t{i}", bucket="call", tool_name="get_calendar_events",
                method="calendar.getEvents")
        for i in range(calls)
    ]  # fmt: skip
    return PausedTurn(
        turn_id="m1",
        step=0,
        channel_url="ch-1",
        user_id="jeff",
        created_at=time.time(),
        prompt="this week?",
        messages="[]",
        requests="{}",
        calls=refs,
        local_answers=local or {},
    )
