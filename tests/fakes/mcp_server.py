"""A real MCP server (the ``mcp`` package's, Streamable HTTP) for tests: a small CRM.

Run it as a process: ``python -m tests.fakes.mcp_server --port N --log FILE``. Every tool call it
receives is appended to ``FILE`` as a JSON line, so a test can tell what reached the server.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import uvicorn
from mcp.server import MCPServer

CUSTOMERS = {"c-17": {"id": "c-17", "name": "Mina Park", "plan": "pro"}}


def build(log: Path) -> MCPServer:
    server = MCPServer("crm")

    def record(tool: str, args: dict[str, Any]) -> None:
        with log.open("a") as f:
            f.write(json.dumps({"tool": tool, "args": args}) + "\n")

    @server.tool()
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

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--log", type=Path, required=True)
    args = parser.parse_args()
    app = build(args.log).streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
