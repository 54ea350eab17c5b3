"""The training chart a person reads (issue 34): at least 150 px tall, with the loss and, for a
classifier, its accuracy on a 0-100% axis; cleared when another graph opens, so that no curve
stands beside a graph it is not about."""

from editor import open_editor
from playwright.sync_api import expect

# how many of the canvas's pixels are the accuracy's blue, in its rightmost `right` css px
# (0: anywhere)
BLUE = """(c, right) => {
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  const w = c.width, from = right ? w - right * devicePixelRatio : 0;
  let n = 0;
  for (let i = 0; i < d.length; i += 4)
    if ((i / 4) % w >= from && d[i] < 80 && d[i + 1] > 70 && d[i + 1] < 140 && d[i + 2] > 200) n++;
  return n; }"""


def test_lenet_trains_with_a_tall_chart_of_loss_and_accuracy_cleared_by_another_graph(page):
    page.set_viewport_size({"width": 1440, "height": 900})
    open_editor(page, "lenet-digits")
    if page.get_by_role("button", name="close lesson").count():
        page.get_by_role("button", name="close lesson").click()
    page.get_by_role("tab", name="training").click()
    panel = page.get_by_role("region", name="training")
    # its 300 steps take a few seconds: a snapshot every 250 ms, each with the accuracy
    panel.get_by_role("button", name="Train", exact=True).click()
    status = panel.get_by_label("training status")
    expect(status).to_have_attribute("data-status", "ok", timeout=90_000)

    chart = panel.get_by_role("img", name="loss chart")
    expect(chart).to_have_attribute("data-points", "300")
    points = int(chart.get_attribute("data-accuracy-points"))
    assert points >= 3, points
    # the drawn plot, not its box: uPlot's canvas
    canvas = chart.locator("canvas")
    drawn = canvas.bounding_box()
    assert drawn["height"] >= 150, drawn
    assert drawn["width"] >= 250, drawn
    # the accuracy's blue curve is drawn, and its axis labels on the right (uPlot draws its
    # ticks on the canvas: blue there, beside the plot); the key says which curve is which
    assert canvas.evaluate(BLUE, 0) > 40
    right = canvas.evaluate(BLUE, 40)
    assert right > 20, right
    key = panel.get_by_label("chart key")
    expect(key).to_contain_text("loss")
    expect(key).to_contain_text("accuracy")
    panel.screenshot(path="e2e/artifacts/training-chart-lenet.png")

    # another graph: the chart is empty, the accuracy gone, the status back to idle
    page.get_by_role("button", name="New", exact=True).click()
    expect(page.locator(".react-flow__node")).to_have_count(0)
    page.get_by_role("tab", name="training").click()
    expect(chart).to_have_attribute("data-points", "0")
    expect(chart).to_have_attribute("data-accuracy-points", "0")
    expect(panel.get_by_role("status", name="training accuracy")).to_have_count(0)
    expect(status).to_have_attribute("data-status", "idle")
    panel.screenshot(path="e2e/artifacts/training-chart-cleared.png")
