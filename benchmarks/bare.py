"""The bare pydantic-ai deferred cycle, in a process of its own: the yardstick for the server's turn.

agent.run -> DeferredToolRequests -> JSON round trip (what the server stores and what the phone
sends back) -> agent.run(message_history=..., deferred_tool_results=...), with the project's own
member agent (``build_member_agent``: the same toolsets, gates and envelope as the server) and the
same model string as the server (made by the server's ``resolve_model``, or with ``--model-as-is``
by pydantic-ai's own ``infer_model``, without the server's changes to it), against the fake model
of ``benchmarks.fakes`` over HTTP. Each cycle is a fresh conversation, as in the server's CPU
scenario, unless ``--prior-turns N``: then every cycle continues one conversation of N earlier
turns (kept as the server keeps a history: at most ``--history-max-messages``, without
instructions), as the server's long conversations do in its latency and throughput scenarios.
Prints one JSON object:
``{"turns": N, "cpu_s": <time.process_time() of the measured cycles>, "latency_s": [...],
"history_messages": M}``.

    OPENAI_BASE_URL=http://127.0.0.1:P/v1 OPENAI_API_KEY=fake \\
        .venv/bin/python -m benchmarks.bare [--turns 200] [--warmup 20] [--prior-turns 0] [--model-as-is]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from zoneinfo import ZoneInfo

import uvloop
from pydantic import TypeAdapter
from pydantic_ai import DeferredToolRequests, ModelMessagesTypeAdapter
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import infer_model

from truloop_assistant.agent.agents import MemberAgent, build_member_agent
from truloop_assistant.agent.models import resolve_model
from truloop_assistant.store.history import trim_history, without_instructions
from truloop_assistant.tools.agent_deps import AgentDeps

from .harness import EVENTS, MODEL

SEOUL = ZoneInfo("Asia/Seoul")
_REQUESTS = TypeAdapter(DeferredToolRequests)


async def cycle(agent: MemberAgent, i: int, prior: list[ModelMessage] | None = None) -> list[ModelMessage]:
    """One deferred turn, after ``prior`` (the conversation so far); returns the conversation after it."""
    deps = AgentDeps(user_id=f"bare-user-{i}", channel_url=f"bare-{i}", timezone=SEOUL)
    first = await agent.run(f"bare t{i}", deps=deps, message_history=prior)
    assert isinstance(first.output, DeferredToolRequests), first.output
    requests = _REQUESTS.validate_json(_REQUESTS.dump_json(first.output))
    history = ModelMessagesTypeAdapter.validate_json(first.all_messages_json())
    phone = {"jsonrpc": "2.0", "id": requests.calls[0].tool_call_id, "result": EVENTS}
    answer = json.loads(json.dumps(phone))  # as the phone's JSON-RPC response arrives
    results = requests.build_results(calls={answer["id"]: answer["result"]})
    second = await agent.run(message_history=history, deferred_tool_results=results, deps=deps)
    assert second.output == f"answer to: bare t{i}", second.output
    return second.all_messages()


async def run(
    turns: int, warmup: int, prior_turns: int = 0, max_messages: int = 40, *, model_as_is: bool = False
) -> dict[str, object]:
    model = infer_model(MODEL) if model_as_is else resolve_model(MODEL, timezone=SEOUL)
    agent = build_member_agent(model, tool_timeout_s=10)
    for i in range(warmup):
        await cycle(agent, -1 - i)
    prior: list[ModelMessage] | None = None
    for i in range(prior_turns):  # the conversation the measured cycles continue
        prior = trim_history(without_instructions(await cycle(agent, -1000 - i, prior)), max_messages)
    latencies = []
    cpu = time.process_time()
    for i in range(turns):
        started = time.perf_counter()
        await cycle(agent, i, prior)
        latencies.append(time.perf_counter() - started)
    return {
        "turns": turns,
        "cpu_s": time.process_time() - cpu,
        "latency_s": latencies,
        "history_messages": len(prior or []),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--prior-turns", type=int, default=0, help="earlier turns every cycle continues")
    parser.add_argument(
        "--history-max-messages", type=int, default=40, help="as TRULOOP_HISTORY_MAX_MESSAGES"
    )
    parser.add_argument("--model-as-is", action="store_true", help="the model as pydantic-ai makes it")
    args = parser.parse_args()
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        result = run(
            args.turns, args.warmup, args.prior_turns, args.history_max_messages, model_as_is=args.model_as_is
        )
        print(json.dumps(runner.run(result)))


if __name__ == "__main__":
    main()
