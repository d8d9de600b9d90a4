"""The long-lived clients of a process, created once in the app's lifespan (or the worker's start)."""

from __future__ import annotations

from dataclasses import dataclass
from zoneinfo import ZoneInfo

from pydantic_ai.models import Model
from redis.asyncio import Redis

from .agent.agents import (
    Agents,
    MemberAgent,
    build_guest_agent,
    build_member_agent,
    build_notification_agent,
)
from .agent.models import resolve_model
from .agent.runner import TurnLimits, TurnRunner
from .auth import TokenVerifier
from .backends import Backends
from .backends.events import RedisEventStore
from .backends.knowledge import load_knowledge_base
from .backends.memory import memory_from_settings
from .backends.notify import Notifier
from .backends.places import places_from_settings
from .backends.users import HttpUserDirectory, RedisUserDirectory, UserDirectory
from .channels.base import Channel
from .channels.local import LocalChannel
from .channels.relay import LocalRelay, Relay, SendbirdRelay
from .channels.sendbird import SendbirdChannel
from .config import Settings
from .conversations import ConversationDrainer
from .expiry import run_expiry_scanner
from .intake import Intake
from .notices import Notices
from .queue import TurnQueue, make_queue
from .ratelimit import RateLimiter
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
    limiter: RateLimiter
    notices: Notices

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
            limiter=RateLimiter(settings),
            notices=Notices(redis, channel),
        )

    def runner(self, *, model: Model | None = None, agent: MemberAgent | None = None) -> TurnRunner:
        """The turn runner; ``model``/``agent`` replace the configured ones (tests, embedding)."""
        settings = self.settings
        zone = ZoneInfo(settings.timezone)
        chosen: Model | str = (
            model
            or (agent.model if agent is not None else None)
            or resolve_model(settings.model, timezone=zone)
        )
        timeout = settings.tool_timeout_s
        agents = Agents(
            member=agent or build_member_agent(chosen, tool_timeout_s=timeout),
            guest=build_guest_agent(chosen, tool_timeout_s=timeout),
        )
        return TurnRunner(
            agents=agents,
            store=self.store,
            channel=self.channel,
            timezone=zone,
            backends=self.backends(build_notification_agent(chosen, tool_timeout_s=timeout)),
            limits=TurnLimits(
                max_model_requests=settings.max_model_requests,
                model_timeout_s=settings.model_timeout_s,
                turn_timeout_s=settings.turn_timeout_s,
                max_calls_per_turn=settings.max_calls_per_turn,
                max_client_failures=settings.max_client_failures,
            ),
        )

    def backends(self, notification_agent: MemberAgent) -> Backends:
        """The tools' backends: defaults that need nothing but Redis, adapters where configured."""
        settings = self.settings
        users: UserDirectory
        if settings.users_api_url:
            users = HttpUserDirectory(
                settings.users_api_url, settings.users_api_token or "", timeout=settings.tool_timeout_s
            )
        else:
            users = RedisUserDirectory(self.redis)
        relay: Relay
        if settings.channel == "sendbird":
            assert settings.sendbird_api_token is not None
            relay = SendbirdRelay(
                api_url=settings.sendbird_base_url,
                api_token=settings.sendbird_api_token,
                bot_user_id=settings.sendbird_bot_user_id,
            )
        else:
            relay = LocalRelay(bot_user_id=settings.sendbird_bot_user_id)
        return Backends(
            users=users,
            events=RedisEventStore(self.redis),
            knowledge=load_knowledge_base(settings.kb_dir),
            memory=memory_from_settings(settings, self.redis),
            places=places_from_settings(settings),
            relay=relay,
            notifier=Notifier(agent=notification_agent, relay=relay, channel=self.channel),
        )

    def drainer(self, *, model: Model | None = None, agent: MemberAgent | None = None) -> ConversationDrainer:
        """What a worker runs: conversations drained one event at a time."""
        return ConversationDrainer(
            self.inbox, self.runner(model=model, agent=agent), heartbeat_s=self.settings.worker_heartbeat_s
        )

    async def expiry_scanner(self) -> None:
        """Resume turns whose device calls expired (runs in every worker)."""
        await run_expiry_scanner(self.store, self.intake)

    async def aclose(self) -> None:
        await self.notices.drain()
        await self.queue.queue.disconnect()
        await self.channel.aclose()
        await self.redis.aclose()
