"""Where pictures and files people send are fetched from, and how large one may be."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import Field, field_validator
from pydantic_settings import NoDecode

from .log_settings import LogSettings

HOST_PATTERN = re.compile(
    r"^(\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+(:[0-9]{1,5})?$"
)
"""A host (``files.example.com``), a wildcard for its subdomains (``*.sendbird.com``) or an IPv4
address, each with an optional port (``127.0.0.1:8080``); lower case, at least two labels."""


def host_pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a file host pattern (``None`` when it is one)."""
    if not HOST_PATTERN.match(pattern):
        return "a host, *.domain or IPv4 address with an optional :port, lower case (e.g. *.sendbird.com)"
    host = pattern.removeprefix("*.").split(":")[0]
    if pattern.startswith("*.") and host.count(".") < 1:
        return "a wildcard needs a domain of at least two labels (*.example.com, not *.com)"
    return None


class FileSettings(LogSettings):
    """Pictures, documents and voice notes people send: fetched by the server, from listed hosts only."""

    sendbird_file_hosts: Annotated[list[str], NoDecode] = Field(default_factory=lambda: ["*.sendbird.com"])
    """Comma-separated hosts the server fetches the pictures, PDFs and voice notes people send from
    (anything else is never fetched, and neither is a redirect off the list; the person is told
    the file could not be had): ``*.sendbird.com`` matches its subdomains only
    (never ``sendbird.com.evil.com``), a plain host matches itself; a pattern without a port means
    the scheme's own (443). Files are fetched over HTTPS only; plain HTTP only to a loopback address
    a pattern names with its port (``127.0.0.1:8080``, for a local test server)."""
    max_file_bytes: int = Field(default=20 * 1024 * 1024, ge=1024)
    """The largest file (bytes) the server takes from a person (20 MiB): a larger one is refused
    without reading past this (or at all, when its message or ``Content-Length`` says it is larger),
    and the person is told so. ``/dev`` uploads are held to it too."""

    @field_validator("sendbird_file_hosts", mode="before")
    @classmethod
    def _split_hosts(cls, value: Any) -> Any:
        """A comma-separated string becomes a list of host patterns, lower-cased."""
        if isinstance(value, str):
            return [part.strip().lower() for part in value.split(",") if part.strip()]
        return value

    @field_validator("sendbird_file_hosts")
    @classmethod
    def _check_hosts(cls, value: list[str]) -> list[str]:
        """Each pattern is a host, a subdomain wildcard or an address; an empty list fetches nothing."""
        for number, pattern in enumerate(value, start=1):
            if problem := host_pattern_problem(pattern):
                raise ValueError(f"TRULOOP_SENDBIRD_FILE_HOSTS: pattern {number} is not {problem}")
        return value
