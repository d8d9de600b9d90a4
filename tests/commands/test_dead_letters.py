"""``truloop-assistant dead-letters``: a poisoned message is given up, listed, replayed once its cause is
fixed and answered once; dead letters are purged; unknown ids and channels say what to do."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from redis.asyncio import Redis

from truloop_assistant.commands import dead_letters as command
from truloop_assistant.config import Settings, load_settings
from truloop_assistant.store import keys
from truloop_assistant.store.inbox import MessageEvent, ResumeEvent
from truloop_assistant.store.ledger import Ledger

CHANNEL = "poisoned"


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="truloop-assistant")
    command.add_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["dead-letters", *argv])


@pytest.fixture
def settings(redis_url: str) -> Settings:
    return load_settings(redis_url=redis_url, channel="local", jwt_secret="x" * 32, queue_name="test")


LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\S+ (DEBUG|INFO|WARNING|ERROR|CRITICAL) ")


async def run(settings: Settings, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run the command as the CLI would (its own thread and event loop): exit code, stdout, and stderr
    without the log lines the server running in this process wrote meanwhile."""
    code = await asyncio.to_thread(command.run, parse(list(argv)), settings)
    out, err = capsys.readouterr()
    said = [line for line in err.splitlines(keepends=True) if not LOG_LINE.match(line)]
    return code, out, "".join(said)


def counting_model(prompts: list[str]) -> FunctionModel:
    """Answers every message, noting each prompt it was asked."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompts.append(str(messages[-1].parts[-1].content))  # type: ignore[union-attr]
        return ModelResponse(parts=[TextPart("here is your answer")])

    return FunctionModel(fn)


async def test_a_poisoned_message_is_replayed_once_its_cause_is_fixed_and_answered_once(
    start_server: Any, redis: Redis, redis_url: str, capsys: pytest.CaptureFixture[str], settings: Settings
) -> None:
    prompts: list[str] = []
    history = keys.history(keys.conversation_tag(CHANNEL), "jeff")
    await redis.set(history, b"a history this version cannot read")  # every step of jeff's turn raises
    async with start_server(model=counting_model(prompts)) as h:
        assert (await h.user_says("내일 일정 알려줘", channel=CHANNEL, message_id=41)).status_code == 200
        await h.idle(timeout=30)  # three attempts (saq retries after 1, 2, 4 s at most), then given up
        assert prompts == [] and h.texts(CHANNEL) == []

        # As an operator runs it: every conversation's dead letters, for a script.
        clean = {k: v for k, v in os.environ.items() if not k.startswith("TRULOOP_")}
        done = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "truloop_assistant.cli", "dead-letters", "list", "--json"],
            env={**clean, "TRULOOP_REDIS_URL": redis_url, "TRULOOP_QUEUE_NAME": "test"},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        listed = json.loads(done.stdout)
        [dead] = listed["dead_letters"]
        assert listed["count"] == 1
        assert dead["channel_url"] == CHANNEL
        assert dead["event"] == {
            "kind": "message",
            "eid": dead["id"],
            "user_id": "jeff",
            "message_id": "41",
            "chars": 9,
        }
        assert dead["error"].startswith("given up after 3 attempts: 1 validation error")
        assert dead["at"].endswith("+00:00")

        code, out, _ = await run(settings, capsys, "list", CHANNEL)
        assert code == 0
        assert out.splitlines()[:3] == [
            "1 dead letter, newest first",
            CHANNEL,
            f"  {dead['id']}  {dead['at']}  message 41 (turn m41) from jeff, 9 characters",
        ]
        assert "given up after 3 attempts: 1 validation error" in out
        assert "일정" not in out  # what people wrote is not shown

        await redis.delete(history)  # the cause is fixed
        code, out, err = await run(settings, capsys, "replay", CHANNEL, "--id", dead["id"][:8])
        assert code == 0, err
        assert out.splitlines()[0].endswith("runs next")
        assert f"replayed 1 of 1 dead letter of {CHANNEL}" in out
        [answer] = await h.replies(1, channel=CHANNEL)
        assert answer.text == "here is your answer"
        await h.idle()
        assert prompts == ["내일 일정 알려줘"]  # run once, after the fix
        assert h.texts(CHANNEL) == ["here is your answer"]

        # It left the list; asked for again, the id is unknown.
        assert await run(settings, capsys, "list", CHANNEL) == (0, f"no dead letters in {CHANNEL!r}\n", "")
        code, out, err = await run(settings, capsys, "replay", CHANNEL, "--id", dead["id"])
        assert (code, out) == (1, "")
        assert err == f"truloop-assistant dead-letters replay: {CHANNEL!r} has no dead letters\n"
        await h.idle()
        assert prompts == ["내일 일정 알려줘"] and h.texts(CHANNEL) == ["here is your answer"]


async def test_purge_drops_them_with_a_count_and_unknown_ids_and_channels_say_what_to_do(
    redis: Redis, capsys: pytest.CaptureFixture[str], settings: Settings
) -> None:
    ledger = Ledger(redis)
    for n in range(3):
        event = ResumeEvent(eid=f"dead{n}", turn_id=f"m{n}")
        await ledger.add_dead_letter(
            "demo", event.model_dump_json(), "given up after 3 attempts: boom", eid=event.eid
        )

    code, out, err = await run(settings, capsys, "purge", "demo", "--id", "nope")
    assert (code, out) == (1, "")
    assert err == (
        "truloop-assistant dead-letters purge: 'demo' has no dead letter 'nope' (it has: dead2, dead1, "
        "dead0); see truloop-assistant dead-letters list demo\n"
    )
    code, _, err = await run(settings, capsys, "purge", "demo", "--id", "dead")
    assert code == 1 and "'dead' is the start of 3 dead letters' ids in 'demo'" in err

    assert await run(settings, capsys, "purge", "demo", "--id", "dead1", "--json") == (
        0,
        json.dumps({"channel_url": "demo", "purged": 1, "ids": ["dead1"]}, indent=2) + "\n",
        "",
    )
    assert await run(settings, capsys, "purge", "demo", "--all") == (
        0,
        "purged 2 dead letters of demo\n",
        "",
    )
    assert await run(settings, capsys, "list") == (0, "no dead letters in any conversation\n", "")
    assert await ledger.all_dead_letters() == {}
    assert not await redis.zcard(keys.dead_letter_conversations())  # the index forgot it

    # The conversation is still known (its last failure), so it simply has none.
    await ledger.note_failure("demo", "dead0", "boom")
    code, _, err = await run(settings, capsys, "replay", "demo", "--all")
    assert (code, err) == (1, "truloop-assistant dead-letters replay: 'demo' has no dead letters\n")
    for argv in (["list", "no-such-channel"], ["replay", "no-such-channel", "--all"]):
        code, out, err = await run(settings, capsys, *argv)
        assert (code, out) == (1, "")
        assert "nothing is known of 'no-such-channel': check the channel URL" in err


CONTROLS = "\x1b\x07\x9b"


async def test_control_characters_in_a_dead_letter_reach_the_terminal_escaped(
    redis: Redis, capsys: pytest.CaptureFixture[str], settings: Settings
) -> None:
    channel = "esc\x1b]0;owned\x07"
    event = MessageEvent(eid="dead0", message_id="7", user_id="mallory\x1b[31m", text="hi")
    error = "given up after 3 attempts: \x1b[2J\x9b0mboom"
    await Ledger(redis).add_dead_letter(channel, event.model_dump_json(), error, eid=event.eid)

    code, out, _ = await run(settings, capsys, "list")
    assert code == 0 and not any(c in out for c in CONTROLS)
    lines = out.splitlines()
    at = lines[2].split()[1]
    assert lines[1:4] == [
        "esc\\x1b]0;owned\\x07",
        f"  dead0  {at}  message 7 (turn m7) from mallory\\x1b[31m, 2 characters",
        "      given up after 3 attempts: \\x1b[2J\\x9b0mboom",
    ]

    code, out, _ = await run(settings, capsys, "list", "--json")
    assert code == 0 and not any(c in out for c in CONTROLS)
    [dead] = json.loads(out)["dead_letters"]
    assert (dead["channel_url"], dead["event"]["user_id"], dead["error"]) == (channel, event.user_id, error)

    code, out, _ = await run(settings, capsys, "purge", channel, "--all")
    assert (code, out) == (0, "purged 1 dead letter of esc\\x1b]0;owned\\x07\n")


async def test_unreachable_redis_is_one_line_saying_what_to_check(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from truloop_assistant.local.embedded_redis import free_port

    settings = load_settings(
        redis_url=f"redis://:secret@127.0.0.1:{free_port()}/0", channel="local", jwt_secret="x" * 32
    )
    code, out, err = await run(settings, capsys, "list")
    assert (code, out) == (1, "")
    assert err.startswith("truloop-assistant dead-letters list: Redis at redis://:***@127.0.0.1:")
    assert err.endswith("check TRULOOP_REDIS_URL and that Redis is up\n")
