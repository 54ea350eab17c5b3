"""End-to-end fixtures: a real `wiregrad serve` on a free loopback port, serving the built
editor, and Debian's Chromium driven by Playwright.

The browser is the system's /usr/bin/chromium (installed by `make test`; Playwright never
downloads one). Each test gets a fresh browser context (empty localStorage) and leaves a
screenshot of its last state in e2e/artifacts/<test name>.png.
"""

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM = os.environ.get("WIREGRAD_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, data_dir, port=None):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        exe = Path(sys.executable).with_name("wiregrad")
        self.proc = subprocess.Popen(
            [str(exe), "serve", "--host", "127.0.0.1", "--port", str(self.port)]
            + ["--data-dir", str(data_dir)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                if requests.get(f"{self.url}/api/health", timeout=2).ok:
                    break
            except requests.ConnectionError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                err = self.proc.stderr.read().decode() if self.proc.poll() is not None else ""
                self.stop()
                raise RuntimeError(f"wiregrad serve did not start: {err}")
            time.sleep(0.05)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@pytest.fixture(scope="session")
def built_editor():
    if not (ROOT / "frontend" / "dist" / "index.html").is_file():
        pytest.fail("frontend/dist is missing: `make test` builds it (cd frontend && npm run build)")
    if not shutil.which(CHROMIUM) and not Path(CHROMIUM).is_file():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium")


@pytest.fixture(scope="session")
def server(built_editor, tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("wiregrad-data"))
    yield s
    s.stop()


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, server, request):
    context = browser.new_context(viewport={"width": 1500, "height": 950})
    pg = context.new_page()
    pg.set_default_timeout(10_000)
    pg.on("dialog", lambda d: d.accept())  # "discard unsaved changes?" and beforeunload
    errors = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.server = server
    yield pg
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        pg.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"))
    finally:
        context.close()
    assert not errors, f"uncaught errors on the page: {errors}"
