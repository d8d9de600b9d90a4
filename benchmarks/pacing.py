"""What Sendbird's budgets leave people, with the defaults a newcomer gets (the free trial's budgets,
``TRULOOP_SENDBIRD_PLAN`` unset) against the fake Sendbird holding the app to the same limits:

``invitation``
    An organizer's approved event invites ``--invitees`` (20) people while ``--others`` (5) other
    people write: each of their answers' wait (webhook to answer), and how long until every invitation
    is out (each once).
``streams``
    ``--streams`` answers (5 and 20 by default) stream at once, each ``--sentences`` (20) sentences
    ``--pause-ms`` (200) apart: the growing updates Sendbird showed per answer (beside the most one
    answer could get, one per ``TRULOOP_STREAM_UPDATE_S``), and that every final text arrived.

The server (API and an embedded worker), the fake Sendbird and the model run in this process, on a
throwaway Redis. Figures to read, never assertions.

    .venv/bin/python -m benchmarks.pacing [--scenario invitation|streams|all] [--plan free-trial]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from redis.asyncio import Redis

from benchmarks.harness import DEFAULT_PLAN, redis_under_test
from benchmarks.streaming import FINISHED, writer
from tests.api.test_guest_journey import Script, call, lunch
from tests.fakes.sendbird import FakeSendbird
from tests.support import BOT, JWT_SECRET, make_settings, serve, served, sign, webhook_payload
from truloop_assistant.app import create_app
from truloop_assistant.auth import issue_token
from truloop_assistant.backends.users import SAMPLE_USERS_FILE, RedisUserDirectory, load_users_file
from truloop_assistant.local.embedded_redis import free_port
from truloop_assistant.redis_client import connect


@asynccontextmanager
async def server(
    model: FunctionModel, plan: str, **settings: Any
) -> AsyncIterator[tuple[httpx.AsyncClient, FakeSendbird]]:
    """The app with its worker, at ``plan``'s budgets, and the fake Sendbird holding it to them."""
    async with redis_under_test("standalone") as redis, served(FakeSendbird()) as sendbird:
        sendbird.enforce_plan(plan)
        client: Redis = connect(redis.url)
        await RedisUserDirectory(client).import_users(load_users_file(SAMPLE_USERS_FILE))
        await client.aclose()
        pacing = {"sendbird_rates": None} | ({} if plan == DEFAULT_PLAN else {"sendbird_plan": plan})
        app = create_app(
            make_settings(redis.url, sendbird.url, queue_name="bench-pacing", **pacing, **settings),
            embedded_worker=True,
            model=model,
        )
        port = free_port()
        async with (
            serve(app, port),
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as http,
        ):
            yield http, sendbird


async def says(http: httpx.AsyncClient, text: str, *, user: str, channel: str, message_id: int) -> None:
    body = json.dumps(
        webhook_payload(text, user=user, channel=channel, message_id=message_id, members=[user, BOT])
    )
    r = await http.post(
        "/api/v1/webhooks/sendbird",
        content=body.encode(),
        headers={"x-sendbird-signature": sign(body.encode())},
    )
    r.raise_for_status()


async def invitation(args: argparse.Namespace) -> None:
    script = Script()

    async def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        [*_, prompt] = [str(p.content) for p in messages[-1].parts if isinstance(p, UserPromptPart)] or [""]
        if prompt.startswith("hello from "):
            return ModelResponse(parts=[TextPart(f"hi {prompt.removeprefix('hello from ')}")])
        return script._respond(messages, info)

    guests = [f"guest-{n:03d}" for n in range(args.invitees)]
    script.plans["set up the lunch"] = [call("create_event", **lunch(guest_user_ids=guests))]
    async with server(FunctionModel(model), args.plan) as (http, sendbird):
        await says(http, "set up the lunch", user="jeff", channel="jeff-1", message_id=1)
        [rpc] = [m.rpc for m in await sendbird.wait_for(lambda ms: any(m.is_rpc for m in ms)) if m.is_rpc]
        started = time.monotonic()
        answer = {"jsonrpc": "2.0", "id": rpc["id"], "result": {"confirmed": True}}
        token = issue_token(JWT_SECRET, "jeff")
        r = await http.post(
            "/api/v1/agent/tool-message", json=answer, headers={"authorization": f"Bearer {token}"}
        )
        r.raise_for_status()
        await sendbird.wait_for(lambda ms: sum(m.channel_url != "jeff-1" for m in ms) >= 3, timeout=60)
        waits: list[float] = []

        async def other(n: int) -> None:
            sent = time.monotonic()
            await says(
                http, f"hello from user-{n}", user=f"user-{n}", channel=f"chat-{n}", message_id=100 + n
            )
            await sendbird.wait_for(lambda ms: any(m.channel_url == f"chat-{n}" for m in ms), timeout=120)
            waits.append(time.monotonic() - sent)

        await asyncio.gather(*(other(n) for n in range(args.others)))
        invited = {f"sendbird_group_channel_{n}" for n in range(1, 1000)}

        def all_out(ms: list[Any]) -> bool:
            return sum(1 for m in ms if m.channel_url in invited and "invites you" in m.text) >= args.invitees

        await sendbird.wait_for(all_out, timeout=600)
        took = time.monotonic() - started
        shown = [m for m in sendbird.messages if m.channel_url in invited and "invites you" in m.text]
    print(
        f"invitation ({args.plan}): {args.others} other people's answers waited median "
        f"{statistics.median(waits):.2f} s, max {max(waits):.2f} s, "
        f"while {args.invitees} invitations went out; "
        f"all {len(shown)} out after {took:.1f} s ({len({m.channel_url for m in shown})} people, each once: "
        f"{len(shown) == len({m.channel_url for m in shown})}); {len(sendbird.limited)} calls answered 429"
    )


async def streams(args: argparse.Namespace, n: int) -> None:
    pause_s = args.pause_ms / 1000
    model, answer = writer(args.sentences, pause_s)
    async with server(model, args.plan, stream=True) as (
        http,
        sendbird,
    ):
        await says(http, "warm up", user="warm", channel="warm", message_id=1)
        await sendbird.wait_for(lambda ms: any(m.shown.get("data") == FINISHED for m in ms), timeout=60)
        await asyncio.sleep(1.2)
        sendbird.updates.clear()
        channels = [f"stream-{i}" for i in range(n)]
        await asyncio.gather(
            *(
                says(http, "the week?", user=f"user-{i}", channel=c, message_id=10 + i)
                for i, c in enumerate(channels)
            )
        )

        def finished(ms: list[Any]) -> bool:
            return all(any(m.shown.get("data") == FINISHED for m in sendbird.in_channel(c)) for c in channels)

        await sendbird.wait_for(finished, timeout=300)
        growing = [
            sum(1 for u in sendbird.updates if u.channel_url == c and u.body.get("data") != FINISHED)
            for c in channels
        ]
        whole_texts = all(sendbird.shown_in(c)[-1]["message"] == answer for c in channels)
    most = args.sentences * pause_s  # one update a second at most (TRULOOP_STREAM_UPDATE_S=1.0)
    print(
        f"streams ({args.plan}): {n} answers at once, each written over {most:.1f} s: "
        f"growing updates shown per answer median {statistics.median(growing):g}, "
        f"fewest {min(growing)}, most {max(growing)} "
        f"(one answer alone gets up to about {most:.0f}); every final text whole: {whole_texts}; "
        f"{len(sendbird.limited)} calls answered 429"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", choices=["invitation", "streams", "all"], default="all")
    parser.add_argument("--plan", default=DEFAULT_PLAN)
    parser.add_argument("--invitees", type=int, default=20)
    parser.add_argument("--others", type=int, default=5)
    parser.add_argument("--streams", type=int, nargs="+", default=[5, 20])
    parser.add_argument("--sentences", type=int, default=20)
    parser.add_argument("--pause-ms", type=float, default=200.0)
    args = parser.parse_args()
    if args.scenario in ("invitation", "all"):
        asyncio.run(invitation(args))
    if args.scenario in ("streams", "all"):
        for n in args.streams:
            asyncio.run(streams(args, n))


if __name__ == "__main__":
    main()
