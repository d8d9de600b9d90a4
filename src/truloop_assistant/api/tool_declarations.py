"""``/api/v1/agent/client-tools``: the device tools a user's app declares, per device."""

from __future__ import annotations

import logging
from functools import cache
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from pydantic import BaseModel, Field

from ..deferred.approvals import CONFIRM_METHOD
from ..deferred.handlers import HANDLERS_BY_METHOD
from ..errors import BadRequest, Conflict
from ..protocol.declarations import Declaration, parse_declaration
from ..protocol.versions import HEADER, checked_version
from ..ratelimit import RateDecision
from . import openapi
from .body import read_body
from .budget import redis_budget
from .deps import ClientToolsDep, CurrentPrincipal, RateLimit, SettingsDep

log = logging.getLogger(__name__)
router = APIRouter()

PATH = "/api/v1/agent/client-tools"
SCOPE = "client-tools"
DeviceQuery = Annotated[
    str | None,
    Query(
        min_length=1, max_length=128, description="the device whose declaration; absent: the one made without"
    ),
]
MAX_DECLARATION_BYTES = 1024 * 1024
"""32 tools with two schemas of 16 KiB each fit, with their descriptions."""


class Declared(BaseModel):
    """The declaration is kept."""

    status: Literal["ok"]
    tools: int = Field(description="how many tools the user's app now declares")


@cache
def reserved_names() -> frozenset[str]:
    """Names an app may not declare: every tool the server offers itself."""
    from ..tools import tool_names  # the toolsets (and the knowledge index's code): not on serve's start

    return tool_names()


async def _body(request: Request) -> bytes:
    return await read_body(request, MAX_DECLARATION_BYTES)


ProtocolHeader = Annotated[
    str | None,
    Header(
        alias=HEADER,
        description='the protocol version the app speaks, YYYY-MM-DD (the body\'s "protocol" wins)',
    ),
]


async def _declaration(
    body: Annotated[bytes, Depends(_body)], protocol: ProtocolHeader = None
) -> Declaration:
    """The declaration, with the version the request's header names when its body names none."""
    if protocol is not None:
        try:
            checked_version(protocol)
        except ValueError as exc:
            raise BadRequest(f"the {HEADER} header: {exc}", code="invalid_protocol") from None
    declaration = parse_declaration(body)
    if declaration.protocol is None and protocol is not None:
        return declaration.model_copy(update={"protocol": protocol})
    return declaration


_RATE = Depends(RateLimit(SCOPE))


@router.put(
    PATH,
    tags=["agent"],
    dependencies=[Depends(_body)],  # the size is checked before anything else
    responses={
        200: {"description": "declared", "headers": openapi.RATE_HEADERS},
        **openapi.CLIENT_TOOLS_PUT_ERRORS,
    },
    openapi_extra=openapi.CLIENT_TOOLS_REQUEST,
)
async def declare(
    principal: CurrentPrincipal,
    declaration: Annotated[Declaration, Depends(_declaration)],
    rate: Annotated[RateDecision, _RATE],  # counted once it parsed
    client_tools: ClientToolsDep,
    settings: SettingsDep,
) -> Declared:
    """Declare the user's device tools; a rejected declaration leaves the previous one in place."""
    _check_clashes(declaration, [s.prefix for s in settings.mcp_servers])
    async with redis_budget():
        await client_tools.put(principal.user_id, declaration)
    log.info(
        "%s%s declared %d device tools: %s (built-in methods: %s; protocol %s)",
        principal.user_id,
        "" if declaration.device_id is None else f" (device {declaration.device_id})",
        len(declaration.tools),
        [t.name for t in declaration.tools],
        "of its protocol" if declaration.builtin is None else declaration.builtin,
        declaration.protocol or "not named: the baseline",
    )
    return Declared(status="ok", tools=len(declaration.tools))


@router.get(
    PATH,
    tags=["agent"],
    dependencies=[_RATE],
    response_model_exclude_none=True,
    responses={
        200: {
            "description": 'the device\'s current declaration ({"tools": []} when there is none)',
            "headers": openapi.RATE_HEADERS,
        },
        **openapi.AUTH_ERRORS,
    },
    openapi_extra=openapi.BEARER,
)
async def current(
    principal: CurrentPrincipal, client_tools: ClientToolsDep, device_id: DeviceQuery = None
) -> Declaration:
    """The device's current declaration, as the app sent it (without ``device_id``: the one made without)."""
    async with redis_budget():
        declaration = await client_tools.get_device(principal.user_id, device_id)
    return declaration or Declaration(tools=[])


@router.delete(
    PATH,
    tags=["agent"],
    status_code=204,
    response_class=Response,
    dependencies=[_RATE],
    responses={204: {"description": "removed (also when there was none)"}, **openapi.AUTH_ERRORS},
    openapi_extra=openapi.BEARER,
)
async def remove(
    principal: CurrentPrincipal, client_tools: ClientToolsDep, device_id: DeviceQuery = None
) -> None:
    """Remove the device's declaration: the user's turns offer what their other devices declared."""
    async with redis_budget():
        await client_tools.delete(principal.user_id, device_id)


def _check_clashes(declaration: Declaration, mcp_prefixes: list[str]) -> None:
    for i, tool in enumerate(declaration.tools):
        if prefix := next((p for p in mcp_prefixes if tool.name.startswith(f"{p}_")), None):
            raise Conflict(
                f"tools[{i}]: {tool.name!r} starts with {prefix + '_'!r}, the prefix of the server's "
                f"{prefix} tools; choose another name",
                code="tool_name_taken",
            )
        if tool.name in reserved_names():
            raise Conflict(
                f"tools[{i}]: {tool.name!r} is one of the server's own tools; choose another name",
                code="tool_name_taken",
            )
        if tool.method in HANDLERS_BY_METHOD or tool.method == CONFIRM_METHOD:
            raise Conflict(
                f"tools[{i}] ({tool.name}): {tool.method!r} is a built-in method; declare built-in "
                'methods your app supports in "builtin"',
                code="method_taken",
            )
