"""The TypeScript client as an app installs it: the packed tarball in a fresh project, offline.

It must load with ``import`` and with ``require``, carry its license, need nothing from the registry
(no runtime dependencies), and its types must check from both module systems and a bundler's
resolution (React Native, web).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CLIENT = REPO / "clients" / "typescript"
TSC = CLIENT / "node_modules" / "typescript" / "bin" / "tsc"
TIMEOUT_S = 120

SAMPLE_MESSAGE = {
    "message_id": 42,
    "channel_url": "sendbird_group_channel_1",
    "custom_type": "agent-rpc",
    "user": {"user_id": "truloop-assistant"},
    "mentioned_users": [{"user_id": "jeff"}],
    "message": "Checking your calendar…",
    "data": json.dumps(
        {
            "jsonrpc": "2.0",
            "id": "call_0123456789abcdef0123456789abcdef",
            "method": "calendar.getEvents",
            "params": {"startDate": "2026-11-23T00:00:00+09:00", "endDate": "2026-11-29T23:59:59+09:00"},
        }
    ),
}

# Each script builds a client, parses the sample and prints what it read; it fails on its own when
# the package does not load or does not read the message.
USE = f"""
const message = {json.dumps(SAMPLE_MESSAGE)};
const client = new AssistantClient({{
  baseUrl: "https://assistant.example.com",
  getToken: () => "token",
  userId: "jeff",
  fetch: async () => {{ throw new Error("no network in this test"); }},
}});
const request = client.parse(message);
if (request === null || !client.isForMe(request)) {{
  throw new Error("the sample was not read as a request for jeff");
}}
if (parseAgentRpc(message).id !== request.id) throw new Error("parseAgentRpc disagrees with client.parse");
if (!isErrorOf(new DeviceError(-32001, "PermissionDenied"), DeviceError)) throw new Error("isErrorOf");
console.log(JSON.stringify({{ id: request.id, method: request.method, recipient: request.recipient,
  startDate: request.params.startDate, permissionRequired: ErrorCodes.PermissionRequired }}));
"""
NAMES = "AssistantClient, DeviceError, ErrorCodes, isErrorOf, parseAgentRpc"
ESM = f'import {{ {NAMES} }} from "@truloop/assistant-client";\n{USE}'
CJS = f'"use strict";\nconst {{ {NAMES} }} = require("@truloop/assistant-client");\n{USE}'
EXPECTED = {
    "id": "call_0123456789abcdef0123456789abcdef",
    "method": "calendar.getEvents",
    "recipient": "jeff",
    "startDate": "2026-11-23T00:00:00+09:00",
    "permissionRequired": -32010,
}

# Compile-time use of the installed types; the last line must not compile (checked below).
TYPED = """
import {
  AssistantClient,
  DeviceError,
  type AgentRpcRequest,
  type CalendarGetEventsResult,
} from "@truloop/assistant-client";

const client = new AssistantClient({
  baseUrl: "https://a.example",
  getToken: () => "t",
  userId: () => "jeff",
});
client.register("calendar.getEvents", async (params, request) => {
  const result: CalendarGetEventsResult = {
    events: [
      {
        id: request.method,
        title: "x",
        start: { dateTime: params.startDate },
        end: { dateTime: params.endDate },
      },
    ],
  };
  return result;
});
client.register("interaction.confirm", () => {
  throw DeviceError.userCanceled();
});
export const parsed: AgentRpcRequest | null = client.parse({});
// @ts-expect-error a confirm answer's `confirmed` is a boolean
client.register("interaction.confirm", () => ({ confirmed: "yes" }));
"""
TYPED_FILES = ("esm.mts", "cjs.cts", "bundler.ts")  # an ES module, a CommonJS module, a bundler's


def run(args: list[str], cwd: Path) -> str:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S)
    if done.returncode != 0:
        pytest.fail(f"{' '.join(args)} failed ({done.returncode}) in {cwd}:\n{done.stdout}\n{done.stderr}")
    return done.stdout


@pytest.fixture(scope="module")
def tarball(tmp_path_factory: pytest.TempPathFactory) -> Path:
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"{' and '.join(missing)} not found: install Node.js 20+ to test clients/typescript")
    if not TSC.exists():
        pytest.fail(f"{TSC} is missing: run scripts/bootstrap (it runs npm ci in clients/typescript)")
    out = tmp_path_factory.mktemp("pack")
    run(["npm", "run", "build", "--silent"], CLIENT)
    pack = ["npm", "pack", "--ignore-scripts", "--json", "--pack-destination", str(out)]
    packed = json.loads(run(pack, CLIENT))
    return out / packed[0]["filename"]


@pytest.fixture(scope="module")
def consumer(tarball: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("consumer")
    manifest = {"name": "consumer", "version": "0.0.0", "private": True}
    (project / "package.json").write_text(json.dumps(manifest))
    # --offline: anything the package needed from the registry would fail the install
    run(["npm", "install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", str(tarball)], project)
    return project


def test_the_tarball_carries_the_mit_license_and_no_runtime_dependencies(tarball: Path) -> None:
    with tarfile.open(tarball) as archive:
        names = set(archive.getnames())
        manifest = json.load(archive.extractfile("package/package.json"))  # type: ignore[arg-type]
        license_text = archive.extractfile("package/LICENSE").read().decode()  # type: ignore[union-attr]
    assert manifest["license"] == "MIT"
    assert "MIT License" in license_text and "the truloop-assistant authors" in license_text
    assert not manifest.get("dependencies"), manifest.get("dependencies")
    for peer in manifest.get("peerDependencies", {}):
        assert manifest["peerDependenciesMeta"][peer]["optional"] is True, peer
    shipped = ("index.js", "index.d.ts", "react.js", "react.d.ts")
    for path in [f"dist/{kind}/{name}" for kind in ("esm", "cjs") for name in shipped] + [
        "react/package.json"
    ]:
        assert f"package/{path}" in names, path
    assert "package/dist/cjs/package.json" in names  # marks dist/cjs as CommonJS


@pytest.mark.parametrize(
    ("script", "source"), [("use.mjs", ESM), ("use.cjs", CJS)], ids=["import", "require"]
)
def test_it_loads_with_import_and_with_require(consumer: Path, script: str, source: str) -> None:
    (consumer / script).write_text(source)
    assert json.loads(run(["node", script], consumer)) == EXPECTED


def test_its_types_check_from_esm_commonjs_and_a_bundler(consumer: Path) -> None:
    for name in TYPED_FILES:
        (consumer / name).write_text(TYPED)
    common = ["node", str(TSC), "--noEmit", "--strict", "--exactOptionalPropertyTypes", "--lib", "es2020,dom"]
    node = [*common, "--module", "nodenext", "--moduleResolution", "nodenext", "esm.mts", "cjs.cts"]
    run(node, consumer)
    run([*common, "--module", "esnext", "--moduleResolution", "bundler", "bundler.ts"], consumer)


REACT_USE = {
    "react.mjs": 'import { useAgentRequests } from "@truloop/assistant-client/react";\n',
    "react.cjs": 'const { useAgentRequests } = require("@truloop/assistant-client/react");\n',
}
REACT_TYPED = """
import { AssistantClient } from "@truloop/assistant-client";
import { useAgentRequests } from "@truloop/assistant-client/react";

const client = new AssistantClient({ baseUrl: "https://a.example", getToken: () => "t", userId: "jeff" });
export function useOpenMethods(): string[] {
  const { requests, refresh } = useAgentRequests(client, { onError: () => undefined });
  void refresh;
  return requests.map((request) => request.method);
}
"""


@pytest.fixture(scope="module")
def consumer_with_react(tarball: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project that has React (here: the client's own copy of it, as nothing may be downloaded)."""
    project = tmp_path_factory.mktemp("consumer-react")
    (project / "package.json").write_text(json.dumps({"name": "consumer-react", "private": True}))
    run(["npm", "install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", str(tarball)], project)
    for name in ("react", "@types/react", "csstype"):
        link = project / "node_modules" / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(CLIENT / "node_modules" / name, target_is_directory=True)
    return project


def test_the_react_entry_loads_with_import_and_require_and_type_checks(consumer_with_react: Path) -> None:
    for script, head in REACT_USE.items():
        check = 'if (typeof useAgentRequests !== "function") throw new Error("no useAgentRequests");\n'
        (consumer_with_react / script).write_text(head + check + 'console.log("ok");\n')
        assert run(["node", script], consumer_with_react).strip() == "ok", script
    (consumer_with_react / "hook.mts").write_text(REACT_TYPED)
    (consumer_with_react / "hook.cts").write_text(REACT_TYPED)
    tsc = ["node", str(TSC), "--noEmit", "--strict", "--lib", "es2020,dom"]
    run(
        [*tsc, "--module", "nodenext", "--moduleResolution", "nodenext", "hook.mts", "hook.cts"],
        consumer_with_react,
    )
