"""What the server itself says to users (not the model): apologies, notices, confirmation dialogs."""

from __future__ import annotations

from . import Text

# -- a turn that could not be answered: never silence, never a stack trace

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

# -- a request's message once its call settled (the dialog closes on every device)

CALL_ANSWERED = Text(ko="응답했어요.", en="Answered.")
CALL_EXPIRED = Text(ko="응답 시간이 지나 요청이 끝났어요.", en="No answer in time; this request has ended.")
CALL_SUPERSEDED = Text(
    ko="새 메시지를 보내셔서 이 요청은 취소됐어요.", en="Cancelled: you sent a new message."
)
CALL_CANCELLED = Text(
    ko="이 요청을 처리할 수 있는 기기가 없어서 취소됐어요.",
    en="Cancelled: none of your devices could do this.",
)

# -- in a channel of several people: a request went to the person's 1:1 channel, never to the group

SENT_PRIVATELY_CONFIRM = Text(
    ko="{name} 님, 확인하실 내용을 저와의 1:1 채팅으로 보냈어요.",
    en="{name}, I've sent you something to confirm in our private chat.",
)
SENT_PRIVATELY = Text(
    ko="{name} 님, 휴대폰에서 처리할 요청을 저와의 1:1 채팅으로 보냈어요.",
    en="{name}, I've sent a request for your phone to our private chat.",
)
NOT_SENT_PRIVATELY = Text(
    ko="{name} 님, 저와의 1:1 채팅으로 요청을 보내지 못했어요. 이 채팅방에도 올리지 않았어요.",
    en="{name}, I couldn't send that to our private chat, so I didn't post it here either.",
)

# -- notices: why a message was not answered

SENDING_TOO_FAST = Text(
    ko="요청 한도를 초과했습니다. 메시지를 너무 빠르게 보내고 있어요: {window_s}초 뒤에 다시 보내 주세요.",
    en="You're sending messages too fast (rate limit reached). Please try again in {window_s} s.",
)
TEXT_ONLY = Text(
    ko="저는 텍스트 메시지만 읽을 수 있어요. 궁금한 점을 글로 적어 주세요. (I can only read text messages.)",
    en="I can only read text messages: please write your question. (저는 텍스트 메시지만 읽을 수 있어요.)",
)
"""A file or picture has no language to go by: both languages, the likelier one first."""
VOICE_NOT_READ = Text(
    ko="음성 메시지는 아직 들을 수 없어요. 글로 적어 보내 주세요. (I can't listen to voice messages yet.)",
    en="I can't listen to voice messages yet: please type your message. (음성 메시지는 아직 들을 수 없어요.)",
)
"""A voice note where none is transcribed (``TRULOOP_TRANSCRIPTION_MODEL`` unset); no text to tell the
language by: both languages, the likelier one first."""
VOICE_NOT_TRANSCRIBED = Text(
    ko="음성 메시지를 알아듣지 못했어요. 다시 보내 주시거나 글로 적어 주세요. "
    "(I couldn't make out that voice message.)",
    en="I couldn't make out that voice message: please send it again or type it. "
    "(음성 메시지를 알아듣지 못했어요.)",
)
"""A voice note whose transcription failed (a format or length not read, the provider refused or did
not answer, no words heard); both languages, as above."""
FILE_TOO_BIG = Text(
    ko="{name} 파일이 너무 커서 열지 못했어요 ({limit_mb} MB까지 받아요). 더 작게 보내 주세요.",
    en="I couldn't open {name}: it's too big (I take files up to {limit_mb} MB). Please send a smaller one.",
)
FILE_NOT_READ = Text(
    ko="{name} 파일은 읽을 수 없는 형식이에요. "
    "사진(JPEG, PNG, WebP, GIF, HEIC), PDF, 음성 메시지를 보내 주세요.",
    en="I can't read {name}: I read pictures (JPEG, PNG, WebP, GIF, HEIC), PDFs and voice notes.",
)
FILE_UNREACHABLE = Text(
    ko="{name} 파일을 가져오지 못했어요. 잠시 후 다시 보내 주세요.",
    en="I couldn't get {name} from the chat. Please send it again in a moment.",
)
FILE_NOT_SEEN = Text(
    ko="{name} 파일을 받았지만 지금 쓰는 모델은 사진이나 문서를 볼 수 없어요. 내용을 글로 적어 주세요.",
    en="I got {name}, but the model I run on can't look at pictures or documents. "
    "Please tell me what it says.",
)
"""A file the server fetched, but the configured model reads no such input (the offline model)."""
MESSAGE_TOO_LONG = Text(
    ko="메시지가 너무 길어요 ({length}자). {limit}자 이내로 나눠서 보내 주세요.",
    en="Your message is too long ({length} characters). Please keep it under {limit} characters.",
)

# -- the confirmation dialog (interaction.confirm) of the confirmation gate

CONFIRM_LABEL = Text(ko="확인", en="Confirm")
CANCEL_LABEL = Text(ko="취소", en="Cancel")
FIELD_TITLE = Text(ko="제목", en="Title")
FIELD_START = Text(ko="시작", en="Starts")
FIELD_END = Text(ko="종료", en="Ends")
FIELD_LOCATION = Text(ko="장소", en="Location")
CREATE_EVENT_TITLE = Text(ko="일정을 만들까요?", en="Create this event?")
CREATE_EVENT = Text(ko="{what} 일정을 만들어요.", en="Create {what}.")
CREATE_EVENT_INVITE = Text(ko=" 초대: {who}.", en=" Invite {who}.")
CREATE_EVENT_DEADLINE = Text(
    ko=" 가능한 시간 응답 마감: {deadline}.", en=" Invitees answer with their availability by {deadline}."
)
CREATE_EVENT_DESCRIPTION = Text(ko=" 설명: “{text}”", en=" Description: “{text}”")
UPDATE_EVENT_TITLE = Text(ko="일정을 바꿀까요?", en="Change this event?")
UPDATE_EVENT = Text(ko="{title} {when} 일정을 바꿔요: {changes}.", en="Change {title} {when}: {changes}.")
CHANGED_TITLE = Text(ko="제목 → “{value}”", en="title → “{value}”")
CHANGED_TIME = Text(ko="시간 → {value}", en="time → {value}")
CHANGED_PLACE = Text(ko="장소 → {value}", en="place → {value}")
CHANGED_DESCRIPTION = Text(ko="설명 → “{value}”", en="description → “{value}”")
ADDED_INVITEES = Text(ko="초대 추가 → {value}", en="invite {value}")
CHANGED_DEADLINE = Text(ko="응답 마감 → {value}", en="availability deadline → {value}")
REMOVED_PLACE = Text(ko="장소 삭제", en="remove the place")
REMOVED_DESCRIPTION = Text(ko="설명 삭제", en="remove the description")
REMOVED_INVITEES = Text(ko="초대 취소 → {value}", en="uninvite {value}")
REMOVED_DEADLINE = Text(ko="응답 마감 삭제", en="remove the availability deadline")
REMOVED_GUESTS = Text(ko="게스트 제외 → {value}", en="remove guests {value}")
NO_CHANGES = Text(ko="변경 없음", en="no changes")
INVITE_TITLE = Text(ko="초대를 보낼까요?", en="Send these invitations?")
INVITE = Text(ko="{who} 님을 {title} {when} 일정에 초대해요.", en="Invite {who} to {title} {when}.")
GUESTS_INVITED = Text(
    ko=" 게스트 {who} 님에게는 어시스턴트와의 1:1 채팅으로 초대장을 보내요.",
    en=" Guests ({who}) get the invitation in a chat with the assistant.",
)
PHONE_GUESTS_INVITED = Text(
    ko=" 전화번호 {who}(으)로도 초대장을 보내요.", en=" The invitation also goes to the numbers {who}."
)
ADDED_GUESTS = Text(
    ko="게스트 추가 → {value} (초대장 발송)", en="add guests {value} (they get an invitation)"
)
CANCEL_TITLE = Text(ko="일정을 취소할까요?", en="Cancel this event?")
CANCEL = Text(ko="{title} {when} 일정을 취소해요.", en="Cancel {title} {when}.")
CANCEL_TELL = Text(ko=" {who} 님에게 알려요.", en=" {who} will be told.")
CANCEL_REASON = Text(ko=" 사유: {reason}", en=" Reason: {reason}")
RELAY_TITLE = Text(ko="메시지를 보낼까요?", en="Send this message?")
RELAY = Text(ko="{who} 님에게 메시지를 보내요: {about}", en="Send {who} a message: {about}")
FORGET_TITLE = Text(ko="기억을 지울까요?", en="Forget this?")
FORGET = Text(ko="이 기억을 영구히 지워요: {text}", en="Permanently forget: {text}")
GENERIC_TITLE = Text(ko="실행할까요?", en="Allow {action}?")
GENERIC = Text(ko="{tool} 실행 ({details})", en="The assistant wants to run {tool} with {details}.")

# -- what "always" in a confirmation dialog would cover (params.always.covers)

ALWAYS_CREATE_EVENT = Text(
    ko="‘항상 허용’: {days}일 동안 묻지 않고 일정을 만들어요. "
    "{anyone} 초대하거나 {description} 다시 물어봐요.",
    en="“Always”: for {days} days, events are created without asking you, unless one invites {anyone} "
    "or has {description}.",
)
ALWAYS_UPDATE_EVENT = Text(
    ko="‘항상 허용’: {days}일 동안 묻지 않고 일정을 바꿔요. {anyone} 초대하거나 {description} 다시 물어봐요.",
    en="“Always”: for {days} days, your events are changed without asking you, unless a change invites "
    "{anyone} or {description}.",
)
ALWAYS_ANYONE = Text(ko="누군가를", en="anyone")
ALWAYS_ANYONE_BUT = Text(ko="{who} 님 외의 사람을", en="anyone but {who}")
ALWAYS_ANY_DESCRIPTION = Text(ko="설명을 넣으면", en="a description")
ALWAYS_OTHER_DESCRIPTION = Text(ko="이 설명과 다른 설명을 넣으면", en="a description other than this one")
ALWAYS_DESCRIPTION_CHANGE = Text(ko="설명을 바꾸면", en="changes the description")
ALWAYS_OTHER_DESCRIPTION_CHANGE = Text(
    ko="설명을 이와 다르게 바꾸면", en="changes the description in any other way"
)
ALWAYS_RELAY = Text(
    ko="‘항상 허용’: {days}일 동안 {who} 님에게 보내는 메시지는 묻지 않고 써서 보내요. "
    "다른 사람에게 보낼 때는 다시 물어봐요.",
    en="“Always”: for {days} days, messages to {who} are written and sent without asking you; a "
    "message to anyone else asks again.",
)
ALWAYS_SAVE_MEMORY = Text(
    ko="‘항상 허용’: {days}일 동안 기억해 달라는 내용을 묻지 않고 저장해요.",
    en="“Always”: for {days} days, what you ask me to remember is saved without asking you.",
)
ALWAYS_NOT_IN_GROUPS = Text(ko=" 그룹 채팅에서는 항상 물어봐요.", en=" In group chats it always asks.")

# -- what the assistant tells people about an event, in their 1:1 channel with it

INVITATION = Text(
    ko="{organizer} 님이 “{title}” 일정에 초대했어요: {when}{place}. "
    "참석할 수 있는 날짜를 이 채팅에 답장으로 알려 주세요{deadline}.",
    en="{organizer} invites you to “{title}”: {when}{place}. "
    "Reply here with the dates you're available{deadline}.",
)
"""An invitation (an invitee's or a guest's); ``{when}`` in a time zone it names."""
INVITATION_PLACE = Text(ko=", 장소 {place}", en=", at {place}")
INVITATION_DEADLINE = Text(ko=" ({deadline}까지)", en=" by {deadline}")
SMS_INVITATION = Text(
    ko='{organizer} 님의 초대: "{title}" {when}. {answer}',
    en='{organizer} invites you to "{title}": {when}. {answer}',
)
"""An invitation by text message (a guest invited by phone number): plain, short, ASCII quotes."""
SMS_PICK = Text(ko="{deadline}가능한 날짜를 알려 주세요: {link}", en="Pick your dates{deadline}: {link}")
"""How they answer when they have a guest page: there (a reply works too)."""
SMS_REPLY = Text(
    ko="{deadline}가능한 날짜를 답장으로 알려 주세요.", en="Reply with the dates you can come{deadline}."
)
SMS_DEADLINE = Text(ko="{deadline}까지 ", en=" by {deadline}")
AVAILABILITY_REMINDER = Text(
    ko="다시 알려 드려요: {organizer} 님이 “{title}” ({when}) 일정에 참석할 수 있는 날짜를 기다리고 있어요. "
    "{deadline}까지 이 채팅에 답장으로 알려 주세요.",
    en="A reminder: {organizer} is waiting for the dates you're available for “{title}” ({when}). "
    "Please reply here by {deadline}.",
)
"""Sent once to an invited person who has not given their availability, before the deadline."""
EVENT_CHANGED = Text(
    ko="{organizer} 님이 “{title}” 일정을 바꿨어요: {when}{place}. "
    "참석할 수 있는 날짜가 달라졌다면 이 채팅에 답장으로 알려 주세요{deadline}.",
    en="{organizer} changed “{title}”: now {when}{place}. "
    "If the dates you're available have changed, reply here{deadline}.",
)
"""An invited person is told the event's title, time, place or deadline changed."""
EVENT_CANCELLED = Text(
    ko="{organizer} 님이 “{title}” ({when}) 일정을 취소했어요.{reason}",
    en="{organizer} cancelled “{title}” ({when}).{reason}",
)
