"""Turns ``TRULOOP_MODEL`` (and ``TRULOOP_FALLBACK_MODELS``) into a pydantic-ai model."""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import orjson
from openai import AsyncOpenAI, Omit
from openai.resources.chat.completions import AsyncCompletions
from pydantic import BaseModel
from pydantic_ai import RunContext
from pydantic_ai.exceptions import (
    ModelConnectionError,
    ModelHTTPError,
    ModelRateLimitError,
    ModelRequestTimeout,
    ModelServerError,
    ModelUnavailableError,
)
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse, infer_model
from pydantic_ai.models.fallback import FallbackModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.profiles import JsonSchemaTransformer, ModelProfile
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import RequestUsage

from ..metrics import MODEL_REQUEST_SECONDS, MODEL_TOKENS
from .answering import ModelChain
from .offline import build_offline_model

if TYPE_CHECKING:
    from ..config import Settings

PROVIDER_TROUBLE = (
    ModelRateLimitError,
    ModelServerError,
    ModelUnavailableError,
    ModelConnectionError,  # and its ModelTimeoutError
    ModelRequestTimeout,
)
"""Failures of the provider, not of the request: the next model may well answer."""


def resolve_model(name: str, *, timezone: ZoneInfo, fallbacks: Sequence[str] = ()) -> Model:
    """The model ``name``, or one that tries ``fallbacks`` in order when it fails with a provider error."""
    primary = _one_model(name, timezone)
    if not fallbacks:
        return primary
    return FallbackModel(
        primary, *(_one_model(fallback, timezone) for fallback in fallbacks), fallback_on=falls_back
    )


def chosen_model(
    settings: Settings, given: Model | str | None = None
) -> tuple[Model | str, ModelChain | None]:
    """The model turns run: ``given`` (tests, embedding), else ``TRULOOP_MODEL`` with its fallbacks; and
    the names the ledger and the metrics give the model that answers (None: ``given``'s own)."""
    if given is not None:
        return given, None
    zone, fallbacks = ZoneInfo(settings.timezone), settings.fallback_models
    model = resolve_model(settings.model, timezone=zone, fallbacks=fallbacks)
    return model, ModelChain.configured(settings.model, fallbacks)


def falls_back(exc: Exception) -> bool:
    """5xx, 429, timeouts and lost connections move on to the next model; a rejected request does not."""
    if isinstance(exc, ModelHTTPError):
        return exc.status_code == 429 or exc.status_code >= 500
    return isinstance(exc, PROVIDER_TROUBLE)


def _one_model(name: str, timezone: ZoneInfo) -> Model:
    """``offline`` is the built-in rule-based model; anything else is a pydantic-ai model string."""
    if name == "offline":
        return build_offline_model(timezone=timezone)
    return as_served(infer_model(name))


def as_served(model: Model) -> Model:
    """A provider's model as the server uses it (see the wrappers below)."""
    return with_plain_bodies(with_schemas_kept(with_objects_open_unless_strict(model)))


JsonSchema = dict[str, Any]
MAX_KEPT_SCHEMAS = 4096
"""Tool schemas whose provider form a model keeps at once (all are dropped when there are more)."""


def with_objects_open_unless_strict(model: Model) -> Model:
    """``model``, its tools sent without ``additionalProperties: false`` unless they are strict.

    Some transformers (OpenAI's) close every object of a tool's schema, though only strict mode
    binds a model to it: outside it the keyword is characters in every request that change nothing
    (the arguments are validated when they come back). A strict tool keeps it: strict mode needs it.
    """
    transformer = _transformer(model)
    if transformer is None or issubclass(transformer, _OpenObjects):
        return model
    return _with_transformer(model, _open(transformer))


class _OpenObjects:
    """Marks a transformer made by :func:`_open`."""


def _open(base: type[JsonSchemaTransformer]) -> type[JsonSchemaTransformer]:
    """``base``, leaving ``additionalProperties: false`` out of a schema that will not be strict."""

    class Open(base, _OpenObjects):  # type: ignore[valid-type,misc]
        def walk(self) -> JsonSchema:
            walked = super().walk()
            # A tool whose strict is None is sent strict when its schema allows it (pydantic-ai's rule).
            if self.strict is True or (self.strict is None and self.is_strict_compatible):
                return walked
            return _opened(walked)

    Open.__name__ = Open.__qualname__ = f"Open{base.__name__}"
    return Open


def _opened(node: Any) -> Any:
    """``node`` without ``additionalProperties: false`` anywhere (property names are kept as they are)."""
    if isinstance(node, list):
        return [_opened(item) for item in node]
    if not isinstance(node, dict):
        return node
    return {
        key: ({k: _opened(v) for k, v in value.items()} if key == "properties" else _opened(value))
        for key, value in node.items()
        if not (key == "additionalProperties" and value is False)
    }


# pydantic-ai's internals, written against pydantic-ai-slim 2.68.x, which pyproject pins: a model keeps
# its profile in a cached property (``Model.profile``, its value in the instance's ``__dict__``), and a
# JsonSchemaTransformer's __init__ sets ``schema``, ``strict`` and ``is_strict_compatible``, all that
# pydantic-ai reads of it besides ``walk()`` (``_kept`` sets only those). Re-read both before a bump.
def _transformer(model: Model) -> type[JsonSchemaTransformer] | None:
    """The model's schema transformer, when its profile is kept on the model (and can be replaced)."""
    if not isinstance(inspect.getattr_static(type(model), "profile", None), cached_property):
        return None
    return model.profile.get("json_schema_transformer")


def _with_transformer(model: Model, transformer: type[JsonSchemaTransformer]) -> Model:
    profile = ModelProfile(**{**model.profile, "json_schema_transformer": transformer})
    model.__dict__["profile"] = profile  # where the cached property keeps it
    return model


def with_schemas_kept(model: Model) -> Model:
    """``model``, turning each tool's JSON schema into its provider's form once instead of at every
    request.

    A provider's profile names a transformer that pydantic-ai runs over every tool's schema before
    every request (a deep copy and a walk of each schema). The server's tool definitions, and each
    app-declared tool's, are made once per process, so the same schema object comes back request
    after request: its transformed form is kept, keyed on that object and the tool's ``strict``.
    The schemas are never changed once made (pydantic-ai sends them as they are), and the kept form
    is the one the transformer gave, so what the provider is sent stays the same.
    """
    transformer = _transformer(model)
    if transformer is None or issubclass(transformer, _KeptSchemas):
        return model  # no profile kept on the model (nothing to replace), or kept already
    return _with_transformer(model, _kept(transformer))


class _KeptSchemas:
    """Marks a transformer made by :func:`_kept`."""


def _kept(base: type[JsonSchemaTransformer]) -> type[JsonSchemaTransformer]:
    """``base``, giving back the form it made before for a schema object it was given before."""
    kept: dict[tuple[int, bool | None], tuple[JsonSchema, JsonSchema, bool]] = {}

    class Kept(base, _KeptSchemas):  # type: ignore[valid-type,misc]
        def __init__(self, schema: JsonSchema, *, strict: bool | None = None, **kwargs: Any) -> None:
            self._kept = kept.get((id(schema), strict))
            if self._kept is not None and self._kept[0] is schema:
                self.schema, self.strict, self.is_strict_compatible = schema, strict, self._kept[2]
                return
            self._kept = None
            super().__init__(schema, strict=strict, **kwargs)

        def walk(self) -> JsonSchema:
            if self._kept is not None:
                return self._kept[1]
            walked = super().walk()
            if len(kept) >= MAX_KEPT_SCHEMAS:
                kept.clear()
            # The schema itself is kept too: its id names no other object while it is here.
            kept[(id(self.schema), self.strict)] = (self.schema, walked, self.is_strict_compatible)
            return walked

    Kept.__name__ = Kept.__qualname__ = f"Kept{base.__name__}"
    return Kept


def with_plain_bodies(model: Model) -> Model:
    """``model``, its Chat Completions requests sent without the OpenAI SDK's walk of the messages.

    Before every request the SDK walks its arguments against their ``TypedDict`` annotations, to
    rename aliased keys and format dates and files, trying every member of every union; with a
    conversation's history that walk costs more than the rest of the request. No type of a Chat
    Completions request declares an alias or a format, so the walk changes nothing: the messages and
    the tools go as the request's ``extra_body`` instead, which the SDK merges into the body as it
    is, in the same place. A picture or a PDF of the person's is no exception: pydantic-ai sends it
    as a ``data:`` URL string (``image_url.url``, ``file.file_data``), already base64, which the SDK
    leaves as it is. The body is then encoded by orjson (:func:`encode_body`) instead of the json
    module. ``tests/agent/test_plain_bodies.py`` compares the bytes sent, with and without files.
    """
    if isinstance(model, OpenAIChatModel) and isinstance(client := model.client, AsyncOpenAI):
        chat = client.chat
        if not isinstance(chat.completions, _PlainBodies):
            chat.__dict__["completions"] = _PlainBodies(client)  # where the cached property keeps it
    return model


class _PlainBodies(AsyncCompletions):
    """Chat Completions whose ``messages`` and ``tools`` skip the SDK's transform, and whose body is
    encoded by orjson (see :func:`encode_body`).

    The OpenAI SDK's internals, written against openai 3.57.x, which pyproject pins: ``AsyncChat``
    keeps ``completions`` in a cached property; a resource posts through ``self._post`` (its client's
    ``post``, set in ``AsyncAPIResource.__init__``); ``create()`` passes ``extra_body`` on as
    ``options["extra_json"]``, which ``_build_request`` merges into the body. Re-read them before a bump.
    """

    def __init__(self, client: AsyncOpenAI) -> None:
        super().__init__(client)
        self._post = self._post_encoded  # what create() sends its request through

    async def create(  # type: ignore[override]
        self,
        *,
        messages: Any,
        tools: Any = None,
        extra_body: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        # Empty lists keep the keys' places in the body; extra_body's values replace them, and a
        # caller's own extra_body still has the last word, as before.
        plain: dict[str, Any] = {"messages": list(messages)}
        if tools is not None and not isinstance(tools, Omit):
            plain["tools"] = list(tools)
            kwargs["tools"] = []
        return await super().create(messages=[], extra_body={**plain, **(extra_body or {})}, **kwargs)

    async def _post_encoded(self, path: str, *, body: Any = None, options: Any = None, **kwargs: Any) -> Any:
        """``client.post``, the body merged with ``extra_body`` as the SDK merges them (the later
        value wins, an omitted one is left out) and encoded here: the same bytes and headers go."""
        post: Any = self._client.post  # its overloads name the kinds of stream; create() chose one
        options = dict(options or {})
        extra = options.pop("extra_json", None)
        if not isinstance(body, dict) or not isinstance(extra, dict | None):
            return await post(path, body=body, options={**options, "extra_json": extra}, **kwargs)
        merged = {
            key: value for key, value in {**body, **(extra or {})}.items() if not isinstance(value, Omit)
        }
        return await post(path, content=encode_body(merged), options=options, **kwargs)


def encode_body(body: dict[str, Any]) -> bytes:
    """A request body as the OpenAI SDK encodes it (UTF-8, no spaces, dates by ``isoformat``, pydantic
    models dumped as JSON), by orjson: a twentieth of the SDK's time on a 25 KB body with its tools.
    What orjson cannot encode (an integer beyond 64 bits, a key that is not a string) goes the SDK's
    way. Two differences, both valid JSON: a number with an exponent may be written otherwise
    (``1e-7`` for ``1e-07``, the same number), and a NaN goes as ``null`` where the SDK refuses the
    request."""
    try:
        return orjson.dumps(body, default=_sdk_default, option=orjson.OPT_PASSTHROUGH_DATETIME)
    except TypeError:  # orjson.JSONEncodeError is one
        return json.dumps(
            body, default=_sdk_default, ensure_ascii=False, separators=(",", ":"), allow_nan=False
        ).encode()


def _sdk_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, BaseModel):
        return value.model_dump(exclude_unset=True, mode="json", by_alias=True)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


class TimedModel(WrapperModel):
    """Counts each model request's time and tokens (``truloop_model_request_seconds``, ``…tokens_total``)."""

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        started = time.perf_counter()
        outcome = "error"
        try:
            response = await super().request(messages, model_settings, model_request_parameters)
            outcome = "ok"
        finally:
            MODEL_REQUEST_SECONDS.labels(outcome).observe(time.perf_counter() - started)
        _count_tokens(response.usage)
        return response

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        """A streamed request, measured from its start to the end of its stream (an answer stopped
        midway counts what it used until then)."""
        started = time.perf_counter()
        outcome = "error"
        try:
            async with super().request_stream(
                messages, model_settings, model_request_parameters, run_context
            ) as stream:
                yield stream
            outcome = "ok"
        finally:
            MODEL_REQUEST_SECONDS.labels(outcome).observe(time.perf_counter() - started)
        _count_tokens(stream.usage)


def _count_tokens(usage: RequestUsage) -> None:
    MODEL_TOKENS.labels("input").inc(usage.input_tokens)
    MODEL_TOKENS.labels("output").inc(usage.output_tokens)


def timed(model: Model | str) -> Model | str:
    """``model`` with its requests measured (a model string is measured once pydantic-ai makes it a model)."""
    return TimedModel(model) if isinstance(model, Model) and not isinstance(model, TimedModel) else model
