"""Fetching the files people send: listed hosts only, the Api-Token where needed, cut at the limit."""

from __future__ import annotations

import io
import time
from collections.abc import AsyncIterator

import httpx
import pytest
from PIL import Image
from pydantic import ValidationError

from tests.fakes.files import FILES_TOKEN, FakeFiles
from tests.support import served
from truloop_assistant.channels.file_fetch import CHUNK_BYTES, Fetched, Refused, fetch
from truloop_assistant.channels.file_hosts import allowed
from truloop_assistant.config.file_settings import FileSettings

MiB = 1024 * 1024
LIMIT = 20 * MiB


def jpeg() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (32, 24), (0, 128, 255)).save(out, format="JPEG")
    return out.getvalue()


def listed(*fakes: FakeFiles) -> list[str]:
    """The host patterns naming these local servers (``127.0.0.1:PORT``)."""
    return [fake.url.removeprefix("http://") for fake in fakes]


@pytest.fixture
async def files() -> AsyncIterator[FakeFiles]:
    async with served(FakeFiles()) as fake:
        yield fake


@pytest.fixture
async def elsewhere() -> AsyncIterator[FakeFiles]:
    """A host that is not on the list."""
    async with served(FakeFiles()) as fake:
        yield fake


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as http:
        yield http


async def test_a_picture_that_needs_auth_is_fetched_with_the_api_token(
    files: FakeFiles, client: httpx.AsyncClient
) -> None:
    url = files.put("/app/photo.jpg", jpeg(), content_type="image/jpeg", needs_token=True)
    got = await fetch(url, hosts=listed(files), max_bytes=LIMIT, api_token=FILES_TOKEN, client=client)
    assert isinstance(got, Fetched) and got.media_type == "image/jpeg" and got.data == jpeg()
    assert files.requests[0][1]["api-token"] == FILES_TOKEN

    without = await fetch(url, hosts=listed(files), max_bytes=LIMIT, api_token=None, client=client)
    assert isinstance(without, Refused) and without.reason == "unreachable" and "401" in without.detail


async def test_a_url_off_the_hosts_is_never_fetched(
    files: FakeFiles, elsewhere: FakeFiles, client: httpx.AsyncClient
) -> None:
    url = elsewhere.put("/photo.jpg", jpeg())
    got = await fetch(url, hosts=listed(files), max_bytes=LIMIT, api_token=FILES_TOKEN, client=client)
    assert isinstance(got, Refused) and got.reason == "off_host"
    assert elsewhere.requests == []


async def test_a_redirect_off_the_hosts_is_not_followed(
    files: FakeFiles, elsewhere: FakeFiles, client: httpx.AsyncClient
) -> None:
    target = elsewhere.put("/photo.jpg", jpeg())
    url = files.redirect("/app/photo.jpg", target)
    got = await fetch(url, hosts=listed(files), max_bytes=LIMIT, api_token=FILES_TOKEN, client=client)
    assert isinstance(got, Refused) and got.reason == "off_host"
    assert files.paths() == ["/app/photo.jpg"] and elsewhere.requests == []


async def test_the_token_stays_on_the_files_own_host(
    files: FakeFiles, elsewhere: FakeFiles, client: httpx.AsyncClient
) -> None:
    """A redirect to another listed host is followed, without the application's key."""
    target = elsewhere.put("/cdn/photo.jpg", jpeg())
    files.redirect("/app/photo.jpg", files.redirect("/app/moved.jpg", target))
    url, hosts = files.url + "/app/photo.jpg", listed(files, elsewhere)
    got = await fetch(url, hosts=hosts, max_bytes=LIMIT, api_token="k", client=client)
    assert isinstance(got, Fetched)
    assert [headers.get("api-token") for _, headers in files.requests] == ["k", "k"]
    assert "api-token" not in elsewhere.requests[0][1]


async def test_at_most_three_redirects(files: FakeFiles, client: httpx.AsyncClient) -> None:
    files.put("/3", jpeg())
    for hop in (2, 1, 0):
        files.redirect(f"/{hop}", f"{files.url}/{hop + 1}")
    three = await fetch(files.url + "/0", hosts=listed(files), max_bytes=LIMIT, api_token=None, client=client)
    assert isinstance(three, Fetched)
    files.redirect("/-1", files.url + "/0")
    four = await fetch(files.url + "/-1", hosts=listed(files), max_bytes=LIMIT, api_token=None, client=client)
    assert isinstance(four, Refused) and four.reason == "unreachable"


async def test_a_21_mib_file_without_a_length_is_cut_at_the_limit(
    files: FakeFiles, client: httpx.AsyncClient
) -> None:
    url = files.put("/big.jpg", jpeg() + b"\x00" * (21 * MiB), content_length="omit")
    got = await fetch(url, hosts=listed(files), max_bytes=LIMIT, api_token=None, client=client)
    assert isinstance(got, Refused) and got.reason == "too_big"
    assert LIMIT < got.read <= LIMIT + CHUNK_BYTES


async def test_a_stated_length_over_the_limit_is_refused_before_reading(
    files: FakeFiles, client: httpx.AsyncClient
) -> None:
    true_length = files.put("/big.jpg", jpeg() + b"\x00" * (21 * MiB))
    claimed = files.put("/claims.jpg", jpeg(), content_length=30 * MiB)  # says more than it sends
    for url in (true_length, claimed):
        got = await fetch(url, hosts=listed(files), max_bytes=LIMIT, api_token=None, client=client)
        assert isinstance(got, Refused) and got.reason == "too_big" and got.read == 0


async def test_a_body_shorter_than_its_length_is_a_failed_fetch(
    files: FakeFiles, client: httpx.AsyncClient
) -> None:
    url = files.put("/cut.jpg", jpeg(), content_length=len(jpeg()) + 1000)
    got = await fetch(url, hosts=listed(files), max_bytes=LIMIT, api_token=None, client=client)
    assert isinstance(got, Refused) and got.reason == "unreachable"


async def test_an_executable_named_png_is_unsupported(files: FakeFiles, client: httpx.AsyncClient) -> None:
    program = b"MZ\x90\x00\x03\x00\x00\x00\x04\x00" + b"\x00" * (2 * MiB)
    url = files.put("/photo.png", program, content_type="image/png")
    got = await fetch(url, hosts=listed(files), max_bytes=LIMIT, api_token=None, client=client)
    assert isinstance(got, Refused) and got.reason == "unsupported_type"
    assert got.read <= 2 * CHUNK_BYTES  # refused from its first bytes, not read to the end


async def test_a_slow_host_is_given_up_on(files: FakeFiles, client: httpx.AsyncClient) -> None:
    url = files.put("/slow.jpg", jpeg() + b"\x00" * (4 * CHUNK_BYTES), delay_s=0.4)
    started = time.monotonic()
    got = await fetch(url, hosts=listed(files), max_bytes=LIMIT, api_token=None, client=client, total_s=0.5)
    assert isinstance(got, Refused) and got.reason == "unreachable"
    assert time.monotonic() - started < 1.5


async def test_a_missing_file_and_a_bad_url(files: FakeFiles, client: httpx.AsyncClient) -> None:
    gone = files.url + "/gone.jpg"
    missing = await fetch(gone, hosts=listed(files), max_bytes=LIMIT, api_token=None, client=client)
    assert isinstance(missing, Refused) and missing.reason == "unreachable"
    bad = await fetch("https://[::1", hosts=listed(files), max_bytes=LIMIT, api_token=None, client=client)
    assert isinstance(bad, Refused) and bad.reason == "off_host"


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://file-ap-2.sendbird.com/abc/photo.jpg", True),
        ("https://a.b.sendbird.com/x", True),
        ("https://FILE-AP-2.SendBird.com./x", True),
        ("https://sendbird.com/x", False),
        ("https://sendbird.com.evil.com/x", False),
        ("https://evilsendbird.com/x", False),
        ("https://file.sendbird.com:8443/x", False),
        ("http://file.sendbird.com/x", False),
        ("https://user:pw@file.sendbird.com/x", False),
        ("ftp://file.sendbird.com/x", False),
        ("https://file.sendbіrd.com/x", False),  # a Cyrillic і
        ("http://127.0.0.1:8080/x", False),
    ],
)
def test_which_urls_the_default_hosts_allow(url: str, ok: bool) -> None:
    assert allowed(httpx.URL(url), ["*.sendbird.com"]) is ok


def test_plain_http_only_to_a_named_loopback_port() -> None:
    assert allowed(httpx.URL("http://127.0.0.1:8080/x"), ["127.0.0.1:8080"])
    assert not allowed(httpx.URL("http://127.0.0.1:8081/x"), ["127.0.0.1:8080"])
    assert not allowed(httpx.URL("http://files.example.com:8080/x"), ["files.example.com:8080"])


def test_file_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    defaults = FileSettings(_env_file=None)  # type: ignore[call-arg]
    assert (defaults.sendbird_file_hosts, defaults.max_file_bytes) == (["*.sendbird.com"], 20 * MiB)
    monkeypatch.setenv("TRULOOP_SENDBIRD_FILE_HOSTS", " *.Sendbird.com, files.example.com ,127.0.0.1:9000")
    monkeypatch.setenv("TRULOOP_MAX_FILE_BYTES", "5000000")
    mine = FileSettings(_env_file=None)  # type: ignore[call-arg]
    assert mine.sendbird_file_hosts == ["*.sendbird.com", "files.example.com", "127.0.0.1:9000"]
    assert mine.max_file_bytes == 5_000_000
    for hosts in ("*", "*.com", "https://x.sendbird.com", "*.sendbird.com/files"):
        monkeypatch.setenv("TRULOOP_SENDBIRD_FILE_HOSTS", hosts)
        with pytest.raises(ValidationError, match="TRULOOP_SENDBIRD_FILE_HOSTS"):
            FileSettings(_env_file=None)  # type: ignore[call-arg]
    monkeypatch.setenv("TRULOOP_SENDBIRD_FILE_HOSTS", "*.sendbird.com")
    monkeypatch.setenv("TRULOOP_MAX_FILE_BYTES", "100")
    with pytest.raises(ValidationError):
        FileSettings(_env_file=None)  # type: ignore[call-arg]
