"""The confirmation gate: a destructive tool call becomes an ``interaction.confirm`` dialog.

The dialog says exactly what will happen — who, what, when — in the user's language. The answer
is bound to that one call: the server keeps the call and its arguments, and the device can only
say yes or no to it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from pydantic_ai.messages import ToolCallPart

if TYPE_CHECKING:
    from ..backends import Backends

log = logging.getLogger(__name__)

CONFIRM_METHOD = "interaction.confirm"

DESTRUCTIVE_TOOLS = frozenset(
    {"create_event", "update_event", "invite_to_event", "send_message_to_user", "forget_memory"}
)
"""Server tools that change data or reach other people: each needs the user's yes first."""


@dataclass(frozen=True)
class ApprovalContext:
    language: str
    """'ko' or 'en': the language of the user's message."""
    timezone: ZoneInfo
    backends: Backends | None = None
    user_id: str = ""


Describer = Callable[[dict[str, Any], ApprovalContext], Awaitable[tuple[str, str]]]
_WEEKDAYS_KO = "월화수목금토일"


async def describe_approval(call: ToolCallPart, ctx: ApprovalContext) -> dict[str, Any]:
    """The ``interaction.confirm`` params that ask the user to allow this exact call."""
    describer = _DESCRIBERS.get(call.tool_name)
    args = call.args_as_dict()
    try:
        title, message = await (describer(args, ctx) if describer else _generic(args, ctx, call.tool_name))
    except Exception:  # a lookup failed: still ask, with the plain arguments
        log.exception("could not describe %s for confirmation", call.tool_name)
        title, message = await _generic(args, ctx, call.tool_name)
    ko = ctx.language == "ko"
    return {
        "title": title,
        "message": message,
        "confirmLabel": "확인" if ko else "Confirm",
        "cancelLabel": "취소" if ko else "Cancel",
    }


def _when(start: str | None, end: str | None, ctx: ApprovalContext) -> str:
    """'11월 24일 (화) 10:00–11:00' / 'Tue 24 Nov 10:00–11:00', in the user's zone."""
    if not start:
        return ""
    try:
        s = datetime.fromisoformat(start).astimezone(ctx.timezone)
        e = datetime.fromisoformat(end).astimezone(ctx.timezone) if end else None
    except ValueError:
        return f"{start} – {end}" if end else start
    until = ""
    if e is not None:
        until = f"–{e:%H:%M}" if e.date() == s.date() else f" – {_day(e, ctx)} {e:%H:%M}"
    return f"{_day(s, ctx)} {s:%H:%M}{until}"


def _day(d: datetime, ctx: ApprovalContext) -> str:
    if ctx.language == "ko":
        return f"{d.month}월 {d.day}일 ({_WEEKDAYS_KO[d.weekday()]})"
    return f"{d:%a} {d.day} {d:%b}"


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
    event = await ctx.backends.events.get(event_id) if ctx.backends else None
    if event is None:
        return event_id, ""
    return f"“{event.title}”", _when(event.start_time, event.end_time, ctx)


async def _create_event(args: dict[str, Any], ctx: ApprovalContext) -> tuple[str, str]:
    ko = ctx.language == "ko"
    when = _when(args.get("start_time"), args.get("end_time"), ctx)
    who = await _names(args.get("invitee_user_ids"), ctx)
    parts = [f"“{args.get('title', '')}”", when]
    if args.get("location"):
        parts.append(f"@ {args['location']}")
    if ko:
        text = " ".join(p for p in parts if p) + " 일정을 만들어요."
        if who:
            text += f" 초대: {who}."
        if args.get("availability_deadline"):
            text += f" 가능한 시간 응답 마감: {_when(args['availability_deadline'], None, ctx)}."
        return "일정을 만들까요?", text
    text = "Create " + " ".join(p for p in parts if p) + "."
    if who:
        text += f" Invite {who}."
    if args.get("availability_deadline"):
        text += (
            f" Invitees answer with their availability by {_when(args['availability_deadline'], None, ctx)}."
        )
    return "Create this event?", text


async def _update_event(args: dict[str, Any], ctx: ApprovalContext) -> tuple[str, str]:
    ko = ctx.language == "ko"
    title, when = await _event_title(str(args.get("event_id", "")), ctx)
    changes = []
    if args.get("title"):
        changes.append(f"제목 → “{args['title']}”" if ko else f"title → “{args['title']}”")
    if args.get("start_time") or args.get("end_time"):
        new_when = _when(args.get("start_time"), args.get("end_time"), ctx)
        changes.append(f"시간 → {new_when}" if ko else f"time → {new_when}")
    if args.get("location"):
        changes.append(f"장소 → {args['location']}" if ko else f"place → {args['location']}")
    if args.get("description"):
        changes.append("설명 변경" if ko else "new description")
    if args.get("invitee_user_ids"):
        who = await _names(args["invitee_user_ids"], ctx)
        changes.append(f"초대 → {who}" if ko else f"invitees → {who}")
    if args.get("availability_deadline"):
        deadline = _when(args["availability_deadline"], None, ctx)
        changes.append(f"응답 마감 → {deadline}" if ko else f"availability deadline → {deadline}")
    listed = "; ".join(changes) or ("변경 없음" if ko else "no changes")
    if ko:
        return "일정을 바꿀까요?", f"{title} {when} 일정을 바꿔요: {listed}."
    return "Change this event?", f"Change {title} {when}: {listed}."


async def _invite(args: dict[str, Any], ctx: ApprovalContext) -> tuple[str, str]:
    title, when = await _event_title(str(args.get("event_id", "")), ctx)
    who = await _names(args.get("user_ids"), ctx)
    if ctx.language == "ko":
        return "초대를 보낼까요?", f"{who} 님을 {title} {when} 일정에 초대해요."
    return "Send these invitations?", f"Invite {who} to {title} {when}."


async def _relay(args: dict[str, Any], ctx: ApprovalContext) -> tuple[str, str]:
    who = await _names([str(args.get("user_id", ""))], ctx)
    about = args.get("request") or args.get("message") or ""
    if ctx.language == "ko":
        return "메시지를 보낼까요?", f"{who} 님에게 메시지를 보내요: {about}"
    return "Send this message?", f"Send {who} a message: {about}"


async def _forget(args: dict[str, Any], ctx: ApprovalContext) -> tuple[str, str]:
    memory_id = str(args.get("memory_id", ""))
    text = memory_id
    if ctx.backends is not None:
        for memory in await ctx.backends.memory.list_recent(ctx.user_id, limit=500):
            if memory.memory_id == memory_id:
                text = f"“{memory.text}”"
                break
    if ctx.language == "ko":
        return "기억을 지울까요?", f"이 기억을 영구히 지워요: {text}"
    return "Forget this?", f"Permanently forget: {text}"


async def _generic(
    args: dict[str, Any], ctx: ApprovalContext, tool_name: str = "this action"
) -> tuple[str, str]:
    details = ", ".join(f"{k}: {v}" for k, v in args.items()) or "-"
    if ctx.language == "ko":
        return "실행할까요?", f"{tool_name} 실행 ({details})"
    return f"Allow {tool_name.replace('_', ' ')}?", f"The assistant wants to run {tool_name} with {details}."


_DESCRIBERS: dict[str, Describer] = {
    "create_event": _create_event,
    "update_event": _update_event,
    "invite_to_event": _invite,
    "send_message_to_user": _relay,
    "forget_memory": _forget,
}
