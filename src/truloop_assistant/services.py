"""The long-lived clients of a process, created once in the app's lifespan (or the worker's start).

``Services`` owns every client it creates and closes them all in :meth:`Services.aclose`.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from redis.asyncio import Redis

from .auth import TokenVerifier
from .backends.users import HttpUserDirectory, RedisUserDirectory
from .channels.base import StreamingChannel
from .channels.opening import open_channel
from .channels.routing import RoutingChannel, RoutingMembers, RoutingRelay
from .config import Settings
from .pipeline.admission import Admission
from .pipeline.intake import Intake
from .pipeline.notices import Notices
from .pipeline.queue import TurnQueue, make_queue
from .ratelimit import RateLimiter
from .redis_client import connect
from .store import keys
from .store.device_declarations import ClientTools
from .store.drains import Drains
from .store.effects import Effects
from .store.guest_links import link_for
from .store.history import History
from .store.inbox import Inbox
from .store.invitation_counts import InvitationCounts
from .store.ledger import Ledger
from .store.outbox import Outbox
from .store.pending_deliveries import PendingDeliveries
from .store.sms_numbers import SmsNumbers
from .store.streamed import StreamedMessages
from .store.token_revocations import TokenRevocations
from .store.transcript import Transcript
from .store.turns import TurnStore

if TYPE_CHECKING:
    from pydantic_ai import AbstractToolset
    from pydantic_ai.models import Model

    from .agent.agents import MemberAgent
    from .agent.inviter import DirectInviter
    from .agent.runner import TurnRunner
    from .agent.streaming import Streaming
    from .backends import Backends
    from .backends.events import Event
    from .pipeline.conversations import ConversationDrainer
    from .tools.agent_deps import AgentDeps, PhoneInvites
    from .tools.callbacks import ToolCallbacks
    from .tools.mcp import McpServerTools

# What only a worker uses (the agents, the model clients, the tools and their backends, the knowledge
# index) is imported where it is built, not above: the API process (`serve`) never loads it, and starts
# in a fraction of the time.


@dataclass
class Services:
    settings: Settings
    redis: Redis
    history: History
    store: TurnStore
    channel: RoutingChannel
    relay: RoutingRelay
    queue: TurnQueue
    inbox: Inbox
    drains: Drains
    outbox: Outbox
    transcript: Transcript
    ledger: Ledger
    members: RoutingMembers
    intake: Intake
    auth: TokenVerifier
    revocations: TokenRevocations
    limiter: RateLimiter
    notices: Notices
    client_tools: ClientTools
    _stack: AsyncExitStack = field(repr=False)

    @classmethod
    def create(cls, settings: Settings) -> Services:
        keys.use_prefix(settings.key_prefix)
        stack = AsyncExitStack()
        redis = connect(settings.redis_url, health_check_interval=30, socket_timeout=10)
        stack.push_async_callback(redis.aclose)
        opened = open_channel(settings, redis, stack)
        channel, relay, members = opened.channel, opened.relay, opened.members
        queue = TurnQueue(
            make_queue(settings.redis_url, settings.queue_name), heartbeat_s=settings.worker_heartbeat_s
        )
        stack.push_async_callback(queue.queue.disconnect)
        inbox = Inbox(redis, owner_ttl_s=settings.worker_heartbeat_s)
        drains = Drains(redis, owner_ttl_s=settings.worker_heartbeat_s)
        history = History(redis, max_messages=settings.history_max_messages)
        notices = Notices(redis, channel)
        stack.push_async_callback(notices.drain)  # closed first: notices still use the clients
        revocations = TokenRevocations(redis, max_token_ttl_s=settings.jwt_max_ttl_s)
        return cls(
            settings=settings,
            redis=redis,
            history=history,
            store=TurnStore(redis, pending_ttl_s=settings.pending_call_ttl_s, history=history),
            channel=channel,
            relay=relay,
            queue=queue,
            inbox=inbox,
            drains=drains,
            outbox=Outbox(redis, pending_ttl_s=settings.pending_call_ttl_s),
            transcript=Transcript(redis),
            ledger=Ledger(redis),
            members=members,
            intake=Intake(inbox, drains, queue),
            auth=TokenVerifier(settings, revocations=revocations),
            revocations=revocations,
            limiter=RateLimiter(settings, redis),
            notices=notices,
            client_tools=ClientTools(redis),
            _stack=stack,
        )

    @cached_property
    def backends(self) -> Backends:
        """The tools' backends: defaults that need nothing but Redis, adapters where configured."""
        from .backends import Backends
        from .backends.events import RedisEventStore
        from .backends.knowledge import load_knowledge_base
        from .backends.knowledge.embedding import passage_embedder
        from .backends.knowledge.live import LiveKnowledgeBase
        from .backends.knowledge.store import KnowledgeStore
        from .backends.memory import RedisMemoryStore, SupermemoryStore
        from .backends.places import GooglePlacesSearch

        settings, timeout = self.settings, self.settings.tool_timeout_s
        memory: SupermemoryStore | RedisMemoryStore = RedisMemoryStore(self.redis)
        if settings.supermemory_api_key:
            memory = SupermemoryStore(
                settings.supermemory_api_url,
                settings.supermemory_api_key,
                key_prefix=settings.key_prefix,
                legacy_tags=settings.supermemory_legacy_tags,
                timeout_s=timeout,
            )
            self._stack.push_async_callback(memory.aclose)
        places = None
        if settings.google_places_api_key:
            places = GooglePlacesSearch(
                settings.google_places_api_url, settings.google_places_api_key, timeout_s=timeout
            )
            self._stack.push_async_callback(places.aclose)
        return Backends(
            users=self.users,
            events=RedisEventStore(self.redis),
            knowledge=LiveKnowledgeBase(
                KnowledgeStore(self.redis, embedder=passage_embedder(settings.embedding_model)),
                fallback=partial(load_knowledge_base, settings.kb_dir),
            ),
            memory=memory,
            places=places,
        )

    @cached_property
    def callbacks(self) -> ToolCallbacks:
        """Integrators' tool callbacks (installed entry points), loaded once per process."""
        from .tools.callbacks import ToolCallbacks

        callbacks = ToolCallbacks.from_entry_points()
        self._stack.push_async_callback(callbacks.aclose)
        return callbacks

    @cached_property
    def mcp_servers(self) -> list[tuple[McpServerTools, AbstractToolset[AgentDeps]]]:
        """The MCP servers' toolsets (``TRULOOP_MCP_SERVERS``), one set per process (tool lists kept
        between turns); the MCP client (a second or more to import) is loaded only when configured."""
        if not self.settings.mcp_servers:
            return []
        from .tools import tool_names
        from .tools.mcp import mcp_toolsets

        return mcp_toolsets(self.settings.mcp_servers, reserved=tool_names())

    def runner(self, *, model: Model | None = None, agent: MemberAgent | None = None) -> TurnRunner:
        """The turn runner; ``model``/``agent`` replace the configured ones (tests, embedding)."""
        from .agent.agents import Agents, build_guest_agent, build_member_agent, build_notification_agent
        from .agent.file_setup import turn_files_for
        from .agent.models import chosen_model
        from .agent.notifier import Notifier
        from .agent.private_requests import PrivateRequests
        from .agent.runner import TurnRunner
        from .agent.turn_limits import TurnLimits
        from .tools.agent_deps import utcnow

        settings = self.settings
        zone = ZoneInfo(settings.timezone)
        chosen, models = chosen_model(settings, model or (agent.model if agent is not None else None))
        timeout = settings.tool_timeout_s
        servers = self.mcp_servers
        agents = Agents(
            member=agent
            or build_member_agent(
                chosen,
                tool_timeout_s=timeout,
                extra_toolsets=[offered for _, offered in servers],
                reserved_prefixes=[s.prefix for s in settings.mcp_servers],
            ),
            guest=build_guest_agent(chosen, tool_timeout_s=timeout),
        )
        notifier = Notifier(
            agent=build_notification_agent(chosen, tool_timeout_s=timeout),
            relay=self.relay,
            channel=self.channel,
            timeout_s=settings.model_timeout_s,
            turn_request_limit=settings.max_model_requests,
            transcript=self.transcript,
            models=models,
        )
        return TurnRunner(
            agents=agents,
            store=self.store,
            history=self.history,
            transcript=self.transcript,
            timezone=zone,
            limits=TurnLimits.from_settings(settings),
            backends=self.backends,
            relay_writer=notifier,
            inviter=self.inviter(),
            effects=Effects(self.redis),
            ledger=self.ledger,
            client_tools=self.client_tools,
            tool_descriptions=lambda: {k: v for tools, _ in servers for k, v in tools.descriptions.items()},
            callbacks=self.callbacks,
            clock=utcnow,
            streaming=self.streaming(),
            capabilities=self.channel.capabilities,
            phone_invites=self.phone_invites(),
            files=turn_files_for(settings, self.redis, self._stack, agents.member.model or chosen),
            models=models,
            private=PrivateRequests(
                members=self.members,
                relay=self.relay,
                users=self.backends.users,
                bot_user_id=settings.sendbird_bot_user_id,
            ),
        )

    def phone_invites(self) -> PhoneInvites | None:
        """How guests are invited by number: SMS with a guest page link (None: ``TRULOOP_SMS=off``)."""
        from .tools.agent_deps import PhoneInvites

        settings, redis = self.settings, self.redis
        if settings.sms == "off":
            return None

        async def link(event: Event, person: str) -> str:
            return await link_for(redis, settings.public_base, event, person)

        return PhoneInvites(
            default_region=settings.default_region, link=link, unreachable=SmsNumbers(redis).unreachable
        )

    def streaming(self) -> Streaming | None:
        """How answers stream into the channel (``TRULOOP_STREAM``); None: each is sent whole."""
        if not self.settings.stream or not isinstance(self.channel, StreamingChannel):
            return None
        from .agent.streaming import Streaming

        return Streaming(
            channel=self.channel,
            messages=StreamedMessages(self.redis),
            update_s=self.settings.stream_update_s,
            max_chars=self.settings.sendbird_max_message_chars,
        )

    def drainer(self, *, model: Model | None = None, agent: MemberAgent | None = None) -> ConversationDrainer:
        """What a worker runs: conversations drained one event at a time."""
        from .pipeline.conversations import ConversationDrainer
        from .pipeline.delivery import Deliverer
        from .pipeline.typing_indicator import Typing

        return ConversationDrainer(
            inbox=self.inbox,
            drains=self.drains,
            runner=self.runner(model=model, agent=agent),
            deliverer=Deliverer(
                self.outbox,
                self.channel,
                max_message_chars=self.settings.sendbird_max_message_chars,
                failures=self.ledger,
                streamed=StreamedMessages(self.redis),
            ),
            typing=Typing(self.channel),
            ledger=self.ledger,
            heartbeat_s=self.settings.worker_heartbeat_s,
            audience=partial(self.admission.late, patience_s=self.settings.sendbird_lookup_patience_s),
            streamed=StreamedMessages(self.redis),
        )

    @cached_property
    def users(self) -> HttpUserDirectory | RedisUserDirectory:
        """The user directory: the app's user API where configured, else the one in this Redis. Built on
        its own, so that admission (the API's one use of it) builds none of the tools' other backends."""
        settings = self.settings
        if not settings.users_api_url:
            return RedisUserDirectory(self.redis)
        users = HttpUserDirectory(
            settings.users_api_url, settings.users_api_token or "", timeout=settings.tool_timeout_s
        )
        self._stack.push_async_callback(users.aclose)
        return users

    @cached_property
    def admission(self) -> Admission:
        """The rules a chat message passes before its turn is queued (webhook and local channel)."""
        return Admission(
            redis=self.redis,
            intake=self.intake,
            members=self.members,
            transcript=self.transcript,
            notices=self.notices,
            limiter=self.limiter,
            users=self.users,
            bot_user_id=self.settings.sendbird_bot_user_id,
            max_message_chars=self.settings.max_message_chars,
        )

    def inviter(self) -> DirectInviter:
        """Sends invitations and reminders to people in their 1:1 channels with the assistant."""
        from .agent.inviter import DirectInviter

        return DirectInviter(
            relay=self.relay,
            channel=self.channel,
            history=self.history,
            transcript=self.transcript,
            pending=PendingDeliveries(self.redis),
            counts=InvitationCounts(self.redis),
        )

    async def aclose(self) -> None:
        """Close every client this process created (notices still being sent finish first)."""
        await self._stack.aclose()
