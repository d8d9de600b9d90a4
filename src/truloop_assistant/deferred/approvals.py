"""The confirmation gate: a destructive tool call becomes an ``interaction.confirm`` dialog.

The dialog says exactly what will happen — who, what, when — in the user's language. The answer
is bound to that one call: the server keeps the call and its arguments, and the device can only
say yes or no to it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from ..i18n import Language, texts
from ..i18n.dates import short_day
from ..protocol.methods import ConfirmParams

if TYPE_CHECKING:
    from pydantic_ai.messages import ToolCallPart  # the worker's: not on serve's import path

    from ..backends import Backends
    from ..backends.events import Event

log = logging.getLogger(__name__)

CONFIRM_METHOD = "interaction.confirm"
DESCRIPTION_CHARS = 300
"""A tool's own description is shown in its dialog up to this long."""


@dataclass(frozen=True)
class ApprovalContext:
    language: Language
    """The language of the user's message."""
    timezone: ZoneInfo
    backends: Backends | None = None
    user_id: str = ""
    descriptions: Mapping[str, str] = field(default_factory=dict)
    """Tool name -> description, for tools the server did not define (MCP servers', apps' declared ones)."""


Describer = Callable[[dict[str, Any], ApprovalContext], Awaitable[ConfirmParams]]
"""Says what a call will do: the dialog's title and message (the buttons are added after)."""


async def describe_approval(
    call: ToolCallPart, ctx: ApprovalContext, prepared: Mapping[str, Any] | None = None
) -> ConfirmParams:
    """The ``interaction.confirm`` params that ask the user to allow this exact call.

    ``prepared``: what a tool that asks itself made ready before asking (its approval's metadata),
    e.g. the relayed message as it will be sent.
    """
    describer = _DESCRIBERS.get(call.tool_name)
    if call.tool_name == "send_message_to_user":
        describer = partial(_relay, prepared=prepared or {})
    args = call.args_as_dict()
    try:
        dialog = await (describer(args, ctx) if describer else _generic(args, ctx, call.tool_name))
    except Exception:  # a lookup failed: still ask, with the plain arguments
        log.exception("could not describe %s for confirmation", call.tool_name)
        dialog = await _generic(args, ctx, call.tool_name)
    labels = {
        "confirmLabel": texts.CONFIRM_LABEL(ctx.language),
        "cancelLabel": texts.CANCEL_LABEL(ctx.language),
    }
    return dialog.model_copy(update=labels)


def _when(start: datetime | None, end: datetime | None, ctx: ApprovalContext) -> str:
    """'11월 24일 (화) 10:00–11:00' / 'Tue 24 Nov 10:00–11:00', in the user's zone."""
    if start is None:
        return ""
    s = start.astimezone(ctx.timezone)
    e = end.astimezone(ctx.timezone) if end is not None else None
    until = ""
    if e is not None:
        until = f"–{e:%H:%M}" if e.date() == s.date() else f" – {short_day(e, ctx.language)} {e:%H:%M}"
    return f"{short_day(s, ctx.language)} {s:%H:%M}{until}"


def _moment(value: Any) -> datetime | None:
    """A time argument of the call, parsed (ISO 8601); None when it is not given."""
    return datetime.fromisoformat(str(value)) if value else None


def _args_when(
    args: dict[str, Any], ctx: ApprovalContext, start_name: str, end_name: str | None = None
) -> str:
    """The time the call gives, in the user's zone; as written when it is not ISO 8601."""
    start, end = args.get(start_name), args.get(end_name) if end_name else None
    try:
        return _when(_moment(start), _moment(end), ctx)
    except ValueError:
        return _as_written(start, end)


def _as_written(start: Any, end: Any) -> str:
    if not start:
        return ""
    return f"{start} – {end}" if end else str(start)


async def _names(user_ids: list[str] | None, ctx: ApprovalContext) -> str:
    if not user_ids:
        return ""
    names = []
    for user_id in user_ids:
        profile = await ctx.backends.users.get_profile(user_id) if ctx.backends else None
        names.append(f"{profile.name} ({user_id})" if profile and profile.name else user_id)
    return ", ".join(names)


async def _event_title(event_id: str, ctx: ApprovalContext) -> tuple[str, str]:
    """The event's title and time, or its id when it cannot be found."""
    event = await _event(event_id, ctx)
    if event is None:
        return event_id, ""
    return f"“{event.title}”", _when(event.start_time, event.end_time, ctx)


async def _event(event_id: str, ctx: ApprovalContext) -> Event | None:
    return await ctx.backends.events.get(event_id) if ctx.backends else None


async def _create_event(args: dict[str, Any], ctx: ApprovalContext) -> ConfirmParams:
    lang = ctx.language
    parts = [f"“{args.get('title', '')}”", _args_when(args, ctx, "start_time", "end_time")]
    if args.get("location"):
        parts.append(f"@ {args['location']}")
    text = texts.CREATE_EVENT(lang, what=" ".join(p for p in parts if p))
    if who := await _names(args.get("invitee_user_ids"), ctx):
        text += texts.CREATE_EVENT_INVITE(lang, who=who)
    if guests := await _names(args.get("guest_user_ids"), ctx):
        text += texts.GUESTS_INVITED(lang, who=guests)
    if args.get("availability_deadline"):
        text += texts.CREATE_EVENT_DEADLINE(lang, deadline=_args_when(args, ctx, "availability_deadline"))
    # Last and whole: the person approves the very text the invitees will read.
    if description := _written(args, "description"):
        text += texts.CREATE_EVENT_DESCRIPTION(lang, text=description)
    return ConfirmParams(title=texts.CREATE_EVENT_TITLE(lang), message=text)


async def _new_time(args: dict[str, Any], ctx: ApprovalContext) -> str:
    """The event's new time; when only the start moves, the end moves with it (it keeps its length)."""
    if args.get("end_time") or not args.get("start_time"):
        return _args_when(args, ctx, "start_time", "end_time")
    try:
        start = _moment(args["start_time"])
    except ValueError:
        return _as_written(args["start_time"], None)
    event = await _event(str(args.get("event_id", "")), ctx)
    end = start + (event.end_time - event.start_time) if start and event else None
    return _when(start, end, ctx)


async def _update_event(args: dict[str, Any], ctx: ApprovalContext) -> ConfirmParams:
    lang = ctx.language
    title, when = await _event_title(str(args.get("event_id", "")), ctx)
    changes = []
    if args.get("title"):
        changes.append(texts.CHANGED_TITLE(lang, value=args["title"]))
    if args.get("start_time") or args.get("end_time"):
        changes.append(texts.CHANGED_TIME(lang, value=await _new_time(args, ctx)))
    # A field given empty removes what the event had: the dialog says so.
    if args.get("location"):
        changes.append(texts.CHANGED_PLACE(lang, value=args["location"]))
    elif _removes(args, "location"):
        changes.append(texts.REMOVED_PLACE(lang))
    if description := _written(args, "description"):
        changes.append(texts.CHANGED_DESCRIPTION(lang, value=description))
    elif _removes(args, "description"):
        changes.append(texts.REMOVED_DESCRIPTION(lang))
    if args.get("invitee_user_ids"):
        changes.append(texts.CHANGED_INVITEES(lang, value=await _names(args["invitee_user_ids"], ctx)))
    elif _removes(args, "invitee_user_ids"):
        changes.append(texts.REMOVED_INVITEES(lang))
    if args.get("availability_deadline"):
        changes.append(texts.CHANGED_DEADLINE(lang, value=_args_when(args, ctx, "availability_deadline")))
    elif _removes(args, "availability_deadline"):
        changes.append(texts.REMOVED_DEADLINE(lang))
    if args.get("guest_user_ids"):
        changes.append(texts.CHANGED_GUESTS(lang, value=await _names(args["guest_user_ids"], ctx)))
    elif _removes(args, "guest_user_ids"):
        changes.append(texts.REMOVED_GUESTS(lang))
    listed = "; ".join(changes) or texts.NO_CHANGES(lang)
    message = texts.UPDATE_EVENT(lang, title=title, when=when, changes=listed)
    return ConfirmParams(title=texts.UPDATE_EVENT_TITLE(lang), message=message)


def _written(args: dict[str, Any], name: str) -> str:
    """A text argument as the tool will store it (trimmed); empty when it is not given."""
    value = args.get(name)
    return value.strip() if isinstance(value, str) else ""


def _removes(args: dict[str, Any], name: str) -> bool:
    """Whether the call empties the field (an empty string or list), rather than leaving it out."""
    value = args.get(name)
    return value is not None and not (value.strip() if isinstance(value, str) else value)


async def _invite(args: dict[str, Any], ctx: ApprovalContext) -> ConfirmParams:
    title, when = await _event_title(str(args.get("event_id", "")), ctx)
    guests = await _names(args.get("guest_user_ids"), ctx)
    who = ", ".join(n for n in (await _names(args.get("user_ids"), ctx), guests) if n)
    text = texts.INVITE(ctx.language, who=who, title=title, when=when)
    if guests:
        text += texts.GUESTS_INVITED(ctx.language, who=guests)
    return ConfirmParams(title=texts.INVITE_TITLE(ctx.language), message=text)


async def _cancel(args: dict[str, Any], ctx: ApprovalContext) -> ConfirmParams:
    event_id = str(args.get("event_id", ""))
    event = await ctx.backends.events.get(event_id) if ctx.backends else None
    title, when = await _event_title(event_id, ctx)
    text = texts.CANCEL(ctx.language, title=title, when=when)
    if event is not None and (who := await _names([*event.invitee_user_ids, *event.guest_user_ids], ctx)):
        text += texts.CANCEL_TELL(ctx.language, who=who)
    if args.get("reason"):
        text += texts.CANCEL_REASON(ctx.language, reason=args["reason"])
    return ConfirmParams(title=texts.CANCEL_TITLE(ctx.language), message=text)


async def _relay(args: dict[str, Any], ctx: ApprovalContext, *, prepared: Mapping[str, Any]) -> ConfirmParams:
    """The message exactly as it will be sent: the text the tool wrote before asking."""
    who = await _names([str(args.get("user_id", ""))], ctx)
    text = prepared.get("message")
    if not isinstance(text, str):
        # An approval kept from before messages were written ahead: the tool then sends the request
        # as given, after the sender's name (``agent_deps.as_requested``).
        sender = await ctx.backends.users.get_profile(ctx.user_id) if ctx.backends else None
        text = f"{sender.name if sender else ctx.user_id}: {args.get('request', '')}"
    return ConfirmParams(
        title=texts.RELAY_TITLE(ctx.language), message=texts.RELAY(ctx.language, who=who, about=text)
    )


async def _forget(args: dict[str, Any], ctx: ApprovalContext) -> ConfirmParams:
    memory_id = str(args.get("memory_id", ""))
    text = memory_id
    if ctx.backends is not None:
        for memory in await ctx.backends.memory.list_recent(ctx.user_id, limit=500):
            if memory.memory_id == memory_id:
                text = f"“{memory.text}”"
                break
    return ConfirmParams(
        title=texts.FORGET_TITLE(ctx.language), message=texts.FORGET(ctx.language, text=text)
    )


async def _generic(
    args: dict[str, Any], ctx: ApprovalContext, tool_name: str = "this action"
) -> ConfirmParams:
    """The tool's name and arguments, and what the tool says it does (its description's first line)."""
    # What the phone is asked to do: a device tool's notification_message is never sent.
    details = ", ".join(f"{k}: {v}" for k, v in args.items() if k != "notification_message") or "-"
    title = texts.GENERIC_TITLE(ctx.language, action=tool_name.replace("_", " "))
    message = texts.GENERIC(ctx.language, tool=tool_name, details=details)
    if described := (ctx.descriptions.get(tool_name) or "").strip():
        message += "\n" + described.splitlines()[0][:DESCRIPTION_CHARS]
    return ConfirmParams(title=title, message=message)


_DESCRIBERS: dict[str, Describer] = {
    "create_event": _create_event,
    "update_event": _update_event,
    "invite_to_event": _invite,
    "cancel_event": _cancel,
    "forget_memory": _forget,
}
