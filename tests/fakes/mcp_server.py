"""A real MCP server (the ``mcp`` package's, Streamable HTTP) for tests: a small CRM.

Run it as a process: ``python -m tests.fakes.mcp_server --port N --log FILE``. Every tool call it
receives is appended to ``FILE`` as a JSON line, so a test can tell what reached the server.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from mcp.server import MCPServer
from mcp.types import ToolAnnotations

from truloop_assistant.local.embedded_redis import free_port

CUSTOMERS = {"c-17": {"id": "c-17", "name": "Mina Park", "plan": "pro"}}


def build(log: Path, *, orders: bool = False, shop: bool = False) -> MCPServer:
    server = MCPServer("crm", log_level="WARNING")

    def record(tool: str, args: dict[str, Any]) -> None:
        with log.open("a") as f:
            f.write(json.dumps({"tool": tool, "args": args}) + "\n")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))  # it says it changes nothing
    def lookup_customer(name: str) -> dict[str, Any]:
        """Find a customer by name: their id, name and plan."""
        record("lookup_customer", {"name": name})
        for customer in CUSTOMERS.values():
            if name.lower() in customer["name"].lower():
                return customer
        raise ValueError(f"no customer named {name!r}")

    @server.tool()
    def delete_customer(customer_id: str) -> str:
        """Delete a customer and all their data, for good."""
        record("delete_customer", {"customer_id": customer_id})
        return f"deleted {customer_id}"

    if orders:  # a newer version of the server, with one more tool

        @server.tool()
        def list_orders(customer_id: str) -> list[str]:
            """A customer's order ids, newest first."""
            record("list_orders", {"customer_id": customer_id})
            return ["o-2", "o-1"]

    if shop:  # a server whose tool names are not all lower-case

        @server.tool()
        def Delete_order(order_id: str) -> str:  # its capital letter is the point
            """Delete an order for good."""
            record("Delete_order", {"order_id": order_id})
            return f"deleted {order_id}"

    return server


class CrmServer:
    """``tests/fakes/mcp_server.py`` as a process on 127.0.0.1; ``calls()`` is what reached it."""

    def __init__(self, tmp: Path) -> None:
        self.port = free_port()
        self.log = tmp / "mcp-calls.jsonl"
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, *, orders: bool = False, shop: bool = False) -> None:
        command = [
            sys.executable,
            "-m",
            "tests.fakes.mcp_server",
            "--port",
            str(self.port),
            "--log",
            str(self.log),
        ]
        self.proc = subprocess.Popen(
            command + (["--orders"] if orders else []) + (["--shop"] if shop else []),
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                httpx.get(self.url, timeout=1)
                return
            except httpx.TransportError:
                time.sleep(0.05)
        raise AssertionError("the MCP server did not start")

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def calls(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []

    def settings(self, **more: Any) -> dict[str, Any]:
        return {"mcp_servers": [{"url": self.url, "prefix": "crm", "confirm": ["delete_*"], **more}]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--orders", action="store_true", help="also offer list_orders")
    parser.add_argument("--shop", action="store_true", help="also offer Delete_order")
    args = parser.parse_args()
    app = build(args.log, orders=args.orders, shop=args.shop).streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
