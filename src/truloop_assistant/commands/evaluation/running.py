"""Running the cases against the real member agent, on keyless backends in a throwaway Redis.

Server tools really run: a confirmed event is created, a forgotten memory is gone. So that what one
case changes is not what another finds, each case starts on a database of its own, emptied and seeded
alike: the sample directory, two events the user organizes tomorrow and one memory. A case's files
are read there as the server reads a person's (:mod:`.played_files`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime, time, timedelta
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import httpx
from redis.asyncio import Redis

from ...agent.agents import MemberAgent
from ...agent.context import turn_instructions
from ...backends import Backends
from ...backends.events import RedisEventStore
from ...backends.knowledge import KnowledgeBase, load_knowledge_base
from ...backends.memory import RedisMemoryStore
from ...backends.transcription import transcriber_for
from ...backends.users import SAMPLE_USERS_FILE, RedisUserDirectory, load_users_file
from ...config import Settings
from ...i18n import Language
from ...redis_client import connect
from ...tools.agent_deps import AgentDeps, Relayed
from .case_files import Request
from .cases import EvalDataset, EvalReport, Turn
from .phone import Phone
from .played_files import CHANNEL, CaseReading
from .played_turns import play_turn

EVAL_USER = "jeff"
"""The sample user the requests run as."""
SEED_EVENTS = (("팀 회의", time(10, 0)), ("Design review", time(15, 0)))
"""Events the user organizes tomorrow, for requests that change or invite to one."""
SEED_INVITATION = ("Quarterly planning", "mina", 5, time(14, 0), 3)
"""An event the user is invited to: title, organizer, in how many days, when, and the availability
deadline (in days, at 18:00), for requests about invitations and dates."""
SEED_MEMORY = "나는 창가 자리를 좋아해"
"""A memory the user has, for requests that look it up or forget it."""
CONCURRENCY = 4
"""Cases run at once (a real model's rate limit is the bound); each has one of as many databases."""


class Mailbox:
    """Where relayed messages and invitations go in the evaluation: taken as delivered, shown to nobody."""

    async def write(self, *, request: str, **kwargs: Any) -> Relayed:
        # The server has the notification agent write the message; here the request stands as
        # written, so a relay costs no model request and the figures measure the member agent alone.
        return Relayed(text=request, written=True)

    async def send(self, **kwargs: Any) -> None:
        return None

    async def known_language(self, user_id: str) -> Language | None:
        return None

    async def deliver(
        self, user_id: str, text: str, *, dedup_id: str, on_behalf_of: str | None = None
    ) -> None:
        return None

    async def deliver_or_queue(
        self, user_id: str, text: str, *, dedup_id: str, on_behalf_of: str | None = None
    ) -> bool:
        return True

    async def queue(self, user_id: str, text: str, *, dedup_id: str, on_behalf_of: str | None = None) -> bool:
        return True

    async def exists(self, user_id: str) -> bool:
        return True

    async def invited_lately(self, organizer: str) -> int:
        return 0

    async def note_invited(self, organizer: str, people: int) -> None:
        return None


async def eval_backends(
    redis: Redis, timezone: ZoneInfo, now: datetime, knowledge: KnowledgeBase
) -> Backends:
    """The keyless defaults on ``redis``, holding the sample directory, two events the user organizes,
    one they are invited to, and one memory."""
    users = RedisUserDirectory(redis)
    await users.import_users(load_users_file(SAMPLE_USERS_FILE))
    events = RedisEventStore(redis)
    tomorrow = now.astimezone(timezone).date() + timedelta(days=1)
    for title, at in SEED_EVENTS:
        start = datetime.combine(tomorrow, at, tzinfo=timezone)
        end = start + timedelta(hours=1)
        await events.create(EVAL_USER, title=title, start_time=start, end_time=end)
    title, organizer, days, at, deadline_days = SEED_INVITATION
    today = now.astimezone(timezone).date()
    start = datetime.combine(today + timedelta(days=days), at, tzinfo=timezone)
    deadline = datetime.combine(today + timedelta(days=deadline_days), time(18, 0), tzinfo=timezone)
    await events.create(
        organizer,
        title=title,
        start_time=start,
        end_time=start + timedelta(hours=1),
        invitee_user_ids=[EVAL_USER],
        availability_deadline=deadline,
    )
    memory = RedisMemoryStore(redis)
    await memory.save(EVAL_USER, SEED_MEMORY)
    return Backends(users=users, events=events, knowledge=knowledge, memory=memory, places=None)


def database_url(url: str, db: int) -> str:
    """``url`` with database ``db`` instead of its own."""
    return urlsplit(url)._replace(path=f"/{db}").geturl()


def agent_task(
    agent: MemberAgent,
    redis_url: str,
    settings: Settings,
    knowledge: KnowledgeBase,
    reading: CaseReading,
    decisions: Mapping[Request, Mapping[str, Any]] | None = None,
) -> Callable[[Request], Awaitable[Turn]]:
    """The evaluated task: a request read (``reading``) and played through to its answer, on a freshly
    seeded database (``decisions``: request -> how the phone answers its confirmation dialogs, when
    not a plain yes)."""
    timezone = ZoneInfo(settings.timezone)
    free = asyncio.Queue[int]()
    for db in range(CONCURRENCY):
        free.put_nowait(db)
    phone = Phone(
        EVAL_USER, timezone, max_calls=settings.max_calls_per_turn, max_failures=settings.max_client_failures
    )
    mailbox = Mailbox()

    async def turn(request: Request) -> Turn:
        reading.check(request)  # before a database is taken and seeded for it
        db = await free.get()
        redis = connect(database_url(redis_url, db))
        try:
            await redis.flushdb()
            backends = await eval_backends(redis, timezone, datetime.now(timezone), knowledge)
            user = await backends.users.get_profile(EVAL_USER)
            said = await reading.read(redis, request)

            def deps() -> AgentDeps:
                return AgentDeps(
                    user_id=EVAL_USER,
                    channel_url=CHANNEL,
                    timezone=timezone,
                    backends=backends,
                    relay_writer=mailbox,
                    inviter=mailbox,
                )

            return await play_turn(
                agent,
                said,
                deps=deps,
                phone=phone,
                instructions=turn_instructions(
                    timezone, EVAL_USER, now=datetime.now(timezone), name=user.name if user else None
                ),
                settings=settings,
                decision=(decisions or {}).get(request),
            )
        finally:
            await redis.aclose()
            free.put_nowait(db)

    return turn


async def evaluate(
    dataset: EvalDataset, agent: MemberAgent, redis_url: str, settings: Settings
) -> EvalReport:
    """Run every case of the dataset against the agent, each on its own database of that Redis; voice
    notes are heard with ``TRULOOP_TRANSCRIPTION_MODEL`` (unset: their cases are skipped)."""
    decisions = {
        case.inputs: case.metadata.phone
        for case in dataset.cases
        if case.metadata is not None and case.metadata.phone is not None
    }
    transcriber = transcriber_for(settings)
    async with httpx.AsyncClient(follow_redirects=False) as client:
        reading = CaseReading(
            agent, EVAL_USER, max_bytes=settings.max_file_bytes, transcriber=transcriber, client=client
        )
        task = agent_task(agent, redis_url, settings, load_knowledge_base(None), reading, decisions)
        try:
            return await dataset.evaluate(task, max_concurrency=CONCURRENCY)
        finally:
            if transcriber is not None:
                await transcriber.aclose()
