"""Two tabs of the /dev page signed in as the same person: two devices that both get each request.

A request's message follows its call: once the call is answered on one device, or superseded by a
new message, the server updates the message in place (``agent-rpc-settled``) and every device
closes its card, and its dialog, without a reload, saying what the server's update says.
"""

from __future__ import annotations

from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement

from .page import DevPage


def closed(tab: DevPage, method: str, state: str, says: str) -> WebElement:
    """Wait on ``tab`` for the card of ``method`` to close as ``state`` with the server's text."""
    tab.focus()
    selector = f'#log .card[data-method="{method}"][data-state="{state}"]'
    card = tab.until(
        lambda d: next((c for c in d.find_elements(By.CSS_SELECTOR, selector) if says in c.text), None),
        f"the {method} card to say {says!r}",
    )
    assert not card.find_elements(By.CSS_SELECTOR, ".actions button"), card.text
    return card


def test_a_request_answered_or_superseded_on_one_tab_closes_on_the_other(page: DevPage) -> None:
    channel = page.new_channel("devices")
    page.open(channel)
    other = page.another_tab()
    try:
        other.focus().open(channel)

        # The calendar, answered on the first tab: the second one's card closes.
        page.focus().say("이번 주 일정 알려줘")
        asked = page.card("calendar.getEvents")
        assert other.focus().card("calendar.getEvents").find_elements(By.CSS_SELECTOR, ".actions button")
        page.focus().tap(asked, "Share sample events")
        closed(other, "calendar.getEvents", "answered", "응답했어요.")
        other.screenshot("devices-answered-elsewhere-phone")
        page.focus().assistant_says("Lunch with Mina")
        closed(page, "calendar.getEvents", "answered", "Answered: Share sample events")

        # A confirmation open as a dialog on both: confirmed on one, the other's dialog goes.
        page.focus().say("schedule a design review tomorrow at 10:30 am")
        page.dialog()
        other.focus().dialog()
        page.focus().by_id("confirm-ok").click()
        page.dialog_closed()
        other.focus().dialog_closed()
        closed(other, "interaction.confirm", "answered", "Answered.")
        page.focus().assistant_says(count=2)

        # Asked again, then a new message written on the first tab takes the request's place.
        page.focus().say("이번 주 일정 알려줘")
        page.card("calendar.getEvents")
        other.focus().card("calendar.getEvents")
        page.focus().say("오늘 무슨 요일이야?")
        closed(other, "calendar.getEvents", "superseded", "새 메시지를 보내셔서 이 요청은 취소됐어요.")
        other.screenshot("devices-superseded-phone")
        page.focus().assistant_says("요일", count=3)

        # Each message once, as the server lists it (a changed message replaces itself).
        listed = [m["message_id"] for m in page.messages(channel)]
        for tab in (page, other):
            tab.focus().until(lambda d, tab=tab: tab.message_ids() == listed, "every message shown once")

        # Opened afresh, the settled requests show as closed, with what the server said.
        other.focus().driver.refresh()
        other.open(channel)
        closed(other, "calendar.getEvents", "answered", "응답했어요.")
        closed(other, "interaction.confirm", "answered", "Answered.")
        closed(other, "calendar.getEvents", "superseded", "새 메시지를 보내셔서 이 요청은 취소됐어요.")
        assert len(other.cards()) == 3
    finally:
        other.close_tab(back_to=page)
