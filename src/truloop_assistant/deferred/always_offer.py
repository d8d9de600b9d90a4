"""What a confirmation dialog says "always" would cover (``params.always``), in the person's language.

The scope is the call's own (``protocol.standing_scope.offered_scope``): the people and description the
dialog shows, or the message's recipient. A dialog offers it only in the person's 1:1 chat with the
assistant, in a run that quotes nobody else's words (the step decides: ``ApprovalContext``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..i18n import Language, texts
from ..protocol.methods import AlwaysOffer
from ..protocol.standing_scope import offered_scope
from ..store.keys import STANDING_APPROVALS_TTL_S

Names = Callable[[list[str]], Awaitable[str]]
"""User ids -> how the dialog names them (``박민아 (mina)``)."""

DAYS = STANDING_APPROVALS_TTL_S // (24 * 3600)


async def always_offer(
    tool: str, args: Mapping[str, Any], language: Language, names: Names
) -> AlwaysOffer | None:
    """What "always" would allow after this call; None when it is not offered for it."""
    scope = offered_scope(tool, args)
    if scope is None:
        return None
    if tool == "send_message_to_user":
        covers = texts.ALWAYS_RELAY(language, days=DAYS, who=await names([scope["user_id"]]))
    elif tool == "save_memory":
        covers = texts.ALWAYS_SAVE_MEMORY(language, days=DAYS)
    else:
        covers = await _events(tool, scope, language, names)
    return AlwaysOffer(covers=covers + texts.ALWAYS_NOT_IN_GROUPS(language), scope=scope)


async def _events(tool: str, scope: dict[str, Any], language: Language, names: Names) -> str:
    invitees = scope["invitees"]
    anyone = (
        texts.ALWAYS_ANYONE_BUT(language, who=await names(invitees))
        if invitees
        else texts.ALWAYS_ANYONE(language)
    )
    if tool == "create_event":
        shown = (
            texts.ALWAYS_OTHER_DESCRIPTION
            if scope["description"] is not None
            else texts.ALWAYS_ANY_DESCRIPTION
        )
        return texts.ALWAYS_CREATE_EVENT(language, days=DAYS, anyone=anyone, description=shown(language))
    changed = (
        texts.ALWAYS_OTHER_DESCRIPTION_CHANGE
        if scope["description"] is not None
        else texts.ALWAYS_DESCRIPTION_CHANGE
    )
    return texts.ALWAYS_UPDATE_EVENT(language, days=DAYS, anyone=anyone, description=changed(language))
