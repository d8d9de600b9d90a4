"""A call's answer as the server stores it: the device's result, the device's error, or a failure
the server recorded itself (the call was never sent, or could not be)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Discriminator, Tag

from ..protocol.jsonrpc import JsonRpcError, JsonRpcFailure, JsonRpcSuccess


class _Answer(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class DeviceResult(_Answer):
    """The device did it; ``result`` fits the method's result schema (checked at the edge)."""

    result: Any


class DeviceError(_Answer):
    """The device answered with a JSON-RPC error."""

    error: JsonRpcError


class ServerFailure(_Answer):
    """The server failed the call itself, with a reason for the model."""

    failed: str


def _kind(value: Any) -> str | None:
    if isinstance(value, dict):
        return next((k for k in ("result", "error", "failed") if k in value), None)
    if isinstance(value, _Answer):
        return next(iter(type(value).model_fields))  # each kind has exactly one field, named like its tag
    return None


Answer = DeviceResult | DeviceError | ServerFailure

StoredAnswer = Annotated[
    Annotated[DeviceResult, Tag("result")]
    | Annotated[DeviceError, Tag("error")]
    | Annotated[ServerFailure, Tag("failed")],
    Discriminator(_kind),
]


def answer_of(response: JsonRpcSuccess | JsonRpcFailure) -> DeviceResult | DeviceError:
    """What the device said, without the envelope."""
    if isinstance(response, JsonRpcFailure):
        return DeviceError(error=response.error)
    return DeviceResult(result=response.result)


def dump_answer(answer: Answer) -> str:
    return answer.model_dump_json()
