"""Export with the training loop and import it back, driven as a person would: the exported
PyTorch code ends with the loop of the document's training settings, and importing that code
gives a graph whose training tab shows the same settings."""

import zipfile

from editor import open_editor
from playwright.sync_api import expect


def test_the_exported_loop_imports_back_into_the_training_settings(page):
    open_editor(page, "mlp-xor")
    page.get_by_role("tab", name="training").click()
    panel = page.get_by_role("region", name="training")
    steps = panel.get_by_label("steps", exact=True)
    steps.fill("42")
    steps.press("Enter")
    expect(steps).to_have_value("42")

    page.get_by_role("button", name="More", exact=True).click()  # the toolbar's menu
    page.get_by_role("menuitem", name="Export", exact=True).click()
    code = page.get_by_label("exported code")
    expect(code).to_contain_text("# -- training")
    expect(code).to_contain_text("steps = 42")
    expect(code).to_contain_text("opt.step()")
    torch_code = code.inner_text()
    page.keyboard.press("Escape")

    page.get_by_role("button", name="New", exact=True).click()
    page.get_by_role("button", name="More", exact=True).click()
    page.get_by_role("menuitem", name="Import", exact=True).click()
    page.get_by_label("python code").fill(torch_code)
    page.get_by_role("dialog").get_by_role("button", name="import").click()
    expect(page.get_by_role("dialog")).to_have_count(0)

    page.get_by_role("tab", name="training").click()
    panel = page.get_by_role("region", name="training")
    expect(panel.get_by_label("steps", exact=True)).to_have_value("42")
    expect(panel.get_by_label("loss node")).to_have_value("loss")


def _docstring(code):
    return code.split('\n"""\n', 1)[0].replace("\n", " ")


def test_after_a_training_export_offers_initial_or_trained_weights(page):
    page.set_viewport_size({"width": 1440, "height": 900})
    open_editor(page, "mlp-xor")
    page.get_by_role("button", name="More", exact=True).click()
    page.get_by_role("menuitem", name="Export", exact=True).click()
    code = page.get_by_label("exported code")
    expect(code).to_contain_text("It starts from the initial")
    # no training yet: no choice to make
    expect(page.get_by_role("tablist", name="weights")).to_have_count(0)
    page.keyboard.press("Escape")

    page.get_by_role("tab", name="training").click()
    panel = page.get_by_role("region", name="training")
    steps = panel.get_by_label("steps", exact=True)
    steps.fill("20")
    steps.press("Enter")
    panel.get_by_role("button", name="Train", exact=True).click()
    expect(panel.get_by_label("training status")).to_have_attribute(
        "data-status", "ok", timeout=60_000
    )

    page.get_by_role("button", name="More", exact=True).click()
    page.get_by_role("menuitem", name="Export", exact=True).click()
    weights = page.get_by_role("tablist", name="weights")
    trained_tab = weights.get_by_role("tab", name="from trained weights")
    expect(trained_tab).to_have_attribute("aria-selected", "true")
    expect(code).to_contain_text("from the trained weights")
    trained = code.inner_text()
    assert "It starts from the trained weights" in _docstring(trained)
    assert "copy_(" in trained  # the trained values, written into the script
    page.get_by_role("dialog").screenshot(path="e2e/artifacts/export-trained-weights.png")

    weights.get_by_role("tab", name="from initial weights").click()
    expect(code).to_contain_text("It starts from the initial")
    initial = code.inner_text()
    assert "It starts from the initial weights" in _docstring(initial)
    assert "copy_(" not in initial  # each layer from its seed, as before the training
    page.get_by_role("dialog").screenshot(path="e2e/artifacts/export-initial-weights.png")


def test_a_trained_network_downloads_as_a_zip_with_its_weights_file(page, tmp_path):
    """A trained LeNet stores thousands of values: the dialog downloads the script and the
    .safetensors file it loads in one .zip; the Import dialog reads the script back with that
    file, and without it names the line that loads it."""
    page.set_viewport_size({"width": 1440, "height": 900})
    open_editor(page, "lenet-digits")
    page.get_by_role("tab", name="training").click()
    panel = page.get_by_role("region", name="training")
    steps = panel.get_by_label("steps", exact=True)
    steps.fill("2")
    steps.press("Enter")
    panel.get_by_role("button", name="Train", exact=True).click()
    expect(panel.get_by_label("training status")).to_have_attribute(
        "data-status", "ok", timeout=60_000
    )

    page.get_by_role("button", name="More", exact=True).click()
    page.get_by_role("menuitem", name="Export", exact=True).click()
    code = page.get_by_label("exported code")
    expect(code).to_contain_text('state_dict["conv1.weight"]')
    expect(page.get_by_label("weights file")).to_contain_text(".safetensors")
    with page.expect_download() as info:
        page.get_by_role("button", name="download .zip").click()
    download = info.value
    assert download.suggested_filename.endswith("_torch.zip")
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    with zipfile.ZipFile(saved) as z:
        names = sorted(z.namelist())
        base = saved.stem
        assert names == [f"{base}.py", f"{base}.safetensors"]
        script = z.read(f"{base}.py").decode()
        (tmp_path / "weights.safetensors").write_bytes(z.read(f"{base}.safetensors"))
    assert script.rstrip("\n") == code.inner_text().rstrip("\n")
    page.keyboard.press("Escape")

    page.get_by_role("button", name="More", exact=True).click()
    page.get_by_role("menuitem", name="Import", exact=True).click()
    dialog = page.get_by_role("dialog")
    page.get_by_label("python code").fill(script)
    dialog.get_by_role("button", name="import").click()
    expect(dialog.get_by_role("alert")).to_contain_text("this line loads the weights")
    dialog.get_by_label("weights file").set_input_files(str(tmp_path / "weights.safetensors"))
    dialog.get_by_role("button", name="import", exact=True).click()
    expect(page.get_by_role("dialog")).to_have_count(0)
