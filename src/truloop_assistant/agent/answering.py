"""Which model answered each model request: the primary (``TRULOOP_MODEL``) or one of its fallbacks
(``TRULOOP_FALLBACK_MODELS``), counted in ``truloop_model_requests_total`` and kept in the ledger.

pydantic-ai says it on the response itself: a ``FallbackModel`` puts on the response it returns one
``ModelRequestAttempt`` for each model it moved on from (``ModelResponse.failed_attempts``), so the
model that answered is the one after them, in the order the models are tried (the server's runs
make no other attempts that would be noted there).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelResponse
from pydantic_ai.models import Model, ModelRequestContext
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.wrapper import WrapperModel

from ..metrics import MODEL_REQUESTS

Role = Literal["primary", "fallback"]


@dataclass(frozen=True)
class ModelChain:
    """The names of the models that may answer a request, in the order they are tried: the primary first."""

    names: tuple[str, ...]

    @classmethod
    def configured(cls, model: str, fallbacks: Sequence[str] = ()) -> ModelChain:
        """The chain as the settings name it (``TRULOOP_MODEL``, then ``TRULOOP_FALLBACK_MODELS``)."""
        return cls((model, *fallbacks))

    @classmethod
    def of(cls, model: Model | str) -> ModelChain:
        """The chain of a model given as it is (tests, embedding): pydantic-ai's ``provider:name`` of each."""
        while isinstance(model, WrapperModel):
            model = model.wrapped
        if isinstance(model, FallbackModel):
            return cls(tuple(m.model_id for m in model.models))
        return cls((model if isinstance(model, str) else model.model_id,))

    def answered(self, response: ModelResponse) -> tuple[str, Role]:
        """The name of the model that answered ``response``, and whether it is the primary or a fallback."""
        at = min(len(response.failed_attempts or ()), len(self.names) - 1)
        return self.names[at], "primary" if at == 0 else "fallback"


@dataclass
class Answers:
    """Which models answered a step's model requests."""

    last: str | None = None
    """The name of the model that answered the latest one (None: none was answered)."""
    fallbacks: int = 0
    """How many a fallback answered."""

    def note(self, name: str, role: Role) -> None:
        self.last = name
        if role == "fallback":
            self.fallbacks += 1


_noted: ContextVar[Answers | None] = ContextVar("truloop_model_answers", default=None)


@contextmanager
def noting_answers() -> Iterator[Answers]:
    """The answers to every model request made within the block: the step's run, and the runs within
    its tool calls (the relay writer's, whose requests count in the turn's budget too)."""
    answers = Answers()
    token = _noted.set(answers)
    try:
        yield answers
    finally:
        _noted.reset(token)


@dataclass
class AnsweredBy(AbstractCapability[Any]):
    """Counts each model request of a run by the model that answered it, and notes that model in the
    answers of the step it is part of (:func:`noting_answers`)."""

    chain: ModelChain | None = None
    """The configured names of the run's model and its fallbacks (None: the model's own names,
    :meth:`ModelChain.of`)."""

    async def after_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        chain = self.chain or ModelChain.of(request_context.model)
        name, role = chain.answered(response)
        MODEL_REQUESTS.labels(name, role).inc()
        if (answers := _noted.get()) is not None:
            answers.note(name, role)
        return response

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # made by the server, never from a spec
