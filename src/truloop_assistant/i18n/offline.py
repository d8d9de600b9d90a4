"""What the built-in offline model says: its capability reply and how it words tool results."""

from __future__ import annotations

from . import Text

CAPABILITIES = Text(
    ko="저는 오프라인 개발용 모델이라 몇 가지 요청만 이해해요: 지금 시간(다른 도시 포함), 날짜의 요일, "
    "이번 주 캘린더 일정, 일정 만들기(예: '내일 오후 3시에 팀 회의 잡아줘', "
    "게스트도 초대: '내일 12시에 점심 잡아줘 @mina 게스트 @kim 금요일까지 답'), "
    "일정 취소(예: '점심 약속 취소해줘'), 초대받은 일정 보기(예: '초대받은 거 뭐 있어?')와 "
    "가능한 날짜 알려 주기(예: '화요일이랑 수요일 괜찮아요'), 사내 문서 검색(예: '연차 정책 알려줘'), "
    "사람 찾기(예: 'mina 연락처'), 기억하기(예: '기억해줘: 나는 창가 자리를 좋아해').",
    en="I'm the offline development model, so I only understand a few requests: the current time (also in "
    "other cities), the day of the week of a date, this week's calendar, creating an event ('schedule a team "
    "meeting tomorrow at 3pm', also with guests: 'schedule a lunch tomorrow at noon with @mina and guest "
    "@kim, answers by friday'), cancelling one ('cancel the lunch'), what you are invited to ('what am "
    "I invited to?') and your dates for it ('Tuesday and Wednesday work for me'), searching the handbook "
    "('what is the vacation policy?'), finding people ('who is mina?') and remembering things ('remember "
    "that I like window seats').",
)
GUEST_CAPABILITIES = Text(
    ko="저는 오프라인 개발용 모델이라 몇 가지 요청만 이해해요: "
    "초대받은 일정 보기(예: '초대받은 거 뭐 있어?'), "
    "가능한 날짜 알려 주기(예: '12월 2일, 3일 가능해요', '화요일 괜찮아요'), 지금 시간, 날짜의 요일.",
    en="I'm the offline development model, so I only understand a few requests: the events you're invited "
    "to ('what am I invited to?'), the dates that work for you ('I can make it on Dec 2 and 3', 'tuesday "
    "works'), the current time and the day of the week of a date.",
)
CHECKING_CALENDAR = Text(
    ko="캘린더에서 이번 주 일정을 확인하고 있어요…", en="Checking your calendar for this week…"
)

RETRIED = Text(
    ko="죄송해요, 요청을 처리하지 못했어요. 다르게 말씀해 주시겠어요?",
    en="Sorry, I couldn't handle that request. Could you put it differently?",
)
DENIED = Text(ko="알겠어요, 하지 않을게요.", en="OK, I won't do that.")
DENIED_BECAUSE = Text(ko="알겠어요, 하지 않을게요 (“{reason}”).", en="OK, I won't do that (“{reason}”).")
EDITED = Text(ko="바꾸신 대로({fields}) ", en="With your changes ({fields}): ")
CHECKING_PHONE = Text(ko="휴대폰에서 확인하고 있어요…", en="Checking on your phone…")
RESULT = Text(ko="{tool} 결과: {data}", en="Result of {tool}: {data}")
WEEKDAY_OF = Text(ko="{date}은 {weekday_ko}이에요.", en="{date} is a {weekday}.")
NOW = Text(ko="지금은 {day} {clock}이에요 ({zone}).", en="It is {clock} on {day} ({zone}).")

# -- failures: "<what could not be done>: <reason>. <what to do>"
COULD_NOT = {
    "get_current_datetime": Text(ko="현재 시간을 확인하지 못했어요", en="I couldn't get the current time"),
    "get_day_of_week": Text(ko="요일을 확인하지 못했어요", en="I couldn't work out the day of the week"),
    "create_event": Text(ko="일정을 만들지 못했어요", en="I couldn't create the event"),
    "search_knowledge_base": Text(ko="문서를 찾지 못했어요", en="I couldn't search the handbook"),
    "search_users": Text(ko="사람을 찾지 못했어요", en="I couldn't look that person up"),
    "save_memory": Text(ko="기억하지 못했어요", en="I couldn't remember that"),
    "search_memories": Text(ko="기억을 찾지 못했어요", en="I couldn't look through what I remember"),
    "search_places": Text(ko="장소를 찾지 못했어요", en="I couldn't search for places"),
    "get_events": Text(ko="일정을 확인하지 못했어요", en="I couldn't look up your events"),
    "update_event": Text(ko="일정을 바꾸지 못했어요", en="I couldn't change the event"),
    "invite_to_event": Text(ko="초대하지 못했어요", en="I couldn't invite them"),
    "cancel_event": Text(ko="일정을 취소하지 못했어요", en="I couldn't cancel the event"),
    "list_invited_events": Text(
        ko="초대받은 일정을 확인하지 못했어요", en="I couldn't look up your invitations"
    ),
    "get_event_details": Text(ko="일정 정보를 확인하지 못했어요", en="I couldn't get the event's details"),
    "update_guest_availability": Text(ko="가능한 날짜를 저장하지 못했어요", en="I couldn't save your dates"),
    "update_availability": Text(ko="가능한 날짜를 저장하지 못했어요", en="I couldn't save your dates"),
}
COULD_NOT_RUN = Text(ko="{tool} 도구를 실행하지 못했어요", en="I couldn't run {tool}")
FAILED = Text(ko="{action}. {hint}", en="{action}. {hint}")
NOT_ALLOWED = Text(
    ko="{action}: {what}이 허용되지 않았어요. 설정에서 {what}을 허용한 뒤 다시 말씀해 주세요.",
    en="{action}: {what} isn't allowed. Please allow {what} in Settings and ask me again.",
)
NO_ANSWER_FROM_PHONE = Text(
    ko="{action}: 휴대폰이 제때 응답하지 않았어요. 앱을 연 채로 다시 말씀해 주세요.",
    en="{action}: your phone didn't answer in time. Please try again with the app open.",
)
TOOK_TOO_LONG = Text(
    ko="{action}: 시간이 너무 오래 걸렸어요. 잠시 후 다시 시도해 주세요.",
    en="{action}: it took too long. Please try again in a moment.",
)
NOT_CONFIGURED = Text(
    ko="{action}: 이 서버에는 그 기능이 설정되어 있지 않아요 (관리자가 API 키를 설정해야 해요).",
    en="{action}: that isn't set up on this server (an administrator needs to add its API key).",
)
NOT_IN_DIRECTORY = Text(
    ko="{action}: {ids}은(는) 사내 디렉터리에 없어요. "
    "외부 사람은 '게스트 @{first}'처럼 게스트로 초대해 주세요.",
    en="{action}: {ids} isn't in the directory. To invite someone from outside, write 'guest @{first}'.",
)
DEADLINE_PASSED = Text(
    ko="{action}: 답변 마감이 지났어요. 주최자에게 직접 알려 주세요.",
    en="{action}: the deadline for answering has passed. Please tell the organizer directly.",
)
EVENT_CANCELLED = Text(ko="{action}: 취소된 일정이에요.", en="{action}: that event has been cancelled.")
GUEST_IN_DIRECTORY = Text(
    ko="{ids}은(는) 사내 디렉터리에 있는 사람이라 게스트가 아니라 참석자로 초대해야 해요. "
    "'게스트' 없이 다시 말씀해 주세요.",
    en="{ids} is in the directory, so they can't be a guest: ask again without 'guest' and I'll invite "
    "them directly.",
)
DATES_AFTER_DEADLINE = Text(
    ko="가능한 날짜는 답변 마감일인 {last}까지만 받을 수 있어요. 그때까지의 날짜로 다시 말씀해 주세요.",
    en="I can only take dates up to the answer deadline, {last}. Please give dates up to then.",
)
DATES_IN_PAST = Text(
    ko="지난 날짜는 저장할 수 없어요. 오늘 이후의 날짜로 말씀해 주세요.",
    en="I can't save dates that have passed. Please give dates from today on.",
)
CALENDAR_ACCESS = Text(ko="캘린더 권한", en="calendar access")
THE_PERMISSION = Text(ko="필요한 권한", en="the permission")
TRY_AGAIN = Text(ko="잠시 후 다시 시도해 주세요.", en="Please try again in a moment.")

# -- results
NO_EVENTS = Text(ko="이번 주에는 캘린더에 일정이 없어요.", en="You have nothing in your calendar this week.")
EVENT_COUNT = Text(ko="이번 주 일정은 {count}개예요:", en="You have {count} event{s} this week:")
NO_TITLE = Text(ko="(제목 없음)", en="(no title)")
CREATED = Text(ko="일정을 만들었어요: “{title}”.", en="Done: “{title}” is in your events.")
CREATED_AT = Text(ko="일정을 만들었어요: “{title}” {day} {span}.", en="Done: “{title}” on {day}, {span}.")
GUEST_INVITED = Text(
    ko="게스트 {ids}님에게 대화방으로 초대장을 보냈어요{by}.",
    en="Guest {ids} got an invitation in their chat with me{by}.",
)
GUESTS_INVITED = Text(
    ko="게스트 {ids}님에게 대화방으로 초대장을 보냈어요{by}.",
    en="Guests {ids} each got an invitation in their chat with me{by}.",
)
ANSWERS_BY = Text(ko=" ({when}까지 가능한 날짜를 받아요)", en=" (they answer with their dates by {when})")
INVITATION_NOT_DELIVERED = Text(
    ko="{ids}님에게는 초대장을 보내지 못했어요 (초대는 되어 있어요).",
    en="I couldn't deliver the invitation to {ids} (they're invited anyway).",
)
CANCELLED = Text(ko="“{title}” 일정을 취소했어요.", en="Cancelled “{title}”.")
CANCELLED_AT = Text(ko="{when} “{title}” 일정을 취소했어요.", en="Cancelled “{title}” ({when}).")
TOLD = Text(ko="{ids}님에게 알렸어요.", en="I let {ids} know.")
NOT_TOLD = Text(ko="{ids}님에게는 알리지 못했어요.", en="I couldn't reach {ids}.")
NOBODY_TO_TELL = Text(ko="초대한 사람은 없었어요.", en="Nobody else was invited.")
NOTHING_TO_CANCEL = Text(
    ko="취소할 일정이 없어요: 앞으로 예정된 일정이 없어요.", en="You have no upcoming events to cancel."
)
WHICH_TO_CANCEL = Text(
    ko="어떤 일정을 취소할지 모르겠어요. 앞으로 예정된 일정이에요:\n{lines}\n"
    "취소할 일정의 제목을 말씀해 주세요.",
    en="I couldn't tell which event you mean. Your upcoming events:\n{lines}\nTell me the title of the one "
    "to cancel.",
)
NO_UPCOMING_EVENTS = Text(ko="앞으로 예정된 일정이 없어요.", en="You have no upcoming events.")
WHICH_EVENT = Text(
    ko="어떤 일정인지 모르겠어요. 앞으로 예정된 일정이에요:\n{lines}\n일정의 제목을 말씀해 주세요.",
    en="I couldn't tell which event you mean. Your upcoming events:\n{lines}\nTell me its title.",
)
NOT_INVITED = Text(ko="지금 초대받은 일정이 없어요.", en="You're not invited to any events right now.")
NOT_INVITED_TO_ANSWER = Text(
    ko="지금 초대받은 일정이 없어서 날짜를 저장할 곳이 없어요.",
    en="You're not invited to any events right now, so there's nothing to save those dates for.",
)
WHICH_INVITATION = Text(
    ko="어느 일정의 날짜인가요?\n{lines}\n일정 제목과 함께 다시 말씀해 주세요.",
    en="Which event are those dates for?\n{lines}\nPlease tell me again with the event's title.",
)
INVITATIONS = Text(ko="초대받은 일정이에요:\n{lines}", en="You're invited to:\n{lines}")
ORGANIZED_BY = Text(ko="주최 {name}", en="organized by {name}")
ANSWER_BY = Text(ko="{when}까지 답변", en="answer by {when}")
YOUR_DATES = Text(ko="보낸 날짜: {dates}", en="your dates: {dates}")
TELL_ME_YOUR_DATES = Text(
    ko="가능한 날짜를 말씀해 주세요 (예: '12월 2일, 3일 가능해요').",
    en="Tell me the dates that work for you (e.g. 'I can make it on Dec 2 and 3').",
)
EVENT_HEADLINE = Text(ko="“{title}” {when}", en="“{title}”, {when}")
WHERE = Text(ko="장소", en="Where")
ORGANIZER = Text(ko="주최", en="Organizer")
ABOUT = Text(ko="내용", en="Details")
DEADLINE = Text(ko="답변 마감", en="Answer by")
YOUR_DATES_LABEL = Text(ko="보낸 가능한 날짜", en="Your dates")
CHECKING_PERMISSION = Text(ko="권한을 확인하고 있어요…", en="Checking a permission…")
PERMISSION_STATUS = Text(
    ko="휴대폰의 권한 상태: {status}{again}", en="The permission on your phone is {status}{again}"
)
PERMISSION_CAN_ASK = Text(ko=" (다시 요청할 수 있어요)", en=" (the app can ask for it again)")
GUESTS_DATES = Text(ko="초대한 사람들이 가능하다고 한 날짜:", en="The invited people's dates:")
NO_GUESTS = Text(ko="초대한 사람은 없어요.", en="Nobody is invited.")
NO_ANSWER_YET = Text(ko="아직 답하지 않았어요", en="no answer yet")
DATES_SAVED = Text(
    ko="“{title}”에 가능한 날짜를 저장했어요: {dates}. 주최자가 확인할 수 있어요.",
    en="Saved your dates for “{title}”: {dates}. The organizer can see them.",
)
NO_DATES_SAVED = Text(
    ko="“{title}”에는 가능한 날짜가 없다고 저장했어요.",
    en="Noted for “{title}”: none of the dates work for you.",
)
NOTHING_IN_HANDBOOK = Text(
    ko="사내 문서에서 관련 내용을 찾지 못했어요.", en="I found nothing about that in the handbook."
)
ACCORDING_TO = Text(
    ko="‘{title}’ 문서에 따르면: {snippet}{more}", en="According to ‘{title}’: {snippet}{more}"
)
SEE_ALSO = Text(ko=" (관련 문서: {others})", en=" (see also {others})")
NOBODY = Text(ko="그런 사람을 찾지 못했어요.", en="I couldn't find anyone like that.")
PEOPLE = Text(ko="찾은 사람:\n{lines}", en="Here's who I found:\n{lines}")
REMEMBERED = Text(ko="기억해 둘게요: {text}", en="Got it, I'll remember: {text}")
NO_MEMORIES = Text(ko="기억하고 있는 게 없어요.", en="I don't remember anything about that yet.")
MEMORIES = Text(ko="기억하고 있는 것:\n{lines}", en="Here's what I remember:\n{lines}")
NO_PLACES = Text(ko="찾는 장소가 없어요.", en="I found no places for that.")
PLACES = Text(ko="찾은 장소:\n{lines}", en="Places I found:\n{lines}")
