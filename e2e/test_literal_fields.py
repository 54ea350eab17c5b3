"""Number fields read PyTorch literals as a tutorial writes them (`[2., 3.]`, `-.5`, a pasted
`torch.tensor([...])`) and, when they refuse one, say exactly what is wrong at the field."""

from editor import open_editor, run_forward, select_node, set_param
from playwright.sync_api import expect


def test_a_tensor_field_reads_pytorch_literals_and_names_the_mistake(page):
    open_editor(page, "square-of-a-sum")
    select_node(page, "x")
    inspector = page.get_by_label("inspector")
    set_param(page, "value", "[2., 3.]")
    expect(page.get_by_test_id("leafvalue-x")).to_have_text("[2, 3]")
    expect(inspector.get_by_role("alert")).to_have_count(0)
    set_param(page, "value", "[2 3]")
    expect(inspector.get_by_role("alert")).to_have_text("character 4: a ',' is missing before '3'")
    field = inspector.get_by_label("value", exact=True)
    expect(field).to_have_attribute("aria-invalid", "true")
    set_param(page, "value", "torch.tensor([1., -.5])")
    expect(inspector.get_by_role("alert")).to_have_count(0)
    expect(page.get_by_test_id("leafvalue-x")).to_have_text("[1, -0.5]")
    set_param(page, "value", "1e-3")
    run_forward(page)
    expect(page.get_by_test_id("value-x")).to_have_text("0.001")
