"""The loss chart of a training a class watches: on a log axis while the loss stays above 0, so
that the tail of the curve and its ticks stay readable (panels/training/lossAxis.ts)."""

import os
import re
from pathlib import Path

from editor import open_editor
from playwright.sync_api import expect

SHOTS = Path(os.environ.get("WIREGRAD_SHOTS", "/tmp/wiregrad-shots"))


def test_the_loss_of_xor_is_drawn_on_a_log_axis(page):
    open_editor(page, "mlp-xor")
    page.get_by_role("tab", name="training").click()
    panel = page.get_by_role("region", name="training")
    panel.get_by_role("button", name="Train", exact=True).click()
    status = panel.get_by_label("training status")
    expect(status).to_have_attribute("data-status", "ok", timeout=60_000)
    chart = panel.get_by_role("img", name="loss chart")
    expect(chart).to_have_attribute("data-scale", "log")
    # the chart draws its curve: some of its canvas is the loss's red
    red = chart.locator("canvas").evaluate(
        """(c) => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                    let n = 0; for (let i = 0; i < d.length; i += 4)
                      if (d[i] > 180 && d[i + 1] < 90 && d[i + 2] < 90) n++;
                    return n; }"""
    )
    assert red > 50, red
    SHOTS.mkdir(parents=True, exist_ok=True)
    chart.screenshot(path=str(SHOTS / "loss-log.png"))
    assert re.search(r"loss [\d.e-]+", status.inner_text())
