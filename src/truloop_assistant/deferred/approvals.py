"""The confirmation gate: a destructive tool call becomes an ``interaction.confirm`` dialog.

The dialog says exactly what will happen — who, what, when — in the user's language. The answer
is bound to that one call: the server keeps the call and its arguments, and the device can only
say yes or no to it. Every name, id and text the dialog quotes is bidi-isolated
(:func:`..i18n.display.isolate`), so none can reorder the sentence around it; a time shows its year
when it is not this year's or the event ends on another day.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from ..i18n import Language, texts
from ..i18n.display import isolate
from ..protocol.methods import ConfirmParams, EditableField
from . import dialog_times as times
from .always_offer import always_offer

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
    may_remember: bool = False
    """Whether a dialog may offer "always": only in the person's 1:1 chat with the assistant, in a run
    that quotes nobody else's words."""
    now: datetime = field(default_factory=lambda: datetime.now(UTC))
    """When the dialog is written: a time in another year than this one shows its year."""


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
    labels: dict[str, Any] = {
        "confirmLabel": texts.CONFIRM_LABEL(ctx.language),
        "cancelLabel": texts.CANCEL_LABEL(ctx.language),
    }
    if call.tool_name in EVENT_FIELDS_EDITABLE:
        try:
            labels["editable"] = await _event_fields(call.tool_name, args, ctx)
        except Exception:  # the event could not be read: the person can still say yes or no
            log.exception("could not list the editable fields of %s", call.tool_name)
    if ctx.may_remember:
        try:
            labels["always"] = await always_offer(
                call.tool_name, args, ctx.language, partial(_names, ctx=ctx)
            )
        except Exception:  # the people could not be named: "always" is not offered this time
            log.exception("could not say what always would cover for %s", call.tool_name)
    return dialog.model_copy(update=labels)


EVENT_FIELDS_EDITABLE = frozenset({"create_event", "update_event"})
"""The tools whose dialog lets the person change the event's title, times and place before approving."""


async def _event_fields(tool_name: str, args: dict[str, Any], ctx: ApprovalContext) -> list[EditableField]:
    """The event as it will be once the call runs: what the call gives, else what the event has now."""
    event = await _event(str(args.get("event_id", "")), ctx) if tool_name == "update_event" else None
    lang = ctx.language

    def now(name: str) -> Any:
        return getattr(event, name, None) if event is not None else None

    def text(name: str) -> str:
        value = args.get(name)
        return value.strip() if isinstance(value, str) and value.strip() else str(now(name) or "")

    def moment(value: Any) -> datetime | None:
        try:
            return value if isinstance(value, datetime) else times.moment(value)
        except ValueError:
            return None

    start = moment(args.get("start_time")) or now("start_time")
    end = moment(args.get("end_time"))
    if end is None and event is not None:  # an update that moves only the start keeps the event's length
        end = (
            start + (event.end_time - event.start_time)
            if args.get("start_time") and start
            else now("end_time")
        )

    def shown(value: datetime | None, name: str) -> str:
        if value is None:  # not ISO 8601: as the call wrote it
            return str(args.get(name) or "")
        return value.astimezone(ctx.timezone).isoformat()

    return [
        EditableField(name="title", label=texts.FIELD_TITLE(lang), type="text", value=text("title")),
        EditableField(
            name="start_time",
            label=texts.FIELD_START(lang),
            type="datetime",
            value=shown(start, "start_time"),
        ),
        EditableField(
            name="end_time", label=texts.FIELD_END(lang), type="datetime", value=shown(end, "end_time")
        ),
        EditableField(name="location", label=texts.FIELD_LOCATION(lang), type="text", value=text("location")),
    ]


async def _names(user_ids: list[str] | None, ctx: ApprovalContext) -> str:
    if not user_ids:
        return ""
    names = []
    for user_id in user_ids:
        profile = await ctx.backends.users.get_profile(user_id) if ctx.backends else None
        shown = isolate(user_id)
        names.append(f"{isolate(profile.name)} ({shown})" if profile and profile.name else shown)
    return ", ".join(names)


async def _event_title(event_id: str, ctx: ApprovalContext) -> tuple[str, str]:
    """The event's title and time, or its id when it cannot be found."""
    event = await _event(event_id, ctx)
    if event is None:
        return event_id, ""
    return f"“{isolate(event.title)}”", times.when(event.start_time, event.end_time, ctx)


async def _event(event_id: str, ctx: ApprovalContext) -> Event | None:
    return await ctx.backends.events.get(event_id) if ctx.backends else None


async def _create_event(args: dict[str, Any], ctx: ApprovalContext) -> ConfirmParams:
    lang = ctx.language
    parts = [f"“{isolate(str(args.get('title', '')))}”", times.args_when(args, ctx, "start_time", "end_time")]
    if location := _written(args, "location"):
        parts.append(f"@ {isolate(location)}")
    text = texts.CREATE_EVENT(lang, what=" ".join(p for p in parts if p))
    if who := await _names(args.get("invitee_user_ids"), ctx):
        text += texts.CREATE_EVENT_INVITE(lang, who=who)
    if guests := await _names(args.get("guest_user_ids"), ctx):
        text += texts.GUESTS_INVITED(lang, who=guests)
    if numbers := _numbers(args.get("guest_phone_numbers")):
        text += texts.PHONE_GUESTS_INVITED(lang, who=numbers)
    if args.get("availability_deadline"):
        deadline = times.args_when(args, ctx, "availability_deadline")
        text += texts.CREATE_EVENT_DEADLINE(lang, deadline=deadline)
    # Last and whole: the person approves the very text the invitees will read.
    if description := _written(args, "description"):
        text += texts.CREATE_EVENT_DESCRIPTION(lang, text=isolate(description))
    return ConfirmParams(title=texts.CREATE_EVENT_TITLE(lang), message=text)


async def _new_time(args: dict[str, Any], ctx: ApprovalContext) -> str:
    """The event's new time; when only the start moves, the end moves with it (it keeps its length)."""
    if args.get("end_time") or not args.get("start_time"):
        return times.args_when(args, ctx, "start_time", "end_time")
    try:
        start = times.moment(args["start_time"])
        event = await _event(str(args.get("event_id", "")), ctx)
        end = start + (event.end_time - event.start_time) if start and event else None
        return times.when(start, end, ctx)
    except (ValueError, OverflowError):
        return times.as_written(args["start_time"], None)


async def _update_event(args: dict[str, Any], ctx: ApprovalContext) -> ConfirmParams:
    lang = ctx.language
    title, when = await _event_title(str(args.get("event_id", "")), ctx)
    changes = []
    if args.get("title"):
        changes.append(texts.CHANGED_TITLE(lang, value=isolate(str(args["title"]).strip())))
    if args.get("start_time") or args.get("end_time"):
        changes.append(texts.CHANGED_TIME(lang, value=await _new_time(args, ctx)))
    # An empty value changes nothing; a field in ``clear`` is removed: the dialog says so.
    clear = args.get("clear")
    cleared: list[Any] = clear if isinstance(clear, list) else []
    if location := _written(args, "location"):
        changes.append(texts.CHANGED_PLACE(lang, value=isolate(location)))
    elif "location" in cleared:
        changes.append(texts.REMOVED_PLACE(lang))
    if description := _written(args, "description"):
        changes.append(texts.CHANGED_DESCRIPTION(lang, value=isolate(description)))
    elif "description" in cleared:
        changes.append(texts.REMOVED_DESCRIPTION(lang))
    if _written(args, "availability_deadline"):
        deadline = times.args_when(args, ctx, "availability_deadline")
        changes.append(texts.CHANGED_DEADLINE(lang, value=deadline))
    elif "availability_deadline" in cleared:
        changes.append(texts.REMOVED_DEADLINE(lang))
    for name, text in _PEOPLE_CHANGES:
        if who := await _names(args.get(name), ctx):
            changes.append(text(lang, value=who))
    for name, text in _NUMBER_CHANGES:
        if numbers := _numbers(args.get(name)):
            changes.append(text(lang, value=numbers))
    listed = "; ".join(changes) or texts.NO_CHANGES(lang)
    message = texts.UPDATE_EVENT(lang, title=title, when=when, changes=listed)
    return ConfirmParams(title=texts.UPDATE_EVENT_TITLE(lang), message=message)


def _written(args: dict[str, Any], name: str) -> str:
    """A text argument as the tool will store it (trimmed); empty when it is not given."""
    value = args.get(name)
    return value.strip() if isinstance(value, str) else ""


_PEOPLE_CHANGES = (
    ("add_invitee_user_ids", texts.ADDED_INVITEES),
    ("remove_invitee_user_ids", texts.REMOVED_INVITEES),
    ("add_guest_user_ids", texts.ADDED_GUESTS),
    ("remove_guest_user_ids", texts.REMOVED_GUESTS),
)
"""The people an update adds or removes, each with what the dialog says of them."""
_NUMBER_CHANGES = (
    ("add_guest_phone_numbers", texts.ADDED_GUESTS),
    ("remove_guest_phone_numbers", texts.REMOVED_GUESTS),
)
"""The same for guests named by phone number (shown as written)."""


def _numbers(values: Any) -> str:
    """Phone numbers as the model wrote them, for the dialog."""
    if not isinstance(values, list):
        return ""
    return ", ".join(isolate(str(v).strip()) for v in values if str(v).strip())


async def _invite(args: dict[str, Any], ctx: ApprovalContext) -> ConfirmParams:
    title, when = await _event_title(str(args.get("event_id", "")), ctx)
    guests = await _names(args.get("guest_user_ids"), ctx)
    numbers = _numbers(args.get("guest_phone_numbers"))
    who = ", ".join(n for n in (await _names(args.get("invitee_user_ids"), ctx), guests, numbers) if n)
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
        text += texts.CANCEL_REASON(ctx.language, reason=isolate(str(args["reason"])))
    return ConfirmParams(title=texts.CANCEL_TITLE(ctx.language), message=text)


async def _relay(args: dict[str, Any], ctx: ApprovalContext, *, prepared: Mapping[str, Any]) -> ConfirmParams:
    """The message exactly as it will be sent: the text the tool wrote before asking."""
    who = await _names([str(args.get("user_id", ""))], ctx)
    text = prepared.get("message")
    if not isinstance(text, str):
        # An approval kept from before messages were written ahead: the tool then sends the request
        # as given, after the sender's name (``agent_deps.as_requested``).
        sender = await ctx.backends.users.get_profile(ctx.user_id) if ctx.backends else None
        text = f"{sender.name if sender else ctx.user_id}: {args.get('message', '')}"
    return ConfirmParams(
        title=texts.RELAY_TITLE(ctx.language), message=texts.RELAY(ctx.language, who=who, about=isolate(text))
    )


async def _forget(args: dict[str, Any], ctx: ApprovalContext) -> ConfirmParams:
    memory_id = str(args.get("memory_id", ""))
    text = memory_id
    if ctx.backends is not None:
        for memory in await ctx.backends.memory.list_recent(ctx.user_id, limit=500):
            if memory.memory_id == memory_id:
                text = f"“{isolate(memory.text)}”"
                break
    return ConfirmParams(
        title=texts.FORGET_TITLE(ctx.language), message=texts.FORGET(ctx.language, text=text)
    )


async def _generic(
    args: dict[str, Any], ctx: ApprovalContext, tool_name: str = "this action"
) -> ConfirmParams:
    """The tool's name and arguments, and what the tool says it does (its description's first line)."""
    # What the phone is asked to do: a device tool's notification_message is never sent.
    details = ", ".join(f"{k}: {isolate(str(v))}" for k, v in args.items() if k != "notification_message")
    details = details or "-"
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
