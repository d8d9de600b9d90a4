"""The TypeScript client (clients/typescript): its node tests, run against a real dev server they start."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CLIENT = REPO / "clients" / "typescript"
NPM_TIMEOUT_S = 180
SHOWN_OUTPUT_CHARS = 20_000


def assistant_bin() -> Path:
    """The console script of the Python running these tests (the repository's .venv)."""
    beside = Path(sys.executable).parent / "truloop-assistant"
    return beside if beside.exists() else REPO / ".venv" / "bin" / "truloop-assistant"


def stop_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def tail(text: str) -> str:
    return text if len(text) <= SHOWN_OUTPUT_CHARS else "…" + text[-SHOWN_OUTPUT_CHARS:]


@pytest.mark.timeout(NPM_TIMEOUT_S + 30)
def test_typescript_client() -> None:
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"{' and '.join(missing)} not found: install Node.js 20+ to test clients/typescript")
    if not (CLIENT / "node_modules").is_dir():
        pytest.fail(f"{CLIENT}/node_modules is missing: run scripts/bootstrap (it runs npm ci there)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRULOOP_")}
    env["TRULOOP_ASSISTANT_BIN"] = str(assistant_bin())
    # Its own process group: on a timeout npm, node, the dev server and its Redis all stop.
    proc = subprocess.Popen(
        ["npm", "test"],
        cwd=CLIENT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = proc.communicate(timeout=NPM_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        stop_group(proc.pid)
        output, _ = proc.communicate()
        pytest.fail(f"npm test took over {NPM_TIMEOUT_S} s:\n{tail(output)}")
    finally:
        stop_group(proc.pid)  # whatever a crashed run may have left behind
        proc.wait()
    if proc.returncode != 0:
        pytest.fail(f"npm test failed ({proc.returncode}):\n{tail(output)}")
    passed = re.search(r"^# pass (\d+)$", output, re.MULTILINE)
    failed = re.search(r"^# fail (\d+)$", output, re.MULTILINE)
    assert passed and failed, f"no test summary from node's test runner:\n{tail(output)}"
    assert int(passed.group(1)) > 0 and int(failed.group(1)) == 0, tail(output)
