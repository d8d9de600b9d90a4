"""Which models read a person's pictures and PDFs (``agent.model_inputs.reads_files``), for each kind
of model the server resolves, and that the answer is what the model does with a message carrying them.
"""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest
from pydantic_ai import Agent, models
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import BinaryContent, ModelMessage, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentedModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.profiles import ModelProfile

from tests.agent.test_plain_bodies import PDF, PHOTO, WITH_FILES, RawChat
from tests.support import served
from truloop_assistant.agent.model_inputs import ALL_FILES, NO_FILES, FileInputs, reads_files
from truloop_assistant.agent.models import resolve_model, timed
from truloop_assistant.agent.offline import build_offline_model

SEOUL = ZoneInfo("Asia/Seoul")
PICTURES_ONLY = FileInputs(images=True, pdfs=False)


@pytest.fixture(autouse=True)
def _provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "VLLM_API_KEY"):
        monkeypatch.setenv(key, "dummy")
    monkeypatch.setenv("VLLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.mark.parametrize(
    ("name", "inputs"),
    [
        ("offline", NO_FILES),
        ("openai-chat:gpt-4o-mini", ALL_FILES),
        ("openai:gpt-4o-mini", ALL_FILES),  # the Responses API
        ("openai-responses:gpt-4o", ALL_FILES),
        ("anthropic:claude-sonnet-4-5", ALL_FILES),
        ("google:gemini-2.5-flash", ALL_FILES),
        ("vllm:llama-3.2-vision", PICTURES_ONLY),  # Chat Completions without its file part
    ],
)
def test_what_each_served_model_reads(name: str, inputs: FileInputs) -> None:
    assert reads_files(resolve_model(name, timezone=SEOUL)) == inputs


def test_the_offline_model_reads_no_files_however_it_is_made() -> None:
    assert reads_files(build_offline_model(timezone=SEOUL)) == NO_FILES


@pytest.mark.parametrize(
    ("fallbacks", "inputs"),
    [
        (["anthropic:claude-sonnet-4-5", "google:gemini-2.5-flash"], ALL_FILES),
        (["vllm:llama-3.2-vision"], PICTURES_ONLY),
        (["anthropic:claude-sonnet-4-5", "offline"], NO_FILES),
    ],
    ids=["all read both", "one reads no pdfs", "one reads nothing"],
)
def test_a_fallback_model_reads_what_all_of_its_models_read(fallbacks: list[str], inputs: FileInputs) -> None:
    model = resolve_model("openai-chat:gpt-4o-mini", timezone=SEOUL, fallbacks=fallbacks)
    assert isinstance(model, FallbackModel)
    assert reads_files(model) == inputs


def test_a_wrapped_model_reads_what_its_model_reads() -> None:
    fallback = resolve_model("openai-chat:gpt-4o-mini", timezone=SEOUL, fallbacks=["vllm:llama-3.2-vision"])
    timed_fallback = timed(fallback)
    assert not isinstance(timed_fallback, str)
    assert reads_files(timed_fallback) == PICTURES_ONLY
    assert reads_files(InstrumentedModel(timed_fallback)) == PICTURES_ONLY
    offline = timed(resolve_model("offline", timezone=SEOUL))
    assert not isinstance(offline, str)
    assert reads_files(offline) == NO_FILES


def _answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart("noted")])


def test_test_models_read_both_unless_their_profile_says_otherwise() -> None:
    assert reads_files(TestModel()) == ALL_FILES
    assert reads_files(FunctionModel(_answer)) == ALL_FILES
    no_pictures = FunctionModel(_answer, profile=ModelProfile(supports_image_input=False))
    assert reads_files(no_pictures) == FileInputs(images=False, pdfs=True)
    word_files_only = ModelProfile(supported_document_media_types=frozenset({"application/msword"}))
    assert reads_files(FunctionModel(_answer, profile=word_files_only)) == PICTURES_ONLY


async def test_a_function_model_is_sent_the_files_themselves() -> None:
    seen: list[object] = []

    def look(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(p.content for m in messages for p in m.parts if isinstance(p, UserPromptPart))
        return ModelResponse(parts=[TextPart("noted")])

    await Agent(FunctionModel(look)).run(WITH_FILES)

    assert seen == [WITH_FILES]


@pytest.mark.parametrize(
    ("name", "env"),
    [("openai-chat:gpt-4o-mini", "OPENAI_BASE_URL"), ("vllm:llama-3.2-vision", "VLLM_BASE_URL")],
)
async def test_a_model_is_sent_the_files_it_reads_and_refuses_the_others(
    name: str, env: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)
    async with served(RawChat()) as fake:
        monkeypatch.setenv(env, f"{fake.url}/v1")
        model = resolve_model(name, timezone=SEOUL)
        inputs = reads_files(model)
        agent = Agent(model)
        photo = BinaryContent(PHOTO, media_type="image/jpeg", identifier="photo-1")
        pdf = BinaryContent(PDF, media_type="application/pdf", identifier="notice.pdf")
        for file, read in ((photo, inputs.images), (pdf, inputs.pdfs)):
            sent_before = len(fake.bodies)
            if read:
                await agent.run(["What is in this?", file])
                assert len(fake.bodies) == sent_before + 1
                assert file.base64.encode() in fake.bodies[-1]
            else:
                with pytest.raises(UserError):
                    await agent.run(["What is in this?", file])
                assert len(fake.bodies) == sent_before  # refused before anything was sent
