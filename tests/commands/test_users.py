"""``truloop-assistant users import FILE``: load a users file into the Redis directory."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

import pytest
from redis.asyncio import Redis

from truloop_assistant.backends.users import SAMPLE_USERS_FILE, RedisUserDirectory
from truloop_assistant.commands import users as users_command
from truloop_assistant.config import Settings, load_settings


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="truloop-assistant")
    users_command.add_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


@pytest.fixture
def settings(redis_url: str) -> Settings:
    return load_settings(redis_url=redis_url, channel="local", jwt_secret="x" * 32)


async def run(argv: list[str], settings: Settings) -> int:
    """Run the command as the CLI would: in its own thread, with its own event loop."""
    return await asyncio.to_thread(users_command.run, parse(argv), settings)


async def test_import_the_sample_users(
    redis: Redis, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await run(["users", "import", str(SAMPLE_USERS_FILE)], settings) == 0
    assert capsys.readouterr().out == "imported 8 users\n"
    mina = await RedisUserDirectory(redis).get_profile("mina")
    assert mina is not None and mina.name == "박민아"


async def test_reimport_updates_in_place(
    redis: Redis, settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    await run(["users", "import", str(SAMPLE_USERS_FILE)], settings)
    path = tmp_path / "one.json"
    path.write_text(json.dumps([{"user_id": "jeff", "name": "Jeffrey Kim", "username": "jeffkim"}]))
    assert await run(["users", "import", str(path)], settings) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "imported 1 users"
    directory = RedisUserDirectory(redis)
    assert (await directory.get_profile("jeff")).name == "Jeffrey Kim"  # type: ignore[union-attr]
    assert len(await directory.search("example.com", by="contact", limit=50)) == 7


async def test_missing_or_invalid_file_exits_1_with_the_reason(
    redis: Redis, settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.json"
    assert await run(["users", "import", str(missing)], settings) == 1
    assert capsys.readouterr().err == f"truloop-assistant: {missing}: no such file\n"

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"user_id": "x", "name": "X"}]))
    assert await run(["users", "import", str(bad)], settings) == 1
    err = capsys.readouterr().err
    assert "entry 0 (user_id 'x'): username: Field required" in err
    assert await redis.dbsize() == 0


async def test_unreachable_redis_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from truloop_assistant.local.embedded_redis import free_port

    settings = load_settings(
        redis_url=f"redis://127.0.0.1:{free_port()}/0", channel="local", jwt_secret="x" * 32
    )
    assert await run(["users", "import", str(SAMPLE_USERS_FILE)], settings) == 1
    assert capsys.readouterr().err.startswith("truloop-assistant: could not write to Redis:")


def test_a_subcommand_is_required() -> None:
    with pytest.raises(SystemExit):
        parse(["users"])
