"""What the server keeps of a paused turn: its calls, the views of a call id, and a snapshot."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..protocol.files import MessageFile
from .answers import ServerFailure, StoredAnswer

CallState = Literal["pending", "answered", "expired", "superseded", "cancelled"]
"""``cancelled``: a device answered -32601 (it cannot do that) and no other device answered in time."""
SettledState = Literal["answered", "expired", "superseded", "cancelled"]
PauseState = Literal["paused", "resuming", "superseded", "done"]
Outcome = Literal["accepted", "resume", "duplicate", "conflict", "gone", "unknown"]
Membership = Literal["member", "guest"]


class CallRef(BaseModel):
    """One deferred call of a paused turn, as the server issued it."""

    call_id: str
    tool_call_id: str
    bucket: Literal["call", "approval"]
    tool_name: str
    method: str
    result_schema: str | None = None
    """For an app-declared tool with a result schema: that schema (JSON) as it was when the call went out."""


class PausedTurn(BaseModel):
    """A run that waits for the device: everything needed to resume it."""

    turn_id: str
    step: int
    channel_url: str
    user_id: str
    created_at: float
    prompt: str
    """The user message that started the turn (several messages in a row, one per line)."""
    message_ids: list[str] = []
    """The ids of the messages the turn answers, in order (empty in records kept before turns
    gathered messages: the turn's own message only)."""
    files: list[MessageFile] = []
    """The pictures, documents and voice notes of its messages: a resume reads the pictures and
    documents again (the record keeps none of their bytes)."""
    name: str | None = None
    """The name the chat showed for the person when the turn began (None: it did not say)."""
    agent: Membership = "member"
    """Which agent runs the turn."""
    added: str = ""
    """The run's messages after its first ``history_len``, as pydantic-ai JSON."""
    history_len: int = 0
    """How many of the run's first messages are the person's stored history, which is not repeated
    here: a resume reads it again (it changes only when one of their turns in the channel ends, and
    this one is their only turn there until it does)."""
    messages: str = ""
    """All the run's messages, in records of releases that kept a copy of the history. (A record has
    ``added`` instead: a release that knows only this field refuses it, and the step is retried,
    rather than resuming without the history and writing that back as the history.)"""
    requests: str
    """The run's ``DeferredToolRequests`` as JSON; results are built only from this."""
    calls: list[CallRef]
    model_requests: int = 0
    """Model requests the turn has made so far, over all its steps (its budget is per turn)."""
    input_tokens: int = 0
    output_tokens: int = 0
    local_answers: dict[str, ServerFailure] = {}
    """Calls the server failed itself instead of sending them: call id -> failure."""

    @property
    def rest(self) -> str:
        """The run's messages after its first ``history_len`` (all of them in earlier records)."""
        return self.added or self.messages or "[]"

    @property
    def sent_calls(self) -> list[CallRef]:
        """The calls that went to the device (every call the server did not answer itself)."""
        return [c for c in self.calls if c.call_id not in self.local_answers]


class Asked(BaseModel):
    """A request's ``params`` and the text shown with it."""

    model_config = ConfigDict(frozen=True)

    params: dict[str, Any] = {}
    message: str = ""
    channel_url: str = ""
    """Where it was posted, when not in the conversation's channel (empty: there)."""


class CallView(BaseModel):
    """What the tool-message endpoint knows about a call id."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    call_id: str
    tag: str
    state: CallState
    user_id: str = ""
    turn_id: str = ""
    channel_url: str = ""
    tool_name: str = ""
    method: str = ""
    bucket: Literal["call", "approval"] = "call"
    fingerprint: str = Field(default="", validation_alias="fp")
    result_schema: str | None = Field(default=None, validation_alias="schema")
    """What an app-declared tool's result must fit (pending calls only)."""
    request: Asked = Asked()
    """What the request asked (kept apart from the call's record)."""
    created_at: float = 0.0
    expires_at: float = 0.0
    settled_at: float | None = None
    unhandled: str = Field(default="", validation_alias="nf")
    """Fingerprint of a -32601 answer a device gave while the call waits for another device."""


class TurnSnapshot(BaseModel):
    state: PauseState
    turn: PausedTurn
    answers: dict[str, StoredAnswer]
    """call id -> the answer the server stored for it."""
