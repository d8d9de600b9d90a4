"""Which of a person's files the model the server runs can be sent: pictures, PDFs, both or neither.

A photo or a PDF goes to the model as a ``BinaryContent`` of the user's message. pydantic-ai sends a
file in a user prompt as it is, and the request fails when the model cannot take it: whether it can
is asked of :func:`reads_files` before a file is put in a message.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic_ai.models import Model
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.wrapper import WrapperModel

PDF = "application/pdf"

OFFLINE_MODEL_NAME = "offline"
"""The name ``build_offline_model`` gives the offline model (``TRULOOP_MODEL=offline``)."""


@dataclass(frozen=True, slots=True)
class FileInputs:
    """What a model reads of a message's files."""

    images: bool
    """Pictures (``image/*``: a JPEG, a PNG, …) sent as their bytes."""
    pdfs: bool
    """PDF documents sent as their bytes."""

    def __and__(self, other: FileInputs) -> FileInputs:
        return FileInputs(images=self.images and other.images, pdfs=self.pdfs and other.pdfs)


NO_FILES = FileInputs(images=False, pdfs=False)
ALL_FILES = FileInputs(images=True, pdfs=True)


def reads_files(model: Model) -> FileInputs:
    """Whether ``model``, as :func:`~truloop_assistant.agent.models.resolve_model` makes it, reads
    pictures and PDFs.

    What each answer rests on:

    - The offline model answers from the words of a message alone (its rules read the text parts): no
      files. It is the ``FunctionModel`` named ``offline``.
    - A ``FallbackModel`` may answer with any of its models: it reads what every one of them reads.
    - A wrapper (the server's timing, pydantic-ai's instrumentation) reads what its model reads.
    - Every other model reads what its pydantic-ai profile says: ``supports_image_input``, and
      ``supports_document_input`` with ``application/pdf`` among ``supported_document_media_types``.
      pydantic-ai narrows these flags to what the model class's message mapping can send, after the
      provider's and the user's layers. So OpenAI Chat Completions, OpenAI Responses, Anthropic and
      Google read both; Chat Completions through a provider without its ``file`` part (Azure, vLLM,
      Alibaba: ``openai_chat_supports_document_input=False``) reads pictures only, its documents
      narrowed to text ones. A flag that is on means nothing says otherwise, not that the model was
      checked: a text-only model behind an OpenAI-compatible address still claims pictures.
    - ``FunctionModel`` and ``TestModel`` (tests) keep pydantic-ai's default profile, on for both:
      they read both, so a test sees what a model would be sent.
    """
    while isinstance(model, WrapperModel):
        model = model.wrapped
    if isinstance(model, FallbackModel):
        inputs = ALL_FILES
        for each in model.models:
            inputs &= reads_files(each)
        return inputs
    if isinstance(model, FunctionModel) and model.model_name == OFFLINE_MODEL_NAME:
        return NO_FILES
    profile = model.profile
    documents = profile.get("supported_document_media_types")
    return FileInputs(
        images=profile.get("supports_image_input", True),
        pdfs=profile.get("supports_document_input", True) and (documents is None or PDF in documents),
    )
