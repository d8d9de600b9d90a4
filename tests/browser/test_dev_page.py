"""The /dev page in a real headless Chromium against a real ``truloop-assistant dev`` server.

Each test writes in a channel of its own and asserts what a person sees. The browser runs in UTC
while jeff is in Seoul, so the sample calendar must be built in jeff's zone, not the browser's.
"""

from __future__ import annotations

import httpx
from selenium.webdriver.common.by import By

from tests.support import LOCATION_TOOL

from .page import PHONE, DevPage


def test_the_week_s_calendar_is_shown_at_its_times_in_jeff_s_zone_on_a_utc_phone(page: DevPage) -> None:
    channel = page.new_channel("calendar")
    page.open(channel)
    assert page.js("return Intl.DateTimeFormat().resolvedOptions().timeZone") in ("UTC", "Etc/UTC")
    assert page.js("return window.innerWidth") == 390  # laid out for the phone, not a 980 px desktop

    # Laid out at the phone's width (a page without a viewport tag is laid out 980 px wide, tiny).
    assert page.driver.execute_script("return document.documentElement.clientWidth") == PHONE[0]
    page.say("이번 주 일정 알려줘")
    assert page.bubbles("mine") == ["이번 주 일정 알려줘"]
    card = page.card("calendar.getEvents")
    assert "캘린더에서 이번 주 일정을 확인하고 있어요" in card.text and "Waiting" in card.text
    page.screenshot("calendar-request-phone")
    page.tap(card, "Share sample events")

    answer = page.assistant_says("Lunch with Mina")
    assert "10:00–11:00 팀 미팅" in answer and "12:00–13:00 Lunch with Mina" in answer, answer
    answered = page.card("calendar.getEvents", "answered")
    assert "Answered: Share sample events" in answered.text
    assert not answered.find_elements(By.CSS_SELECTOR, ".actions button")
    # Every message has its time, and the assistant's carry its name.
    assert all(t.text for t in page.driver.find_elements(By.CSS_SELECTOR, "#log .row time"))
    assert "truloop-assistant" in page.driver.find_element(By.CSS_SELECTOR, "#log .row.assistant .name").text
    page.screenshot("calendar-answered-phone")

    page.as_desktop()
    page.screenshot("calendar-answered-desktop")
    page.as_phone()

    # The page builds sample events at their wall-clock times in the zone of whoever it plays: the
    # directory's, else the server's (TRULOOP_TIMEZONE, Asia/Seoul here), with summer time where it has one.
    def first_event(user: str, start: str) -> str:
        return page.js("return sampleEvents({startDate: arguments[0]}, arguments[1])", start, user)["events"][
            0
        ]["start"]["dateTime"]

    assert first_event("sarah", "2026-11-23T00:00:00-08:00") == "2026-11-24T10:00:00-08:00"
    assert first_event("sarah", "2026-07-06T00:00:00-07:00") == "2026-07-07T10:00:00-07:00"
    assert first_event("kim", "2026-11-23T00:00:00+09:00") == "2026-11-24T10:00:00+09:00"
    assert first_event("jeff", "2026-11-30T00:00:00+09:00") == "2026-12-01T10:00:00+09:00"


def test_one_event_is_confirmed_and_one_declined_in_the_phone_s_dialog(page: DevPage) -> None:
    channel = page.new_channel("confirm")
    page.open(channel)

    page.say("내일 오후 3시에 팀 회의 잡아줘 @mina")
    dialog = page.dialog()
    [rpc] = page.requests(channel)
    params = rpc["params"]
    assert page.by_id("confirm-title").text == params["title"] == "일정을 만들까요?"
    assert page.by_id("confirm-message").text == params["message"]
    assert page.by_id("confirm-ok").text == params["confirmLabel"] == "확인"
    assert page.by_id("confirm-cancel").text == params["cancelLabel"] == "취소"
    assert dialog.is_displayed()
    page.screenshot("confirm-dialog-korean-phone")
    page.by_id("confirm-ok").click()
    page.dialog_closed()
    page.assistant_says("일정을 만들었어요", "팀 회의")
    assert "Answered: 확인" in page.card("interaction.confirm", "answered").text

    page.say("schedule a design review tomorrow at 10:30 am")
    page.dialog()
    rpc = page.requests(channel)[-1]
    assert page.by_id("confirm-title").text == rpc["params"]["title"] == "Create this event?"
    assert (page.by_id("confirm-ok").text, page.by_id("confirm-cancel").text) == (
        rpc["params"]["confirmLabel"],
        rpc["params"]["cancelLabel"],
    )
    page.by_id("confirm-cancel").click()
    page.dialog_closed()
    page.assistant_says("OK, I won't do that.")
    assert [c.get_attribute("data-state") for c in page.cards()] == ["answered", "answered"]


def test_a_calendar_without_permission_is_explained(page: DevPage) -> None:
    page.open(page.new_channel("permission"))
    page.say("이번 주 일정 알려줘")
    page.tap(page.card("calendar.getEvents"), "No permission")
    answer = page.assistant_says("캘린더 권한")
    assert "허용" in answer
    page.screenshot("calendar-permission-required-phone")


def test_after_a_reload_answered_and_superseded_requests_cannot_be_answered_again(page: DevPage) -> None:
    channel = page.new_channel("reload")
    page.open(channel)
    page.say("이번 주 일정 알려줘")
    page.tap(page.card("calendar.getEvents"), "Share sample events")
    page.assistant_says("Lunch with Mina")
    page.say("이번 주 일정 알려줘")
    page.card("calendar.getEvents")  # asked again; this time the phone does not answer...
    page.say("오늘 무슨 요일이야?")  # ...and a new message takes its place
    page.card("calendar.getEvents", "superseded")
    page.assistant_says("요일")

    page.driver.refresh()
    page.open(channel)
    answered = page.card("calendar.getEvents", "answered")
    superseded = page.card("calendar.getEvents", "superseded")
    assert "Answered" in answered.text and "Superseded" in superseded.text
    assert "Answered: Share sample events" in answered.text  # the page remembers what it answered
    for card in (answered, superseded):
        assert not card.find_elements(By.CSS_SELECTOR, ".actions button"), card.text
    assert len(page.cards()) == 2 and not page.driver.find_elements(
        By.CSS_SELECTOR, '.card[data-state="pending"]'
    )
    page.screenshot("reload-request-states-phone")


def test_a_server_out_of_reach_shows_a_banner_and_a_failed_send_keeps_the_text(page: DevPage) -> None:
    channel = page.new_channel("offline")
    page.open(channel)
    banner = page.by_id("banner")
    assert not banner.is_displayed()
    driver = page.driver
    driver.execute_cdp_cmd("Network.enable", {})
    offline = {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
    driver.execute_cdp_cmd("Network.emulateNetworkConditions", offline)
    try:
        page.until(lambda d: banner.is_displayed(), "the unreachable-server banner")
        assert "Can't reach the dev server" in banner.text

        box = page.by_id("message")
        box.send_keys("hello?")
        page.by_id("send").click()
        error = page.until(lambda d: (e := page.by_id("send-error")).is_displayed() and e, "the send error")
        assert "Not sent" in error.text
        assert box.get_attribute("value") == "hello?"  # kept, to send again
        page.screenshot("server-unreachable-phone")
    finally:
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {**offline, "offline": False})
        driver.execute_cdp_cmd("Network.disable", {})

    page.until(lambda d: not banner.is_displayed(), "the banner to clear once the server is back")
    page.by_id("send").click()
    page.until(lambda d: page.bubbles("mine") == ["hello?"], "the message sent again")
    page.until(lambda d: not page.by_id("send-error").is_displayed(), "the send error to clear")
    assert page.by_id("message").get_attribute("value") == ""
    page.assistant_says()  # and answered


def test_a_guest_outside_the_directory_gets_the_invitation_in_their_direct_channel(page: DevPage) -> None:
    channel = page.new_channel("guest")
    page.open(channel)
    users = page.option_values()
    assert {"jeff", "mina", "sarah", "kim"} <= set(users)  # the directory's members and a guest

    page.say("schedule a lunch tomorrow at noon with guest @kim")
    page.dialog()
    page.by_id("confirm-ok").click()
    page.assistant_says("Lunch")

    page.choose_user("kim")  # the same channel, seen by someone else: jeff is another person now
    assert [c.get_attribute("data-state") for c in page.cards()] == ["answered"]  # as it is, at once
    assert page.bubbles("mine") == [] and page.bubbles("other") == [
        "schedule a lunch tomorrow at noon with guest @kim"
    ]
    other = page.driver.find_element(By.CSS_SELECTOR, "#log .row.other .name").text
    assert "Jeff Kim (jeff)" in other
    assert page.bubble_color("other") != page.bubble_color("assistant")
    page.screenshot("another-person-s-message-phone")
    page.open_panel()
    assert "not in the directory" in page.by_id("user-info").text
    page.by_id("direct").click()
    page.close_panel()
    page.until(lambda d: "relay-truloop-assistant-kim" in page.by_id("subtitle").text, "kim's direct channel")
    page.assistant_says("Lunch")  # the invitation
    page.say("what am I invited to?")
    page.assistant_says("Lunch", count=2)
    names = [n.text for n in page.driver.find_elements(By.CSS_SELECTOR, "#log .row .name")]
    assert "You (kim)" in names and all("truloop-assistant" in n for n in names if n != "You (kim)")
    assert len({page.bubble_color("mine"), page.bubble_color("assistant")}) == 2
    page.screenshot("guest-direct-channel-phone")


def test_an_app_declared_tool_is_called_and_answered_from_the_page(page: DevPage, dev_server: str) -> None:
    page.open(page.new_channel("app-tool"))
    page.open_panel()
    page.by_id("declare").click()
    page.until(lambda d: "get_current_location" in page.by_id("tools-state").text, "the tool declared")
    token = httpx.post(f"{dev_server}/dev/api/token", json={"user_id": "jeff"}).json()["token"]
    declared = httpx.get(
        f"{dev_server}/api/v1/agent/client-tools", headers={"authorization": f"Bearer {token}"}
    ).json()
    assert declared["tools"] == [LOCATION_TOOL]
    page.screenshot("app-tool-declared-panel-phone")
    page.close_panel()

    page.say("what is my current location?")
    card = page.card("location.getCurrent")
    assert "Checking on your phone" in card.text and "null" not in card.text  # no empty summary shown
    page.screenshot("app-tool-request-phone")
    page.tap(card, "Share sample location")
    page.assistant_says("Seoul City Hall")
    page.screenshot("app-tool-answered-phone")


def test_a_built_in_method_without_a_card_of_its_own_is_answered_with_its_declared_example(
    page: DevPage,
) -> None:
    page.open(page.new_channel("published"))
    page.js("delete METHODS['permissions.getStatus']")  # as for a tool declared after the page was written
    page.say("is the app allowed to use my camera?")
    card = page.card("permissions.getStatus")
    assert "get_permission_status" in card.text and "permission: camera" in card.text
    page.tap(card, "Answer with the example")
    page.assistant_says("granted")


def test_a_time_is_changed_in_the_dialog_and_a_refusal_gives_its_reason(page: DevPage) -> None:
    channel = page.new_channel("decide")
    page.open(channel)

    page.say("내일 오후 3시에 팀 회의 잡아줘")
    page.dialog()
    labels = [s.text for s in page.driver.find_elements(By.CSS_SELECTOR, "#confirm-fields label span")]
    assert labels == ["제목", "시작", "종료", "장소"]
    assert page.by_id("edit-title").get_attribute("value") == "팀 회의"
    assert str(page.by_id("edit-start_time").get_attribute("value")).endswith("T15:00")
    # The person moves it an hour later (as a time picker would set the fields).
    for name, clock in (("start_time", "16:00"), ("end_time", "17:00")):
        field = page.by_id(f"edit-{name}")
        page.js("arguments[0].value = arguments[0].value.slice(0, 11) + arguments[1]", field, clock)
    page.screenshot("confirm-dialog-edit-phone")
    page.by_id("confirm-ok").click()
    page.dialog_closed()
    page.assistant_says("바꾸신 대로(시작, 종료) 일정을 만들었어요", "“팀 회의”", "16:00–17:00")

    page.say("schedule a design review tomorrow at 10:30 am")
    page.dialog()
    page.by_id("confirm-reason").send_keys("Mina is away")
    page.by_id("confirm-cancel").click()
    page.dialog_closed()
    page.assistant_says("OK, I won't do that (“Mina is away”).")
