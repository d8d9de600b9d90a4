"""``/docs``: the interactive API reference, served from this process (no CDN: it works offline).

Swagger UI's files come from the ``swagger-ui-py`` package (a Swagger UI 5 build, which reads the
OpenAPI 3.1 that FastAPI writes); only its directory is looked up, the package is never imported.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from starlette.staticfiles import StaticFiles

STATIC_PATH = "/docs/static"


def swagger_ui_files() -> Path:
    spec = importlib.util.find_spec("swagger_ui")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the swagger-ui-py package is missing: run scripts/bootstrap (or uv sync)")
    return Path(next(iter(spec.submodule_search_locations))) / "static"


def mount_docs(app: FastAPI) -> None:
    """``GET /docs`` and the files it loads (create the app with ``docs_url=None``)."""
    app.mount(STATIC_PATH, StaticFiles(directory=swagger_ui_files()), name="docs-static")
    router = APIRouter()

    @router.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} — API",
            swagger_js_url=f"{STATIC_PATH}/swagger-ui-bundle.js",
            swagger_css_url=f"{STATIC_PATH}/swagger-ui.css",
            swagger_favicon_url=f"{STATIC_PATH}/favicon-32x32.png",
        )

    app.include_router(router)
