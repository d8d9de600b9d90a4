"""Files in the /dev chat, in a real headless Chromium: a picture attached with the paperclip, a voice
note recorded with the microphone button.

The dev server runs the offline model, which reads no pictures, and no transcriber: what a person
sees is their file in their own bubble (a thumbnail, an audio player, both served back by the
server) and the assistant saying it got the file but cannot look at it, or cannot listen to it.
Chromium's fake microphone (a beeping tone, allowed without a prompt) is what gets recorded.
"""

from __future__ import annotations

import re
from pathlib import Path

from PIL import Image
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement

from .page import DevPage

CHROMIUM_FLAGS = ("--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream")
IN_KOREAN = "음성 메시지는 아직 들을 수 없어요."
"""The voice note's answer says it in Korean too: a voice note has no words to tell the language by."""
UPLOADED = re.compile(r"/dev/api/channels/[^/]+/uploads/[A-Za-z0-9_-]+$")


def my_file(page: DevPage, selector: str, what: str) -> WebElement:
    """The ``selector`` element in the person's own bubble, once the sent message shows it."""
    return page.until(
        lambda d: next(iter(d.find_elements(By.CSS_SELECTOR, f"#log .row.mine .bubble {selector}")), None),
        what,
    )


def whole_answer(page: DevPage, *fragments: str) -> str:
    """The assistant's answer holding ``fragments``, once it is written out (an answer streams in)."""
    page.assistant_says(*fragments)
    page.until(lambda d: not d.find_elements(By.CSS_SELECTOR, "#log .writing"), "the answer written out")
    return page.assistant_says(*fragments)


def test_an_attached_picture_shows_as_a_thumbnail_and_the_assistant_says_it_cannot_look_at_it(
    page: DevPage, tmp_path: Path
) -> None:
    channel = page.new_channel("picture")
    page.open(channel)
    picture = tmp_path / "whiteboard.png"
    Image.new("RGB", (96, 64), (30, 120, 200)).save(picture)

    # The paperclip's file input takes the picture; it waits in the tray, previewed, until sent.
    page.by_id("file-input").send_keys(str(picture))
    tray = page.until(lambda d: (t := page.by_id("attached")).is_displayed() and t, "the attached picture")
    assert "whiteboard.png" in tray.text
    preview = tray.find_element(By.CSS_SELECTOR, ".pending-file img")
    assert page.js("return arguments[0].complete && arguments[0].naturalWidth", preview) == 96
    page.screenshot("picture-attached-phone")
    page.by_id("send").click()

    # The person's bubble shows the picture as the server keeps it (its own bytes, loaded back).
    thumb = my_file(page, "img.thumb", "the picture in my bubble")
    assert thumb.get_attribute("alt") == "whiteboard.png"
    assert UPLOADED.search(thumb.get_attribute("src") or ""), thumb.get_attribute("src")
    page.until(
        lambda d: page.js("return arguments[0].complete && arguments[0].naturalWidth", thumb) == 96,
        "the thumbnail to load from the server",
    )
    assert thumb.is_displayed()
    page.until(lambda d: not page.by_id("attached").is_displayed(), "the tray to empty once sent")

    answer = whole_answer(page, "whiteboard.png")
    assert answer == (
        "I got whiteboard.png, but the model I run on can't look at pictures or documents. "
        "Please tell me what it says."
    )
    [sent] = [m for m in page.messages(channel) if m["user_id"] == "jeff"]
    assert [(f["name"], f["size"]) for f in sent["files"]] == [("whiteboard.png", picture.stat().st_size)]
    page.screenshot("picture-not-seen-phone")


def test_a_recorded_voice_note_shows_as_a_player_and_the_assistant_says_it_cannot_listen(
    page: DevPage,
) -> None:
    channel = page.new_channel("voice")
    page.open(channel)
    record = page.by_id("record")
    assert record.is_enabled()

    record.click()
    page.until(lambda d: record.get_attribute("aria-pressed") == "true", "the recording to start")
    # A second of the fake microphone's tone, as the tray's clock shows it.
    page.until(lambda d: "Recording 0:01" in page.by_id("attached").text, "a second recorded")
    assert not page.by_id("send-error").is_displayed()
    page.screenshot("voice-note-recording-phone")
    record.click()  # stop: the voice note sends itself

    player = my_file(page, "audio", "the voice note's player in my bubble")
    assert player.get_attribute("controls") is not None and player.is_displayed()
    assert UPLOADED.search(player.get_attribute("src") or ""), player.get_attribute("src")
    # The browser reads the kept recording back as audio it can play (its metadata loads, no error).
    page.until(
        lambda d: page.js("return arguments[0].readyState >= 1 && !arguments[0].error", player),
        "the voice note to load from the server",
    )
    assert record.get_attribute("aria-pressed") == "false"
    page.until(lambda d: not page.by_id("attached").is_displayed(), "the tray to empty once sent")

    answer = whole_answer(page, "voice messages")
    assert answer == f"I can't listen to voice messages yet: please type your message. ({IN_KOREAN})"
    [sent] = [m for m in page.messages(channel) if m["user_id"] == "jeff"]
    [voice] = sent["files"]
    assert re.fullmatch(r"voice-note-\d{8}-\d{6}\.(webm|ogg)", voice["name"]), voice
    assert voice["size"] > 0
    page.screenshot("voice-note-not-read-phone")
