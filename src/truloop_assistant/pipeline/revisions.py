"""A person's edit or deletion of a message they sent: what it changes of the turn it is, or was.

- A message still **waiting** in its conversation's inbox takes the edited text (the model gets that),
  or, deleted, is taken off the inbox and never reaches the model; its transcript line follows. An
  edited text longer than admission lets in is treated as a message too long: the waiting message is
  taken off and the person is told, as they are when they send one (answering the words they took
  back would be wrong, and their new words cannot be run).
- A message that **ran** changes nothing that was done: its transcript line takes the edited text (or
  goes), and so does its turn's prompt in the person's own history (found by the message id its turn
  marked it with; histories written before turns marked their prompts are left as they are). A
  too-long edit changes the line only: the history keeps what the model was given.
- A message whose step is **running** is not stopped: the step goes on with what it was given and
  keeps that in the person's history; its transcript line changes (or goes) at once.
"""

from __future__ import annotations

from redis.asyncio import Redis

from ..channels.base import InboundMessage
from ..store.history import History
from ..store.inbox_revisions import InboxRevisions, Where
from .notices import Notices


class Revisions:
    """Applies edits and deletions of people's messages, with what they touch (cheap to make: its
    script is sent by its digest, loaded once)."""

    def __init__(self, redis: Redis, history: History, notices: Notices, *, max_message_chars: int) -> None:
        self.inbox = InboxRevisions(redis)
        self.history = history
        self.notices = notices
        self.max_message_chars = max_message_chars

    async def edit(self, message: InboundMessage) -> Where:
        """``message`` (with its new text) was edited; where it was found."""
        too_long = len(message.text) > self.max_message_chars
        found = await self.inbox.revise(
            message.channel_url,
            message.message_id,
            message.user_id,
            waiting=None if too_long else message.text,
            ran=message.text,
            decision="too_long" if too_long else "edited",
        )
        if found.where == "waiting" and too_long:
            await self.notices.send(
                message, "too_long", limit=self.max_message_chars, length=len(message.text)
            )
        elif found.where == "ran" and not too_long:
            await self.history.revise(message.channel_url, message.user_id, message.message_id, message.text)
        return found.where

    async def delete(self, message: InboundMessage) -> Where:
        """``message`` (its text unknown: empty) was deleted; where it was found."""
        found = await self.inbox.revise(
            message.channel_url,
            message.message_id,
            message.user_id,
            waiting=None,
            ran=None,
            decision="deleted",
        )
        if found.where == "ran":
            await self.history.revise(message.channel_url, message.user_id, message.message_id, None)
        return found.where
