"""A Chat Completions request leaves the server byte for byte as the OpenAI SDK would have sent it,
though its messages and tools skip the SDK's walk over them (``agent.models.with_plain_bodies``).

Both models talk to one local fake provider that keeps the raw bytes of every request; the history
holds every kind of part a conversation of ours can carry (text, an image link, image bytes, a
document, tool calls and their results, a retried call, a thinking part, an earlier answer), and the
new message may bring a photo and a PDF of the person's.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest
from openai import AsyncOpenAI
from openai._utils._json import openapi_dumps
from pydantic import BaseModel
from pydantic_ai import Agent, models
from pydantic_ai.messages import (
    BinaryContent,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserContent,
    UserPromptPart,
)
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.settings import ModelSettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.support import served
from truloop_assistant.agent.models import encode_body, with_plain_bodies


@pytest.fixture(autouse=True)
def _model_requests_to_the_local_fake(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)


@dataclass
class RawChat:
    """An OpenAI-compatible ``/v1/chat/completions`` that keeps each request's bytes."""

    url: str = ""
    bodies: list[bytes] = field(default_factory=list)
    content_types: list[str | None] = field(default_factory=list)

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/v1/chat/completions", self._complete, methods=["POST"])])

    async def _complete(self, request: Request) -> JSONResponse:
        self.bodies.append(await request.body())
        self.content_types.append(request.headers.get("content-type"))
        message = {"role": "assistant", "content": "noted"}
        return JSONResponse(
            {
                "id": f"chatcmpl-{len(self.bodies)}",
                "object": "chat.completion",
                "created": 1_790_000_000,
                "model": "gpt-4o",
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
            }
        )


HISTORY: list[ModelMessage] = [
    ModelRequest(
        parts=[
            SystemPromptPart("You are the assistant."),
            UserPromptPart(
                [
                    "What is on this poster, and when?",
                    ImageUrl("https://example.com/poster.png"),
                    BinaryContent(b"\x89PNG\r\n\x1a\nfake", media_type="image/png"),
                    BinaryContent(b"%PDF-1.7 fake", media_type="application/pdf"),
                ]
            ),
        ]
    ),
    ModelResponse(
        parts=[
            ThinkingPart("The user wants the poster's event."),
            TextPart("Let me check your calendar."),
            ToolCallPart("get_calendar_events", {"start": "2026-12-01", "end": "2026-12-07"}, "call_1"),
            ToolCallPart("lookup", '{"q": "포스터 행사"}', "call_2"),
        ],
        model_name="gpt-4o",
    ),
    ModelRequest(
        parts=[
            ToolReturnPart("get_calendar_events", {"events": [{"title": "Lunch", "at": "12:00"}]}, "call_1"),
            ToolReturnPart("lookup", "unknown tool 'lookup'", "call_2", outcome="retried"),
        ]
    ),
    ModelResponse(parts=[TextPart("You have lunch at noon; the poster is for Friday.")], model_name="gpt-4o"),
]


def calendar(start: str, end: str) -> str:
    """This week's events."""
    return f"{start}..{end}"


async def sent(
    fake: RawChat,
    *,
    plain: bool,
    prompt: str | Sequence[UserContent] = "Thanks!",
    settings: ModelSettings | None = None,
    tools: bool = True,
) -> bytes:
    client = AsyncOpenAI(base_url=f"{fake.url}/v1", api_key="fake", max_retries=0)
    model: Any = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=client))
    if plain:
        model = with_plain_bodies(model)
    agent = Agent(model, tools=[calendar] if tools else [], model_settings=settings)
    await agent.run(prompt, message_history=HISTORY)
    return fake.bodies[-1]


@pytest.mark.parametrize(
    ("settings", "tools"),
    [
        (None, True),
        (None, False),
        ({"temperature": 0.2, "top_p": 0.9, "max_tokens": 300, "extra_body": {"top_k": 4}}, True),
    ],
    ids=["with tools", "without tools", "with settings and extra_body"],
)
async def test_the_request_is_the_one_the_sdk_would_send(settings: ModelSettings | None, tools: bool) -> None:
    async with served(RawChat()) as fake:
        usual = await sent(fake, plain=False, settings=settings, tools=tools)
        plain = await sent(fake, plain=True, settings=settings, tools=tools)

    assert plain == usual
    assert fake.content_types[-1] == fake.content_types[-2] == "application/json"
    body = json.loads(plain)
    assert len(body["messages"]) == 7  # system, user, assistant, two tool results, assistant, user
    assert ("tools" in body) is tools


# A photo's bytes as a phone sends them (JPEG markers, then every byte value, so that the base64 has
# "+" and "/" in it), and a PDF with a name of the person's that is not ASCII.
PHOTO = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(range(256)) * 64 + b"\xff\xd9"
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj << /Title (\xea\xb3\xb5\xec\xa7\x80) >> endobj\n%%EOF\n"
WITH_FILES: list[UserContent] = [
    "이 사진이랑 PDF 일정 등록해줘 🙂",
    BinaryContent(PHOTO, media_type="image/jpeg", identifier="photo-1"),
    BinaryContent(PDF, media_type="application/pdf", identifier="공지.pdf"),
]


@pytest.mark.parametrize("tools", [True, False], ids=["with tools", "without tools"])
async def test_a_message_with_a_photo_and_a_pdf_is_the_one_the_sdk_would_send(tools: bool) -> None:
    async with served(RawChat()) as fake:
        usual = await sent(fake, plain=False, prompt=WITH_FILES, tools=tools)
        plain = await sent(fake, plain=True, prompt=WITH_FILES, tools=tools)

    assert plain == usual
    parts = json.loads(plain)["messages"][-1]["content"]
    sent_urls = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
    sent_files = [p["file"]["file_data"] for p in parts if p["type"] == "file"]
    assert sent_urls == [f"data:image/jpeg;base64,{base64.b64encode(PHOTO).decode()}"]
    assert sent_files == [f"data:application/pdf;base64,{base64.b64encode(PDF).decode()}"]


async def test_a_callers_extra_body_still_has_the_last_word() -> None:
    override = [{"role": "user", "content": "only this"}]
    async with served(RawChat()) as fake:
        body = json.loads(await sent(fake, plain=True, settings={"extra_body": {"messages": override}}))

    assert body["messages"] == override


class Place(BaseModel):
    name: str
    rating: float | None = None


def sdk_encoded(body: dict[str, Any]) -> bytes:
    return openapi_dumps(body)


@pytest.mark.parametrize(
    "body",
    [
        {"model": "gpt-4o", "messages": [{"role": "user", "content": "한국어, emoji 🙂, \u2028 and \x1f"}]},
        {"when": datetime(2026, 11, 27, 9, 30, tzinfo=UTC), "naive": datetime(2026, 11, 27, 9, 30, 0, 1)},
        {
            "place": Place(name="Cafe"),
            "floats": [0.2, 3.0, -0.0, 1234.5678, 0.1 + 0.2],
            "nested": {"a": [None, True]},
        },
        {"big": 2**70, "also": "an integer beyond 64 bits goes the SDK's way"},
    ],
    ids=["text", "dates", "models and numbers", "big integer"],
)
def test_a_body_is_encoded_as_the_sdk_encodes_it(body: dict[str, Any]) -> None:
    assert encode_body(body) == sdk_encoded(body)


def test_a_number_with_an_exponent_is_the_same_number() -> None:
    body = {"numbers": [1e-07, 1e16, 2.5e-300, 6.02e23]}
    assert json.loads(encode_body(body)) == json.loads(sdk_encoded(body)) == body


def test_a_nan_goes_as_null_where_the_sdk_refuses_the_request() -> None:
    with pytest.raises(ValueError):
        sdk_encoded({"x": float("nan")})
    assert json.loads(encode_body({"x": float("nan")})) == {"x": None}


def test_a_model_of_another_family_is_left_as_it_is() -> None:
    model = models.infer_model("test")
    assert with_plain_bodies(model) is model
