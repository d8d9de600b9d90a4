"""The tool-call ledger's records: every call of a turn, with its status, timings, error and result.

Arguments and results are kept in their JSON form, secrets redacted and long values cut, so a record
stays small: a result up to ``RESULT_BYTES``, a turn's results up to ``TURN_RESULT_BYTES``
(``result_cut`` says when one was cut).
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic_core import PydanticSerializationError

CallKind = Literal["server", "device", "approval"]
CallStatus = Literal["pending", "success", "failed", "denied", "expired", "superseded"]
Decision = Literal["approved", "edited", "refused", "standing"]
"""How the person decided a call that waits for their yes: yes, yes with changes, no, or yes for good
before (a standing approval: no dialog)."""
TurnState = Literal["running", "paused", "answered", "failed", "limited", "superseded", "stopped"]
Flag = Literal["invalid", "no_result", "answered_while_pending"]

ARG_CHARS = 300
"""A string argument (or a string in a result) is kept up to this many characters."""
LIST_ITEMS = 50
"""A list in arguments or a result is kept up to this many items."""
ERROR_CHARS = 500
"""An error is kept up to this many characters."""
RESULT_BYTES = 2048
"""A result is kept up to this many bytes of JSON (UTF-8) in all; beyond, its JSON text is cut."""
TURN_RESULT_BYTES = 16 * 1024
"""A turn's results are kept up to this many bytes in all; the later calls of a busier turn keep none."""
_SECRET = re.compile(r"token|secret|password|passwd|api[_-]?key|authorization|credential|cookie", re.I)
REDACTED = "[redacted]"


class LedgerCall(BaseModel):
    call_id: str
    """The JSON-RPC id for device and approval calls (what the phone saw); the model's id otherwise."""
    tool: str
    kind: CallKind
    status: CallStatus
    args: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    started_at: float | None = None
    ended_at: float | None = None
    duration_ms: float | None = None
    decision: Decision | None = None
    """For an approval: how the person decided (its ``result`` keeps what they changed or their reason);
    for a server tool that ran without asking: ``standing``."""
    flag: Flag | None = None
    """Set by the verifier: an invalid call, a call without a result, an answer given while it was pending."""
    result: Any = None
    """What the call gave back, in JSON form: a server tool's return value, a device's ``result``, an
    approval's ``{"confirmed": ...}``; secrets redacted and long text cut as in ``args``."""
    result_cut: bool = False
    """The result was cut to fit (or, past the turn's bound, left out)."""

    def ended(self, status: CallStatus, at: float, *, error: str | None = None) -> LedgerCall:
        started = self.started_at if self.started_at is not None else at
        return self.model_copy(
            update={
                "status": status,
                "error": error if error is not None else self.error,
                "ended_at": at,
                "duration_ms": round((at - started) * 1000, 1),
            }
        )

    def with_result(self, value: Any) -> LedgerCall:
        """The call with ``value`` as its result, as the ledger keeps it (see :func:`kept_result`)."""
        result, cut = kept_result(value)
        return self.model_copy(update={"result": result, "result_cut": cut})


class LedgerTurn(BaseModel):
    turn_id: str
    user_id: str
    state: TurnState
    started_at: float
    ended_at: float | None = None
    model_requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    model: str | None = None
    """The model that answered the turn's latest model request, by its configured name (the primary's
    ``TRULOOP_MODEL`` or one of ``TRULOOP_FALLBACK_MODELS``); None while none has answered."""
    fallback_requests: int = 0
    """How many of the turn's model requests a fallback model answered (the primary failed)."""
    calls: list[LedgerCall] = Field(default_factory=list)
    message_ids: list[str] = Field(default_factory=list)
    """The ids of the messages the turn answers, in order: several when a person wrote several in a
    row (empty for records kept before turns noted them)."""

    def with_calls(self, calls: list[LedgerCall]) -> LedgerTurn:
        """The record with ``calls`` added, or replacing the entries with the same ``call_id``."""
        merged = {c.call_id: c for c in self.calls}
        for call in calls:
            merged[call.call_id] = call
        return self.model_copy(update={"calls": list(merged.values())})

    def call(self, call_id: str) -> LedgerCall | None:
        return next((c for c in self.calls if c.call_id == call_id), None)

    def bounded(self) -> LedgerTurn:
        """The record with its results within ``TURN_RESULT_BYTES``: the first calls keep theirs, and
        from the first that does not fit on, none do (a result left out stays out when a later step
        writes the record again)."""
        left = TURN_RESULT_BYTES
        calls = []
        for call in self.calls:
            if call.result is None and call.result_cut:
                left = -1  # left out when the record was written before
            elif call.result is not None:
                left -= _size(call.result)
                if left < 0:
                    call = call.model_copy(update={"result": None, "result_cut": True})
            calls.append(call)
        return self.model_copy(update={"calls": calls})


def redact(args: dict[str, Any]) -> dict[str, Any]:
    """Arguments as the ledger keeps them: secrets replaced, long text cut."""
    redactor = _Redactor()
    return {k: redactor(k, v) for k, v in args.items()}


def kept_result(value: Any) -> tuple[Any, bool]:
    """A result as the ledger keeps it, and whether it was cut: its JSON form, redacted as arguments
    are (secrets by name, long strings and lists cut), then its JSON text cut to ``RESULT_BYTES``."""
    redactor = _Redactor()
    kept = redactor("", _json_form(value))
    if _size(kept) <= RESULT_BYTES:
        return kept, redactor.cut
    text = json.dumps(kept, ensure_ascii=False).encode()[: RESULT_BYTES - len("…".encode())]
    return text.decode(errors="ignore") + "…", True


class _Redactor:
    """Replaces secrets (by their key's name) and cuts long text and lists; remembers whether it cut."""

    def __init__(self) -> None:
        self.cut = False

    def __call__(self, name: str, value: Any) -> Any:
        if _SECRET.search(name):
            return REDACTED
        if isinstance(value, str):
            if len(value) <= ARG_CHARS:
                return value
            self.cut = True
            return value[:ARG_CHARS] + "…"
        if isinstance(value, dict):
            return {str(k): self(str(k), v) for k, v in value.items()}
        if isinstance(value, list):
            self.cut = self.cut or len(value) > LIST_ITEMS
            return [self(name, v) for v in value[:LIST_ITEMS]]
        return value


# Any value a tool may return, in the JSON form the model is sent (bytes as base64, as pydantic-ai does).
_ANY = TypeAdapter(Any, config=ConfigDict(ser_json_bytes="base64"))


def _json_form(value: Any) -> Any:
    try:
        return _ANY.dump_python(value, mode="json")
    except (PydanticSerializationError, ValueError):
        return str(value)  # a value pydantic cannot serialize: its text says what it was


def _size(value: Any) -> int:
    """Bytes of ``value`` as JSON (UTF-8), as Redis keeps it."""
    return len(json.dumps(value, ensure_ascii=False).encode())
