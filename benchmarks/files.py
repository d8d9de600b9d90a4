"""A photo in a turn: its bytes and tokens before and after the server scales it, and how long from a
``FILE`` webhook to the model's request.

1. A phone photo (4032x3024 JPEG, made here with a camera's detail: gradients and noise) is made
   ready for the model (``channels.images.prepare``): its bytes, the base64 the request carries, and
   the image tokens two providers bill for it (OpenAI's "high" detail: fit in 2048x2048, shortest
   side 768, 170 per 512-px tile plus 85; Anthropic's: about width x height / 750, after fitting
   1,568 px and 1.15 megapixels), each beside the photo as sent: the providers scale a picture
   down themselves, so the tokens do not change, the bytes sent and the upload do.
2. The server (API and an embedded worker), a fake Sendbird, a fake file host and a model that
   answers at once run in this process, on a throwaway Redis, with the defaults a newcomer gets.
   Each round posts a ``FILE`` webhook of the photo in a fresh channel and times it to the model's
   request (fetch, type check, scaling); the same for a text message beside it.

    .venv/bin/python -m benchmarks.files [--rounds 10]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import io
import json
import math
import random
import time
from typing import Any

import httpx
from PIL import Image, ImageDraw, ImageFilter
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from benchmarks.harness import median, percentile, redis_under_test
from tests.fakes.files import FakeFiles
from tests.fakes.sendbird import FakeSendbird
from tests.support import file_payload, make_settings, serve, served, sign, webhook_payload
from truloop_assistant.app import create_app
from truloop_assistant.channels.images import Picture, prepare
from truloop_assistant.local.embedded_redis import free_port

TARGET_MS = 500.0
"""What a photo should add before the model is asked, beyond a text message (target)."""


def phone_photo(width: int = 4032, height: int = 3024) -> bytes:
    """A JPEG with the detail of a camera's photo (it compresses as one does, to a few MB)."""
    rng = random.Random(7)
    small = Image.new("RGB", (width // 8, height // 8))
    draw = ImageDraw.Draw(small)
    for _ in range(400):
        x, y = rng.randrange(small.width), rng.randrange(small.height)
        r = rng.randrange(5, 60)
        draw.ellipse((x - r, y - r, x + r, y + r), fill=tuple(rng.randrange(256) for _ in range(3)))
    image = small.filter(ImageFilter.GaussianBlur(2)).resize((width, height), Image.Resampling.BICUBIC)
    noise = Image.effect_noise((width, height), 40).convert("RGB")
    image = Image.blend(image, noise, 0.25)
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=92)
    return out.getvalue()


def openai_tokens(width: int, height: int) -> int:
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def anthropic_tokens(width: int, height: int) -> int:
    """Anthropic's vision guide: width x height / 750, for a picture fit within 1,568 px on its
    longest side and about 1.15 megapixels (larger ones are scaled down first)."""
    scale = min(1.0, 1568 / max(width, height), math.sqrt(1_150_000 / (width * height)))
    return round(width * scale * height * scale / 750)


def sizes(photo: bytes) -> dict[str, tuple[float, float]]:
    """Each figure: (as sent, as the model gets it)."""
    with Image.open(io.BytesIO(photo)) as image:
        width, height = image.size
    started = time.process_time()
    ready = prepare(photo, "image/jpeg")
    cpu_ms = (time.process_time() - started) * 1000
    assert isinstance(ready, Picture)
    sent, got = (width, height), (ready.width, ready.height)
    return {
        "pixels": (width * height, ready.width * ready.height),
        "bytes": (len(photo), len(ready.data)),
        "base64 bytes in the request": (len(base64.b64encode(photo)), len(base64.b64encode(ready.data))),
        "OpenAI image tokens (high detail)": (openai_tokens(*sent), openai_tokens(*got)),
        "Anthropic image tokens": (anthropic_tokens(*sent), anthropic_tokens(*got)),
        "CPU to scale (ms)": (0.0, cpu_ms),
    }


async def to_the_model(photo: bytes, rounds: int) -> dict[str, list[float]]:
    """Milliseconds from each webhook's POST to the model's request: a photo, and a text message."""
    asked: dict[str, float] = {}

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        asked.setdefault(str(len(asked)), time.monotonic())
        return ModelResponse(parts=[TextPart("got it")])

    async with (
        redis_under_test("standalone") as redis,
        served(FakeSendbird()) as sendbird,
        served(FakeFiles()) as files,
    ):
        url = files.put("/photo.jpg", photo, content_type="image/jpeg")
        settings = make_settings(
            redis.url,
            sendbird.url,
            sendbird_file_hosts=files.url.removeprefix("http://"),
            queue_name="bench-files",
        )
        app = create_app(settings, embedded_worker=True, model=FunctionModel(answer))
        port = free_port()
        async with (
            serve(app, port),
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as http,
        ):

            async def post(payload: dict[str, Any]) -> float:
                before = len(asked)
                body = json.dumps(payload).encode()
                sent = time.monotonic()
                r = await http.post(
                    "/api/v1/webhooks/sendbird",
                    content=body,
                    headers={"content-type": "application/json", "x-sendbird-signature": sign(body)},
                )
                r.raise_for_status()
                async with asyncio.timeout(60):
                    while len(asked) == before:  # noqa: ASYNC110  (the model's call is polled)
                        await asyncio.sleep(0.002)
                return (asked[str(before)] - sent) * 1000

            found: dict[str, list[float]] = {"photo": [], "text": []}
            await post(webhook_payload("warm up", channel="warm", message_id=1))
            await post(file_payload(url, channel="warm-2", message_id=2))
            for i in range(rounds):
                person = {"user": f"person-{i}", "channel": f"p-{i}"}  # each within their own rate
                found["photo"].append(await post(file_payload(url, message_id=100 + i, **person)))
                found["text"].append(await post(webhook_payload("hello", message_id=500 + i, **person)))
                await asyncio.sleep(0.2)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    photo = phone_photo()
    print("A 4032x3024 phone photo, as sent and as the model gets it (channels.images):")
    for name, (before, after) in sizes(photo).items():
        shown = f"{after:,.1f}" if name.startswith("CPU") else f"{before:,.0f} -> {after:,.0f}"
        print(f"  {name:<36} {shown}")
    timed = asyncio.run(to_the_model(photo, args.rounds))
    print(f"\nFrom the webhook's POST to the model's request, defaults ({args.rounds} rounds):")
    for kind, values in timed.items():
        print(f"  {kind:<6} median {median(values):7.1f} ms   p90 {percentile(values, 0.9):7.1f} ms")
    extra = median(timed["photo"]) - median(timed["text"])
    print(f"  a photo adds {extra:.0f} ms (median) before the model is asked   target < {TARGET_MS:.0f} ms")


if __name__ == "__main__":
    main()
