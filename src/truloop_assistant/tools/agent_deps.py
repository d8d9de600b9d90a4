"""What every tool can see about the turn it runs in."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol
from zoneinfo import ZoneInfo

from pydantic_ai import RunUsage, ToolFailed
from pydantic_ai.tools import ToolDefinition

from ..i18n import Language
from ..protocol.declarations import Declaration
from ..protocol.methods import REMEMBERABLE
from ..protocol.standing_scope import covers
from ..store.ledger import ERROR_CHARS, LedgerCall, redact
from ..store.standing_approvals import Standing
from .marks import from_mcp

if TYPE_CHECKING:
    from ..backends import Backends
    from ..backends.events import Event
    from ..backends.users import UserProfile
    from ..store.effects import Effects
    from .callbacks import ToolCallbacks


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Relayed:
    """A relayed message as delivered."""

    text: str
    written: bool
    """False when the writer could not write it (time or budget ran out) and the request went as it was."""


def as_requested(sender_name: str, request: str) -> Relayed:
    """The message when nobody writes it up: the sender's request as they gave it."""
    return Relayed(text=f"{sender_name}: {request}", written=False)


class RelayWriter(Protocol):
    """Writes a message on a user's behalf and delivers it to another user (the relay tool's port).

    The two are apart so that the text the user approves is the text that is sent, unchanged.
    """

    async def write(
        self, *, sender_name: str, recipient: UserProfile, request: str, deps: AgentDeps, usage: RunUsage
    ) -> Relayed:
        """Write the message; its model requests count in ``usage`` (the turn's)."""
        ...

    async def send(self, *, sender_id: str, recipient: UserProfile, text: str, dedup_id: str) -> None:
        """Deliver ``text`` as it is to the recipient, once per ``dedup_id``."""
        ...


class Inviter(Protocol):
    """Tells people about an event in their 1:1 channel with the assistant (the event tools' port).

    Invitations go to guests (chat users outside the directory); cancellations to guests and invitees.
    """

    async def known_language(self, user_id: str) -> Language | None:
        """The language the person last wrote to the assistant in, when they ever did."""
        ...

    async def deliver(
        self, user_id: str, text: str, *, dedup_id: str, on_behalf_of: str | None = None
    ) -> None:
        """Post ``text`` in their channel with the assistant (created if missing), once per ``dedup_id``;
        ``on_behalf_of``: the person whose event it tells of (the organizer)."""
        ...

    async def deliver_or_queue(
        self, user_id: str, text: str, *, dedup_id: str, on_behalf_of: str | None = None
    ) -> bool:
        """:meth:`deliver` now (True), or keep it to be delivered later, in order, once (False): when
        something already waits for the person, or the channel is busy or failing. Raises a final refusal."""
        ...

    async def queue(self, user_id: str, text: str, *, dedup_id: str, on_behalf_of: str | None = None) -> bool:
        """Keep it to be delivered shortly, in order, once (False); True: delivered at once instead."""
        ...

    async def exists(self, user_id: str) -> bool:
        """Whether the person is a user of the messaging channel (a read; nothing is made)."""
        ...

    async def invited_lately(self, organizer: str) -> int:
        """People the organizer's events invited in the last hour or so."""
        ...

    async def note_invited(self, organizer: str, people: int) -> None:
        """The organizer's events invited ``people`` more."""
        ...


@dataclass(frozen=True)
class PhoneInvites:
    """How this server invites guests by phone number (set when it can text them)."""

    default_region: str
    """The country (ISO 3166 alpha-2) numbers are read in when the organizer's is not known."""
    link: Callable[[Event, str], Awaitable[str | None]] | None = None
    """(event, ``tel:`` person) -> the link to their guest page, put in their invitation; None: no
    guest pages here (the invitation asks for an answer by text message)."""
    unreachable: Callable[[list[str]], Awaitable[dict[str, str]]] | None = None
    """(``tel:`` people) -> those texts no longer reach, and why: opted out (STOP), or the last text
    failed (None: not known here)."""


@dataclass
class ToolRun:
    """One server tool call as it ran (kept by ``CallRecordToolset`` for the tool-call ledger)."""

    tool: str
    args: dict[str, Any]
    started_at: float
    ended_at: float | None = None
    outcome: str = "running"
    """``ok``, ``failed``, ``timeout``, ``error``, ``retry``, ``deferred`` or ``needs_approval``."""
    error: str | None = None
    result: Any = None
    """What the tool returned (the value the model is shown), once it succeeded."""
    standing: bool = False
    """It ran without asking: the person allows the tool for good."""

    def record(self, call_id: str) -> LedgerCall:
        """The call as the ledger keeps it: pending while it runs, then success or failed."""
        call = LedgerCall(
            call_id=call_id,
            tool=self.tool,
            kind="server",
            status="pending",
            args=redact(self.args),
            started_at=self.started_at,
            decision="standing" if self.standing else None,
        )
        if self.outcome == "running":
            return call
        if self.outcome == "ok":
            return call.ended("success", self.ended_at or time.time()).with_result(self.result)
        error = None if self.error is None else self.error[:ERROR_CHARS]
        return call.ended("failed", self.ended_at or time.time(), error=error)


@dataclass
class AgentDeps:
    user_id: str
    channel_url: str
    timezone: ZoneInfo
    turn_id: str = ""
    """The turn this run belongs to (the same across its steps)."""
    clock: Callable[[], datetime] = utcnow
    backends: Backends | None = None
    """Set by the server; without them, tools that need a backend fail clearly."""
    relay_writer: RelayWriter | None = None
    """Writes and delivers relayed messages (set by the server; without one, relaying fails clearly)."""
    inviter: Inviter | None = None
    """Delivers invitations and cancellations (set by the server; without one, inviting is not offered)."""
    phone_invites: PhoneInvites | None = None
    """Inviting guests by phone number (set by the server when it sends SMS; without it, a phone
    number is a clear tool error and guests are invited by chat user id only)."""
    effects: Effects | None = None
    """Where tools that change something record their results (set by the server; without it, they
    are not kept from running twice when a step runs again)."""
    declaration: Declaration | None = None
    """What the user's app declared: its own device tools, and the built-in methods it supports."""
    callbacks: ToolCallbacks | None = None
    """Integrators' tool callbacks (set by the server; without them, nobody is told)."""
    calls_run: set[str] = field(default_factory=set)
    """Ids of the tool calls that reached a tool in this run (the others were invalid)."""
    tool_runs: dict[str, ToolRun] = field(default_factory=dict)
    """Tool call id -> how the call ran, for the ledger."""
    standing: tuple[Standing, ...] = ()
    """The person's standing approvals ("always") that hold in this run: none in a channel of several
    people, nor in a run that quotes other people's words (the step leaves them out)."""
    devices: bool = True
    """Whether an app on the person's phone answers device requests in this conversation (not over
    SMS, nor on a guest page): without one no device tool is offered, nor any that asks first."""

    def allows_always(self, tool: ToolDefinition | str, args: Mapping[str, Any]) -> bool:
        """Whether this call runs without asking: it is one of the server's tools that may be allowed
        for good (``REMEMBERABLE``; never an MCP server's) and a standing approval covers it (the
        calls like the one the person saw: ``protocol.standing_scope.covers``)."""
        if isinstance(tool, ToolDefinition) and from_mcp(tool):
            return False
        name = tool.name if isinstance(tool, ToolDefinition) else tool
        return name in REMEMBERABLE and any(
            approval.tool == name and covers(approval.scope, name, args) for approval in self.standing
        )

    def note_standing(self, tool_call_id: str | None) -> None:
        """The call runs without asking, by a standing approval (the ledger says so)."""
        if tool_call_id is not None and (run := self.tool_runs.get(tool_call_id)) is not None:
            run.standing = True

    def require_backends(self) -> Backends:
        """The backends, or a failed tool result the model can explain when the server has none."""
        if self.backends is None:
            raise ToolFailed("this tool is not available here (no backends are configured)")
        return self.backends

    def now(self) -> datetime:
        """The current time in the user's zone."""
        return self.clock().astimezone(self.timezone)
