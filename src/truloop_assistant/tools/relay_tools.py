"""Relaying a message to another user, written by the notification agent.

The message is written before the confirmation dialog, which shows it; after the user's yes that
very text is sent (it travels with the pending approval, kept by the server), never written anew.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AliasChoices, BaseModel, Field, StringConstraints
from pydantic_ai import ApprovalRequired, FunctionToolset, RunContext, ToolFailed

from ..backends.users import UserProfile
from ..channels.relay import RelayError
from .agent_deps import AgentDeps, Relayed, as_requested
from .arguments import UserId
from .marks import ASKS_ITSELF, DESTRUCTIVE, OWN_TIME_BOUND

relay_toolset: FunctionToolset[AgentDeps] = FunctionToolset()


class RelayResult(BaseModel):
    sent_to: str
    name: str | None
    message: str = Field(description="The message exactly as it was delivered")
    note: str | None = None


async def _recipient(ctx: RunContext[AgentDeps], user_id: str) -> UserProfile:
    """Who the message goes to; checked before the confirmation dialog too."""
    recipient = await ctx.deps.require_backends().users.get_profile(user_id)
    if recipient is None:
        raise ToolFailed(f"there is no user {user_id!r}; look them up with search_users first")
    if recipient.user_id == ctx.deps.user_id:
        raise ToolFailed("that is the current user; a message to themselves is not needed")
    if ctx.deps.relay_writer is None:
        raise ToolFailed("relaying messages is not available on this server")
    return recipient


async def _validate(ctx: RunContext[AgentDeps], /, *_: Any, **args: Any) -> None:
    await _recipient(ctx, args["user_id"])


def prepared(relayed: Relayed) -> dict[str, Any]:
    """What the pending approval keeps: the text the dialog shows and the yes sends."""
    return {"message": relayed.text, "written": relayed.written}


def _approved(metadata: Any) -> Relayed | None:
    """The text the user approved, from the approval's metadata (None for an approval without one)."""
    text = metadata.get("message") if isinstance(metadata, dict) else None
    if not isinstance(text, str):
        return None
    return Relayed(text=text, written=bool(metadata.get("written")))


@relay_toolset.tool(metadata={**DESTRUCTIVE, **ASKS_ITSELF, **OWN_TIME_BOUND}, args_validator=_validate)
async def send_message_to_user(
    ctx: RunContext[AgentDeps],
    user_id: UserId,
    message: Annotated[
        str,
        StringConstraints(strip_whitespace=True, min_length=1, max_length=1000),
        # ``request``: its name in calls made before it was ``message`` (one approved after an upgrade)
        Field(
            description="What to tell them, as the user put it",
            validation_alias=AliasChoices("message", "request"),
        ),
    ],
) -> RelayResult:
    """Send another person (never the user) a chat message from the user."""
    recipient = await _recipient(ctx, user_id)
    writer = ctx.deps.relay_writer
    assert writer is not None  # checked by _recipient
    sender = await ctx.deps.require_backends().users.get_profile(ctx.deps.user_id)
    sender_name = sender.name if sender else ctx.deps.user_id
    if not ctx.tool_call_approved:
        relayed = await writer.write(
            sender_name=sender_name, recipient=recipient, request=message, deps=ctx.deps, usage=ctx.usage
        )
        # The person allows messages to this recipient for good: it goes now.
        if not ctx.deps.allows_always("send_message_to_user", {"user_id": recipient.user_id}):
            raise ApprovalRequired(metadata=prepared(relayed))
        ctx.deps.note_standing(ctx.tool_call_id)
    else:
        # An approval kept from before messages were written ahead has no text: send the request as given.
        relayed = _approved(ctx.tool_call_metadata) or as_requested(sender_name, message)
    try:
        await writer.send(
            sender_id=ctx.deps.user_id,
            recipient=recipient,
            text=relayed.text,
            dedup_id=f"relay:{ctx.deps.channel_url}:{ctx.tool_call_id}",
        )
    except RelayError as exc:  # no such user, the join limit: the user learns it did not go out, and why
        raise ToolFailed(f"not sent: {exc}") from None
    note = (
        None
        if relayed.written
        else "the message writer was not available, so the request was sent as written"
    )
    return RelayResult(sent_to=recipient.user_id, name=recipient.name, message=relayed.text, note=note)
