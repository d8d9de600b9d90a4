"""A real dev server (``truloop-assistant dev``) and a real headless Chromium driven by Selenium.

One server and one browser serve a whole module. The browser runs in UTC, whatever the machine's
zone, so that times the page builds for someone in Seoul are not right by accident. Screenshots go
to ``test-artifacts/screenshots/`` at the repository root.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from tests.support import running_dev_server

from .page import PHONE, DevPage

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"


@pytest.fixture(scope="module")
def dev_server() -> Iterator[str]:
    """``truloop-assistant dev`` in a subprocess (embedded Redis, offline model); its base URL."""
    with running_dev_server() as server:
        yield server.base


@pytest.fixture(scope="module")
def browser(request: pytest.FixtureRequest) -> Iterator[webdriver.Chrome]:
    """Headless Chromium at a phone's size, in UTC, with a fresh profile; with the flags a test module
    names in ``CHROMIUM_FLAGS`` too (a fake microphone, say)."""
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not os.access(path, os.X_OK)]
    if missing:
        pytest.fail(
            f"the browser tests need Chromium and ChromeDriver; missing: {', '.join(missing)}. "
            "Install them with scripts/bootstrap (Debian packages chromium and chromium-driver)",
            pytrace=False,
        )
    with tempfile.TemporaryDirectory(prefix="truloop-chromium-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for arg in (
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            f"--window-size={PHONE[0]},{PHONE[1]}",
            "--lang=en-US",
            *getattr(request.module, "CHROMIUM_FLAGS", ()),
        ):
            options.add_argument(arg)
        service = Service(executable_path=CHROMEDRIVER, env={**os.environ, "TZ": "UTC"})
        driver = webdriver.Chrome(service=service, options=options)
        try:
            driver.execute_cdp_cmd("Emulation.setTimezoneOverride", {"timezoneId": "UTC"})
            yield driver
        finally:
            driver.quit()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture
def page(browser: webdriver.Chrome, dev_server: str, screenshots: Path) -> Iterator[DevPage]:
    """The /dev page on a phone's screen; the test fails if the page's script threw an error."""
    browser.get_log("browser")  # what earlier tests left
    page = DevPage(browser, dev_server, screenshots)
    page.as_phone()
    yield page
    errors = [entry["message"] for entry in browser.get_log("browser") if entry["source"] == "javascript"]
    assert not errors, f"the page's script failed: {errors}"
