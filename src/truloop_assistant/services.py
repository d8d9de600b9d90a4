"""The long-lived clients of a process, created once in the app's lifespan (or the worker's start)."""

from __future__ import annotations

from dataclasses import dataclass
from zoneinfo import ZoneInfo

from pydantic_ai.models import Model
from redis.asyncio import Redis

from .agent.agents import MemberAgent, build_member_agent
from .agent.models import resolve_model
from .agent.runner import TurnRunner
from .auth import TokenVerifier
from .channels.base import Channel
from .channels.local import LocalChannel
from .channels.sendbird import SendbirdChannel
from .config import Settings
from .conversations import ConversationDrainer
from .intake import Intake
from .queue import TurnQueue, make_queue
from .store.inbox import Inbox
from .store.turns import TurnStore


@dataclass
class Services:
    settings: Settings
    redis: Redis
    store: TurnStore
    channel: Channel
    queue: TurnQueue
    inbox: Inbox
    intake: Intake
    auth: TokenVerifier

    @classmethod
    def create(cls, settings: Settings) -> Services:
        redis = Redis.from_url(settings.redis_url, health_check_interval=30, socket_timeout=10)
        channel: Channel
        if settings.channel == "local":
            channel = LocalChannel(redis, bot_user_id=settings.sendbird_bot_user_id)
        else:
            assert settings.sendbird_api_token is not None
            channel = SendbirdChannel(
                api_url=settings.sendbird_base_url,
                api_token=settings.sendbird_api_token,
                bot_user_id=settings.sendbird_bot_user_id,
            )
        queue = TurnQueue(
            make_queue(settings.redis_url, settings.queue_name), heartbeat_s=settings.worker_heartbeat_s
        )
        inbox = Inbox(redis, owner_ttl_s=settings.worker_heartbeat_s)
        return cls(
            settings=settings,
            redis=redis,
            store=TurnStore(
                redis,
                pending_ttl_s=settings.pending_call_ttl_s,
                history_max_messages=settings.history_max_messages,
            ),
            channel=channel,
            queue=queue,
            inbox=inbox,
            intake=Intake(inbox, queue),
            auth=TokenVerifier(settings),
        )

    def runner(self, *, model: Model | None = None, agent: MemberAgent | None = None) -> TurnRunner:
        """The turn runner; ``model``/``agent`` replace the configured ones (tests, embedding)."""
        zone = ZoneInfo(self.settings.timezone)
        return TurnRunner(
            agent=agent or build_member_agent(model or resolve_model(self.settings.model, timezone=zone)),
            store=self.store,
            channel=self.channel,
            timezone=zone,
            max_model_requests=self.settings.max_model_requests,
        )

    def drainer(self, *, model: Model | None = None, agent: MemberAgent | None = None) -> ConversationDrainer:
        """What a worker runs: conversations drained one event at a time."""
        return ConversationDrainer(
            self.inbox, self.runner(model=model, agent=agent), heartbeat_s=self.settings.worker_heartbeat_s
        )

    async def aclose(self) -> None:
        await self.queue.queue.disconnect()
        await self.channel.aclose()
        await self.redis.aclose()
