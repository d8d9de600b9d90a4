"""What the built-in offline model says: its capability reply and how it words tool results."""

from __future__ import annotations

from . import Text

CAPABILITIES = Text(
    ko="저는 오프라인 개발용 모델이라 몇 가지 요청만 이해해요: 지금 시간(다른 도시 포함), 날짜의 요일, "
    "이번 주 캘린더 일정, 일정 만들기(예: '내일 오후 3시에 팀 회의 잡아줘'), "
    "사내 문서 검색(예: '연차 정책 알려줘'), "
    "사람 찾기(예: 'mina 연락처'), 기억하기(예: '기억해줘: 나는 창가 자리를 좋아해').",
    en="I'm the offline development model, so I only understand a few requests: the current time (also in "
    "other cities), the day of the week of a date, this week's calendar, creating an event ('schedule a team "
    "meeting tomorrow at 3pm'), searching the handbook ('what is the vacation policy?'), finding people "
    "('who is mina?') and remembering things ('remember that I like window seats').",
)
CHECKING_CALENDAR = Text(
    ko="캘린더에서 이번 주 일정을 확인하고 있어요…", en="Checking your calendar for this week…"
)

RETRIED = Text(
    ko="죄송해요, 요청을 처리하지 못했어요. 다르게 말씀해 주시겠어요?",
    en="Sorry, I couldn't handle that request. Could you put it differently?",
)
DENIED = Text(ko="알겠어요, 하지 않을게요.", en="OK, I won't do that.")
RESULT = Text(ko="{tool} 결과: {data}", en="Result of {tool}: {data}")
WEEKDAY_OF = Text(ko="{date}은 {weekday_ko}이에요.", en="{date} is a {weekday}.")
NOW = Text(ko="지금은 {day} {clock}이에요 ({zone}).", en="It is {clock} on {day} ({zone}).")

# -- failures: "<what could not be done>: <reason>. <what to do>"
COULD_NOT = {
    "get_current_datetime": Text(ko="현재 시간을 확인하지 못했어요", en="I couldn't get the current time"),
    "get_day_of_week": Text(ko="요일을 확인하지 못했어요", en="I couldn't work out the day of the week"),
    "get_calendar_events": Text(ko="캘린더를 확인하지 못했어요", en="I couldn't check your calendar"),
    "create_event": Text(ko="일정을 만들지 못했어요", en="I couldn't create the event"),
    "search_knowledge_base": Text(ko="문서를 찾지 못했어요", en="I couldn't search the handbook"),
    "search_users": Text(ko="사람을 찾지 못했어요", en="I couldn't look that person up"),
    "save_memory": Text(ko="기억하지 못했어요", en="I couldn't remember that"),
    "search_memories": Text(ko="기억을 찾지 못했어요", en="I couldn't look through what I remember"),
    "search_places": Text(ko="장소를 찾지 못했어요", en="I couldn't search for places"),
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
CALENDAR_ACCESS = Text(ko="캘린더 권한", en="calendar access")
THE_PERMISSION = Text(ko="필요한 권한", en="the permission")
TRY_AGAIN = Text(ko="잠시 후 다시 시도해 주세요.", en="Please try again in a moment.")

# -- results
NO_EVENTS = Text(ko="이번 주에는 캘린더에 일정이 없어요.", en="You have nothing in your calendar this week.")
EVENT_COUNT = Text(ko="이번 주 일정은 {count}개예요:", en="You have {count} event{s} this week:")
NO_TITLE = Text(ko="(제목 없음)", en="(no title)")
CREATED = Text(ko="일정을 만들었어요: “{title}”.", en="Done: “{title}” is in your events.")
CREATED_AT = Text(ko="일정을 만들었어요: “{title}” {day} {span}.", en="Done: “{title}” on {day}, {span}.")
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
