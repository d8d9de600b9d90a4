"""One handler per client method: how a deferred tool call travels to the device and back."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ValidationError

from ..errors import first_problem
from ..protocol.declarations import NOTIFICATION, DeclaredTool
from ..protocol.device_methods import DEVICE_METHODS, DeviceMethod
from ..protocol.jsonrpc import ErrorCode, JsonRpcError
from ..protocol.methods import ApprovalResult
from ..protocol.schema_checks import schema_problem

if TYPE_CHECKING:
    # pydantic-ai is the worker's: the API publishes these methods' schemas without loading it.
    from pydantic_ai import ToolFailed
    from pydantic_ai.messages import ToolCallPart


class DeferredToolHandler(Protocol):
    @property
    def tool_name(self) -> str: ...

    @property
    def method(self) -> str: ...

    @property
    def params_model(self) -> type[BaseModel]:
        """The ``params`` the device is sent (its JSON Schema is published)."""
        ...

    @property
    def result_model(self) -> type[BaseModel]:
        """The ``result`` the device must answer with (its JSON Schema is published)."""
        ...

    def create_params(self, call: ToolCallPart, metadata: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The JSON-RPC ``params`` for this call (``notification_message`` is never among them);
        ``metadata``: what its tool deferred it with."""
        ...

    def validate_result(self, data: Any) -> BaseModel:
        """Check a device's ``result``; raises ``pydantic.ValidationError`` when it does not fit."""
        ...

    def transform_result(self, result: BaseModel) -> Any:
        """What the model sees as the tool's return value."""
        ...


@dataclass(frozen=True)
class DeviceToolHandler:
    """The handler of a built-in device tool, from its declaration (:mod:`..protocol.device_methods`)."""

    tool: DeviceMethod

    @property
    def tool_name(self) -> str:
        return self.tool.name

    @property
    def method(self) -> str:
        return self.tool.method

    @property
    def params_model(self) -> type[BaseModel]:
        return self.tool.params_model

    @property
    def result_model(self) -> type[BaseModel]:
        return self.tool.result_model

    def create_params(self, call: ToolCallPart, metadata: Mapping[str, Any] | None = None) -> dict[str, Any]:
        # An argument the model left empty (a blank label) is not sent: it would change the dialog.
        return self.tool.params_of({k: v for k, v in call.args_as_dict().items() if not _empty(v)}, metadata)

    def validate_result(self, data: Any) -> BaseModel:
        return self.result_model.model_validate(data)

    def transform_result(self, result: BaseModel) -> Any:
        if self.tool.model_omits:  # e.g. the model's own yes-or-no question hears only the yes or no
            return result.model_dump(mode="json", exclude=set(self.tool.model_omits), exclude_none=True)
        return result.model_dump(mode="json")


def _empty(value: Any) -> bool:
    return value is None or value == [] or (isinstance(value, str) and not value.strip())


HANDLERS: dict[str, DeferredToolHandler] = {
    name: DeviceToolHandler(tool) for name, tool in DEVICE_METHODS.items()
}
HANDLERS_BY_METHOD: dict[str, DeferredToolHandler] = {h.method: h for h in HANDLERS.values()}


def device_method(tool_name: str, declared: Mapping[str, DeclaredTool]) -> tuple[str, str | None]:
    """The JSON-RPC method of a device tool, and the result schema (JSON) its answer must fit.

    Built-in tools are checked with their own models (no schema); app-declared ones with theirs.
    """
    if (handler := HANDLERS.get(tool_name)) is not None:
        return handler.method, None
    tool = declared[tool_name]
    return tool.method, tool.result_schema()


def device_params(part: ToolCallPart, metadata: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``params`` a device call is sent: built-in tools map theirs (``metadata``: what the tool
    deferred the call with); declared ones go as called."""
    if (handler := HANDLERS.get(part.tool_name)) is not None:
        return handler.create_params(part, metadata)
    return {k: v for k, v in part.args_as_dict().items() if k != NOTIFICATION}


def result_problem(
    *, tool_name: str, bucket: Literal["call", "approval"], result_schema: str | None, data: Any
) -> str | None:
    """Why a device's ``result`` does not fit the call it answers (``where: what``), or None."""
    if result_schema is not None:
        return schema_problem(result_schema, data)
    if bucket == "approval":
        model: type[BaseModel] = ApprovalResult
    elif (handler := HANDLERS.get(tool_name)) is not None:
        model = handler.result_model
    else:  # a declared tool without a result schema takes any result
        return None
    try:
        model.model_validate(data)
    except ValidationError as exc:
        return first_problem(exc.errors(), default_where="result")
    return None


DEVICE_ERRORS: dict[int, tuple[str, str]] = {
    ErrorCode.PERMISSION_REQUIRED: (
        "PermissionRequired",
        "the app needs an OS permission the user has not granted",
    ),
    ErrorCode.PERMISSION_DENIED: ("PermissionDenied", "the user denied the OS permission"),
    ErrorCode.USER_CANCELED: ("UserCanceled", "the user canceled"),
}
"""The error codes the app sends: each one's name (its ``message``) and what it means."""


def error_to_failure(error: JsonRpcError) -> ToolFailed:
    """A device error as the failed tool result the model sees, e.g. ``PermissionRequired (-32010): ...``."""
    text = f"{error.message} ({error.code})"
    hint = DEVICE_ERRORS.get(error.code, ("", ""))[1]
    details = []
    if hint:
        details.append(hint)
    if isinstance(error.data, dict):
        if perm := error.data.get("requiredPermission"):
            details.append(f"required permission: {perm}")
        if "canPromptAgain" in error.data:
            details.append(f"can prompt again: {'yes' if error.data['canPromptAgain'] else 'no'}")
    elif error.data is not None:
        details.append(f"data: {error.data}")
    from pydantic_ai import ToolFailed

    return ToolFailed(f"{text}: {'; '.join(details)}" if details else text)
