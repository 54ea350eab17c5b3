"""End-to-end fixtures: a real `wiregrad serve` on a free loopback port, serving the built
editor, and Debian's Chromium driven by Playwright.

The browser is the system's /usr/bin/chromium (installed by `make test`; Playwright never
downloads one). Each test gets a fresh browser context (empty localStorage) and leaves a
screenshot of its last state in e2e/artifacts/<test name>.png.

`make test` collects tests/ and e2e/ in one pytest run, where test modules are imported by
their file name: a file here must not share its name with one under tests/.
"""

import shutil
from pathlib import Path

import pytest
from harness import CHROMIUM, CHROMIUM_FLAGS, Server
from playwright.sync_api import expect, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
# CI machines have two cores shared by two test workers, each with a browser and a server
expect.set_options(timeout=15_000)


@pytest.fixture(scope="session")
def built_editor():
    if not (ROOT / "frontend" / "dist" / "index.html").is_file():
        pytest.fail(
            "frontend/dist is missing: `make test` builds it (cd frontend && npm run build)"
        )
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


def _open_page(browser, server, screenshot):
    """A page in a context of its own on `server`; a screenshot of it at the end, and no
    uncaught error nor CSP violation on it allowed."""
    context = browser.new_context(viewport={"width": 1500, "height": 950})
    pg = context.new_page()
    pg.set_default_timeout(10_000)
    pg.on("dialog", lambda d: d.accept())  # "discard unsaved changes?" and beforeunload
    errors = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    # the server's Content-Security-Policy (backend/server/security_headers.py): Chromium
    # reports each thing it blocks as a console error naming the policy ("Loading the
    # stylesheet '...' violates the following Content Security Policy directive: ..."; older
    # versions "Refused to ..."); none is allowed
    pg.on(
        "console",
        lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None,
    )
    pg.server = server
    yield pg
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        pg.screenshot(path=str(ARTIFACTS / screenshot))
    finally:
        context.close()
    assert not errors, f"uncaught errors on the page: {errors}"


@pytest.fixture
def page(browser, server, request):
    yield from _open_page(browser, server, f"{request.node.name}.png")


@pytest.fixture
def student_page(browser, server, request):
    """A second person's page on the same server (a student beside `page`, the teacher)."""
    yield from _open_page(browser, server, f"{request.node.name}-student.png")
