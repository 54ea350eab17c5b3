"""docs/screenshot.png for the README: the editor after one click on Backward in the
square-of-a-sum template, each node's face saying what it computes (`z = a ** 2`), with the
chain rule explained on the edge a -> z; and docs/presenter.png: presenter mode on a
1024x768 projector, the five-weight network after a backward run; docs/feature-maps.png: the
LeNet template on the digits after a backward run, the first conv layer's feature maps drawn as
images on the tensor view (docs/module-opened.png, a module opened with its gradients, is
e2e/test_modules_on_canvas.py's). Run: .venv/bin/python
scripts/screenshot.py (needs frontend/dist and /usr/bin/chromium, as `make test` leaves them)."""

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "e2e"))

from harness import CHROMIUM, CHROMIUM_FLAGS, Server  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402


def backward(page):
    page.get_by_role("button", name="Backward", exact=True).click()
    page.get_by_label("run status").filter(has_text="ok").wait_for()


def editor_shot(browser, server):
    page = browser.new_page(viewport={"width": 1440, "height": 820})
    page.goto(f"{server.url}/?template=square-of-a-sum")
    page.locator(".app.ready").wait_for()
    page.get_by_role("button", name="close lesson").click()
    backward(page)
    page.get_by_test_id("edge-a-z").click()
    page.get_by_role("region", name="chain rule").wait_for()
    page.wait_for_timeout(300)
    out = ROOT / "docs" / "screenshot.png"
    page.screenshot(path=str(out))
    page.close()
    return out


def presenter_shot(browser, server):
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    page.goto(f"{server.url}/?template=five-weight-network")
    page.locator(".app.ready").wait_for()
    page.get_by_role("button", name="close lesson").click()
    page.get_by_role("button", name="Presenter").click()
    backward(page)
    page.wait_for_timeout(600)  # the notice fades, the fit settles
    out = ROOT / "docs" / "presenter.png"
    page.screenshot(path=str(out))
    page.close()
    return out


def feature_maps_shot(browser, server):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(f"{server.url}/?template=lenet-digits")
    page.locator(".app.ready").wait_for()
    page.get_by_role("button", name="close lesson").click()
    backward(page)
    page.get_by_test_id("node-relu1").click()  # (at fit zoom the node shows its name only)
    page.get_by_label("inspector").get_by_role("button", name="view value").click()
    viewer = page.get_by_role("region", name="tensor viewer")
    viewer.get_by_role("figure", name="images").wait_for()
    page.wait_for_timeout(500)
    out = ROOT / "docs" / "feature-maps.png"
    page.screenshot(path=str(out))
    page.close()
    return out


def main():
    with tempfile.TemporaryDirectory() as data, sync_playwright() as pw:
        server = Server(data)
        try:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            print(editor_shot(browser, server))
            print(presenter_shot(browser, server))
            print(feature_maps_shot(browser, server))
        finally:
            server.stop()


if __name__ == "__main__":
    main()
