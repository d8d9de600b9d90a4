"""A ``FILE`` message's payload read in each shape Sendbird gives it (``tests/fakes/files.py`` cites
where): flat as the SDKs' ``FileMessage``, nested under ``file`` as the Platform API's message
resource, with the "Send a message" request's names, and several files in ``files``."""

from __future__ import annotations

from typing import Any

from tests.support import BOT, file_payload
from truloop_assistant.api.webhooks import file_message
from truloop_assistant.protocol.files import MAX_FILES_PER_MESSAGE, Attachment
from truloop_assistant.protocol.webhook_payload import FileMessageEvent, FilePayload, parse_webhook

URL = "https://file-ap-2.sendbird.com/5a1b/photo.jpg"


def _files(payload: dict[str, Any]) -> list[Attachment]:
    return FilePayload.model_validate({"message_id": 7, **payload}).files


def test_a_flat_file_message_names_its_file() -> None:
    [found] = _files(
        {"url": URL, "name": "IMG_1.HEIC", "type": "image/heic", "size": 1200, "require_auth": True}
    )
    assert found == Attachment(
        url=URL, name="IMG_1.HEIC", stated_type="image/heic", size=1200, require_auth=True
    )


def test_the_platform_apis_shapes_name_the_same_file() -> None:
    nested = _files({"file": {"url": URL, "name": "a.pdf", "type": "application/pdf", "size": 5}})
    requested = _files({"url": URL, "file_name": "a.pdf", "file_type": "application/pdf", "file_size": 5})
    assert nested == requested == [Attachment(url=URL, name="a.pdf", stated_type="application/pdf", size=5)]


def test_several_files_are_read_up_to_the_limit_and_one_without_a_url_is_none() -> None:
    listed = [{"url": f"{URL}?n={n}", "name": f"{n}.jpg"} for n in range(MAX_FILES_PER_MESSAGE + 3)]
    assert len(_files({"files": [*listed, {"name": "no url"}]})) == MAX_FILES_PER_MESSAGE
    assert _files({"name": "no url", "size": 3}) == []
    assert _files({"url": URL, "size": True, "require_auth": "yes"}) == [
        Attachment(url=URL)
    ]  # not a size, not true


def test_a_file_message_is_a_turn_unless_it_is_the_assistants_or_names_no_file() -> None:
    def message(**changes: Any) -> Any:
        payload = file_payload(URL, name="photo.jpg", text=" caption ")
        payload["payload"].update(changes.pop("payload", {}))
        payload.update(changes)
        event = parse_webhook(payload)
        assert isinstance(event, FileMessageEvent)
        return file_message(event, bot_user_id=BOT)

    found = message()
    assert found is not None and found.text == "caption" and found.files[0].url == URL
    assert message(sender={"user_id": BOT}) is None
    assert message(payload={"custom_type": "agent-rpc"}) is None
    assert message(payload={"url": ""}) is None
