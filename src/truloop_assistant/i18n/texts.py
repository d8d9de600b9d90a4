"""What the server itself says to users (not the model): apologies, notices, confirmation dialogs."""

from __future__ import annotations

from . import Text

# -- a turn that could not be answered (AC-902): never silence, never a stack trace

TURN_LIMIT = Text(
    ko="죄송해요, 이 요청은 끝까지 처리하지 못했어요. 조금 더 간단하게 나눠서 다시 말씀해 주시겠어요?",
    en="Sorry, I couldn't complete that request. Could you ask again in smaller steps?",
)
"""The turn ran out of its model request budget, or the model could not fix its own calls."""
TIMED_OUT = Text(
    ko="요청 시간이 초과되었습니다. 잠시 후 다시 시도해 주세요.",
    en="The request timed out. Please try again in a moment.",
)
MODEL_RATE_LIMITED = Text(
    ko="요청 한도를 초과했습니다. 잠시 후 다시 시도해 주세요.",
    en="The assistant is over its request limit right now. Please try again in a moment.",
)
SERVER_ERROR = Text(
    ko="서버 오류가 발생했습니다. 잠시 후 다시 시도해 주세요.",
    en="Something went wrong on our side. Please try again in a moment.",
)

# -- notices: why a message was not answered

SENDING_TOO_FAST = Text(
    ko="요청 한도를 초과했습니다. 메시지를 너무 빠르게 보내고 있어요: {window_s}초 뒤에 다시 보내 주세요.",
    en="You're sending messages too fast (rate limit reached). Please try again in {window_s} s.",
)
MESSAGE_TOO_LONG = Text(
    ko="메시지가 너무 길어요 ({length}자). {limit}자 이내로 나눠서 보내 주세요.",
    en="Your message is too long ({length} characters). Please keep it under {limit} characters.",
)

# -- the confirmation dialog (interaction.confirm) of the confirmation gate

CONFIRM_LABEL = Text(ko="확인", en="Confirm")
CANCEL_LABEL = Text(ko="취소", en="Cancel")
CREATE_EVENT_TITLE = Text(ko="일정을 만들까요?", en="Create this event?")
CREATE_EVENT = Text(ko="{what} 일정을 만들어요.", en="Create {what}.")
CREATE_EVENT_INVITE = Text(ko=" 초대: {who}.", en=" Invite {who}.")
CREATE_EVENT_DEADLINE = Text(
    ko=" 가능한 시간 응답 마감: {deadline}.", en=" Invitees answer with their availability by {deadline}."
)
UPDATE_EVENT_TITLE = Text(ko="일정을 바꿀까요?", en="Change this event?")
UPDATE_EVENT = Text(ko="{title} {when} 일정을 바꿔요: {changes}.", en="Change {title} {when}: {changes}.")
CHANGED_TITLE = Text(ko="제목 → “{value}”", en="title → “{value}”")
CHANGED_TIME = Text(ko="시간 → {value}", en="time → {value}")
CHANGED_PLACE = Text(ko="장소 → {value}", en="place → {value}")
CHANGED_DESCRIPTION = Text(ko="설명 변경", en="new description")
CHANGED_INVITEES = Text(ko="초대 → {value}", en="invitees → {value}")
CHANGED_DEADLINE = Text(ko="응답 마감 → {value}", en="availability deadline → {value}")
NO_CHANGES = Text(ko="변경 없음", en="no changes")
INVITE_TITLE = Text(ko="초대를 보낼까요?", en="Send these invitations?")
INVITE = Text(ko="{who} 님을 {title} {when} 일정에 초대해요.", en="Invite {who} to {title} {when}.")
RELAY_TITLE = Text(ko="메시지를 보낼까요?", en="Send this message?")
RELAY = Text(ko="{who} 님에게 메시지를 보내요: {about}", en="Send {who} a message: {about}")
FORGET_TITLE = Text(ko="기억을 지울까요?", en="Forget this?")
FORGET = Text(ko="이 기억을 영구히 지워요: {text}", en="Permanently forget: {text}")
GENERIC_TITLE = Text(ko="실행할까요?", en="Allow {action}?")
GENERIC = Text(ko="{tool} 실행 ({details})", en="The assistant wants to run {tool} with {details}.")
