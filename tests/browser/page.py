"""The /dev page as a person uses it: open it, write, tap the phone's buttons, read what is shown."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlencode

import httpx
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver import Chrome
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import Select, WebDriverWait

T = TypeVar("T")
WAIT_S = 15
PHONE = (390, 844)
DESKTOP = (1280, 860)


class DevPage:
    def __init__(self, driver: Chrome, base: str, screenshots: Path) -> None:
        self.driver = driver
        self.base = base
        self.screenshots = screenshots
        self.window = driver.current_window_handle

    # -- tabs --------------------------------------------------------------------------------------

    def another_tab(self) -> DevPage:
        """A second tab of the browser, at a phone's size: another device of whoever signs in there."""
        self.driver.switch_to.new_window("tab")
        tab = DevPage(self.driver, self.base, self.screenshots)
        tab.as_phone()
        self.focus()
        return tab

    def focus(self) -> DevPage:
        """Bring this tab to the front: what follows reads and taps it."""
        self.driver.switch_to.window(self.window)
        return self

    def close_tab(self, back_to: DevPage) -> None:
        self.focus().driver.close()
        back_to.focus()

    # -- waiting -----------------------------------------------------------------------------------

    def until(self, condition: Callable[[Chrome], T], what: str, timeout: float = WAIT_S) -> T:
        """Wait for ``condition`` to be truthy; fail naming ``what`` and showing the page's text."""

        def check(driver: Chrome) -> T | bool:
            try:
                return condition(driver)
            except StaleElementReferenceException:
                return False

        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.05).until(check)
        except Exception as exc:
            text = self.driver.find_element(By.TAG_NAME, "body").text
            shot = self.screenshot("failed-" + re.sub(r"[^a-z0-9]+", "-", what.lower()).strip("-")[:60])
            raise AssertionError(
                f"timed out waiting for {what} (see {shot}); the page shows:\n{text}"
            ) from exc

    # -- opening and layout ------------------------------------------------------------------------

    @staticmethod
    def new_channel(label: str) -> str:
        return f"{label}-{uuid.uuid4().hex[:8]}"

    def open(self, channel: str, user: str = "jeff") -> None:
        self.driver.get(f"{self.base}/dev?{urlencode({'channel': channel, 'user': user})}")
        self.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready"), "the page")
        self.until(lambda d: self.option_values(), "the user picker")

    def as_phone(self) -> None:
        """A phone's screen: the page lays out at the device width only if it has a viewport meta tag."""
        width, height = PHONE
        self.driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 2, "mobile": True},
        )

    def as_desktop(self) -> None:
        self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        self.driver.set_window_size(*DESKTOP)

    def screenshot(self, name: str) -> Path:
        path = self.screenshots / f"{name}.png"
        self.driver.save_screenshot(str(path))
        print(f"screenshot: {path}")
        return path

    def js(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    # -- people and channels -----------------------------------------------------------------------

    def option_values(self) -> list[str]:
        return [o.get_attribute("value") or "" for o in Select(self.by_id("user-select")).options]

    def choose_user(self, user: str) -> None:
        Select(self.by_id("user-select")).select_by_value(user)
        self.until(lambda d: f"as {user}" in self.by_id("subtitle").text, f"chatting as {user}")

    def open_panel(self) -> None:
        if not self.by_id("panel").is_displayed():
            self.by_id("more").click()
        self.until(lambda d: self.by_id("panel").is_displayed(), "the settings panel")

    def close_panel(self) -> None:
        if self.by_id("panel").is_displayed():
            self.by_id("more").click()

    # -- the chat ----------------------------------------------------------------------------------

    def by_id(self, element_id: str) -> WebElement:
        return self.driver.find_element(By.ID, element_id)

    def say(self, text: str) -> None:
        before = len(self.rows())
        box = self.by_id("message")
        box.click()  # a tap in the field, as a person would
        box.clear()
        box.send_keys(text)
        self.by_id("send").click()
        self.until(lambda d: len(self.rows()) > before and not box.get_attribute("value"), f"{text!r} sent")

    def rows(self) -> list[WebElement]:
        return self.driver.find_elements(By.CSS_SELECTOR, "#log .row")

    def bubbles(self, kind: str) -> list[str]:
        """The text of the ``assistant``, ``mine`` or ``other`` messages, oldest first."""
        return [b.text for b in self.driver.find_elements(By.CSS_SELECTOR, f"#log .row.{kind} .bubble")]

    def bubble_color(self, kind: str) -> str:
        """The background of the first ``kind`` message (how people tell who wrote it)."""
        bubble = self.driver.find_element(By.CSS_SELECTOR, f"#log .row.{kind} .bubble")
        return str(self.js("return getComputedStyle(arguments[0]).backgroundColor", bubble))

    def assistant_says(self, *fragments: str, count: int | None = None) -> str:
        """Wait for an answer of the assistant holding every fragment; return it."""

        def found(_: Chrome) -> str | None:
            said = self.bubbles("assistant")
            if count is not None and len(said) < count:
                return None
            return next((s for s in reversed(said) if all(f in s for f in fragments)), None)

        return self.until(found, f"the assistant to say {fragments}")

    def card(self, method: str, state: str = "pending", nth: int = -1) -> WebElement:
        """The request card for ``method`` in ``state`` (the last one by default), once it shows."""
        selector = f'#log .card[data-method="{method}"][data-state="{state}"]'
        return self.until(
            lambda d: (found := d.find_elements(By.CSS_SELECTOR, selector)) and found[nth],
            f"a {state} {method} request",
        )

    def cards(self) -> list[WebElement]:
        return self.driver.find_elements(By.CSS_SELECTOR, "#log .card")

    def tap(self, card: WebElement, label: str) -> None:
        [button] = [b for b in card.find_elements(By.CSS_SELECTOR, ".actions > button") if b.text == label]
        button.click()

    def dialog(self) -> WebElement:
        return self.until(
            lambda d: (dialog := self.by_id("confirm")).get_attribute("open") is not None and dialog,
            "the confirmation dialog",
        )

    def dialog_closed(self) -> None:
        self.until(lambda d: self.by_id("confirm").get_attribute("open") is None, "the dialog to close")

    # -- what the server holds ---------------------------------------------------------------------

    def messages(self, channel: str) -> list[dict[str, Any]]:
        """The channel's messages, each as it is now, as the dev API lists them."""
        r = httpx.get(f"{self.base}/dev/api/channels/{channel}/messages", timeout=10)
        return list(r.json()["messages"])

    def requests(self, channel: str) -> list[dict[str, Any]]:
        """The JSON-RPC requests of the channel still open, as the dev API shows them."""
        return [json.loads(m["data"]) for m in self.messages(channel) if m["custom_type"] == "agent-rpc"]

    def message_ids(self) -> list[int]:
        """The message ids the page shows, in its order."""
        return [int(r.get_attribute("data-message-id") or 0) for r in self.rows()]
