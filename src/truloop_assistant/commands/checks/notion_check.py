"""Does Notion accept ``TRULOOP_NOTION_TOKEN`` (when one is set)?"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .outcome import Check

if TYPE_CHECKING:
    from pydantic import SecretStr

NOTION_TIMEOUT_S = 5.0


def check_notion(token: SecretStr | str | None, api_url: str) -> Check:
    """With a token set: does Notion accept it (``GET /v1/users/me``)? Without one: Notion is optional."""
    if not token:
        return Check(
            "notion", "skip", "TRULOOP_NOTION_TOKEN is not set: optional, only kb sync-notion uses it"
        )
    import httpx

    from ...backends.knowledge.notion import INTEGRATIONS_URL, NOTION_VERSION
    from ...config import reveal

    base = api_url.rstrip("/")
    try:
        response = httpx.get(
            f"{base}/v1/users/me",
            headers={"Authorization": f"Bearer {reveal(token)}", "Notion-Version": NOTION_VERSION},
            timeout=NOTION_TIMEOUT_S,
        )
    except httpx.HTTPError as exc:
        return Check(
            "notion",
            "FAIL",
            f"cannot reach Notion at {base} ({exc or type(exc).__name__}): "
            "check TRULOOP_NOTION_API_URL and the network",
        )
    body = _json(response)
    if response.status_code == 200:
        name = body.get("name") or "the integration"
        workspace = (body.get("bot") or {}).get("workspace_name")
        where = f" in workspace {workspace!r}" if workspace else ""
        return Check("notion", "ok", f"the token is accepted: {name!r}{where} (kb sync-notion can run)")
    if response.status_code == 401:
        return Check(
            "notion",
            "FAIL",
            "the token is refused (401): set TRULOOP_NOTION_TOKEN to the integration's Internal Integration "
            f"Secret ({INTEGRATIONS_URL})",
        )
    detail = body.get("message") or response.reason_phrase or "no details"
    return Check("notion", "FAIL", f"Notion at {base} answered {response.status_code}: {detail}")


def _json(response: Any) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}
