"""The user directory: the Redis default, the users file, and the HTTP adapter against a fake API."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from redis.asyncio import Redis

from tests.fakes.users_api import TOKEN, FakeUserApi
from tests.support import serve
from truloop_assistant.backends.users import (
    SAMPLE_USERS_FILE,
    HttpUserDirectory,
    RedisUserDirectory,
    UserDirectoryError,
    UserProfile,
    UsersFileError,
    load_users_file,
    unknown_user_ids,
)
from truloop_assistant.local.embedded_redis import free_port
from truloop_assistant.store import keys


@pytest.fixture
async def directory(redis: Redis) -> RedisUserDirectory:
    directory = RedisUserDirectory(redis)
    await directory.import_users(load_users_file(SAMPLE_USERS_FILE))
    return directory


def ids(users: list[UserProfile]) -> list[str]:
    return [u.user_id for u in users]


def test_sample_file_has_korean_and_english_users() -> None:
    users = {u.user_id: u for u in load_users_file(SAMPLE_USERS_FILE)}
    assert len(users) == 8
    assert users["jeff"].name == "Jeff Kim" and users["mina"].name == "박민아"
    assert "design" in users["mina"].groups and "engineering" in users["jeff"].groups
    assert all(u.email and u.email.endswith("@example.com") for u in users.values())
    assert [u.user_id for u in users.values() if u.role == "admin"] == ["hyunwoo"]
    assert users["mina"].shared == ["email"] and users["jeff"].shared == [] and users["jeff"].role == "member"


async def test_profiles_are_stored_and_upserted(directory: RedisUserDirectory, redis: Redis) -> None:
    jeff = await directory.get_profile("jeff")
    assert jeff is not None and jeff.eid == "E1001" and jeff.timezone == "Asia/Seoul"
    assert await directory.get_profile("nobody") is None
    assert await directory.is_member("mina") and not await directory.is_member("nobody")

    renamed = jeff.model_copy(update={"title": "CTO"})
    assert await directory.import_users([renamed]) == 1
    assert (await directory.get_profile("jeff")).title == "CTO"  # type: ignore[union-attr]
    assert await redis.hlen(keys.user_profiles()) == 8


async def test_only_a_profile_with_the_admin_role_is_an_admin(directory: RedisUserDirectory) -> None:
    assert await directory.is_admin("hyunwoo")
    assert not await directory.is_admin("jeff") and not await directory.is_admin("nobody")


@pytest.mark.parametrize("query", ["010-1234-5678", "01012345678", "+82 10-1234-5678", "1234-5678"])
async def test_contact_search_compares_phone_digits(directory: RedisUserDirectory, query: str) -> None:
    assert ids(await directory.search(query, by="contact")) == ["jeff"]


async def test_phone_owners_are_found_by_number_however_their_number_is_written(
    directory: RedisUserDirectory,
) -> None:
    # jeff's "010-1234-5678" and sarah's "+1-415-555-0134", read as numbers; yuna's office line
    # "02-555-0199" is a number in Seoul only when read in KR.
    numbers = ["+821012345678", "+14155550134", "+8225550199", "+821099999999"]
    assert await directory.phone_owners(numbers, region="KR") == {
        "+821012345678": ["jeff"],
        "+14155550134": ["sarah"],
        "+8225550199": ["yuna"],
    }
    assert await directory.phone_owners(["+821012345678", "+14155550134"], region="US") == {
        "+14155550134": ["sarah"]
    }
    assert await directory.phone_owners([], region="KR") == {}


async def test_contact_search_matches_email_case_insensitively(directory: RedisUserDirectory) -> None:
    assert ids(await directory.search("MINA.PARK@example.COM", by="contact")) == ["mina"]
    assert ids(await directory.search("E1001", by="contact")) == []


async def test_search_by_name_username_and_group(directory: RedisUserDirectory) -> None:
    assert ids(await directory.search("민아", by="name")) == ["mina"]
    assert ids(await directory.search("jeff KIM", by="name")) == ["jeff"]
    assert ids(await directory.search("@Mina", by="username")) == ["mina"]
    assert sorted(ids(await directory.search("Design", by="group"))) == ["jiwoo", "mina", "yuna"]
    assert ids(await directory.search("desig", by="group")) == []


async def test_search_any_field_ranks_exact_matches_first_and_limits(directory: RedisUserDirectory) -> None:
    assert ids(await directory.search("seojun")) == ["seojun"]
    found = await directory.search("lee")
    assert set(ids(found)) == {"david", "seojun"}  # name "David Lee", e-mail seojun.lee@...
    engineering = await directory.search("engineering")
    assert set(ids(engineering)) == {"jeff", "seojun", "hyunwoo"}
    assert len(await directory.search("engineering", limit=2)) == 2


async def test_eids_leave_unknown_users_out(directory: RedisUserDirectory) -> None:
    assert await directory.get_eids(["jeff", "david", "ghost"]) == {"jeff": "E1001", "david": None}
    assert await unknown_user_ids(directory, ["ghost", "mina", "nobody"]) == ["ghost", "nobody"]


async def test_import_beyond_the_limit_is_refused(redis: Redis, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keys, "USERS_MAX", 8)
    directory = RedisUserDirectory(redis)
    users = load_users_file(SAMPLE_USERS_FILE)
    assert await directory.import_users(users) == 8
    assert await directory.import_users(users) == 8  # re-importing the same users adds none
    extra = users[0].model_copy(update={"user_id": "ninth"})
    with pytest.raises(UserDirectoryError, match="more than the limit of 8"):
        await directory.import_users([extra])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        ("[{", "not valid JSON"),
        ('{"user_id": "jeff"}', "expected a JSON list"),
        (
            json.dumps([{"user_id": "a", "name": "A", "username": "a"}, {"user_id": "b", "name": "B"}]),
            "entry 1 (user_id 'b'): username: Field required",
        ),
        (
            json.dumps([{"user_id": "a", "name": "A", "username": "a", "groups": "design"}]),
            "entry 0 (user_id 'a'): groups: Input should be a valid list",
        ),
        (
            json.dumps([{"user_id": "a", "name": "A", "username": "a", "groups": ["design", 3]}]),
            "entry 0 (user_id 'a'): groups.1: Input should be a valid string",
        ),
        (json.dumps(["jeff"]), "entry 0: entry: Input should be a valid dictionary"),
        (
            json.dumps([{"user_id": "", "name": "A"}]),
            "entry 0 (user_id ''): user_id: String should have at least 1 character; "
            "username: Field required",
        ),
        (json.dumps([{"user_id": "a", "name": "A", "username": "a"}] * 2), "user_id 'a' appears twice"),
        (
            json.dumps([{"user_id": "a", "name": "A", "username": "a", "role": "owner"}]),
            "entry 0 (user_id 'a'): role: Input should be 'member' or 'admin'",
        ),
        (
            json.dumps([{"user_id": "a", "name": "A", "username": "a", "shared": ["address"]}]),
            "entry 0 (user_id 'a'): shared.0: Input should be 'email' or 'phone'",
        ),
    ],
)
def test_bad_users_files_name_the_problem(tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / "users.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(UsersFileError) as info:
        load_users_file(path)
    assert str(info.value).startswith(str(path))
    assert message in str(info.value)


# -- the HTTP adapter


async def test_http_directory_speaks_the_documented_api() -> None:
    fake = FakeUserApi()
    port = free_port()
    async with serve(fake.app(), port):
        directory = HttpUserDirectory(f"http://127.0.0.1:{port}/api/", TOKEN)
        try:
            mina = await directory.get_profile("mina")
            assert mina is not None and mina.name == "박민아"
            assert mina.shared == ["email"] and mina.role == "member"
            assert await directory.is_admin("boss")
            assert not await directory.is_admin("mina") and not await directory.is_admin("ghost")
            assert not await directory.is_admin("broken")  # the API failed: not taken for an admin
            assert await directory.get_profile("ghost") is None
            assert await directory.is_member("mina") and not await directory.is_member("ghost")
            assert ids(await directory.search("민아", by="name", limit=5)) == ["mina"]
            assert await directory.get_eids(["mina", "ghost"]) == {"mina": "E1002"}
            assert await directory.get_eids([]) == {}
            # A user the API answered with whose number is not the one asked for is left out.
            owners = await directory.phone_owners(["+821023456789", "+821099999999"], region="KR")
            assert owners == {"+821023456789": ["mina"]}
            with pytest.raises(UserDirectoryError, match="answered 500"):
                await directory.get_profile("broken")
        finally:
            await directory.aclose()

    assert all(r["authorization"] == f"Bearer {TOKEN}" for r in fake.requests)
    search = next(r for r in fake.requests if r["path"] == "/api/users")
    assert search["params"] == {"query": "민아", "by": "name", "limit": "5"}
    by_phone = [r["params"] for r in fake.requests if "phone" in r["params"]]
    assert sorted(p["phone"] for p in by_phone) == ["+821023456789", "+821099999999"]
    assert {p["region"] for p in by_phone} == {"KR"}
    posted = next(r for r in fake.requests if r["method"] == "POST")
    assert posted["path"] == "/api/users/eids" and posted["json"] == {"user_ids": ["mina", "ghost"]}


async def test_http_directory_reports_a_wrong_token_and_an_unreachable_api() -> None:
    fake = FakeUserApi()
    port = free_port()
    async with serve(fake.app(), port):
        async with httpx.AsyncClient(timeout=5) as client:
            wrong = HttpUserDirectory(f"http://127.0.0.1:{port}/api", "wrong", client)
            with pytest.raises(UserDirectoryError, match="answered 401"):
                await wrong.search("mina")
    gone = HttpUserDirectory(f"http://127.0.0.1:{free_port()}/api", TOKEN, timeout=2)
    with pytest.raises(UserDirectoryError, match="unreachable"):
        await gone.get_profile("mina")
    await gone.aclose()
