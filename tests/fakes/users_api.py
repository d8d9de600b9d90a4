"""The app's own user API, as ``truloop_assistant.backends.users.http`` documents it, on 127.0.0.1."""

from __future__ import annotations

import json
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

TOKEN = "user-api-token"
MINA = {
    "user_id": "mina",
    "name": "박민아",
    "username": "mina.park",
    "email": "mina.park@example.com",
    "phone": "010-2345-6789",
    "shared": ["email"],
}
BOSS = {"user_id": "boss", "name": "Boss", "username": "boss", "role": "admin"}


class FakeUserApi:
    """The app's user API as the adapter's docstring describes it, recording what it was sent."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    def app(self) -> Starlette:
        async def record(request: Request) -> Response | None:
            body = await request.body()
            self.requests.append(
                {
                    "method": request.method,
                    "path": request.url.path,
                    "params": dict(request.query_params),
                    "authorization": request.headers.get("authorization"),
                    "json": json.loads(body) if body else None,
                }
            )
            if request.headers.get("authorization") != f"Bearer {TOKEN}":
                return JSONResponse({"error": "unauthorized"}, status_code=401)
            return None

        async def profile(request: Request) -> Response:
            denied = await record(request)
            if denied:
                return denied
            user_id = request.path_params["user_id"]
            if user_id in ("mina", "boss"):
                return JSONResponse(MINA if user_id == "mina" else BOSS)
            if user_id == "broken":
                return JSONResponse({"oops": True}, status_code=500)
            return JSONResponse({"error": "not found"}, status_code=404)

        async def search(request: Request) -> Response:
            if denied := await record(request):
                return denied
            if "phone" in request.query_params:  # mina's number, and a user whose number only looks alike
                alike = {**BOSS, "phone": "+1 234-567-89"}
                found = [MINA, alike] if request.query_params["phone"] == "+821023456789" else []
                return JSONResponse({"users": found})
            return JSONResponse({"users": [MINA]})

        async def eids(request: Request) -> Response:
            return await record(request) or JSONResponse({"eids": {"mina": "E1002"}})

        return Starlette(
            routes=[
                Route("/api/users/eids", eids, methods=["POST"]),
                Route("/api/users/{user_id}", profile),
                Route("/api/users", search),
            ]
        )
