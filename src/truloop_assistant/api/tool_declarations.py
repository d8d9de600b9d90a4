"""``/api/v1/agent/client-tools``: the device tools a user's app declares (DESIGN §4)."""

from __future__ import annotations

import logging
from functools import cache
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import JSONResponse

from ..deferred.approvals import CONFIRM_METHOD
from ..deferred.handlers import HANDLERS_BY_METHOD
from ..errors import Conflict
from ..protocol.declarations import Declaration, parse_declaration
from ..tools import tool_names
from . import openapi
from .body import read_body
from .budget import redis_budget
from .caller import caller, limited
from .deps import ServicesDep

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


@cache
def reserved_names() -> frozenset[str]:
    """Names an app may not declare: every tool the server offers itself."""
    return tool_names()


@router.put(
    PATH,
    tags=["agent"],
    response_model=None,
    responses=openapi.CLIENT_TOOLS_PUT["responses"],
    openapi_extra=openapi.CLIENT_TOOLS_PUT["openapi_extra"],
)
async def declare(request: Request, services: ServicesDep) -> JSONResponse:
    """Declare the user's device tools; a rejected declaration leaves the previous one in place."""
    body = await read_body(request, MAX_DECLARATION_BYTES)
    principal = await services.auth.verify(request.headers.get("authorization"))
    declaration = parse_declaration(body)
    async with redis_budget():
        rate = await limited(services, principal, scope=SCOPE)
        try:
            _check_clashes(declaration, [s.prefix for s in services.settings.mcp_servers])
        except Conflict as exc:
            exc.headers.update(rate.headers())
            raise
        await services.client_tools.put(principal.user_id, declaration)
    log.info(
        "%s%s declared %d device tools: %s (built-in methods: %s)",
        principal.user_id,
        "" if declaration.device_id is None else f" (device {declaration.device_id})",
        len(declaration.tools),
        [t.name for t in declaration.tools],
        "all" if declaration.builtin is None else declaration.builtin,
    )
    return JSONResponse({"status": "ok", "tools": len(declaration.tools)}, headers=rate.headers())


@router.get(
    PATH,
    tags=["agent"],
    response_model=None,
    responses=openapi.CLIENT_TOOLS_GET["responses"],
    openapi_extra=openapi.CLIENT_TOOLS_GET["openapi_extra"],
)
async def current(request: Request, services: ServicesDep, device_id: DeviceQuery = None) -> JSONResponse:
    """The device's current declaration, as the app sent it (without ``device_id``: the one made without)."""
    principal, rate = await caller(request, services, scope=SCOPE)
    async with redis_budget():
        declaration = await services.client_tools.get_device(principal.user_id, device_id)
    body = declaration.public() if declaration is not None else {"tools": []}
    return JSONResponse(body, headers=rate.headers())


@router.delete(
    PATH,
    tags=["agent"],
    status_code=204,
    response_class=Response,
    responses=openapi.CLIENT_TOOLS_DELETE["responses"],
    openapi_extra=openapi.CLIENT_TOOLS_DELETE["openapi_extra"],
)
async def remove(request: Request, services: ServicesDep, device_id: DeviceQuery = None) -> Response:
    """Remove the device's declaration: the user's turns offer what their other devices declared."""
    principal, rate = await caller(request, services, scope=SCOPE)
    async with redis_budget():
        await services.client_tools.delete(principal.user_id, device_id)
    return Response(status_code=204, headers=rate.headers())


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
