"""A person's photo sent to the model never goes to the tracing backend, even with message contents
recorded (``TRULOOP_TRACE_CONTENT=true``): its words do, its bytes do not.

A process configures tracing as the worker does (OTLP/HTTP to a receiver in this test) and runs an
agent on the served Chat Completions model, pointed at a local fake provider, with a JPEG in the
message.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.agent.test_plain_bodies import PHOTO
from tests.fakes.llm import FakeLLM
from tests.support import serve
from tests.test_tracing import OtlpReceiver, ReceivedSpan
from truloop_assistant.local.embedded_redis import free_port

PROMPT = "what is on this poster, zebrafinch"
ANSWER = "A quarterly aardvark review."

TRACED_RUN = """
import asyncio, sys
from pathlib import Path
from zoneinfo import ZoneInfo

from opentelemetry import trace
from pydantic_ai import Agent
from pydantic_ai.messages import BinaryContent

from truloop_assistant import tracing
from truloop_assistant.agent.models import resolve_model

prompt, photo = sys.argv[1], Path(sys.argv[2]).read_bytes()


async def main() -> None:
    assert tracing.configure("truloop-assistant-worker")
    agent = Agent(resolve_model("openai-chat:fake-model", timezone=ZoneInfo("Asia/Seoul")))
    with tracing.turn_step("message", channel_url="c-1", turn_id="m1", user_id="jeff", parent=None):
        await agent.run([prompt, BinaryContent(photo, media_type="image/jpeg", identifier="photo-1")])


asyncio.run(main())
trace.get_tracer_provider().force_flush()
"""


def pieces_of(data: bytes, size: int = 24) -> list[str]:
    """Stretches of ``data``'s base64 from its start to its end: a span holding any part of it has one."""
    encoded = base64.b64encode(data).decode()
    return [encoded[at : at + size] for at in range(0, len(encoded) - size, size)]


def text_of(span: ReceivedSpan) -> str:
    return span.name + json.dumps(span.attributes, default=str)


@pytest.mark.timeout(90)
async def test_a_traced_run_records_the_words_of_a_message_and_never_its_photo(tmp_path: Path) -> None:
    receiver = OtlpReceiver()
    llm = FakeLLM(script=lambda messages: {"role": "assistant", "content": ANSWER})
    llm_port, receiver_port = free_port(), free_port()
    photo = tmp_path / "poster.jpg"
    photo.write_bytes(PHOTO)
    keep = {
        k: v for k, v in os.environ.items() if not k.startswith(("TRULOOP_", "OTEL_", "LOGFIRE_", "OPENAI_"))
    }
    env = {
        **keep,
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{receiver_port}",
        "TRULOOP_TRACE_CONTENT": "true",
        "OPENAI_BASE_URL": f"http://127.0.0.1:{llm_port}/v1",
        "OPENAI_API_KEY": "fake",
    }

    async with contextlib.AsyncExitStack() as stack:
        await stack.enter_async_context(serve(llm.app(), llm_port))
        await stack.enter_async_context(serve(receiver.app(), receiver_port))
        run = await asyncio.create_subprocess_exec(
            sys.executable, "-c", TRACED_RUN, PROMPT, str(photo), env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        output, _ = await asyncio.wait_for(run.communicate(), 60)
        assert run.returncode == 0, output.decode()
        await receiver.wait_for(lambda spans: any(s.name.startswith("chat ") for s in spans))

    # The model was sent the photo itself.
    [request] = llm.requests
    sent: list[dict[str, Any]] = request["messages"][-1]["content"]
    assert f"data:image/jpeg;base64,{base64.b64encode(PHOTO).decode()}" in json.dumps(sent)

    spans = receiver.spans
    assert any(s.name == "turn" for s in spans)
    model_spans = [s for s in spans if s.name.startswith("chat ")]
    # The words of the message and of the answer are recorded, and the photo by its media type only.
    assert any(PROMPT in text_of(s) and ANSWER in text_of(s) for s in model_spans), model_spans
    assert any("image/jpeg" in text_of(s) for s in model_spans), model_spans
    for s in spans:
        text = text_of(s)
        assert not [piece for piece in pieces_of(PHOTO) if piece in text], (s.name, s.attributes)
