"""What the server itself texts back to a guest by SMS (the assistant's answers are the model's)."""

from __future__ import annotations

from . import Language, Text, is_korean

SMS_HELP = Text(
    ko="일정 초대 어시스턴트예요. 초대에 대해 답장으로 물어보세요. "
    "수신을 멈추려면 STOP, 다시 받으려면 START.",
    en="This is the event invitation assistant: reply with your questions about an invitation. "
    "Text STOP to stop messages, START to get them again.",
)
"""The one line a guest who texts HELP or INFO gets."""
SMS_NOT_INVITED = Text(
    ko="안녕하세요! 이 번호로 온 초대가 없어서 답해 드릴 수 없어요. 초대를 받으시면 답장해 주세요.",
    en="Hello! There is no invitation for this number, so I can't help here. Reply once you've been invited.",
)
"""A number nobody invited texted the assistant: one polite line, and no model runs."""

KOREA = "+82"


def sms_language(body: str, number: str, *, keyword: bool = False) -> Language:
    """The language to text back in: Korean for a message with Hangul; for a bare keyword (``HELP``,
    written in English whatever one speaks) or no text, the number's country (``+82``: Korean);
    English otherwise."""
    if is_korean(body):
        return "ko"
    if keyword or not body.strip():
        return "ko" if number.startswith(KOREA) else "en"
    return "en"
