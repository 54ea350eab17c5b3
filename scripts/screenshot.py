"""docs/screenshot.png for the README: the editor after a backward run of the square-of-a-sum
template, with the chain rule explained on the edge a -> z. Run: .venv/bin/python
scripts/screenshot.py (needs frontend/dist and /usr/bin/chromium, as `make test` leaves them)."""

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "e2e"))

from harness import CHROMIUM, CHROMIUM_FLAGS, Server  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402


def main():
    with tempfile.TemporaryDirectory() as data, sync_playwright() as pw:
        server = Server(data)
        try:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            page = browser.new_page(viewport={"width": 1440, "height": 820})
            page.goto(f"{server.url}/?template=square-of-a-sum")
            page.locator(".app.ready").wait_for()
            page.get_by_role("button", name="close lesson").click()
            page.get_by_role("button", name="Backward", exact=True).click()
            page.get_by_role("button", name="run backward", exact=True).click()
            page.get_by_label("run status").filter(has_text="ok").wait_for()
            page.get_by_test_id("edge-a-z").click()
            page.get_by_role("region", name="chain rule").wait_for()
            page.wait_for_timeout(300)
            out = ROOT / "docs" / "screenshot.png"
            page.screenshot(path=str(out))
            print(out)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
